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
        /* KEP-5647 read-your-own-writes before a DaemonSet sync: beta, on since 1.36 */
        [KCMD_FEAT_STALE_CONSISTENCY_DS] = {"StaleControllerConsistencyDaemonSet", BETA, true},
        /* DeviceTaintRules count as taints in the ResourcePoolStatusRequest controller's
           unavailableDevices: GA, on (not locked) in 1.37 */
        [KCMD_FEAT_DRA_DEVICE_TAINT_RULES] = {"DRADeviceTaintRules", GA, true},
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

/* Go's strconv.ParseBool */
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

/* Go's strings.TrimSpace over ASCII */
static void trim(char *s)
{
	size_t n = strlen(s), a = 0;
	while (n && isspace((unsigned char)s[n - 1]))
		s[--n] = 0;
	while (isspace((unsigned char)s[a]))
		a++;
	memmove(s, s + a, n - a + 1);
}

static int spec_cmp(const void *key, const void *elem)
{
	return strcmp(key, ((const struct kcm_gate_spec *)elem)->name);
}

const struct kcm_gate_spec *kcm_gate_spec_find(const char *name)
{
	if (!name)
		return NULL;
	return bsearch(name, kcm_gate_specs, kcm_gate_specs_n, sizeof(kcm_gate_specs[0]), spec_cmp);
}

struct kcm_gate_version kcm_gate_at(const struct kcm_gate_spec *s, unsigned emu,
                                    unsigned min_compat)
{
	for (unsigned k = s->n_versions; k-- > 0;) {
		const struct kcm_gate_version *v = &s->versions[k];
		if (v->minor > emu || (v->min_compat && min_compat < v->min_compat))
			continue;
		return *v;
	}
	return (struct kcm_gate_version){0, 0, KCM_SPEC_PREALPHA, false, false};
}

unsigned kcmd_features_emulated(const struct kcmd_features *f)
{
	return f->emu_minor ? f->emu_minor : KCMD_KCM_MINOR;
}

unsigned kcmd_features_min_compat(const struct kcmd_features *f)
{
	return f->min_compat_minor ? f->min_compat_minor : kcmd_features_emulated(f) - 1;
}

/* kcm_gate_specs[i] at f's versions */
static struct kcm_gate_version spec_at(const struct kcmd_features *f, size_t i)
{
	return kcm_gate_at(&kcm_gate_specs[i], kcmd_features_emulated(f),
	                   kcmd_features_min_compat(f));
}

static bool spec_on(const struct kcmd_features *f, size_t i)
{
	struct kcm_gate_version v = spec_at(f, i);
	if (i < KCMD_KCM_GATES_MAX && f->named[i])
		return f->named[i] == 2;
	if (v.stage == KCM_SPEC_ALPHA && f->all_alpha)
		return f->all_alpha == 2;
	if (v.stage == KCM_SPEC_BETA && f->all_beta)
		return f->all_beta == 2;
	return v.def;
}

bool kcmd_features_gate_on(const struct kcmd_features *f, const char *name)
{
	const struct kcm_gate_spec *s = kcm_gate_spec_find(name);
	return s && spec_on(f, (size_t)(s - kcm_gate_specs));
}

static void resolve(struct kcmd_features *f)
{
	for (int i = 0; i < KCMD_FEAT_COUNT; i++) {
		const struct kcm_gate_spec *s = kcm_gate_spec_find(gates[i].name);
		f->on[i] = s ? spec_on(f, (size_t)(s - kcm_gate_specs)) : gates[i].def;
	}
}

void kcmd_features_set_versions(struct kcmd_features *f, unsigned emu, unsigned min_compat)
{
	f->emu_minor = (unsigned char)emu;
	f->min_compat_minor = (unsigned char)min_compat;
	resolve(f);
}

static void keep_first(char *dst, size_t n, const char *s)
{
	size_t l = 0;
	if (dst[0] || !n)
		return;
	if (!s[0])
		s = " "; /* " ": an empty name was given */
	while (s[l] && l + 1 < n) {
		dst[l] = s[l];
		l++;
	}
	dst[l] = 0;
}

/*
 * One "A=true,kube:B=false" value. kcm's flag splits it at commas, each entry at its first
 * colon (component, then "Name=value"); once all flags are read the kube component's values
 * are joined and parsed as "Name=bool" entries. Syntax errors are reported here, in entry order
 * (kcm stops at the first); what depends on the whole set waits for kcmd_features_validate().
 */
