# controllers/: the registry, the one table of this build's controllers (kcmd/controller.h).
# Each controller lives in its own folder (workers/<name>/) with a plugin.c holding its
# descriptor; linking the registry links every controller.
LIBS              += registry
registry_SRCS     := controllers/registry.c workers/replicaset/plugin.c workers/garbagecollector/plugin.c \
		     workers/kubeletsim/plugin.c workers/podgc/plugin.c
registry_LIBDEPS  := kcflag rs rshandlers worker gc gchandlers kubeletsim podgc kube shm ipc kclog kcfeat kcdispatch
registry_TESTS    := controllers/tests/test-registry.c
