# workers/hpa/: the horizontal pod autoscaler (docs/hpa.md): its arithmetic (hpa.c,
# unit-tested against upstream's replica_calculator_test.go and horizontal_test.go cases), its
# handlers and sync (controller.c).
LIBS          += hpa
hpa_SRCS      := workers/hpa/hpa.c workers/hpa/util.c workers/hpa/controller.c
hpa_LIBDEPS   := kcapi kube shm shmrec ipc kclog kcdispatch
hpa_TESTS     := workers/hpa/tests/test-hpa.c
# The registry (controllers/module.mk) links the descriptor and the library.
REGISTRY_PLUGIN_SRCS     += workers/hpa/plugin.c
REGISTRY_CONTROLLER_LIBS += hpa
