/* SPDX-License-Identifier: Apache-2.0 */
/* kube/fuzz/fuzz-selector.c - the selector string parser. Invariant: whatever parses formats to a
 * canonical string that parses again to the same canonical string. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kube/selector.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1), *f1 = NULL, *f2 = NULL;
	char err[128];
	struct kube_selector *a = NULL, *b = NULL;
	if (!s)
		return 0;
	memcpy(s, data, size);
	s[size] = 0;
	if (kube_selector_parse(s, &a, err, sizeof(err)) == 0) {
		if (kube_selector_format(a, &f1) != 0)
			abort();
		if (kube_selector_parse(f1, &b, err, sizeof(err)) != 0)
			abort();
		if (kube_selector_format(b, &f2) != 0 || strcmp(f1, f2) != 0)
			abort();
		static const struct kube_kv l[] = {{"a", "1"}, {"b", ""}};
		kube_selector_matches(a, l, 2);
	}
	kube_selector_free(a);
	kube_selector_free(b);
	free(f1);
	free(f2);
	free(s);
	return 0;
}
