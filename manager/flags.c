/* SPDX-License-Identifier: Apache-2.0 */
/*
 * manager/flags.c: the kube-controller-manager-compatible command line (see flags.h).
 *
 * One table describes every flag kcmd implements (the manager's; the controllers' come from their
 * descriptors). Every other kube-controller-manager v1.37 flag (lib/kcm-catalogue.h) is accepted,
 * its value checked as pflag would, and reported once at start as having no effect, with the
 * reason (controllers/kcm-compat.h); a few are refused when set, where ignoring them would
 * mislead.
 */
#include "manager/flags.h"

#include "kube/fence.h"
#include "ipc/queue-abi.h"

#include "controllers/kcm-compat.h"
#include "controllers/registry.h"
#include "kube/proto.h"
#include "lib/goflag.h"
#include "lib/kcm-catalogue.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int fail(char *err, size_t errlen, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));

void mgr_config_free(struct mgr_config *cfg)
{
	for (size_t i = 0; i < cfg->n_kcm_noop; i++)
		free(cfg->kcm_noop[i]);
	free(cfg->kcm_noop);
	cfg->kcm_noop = NULL;
	cfg->n_kcm_noop = 0;
	for (size_t i = 0; cfg->ctl && i < cfg->n_ctl; i++)
		kcmd_flag_values_free(cfg->ctl[i].values);
	free(cfg->ctl);
	cfg->ctl = NULL;
	cfg->n_ctl = 0;
}

int mgr_config_defaults(struct mgr_config *cfg)
{
	mgr_config_free(cfg);
	memset(cfg, 0, sizeof(*cfg));
	cfg->n_ctl = kcmd_registry_count();
	cfg->ctl = calloc(cfg->n_ctl ? cfg->n_ctl : 1, sizeof(*cfg->ctl));
	if (!cfg->ctl)
		return -ENOMEM;
	for (size_t i = 0; i < cfg->n_ctl; i++) {
		const struct kcmd_controller *c = kcmd_registry_at(i);
		cfg->ctl[i].desc = c;
		cfg->ctl[i].enabled = c->enabled_by_default && !c->hidden;
		if (kcmd_flag_values_new(c->flags, c->n_flags, &cfg->ctl[i].values) < 0) {
			mgr_config_free(cfg);
			return -ENOMEM;
		}
	}
	cfg->kube_api_content_type = KUBE_CONTENT_PROTOBUF;
	cfg->kube_api_qps = 20;
	cfg->kube_api_burst = 30;
	cfg->leader_elect = true;
	cfg->leader_elect_lease_duration_us = 15000000;
	cfg->leader_elect_renew_deadline_us = 10000000;
	cfg->leader_elect_retry_period_us = 2000000;
	cfg->leader_elect_resource_lock = "leases";
	cfg->leader_elect_resource_name = "kcmd";
	cfg->leader_elect_resource_namespace = "kube-system";
	cfg->secure_port = 10257;
	cfg->bind_address = "0.0.0.0";
	cfg->standby_warm_cache = true;
	cfg->worker_idle_timeout_us = 60000000ull;
	kcmd_features_defaults(&cfg->features);
	mgr_httpd_auth_defaults(&cfg->auth);
	return 0;
}

const struct mgr_controller_config *mgr_controller(const struct mgr_config *cfg, const char *name)
{
	const struct kcmd_controller *c = kcmd_registry_find(name);
	long i = c ? kcmd_registry_index(c) : -1;

	return i >= 0 && (size_t)i < cfg->n_ctl ? &cfg->ctl[i] : NULL;
}

enum ftype {
	F_STR,
	F_IP, /* pflag's IP: an IPv4 or IPv6 address (net.ParseIP) */
	F_PATHS,
	F_BOOL,
	F_INT,
	F_PORT,
	F_DOUBLE,
	F_DURATION,
	F_CONTROLLERS,
	F_LOCK,
	F_GATES,
	F_VERSIONS
};

struct flagdef {
	const char *name;
	enum ftype type;
	size_t off;
	const char *help;
};

