package e2e

// Controllers' declared metrics (lib/ctlmetrics.h) through a running kcmd: the manager creates
// each controller's region, hands it to every worker process (KCMD_METRICS_FD) and renders it on
// /metrics. The pod GC, CronJob and TTL-after-finished families are checked by their own tests
// (podgc_test.go, cronjob_test.go, rc_ttl_sacreds_test.go); these cover the Job controller (two
// worker processes writing one region) and the root CA publisher (a label of free values).

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// ctlmSum adds the values of every sample line of body that starts with prefix (-1: none).
func ctlmSum(t *testing.T, body, prefix string) float64 {
	t.Helper()
	sum, seen := 0.0, false
	for _, l := range strings.Split(body, "\n") {
		if !strings.HasPrefix(l, prefix) {
			continue
		}
		f := strings.Fields(l)
		v, err := strconv.ParseFloat(f[len(f)-1], 64)
		if err != nil {
			t.Fatalf("%q: %v", l, err)
		}
		sum, seen = sum+v, true
	}
	if !seen {
		return -1
	}
	return sum
}

func ctlmPort(t *testing.T, p *kcmdProc) int {
	t.Helper()
	for _, a := range p.cmd.Args {
		if v, ok := strings.CutPrefix(a, "--secure-port="); ok {
			n, err := strconv.Atoi(v)
			if err == nil && n > 0 {
				return n
			}
		}
	}
	t.Fatal("kcmd runs without a --secure-port")
	return 0
}

// A Job whose first pod fails and second succeeds: upstream's job_controller_* families, as two
// worker processes counted them into one region.
func TestJob_Metrics(t *testing.T) {
	ns := Namespace(t)
	hjStripFinalizers(t, ns)
	port := gcxFreePort(t)
	p := startKcmd(t, nil, "--controllers=job-controller", "--leader-elect=false",
		"--secure-port="+strconv.Itoa(port), "--bind-address=127.0.0.1",
		"--authorization-always-allow-paths=/healthz,/metrics", "--concurrent-job-syncs=2",
		"--job-pod-failure-backoff=100ms", "--job-pod-failure-max-backoff=1s", "--v=2")
	t.Cleanup(func() { dumpKcmdLogs(t, p) })
	j := hjCreate(t, hjJob(ns, "metrics"))
	validateJobPodsStatus(t, j, podsByStatus{Active: 1, Terminating: ptr.To[int32](0)})
	setJobPodsPhase(t, j, corev1.PodFailed, 1)
	validateJobPodsStatus(t, j, podsByStatus{Active: 1, Failed: 1, Terminating: ptr.To[int32](0)})
	setJobPodsPhase(t, j, corev1.PodSucceeded, 1)
	validateJobCondition(t, j, batchv1.JobComplete, "CompletionsReached")

	const fin = `job_controller_jobs_finished_total{completion_mode="NonIndexed",reason="CompletionsReached",result="succeeded"} `
	var body string
	Eventually(t, 20*time.Second, "the finished Job on /metrics", func() (bool, string) {
		code, _, b := gcxGet(t, port, "/metrics")
		body = b
		return code == 200 && ctlmSum(t, b, fin) == 1, "not yet"
	})
	for _, want := range []string{
		"# HELP job_controller_job_syncs_total [STABLE] The number of job syncs\n# TYPE job_controller_job_syncs_total counter\n",
		"# HELP job_controller_jobs_finished_total [STABLE] The number of finished jobs\n# TYPE job_controller_jobs_finished_total counter\n",
		"# HELP job_controller_job_pods_finished_total [STABLE] The number of finished Pods that are fully tracked\n",
		"# TYPE job_controller_job_pods_creation_total counter\n",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
	checks := []struct {
		prefix string
		want   float64
	}{
		{`job_controller_job_pods_finished_total{completion_mode="NonIndexed",result="failed"} `, 1},
		{`job_controller_job_pods_finished_total{completion_mode="NonIndexed",result="succeeded"} `, 1},
		// the first pod and its replacement; a creation that failed would count as failed too
		{`job_controller_job_pods_creation_total{reason="`, 2},
	}
	for _, c := range checks {
		if v := ctlmSum(t, body, c.prefix); v != c.want {
			t.Errorf("%s= %v, want %v", c.prefix, v, c.want)
		}
	}
	if v := ctlmSum(t, body, `job_controller_job_syncs_total{action="pods_created",completion_mode="NonIndexed",result="success"} `); v < 2 {
		t.Errorf("job_syncs_total{action=pods_created,...,result=success} = %v, want >= 2", v)
	}
	if strings.Contains(body, "kcmd_metric_series_dropped_total") {
		t.Error("a series was dropped")
	}
}

// The publisher's two families by code: a sync of each namespace's ConfigMap is a 200.
func TestRootCA_Metrics(t *testing.T) {
	p := saStart(t, "root-ca-certificate-publisher-controller", "--root-ca-file="+env.Cluster.CAFile)
	port := ctlmPort(t, p)
	ns := Namespace(t)
	Eventually(t, 30*time.Second, "ConfigMap "+ns+"/"+rcName, func() (bool, string) {
		_, err := env.Client.CoreV1().ConfigMaps(ns).Get(context.Background(), rcName, metav1.GetOptions{})
		return err == nil, "not yet"
	})
	var body string
	Eventually(t, 20*time.Second, "root_ca_cert_publisher_sync_total on /metrics", func() (bool, string) {
		code, _, b := gcxGet(t, port, "/metrics")
		body = b
		return code == 200 && ctlmSum(t, b, `root_ca_cert_publisher_sync_total{code="200"} `) >= 1, "not yet"
	})
	const help = "Number of namespace syncs happened in root ca cert publisher."
	for _, want := range []string{
		"# HELP root_ca_cert_publisher_sync_duration_seconds [ALPHA] " + help + "\n# TYPE root_ca_cert_publisher_sync_duration_seconds histogram\n",
		"# HELP root_ca_cert_publisher_sync_total [ALPHA] " + help + "\n# TYPE root_ca_cert_publisher_sync_total counter\n",
		`root_ca_cert_publisher_sync_duration_seconds_bucket{code="200",le="0.001"} `,
		`root_ca_cert_publisher_sync_duration_seconds_bucket{code="200",le="16.384"} `,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
	// one observation per sync in both families; the counter is added to first and rendered
	// after the histogram, so it is never below the histogram's count
	syncs := ctlmSum(t, body, `root_ca_cert_publisher_sync_total{code="200"} `)
	count := ctlmSum(t, body, `root_ca_cert_publisher_sync_duration_seconds_count{code="200"} `)
	inf := ctlmSum(t, body, `root_ca_cert_publisher_sync_duration_seconds_bucket{code="200",le="+Inf"} `)
	if count < 1 || count > syncs || inf != count {
		t.Errorf("sync_total %v, _count %v, +Inf %v", syncs, count, inf)
	}
}
