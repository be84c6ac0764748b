/* SPDX-License-Identifier: Apache-2.0 */
/* informerd's counters region as the manager creates it (issue 21): sized and sealed, so the
 * writer cannot shrink it under the manager's read-only mapping; a region with another layout
 * is refused by the reader. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/infmetrics.h"

static void test_sealed_region(void **state)
{
	(void)state;
	const struct inf_metrics_hdr *h;
	struct inf_metrics *w;
	struct stat st;
	int fd = inf_metrics_memfd_create();

	assert_true(fd >= 0);
	assert_int_equal(fstat(fd, &st), 0);
	assert_true((size_t)st.st_size >= sizeof(struct inf_metrics_hdr));
	assert_int_equal(inf_metrics_map_ro(fd, &h), 0);
	/* informerd attaches as the writer and publishes a row the manager sees */
	assert_int_equal(inf_metrics_open(fd, &w), 0);
	inf_metrics_add(inf_metrics_row(w, "apps", "replicasets"), INF_M_ERRORS, 3);
	assert_int_equal(atomic_load(&h->n_rows), 1);
	assert_int_equal(atomic_load(&h->rows[0].v[INF_M_ERRORS]), 3);
	/* a hostile or buggy writer cannot pull the pages from under the reader */
	assert_true(ftruncate(fd, 0) < 0);
	assert_int_equal(errno, EPERM);
	assert_true(fcntl(fd, F_GET_SEALS) & F_SEAL_SEAL);
	assert_int_equal(atomic_load(&h->rows[0].v[INF_M_ERRORS]), 3); /* still mapped */
	inf_metrics_close(w);
	inf_metrics_unmap(h);
	close(fd);
}

static void test_reader_refuses_foreign_layout(void **state)
{
	(void)state;
	const struct inf_metrics_hdr *h;
	int fd = memfd_create("not-metrics", MFD_CLOEXEC);
	uint32_t bogus = 0x12345678;

	assert_true(fd >= 0);
	assert_int_equal(inf_metrics_map_ro(fd, &h), -EPROTO); /* empty */
	assert_int_equal(ftruncate(fd, sizeof(struct inf_metrics_hdr)), 0);
	assert_int_equal(pwrite(fd, &bogus, sizeof(bogus), 0), (ssize_t)sizeof(bogus));
	assert_int_equal(inf_metrics_map_ro(fd, &h), -EPROTO);
	close(fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_sealed_region),
	        cmocka_unit_test(test_reader_refuses_foreign_layout),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
