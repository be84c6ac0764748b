/* SPDX-License-Identifier: Apache-2.0 */
/*
 * workers/certificates/plugin-signing.c: kcm's certificatesigningrequest-signing-controller
 * (alias csrsigning), on by default, client "certificate-controller" (signer.h has the rules).
 *
 * Shape: upstream runs four loops, one per built-in signer, each with its queue
 * (csrsigning-kubelet-serving, csrsigning-kubelet-client, csrsigning-kube-apiserver-client,
 * csrsigning-legacy-unknown) and five workers. Here the same four queues; the dispatcher puts
 * a CSR's key only on its own signer's queue (upstream puts every CSR on all four and each loop
 * drops the others at once: the result is the same, minus three no-op syncs per event). Worker
 * processes: five (upstream's per-loop worker count), each taking keys of every queue.
 * A signer whose files are not given does not run (its CSRs are left alone), as kcm.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <gnutls/gnutls.h>

#include "kcmd/kcmd.h"
#include "kube/config.h"
#include "kube/model.h"
#include "workers/certificates/signer.h"
#include "workers/worker.h"

#define CSR_GROUP    "certificates.k8s.io"
#define CSR_RESOURCE "certificatesigningrequests"

/* ---- handlers (kcmd-dispatcher) ------------------------------------------------------------ */
static int signer_of_json(const char *json, size_t len)
{
	cJSON *o = json ? cJSON_ParseWithLength(json, len) : NULL;
	const cJSON *sn = cJSON_GetObjectItemCaseSensitive(
	        cJSON_GetObjectItemCaseSensitive(o, "spec"), "signerName");
	int s = cJSON_IsString(sn) ? csr_signer_lookup(sn->valuestring) : -1;
	cJSON_Delete(o);
	return s;
}

static void on_csr(struct inf_handler_ctx *ctx, const struct inf_event *ev)
{
	size_t len = 0;
	const char *json = kcmd_event_json(ev, &len);
	int s = signer_of_json(json, len);
	if (s >= 0 && ev->meta)
		kcmd_queue_add(ctx, (size_t)s, kcmd_meta_name(ev->meta));
}

struct resync_ud {
	struct inf_handler_ctx *ctx;
	size_t queue;
};

static int add_csr(const struct shm_obj *o, void *ud)
{
	struct resync_ud *r = ud;
	size_t len = 0;
	const char *json = kcmd_obj_json(o, &len);
	if (signer_of_json(json, len) == (int)r->queue)
		kcmd_queue_add(r->ctx, r->queue, kcmd_obj_name(o));
	return 0;
}

static void signing_resync(struct inf_handler_ctx *ctx, size_t queue, bool restarted)
{
	struct resync_ud r = {ctx, queue};
	(void)restarted;
	kcmd_cache_list(ctx->arena, CSR_GROUP, CSR_RESOURCE, NULL, add_csr, &r);
}

static const char *const signing_queue_names[] = {
        "csrsigning-kubelet-serving", "csrsigning-kubelet-client",
        "csrsigning-kube-apiserver-client", "csrsigning-legacy-unknown", NULL};
static const struct inf_handler_entry signing_entries[] = {
        {.group = CSR_GROUP, .resource = CSR_RESOURCE, .on_add = on_csr, .on_update = on_csr},
};
static const struct inf_handler_table signing_handlers = {
        .controller = CSR_SIGNING_CONTROLLER,
        .queues = signing_queue_names,
        .entries = signing_entries,
        .n_entries = 1,
        .resync = signing_resync,
};

/* ---- the sync (kcmd-worker) ------------------------------------------------------------------ */
struct signer_state {
	const char *cert_file, *key_file;  /* "" both: not running */
	unsigned char *raw_cert, *raw_key; /* what ca was loaded from */
	size_t raw_cert_len, raw_key_len;
	struct csr_ca ca;
	bool loaded;
};

struct signing {
	struct wk_ctx *ctx;
	int64_t ttl_ns;
	struct signer_state s[CSR_SIGNER_N];
};

