# workers/ttlafterfinished/: the TTL-after-finished controller (docs/ttlafterfinished.md): its
# pure decisions and histogram declaration (ttl.c), its handlers and sync
# (controller.c: the handler table runs in its kcmd-dispatcher, the sync in kcmd-worker).
LIBS         += ttl
ttl_SRCS     := workers/ttlafterfinished/ttl.c workers/ttlafterfinished/controller.c
ttl_LIBDEPS  := kube shm shmrec ipc kclog kcdispatch kcmetrics
ttl_TESTS    := workers/ttlafterfinished/tests/test-ttl.c
# The registry (controllers/module.mk) links the descriptor and the library.
REGISTRY_PLUGIN_SRCS     += workers/ttlafterfinished/plugin.c
REGISTRY_CONTROLLER_LIBS += ttl
