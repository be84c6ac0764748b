/* SPDX-License-Identifier: Apache-2.0 */
/*
 * manager/flags.c: the kube-controller-manager-compatible command line (see flags.h).
 *
 * One table describes every flag kcmd implements; a second lists kube-controller-manager's
 * flags that kcmd does not, so copying a kcm command line gives an error naming what to drop.
 */
#include "manager/flags.h"
#include "ipc/queue-abi.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

static const char *const ctrl_names[MGR_CTRL_COUNT] = {
	[MGR_CTRL_REPLICASET] = "replicaset-controller",
	[MGR_CTRL_GC] = "garbage-collector-controller",
};
/* Whether this build has the controller's worker. `*` turns on only these; naming one that is
 * not built is an error that says so. */
static const bool ctrl_built[MGR_CTRL_COUNT] = {
	[MGR_CTRL_REPLICASET] = true,
	[MGR_CTRL_GC] = true,
};
static const char *const ctrl_aliases[MGR_CTRL_COUNT] = {
	[MGR_CTRL_REPLICASET] = "replicaset",
	[MGR_CTRL_GC] = "garbagecollector",
};

const char *mgr_controller_name(enum mgr_controller c)
{
	return c < MGR_CTRL_COUNT ? ctrl_names[c] : "unknown";
}

void mgr_config_defaults(struct mgr_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	for (int i = 0; i < MGR_CTRL_COUNT; i++)
		cfg->controllers[i] = ctrl_built[i];
	cfg->concurrent_replicaset_syncs = 5;
	cfg->concurrent_gc_syncs = 20;
	cfg->enable_garbage_collector = true;
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
	cfg->rs_orphan_grace_us = 60000000;
	cfg->simulate_kubelet_nodes = 10;
	cfg->simulate_kubelet_qps = 1000;
	cfg->simulate_kubelet_burst = 2000;
	kcmd_features_defaults(&cfg->features);
}

int mgr_parse_duration(const char *s, uint64_t *ret_us)
{
	static const struct {
		const char *unit;
		double us;
	} units[] = { { "ns", 0.001 }, { "us", 1 },   { "\xc2\xb5s", 1 }, { "ms", 1000 },
		      { "s", 1e6 },    { "m", 60e6 }, { "h", 3600e6 } };
	double total = 0;
	const char *p = s;

	if (!s || !*s)
		return -EINVAL;
	if (*p == '+')
		p++;
	if (*p == '-')
		return -EINVAL;
	if (strcmp(p, "0") == 0) {
		*ret_us = 0;
		return 0;
	}
	while (*p) {
		char *end;
		double v;
		size_t best = 0;
		int bi = -1;

		if (!isdigit((unsigned char)*p) && *p != '.')
			return -EINVAL;
		errno = 0;
		v = strtod(p, &end);
		if (end == p || errno)
			return -EINVAL;
		p = end;
		for (int i = 0; i < (int)(sizeof(units) / sizeof(units[0])); i++) {
			size_t n = strlen(units[i].unit);
			if (strncmp(p, units[i].unit, n) == 0 && n > best) {
				best = n;
				bi = i;
			}
		}
		if (bi < 0)
			return -EINVAL; /* Go requires a unit on every number but a lone 0 */
		total += v * units[bi].us;
		p += best;
	}
	if (!isfinite(total) || total > (double)UINT64_MAX / 2)
		return -EINVAL;
	*ret_us = (uint64_t)llround(total);
	return 0;
}

enum ftype { F_STR, F_BOOL, F_INT, F_PORT, F_DOUBLE, F_DURATION, F_CONTROLLERS, F_LOCK, F_GATES };

struct flagdef {
	const char *name;
	enum ftype type;
	size_t off;
	const char *help;
};

