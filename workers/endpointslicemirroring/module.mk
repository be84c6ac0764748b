# workers/endpointslicemirroring/: kcm's endpointslice-mirroring-controller
# (docs/endpointslicemirroring.md): the EndpointSlices mirroring the custom Endpoints of Services
# without a selector. The reconciler (pure) in mirror.c; handlers, sync and descriptor in
# plugin.c (linked through the registry). Shares the EndpointSlice controller's slice tracker.
LIBS           += esmctl
esmctl_SRCS    := workers/endpointslicemirroring/mirror.c
esmctl_LIBDEPS := epsctl kube shmrec kcapi
esmctl_TESTS   := workers/endpointslicemirroring/tests/test-mirror.c
REGISTRY_PLUGIN_SRCS     += workers/endpointslicemirroring/plugin.c
REGISTRY_CONTROLLER_LIBS += esmctl
