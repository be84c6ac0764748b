/* SPDX-License-Identifier: Apache-2.0 */
/*
 * manager/zygote.c: starting dispatchers and workers through the zygote (manager/zygote.h,
 * lib/zygote-abi.h).
 *
 * The manager is a child subreaper only while a spawn is in flight: the zygote's intermediate
 * process exits before the zygote answers, and the child it leaves is then re-parented to the
 * manager, which waits for it through a pidfd like any child it forked itself. Outside that
 * window an orphan of some descendant goes to init as before (in the window it would become a
 * zombie of the manager; the window is the two forks, about a millisecond per start).
 *
 * A zygote that dies, hangs (no answer in 5 s) or answers garbage is killed, reaped, and never
 * used again: every later child is exec'd (the memory it saved is lost, the behaviour is not).
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/zygote-abi.h"
#include "manager/zygote.h"

#define ANSWER_TIMEOUT_SEC 5

extern char **environ;

struct mgr_zygote {
	int sock;   /* our end of the socketpair; -1 once the zygote is gone */
	int pidfd;  /* the zygote's */
	pid_t pid;  /* the zygote's; 0 once gone */
	char *path; /* <libexec>/kcmd-worker */
	size_t dir_len;
};

static const char *base(const char *p)
{
	const char *s = strrchr(p, '/');

	return s ? s + 1 : p;
}

int mgr_zygote_start(const char *libexec, struct mgr_zygote **ret)
{
	struct timeval tv = {.tv_sec = ANSWER_TIMEOUT_SEC};
	struct mgr_zygote *z;
	char fdarg[32], *room, *argv[5], **envp = NULL, *envroom = NULL;
	size_t envc = 0;
	int sv[2], r;
	pid_t pid;

	z = calloc(1, sizeof(*z));
	if (!z)
		return -ENOMEM;
	z->sock = z->pidfd = -1;
	if (asprintf(&z->path, "%s/kcmd-worker", libexec) < 0) {
		free(z);
		return -ENOMEM;
	}
	z->dir_len = strlen(libexec);
	if (access(z->path, X_OK) < 0) {
		r = -errno;
		goto fail;
	}
	/* the room a child's argv is written over (lib/zygote-abi.h): one argument of spaces */
	room = malloc(KCMD_ZYGOTE_ARGV_AREA + 1);
	if (!room) {
		r = -ENOMEM;
		goto fail;
	}
	memset(room, ' ', KCMD_ZYGOTE_ARGV_AREA);
	room[KCMD_ZYGOTE_ARGV_AREA] = '\0';
	/* and the environment room: the manager's environment plus one variable of spaces */
	while (environ && environ[envc])
		envc++;
	envp = calloc(envc + 2, sizeof(*envp));
	if (envp)
		envroom = malloc(sizeof(KCMD_ZYGOTE_ENV_ROOM) + KCMD_ZYGOTE_ENV_AREA + 1);
	if (!envroom) {
		free(envp);
		free(room);
		r = -ENOMEM;
		goto fail;
	}
	memcpy(envp, environ, sizeof(*envp) * envc);
	memcpy(envroom, KCMD_ZYGOTE_ENV_ROOM "=", sizeof(KCMD_ZYGOTE_ENV_ROOM));
	memset(envroom + sizeof(KCMD_ZYGOTE_ENV_ROOM), ' ', KCMD_ZYGOTE_ENV_AREA);
	envroom[sizeof(KCMD_ZYGOTE_ENV_ROOM) + KCMD_ZYGOTE_ENV_AREA] = '\0';
	envp[envc] = envroom;
	envp[envc + 1] = NULL;
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0) {
		r = -errno;
		free(room);
		free(envroom);
		free(envp);
		goto fail;
	}
	snprintf(fdarg, sizeof(fdarg), "--zygote-fd=%d", sv[1]);
	argv[0] = z->path;
	argv[1] = "--zygote";
	argv[2] = fdarg;
	argv[3] = room;
	argv[4] = NULL;
	pid = fork();
	if (pid == 0) {
		sigset_t none;
		/* only async-signal-safe calls until execve */
		if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || fcntl(sv[1], F_SETFD, 0) < 0)
			_exit(127);
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		signal(SIGPIPE, SIG_DFL);
		execve(argv[0], argv, envp);
		_exit(127);
	}
	r = pid < 0 ? -errno : 0;
	free(room);
	free(envroom);
	free(envp);
	close(sv[1]);
	if (r < 0) {
		close(sv[0]);
		goto fail;
	}
	z->sock = sv[0];
	z->pid = pid;
	z->pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	if (z->pidfd < 0 || setsockopt(z->sock, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) < 0) {
		r = -errno;
		mgr_zygote_free(z);
		return r;
	}
	*ret = z;
	return 0;
fail:
	free(z->path);
	free(z);
	return r;
}

