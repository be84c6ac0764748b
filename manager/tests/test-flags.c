/* SPDX-License-Identifier: Apache-2.0 */
/* Tests of the kube-controller-manager-compatible command line. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "lib/goflag.h"
#include "controllers/kcm-compat.h"
#include "lib/kcm-catalogue.h"
#include "manager/flags.h"

#define RS                  "replicaset-controller"
#define GC                  "garbage-collector-controller"
#define ON(c, name)         (mgr_controller(&(c), name)->enabled)
#define FLAG_INT(c, ctl, f) kcmd_flag_int(mgr_controller(&(c), ctl)->values, f)

static int parse(struct mgr_config *cfg, char *err, size_t n, char **argv)
{
	int argc = 0;

	while (argv[argc])
		argc++;
	if (mgr_config_defaults(cfg) < 0)
		return -ENOMEM;
	return mgr_flags_parse(cfg, argc, argv, err, n);
}

#define PARSE(cfg, err, ...) parse(cfg, err, sizeof(err), (char *[]){"kcmd", __VA_ARGS__, NULL})

static void test_defaults_match_kcm(void **state)
{
	(void)state;
	struct mgr_config c = {0};
	char err[256] = "";

	assert_int_equal(parse(&c, err, sizeof(err), (char *[]){"kcmd", NULL}), 0);
	assert_true(ON(c, RS));
	assert_true(ON(c, GC)); /* on by default, as in kube-controller-manager */
	assert_int_equal(FLAG_INT(c, RS, "concurrent-replicaset-syncs"), 5);
	assert_int_equal(FLAG_INT(c, GC, "concurrent-gc-syncs"), 20);
	assert_true(c.kube_api_qps == 20.0);
	assert_int_equal(c.kube_api_burst, 30);
	assert_true(c.leader_elect);
	assert_int_equal(c.leader_elect_lease_duration_us, 15000000);
	assert_int_equal(c.leader_elect_renew_deadline_us, 10000000);
	assert_int_equal(c.leader_elect_retry_period_us, 2000000);
	assert_string_equal(c.leader_elect_resource_name, "kcmd");
	assert_string_equal(c.leader_elect_resource_namespace, "kube-system");
	assert_int_equal(c.secure_port, 10257);
	assert_false(c.use_service_account_credentials);
	assert_true(c.standby_warm_cache);
	mgr_config_free(&c);
}

static void test_spellings(void **state)
{
	(void)state;
	struct mgr_config c = {0};
	char err[256] = "";

	assert_int_equal(PARSE(&c, err, "--kubeconfig", "/k", "--master=https://x:6443",
	                       "--leader-elect=false", "--kube-api-qps=50.5", "--kube_api_burst",
	                       "100", "--leader-elect-lease-duration=1m30s",
	                       "--leader-elect-renew-deadline", "20s",
	                       "--leader-elect-retry-period=500ms", "-v=4",
	                       "--standby-warm-cache=F", "--secure-port=0"),
	                 0);
	assert_string_equal(c.kubeconfig, "/k");
	assert_string_equal(c.master, "https://x:6443");
	assert_false(c.leader_elect);
	assert_true(c.kube_api_qps == 50.5);
	assert_int_equal(c.kube_api_burst, 100);
	assert_int_equal(c.leader_elect_lease_duration_us, 90000000);
	assert_int_equal(c.leader_elect_renew_deadline_us, 20000000);
	assert_int_equal(c.leader_elect_retry_period_us, 500000);
	assert_int_equal(c.v, 4);
	assert_false(c.standby_warm_cache);
	assert_int_equal(c.secure_port, 0);
	assert_int_equal(PARSE(&c, err, "--use-service-account-credentials=false"), 0);
	assert_false(c.use_service_account_credentials);
	assert_int_equal(PARSE(&c, err, "--use-service-account-credentials"), 0);
	assert_true(c.use_service_account_credentials);
	mgr_config_free(&c);
}

/* kube-controller-manager's flags kcmd does not implement: accepted when the value is of the
 * flag's type, kept for the start-up report with the reason; refused where ignoring would
 * mislead. */
static void test_kcm_flags_without_effect(void **state)
{
	(void)state;
	struct mgr_config c = {0};
	char err[512] = "";

	assert_int_equal(kcm_compat_selfcheck(err, sizeof(err)), 0);
	assert_int_equal(PARSE(&c, err, "--cloud-provider=external", "--profiling",
	                       "--pv-recycler-minimum-timeout-nfs", "300",
	                       "--min-resync-period=12h"),
	                 0);
	assert_int_equal(c.n_kcm_noop, 4);
	assert_non_null(strstr(c.kcm_noop[0], "--cloud-provider=external: kcmd runs no cloud"));
	assert_string_equal(c.kcm_noop[1],
	                    "--profiling=true: kcmd serves no /debug/pprof (Go's profiler)");
	assert_non_null(strstr(c.kcm_noop[2], "--pv-recycler-minimum-timeout-nfs=300"));
	assert_non_null(strstr(c.kcm_noop[3], "--min-resync-period=12h"));
	assert_non_null(strstr(c.kcm_noop[3], "informers do not resync"));
	/* the value is checked against the flag's pflag type */
	assert_int_equal(PARSE(&c, err, "--pv-recycler-minimum-timeout-nfs=ten"), -EINVAL);
	assert_non_null(
	        strstr(err, "invalid argument \"ten\" for \"--pv-recycler-minimum-timeout-nfs\""));
	assert_int_equal(PARSE(&c, err, "--route-reconciliation-period=10x"), -EINVAL);
	assert_int_equal(PARSE(&c, err, "--enable-dynamic-provisioning=maybe"), -EINVAL);
	assert_int_equal(PARSE(&c, err, "--pv-recycler-minimum-timeout-nfs=99999999999"), -EINVAL);
	/* refused away from kcm's default, accepted at it */
	assert_int_equal(PARSE(&c, err, "--tls-cipher-suites=TLS_AES_128_GCM_SHA256"), -EINVAL);
	assert_non_null(strstr(err, "kcmd refuses"));
	assert_int_equal(PARSE(&c, err, "--tls-cipher-suites="), 0);
	/* --emulated-version is kcmd's own flag now (test_emulated_version) */
	assert_int_equal(PARSE(&c, err, "--emulated-version=kube=1.36"), -EINVAL);
	assert_non_null(strstr(err, "--emulated-version=kube=1.36: at emulation version 1.36"));
	/* still unknown: neither kcmd's nor kcm's */
	assert_int_equal(PARSE(&c, err, "--no-such-flag=1"), -EINVAL);
	assert_non_null(strstr(err, "unknown flag --no-such-flag"));
	/* a kcm flag kcmd implements is not reported */
	assert_int_equal(PARSE(&c, err, "--tls-min-version=VersionTLS13", "--kube-api-qps=5"), 0);
	assert_int_equal(c.n_kcm_noop, 0);
	assert_int_equal(PARSE(&c, err, "--tls-min-version=TLS13"), -EINVAL);
	mgr_config_free(&c);
}

