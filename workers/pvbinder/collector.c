/* SPDX-License-Identifier: Apache-2.0 */
/* workers/pvbinder/collector.c: the pv_collector_* gauges (collector.h). */
#include "workers/pvbinder/collector.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "workers/pvbinder/binder.h"

/* the families, in name order (the order they are written in) */
enum {
	F_BOUND_PV,
	F_BOUND_PVC,
	F_TOTAL_PV,
	F_UNBOUND_PV,
	F_UNBOUND_PVC,
	F_N,
};

static const struct {
	const char *name, *help;
	const char *labels[3];
} fams[F_N] = {
        [F_BOUND_PV] = {"pv_collector_bound_pv_count",
                        "Gauge measuring number of persistent volume currently bound",
                        {"storage_class"}},
        [F_BOUND_PVC] = {"pv_collector_bound_pvc_count",
                         "Gauge measuring number of persistent volume claim currently bound",
                         {"namespace", "storage_class", "volume_attributes_class"}},
        [F_TOTAL_PV] = {"pv_collector_total_pv_count",
                        "Gauge measuring total number of persistent volumes",
                        {"plugin_name", "volume_mode"}},
        [F_UNBOUND_PV] = {"pv_collector_unbound_pv_count",
                          "Gauge measuring number of persistent volume currently unbound",
                          {"storage_class"}},
        [F_UNBOUND_PVC] = {"pv_collector_unbound_pvc_count",
                           "Gauge measuring number of persistent volume claim currently unbound",
                           {"namespace", "storage_class", "volume_attributes_class"}},
};

struct row {
	int fam;
	char *v[3]; /* label values, NULL past the family's labels */
};

struct pvb_collector {
	struct row *rows;
	size_t n, cap;
};

struct pvb_collector *pvb_collector_new(void)
{
	return calloc(1, sizeof(struct pvb_collector));
}

void pvb_collector_free(struct pvb_collector *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->n; i++)
		for (int k = 0; k < 3; k++)
			free(c->rows[i].v[k]);
	free(c->rows);
	free(c);
}

static int add_row(struct pvb_collector *c, int fam, const char *a, const char *b, const char *d)
{
	const char *in[3] = {a, b, d};
	struct row r = {.fam = fam};

	if (c->n == c->cap) {
		size_t cap = c->cap ? c->cap * 2 : 64;
		struct row *nr = realloc(c->rows, cap * sizeof(*nr));
		if (!nr)
			return -ENOMEM;
		c->rows = nr;
		c->cap = cap;
	}
	for (int k = 0; k < 3 && fams[fam].labels[k]; k++)
		if (!(r.v[k] = strdup(in[k] ? in[k] : ""))) {
			for (int j = 0; j < k; j++)
				free(r.v[j]);
			return -ENOMEM;
		}
	c->rows[c->n++] = r;
	return 0;
}

static const cJSON *child(const cJSON *o, const char *k)
{
	return cJSON_GetObjectItemCaseSensitive(o, k);
}

static const char *str(const cJSON *o, const char *k)
{
	const cJSON *x = child(o, k);
	return cJSON_IsString(x) ? x->valuestring : NULL;
}

const char *pvb_collector_plugin_name(const cJSON *pv)
{
	const cJSON *spec = child(pv, "spec");

	/* FindPluginBySpec over the binder's plugins: exactly one supports each of these */
	if (cJSON_IsObject(child(spec, "hostPath")))
		return "kubernetes.io/host-path";
	if (cJSON_IsObject(child(spec, "nfs")))
		return "kubernetes.io/nfs";
	return "N/A";
}

int pvb_collector_add_volume(struct pvb_collector *c, const cJSON *pv)
{
	const cJSON *spec = child(pv, "spec");
	const char *phase = str(child(pv, "status"), "phase"), *mode = str(spec, "volumeMode");
	int r;

	if (!c || !cJSON_IsObject(pv))
		return -EINVAL;
	/* the apiserver defaults volumeMode; a record without it counts as the default */
	r = add_row(c, F_TOTAL_PV, pvb_collector_plugin_name(pv), mode ? mode : "Filesystem", NULL);
	if (r < 0)
		return r;
	/* spec.storageClassName itself (not the beta annotation), as upstream's collector */
	return add_row(c, phase && strcmp(phase, "Bound") == 0 ? F_BOUND_PV : F_UNBOUND_PV,
	               str(spec, "storageClassName"), NULL, NULL);
}

int pvb_collector_add_claim(struct pvb_collector *c, const cJSON *pvc)
{
	const char *phase = str(child(pvc, "status"), "phase");

	if (!c || !cJSON_IsObject(pvc))
		return -EINVAL;
	return add_row(c, phase && strcmp(phase, "Bound") == 0 ? F_BOUND_PVC : F_UNBOUND_PVC,
	               str(child(pvc, "metadata"), "namespace"), pvb_claim_class(pvc),
	               str(child(pvc, "spec"), "volumeAttributesClassName"));
}

static int row_cmp(const void *pa, const void *pb)
{
	const struct row *a = pa, *b = pb;

	if (a->fam != b->fam)
		return a->fam < b->fam ? -1 : 1;
	for (int k = 0; k < 3 && a->v[k]; k++) {
		int d = strcmp(a->v[k], b->v[k]);
		if (d)
			return d;
	}
	return 0;
}

/* a label value as the text format escapes it: backslash, double quote, newline */
static void put_value(FILE *f, const char *s)
{
	for (; *s; s++) {
		if (*s == '\\')
			fputs("\\\\", f);
		else if (*s == '"')
			fputs("\\\"", f);
		else if (*s == '\n')
			fputs("\\n", f);
		else
			fputc(*s, f);
	}
}

int pvb_collector_render(struct pvb_collector *c, FILE *f)
{
	if (!c)
		return -EINVAL;
	if (c->n)
		qsort(c->rows, c->n, sizeof(*c->rows), row_cmp);
	for (size_t i = 0; i < c->n;) {
		int fam = c->rows[i].fam;
		if (i == 0 || c->rows[i - 1].fam != fam)
			fprintf(f, "# HELP %s [ALPHA] %s\n# TYPE %s gauge\n", fams[fam].name,
			        fams[fam].help, fams[fam].name);
		size_t j = i + 1;
		while (j < c->n && row_cmp(&c->rows[i], &c->rows[j]) == 0)
			j++;
		fprintf(f, "%s{", fams[fam].name);
		for (int k = 0; k < 3 && fams[fam].labels[k]; k++) {
			fprintf(f, "%s%s=\"", k ? "," : "", fams[fam].labels[k]);
			put_value(f, c->rows[i].v[k]);
			fputc('"', f);
		}
		fprintf(f, "} %zu\n", j - i);
		i = j;
	}
	return 0;
}
