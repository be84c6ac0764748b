# workers/svm/: kcm's storage-version-migrator-controller (docs/svm.md): StorageVersionMigrations
# run one at a time per resource, every cached object not newer than the migration's checkpoint
# rewritten in place, Succeeded/Failed as upstream. The decisions in svm.c; handlers, sync and
# descriptor in plugin.c (linked through the registry).
LIBS          += svm
svm_SRCS      := workers/svm/svm.c
svm_LIBDEPS   := kube
svm_TESTS     := workers/svm/tests/test-svm.c
REGISTRY_PLUGIN_SRCS     += workers/svm/plugin.c
REGISTRY_CONTROLLER_LIBS += svm
