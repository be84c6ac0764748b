# workers/nodelifecycle/: kcm's node-lifecycle-controller (docs/nodelifecycle.md): its pure
# decisions (nlc.c: zone state, the rate-limited timed queue, node health, taints, pods, labels);
# handlers, periodic passes, sync and descriptor in plugin.c (linked through the registry).
LIBS          += nodelifecycle
nodelifecycle_SRCS    := workers/nodelifecycle/nlc.c
nodelifecycle_LIBDEPS := kube
nodelifecycle_TESTS   := workers/nodelifecycle/tests/test-nodelifecycle.c
REGISTRY_PLUGIN_SRCS     += workers/nodelifecycle/plugin.c
REGISTRY_CONTROLLER_LIBS += nodelifecycle
