/* SPDX-License-Identifier: Apache-2.0 */
/*
 * controllers/registry.c: the controllers of this build, then the plug-ins loaded at start
 * (see registry.h).
 *
 * Design note (the loader).
 *   A plug-in is a shared object named by path in --controller-plugins; kcmd dlopen()s it
 *   (RTLD_NOW: an unresolved symbol is an error at start, not a crash at the first call;
 *   RTLD_LOCAL: two plug-ins may have statics of the same name), looks up one function,
 *   KCMD_PLUGIN_SYMBOL, and calls it for the descriptor. The descriptor's `abi` is compared
 *   before any other field is read; then the whole table (in-tree and plug-ins) goes through
 *   kcmd_registry_validate, so a plug-in that reuses a name, an alias, a queue or a flag is
 *   refused with both names. Every process of kcmd (the manager, each dispatcher and worker)
 *   loads the same list in the same order, so registry indexes agree across processes.
 *   A loaded plug-in is never unloaded while the process runs (its descriptor, handlers and
 *   strings are used until exit); only a failed load is dlclose()d.
 *   Rejected: a plug-in directory scanned at start (what runs would depend on what files
 *   happen to be there and on readdir order; kcm's flags name things explicitly); constructors
 *   that register themselves (code would run before the ABI check).
 */
#include "controllers/registry.h"

#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/ctlmetrics.h"
#include "lib/goflag.h"

