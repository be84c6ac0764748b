# workers/bootstrap/: kcm's token-cleaner-controller and bootstrap-signer-controller
# (docs/bootstrap.md): bootstrap token Secrets deleted when expired, kube-public/cluster-info
# signed with every signing token. Pure decisions in bootstrap.c; handlers, syncs and
# descriptors in plugin.c (linked through the registry).
LIBS              += bootstrap
bootstrap_SRCS    := workers/bootstrap/bootstrap.c
bootstrap_LIBDEPS := kube
bootstrap_TESTS   := workers/bootstrap/tests/test-bootstrap.c
REGISTRY_PLUGIN_SRCS     += workers/bootstrap/plugin.c
REGISTRY_CONTROLLER_LIBS += bootstrap
