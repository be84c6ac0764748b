# workers/ttl/: kcm's ttl-controller (docs/ttl.md): the annotation node.alpha.kubernetes.io/ttl
# on every Node. The step table and the shared page in ttl.c; handlers, sync and descriptor in
# plugin.c (linked through the registry).
LIBS          += ttlctl
ttlctl_SRCS    := workers/ttl/ttl.c
ttlctl_LIBDEPS := kube shmrec kcapi
ttlctl_TESTS   := workers/ttl/tests/test-ttl.c
REGISTRY_PLUGIN_SRCS     += workers/ttl/plugin.c
REGISTRY_CONTROLLER_LIBS += ttlctl
