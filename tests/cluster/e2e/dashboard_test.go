package e2e

// Dashboards (docs/operations.md "Dashboards"): kcm's dashboards work on kcmd unchanged, and so
// does kcmd's own (packaging/grafana/kcmd-dashboard.json).

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// What the kubernetes-mixin's controller-manager dashboard and alerts read (kubernetes-monitoring/
// kubernetes-mixin, dashboards/controller-manager.libsonnet and alerts/kube_controller_manager.
// libsonnet at 74c0fdd/7300de9): metric -> the labels its queries select or group by (besides
// Prometheus's own job/instance/cluster). The alert is absent(up{...}): `up` is written by
// Prometheus for any target, so it needs nothing from kcmd.
var hdbMixin = map[string][]string{
	"workqueue_adds_total":                        {"name"},
	"workqueue_depth":                             {"name"},
	"workqueue_queue_duration_seconds_bucket":     {"name", "le"},
	"rest_client_requests_total":                  {"code"},
	"rest_client_request_duration_seconds_bucket": {"verb", "url", "le"},
	"process_resident_memory_bytes":               {},
	"process_cpu_seconds_total":                   {},
	"go_goroutines":                               {},
}

// What the mixin reads and kcm v1.37 itself does not serve either, or cannot mean anything for a
// C program; the panels using them stay empty on kcmd as (for url) they do on kcm.
var hdbNotServed = map[string]string{
	"go_goroutines": "a Go runtime metric; kcmd is not a Go program (its processes are in kcmd_child_*)",
	"rest_client_request_duration_seconds_bucket/url": "client-go labels it {verb, host} (no url) since Kubernetes 1.2x; kcm v1.37 has no url either, and `by (verb, url, le)` works without it",
}

// hdbScrape parses Prometheus text: metric name -> the label names its samples carry.
func hdbScrape(body string) map[string]map[string]bool {
	out := map[string]map[string]bool{}
	re := regexp.MustCompile(`^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{([^}]*)\})?\s`)
	lre := regexp.MustCompile(`([a-zA-Z_][a-zA-Z0-9_]*)="`)
	for _, line := range strings.Split(body, "\n") {
		m := re.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		if out[m[1]] == nil {
			out[m[1]] = map[string]bool{}
		}
		for _, l := range lre.FindAllStringSubmatch(m[3], -1) {
			out[m[1]][l[1]] = true
		}
	}
	return out
}

// hdbExprUses extracts metric -> labels from a PromQL expression of kcmd's dashboard: every
// metric{...} selector with its matcher labels, and the labels of a `by (...)` around it.
func hdbExprUses(expr string) map[string][]string {
	uses := map[string][]string{}
	sel := regexp.MustCompile(`([a-zA-Z_:][a-zA-Z0-9_:]*)\{([^}]*)\}`)
	by := regexp.MustCompile(`by \(([^)]*)\)`)
	var grouped []string
	for _, b := range by.FindAllStringSubmatch(expr, -1) {
		for _, l := range strings.Split(b[1], ",") {
			grouped = append(grouped, strings.TrimSpace(l))
		}
	}
	for _, s := range sel.FindAllStringSubmatch(expr, -1) {
		var labels []string
		for _, m := range regexp.MustCompile(`([a-zA-Z_][a-zA-Z0-9_]*)\s*(=~|!=|!~|=)`).FindAllStringSubmatch(s[2], -1) {
			labels = append(labels, m[1])
		}
		uses[s[1]] = append(labels, grouped...)
	}
	return uses
}

