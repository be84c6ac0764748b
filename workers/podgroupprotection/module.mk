# workers/podgroupprotection/: kcm's podgroup-protection-controller (docs/podgroupprotection.md):
# the finalizer scheduling.k8s.io/podgroup-protection removed from a PodGroup being deleted once
# no active pod names it. The decisions and the write body in pgp.c; handlers, sync and
# descriptor in plugin.c (linked through the registry).
LIBS         += pgprot
pgprot_SRCS    := workers/podgroupprotection/pgp.c
pgprot_LIBDEPS := kube
pgprot_TESTS   := workers/podgroupprotection/tests/test-pgp.c
REGISTRY_PLUGIN_SRCS     += workers/podgroupprotection/plugin.c
REGISTRY_CONTROLLER_LIBS += pgprot
