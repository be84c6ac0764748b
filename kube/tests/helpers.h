/* SPDX-License-Identifier: Apache-2.0 */
/* kube/tests/helpers.h - fixture loading for kube tests (run from the tree top). */
#pragma once
#include <stdio.h>
#include <stdlib.h>

static inline char *fixture(const char *name, size_t *len)
{
	char path[512];
	snprintf(path, sizeof(path), "kube/tests/fixtures/%s", name);
	FILE *f = fopen(path, "rb");
	if (!f) {
		fprintf(stderr, "cannot open %s (run from the tree top)\n", path);
		exit(1);
	}
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	char *b = malloc((size_t)n + 1);
	if (!b || fread(b, 1, (size_t)n, f) != (size_t)n)
		exit(1);
	fclose(f);
	b[n] = 0;
	*len = (size_t)n;
	return b;
}
