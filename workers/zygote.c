/* SPDX-License-Identifier: Apache-2.0 */
/*
 * workers/zygote.c: `kcmd-worker --zygote`, the process every dispatcher and worker is forked
 * from (the protocol, and why, in lib/zygote-abi.h; the client is manager/zygote.c).
 *
 * The zygote is single-threaded and stays so: it loads the program's libraries (the loader
 * relocates them once, here), runs curl_global_init, and then only reads a request, forks and
 * answers. It creates no loop, client or thread, so a child forked from it starts as clean as an
 * exec'd program, minus the pages it shares with the zygote until it writes them.
 *
 * Rejected: forking the children from the manager itself (it has threads, an HTTPS server, a
 * loop and the Lease's client; a child would inherit their locks and fds), and clone3 with
 * CLONE_PARENT from the zygote (a raw clone leaves glibc's thread descriptor with the zygote's
 * tid, which the robust process-shared locks of the workers record as their owner).
 */
#include <curl/curl.h>
#include <errno.h>
#include <signal.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/zygote-abi.h"
#include "workers/zygote.h"

#define MAX_STRINGS  4096 /* argc + envc; a request with more is refused (-E2BIG) */
#define REPARENT_MAX 2000 /* x 0.5 ms: the child's wait for the manager to become its parent */

extern char **environ;

static char *area;         /* this process's argv area, which a child's argv is written over */
static size_t area_sz;     /* its bytes */
static char *env_area;     /* its environment area, which a child's environment is written over */
static size_t env_area_sz; /* its bytes (0: no room, every request with an environment refused) */
static unsigned char msg[KCMD_ZYGOTE_MAX_MSG];

struct request {
	struct kcmd_zygote_req h;
	char **strings; /* argc + envc, into msg */
	int fds[KCMD_ZYGOTE_MAX_FDS];
	unsigned nfds;
	bool dispatcher; /* argv[0] is kcmd-dispatcher, else kcmd-worker */
};

static const char *base(const char *p)
{
	const char *s = strrchr(p, '/');

	return s ? s + 1 : p;
}

/* The child, after the second fork: becomes the requested program and never returns. Only the
 * child's own state is touched; a failure exits 127 before main, which the manager sees as an
 * exit of the child (restarted with backoff). */
static _Noreturn void become(pid_t manager, int sock, struct request *rq)
{
	int moved[KCMD_ZYGOTE_MAX_FDS], sorted[KCMD_ZYGOTE_MAX_FDS], top = sock + 1;
	unsigned argc = rq->h.argc, n = rq->nfds;
	char **av;

	/* The intermediate process has exited (the zygote waits for it before answering), so the
	 * kernel has handed this process to the nearest subreaper, the manager. */
	for (int i = 0; getppid() != manager; i++) {
		if (i >= REPARENT_MAX)
			_exit(127);
		usleep(500);
	}
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != manager)
		_exit(127);
	/* Every fd to the number it had in the manager: first all above every number in play (a
	 * target may be the number a received fd has now), then each to its target. */
	for (unsigned i = 0; i < n; i++) {
		if (rq->fds[i] + 1 > top)
			top = rq->fds[i] + 1;
		if (rq->h.fd_targets[i] + 1 > top)
			top = rq->h.fd_targets[i] + 1;
	}
	for (unsigned i = 0; i < n; i++)
		if ((moved[i] = fcntl(rq->fds[i], F_DUPFD_CLOEXEC, top)) < 0)
			_exit(127);
	for (unsigned i = 0; i < n; i++)
		if (dup2(moved[i], rq->h.fd_targets[i]) < 0) /* the target is not close-on-exec */
			_exit(127);
	/* Then every other fd goes (the zygote's socket, the received copies): 3.. minus the
	 * targets, sorted. */
	for (unsigned i = 0; i < n; i++) {
		unsigned j = i;
		for (; j > 0 && sorted[j - 1] > rq->h.fd_targets[i]; j--)
			sorted[j] = sorted[j - 1];
		sorted[j] = rq->h.fd_targets[i];
	}
	int lo = 3;
	for (unsigned i = 0; i < n; i++) {
		if (sorted[i] < lo) /* the same target twice */
			continue;
		if (sorted[i] > lo)
			close_range((unsigned)lo, (unsigned)sorted[i] - 1, 0);
		lo = sorted[i] + 1;
	}
	close_range((unsigned)lo, ~0u, 0);

	/* The environment and argv: argv is written over the zygote's argv area, NUL-padded, so
	 * /proc/<pid>/cmdline lists the child's arguments (the request was checked to fit). */
	char **ev = calloc(rq->h.envc + 1, sizeof(*ev));
	av = calloc(argc + 1, sizeof(*av));
	if (!av || !ev)
		_exit(127);
	if (env_area_sz)
		memset(env_area, 0, env_area_sz);
	for (size_t i = 0, off = 0; i < rq->h.envc; i++) {
		size_t len = strlen(rq->strings[argc + i]) + 1;
		memcpy(env_area + off, rq->strings[argc + i], len);
		ev[i] = env_area + off;
		off += len;
	}
	environ = ev;
	memset(area, 0, area_sz);
	for (size_t i = 0, off = 0; i < argc; i++) {
		size_t len = strlen(rq->strings[i]) + 1;
		memcpy(area + off, rq->strings[i], len);
		av[i] = area + off;
		off += len;
	}
	program_invocation_name = av[0];
	program_invocation_short_name = (char *)base(av[0]);
	prctl(PR_SET_NAME, program_invocation_short_name);
	exit(rq->dispatcher ? kcmd_dispatcher_main((int)argc, av)
	                    : kcmd_worker_main((int)argc, av));
}

