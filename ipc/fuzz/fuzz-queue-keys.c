/* SPDX-License-Identifier: Apache-2.0 */
/* ipc/fuzz/fuzz-queue-keys.c - work-queue keys through the shared-memory rings: the input is a
 * list of keys separated by '\n' (bytes of any value, any length), each added by a producer
 * client (the add ring), handed to a worker client by the owner (the lease ring) and finished.
 * Invariants: a key is refused (-EINVAL) exactly when it is empty or longer than
 * IPC_QUEUE_KEY_MAX; every accepted key comes back byte for byte, once per distinct key (the
 * queue deduplicates), and nothing else does; no protocol error is counted. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ipc/loop.h"
#include "ipc/queue.h"

static struct ipc_loop *loop;
static struct ipc_queue_owner *owner;
static struct ipc_queue *client;
static int fd = -1;

static void setup(void)
{
	if (ipc_loop_new(&loop, IPC_LOOP_BACKEND_EPOLL) < 0)
		abort();
	fd = ipc_queue_memfd_create("fuzz");
	if (fd < 0 || ipc_queue_owner_new(&owner, loop, fd, NULL) < 0 ||
	    ipc_queue_attach(&client, fd, IPC_QUEUE_PRODUCER | IPC_QUEUE_WORKER, 4) < 0)
		abort();
}

static void pump(void)
{
	for (int i = 0; i < 3; i++) {
		if (ipc_queue_owner_pump(owner) < 0 || ipc_loop_run_once(loop, 0) < 0)
			abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	enum { MAXK = 64 };
	char keys[MAXK][IPC_QUEUE_KEY_MAX + 1];
	size_t nk = 0;
	if (!loop)
		setup();
	const uint8_t *p = data, *end = data + size;
	while (p <= end && nk < MAXK) {
		const uint8_t *nl = memchr(p, '\n', (size_t)(end - p));
		size_t len = (size_t)((nl ? nl : end) - p);
		char *k = malloc(len + 1);
		if (!k)
			return 0;
		memcpy(k, p, len);
		k[len] = 0;
		size_t eff = strlen(k); /* a NUL byte ends a C key */
		int r = ipc_queue_add(client, k);
		bool ok = eff >= 1 && eff <= IPC_QUEUE_KEY_MAX;
		if (ok != (r == 0))
			abort();
		if (r == 0) {
			bool dup = false;
			for (size_t i = 0; i < nk; i++)
				dup |= strcmp(keys[i], k) == 0;
			if (!dup)
				memcpy(keys[nk++], k, eff + 1);
		}
		free(k);
		if (!nl)
			break;
		p = nl + 1;
	}
	bool seen[MAXK] = {false};
	for (size_t got = 0, spins = 0; got < nk;) {
		char out[IPC_QUEUE_KEY_MAX + 1];
		pump();
		int n = ipc_queue_get(client, out, sizeof(out), 0);
		if (n == -EAGAIN) {
			if (++spins > 1000)
				abort(); /* a lost key */
			continue;
		}
		if (n <= 0 || (size_t)n != strlen(out))
			abort();
		size_t i = 0;
		while (i < nk && strcmp(keys[i], out) != 0)
			i++;
		if (i == nk || seen[i])
			abort(); /* a key never added, or handed out twice */
		seen[i] = true;
		got++;
		if (ipc_queue_done(client, 0, 0) < 0)
			abort();
	}
	pump();
	char out[IPC_QUEUE_KEY_MAX + 1];
	if (ipc_queue_get(client, out, sizeof(out), 0) != -EAGAIN)
		abort();
	struct ipc_queue_metrics m;
	if (ipc_queue_metrics_read(fd, &m) < 0 || m.protocol_errors_total != 0)
		abort();
	return 0;
}
