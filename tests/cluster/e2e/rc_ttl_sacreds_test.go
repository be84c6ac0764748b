package e2e

// The replication controller and the TTL-after-finished controller with
// --use-service-account-credentials: kcmd runs as the user "kcmd" (read everything, no write to
// pods, ReplicationControllers or Jobs; hmgKcmdRBAC), so every write must be made under the
// controllers' own accounts, kube-system/replication-controller and
// kube-system/ttl-after-finished-controller, with only what their bootstrap ClusterRoles allow
// (for the RC status: update, not patch). Also checks their families on /metrics.

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

func TestReplicationController_ServiceAccountCredentials(t *testing.T) {
	ctx := context.Background()
	stopSharedRC(t)
	ns := rsNamespace(t)
	hmgKcmdRBAC(t, "rc-ttl-kcmd-sacreds")
	if hmgCan(t, "kcmd", "create", "", "pods", "", ns) || hmgCan(t, "kcmd", "update", "", "replicationcontrollers", "status", ns) ||
		hmgCan(t, "kcmd", "delete", "batch", "jobs", "", ns) {
		t.Fatal("the user kcmd may write pods, RC status or Jobs: the test would prove nothing")
	}
	port := hmgFreePort(t)
	p := startKcmd(t, nil, "--kubeconfig="+env.Cluster.Kubeconfigs["kcmd"], "--use-service-account-credentials",
		"--controllers=replicationcontroller-controller,ttl-after-finished-controller", "--leader-elect=false",
		"--concurrent-rc-syncs=2", "--concurrent-ttl-after-finished-syncs=2",
		"--secure-port="+strconv.Itoa(port), "--bind-address=127.0.0.1", "--v=2",
		"--authorization-always-allow-paths=/healthz,/healthz/*,/readyz,/readyz/*,/metrics")
	t.Cleanup(func() { dumpKcmdLogs(t, p) })
	Eventually(t, 60*time.Second, "kcmd to get both service-account tokens", func() (bool, string) {
		return p.Logged("using service account kube-system/replication-controller") &&
			p.Logged("using service account kube-system/ttl-after-finished-controller"), "not yet"
	})

	rc := waitRCStable(t, mustCreateRC(t, newITRC(ns, "rc", 3)))
	if !p.Logged("writing status with PUT from now on") {
		t.Error("the RC worker did not switch to PUT for status writes (the bootstrap role grants update only)")
	}
	waitRCStable(t, updateRC(t, ns, rc.Name, func(rc *corev1.ReplicationController) { rc.Spec.Replicas = ptr.To(int32(1)) }))

	j := ttlJob(ns, "ttl", ptr.To[int32](0))
	mustCreateJob(t, j)
	t.Cleanup(func() { removeDummyFinalizer(t, ns, j.Name) }) // the foreground deletion's, no GC runs
	finishJob(t, ns, j.Name, false)
	Eventually(t, 30*time.Second, "the finished Job deleted by the TTL controller's account", func() (bool, string) {
		cur, err := env.Client.BatchV1().Jobs(ns).Get(ctx, j.Name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return true, ""
		}
		if err != nil {
			return false, err.Error()
		}
		return cur.DeletionTimestamp != nil, "not deleted"
	})
	for _, l := range p.Logs() {
		if strings.Contains(strings.ToLower(l), "forbidden") && !strings.Contains(l, "because it is being terminated") &&
			!strings.Contains(l, "PATCH replicationcontrollers/status refused (403)") {
			t.Errorf("kcmd was refused something: %s", l)
		}
	}

	var text string
	Eventually(t, 20*time.Second, "the controllers' families on /metrics", func() (bool, string) {
		var err error
		if text, err = hmgGetMetrics(port); err != nil {
			return false, err.Error()
		}
		adds, ok1 := hmgMetric(text, "workqueue_adds_total", `name="replicationmanager"`)
		tadds, ok2 := hmgMetric(text, "workqueue_adds_total", `name="ttl_jobs_to_delete"`)
		del := strings.Contains(text, "\nttl_after_finished_controller_job_deletion_duration_seconds_count 1\n")
		return ok1 && adds > 0 && ok2 && tadds > 0 && del, fmt.Sprintf("replicationmanager adds %v (%v), ttl adds %v (%v), deletion observed %v",
			adds, ok1, tadds, ok2, del)
	})
	for _, want := range []string{
		"# TYPE replicaset_controller_sorting_deletion_age_ratio histogram\n",
		"\nkcmd_replicationcontroller_expectations_capacity ",
		"# TYPE ttl_after_finished_controller_job_deletion_duration_seconds histogram\n",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("/metrics lacks %q", strings.TrimSpace(want))
		}
	}
	if n := strings.Count(text, "# TYPE replicaset_controller_sorting_deletion_age_ratio "); n != 1 {
		t.Errorf("replicaset_controller_sorting_deletion_age_ratio declared %d times", n)
	}
}
