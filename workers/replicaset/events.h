/* SPDX-License-Identifier: Apache-2.0 */
#pragma once
/*
 * workers/replicaset/events.h: the Events and error texts the ReplicaSet controller produces,
 * byte for byte as upstream (pkg/controller/controller_utils.go RealPodControl.CreatePods /
 * DeletePod, controller_ref_manager.go, replica_set.go). Events are recorded on the
 * ReplicaSet by the source component "replicaset-controller"; writing them as core/v1 Events
 * with client-go's aggregation is the executor's business (kube_encode_event).
 */
#include <stddef.h>

#include "kube/model.h"

#define RS_EVENT_COMPONENT          "replicaset-controller"
#define RS_EVENT_NORMAL             "Normal"
#define RS_EVENT_WARNING            "Warning"
#define RS_REASON_SUCCESSFUL_CREATE "SuccessfulCreate"
#define RS_REASON_FAILED_CREATE     "FailedCreate"
#define RS_REASON_SUCCESSFUL_DELETE "SuccessfulDelete"
#define RS_REASON_FAILED_DELETE     "FailedDelete"
/* the ReplicaFailure condition of ReplicaSetStatus */
#define RS_CONDITION_REPLICA_FAILURE "ReplicaFailure"
#define RS_ERR_NO_LABELS             "unable to create pods, no labels"

/* Each formatter returns a malloc'd string or NULL on allocation failure. */
char *rs_msg_created(const char *pod_name);     /* "Created pod: <name>" */
char *rs_msg_create_failed(const char *err);    /* "Error creating: <err>" */
char *rs_msg_deleted(const char *pod_name);     /* "Deleted pod: <name>" */
char *rs_msg_delete_failed(const char *err);    /* "Error deleting: <err>" */
char *rs_err_unable_to_delete(const char *err); /* "unable to delete pods: <err>" */
/* "can't recheck DeletionTimestamp: <err>" */
char *rs_err_recheck(const char *err);
/* "original ReplicaSet <ns>/<name> is gone: got uid <got>, wanted <want>" */
char *rs_err_original_gone(const char *kind, const char *ns, const char *name, const char *got,
                           const char *want);
/* "<ns>/<name> has just been deleted at <Go time.Time.String() of ts>" */
char *rs_err_just_deleted(const char *ns, const char *name, kube_time_t ts);
/* "can't adopt Pod <ns>/<name> (<uid>): <err>" */
char *rs_err_cant_adopt(const char *ns, const char *name, const char *uid, const char *err);
/* Go's time.Time.String() for a UTC time: "2006-01-02 15:04:05.999999999 +0000 UTC"
 * (fraction without trailing zeros, omitted when zero). buf needs 48 bytes. */
int rs_go_time_string(kube_time_t t, char *buf, size_t len);

/* utilerrors.NewAggregate(errs).Error(): "" for none, the message for one, otherwise
 * "[a, b, ...]" with duplicate messages dropped. malloc'd, NULL on allocation failure. */
char *rs_aggregate_errors(const char *const *msgs, size_t n);
