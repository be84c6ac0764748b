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

/* Every gate kcm registers (lib/kcm-gates.c, tools/gen-kcm-gates.py) with every versioned spec
 * v1.37's sources give it: --help lists only the alpha and beta ones, the flag takes them all.
 * Sorted by name. kcm_gate_at() is the spec in force at an emulation and min compatibility
 * version (component-base's featureSpecAtEmulationAndMinCompatVersion). */
enum kcm_spec_stage {
	KCM_SPEC_PREALPHA, /* not available at the emulated version: refused whatever the value */
	KCM_SPEC_ALPHA,
	KCM_SPEC_BETA,
	KCM_SPEC_GA,
	KCM_SPEC_DEPRECATED,
};
/* One versioned spec: from 1.minor on (major is 1 in every v1.37 spec), when the min
 * compatibility version is at least 1.min_compat (0: no such condition). */
struct kcm_gate_version {
	unsigned char minor, min_compat;
	enum kcm_spec_stage stage;
	bool def;
	bool locked; /* refused when set away from def */
};
struct kcm_gate_spec {
	const char *name;
	const char *deps; /* gates it needs enabled while it is, "A B" sorted, or NULL */
	unsigned n_versions;
	const struct kcm_gate_version *versions; /* in upstream's order: ascending */
};
extern const struct kcm_gate_spec kcm_gate_specs[];
extern const size_t kcm_gate_specs_n;
/* The entry named `name` (bsearch), or NULL. */
const struct kcm_gate_spec *kcm_gate_spec_find(const char *name);
/* The spec of s in force at emulation version 1.emu and min compatibility version 1.min_compat:
 * the last entry not after 1.emu whose min compatibility condition holds; none is PreAlpha,
 * off, unlocked (minor 0). */
struct kcm_gate_version kcm_gate_at(const struct kcm_gate_spec *s, unsigned emu,
                                    unsigned min_compat);

/* The entry named `name`, or NULL. */
const struct kcm_flag *kcm_flag_find(const char *name);
const struct kcm_gate *kcm_gate_find(const char *name);
