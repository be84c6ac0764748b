/* SPDX-License-Identifier: Apache-2.0 */
#pragma once
/*
 * lib/features.h: --feature-gates, with kube-controller-manager's syntax (library `kcfeat`,
 * usable by every kcmd process).
 *
 * Design note.
 *   kcm accepts `--feature-gates=A=true,B=false` (spaces around entries allowed, values as Go's
 *   strconv.ParseBool, `AllAlpha=`/`AllBeta=` set every alpha/beta gate not named explicitly) and
 *   refuses a gate it does not know ("unrecognized feature gate: X"). kcmd knows the gates that
 *   change what its controllers or its client do in v1.37, with v1.37's stage and default; any
 *   other gate is refused the same way, so a gate is never silently ignored. The manager parses
 *   the flag and passes every gate's value to its children as KCMD_FEATURE_GATES (the canonical
 *   "A=true,B=false" of all known gates); kcmd_feature_enabled() reads it there.
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
	KCMD_FEAT_COUNT,
};

/* kube-controller-manager's other gates (kcm-catalogue.h): accepted, no effect in kcmd */
#define KCMD_KCM_GATES_MAX 512 /* the catalogue's size bound (a unit test checks it) */
#define KCMD_KCM_GA_MAX    256 /* the GA gate table's bound (a unit test checks it) */

struct kcmd_features {
	bool on[KCMD_FEAT_COUNT];
	/* per kcm_gates[] entry: 0 not named, 1 named false, 2 named true */
	unsigned char kcm_other[KCMD_KCM_GATES_MAX];
	/* AllAlpha / AllBeta given: 0 no, 1 false, 2 true */
	unsigned char all_alpha, all_beta;
	/* per kcm_ga_gates[] entry (kcm's GA gates): 0 not named, 1 named false, 2 named true */
	unsigned char kcm_ga[KCMD_KCM_GA_MAX];
};

/* Every gate at its v1.37 default. */
void kcmd_features_defaults(struct kcmd_features *f);
/* Applies a --feature-gates value onto f. Returns 0, or -EINVAL with a message naming the entry. */
int kcmd_features_parse(const char *spec, struct kcmd_features *f, char *err, size_t errlen);
/* The kube-controller-manager gates kcmd does not act on that the flags set away from their
 * default, as "A=true, B=false" (AllAlpha/AllBeta named too), for the manager's one report.
 * Returns the length (0: none), or -ENOSPC. */
int kcmd_features_ignored(const struct kcmd_features *f, char *buf, size_t n);
/* "A=true,B=false,..." for every known gate (what KCMD_FEATURE_GATES carries). Returns the
 * length, or -ENOSPC. */
int kcmd_features_format(const struct kcmd_features *f, char *buf, size_t n);
const char *kcmd_feature_name(enum kcmd_feature f);
/* "Beta" / "Alpha" / "GA" in v1.37, and its default. */
const char *kcmd_feature_stage(enum kcmd_feature f);
bool kcmd_feature_default(enum kcmd_feature f);
/* In any kcmd process: the value the manager passed (KCMD_FEATURE_GATES), else the default. */
bool kcmd_feature_enabled(enum kcmd_feature f);
