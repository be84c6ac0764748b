/* SPDX-License-Identifier: Apache-2.0 */
/*
 * kube/tests/canned-http.h - a canned HTTP/1.1 apiserver for the unit tests of code that sends
 * requests (header-only, static functions): a connection's requests are framed by their
 * Content-Length and handed whole to the test's handler, which answers on the connection.
 * The test owns the listening socket and the accept loop (each keeps its own bookkeeping).
 */
#pragma once
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* One whole request: method, path (with the query) and body (NUL-terminated copies). */
typedef void (*canned_http_fn)(int fd, const char *method, const char *path, const char *body);

/* An answer with a JSON body of the given HTTP code. */
static inline void canned_http_answer(int fd, int code, const char *body)
{
	char hdr[256];
	int n = snprintf(
	        hdr, sizeof hdr,
	        "HTTP/1.1 %d X\r\nContent-Type: application/json\r\nContent-Length: %zu\r\n\r\n",
	        code, strlen(body));
	(void)!send(fd, hdr, (size_t)n, MSG_NOSIGNAL);
	(void)!send(fd, body, strlen(body), MSG_NOSIGNAL);
}

/* Serves the requests of connection fd, in order, until the peer closes it; then closes fd. */
static inline void canned_http_serve(int fd, canned_http_fn fn)
{
	enum { CAP = 65536 };
	char *buf = malloc(CAP);
	size_t have = 0;
	for (; buf;) {
		ssize_t n = recv(fd, buf + have, CAP - 1 - have, 0);
		if (n <= 0)
			break;
		have += (size_t)n;
		buf[have] = 0;
		char *eoh;
		while ((eoh = strstr(buf, "\r\n\r\n"))) {
			size_t hl = (size_t)(eoh - buf) + 4, cl = 0;
			char *p = strcasestr(buf, "\r\nContent-Length:");
			if (p && p < eoh)
				cl = strtoul(p + 17, NULL, 10);
			if (have < hl + cl)
				break;
			char method[16] = "", path[512] = "";
			sscanf(buf, "%15s %511s", method, path);
			char *body = strndup(buf + hl, cl);
			fn(fd, method, path, body ? body : "");
			free(body);
			memmove(buf, buf + hl + cl, have - hl - cl);
			have -= hl + cl;
			buf[have] = 0;
		}
	}
	free(buf);
	close(fd);
}
