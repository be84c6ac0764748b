/* SPDX-License-Identifier: Apache-2.0 */
/* lib/ctlhost.c: exported fds and text buffers for controller hooks (see ctlhost.h). */
#include "lib/ctlhost.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int kcmd_mgr_export_fd(struct kcmd_mgr_env *env, const char *var, int fd, unsigned users)
{
	if (!env || !var || !*var || fd < 0 || strlen(var) >= sizeof(env->e[0].var) || !users)
		return -EINVAL;
	if (env->n >= KCMD_MGR_ENV_MAX)
		return -E2BIG;
	snprintf(env->e[env->n].var, sizeof(env->e[env->n].var), "%s", var);
	env->e[env->n].fd = fd;
	env->e[env->n].users = users;
	env->n++;
	return 0;
}

int kcmd_mgr_arena_fd(const struct kcmd_mgr_env *env)
{
	return env && env->arena_ro_fd > 0 ? env->arena_ro_fd : -EBADF;
}

void kcmd_text_printf(struct kcmd_text *t, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (t->err)
		return;
	for (;;) {
		size_t room = t->cap - t->len;
		va_start(ap, fmt);
		n = vsnprintf(t->buf ? t->buf + t->len : NULL, t->buf ? room : 0, fmt, ap);
		va_end(ap);
		if (n < 0) {
			t->err = -EINVAL;
			return;
		}
		if (t->buf && (size_t)n < room) {
			t->len += (size_t)n;
			return;
		}
		size_t ncap = t->cap ? t->cap * 2 : 4096;
		while (ncap < t->len + (size_t)n + 1)
			ncap *= 2;
		char *nb = realloc(t->buf, ncap);
		if (!nb) {
			t->err = -ENOMEM;
			return;
		}
		t->buf = nb;
		t->cap = ncap;
	}
}

char *kcmd_text_take(struct kcmd_text *t, size_t *ret_len)
{
	char *b = t->buf;

	if (ret_len)
		*ret_len = t->len;
	*t = (struct kcmd_text){0};
	return b;
}

void kcmd_text_free(struct kcmd_text *t)
{
	free(t->buf);
	*t = (struct kcmd_text){0};
}
