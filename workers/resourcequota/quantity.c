/* SPDX-License-Identifier: Apache-2.0 */
/*
 * workers/resourcequota/quantity.c: resource.Quantity for the quota controller (quantity.h has
 * the design note). The parser follows ParseQuantity's grammar (sign, digits, a fraction, an SI,
 * binary or e<n> suffix) and its value rules (rounded up to a nano unit, BinarySI capped at
 * MaxInt64 and shown as DecimalSI below 1); the printer follows CanonicalizeBytes.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "workers/resourcequota/quantity.h"

typedef unsigned __int128 u128;

#define NANO       1000000000LL
#define I128_MAX   ((__int128)(((u128)1 << 127) - 1))
#define U128_LIMIT ((u128)I128_MAX)

static bool isdig(char c)
{
	return c >= '0' && c <= '9';
}

/* m = m * k + add, refusing to pass U128_LIMIT. */
static int mul_add(u128 *m, unsigned k, unsigned add)
{
	if (*m > (U128_LIMIT - add) / k)
		return -ERANGE;
	*m = *m * k + add;
	return 0;
}

static const struct {
	const char *s;
	int base; /* 10 or 2 */
	int exp;
	enum rq_format fmt;
} suffixes[] = {
        {"", 10, 0, RQ_DECIMAL_SI},   {"n", 10, -9, RQ_DECIMAL_SI}, {"u", 10, -6, RQ_DECIMAL_SI},
        {"m", 10, -3, RQ_DECIMAL_SI}, {"k", 10, 3, RQ_DECIMAL_SI},  {"M", 10, 6, RQ_DECIMAL_SI},
        {"G", 10, 9, RQ_DECIMAL_SI},  {"T", 10, 12, RQ_DECIMAL_SI}, {"P", 10, 15, RQ_DECIMAL_SI},
        {"E", 10, 18, RQ_DECIMAL_SI}, {"Ki", 2, 10, RQ_BINARY_SI},  {"Mi", 2, 20, RQ_BINARY_SI},
        {"Gi", 2, 30, RQ_BINARY_SI},  {"Ti", 2, 40, RQ_BINARY_SI},  {"Pi", 2, 50, RQ_BINARY_SI},
        {"Ei", 2, 60, RQ_BINARY_SI},
};

/* strconv.ParseInt(s, 10, 64) over [s, s+n), enough for an exponent */
static int parse_exp(const char *s, size_t n, long long *ret)
{
	size_t i = 0;
	bool neg = false;
	long long v = 0;

	if (n && (s[0] == '+' || s[0] == '-')) {
		neg = s[0] == '-';
		i = 1;
	}
	if (i == n)
		return -EINVAL;
	for (; i < n; i++) {
		if (!isdig(s[i]))
			return -EINVAL;
		if (v > (INT64_MAX - 9) / 10)
			return -ERANGE;
		v = v * 10 + (s[i] - '0');
	}
	*ret = neg ? -v : v;
	return 0;
}

int rq_qty_parse(const char *str, struct rq_qty *ret)
{
	size_t end, pos = 0;
	bool positive = true;
	const char *num, *denom = "", *suf;
	size_t num_n, denom_n = 0, suf_n;

	if (!str || !(end = strlen(str)))
		return -EINVAL;
	if (str[0] == '-' || str[0] == '+') {
		positive = str[0] == '+';
		pos++;
	}
	while (pos < end && str[pos] == '0')
		pos++;
	num = str + pos;
	while (pos < end && isdig(str[pos]))
		pos++;
	num_n = (size_t)(str + pos - num);
	if (pos < end && str[pos] == '.') {
		denom = str + ++pos;
		while (pos < end && isdig(str[pos]))
			pos++;
		denom_n = (size_t)(str + pos - denom);
	}
	suf = str + pos;
	while (pos < end && strchr("eEinumkKMGTP", str[pos]))
		pos++;
	if (pos < end && (str[pos] == '-' || str[pos] == '+'))
		pos++;
	while (pos < end && isdig(str[pos]))
		pos++;
	if (pos != end)
		return -EINVAL;
	suf_n = end - (size_t)(suf - str);

	int base = 0, exp = 0;
	enum rq_format fmt = RQ_DECIMAL_SI;
	for (size_t k = 0; k < sizeof(suffixes) / sizeof(suffixes[0]); k++)
		if (strlen(suffixes[k].s) == suf_n && !memcmp(suffixes[k].s, suf, suf_n)) {
			base = suffixes[k].base;
			exp = suffixes[k].exp;
			fmt = suffixes[k].fmt;
			break;
		}
	if (!base) {
		long long e;
		if (suf_n < 2 || (suf[0] != 'e' && suf[0] != 'E') ||
		    parse_exp(suf + 1, suf_n - 1, &e) < 0)
			return -EINVAL;
		if (e > 400)
			return -ERANGE;
		if (e < -400)
			e = -400; /* any non-zero digit still rounds up to 1n */
		base = 10;
		exp = (int)e;
		fmt = RQ_DECIMAL_EXPONENT;
	}

	/* the digits, as one integer, and the power of ten it is to be scaled by */
	u128 m = 0;
	for (size_t i = 0; i < num_n; i++)
		if (mul_add(&m, 10, (unsigned)(num[i] - '0')) < 0) {
			if (fmt != RQ_BINARY_SI)
				return -ERANGE;
			m = U128_LIMIT / 1024; /* over the cap whatever follows */
			denom_n = 0;
			break;
		}
	long scale10 = 0;
	for (size_t i = 0; i < denom_n; i++) {
		if (m == 0 && denom[i] == '0') {
			scale10--; /* leading zeros of the fraction never overflow */
			continue;
		}
		if (mul_add(&m, 10, (unsigned)(denom[i] - '0')) < 0)
			return -ERANGE;
		scale10--;
	}
	if (base == 10) {
		scale10 += exp;
	}
	/* a BinarySI value past MaxInt64 is capped: past the range it is over the cap too */
	bool saturate = fmt == RQ_BINARY_SI;
	if (base == 2)
		for (int k = 0; k < exp; k++)
			if (mul_add(&m, 2, 0) < 0) {
				m = U128_LIMIT;
				break;
			}
	scale10 += 9; /* to nano units */
	if (m == 0) {
		scale10 = 0;
	} else if (scale10 >= 0) {
		for (long k = 0; k < scale10; k++)
			if (mul_add(&m, 10, 0) < 0) {
				if (!saturate)
					return -ERANGE;
				m = U128_LIMIT;
				break;
			}
	} else {
		/* round up to a whole nano unit (ParseQuantity rounds the magnitude up) */
		bool rem = false;
		for (long k = 0; k < -scale10 && m; k++) {
			rem |= m % 10 != 0;
			m /= 10;
		}
		if (rem)
			m++;
	}
	if (fmt == RQ_BINARY_SI) {
		u128 cap = (u128)INT64_MAX * NANO;
		if (m > cap)
			m = cap;
		if (m > 0 && m < (u128)NANO)
			fmt = RQ_DECIMAL_SI;
	}
	ret->nano = positive ? (__int128)m : -(__int128)m;
	ret->fmt = fmt;
	return 0;
}

