# informerd/: reflectors, the arena writer side, handler dispatch (see docs/informerd.md).
LIBS              += informer
informer_SRCS     := informerd/reflector.c informerd/store.c informerd/handlers.c
informer_LIBDEPS  := kube shm ipc
informer_TESTS    := informerd/tests/test-reflector.c informerd/tests/test-store.c
