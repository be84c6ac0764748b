# workers/volumeexpand/: kcm's persistentvolume-expander-controller (docs/volumeexpand.md).
# Pure decisions and the patch body in expand.c; handlers, sync and descriptor in plugin.c
# (linked through the registry).
LIBS           += volexp
volexp_SRCS    := workers/volumeexpand/expand.c
volexp_LIBDEPS := kube
volexp_TESTS   := workers/volumeexpand/tests/test-expand.c
REGISTRY_PLUGIN_SRCS     += workers/volumeexpand/plugin.c
REGISTRY_CONTROLLER_LIBS += volexp