#define OFF(f) offsetof(struct mgr_config, f)
static const struct flagdef flags[] = {
        {"kubeconfig", F_STR, OFF(kubeconfig),
         "Path to a kubeconfig file with authorization and master location."},
        {"master", F_STR, OFF(master),
         "The address of the Kubernetes API server (overrides the kubeconfig's server)."},
        {"controllers", F_CONTROLLERS, 0,
         "A list of controllers to enable. '*' enables all on-by-default controllers, 'foo' "
         "enables the controller named 'foo', '-foo' disables the controller named 'foo'. The "
         "controllers of this build are listed below."},
        {"controller-plugins", F_STR, OFF(controller_plugins),
         "Comma-separated paths of controller plug-ins (shared objects built against libkcmd, "
         "docs/writing-a-controller.md) to load at start; their controllers join the list "
         "below and --controllers, on under '*' only if they say so. A plug-in that cannot be "
         "loaded, has another ABI or clashes with a controller refuses the start."},
        {"kube-api-content-type", F_STR, OFF(kube_api_content_type),
         "Content type of requests sent to apiserver: application/vnd.kubernetes.protobuf "
         "(default) or application/json."},
        {"kube-api-qps", F_DOUBLE, OFF(kube_api_qps),
         "QPS to use while talking with the apiserver (default 20)."},
        {"kube-api-burst", F_INT, OFF(kube_api_burst),
         "Burst to use while talking with the apiserver (default 30)."},
        {"leader-elect", F_BOOL, OFF(leader_elect),
         "Elect a leader through a Lease before reconciling (default true)."},
        {"leader-elect-lease-duration", F_DURATION, OFF(leader_elect_lease_duration_us),
         "How long a non-leader waits after observing a renewal before taking over (default 15s)."},
        {"leader-elect-renew-deadline", F_DURATION, OFF(leader_elect_renew_deadline_us),
         "How long the leader keeps trying to renew before it stops leading (default 10s)."},
        {"leader-elect-retry-period", F_DURATION, OFF(leader_elect_retry_period_us),
         "Time between election attempts (default 2s)."},
        {"leader-elect-resource-lock", F_LOCK, OFF(leader_elect_resource_lock),
         "Lock object type; only 'leases' (default)."},
        {"leader-elect-resource-name", F_STR, OFF(leader_elect_resource_name),
         "Name of the Lease (default kcmd, so kcmd can run beside kube-controller-manager)."},
        {"leader-elect-resource-namespace", F_STR, OFF(leader_elect_resource_namespace),
         "Namespace of the Lease (default kube-system)."},
        {"secure-port", F_PORT, OFF(secure_port),
         "HTTPS port for /healthz, /readyz, /livez and /metrics; 0 disables (default 10257)."},
        {"bind-address", F_IP, OFF(bind_address), "Address to serve HTTPS on (default 0.0.0.0)."},
        {"tls-cert-file", F_STR, OFF(tls_cert_file),
         "Serving certificate; a self-signed one is made when absent."},
        {"tls-private-key-file", F_STR, OFF(tls_private_key_file), "Key of --tls-cert-file."},
        {"cert-dir", F_STR, OFF(cert_dir), "Where the self-signed serving certificate is kept."},
        {"tls-min-version", F_STR, OFF(tls_min_version),
         "Minimum TLS version supported: VersionTLS10, VersionTLS11, VersionTLS12 (kcmd's floor "
         "whatever is asked: it serves TLS 1.2 and 1.3 only) or VersionTLS13."},
        {"authentication-kubeconfig", F_STR, OFF(auth.authentication_kubeconfig),
         "kubeconfig with enough rights to create tokenreviews.authentication.k8s.io; empty: the "
         "in-cluster config, and outside a pod no token is checked (every request is anonymous)."},
        {"authentication-skip-lookup", F_BOOL, OFF(auth.skip_lookup),
         "If false, the authentication-kubeconfig will be used to lookup missing authentication "
         "configuration from the cluster."},
        {"authentication-tolerate-lookup-failure", F_BOOL, OFF(auth.tolerate_lookup_failure),
         "If true, failures to look up missing authentication configuration from the cluster "
         "are not considered fatal. Note that this can result in authentication that treats all "
         "requests as anonymous."},
        {"requestheader-client-ca-file", F_STR, OFF(auth.requestheader_client_ca_file),
         "Root certificate bundle to use to verify client certificates on incoming requests "
         "before trusting usernames in headers specified by --requestheader-username-headers."},
        {"requestheader-allowed-names", F_STR, OFF(auth.requestheader_allowed_names),
         "List of client certificate common names to allow to provide usernames in headers "
         "specified by --requestheader-username-headers. If empty, any client certificate "
         "validated by the authorities in --requestheader-client-ca-file is allowed."},
        {"requestheader-username-headers", F_STR, OFF(auth.requestheader_username_headers),
         "List of request headers to inspect for usernames. X-Remote-User is common. (default "
         "[x-remote-user])"},
        {"requestheader-group-headers", F_STR, OFF(auth.requestheader_group_headers),
         "List of request headers to inspect for groups. X-Remote-Group is suggested. (default "
         "[x-remote-group])"},
        {"requestheader-extra-headers-prefix", F_STR, OFF(auth.requestheader_extra_prefixes),
         "List of request header prefixes to inspect. X-Remote-Extra- is suggested. (default "
         "[x-remote-extra-])"},
        {"requestheader-uid-headers", F_STR, OFF(auth.requestheader_uid_headers),
         "List of request headers to inspect for UIDs. X-Remote-Uid is suggested. Requires the "
         "RemoteRequestHeaderUID feature to be enabled."},
        {"authentication-token-webhook-cache-ttl", F_DURATION, OFF(auth.token_cache_ttl_us),
         "How long TokenReview answers are cached (default 10s)."},
        {"client-ca-file", F_STR, OFF(auth.client_ca_file),
         "CA bundle: a client certificate it signed (for client auth) authenticates as its "
         "CommonName, with its Organizations as groups."},
        {"authorization-kubeconfig", F_STR, OFF(auth.authorization_kubeconfig),
         "kubeconfig with enough rights to create subjectaccessreviews.authorization.k8s.io; "
         "empty: the in-cluster config, and outside a pod only --authorization-always-allow-paths "
         "are served."},
        {"authorization-always-allow-paths", F_PATHS, OFF(auth.always_allow_paths),
         "HTTP paths served without authorization, comma-separated; a trailing * matches a prefix "
         "(default /healthz,/readyz,/livez)."},
        {"authorization-webhook-cache-authorized-ttl", F_DURATION, OFF(auth.authorized_ttl_us),
         "How long 'authorized' SubjectAccessReview answers are cached (default 10s)."},
        {"authorization-webhook-cache-unauthorized-ttl", F_DURATION, OFF(auth.unauthorized_ttl_us),
         "How long 'unauthorized' SubjectAccessReview answers are cached (default 10s)."},
        {"use-service-account-credentials", F_BOOL, OFF(use_service_account_credentials),
         "Each controller's processes use their own service account kube-system/<controller> (see "
         "each controller below) with a token from the TokenRequest API; kcmd's own identity then "
         "needs get/create on serviceaccounts and create on serviceaccounts/token in kube-system "
         "(default false)."},
        {"emulated-version", F_VERSIONS, OFF(version_args[0]),
         "kube-controller-manager's: the version whose behaviour to emulate, [kube=]1.MINOR "
         "(kcm takes 1.34..1.37): every feature gate's stage, default and lock is the one in "
         "force at that version. Refused, naming the gates, where kcm would then run a gate "
         "kcmd's code does not read at another value than kcmd runs (docs/manager.md)."},
        {"min-compatibility-version", F_VERSIONS, OFF(version_args[1]),
         "kube-controller-manager's: the oldest version to stay compatible with, [kube=]1.MINOR "
         "(kcm takes 1.34..the emulated version; default the emulated version minus one). "
         "Gates are judged at it as kcm does (at 1.37 DRAFractionalCapacityRange is on)."},
        {"feature-gates", F_GATES, 0,
         "Feature gates as kube-controller-manager takes them (A=true,B=false). kcmd knows "
         "DeploymentReplicaSetTerminatingReplicas, PodDeletionCost, "
         "StaleControllerConsistencyReplicaSet, AtomicFIFO, WatchListClient, "
         "MaxUnavailableStatefulSet, RemoteRequestHeaderUID, PersistentVolumeClaimUnusedSinceTime, "
         "StaleControllerConsistencyJob, StaleControllerConsistencyDaemonSet (all beta, default "
         "true in v1.37), GenericWorkload (beta, default false: the PodGroup protection "
         "controller needs it), DRADeviceTaintRules (GA, default true: DeviceTaintRules count in "
         "the ResourcePoolStatusRequest controller's unavailable devices) and AllAlpha/AllBeta. "
         "Every other gate kube-controller-manager registers is accepted and logged once when set "
         "away from its default, but a value kcm's own code acts on and kcmd's does not read "
         "(e.g. HPAScaleToZero=false) is refused naming the gate (docs/manager.md)."},
        {"v", F_INT, OFF(v), "Log verbosity (klog levels)."},
        {"logging-format", F_STR, OFF(logging_format),
         "Sets the log format. Permitted formats: \"json\", \"text\" (component-base's JSON "
         "lines: ts, caller, msg, v, controller). (default \"text\")"},
        {"vmodule", F_STR, OFF(vmodule),
         "comma-separated list of pattern=N settings for file-filtered logging (a pattern is a "
         "glob over the source file's base name without .c, or its path when it holds a /)."},
        {"standby-warm-cache", F_BOOL, OFF(standby_warm_cache),
         "kcmd: keep the cache warm while not leading, so a new leader starts without a relist "
         "(default true)."},
        {"shard-ranges", F_INT, OFF(shard_ranges),
         "kcmd: sharding. 0 runs one leader. R > 0 (at most 256, with --leader-elect): every "
         "instance is active and holds a member Lease <lease-name>-member-<identity>; the "
         "namespaces fall into R ranges, each owned through its Lease <lease-name>-range-<i> by "
         "one live instance (rendezvous hashing); range 0 also runs the cluster-scoped and "
         "unsharded controllers (docs/sharding.md) (default 0)."},
        {"worker-idle-timeout", F_DURATION, OFF(worker_idle_timeout_us),
         "kcmd: a controller's worker processes beyond its first start while keys wait in its "
         "queues and stop after this long with none; 0 starts every one with the controller "
         "(--concurrent-*-syncs of them) and keeps them (default 1m0s)."},
        {"libexec-dir", F_STR, OFF(libexec_dir),
         "kcmd: directory holding kcmd-informerd and kcmd-worker (default: beside kcmd)."},
        {"help", F_BOOL, OFF(help), "Show this help."},
        {"version", F_BOOL, OFF(version), "Print the version and exit."},
};

