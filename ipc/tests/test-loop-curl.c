/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test-loop-curl: a libcurl multi driven entirely by ipc/loop (socket callback -> io sources,
 * timer callback -> a timer source), the way kube/ runs its HTTP client. A forked child serves
 * HTTP on 127.0.0.1; several transfers run concurrently; both backends. 0 pass, 1 fail.
 */
#include "ipc/loop.h"
#include "ipc/tests/tests.h"

#include <arpa/inet.h>
#include <curl/curl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#define NXFER 4

struct glue {
	struct ipc_loop *loop;
	CURLM *multi;
	struct ipc_source *timer;
	int running;
	int done;
	int sockets_seen;
};

struct xfer {
	char buf[256];
	size_t len;
};

static size_t on_body(char *p, size_t sz, size_t n, void *ud)
{
	struct xfer *x = ud;
	size_t k = sz * n;
	if (x->len + k < sizeof(x->buf)) {
		memcpy(x->buf + x->len, p, k);
		x->len += k;
	}
	return k;
}

static void check_done(struct glue *g)
{
	CURLMsg *m;
	int left;
	while ((m = curl_multi_info_read(g->multi, &left)))
		if (m->msg == CURLMSG_DONE) {
			CHECK_EQ(m->data.result, CURLE_OK);
			g->done++;
		}
}

static int on_sock_ready(struct ipc_source *s, int fd, uint32_t revents, void *ud)
{
	(void)s;
	struct glue *g = ud;
	int ev = 0;
	if (revents & POLLIN)
		ev |= CURL_CSELECT_IN;
	if (revents & POLLOUT)
		ev |= CURL_CSELECT_OUT;
	if (revents & (POLLERR | POLLHUP))
		ev |= CURL_CSELECT_ERR;
	curl_multi_socket_action(g->multi, fd, ev, &g->running);
	check_done(g);
	return 0;
}

/* CURLMOPT_SOCKETFUNCTION: what curl wants to wait for on fd */
static int sock_cb(CURL *e, curl_socket_t fd, int what, void *userp, void *socketp)
{
	(void)e;
	struct glue *g = userp;
	struct ipc_source *src = socketp;
	if (what == CURL_POLL_REMOVE) {
		ipc_source_free(src);
		curl_multi_assign(g->multi, fd, NULL);
		return 0;
	}
	uint32_t events = (what & CURL_POLL_IN ? POLLIN : 0) | (what & CURL_POLL_OUT ? POLLOUT : 0);
	if (!src) {
		CHECK_EQ(ipc_loop_add_io(g->loop, &src, fd, events, on_sock_ready, g), 0);
		curl_multi_assign(g->multi, fd, src);
		g->sockets_seen++;
	} else
		CHECK_EQ(ipc_source_set_io_events(src, events), 0);
	return 0;
}

static int on_timer(struct ipc_source *s, uint64_t now, void *ud)
{
	(void)s;
	(void)now;
	struct glue *g = ud;
	curl_multi_socket_action(g->multi, CURL_SOCKET_TIMEOUT, 0, &g->running);
	check_done(g);
	return 0;
}

/* CURLMOPT_TIMERFUNCTION: -1 = delete, else fire in ms */
static int timer_cb(CURLM *m, long ms, void *userp)
{
	(void)m;
	struct glue *g = userp;
	CHECK_EQ(ipc_source_set_time(g->timer,
	                             ms < 0 ? 0 : ipc_now_usec() + (uint64_t)ms * 1000 + 1),
	         0);
	return 0;
}

static void serve(int lfd)
{
	for (int i = 0; i < NXFER; i++) {
		int c = accept(lfd, NULL, NULL);
		if (c < 0)
			_exit(1);
		char req[2048];
		size_t got = 0;
		while (got < sizeof(req) - 1) { /* read up to the end of the headers */
			ssize_t r = read(c, req + got, sizeof(req) - 1 - got);
			if (r <= 0)
				break;
			got += (size_t)r;
			req[got] = 0;
			if (strstr(req, "\r\n\r\n"))
				break;
		}
		usleep(5000 * (useconds_t)(NXFER - i)); /* replies overlap in time */
		const char *resp =
		        "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nConnection: close\r\n\r\nhello";
		ssize_t w = write(c, resp, strlen(resp));
		(void)w;
		close(c);
	}
	_exit(0);
}

static int run(enum ipc_loop_backend_kind kind)
{
	struct glue g = {0};
	if (ipc_loop_new(&g.loop, kind) < 0)
		return 77;
	fprintf(stderr, "backend %s\n", ipc_loop_backend(g.loop));
	int lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	CHECK(lfd >= 0);
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	CHECK_EQ(bind(lfd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	CHECK_EQ(listen(lfd, 16), 0);
	socklen_t sl = sizeof(sa);
	CHECK_EQ(getsockname(lfd, (struct sockaddr *)&sa, &sl), 0);
	pid_t srv = fork();
	CHECK(srv >= 0);
	if (srv == 0)
		serve(lfd);
	close(lfd);

	g.multi = curl_multi_init();
	CHECK(g.multi);
	CHECK_EQ(ipc_loop_add_timer(g.loop, &g.timer, 0, on_timer, &g), 0);
	curl_multi_setopt(g.multi, CURLMOPT_SOCKETFUNCTION, sock_cb);
	curl_multi_setopt(g.multi, CURLMOPT_SOCKETDATA, &g);
	curl_multi_setopt(g.multi, CURLMOPT_TIMERFUNCTION, timer_cb);
	curl_multi_setopt(g.multi, CURLMOPT_TIMERDATA, &g);
	char url[64];
	snprintf(url, sizeof(url), "http://127.0.0.1:%u/x", ntohs(sa.sin_port));
	struct xfer xs[NXFER] = {0};
	CURL *es[NXFER];
	for (int i = 0; i < NXFER; i++) {
		es[i] = curl_easy_init();
		curl_easy_setopt(es[i], CURLOPT_URL, url);
		curl_easy_setopt(es[i], CURLOPT_WRITEFUNCTION, on_body);
		curl_easy_setopt(es[i], CURLOPT_WRITEDATA, &xs[i]);
		curl_easy_setopt(es[i], CURLOPT_TIMEOUT_MS, 10000L);
		curl_multi_add_handle(g.multi, es[i]);
	}
	uint64_t deadline = ipc_now_usec() + 15000000;
	while (g.done < NXFER && ipc_now_usec() < deadline)
		CHECK(ipc_loop_run_once(g.loop, 100000) >= 0);
	CHECK_EQ(g.done, NXFER);
	CHECK(g.sockets_seen >= NXFER);
	for (int i = 0; i < NXFER; i++) {
		CHECK_EQ(xs[i].len, 5);
		CHECK(memcmp(xs[i].buf, "hello", 5) == 0);
		curl_multi_remove_handle(g.multi, es[i]);
		curl_easy_cleanup(es[i]);
	}
	curl_multi_cleanup(g.multi);
	ipc_source_free(g.timer);
	ipc_loop_free(g.loop);
	int st;
	CHECK_EQ(waitpid(srv, &st, 0), srv);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	return 0;
}

int main(void)
{
	CHECK_EQ(curl_global_init(CURL_GLOBAL_DEFAULT), 0);
	int a = run(IPC_LOOP_BACKEND_URING);
	CHECK(a == 0 || a == 77);
	CHECK_EQ(run(IPC_LOOP_BACKEND_EPOLL), 0);
	curl_global_cleanup();
	fprintf(stderr, "ok\n");
	return 0;
}
