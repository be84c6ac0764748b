# workers/volumeprotection/: kcm's persistentvolumeclaim-protection-controller,
# persistentvolume-protection-controller, volumeattributesclass-protection-controller and
# ephemeral-volume-controller
# (docs/volumeprotection.md). Pure decisions and write
# bodies in protection.c; each controller's handlers, sync and descriptor in its plugin-*.c
# (linked through the registry).
LIBS        += volprot
volprot_SRCS    := workers/volumeprotection/protection.c workers/volumeprotection/ephemeral.c
volprot_LIBDEPS := kube
volprot_TESTS   := workers/volumeprotection/tests/test-protection.c
REGISTRY_PLUGIN_SRCS     += workers/volumeprotection/plugin-pvc.c workers/volumeprotection/plugin-pv.c \
                            workers/volumeprotection/plugin-vac.c \
                            workers/volumeprotection/plugin-ephemeral.c
REGISTRY_CONTROLLER_LIBS += volprot
