# workers/selinuxwarning/: kcm's selinux-warning-controller (docs/selinux-warning.md): Events
# and a gauge for pods that would mount one volume with different SELinux labels or change
# policies. The labels, the volume cache and a pod's volumes in sw.c; handlers, sync and
# descriptor in plugin.c (linked through the registry).
LIBS             += selinuxwarning
selinuxwarning_SRCS    := workers/selinuxwarning/sw.c
selinuxwarning_LIBDEPS :=
selinuxwarning_TESTS   := workers/selinuxwarning/tests/test-sw.c
REGISTRY_PLUGIN_SRCS     += workers/selinuxwarning/plugin.c
REGISTRY_CONTROLLER_LIBS += selinuxwarning
