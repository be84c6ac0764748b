/* SPDX-License-Identifier: Apache-2.0 */
/* lib/features.c: --feature-gates (see features.h). */
#include "lib/features.h"
#include "lib/kcm-catalogue.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum stage { ALPHA, BETA, GA };

static const struct {
	const char *name;
	enum stage stage;
	bool def;
} gates[KCMD_FEAT_COUNT] = {
        /* RS status.terminatingReplicas: beta and on since 1.35 */
        [KCMD_FEAT_DEPLOYMENT_RS_TERMINATING_REPLICAS] = {"DeploymentReplicaSetTerminatingReplicas",
                                                          BETA, true},
        /* controller.kubernetes.io/pod-deletion-cost ranks pods on scale-down: beta, on */
        [KCMD_FEAT_POD_DELETION_COST] = {"PodDeletionCost", BETA, true},
        /* KEP-5647 read-your-own-writes before a ReplicaSet sync: beta, on since 1.36 */
        [KCMD_FEAT_STALE_CONSISTENCY_RS] = {"StaleControllerConsistencyReplicaSet", BETA, true},
        /* client-go's atomic DeltaFIFO, required by the staleness check: beta, on since 1.36 */
        [KCMD_FEAT_ATOMIC_FIFO] = {"AtomicFIFO", BETA, true},
        /* client-go: informers start with a streaming WatchList instead of LIST: beta, on
           since 1.35 */
        [KCMD_FEAT_WATCH_LIST_CLIENT] = {"WatchListClient", BETA, true},
        [KCMD_FEAT_MAX_UNAVAILABLE_STS] = {"MaxUnavailableStatefulSet", BETA, true},
        [KCMD_FEAT_REMOTE_REQUEST_HEADER_UID] = {"RemoteRequestHeaderUID", BETA, true},
        /* KEP-5541 the PVC protection controller's Unused condition: beta, on since 1.37 */
        [KCMD_FEAT_PVC_UNUSED_SINCE_TIME] = {"PersistentVolumeClaimUnusedSinceTime", BETA, true},
        /* KEP-5647 read-your-own-writes before a Job sync: beta, on since 1.36 */
        [KCMD_FEAT_STALE_CONSISTENCY_JOB] = {"StaleControllerConsistencyJob", BETA, true},
        /* KEP-4671 PodGroups (the PodGroup protection controller requires it): beta, off in
           1.37 */
        [KCMD_FEAT_GENERIC_WORKLOAD] = {"GenericWorkload", BETA, false},
};

const char *kcmd_feature_name(enum kcmd_feature f)
{
	return f < KCMD_FEAT_COUNT ? gates[f].name : "unknown";
}

const char *kcmd_feature_stage(enum kcmd_feature f)
{
	static const char *const s[] = {"Alpha", "Beta", "GA"};
	return f < KCMD_FEAT_COUNT ? s[gates[f].stage] : "unknown";
}

bool kcmd_feature_default(enum kcmd_feature f)
{
	return f < KCMD_FEAT_COUNT && gates[f].def;
}

void kcmd_features_defaults(struct kcmd_features *f)
{
	memset(f, 0, sizeof(*f));
	for (int i = 0; i < KCMD_FEAT_COUNT; i++)
		f->on[i] = gates[i].def;
}

