# workers/satoken/: kcm's serviceaccount-token-controller (docs/satoken.md): legacy token Secrets
# populated (token, ca.crt, namespace) and deleted with their ServiceAccount. Key, JWT, Secret
# facts and bodies in satoken.c; handlers, sync and descriptor in plugin.c (linked through the
# registry); the root CA loader is the root-ca publisher's (rootca.h).
LIBS           += satoken
satoken_SRCS    := workers/satoken/satoken.c
satoken_LIBDEPS := kube shmrec kcapi rootca
satoken_TESTS   := workers/satoken/tests/test-satoken.c
REGISTRY_PLUGIN_SRCS     += workers/satoken/plugin.c
REGISTRY_CONTROLLER_LIBS += satoken
