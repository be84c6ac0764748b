/* SPDX-License-Identifier: Apache-2.0 */
/* kube/fuzz/fuzz-deephash.c - the pod-template hash printer (kube/deephash.c) over any JSON.
 * Invariants: the hash, the dump and the equality agree on what they accept; the hash is the
 * FNV-1a of the dump; a template that prints is equal to itself ignoring the hash label. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kube/deephash.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *json = (const char *)data;
	uint32_t h = 0;
	char *text = NULL;
	size_t len = 0;
	int r1 = kube_deephash_fnv32a(json, size, &h);
	int r2 = kube_deephash_dump(json, size, &text, &len);
	if (r1 != r2)
		abort();
	if (r1 == 0) {
		uint32_t x = 2166136261u;
		for (size_t i = 0; i < len; i++) {
			x ^= (unsigned char)text[i];
			x *= 16777619u;
		}
		if (x != h || strlen(text) != len)
			abort();
		if (kube_pod_template_equal_ignore_hash(json, size, json, size) != 1)
			abort();
	}
	free(text);
	return 0;
}