extern const struct kcmd_controller kcmd_replicaset_controller; /* workers/replicaset/plugin.c */
extern const struct kcmd_controller kcmd_gc_controller;     /* workers/garbagecollector/plugin.c */
extern const struct kcmd_controller kcmd_kubelet_simulator; /* workers/kubeletsim/plugin.c */
extern const struct kcmd_controller kcmd_podgc_controller;  /* workers/podgc/plugin.c */
extern const struct kcmd_controller kcmd_job_controller;    /* workers/job/plugin.c */
/* workers/replicaset/plugin-rc.c */
extern const struct kcmd_controller kcmd_replicationcontroller_controller;
/* workers/ttlafterfinished/plugin.c */
extern const struct kcmd_controller kcmd_ttl_after_finished_controller;
extern const struct kcmd_controller kcmd_cronjob_controller;        /* workers/cronjob/plugin.c */
extern const struct kcmd_controller kcmd_serviceaccount_controller; /* workers/serviceaccount/ */
extern const struct kcmd_controller kcmd_rootcacert_controller;     /* workers/rootcacert/ */
extern const struct kcmd_controller kcmd_satoken_controller;        /* workers/satoken/ */
extern const struct kcmd_controller kcmd_pcrcleaner_controller;     /* workers/pcrcleaner/ */
/* workers/selinuxwarning/plugin.c */
extern const struct kcmd_controller kcmd_selinuxwarning_controller;
extern const struct kcmd_controller kcmd_ctbpublisher_controller; /* workers/ctbpublisher/ */
extern const struct kcmd_controller kcmd_namespace_controller;    /* workers/namespace/ */
/* workers/clusterroleaggregation/ */
extern const struct kcmd_controller kcmd_clusterroleaggregation_controller;
extern const struct kcmd_controller kcmd_ttl_controller;        /* workers/ttl/ */
extern const struct kcmd_controller kcmd_deployment_controller; /* workers/deployment/plugin.c */
extern const struct kcmd_controller kcmd_disruption_controller; /* workers/disruption/plugin.c */
/* workers/endpointslice/, workers/endpoints/ */
extern const struct kcmd_controller kcmd_endpointslice_controller;
extern const struct kcmd_controller kcmd_endpoints_controller;
/* workers/endpointslicemirroring/plugin.c */
extern const struct kcmd_controller kcmd_endpointslicemirroring_controller;
extern const struct kcmd_controller kcmd_servicecidr_controller; /* workers/servicecidr/ */
/* workers/statefulset/plugin.c */
extern const struct kcmd_controller kcmd_statefulset_controller;
/* workers/bootstrap/plugin.c */
extern const struct kcmd_controller kcmd_token_cleaner_controller;
extern const struct kcmd_controller kcmd_bootstrap_signer_controller;
/* workers/legacysatoken/plugin.c */
extern const struct kcmd_controller kcmd_legacy_sa_token_cleaner_controller;
/* workers/tainteviction/plugin.c */
extern const struct kcmd_controller kcmd_tainteviction_controller;
extern const struct kcmd_controller kcmd_resourcequota_controller; /* workers/resourcequota/ */
/* workers/volumeprotection/plugin-pvc.c, plugin-pv.c, plugin-vac.c */
extern const struct kcmd_controller kcmd_pvc_protection_controller;
extern const struct kcmd_controller kcmd_pv_protection_controller;
extern const struct kcmd_controller kcmd_vac_protection_controller;
extern const struct kcmd_controller kcmd_ephemeral_volume_controller; /* plugin-ephemeral.c */
extern const struct kcmd_controller kcmd_volume_expand_controller;    /* workers/volumeexpand/ */
extern const struct kcmd_controller kcmd_pvbinder_controller;         /* workers/pvbinder/ */
extern const struct kcmd_controller kcmd_attachdetach_controller;     /* workers/attachdetach/ */
extern const struct kcmd_controller kcmd_daemonset_controller; /* workers/daemonset/plugin.c */
/* workers/resourceclaim/plugin.c */
extern const struct kcmd_controller kcmd_resourceclaim_controller;
/* workers/devicetainteviction/plugin.c */
extern const struct kcmd_controller kcmd_devicetainteviction_controller;
/* workers/nodelifecycle/plugin.c */
extern const struct kcmd_controller kcmd_nodelifecycle_controller;
extern const struct kcmd_controller kcmd_nodeipam_controller; /* workers/nodeipam/ */
/* workers/certificates/plugin-cleaner.c */
extern const struct kcmd_controller kcmd_csr_cleaner_controller;
extern const struct kcmd_controller kcmd_csr_signing_controller;   /* plugin-signing.c */
extern const struct kcmd_controller kcmd_csr_approving_controller; /* plugin-approving.c */
extern const struct kcmd_controller kcmd_hpa_controller;           /* workers/hpa/plugin.c */
/* workers/podgroupprotection/plugin.c */
extern const struct kcmd_controller kcmd_podgroupprotection_controller;
extern const struct kcmd_controller kcmd_svgc_controller; /* workers/svgc/plugin.c */
extern const struct kcmd_controller kcmd_svm_controller;  /* workers/svm/plugin.c */
/* workers/vapstatus/plugin.c */
extern const struct kcmd_controller kcmd_vapstatus_controller;
/* workers/resourcepoolstatus/plugin.c */
extern const struct kcmd_controller kcmd_resourcepoolstatus_controller;

/* KCMD_NO_TEST_CONTROLLERS (the Debian package's build, packaging/debian/rules): the kubelet
 * simulator, a benchmark tool that marks pods Running on fake Nodes, is left out of the
 * binaries that are shipped (its code is not linked: nothing else references it). */