/* kube-controller-manager v1.37.2's answers to these command lines (run against the binary):
 * NULL accepted, else its error; kcmd's refusals of what kcm accepts are checked apart. */
static void test_emulated_version(void **state)
{
	(void)state;
	static const struct {
		char *a, *b;
		const char *want;
	} t[] = {
	        {"--emulated-version=1.37", NULL, NULL},
	        {"--emulated-version=kube=1.37", NULL, NULL},
	        {"--emulated-version=v1.37.0", NULL, NULL},
	        {"--emulated-version=1.37-alpha", NULL, NULL},
	        {"--emulated-version=", NULL, NULL},
	        {"--emulated-version=kube = 1.37 ", NULL, NULL},
	        {"--min-compatibility-version=1.36", NULL, NULL},
	        {"--min-compatibility-version=kube=1.35", NULL, NULL},
	        {"--min-compatibility-version=1.34", "--emulated-version=1.37", NULL},
	        {"--emulated-version=1.38", NULL,
	         "emulation version 1.38 is not between [1.34, 1.37.0]"},
	        {"--emulated-version=2.0", NULL,
	         "emulation version 2.0 is not between [1.34, 1.37.0]"},
	        {"--emulated-version=foo", NULL, "could not parse \"foo\" as version"},
	        {"--emulated-version=kube=", NULL, "could not parse \"\" as version"},
	        {"--emulated-version=,", NULL, "could not parse \"\" as version"},
	        {"--emulated-version=1", NULL, "illegal version string \"1\""},
	        {"--emulated-version=1.x", NULL, "illegal version string \"1.x\""},
	        {"--emulated-version=01.36", NULL,
	         "illegal zero-prefixed version component \"01\" in \"01.36\""},
	        {"--emulated-version=1.36.1", NULL, "patch version not allowed, got: kube=1.36.1"},
	        {"--emulated-version=other=1.36", NULL, "component not registered: other"},
	        {"--emulated-version==1.36", NULL, "component not registered: "},
	        {"--emulated-version=KUBE=1.36", NULL, "component not registered: KUBE"},
	        {"--emulated-version=kube=1.36,kube=1.35", NULL,
	         "duplicate version flag, kube=1.36 and kube=1.35"},
	        {"--emulated-version=1.36", "--emulated-version=1.35",
	         "duplicate version flag, kube=1.36 and kube=1.35"},
	        {"--emulated-version=1.33", NULL,
	         "[emulation version 1.33 is not between [1.34, 1.37.0], minCompatibilityVersion "
	         "version 1.34 is not between [1.34, 1.33]]"},
	        {"--min-compatibility-version=1.38", NULL,
	         "minCompatibilityVersion version 1.38 is not between [1.34, 1.37]"},
	        {"--min-compatibility-version=1.33", NULL,
	         "minCompatibilityVersion version 1.33 is not between [1.34, 1.37]"},
	        {"--min-compatibility-version=foo", NULL, "could not parse \"foo\" as version"},
	        {"--emulated-version=1.36", "--min-compatibility-version=1.37",
	         "minCompatibilityVersion version 1.37 is not between [1.34, 1.36]"},
	        {"--emulated-version=1.34", "--min-compatibility-version=1.38",
	         "minCompatibilityVersion version 1.38 is not between [1.34, 1.34]"},
	        /* the gates' own errors come first, alone */
	        {"--emulated-version=1.38", "--feature-gates=CPUManagerPolicyOptions=false",
	         "cannot set feature gate CPUManagerPolicyOptions to false, feature is locked to "
	         "true"},
	        {"--emulated-version=1.38", "--feature-gates=Foo=true",
	         "unrecognized feature gate: Foo"},
	        {"--emulated-version=1.38", "--feature-gates=AtomicFIFO=false",
	         "--feature-gates: [NodeControllerLeaseCircuitBreaker is enabled, but depends on"},
	        /* kcm prints its version before it checks the range; the syntax it checks */
	        {"--emulated-version=1.38", "--version", NULL},
	        {"--emulated-version=1.33", "--version", NULL},
	        {"--emulated-version=1.36", "--version", NULL},
	        {"--min-compatibility-version=1.37", "--version", NULL},
	        {"--emulated-version=foo", "--version", "could not parse \"foo\" as version"},
	};
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		struct mgr_config c = {0};
		char err[1024] = "";
		int r = t[i].b ? PARSE(&c, err, t[i].a, t[i].b) : PARSE(&c, err, t[i].a);
		if (!t[i].want) {
			if (r != 0)
				fail_msg("%s %s: %s", t[i].a, t[i].b ? t[i].b : "", err);
		} else if (r != -EINVAL || !strstr(err, t[i].want)) {
			fail_msg("%s %s: got %d %s, want %s", t[i].a, t[i].b ? t[i].b : "", r, err,
			         t[i].want);
		}
		mgr_config_free(&c);
	}

	/* valid for kcm: each emulation version below 1.37 gives a gate kcm's HPA reads and kcmd's
	 * does not another value than kcmd runs (HPAGeneration is PreAlpha before 1.37), so it is
	 * refused after kcm's checks, naming the flag and the gates */
	struct mgr_config c = {0};
	char err[2048] = "";
	assert_int_equal(PARSE(&c, err, "--emulated-version=1.36"), -EINVAL);
	assert_non_null(strstr(err, "--emulated-version=1.36: at emulation version 1.36 (min "
	                            "compatibility 1.35) kube-controller-manager would run "));
	assert_non_null(
	        strstr(err, "HPAGeneration=false (the horizontal pod autoscaler; kcmd runs true)"));
	assert_non_null(strstr(err, "DRADeviceTaintRules=false (the device taint eviction"));
	assert_null(strstr(err, "HPAConfigurableTolerance")); /* beta, on at 1.36 */
	assert_int_equal(
	        PARSE(&c, err, "--emulated-version=1.34", "--min-compatibility-version=1.34"),
	        -EINVAL);
	assert_non_null(strstr(err, "HPAConfigurableTolerance=false")); /* alpha, off at 1.34 */
	/* ... whereas a gate kcmd does not implement at all (runs off) matches kcm there */
	assert_null(strstr(err, "NodeControllerLeaseCircuitBreaker"));
	/* min compatibility 1.37 turns DRAFractionalCapacityRange on: kcm's controllers do not
	 * read it, so it is accepted */
	assert_int_equal(PARSE(&c, err, "--min-compatibility-version=1.37"), 0);
	assert_true(kcmd_features_gate_on(&c.features, "DRAFractionalCapacityRange"));
	assert_int_equal(PARSE(&c, err, "--min-compatibility-version=1.36"), 0);
	assert_false(kcmd_features_gate_on(&c.features, "DRAFractionalCapacityRange"));
	/* a gate named at an emulation version: the flag refused is --feature-gates */
	assert_int_equal(
	        PARSE(&c, err, "--emulated-version=1.35", "--feature-gates=DRAAdminAccess=false"),
	        -EINVAL);
	assert_non_null(strstr(err, "--feature-gates: kcmd's code does not read these gates: "));
	assert_non_null(strstr(err, "DRAAdminAccess=false (the resource claim controller"));
	/* a bad version names its flag */
	assert_int_equal(PARSE(&c, err, "--min-compatibility-version=1.36.2"), -EINVAL);
	assert_string_equal(
	        err, "--min-compatibility-version: patch version not allowed, got: kube=1.36.2");
	/* the items are kept for /flagz as kcm's string slices */
	assert_int_equal(
	        PARSE(&c, err, "--emulated-version=1.37", "--min-compatibility-version=1.35"), 0);
	assert_string_equal(c.version_args[0], "1.37");
	assert_string_equal(c.version_args[1], "1.35");
	assert_int_equal(c.features.min_compat_minor, 35);
	mgr_config_free(&c);
}

