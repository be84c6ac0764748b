/* SPDX-License-Identifier: Apache-2.0 */
/*
 * controllers/kcm-compat.c: why a kube-controller-manager flag kcmd does not declare has no effect
 * here (kcm-compat.h). Lives beside the registry because the reasons name controllers.
 */
#include "controllers/kcm-compat.h"
#include "controllers/registry.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

/* Why a kube-controller-manager flag kcmd does not declare has no effect, by the part of kcm it
 * belongs to (matched by name prefix, the first match wins). `refuse`: given away from kcm's
 * default, the start fails instead (ignoring it would leave the operator believing a security
 * setting holds, or a behaviour kcmd does not have would be asked for). */
const struct kcm_compat_reason kcm_compat_reasons[] = {
        {"tls-cipher-suites", "kcmd's TLS (GnuTLS) cannot be limited to Go's cipher suite names",
         true},
        {"tls-curve-preferences", "kcmd's TLS (GnuTLS) takes no Go CurveIDs", true},
        {"tls-sni-cert-key", "kcmd serves --tls-cert-file for every name (no SNI certificates)",
         true},
        {"cloud-", "kcmd runs no cloud-provider loops (kcm without --cloud-provider)", false},
        {"configure-cloud-routes", "kcmd runs no cloud-provider loops", false},
        {"route-reconciliation-period", "kcmd runs no cloud-provider loops", false},
        {"external-cloud-volume-plugin", "kcmd runs no cloud-provider loops", false},
        {"cluster-name", "used by cloud-provider loops only, which kcmd does not run", false},
        {"pv-recycler-",
         "kcmd builds no recycler pod (persistentvolume-binder-controller's Recycle policy, "
         "docs/pvbinder.md)",
         false},
        {"enable-hostpath-provisioner", "kcmd builds no in-tree volume plugins", true},
        {"flex-volume-plugin-dir", "kcmd builds no in-tree volume plugins", false},
        {"profiling", "kcmd serves no /debug/pprof (Go's profiler)", false},
        {"contention-profiling", "kcmd serves no /debug/pprof (Go's profiler)", false},
        {"disable-http2-serving", "kcmd's server speaks HTTP/1.1 only", false},
        {"http2-max-streams-per-connection", "kcmd's server speaks HTTP/1.1 only", false},
        {"permit-address-sharing", "kcmd binds its port without SO_REUSEADDR/SO_REUSEPORT", false},
        {"permit-port-sharing", "kcmd binds its port without SO_REUSEADDR/SO_REUSEPORT", false},
        {"allow-metric-labels", "kcmd has no metric label allow-lists", false},
        {"disabled-metrics", "kcmd does not disable metrics", false},
        {"show-hidden-metrics-for-version", "kcmd has no hidden metrics", false},
        {"log-flush-frequency", "kcmd writes every log line at once", false},
        {"log-json-", "kcmd writes one log stream, unbuffered", false},
        {"log-text-", "kcmd writes one log stream, unbuffered", false},
        {"controller-start-interval", "kcmd starts every controller at once", false},
        {"controller-shutdown-timeout",
         "kcmd's workers stop on SIGTERM and are killed by the supervisor's own deadline", false},
        {"min-resync-period", "kcmd's informers do not resync (every event reaches the handlers)",
         false},
        {"enable-leader-migration", "kcmd has no leader migration (one Lease)", false},
        {"leader-migration-config", "kcmd has no leader migration (one Lease)", false},
        {"", "kcmd does not implement it", false},
};

const size_t kcm_compat_reasons_n = sizeof(kcm_compat_reasons) / sizeof(kcm_compat_reasons[0]);

const struct kcm_compat_reason *kcm_compat_reason(const char *flag)
{
	for (size_t i = 0; i < kcm_compat_reasons_n; i++)
		if (strncmp(flag, kcm_compat_reasons[i].prefix,
		            strlen(kcm_compat_reasons[i].prefix)) == 0)
			return &kcm_compat_reasons[i];
	return &kcm_compat_reasons[kcm_compat_reasons_n - 1];
}

const struct kcm_controller *kcm_controller_find(const char *name)
{
	for (size_t i = 0; name && i < kcm_controllers_n; i++)
		if (strcmp(kcm_controllers[i].name, name) == 0)
			return &kcm_controllers[i];
	return NULL;
}

int kcm_compat_selfcheck(char *err, size_t errlen)
{
	for (size_t i = 0; i < kcm_compat_reasons_n; i++) {
		const char *w = kcm_compat_reasons[i].why, *sp = strstr(w, " is not built in kcmd");
		char name[128];
		if (!sp || (size_t)(sp - w) >= sizeof(name))
			continue;
		memcpy(name, w, (size_t)(sp - w));
		name[sp - w] = 0;
		if (kcmd_registry_find(name) || !kcm_controller_find(name)) {
			snprintf(err, errlen,
			         "kcm_compat_reasons: --%s... says %s is not built: %s",
			         kcm_compat_reasons[i].prefix, name,
			         kcm_controller_find(name) ? "it is" : "not a kcm controller");
			return -EINVAL;
		}
	}
	return 0;
}

size_t kcm_controllers_missing(char *buf, size_t n)
{
	size_t len = 0, count = 0;
	if (n)
		buf[0] = 0;
	for (size_t i = 0; i < kcm_controllers_n; i++) {
		if (!kcm_controllers[i].on || kcmd_registry_find(kcm_controllers[i].name))
			continue;
		count++;
		if (len < n)
			len += (size_t)snprintf(buf + len, n - len, "%s%s", len ? ", " : "",
			                        kcm_controllers[i].name);
	}
	return count;
}

/* cmd/kube-controller-manager/app/storageversionmigrator.go (v1.37.2): newSVMController */
const struct kcm_start_requirement kcm_start_requirements[] = {
        {"storage-version-migrator-controller", "enable-garbage-collector",
         "Error initializing a controller controller=\"storage-version-migrator-controller\": "
         "storage version migrator requires garbage collector"},
};
const size_t kcm_start_requirements_n =
        sizeof(kcm_start_requirements) / sizeof(kcm_start_requirements[0]);