static int read_file(const char *path, unsigned char **ret, size_t *ret_len)
{
	FILE *f = fopen(path, "re");
	unsigned char *buf = NULL;
	size_t n = 0, cap = 0;
	if (!f)
		return -errno;
	for (;;) {
		if (n == cap) {
			unsigned char *g;
			if (cap > (1u << 24) || !(g = realloc(buf, cap ? cap * 2 : 8192))) {
				free(buf);
				fclose(f);
				return cap > (1u << 24) ? -EFBIG : -ENOMEM;
			}
			buf = g;
			cap = cap ? cap * 2 : 8192;
		}
		size_t r = fread(buf + n, 1, cap - n, f);
		n += r;
		if (r == 0)
			break;
	}
	fclose(f);
	*ret = buf;
	*ret_len = n;
	return 0;
}

/* caProvider.currentCA: the files' content now; parsed again when it changed. A pair that
 * does not load keeps the one in force (the dynamic content keeps its last good value). */
static int current_ca(struct signer_state *st, const char *loop, char *msg, size_t msglen)
{
	unsigned char *c = NULL, *k = NULL;
	size_t cl = 0, kl = 0;
	int r;

	const char *failed = st->cert_file;
	if ((r = read_file(st->cert_file, &c, &cl)) < 0 ||
	    (failed = st->key_file, r = read_file(st->key_file, &k, &kl)) < 0) {
		free(c);
		if (st->loaded)
			return 0;
		/* os.ReadFile's error */
		snprintf(msg, msglen, "open %s: %s", failed,
		         r == -ENOENT   ? "no such file or directory"
		         : r == -EACCES ? "permission denied"
		                        : strerror(-r));
		return r;
	}
	if (st->loaded && cl == st->raw_cert_len && kl == st->raw_key_len &&
	    !memcmp(c, st->raw_cert, cl) && !memcmp(k, st->raw_key, kl)) {
		free(c);
		free(k);
		return 0;
	}
	struct csr_ca ca;
	char why[256];
	if ((r = csr_ca_load(c, cl, k, kl, &ca, why, sizeof(why))) < 0) {
		if (cl == 0 || kl == 0) /* the content's name, as the dynamic content has it */
			snprintf(why, sizeof(why),
			         "missing content for serving cert \"csr-controller::%s::%s\"",
			         st->cert_file, st->key_file);
		free(c);
		free(k);
		if (st->loaded) {
			kcmd_log_error(
			        "Failed to load the new CA of %s, keeping the current one: %s",
			        loop, why);
			return 0;
		}
		snprintf(msg, msglen, "%s", why);
		return r;
	}
	if (st->loaded)
		kcmd_log_info("Loaded a new CA for %s", loop);
	csr_ca_clear(&st->ca);
	free(st->raw_cert);
	free(st->raw_key);
	st->ca = ca;
	st->raw_cert = c, st->raw_cert_len = cl;
	st->raw_key = k, st->raw_key_len = kl;
	st->loaded = true;
	return 0;
}

static bool true_condition(const cJSON *conds, const char *type, bool need_true)
{
	const cJSON *c;
	cJSON_ArrayForEach(c, conds)
	{
		const cJSON *t = cJSON_GetObjectItemCaseSensitive(c, "type");
		const cJSON *st = cJSON_GetObjectItemCaseSensitive(c, "status");
		if (cJSON_IsString(t) && !strcmp(t->valuestring, type) &&
		    (!need_true || (cJSON_IsString(st) && !strcmp(st->valuestring, "True"))))
			return true;
	}
	return false;
}

static int update_status(struct wk_ctx *ctx, const char *name, cJSON *o)
{
	char *body = cJSON_PrintUnformatted(o);
	if (!body)
		return -ENOMEM;
	int r = kcmd_kube_request(ctx->kc,
	                          &(struct kcmd_request){.method = "PUT",
	                                                 .group = CSR_GROUP,
	                                                 .version = "v1",
	                                                 .resource = CSR_RESOURCE,
	                                                 .name = name,
	                                                 .subresource = "status",
	                                                 .body = body,
	                                                 .body_kind = "CertificateSigningRequest"},
	                          NULL, NULL);
	free(body);
	return r;
}