int kcmd_features_add(const char *spec, struct kcmd_features *f, char *err, size_t errlen)
{
	struct kcmd_features out = *f;
	const char *p = spec;

	while (p && *p) {
		const char *comma = strchr(p, ',');
		size_t n = comma ? (size_t)(comma - p) : strlen(p);
		char ent[256], *val, *colon, *eq, *name;
		bool v;

		const char *start = p;
		p = comma ? comma + 1 : p + n;
		if (n == 0)
			continue;
		if (n >= sizeof(ent))
			return fail(err, errlen, "feature gate entry too long: %.40s...", start);
		memcpy(ent, start, n);
		ent[n] = 0;
		colon = strchr(ent, ':');
		if (colon) {
			*colon = 0;
			trim(ent);
			if (ent[0] && strcmp(ent, "kube") != 0) {
				keep_first(out.bad_component, sizeof(out.bad_component), ent);
				continue;
			}
			out.prefixes |= ent[0] ? 2 : 1;
			name = colon + 1;
		} else {
			out.prefixes |= 1;
			name = ent;
		}
		trim(name);
		if (!name[0])
			continue; /* an empty entry (kcm's gate parser skips it) */
		eq = strchr(name, '=');
		if (eq)
			*eq = 0;
		trim(name);
		if (!eq)
			return fail(err, errlen, "missing bool value for %s", name);
		val = eq + 1;
		trim(val);
		if (parse_bool(val, &v) < 0)
			return fail(
			        err, errlen,
			        "invalid value of %s=%s, err: strconv.ParseBool: parsing \"%s\": "
			        "invalid syntax",
			        name, val, val);
		if (strcmp(name, "AllAlpha") == 0) {
			out.all_alpha = v ? 2 : 1;
			continue;
		}
		if (strcmp(name, "AllBeta") == 0) {
			out.all_beta = v ? 2 : 1;
			continue;
		}
		const struct kcm_gate_spec *s = kcm_gate_spec_find(name);
		size_t i = s ? (size_t)(s - kcm_gate_specs) : KCMD_KCM_GATES_MAX;
		if (i >= KCMD_KCM_GATES_MAX) {
			keep_first(out.unknown, sizeof(out.unknown), name);
			continue;
		}
		out.named[i] = v ? 2 : 1; /* a later entry wins, as in kcm's map */
	}
	resolve(&out);
	*f = out;
	return 0;
}

/* Go's utilerrors aggregate: one error as is, several as "[a, b]" */
struct agg {
	char *buf;
	size_t n, len;
	int count;
};

static void agg_add(struct agg *a, const char *fmt, ...)
{
	va_list ap;
	char one[1024];

	va_start(ap, fmt);
	vsnprintf(one, sizeof(one), fmt, ap);
	va_end(ap);
	if (!a->buf || !a->n)
		return (void)a->count++;
	if (a->count == 0) {
		snprintf(a->buf, a->n, "%s", one);
	} else {
		size_t l = strlen(a->buf);
		if (a->count == 1 && l + 1 < a->n) { /* open the bracket */
			memmove(a->buf + 1, a->buf, l + 1);
			a->buf[0] = '[';
			l++;
		}
		snprintf(a->buf + l, a->n - l, ", %s", one);
	}
	a->count++;
}

static int agg_done(struct agg *a)
{
	if (a->count > 1 && a->buf && a->n) {
		size_t l = strlen(a->buf);
		if (l + 1 < a->n) {
			a->buf[l] = ']';
			a->buf[l + 1] = 0;
		}
	}
	return a->count ? -EINVAL : 0;
}

int kcmd_features_validate(const struct kcmd_features *f, char *err, size_t errlen)
{
	struct agg a = {err, errlen, 0, 0};

	if (err && errlen)
		err[0] = 0;
	if (f->bad_component[0])
		return fail(err, errlen, "component not registered: %s", f->bad_component);
	if (f->prefixes == 3)
		return fail(err, errlen,
		            "set kube feature gates with default empty prefix or kube: prefix "
		            "consistently, do not mix use");
	if (f->unknown[0])
		return fail(err, errlen, "unrecognized feature gate: %s",
		            strcmp(f->unknown, " ") ? f->unknown : "");
	/* entry by entry, at the emulated and min compatibility versions: locked away from the
	 * default, or not available yet (AllAlpha and AllBeta are alpha/beta gates off by default:
	 * never locked) */
	for (size_t i = 0; i < kcm_gate_specs_n && i < KCMD_KCM_GATES_MAX; i++) {
		const struct kcm_gate_spec *s = &kcm_gate_specs[i];
		struct kcm_gate_version at = spec_at(f, i);
		bool v = f->named[i] == 2;
		if (!f->named[i])
			continue;
		if (at.locked && v != at.def)
			agg_add(&a, "cannot set feature gate %s to %s, feature is locked to %s",
			        s->name, v ? "true" : "false", at.def ? "true" : "false");
		else if (at.stage == KCM_SPEC_PREALPHA)
			agg_add(&a,
			        "cannot set feature gate %s to %s, feature is PreAlpha at emulated "
			        "version 1.%u, min compatibility version 1.%u",
			        s->name, v ? "true" : "false", kcmd_features_emulated(f),
			        kcmd_features_min_compat(f));
	}
	if (a.count)
		return agg_done(&a);
	/* an enabled gate needs its dependencies enabled */
	for (size_t i = 0; i < kcm_gate_specs_n; i++) {
		const struct kcm_gate_spec *s = &kcm_gate_specs[i];
		char off[512] = "", dep[128];
		size_t l = 0;

		if (!s->deps || !spec_on(f, i))
			continue;
		for (const char *d = s->deps; *d;) {
			size_t dn = strcspn(d, " ");
			snprintf(dep, sizeof(dep), "%.*s", (int)dn, d);
			d += dn + (d[dn] == ' ');
			if (!kcmd_features_gate_on(f, dep) && l < sizeof(off))
				l += (size_t)snprintf(off + l, sizeof(off) - l, "%s%s",
				                      l ? " " : "", dep);
		}
		if (off[0])
			agg_add(&a,
			        "%s is enabled, but depends on features that are disabled: [%s]",
			        s->name, off);
	}
	return agg_done(&a);
}

