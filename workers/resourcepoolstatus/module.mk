# workers/resourcepoolstatus/: kcm's resourcepoolstatusrequest-controller
# (docs/resourcepoolstatusrequest.md): a ResourcePoolStatusRequest's status computed once from
# the ResourceSlices, ResourceClaims and DeviceTaintRules of its driver. The computation in
# rps.c (quantities through the quota controller's module); handlers, sync and descriptor in
# plugin.c (linked through the registry).
LIBS        += rpstatus
rpstatus_SRCS    := workers/resourcepoolstatus/rps.c
rpstatus_LIBDEPS := resourcequota kube
rpstatus_TESTS   := workers/resourcepoolstatus/tests/test-rps.c
REGISTRY_PLUGIN_SRCS     += workers/resourcepoolstatus/plugin.c
REGISTRY_CONTROLLER_LIBS += rpstatus