/* component-base's featureSpecAtEmulationAndMinCompatVersion over v1.37.2's specs (facts read
 * from pkg/features/kube_features.go and client-go/features/known_features.go) */
static void test_gate_versions(void **state)
{
	(void)state;
	const struct kcm_gate_spec *s;
	struct kcm_gate_version v;

	/* AtomicFIFO: {1.36 beta on} only */
	assert_non_null(s = kcm_gate_spec_find("AtomicFIFO"));
	v = kcm_gate_at(s, 35, 34);
	assert_int_equal(v.stage, KCM_SPEC_PREALPHA);
	assert_false(v.def);
	v = kcm_gate_at(s, 36, 35);
	assert_int_equal(v.stage, KCM_SPEC_BETA);
	assert_true(v.def);
	/* MaxUnavailableStatefulSet: 1.24 alpha off, 1.35 beta off, 1.37 beta on */
	assert_non_null(s = kcm_gate_spec_find("MaxUnavailableStatefulSet"));
	assert_int_equal(kcm_gate_at(s, 34, 34).stage, KCM_SPEC_ALPHA);
	v = kcm_gate_at(s, 36, 35);
	assert_int_equal(v.stage, KCM_SPEC_BETA);
	assert_false(v.def);
	assert_true(kcm_gate_at(s, 37, 36).def);
	/* DRAFractionalCapacityRange: 1.37 beta off, and on from min compatibility 1.37 */
	assert_non_null(s = kcm_gate_spec_find("DRAFractionalCapacityRange"));
	assert_false(kcm_gate_at(s, 37, 36).def);
	assert_true(kcm_gate_at(s, 37, 37).def);
	assert_int_equal(kcm_gate_at(s, 36, 36).stage, KCM_SPEC_PREALPHA);
	/* GitRepoVolumeDriver: deprecated off since 1.33, locked from 1.36 */
	assert_non_null(s = kcm_gate_spec_find("GitRepoVolumeDriver"));
	assert_false(kcm_gate_at(s, 35, 34).locked);
	assert_true(kcm_gate_at(s, 36, 35).locked);
	assert_int_equal(kcm_gate_at(s, 36, 35).stage, KCM_SPEC_DEPRECATED);
	/* ClusterTrustBundle: beta off until GA on in 1.37 */
	assert_non_null(s = kcm_gate_spec_find("ClusterTrustBundle"));
	assert_false(kcm_gate_at(s, 36, 35).def);
	assert_int_equal(kcm_gate_at(s, 37, 36).stage, KCM_SPEC_GA);
	/* every gate has a spec in force at 1.37 (none is PreAlpha there but those introduced
	 * later: none in v1.37), and its entries ascend */
	for (size_t i = 0; i < kcm_gate_specs_n; i++) {
		assert_true(kcm_gate_specs[i].n_versions > 0);
		for (unsigned k = 1; k < kcm_gate_specs[i].n_versions; k++)
			assert_true(kcm_gate_specs[i].versions[k - 1].minor <=
			            kcm_gate_specs[i].versions[k].minor);
	}

	/* through the flags, with kcm's words (kube-controller-manager v1.37.2 --version answers
	 * these the same; docs/manager.md, "Emulation versions") */
	struct mgr_config c = {0};
	char err[2048] = "";
	assert_int_equal(PARSE(&c, err, "--emulated-version=1.35",
	                       "--feature-gates=AtomicFIFO=true", "--version"),
	                 -EINVAL);
	assert_string_equal(err, "--feature-gates: cannot set feature gate AtomicFIFO to true, "
	                         "feature is PreAlpha at emulated version 1.35, min compatibility "
	                         "version 1.34");
	assert_int_equal(PARSE(&c, err, "--emulated-version=1.34",
	                       "--feature-gates=GenericWorkload=true", "--version"),
	                 -EINVAL);
	assert_string_equal(err, "--feature-gates: cannot set feature gate GenericWorkload to "
	                         "true, feature is PreAlpha at emulated version 1.34, min "
	                         "compatibility version 1.34");
	/* GitRepoVolumeDriver=true: locked at 1.37, not at 1.35 */
	assert_int_equal(PARSE(&c, err, "--feature-gates=GitRepoVolumeDriver=true", "--version"),
	                 -EINVAL);
	assert_int_equal(PARSE(&c, err, "--emulated-version=1.35",
	                       "--feature-gates=GitRepoVolumeDriver=true", "--version"),
	                 0);
	/* kcmd's own gates follow the emulated defaults (what its children are given) */
	assert_int_equal(PARSE(&c, err, "--emulated-version=1.36", "--version"), 0);
	assert_false(c.features.on[KCMD_FEAT_MAX_UNAVAILABLE_STS]);
	assert_true(c.features.on[KCMD_FEAT_ATOMIC_FIFO]);
	assert_int_equal(PARSE(&c, err, "--version"), 0);
	assert_true(c.features.on[KCMD_FEAT_MAX_UNAVAILABLE_STS]);
	mgr_config_free(&c);
}

