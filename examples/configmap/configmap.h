/* SPDX-License-Identifier: Apache-2.0 */
#pragma once
/* examples/configmap/configmap.h: the example controller's pure parts, for its unit test. */
#include <stdbool.h>
#include <stddef.h>

#define EX_CONTROLLER "example-configmap-controller"
#define EX_QUEUE      "example-configmap"
#define EX_CONFIGMAP  "kcmd-example"
#define EX_LABEL      "example.kcmd.io/configmap"

struct ex_state {
	bool ns_exists;
	const char *ns_label; /* the value of EX_LABEL on the Namespace, or NULL */
	bool cm_exists;
	bool cm_owned; /* its controller reference is the Namespace */
};

enum ex_action { EX_NOTHING, EX_CREATE, EX_DELETE };

enum ex_action ex_decide(const struct ex_state *s);
/* The ConfigMap for namespace ns (uid ns_uid) as JSON; its length, or -ENAMETOOLONG. */
int ex_configmap_body(char *buf, size_t len, const char *ns, const char *ns_uid);
