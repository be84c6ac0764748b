# ipc/: the io_uring event loop and the cross-process work queue (see docs/ipc.md)
LIBS         += ipc
ipc_SRCS     := ipc/loop.c ipc/ratelimit.c ipc/queue.c
ipc_LIBDEPS  :=
ipc_TESTS    := ipc/tests/test-loop.c ipc/tests/test-queue.c
ipc_SOAKS    :=
ipc_BENCHES  :=
# Workaround, reported to the lead: the top-level test_template passes
# "-fsanitize=address,undefined" through $(call ...), where the comma splits it, so ASan links
# lack UBSan's runtime. Adding the runtime as a prerequisite puts it into $^ of ipc's own links.
IPC_UBSAN_RT := $(shell $(CC) -print-file-name=libubsan.so)
$(foreach t,$(ipc_TESTS),$(eval build/asan/t/$(basename $(t)): $(IPC_UBSAN_RT)))
