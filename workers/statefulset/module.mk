# workers/statefulset/: the statefulset controller (docs/statefulset.md): its pure pieces
# (ident.c: ordinals, ControllerRevision data/hash/name), its handlers (handlers.c, run by its
# kcmd-dispatcher) and sync (sync.c, run by kcmd-worker --controller=statefulset-controller).
LIBS                += statefulset
statefulset_SRCS    := workers/statefulset/ident.c workers/statefulset/handlers.c \
                       workers/statefulset/sync.c
statefulset_LIBDEPS := kcapi kcfeat kube shm shmrec ipc kclog kcdispatch
statefulset_TESTS   := workers/statefulset/tests/test-ident.c
# The registry (controllers/module.mk) links the descriptor and the library.
REGISTRY_PLUGIN_SRCS     += workers/statefulset/plugin.c
REGISTRY_CONTROLLER_LIBS += statefulset
