/* SPDX-License-Identifier: Apache-2.0 */
/* kube/fuzz/fuzz-watch.c - the watch splitter. The input is cut at positions taken from its first
 * bytes; invariant: the events seen do not depend on where the stream was cut. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kube/model.h"
#include "kube/watch.h"

struct acc {
	uint64_t hash;
	int n;
};

static int on_event(const char *json, size_t len, void *ud)
{
	struct acc *a = ud;
	for (size_t i = 0; i < len; i++)
		a->hash = (a->hash ^ (uint8_t)json[i]) * 1099511628211ull;
	a->hash = (a->hash ^ 0xff) * 1099511628211ull;
	a->n++;
	enum kube_watch_type t;
	void *o;
	if (kube_decode_watch_event(KUBE_KIND_POD, json, len, 0, &t, &o) == 0)
		kube_object_free(o);
	return 0;
}

static int run(const uint8_t *d, size_t n, size_t cut, struct acc *a)
{
	struct kube_watch_splitter s;
	kube_watch_splitter_init(&s, 1 << 16);
	int r = kube_watch_splitter_feed(&s, d, cut, on_event, a);
	if (r >= 0)
		r = kube_watch_splitter_feed(&s, d + cut, n - cut, on_event, a);
	if (r >= 0)
		r = kube_watch_splitter_finish(&s);
	kube_watch_splitter_free(&s);
	return r;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 2)
		return 0;
	size_t cut = (((size_t)data[0] << 8) | data[1]) % (size - 1);
	const uint8_t *d = data + 2;
	size_t n = size - 2;
	struct acc a = {14695981039346656037ull, 0}, b = a;
	int ra = run(d, n, 0 < n ? n : 0, &a);
	int rb = run(d, n, cut < n ? cut : n, &b);
	if ((ra < 0) != (rb < 0))
		abort();
	if (ra >= 0 && (a.n != b.n || a.hash != b.hash))
		abort();
	return 0;
}
