# workers/: the kcmd-worker process and the glue between controllers' logic and the shared
# cache / API client (see docs/architecture.md). Controller logic lives in workers/<controller>/.
LIBS            += worker
worker_SRCS     := workers/replicaset/controller.c workers/garbagecollector/controller.c
worker_LIBDEPS  := kcevrec shmrec rs gc gchandlers kube shm ipc kclog informer kcdispatch kcfeat wkcachewait
worker_TESTS    := workers/tests/test-objects.c workers/tests/test-rs-executor.c

# The controllers' event handlers, linked into informerd.
LIBS              += rshandlers
rshandlers_SRCS    := workers/replicaset/table.c
rshandlers_LIBDEPS := rs worker informer kcdispatch kube shm ipc kclog

# The worker's start barrier (upstream's WaitForNamedCacheSync for the generic key loop).
LIBS                += wkcachewait
wkcachewait_SRCS    := workers/cachewait.c
wkcachewait_LIBDEPS := kcapi shm ipc kclog
wkcachewait_TESTS   := workers/tests/test-cachewait.c

BINS               += kcmd-worker
kcmd-worker_SRCS    := workers/worker-main.c workers/main.c workers/dispatcher.c workers/zygote.c
kcmd-worker_LIBDEPS := registry kcfence kcapi wkcachewait
kcmd-worker_LDFLAGS := $(KCMD_PLUGIN_LDFLAGS)

# One controller's event handlers over the change feed (informerd links no controller code).
BINS                    += kcmd-dispatcher
kcmd-dispatcher_SRCS    := workers/dispatcher-main.c workers/dispatcher.c
kcmd-dispatcher_LIBDEPS := registry kcfence kcapi wkcachewait
kcmd-dispatcher_LDFLAGS := $(KCMD_PLUGIN_LDFLAGS)
