/* SPDX-License-Identifier: Apache-2.0 */
/* manager/fuzz/fuzz-flags.c - kcmd's command line (manager/flags.h): every kcm flag spelling
 * (--name=value, --name value, -name, bare booleans, '_' for '-'), --controllers, the
 * controllers' own flags, --feature-gates, kcm flags accepted without effect. The input is the
 * argument list, one argument a line (at most 64). Invariants: a refused command line says why
 * in a NUL-terminated message; an accepted one renders /flagz, and parsing the same arguments
 * again from the defaults gives the same /flagz text (no state leaks from one parse into the
 * next); nothing is leaked (ASan) or read out of bounds. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "manager/flags.h"

#define MAX_ARGS 64

static int parse_flagz(char **argv, int argc, char **flagz, size_t *len, char *err, size_t n)
{
	struct mgr_config cfg;
	int r;

	memset(&cfg, 0, sizeof(cfg));
	if (mgr_config_defaults(&cfg) < 0)
		abort();
	r = mgr_flags_parse(&cfg, argc, argv, err, n);
	if (r == 0 && mgr_flags_flagz(&cfg, flagz, len) != 0)
		abort();
	mgr_config_free(&cfg);
	return r;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1), *argv[MAX_ARGS + 2], err[512], err2[512];
	char *f1 = NULL, *f2 = NULL;
	size_t l1 = 0, l2 = 0;
	int argc = 0;

	if (!s)
		return 0;
	memcpy(s, data, size);
	s[size] = 0;
	argv[argc++] = "kcmd";
	for (char *p = s, *nl; argc <= MAX_ARGS && p; p = nl ? nl + 1 : NULL) {
		nl = strchr(p, '\n');
		if (nl)
			*nl = 0;
		if (*p || nl) /* a trailing empty line is no argument */
			argv[argc++] = p;
	}
	argv[argc] = NULL;
	/* the input bytes: a NUL inside cuts an argument short, as argv would */
	memset(err, 0x55, sizeof(err));
	int r = parse_flagz(argv, argc, &f1, &l1, err, sizeof(err));
	if (r > 0)
		abort();
	if (r < 0) {
		if (!memchr(err, 0, sizeof(err)) || err[0] == 0)
			abort(); /* a refusal without a reason */
	} else {
		if (!f1 || strlen(f1) != l1)
			abort();
		err2[0] = 0;
		if (parse_flagz(argv, argc, &f2, &l2, err2, sizeof(err2)) != 0 || l1 != l2 ||
		    memcmp(f1, f2, l1) != 0)
			abort(); /* the same command line parsed twice must mean the same */
	}
	free(f1);
	free(f2);
	free(s);
	return 0;
}
