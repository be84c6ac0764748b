/* SPDX-License-Identifier: Apache-2.0 */
/* kube/quantity.c - see quantity.h. */
#include "kube/quantity.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

int kube_quantity_nano(const char *s, __int128 *ret)
{
	static const struct {
		const char *sfx;
		int base2, exp10;
	} sfx[] = {{"Ki", 10, 0}, {"Mi", 20, 0}, {"Gi", 30, 0}, {"Ti", 40, 0}, {"Pi", 50, 0},
	           {"Ei", 60, 0}, {"n", 0, -9},  {"u", 0, -6},  {"m", 0, -3},  {"k", 0, 3},
	           {"M", 0, 6},   {"G", 0, 9},   {"T", 0, 12},  {"P", 0, 15},  {"E", 0, 18}};
	__int128 mant = 0, lim = (__int128)1 << 100;
	int neg = 0, frac = 0, exp10 = 0, base2 = 0, digits = 0;

	if (*s == '+' || *s == '-')
		neg = *s++ == '-';
	for (; isdigit((unsigned char)*s) || (*s == '.' && frac == 0); s++) {
		if (*s == '.') {
			frac = -1;
			continue;
		}
		digits++;
		if (mant < lim) {
			mant = mant * 10 + (*s - '0');
			if (frac)
				exp10--;
		} else if (!frac) {
			exp10++;
		}
	}
	if (!digits)
		return -EINVAL;
	if (*s) {
		size_t i, n = sizeof(sfx) / sizeof(sfx[0]);

		for (i = 0; i < n; i++)
			if (strcmp(s, sfx[i].sfx) == 0)
				break;
		if (i < n) {
			base2 = sfx[i].base2;
			exp10 += sfx[i].exp10;
		} else if (*s == 'e' || *s == 'E') { /* DecimalExponent */
			char *end;
			long e = strtol(s + 1, &end, 10);

			if (end == s + 1 || *end || e < -40 || e > 40)
				return -EINVAL;
			exp10 += (int)e;
		} else {
			return -EINVAL;
		}
	}
	exp10 += 9; /* nano units */
	for (; base2 > 0; base2--) {
		if (mant >= lim)
			return -EINVAL;
		mant *= 2;
	}
	for (; exp10 > 0; exp10--) {
		if (mant >= lim)
			return -EINVAL;
		mant *= 10;
	}
	for (; exp10 < 0; exp10++) /* below a nano unit: rounded up, as ParseQuantity */
		mant = mant / 10 + (mant % 10 != 0);
	*ret = neg ? -mant : mant;
	return 0;
}

__int128 kube_quantity_nano_or_zero(const char *s)
{
	__int128 v = 0;

	if (!s || kube_quantity_nano(s, &v) < 0)
		v = 0;
	return v;
}
