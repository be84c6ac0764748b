/* SPDX-License-Identifier: Apache-2.0 */
/* Tests of the leadership fence (kube/fence.h) and of the client's check before every write. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "kube/client.h"
#include "kube/config.h"
#include "kube/fence.h"

static uint64_t now_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

static void test_fence_word(void **state)
{
	(void)state;
	struct kube_fence *w, *r;
	int fd = kube_fence_memfd_create();

	assert_true(fd >= 0);
	assert_int_equal(kube_fence_open(fd, true, &w), 0);
	assert_int_equal(kube_fence_open(fd, false, &r), 0);
	assert_int_equal(kube_fence_deadline(r), 0); /* writes refused until the manager leads */
	assert_false(kube_fence_allows(r, now_us()));
	kube_fence_set(w, now_us() + 60000000);
	assert_true(kube_fence_allows(r, now_us()));
	kube_fence_set(w, now_us() - 1);
	assert_false(kube_fence_allows(r, now_us()));
	kube_fence_set(r, KUBE_FENCE_NONE); /* a reader cannot move it */
	assert_false(kube_fence_allows(r, now_us()));
	kube_fence_set(w, KUBE_FENCE_NONE);
	assert_true(kube_fence_allows(r, UINT64_MAX - 1));
	assert_true(kube_fence_allows(NULL, now_us())); /* no fence: nothing refused */
	kube_fence_close(w);
	kube_fence_close(r);
	/* not a fence */
	int other = memfd_create("x", MFD_CLOEXEC);
	assert_int_equal(ftruncate(other, 4096), 0);
	assert_int_equal(kube_fence_open(other, false, &r), -EBADMSG);
	close(other);
	/* sealed: a child cannot shrink it under the others */
	assert_true(ftruncate(fd, 0) < 0);
	close(fd);
}

/* Issue 21: a child holds the manager's memfd itself (KCMD_FENCE_FD). Once the manager has
 * its writable mapping, nobody else can write the deadline: no second writable open, no
 * writable mmap, no write(2), no removal of the seal; read-only opens still work and see the
 * manager's writes. */
static void test_fence_sealed_for_writes(void **state)
{
	(void)state;
	struct kube_fence *w, *w2, *r;
	int fd = kube_fence_memfd_create();
	uint64_t hostile = UINT64_MAX - 1;

	assert_true(fd >= 0);
	assert_int_equal(kube_fence_open(fd, true, &w), 0);
	assert_int_equal(kube_fence_open(fd, true, &w2), -EPERM);
	assert_true(mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0) == MAP_FAILED);
	assert_int_equal(errno, EPERM);
	assert_true(pwrite(fd, &hostile, sizeof(hostile), 8) < 0);
	assert_int_equal(errno, EPERM);
	assert_true(fcntl(fd, F_ADD_SEALS, F_SEAL_WRITE) < 0); /* F_SEAL_SEAL */
	assert_true(fcntl(fd, F_GET_SEALS) & F_SEAL_FUTURE_WRITE);
	assert_int_equal(kube_fence_open(fd, false, &r), 0);
	kube_fence_set(w, 1234);
	assert_int_equal(kube_fence_deadline(r), 1234);
	kube_fence_close(r);
	kube_fence_close(w);
	close(fd);
}

/* The fence outlives a writer killed with -9 (F3): the last deadline stays, and passes. */
static void test_writer_killed(void **state)
{
	(void)state;
	struct kube_fence *r;
	int fd = kube_fence_memfd_create();
	pid_t pid;

	assert_true(fd >= 0);
	pid = fork();
	if (pid == 0) {
		struct kube_fence *w;
		if (kube_fence_open(fd, true, &w) < 0)
			_exit(1);
		for (;;) /* renews until killed */
			kube_fence_set(w, now_us() + 200000);
	}
	usleep(50000);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	assert_int_equal(kube_fence_open(fd, false, &r), 0);
	assert_true(kube_fence_allows(r, now_us()));
	usleep(250000);
	assert_false(kube_fence_allows(r, now_us()));
	kube_fence_close(r);
	close(fd);
}

/* The client refuses a write past the deadline before sending anything (the server here refuses
 * connections: a write that was sent fails with -ECONNREFUSED, a fenced one with -ENOLCK), and
 * never refuses a read. */
