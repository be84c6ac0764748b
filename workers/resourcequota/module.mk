# workers/resourcequota/: the resource quota controller (docs/resourcequota.md): quantities
# (quantity.c), its pure usage and status decisions (usage.c, unit-tested against upstream's
# controller and evaluator tests), its handlers and sync (controller.c: the handler table runs
# in its kcmd-dispatcher, the sync in kcmd-worker).
LIBS                  += resourcequota
resourcequota_SRCS    := workers/resourcequota/quantity.c workers/resourcequota/usage.c \
                         workers/resourcequota/controller.c
resourcequota_LIBDEPS := kcapi kube shm shmrec ipc kclog kcdispatch
resourcequota_TESTS   := workers/resourcequota/tests/test-quantity.c \
                         workers/resourcequota/tests/test-usage.c
# The registry (controllers/module.mk) links the descriptor and the library.
REGISTRY_PLUGIN_SRCS     += workers/resourcequota/plugin.c
REGISTRY_CONTROLLER_LIBS += resourcequota