// TestDashboard_MetricsExist: every metric and label the kubernetes-mixin controller-manager
// dashboard and alerts use, and every one packaging/grafana/kcmd-dashboard.json uses, is on a
// live kcmd's /metrics (a ReplicaSet synced first, so the queue and client histograms have
// samples), except the documented hdbNotServed.
func TestDashboard_MetricsExist(t *testing.T) {
	stopSharedRS(t)
	port := gcxFreePort(t)
	lease := leaseName(t)
	p := startKcmd(t, nil, "--controllers=replicaset-controller", "--secure-port="+strconv.Itoa(port),
		"--bind-address=127.0.0.1", "--authorization-always-allow-paths=/healthz,/metrics,/statusz",
		"--leader-elect-resource-name="+lease, "--leader-elect-lease-duration=4s",
		"--leader-elect-renew-deadline=3s", "--leader-elect-retry-period=1s")
	Eventually(t, 30*time.Second, "leadership", func() (bool, string) { return p.Logged("became leader"), "" })
	ns := Namespace(t)
	if _, err := env.Client.AppsV1().ReplicaSets(ns).Create(context.Background(), demoReplicaSet(ns, "dash", 2), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	Eventually(t, 60*time.Second, "2 pods", func() (bool, string) {
		pods, err := env.Client.CoreV1().Pods(ns).List(context.Background(), metav1.ListOptions{})
		return err == nil && len(pods.Items) == 2, ""
	})
	var got map[string]map[string]bool
	Eventually(t, 20*time.Second, "the replicaset queue's work histogram on /metrics", func() (bool, string) {
		code, _, body := gcxGet(t, port, "/metrics")
		got = hdbScrape(body)
		return code == 200 && strings.Contains(body, `workqueue_work_duration_seconds_count{name="replicaset"}`), body
	})

	var missing []string
	check := func(src, metric string, labels []string) {
		if _, ok := hdbNotServed[metric]; ok {
			return
		}
		have, ok := got[metric]
		if !ok {
			missing = append(missing, src+": "+metric)
			return
		}
		for _, l := range labels {
			if l == "job" || l == "instance" || l == "cluster" || l == "" {
				continue // Prometheus's target labels
			}
			if _, ok := hdbNotServed[metric+"/"+l]; ok {
				continue
			}
			if !have[l] {
				missing = append(missing, src+": "+metric+" label "+l)
			}
		}
	}
	for m, labels := range hdbMixin {
		check("kubernetes-mixin", m, labels)
	}

	raw, err := os.ReadFile(filepath.Join("..", "..", "..", "packaging", "grafana", "kcmd-dashboard.json"))
	if err != nil {
		t.Fatal(err)
	}
	var dash struct {
		Panels []struct {
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	if err := json.Unmarshal(raw, &dash); err != nil {
		t.Fatalf("kcmd-dashboard.json: %v", err)
	}
	n := 0
	for _, pn := range dash.Panels {
		for _, tg := range pn.Targets {
			for m, labels := range hdbExprUses(tg.Expr) {
				n++
				check("kcmd-dashboard.json "+strconv.Quote(pn.Title), m, labels)
			}
		}
	}
	if n < 10 {
		t.Fatalf("only %d metric selectors found in kcmd-dashboard.json: the parser is broken", n)
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Errorf("not on kcmd's /metrics:\n  %s", strings.Join(missing, "\n  "))
	}
	// the exceptions stay exceptions: if kcmd ever serves them, drop them from hdbNotServed
	if _, ok := got["go_goroutines"]; ok {
		t.Errorf("kcmd serves go_goroutines now: remove it from hdbNotServed")
	}
	t.Logf("%d mixin metrics and %d selectors of kcmd-dashboard.json checked", len(hdbMixin), n)

	// kcm's z-pages, behind the same authorization as /metrics: /statusz is always-allowed
	// here, /flagz is not (no reviewer configured: 403 for everyone, as kcm outside a pod)
	if code, _, body := gcxGet(t, port, "/statusz"); code != 200 || !strings.HasPrefix(body, "\nkcmd statusz\nWarning: ") ||
		!strings.Contains(body, "\nBinary version:  ") || !strings.Contains(body, "\nUp:  0 hr ") {
		t.Errorf("/statusz: %d\n%s", code, body)
	}
	if code, _, body := gcxGet(t, port, "/flagz"); code != 403 {
		t.Errorf("/flagz without authorization: %d, want 403\n%s", code, body)
	}
}