static const char *reason(int r)
{
	return kcmd_kube_reason(r) ? kcmd_kube_reason(r) : strerror(-r);
}

/* signer.handle for one CSR (its JSON o, a private copy). Returns 0 or -errno (retry). */
static int handle(struct signing *sg, enum csr_signer s, const char *name, cJSON *o)
{
	struct signer_state *st = &sg->s[s];
	cJSON *spec = cJSON_GetObjectItemCaseSensitive(o, "spec");
	cJSON *status = cJSON_GetObjectItemCaseSensitive(o, "status");
	const cJSON *conds = cJSON_GetObjectItemCaseSensitive(status, "conditions");
	const cJSON *req_b64 = cJSON_GetObjectItemCaseSensitive(spec, "request");
	const cJSON *exp = cJSON_GetObjectItemCaseSensitive(spec, "expirationSeconds");
	const cJSON *us = cJSON_GetObjectItemCaseSensitive(spec, "usages"), *u;
	const char *usages[64];
	size_t n = 0;
	unsigned char *pem = NULL;
	size_t pem_len = 0;
	struct csr_req req = {0};
	char msg[512];
	int r;

	/* IsCertificateRequestApproved (Approved, not Denied), no Failed condition True */
	if (!true_condition(conds, "Approved", false) || true_condition(conds, "Denied", false) ||
	    true_condition(conds, "Failed", true))
		return 0;
	cJSON_ArrayForEach(u, us)
	{
		if (!cJSON_IsString(u))
			continue;
		if (n == sizeof(usages) / sizeof(usages[0])) {
			kcmd_log_error("Sync %s failed with : too many usages", name);
			return 0; /* the apiserver allows no such object; nothing to retry */
		}
		usages[n++] = u->valuestring;
	}
	if (!cJSON_IsString(req_b64) ||
	    kube_base64_decode(req_b64->valuestring, strlen(req_b64->valuestring), &pem, &pem_len) <
	            0 ||
	    csr_req_parse(pem, pem_len, &req, msg, sizeof(msg)) < 0) {
		if (!cJSON_IsString(req_b64) || !pem)
			snprintf(msg, sizeof(msg), "PEM block type must be CERTIFICATE REQUEST");
		kcmd_log_error("Sync %s failed with : unable to parse csr \"%s\": %s", name, name,
		               msg);
		free(pem);
		return -EINVAL;
	}
	free(pem);
	if (csr_signer_validate(s, &req, usages, n, msg, sizeof(msg))) {
		char now[KUBE_TIME_BUF];
		cJSON *c = cJSON_CreateObject(), *arr;
		kube_time_format(kube_time_now(), now);
		cJSON_AddStringToObject(c, "type", "Failed");
		cJSON_AddStringToObject(c, "status", "True");
		cJSON_AddStringToObject(c, "reason", "SignerValidationFailure");
		cJSON_AddStringToObject(c, "message", msg);
		cJSON_AddStringToObject(c, "lastUpdateTime", now);
		if (!status)
			status = cJSON_AddObjectToObject(o, "status");
		if (!(arr = cJSON_GetObjectItemCaseSensitive(status, "conditions")))
			arr = cJSON_AddArrayToObject(status, "conditions");
		cJSON_AddItemToArray(arr, c);
		csr_req_clear(&req);
		if ((r = update_status(sg->ctx, name, o)) < 0) {
			kcmd_log_error(
			        "Sync %s failed with : error adding failure condition for csr: %s",
			        name, reason(r));
			return r;
		}
		kcmd_log_v(2, "CSR %s failed %s's validation: %s", name, csr_signers[s].signer_name,
		           msg);
		return 0;
	}
	if ((r = current_ca(st, csr_signers[s].loop, msg, sizeof(msg))) < 0) {
		csr_req_clear(&req);
		kcmd_log_error("Sync %s failed with : error auto signing csr: %s", name, msg);
		return r;
	}
	int64_t ttl = csr_duration(sg->ttl_ns, cJSON_IsNumber(exp),
	                           cJSON_IsNumber(exp) ? (int64_t)exp->valuedouble : 0);
	char *cert = NULL;
	size_t cert_len = 0;
	r = csr_sign(&st->ca, &req, usages, n, ttl, kube_time_now(), &cert, &cert_len, msg,
	             sizeof(msg));
	csr_req_clear(&req);
	if (r < 0) {
		kcmd_log_error("Sync %s failed with : error auto signing csr: %s", name, msg);
		return r;
	}
	gnutls_datum_t in = {.data = (unsigned char *)cert, .size = (unsigned)cert_len}, b64 = {0};
	r = gnutls_base64_encode2(&in, &b64) < 0 ? -ENOMEM : 0;
	free(cert);
	if (r < 0)
		return r;
	char *b = strndup((const char *)b64.data, b64.size);
	gnutls_free(b64.data);
	if (!b)
		return -ENOMEM;
	if (!status)
		status = cJSON_AddObjectToObject(o, "status");
	cJSON_DeleteItemFromObjectCaseSensitive(status, "certificate");
	cJSON_AddStringToObject(status, "certificate", b);
	free(b);
	if ((r = update_status(sg->ctx, name, o)) < 0) {
		kcmd_log_error("Sync %s failed with : error updating signature for csr: %s", name,
		               reason(r));
		return r;
	}
	kcmd_log_v(2, "CSR %s signed by %s", name, csr_signers[s].signer_name);
	return 0;
}

