# workers/legacysatoken/: kcm's legacy-serviceaccount-token-cleaner-controller
# (docs/legacysatoken.md): unused legacy service account token Secrets labelled invalid, then
# deleted a clean-up period later. Pure decisions in lsa.c; handlers, sync and descriptor in
# plugin.c (linked through the registry).
LIBS        += lsatoken
lsatoken_SRCS    := workers/legacysatoken/lsa.c
lsatoken_LIBDEPS := kube
lsatoken_TESTS   := workers/legacysatoken/tests/test-lsa.c
REGISTRY_PLUGIN_SRCS     += workers/legacysatoken/plugin.c
REGISTRY_CONTROLLER_LIBS += lsatoken
