/* SPDX-License-Identifier: Apache-2.0 */
#pragma once
/*
 * controllers/kcm-compat.h: kube-controller-manager v1.37's controllers (as its --help lists them,
 * kcm-controllers.c, written by tools/gen-kcm-catalogue.py) and, for each kcm flag that neither
 * the manager nor a registered controller declares, why it has no effect in kcmd — by the part
 * of kcm it belongs to. The manager accepts such a flag (lib/kcm-catalogue.h), reports it once
 * at start with this reason, or refuses it when `refuse` is set and the value is not kcm's
 * default (ignoring it would leave the operator believing a security setting or a behaviour
 * holds). Beside the registry because the reasons name controllers (the manager names none).
 */
#include <stdbool.h>
#include <stddef.h>

struct kcm_controller {
	const char *name;
	bool on; /* turned on by '*' (its feature gates aside) */
};
extern const struct kcm_controller kcm_controllers[];
extern const size_t kcm_controllers_n;
const struct kcm_controller *kcm_controller_find(const char *name);

struct kcm_compat_reason {
	const char *prefix; /* of the flag's name; the first match wins, "" matches all */
	const char *why;
	bool refuse;
};
extern const struct kcm_compat_reason kcm_compat_reasons[];
extern const size_t kcm_compat_reasons_n;
/* The reason for flag `flag` (never NULL: the last entry is the catch-all). */
const struct kcm_compat_reason *kcm_compat_reason(const char *flag);
/* A reason "X is not built in kcmd" must name a kcm controller this build does not register
 * (a controller that lands makes its flags declared, and its reasons stale). 0 or -EINVAL. */
int kcm_compat_selfcheck(char *err, size_t errlen);
/* How many of kcm's on-by-default controllers this build does not register; their names,
 * comma-separated, in buf (cut at n). */
size_t kcm_controllers_missing(char *buf, size_t n);

/* kcm's constructors that refuse to start a controller (an error: kcm exits) unless a bool flag
 * of another controller is on, e.g. the storage version migrator without the garbage
 * collector. The manager checks each after parsing: `controller` enabled and the controller
 * declaring `flag` has it false -> start-up error `error` (kcm's words). */
struct kcm_start_requirement {
	const char *controller;
	const char *flag;
	const char *error;
};
extern const struct kcm_start_requirement kcm_start_requirements[];
extern const size_t kcm_start_requirements_n;
