# workers/endpoints/: kcm's endpoints-controller (docs/endpoints.md): the v1 Endpoints of every
# Service with a selector. The subsets and the decision (pure) in endpoints.c; handlers, sync and
# descriptor in plugin.c (linked through the registry). Shares the pod helpers and the
# trigger-time tracker of workers/endpointslice/.
LIBS           += epctl
epctl_SRCS     := workers/endpoints/endpoints.c
epctl_LIBDEPS  := epsctl kube shmrec kcapi
epctl_TESTS    := workers/endpoints/tests/test-endpoints.c
REGISTRY_PLUGIN_SRCS     += workers/endpoints/plugin.c
REGISTRY_CONTROLLER_LIBS += epctl