/* A value for a kcm flag of pflag type `type`: the same check pflag makes (bools as Go's
 * ParseBool, integers, floats, durations, IPs); other types take any text. */
static bool compat_value_ok(const char *type, const char *v)
{
	char *end;
	bool b;
	uint64_t us;
	unsigned char ip[16];

	if (!strcmp(type, "bool"))
		return kcmd_parse_bool(v, &b) == 0;
	if (!strcmp(type, "int32") || !strcmp(type, "int")) {
		errno = 0;
		long long x = strtoll(v, &end, 0);
		return *v && !*end && errno == 0 &&
		       (strcmp(type, "int32") || (x >= INT32_MIN && x <= INT32_MAX));
	}
	if (!strcmp(type, "float32") || !strcmp(type, "float")) {
		(void)strtod(v, &end);
		return *v && !*end;
	}
	if (!strcmp(type, "duration")) {
		return kcmd_parse_duration(v[0] == '-' ? v + 1 : v, &us) == 0;
	}
	if (!strcmp(type, "ip"))
		return inet_pton(AF_INET, v, ip) == 1 || inet_pton(AF_INET6, v, ip) == 1;
	return true;
}

/* pflag's empty values of list types print as "[]" in --help */
static bool compat_is_default(const struct kcm_flag *kf, const char *v)
{
	if (!strcmp(v, kf->def))
		return true;
	return !*v && (!strcmp(kf->def, "[]") || !kf->def[0]);
}

/* A kube-controller-manager flag kcmd does not declare: checked, then accepted without effect
 * (kept for the start-up report) or refused. 0 or -EINVAL/-ENOMEM. */
static int compat_flag(struct mgr_config *cfg, const struct kcm_flag *kf, const char *v, char *err,
                       size_t errlen)
{
	const struct kcm_compat_reason *why = kcm_compat_reason(kf->name);
	char **grown;

	if (!compat_value_ok(kf->type, v))
		return fail(err, errlen, "invalid argument \"%s\" for \"--%s\" flag: not a %s", v,
		            kf->name, kf->type);
	if (why->refuse && !compat_is_default(kf, v))
		return fail(err, errlen,
		            "--%s=%s: a kube-controller-manager flag kcmd refuses: %s; remove it",
		            kf->name, v, why->why);
	if (!(grown = realloc(cfg->kcm_noop, (cfg->n_kcm_noop + 1) * sizeof(*grown))))
		return fail(err, errlen, "out of memory");
	cfg->kcm_noop = grown;
	if (asprintf(&cfg->kcm_noop[cfg->n_kcm_noop], "--%s=%s: %s", kf->name, v, why->why) < 0)
		return fail(err, errlen, "out of memory");
	cfg->n_kcm_noop++;
	return 0;
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

/* kcm's --emulated-version and --min-compatibility-version (component-base's compatibility
 * registry, one component "kube"). kcm v1.37 emulates 1.34..1.37; what that changes in kcm is
 * its feature gates, which kcmd judges at those versions (lib/features.c). */
enum { KCM_MINOR = 37, KCM_FLOOR_MINOR = 34 };

struct majmin {
	unsigned long long maj, min;
};

static int majmin_cmp(struct majmin a, struct majmin b)
{
	if (a.maj != b.maj)
		return a.maj < b.maj ? -1 : 1;
	return a.min < b.min ? -1 : a.min > b.min;
}

static bool go_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\f' || c == '\r';
}

/* apimachinery's generic version parse: [space]v?N.N[.N...] then anything. The version as Go
 * prints it (its numbers) goes to str; its third number (0 if none) to *patch. */
