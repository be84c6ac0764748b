# workers/servicecidr/: kcm's service-cidr-controller (docs/servicecidr.md): the finalizer and
# Ready condition of every networking.k8s.io/v1 ServiceCIDR, deletion held while allocated
# IPAddresses would be orphaned. The decisions (pure) in cidr.c; handlers, sync and descriptor
# in plugin.c (linked through the registry).
LIBS           += sccctl
sccctl_SRCS    := workers/servicecidr/cidr.c
sccctl_LIBDEPS := kube shmrec kcapi
sccctl_TESTS   := workers/servicecidr/tests/test-cidr.c
REGISTRY_PLUGIN_SRCS     += workers/servicecidr/plugin.c
REGISTRY_CONTROLLER_LIBS += sccctl
