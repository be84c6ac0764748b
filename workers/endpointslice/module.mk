# workers/endpointslice/: kcm's endpointslice-controller (docs/endpointslice.md): the
# EndpointSlices of every Service with a selector. The reconciler (pure) in reconcile.c, the
# slice and trigger-time trackers in tracker.c; handlers, sync and descriptor in plugin.c
# (linked through the registry).
LIBS           += epsctl
epsctl_SRCS    := workers/endpointslice/reconcile.c workers/endpointslice/tracker.c \
                  workers/endpointslice/podlist.c
epsctl_LIBDEPS := kube shmrec kcapi
epsctl_TESTS   := workers/endpointslice/tests/test-reconcile.c
REGISTRY_PLUGIN_SRCS     += workers/endpointslice/plugin.c
REGISTRY_CONTROLLER_LIBS += epsctl