/* a gate kcm's code reads and kcmd's does not: refused at another value than kcmd runs */
static void test_unhonoured_gates(void **state)
{
	(void)state;
	struct mgr_config c = {0};
	char err[2048] = "";

	assert_int_equal(PARSE(&c, err, "--feature-gates=HPAScaleToZero=false"), -EINVAL);
	assert_string_equal(err, "--feature-gates: kcmd's code does not read these gates: "
	                         "HPAScaleToZero=false (the horizontal pod autoscaler; kcmd runs "
	                         "true); kube-controller-manager would run otherwise, so it is "
	                         "refused");
	assert_int_equal(PARSE(&c, err, "--feature-gates=HPAScaleToZero=true"), 0);
	/* what kcmd runs though v1.37's default differs (not implemented): accepted */
	assert_int_equal(PARSE(&c, err, "--feature-gates=StaleControllerConsistencyHPA=false"), 0);
	/* only while the part of kcm that reads it runs */
	assert_int_equal(PARSE(&c, err, "--feature-gates=DRADeviceTaintRules=false"), -EINVAL);
	assert_non_null(strstr(err, "DRADeviceTaintRules=false (the device taint eviction"));
	assert_int_equal(
	        PARSE(&c, err, "--feature-gates=DRADeviceTaints=false,DRADeviceTaintRules=false"),
	        0);
	/* AllBeta moves many: each named */
	assert_int_equal(PARSE(&c, err, "--feature-gates=AllBeta=true"), -EINVAL);
	assert_non_null(strstr(err, "CoordinatedLeaderElection=true (leader election"));
	/* every listed gate is one kcm registers (a typo would never refuse) */
	size_t k = 0;
	for (const char *g; (g = kcmd_features_fixed_gate(k)); k++)
		assert_non_null(kcm_gate_spec_find(g));
	assert_true(k > 30);
	mgr_config_free(&c);
}

static void test_feature_gates(void **state)
{
	(void)state;
	struct mgr_config c = {0};
	char err[512] = "", buf[512];

	assert_int_equal(PARSE(&c, err, "--kubeconfig=/k"), 0);
	/* every gate kcmd knows is beta and on in v1.37, but GenericWorkload (beta, off) */
	for (int i = 0; i < KCMD_FEAT_COUNT; i++)
		assert_int_equal(c.features.on[i], i != KCMD_FEAT_GENERIC_WORKLOAD);
	assert_int_equal(PARSE(&c, err,
	                       "--feature-gates= PodDeletionCost=false , "
	                       "DeploymentReplicaSetTerminatingReplicas=true"),
	                 0);
	assert_false(c.features.on[KCMD_FEAT_POD_DELETION_COST]);
	assert_true(c.features.on[KCMD_FEAT_DEPLOYMENT_RS_TERMINATING_REPLICAS]);
	/* later flags apply onto earlier ones, as pflag's map flag does */
	assert_int_equal(PARSE(&c, err, "--feature-gates=WatchListClient=false", "--feature-gates",
	                       "PodDeletionCost=0"),
	                 0);
	assert_false(c.features.on[KCMD_FEAT_WATCH_LIST_CLIENT]);
	assert_false(c.features.on[KCMD_FEAT_POD_DELETION_COST]);
	/* AtomicFIFO off while the gates needing it are on: kcm refuses it (was accepted before
	 * kcmd checked kcm's dependencies; TestKcmd_FeatureGateChecksMatchKCM shows kcm refusing)
	 */
	assert_int_equal(PARSE(&c, err, "--feature-gates=WatchListClient=false", "--feature-gates",
	                       "AtomicFIFO=0"),
	                 -EINVAL);
	assert_non_null(strstr(err, "StaleControllerConsistencyJob is enabled, but depends on "
	                            "features that are disabled: [AtomicFIFO]"));
	/* AllBeta sets every beta gate not named (kcm's check: --version stops before kcmd's
	 * refusal of gates it does not read, test_unhonoured_gates) */
	assert_int_equal(
	        PARSE(&c, err, "--feature-gates=AllBeta=false,PodDeletionCost=true", "--version"),
	        0);
	assert_true(c.features.on[KCMD_FEAT_POD_DELETION_COST]);
	assert_false(c.features.on[KCMD_FEAT_STALE_CONSISTENCY_RS]);
	assert_false(c.features.on[KCMD_FEAT_WATCH_LIST_CLIENT]);
	/* AllAlpha=true turns on alpha gates that need GenericWorkload (beta, off): kcm refuses
	 * it alone (was accepted before kcmd checked dependencies), accepts it with the beta */
	assert_int_equal(PARSE(&c, err, "--feature-gates=AllAlpha=true"), -EINVAL);
	assert_non_null(strstr(err, "PodGroupPreemptionPolicy is enabled, but depends on features "
	                            "that are disabled: [GenericWorkload]"));
	assert_int_equal(
	        PARSE(&c, err, "--feature-gates=AllAlpha=true,GenericWorkload=true", "--version"),
	        0);
	assert_true(
	        c.features.on[KCMD_FEAT_WATCH_LIST_CLIENT]); /* no alpha gate: nothing changes */
	assert_int_equal(PARSE(&c, err, "--feature-gates="), 0);
	/* errors name the gate, as kube-controller-manager's do */
	assert_int_equal(PARSE(&c, err, "--feature-gates=NoSuchGate=true"), -EINVAL);
	assert_non_null(strstr(err, "unrecognized feature gate: NoSuchGate"));
	/* every kube-controller-manager v1.37 gate is accepted (also as kcm's help spells it,
	 * "kube:Name"); those kcmd does not act on are reported when set away from their default */
	assert_true(kcm_gates_n > 100 && kcm_gates_n <= KCMD_KCM_GATES_MAX);
	assert_int_equal(PARSE(&c, err,
	                       "--feature-gates=kube:APIServingWithRoutine=true,"
	                       "kube:APIResponseCompression=true,kube:PodDeletionCost=false"),
	                 0);
	assert_false(c.features.on[KCMD_FEAT_POD_DELETION_COST]);
	assert_true(kcmd_features_ignored(&c.features, NULL, buf, sizeof(buf)) > 0);
	assert_string_equal(buf, "APIServingWithRoutine=true"); /* the other is its default */
	/* "kube:" and no prefix in one command line: kcm refuses the mix (was accepted before;
	 * TestKcmd_FeatureGateChecksMatchKCM shows kcm refusing it) */
	assert_int_equal(PARSE(&c, err,
	                       "--feature-gates=kube:APIServingWithRoutine=true,"
	                       "APIResponseCompression=true,kube:PodDeletionCost=false"),
	                 -EINVAL);
	assert_non_null(strstr(err, "set kube feature gates with default empty prefix or kube: "
	                            "prefix consistently, do not mix use"));
	assert_int_equal(PARSE(&c, err, "--feature-gates=AllAlpha=false"), 0);
	assert_true(kcmd_features_ignored(&c.features, NULL, buf, sizeof(buf)) > 0);
	assert_string_equal(buf, "AllAlpha=false");
	assert_int_equal(PARSE(&c, err, "--feature-gates=PodDeletionCost=true"), 0);
	assert_int_equal(kcmd_features_ignored(&c.features, NULL, buf, sizeof(buf)), 0);
	/* kcm's GA gates (not in its --help): accepted; a locked one only at its default; one
	 * set away from its default is reported */
	assert_true(kcm_gate_specs_n > kcm_gates_n && kcm_gate_specs_n <= KCMD_KCM_GATES_MAX);
	assert_int_equal(PARSE(&c, err,
	                       "--feature-gates=MultiCIDRServiceAllocator=true,"
	                       "PodCertificateRequest=true"),
	                 0);
	assert_int_equal(kcmd_features_ignored(&c.features, NULL, buf, sizeof(buf)), 0);
	assert_int_equal(PARSE(&c, err, "--feature-gates=MultiCIDRServiceAllocator=false"),
	                 -EINVAL);
	assert_non_null(strstr(err, "cannot set feature gate MultiCIDRServiceAllocator to false, "
	                            "feature is locked to true"));
	assert_int_equal(PARSE(&c, err, "--feature-gates=PodCertificateRequest=false"), 0);
	assert_true(kcmd_features_ignored(&c.features, NULL, buf, sizeof(buf)) > 0);
	assert_string_equal(buf, "PodCertificateRequest=false");
	/* a gate a controller requires is acted on: not reported as without effect */
	{
		const char *const acted[] = {"PodCertificateRequest", NULL};
		assert_int_equal(kcmd_features_ignored(&c.features, acted, buf, sizeof(buf)), 0);
	}
	assert_int_equal(PARSE(&c, err, "--feature-gates=PodDeletionCost"), -EINVAL);
	assert_non_null(strstr(err, "missing bool value for PodDeletionCost"));
	assert_int_equal(PARSE(&c, err, "--feature-gates=PodDeletionCost=maybe"), -EINVAL);
	assert_non_null(strstr(err, "invalid value of PodDeletionCost=maybe, err: "
	                            "strconv.ParseBool: parsing \"maybe\": invalid syntax"));

	/* what the children get, and how they read it */
	assert_int_equal(
	        PARSE(&c, err, "--feature-gates=StaleControllerConsistencyReplicaSet=false"), 0);
	assert_true(kcmd_features_format(&c.features, buf, sizeof(buf)) > 0);
	assert_non_null(strstr(buf, "StaleControllerConsistencyReplicaSet=false"));
	assert_non_null(strstr(buf, "PodDeletionCost=true"));
	assert_int_equal(kcmd_features_format(&c.features, buf, 10), -ENOSPC);
	assert_true(kcmd_features_format(&c.features, buf, sizeof(buf)) > 0);
	setenv("KCMD_FEATURE_GATES", buf, 1);
	assert_false(kcmd_feature_enabled(KCMD_FEAT_STALE_CONSISTENCY_RS));
	assert_true(kcmd_feature_enabled(KCMD_FEAT_POD_DELETION_COST));
	assert_string_equal(kcmd_feature_stage(KCMD_FEAT_WATCH_LIST_CLIENT), "Beta");
	mgr_config_free(&c);
}

