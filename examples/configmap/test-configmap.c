/* SPDX-License-Identifier: Apache-2.0 */
/* examples/configmap/test-configmap.c: the example controller's unit test (`make check`):
 * its decision table, the ConfigMap it writes, and that the plug-in's descriptor is one kcmd
 * accepts. Linked with the controller's source and libkcmd; exit 0 pass, 1 fail. */
#include <stdio.h>
#include <string.h>

#include <kcmd/kcmd.h>

#include "configmap.h"

const struct kcmd_controller *kcmd_controller_plugin(void);

static int failed;
#define CHECK(c)                                                                                   \
	do {                                                                                       \
		if (!(c)) {                                                                        \
			fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #c);      \
			failed = 1;                                                                \
		}                                                                                  \
	} while (0)

int main(void)
{
	/* labelled, no ConfigMap: create; labelled with one: nothing */
	CHECK(ex_decide(&(struct ex_state){true, "true", false, false}) == EX_CREATE);
	CHECK(ex_decide(&(struct ex_state){true, "true", true, true}) == EX_NOTHING);
	CHECK(ex_decide(&(struct ex_state){true, "true", true, false}) == EX_NOTHING);
	/* label gone or not "true": delete ours, never another's */
	CHECK(ex_decide(&(struct ex_state){true, NULL, true, true}) == EX_DELETE);
	CHECK(ex_decide(&(struct ex_state){true, "false", true, true}) == EX_DELETE);
	CHECK(ex_decide(&(struct ex_state){true, NULL, true, false}) == EX_NOTHING);
	CHECK(ex_decide(&(struct ex_state){true, NULL, false, false}) == EX_NOTHING);
	/* Namespace gone: the garbage collector and the namespace controller clean up */
	CHECK(ex_decide(&(struct ex_state){false, NULL, true, true}) == EX_NOTHING);

	char body[1024];
	CHECK(ex_configmap_body(body, sizeof(body), "team-a", "1234-uid") > 0);
	CHECK(strstr(body, "\"name\":\"kcmd-example\",\"namespace\":\"team-a\"") != NULL);
	CHECK(strstr(body, "\"kind\":\"Namespace\",\"name\":\"team-a\",\"uid\":\"1234-uid\","
	                   "\"controller\":true") != NULL);
	CHECK(ex_configmap_body(body, 16, "team-a", "1234-uid") < 0);

	const struct kcmd_controller *c = kcmd_controller_plugin();
	CHECK(c && c->abi == KCMD_CONTROLLER_ABI && kcmd_api_abi() == KCMD_CONTROLLER_ABI);
	CHECK(c && strcmp(c->name, EX_CONTROLLER) == 0 && !c->enabled_by_default);
	CHECK(c && c->handlers && c->worker && c->n_watches == 2 && c->n_queues == 1);
	CHECK(c && c->worker_count && c->flags && c->n_flags == 1);

	puts(failed ? "FAIL" : "PASS");
	return failed;
}