static int go_version(const char *s, struct majmin *mm, unsigned long long *patch, char *str,
                      size_t strn, char *err, size_t errlen)
{
	const char *p = s, *e;
	size_t n = 0, l = 0;

	while (go_space(*p))
		p++;
	if (*p == 'v')
		p++;
	if (!isdigit((unsigned char)*p) || strchr(s, '\n'))
		return fail(err, errlen, "could not parse \"%s\" as version", s);
	str[0] = 0;
	*patch = 0;
	/* the numbers: count them first (fewer than two is refused before any is read) */
	for (e = p;; e++) {
		while (isdigit((unsigned char)*e))
			e++;
		n++;
		if (!(e[0] == '.' && isdigit((unsigned char)e[1])))
			break;
	}
	if (n < 2)
		return fail(err, errlen, "illegal version string \"%s\"", s);
	for (size_t i = 0; i < n; i++) {
		size_t dn = strspn(p, "0123456789");
		unsigned long long v = 0;
		bool over = false;
		if (i == 0 && p[0] == '0' && dn > 1)
			return fail(err, errlen,
			            "illegal zero-prefixed version component \"%.*s\" in \"%s\"",
			            (int)dn, p, s);
		for (size_t k = 0; k < dn; k++) {
			unsigned d = (unsigned)(p[k] - '0');
			if (v > (ULLONG_MAX - d) / 10)
				over = true;
			v = v * 10 + d;
		}
		if (over)
			return fail(err, errlen,
			            "illegal non-numeric version component \"%.*s\" in \"%s\": "
			            "strconv.ParseUint: parsing \"%.*s\": value out of range",
			            (int)dn, p, s, (int)dn, p);
		if (i == 0)
			mm->maj = v;
		else if (i == 1)
			mm->min = v;
		else if (i == 2)
			*patch = v;
		if (l < strn)
			l += (size_t)snprintf(str + l, strn - l, "%s%llu", i ? "." : "", v);
		p += dn + 1;
	}
	return 0;
}

/* One flag's items, as kcm's toVersionMap then its component check: the "kube" entry's
 * version in *mm (*set true), or -EINVAL with kcm's message. */
static int version_items(const char *list, bool *set, struct majmin *mm, char *err, size_t errlen)
{
	char keys[8][64], vers[8][64], item[512], vbuf[512];
	size_t nk = 0;

	*set = false;
	if (!list[0])
		return 0;
	for (const char *p = list;;) {
		size_t il = strcspn(p, ","), kl;
		const char *v, *eq;
		char key[64] = "kube", str[64];
		struct majmin one;
		unsigned long long patch = 0;

		snprintf(item, sizeof(item), "%.*s", (int)il, p);
		v = item;
		if ((eq = strchr(item, '='))) {
			const char *k = item;
			while (go_space(*k))
				k++;
			kl = (size_t)(eq - k);
			while (kl && go_space(k[kl - 1]))
				kl--;
			snprintf(key, sizeof(key), "%.*s", (int)kl, k);
			v = eq + 1;
			while (go_space(*v))
				v++;
			snprintf(vbuf, sizeof(vbuf), "%s", v);
			for (size_t vl = strlen(vbuf); vl && go_space(vbuf[vl - 1]); vl--)
				vbuf[vl - 1] = 0;
			v = vbuf;
		}
		if (go_version(v, &one, &patch, str, sizeof(str), err, errlen) < 0)
			return -EINVAL;
		if (patch)
			return fail(err, errlen, "patch version not allowed, got: %s=%s", key, str);
		for (size_t k = 0; k < nk; k++)
			if (!strcmp(keys[k], key))
				return fail(err, errlen, "duplicate version flag, %s=%s and %s=%s",
				            key, vers[k], key, str);
		if (nk < 8) {
			snprintf(keys[nk], sizeof(keys[nk]), "%s", key);
			snprintf(vers[nk++], sizeof(vers[0]), "%s", str);
		}
		if (!strcmp(key, "kube")) {
			*mm = one;
			*set = true;
		}
		if (!p[il])
			break;
		p += il + 1;
	}
	for (size_t k = 0; k < nk; k++)
		if (strcmp(keys[k], "kube"))
			return fail(err, errlen, "component not registered: %s", keys[k]);
	return 0;
}

/* After the last flag, in kcm's order: both version flags' syntax, the feature gates (judged at
 * the emulated and min compatibility versions, as kcm's registry sets its gate), then, unless
 * --version (kcm prints its version before it checks the range), the range and what kcmd cannot
 * run: a gate kcm's code reads and kcmd's does not, at another value than kcmd runs. */
static int check_versions(struct mgr_config *cfg, char *err, size_t errlen)
{
	struct majmin emu = {1, KCM_MINOR}, minc, floor = {1, KCM_FLOOR_MINOR};
	bool emu_set, minc_set, bad_emu, bad_minc, named;
	char msg[4096];

	if (version_items(cfg->version_args[0], &emu_set, &emu, msg, sizeof(msg)) < 0)
		return fail(err, errlen, "--emulated-version: %s", msg);
	if (!emu_set)
		emu = (struct majmin){1, KCM_MINOR};
	/* kcm's default: the emulated version minus one minor, not under the floor */
	minc = (struct majmin){emu.maj, emu.min ? emu.min - 1 : 0};
	if (majmin_cmp(minc, floor) < 0)
		minc = floor;
	if (version_items(cfg->version_args[1], &minc_set, &minc, msg, sizeof(msg)) < 0)
		return fail(err, errlen, "--min-compatibility-version: %s", msg);
	/* the gates are judged at the versions asked when kcm takes them (1.34..1.37, min
	 * compatibility not above the emulation version), else at kcmd's defaults: the range
	 * check below refuses those */
	if (emu.maj == 1 && emu.min >= KCM_FLOOR_MINOR && emu.min <= KCM_MINOR && minc.maj == 1 &&
	    minc.min >= KCM_FLOOR_MINOR && minc.min <= emu.min)
		kcmd_features_set_versions(&cfg->features, (unsigned)emu.min, (unsigned)minc.min);
	else
		kcmd_features_set_versions(&cfg->features, KCM_MINOR, KCM_MINOR - 1);
	if (kcmd_features_validate(&cfg->features, msg, sizeof(msg)) < 0)
		return fail(err, errlen, "--feature-gates: %s", msg);
	if (cfg->version)
		return 0;
	bad_emu = majmin_cmp(emu, (struct majmin){1, KCM_MINOR}) > 0 || majmin_cmp(emu, floor) < 0;
	bad_minc = majmin_cmp(minc, emu) > 0 || majmin_cmp(minc, floor) < 0;
	snprintf(msg, sizeof(msg),
	         "minCompatibilityVersion version %llu.%llu is not between [1.%d, "
	         "%llu.%llu]",
	         minc.maj, minc.min, KCM_FLOOR_MINOR, emu.maj, emu.min);
	if (bad_emu)
		return fail(
		        err, errlen,
		        "--emulated-version: %semulation version %llu.%llu is not between [1.%d, "
		        "1.%d.0]%s%s%s",
		        bad_minc ? "[" : "", emu.maj, emu.min, KCM_FLOOR_MINOR, KCM_MINOR,
		        bad_minc ? ", " : "", bad_minc ? msg : "", bad_minc ? "]" : "");
	if (bad_minc)
		return fail(err, errlen, "--min-compatibility-version: %s", msg);
	/* what kcm would run otherwise than kcmd: a gate kcm's code reads and kcmd's does not,
	 * at another value than kcmd runs (the emulated version's default, or named) */
	int r = kcmd_features_unhonoured(&cfg->features, msg, sizeof(msg), &named);
	if (r != 0 && (named || emu.min == KCM_MINOR))
		return fail(err, errlen,
		            "--feature-gates: kcmd's code does not read %s: %s; "
		            "kube-controller-manager "
		            "would run otherwise, so it is refused",
		            r > 0 ? "these gates" : "many gates",
		            r > 0 ? msg : "(more than fit here)");
	if (r != 0)
		return fail(
		        err, errlen,
		        "--emulated-version=%s: at emulation version %llu.%llu (min compatibility "
		        "%llu.%llu) kube-controller-manager would run %s; kcmd's code does not "
		        "read "
		        "these gates, so it cannot emulate that version",
		        cfg->version_args[0], emu.maj, emu.min, minc.maj, minc.min,
		        r > 0 ? msg : "many gates otherwise");
	return 0;
}

