# workers/certificates/: kcm's certificatesigningrequest-cleaner-controller,
# certificatesigningrequest-signing-controller and certificatesigningrequest-approving-controller
# (docs/certificates.md). Pure decisions and the signing in cleaner.c and signer.c; handlers,
# syncs and descriptors in plugin-*.c (linked through the registry).
LIBS          += csrctl
csrctl_SRCS    := workers/certificates/cleaner.c workers/certificates/signer.c
csrctl_LIBDEPS := kube
csrctl_TESTS   := workers/certificates/tests/test-cleaner.c workers/certificates/tests/test-signer.c
REGISTRY_PLUGIN_SRCS     += workers/certificates/plugin-cleaner.c workers/certificates/plugin-signing.c \
                            workers/certificates/plugin-approving.c
REGISTRY_CONTROLLER_LIBS += csrctl