/* kcm's --feature-gates check (component-base featuregate + the component registry), rule by
 * rule, with kcm's words (the e2e TestKcmd_FeatureGateChecksMatchKCM runs both binaries). */
static void test_feature_gates_match_kcm(void **state)
{
	(void)state;
	struct mgr_config c = {0};
	char err[4096] = "";

	/* kcmd's own gates have v1.37's stage and default, as kcm registers them */
	for (int i = 0; i < KCMD_FEAT_COUNT; i++) {
		const struct kcm_gate_spec *s = kcm_gate_spec_find(kcmd_feature_name(i));
		assert_non_null(s);
		struct kcm_gate_version v = kcm_gate_at(s, 37, 36);
		assert_int_equal(v.def, kcmd_feature_default(i));
		assert_string_equal(kcmd_feature_stage(i), v.stage == KCM_SPEC_ALPHA  ? "Alpha"
		                                           : v.stage == KCM_SPEC_BETA ? "Beta"
		                                                                      : "GA");
	}
	/* the table is sorted (bsearch) and every dependency is a registered gate */
	for (size_t i = 1; i < kcm_gate_specs_n; i++)
		assert_true(strcmp(kcm_gate_specs[i - 1].name, kcm_gate_specs[i].name) < 0);
	for (size_t i = 0; i < kcm_gate_specs_n; i++)
		for (const char *d = kcm_gate_specs[i].deps; d && *d;) {
			char dep[128];
			size_t n = strcspn(d, " ");
			snprintf(dep, sizeof(dep), "%.*s", (int)n, d);
			assert_non_null(kcm_gate_spec_find(dep));
			d += n + (d[n] == ' ');
		}
	/* every gate listed by kcm's --help is in the full table with the same default */
	for (size_t i = 0; i < kcm_gates_n; i++) {
		const struct kcm_gate_spec *s = kcm_gate_spec_find(kcm_gates[i].name);
		assert_non_null(s);
		assert_int_equal(kcm_gate_at(s, 37, 36).def, kcm_gates[i].def);
	}

	/* unknown */
	assert_int_equal(PARSE(&c, err, "--feature-gates=NoSuchGate=true"), -EINVAL);
	assert_string_equal(err, "--feature-gates: unrecognized feature gate: NoSuchGate");
	assert_int_equal(PARSE(&c, err, "--feature-gates==true"), -EINVAL);
	assert_string_equal(err, "--feature-gates: unrecognized feature gate: ");
	/* an unknown gate in an earlier flag, a bad value in a later one: the value is reported
	 * (kcm parses all entries before it looks them up) */
	assert_int_equal(PARSE(&c, err, "--feature-gates=NoSuchGate=true",
	                       "--feature-gates=PodDeletionCost=yes"),
	                 -EINVAL);
	assert_string_equal(err, "--feature-gates: invalid value of PodDeletionCost=yes, err: "
	                         "strconv.ParseBool: parsing \"yes\": invalid syntax");
	/* components */
	assert_int_equal(PARSE(&c, err, "--feature-gates=wardle:A=true"), -EINVAL);
	assert_string_equal(err, "--feature-gates: component not registered: wardle");
	assert_int_equal(PARSE(&c, err, "--feature-gates=kube:PodDeletionCost=false",
	                       "--feature-gates=WatchListClient=false"),
	                 -EINVAL);
	assert_non_null(strstr(err, "do not mix use"));
	assert_int_equal(PARSE(&c, err, "--feature-gates=:PodDeletionCost=false"), 0);
	assert_false(c.features.on[KCMD_FEAT_POD_DELETION_COST]);
	/* locked: one error as is, several as Go's aggregate */
	assert_int_equal(PARSE(&c, err, "--feature-gates=SELinuxChangePolicy=false"), -EINVAL);
	assert_string_equal(err, "--feature-gates: cannot set feature gate SELinuxChangePolicy to "
	                         "false, feature is locked to true");
	assert_int_equal(PARSE(&c, err, "--feature-gates=SELinuxChangePolicy=true"), 0);
	assert_int_equal(PARSE(&c, err,
	                       "--feature-gates=SELinuxChangePolicy=false,"
	                       "MultiCIDRServiceAllocator=false"),
	                 -EINVAL);
	assert_string_equal(err, "--feature-gates: [cannot set feature gate "
	                         "MultiCIDRServiceAllocator to false, feature is locked to true, "
	                         "cannot set feature gate SELinuxChangePolicy to false, feature "
	                         "is locked to true]");
	/* the last value of a gate counts, as in kcm's map */
	assert_int_equal(PARSE(&c, err, "--feature-gates=SELinuxChangePolicy=false",
	                       "--feature-gates=SELinuxChangePolicy=true"),
	                 0);
	/* a deprecated locked gate */
	assert_int_equal(PARSE(&c, err, "--feature-gates=GitRepoVolumeDriver=true"), -EINVAL);
	assert_string_equal(err, "--feature-gates: cannot set feature gate GitRepoVolumeDriver to "
	                         "true, feature is locked to false");
	/* dependencies: checked on the union of all flags */
	assert_int_equal(PARSE(&c, err, "--feature-gates=ClusterTrustBundle=false"), -EINVAL);
	assert_string_equal(err, "--feature-gates: ClusterTrustBundleProjection is enabled, but "
	                         "depends on features that are disabled: [ClusterTrustBundle]");
	assert_int_equal(PARSE(&c, err, "--feature-gates=ClusterTrustBundle=false",
	                       "--feature-gates=ClusterTrustBundleProjection=false"),
	                 0);
	assert_int_equal(
	        PARSE(&c, err, "--feature-gates=StorageVersionAPI=true,APIServerIdentity=false"),
	        -EINVAL);
	assert_non_null(strstr(err, "StorageVersionAPI is enabled, but depends on features that "
	                            "are disabled: [APIServerIdentity]"));
	assert_int_equal(PARSE(&c, err, "--feature-gates=DRAPartitionableDevicesType=true"),
	                 -EINVAL);
	assert_string_equal(err, "--feature-gates: DRAPartitionableDevicesType is enabled, but "
	                         "depends on features that are disabled: [DRAResourcePoolStatus]");
	/* AllBeta=false turns off dependents and dependencies alike: accepted */
	assert_int_equal(PARSE(&c, err, "--feature-gates=AllBeta=false", "--version"), 0);
	assert_int_equal(
	        PARSE(&c, err, "--feature-gates=AllBeta=false,AtomicFIFO=true", "--version"), 0);
	assert_int_equal(
	        PARSE(&c, err, "--feature-gates=AllBeta=false,StaleControllerConsistencyJob=true"),
	        -EINVAL);
	assert_string_equal(err, "--feature-gates: StaleControllerConsistencyJob is enabled, but "
	                         "depends on features that are disabled: [AtomicFIFO]");
	mgr_config_free(&c);
}