/* The names this build has, for messages ("a, b and c"). */
static void built_names(char *buf, size_t n)
{
	size_t len = 0, total = 0, k = 0;

	buf[0] = 0;
	for (size_t i = 0; i < kcmd_registry_count(); i++)
		total += !kcmd_registry_at(i)->hidden;
	for (size_t i = 0; i < kcmd_registry_count() && len < n; i++) {
		const struct kcmd_controller *c = kcmd_registry_at(i);
		if (c->hidden)
			continue;
		k++;
		len += (size_t)snprintf(buf + len, n - len, "%s%s",
		                        k == 1       ? ""
		                        : k == total ? " and "
		                                     : ", ",
		                        c->name);
	}
}

static int parse_controllers(struct mgr_config *cfg, const char *v, char *err, size_t errlen)
{
	bool star = false, *on = calloc(cfg->n_ctl + 1, sizeof(bool)),
	     *off = calloc(cfg->n_ctl + 1, sizeof(bool));
	const char *p = v;
	char names[512];
	int r = 0;

	if (!on || !off) {
		free(on);
		free(off);
		return fail(err, errlen, "--controllers: out of memory");
	}
	while (*p && r == 0) {
		const char *comma = strchr(p, ',');
		size_t n = comma ? (size_t)(comma - p) : strlen(p);
		char name[128];
		bool neg = false;

		if (n == 0 || n >= sizeof(name)) {
			r = fail(err, errlen, "--controllers: empty or overlong entry in %s", v);
			break;
		}
		memcpy(name, p, n);
		name[n] = 0;
		p += n + (comma ? 1 : 0);
		if (strcmp(name, "*") == 0) {
			star = true;
			continue;
		}
		char *nm = name;
		if (*nm == '-') {
			neg = true;
			nm++;
		}
		const struct kcmd_controller *c = kcmd_registry_find(nm);
		long found = c && !c->hidden ? kcmd_registry_index(c) : -1;
		if (found < 0) {
			if (neg) /* disabling a controller kcmd does not have is a no-op */
				continue;
			built_names(names, sizeof(names));
			r = fail(err, errlen,
			         /* the advice first: a long list of names may be cut */
			         "--controllers: %s is not implemented by kcmd; run it in "
			         "kube-controller-manager, or load its plug-in with "
			         "--controller-plugins (kcmd runs %s)",
			         nm, names);
			break;
		}
		if (neg)
			off[found] = true;
		else
			on[found] = true;
	}
	for (size_t i = 0; r == 0 && i < cfg->n_ctl; i++) {
		const struct kcmd_controller *c = cfg->ctl[i].desc;
		if (!c->hidden)
			cfg->ctl[i].enabled = !off[i] && (on[i] || (star && c->enabled_by_default));
	}
	free(on);
	free(off);
	return r;
}