/* One controller a line (not packed by clang-format), so adding one is a one-line change. */
/* clang-format off */
static const struct kcmd_controller *const builtin[] = {
        &kcmd_replicaset_controller,
        &kcmd_gc_controller,
        &kcmd_podgc_controller,
        &kcmd_job_controller,
        &kcmd_replicationcontroller_controller,
        &kcmd_ttl_after_finished_controller,
        &kcmd_cronjob_controller,
        &kcmd_serviceaccount_controller,
        &kcmd_rootcacert_controller,
        &kcmd_namespace_controller,
        &kcmd_clusterroleaggregation_controller,
        &kcmd_ttl_controller,
        &kcmd_deployment_controller,
        &kcmd_disruption_controller,
        &kcmd_endpointslice_controller,
        &kcmd_endpoints_controller,
        &kcmd_endpointslicemirroring_controller,
        &kcmd_servicecidr_controller,
        &kcmd_statefulset_controller,
        &kcmd_token_cleaner_controller,
        &kcmd_bootstrap_signer_controller,
        &kcmd_legacy_sa_token_cleaner_controller,
        &kcmd_tainteviction_controller,
        &kcmd_resourcequota_controller,
        &kcmd_pvc_protection_controller,
        &kcmd_pv_protection_controller,
        &kcmd_vac_protection_controller,
        &kcmd_ephemeral_volume_controller,
        &kcmd_volume_expand_controller,
        &kcmd_pvbinder_controller,
        &kcmd_attachdetach_controller,
        &kcmd_daemonset_controller,
        &kcmd_satoken_controller,
        &kcmd_pcrcleaner_controller,
        &kcmd_selinuxwarning_controller,
        &kcmd_ctbpublisher_controller,
        &kcmd_resourceclaim_controller,
        &kcmd_devicetainteviction_controller,
        &kcmd_nodelifecycle_controller,
        &kcmd_nodeipam_controller,
        &kcmd_csr_cleaner_controller,
        &kcmd_csr_signing_controller,
        &kcmd_csr_approving_controller,
        &kcmd_hpa_controller,
        &kcmd_podgroupprotection_controller,
        &kcmd_svgc_controller,
        &kcmd_svm_controller,
        &kcmd_vapstatus_controller,
        &kcmd_resourcepoolstatus_controller,
#ifndef KCMD_NO_TEST_CONTROLLERS
        &kcmd_kubelet_simulator,
#endif
};
/* clang-format on */
#define N_BUILTIN (sizeof(builtin) / sizeof(builtin[0]))

/* The plug-ins loaded so far, in load order (T: KCMD_MAX_PLUGINS; one more is refused with
 * -E2BIG at start). */
static struct {
	const struct kcmd_controller *c;
	void *dl;
	char *path;
} plugins[KCMD_MAX_PLUGINS];
static size_t n_plugins;
static char *plugins_arg; /* the loaded paths, comma-separated (what children get) */

size_t kcmd_registry_count(void)
{
	return N_BUILTIN + n_plugins;
}

const struct kcmd_controller *kcmd_registry_at(size_t i)
{
	if (i < N_BUILTIN)
		return builtin[i];
	return i < kcmd_registry_count() ? plugins[i - N_BUILTIN].c : NULL;
}

bool kcmd_registry_is_plugin(const struct kcmd_controller *c)
{
	for (size_t i = 0; c && i < n_plugins; i++)
		if (plugins[i].c == c)
			return true;
	return false;
}

static bool named(const struct kcmd_controller *c, const char *name)
{
	if (!strcmp(c->name, name))
		return true;
	for (size_t k = 0; c->aliases && c->aliases[k]; k++)
		if (!strcmp(c->aliases[k], name))
			return true;
	return false;
}

const struct kcmd_controller *kcmd_registry_find(const char *name)
{
	for (size_t i = 0; name && i < kcmd_registry_count(); i++)
		if (named(kcmd_registry_at(i), name))
			return kcmd_registry_at(i);
	return NULL;
}

long kcmd_registry_index(const struct kcmd_controller *c)
{
	for (size_t i = 0; c && i < kcmd_registry_count(); i++)
		if (kcmd_registry_at(i) == c)
			return (long)i;
	return -1;
}