static void record_warning(const char *gate, bool value, bool deprecated, void *arg)
{
	char *buf = arg;
	size_t l = strlen(buf);
	snprintf(buf + l, 512 - l, "%s%s=%d:%s", l ? " " : "", gate, value,
	         deprecated ? "deprecated" : "GA");
}

/* kcm warns of each GA or deprecated gate named; alpha and beta ones pass silently */
static void test_feature_gate_warnings(void **state)
{
	(void)state;
	struct mgr_config c = {0};
	char err[1024] = "", buf[512] = "";

	assert_int_equal(PARSE(&c, err,
	                       "--feature-gates=PodCertificateRequest=true,KMSv1=false,"
	                       "PodDeletionCost=false,GenericWorkload=false"),
	                 0);
	kcmd_features_each_warning(&c.features, record_warning, buf);
	assert_string_equal(buf, "KMSv1=0:deprecated PodCertificateRequest=1:GA");
	mgr_config_free(&c);
}

static void test_controllers(void **state)
{
	(void)state;
	struct mgr_config c = {0};
	char err[1024] = ""; /* the message lists every controller this build has */

	assert_int_equal(PARSE(&c, err, "--controllers=replicaset"), 0);
	assert_true(ON(c, RS));
	assert_false(ON(c, GC));
	assert_int_equal(PARSE(&c, err, "--controllers=*,-garbage-collector-controller"), 0);
	assert_true(ON(c, RS));
	assert_false(ON(c, GC));
	assert_int_equal(
	        PARSE(&c, err, "--controllers=*,-ttl-controller,-bootstrap-signer-controller"), 0);
	assert_true(ON(c, RS) && ON(c, GC));
	assert_int_equal(PARSE(&c, err, "--controllers=garbagecollector,-garbagecollector"), 0);
	assert_false(ON(c, GC));
	assert_int_equal(PARSE(&c, err, "--controllers=garbagecollector"), 0);
	assert_true(ON(c, GC) && !ON(c, RS));
	assert_int_equal(
	        PARSE(&c, err, "--controllers=replicaset-controller,garbage-collector-controller"),
	        0);
	assert_true(ON(c, GC) && ON(c, RS));
	assert_int_equal(PARSE(&c, err, "--controllers=cloud-node-lifecycle-controller"), -EINVAL);
	assert_non_null(strstr(err, "cloud-node-lifecycle-controller is not implemented by kcmd"));
	/* a controller kcmd lacks may come from a plug-in: the message says how */
	assert_non_null(strstr(err, "--controller-plugins"));
	/* --controller-plugins is a flag of its own (the mains load it before parsing) */
	assert_int_equal(PARSE(&c, err, "--controller-plugins=/x/a.so,/x/b.so"), 0);
	assert_string_equal(c.controller_plugins, "/x/a.so,/x/b.so");
	assert_int_equal(PARSE(&c, err, "--controllers=replicaset,,gc"), -EINVAL);
	/* kcm: the storage version migrator (on by default) refuses to start without the GC */
	assert_int_equal(PARSE(&c, err, "--enable-garbage-collector=false"), -EINVAL);
	assert_non_null(strstr(err, "storage version migrator requires garbage collector"));
	assert_int_equal(PARSE(&c, err, "--controllers=svm", "--enable-garbage-collector=false"),
	                 -EINVAL);
	assert_int_equal(PARSE(&c, err, "--controllers=svm", "--enable-garbage-collector=true"), 0);
	assert_int_equal(PARSE(&c, err, "--controllers=*,-svm", "--enable-garbage-collector=false"),
	                 0);
	assert_false(ON(c, GC));
	assert_true(ON(c, RS));
	mgr_config_free(&c);
}

