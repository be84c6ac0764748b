/* SPDX-License-Identifier: Apache-2.0 */
/* A plug-in fixture for test-plugins.c: a complete descriptor (a worker with a sync). */
#include <stddef.h>

#include "kcmd/kcmd.h"

static int t_init(struct wk_ctx *ctx, void **ret_state)
{
	(void)ctx;
	*ret_state = NULL;
	return 0;
}

static void t_sync(void *state, size_t q, const char *key, struct wk_result *res)
{
	(void)state;
	(void)q;
	(void)key;
	res->err = 0;
}

static void t_fini(void *state)
{
	(void)state;
}

static const char *const t_queue_names[] = {"test-plugin", NULL};
static const struct wk_controller t_worker = {.name = FIXTURE_NAME,
                                              .queues = t_queue_names,
                                              .init = t_init,
                                              .sync = t_sync,
                                              .fini = t_fini};
static const struct kcmd_queue t_queues[] = {{.name = FIXTURE_QUEUE}};
#ifndef FIXTURE_FLAG_DEF
#define FIXTURE_FLAG_DEF "3"
#endif
static const struct kcmd_flag t_flags[] = {{.name = FIXTURE_FLAG,
                                            .type = KCMD_FLAG_INT,
                                            .def = FIXTURE_FLAG_DEF,
                                            .help = "a fixture's flag"}};

static const struct kcmd_controller t_desc = {
        .abi = FIXTURE_ABI,
        .name = FIXTURE_NAME,
        .service_account = FIXTURE_NAME,
        .queues = t_queues,
        .n_queues = 1,
        .flags = t_flags,
        .n_flags = 1,
        .worker = &t_worker,
};

#ifndef FIXTURE_NO_SYMBOL
KCMD_PLUGIN(t_desc)
#else
const struct kcmd_controller *other_name(void);
const struct kcmd_controller *other_name(void)
{
	return &t_desc;
}
#endif

#ifdef FIXTURE_UNDEFINED
/* an unresolved reference: dlopen(RTLD_NOW) refuses the object */
void kcmd_fixture_missing(void);
void t_use_missing(void);
void t_use_missing(void)
{
	kcmd_fixture_missing();
}
#endif
