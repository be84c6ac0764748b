/* SPDX-License-Identifier: Apache-2.0 */
#pragma once
/*
 * manager/flags.h: kcmd's command line, compatible with kube-controller-manager's.
 *
 * Design note.
 *   Operators switch from kube-controller-manager by copying its flags, so the parser accepts
 *   the same spellings pflag does: `--name=value`, `--name value`, bare `--bool` and
 *   `--bool=false`, Go durations ("15s", "1m30s", "500ms"). A kcm flag that kcmd does not
 *   implement is an error that names it (never silently ignored); an unknown flag is an error.
 *   --controllers follows kcm: `*` is every controller on by default, `name` enables, `-name`
 *   disables, aliases map to canonical names; naming an upstream controller that kcmd does not
 *   implement is an error when it would enable it, and accepted when it disables it.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "kcmd/controller.h"
#include "lib/features.h"
#include "manager/httpd.h"

/* Per registered controller (index = its index in controllers/registry.h). */
struct mgr_controller_config {
	const struct kcmd_controller *desc;
	bool enabled; /* after --controllers, its enabling flags and gates */
	/* selected (by --controllers and its enabling flags) but a required feature gate is off:
	 * kcm's "Controller is disabled by a feature gate" (the manager logs it once) */
	bool gated_off;
	struct kcmd_flag_values *values; /* its declared flags (lib/goflag.h) */
};

struct mgr_config {
	const char *kubeconfig; /* --kubeconfig */
	/* --controller-plugins (loaded before the flags are parsed: kcmd_registry_load_args) */
	const char *controller_plugins;
	const char *master;                /* --master */
	struct mgr_controller_config *ctl; /* n_ctl entries, one per registered controller */
	size_t n_ctl;
	const char *kube_api_content_type; /* application/vnd.kubernetes.protobuf (kube/proto.h) */
	double kube_api_qps;               /* 20 */
	int kube_api_burst;                /* 30 */

	bool leader_elect;                           /* true */
	uint64_t leader_elect_lease_duration_us;     /* 15 s */
	uint64_t leader_elect_renew_deadline_us;     /* 10 s */
	uint64_t leader_elect_retry_period_us;       /* 2 s */
	const char *leader_elect_resource_lock;      /* "leases" (the only one) */
	const char *leader_elect_resource_name;      /* "kcmd" */
	const char *leader_elect_resource_namespace; /* "kube-system" */

	int secure_port;          /* 10257; 0 = no HTTPS */
	const char *bind_address; /* "0.0.0.0" */
	const char *tls_cert_file;
	const char *tls_private_key_file;
	const char *cert_dir;
	const char *tls_min_version;          /* --tls-min-version: NULL/"" or VersionTLS1[0-3] */
	bool use_service_account_credentials; /* false */
	struct kcmd_features features;        /* --feature-gates, applied onto the defaults */
	const char *controllers_arg;          /* --controllers as given (NULL: default), /flagz */
	const char *feature_gates_arg;        /* --feature-gates as given, /flagz */
	/* --emulated-version, --min-compatibility-version: every value's items, comma-joined (kcm's
	 * string slices), checked after the last flag as kcm does */
	char version_args[2][512];
	int v;                           /* log verbosity */
	const char *logging_format;      /* --logging-format: NULL/"text" or "json" */
	const char *vmodule;             /* --vmodule: pattern=N,... */
	struct mgr_httpd_auth_opts auth; /* --authentication-*, --authorization-* */

	/* kcmd's own */
	bool standby_warm_cache;         /* --standby-warm-cache, true */
	int shard_ranges;                /* --shard-ranges, 0: one leader (docs/sharding.md) */
	uint64_t worker_idle_timeout_us; /* --worker-idle-timeout, 60 s; 0: all workers always */
	const char *libexec_dir; /* --libexec-dir: where kcmd-informerd / kcmd-worker live */
	bool help, version;
	/* kube-controller-manager flags kcmd accepts without effect, as "--name=value: why", in
	 * the order given (the manager logs each once at start) */
	char **kcm_noop;
	size_t n_kcm_noop;
};

/* Fills cfg with the defaults (kcm's, kcmd's own, every registered controller's). cfg must be
 * zeroed or hold a config made by this function (which is freed first). 0 or -ENOMEM. */
int mgr_config_defaults(struct mgr_config *cfg);
/* Frees what mgr_config_defaults allocated. */
void mgr_config_free(struct mgr_config *cfg);

/*
 * Parses argv (argv[0] is the program). Strings in cfg point into argv. Returns 0, or -EINVAL
 * with a one-line message in err naming the flag and what is wrong.
 */
int mgr_flags_parse(struct mgr_config *cfg, int argc, char **argv, char *err, size_t errlen);

/* Writes the --help text. */
void mgr_flags_usage(FILE *f);
/* /flagz (kcm's text form): a header, then "name:value" for every flag, manager and
 * controllers', with the value in effect, sorted by name. *ret is malloc'd and NUL-terminated
 * (*ret_len without the NUL). 0 or -ENOMEM. */
int mgr_flags_flagz(const struct mgr_config *cfg, char **ret, size_t *ret_len);

/* The configuration of the controller with this name or alias, or NULL. */
const struct mgr_controller_config *mgr_controller(const struct mgr_config *cfg, const char *name);