#define OFF(f) offsetof(struct mgr_config, f)
static const struct flagdef flags[] = {
	{ "kubeconfig", F_STR, OFF(kubeconfig), "Path to a kubeconfig file with authorization and master location." },
	{ "master", F_STR, OFF(master), "The address of the Kubernetes API server (overrides the kubeconfig's server)." },
	{ "controllers", F_CONTROLLERS, 0, "Controllers to run: '*' for all on by default, 'foo' enables foo, '-foo' disables foo. This build runs replicaset-controller and garbage-collector-controller." },
	{ "concurrent-replicaset-syncs", F_INT, OFF(concurrent_replicaset_syncs), "ReplicaSets synced at once (default 5)." },
	{ "concurrent-gc-syncs", F_INT, OFF(concurrent_gc_syncs), "Garbage collector workers syncing at once (default 20)." },
	{ "enable-garbage-collector", F_BOOL, OFF(enable_garbage_collector), "Enable the generic garbage collector; must match the kube-apiserver's flag (default true)." },
	{ "kube-api-qps", F_DOUBLE, OFF(kube_api_qps), "QPS to use while talking with the apiserver (default 20)." },
	{ "kube-api-burst", F_INT, OFF(kube_api_burst), "Burst to use while talking with the apiserver (default 30)." },
	{ "leader-elect", F_BOOL, OFF(leader_elect), "Elect a leader through a Lease before reconciling (default true)." },
	{ "leader-elect-lease-duration", F_DURATION, OFF(leader_elect_lease_duration_us), "How long a non-leader waits after observing a renewal before taking over (default 15s)." },
	{ "leader-elect-renew-deadline", F_DURATION, OFF(leader_elect_renew_deadline_us), "How long the leader keeps trying to renew before it stops leading (default 10s)." },
	{ "leader-elect-retry-period", F_DURATION, OFF(leader_elect_retry_period_us), "Time between election attempts (default 2s)." },
	{ "leader-elect-resource-lock", F_LOCK, OFF(leader_elect_resource_lock), "Lock object type; only 'leases' (default)." },
	{ "leader-elect-resource-name", F_STR, OFF(leader_elect_resource_name), "Name of the Lease (default kcmd, so kcmd can run beside kube-controller-manager)." },
	{ "leader-elect-resource-namespace", F_STR, OFF(leader_elect_resource_namespace), "Namespace of the Lease (default kube-system)." },
	{ "secure-port", F_PORT, OFF(secure_port), "HTTPS port for /healthz, /readyz, /livez and /metrics; 0 disables (default 10257)." },
	{ "bind-address", F_STR, OFF(bind_address), "Address to serve HTTPS on (default 0.0.0.0)." },
	{ "tls-cert-file", F_STR, OFF(tls_cert_file), "Serving certificate; a self-signed one is made when absent." },
	{ "tls-private-key-file", F_STR, OFF(tls_private_key_file), "Key of --tls-cert-file." },
	{ "cert-dir", F_STR, OFF(cert_dir), "Where the self-signed serving certificate is kept." },
	{ "use-service-account-credentials", F_BOOL, OFF(use_service_account_credentials), "Each controller's processes use their own service account kube-system/<controller> (replicaset-controller, generic-garbage-collector) with a token from the TokenRequest API; kcmd's own identity then needs get/create on serviceaccounts and create on serviceaccounts/token in kube-system (default false)." },
	{ "feature-gates", F_GATES, 0, "Feature gates as kube-controller-manager takes them (A=true,B=false). kcmd knows DeploymentReplicaSetTerminatingReplicas, PodDeletionCost, StaleControllerConsistencyReplicaSet, AtomicFIFO, WatchListClient (all beta, default true in v1.37) and AllAlpha/AllBeta; any other gate is an error." },
	{ "v", F_INT, OFF(v), "Log verbosity (klog levels)." },
	{ "standby-warm-cache", F_BOOL, OFF(standby_warm_cache), "kcmd: keep the cache warm while not leading, so a new leader starts without a relist (default true)." },
	{ "libexec-dir", F_STR, OFF(libexec_dir), "kcmd: directory holding kcmd-informerd and kcmd-worker (default: beside kcmd)." },
	{ "replicaset-orphaned-expectations-grace", F_DURATION, OFF(rs_orphan_grace_us), "kcmd: how long a ReplicaSet waits on the expectations of a worker process that died mid-sync before syncing again (default 60s: the apiserver's request timeout, after which no request of the dead process can still land)." },
	{ "simulate-kubelet", F_BOOL, OFF(simulate_kubelet), "kcmd bench: run the kubelet simulator: fake Nodes kcmd-sim-node-<i>, pods bound to them become Running and Ready, graceful deletions finish (default false; refused when the cluster has Nodes it did not create)." },
	{ "simulate-kubelet-nodes", F_INT, OFF(simulate_kubelet_nodes), "kcmd bench: fake Nodes the simulator creates and keeps Ready (default 10)." },
	{ "simulate-kubelet-ready-delay", F_DURATION, OFF(simulate_kubelet_ready_delay_us), "kcmd bench: time from a pod's binding to Running and Ready (default 0)." },
	{ "simulate-kubelet-qps", F_DOUBLE, OFF(simulate_kubelet_qps), "kcmd bench: the simulator's own client QPS (default 1000)." },
	{ "simulate-kubelet-burst", F_INT, OFF(simulate_kubelet_burst), "kcmd bench: the simulator's own client burst (default 2000)." },
	{ "simulate-kubelet-force", F_BOOL, OFF(simulate_kubelet_force), "kcmd bench: run the simulator even if the cluster has Nodes it did not create (real nodes) (default false)." },
	{ "help", F_BOOL, OFF(help), "Show this help." },
	{ "version", F_BOOL, OFF(version), "Print the version and exit." },
};

