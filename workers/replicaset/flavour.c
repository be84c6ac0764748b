/* SPDX-License-Identifier: Apache-2.0 */
/* workers/replicaset/flavour.c: the two kinds the ReplicaSet engine serves (flavour.h), with
 * upstream's names (pkg/controller/replicaset NewReplicaSetController and
 * pkg/controller/replication NewReplicationManager). */
#include "workers/replicaset/flavour.h"

const struct rs_flavour rs_flavour_replicaset = {
        .controller = "replicaset-controller",
        .queue = "replicaset",
        .group = "apps",
        .version = "v1",
        .resource = "replicasets",
        .kind = "ReplicaSet",
        .api_version = "apps/v1",
        .group_resource = "replicasets.apps",
        .component = "replicaset-controller",
        .decode = KUBE_KIND_REPLICASET,
        .status_terminating = true,
        .consistency = true,
        .status_protobuf = true,
        .metric_name = "replicaset",
        .what = "ReplicaSet",
};

const struct rs_flavour rs_flavour_replicationcontroller = {
        .controller = "replicationcontroller-controller",
        .queue = "replicationmanager",
        .group = "",
        .version = "v1",
        .resource = "replicationcontrollers",
        .kind = "ReplicationController",
        .api_version = "v1",
        .group_resource = "replicationcontrollers",
        .component = "replication-controller",
        .decode = KUBE_KIND_REPLICATIONCONTROLLER,
        .status_terminating = false,
        .consistency = false,
        .status_protobuf = false,
        .metric_name = "replicationcontroller",
        .what = "ReplicationController",
};
