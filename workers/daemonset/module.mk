# workers/daemonset/: the DaemonSet controller (docs/daemonset.md): its pure decisions (ds.c),
# its handlers (handlers.c, run by its kcmd-dispatcher) and sync (sync.c, run by kcmd-worker
# --controller=daemonset-controller). Expectations: the ReplicaSet controller's shared-memory
# module (lib rs); the revision patch bytes: the StatefulSet controller's (lib statefulset).
LIBS               += daemonset
daemonset_SRCS     := workers/daemonset/ds.c workers/daemonset/handlers.c workers/daemonset/nodes.c \
                      workers/daemonset/sync.c
daemonset_LIBDEPS  := rs statefulset kcapi kube shm shmrec ipc kclog kcdispatch
daemonset_TESTS    := workers/daemonset/tests/test-ds.c
# The registry (controllers/module.mk) links the descriptor and the library.
REGISTRY_PLUGIN_SRCS     += workers/daemonset/plugin.c
REGISTRY_CONTROLLER_LIBS += daemonset
