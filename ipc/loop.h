/* SPDX-License-Identifier: Apache-2.0 */
#pragma once
/*
 * ipc/loop.h: the single-threaded event loop every kcmd process runs.
 *
 * Design note.
 *   One loop per process, one thread. Sources are fd readiness (level-triggered, events may be
 *   changed at any time, which is what a libcurl multi socket callback needs), timers on
 *   CLOCK_MONOTONIC in microseconds (one-shot, re-armable: what a libcurl timer callback needs),
 *   pidfds (one-shot "process exited"), signals (through signalfd) and futex waits (one-shot,
 *   "wake me when this 32-bit shared word is woken or differs from the value I saw").
 *
 *   Two backends behind one API:
 *   - io_uring (default): POLL_ADD one-shot re-armed after each completion, FUTEX_WAIT (op 51)
 *     SQEs hand-prepared (Debian's liburing 2.3 has no helpers), FUTEX_WAKE (op 52) for batched
 *     wakes. Timers are a private min-heap whose earliest deadline becomes the timeout of the one
 *     io_uring_enter per iteration (EXT_ARG), so re-arming a timer costs no syscall at all.
 *   - epoll (fallback): chosen when io_uring_setup is refused (seccomp profiles of containerd 2.0
 *     and Docker 25 block it), when the futex opcodes are missing from the probe, or when forced
 *     with KCMD_IPC_BACKEND=epoll. Futex waits cannot be expressed to epoll, so this backend runs
 *     one helper thread that blocks in futex_waitv(2) on every armed word plus a control word and
 *     signals an eventfd; the helper never runs callbacks, so user code stays single-threaded.
 *   The library does not log; the caller reads ipc_loop_backend() / ipc_loop_fallback_reason()
 *   and logs the choice once.
 *
 *   Rejected: multishot poll (its edge-ish re-arm rules complicate "change events now" for
 *   curl), kernel TIMEOUT SQEs per timer (a cancel+re-arm round trip for every curl timer
 *   update), MSG_RING doorbells (not durable; no faster than futex, see docs/ipc.md).
 *
 * Calling context: everything here runs on the loop's thread only, except ipc_futex_wake(),
 * which any thread or process may call. Callbacks may add and free any source, including the
 * one being dispatched. A negative return from a callback stops ipc_loop_run() with that value.
 */
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/signalfd.h>

struct ipc_loop;
struct ipc_source;

enum ipc_loop_backend_kind {
	IPC_LOOP_BACKEND_AUTO = 0,
	IPC_LOOP_BACKEND_URING,
	IPC_LOOP_BACKEND_EPOLL,
};

/* Creates a loop. kind AUTO honours KCMD_IPC_BACKEND=uring|epoll and otherwise tries io_uring
 * first. An explicit URING fails with the setup/probe error instead of falling back.
 * Returns 0 and *ret, or -errno (-ENOMEM, the io_uring/epoll setup error). */
int ipc_loop_new(struct ipc_loop **ret, enum ipc_loop_backend_kind kind);
/* Frees every source still attached and the loop. NULL-safe. Returns NULL. */
struct ipc_loop *ipc_loop_free(struct ipc_loop *loop);
static inline void ipc_loop_freep(struct ipc_loop **l)
{
	ipc_loop_free(*l);
}
#define _cleanup_ipc_loop_ __attribute__((cleanup(ipc_loop_freep)))

/* "io_uring" or "epoll". */
const char *ipc_loop_backend(const struct ipc_loop *loop);
/* When AUTO fell back to epoll: the positive errno io_uring failed with (EPERM under seccomp,
 * EOPNOTSUPP if the probe lacks FUTEX_WAIT/WAKE), or 0 if epoll was forced or not chosen. */
int ipc_loop_fallback_reason(const struct ipc_loop *loop);

/* Whether the io_uring backend's ring is restricted to the loop's own opcodes (POLL_ADD,
 * POLL_REMOVE, ASYNC_CANCEL, FUTEX_WAIT, FUTEX_WAKE; IORING_REGISTER_RESTRICTIONS): true on
 * Linux >= 5.10; false on the epoll backend or when the kernel refused the restrictions. */
bool ipc_loop_uring_restricted(const struct ipc_loop *loop);
/* Test seam: submits one SQE with opcode on an idle io_uring loop and returns its cqe->res
 * (-EACCES when the restrictions refuse it); -EOPNOTSUPP on epoll. */
int ipc_loop__test_uring_op(struct ipc_loop *loop, uint8_t opcode);

/* Runs one iteration: waits at most timeout_usec (UINT64_MAX: no limit, 0: poll), dispatches
 * what is ready. Returns the number of callbacks run, or the first negative callback return. */
int ipc_loop_run_once(struct ipc_loop *loop, uint64_t timeout_usec);
/* Runs until ipc_loop_exit() or a callback fails; returns the exit code or that error. */
int ipc_loop_run(struct ipc_loop *loop);
void ipc_loop_exit(struct ipc_loop *loop, int code);

/* CLOCK_MONOTONIC in microseconds. */
uint64_t ipc_now_usec(void);

