# workers/clusterroleaggregation/: kcm's clusterrole-aggregation-controller
# (docs/clusterroleaggregation.md): the rules of aggregated ClusterRoles. The aggregation in
# cra.c; handlers, sync and descriptor in plugin.c (linked through the registry).
LIBS         += cractl
cractl_SRCS    := workers/clusterroleaggregation/cra.c
cractl_LIBDEPS := kube shmrec kcapi
cractl_TESTS   := workers/clusterroleaggregation/tests/test-cra.c
REGISTRY_PLUGIN_SRCS     += workers/clusterroleaggregation/plugin.c
REGISTRY_CONTROLLER_LIBS += cractl
