/* SPDX-License-Identifier: Apache-2.0 */
/* controllers/registry.c: the controllers of this build (see registry.h). */
#include "controllers/registry.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "lib/goflag.h"

extern const struct kcmd_controller kcmd_replicaset_controller; /* workers/replicaset/plugin.c */
extern const struct kcmd_controller kcmd_gc_controller;     /* workers/garbagecollector/plugin.c */
extern const struct kcmd_controller kcmd_kubelet_simulator; /* workers/kubeletsim/plugin.c */
extern const struct kcmd_controller kcmd_podgc_controller;  /* workers/podgc/plugin.c */

static const struct kcmd_controller *const registry[] = {
        &kcmd_replicaset_controller,
        &kcmd_gc_controller,
        &kcmd_kubelet_simulator,
        &kcmd_podgc_controller,
};

size_t kcmd_registry_count(void)
{
	return sizeof(registry) / sizeof(registry[0]);
}

const struct kcmd_controller *kcmd_registry_at(size_t i)
{
	return i < kcmd_registry_count() ? registry[i] : NULL;
}

static bool named(const struct kcmd_controller *c, const char *name)
{
	if (!strcmp(c->name, name))
		return true;
	for (size_t k = 0; c->aliases && c->aliases[k]; k++)
		if (!strcmp(c->aliases[k], name))
			return true;
	return false;
}

const struct kcmd_controller *kcmd_registry_find(const char *name)
{
	for (size_t i = 0; name && i < kcmd_registry_count(); i++)
		if (named(registry[i], name))
			return registry[i];
	return NULL;
}

long kcmd_registry_index(const struct kcmd_controller *c)
{
	for (size_t i = 0; i < kcmd_registry_count(); i++)
		if (registry[i] == c)
			return (long)i;
	return -1;
}

int kcmd_registry_validate(char *err, size_t errlen)
{
	for (size_t i = 0; i < kcmd_registry_count(); i++) {
		const struct kcmd_controller *c = registry[i];
		struct kcmd_flag_values *v = NULL;

		if (c->abi != KCMD_CONTROLLER_ABI) {
			snprintf(err, errlen, "controller %s: ABI %u, this kcmd has %u",
			         c->name ? c->name : "?", c->abi, KCMD_CONTROLLER_ABI);
			return -EINVAL;
		}
		if (!c->name || (!c->worker && !c->worker_main) || (c->hidden && !c->enable_flag)) {
			snprintf(err, errlen, "controller %s: incomplete descriptor",
			         c->name ? c->name : "?");
			return -EINVAL;
		}
		if (kcmd_flag_values_new(c->flags, c->n_flags, &v) < 0) {
			snprintf(err, errlen, "controller %s: a flag's default does not parse",
			         c->name);
			return -EINVAL;
		}
		kcmd_flag_values_free(v);
		for (size_t j = 0; j < i; j++) {
			const struct kcmd_controller *o = registry[j];
			if (named(o, c->name)) {
				snprintf(err, errlen, "controllers %s and %s share a name", o->name,
				         c->name);
				return -EINVAL;
			}
			for (size_t k = 0; c->aliases && c->aliases[k]; k++)
				if (named(o, c->aliases[k])) {
					snprintf(err, errlen,
					         "controllers %s and %s share the name %s", o->name,
					         c->name, c->aliases[k]);
					return -EINVAL;
				}
			for (size_t a = 0; a < c->n_queues; a++)
				for (size_t b = 0; b < o->n_queues; b++)
					if (!strcmp(c->queues[a].name, o->queues[b].name)) {
						snprintf(err, errlen,
						         "controllers %s and %s share the queue %s",
						         o->name, c->name, c->queues[a].name);
						return -EINVAL;
					}
			for (size_t a = 0; a < c->n_flags; a++)
				for (size_t b = 0; b < o->n_flags; b++)
					if (!strcmp(c->flags[a].name, o->flags[b].name)) {
						snprintf(err, errlen,
						         "controllers %s and %s both declare --%s",
						         o->name, c->name, c->flags[a].name);
						return -EINVAL;
					}
		}
	}
	return 0;
}