static int set_flag(struct mgr_config *cfg, const struct flagdef *f, const char *v, char *err,
                    size_t errlen)
{
	char *base = (char *)cfg, *end;
	long l;
	double d;
	uint64_t us;

	switch (f->type) {
	case F_STR:
		*(const char **)(base + f->off) = v;
		return 0;
	case F_IP: {
		unsigned char buf[sizeof(struct in6_addr)];
		if (inet_pton(AF_INET, v, buf) != 1 && inet_pton(AF_INET6, v, buf) != 1)
			return fail(
			        err, errlen,
			        "invalid argument \"%s\" for \"--%s\" flag: failed to parse IP: "
			        "\"%s\"",
			        v, f->name, v);
		*(const char **)(base + f->off) = v;
		return 0;
	}
	case F_PATHS:
		if (mgr_httpd_check_paths(v, err, errlen) < 0) {
			char why[200];
			snprintf(why, sizeof(why), "%s", err);
			return fail(err, errlen, "--%s=%s: %s", f->name, v, why);
		}
		*(const char **)(base + f->off) = v;
		return 0;
	case F_LOCK:
		if (strcmp(v, "leases") != 0)
			return fail(err, errlen,
			            "--%s=%s: only 'leases' is supported (the endpoints and "
			            "configmaps locks "
			            "were removed upstream)",
			            f->name, v);
		*(const char **)(base + f->off) = v;
		return 0;
	case F_BOOL:
		if (kcmd_parse_bool(v, (bool *)(base + f->off)) < 0)
			return fail(err, errlen, "--%s=%s: not a boolean", f->name, v);
		return 0;
	case F_INT:
	case F_PORT:
		errno = 0;
		l = strtol(v, &end, 10);
		if (errno || end == v || *end || l < 0 || l > INT_MAX ||
		    (f->type == F_PORT && l > 65535))
			return fail(err, errlen, "--%s=%s: not a valid %s", f->name, v,
			            f->type == F_PORT ? "port (0-65535)" : "non-negative integer");
		*(int *)(base + f->off) = (int)l;
		return 0;
	case F_DOUBLE:
		errno = 0;
		d = strtod(v, &end);
		if (errno || end == v || *end || !isfinite(d) || d < 0)
			return fail(err, errlen, "--%s=%s: not a valid non-negative number",
			            f->name, v);
		*(double *)(base + f->off) = d;
		return 0;
	case F_DURATION:
		if (kcmd_parse_duration(v, &us) < 0)
			return fail(err, errlen, "--%s=%s: not a duration (e.g. 15s, 1m30s, 500ms)",
			            f->name, v);
		*(uint64_t *)(base + f->off) = us;
		return 0;
	case F_CONTROLLERS:
		cfg->controllers_arg = v;
		return parse_controllers(cfg, v, err, errlen);
	case F_VERSIONS: {
		char *lst = (char *)(base + f->off);
		size_t have = strlen(lst);
		if (!v[0]) /* an empty value adds no item (pflag's string slice) */
			return 0;
		if (have + 1 + strlen(v) >= sizeof(cfg->version_args[0]))
			return fail(err, errlen, "--%s: too long", f->name);
		snprintf(lst + have, sizeof(cfg->version_args[0]) - have, "%s%s", have ? "," : "",
		         v);
		return 0;
	}
	case F_GATES:
		cfg->feature_gates_arg = v;
		/* kcm checks the union of every --feature-gates after the last flag */
		if (kcmd_features_add(v, &cfg->features, err + (errlen > 17 ? 17 : 0),
		                      errlen > 17 ? errlen - 17 : errlen) < 0) {
			if (errlen > 17)
				memcpy(err, "--feature-gates: ", 17);
			return -EINVAL;
		}
		return 0;
	}
	return fail(err, errlen, "--%s: internal error", f->name);
}

/* A flag's value: the "=value" part, else "true" for a bool (pflag's NoOptDefVal), else the next
 * argument (taken: *i moves on). 0, or -EINVAL when the value is missing. */
static int flag_value(const char *name, bool is_bool, int argc, char **argv, int *i,
                      const char **val, char *err, size_t errlen)
{
	if (*val)
		return 0;
	if (is_bool) {
		*val = "true";
		return 0;
	}
	if (*i + 1 >= argc)
		return fail(err, errlen, "flag --%s needs a value", name);
	*val = argv[++*i];
	return 0;
}

int mgr_flags_parse(struct mgr_config *cfg, int argc, char **argv, char *err, size_t errlen)
{
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *name, *eq, *val = NULL;
		const struct flagdef *f = NULL;
		char nbuf[128];
		size_t n;

		if (a[0] != '-' || a[1] == 0)
			return fail(err, errlen, "unexpected argument %s (kcmd takes only flags)",
			            a);
		name = a + 1 + (a[1] == '-');
		eq = strchr(name, '=');
		n = eq ? (size_t)(eq - name) : strlen(name);
		if (n == 0 || n >= sizeof(nbuf))
			return fail(err, errlen, "malformed flag %s", a);
		memcpy(nbuf, name, n);
		nbuf[n] = 0;
		for (size_t k = 0; k < n; k++)
			if (nbuf[k] == '_')
				nbuf[k] = '-'; /* pflag's normalisation in kcm */
		if (eq)
			val = eq + 1;
		for (size_t k = 0; k < sizeof(flags) / sizeof(flags[0]); k++)
			if (strcmp(flags[k].name, nbuf) == 0)
				f = &flags[k];
		struct kcmd_flag_values *cv = NULL;
		for (size_t k = 0; !f && !cv && k < cfg->n_ctl; k++)
			if (kcmd_flag_values_find(cfg->ctl[k].values, nbuf))
				cv = cfg->ctl[k].values;
		if (!f && cv) {
			const struct kcmd_flag *cf = kcmd_flag_values_find(cv, nbuf);
			if (flag_value(nbuf, cf->type == KCMD_FLAG_BOOL, argc, argv, &i, &val, err,
			               errlen) < 0)
				return -EINVAL;
			/* every controller that declares it (the registry checked they agree) */
			for (size_t k = 0; k < cfg->n_ctl; k++) {
				if (!kcmd_flag_values_find(cfg->ctl[k].values, nbuf))
					continue;
				int r = kcmd_flag_values_set(cfg->ctl[k].values, nbuf, val, err,
				                             errlen);
				if (r == -ENOMEM)
					return fail(err, errlen, "--%s: out of memory", nbuf);
				if (r < 0)
					return r;
			}
			continue;
		}
		if (!f) {
			const struct kcm_flag *kf = kcm_flag_find(nbuf);
			if (!kf)
				return fail(err, errlen, "unknown flag --%s (see kcmd --help)",
				            nbuf);
			if (flag_value(nbuf, !strcmp(kf->type, "bool"), argc, argv, &i, &val, err,
			               errlen) < 0)
				return -EINVAL;
			int r = compat_flag(cfg, kf, val, err, errlen);
			if (r < 0)
				return r;
			continue;
		}
		if (flag_value(nbuf, f->type == F_BOOL, argc, argv, &i, &val, err, errlen) < 0)
			return -EINVAL;
		int r = set_flag(cfg, f, val, err, errlen);
		if (r < 0)
			return r;
	}
	if (check_versions(cfg, err, errlen) < 0)
		return -EINVAL;
	for (size_t k = 0; k < cfg->n_ctl; k++) {
		struct mgr_controller_config *cc = &cfg->ctl[k];
		const struct kcmd_controller *c = cc->desc;
		if (c->hidden)
			cc->enabled = kcmd_flag_bool(cc->values, c->enable_flag);
		/* kcm's --enable-garbage-collector=false: such a flag turns its controller off */
		for (size_t f = 0; f < c->n_flags; f++)
			if (c->flags[f].enables_controller &&
			    !kcmd_flag_bool(cc->values, c->flags[f].name))
				cc->enabled = false;
		/* a controller whose feature gate is off does not start, as in kcm (any of kcm's
		 * gates: ClusterTrustBundle, DynamicResourceAllocation, ...); a name kcm does not
		 * register (a plug-in's own) cannot be set, so it gates nothing */
		cc->gated_off = false;
		for (size_t g = 0; c->feature_gates && c->feature_gates[g]; g++)
			if (kcm_gate_spec_find(c->feature_gates[g]) &&
			    !kcmd_features_gate_on(&cfg->features, c->feature_gates[g])) {
				cc->gated_off |= cc->enabled;
				cc->enabled = false;
			}
	}
	cfg->auth.requestheader_uid_gate = cfg->features.on[KCMD_FEAT_REMOTE_REQUEST_HEADER_UID];
	/* kcm's constructors that refuse a controller without another's flag
	 * (controllers/kcm-compat.h): a start-up error, kcm exits on it */
	for (size_t q = 0; q < kcm_start_requirements_n; q++) {
		const struct kcm_start_requirement *req = &kcm_start_requirements[q];
		bool wanted = false;
		for (size_t k = 0; k < cfg->n_ctl; k++)
			wanted |= cfg->ctl[k].enabled &&
			          !strcmp(cfg->ctl[k].desc->name, req->controller);
		for (size_t k = 0; wanted && k < cfg->n_ctl; k++)
			for (size_t f = 0; f < cfg->ctl[k].desc->n_flags; f++)
				if (!strcmp(cfg->ctl[k].desc->flags[f].name, req->flag) &&
				    !kcmd_flag_bool(cfg->ctl[k].values, req->flag))
					return fail(err, errlen, "%s", req->error);
	}
	if (kube_content_type_parse(cfg->kube_api_content_type, &cfg->kube_api_content_type) < 0)
		return fail(err, errlen,
		            "--kube-api-content-type must be application/vnd.kubernetes.protobuf "
		            "or application/json");
	if (cfg->kube_api_burst < 1 && cfg->kube_api_qps > 0)
		return fail(err, errlen,
		            "--kube-api-burst must be at least 1 when --kube-api-qps > 0");
	if (cfg->tls_min_version && *cfg->tls_min_version &&
	    strcmp(cfg->tls_min_version, "VersionTLS10") &&
	    strcmp(cfg->tls_min_version, "VersionTLS11") &&
	    strcmp(cfg->tls_min_version, "VersionTLS12") &&
	    strcmp(cfg->tls_min_version, "VersionTLS13"))
		return fail(err, errlen,
		            "--tls-min-version: unknown tls version %s (want VersionTLS10, "
		            "VersionTLS11, VersionTLS12 or VersionTLS13)",
		            cfg->tls_min_version);
	/* an empty value is kcm's default: none */
	if (cfg->tls_cert_file && !*cfg->tls_cert_file)
		cfg->tls_cert_file = NULL;
	if (cfg->tls_private_key_file && !*cfg->tls_private_key_file)
		cfg->tls_private_key_file = NULL;
	if ((cfg->tls_cert_file == NULL) != (cfg->tls_private_key_file == NULL))
		return fail(err, errlen, "--tls-cert-file and --tls-private-key-file go together");
	if (cfg->shard_ranges > (int)KUBE_FENCE_MAX_RANGES)
		return fail(err, errlen, "--shard-ranges=%d: at most %u ranges", cfg->shard_ranges,
		            KUBE_FENCE_MAX_RANGES);
	if (cfg->shard_ranges > 0 && !cfg->leader_elect)
		return fail(err, errlen,
		            "--shard-ranges needs --leader-elect=true: ranges are owned through "
		            "Leases");
	return 0;
}

