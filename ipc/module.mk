# ipc/: the io_uring event loop and the cross-process work queue (see docs/ipc.md)
LIBS         += ipc
ipc_SRCS     := ipc/loop.c ipc/ratelimit.c ipc/queue.c ipc/journal.c
ipc_LIBDEPS  :=
ipc_TESTS    := ipc/tests/test-loop.c ipc/tests/test-loop-curl.c ipc/tests/test-queue.c ipc/tests/test-torture.c ipc/tests/test-journal.c
ipc_SOAKS    := ipc/tests/soak-torture.c
ipc_BENCHES  := ipc/bench/bench-ipc.c
ipc_FUZZ     := ipc/fuzz/fuzz-queue-keys.c
