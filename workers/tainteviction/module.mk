# workers/tainteviction/: kcm's taint-eviction-controller (docs/taint-eviction.md): its pure
# decisions and pending-eviction table (taint.c); handlers, sync and descriptor in plugin.c
# (linked through the registry).
LIBS          += tainteviction
tainteviction_SRCS    := workers/tainteviction/taint.c workers/tainteviction/store.c
tainteviction_LIBDEPS := kube
tainteviction_TESTS   := workers/tainteviction/tests/test-tainteviction.c
REGISTRY_PLUGIN_SRCS     += workers/tainteviction/plugin.c
REGISTRY_CONTROLLER_LIBS += tainteviction
