package e2e

// The attach/detach controller under kill -9 (issue 18, issue 21's crash tests): pods with CSI
// volumes are created and deleted on two controller-managed nodes while the controller's worker
// is killed every 2 s (and informerd every third time); the test plays the external attacher
// (every VolumeAttachment of its driver is marked attached) and no kubelet reports a volume in
// use, so a deleted pod's volume is detached at once. The oracle (adCrashVerdict), once the
// churn stops: every live pod's volume has its VolumeAttachment and is listed in its node's
// status.volumesAttached; no VolumeAttachment is left for a volume no live pod uses; each
// node's volumesAttached is exactly its live pods' volumes. Nothing may be lost with a key that
// died with a worker.
//
// The negative control runs the same churn with the test seam KCMD_TEST_AD_KEEP_NODE=<first
// node>, under which the worker drops every detach from that node (what a lost key would
// leave): the oracle must report a VolumeAttachment of a deleted pod still there.

import (
	"context"
	"fmt"
	"math/rand"
	"sort"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

type adCrashPod struct{ node, pv string }

func TestAttachDetach_WorkerKilled(t *testing.T) { adWorkerKilled(t, false) }

func TestAttachDetach_WorkerKilledNegativeControl(t *testing.T) { adWorkerKilled(t, true) }

func adWorkerKilled(t *testing.T, negative bool) {
	f := adNew(t)
	nodes := []string{f.node("a", true), f.node("b", true)}
	var extraEnv []string
	if negative {
		extraEnv = []string{"KCMD_TEST_AD_KEEP_NODE=" + nodes[0]}
	}
	p := startKcmd(t, extraEnv, "--controllers=persistentvolume-attach-detach-controller", "--secure-port=0",
		"--leader-elect=false", "--use-service-account-credentials", "--v=4")
	defer dumpKcmdLogs(t, p)
	Eventually(t, 60*time.Second, "the controller acts as its service account", func() (bool, string) {
		return p.Logged("kube-system/attachdetach-controller"), "not yet"
	})

	rng := rand.New(rand.NewSource(time.Now().UnixNano()))
	live := map[string]adCrashPod{}
	seq, created, deleted, workerKills, informerKills := 0, 0, 0, 0, 0
	create := func(node string) string {
		seq++
		claim, pv := f.volume(fmt.Sprintf("v%d", seq), f.driver)
		pod := f.pod(fmt.Sprintf("p%d", seq), node, claim)
		live[pod] = adCrashPod{node, pv}
		created++
		return pod
	}
	remove := func(pod string) {
		f.deletePod(pod)
		delete(live, pod)
		deleted++
	}
	lastKill := time.Now()
	for end := time.Now().Add(25 * time.Second); time.Now().Before(end); time.Sleep(300 * time.Millisecond) {
		adAttachAll(t, f.driver)
		if len(live) < 4 || (len(live) < 10 && rng.Intn(3) > 0) {
			create(nodes[rng.Intn(len(nodes))])
		} else {
			pods := adSortedKeys(live)
			remove(pods[rng.Intn(len(pods))])
		}
		if time.Since(lastKill) > 2*time.Second {
			lastKill = time.Now()
			workerKills += killChildren(t, p.cmd.Process.Pid, "kcmd-worker", 1)
			if workerKills%3 == 0 {
				informerKills += killChildren(t, p.cmd.Process.Pid, "kcmd-informerd", 1)
			}
		}
	}
	// a detach from each node is certain: one pod per node created, attached, then deleted
	var last []string
	for _, n := range nodes {
		last = append(last, create(n))
	}
	adAttachAll(t, f.driver)
	time.Sleep(time.Second)
	for _, pod := range last {
		remove(pod)
	}
	workerKills += killChildren(t, p.cmd.Process.Pid, "kcmd-worker", 1)
	t.Logf("churn: %d pods created, %d deleted, %d live; kill -9: %d workers, %d informerd",
		created, deleted, len(live), workerKills, informerKills)
	if workerKills < 4 {
		t.Fatalf("only %d worker kills: the crash was not exercised", workerKills)
	}

	// the correct run settles in seconds; the control's dropped detaches never do, so it looks
	// for 20 s only
	settle := 60 * time.Second
	if negative {
		settle = 20 * time.Second
	}
	problems := adCrashVerdict(t, f.driver, nodes, live, settle)
	if negative {
		found := false
		for _, pr := range problems {
			found = found || strings.Contains(pr, "still there") && strings.Contains(pr, nodes[0])
		}
		if !found {
			t.Fatalf("negative control: detaches from %s were dropped, but the oracle said %v", nodes[0], problems)
		}
		if !p.Logged(fmt.Sprintf(`KCMD_TEST_AD_KEEP_NODE: detach of volume "kubernetes.io/csi/%s^`, f.driver)) {
			t.Fatal("negative control: the oracle fired, but the seam dropped no detach")
		}
		t.Logf("negative control: the oracle reports %v", problems)
		return
	}
	if len(problems) > 0 {
		t.Fatalf("after the kills: %s", strings.Join(problems, "; "))
	}
}

func adSortedKeys(m map[string]adCrashPod) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// adAttachAll plays the external attacher: every VolumeAttachment of driver not attached yet
// is marked attached.
func adAttachAll(t *testing.T, driver string) {
	t.Helper()
	ctx := context.Background()
	l, err := env.Client.StorageV1().VolumeAttachments().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range l.Items {
		va := &l.Items[i]
		if va.Spec.Attacher != driver || va.Status.Attached || va.DeletionTimestamp != nil {
			continue
		}
		va.Status.Attached = true
		// a conflict or a VolumeAttachment deleted meanwhile is taken at the next round
		_, _ = env.Client.StorageV1().VolumeAttachments().UpdateStatus(ctx, va, metav1.UpdateOptions{})
	}
}

// adCrashVerdict is TestAttachDetach_WorkerKilled's oracle: within settle, the VolumeAttachments
// of driver and the nodes' volumesAttached are exactly the live pods' volumes. It returns the
// problems of the last look (none: the end state is exact).
func adCrashVerdict(t *testing.T, driver string, nodes []string, live map[string]adCrashPod, settle time.Duration) []string {
	t.Helper()
	ctx := context.Background()
	var problems []string
	for end := time.Now().Add(settle); ; time.Sleep(500 * time.Millisecond) {
		adAttachAll(t, driver)
		problems = nil
		want := map[string]string{} // VolumeAttachment name -> pod
		wantNode := map[string]map[string]bool{}
		for _, n := range nodes {
			wantNode[n] = map[string]bool{}
		}
		for pod, lp := range live {
			want[adVAName(lp.pv, driver, lp.node)] = pod
			wantNode[lp.node][adUnique(driver, lp.pv)] = true
		}
		l, err := env.Client.StorageV1().VolumeAttachments().List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		seen := map[string]bool{}
		for _, va := range l.Items {
			if va.Spec.Attacher != driver {
				continue
			}
			seen[va.Name] = true
			if _, ok := want[va.Name]; !ok {
				pv := ""
				if va.Spec.Source.PersistentVolumeName != nil {
					pv = *va.Spec.Source.PersistentVolumeName
				}
				problems = append(problems, fmt.Sprintf("VolumeAttachment %s (volume %s, node %s) of no live pod still there",
					va.Name, pv, va.Spec.NodeName))
			}
		}
		for name, pod := range want {
			if !seen[name] {
				problems = append(problems, fmt.Sprintf("pod %s: no VolumeAttachment %s", pod, name))
			}
		}
		for _, n := range nodes {
			got := map[string]bool{}
			for _, av := range adAttached(t, n) {
				got[string(av.Name)] = true
			}
			for u := range wantNode[n] {
				if !got[u] {
					problems = append(problems, fmt.Sprintf("node %s: %s not in volumesAttached", n, u))
				}
			}
			for u := range got {
				if !wantNode[n][u] {
					problems = append(problems, fmt.Sprintf("node %s: %s in volumesAttached, no live pod uses it", n, u))
				}
			}
		}
		sort.Strings(problems)
		if len(problems) == 0 || time.Now().After(end) {
			return problems
		}
	}
}
