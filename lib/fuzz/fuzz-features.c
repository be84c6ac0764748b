/* SPDX-License-Identifier: Apache-2.0 */
/* lib/fuzz/fuzz-features.c - --feature-gates parsing (kcm's "A=true,B=false" syntax, also the
 * KCMD_FEATURE_GATES every child reads). Invariants: a refused spec leaves the gates untouched
 * and says why; an accepted one formats to a spec that a child reads (kcmd_features_add: the
 * manager already checked dependencies) to the same gates and the same text. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lib/features.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1), err[4096] = "", f1[8192], f2[8192];
	struct kcmd_features a, before, b;
	if (!s)
		return 0;
	memcpy(s, data, size);
	s[size] = 0;
	kcmd_features_defaults(&a);
	before = a;
	if (kcmd_features_parse(s, &a, err, sizeof(err)) == 0) {
		if (kcmd_features_format(&a, f1, sizeof(f1)) < 0)
			abort();
		kcmd_features_defaults(&b);
		if (kcmd_features_add(f1, &b, err, sizeof(err)) != 0)
			abort();
		if (memcmp(a.on, b.on, sizeof(a.on)) !=
		    0) /* the format carries kcmd's gates only */
			abort();
		if (kcmd_features_format(&b, f2, sizeof(f2)) < 0 || strcmp(f1, f2) != 0)
			abort();
	} else if (!err[0] || memcmp(&a, &before, sizeof(a)) != 0) {
		abort();
	}
	free(s);
	return 0;
}