int kcmd_registry_validate(char *err, size_t errlen)
{
	for (size_t i = 0; i < kcmd_registry_count(); i++) {
		const struct kcmd_controller *c = kcmd_registry_at(i);
		struct kcmd_flag_values *v = NULL;

		if (c->abi != KCMD_CONTROLLER_ABI) {
			snprintf(err, errlen, "controller %s: ABI %u, this kcmd has %u",
			         c->name ? c->name : "?", c->abi, KCMD_CONTROLLER_ABI);
			return -EINVAL;
		}
		if (!c->name || (!c->worker && !c->worker_main) || (c->hidden && !c->enable_flag)) {
			snprintf(err, errlen, "controller %s: incomplete descriptor",
			         c->name ? c->name : "?");
			return -EINVAL;
		}
		if (kcmd_flag_values_new(c->flags, c->n_flags, &v) < 0) {
			snprintf(err, errlen, "controller %s: a flag's default does not parse",
			         c->name);
			return -EINVAL;
		}
		kcmd_flag_values_free(v);
		if (ctlm_check(c) < 0) {
			snprintf(
			        err, errlen,
			        "controller %s: its metrics declaration is invalid (names, labels, "
			        "buckets: kcmd/controller.h)",
			        c->name);
			return -EINVAL;
		}
		for (size_t j = 0; j < i; j++) {
			const struct kcmd_controller *o = kcmd_registry_at(j);
			/* one family per name on /metrics */
			for (size_t a = 0; a < c->n_metrics; a++)
				for (size_t b = 0; b < o->n_metrics; b++)
					if (!strcmp(c->metrics[a].name, o->metrics[b].name)) {
						snprintf(
						        err, errlen,
						        "controllers %s and %s share the metric %s",
						        o->name, c->name, c->metrics[a].name);
						return -EINVAL;
					}
			if (named(o, c->name)) {
				snprintf(err, errlen, "controllers %s and %s share a name", o->name,
				         c->name);
				return -EINVAL;
			}
			for (size_t k = 0; c->aliases && c->aliases[k]; k++)
				if (named(o, c->aliases[k])) {
					snprintf(err, errlen,
					         "controllers %s and %s share the name %s", o->name,
					         c->name, c->aliases[k]);
					return -EINVAL;
				}
			for (size_t a = 0; a < c->n_queues; a++)
				for (size_t b = 0; b < o->n_queues; b++)
					if (!strcmp(c->queues[a].name, o->queues[b].name)) {
						snprintf(err, errlen,
						         "controllers %s and %s share the queue %s",
						         o->name, c->name, c->queues[a].name);
						return -EINVAL;
					}
			/* kcm has flags several controllers read (--root-ca-file): each may declare
			 * it, with the same type and default (one value, set for every declarer) */
			for (size_t a = 0; a < c->n_flags; a++)
				for (size_t b = 0; b < o->n_flags; b++)
					if (!strcmp(c->flags[a].name, o->flags[b].name) &&
					    (c->flags[a].type != o->flags[b].type ||
					     strcmp(c->flags[a].def ? c->flags[a].def : "",
					            o->flags[b].def ? o->flags[b].def : "") ||
					     c->flags[a].enables_controller ||
					     o->flags[b].enables_controller)) {
						snprintf(err, errlen,
						         "controllers %s and %s both declare --%s, "
						         "with "
						         "different types or defaults",
						         o->name, c->name, c->flags[a].name);
						return -EINVAL;
					}
		}
	}
	return 0;
}

