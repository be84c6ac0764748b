/* SPDX-License-Identifier: Apache-2.0 */
#pragma once
/*
 * lib/ctlhost.h: the host side of the controller descriptor's manager hooks (kcmd/controller.h):
 * the fds a controller's mgr_setup exports to its processes, and the text buffer its metrics and
 * debug hooks write. Kept in lib/ (library `kcflag`) so that a controller's descriptor links into
 * every program, while only the manager calls the hooks.
 */
#include <stddef.h>

#include "kcmd/controller.h"

#define KCMD_MGR_ENV_MAX                                                                           \
	8 /* fds one controller exports; kcmd_mgr_export_fd says -E2BIG past it                    \
	   */

struct kcmd_mgr_export {
	char var[64]; /* environment variable, e.g. KCMD_EXPECTATIONS_FD */
	int fd;
	unsigned users; /* enum kcmd_region_users */
};

struct kcmd_mgr_env {
	struct kcmd_mgr_export e[KCMD_MGR_ENV_MAX];
	size_t n;
	/* the arena's read-only fd (kcmd_mgr_arena_fd), owned by the manager; -1 none. The
	 * manager sets it before mgr_setup; 0 (a zeroed env) also reads as none. */
	int arena_ro_fd;
};

struct kcmd_text {
	char *buf; /* NUL-terminated, malloc'd */
	size_t len, cap;
	int err; /* -ENOMEM once an append failed */
};

/* Takes the text (the caller frees it) and resets t. */
char *kcmd_text_take(struct kcmd_text *t, size_t *ret_len);
void kcmd_text_free(struct kcmd_text *t);