static int put_i128(char *buf, size_t len, __int128 v)
{
	char tmp[48];
	size_t n = 0, k = 0;
	u128 a = v < 0 ? (u128)0 - (u128)v : (u128)v;

	do {
		tmp[n++] = (char)('0' + (int)(a % 10));
		a /= 10;
	} while (a);
	if (v < 0 && k + 1 < len)
		buf[k++] = '-';
	while (n && k + 1 < len)
		buf[k++] = tmp[--n];
	buf[k] = '\0';
	return (int)k;
}

int rq_qty_format(const struct rq_qty *q, char *buf, size_t len)
{
	static const char *const dec_sfx[] = {"n", "u", "m", "", "k", "M", "G", "T", "P", "E"};
	static const char *const bin_sfx[] = {"", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"};
	__int128 v = q->nano;
	enum rq_format fmt = q->fmt;
	int n;

	if (v == 0)
		return snprintf(buf, len, "0");
	if (fmt == RQ_BINARY_SI) {
		if (v > -1024 * (__int128)NANO && v < 1024 * (__int128)NANO)
			fmt = RQ_DECIMAL_SI;
		else if (v % NANO != 0)
			fmt = RQ_DECIMAL_SI; /* AsScale(0) would round: shown as DecimalSI */
	}
	if (fmt == RQ_BINARY_SI) {
		__int128 m = v / NANO;
		int times = 0;
		__int128 a = m < 0 ? -m : m;
		while (a >= 1024 && a % 1024 == 0) {
			a /= 1024;
			times++;
		}
		n = put_i128(buf, len, m < 0 ? -a : a);
		/* past Ei Go's suffixer has no suffix and prints the number alone */
		if (times < 7)
			n += snprintf(buf + n, len - (size_t)n, "%s", bin_sfx[times]);
		return n;
	}
	/* AsCanonicalBytes: strip factors of ten, then make the exponent a multiple of three */
	__int128 m = v;
	int exp = -9;
	__int128 a = m < 0 ? -m : m;
	while (a >= 10 && a % 10 == 0) {
		a /= 10;
		exp++;
	}
	switch (exp % 3) {
	case 1:
	case -2:
		a *= 10;
		exp -= 1;
		break;
	case 2:
	case -1:
		a *= 100;
		exp -= 2;
		break;
	}
	n = put_i128(buf, len, m < 0 ? -a : a);
	if (fmt == RQ_DECIMAL_EXPONENT) {
		if (exp != 0)
			n += snprintf(buf + n, len - (size_t)n, "e%d", exp);
	} else if (exp >= -9 && exp <= 18) {
		n += snprintf(buf + n, len - (size_t)n, "%s", dec_sfx[(exp + 9) / 3]);
	}
	return n;
}

int rq_qty_add(struct rq_qty *q, const struct rq_qty *y)
{
	__int128 r;

	if (__builtin_add_overflow(q->nano, y->nano, &r) || r > I128_MAX / 2 || r < -(I128_MAX / 2))
		return -ERANGE;
	if (q->nano == 0)
		q->fmt = y->fmt;
	q->nano = r;
	return 0;
}

int rq_qty_cmp(const struct rq_qty *a, const struct rq_qty *b)
{
	return a->nano < b->nano ? -1 : a->nano > b->nano ? 1 : 0;
}

bool rq_qty_is_zero(const struct rq_qty *q)
{
	return q->nano == 0;
}

bool rq_qty_round_up_integer(struct rq_qty *q)
{
	__int128 rem = q->nano % NANO;

	if (rem == 0)
		return true;
	q->nano += q->nano > 0 ? NANO - rem : -(NANO + rem);
	return false;
}

struct rq_qty rq_qty_int(int64_t v)
{
	return (struct rq_qty){.nano = (__int128)v * NANO, .fmt = RQ_DECIMAL_SI};
}