/* The zygote misbehaved or is gone: kill it, reap it, use it no more. */
static void gone(struct mgr_zygote *z)
{
	if (z->pidfd >= 0) {
		siginfo_t si;
		syscall(SYS_pidfd_send_signal, z->pidfd, SIGKILL, NULL, 0);
		while (waitid(P_PIDFD, (id_t)z->pidfd, &si, WEXITED) < 0 && errno == EINTR)
			;
		close(z->pidfd);
		z->pidfd = -1;
	}
	if (z->sock >= 0)
		close(z->sock);
	z->sock = -1;
	z->pid = 0;
}

int mgr_zygote_spawn(struct mgr_zygote *z, char *const argv[], char *const envp[], const int *fds,
                     unsigned nfds, pid_t *ret_pid)
{
	union {
		struct cmsghdr h;
		char b[CMSG_SPACE(sizeof(int) * KCMD_ZYGOTE_MAX_FDS)];
	} cm;
	struct kcmd_zygote_req h = {.magic = KCMD_ZYGOTE_MAGIC, .version = KCMD_ZYGOTE_VERSION};
	struct kcmd_zygote_reply rep;
	size_t len = 0, argv_len = 0, env_len = 0, off;
	unsigned char *buf;
	ssize_t n;
	int r;

	if (!z || z->sock < 0 || !argv[0] || nfds > KCMD_ZYGOTE_MAX_FDS)
		return -ENOTSUP;
	/* only the programs it is, from its own directory */
	if (strncmp(argv[0], z->path, z->dir_len) || argv[0][z->dir_len] != '/' ||
	    strchr(argv[0] + z->dir_len + 1, '/') ||
	    (strcmp(base(argv[0]), "kcmd-worker") && strcmp(base(argv[0]), "kcmd-dispatcher")))
		return -ENOTSUP;
	for (; argv[h.argc]; h.argc++)
		argv_len += strlen(argv[h.argc]) + 1;
	for (; envp && envp[h.envc]; h.envc++)
		env_len += strlen(envp[h.envc]) + 1;
	len = argv_len + env_len;
	if (argv_len > KCMD_ZYGOTE_ARGV_AREA || env_len > KCMD_ZYGOTE_ENV_AREA ||
	    sizeof(h) + len > KCMD_ZYGOTE_MAX_MSG)
		return -ENOTSUP;
	h.nfds = nfds;
	h.strings_len = (uint32_t)len;
	for (unsigned i = 0; i < nfds; i++)
		h.fd_targets[i] = fds[i];
	buf = malloc(sizeof(h) + len);
	if (!buf)
		return -ENOMEM;
	memcpy(buf, &h, sizeof(h));
	off = sizeof(h);
	for (unsigned i = 0; i < h.argc; i++) {
		size_t l = strlen(argv[i]) + 1;
		memcpy(buf + off, argv[i], l);
		off += l;
	}
	for (unsigned i = 0; i < h.envc; i++) {
		size_t l = strlen(envp[i]) + 1;
		memcpy(buf + off, envp[i], l);
		off += l;
	}
	struct iovec iov = {.iov_base = buf, .iov_len = off};
	struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1};
	if (nfds) {
		memset(&cm, 0, sizeof(cm));
		mh.msg_control = cm.b;
		mh.msg_controllen = CMSG_SPACE(sizeof(int) * nfds);
		struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int) * nfds);
		memcpy(CMSG_DATA(c), fds, sizeof(int) * nfds);
	}
	/* the window in which an orphan becomes ours: the zygote's intermediate process exits
	 * before the answer, so the child is ours when the answer comes */
	if (prctl(PR_SET_CHILD_SUBREAPER, 1) < 0) {
		r = -errno;
		free(buf);
		return r;
	}
	do
		n = sendmsg(z->sock, &mh, MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	free(buf);
	if (n == (ssize_t)off)
		do
			n = recv(z->sock, &rep, sizeof(rep), 0);
		while (n < 0 && errno == EINTR);
	else
		n = -1;
	prctl(PR_SET_CHILD_SUBREAPER, 0);
	if (n != (ssize_t)sizeof(rep) || rep.magic != KCMD_ZYGOTE_MAGIC || rep.pid == 0) {
		gone(z);
		return -ENOTSUP;
	}
	/* a request it refused (its room, a program it is not): the caller execs; a fork that
	 * failed in the zygote is a failed start */
	if (rep.pid == -E2BIG || rep.pid == -ENOEXEC || rep.pid == -EINVAL || rep.pid == -ENOTSUP)
		return -ENOTSUP;
	if (rep.pid < 0)
		return rep.pid;
	*ret_pid = rep.pid;
	return 0;
}

pid_t mgr_zygote_pid(const struct mgr_zygote *z)
{
	return z ? z->pid : 0;
}

void mgr_zygote_free(struct mgr_zygote *z)
{
	if (!z)
		return;
	gone(z);
	free(z->path);
	free(z);
}
