# workers/replicationcontroller/: the replication controller (docs/replicationcontroller.md).
# Only its descriptor lives here: the engine is the ReplicaSet controller's (workers/replicaset/,
# flavour.h), as upstream's replication controller is the ReplicaSet controller over RCs.
# The registry (controllers/module.mk) links the descriptor and the engine's libraries.
REGISTRY_PLUGIN_SRCS     += workers/replicationcontroller/plugin.c
REGISTRY_CONTROLLER_LIBS += rs rshandlers worker
