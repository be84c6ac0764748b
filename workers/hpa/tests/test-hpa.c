/* SPDX-License-Identifier: Apache-2.0 */
/* placeholder */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include "workers/hpa/hpa.h"
static void t_tol(void **s)
{
	(void)s;
	assert_true(hpa_tol_within((struct hpa_tolerances){0.1, 0.1}, 1.05));
}
int main(void)
{
	const struct CMUnitTest tests[] = {cmocka_unit_test(t_tol)};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