static void test_errors_name_the_flag(void **state)
{
	(void)state;
	struct mgr_config c = {0};
	char err[256] = "";

	/* a controller flag is accepted */
	assert_int_equal(PARSE(&c, err, "--cluster-cidr=10.0.0.0/8"), 0);
	assert_int_equal(PARSE(&c, err, "--no-such-flag"), -EINVAL);
	assert_non_null(strstr(err, "unknown flag --no-such-flag"));
	assert_int_equal(PARSE(&c, err, "--kube-api-burst=abc"), -EINVAL);
	assert_non_null(strstr(err, "--kube-api-burst=abc"));
	assert_int_equal(PARSE(&c, err, "--secure-port=70000"), -EINVAL);
	assert_int_equal(PARSE(&c, err, "--leader-elect=maybe"), -EINVAL);
	assert_int_equal(PARSE(&c, err, "--leader-elect-lease-duration=15"), -EINVAL);
	assert_non_null(strstr(err, "not a duration"));
	assert_int_equal(PARSE(&c, err, "--leader-elect-resource-lock=endpoints"), -EINVAL);
	assert_int_equal(PARSE(&c, err, "--kubeconfig"), -EINVAL);
	assert_non_null(strstr(err, "needs a value"));
	assert_int_equal(PARSE(&c, err, "stray"), -EINVAL);
	assert_int_equal(PARSE(&c, err, "--concurrent-replicaset-syncs=0"), -EINVAL);
	assert_int_equal(PARSE(&c, err, "--concurrent-replicaset-syncs=16385"), -EINVAL);
	assert_non_null(strstr(err, "--concurrent-replicaset-syncs must be between 1 and 16384"));
	assert_int_equal(PARSE(&c, err, "--concurrent-replicaset-syncs=100"), 0);
	assert_int_equal(FLAG_INT(c, RS, "concurrent-replicaset-syncs"), 100);
	assert_int_equal(PARSE(&c, err, "--kube-api-content-type=application/yaml"), -EINVAL);
	assert_non_null(strstr(err, "--kube-api-content-type"));
	assert_int_equal(PARSE(&c, err, "--kube-api-content-type=application/json"), 0);
	assert_string_equal(c.kube_api_content_type, "application/json");
	assert_int_equal(PARSE(&c, err, "--kubeconfig=/k"), 0);
	assert_string_equal(c.kube_api_content_type, "application/vnd.kubernetes.protobuf");
	assert_int_equal(PARSE(&c, err, "--tls-cert-file=/a"), -EINVAL);
	assert_int_equal(PARSE(&c, err, "--kube-api-qps=-1"), -EINVAL);
	mgr_config_free(&c);
}

/* Controller flags come from the descriptors: parsed with their type, passed on, in --help. */
static void test_controller_flags(void **state)
{
	(void)state;
	struct mgr_config c = {0};
	char err[256] = "";

	assert_int_equal(
	        PARSE(&c, err, "--concurrent-replicaset-syncs", "64", "--concurrent-gc-syncs=2"),
	        0);
	assert_int_equal(FLAG_INT(c, RS, "concurrent-replicaset-syncs"), 64);
	assert_int_equal(FLAG_INT(c, GC, "concurrent-gc-syncs"), 2);
	assert_true(mgr_controller(&c, GC)->desc->worker_count(mgr_controller(&c, GC)->values) ==
	            2);
	assert_true(mgr_controller(&c, RS)->desc->worker_count(mgr_controller(&c, RS)->values) ==
	            64);
	assert_int_equal(PARSE(&c, err, "--replicaset-orphaned-expectations-grace=2m"), 0);
	assert_int_equal(kcmd_flag_duration_us(mgr_controller(&c, RS)->values,
	                                       "replicaset-orphaned-expectations-grace"),
	                 120000000);
	assert_int_equal(PARSE(&c, err, "--replicaset-orphaned-expectations-grace=2"), -EINVAL);
	assert_non_null(strstr(err, "not a duration"));
	assert_int_equal(PARSE(&c, err, "--concurrent-gc-syncs=x"), -EINVAL);
	assert_non_null(strstr(err, "--concurrent-gc-syncs=x"));
	assert_int_equal(PARSE(&c, err, "--concurrent-gc-syncs"), -EINVAL);
	assert_non_null(strstr(err, "needs a value"));
	/* the kubelet simulator is hidden: not a controller name, on only with its flag */
	assert_int_equal(PARSE(&c, err, "--controllers=kubelet-simulator"), -EINVAL);
	assert_int_equal(PARSE(&c, err, "--kubeconfig=/k"), 0);
	assert_false(ON(c, "kubelet-simulator"));
	assert_int_equal(PARSE(&c, err, "--simulate-kubelet", "--simulate-kubelet-nodes=3"), 0);
	assert_true(ON(c, "kubelet-simulator"));
	assert_int_equal(PARSE(&c, err, "--simulate-kubelet-nodes=0"), -EINVAL);
	mgr_config_free(&c);

	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	assert_non_null(f);
	mgr_flags_usage(f);
	fclose(f);
	assert_non_null(strstr(text, "replicaset-controller              on (alias replicaset)"));
	assert_non_null(strstr(text, "--concurrent-gc-syncs int"));
	assert_null(strstr(text, "  kubelet-simulator "));
	free(text);
}

static void test_durations(void **state)
{
	(void)state;
	uint64_t us;

	assert_int_equal(kcmd_parse_duration("0", &us), 0);
	assert_int_equal(us, 0);
	assert_int_equal(kcmd_parse_duration("1h2m3.5s", &us), 0);
	assert_int_equal(us, 3723500000ull);
	assert_int_equal(kcmd_parse_duration("250us", &us), 0);
	assert_int_equal(us, 250);
	assert_int_equal(kcmd_parse_duration("1.5ms", &us), 0);
	assert_int_equal(us, 1500);
	assert_int_equal(kcmd_parse_duration("-1s", &us), -EINVAL);
	assert_int_equal(kcmd_parse_duration("", &us), -EINVAL);
	assert_int_equal(kcmd_parse_duration("5", &us), -EINVAL);
	assert_int_equal(kcmd_parse_duration("5x", &us), -EINVAL);
	assert_int_equal(kcmd_parse_duration("s", &us), -EINVAL);
	assert_int_equal(kcmd_parse_duration("1e400h", &us), -EINVAL);
}

/* /flagz: every flag with the value in effect, kcm's "name:value" lines sorted by name, Go
 * durations, string slices in brackets; a controller's flags too. */