static int fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (err && errlen) {
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

static int parse_bool(const char *v, bool *ret)
{
	static const char *const t[] = {"1", "t", "T", "TRUE", "true", "True"};
	static const char *const f[] = {"0", "f", "F", "FALSE", "false", "False"};

	for (size_t i = 0; i < 6; i++) {
		if (strcmp(v, t[i]) == 0)
			return *ret = true, 0;
		if (strcmp(v, f[i]) == 0)
			return *ret = false, 0;
	}
	return -EINVAL;
}

static void trim(char *s)
{
	size_t n = strlen(s), a = 0;
	while (n && isspace((unsigned char)s[n - 1]))
		s[--n] = 0;
	while (isspace((unsigned char)s[a]))
		a++;
	memmove(s, s + a, n - a + 1);
}

int kcmd_features_parse(const char *spec, struct kcmd_features *f, char *err, size_t errlen)
{
	struct kcmd_features out = *f;
	bool named[KCMD_FEAT_COUNT] = {false}, all_set[2] = {false}, all_val[2] = {false};
	const char *p = spec;

	while (p && *p) {
		const char *comma = strchr(p, ',');
		size_t n = comma ? (size_t)(comma - p) : strlen(p);
		char ent[256], *eq;
		bool v;

		if (n >= sizeof(ent))
			return fail(err, errlen, "--feature-gates: entry too long: %.40s...", p);
		memcpy(ent, p, n);
		ent[n] = 0;
		p = comma ? comma + 1 : p + n;
		trim(ent);
		if (!ent[0])
			continue;
		eq = strchr(ent, '=');
		if (!eq)
			return fail(err, errlen, "--feature-gates: missing bool value for %s", ent);
		*eq = 0;
		trim(ent);
		char *val = eq + 1;
		trim(val);
		if (parse_bool(val, &v) < 0)
			return fail(err, errlen,
			            "--feature-gates: invalid value of %s=%s (want true or false)",
			            ent, val);
		/* kcm's --help names its gates "kube:Name" (the component of emulated versions) */
		char *gname = strncmp(ent, "kube:", 5) == 0 ? ent + 5 : ent;
		if (strcmp(gname, "AllAlpha") == 0 || strcmp(gname, "AllBeta") == 0) {
			int k = gname[3] == 'A' ? 0 : 1;
			all_set[k] = true;
			all_val[k] = v;
			if (k == 0)
				out.all_alpha = v ? 2 : 1;
			else
				out.all_beta = v ? 2 : 1;
			continue;
		}
		int found = -1;
		for (int i = 0; i < KCMD_FEAT_COUNT; i++)
			if (strcmp(gname, gates[i].name) == 0)
				found = i;
		const struct kcm_gate *other = found < 0 ? kcm_gate_find(gname) : NULL;
		if (other && (size_t)(other - kcm_gates) < KCMD_KCM_GATES_MAX) {
			out.kcm_other[other - kcm_gates] = v ? 2 : 1;
			continue;
		}
		/* a GA gate: accepted (kcm warns), refused when locked away from its default */
		for (size_t g = 0; found < 0 && g < kcm_ga_gates_n && g < KCMD_KCM_GA_MAX; g++) {
			if (strcmp(kcm_ga_gates[g].name, gname))
				continue;
			if (kcm_ga_gates[g].locked && v != kcm_ga_gates[g].def)
				return fail(err, errlen,
				            "--feature-gates: cannot set feature gate %s to %s, "
				            "feature "
				            "is locked to %s",
				            gname, v ? "true" : "false",
				            kcm_ga_gates[g].def ? "true" : "false");
			out.kcm_ga[g] = v ? 2 : 1;
			found = -2;
		}
		if (found == -2)
			continue;
		if (found < 0) {
			char known[512] = "";
			for (int i = 0; i < KCMD_FEAT_COUNT; i++) {
				size_t l = strlen(known);
				snprintf(known + l, sizeof(known) - l, "%s%s", i ? ", " : "",
				         gates[i].name);
			}
			return fail(err, errlen,
			            "--feature-gates: unrecognized feature gate: %s (neither a "
			            "kube-controller-manager v1.37 gate nor one of kcmd's: %s, "
			            "AllAlpha and AllBeta)",
			            gname, known);
		}
		out.on[found] = v;
		named[found] = true;
	}
	for (int i = 0; i < KCMD_FEAT_COUNT; i++) {
		int k = gates[i].stage == ALPHA ? 0 : gates[i].stage == BETA ? 1 : -1;
		if (!named[i] && k >= 0 && all_set[k])
			out.on[i] = all_val[k];
	}
	*f = out;
	return 0;
}

int kcmd_features_ignored(const struct kcmd_features *f, char *buf, size_t n)
{
	size_t l = 0;
	int w;

	if (n)
		buf[0] = 0;
	for (int k = 0; k < 2; k++) {
		unsigned char a = k ? f->all_beta : f->all_alpha;
		if (!a)
			continue;
		w = snprintf(buf + l, n > l ? n - l : 0, "%s%s=%s", l ? ", " : "",
		             k ? "AllBeta" : "AllAlpha", a == 2 ? "true" : "false");
		if (w < 0 || (size_t)w >= (n > l ? n - l : 0))
			return -ENOSPC;
		l += (size_t)w;
	}
	/* GA gates set away from their default (kcm acts on them; kcmd's code is at the GA
	 * behaviour) */
	for (size_t i = 0; i < kcm_ga_gates_n && i < KCMD_KCM_GA_MAX; i++) {
		if (!f->kcm_ga[i] || (f->kcm_ga[i] == 2) == kcm_ga_gates[i].def)
			continue;
		w = snprintf(buf + l, n > l ? n - l : 0, "%s%s=%s", l ? ", " : "",
		             kcm_ga_gates[i].name, f->kcm_ga[i] == 2 ? "true" : "false");
		if (w < 0 || (size_t)w >= (n > l ? n - l : 0))
			return -ENOSPC;
		l += (size_t)w;
	}
	for (size_t i = 0; i < kcm_gates_n && i < KCMD_KCM_GATES_MAX; i++) {
		if (!f->kcm_other[i] || (f->kcm_other[i] == 2) == kcm_gates[i].def)
			continue;
		w = snprintf(buf + l, n > l ? n - l : 0, "%s%s=%s", l ? ", " : "",
		             kcm_gates[i].name, f->kcm_other[i] == 2 ? "true" : "false");
		if (w < 0 || (size_t)w >= (n > l ? n - l : 0))
			return -ENOSPC;
		l += (size_t)w;
	}
	return (int)l;
}

int kcmd_features_format(const struct kcmd_features *f, char *buf, size_t n)
{
	size_t l = 0;

	if (n)
		buf[0] = 0;
	for (int i = 0; i < KCMD_FEAT_COUNT; i++) {
		int w = snprintf(buf + l, n > l ? n - l : 0, "%s%s=%s", i ? "," : "", gates[i].name,
		                 f->on[i] ? "true" : "false");
		if (w < 0 || (size_t)w >= (n > l ? n - l : 0))
			return -ENOSPC;
		l += (size_t)w;
	}
	return (int)l;
}

bool kcmd_feature_enabled(enum kcmd_feature f)
{
	static bool loaded;
	static struct kcmd_features cur;

	if (f >= KCMD_FEAT_COUNT)
		return false;
	if (!loaded) {
		const char *env = getenv("KCMD_FEATURE_GATES");
		kcmd_features_defaults(&cur);
		if (env && kcmd_features_parse(env, &cur, NULL, 0) < 0)
			kcmd_features_defaults(&cur);
		loaded = true;
	}
	return cur.on[f];
}

/* ---- kube-controller-manager's catalogue (kcm-catalogue.h) ------------------------------------
 */
const struct kcm_flag *kcm_flag_find(const char *name)
{
	for (size_t i = 0; name && i < kcm_flags_n; i++)
		if (strcmp(kcm_flags[i].name, name) == 0)
			return &kcm_flags[i];
	return NULL;
}

const struct kcm_gate *kcm_gate_find(const char *name)
{
	for (size_t i = 0; name && i < kcm_gates_n; i++)
		if (strcmp(kcm_gates[i].name, name) == 0)
			return &kcm_gates[i];
	return NULL;
}
