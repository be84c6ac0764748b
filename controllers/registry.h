/* SPDX-License-Identifier: Apache-2.0 */
#pragma once
/*
 * controllers/registry.h: the one table of the controllers this kcmd has (library `registry`):
 * the in-tree ones, then the plug-ins loaded with --controller-plugins (kcmd/controller.h,
 * KCMD_PLUGIN). Every program asks the registry; only controllers/registry.c names a
 * controller. Adding an in-tree controller is its own folder plus one line in registry.c; an
 * out-of-tree one is a plug-in and needs no line at all.
 *
 * Calling context: load the plug-ins once at start, before anything reads the table (indexes
 * stay stable after that); the table is not locked.
 */
#include <stdbool.h>
#include <stddef.h>

#include "kcmd/controller.h"
#include "kube/shard.h"

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

/* T: at most this many plug-ins per process; one more is refused (-E2BIG) at start. */
#define KCMD_MAX_PLUGINS 32
/* Loads the plug-ins of a comma-separated list of paths (--controller-plugins), appending them
 * to the table in order. Each is refused with a message naming it: the file cannot be loaded
 * (-ENOENT and the like from realpath, -ENOEXEC from dlopen: not a shared object, an
 * unresolved symbol), it exports no KCMD_PLUGIN_SYMBOL (-ENOEXEC), it returns no descriptor
 * (-EINVAL), its ABI differs (-EPROTO), it is listed twice (-EEXIST), the table no longer
 * validates (-EINVAL: a name, alias, queue or flag clashes), too many (-E2BIG). Plug-ins
 * loaded before the failing one stay loaded. */
int kcmd_registry_load_plugins(const char *list, char *err, size_t errlen);
/* Finds --controller-plugins (=value or separate value, one or two dashes, repeatable) in a
 * program's arguments and loads them; 0 when absent. For the mains: call before any other
 * registry lookup. */
int kcmd_registry_load_args(int argc, char **argv, char *err, size_t errlen);
/* Removes the --controller-plugins arguments from argv (argv[argc] is NULL as before); returns
 * the new argc. For a main whose own parser (or a controller's worker_main) does not know it. */
int kcmd_registry_drop_args(int argc, char **argv);
/* The absolute paths of the loaded plug-ins, comma-separated (what a child is passed), or NULL
 * when none is loaded. */
const char *kcmd_registry_plugins_arg(void);
/* Is c one of the loaded plug-ins. */
bool kcmd_registry_is_plugin(const struct kcmd_controller *c);
/* Unloads every plug-in (tests only: a process keeps its plug-ins until it exits). */
void kcmd_registry_unload_plugins(void);

/* Sharding (--shard-ranges, docs/sharding.md, "Which controller is sharded how"): how the keys
 * of controller c name the namespace its writes go to. Two audited lists of in-tree controllers
 * (a descriptor field would change the plug-in ABI): KUBE_SHARD_KEYS_NS_NAME for those whose
 * keys are "namespace/name" (or "<tag>:namespace/name") and every write of whose sync (objects,
 * status, patches, Events) goes into the key's namespace; KUBE_SHARD_KEYS_NAMESPACE for those
 * whose keys are namespace names and whose writes go into that namespace. Every other
 * controller, plug-ins included, is KUBE_SHARD_KEYS_NONE: it runs whole on the owner of range 0.
 * NULL -> KUBE_SHARD_KEYS_NONE. */
enum kube_shard_keys kcmd_registry_shard_keys(const struct kcmd_controller *c);
/* kcmd_registry_shard_keys(c) != KUBE_SHARD_KEYS_NONE. */
bool kcmd_registry_shard_by_namespace(const struct kcmd_controller *c);
/* Sharding: whether controller c decides itself which of its keys this instance handles (its
 * keys do not carry their namespace): the framework then drops none of its keys, neither in the
 * dispatcher nor before a worker's sync, and its processes' writes are fenced by the range of
 * each request's namespace, as a namespace-sharded controller's. Audited list: the garbage
 * collector (workers/garbagecollector/shard.h). */
bool kcmd_registry_shard_self(const struct kcmd_controller *c);
