package e2e

// kcmctl top (manager/top.c, docs/operations.md): `--once -o json` against a live kcmd.

import (
	"context"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

type hktTop struct {
	IntervalSeconds float64 `json:"intervalSeconds"`
	Manager         struct {
		Pid            int     `json:"pid"`
		UptimeSeconds  float64 `json:"uptimeSeconds"`
		Role           string  `json:"role"`
		Leading        bool    `json:"leading"`
		LeaderElection bool    `json:"leaderElection"`
		Leader         string  `json:"leader"`
		Lease          string  `json:"lease"`
		Term           *int64  `json:"term"`
	} `json:"manager"`
	Processes []struct {
		Name       string   `json:"name"`
		State      string   `json:"state"`
		Pid        int      `json:"pid"`
		Restarts   int      `json:"restarts"`
		CPUPercent *float64 `json:"cpuPercent"`
		CPUSeconds *float64 `json:"cpuSeconds"`
		PSSBytes   *int64   `json:"pssBytes"`
	} `json:"processes"`
	Queues []struct {
		Name           string   `json:"name"`
		Depth          *int64   `json:"depth"`
		Adds           int64    `json:"adds"`
		AddsPerSecond  float64  `json:"addsPerSecond"`
		Syncs          int64    `json:"syncs"`
		SyncsPerSecond float64  `json:"syncsPerSecond"`
		Retries        *int64   `json:"retries"`
		ErrorsPerSec   *float64 `json:"errorsPerSecond"`
		Parked         *int64   `json:"parked"`
		Longest        *float64 `json:"longestRunningSeconds"`
	} `json:"queues"`
	APIRequests []struct {
		Verb      string  `json:"verb"`
		Code      string  `json:"code"`
		Total     int64   `json:"total"`
		PerSecond float64 `json:"perSecond"`
	} `json:"apiRequests"`
	Cache *struct {
		Objects   int64 `json:"objects"`
		Resources []struct {
			Resource string `json:"resource"`
			Group    string `json:"group"`
			Count    int64  `json:"count"`
			Synced   bool   `json:"synced"`
		} `json:"resources"`
	} `json:"cache"`
}

func hktRunTop(t *testing.T, pid int, extra ...string) (*hktTop, string) {
	t.Helper()
	args := append([]string{"--pid", strconv.Itoa(pid), "top", "--once", "-o", "json"}, extra...)
	out, err := exec.Command(filepath.Join(env.KcmdBinDir, "kcmctl"), args...).Output()
	if err != nil {
		t.Fatalf("kcmctl %v: %v\n%s", args, err, out)
	}
	var top hktTop
	if err := json.Unmarshal(out, &top); err != nil {
		t.Fatalf("kcmctl top -o json is not JSON: %v\n%s", err, out)
	}
	return &top, string(out)
}

// TestKcmctl_Top: the leader and its term with election on; processes with pid, CPU and PSS;
// the ReplicaSet queue's counters and rates, API requests by verb and code, and the cache's
// counts of a kcmd that scales a ReplicaSet while top samples it.
func TestKcmctl_Top(t *testing.T) {
	lease := leaseName(t)
	e := startKcmd(t, nil, electionOnly(lease)...)
	Eventually(t, 20*time.Second, "leadership", func() (bool, string) { return e.Logged("became leader"), "" })
	var top *hktTop
	var out string
	Eventually(t, 10*time.Second, "kcmctl top to show this manager leading", func() (bool, string) {
		top, out = hktRunTop(t, e.cmd.Process.Pid)
		h := holder(t, lease)
		return h != "" && top.Manager.Leading && top.Manager.Leader == h, out
	})
	if top.Manager.Pid != e.cmd.Process.Pid || !top.Manager.LeaderElection || top.Manager.Role != "leading" ||
		top.Manager.Lease != "kube-system/"+lease || top.Manager.Term == nil || *top.Manager.Term < 0 {
		t.Errorf("manager section wrong:\n%s", out)
	}
	l, err := env.Client.CoordinationV1().Leases("kube-system").Get(context.Background(), lease, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if l.Spec.LeaseTransitions != nil && top.Manager.Term != nil && int64(*l.Spec.LeaseTransitions) != *top.Manager.Term {
		t.Errorf("term %d, the Lease's leaseTransitions %d", *top.Manager.Term, *l.Spec.LeaseTransitions)
	}
	if len(top.Processes) == 0 || top.Processes[0].Pid != e.cmd.Process.Pid || top.Processes[0].PSSBytes == nil ||
		*top.Processes[0].PSSBytes <= 0 || top.Processes[0].CPUPercent == nil || top.Processes[0].CPUSeconds == nil {
		t.Errorf("the manager's own process row lacks pid, PSS or CPU:\n%s", out)
	}

	// the shared ReplicaSet kcmd: scale a ReplicaSet while top takes its two samples 4 s apart
	startKcmdReplicaSet(t)
	ns := Namespace(t)
	if _, err := env.Client.AppsV1().ReplicaSets(ns).Create(context.Background(), demoReplicaSet(ns, "top", 2), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitReplicas(t, ns, "top", 2)
	pid := kcmdRS.cmd.Process.Pid
	type res struct {
		top *hktTop
		out string
	}
	done := make(chan res, 1)
	go func() {
		args := []string{"--pid", strconv.Itoa(pid), "top", "--once", "-o", "json", "--interval", "4"}
		o, err := exec.Command(filepath.Join(env.KcmdBinDir, "kcmctl"), args...).Output()
		var tp hktTop
		if err != nil || json.Unmarshal(o, &tp) != nil {
			done <- res{nil, string(o)}
			return
		}
		done <- res{&tp, string(o)}
	}()
	time.Sleep(1 * time.Second)
	if _, err := env.Client.AppsV1().ReplicaSets(ns).Patch(context.Background(), "top", types.MergePatchType,
		[]byte(`{"spec":{"replicas":6}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	r := <-done
	if r.top == nil {
		t.Fatalf("kcmctl top --once -o json --interval 4 failed:\n%s", r.out)
	}
	top, out = r.top, r.out
	waitReplicas(t, ns, "top", 6)
	if top.IntervalSeconds < 3.9 || top.IntervalSeconds > 6 {
		t.Errorf("intervalSeconds %v, want about 4", top.IntervalSeconds)
	}
	if top.Manager.LeaderElection || top.Manager.Role != "leading" {
		t.Errorf("the shared kcmd runs without election and reconciles:\n%s", out)
	}
	worker := false
	for _, p := range top.Processes {
		if p.Name == "worker-replicaset-controller-0" {
			worker = p.State == "running" && p.Pid > 0 && p.PSSBytes != nil && *p.PSSBytes > 0 && p.CPUPercent != nil
		}
	}
	if !worker {
		t.Errorf("no running worker-replicaset-controller-0 with pid, PSS and CPU:\n%s", out)
	}
	queue := false
	for _, q := range top.Queues {
		if q.Name == "replicaset" {
			queue = q.Adds >= 2 && q.Syncs >= 2 && q.AddsPerSecond > 0 && q.SyncsPerSecond > 0 &&
				q.Depth != nil && q.Retries != nil && q.ErrorsPerSec != nil && q.Parked != nil && q.Longest != nil
		}
	}
	if !queue {
		t.Errorf("the replicaset queue lacks counters or shows no adds/syncs per second during the scale-up:\n%s", out)
	}
	posts := false
	for _, a := range top.APIRequests {
		if a.Verb == "POST" && a.Code == "201" {
			posts = a.Total >= 6 && a.PerSecond > 0
		}
	}
	if !posts {
		t.Errorf("apiRequests lacks POST 201 with >= 6 in all and a rate during the scale-up:\n%s", out)
	}
	pods := false
	if top.Cache != nil {
		for _, c := range top.Cache.Resources {
			if c.Resource == "pods" && c.Group == "" {
				pods = c.Count >= 2 && c.Synced
			}
		}
	}
	if !pods {
		t.Errorf("cache lacks a synced pods count >= 2:\n%s", out)
	}
	t.Logf("kcmctl top --once -o json:\n%s", out)
}