static void signing_sync(void *state, size_t q, const char *key, struct wk_result *res)
{
	struct signing *sg = state;
	struct shm_obj *o = NULL;
	size_t len = 0;
	int r;

	*res = (struct wk_result){0};
	if (q >= CSR_SIGNER_N || !*sg->s[q].cert_file)
		return; /* that signer does not run */
	if ((r = kcmd_cache_get(sg->ctx->arena, CSR_GROUP, CSR_RESOURCE, NULL, key, &o)) < 0) {
		if (r != -ENOENT)
			res->err = r;
		else
			kcmd_log_v(2, "csr has been deleted: %s", key);
		return;
	}
	const char *json = kcmd_obj_json(o, &len);
	cJSON *j = json ? cJSON_ParseWithLength(json, len) : NULL;
	kcmd_obj_free(o);
	if (!j)
		return;
	const cJSON *cert = cJSON_GetObjectItemCaseSensitive(
	        cJSON_GetObjectItemCaseSensitive(j, "status"), "certificate");
	const cJSON *sn = cJSON_GetObjectItemCaseSensitive(
	        cJSON_GetObjectItemCaseSensitive(j, "spec"), "signerName");
	/* len(status.certificate) > 0: nothing to do; a CSR of another signer: not this loop's */
	if (!(cJSON_IsString(cert) && *cert->valuestring) && cJSON_IsString(sn) &&
	    csr_signer_lookup(sn->valuestring) == (int)q)
		res->err = handle(sg, (enum csr_signer)q, key, j);
	cJSON_Delete(j);
}

static const char *flag_get(void *ud, const char *name)
{
	const char *v = kcmd_flag_string(ud, name);
	return v ? v : "";
}

