# workers/svgc/: kcm's storageversion-garbage-collector-controller (docs/storageversiongc.md):
# StorageVersion entries of kube-apiservers whose identity Lease is gone removed, the object
# deleted when none is left. The decisions in svgc.c; handlers, sync and descriptor in plugin.c
# (linked through the registry).
LIBS          += svgc
svgc_SRCS     := workers/svgc/svgc.c
svgc_LIBDEPS  := kube
svgc_TESTS    := workers/svgc/tests/test-svgc.c
REGISTRY_PLUGIN_SRCS     += workers/svgc/plugin.c
REGISTRY_CONTROLLER_LIBS += svgc
