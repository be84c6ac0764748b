/* SPDX-License-Identifier: Apache-2.0 */
/* lib/goflag.c: Go-style flag parsing and controller flag values (see goflag.h). */
#include "lib/goflag.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct kcmd_flag_values {
	const struct kcmd_flag *flags;
	size_t n;
	char **text; /* n strings, malloc'd */
	bool *set;
};

int kcmd_parse_bool(const char *v, bool *ret)
{
	static const char *const t[] = {"1", "t", "T", "TRUE", "true", "True"};
	static const char *const f[] = {"0", "f", "F", "FALSE", "false", "False"};

	for (size_t i = 0; v && i < 6; i++) {
		if (strcmp(v, t[i]) == 0) {
			*ret = true;
			return 0;
		}
		if (strcmp(v, f[i]) == 0) {
			*ret = false;
			return 0;
		}
	}
	return -EINVAL;
}

int kcmd_parse_duration(const char *s, uint64_t *ret_us)
{
	static const struct {
		const char *unit;
		double us;
	} units[] = {{"ns", 0.001}, {"us", 1},   {"\xc2\xb5s", 1}, {"ms", 1000},
	             {"s", 1e6},    {"m", 60e6}, {"h", 3600e6}};
	double total = 0;
	const char *p = s;

	if (!s || !*s)
		return -EINVAL;
	if (*p == '+')
		p++;
	if (*p == '-')
		return -EINVAL;
	if (strcmp(p, "0") == 0) {
		*ret_us = 0;
		return 0;
	}
	if (!*p)
		return -EINVAL;
	while (*p) {
		char *end;
		double v;
		size_t best = 0;
		int bi = -1;

		if (!isdigit((unsigned char)*p) && *p != '.')
			return -EINVAL;
		errno = 0;
		v = strtod(p, &end);
		if (end == p || errno)
			return -EINVAL;
		p = end;
		for (int i = 0; i < (int)(sizeof(units) / sizeof(units[0])); i++) {
			size_t n = strlen(units[i].unit);
			if (strncmp(p, units[i].unit, n) == 0 && n > best) {
				best = n;
				bi = i;
			}
		}
		if (bi < 0)
			return -EINVAL; /* Go requires a unit on every number but a lone 0 */
		total += v * units[bi].us;
		p += best;
	}
	if (!isfinite(total) || total > (double)UINT64_MAX / 2)
		return -EINVAL;
	*ret_us = (uint64_t)llround(total);
	return 0;
}

