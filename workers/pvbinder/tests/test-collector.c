/* SPDX-License-Identifier: Apache-2.0 */
/*
 * workers/pvbinder/tests/test-collector.c: the pv_collector_* gauges (collector.h) over
 * hand-made volumes and claims, in the shape of upstream's collector: the phase split (Bound
 * against everything else, Failed included), the labels (spec.storageClassName for volumes,
 * the claim's class with the beta annotation first, the volume attributes class, the plugin
 * and volume mode), the families left out when they have no series, the text format.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "workers/pvbinder/collector.h"

static char *render(struct pvb_collector *c)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	assert_non_null(f);
	assert_int_equal(pvb_collector_render(c, f), 0);
	assert_int_equal(fclose(f), 0);
	return text;
}

static void add_json(struct pvb_collector *c, bool claim, const char *js)
{
	cJSON *o = cJSON_Parse(js);

	assert_non_null(o);
	assert_int_equal(claim ? pvb_collector_add_claim(c, o) : pvb_collector_add_volume(c, o), 0);
	cJSON_Delete(o);
}

static void test_empty(void **state)
{
	struct pvb_collector *c = pvb_collector_new();
	char *text;

	(void)state;
	text = render(c);
	assert_string_equal(text, ""); /* no series: no family at all, as client_golang */
	free(text);
	pvb_collector_free(c);
}

