# workers/deployment/: the deployment controller (docs/deployment.md). So far its arithmetic
# (plan.c: fenceposts, new and old ReplicaSet sizes, proportional scaling, event text), pure and
# unit-tested against upstream's test tables; the descriptor, handlers and sync are not written
# yet, so nothing is handed to the registry (REGISTRY_PLUGIN_SRCS / REGISTRY_CONTROLLER_LIBS).
LIBS             += deployment
deployment_SRCS  := workers/deployment/plan.c
deployment_LIBDEPS :=
deployment_TESTS := workers/deployment/tests/test-plan.c
