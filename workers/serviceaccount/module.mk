# workers/serviceaccount/: kcm's serviceaccount-controller (docs/serviceaccount.md): the
# `default` ServiceAccount in every Active namespace. Pure decisions in sa.c; handlers, sync and
# descriptor in plugin.c (linked through the registry).
LIBS          += sactl
sactl_SRCS    := workers/serviceaccount/sa.c
sactl_LIBDEPS := kube shmrec kcapi
sactl_TESTS   := workers/serviceaccount/tests/test-serviceaccount.c
REGISTRY_PLUGIN_SRCS     += workers/serviceaccount/plugin.c
REGISTRY_CONTROLLER_LIBS += sactl