static int fail(char *err, size_t errlen, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));
static int fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (err && errlen) {
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

/* Checks value against f's type; 0 or -EINVAL with a message. */
static int check(const struct kcmd_flag *f, const char *v, char *err, size_t errlen)
{
	char *end;
	bool b;
	uint64_t us;

	switch (f->type) {
	case KCMD_FLAG_STRING:
		return 0;
	case KCMD_FLAG_BOOL:
		return kcmd_parse_bool(v, &b) < 0
		               ? fail(err, errlen, "--%s=%s: not a boolean", f->name, v)
		               : 0;
	case KCMD_FLAG_INT: {
		errno = 0;
		long long l = strtoll(v, &end, 10);
		/* negative values only for a flag whose declared range starts below 0 */
		bool neg_ok = f->max > 0 && f->min < 0;
		if (errno || end == v || *end || l < (neg_ok ? INT_MIN : 0) || l > INT_MAX)
			return fail(err, errlen, "--%s=%s: not a valid %sinteger", f->name, v,
			            neg_ok ? "" : "non-negative ");
		if (f->max > 0 && (l < f->min || l > f->max))
			return fail(err, errlen, "--%s must be between %lld and %lld", f->name,
			            (long long)f->min, (long long)f->max);
		return 0;
	}
	case KCMD_FLAG_DOUBLE: {
		errno = 0;
		double d = strtod(v, &end);
		if (errno || end == v || *end || !isfinite(d) || d < 0)
			return fail(err, errlen, "--%s=%s: not a valid non-negative number",
			            f->name, v);
		return 0;
	}
	case KCMD_FLAG_DURATION:
		return kcmd_parse_duration(v, &us) < 0
		               ? fail(err, errlen,
		                      "--%s=%s: not a duration (e.g. 15s, 1m30s, 500ms)", f->name,
		                      v)
		               : 0;
	}
	return fail(err, errlen, "--%s: unknown flag type", f->name);
}

int kcmd_flag_values_new(const struct kcmd_flag *flags, size_t n, struct kcmd_flag_values **ret)
{
	struct kcmd_flag_values *v = calloc(1, sizeof(*v));

	if (!v)
		return -ENOMEM;
	v->flags = flags;
	v->n = n;
	v->text = calloc(n ? n : 1, sizeof(*v->text));
	v->set = calloc(n ? n : 1, sizeof(*v->set));
	if (!v->text || !v->set) {
		kcmd_flag_values_free(v);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		const char *d = flags[i].def ? flags[i].def : "";
		int r = check(&flags[i], d, NULL, 0);
		if (r == 0 && !(v->text[i] = strdup(d)))
			r = -ENOMEM;
		if (r < 0) {
			kcmd_flag_values_free(v);
			return r;
		}
	}
	*ret = v;
	return 0;
}

struct kcmd_flag_values *kcmd_flag_values_free(struct kcmd_flag_values *v)
{
	if (!v)
		return NULL;
	for (size_t i = 0; v->text && i < v->n; i++)
		free(v->text[i]);
	free(v->text);
	free(v->set);
	free(v);
	return NULL;
}

static long find(const struct kcmd_flag_values *v, const char *name)
{
	for (size_t i = 0; v && name && i < v->n; i++)
		if (strcmp(v->flags[i].name, name) == 0)
			return (long)i;
	return -1;
}

const struct kcmd_flag *kcmd_flag_values_find(const struct kcmd_flag_values *v, const char *name)
{
	long i = find(v, name);
	return i < 0 ? NULL : &v->flags[i];
}

int kcmd_flag_values_set(struct kcmd_flag_values *v, const char *name, const char *value, char *err,
                         size_t errlen)
{
	long i = find(v, name);
	char *t;
	int r;

	if (i < 0)
		return -ENOENT;
	if ((r = check(&v->flags[i], value, err, errlen)) < 0)
		return r;
	if (!(t = strdup(value)))
		return -ENOMEM;
	free(v->text[i]);
	v->text[i] = t;
	v->set[i] = true;
	return 0;
}

bool kcmd_flag_values_is_set(const struct kcmd_flag_values *v, const char *name)
{
	long i = find(v, name);
	return i >= 0 && v->set[i];
}

const char *kcmd_flag_values_text(const struct kcmd_flag_values *v, size_t i)
{
	return v && i < v->n ? v->text[i] : NULL;
}

size_t kcmd_flag_values_count(const struct kcmd_flag_values *v)
{
	return v ? v->n : 0;
}

int64_t kcmd_flag_int(const struct kcmd_flag_values *v, const char *name)
{
	long i = find(v, name);
	return i < 0 ? 0 : strtoll(v->text[i], NULL, 10);
}

bool kcmd_flag_bool(const struct kcmd_flag_values *v, const char *name)
{
	long i = find(v, name);
	bool b = false;
	return i >= 0 && kcmd_parse_bool(v->text[i], &b) == 0 && b;
}

double kcmd_flag_double(const struct kcmd_flag_values *v, const char *name)
{
	long i = find(v, name);
	return i < 0 ? 0 : strtod(v->text[i], NULL);
}

uint64_t kcmd_flag_duration_us(const struct kcmd_flag_values *v, const char *name)
{
	long i = find(v, name);
	uint64_t us = 0;
	return i >= 0 && kcmd_parse_duration(v->text[i], &us) == 0 ? us : 0;
}

const char *kcmd_flag_string(const struct kcmd_flag_values *v, const char *name)
{
	long i = find(v, name);
	return i < 0 ? NULL : v->text[i];
}