static int signing_init(struct wk_ctx *ctx, void **ret_state)
{
	struct signing *sg = calloc(1, sizeof(*sg));
	const char *cert[CSR_SIGNER_N], *key[CSR_SIGNER_N];
	char msg[256];

	if (!sg)
		return -ENOMEM;
	sg->ctx = ctx;
	sg->ttl_ns = (int64_t)kcmd_flag_duration_us(ctx->flags, "cluster-signing-duration") * 1000;
	if (csr_signer_files(flag_get, (void *)ctx->flags, cert, key, msg, sizeof(msg)) < 0) {
		free(sg);
		return -EINVAL; /* the manager refused to start (mgr_precheck) */
	}
	int any = csr_signer_files(flag_get, (void *)ctx->flags, cert, key, msg, sizeof(msg));
	for (int i = 0; i < CSR_SIGNER_N; i++) {
		sg->s[i].cert_file = cert[i];
		sg->s[i].key_file = key[i];
		if (*cert[i] && current_ca(&sg->s[i], csr_signers[i].loop, msg, sizeof(msg)) < 0)
			kcmd_log_error("%s: %s", csr_signers[i].loop, msg);
		else if (any > 0 && !*cert[i] && ctx->process &&
		         !strcmp(ctx->process, "worker-" CSR_SIGNING_CONTROLLER "-0")) /* once */
			kcmd_log_info(
			        "Skipping CSR signer controller because specific files were "
			        "specified for other signers and not this one controller=\"%s\"",
			        csr_signers[i].signer_name);
	}
	*ret_state = sg;
	return 0;
}

static const struct wk_controller signing_worker = {
        .name = CSR_SIGNING_CONTROLLER,
        .queues = signing_queue_names,
        .init = signing_init,
        .sync = signing_sync,
};

/* kcm refuses to start when the files cannot be used: both kinds given, a pair with a
 * missing half, a file that does not load */
static int signing_precheck(const struct kcmd_flag_values *v, const struct kube_config *kcfg,
                            char *err, size_t errlen)
{
	const char *cert[CSR_SIGNER_N], *key[CSR_SIGNER_N];
	char msg[256] = "";
	int r;

	(void)kcfg;
	if ((r = csr_signer_files(flag_get, (void *)v, cert, key, msg, sizeof(msg))) < 0) {
		snprintf(err, errlen, "error starting %s: %s", CSR_SIGNING_CONTROLLER, msg);
		return -EEXIST;
	}
	if (r == 0) {
		snprintf(err, errlen, "%s", msg); /* logged; the controller does nothing */
		return 0;
	}
	for (int i = 0; i < CSR_SIGNER_N; i++) {
		struct signer_state st = {.cert_file = cert[i], .key_file = key[i]};
		if (!*cert[i] && !*key[i])
			continue;
		if (!*cert[i] || !*key[i]) { /* NewDynamicServingContentFromFiles */
			snprintf(msg, sizeof(msg), "missing filename for serving cert");
			r = -EINVAL;
		} else {
			r = current_ca(&st, csr_signers[i].loop, msg, sizeof(msg));
		}
		csr_ca_clear(&st.ca);
		free(st.raw_cert);
		free(st.raw_key);
		if (r < 0) {
			snprintf(err, errlen,
			         "error starting %s: failed to start %s certificate "
			         "controller: %s",
			         CSR_SIGNING_CONTROLLER, csr_signers[i].signer_name, msg);
			return -EEXIST;
		}
	}
	return 0;
}

/* five per signer loop upstream (goroutines); here five processes serve the four queues, and
 * one when no signer runs (it has nothing to do) */
static int signing_workers(const struct kcmd_flag_values *v)
{
	const char *cert[CSR_SIGNER_N], *key[CSR_SIGNER_N];
	char msg[256];
	return csr_signer_files(flag_get, (void *)v, cert, key, msg, sizeof(msg)) > 0 ? 5 : 1;
}

/* ---- the descriptor ------------------------------------------------------------------------ */
static const char *const signing_aliases[] = {"csrsigning", NULL};
static const struct kcmd_watch signing_watches[] = {
        {CSR_GROUP, "v1", CSR_RESOURCE, "CertificateSigningRequest", KCMD_CACHE_OBJECT, false},
};
static const struct kcmd_queue signing_queues[] = {
        {.name = "csrsigning-kubelet-serving"},
        {.name = "csrsigning-kubelet-client"},
        {.name = "csrsigning-kube-apiserver-client"},
        {.name = "csrsigning-legacy-unknown"},
};
#define FILE_FLAG(n, h)                                                                            \
	{                                                                                          \
		.name = n, .type = KCMD_FLAG_STRING, .def = "", .help = h                          \
	}
