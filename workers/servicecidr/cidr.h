/* SPDX-License-Identifier: Apache-2.0 */
#pragma once
/*
 * workers/servicecidr/cidr.h: the service-cidr-controller's decisions, pure (no I/O).
 *
 * Design note.
 *   Upstream (pkg/controller/servicecidrs, v1.37; helpers in pkg/api/servicecidr) keeps the
 *   networking.k8s.io/service-cidr-finalizer on every ServiceCIDR and its Ready condition
 *   True ("Kubernetes Service CIDR is ready", no reason). A ServiceCIDR being deleted loses its
 *   finalizer only when no IPAddress allocated by the apiserver (label
 *   ipaddress.kubernetes.io/managed-by: ipallocator.k8s.io) would be left without a ServiceCIDR:
 *   either every CIDR of it is contained in another ServiceCIDR's (or it has none), or no such
 *   IPAddress of each CIDR's family lies only in it (the network address, and for IPv4 the
 *   broadcast address, belong to no prefix); and then only 10 s after its deletionTimestamp (the
 *   apiserver's allocators must have seen the deletion). Until then its Ready condition is
 *   False, reason Terminating. Prefixes and addresses are parsed as Go's net/netip does
 *   (strict: no leading zeros; an IPv4-mapped IPv6 address is IPv6).
 *   Here over cJSON ServiceCIDRs as the apiserver serves them; tested without a cluster
 *   (tests/test-cidr.c: the cases of upstream's servicecidrs_controller_test.go and
 *   pkg/api/servicecidr's tests).
 */
#include <stdbool.h>
#include <stddef.h>

#include <cjson/cJSON.h>

#define SCC_CONTROLLER   "service-cidr-controller"
#define SCC_QUEUE        "ipaddresses" /* upstream's workqueue name */
#define SCC_GROUP        "networking.k8s.io"
#define SCC_FINALIZER    "networking.k8s.io/service-cidr-finalizer"
#define SCC_LABEL_MGD    "ipaddress.kubernetes.io/managed-by"
#define SCC_LABEL_FAMILY "ipaddress.kubernetes.io/ip-family"
#define SCC_IPALLOCATOR  "ipallocator.k8s.io"
#define SCC_GRACE_US     10000000ull /* deletionGracePeriod */
#define SCC_MSG_READY    "Kubernetes Service CIDR is ready"
#define SCC_MSG_BLOCKED                                                                            \
	"There are still IPAddresses referencing the ServiceCIDR, please remove them or create a " \
	"new ServiceCIDR"

struct scc_prefix {
	unsigned char a[16]; /* IPv4 in a[0..3] */
	int bits;
	bool v4;
};

/* netip.ParsePrefix: 0 or -EINVAL. */
int scc_parse_prefix(const char *s, struct scc_prefix *ret);
/* netip.ParseAddr (without zones): 0 or -EINVAL; ret->bits is the full length. */
int scc_parse_addr(const char *s, struct scc_prefix *ret);
bool scc_overlaps(const struct scc_prefix *a, const struct scc_prefix *b);
/* PrefixContainsIP: in the prefix, not its network address, not the IPv4 broadcast address. */
bool scc_prefix_contains_ip(const struct scc_prefix *p, const struct scc_prefix *ip);
/* netutils.IPFamilyOfCIDRString: "IPv4", "IPv6", or "" (upstream's IPFamilyUnknown). */
const char *scc_cidr_family(const char *cidr);

/* The names (into all[]) of the ServiceCIDRs with a CIDR that overlaps one of cidr's
 * (OverlapsPrefix, deduplicated; includes cidr itself when it is in all). ret_names has room
 * for n; returns how many. */
size_t scc_overlapping(const cJSON *cidr, const cJSON *const *all, size_t n,
                       const char **ret_names);
/* ContainsAddress: the names of the ServiceCIDRs containing ip, deduplicated. */
size_t scc_containing(const char *ip, const cJSON *const *all, size_t n, const char **ret_names);

/* canDeleteCIDR. ips: the IPAddresses' names and labels (family, managed-by), as get(ud, i,
 * label) answers; n_ips of them. */
typedef const char *(*scc_ip_label_fn)(void *ud, size_t i, const char *label);
bool scc_can_delete(const cJSON *cidr, const cJSON *const *all, size_t n,
                    const char *const *ip_names, size_t n_ips, scc_ip_label_fn label, void *ud);

/* updateConditionIfNeeded's test: the Ready condition differs in status, reason or message. */
bool scc_condition_needed(const cJSON *cidr, const char *status, const char *reason,
                          const char *message);
/* The server-side apply body of the status (FieldManager service-cidr-controller). NULL on
 * -ENOMEM; free(). now: RFC 3339. */
char *scc_status_apply(const char *name, const char *status, const char *reason,
                       const char *message, const char *now);
bool scc_has_finalizer(const cJSON *cidr);

/* The sync's decision for cidr (upstream's sync without its I/O), as flags, in the order the
 * sync performs them. now: seconds since the epoch; *ret_after_us with SCC_REQUEUE. */
enum {
	SCC_ADD_FINALIZER = 1u << 0,    /* strategic merge patch adding the finalizer */
	SCC_READY = 1u << 1,            /* apply Ready=True (it differs) */
	SCC_TERMINATING = 1u << 2,      /* apply Ready=False, reason Terminating (it differs) */
	SCC_REMOVE_FINALIZER = 1u << 3, /* strategic merge patch removing it */
	SCC_REQUEUE = 1u << 4,          /* AddAfter: the grace period is not over */
};
unsigned scc_decide(const cJSON *cidr, const cJSON *const *all, size_t n,
                    const char *const *ip_names, size_t n_ips, scc_ip_label_fn label, void *ud,
                    long long now, unsigned long long *ret_after_us);