/* kube-controller-manager flags kcmd does not implement (a representative, not exhaustive, set;
 * anything else unknown is reported as unknown). */
static const char *const kcm_unsupported[] = {
	"allocate-node-cidrs", "attach-detach-reconcile-sync-period", "authentication-kubeconfig",
	"authentication-skip-lookup", "authentication-token-webhook-cache-ttl",
	"authentication-tolerate-lookup-failure", "authorization-always-allow-paths",
	"authorization-kubeconfig", "authorization-webhook-cache-authorized-ttl",
	"authorization-webhook-cache-unauthorized-ttl", "cidr-allocator-type", "client-ca-file",
	"cloud-config", "cloud-provider", "cluster-cidr", "cluster-name", "cluster-signing-cert-file",
	"cluster-signing-duration", "cluster-signing-key-file", "concurrent-deployment-syncs",
	"concurrent-endpoint-syncs", "concurrent-namespace-syncs", "concurrent-rc-syncs",
	"concurrent-resource-quota-syncs", "concurrent-service-syncs", "concurrent-statefulset-syncs",
	"concurrent-job-syncs", "concurrent-cron-job-syncs", "concurrent-daemonset-syncs",
	"configure-cloud-routes", "contention-profiling", "controller-start-interval",
	"controller-shutdown-timeout", "disable-attach-detach-reconcile-sync",
	"flex-volume-plugin-dir", "horizontal-pod-autoscaler-sync-period", "http2-max-streams-per-connection",
	"kube-api-content-type", "leader-migration-config", "enable-leader-migration",
	"min-resync-period", "namespace-sync-period", "node-cidr-mask-size", "node-monitor-grace-period",
	"node-monitor-period", "node-startup-grace-period", "permit-address-sharing",
	"permit-port-sharing", "profiling", "pv-recycler-pod-template-filepath-hostpath",
	"pvclaimbinder-sync-period", "requestheader-allowed-names", "requestheader-client-ca-file",
	"requestheader-extra-headers-prefix", "requestheader-group-headers",
	"requestheader-username-headers", "root-ca-file", "route-reconciliation-period",
	"service-account-private-key-file", "service-cluster-ip-range", "terminated-pod-gc-threshold",
	"tls-cipher-suites", "tls-min-version", "tls-sni-cert-key", "use-legacy-rbac-roles",
	"large-cluster-size-threshold", "unhealthy-zone-threshold", "secondary-node-eviction-rate",
	"node-eviction-rate", "log-flush-frequency", "logging-format", "vmodule",
};

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
	/* Go's strconv.ParseBool */
	static const char *const t[] = { "1", "t", "T", "TRUE", "true", "True" };
	static const char *const f[] = { "0", "f", "F", "FALSE", "false", "False" };

	for (size_t i = 0; i < 6; i++) {
		if (strcmp(v, t[i]) == 0) {
			*ret = true;
			return 0;
		}
		if (strcmp(v, f[i]) == 0) {
			*ret = false;
			return 0;
		}
	}
	return -EINVAL;
}

static int parse_controllers(struct mgr_config *cfg, const char *v, char *err, size_t errlen)
{
	bool star = false, on[MGR_CTRL_COUNT] = { false }, off[MGR_CTRL_COUNT] = { false };
	const char *p = v;

	while (*p) {
		const char *comma = strchr(p, ',');
		size_t n = comma ? (size_t)(comma - p) : strlen(p);
		char name[128];
		bool neg = false;
		int found = -1;

		if (n == 0 || n >= sizeof(name))
			return fail(err, errlen, "--controllers: empty or overlong entry in %s", v);
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
		for (int i = 0; i < MGR_CTRL_COUNT; i++)
			if (strcmp(nm, ctrl_names[i]) == 0 || strcmp(nm, ctrl_aliases[i]) == 0)
				found = i;
		if (found < 0) {
			if (neg) /* disabling a controller kcmd does not have is a no-op */
				continue;
			return fail(err, errlen,
				    "--controllers: %s is not implemented by kcmd (it runs replicaset-controller "
				    "and garbage-collector-controller); run it in kube-controller-manager",
				    nm);
		}
		if (neg)
			off[found] = true;
		else
			on[found] = true;
	}
	for (int i = 0; i < MGR_CTRL_COUNT; i++) {
		if (on[i] && !off[i] && !ctrl_built[i])
			return fail(err, errlen,
				    "--controllers: %s is not available in this kcmd build yet; run it in "
				    "kube-controller-manager",
				    ctrl_names[i]);
		cfg->controllers[i] = !off[i] && (on[i] || (star && ctrl_built[i]));
	}
	return 0;
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
	case F_LOCK:
		if (strcmp(v, "leases") != 0)
			return fail(err, errlen,
				    "--%s=%s: only 'leases' is supported (the endpoints and configmaps locks "
				    "were removed upstream)",
				    f->name, v);
		*(const char **)(base + f->off) = v;
		return 0;
	case F_BOOL:
		if (parse_bool(v, (bool *)(base + f->off)) < 0)
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
			return fail(err, errlen, "--%s=%s: not a valid non-negative number", f->name, v);
		*(double *)(base + f->off) = d;
		return 0;
	case F_DURATION:
		if (mgr_parse_duration(v, &us) < 0)
			return fail(err, errlen, "--%s=%s: not a duration (e.g. 15s, 1m30s, 500ms)",
				    f->name, v);
		*(uint64_t *)(base + f->off) = us;
		return 0;
	case F_CONTROLLERS:
		return parse_controllers(cfg, v, err, errlen);
	case F_GATES:
		return kcmd_features_parse(v, &cfg->features, err, errlen);
	}
	return fail(err, errlen, "--%s: internal error", f->name);
}