static const char *type_name(enum kcmd_flag_type t)
{
	switch (t) {
	case KCMD_FLAG_INT:
		return "int";
	case KCMD_FLAG_BOOL:
		return "";
	case KCMD_FLAG_DOUBLE:
		return "float";
	case KCMD_FLAG_DURATION:
		return "duration";
	case KCMD_FLAG_STRING:
		return "string";
	}
	return "";
}

void mgr_flags_usage(FILE *out)
{
	char names[512];

	built_names(names, sizeof(names));
	fprintf(out,
	        "Usage: kcmd [flags]\n\n"
	        "kcmd runs Kubernetes controllers with kube-controller-manager's behaviour and "
	        "flags.\n"
	        "This build runs %s.\n\nFlags:\n",
	        names);
	for (size_t k = 0; k < sizeof(flags) / sizeof(flags[0]); k++)
		fprintf(out, "  --%-34s %s\n", flags[k].name, flags[k].help);
	fprintf(out,
	        "\nEvery other flag of kube-controller-manager v1.37 (%zu flags in all) is "
	        "accepted: its "
	        "value is checked\nas kcm checks it and it is reported once at start as having no "
	        "effect, with the reason.\nRefused when set: ",
	        kcm_flags_n);
	for (size_t k = 0, first = 1; k < kcm_compat_reasons_n; k++)
		if (kcm_compat_reasons[k].refuse) {
			fprintf(out, "%s%s", first ? "" : ", ", kcm_compat_reasons[k].prefix);
			first = 0;
		}
	fprintf(out, ".\n--feature-gates takes every gate of kube-controller-manager v1.37; those "
	             "kcmd does not act on\nare reported when set away from their default, but a "
	             "value kcm's own code acts on\nand kcmd's does not read is refused "
	             "(docs/manager.md, \"Emulation versions\").\n");
	fprintf(out, "\nControllers (--controllers; on = turned on by '*'):\n");
	for (size_t i = 0; i < kcmd_registry_count(); i++) {
		const struct kcmd_controller *c = kcmd_registry_at(i);
		if (c->hidden)
			continue;
		fprintf(out, "  %-34s %s", c->name, c->enabled_by_default ? "on" : "off");
		for (size_t a = 0; c->aliases && c->aliases[a]; a++)
			fprintf(out, "%s%s", a ? ", " : " (alias ", c->aliases[a]);
		fprintf(out, "%s\n", c->aliases && c->aliases[0] ? ")" : "");
	}
	for (size_t i = 0; i < kcmd_registry_count(); i++) {
		const struct kcmd_controller *c = kcmd_registry_at(i);
		if (!c->n_flags)
			continue;
		fprintf(out, "\n%s flags:\n", c->name);
		for (size_t f = 0; f < c->n_flags; f++) {
			char nm[96];
			bool seen = false; /* declared by an earlier controller too: listed there */
			for (size_t e = 0; e < i && !seen; e++) {
				const struct kcmd_controller *o = kcmd_registry_at(e);
				for (size_t g = 0; g < o->n_flags && !seen; g++)
					seen = !strcmp(o->flags[g].name, c->flags[f].name);
			}
			if (seen) {
				fprintf(out, "  --%-34s (see above)\n", c->flags[f].name);
				continue;
			}
			snprintf(nm, sizeof(nm), "%s %s", c->flags[f].name,
			         type_name(c->flags[f].type));
			fprintf(out, "  --%-34s %s (default %s)\n", nm,
			        c->flags[f].help ? c->flags[f].help : "",
			        c->flags[f].def && *c->flags[f].def ? c->flags[f].def : "\"\"");
		}
	}
}

