/* SPDX-License-Identifier: Apache-2.0 */
/* kube/json.h - internal: a pull scanner over a JSON buffer and a bump arena.
 *
 * Not part of the public API; used by kube/decode.c, kube/kubeconfig.c (ExecCredential) and
 * kube/errors.c. The scanner never builds a tree: the decoder asks for the shape it expects
 * ("an object", "the next key", "a string", "an int") and skips every value it does not want
 * with js_skip(), which validates the skipped text as strictly as the kept text.
 *
 * Error model: the first error is sticky in js->err (a negative errno); every call after that
 * returns it again, so decoders can be written without checking every call and test once.
 *   -EBADMSG  not JSON (syntax error, truncated input, bad escape)
 *   -EPROTO   valid JSON, wrong shape for the field (string where an object was expected, a
 *             fraction in an integer, an integer out of range)
 *   -E2BIG    nesting deeper than JS_MAX_DEPTH
 *   -ENOMEM   arena allocation failed
 * JSON null is accepted wherever an object, array, string, number or bool is expected and means
 * "absent", as Go's encoding/json treats it.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define JS_MAX_DEPTH 512

/* ---- arena --------------------------------------------------------------------------------- */
/* A decoded object lives in one arena: the object struct is the first allocation of the first
 * chunk, so freeing the object is freeing the chunk list. Chunks are never moved, so pointers
 * into the arena stay valid for the object's life. */
struct js_chunk {
	struct js_chunk *next;
	size_t cap;
	size_t used;
	_Alignas(16) unsigned char data[];
};

struct js_arena {
	struct js_chunk *head; /* first chunk: holds the object */
	struct js_chunk *cur;  /* chunk being filled */
};

int js_arena_init(struct js_arena *a, size_t first_cap);
void *js_alloc(struct js_arena *a, size_t n); /* 8-aligned, zeroed; NULL on ENOMEM */
void *js_memdup(struct js_arena *a, const void *p, size_t n);
char *js_strndup(struct js_arena *a, const char *s, size_t n); /* NUL-terminated copy */
void js_arena_free(struct js_arena *a);
/* Empties every chunk but keeps them for reuse (scratch decoding). */
void js_arena_reset(struct js_arena *a);
/* The arena owning an object returned by js_arena_init's first js_alloc. */
void js_arena_free_obj(void *obj);
size_t js_arena_bytes(const struct js_arena *a);

/* What a struct kube_scratch (kube/model.h) is: one arena reused by every decode into it (the
 * JSON decoders in kube/decode.c and the protobuf ones in kube/proto.c). */
struct kube_scratch {
	struct js_arena arena;
};

/* ---- scanner ------------------------------------------------------------------------------- */
struct js {
	const unsigned char *p;
	const unsigned char *end;
	int depth;
	int err;
	struct js_arena *arena; /* where js_str() copies strings */
	char keybuf[256];       /* unescaped key when a key carries escapes */
};

void js_init(struct js *j, const void *buf, size_t len, struct js_arena *arena);
int js_fail(struct js *j, int err); /* records err if none yet; returns j->err */
/* Skips whitespace; returns the next byte or 0 at the end. */
int js_peek(struct js *j);
/* true if the next value is `null` (consumed). */
bool js_null(struct js *j);

/* Object iteration: js_obj_begin() returns 1 if an object starts (consumed '{'), 0 for null (the
 * field is absent), <0 on error. js_obj_next() returns 1 with the next key (raw bytes between
 * the quotes; escapes are resolved into a small buffer when present), 0 at '}', <0 on error. */
int js_obj_begin(struct js *j);
int js_obj_next(struct js *j, const char **key, size_t *keylen);
int js_arr_begin(struct js *j);
int js_arr_next(struct js *j); /* 1: another element follows, 0: ']' consumed */

/* Values. Each consumes one value. null yields the "absent" result and returns 0; a present
 * value returns 1. */
int js_skip(struct js *j);
int js_str(struct js *j, char **ret); /* arena copy, NUL-terminated */
int js_str_span(struct js *j, const char **s, size_t *n, bool *escaped); /* raw span, no copy */
int js_int64(struct js *j, int64_t *ret);
int js_int32(struct js *j, int32_t *ret);
int js_bool(struct js *j, bool *ret);
/* Raw text of the next value (after whitespace), validated; no copy. */
int js_raw(struct js *j, const char **s, size_t *n);

/* Unescapes a JSON string body (without quotes) of length n into out (capacity >= n + 1).
 * Returns the output length or -EBADMSG. \u0000 is rejected (strings are NUL-terminated). */
long js_unescape(const char *in, size_t n, char *out);

static inline bool js_key_is(const char *k, size_t n, const char *lit, size_t litn)
{
	return n == litn && __builtin_memcmp(k, lit, n) == 0;
}
#define JS_KEY(k, n, lit) js_key_is((k), (n), "" lit, sizeof(lit) - 1)