int mgr_flags_parse(struct mgr_config *cfg, int argc, char **argv, char *err, size_t errlen)
{
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *name, *eq, *val = NULL;
		const struct flagdef *f = NULL;
		char nbuf[128];
		size_t n;

		if (a[0] != '-' || a[1] == 0)
			return fail(err, errlen, "unexpected argument %s (kcmd takes only flags)", a);
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
		if (!f) {
			for (size_t k = 0; k < sizeof(kcm_unsupported) / sizeof(kcm_unsupported[0]); k++)
				if (strcmp(kcm_unsupported[k], nbuf) == 0)
					return fail(err, errlen,
						    "--%s is a kube-controller-manager flag that kcmd does not "
						    "support; remove it (see kcmd --help)",
						    nbuf);
			return fail(err, errlen, "unknown flag --%s (see kcmd --help)", nbuf);
		}
		if (!val) {
			if (f->type == F_BOOL) {
				val = "true";
			} else {
				if (i + 1 >= argc)
					return fail(err, errlen, "flag --%s needs a value", nbuf);
				val = argv[++i];
			}
		}
		int r = set_flag(cfg, f, val, err, errlen);
		if (r < 0)
			return r;
	}
	if (!cfg->enable_garbage_collector)
		cfg->controllers[MGR_CTRL_GC] = false;
	if (cfg->concurrent_replicaset_syncs < 1)
		return fail(err, errlen, "--concurrent-replicaset-syncs must be at least 1");
	/* one worker process per sync, one queue slot per worker (ipc/queue-abi.h): kcm's bound
	 * is a goroutine's, kcmd's the queue's slot limit */
	if (cfg->concurrent_replicaset_syncs > (int)IPC_QUEUE_WORKERS_LIMIT)
		return fail(err, errlen, "--concurrent-replicaset-syncs must be at most %u (one process per sync)",
			    IPC_QUEUE_WORKERS_LIMIT);
	if (cfg->simulate_kubelet_nodes < 1 || cfg->simulate_kubelet_nodes > 100000)
		return fail(err, errlen, "--simulate-kubelet-nodes must be between 1 and 100000");
	if (cfg->simulate_kubelet_burst < 1)
		return fail(err, errlen, "--simulate-kubelet-burst must be at least 1");
	if (cfg->concurrent_gc_syncs < 1)
		return fail(err, errlen, "--concurrent-gc-syncs must be at least 1");
	if (cfg->kube_api_burst < 1 && cfg->kube_api_qps > 0)
		return fail(err, errlen, "--kube-api-burst must be at least 1 when --kube-api-qps > 0");
	if ((cfg->tls_cert_file == NULL) != (cfg->tls_private_key_file == NULL))
		return fail(err, errlen, "--tls-cert-file and --tls-private-key-file go together");
	return 0;
}

void mgr_flags_usage(FILE *out)
{
	fprintf(out, "Usage: kcmd [flags]\n\n"
		     "kcmd runs Kubernetes controllers with kube-controller-manager's behaviour and flags.\n"
		     "This build runs replicaset-controller and garbage-collector-controller.\n\nFlags:\n");
	for (size_t k = 0; k < sizeof(flags) / sizeof(flags[0]); k++)
		fprintf(out, "  --%-34s %s\n", flags[k].name, flags[k].help);
}