static const struct kcmd_flag signing_flags[] = {
        FILE_FLAG("cluster-signing-cert-file",
                  "Filename containing a PEM-encoded X509 CA certificate used to issue "
                  "cluster-scoped certificates.  If specified, no more specific "
                  "--cluster-signing-* flag may be specified."),
        FILE_FLAG("cluster-signing-key-file",
                  "Filename containing a PEM-encoded RSA or ECDSA private key used to sign "
                  "cluster-scoped certificates.  If specified, no more specific "
                  "--cluster-signing-* flag may be specified."),
        FILE_FLAG("cluster-signing-kubelet-serving-cert-file",
                  "Filename containing a PEM-encoded X509 CA certificate used to issue "
                  "certificates for the kubernetes.io/kubelet-serving signer.  If specified, "
                  "--cluster-signing-{cert,key}-file must not be set."),
        FILE_FLAG("cluster-signing-kubelet-serving-key-file",
                  "Filename containing a PEM-encoded RSA or ECDSA private key used to sign "
                  "certificates for the kubernetes.io/kubelet-serving signer.  If specified, "
                  "--cluster-signing-{cert,key}-file must not be set."),
        FILE_FLAG("cluster-signing-kubelet-client-cert-file",
                  "Filename containing a PEM-encoded X509 CA certificate used to issue "
                  "certificates for the kubernetes.io/kube-apiserver-client-kubelet signer.  "
                  "If specified, --cluster-signing-{cert,key}-file must not be set."),
        FILE_FLAG("cluster-signing-kubelet-client-key-file",
                  "Filename containing a PEM-encoded RSA or ECDSA private key used to sign "
                  "certificates for the kubernetes.io/kube-apiserver-client-kubelet signer.  "
                  "If specified, --cluster-signing-{cert,key}-file must not be set."),
        FILE_FLAG("cluster-signing-kube-apiserver-client-cert-file",
                  "Filename containing a PEM-encoded X509 CA certificate used to issue "
                  "certificates for the kubernetes.io/kube-apiserver-client signer.  If "
                  "specified, --cluster-signing-{cert,key}-file must not be set."),
        FILE_FLAG("cluster-signing-kube-apiserver-client-key-file",
                  "Filename containing a PEM-encoded RSA or ECDSA private key used to sign "
                  "certificates for the kubernetes.io/kube-apiserver-client signer.  If "
                  "specified, --cluster-signing-{cert,key}-file must not be set."),
        FILE_FLAG("cluster-signing-legacy-unknown-cert-file",
                  "Filename containing a PEM-encoded X509 CA certificate used to issue "
                  "certificates for the kubernetes.io/legacy-unknown signer.  If specified, "
                  "--cluster-signing-{cert,key}-file must not be set."),
        FILE_FLAG("cluster-signing-legacy-unknown-key-file",
                  "Filename containing a PEM-encoded RSA or ECDSA private key used to sign "
                  "certificates for the kubernetes.io/legacy-unknown signer.  If specified, "
                  "--cluster-signing-{cert,key}-file must not be set."),
        {.name = "cluster-signing-duration",
         .type = KCMD_FLAG_DURATION,
         .def = "8760h0m0s",
         .help = "The max length of duration signed certificates will be given.  Individual "
                 "CSRs may request shorter certs by setting spec.expirationSeconds."},
};

const struct kcmd_controller kcmd_csr_signing_controller = {
        .abi = KCMD_CONTROLLER_ABI,
        .name = CSR_SIGNING_CONTROLLER,
        .aliases = signing_aliases,
        .enabled_by_default = true,
        .service_account = "certificate-controller",
        .cluster_scoped_keys = true,
        .watches = signing_watches,
        .n_watches = 1,
        .queues = signing_queues,
        .n_queues = CSR_SIGNER_N,
        .flags = signing_flags,
        .n_flags = sizeof(signing_flags) / sizeof(signing_flags[0]),
        .worker_count = signing_workers,
        .mgr_precheck = signing_precheck,
        .handlers = &signing_handlers,
        .worker = &signing_worker,
};
