/* SPDX-License-Identifier: Apache-2.0 */
/* kube/watch.c - watch stream splitter (design note in kube/watch.h). */
#include "kube/watch.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define DEFAULT_MAX_EVENT ((size_t)64 << 20)

void kube_watch_splitter_init(struct kube_watch_splitter *s, size_t max_event)
{
	memset(s, 0, sizeof(*s));
	s->max_event = max_event ? max_event : DEFAULT_MAX_EVENT;
}

void kube_watch_splitter_free(struct kube_watch_splitter *s)
{
	free(s->buf);
	s->buf = NULL;
	s->len = s->cap = 0;
}

static int append(struct kube_watch_splitter *s, const char *p, size_t n)
{
	if (s->len + n > s->max_event)
		return -E2BIG;
	if (s->len + n > s->cap) {
		size_t nc = s->cap ? s->cap : 4096;
		while (nc < s->len + n)
			nc *= 2;
		if (nc > s->max_event)
			nc = s->max_event;
		char *nb = realloc(s->buf, nc);
		if (!nb)
			return -ENOMEM;
		s->buf = nb;
		s->cap = nc;
	}
	memcpy(s->buf + s->len, p, n);
	s->len += n;
	return 0;
}

void kube_watch_splitter_set_framing(struct kube_watch_splitter *s, enum kube_watch_framing f)
{
	s->framing = f;
	s->framing_set = true;
}

/* Length framing: [4-byte big-endian length][frame]... A frame inside the chunk is handed over
 * in place; one that spans chunks is gathered in s->buf. */
static int feed_length(struct kube_watch_splitter *s, const unsigned char *p, size_t n,
                       kube_event_fn fn, void *userdata)
{
	size_t i = 0;
	int events = 0, r;
	while (i < n) {
		if (s->hdr_n < 4) {
			s->hdr[s->hdr_n++] = p[i++];
			if (s->hdr_n < 4)
				continue;
			s->want = (size_t)s->hdr[0] << 24 | (size_t)s->hdr[1] << 16 |
			          (size_t)s->hdr[2] << 8 | s->hdr[3];
			if (s->want > s->max_event)
				return s->failed = -E2BIG;
			s->len = 0;
		}
		size_t take = n - i;
		if (take > s->want - s->len)
			take = s->want - s->len;
		if (!s->len && take == s->want) {
			r = fn((const char *)p + i, take, userdata);
		} else {
			if (take && (r = append(s, (const char *)p + i, take)) < 0)
				return s->failed = r;
			if (s->len < s->want) {
				i += take;
				continue;
			}
			r = fn(s->buf, s->len, userdata);
		}
		i += take;
		s->len = 0;
		s->hdr_n = 0;
		if (r < 0)
			return s->failed = r;
		events++;
	}
	return events;
}

int kube_watch_splitter_feed(struct kube_watch_splitter *s, const void *data, size_t n,
                             kube_event_fn fn, void *userdata)
{
	const char *p = data;
	size_t i = 0, start = 0; /* start of the current event's bytes in this chunk */
	int events = 0, r;
	bool open = s->depth > 0 || s->len > 0; /* an event began in an earlier chunk */

	if (s->failed)
		return s->failed;
	if (!fn || (!data && n))
		return -EINVAL;
	if (s->framing == KUBE_WATCH_FRAMING_LENGTH)
		return feed_length(s, data, n, fn, userdata);
	while (i < n) {
		char c = p[i];
		if (!open) {
			if (c == ' ' || c == '\n' || c == '\r' || c == '\t') {
				i++;
				continue;
			}
			if (c != '{')
				return s->failed = -EBADMSG;
			open = true;
			start = i;
			s->depth = 0;
		}
		if (s->in_string) {
			/* fast path: run to the next quote or backslash */
			if (s->escape) {
				s->escape = 0;
				i++;
				continue;
			}
			const char *q = p + i;
			while (q < p + n && *q != '"' && *q != '\\')
				q++;
			i = (size_t)(q - p);
			if (i >= n)
				break;
			if (*q == '\\')
				s->escape = 1;
			else
				s->in_string = 0;
			i++;
			continue;
		}
		i++;
		if (c == '"') {
			s->in_string = 1;
		} else if (c == '{' || c == '[') {
			if (++s->depth > 100000)
				return s->failed = -E2BIG;
		} else if (c == '}' || c == ']') {
			if (--s->depth < 0)
				return s->failed = -EBADMSG;
			if (s->depth == 0) {
				/* complete event: bytes [start, i) of this chunk after s->buf */
				if (s->len) {
					if ((r = append(s, p + start, i - start)) < 0)
						return s->failed = r;
					r = fn(s->buf, s->len, userdata);
					s->len = 0;
				} else {
					if (i - start > s->max_event)
						return s->failed = -E2BIG;
					r = fn(p + start, i - start, userdata);
				}
				if (r < 0)
					return s->failed = r;
				events++;
				open = false;
			}
		}
	}
	if (open && (r = append(s, p + start, n - start)) < 0)
		return s->failed = r;
	return events;
}

int kube_watch_splitter_finish(const struct kube_watch_splitter *s)
{
	if (s->failed)
		return s->failed;
	if (s->framing == KUBE_WATCH_FRAMING_LENGTH)
		return s->hdr_n ? -EPIPE : 0;
	return (s->len || s->depth || s->in_string) ? -EPIPE : 0;
}