int kcmd_features_parse(const char *spec, struct kcmd_features *f, char *err, size_t errlen)
{
	struct kcmd_features out = *f;
	int r = kcmd_features_add(spec, &out, err, errlen);
	if (r < 0)
		return r;
	r = kcmd_features_validate(&out, err, errlen);
	if (r < 0)
		return r;
	*f = out;
	return 0;
}

void kcmd_features_each_warning(const struct kcmd_features *f,
                                void (*fn)(const char *gate, bool value, bool deprecated,
                                           void *arg),
                                void *arg)
{
	for (size_t i = 0; i < kcm_gate_specs_n && i < KCMD_KCM_GATES_MAX; i++) {
		const struct kcm_gate_spec *s = &kcm_gate_specs[i];
		enum kcm_spec_stage st = spec_at(f, i).stage;
		if (f->named[i] && (st == KCM_SPEC_GA || st == KCM_SPEC_DEPRECATED))
			fn(s->name, f->named[i] == 2, st == KCM_SPEC_DEPRECATED, arg);
	}
}

/*
 * The gates kube-controller-manager v1.37's own code reads (its controllers and their
 * constructors, the quota evaluators, client-go's clients, its server) whose value kcmd's code
 * does not read: kcmd runs one behaviour, `runs`. When the value in force (the emulated
 * version's default or --feature-gates) is another one, kcm would behave otherwise, so kcmd
 * refuses it (kcmd_features_unhonoured()). A gate where kcmd runs other than v1.37's default
 * (not implemented) is a difference kcmd already has at 1.37 (docs/manager.md), not refused.
 * Not listed: gates kcm does not act on (kubelet, apiserver, scheduler ones), client-go's
 * informer internals (InOrderInformers, InOrderInformersBatchProcess, UnlockWhileProcessingFIFO,
 * ClientsAllowTLSCacheGC, HPAOptimizedSelectorStore: no API-visible effect; kcmd's informerd is
 * its own), gates a kcmd controller requires (they start it or not) and kcmd's gates above,
 * except where part of kcm's use is not followed (DRADeviceTaintRules: device taint eviction;
 * DynamicResourceAllocation, VolumeAttributesClass: the quota evaluators, the PV controller).
 * Audited from v1.37.2's sources (docs/manager.md, "Emulation versions").
 */