/* ---- sources ---------------------------------------------------------------------------- */
typedef int (*ipc_io_fn)(struct ipc_source *s, int fd, uint32_t revents, void *userdata);
typedef int (*ipc_timer_fn)(struct ipc_source *s, uint64_t now_usec, void *userdata);
typedef int (*ipc_signal_fn)(struct ipc_source *s, const struct signalfd_siginfo *si,
                             void *userdata);
/* res: 0 woken, -EAGAIN the word already differed from expected when armed. */
typedef int (*ipc_futex_fn)(struct ipc_source *s, int res, void *userdata);

/* fd readiness, level-triggered; events are POLLIN/POLLOUT/... (poll.h). The fd stays owned by
 * the caller and must stay open until the source is freed. events 0 = disabled. */
int ipc_loop_add_io(struct ipc_loop *loop, struct ipc_source **ret, int fd, uint32_t events,
                    ipc_io_fn cb, void *userdata);
int ipc_source_set_io_events(struct ipc_source *s, uint32_t events);

/* One-shot timer at absolute CLOCK_MONOTONIC usec (0 = disabled). Re-arm with set_time. */
int ipc_loop_add_timer(struct ipc_loop *loop, struct ipc_source **ret, uint64_t when_usec,
                       ipc_timer_fn cb, void *userdata);
int ipc_source_set_time(struct ipc_source *s, uint64_t when_usec);

/* One-shot: cb(revents=POLLIN) once when the process behind pidfd exits (the pidfd stays the
 * caller's). */
int ipc_loop_add_pidfd(struct ipc_loop *loop, struct ipc_source **ret, int pidfd, ipc_io_fn cb,
                       void *userdata);

/* Blocks signo for the process and delivers it through a signalfd owned by the source. */
int ipc_loop_add_signal(struct ipc_loop *loop, struct ipc_source **ret, int signo, ipc_signal_fn cb,
                        void *userdata);

/* One-shot wait on a 32-bit futex word in shared memory (never FUTEX_PRIVATE: shared words are
 * keyed by inode+offset). Armed at once with `expected`; after the callback it is disarmed
 * until ipc_source_futex_arm() is called again. The word must stay mapped while armed. */
int ipc_loop_add_futex(struct ipc_loop *loop, struct ipc_source **ret, const uint32_t *word,
                       uint32_t expected, ipc_futex_fn cb, void *userdata);
int ipc_source_futex_arm(struct ipc_source *s, uint32_t expected);
bool ipc_source_futex_armed(const struct ipc_source *s);
/* The bitset the next arm waits with (default every bit, 0 = every bit): only wakes whose
 * bitset meets it complete the wait (FUTEX_WAIT_BITSET; io_uring's futex mask). The epoll
 * backend's futex_waitv(2) takes no mask: there every wake of the word completes it (a wider
 * wake, never a lost one). Takes effect at the next ipc_source_futex_arm. */
void ipc_source_futex_set_mask(struct ipc_source *s, uint32_t mask);

/* "Post" source: once enabled with ipc_source_post_enable(), cb runs once at the end of the
 * current (or next) iteration, before the loop sleeps again; the loop does not sleep while one
 * is pending. For coalescing work (the queue owner dispatches once per iteration, not per Add). */
int ipc_loop_add_post(struct ipc_loop *loop, struct ipc_source **ret, ipc_timer_fn cb,
                      void *userdata);
void ipc_source_post_enable(struct ipc_source *s);

/* Detaches and frees a source (cancelling what the kernel still holds). NULL-safe. */
struct ipc_source *ipc_source_free(struct ipc_source *s);
static inline void ipc_source_freep(struct ipc_source **s)
{
	ipc_source_free(*s);
}
#define _cleanup_ipc_source_ __attribute__((cleanup(ipc_source_freep)))
void *ipc_source_userdata(const struct ipc_source *s);

/* ---- futex wakes -------------------------------------------------------------------------- */
/* futex(FUTEX_WAKE) on a shared word, now. Any thread/process. Returns woken count or -errno. */
int ipc_futex_wake(const uint32_t *word, int n);
/* futex(FUTEX_WAIT) on a shared word, blocking the caller (timeout_usec UINT64_MAX = none).
 * Returns 0 (woken or spurious), -EAGAIN (word != expected), -ETIMEDOUT, -EINTR. */
int ipc_futex_wait(const uint32_t *word, uint32_t expected, uint64_t timeout_usec);
/* Deferred wake: with io_uring an op-52 SQE submitted with the next ring enter (many wakes in
 * one syscall); with epoll the same as ipc_futex_wake(). Returns 0 or -errno. */
int ipc_loop_futex_wake(struct ipc_loop *loop, const uint32_t *word, int n);
/* The same, waking only waiters whose bitset meets `bits` (FUTEX_WAKE_BITSET; 0 = every bit). */
int ipc_loop_futex_wake_bits(struct ipc_loop *loop, const uint32_t *word, int n, uint32_t bits);
int ipc_futex_wake_bits(const uint32_t *word, int n, uint32_t bits);
