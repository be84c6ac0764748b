/* SPDX-License-Identifier: Apache-2.0 */
#pragma once
/*
 * manager/scaffold.h: `kcmctl new-controller NAME [DIR]`, a new out-of-tree controller project
 * (docs/writing-a-controller.md): the plug-in's source with its descriptor, handlers and sync,
 * a Makefile over pkg-config kcmd, a unit test and an end-to-end test, which build and pass as
 * generated.
 */
#include <stddef.h>

/* NAME: lowercase letters, digits and '-', starting with a letter; "-controller" is appended
 * unless it ends so (kcm's naming). DIR: default ./NAME; created, or an existing empty
 * directory (parents are created). Returns 0, -EINVAL (a bad name), -EEXIST (DIR is not empty or a
 * file exists), -errno of mkdir/open/write; err gets a message. */
int mgr_scaffold_controller(const char *name, const char *dir, char *err, size_t errlen);
