# workers/attachdetach/: kcm's persistentvolume-attach-detach-controller, CSI volumes
# (docs/attachdetach.md). The decisions over parsed objects in ad.c; handlers, the sync over
# the cache and the apiserver, and the descriptor in plugin.c (linked through the registry).
LIBS               += attachdetach
attachdetach_SRCS    := workers/attachdetach/ad.c
attachdetach_LIBDEPS := kube
attachdetach_TESTS   := workers/attachdetach/tests/test-ad.c
REGISTRY_PLUGIN_SRCS     += workers/attachdetach/plugin.c
REGISTRY_CONTROLLER_LIBS += attachdetach
