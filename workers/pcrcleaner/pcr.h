/* SPDX-License-Identifier: Apache-2.0 */
#pragma once
/*
 * workers/pcrcleaner/pcr.h: the podcertificaterequest-cleaner-controller's decision, pure.
 *
 * Design note.
 *   Upstream's PCRCleanerController (pkg/controller/certificates/cleaner/pcrcleaner.go,
 *   v1.37.2; kcm starts it when the PodCertificateRequest gate is on, GA and on in v1.37) lists
 *   every PodCertificateRequest from its informer at start and then 5 minutes after each pass
 *   ends (wait.UntilWithContext), and deletes each one created at least 15 minutes ago, with
 *   a UID precondition (NotFound is done; any other error is logged and waits for the next
 *   pass). Nothing else of the object is read: pending, issued and failed requests alike.
 *   Here one key, queued by the dispatcher's resync and requeued 5 minutes after each pass;
 *   the requests are cached whole (the metadata record keeps no creationTimestamp).
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PCR_CONTROLLER   "podcertificaterequest-cleaner-controller"
#define PCR_QUEUE        "podcertificaterequest_cleaner"
#define PCR_KEY          "clean"
#define PCR_THRESHOLD_NS (15ll * 60 * 1000000000) /* kcm's threshold */
#define PCR_INTERVAL_US  (5ull * 60 * 1000000)    /* kcm's pollingInterval */

/* Whether the request whose JSON this is is due for deletion at now_ns (Unix ns): its
 * creationTimestamp plus threshold_ns is not after now (Go's Now().Before(created+threshold)
 * is false). -EBADMSG when it has no parseable creationTimestamp (left alone). */
int pcr_due(const char *json, size_t len, int64_t now_ns, int64_t threshold_ns);