/* ---- plug-ins -------------------------------------------------------------------------------- */
static int load_one(const char *path, char *err, size_t errlen)
{
	char real[PATH_MAX];
	const struct kcmd_controller *c;
	kcmd_plugin_fn fn;
	void *dl;
	int r;

	if (n_plugins >= KCMD_MAX_PLUGINS) {
		snprintf(err, errlen, "plug-in %s: more than %d plug-ins", path, KCMD_MAX_PLUGINS);
		return -E2BIG;
	}
	/* children get the absolute path: they may start in another directory */
	if (!realpath(path, real)) {
		r = -errno;
		snprintf(err, errlen, "plug-in %s: %s", path, strerror(errno));
		return r;
	}
	for (size_t i = 0; i < n_plugins; i++)
		if (strcmp(plugins[i].path, real) == 0) {
			snprintf(err, errlen, "plug-in %s: listed twice", path);
			return -EEXIST;
		}
	dlerror();
	if (!(dl = dlopen(real, RTLD_NOW | RTLD_LOCAL))) {
		const char *e = dlerror();
		snprintf(err, errlen, "plug-in %s: cannot load: %s", path, e ? e : "dlopen failed");
		return -ENOEXEC;
	}
	*(void **)&fn = dlsym(dl, KCMD_PLUGIN_SYMBOL);
	if (!fn) {
		snprintf(err, errlen,
		         "plug-in %s: no %s() (a plug-in defines it with KCMD_PLUGIN(descriptor), "
		         "kcmd/controller.h)",
		         path, KCMD_PLUGIN_SYMBOL);
		dlclose(dl);
		return -ENOEXEC;
	}
	if (!(c = fn())) {
		snprintf(err, errlen, "plug-in %s: %s() returned no descriptor", path,
		         KCMD_PLUGIN_SYMBOL);
		dlclose(dl);
		return -EINVAL;
	}
	if (c->abi != KCMD_CONTROLLER_ABI) {
		/* read nothing else: the layout may differ */
		snprintf(err, errlen,
		         "plug-in %s: built for controller ABI %u, this kcmd has ABI %u (rebuild "
		         "it against this kcmd's headers, libkcmd.so.%u)",
		         path, c->abi, KCMD_CONTROLLER_ABI, KCMD_CONTROLLER_ABI);
		dlclose(dl);
		return -EPROTO;
	}
	if (!(plugins[n_plugins].path = strdup(real))) {
		dlclose(dl);
		snprintf(err, errlen, "plug-in %s: out of memory", path);
		return -ENOMEM;
	}
	plugins[n_plugins].c = c;
	plugins[n_plugins].dl = dl;
	n_plugins++;
	char why[400];
	if ((r = kcmd_registry_validate(why, sizeof(why))) < 0) {
		n_plugins--;
		free(plugins[n_plugins].path);
		dlclose(dl);
		snprintf(err, errlen, "plug-in %s: %s", path, why);
		return r;
	}
	return 0;
}

int kcmd_registry_load_plugins(const char *list, char *err, size_t errlen)
{
	const char *p = list;
	int r = 0;

	while (p && *p && r == 0) {
		const char *comma = strchr(p, ',');
		size_t n = comma ? (size_t)(comma - p) : strlen(p);
		char path[PATH_MAX];
		if (n == 0 || n >= sizeof(path)) {
			snprintf(err, errlen, "--controller-plugins: empty or overlong entry in %s",
			         list);
			return -EINVAL;
		}
		memcpy(path, p, n);
		path[n] = 0;
		p += n + (comma ? 1 : 0);
		r = load_one(path, err, errlen);
	}
	if (r < 0)
		return r;
	/* the list as loaded, for the children */
	size_t len = 1;
	for (size_t i = 0; i < n_plugins; i++)
		len += strlen(plugins[i].path) + 1;
	char *a = calloc(1, len);
	if (!a) {
		snprintf(err, errlen, "--controller-plugins: out of memory");
		return -ENOMEM;
	}
	for (size_t i = 0; i < n_plugins; i++) {
		if (i)
			strcat(a, ",");
		strcat(a, plugins[i].path);
	}
	free(plugins_arg);
	plugins_arg = a;
	return 0;
}

/* The length of the --controller-plugins argument at argv[i] (1 or 2 entries), or 0. *v gets
 * the value. kcm's spellings: --flag=value, -flag=value, or --flag value. */
