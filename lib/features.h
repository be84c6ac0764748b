/* SPDX-License-Identifier: Apache-2.0 */
#pragma once
/*
 * lib/features.h: --feature-gates, with kube-controller-manager's syntax (library `kcfeat`,
 * usable by every kcmd process).
 *
 * Design note.
 *   kcm's --feature-gates is component-base's: the flag collects "[kube:]Name=bool" entries
 *   (repeatable, spaces around entries allowed, values as Go's strconv.ParseBool, AllAlpha= and
 *   AllBeta= set every alpha/beta gate not named), and after all flags are read it checks the
 *   union against every gate kcm registers (lib/kcm-gates.c, generated from upstream's specs):
 *   an unknown gate, a locked gate away from its default, a gate not yet available (PreAlpha), or
 *   an enabled gate whose dependencies are disabled is refused with kcm's words, each gate
 *   judged at the emulation and min compatibility versions in force (its versioned specs, as
 *   component-base resolves them; kcmd_features_set_versions()). kcmd checks
 *   the same, in the same order, and says the same (kcmd_features_add() per flag, then
 *   kcmd_features_validate() once). Of the accepted gates, kcmd acts on the ones listed below
 *   and on the gates its controllers require (kcmd_features_gate_on()); the others are
 *   reported once when set away from their default. The manager passes kcmd's gates to its
 *   children as KCMD_FEATURE_GATES (the canonical "A=true,B=false"); kcmd_feature_enabled()
 *   reads it there.
 */
#include <stdbool.h>
#include <stddef.h>

enum kcmd_feature {
	KCMD_FEAT_DEPLOYMENT_RS_TERMINATING_REPLICAS =
	        0,                           /* DeploymentReplicaSetTerminatingReplicas */
	KCMD_FEAT_POD_DELETION_COST,         /* PodDeletionCost */
	KCMD_FEAT_STALE_CONSISTENCY_RS,      /* StaleControllerConsistencyReplicaSet */
	KCMD_FEAT_ATOMIC_FIFO,               /* AtomicFIFO */
	KCMD_FEAT_WATCH_LIST_CLIENT,         /* WatchListClient */
	KCMD_FEAT_MAX_UNAVAILABLE_STS,       /* MaxUnavailableStatefulSet */
	KCMD_FEAT_REMOTE_REQUEST_HEADER_UID, /* RemoteRequestHeaderUID */
	KCMD_FEAT_PVC_UNUSED_SINCE_TIME,     /* PersistentVolumeClaimUnusedSinceTime */
	KCMD_FEAT_STALE_CONSISTENCY_JOB,     /* StaleControllerConsistencyJob */
	KCMD_FEAT_GENERIC_WORKLOAD,          /* GenericWorkload */
	KCMD_FEAT_STALE_CONSISTENCY_DS,      /* StaleControllerConsistencyDaemonSet */
	KCMD_FEAT_DRA_DEVICE_TAINT_RULES,    /* DRADeviceTaintRules */
	KCMD_FEAT_COUNT,
};

#define KCMD_KCM_GATES_MAX 512 /* bound of kcm_gate_specs[] (a unit test checks it) */

struct kcmd_features {
	bool on[KCMD_FEAT_COUNT]; /* kcmd's gates, resolved */
	/* per kcm_gate_specs[] entry: 0 not named, 1 named false, 2 named true */
	unsigned char named[KCMD_KCM_GATES_MAX];
	/* AllAlpha / AllBeta given: 0 no, 1 false, 2 true */
	unsigned char all_alpha, all_beta;
	/* entries seen: 1 without a component, 2 with "kube:" (kcm refuses both at once) */
	unsigned char prefixes;
	/* the first entry naming an unregistered component / an unknown gate ("" none) */
	char bad_component[64], unknown[128];
	/* --emulated-version's minor (major 1; 0: 1.37) and --min-compatibility-version's (0: the
	 * emulated one minus one): every gate's stage, default and lock is its spec in force there
	 * (kcm_gate_at()) */
	unsigned char emu_minor, min_compat_minor;
};

