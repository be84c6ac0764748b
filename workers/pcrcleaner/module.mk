# workers/pcrcleaner/: kcm's podcertificaterequest-cleaner-controller (docs/pcrcleaner.md):
# PodCertificateRequests deleted 15 minutes after their creation. The decision in pcr.c;
# handlers, sync and descriptor in plugin.c (linked through the registry).
LIBS             += pcrcleaner
pcrcleaner_SRCS    := workers/pcrcleaner/pcr.c
pcrcleaner_LIBDEPS := kube
pcrcleaner_TESTS   := workers/pcrcleaner/tests/test-pcr.c
REGISTRY_PLUGIN_SRCS     += workers/pcrcleaner/plugin.c
REGISTRY_CONTROLLER_LIBS += pcrcleaner
