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

#include "manager/features.h"
#include "manager/httpd.h"

enum mgr_controller {
	MGR_CTRL_REPLICASET = 0,
	MGR_CTRL_GC,
	MGR_CTRL_COUNT,
};

struct mgr_config {
	const char *kubeconfig; /* --kubeconfig */
	const char *master;     /* --master */
	bool controllers[MGR_CTRL_COUNT];
	int concurrent_replicaset_syncs; /* 5 */
	int concurrent_gc_syncs;         /* 20 */
	bool enable_garbage_collector;   /* true */
	double kube_api_qps;             /* 20 */
	int kube_api_burst;              /* 30 */

	bool leader_elect;                  /* true */
	uint64_t leader_elect_lease_duration_us; /* 15 s */
	uint64_t leader_elect_renew_deadline_us; /* 10 s */
	uint64_t leader_elect_retry_period_us;   /* 2 s */
	const char *leader_elect_resource_lock;      /* "leases" (the only one) */
	const char *leader_elect_resource_name;      /* "kcmd" */
	const char *leader_elect_resource_namespace; /* "kube-system" */

	int secure_port;            /* 10257; 0 = no HTTPS */
	const char *bind_address;   /* "0.0.0.0" */
	const char *tls_cert_file;
	const char *tls_private_key_file;
	const char *cert_dir;
	bool use_service_account_credentials; /* false */
	struct kcmd_features features;         /* --feature-gates, applied onto the defaults */
	int v;                                 /* log verbosity */
	struct mgr_httpd_auth_opts auth;       /* --authentication-*, --authorization-* */

	/* kcmd's own */
	bool standby_warm_cache; /* --standby-warm-cache, true */
	const char *libexec_dir; /* --libexec-dir: where kcmd-informerd / kcmd-worker live */
	uint64_t rs_orphan_grace_us; /* --replicaset-orphaned-expectations-grace, 60 s */
	/* --simulate-kubelet*: the bench-only kubelet simulator (docs/bench.md) */
	bool simulate_kubelet;                    /* false */
	bool simulate_kubelet_force;              /* false: refuse when foreign Nodes exist */
	int simulate_kubelet_nodes;               /* 10 */
	uint64_t simulate_kubelet_ready_delay_us; /* 0 */
	double simulate_kubelet_qps;              /* 1000 */
	int simulate_kubelet_burst;               /* 2000 */
	bool help, version;
};

/* Fills cfg with the defaults (kcm's, and kcmd's own). */
void mgr_config_defaults(struct mgr_config *cfg);

/*
 * Parses argv (argv[0] is the program). Strings in cfg point into argv. Returns 0, or -EINVAL
 * with a one-line message in err naming the flag and what is wrong.
 */
int mgr_flags_parse(struct mgr_config *cfg, int argc, char **argv, char *err, size_t errlen);

/* Writes the --help text. */
void mgr_flags_usage(FILE *f);

/* Parses a Go duration ("1h2m3.5s", "300ms", "10us", "0"); negative values are refused.
 * Returns 0 and *ret_us, or -EINVAL. */
int mgr_parse_duration(const char *s, uint64_t *ret_us);

/* Canonical controller name ("replicaset-controller", "garbage-collector-controller"). */
const char *mgr_controller_name(enum mgr_controller c);