/* Forks the intermediate process, which forks the child and exits. Returns the child's pid
 * (by then the manager's child) or -errno. */
static int spawn(int sock, struct request *rq)
{
	pid_t manager = getppid(), mid;
	int32_t v = -EIO;
	int p[2];
	ssize_t r;

	if (pipe2(p, O_CLOEXEC) < 0)
		return -errno;
	mid = fork();
	if (mid < 0) {
		v = -errno;
		close(p[0]);
		close(p[1]);
		return v;
	}
	if (mid == 0) {
		pid_t c;

		close(p[0]);
		c = fork();
		if (c == 0) {
			close(p[1]);
			become(manager, sock, rq);
		}
		v = c < 0 ? -errno : c;
		r = write(p[1], &v, sizeof(v));
		_exit(r == (ssize_t)sizeof(v) ? 0 : 1);
	}
	close(p[1]);
	while (waitpid(mid, NULL, 0) < 0 && errno == EINTR)
		;
	do
		r = read(p[0], &v, sizeof(v));
	while (r < 0 && errno == EINTR);
	close(p[0]);
	return r == (ssize_t)sizeof(v) ? v : -EIO;
}

/* Checks a received request: every length exact, the strings as many as announced. */
static int check(size_t len, struct request *rq, char **strv)
{
	const char *s, *end;
	unsigned want;
	size_t argv_len = 0, env_len = 0;

	if (len < sizeof(rq->h))
		return -EINVAL;
	memcpy(&rq->h, msg, sizeof(rq->h));
	if (rq->h.magic != KCMD_ZYGOTE_MAGIC || rq->h.version != KCMD_ZYGOTE_VERSION)
		return -EINVAL;
	if (rq->h.nfds != rq->nfds || rq->h.argc < 1 || rq->h.strings_len != len - sizeof(rq->h))
		return -EINVAL;
	if ((size_t)rq->h.argc + rq->h.envc > MAX_STRINGS)
		return -E2BIG;
	for (unsigned i = 0; i < rq->nfds; i++)
		if (rq->h.fd_targets[i] < 3 || rq->h.fd_targets[i] > 65535)
			return -EINVAL;
	want = rq->h.argc + rq->h.envc;
	s = (const char *)msg + sizeof(rq->h);
	end = (const char *)msg + len;
	for (unsigned i = 0; i < want; i++) {
		const char *z = memchr(s, 0, (size_t)(end - s));
		if (!z)
			return -EINVAL;
		strv[i] = (char *)s;
		if (i < rq->h.argc)
			argv_len += (size_t)(z - s) + 1;
		else
			env_len += (size_t)(z - s) + 1;
		s = z + 1;
	}
	strv[want] = NULL;
	if (s != end)
		return -EINVAL;
	if (argv_len > area_sz || env_len > env_area_sz)
		return -E2BIG;
	if (!strcmp(base(strv[0]), "kcmd-dispatcher"))
		rq->dispatcher = true;
	else if (strcmp(base(strv[0]), "kcmd-worker"))
		return -ENOEXEC;
	rq->strings = strv;
	return 0;
}

