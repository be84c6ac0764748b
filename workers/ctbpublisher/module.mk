# workers/ctbpublisher/: kcm's kube-apiserver-serving-clustertrustbundle-publisher-controller
# (docs/ctbpublisher.md): the root CA as the ClusterTrustBundle of signer
# kubernetes.io/kube-apiserver-serving. Decisions, bodies and metrics in ctb.c; handlers, sync
# and descriptor in plugin.c (linked through the registry); the root CA loader is rootca.h's.
LIBS                += ctbpublisher
ctbpublisher_SRCS    := workers/ctbpublisher/ctb.c
ctbpublisher_LIBDEPS := kube shmrec kcapi kcmetrics rootca
ctbpublisher_TESTS   := workers/ctbpublisher/tests/test-ctb.c
REGISTRY_PLUGIN_SRCS     += workers/ctbpublisher/plugin.c
REGISTRY_CONTROLLER_LIBS += ctbpublisher
