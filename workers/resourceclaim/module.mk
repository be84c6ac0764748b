# workers/resourceclaim/: kcm's resourceclaim-controller (docs/resourceclaim.md): its pure
# decisions (claim.c) and its handlers, sync and descriptor (plugin.c, linked through the
# registry).
LIBS        += rclaim
rclaim_SRCS    := workers/resourceclaim/claim.c
rclaim_LIBDEPS := kube
rclaim_TESTS   := workers/resourceclaim/tests/test-claim.c
REGISTRY_PLUGIN_SRCS     += workers/resourceclaim/plugin.c
REGISTRY_CONTROLLER_LIBS += rclaim