static void test_client_refuses_writes(void **state)
{
	(void)state;
	struct kube_config rc = {.server = "http://127.0.0.1:1"};
	struct kube_fence *w;
	struct kube_client *c;
	struct kube_response resp;
	struct kube_request get = {
	        .verb = KUBE_GET, .version = "v1", .resource = "pods", .ns = "a", .name = "b"};
	struct kube_request post = {.verb = KUBE_CREATE,
	                            .version = "v1",
	                            .resource = "pods",
	                            .ns = "a",
	                            .body = "{}",
	                            .body_len = 2};
	struct kube_request del = {
	        .verb = KUBE_DELETE, .version = "v1", .resource = "pods", .ns = "a", .name = "b"};
	int fd = kube_fence_memfd_create();

	assert_true(fd >= 0);
	assert_int_equal(kube_fence_open(fd, true, &w), 0);
	struct kube_client_opts o = {
	        .config = &rc, .max_retries = 1, .retry_base_ms = 5, .fence = w};
	assert_int_equal(kube_client_new(&o, &c), 0);
	assert_int_equal(kube_client_request(c, &post, NULL, NULL, &resp), -ENOLCK);
	kube_response_clear(&resp);
	assert_int_equal(kube_client_request(c, &del, NULL, NULL, &resp), -ENOLCK);
	kube_response_clear(&resp);
	assert_int_equal(kube_client_request(c, &get, NULL, NULL, &resp), -ECONNREFUSED);
	kube_response_clear(&resp);
	assert_int_equal(kube_client_fenced(c), 2);
	kube_fence_set(w, now_us() + 60000000); /* leading: the write is sent */
	assert_int_equal(kube_client_request(c, &post, NULL, NULL, &resp), -ECONNREFUSED);
	kube_response_clear(&resp);
	kube_client_free(c);

	/* the process default reaches a client made without one (a controller's own client) */
	kube_fence_set(w, 0);
	kube_client_set_process_fence(w);
	struct kube_client_opts o2 = {.config = &rc, .max_retries = 1, .retry_base_ms = 5};
	assert_int_equal(kube_client_new(&o2, &c), 0);
	assert_int_equal(kube_client_request(c, &post, NULL, NULL, &resp), -ENOLCK);
	kube_response_clear(&resp);
	kube_client_free(c);
	kube_client_set_process_fence(NULL);
	kube_fence_close(w);
	close(fd);
}

/* F5: the leadership epoch and the Lease's resourceVersion, seen by read-only mappings; only
 * the writable mapping moves them; the deadline is independent of them. */
static void test_epoch(void **state)
{
	(void)state;
	struct kube_fence *w, *r;
	uint64_t rv = 99;
	int fd = kube_fence_memfd_create();

	assert_true(fd >= 0);
	assert_int_equal(kube_fence_open(fd, true, &w), 0);
	assert_int_equal(kube_fence_open(fd, false, &r), 0);
	assert_int_equal(kube_fence_epoch(r, &rv), 0); /* no acquisition yet */
	assert_int_equal(rv, 0);
	kube_fence_set_epoch(w, 41, 123456);
	assert_int_equal(kube_fence_epoch(r, &rv), 41);
	assert_int_equal(rv, 123456);
	assert_int_equal(kube_fence_epoch(r, NULL), 41);
	kube_fence_set_epoch(r, 1, 1); /* a reader cannot move it */
	assert_int_equal(kube_fence_epoch(r, &rv), 41);
	assert_int_equal(rv, 123456);
	assert_int_equal(kube_fence_deadline(r), 0); /* the fence is still closed */
	kube_fence_set(w, KUBE_FENCE_NONE);
	assert_int_equal(kube_fence_epoch(r, NULL), 41); /* and the deadline leaves the epoch */
	kube_fence_set_epoch(w, 0xffffffffu, 0);
	assert_int_equal(kube_fence_epoch(r, &rv), 0xffffffffu);
	assert_int_equal(rv, 0);
	assert_int_equal(kube_fence_epoch(NULL, &rv), 0);
	kube_fence_close(w);
	kube_fence_close(r);
	close(fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_fence_word),
	        cmocka_unit_test(test_epoch),
	        cmocka_unit_test(test_fence_sealed_for_writes),
	        cmocka_unit_test(test_writer_killed),
	        cmocka_unit_test(test_client_refuses_writes),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