static void test_flagz(void **state)
{
	(void)state;
	struct mgr_config c = {0};
	char err[256], *text;
	size_t len;

	assert_int_equal(PARSE(&c, err, "--v=3", "--leader-elect-lease-duration=1m30s",
	                       "--leader-elect-retry-period=500ms",
	                       "--concurrent-replicaset-syncs=7",
	                       "--controllers=replicaset-controller", "--logging-format=json"),
	                 0);
	assert_int_equal(mgr_flags_flagz(&c, &text, &len), 0);
	assert_int_equal(strlen(text), len);
	assert_true(strncmp(text,
	                    "\nkcmd flagz\nWarning: This endpoint is not meant to be machine "
	                    "parseable",
	                    60) == 0);
	const char *want[] = {"\nv:3\n",
	                      "\nleader-elect-lease-duration:1m30s\n",
	                      "\nleader-elect-retry-period:500ms\n",
	                      "\nleader-elect-renew-deadline:10s\n",
	                      "\nconcurrent-replicaset-syncs:7\n",
	                      "\ncontrollers:[replicaset-controller]\n",
	                      "\nlogging-format:json\n",
	                      "\nleader-elect:true\n",
	                      "\nkube-api-qps:20\n",
	                      "\nauthorization-always-allow-paths:[/healthz,/readyz,/livez]\n",
	                      "\nvmodule:\n"};
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		if (!strstr(text, want[i]))
			fail_msg("flagz lacks %s:\n%s", want[i] + 1, text);
	assert_null(strstr(text, "\nhelp:"));
	/* sorted: each flag line sorts after the one before it */
	char *prev = NULL, *save = NULL;
	for (char *l = strtok_r(strstr(text, "purposes only.\n") + 15, "\n", &save); l;
	     l = strtok_r(NULL, "\n", &save)) {
		if (prev)
			assert_true(strcmp(prev, l) < 0);
		prev = l;
	}
	free(text);
	mgr_config_free(&c);
}

/* kcm's requiredFeatureGates: the podgroup-protection-controller needs GenericWorkload (beta,
 * off in v1.37); while it is off the controller does not start, named or under '*', and the
 * manager is told so (gated_off) to log kcm's "Controller is disabled by a feature gate". */
static void test_required_gate(void **state)
{
	(void)state;
	struct mgr_config c = {0};
	char err[1024] = "";
	const char *pg = "podgroup-protection-controller";

	assert_int_equal(PARSE(&c, err, "--controllers=podgroup-protection-controller"), 0);
	assert_false(ON(c, pg));
	assert_true(mgr_controller(&c, pg)->gated_off);
	assert_int_equal(PARSE(&c, err, "--controllers=*"), 0);
	assert_false(ON(c, pg));
	assert_true(mgr_controller(&c, pg)->gated_off);
	assert_false(mgr_controller(&c, RS)->gated_off);
	/* not selected: nothing to say about its gate */
	assert_int_equal(PARSE(&c, err, "--controllers=replicaset"), 0);
	assert_false(ON(c, pg));
	assert_false(mgr_controller(&c, pg)->gated_off);
	/* the gate on: named or under '*' it runs ('*' covers it, as kcm's list says "on") */
	assert_int_equal(PARSE(&c, err, "--feature-gates=GenericWorkload=true",
	                       "--controllers=podgroup-protection-controller"),
	                 0);
	assert_true(ON(c, pg));
	assert_false(mgr_controller(&c, pg)->gated_off);
	assert_int_equal(PARSE(&c, err, "--feature-gates=GenericWorkload=true", "--controllers=*"),
	                 0);
	assert_true(ON(c, pg));
	assert_int_equal(
	        PARSE(&c, err, "--feature-gates=AllBeta=true", "--controllers=*", "--version"), 0);
	assert_true(ON(c, pg));
	assert_int_equal(PARSE(&c, err, "--feature-gates=GenericWorkload=true",
	                       "--controllers=*,-podgroup-protection-controller"),
	                 0);
	assert_false(ON(c, pg));
	assert_false(mgr_controller(&c, pg)->gated_off);
	/* the alpha DRAResourcePoolStatus: off by default, and AllBeta does not cover it */
	const char *rps = "resourcepoolstatusrequest-controller";
	assert_int_equal(PARSE(&c, err, "--controllers=*"), 0);
	assert_false(ON(c, rps));
	assert_true(mgr_controller(&c, rps)->gated_off);
	assert_int_equal(
	        PARSE(&c, err, "--feature-gates=AllBeta=true", "--controllers=*", "--version"), 0);
	assert_false(ON(c, rps));
	assert_int_equal(
	        PARSE(&c, err, "--feature-gates=DRAResourcePoolStatus=true", "--controllers=*"), 0);
	assert_true(ON(c, rps));
	assert_false(mgr_controller(&c, rps)->gated_off);
	/* a GA gate kcmd has no code behind (ClusterTrustBundle, unlocked in v1.37) still gates
	 * its controller, as kcm's requiredFeatureGates do */
	const char *ctb = "kube-apiserver-serving-clustertrustbundle-publisher-controller";
	assert_int_equal(PARSE(&c, err, "--controllers=*"), 0);
	assert_true(ON(c, ctb));
	assert_int_equal(PARSE(&c, err,
	                       "--feature-gates=ClusterTrustBundle=false,"
	                       "ClusterTrustBundleProjection=false",
	                       "--controllers=*"),
	                 0);
	assert_false(ON(c, ctb));
	assert_true(mgr_controller(&c, ctb)->gated_off);
	assert_true(ON(c, RS));
	/* the device taint eviction controller needs DRADeviceTaints (GA, unlocked), which
	 * DRADeviceTaintRules depends on */
	const char *dte = "device-taint-eviction-controller";
	assert_true(ON(c, dte));
	assert_int_equal(PARSE(&c, err, "--feature-gates=DRADeviceTaints=false", "--controllers=*"),
	                 -EINVAL);
	assert_int_equal(PARSE(&c, err, "--feature-gates=DRADeviceTaints=false",
	                       "--feature-gates=DRADeviceTaintRules=false", "--controllers=*"),
	                 0);
	assert_false(ON(c, dte));
	assert_true(mgr_controller(&c, dte)->gated_off);
	assert_true(ON(c, ctb));
	mgr_config_free(&c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_defaults_match_kcm),
	        cmocka_unit_test(test_spellings),
	        cmocka_unit_test(test_kcm_flags_without_effect),
	        cmocka_unit_test(test_feature_gates),
	        cmocka_unit_test(test_feature_gates_match_kcm),
	        cmocka_unit_test(test_feature_gate_warnings),
	        cmocka_unit_test(test_controllers),
	        cmocka_unit_test(test_required_gate),
	        cmocka_unit_test(test_errors_name_the_flag),
	        cmocka_unit_test(test_controller_flags),
	        cmocka_unit_test(test_durations),
	        cmocka_unit_test(test_flagz),
	        cmocka_unit_test(test_emulated_version),
	        cmocka_unit_test(test_gate_versions),
	        cmocka_unit_test(test_unhonoured_gates),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
