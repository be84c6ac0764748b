# workers/disruption/: the disruption controller (docs/disruption.md): its pure decisions
# (pdb.c, unit-tested against upstream's disruption_test.go cases), its handlers and sync
# (controller.c: the handler table runs in its kcmd-dispatcher, the sync in kcmd-worker).
LIBS                += disruption
disruption_SRCS     := workers/disruption/pdb.c workers/disruption/controller.c
disruption_LIBDEPS  := kcapi kube shm shmrec ipc kclog kcdispatch
disruption_TESTS    := workers/disruption/tests/test-pdb.c
# The registry (controllers/module.mk) links the descriptor and the library.
REGISTRY_PLUGIN_SRCS     += workers/disruption/plugin.c
REGISTRY_CONTROLLER_LIBS += disruption
