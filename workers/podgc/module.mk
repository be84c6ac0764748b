# workers/podgc/: the pod garbage collector (docs/podgc.md): its pure decisions and metric
# declarations (gc.c) and its periodic process (run.c, entered from
# kcmd-worker --controller=pod-garbage-collector-controller).
LIBS          += podgc
podgc_SRCS    := workers/podgc/gc.c workers/podgc/snap.c workers/podgc/run.c
podgc_LIBDEPS := kube shm kclog kcmetrics informer # informer: only test-snap.c links its store
podgc_TESTS   := workers/podgc/tests/test-podgc.c workers/podgc/tests/test-snap.c
# The registry (controllers/module.mk) links the descriptor and the library.
REGISTRY_PLUGIN_SRCS     += workers/podgc/plugin.c
REGISTRY_CONTROLLER_LIBS += podgc
