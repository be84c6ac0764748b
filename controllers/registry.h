/* SPDX-License-Identifier: Apache-2.0 */
#pragma once
/*
 * controllers/registry.h: the one table of the controllers this kcmd build has (library
 * `registry`). Every program asks the registry; only controllers/registry.c names a controller.
 * Adding a controller is its own folder plus one line in registry.c.
 */
#include <stdbool.h>
#include <stddef.h>

#include "kcmd/controller.h"

/* Number of registered controllers; kcmd_registry_at(i) for i below it. */
size_t kcmd_registry_count(void);
const struct kcmd_controller *kcmd_registry_at(size_t i);
/* By canonical name or alias; NULL if this build does not have it. */
const struct kcmd_controller *kcmd_registry_find(const char *name);
/* The index of c in the registry, or -1. */
long kcmd_registry_index(const struct kcmd_controller *c);
/* Checks every descriptor (ABI version, unique names and aliases, queue names unique across
 * controllers, flags unique across controllers and valid defaults). 0, or -EINVAL with a message
 * naming the descriptor. A build whose registry fails this is refused at start. */
int kcmd_registry_validate(char *err, size_t errlen);
