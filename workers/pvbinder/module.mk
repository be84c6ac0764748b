# workers/pvbinder/: kcm's persistentvolume-binder-controller (docs/pvbinder.md). The sync logic
# over parsed objects and a table of operations in binder.c; handlers, the operations over the
# cache and the apiserver, and the descriptor in plugin.c (linked through the registry).
LIBS           += pvbinder
pvbinder_SRCS    := workers/pvbinder/binder.c workers/pvbinder/collector.c
pvbinder_LIBDEPS := kube
pvbinder_TESTS   := workers/pvbinder/tests/test-binder.c workers/pvbinder/tests/test-collector.c
REGISTRY_PLUGIN_SRCS     += workers/pvbinder/plugin.c
REGISTRY_CONTROLLER_LIBS += pvbinder
