/* SPDX-License-Identifier: Apache-2.0 */
#pragma once
/*
 * workers/replicaset/flavour.h: which kind the ReplicaSet engine runs over.
 *
 * Upstream's replication controller (pkg/controller/replication) is the ReplicaSet controller
 * (NewBaseController) over ReplicationControllers converted to ReplicaSets: another GVK, queue
 * name, event source, a no-op consistency store and no status.terminatingReplicas. kcmd does the
 * same: one engine (sync.c, handlers.c, controller.c, table.c, the expectations region), and a
 * flavour naming everything that differs between the two controllers. A ReplicationController
 * is stored in the arena as the same typed record as a ReplicaSet (its map selector compiled as
 * matchLabels, kube/model.h KUBE_KIND_REPLICATIONCONTROLLER), so every reader is shared.
 *
 * Rejected: a copy of the engine for RCs (two copies of syncReplicaSet drift apart, which is
 * why upstream folded them in 2017); converting RC JSON to RS JSON before decoding (a second
 * JSON pass per event for nothing the decoder cannot do in its one walk).
 */
#include <stdbool.h>

#include "kube/model.h"

struct rs_flavour {
	const char *controller;                 /* kcm's name: "replicaset-controller" */
	const char *queue;                      /* queue name and workqueue metric name */
	const char *group, *version, *resource; /* the API of the kind */
	const char *kind, *api_version;         /* controllerRef and Events' involvedObject */
	const char *group_resource;             /* in a Conflict message: "replicasets.apps" */
	const char *component;                  /* Events' source.component */
	enum kube_kind decode;                  /* how a GET of it decodes */
	/* ReplicaSetControllerFeatures.EnableStatusTerminatingReplicas (false for RCs) */
	bool status_terminating;
	/* the v1.36 consistency store (StaleControllerConsistencyReplicaSet); RCs get a no-op
	 * store upstream (NewNoopConsistencyStore) */
	bool consistency;
	/* the status PUT may go back as protobuf (kube_proto_rs_with_status knows ReplicaSets) */
	bool status_protobuf;
	const char *metric_name; /* kcmd_<metric_name>_expectations_* in /metrics */
	const char *what;        /* "ReplicaSet" in kcmd's own help texts and logs */
};

extern const struct rs_flavour rs_flavour_replicaset;
extern const struct rs_flavour rs_flavour_replicationcontroller;
