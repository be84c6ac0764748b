/* SPDX-License-Identifier: Apache-2.0 */
/* shm/tests/tsan-threads.c - ThreadSanitizer check of the arena's shared accesses (manual; the
 * build has no TSan tier). One writer thread and three reader threads share ONE mapping (TSan
 * cannot follow two mappings of one page, realm-core#3652); the readers use private copies of
 * the arena handle so their scratch buffers are their own. Run from the top of the tree:
 *   gcc -std=c11 -D_GNU_SOURCE -g -O1 -fsanitize=thread -Wno-tsan -I. shm/tests/tsan-threads.c \
 *       shm/arena.c shm/index.c shm/reader.c -o /tmp/shm-tsan -lpthread && /tmp/shm-tsan
 * Expect no report and "check 0". TSan does not model standalone fences (google/sanitizers#1415),
 * so this checks that every racing access is atomic, not the placement of the fences. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "shm/shm-internal.h"
static struct shm_arena *W;
static int T;
static _Atomic int stop;
static void *reader(void *arg)
{
	struct shm_arena *r = calloc(1, sizeof(*r));
	*r = *W;
	r->w = NULL;
	r->lock_fd = -1;
	memset(r->scr, 0, sizeof(r->scr));
	memset(r->scr_cap, 0, sizeof(r->scr_cap));
	r->hv = NULL;
	r->hv_cap = r->hv_len = 0;
	struct shm_obj o = SHM_OBJ_INIT;
	unsigned s = (unsigned)(uintptr_t)arg;
	long n = 0, ok = 0;
	while (!atomic_load(&stop)) {
		char name[32];
		snprintf(name, sizeof(name), "p%u", (s = s * 1103515245 + 12345) % 200);
		if (shm_reader_get(r, (uint16_t)T, "ns", name, &o) == 0)
			ok++;
		if (n % 50 == 0)
			shm_reader_list_controlled(r, (uint16_t)T, "owner-1", "ns", NULL, NULL);
		n++;
	}
	printf("reader: %ld reads %ld hits\n", n, ok);
	shm_obj_release(&o);
	free(r->scr[0]);
	free(r->scr[1]);
	free(r->scr[2]);
	free(r->scr[3]);
	free(r->hv);
	free(r);
	return NULL;
}
int main(void)
{
	int fd;
	shm__test_flags = SHM_TEST_NO_QUARANTINE;
	if (shm_arena_create(&(struct shm_create_opts){.max_size = 1u << 30}, &fd) ||
	    shm_writer_open(fd, &W))
		return 1;
	T = shm_writer_register_type(W, &(struct shm_type_desc){"", "v1", "pods", "Pod", 1});
	pthread_t th[3];
	for (int i = 0; i < 3; i++)
		pthread_create(&th[i], NULL, reader, (void *)(uintptr_t)(i + 1));
	static char payload[3000];
	for (unsigned i = 0; i < 200000; i++) {
		char name[32], uid[32], rv[16], owner[16];
		unsigned k = i % 200;
		snprintf(name, sizeof(name), "p%u", k);
		snprintf(uid, sizeof(uid), "u%u", k);
		snprintf(rv, sizeof(rv), "%u", i);
		snprintf(owner, sizeof(owner), "owner-%u", i % 3);
		struct shm_owner_ref own = {"v1", "RS", "rs", owner, (int8_t)(i % 2), 1};
		struct shm_label l = {"a", rv};
		struct shm_record_in rec = {.type = (uint16_t)T,
		                            .kind = SHM_RECORD_POD,
		                            .ns = "ns",
		                            .name = name,
		                            .uid = uid,
		                            .rv = rv,
		                            .labels = &l,
		                            .n_labels = 1,
		                            .owners = &own,
		                            .n_owners = 1,
		                            .payload = payload,
		                            .payload_len = (i * 7) % 3000};
		if (i % 17 == 0)
			shm_writer_delete(W, (uint16_t)T, "ns", name);
		else
			shm_writer_upsert(W, &rec);
	}
	atomic_store(&stop, 1);
	for (int i = 0; i < 3; i++)
		pthread_join(th[i], NULL);
	printf("check %d\n", shm_writer_check(W));
	shm_arena_close(W);
	return 0;
}
