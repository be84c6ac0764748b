# informerd/: reflectors, the arena writer side, handler dispatch (see docs/informerd.md).
LIBS              += informer
informer_SRCS     := informerd/reflector.c informerd/store.c informerd/informer.c informerd/discovery.c
informer_LIBDEPS  := kube shm shmrec ipc kubeloop kclog kcdispatch kcinfmetrics
informer_TESTS    := informerd/tests/test-reflector.c informerd/tests/test-store.c informerd/tests/test-misc.c \
                     informerd/tests/e2e-informer.c
informer_BENCHES  := informerd/bench/bench-informer.c informerd/bench/bench-informer-e2e.c

BINS                   += kcmd-informerd kcmd-cachedump
kcmd-informerd_SRCS    := informerd/main.c
kcmd-informerd_LIBDEPS := informer kcfence
kcmd-cachedump_SRCS    := informerd/cachedump.c
kcmd-cachedump_LIBDEPS := informer
