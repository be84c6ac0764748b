/* SPDX-License-Identifier: Apache-2.0 */
/*
 * manager/scaffold.c: `kcmctl new-controller` (see scaffold.h).
 *
 * Design note.
 *   The templates are real files under manager/scaffold/ (readable and reviewable as the code
 *   they become), embedded into kcmctl at build time with the assembler's .incbin, so kcmctl
 *   needs no data directory at run time. Two placeholders are substituted: @NAME@ (the
 *   controller's name, e.g. hello-controller) and @BASE@ (the name without "-controller": the
 *   queue, the labels' prefix, the flag). The generated project depends only on an installed
 *   kcmd (pkg-config kcmd), never on this source tree.
 *   Rejected: templates as C string literals (unreadable, every quote escaped); a Go-style
 *   generator with options (one good starting point is what kubebuilder's `create api` gives
 *   too; the guide explains each part to change).
 */
#include "manager/scaffold.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* template symbol, file (relative to the top of the tree, where make runs the compiler) */
#define TEMPLATE(sym, file)                                                                        \
	__asm__(".pushsection .rodata\n" #sym ":\n.incbin \"" file "\"\n.byte 0\n.popsection\n");  \
	extern const char sym[]

TEMPLATE(mgr_tpl_c, "manager/scaffold/controller.c.in");
TEMPLATE(mgr_tpl_h, "manager/scaffold/controller.h.in");
TEMPLATE(mgr_tpl_test, "manager/scaffold/test.c.in");
TEMPLATE(mgr_tpl_e2e, "manager/scaffold/e2e.c.in");
TEMPLATE(mgr_tpl_make, "manager/scaffold/Makefile.in");
TEMPLATE(mgr_tpl_readme, "manager/scaffold/README.md.in");
TEMPLATE(mgr_tpl_ignore, "manager/scaffold/gitignore.in");

#define SUFFIX "-controller"

static bool valid_name(const char *n)
{
	size_t len = strlen(n);

	if (len == 0 || len > 40 || !islower((unsigned char)n[0]) || n[len - 1] == '-')
		return false;
	for (const char *p = n; *p; p++)
		if (!islower((unsigned char)*p) && !isdigit((unsigned char)*p) && *p != '-')
			return false;
	return true;
}

/* t with @NAME@ and @BASE@ replaced; malloc'd or NULL. */
static char *expand(const char *t, const char *name, const char *base)
{
	size_t cap = strlen(t) * 2 + 1024, len = 0;
	char *out = malloc(cap);

	if (!out)
		return NULL;
	while (*t) {
		const char *v = NULL;
		size_t skip = 1;
		if (strncmp(t, "@NAME@", 6) == 0)
			v = name, skip = 6;
		else if (strncmp(t, "@BASE@", 6) == 0)
			v = base, skip = 6;
		size_t need = v ? strlen(v) : 1;
		if (len + need + 1 > cap) {
			char *n = realloc(out, cap = (len + need + 1) * 2);
			if (!n) {
				free(out);
				return NULL;
			}
			out = n;
		}
		if (v)
			memcpy(out + len, v, need);
		else
			out[len] = *t;
		len += need;
		t += skip;
	}
	out[len] = 0;
	return out;
}

static int write_file(const char *dir, const char *file, const char *text, char *err, size_t errlen)
{
	char path[4096];
	size_t len = strlen(text), off = 0;
	int fd, r = 0;

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	if ((fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644)) < 0) {
		r = -errno;
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return r;
	}
	while (off < len) {
		ssize_t n = write(fd, text + off, len - off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			r = n < 0 ? -errno : -EIO;
			snprintf(err, errlen, "%s: %s", path, strerror(-r));
			break;
		}
		off += (size_t)n;
	}
	if (close(fd) < 0 && r == 0) {
		r = -errno;
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
	}
	return r;
}

/* mkdir -p: the parents too; EEXIST of the last one is the caller's to judge. */
static int make_dirs(const char *dir)
{
	char p[4096];

	if (snprintf(p, sizeof(p), "%s", dir) >= (int)sizeof(p))
		return -ENAMETOOLONG;
	for (char *s = p + 1; *s; s++)
		if (*s == '/') {
			*s = 0;
			if (mkdir(p, 0755) < 0 && errno != EEXIST)
				return -errno;
			*s = '/';
		}
	return mkdir(p, 0755) < 0 ? -errno : 0;
}

static int empty_dir(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	if (!d)
		return -errno;
	while ((e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			n++;
	closedir(d);
	return n == 0 ? 0 : -EEXIST;
}

int mgr_scaffold_controller(const char *name, const char *dir, char *err, size_t errlen)
{
	char full[64], base[64], defdir[80], file[128];
	size_t nl;
	int r;

	if (!name || !valid_name(name)) {
		snprintf(err, errlen,
		         "%s: a controller name is lowercase letters, digits and '-', starts with "
		         "a letter and has at most 40 characters (e.g. hello-controller)",
		         name ? name : "(none)");
		return -EINVAL;
	}
	nl = strlen(name);
	if (nl > strlen(SUFFIX) && strcmp(name + nl - strlen(SUFFIX), SUFFIX) == 0) {
		snprintf(full, sizeof(full), "%s", name);
		snprintf(base, sizeof(base), "%.*s", (int)(nl - strlen(SUFFIX)), name);
	} else {
		snprintf(full, sizeof(full), "%s" SUFFIX, name);
		snprintf(base, sizeof(base), "%s", name);
	}
	if (!dir) {
		snprintf(defdir, sizeof(defdir), "./%s", full);
		dir = defdir;
	}
	if ((r = make_dirs(dir)) < 0) {
		if (r != -EEXIST) {
			snprintf(err, errlen, "%s: %s", dir, strerror(-r));
			return r;
		}
		if ((r = empty_dir(dir)) < 0) {
			snprintf(err, errlen, "%s: %s", dir,
			         r == -EEXIST ? "exists and is not empty" : strerror(-r));
			return r;
		}
	}
	const struct {
		const char *fmt, *text;
	} files[] = {
	        {"%s.c", mgr_tpl_c},
	        {"%s.h", mgr_tpl_h},
	        {"test-%s.c", mgr_tpl_test},
	        {"e2e-%s.c", mgr_tpl_e2e},
	        {"Makefile", mgr_tpl_make},
	        {"README.md", mgr_tpl_readme},
	        {".gitignore", mgr_tpl_ignore},
	};
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		char *text = expand(files[i].text, full, base);
		if (!text) {
			snprintf(err, errlen, "out of memory");
			return -ENOMEM;
		}
		snprintf(file, sizeof(file), files[i].fmt, full);
		r = write_file(dir, file, text, err, errlen);
		free(text);
		if (r < 0)
			return r;
	}
	return 0;
}
