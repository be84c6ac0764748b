/* SPDX-License-Identifier: Apache-2.0 */
#pragma once
/*
 * lib/kcm-catalogue.h: what kube-controller-manager v1.37 accepts on its command line, as data
 * (library `kcfeat`): every flag with its pflag type name and default, and every feature gate
 * it lists with its stage and default (its controllers: controllers/kcm-compat.h). Written by
 * tools/gen-kcm-catalogue.py from the binary's
 * --help; the e2e test TestKcmd_AcceptsEveryKCMFlagAndGate checks it against that binary.
 *
 * Design note.
 *   kcmd is meant to start with kcm's command line unchanged. The manager's own flags and the
 *   controllers' flags are kcmd's implementation; a kcm flag neither of them declares is
 *   accepted from this table (its value checked against the type) and reported once at start
 *   as having no effect, or refused where ignoring it would mislead (controllers/kcm-compat.c
 *   says why, per flag: the registry is the one place naming controllers). The gates kcmd honours
 * are lib/features.h's; every other gate listed here is accepted and, when set away from its
 * default, reported once.
 */
#include <stdbool.h>
#include <stddef.h>

struct kcm_flag {
	const char *name; /* without dashes */
	const char *type; /* pflag's: bool, int32, int, float32, duration, string, strings, ... */
	const char *def;  /* as --help prints it ("" none) */
};

enum kcm_gate_stage { KCM_GATE_ALPHA, KCM_GATE_BETA, KCM_GATE_DEPRECATED };

struct kcm_gate {
	const char *name;
	enum kcm_gate_stage stage;
	bool def;
};

extern const struct kcm_flag kcm_flags[];
extern const size_t kcm_flags_n;
extern const struct kcm_gate kcm_gates[];
extern const size_t kcm_gates_n;

/* kcm's GA gates (lib/kcm-ga-gates.c, tools/gen-kcm-ga-gates.py): --help does not list them,
 * kcm accepts them with a warning, and refuses a locked one set away from its default. */
struct kcm_ga_gate {
	const char *name;
	bool def;
	bool locked;
};
extern const struct kcm_ga_gate kcm_ga_gates[];
extern const size_t kcm_ga_gates_n;

/* The entry named `name`, or NULL. */
const struct kcm_flag *kcm_flag_find(const char *name);
const struct kcm_gate *kcm_gate_find(const char *name);