static void test_volumes_and_claims(void **state)
{
	struct pvb_collector *c = pvb_collector_new();
	char *text;

	(void)state;
	add_json(c, false,
	         "{\"spec\":{\"storageClassName\":\"gold\",\"volumeMode\":\"Filesystem\","
	         "\"csi\":{\"driver\":\"d\"}},\"status\":{\"phase\":\"Bound\"}}");
	add_json(c, false,
	         "{\"spec\":{\"storageClassName\":\"gold\",\"volumeMode\":\"Block\","
	         "\"csi\":{\"driver\":\"d\"}},\"status\":{\"phase\":\"Bound\"}}");
	/* Failed, Released, Pending and no phase are all "unbound" */
	add_json(c, false,
	         "{\"spec\":{\"storageClassName\":\"gold\",\"volumeMode\":\"Filesystem\","
	         "\"hostPath\":{\"path\":\"/tmp/x\"}},\"status\":{\"phase\":\"Failed\"}}");
	add_json(c, false,
	         "{\"spec\":{\"volumeMode\":\"Filesystem\",\"nfs\":{\"server\":\"s\","
	         "\"path\":\"/\"}},\"status\":{\"phase\":\"Released\"}}");
	/* the beta class annotation is not what the volume gauges read */
	add_json(c, false,
	         "{\"metadata\":{\"annotations\":{\"volume.beta.kubernetes.io/"
	         "storage-class\":\"beta\"}},\"spec\":{\"volumeMode\":\"Filesystem\"},"
	         "\"status\":{}}");
	add_json(c, true,
	         "{\"metadata\":{\"namespace\":\"b\"},\"spec\":{\"storageClassName\":"
	         "\"gold\",\"volumeAttributesClassName\":\"fast\"},\"status\":{\"phase\":"
	         "\"Bound\"}}");
	add_json(c, true,
	         "{\"metadata\":{\"namespace\":\"a\"},\"spec\":{\"storageClassName\":"
	         "\"gold\"},\"status\":{\"phase\":\"Bound\"}}");
	add_json(c, true,
	         "{\"metadata\":{\"namespace\":\"a\"},\"spec\":{\"storageClassName\":"
	         "\"gold\"},\"status\":{\"phase\":\"Bound\"}}");
	/* the claim's class: the beta annotation wins over spec.storageClassName */
	add_json(c, true,
	         "{\"metadata\":{\"namespace\":\"a\",\"annotations\":{\"volume.beta."
	         "kubernetes.io/storage-class\":\"beta\"}},\"spec\":{\"storageClassName\":"
	         "\"gold\"},\"status\":{\"phase\":\"Pending\"}}");
	add_json(c, true,
	         "{\"metadata\":{\"namespace\":\"a\"},\"spec\":{},\"status\":{\"phase\":"
	         "\"Lost\"}}");
	text = render(c);
	assert_string_equal(
	        text,
	        "# HELP pv_collector_bound_pv_count [ALPHA] Gauge measuring number of persistent "
	        "volume currently bound\n"
	        "# TYPE pv_collector_bound_pv_count gauge\n"
	        "pv_collector_bound_pv_count{storage_class=\"gold\"} 2\n"
	        "# HELP pv_collector_bound_pvc_count [ALPHA] Gauge measuring number of persistent "
	        "volume claim currently bound\n"
	        "# TYPE pv_collector_bound_pvc_count gauge\n"
	        "pv_collector_bound_pvc_count{namespace=\"a\",storage_class=\"gold\","
	        "volume_attributes_class=\"\"} 2\n"
	        "pv_collector_bound_pvc_count{namespace=\"b\",storage_class=\"gold\","
	        "volume_attributes_class=\"fast\"} 1\n"
	        "# HELP pv_collector_total_pv_count [ALPHA] Gauge measuring total number of "
	        "persistent volumes\n"
	        "# TYPE pv_collector_total_pv_count gauge\n"
	        "pv_collector_total_pv_count{plugin_name=\"N/A\",volume_mode=\"Block\"} 1\n"
	        "pv_collector_total_pv_count{plugin_name=\"N/A\",volume_mode=\"Filesystem\"} 2\n"
	        "pv_collector_total_pv_count{plugin_name=\"kubernetes.io/host-path\","
	        "volume_mode=\"Filesystem\"} 1\n"
	        "pv_collector_total_pv_count{plugin_name=\"kubernetes.io/nfs\","
	        "volume_mode=\"Filesystem\"} 1\n"
	        "# HELP pv_collector_unbound_pv_count [ALPHA] Gauge measuring number of persistent "
	        "volume currently unbound\n"
	        "# TYPE pv_collector_unbound_pv_count gauge\n"
	        "pv_collector_unbound_pv_count{storage_class=\"\"} 2\n"
	        "pv_collector_unbound_pv_count{storage_class=\"gold\"} 1\n"
	        "# HELP pv_collector_unbound_pvc_count [ALPHA] Gauge measuring number of "
	        "persistent "
	        "volume claim currently unbound\n"
	        "# TYPE pv_collector_unbound_pvc_count gauge\n"
	        "pv_collector_unbound_pvc_count{namespace=\"a\",storage_class=\"\","
	        "volume_attributes_class=\"\"} 1\n"
	        "pv_collector_unbound_pvc_count{namespace=\"a\",storage_class=\"beta\","
	        "volume_attributes_class=\"\"} 1\n");
	free(text);
	pvb_collector_free(c);
}

/* label values escaped as the text format wants; bad input refused, not counted */
static void test_escaping_and_errors(void **state)
{
	struct pvb_collector *c = pvb_collector_new();
	cJSON *arr = cJSON_CreateArray();
	char *text;

	(void)state;
	add_json(c, false,
	         "{\"spec\":{\"storageClassName\":\"a\\\"b\\\\c\\nd\"},\"status\":{\"phase\":"
	         "\"Bound\"}}");
	assert_int_equal(pvb_collector_add_volume(c, arr), -EINVAL);
	assert_int_equal(pvb_collector_add_claim(c, NULL), -EINVAL);
	assert_int_equal(pvb_collector_add_volume(NULL, arr), -EINVAL);
	text = render(c);
	assert_non_null(
	        strstr(text, "pv_collector_bound_pv_count{storage_class=\"a\\\"b\\\\c\\nd\"} 1\n"));
	/* the default volume mode for a record without one */
	assert_non_null(strstr(text, "{plugin_name=\"N/A\",volume_mode=\"Filesystem\"} 1\n"));
	assert_null(strstr(text, "pvc_count"));
	free(text);
	cJSON_Delete(arr);
	pvb_collector_free(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_empty),
	        cmocka_unit_test(test_volumes_and_claims),
	        cmocka_unit_test(test_escaping_and_errors),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
