package e2e

// The garbage collector's surroundings as kube-controller-manager has them: its own API client
// (generic-garbage-collector, 2x --kube-api-qps, one bucket shared by the GC processes), the
// start-up wait for the monitors, the dependency graph in DOT at
// /debug/controllers/garbage-collector-controller/graph (?uid= for one component), the
// sync-error counter and the workqueue metrics under upstream's queue names.

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
)

func gcxFreePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// gcxGet fetches path from kcmd's HTTPS server (self-signed certificate).
func gcxGet(t *testing.T, port int, path string) (int, string, string) {
	t.Helper()
	c := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	resp, err := c.Get(fmt.Sprintf("https://127.0.0.1:%d%s", port, path))
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, resp.Header.Get("Content-Type"), string(b)
}

func TestGC_DebugGraphAndMetrics(t *testing.T) {
	ctx := context.Background()
	ns := rsNamespace(t)
	port := gcxFreePort(t)
	p := gcxStartGC(t, "--kube-api-qps=20", "--kube-api-burst=30", "--concurrent-gc-syncs=2",
		"--secure-port="+strconv.Itoa(port), "--bind-address=127.0.0.1",
		// no token here: serve these paths to anyone, as kcm does with the same flag
		"--authorization-always-allow-paths=/healthz,/metrics,/debug/*")
	Eventually(t, 60*time.Second, "the GC workers started after the monitors synced", func() (bool, string) {
		return p.Logged("Garbage collector: all resource monitors have synced"), "not yet"
	})
	for _, want := range []string{"(worker-garbage-collector-controller-0/generic-garbage-collector)",
		"40 qps, burst 30, shared bucket"} {
		if !p.Logged(want) {
			t.Fatalf("no log line with %q (the GC's own client)", want)
		}
	}

	rs, err := env.Client.AppsV1().ReplicaSets(ns).Create(ctx, gcxRS(ns, "graph", 2), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var podUIDs []types.UID
	for i := 0; i < 2; i++ {
		pod, err := env.Client.CoreV1().Pods(ns).Create(ctx, &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("graph-%d", i),
				OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: rs.Name,
					UID: rs.UID, Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}}},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "fakeimage"}}},
		}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		podUIDs = append(podUIDs, pod.UID)
	}
	// a ConfigMap owned by the ReplicaSet too (another resource, metadata-only informer)
	cm, err := env.Client.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{
		Namespace: ns, Name: "graph-cm", OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1",
			Kind: "ReplicaSet", Name: rs.Name, UID: rs.UID}}}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}

	path := "/debug/controllers/garbage-collector-controller/graph?uid=" + string(rs.UID)
	var body string
	Eventually(t, 30*time.Second, "the ReplicaSet's component in the graph", func() (bool, string) {
		code, ctype, b := gcxGet(t, port, path)
		body = b
		if code != 200 || ctype != "text/vnd.graphviz" {
			return false, fmt.Sprintf("%d %s", code, ctype)
		}
		return strings.Count(b, " -> ") == 3, fmt.Sprintf("%d edges:\n%s", strings.Count(b, " -> "), b)
	})
	if !strings.HasPrefix(body, "strict digraph full {\n  // Node definitions.\n") || !strings.HasSuffix(body, "}\n") {
		t.Fatalf("not upstream's DOT layout:\n%s", body)
	}
	wantLabel := fmt.Sprintf("    label=\"uid=%s\\nnamespace=%s\\nReplicaSet.v1.apps/graph\\n\"\n", rs.UID, ns)
	if !strings.Contains(body, fmt.Sprintf("  %q [\n", string(rs.UID))+wantLabel) {
		t.Fatalf("no vertex for the ReplicaSet with label %q:\n%s", wantLabel, body)
	}
	for _, u := range append(podUIDs, cm.UID) {
		if !strings.Contains(body, fmt.Sprintf("  %q -> %q;\n", string(u), string(rs.UID))) {
			t.Fatalf("no edge %s -> %s:\n%s", u, rs.UID, body)
		}
	}
	if strings.Count(body, "  ];\n") != 4 {
		t.Fatalf("want 4 vertices in the component:\n%s", body)
	}

	// the whole graph under the alias holds the component too
	code, _, all := gcxGet(t, port, "/debug/controllers/garbagecollector/graph")
	if code != 200 || !strings.Contains(all, wantLabel) {
		t.Fatalf("full graph: %d\n%s", code, all)
	}
	if code, _, _ := gcxGet(t, port, "/debug/controllers/garbage-collector-controller/other"); code != 404 {
		t.Fatalf("another debug path: %d, want 404", code)
	}

	// background delete: the graph's component empties, the queue metric counts the work
	policy := metav1.DeletePropagationBackground
	if err := env.Client.AppsV1().ReplicaSets(ns).Delete(ctx, rs.Name, metav1.DeleteOptions{PropagationPolicy: &policy}); err != nil {
		t.Fatal(err)
	}
	Eventually(t, 60*time.Second, "the component collected", func() (bool, string) {
		_, _, b := gcxGet(t, port, path)
		return b == "strict digraph full {\n}\n", b
	})
	_, _, m := gcxGet(t, port, "/metrics")
	for _, want := range []string{
		"\ngarbagecollector_controller_resources_sync_error_total ",
		"\nworkqueue_adds_total{name=\"garbage_collector_attempt_to_delete\"} ",
		"\nworkqueue_depth{name=\"garbage_collector_attempt_to_orphan\"} ",
	} {
		if !strings.Contains(m, want) {
			t.Fatalf("/metrics has no %q", strings.TrimSpace(want))
		}
	}
	if strings.Contains(m, "name=\"gc-attempt-to-delete\"") {
		t.Fatalf("/metrics still names the GC queue by kcmd's memfd name")
	}
}
