# workers/namespace/: kcm's namespace-controller (docs/namespace.md): deletes a terminating
# namespace's content resource by resource, then its finalizer. Pure rules in nsdel.c;
# handlers, the deleter's requests and the descriptor in plugin.c (linked through the registry).
LIBS          += nsctl
nsctl_SRCS    := workers/namespace/nsdel.c
nsctl_LIBDEPS := kube shmrec kcapi kclog
nsctl_TESTS   := workers/namespace/tests/test-namespace.c
REGISTRY_PLUGIN_SRCS     += workers/namespace/plugin.c
REGISTRY_CONTROLLER_LIBS += nsctl
