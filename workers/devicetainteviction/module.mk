# workers/devicetainteviction/: kcm's device-taint-eviction-controller
# (docs/devicetainteviction.md): its pure decisions (dte.c); handlers, sync and descriptor in
# plugin.c (linked through the registry).
LIBS        += dte
dte_SRCS    := workers/devicetainteviction/dte.c
dte_LIBDEPS := kube
dte_TESTS   := workers/devicetainteviction/tests/test-dte.c
REGISTRY_PLUGIN_SRCS     += workers/devicetainteviction/plugin.c
REGISTRY_CONTROLLER_LIBS += dte
