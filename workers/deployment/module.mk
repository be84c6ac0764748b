# workers/deployment/: the deployment controller (docs/deployment.md): its arithmetic (plan.c,
# pure and unit-tested against upstream's test tables), selector matching (match.c), its
# handlers (handlers.c, run by its kcmd-dispatcher) and sync (sync.c, its ReplicaSets from the
# cache as JSON by rsjson.c; run by kcmd-worker
# --controller=deployment-controller).
LIBS             += deployment
deployment_SRCS  := workers/deployment/plan.c workers/deployment/match.c \
                    workers/deployment/handlers.c workers/deployment/sync.c \
                    workers/deployment/rsjson.c
deployment_LIBDEPS := kcapi kcfeat kube shm shmrec ipc kclog kcdispatch
deployment_TESTS := workers/deployment/tests/test-plan.c workers/deployment/tests/test-match.c \
                    workers/deployment/tests/test-rsjson.c
# The registry (controllers/module.mk) links the descriptor and the library.
REGISTRY_PLUGIN_SRCS     += workers/deployment/plugin.c
REGISTRY_CONTROLLER_LIBS += deployment