/* Go's time.Duration.String() of us microseconds: "0s", "500ms", "1.5s", "1m0s", "1h0m0s". */
static void go_duration(char *buf, size_t n, uint64_t us)
{
	uint64_t s = us / 1000000, frac = us % 1000000;
	char fs[16] = "";

	if (us == 0) {
		snprintf(buf, n, "0s");
		return;
	}
	if (us < 1000000) {
		if (us % 1000 == 0)
			snprintf(buf, n, "%llums", (unsigned long long)(us / 1000));
		else
			snprintf(buf, n, "%llu\u00b5s", (unsigned long long)us);
		return;
	}
	if (frac) {
		snprintf(fs, sizeof(fs), ".%06llu", (unsigned long long)frac);
		for (size_t k = strlen(fs); k > 1 && fs[k - 1] == '0'; k--)
			fs[k - 1] = 0;
	}
	if (s >= 3600)
		snprintf(buf, n, "%lluh%llum%llu%ss", (unsigned long long)(s / 3600),
		         (unsigned long long)(s % 3600 / 60), (unsigned long long)(s % 60), fs);
	else if (s >= 60)
		snprintf(buf, n, "%llum%llu%ss", (unsigned long long)(s / 60),
		         (unsigned long long)(s % 60), fs);
	else
		snprintf(buf, n, "%llu%ss", (unsigned long long)s, fs);
}

struct flagz_line {
	char text[600];
};

static int flagz_cmp(const void *a, const void *b)
{
	return strcmp(((const struct flagz_line *)a)->text, ((const struct flagz_line *)b)->text);
}

int mgr_flags_flagz(const struct mgr_config *cfg, char **ret, size_t *ret_len)
{
	const char *base = (const char *)cfg;
	size_t cap = sizeof(flags) / sizeof(flags[0]), n = 0, len = 0;
	struct flagz_line *lines;
	char *out;

	for (size_t k = 0; k < cfg->n_ctl; k++)
		cap += kcmd_flag_values_count(cfg->ctl[k].values);
	if (!(lines = calloc(cap, sizeof(*lines))))
		return -ENOMEM;
	for (size_t k = 0; k < sizeof(flags) / sizeof(flags[0]); k++) {
		const struct flagdef *f = &flags[k];
		char v[512];
		const char *s;
		if (!strcmp(f->name, "help") || !strcmp(f->name, "version"))
			continue;
		switch (f->type) {
		case F_STR:
		case F_IP:
		case F_LOCK:
			s = *(const char *const *)(base + f->off);
			snprintf(v, sizeof(v), "%s", s ? s : "");
			break;
		case F_PATHS: /* a string slice in kcm */
			s = *(const char *const *)(base + f->off);
			snprintf(v, sizeof(v), "[%s]", s ? s : "");
			break;
		case F_BOOL:
			snprintf(v, sizeof(v), "%s",
			         *(const bool *)(base + f->off) ? "true" : "false");
			break;
		case F_INT:
		case F_PORT:
			snprintf(v, sizeof(v), "%d", *(const int *)(base + f->off));
			break;
		case F_DOUBLE:
			snprintf(v, sizeof(v), "%g", *(const double *)(base + f->off));
			break;
		case F_DURATION:
			go_duration(v, sizeof(v), *(const uint64_t *)(base + f->off));
			break;
		case F_CONTROLLERS:
			snprintf(v, sizeof(v), "[%s]",
			         cfg->controllers_arg ? cfg->controllers_arg : "*");
			break;
		case F_GATES:
			snprintf(v, sizeof(v), "%s",
			         cfg->feature_gates_arg ? cfg->feature_gates_arg : "");
			break;
		case F_VERSIONS:
			snprintf(v, sizeof(v), "[%s]", (const char *)(base + f->off));
			break;
		}
		snprintf(lines[n++].text, sizeof(lines[0].text), "%s:%s", f->name, v);
	}
	for (size_t k = 0; k < cfg->n_ctl; k++) {
		const struct kcmd_controller *c = cfg->ctl[k].desc;
		for (size_t i = 0; i < c->n_flags && i < kcmd_flag_values_count(cfg->ctl[k].values);
		     i++)
			snprintf(lines[n++].text, sizeof(lines[0].text), "%s:%s", c->flags[i].name,
			         kcmd_flag_values_text(cfg->ctl[k].values, i));
	}
	qsort(lines, n, sizeof(*lines), flagz_cmp);
	/* a flag several controllers declare (one value) is one line */
	size_t u = 0;
	for (size_t i = 0; i < n; i++)
		if (u == 0 || strcmp(lines[u - 1].text, lines[i].text))
			lines[u++] = lines[i];
	n = u;
	/* kcm's header: the component, then the warning that this is not an API */
	static const char head[] =
	        "\nkcmd flagz\nWarning: This endpoint is not meant to be machine "
	        "parseable, has no formatting compatibility guarantees and is "
	        "for debugging purposes only.\n";
	if (!(out = malloc(sizeof(head) + n * (sizeof(lines[0].text) + 1)))) {
		free(lines);
		return -ENOMEM;
	}
	memcpy(out, head, sizeof(head) - 1);
	len = sizeof(head) - 1;
	for (size_t i = 0; i < n; i++) {
		size_t l = strlen(lines[i].text);
		memcpy(out + len, lines[i].text, l);
		len += l;
		out[len++] = '\n';
	}
	out[len] = 0; /* room: the header's sizeof counts one byte more than it copies */
	free(lines);
	*ret = out;
	*ret_len = len;
	return 0;
}
