# workers/nodeipam/: kcm's node-ipam-controller with the RangeAllocator (docs/nodeipam.md):
# podCIDRs for Nodes from --cluster-cidr, only with --allocate-node-cidrs. CIDRs, the CIDR set
# and kcm's flag checks in cidrset.c; handlers, sync and descriptor in plugin.c.
LIBS            += nodeipam
nodeipam_SRCS    := workers/nodeipam/cidrset.c
nodeipam_LIBDEPS := kube
nodeipam_TESTS   := workers/nodeipam/tests/test-cidrset.c
REGISTRY_PLUGIN_SRCS     += workers/nodeipam/plugin.c
REGISTRY_CONTROLLER_LIBS += nodeipam
