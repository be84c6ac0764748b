/* SPDX-License-Identifier: Apache-2.0 */
/* kube/fuzz/fuzz-proto.c - the protobuf decoders (kube/proto.h) and the length-framed watch
 * splitter. The first input byte picks what is fuzzed and which kind; the rest is the wire:
 *   mode 0: one object ("k8s\0" is prepended so the fuzzer starts past the magic)
 *   mode 1: a list, item by item (magic prepended)
 *   mode 2: one watch frame (a bare WatchEvent)
 *   mode 3: a length-framed watch stream, cut at a position taken from the next two bytes;
 *           invariant: the frames delivered do not depend on the cut
 * Invariants everywhere: no crash, no leak, only the documented errnos, and decoding into a
 * scratch succeeds exactly when decoding into a fresh object does. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kube/model.h"
#include "kube/proto.h"
#include "kube/watch.h"

static const enum kube_kind kinds[] = {KUBE_KIND_POD, KUBE_KIND_REPLICASET, KUBE_KIND_PARTIAL,
                                       KUBE_KIND_STATUS};

static struct kube_scratch *scratch;

static void check_err(int r)
{
	if (r < 0 && r != -EBADMSG && r != -EPROTO && r != -E2BIG && r != -ENOMEM)
		abort();
}

static int free_item(void *obj, void *ud)
{
	(void)ud;
	kube_object_free(obj);
	return 0;
}

static int count_item(void *obj, void *ud)
{
	(void)obj;
	(*(int *)ud)++;
	return 0;
}

struct acc {
	uint64_t hash;
	int n;
	enum kube_kind kind;
};

static int on_frame(const char *buf, size_t len, void *ud)
{
	struct acc *a = ud;
	for (size_t i = 0; i < len; i++)
		a->hash = (a->hash ^ (uint8_t)buf[i]) * 1099511628211ull;
	a->hash = (a->hash ^ 0xff) * 1099511628211ull;
	a->n++;
	enum kube_watch_type t;
	void *o;
	int r = kube_proto_decode_watch_event(a->kind, buf, len, 0, &t, &o);
	check_err(r);
	if (r == 0)
		kube_object_free(o);
	return 0;
}

static int run_stream(const uint8_t *d, size_t n, size_t cut, struct acc *a)
{
	struct kube_watch_splitter s;
	kube_watch_splitter_init(&s, 1 << 16);
	kube_watch_splitter_set_framing(&s, KUBE_WATCH_FRAMING_LENGTH);
	int r = kube_watch_splitter_feed(&s, d, cut, on_frame, a);
	if (r >= 0)
		r = kube_watch_splitter_feed(&s, d + cut, n - cut, on_frame, a);
	if (r >= 0)
		r = kube_watch_splitter_finish(&s);
	kube_watch_splitter_free(&s);
	return r;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	if (!scratch && kube_scratch_new(&scratch) < 0)
		abort();
	unsigned mode = (data[0] >> 2) & 3;
	enum kube_kind kind = kinds[data[0] & 3];
	const uint8_t *d = data + 1;
	size_t n = size - 1;
	uint8_t *buf = malloc(n + KUBE_PROTO_MAGIC_LEN);
	if (!buf)
		return 0;
	memcpy(buf, KUBE_PROTO_MAGIC, KUBE_PROTO_MAGIC_LEN);
	memcpy(buf + KUBE_PROTO_MAGIC_LEN, d, n);
	size_t bn = n + KUBE_PROTO_MAGIC_LEN;

	if (mode == 0) {
		void *o, *so;
		int r = kube_proto_decode(kind, buf, bn, 0, &o);
		check_err(r);
		int rs = kube_proto_decode_scratch(scratch, kind, buf, bn,
		                                   KUBE_DECODE_ALL_ANNOTATIONS, &so);
		if ((r == 0) != (rs == 0))
			abort();
		if (r == 0)
			kube_object_free(o);
	} else if (mode == 1) {
		struct kube_list_meta m;
		int c = 0;
		int r = kube_proto_decode_list(kind, buf, bn, 0, free_item, NULL, &m);
		check_err(r);
		int rs = kube_proto_decode_list_scratch(scratch, kind, buf, bn, 0, count_item, &c,
		                                        &m);
		if ((r >= 0) != (rs >= 0) || (r >= 0 && (r != rs || c != r)))
			abort();
	} else if (mode == 2) {
		enum kube_watch_type t;
		void *o;
		int r = kube_proto_decode_watch_event(kind, d, n, 0, &t, &o);
		check_err(r);
		if (r == 0)
			kube_object_free(o);
	} else if (n >= 2) {
		size_t cut = (((size_t)d[0] << 8) | d[1]) % (n - 1);
		struct acc a = {14695981039346656037ull, 0, kind}, b = a;
		int ra = run_stream(d + 2, n - 2, n - 2, &a);
		int rb = run_stream(d + 2, n - 2, cut < n - 2 ? cut : n - 2, &b);
		if ((ra < 0) != (rb < 0))
			abort();
		if (ra >= 0 && (a.n != b.n || a.hash != b.hash))
			abort();
	}
	free(buf);
	return 0;
}
