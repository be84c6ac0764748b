/* SPDX-License-Identifier: Apache-2.0 */
/* kube/watch.h - incremental framing of a JSON watch stream.
 *
 * The apiserver streams one JSON object per watch event ({"type":..,"object":..}), each followed
 * by a newline. Bytes arrive in arbitrary chunks (TLS records, HTTP/2 DATA frames), so an event
 * can be split anywhere, including inside a string or an escape. The splitter tracks only string
 * and nesting state across chunks (never re-scans), and hands each complete top-level object to
 * a callback: straight from the caller's chunk when the event lies inside it (no copy), from its
 * own buffer when the event spans chunks. It does not validate JSON beyond framing; the decoder
 * does that. Frames are recognised by braces, not newlines, so a stream without newlines (or with
 * \r\n) frames identically.
 *
 * A protobuf watch stream (Content-Type application/vnd.kubernetes.protobuf;stream=watch) is
 * framed by length instead: each event is a 4-byte big-endian length and that many bytes (a
 * metav1.WatchEvent message, kube/proto.h). kube_watch_splitter_set_framing() switches a splitter
 * to that before its first chunk; delivery (zero-copy when a frame lies inside one chunk, the
 * buffer otherwise), max_event and the sticky error work the same.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>

struct kube_watch_splitter {
	char *buf; /* bytes of the event in progress that arrived in earlier chunks */
	size_t len, cap;
	size_t max_event; /* larger events fail with -E2BIG */
	int depth;        /* brace/bracket nesting inside the event in progress */
	int in_string, escape;
	int failed; /* sticky error */
	/* KUBE_WATCH_FRAMING_LENGTH only */
	int framing;
	bool framing_set;     /* kube_watch_splitter_set_framing() was called */
	unsigned char hdr[4]; /* length prefix bytes seen so far */
	unsigned hdr_n;
	size_t want; /* length of the frame in progress (valid when hdr_n == 4) */
};

enum kube_watch_framing {
	KUBE_WATCH_FRAMING_JSON = 0, /* top-level JSON objects (the default) */
	KUBE_WATCH_FRAMING_LENGTH,   /* 4-byte big-endian length prefixed frames (protobuf) */
};

/* max_event 0 means the default (64 MiB). */
void kube_watch_splitter_init(struct kube_watch_splitter *s, size_t max_event);
void kube_watch_splitter_free(struct kube_watch_splitter *s);

/* Selects the framing; only before the first kube_watch_splitter_feed(). */
void kube_watch_splitter_set_framing(struct kube_watch_splitter *s, enum kube_watch_framing f);

/* Called once per complete event; the bytes are valid only during the call. A negative return
 * stops feeding and is returned by kube_watch_splitter_feed(). */
typedef int (*kube_event_fn)(const char *json, size_t len, void *userdata);

/* Feeds one chunk. Returns the number of events delivered, or a negative errno: -EBADMSG (bytes
 * outside an object, unbalanced closer; never for length framing), -E2BIG (event over max_event),
 * -ENOMEM, or the callback's error. After an error the splitter stays failed. */
int kube_watch_splitter_feed(struct kube_watch_splitter *s, const void *data, size_t n,
                             kube_event_fn fn, void *userdata);

/* At end of stream: 0 if no partial event is pending, -EPIPE otherwise (a truncated event). */
int kube_watch_splitter_finish(const struct kube_watch_splitter *s);