static const struct {
	const char *name;
	bool runs;
	const char *who;   /* what in kcm reads it */
	const char *needs; /* NULL, or the gate without which that part of kcm does not run */
} fixed_gates[] = {
        {"ClientsAllowCARotation", true, "client-go's transport (CA file reload)", NULL},
        {"ClientsAllowCBOR", false, "client-go's REST client (CBOR)", NULL},
        {"ClientsPreferCBOR", false, "client-go's REST client (CBOR)", NULL},
        {"ComponentFlagz", true, "the /flagz endpoint", NULL},
        {"ComponentStatusz", true, "the /statusz endpoint", NULL},
        {"ControllerManagerReleaseLeaderElectionLockOnExit", false, "leader election", NULL},
        {"CoordinatedLeaderElection", false, "leader election (LeaseCandidate)", NULL},
        {"DRAAdminAccess", true, "the resource claim controller", "DynamicResourceAllocation"},
        {"DRADeviceTaintRules", true, "the device taint eviction controller", "DRADeviceTaints"},
        {"DRAExtendedResource", true, "the resource quota evaluators", NULL},
        {"DRAPrioritizedList", true, "the resource claim controller", "DynamicResourceAllocation"},
        {"DRAWorkloadResourceClaims", false,
         "the resource claim and device taint eviction controllers", "DynamicResourceAllocation"},
        {"DynamicResourceAllocation", true, "the resource quota evaluators", NULL},
        {"HPAConfigurableTolerance", true, "the horizontal pod autoscaler", NULL},
        {"HPAGeneration", true, "the horizontal pod autoscaler", NULL},
        {"HPAScaleToZero", true, "the horizontal pod autoscaler", NULL},
        {"InPlacePodVerticalScaling", true, "the resource quota evaluators", NULL},
        {"JobManagedBy", true, "the job controller", NULL},
        {"MutableSchedulingDirectivesForSuspendedJobs", true, "the job controller", NULL},
        {"NodeControllerLeaseCircuitBreaker", false, "the node lifecycle controller", NULL},
        {"PodLevelResources", true, "the resource quota evaluators and the HPA", NULL},
        {"PodLevelResourcesFixKubeletQOSClass", true, "the resource quota evaluators (QoS)", NULL},
        {"PodObservedGenerationTracking", true, "the pod conditions controllers write", NULL},
        {"PreferSameTrafficDistribution", true, "the EndpointSlice controller", NULL},
        {"RecoverVolumeExpansionFailure", true, "the expand controller and quota", NULL},
        {"RestartAllContainersOnContainerExits", true, "pod status helpers", NULL},
        {"SELinuxMount", true, "the SELinux warning controller", NULL},
        {"SELinuxMountReadWriteOncePod", true, "the SELinux warning controller", NULL},
        {"StaleControllerConsistencyHPA", false, "the horizontal pod autoscaler", NULL},
        {"StaleControllerConsistencyStatefulSet", false, "the StatefulSet controller", NULL},
        {"StatefulSetRecreateStrategy", false, "the StatefulSet controller", NULL},
        {"StatefulSetSemanticRevisionComparison", false, "the StatefulSet controller", NULL},
        {"TaintTolerationComparisonOperators", false, "the DaemonSet controller", NULL},
        {"VolumeAttributesClass", true, "the PV controller and the quota evaluators", NULL},
        {"WorkloadWithJob", false, "the job controller", NULL},
};

const char *kcmd_features_fixed_gate(size_t k)
{
	return k < sizeof(fixed_gates) / sizeof(fixed_gates[0]) ? fixed_gates[k].name : NULL;
}

int kcmd_features_unhonoured(const struct kcmd_features *f, char *buf, size_t n, bool *named)
{
	size_t l = 0;
	int w;

	if (n)
		buf[0] = 0;
	if (named)
		*named = false;
	for (size_t k = 0; k < sizeof(fixed_gates) / sizeof(fixed_gates[0]); k++) {
		const struct kcm_gate_spec *s = kcm_gate_spec_find(fixed_gates[k].name);
		size_t i;
		bool on;
		if (!s)
			continue; /* a unit test checks each is registered */
		i = (size_t)(s - kcm_gate_specs);
		on = spec_on(f, i);
		if (fixed_gates[k].needs && !kcmd_features_gate_on(f, fixed_gates[k].needs))
			continue;
		if (on == fixed_gates[k].runs ||
		    on == kcm_gate_at(s, KCMD_KCM_MINOR, KCMD_KCM_MINOR - 1).def)
			continue;
		if (named && i < KCMD_KCM_GATES_MAX && f->named[i])
			*named = true;
		w = snprintf(buf + l, n > l ? n - l : 0, "%s%s=%s (%s; kcmd runs %s)",
		             l ? ", " : "", s->name, on ? "true" : "false", fixed_gates[k].who,
		             fixed_gates[k].runs ? "true" : "false");
		if (w < 0 || (size_t)w >= (n > l ? n - l : 0))
			return -ENOSPC;
		l += (size_t)w;
	}
	return (int)l;
}

static bool acted_on(const char *name, const char *const *acted)
{
	for (int i = 0; i < KCMD_FEAT_COUNT; i++)
		if (strcmp(gates[i].name, name) == 0)
			return true;
	for (size_t i = 0; acted && acted[i]; i++)
		if (strcmp(acted[i], name) == 0)
			return true;
	return false;
}

int kcmd_features_ignored(const struct kcmd_features *f, const char *const *acted, char *buf,
                          size_t n)
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
	for (size_t i = 0; i < kcm_gate_specs_n && i < KCMD_KCM_GATES_MAX; i++) {
		const struct kcm_gate_spec *s = &kcm_gate_specs[i];
		if (!f->named[i] || (f->named[i] == 2) == spec_at(f, i).def ||
		    acted_on(s->name, acted))
			continue;
		w = snprintf(buf + l, n > l ? n - l : 0, "%s%s=%s", l ? ", " : "", s->name,
		             f->named[i] == 2 ? "true" : "false");
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
		/* the manager checked the whole command line; this is its result for kcmd's gates
		 * only, so kcm's dependency check (on gates it leaves out) does not apply */
		if (env && kcmd_features_add(env, &cur, NULL, 0) < 0)
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