static int plugins_flag(int argc, char **argv, int i, const char **v)
{
	static const char flag[] = "controller-plugins";
	const size_t fl = sizeof(flag) - 1;
	const char *a = argv[i];

	if (a[0] != '-')
		return 0;
	a += 1 + (a[1] == '-');
	if (strncmp(a, flag, fl) != 0)
		return 0;
	if (a[fl] == '=') {
		*v = a + fl + 1;
		return 1;
	}
	if (a[fl] == 0 && i + 1 < argc) {
		*v = argv[i + 1];
		return 2;
	}
	return 0;
}

int kcmd_registry_load_args(int argc, char **argv, char *err, size_t errlen)
{
	for (int i = 1; i < argc; i++) {
		const char *v = NULL;
		int n = plugins_flag(argc, argv, i, &v);
		if (!n)
			continue;
		int r = kcmd_registry_load_plugins(v, err, errlen);
		if (r < 0)
			return r;
		i += n - 1;
	}
	return 0;
}

int kcmd_registry_drop_args(int argc, char **argv)
{
	int out = 1;

	for (int i = 1; i < argc; i++) {
		const char *v;
		int n = plugins_flag(argc, argv, i, &v);
		if (n) {
			i += n - 1;
			continue;
		}
		argv[out++] = argv[i];
	}
	if (argc > 0)
		argv[out] = NULL;
	return argc > 0 ? out : argc;
}

const char *kcmd_registry_plugins_arg(void)
{
	return n_plugins ? plugins_arg : NULL;
}

void kcmd_registry_unload_plugins(void)
{
	while (n_plugins > 0) {
		n_plugins--;
		dlclose(plugins[n_plugins].dl);
		free(plugins[n_plugins].path);
	}
	free(plugins_arg);
	plugins_arg = NULL;
}

/* The audit behind both lists is docs/sharding.md's table (one line a controller, with why). */
static bool listed(const char *const *list, const char *name)
{
	for (size_t i = 0; list[i]; i++)
		if (!strcmp(name, list[i]))
			return true;
	return false;
}

enum kube_shard_keys kcmd_registry_shard_keys(const struct kcmd_controller *c)
{
	/* keys "namespace/name" ("<tag>:namespace/name"); every write into that namespace */
	static const char *const by_key_namespace[] = {
	        "replicaset-controller",
	        "replicationcontroller-controller",
	        "deployment-controller",
	        "job-controller",
	        "cronjob-controller",
	        "statefulset-controller",
	        "daemonset-controller",
	        "disruption-controller",
	        "endpoints-controller",
	        "endpointslice-controller",
	        "endpointslice-mirroring-controller",
	        "horizontal-pod-autoscaler-controller",
	        "ttl-after-finished-controller",
	        "resourcequota-controller",
	        "serviceaccount-token-controller",
	        "persistentvolumeclaim-protection-controller",
	        "ephemeral-volume-controller",
	        "persistentvolume-expander-controller",
	        "resourceclaim-controller",
	        "podgroup-protection-controller",
	        "token-cleaner-controller",
	        "bootstrap-signer-controller",
	        NULL};
	/* keys are namespace names; every write into that namespace (or the Namespace itself) */
	static const char *const by_namespace_name[] = {
	        "namespace-controller", "serviceaccount-controller",
	        "root-ca-certificate-publisher-controller", NULL};

	if (!c || !c->name || kcmd_registry_is_plugin(c))
		return KUBE_SHARD_KEYS_NONE;
	if (!c->cluster_scoped_keys && listed(by_key_namespace, c->name))
		return KUBE_SHARD_KEYS_NS_NAME;
	if (listed(by_namespace_name, c->name))
		return KUBE_SHARD_KEYS_NAMESPACE;
	return KUBE_SHARD_KEYS_NONE;
}

bool kcmd_registry_shard_by_namespace(const struct kcmd_controller *c)
{
	return kcmd_registry_shard_keys(c) != KUBE_SHARD_KEYS_NONE;
}

bool kcmd_registry_shard_self(const struct kcmd_controller *c)
{
	return c && c->name && !strcmp(c->name, "garbage-collector-controller");
}
