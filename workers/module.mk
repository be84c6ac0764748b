# workers/: the kcmd-worker process and the glue between controllers' logic and the shared
# cache / API client (see docs/architecture.md). Controller logic lives in workers/<controller>/.
LIBS            += worker
worker_SRCS     := workers/objects.c workers/replicaset/controller.c
worker_LIBDEPS  := rs kube shm ipc kclog informer
worker_TESTS    := workers/tests/test-objects.c

BINS               += kcmd-worker
kcmd-worker_SRCS    := workers/main.c
kcmd-worker_LIBDEPS := worker
