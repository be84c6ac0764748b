/* SPDX-License-Identifier: Apache-2.0 */
/* lib/fuzz/fuzz-goflag.c - Go-style flag values: strconv.ParseBool, time.ParseDuration and a
 * controller's typed flag table (lib/goflag.h). The input is "name\nvalue". Invariants: a value
 * that sets is read back as text that sets again to the same text; a refused value names the
 * flag in its error and leaves the old value; no declared range is ever exceeded. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lib/goflag.h"

static const struct kcmd_flag flags[] = {
        {.name = "concurrent-syncs", .type = KCMD_FLAG_INT, .def = "5", .min = 1, .max = 1000},
        {.name = "count", .type = KCMD_FLAG_INT, .def = "0"},
        {.name = "enable", .type = KCMD_FLAG_BOOL, .def = "true"},
        {.name = "ratio", .type = KCMD_FLAG_DOUBLE, .def = "0.5"},
        {.name = "grace", .type = KCMD_FLAG_DURATION, .def = "60s"},
        {.name = "label", .type = KCMD_FLAG_STRING, .def = ""},
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1), err[256];
	struct kcmd_flag_values *v = NULL;
	bool b;
	uint64_t us;
	if (!s)
		return 0;
	memcpy(s, data, size);
	s[size] = 0;
	char *nl = strchr(s, '\n');
	const char *name = nl ? s : "grace", *value = nl ? nl + 1 : s;
	if (nl)
		*nl = 0;
	(void)kcmd_parse_bool(value, &b);
	(void)kcmd_parse_duration(value, &us);
	if (kcmd_flag_values_new(flags, sizeof(flags) / sizeof(flags[0]), &v) != 0)
		abort();
	const struct kcmd_flag *decl = kcmd_flag_values_find(v, name);
	size_t idx = decl ? (size_t)(decl - flags) : 0;
	char old[512] = "";
	if (decl)
		strncpy(old, kcmd_flag_values_text(v, idx), sizeof(old) - 1);
	err[0] = 0;
	int r = kcmd_flag_values_set(v, name, value, err, sizeof(err));
	if (!decl && r != -ENOENT)
		abort();
	if (decl && r == 0) {
		char *t1 = strdup(kcmd_flag_values_text(v, idx));
		if (!t1 || kcmd_flag_values_set(v, name, t1, err, sizeof(err)) != 0 ||
		    strcmp(t1, kcmd_flag_values_text(v, idx)) != 0 ||
		    !kcmd_flag_values_is_set(v, name))
			abort();
		if (decl->type == KCMD_FLAG_INT) {
			int64_t n = kcmd_flag_int(v, name);
			if (n < 0 || (decl->max > 0 && (n < decl->min || n > decl->max)))
				abort();
		}
		if (decl->type == KCMD_FLAG_DOUBLE && !(kcmd_flag_double(v, name) >= 0))
			abort();
		free(t1);
	} else if (decl && r == -EINVAL) {
		if (!strstr(err, name) || strcmp(old, kcmd_flag_values_text(v, idx)) != 0)
			abort();
	}
	kcmd_flag_values_free(v);
	free(s);
	return 0;
}
