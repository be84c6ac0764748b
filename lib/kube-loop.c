/* SPDX-License-Identifier: Apache-2.0 */
/*
 * lib/kube-loop.c: libcurl-multi sockets and timer of a kube_client as ipc_loop sources.
 *
 * Sockets are kept in a small table (a process has a handful: HTTP/2 multiplexes every call on
 * one connection per apiserver). A socket callback may arrive for an fd whose source was just
 * removed, so lookups tolerate misses.
 */
#include "lib/kube-loop.h"

#include <errno.h>
#include <poll.h>
#include <stdlib.h>

struct sock {
	int fd;
	struct ipc_source *src;
};

struct kube_loop {
	struct ipc_loop *loop;
	struct kube_client *client;
	struct ipc_source *timer;
	struct sock *socks;
	size_t n, cap;
	int error;
};

static int on_ready(struct ipc_source *s, int fd, uint32_t revents, void *userdata)
{
	struct kube_loop *kl = userdata;
	unsigned ev = 0;

	(void)s;
	if (revents & (POLLIN | POLLHUP | POLLERR))
		ev |= KUBE_POLL_IN;
	if (revents & (POLLOUT | POLLERR))
		ev |= KUBE_POLL_OUT;
	kube_client_socket_action(kl->client, fd, ev);
	return 0;
}

static int on_timer(struct ipc_source *s, uint64_t now, void *userdata)
{
	struct kube_loop *kl = userdata;

	(void)s;
	(void)now;
	kube_client_timeout(kl->client);
	return 0;
}

static struct sock *find(struct kube_loop *kl, int fd)
{
	for (size_t i = 0; i < kl->n; i++)
		if (kl->socks[i].fd == fd)
			return &kl->socks[i];
	return NULL;
}

static void sock_cb(int fd, unsigned events, void *userdata)
{
	struct kube_loop *kl = userdata;
	struct sock *s = find(kl, fd);
	uint32_t pe = 0;
	int r = 0;

	if (events & KUBE_POLL_REMOVE) {
		if (s) {
			ipc_source_free(s->src);
			*s = kl->socks[--kl->n];
		}
		return;
	}
	if (events & KUBE_POLL_IN)
		pe |= POLLIN;
	if (events & KUBE_POLL_OUT)
		pe |= POLLOUT;
	if (s) {
		r = ipc_source_set_io_events(s->src, pe);
	} else {
		if (kl->n == kl->cap) {
			size_t cap = kl->cap ? kl->cap * 2 : 8;
			struct sock *n = realloc(kl->socks, cap * sizeof(*n));
			if (!n) {
				r = -ENOMEM;
				goto out;
			}
			kl->socks = n;
			kl->cap = cap;
		}
		s = &kl->socks[kl->n];
		s->fd = fd;
		r = ipc_loop_add_io(kl->loop, &s->src, fd, pe, on_ready, kl);
		if (r == 0)
			kl->n++;
	}
out:
	if (r < 0 && !kl->error)
		kl->error = r;
}

static void timer_cb(long timeout_ms, void *userdata)
{
	struct kube_loop *kl = userdata;
	uint64_t when = timeout_ms < 0
	                        ? 0
	                        : ipc_now_usec() + (uint64_t)timeout_ms * 1000 + (timeout_ms == 0);
	int r = ipc_source_set_time(kl->timer, when);

	if (r < 0 && !kl->error)
		kl->error = r;
}

int kube_loop_attach(struct ipc_loop *loop, struct kube_client *c, struct kube_loop **ret)
{
	struct kube_loop *kl = calloc(1, sizeof(*kl));
	int r;

	if (!kl)
		return -ENOMEM;
	kl->loop = loop;
	kl->client = c;
	r = ipc_loop_add_timer(loop, &kl->timer, 0, on_timer, kl);
	if (r < 0) {
		free(kl);
		return r;
	}
	kube_client_set_loop(c, sock_cb, timer_cb, kl);
	*ret = kl;
	return 0;
}

struct kube_loop *kube_loop_detach(struct kube_loop *kl)
{
	if (!kl)
		return NULL;
	kube_client_set_loop(kl->client, NULL, NULL, NULL);
	for (size_t i = 0; i < kl->n; i++)
		ipc_source_free(kl->socks[i].src);
	ipc_source_free(kl->timer);
	free(kl->socks);
	free(kl);
	return NULL;
}

int kube_loop_error(const struct kube_loop *kl)
{
	return kl->error;
}