/* One request: 1 served (answered, whatever the answer), 0 the manager closed its end, -1 the
 * socket failed. */
static int serve_one(int sock)
{
	static char *strv[MAX_STRINGS + 1];
	union {
		struct cmsghdr h;
		char b[CMSG_SPACE(sizeof(int) * KCMD_ZYGOTE_MAX_FDS)];
	} cm;
	struct iovec iov = {.iov_base = msg, .iov_len = sizeof(msg)};
	struct msghdr mh = {.msg_iov = &iov,
	                    .msg_iovlen = 1,
	                    .msg_control = cm.b,
	                    .msg_controllen = sizeof(cm.b)};
	struct request rq = {0};
	struct kcmd_zygote_reply rep = {.magic = KCMD_ZYGOTE_MAGIC};
	ssize_t n;
	int r;

	do
		n = recvmsg(sock, &mh, MSG_CMSG_CLOEXEC);
	while (n < 0 && errno == EINTR);
	if (n <= 0)
		return n == 0 ? 0 : -1;
	for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c))
		if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
			unsigned k = (unsigned)((c->cmsg_len - CMSG_LEN(0)) / sizeof(int));
			for (unsigned i = 0; i < k; i++) {
				int fd;
				memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
				if (rq.nfds < KCMD_ZYGOTE_MAX_FDS)
					rq.fds[rq.nfds++] = fd;
				else
					close(fd);
			}
		}
	if (mh.msg_flags & (MSG_TRUNC | MSG_CTRUNC))
		r = -E2BIG;
	else
		r = check((size_t)n, &rq, strv);
	if (r == 0)
		r = spawn(sock, &rq);
	for (unsigned i = 0; i < rq.nfds; i++)
		close(rq.fds[i]);
	rep.pid = r;
	do
		n = send(sock, &rep, sizeof(rep), MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	return n == (ssize_t)sizeof(rep) ? 1 : -1;
}

int kcmd_zygote_main(int argc, char **argv)
{
	int sock = -1, r;

	for (int i = 2; i < argc; i++)
		if (!strncmp(argv[i], "--zygote-fd=", 12)) {
			char *e;
			long v = strtol(argv[i] + 12, &e, 10);
			if (*e == '\0' && v >= 3 && v <= 65535)
				sock = (int)v;
		}
	if (sock < 0) {
		fprintf(stderr,
		        "usage: kcmd-worker --zygote --zygote-fd=N ROOM (started by kcmd)\n");
		return 2;
	}
	/* The argv area: the kernel lays the strings out back to back. The room the manager
	 * passed after the flags is blanked, so this process's own cmdline reads short. */
	area = argv[0];
	area_sz = (size_t)(argv[argc - 1] + strlen(argv[argc - 1]) + 1 - argv[0]);
	for (int i = 3; i < argc; i++)
		if (strncmp(argv[i], "--zygote", 8))
			memset(argv[i], 0, strlen(argv[i]));
	/* The environment area, likewise (its room is KCMD_ZYGOTE_ENV_ROOM's value). */
	size_t envc = 0;
	bool room = false;
	for (; environ && environ[envc]; envc++)
		room |= !strncmp(environ[envc], KCMD_ZYGOTE_ENV_ROOM "=",
		                 strlen(KCMD_ZYGOTE_ENV_ROOM) + 1);
	if (room) {
		env_area = environ[0];
		env_area_sz =
		        (size_t)(environ[envc - 1] + strlen(environ[envc - 1]) + 1 - env_area);
	}
	prctl(PR_SET_NAME, "kcmd-zygote");
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() == 1)
		return 1;
	/* Shared with every child from here: libcurl's and its TLS library's global state. */
	if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
		return 1;
	signal(SIGCHLD, SIG_DFL);
	while ((r = serve_one(sock)) > 0)
		;
	return r == 0 ? 0 : 1;
}
