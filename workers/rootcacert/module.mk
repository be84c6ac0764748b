# workers/rootcacert/: kcm's root-ca-certificate-publisher-controller (docs/rootcacert.md): the
# ConfigMap kube-root-ca.crt in every namespace. Pure decisions and bodies in rootca.c;
# handlers, sync and descriptor in plugin.c (linked through the registry).
LIBS           += rootca
rootca_SRCS    := workers/rootcacert/rootca.c
rootca_LIBDEPS := kube shmrec kcapi kcmetrics
rootca_TESTS   := workers/rootcacert/tests/test-rootca.c
REGISTRY_PLUGIN_SRCS     += workers/rootcacert/plugin.c
REGISTRY_CONTROLLER_LIBS += rootca
