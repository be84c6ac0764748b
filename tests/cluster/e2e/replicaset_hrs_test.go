package e2e

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
)

// hrsRSEvents lists the Events kcmd's ReplicaSet controller wrote about ns/name with reason.
func hrsRSEvents(t *testing.T, ns, name, reason string) []corev1.Event {
	t.Helper()
	sel := fields.Set{"involvedObject.kind": "ReplicaSet", "involvedObject.name": name, "reason": reason}.AsSelector()
	evs, err := env.Client.CoreV1().Events(ns).List(context.Background(), metav1.ListOptions{FieldSelector: sel.String()})
	if err != nil {
		t.Fatal(err)
	}
	var out []corev1.Event
	for _, e := range evs.Items {
		if e.Source.Component == "replicaset-controller" {
			out = append(out, e)
		}
	}
	return out
}

// TestReplicaSet_KcmdEventsAggregated: a create that keeps failing (a ResourceQuota of 1 pod
// under a ReplicaSet of 2) is recorded as upstream's recorder does. The quota error names the
// generated pod, so every message differs: the first 9 are separate Events, from the 10th on
// they go into one "(combined from similar events): ..." Event whose count grows by PATCH.
// kcmd runs three ReplicaSet worker processes here: the retried syncs land on different ones,
// and their Events still meet one correlator (the controller's one event sink, as upstream's one
// recorder), so the numbers are upstream's exactly.
func TestReplicaSet_KcmdEventsAggregated(t *testing.T) {
	stopSharedRS(t)
	startQuotaController(t)
	ctx := context.Background()
	ns := rsNamespace(t)
	name := "agg"
	quota := &corev1.ResourceQuota{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{corev1.ResourcePods: resource.MustParse("1")}},
	}
	if _, err := env.Client.CoreV1().ResourceQuotas(ns).Create(ctx, quota, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	Eventually(t, 60*time.Second, "the quota's status.hard to be synced", func() (bool, string) {
		q, err := env.Client.CoreV1().ResourceQuotas(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		hard := q.Status.Hard[corev1.ResourcePods]
		return hard.Cmp(resource.MustParse("1")) == 0, fmt.Sprintf("status %+v", q.Status)
	})
	port := hmgFreePort(t)
	p := startKcmd(t, nil, "--controllers=replicaset-controller", "--secure-port="+strconv.Itoa(port),
		"--bind-address=127.0.0.1", "--leader-elect=false", "--authorization-always-allow-paths=/healthz,/metrics",
		"--concurrent-replicaset-syncs=3", "--kube-api-qps=200", "--kube-api-burst=400")
	t.Cleanup(func() { dumpKcmdLogs(t, p) })
	mustCreateRS(t, demoReplicaSet(ns, name, 2))

	var evs []corev1.Event
	var combined *corev1.Event
	Eventually(t, 90*time.Second, "a combined FailedCreate Event with count >= 2", func() (bool, string) {
		evs = hrsRSEvents(t, ns, name, "FailedCreate")
		var desc []string
		combined = nil
		for i, e := range evs {
			desc = append(desc, fmt.Sprintf("%s count=%d", e.Name, e.Count))
			if strings.HasPrefix(e.Message, "(combined from similar events): ") {
				combined = &evs[i]
			}
		}
		return combined != nil && combined.Count >= 2, strings.Join(desc, ", ")
	})
	plain, nCombined := 0, 0
	for _, e := range evs {
		msg := strings.TrimPrefix(e.Message, "(combined from similar events): ")
		if msg == e.Message {
			plain++
		} else {
			nCombined++
		}
		if e.Type != corev1.EventTypeWarning || !strings.HasPrefix(msg, "Error creating: pods \""+name+"-") ||
			!strings.Contains(msg, "exceeded quota: "+name) {
			t.Errorf("event %s: type %q message %q, want Warning \"Error creating: pods \\\"%s-...\\\" is forbidden: exceeded quota: %s...\"", e.Name, e.Type, e.Message, name, name)
		}
	}
	if plain != 9 || nCombined != 1 {
		t.Errorf("%d separate and %d combined FailedCreate Events, want 9 and 1 (the 10th distinct message starts the combined one; one correlator for all workers)", plain, nCombined)
	}
	if combined.Count >= 2 && !combined.LastTimestamp.After(combined.FirstTimestamp.Time) && !combined.LastTimestamp.Equal(&combined.FirstTimestamp) {
		t.Errorf("combined event: lastTimestamp %v before firstTimestamp %v", combined.LastTimestamp, combined.FirstTimestamp)
	}
	if combined.ReportingController != "" {
		t.Errorf("combined event: reportingComponent %q, want \"\" (client-go's aggregate event has none)", combined.ReportingController)
	}
	// only one pod fits
	if owned, all := activePods(t, ns, "app="+name, getRS(t, ns, name).UID); owned != 1 || all != 1 {
		t.Errorf("owned=%d total=%d pods, want 1 (quota)", owned, all)
	}
	// the controller's metric families are on kcmd's /metrics
	text, err := hmgGetMetrics(port)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"# TYPE replicaset_controller_sorting_deletion_age_ratio histogram",
		`replicaset_controller_sorting_deletion_age_ratio_bucket{le="0.25"} `,
		"# TYPE replicaset_controller_stale_sync_skips_total counter",
		`replicaset_controller_stale_sync_skips_total{group="",resource="pods"} `,
		`replicaset_controller_stale_sync_skips_total{group="apps",resource="replicasets"} `,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
}

// TestReplicaSet_KcmdScaleUp500: one sync creates up to burstReplicas (500) pods in slow-start
// batches sent as concurrent requests (the batch sizes are read from kcmd's --v=4 log); the
// ReplicaSet ends with exactly 500 pods (the
// expectations hold back a second round while the informer catches up), the status reports
// them, and the SuccessfulCreate Events are combined and spam-limited as upstream's one recorder
// per controller does (25 per object, 10 distinct messages before they are combined).
// Scaled to 0, the 500 pods are deleted by concurrent DELETEs.
func TestReplicaSet_KcmdScaleUp500(t *testing.T) {
	// a kcmd of its own at --v=4, whose log reports every slow-start batch
	stopSharedRS(t)
	p := startPrivateRS(t)
	t.Cleanup(func() { dumpKcmdLogs(t, p) })
	ns := rsNamespace(t)
	name := "big"
	rs := mustCreateRS(t, demoReplicaSet(ns, name, 500))
	maxSeen := 0
	Eventually(t, 120*time.Second, "500 pods and status.replicas=500", func() (bool, string) {
		owned, all := activePods(t, ns, "app="+name, rs.UID)
		if all > maxSeen {
			maxSeen = all
		}
		cur := getRS(t, ns, name)
		return owned == 500 && all == 500 && cur.Status.Replicas == 500 && cur.Status.ObservedGeneration == cur.Generation,
			fmt.Sprintf("owned=%d total=%d status.replicas=%d", owned, all, cur.Status.Replicas)
	})
	// no second round of creations once the informer has seen everything
	time.Sleep(3 * time.Second)
	if _, all := activePods(t, ns, "app="+name, rs.UID); all != 500 || maxSeen > 500 {
		t.Errorf("%d pods now, at most %d seen, want 500 throughout", all, maxSeen)
	}
	// slowStartBatch: 1, 2, 4, ... 128, then the remaining 245, each batch done before the next
	var batches, timing []string
	for _, l := range p.Logs() {
		if i := strings.Index(l, ns+"/"+name+": slow-start batch of "); i >= 0 {
			f := strings.Fields(l[i+len(ns+"/"+name+": slow-start batch of "):])
			batches = append(batches, f[0])
			if len(f) >= 6 {
				timing = append(timing, f[0]+" in "+f[5]+" ms")
			}
		}
	}
	if got, want := strings.Join(batches, ","), "1,2,4,8,16,32,64,128,245"; got != want {
		t.Errorf("slow-start batches %s, want %s", got, want)
	}
	t.Logf("slow-start batches: %s", strings.Join(timing, ", "))
	// upstream: one recorder per controller (kcmd: one event sink for all RS workers); the
	// aggregator combines from the 10th distinct message on, the spam filter lets 25 events per
	// object through: 9 plain Events and one combined Event of count 16. The sink writes them
	// after the pods (asynchronously), so wait for them.
	var evs []corev1.Event
	var combined, plain int
	total := int32(0)
	Eventually(t, 60*time.Second, "9 plain SuccessfulCreate Events and one combined of count 16", func() (bool, string) {
		evs = hrsRSEvents(t, ns, name, "SuccessfulCreate")
		combined, plain, total = 0, 0, 0
		for _, e := range evs {
			total += e.Count
			if strings.HasPrefix(e.Message, "(combined from similar events): Created pod: "+name+"-") {
				combined++
			} else if strings.HasPrefix(e.Message, "Created pod: "+name+"-") {
				plain++
			} else {
				t.Errorf("event %s: message %q", e.Name, e.Message)
			}
		}
		return plain == 9 && combined == 1 && total == 25,
			fmt.Sprintf("%d Event objects (%d plain, %d combined), counts sum %d", len(evs), plain, combined, total)
	})
	t.Logf("SuccessfulCreate for 500 pods: %d Event objects (%d plain, %d combined), counts sum %d", len(evs), plain, combined, total)

	// scale to 0: 500 concurrent DELETEs in one sync, expectations by pod key
	zero := int32(0)
	updateRS(t, ns, name, func(r *appsv1.ReplicaSet) { r.Spec.Replicas = &zero })
	Eventually(t, 120*time.Second, "no pods and status.replicas=0", func() (bool, string) {
		_, all := activePods(t, ns, "app="+name, rs.UID)
		cur := getRS(t, ns, name)
		return all == 0 && cur.Status.Replicas == 0 && cur.Status.ObservedGeneration == cur.Generation,
			fmt.Sprintf("total=%d status.replicas=%d", all, cur.Status.Replicas)
	})
	if n := len(hrsRSEvents(t, ns, name, "FailedDelete")); n != 0 {
		t.Errorf("%d FailedDelete events", n)
	}
	// (SuccessfulDelete events may all be dropped: the spam filter's 25 tokens per object and
	// process went to the creations if the same worker scaled down, as upstream's would)
}
