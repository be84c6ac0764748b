/* SPDX-License-Identifier: Apache-2.0 */
#pragma once
/*
 * lib/zygote-abi.h: the one message the manager sends the zygote (`kcmd-worker --zygote`) to start
 * a dispatcher or a worker, and its answer (manager/zygote.c is the client, workers/zygote.c the
 * server; docs/architecture.md "Processes").
 *
 * Why a zygote: measured with every controller on (docs/benchmarks.md "Memory of each
 * process"), ~1.3 MB of a child's ~2.1 MB PSS is written before main runs: the dynamic
 * loader's relocations of libcurl's and GnuTLS's libraries (OpenSSL's libcrypto alone 0.4 MB),
 * their .data and the heap their constructors fill. An exec'd child writes its own copy of
 * each; a child forked from one process that loaded them shares them copy-on-write. The
 * zygote is that process: single-threaded, it loads the libraries, runs curl_global_init and
 * then only forks. Each child still is a process of its own (a crash stays in it).
 *
 * Wire: a SOCK_SEQPACKET socketpair, one request datagram (this header, then argc + envc
 * NUL-terminated strings, at most KCMD_ZYGOTE_MAX_MSG bytes) with the fds to keep in an
 * SCM_RIGHTS message; one reply datagram. Every length is checked exactly; a request that does
 * not check out is answered -EINVAL and its fds closed.
 *
 * The child: the zygote forks an intermediate process, which forks the child and exits, so
 * the child is re-parented to the manager (PR_SET_CHILD_SUBREAPER): the manager waits for it
 * through a pidfd as for an exec'd child. The child then sets PR_SET_PDEATHSIG, moves each fd
 * to the number it had in the manager (fd_targets), closes every other fd, takes the request's
 * environment and argv (written over the zygote's own argv and environment areas, at least
 * KCMD_ZYGOTE_ARGV_AREA and KCMD_ZYGOTE_ENV_AREA bytes, so /proc/<pid>/cmdline and
 * /proc/<pid>/environ show the child's as for an exec'd one), and calls the program's main.
 * The zygote has that room because the manager execs it with a long argument of spaces and a
 * variable KCMD_ZYGOTE_ENV_ROOM of spaces; its comm is "kcmd-zygote".
 *
 * Version rule: a change of layout bumps KCMD_ZYGOTE_VERSION; the zygote is always the
 * manager's build (same libexec directory), so the two never differ in a running kcmd.
 */

#include <assert.h>
#include <stdint.h>

#define KCMD_ZYGOTE_MAGIC     0x6b7a7967u /* "kzyg" */
#define KCMD_ZYGOTE_VERSION   1u
#define KCMD_ZYGOTE_MAX_FDS   32u                /* = MGR_CHILD_MAX_FDS */
#define KCMD_ZYGOTE_MAX_MSG   (64u << 10)        /* header + strings; a bigger request is -E2BIG */
#define KCMD_ZYGOTE_ARGV_AREA (16u << 10)        /* cmdline room: a longer argv is exec'd instead */
#define KCMD_ZYGOTE_ENV_AREA  (16u << 10)        /* environ room: a longer one is exec'd instead */
#define KCMD_ZYGOTE_ENV_ROOM  "KCMD_ZYGOTE_ROOM" /* the variable that holds that room */

struct kcmd_zygote_req {
	uint32_t magic;   /* KCMD_ZYGOTE_MAGIC */
	uint32_t version; /* KCMD_ZYGOTE_VERSION */
	uint32_t argc;    /* >= 1: argv[0] names the program, kcmd-worker or kcmd-dispatcher */
	uint32_t envc;
	uint32_t nfds;        /* = the fds in the SCM_RIGHTS message, in this order */
	uint32_t strings_len; /* bytes after this header: argc + envc strings, each NUL-ended */
	int32_t fd_targets[KCMD_ZYGOTE_MAX_FDS]; /* the number each fd gets in the child (>= 3) */
	uint32_t reserved[4];
};
static_assert(sizeof(struct kcmd_zygote_req) == 168, "kcmd_zygote_req layout");

struct kcmd_zygote_reply {
	uint32_t magic; /* KCMD_ZYGOTE_MAGIC */
	int32_t pid;    /* > 0: the child, now the manager's; < 0: -errno, nothing started */
};
static_assert(sizeof(struct kcmd_zygote_reply) == 8, "kcmd_zygote_reply layout");