#define KCMD_KCM_MINOR 37 /* kube-controller-manager's version whose behaviour kcmd implements */

/* Every gate at its v1.37 default (emulation 1.37, min compatibility 1.36). */
void kcmd_features_defaults(struct kcmd_features *f);
/* Judge f's gates at emulation version 1.emu and min compatibility version 1.min_compat (0:
 * 1.37 / the emulated one minus one), as kcm's component registry sets its gate; resolves
 * f->on[] again. The caller has checked the range (manager/flags.c). */
void kcmd_features_set_versions(struct kcmd_features *f, unsigned emu, unsigned min_compat);
/* The emulated and min compatibility minors f is judged at. */
unsigned kcmd_features_emulated(const struct kcmd_features *f);
unsigned kcmd_features_min_compat(const struct kcmd_features *f);
/* Adds one --feature-gates value's entries to f (kcm's flag Set: only the syntax is checked
 * here). Returns 0, or -EINVAL with kcm's message and f untouched. */
int kcmd_features_add(const char *spec, struct kcmd_features *f, char *err, size_t errlen);
/* kcm's check of all entries given, after the last flag: component, unknown gate, locked,
 * not available, dependencies. Returns 0, or -EINVAL with kcm's message (several errors as
 * "[a, b]", as Go's aggregate prints them). */
int kcmd_features_validate(const struct kcmd_features *f, char *err, size_t errlen);
/* add + validate, atomically (a single-flag caller: KCMD_FEATURE_GATES, tests). */
int kcmd_features_parse(const char *spec, struct kcmd_features *f, char *err, size_t errlen);
/* Whether kcm's gate `name` is on with f's entries (any registered gate; false if unknown). */
bool kcmd_features_gate_on(const struct kcmd_features *f, const char *name);
/* The GA and deprecated gates named in f, one "Name=value" per call of `fn` (kcm warns of each:
 * "setting GA feature gate" / "setting deprecated feature gate"). */
void kcmd_features_each_warning(const struct kcmd_features *f,
                                void (*fn)(const char *gate, bool value, bool deprecated,
                                           void *arg),
                                void *arg);
/* The kube-controller-manager gates kcmd does not act on (neither kcmd's own nor in `acted`, a
 * NULL-terminated list such as the gates its controllers require; may be NULL) that the flags
 * set away from their default, as "A=true, B=false" (AllAlpha/AllBeta named too), for the
 * manager's one report. Returns the length (0: none), or -ENOSPC. */
int kcmd_features_ignored(const struct kcmd_features *f, const char *const *acted, char *buf,
                          size_t n);
/* The gates kcm's own code reads but kcmd's does not (lib/features.c, fixed_gates) whose value in
 * f (at its emulated version, with its entries) is neither what kcmd runs nor v1.37's default:
 * kcm would behave otherwise. As "A=false (the job controller; kcmd runs true), ..."; *named
 * (may be NULL) says whether one of them was named in f. Returns the length (0: none), or
 * -ENOSPC. */
int kcmd_features_unhonoured(const struct kcmd_features *f, char *buf, size_t n, bool *named);
/* The k-th of those gates' names (NULL past the last), for tests. */
const char *kcmd_features_fixed_gate(size_t k);
/* "A=true,B=false,..." for every known gate (what KCMD_FEATURE_GATES carries). Returns the
 * length, or -ENOSPC. */
int kcmd_features_format(const struct kcmd_features *f, char *buf, size_t n);
const char *kcmd_feature_name(enum kcmd_feature f);
/* "Beta" / "Alpha" / "GA" in v1.37, and its default. */
const char *kcmd_feature_stage(enum kcmd_feature f);
bool kcmd_feature_default(enum kcmd_feature f);
/* In any kcmd process: the value the manager passed (KCMD_FEATURE_GATES), else the default. */
bool kcmd_feature_enabled(enum kcmd_feature f);
