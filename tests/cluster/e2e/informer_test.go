package e2e

// Tests of kcmd-informerd (informerd/): the arena it fills must hold exactly what the apiserver
// holds, as client-go lists it, after churn, across an apiserver restart, and across a kill -9
// of informerd itself, which must resume its watches without a single LIST.

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// arenaHolder keeps an arena memfd alive across informerd restarts (`kcmd-cachedump hold`), as
// the manager does in production.
type arenaHolder struct {
	cmd  *exec.Cmd
	path string
}

func holdArena(t *testing.T) *arenaHolder {
	t.Helper()
	if env.KcmdBinDir == "" {
		t.Fatal("KCMD_BIN_DIR is not set (run through make e2e)")
	}
	cmd := exec.Command(filepath.Join(env.KcmdBinDir, "kcmd-cachedump"), "hold")
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("kcmd-cachedump hold: %v", err)
	}
	h := &arenaHolder{cmd: cmd, path: strings.TrimSpace(line)}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	return h
}

// infProc is one kcmd-informerd with its log lines.
type infProc struct {
	cmd  *exec.Cmd
	mu   sync.Mutex
	logs []string
	done chan struct{}
}

func startInformerd(t *testing.T, arena, metrics string, flags ...string) *infProc {
	t.Helper()
	args := append([]string{"--kubeconfig=" + env.Cluster.Kubeconfig, "--arena-path=" + arena,
		"--metrics-file=" + metrics, "--resources=pods,replicasets.apps", "--kube-api-qps=200",
		"--kube-api-burst=400", "--v=2"}, flags...)
	cmd := exec.Command(filepath.Join(env.KcmdBinDir, "kcmd-informerd"), args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	p := &infProc{cmd: cmd, done: make(chan struct{})}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			p.mu.Lock()
			p.logs = append(p.logs, sc.Text())
			p.mu.Unlock()
		}
		_ = cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-p.done
		if t.Failed() {
			for _, l := range p.Logs() {
				t.Logf("informerd[%d]: %s", cmd.Process.Pid, l)
			}
		}
	})
	return p
}

func (p *infProc) Logs() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.logs...)
}

// syncedLine returns informerd's "all N informers synced ... (K LIST requests)" line, if logged.
func (p *infProc) syncedLine() string {
	for _, l := range p.Logs() {
		if strings.Contains(l, "informers synced after") {
			return l
		}
	}
	return ""
}

func (p *infProc) kill9() {
	_ = p.cmd.Process.Signal(syscall.SIGKILL)
	<-p.done
}

// arenaSet is "resource ns name uid rv" lines of the arena, restricted to namespace ns, as
// "resource/uid=rv" strings.
func arenaSet(t *testing.T, arena, ns string) (map[string]string, error) {
	out, err := exec.Command(filepath.Join(env.KcmdBinDir, "kcmd-cachedump"), "objects", arena).Output()
	if err != nil {
		return nil, fmt.Errorf("kcmd-cachedump objects: %v", err)
	}
	m := map[string]string{}
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(l)
		if len(f) != 5 || f[1] != ns {
			continue
		}
		m[f[0]+"/"+f[3]] = f[4]
	}
	return m, nil
}

// apiSet is the same set from a fresh client-go list.
func apiSet(ns string) (map[string]string, error) {
	ctx := context.Background()
	m := map[string]string{}
	pods, err := env.Client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	for _, p := range pods.Items {
		m["pods/"+string(p.UID)] = p.ResourceVersion
	}
	rss, err := env.Client.AppsV1().ReplicaSets(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	for _, r := range rss.Items {
		m["replicasets.apps/"+string(r.UID)] = r.ResourceVersion
	}
	return m, nil
}

func diffSets(a, b map[string]string) string {
	var d []string
	for k, v := range b {
		if a[k] != v {
			d = append(d, fmt.Sprintf("%s: arena %q api %q", k, a[k], v))
		}
	}
	for k, v := range a {
		if _, ok := b[k]; !ok {
			d = append(d, fmt.Sprintf("%s: arena %q, gone from the api", k, v))
		}
	}
	sort.Strings(d)
	if len(d) > 5 {
		d = append(d[:5], fmt.Sprintf("... %d more", len(d)-5))
	}
	return strings.Join(d, "; ")
}

// oracleDiff compares once: "" when the arena's (uid, resourceVersion) set for ns equals
// client-go's, else what differs.
func oracleDiff(t *testing.T, arena, ns string) string {
	a, err := arenaSet(t, arena, ns)
	if err != nil {
		return err.Error()
	}
	b, err := apiSet(ns)
	if err != nil {
		return err.Error()
	}
	return diffSets(a, b)
}

// oracle waits until the arena's (uid, resourceVersion) set for ns equals client-go's.
func oracle(t *testing.T, arena, ns string, timeout time.Duration) int {
	t.Helper()
	n := 0
	Eventually(t, timeout, "arena == client-go list", func() (bool, string) {
		a, err := arenaSet(t, arena, ns)
		if err != nil {
			return false, err.Error()
		}
		b, err := apiSet(ns)
		if err != nil {
			return false, err.Error()
		}
		n = len(b)
		if d := diffSets(a, b); d != "" {
			return false, fmt.Sprintf("%d in arena, %d in api: %s", len(a), len(b), d)
		}
		return true, ""
	})
	return n
}

func testPod(ns, name string, i int) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: map[string]string{"app": "churn", "i": strconv.Itoa(i % 7)}},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "registry.k8s.io/pause:3.10"}}},
	}
}

func testRS(ns, name string, replicas int32) *appsv1.ReplicaSet {
	l := map[string]string{"rs": name}
	return &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: appsv1.ReplicaSetSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: l},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: l},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "registry.k8s.io/pause:3.10"}}},
			},
		},
	}
}

// churn creates, relabels, updates and deletes pods and ReplicaSets in ns, with `workers`
// goroutines, round after round, until stop is closed or `rounds` rounds are done (0 = until
// stop). Each round touches `per` objects of each kind.
func churn(t *testing.T, ns, prefix string, per, rounds, workers int, stop <-chan struct{}) {
	ctx := context.Background()
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for r := 0; rounds == 0 || r < rounds; r++ {
				for i := w; i < per; i += workers {
					select {
					case <-stop:
						return
					default:
					}
					pn := fmt.Sprintf("%sp-%d-%d", prefix, r, i)
					rn := fmt.Sprintf("%srs-%d-%d", prefix, r, i)
					_, _ = env.Client.CoreV1().Pods(ns).Create(ctx, testPod(ns, pn, i), metav1.CreateOptions{})
					_, _ = env.Client.AppsV1().ReplicaSets(ns).Create(ctx, testRS(ns, rn, int32(i%5)), metav1.CreateOptions{})
					switch i % 4 {
					case 0: // relabel
						patch := []byte(fmt.Sprintf(`{"metadata":{"labels":{"i":"x%s%d"}}}`, prefix, r))
						_, _ = env.Client.CoreV1().Pods(ns).Patch(ctx, pn, types.MergePatchType, patch, metav1.PatchOptions{})
					case 1: // update the RS spec
						patch := []byte(`{"spec":{"replicas":7}}`)
						_, _ = env.Client.AppsV1().ReplicaSets(ns).Patch(ctx, rn, types.MergePatchType, patch, metav1.PatchOptions{})
					case 2: // delete both
						zero := int64(0)
						_ = env.Client.CoreV1().Pods(ns).Delete(ctx, pn, metav1.DeleteOptions{GracePeriodSeconds: &zero})
						_ = env.Client.AppsV1().ReplicaSets(ns).Delete(ctx, rn, metav1.DeleteOptions{})
					}
				}
			}
		}(w)
	}
	wg.Wait()
}

// listRequests sums apiserver_request_total{verb="LIST"} for pods and replicasets.
func listRequests(t *testing.T) int64 {
	t.Helper()
	raw, err := env.Client.CoreV1().RESTClient().Get().AbsPath("/metrics").DoRaw(context.Background())
	if err != nil {
		t.Fatalf("GET /metrics: %v", err)
	}
	var n int64
	for _, l := range strings.Split(string(raw), "\n") {
		if !strings.HasPrefix(l, "apiserver_request_total{") || !strings.Contains(l, `verb="LIST"`) {
			continue
		}
		if !strings.Contains(l, `resource="pods"`) && !strings.Contains(l, `resource="replicasets"`) {
			continue
		}
		f := strings.Fields(l)
		v, err := strconv.ParseFloat(f[len(f)-1], 64)
		if err == nil {
			n += int64(v)
		}
	}
	return n
}

func waitSynced(t *testing.T, p *infProc) string {
	t.Helper()
	line := ""
	Eventually(t, 60*time.Second, "informerd synced", func() (bool, string) {
		line = p.syncedLine()
		return line != "", "no 'synced' log line yet"
	})
	return line
}

// TestInformer_Oracle: churn 1,000+ pods and ReplicaSets, then the arena holds exactly the
// (uid, resourceVersion) set a fresh client-go list returns; again after the apiserver was
// restarted while the watches were open (the watches reconnect and catch up).
func TestInformer_Oracle(t *testing.T) {
	ns := Namespace(t)
	h := holdArena(t)
	p := startInformerd(t, h.path, filepath.Join(t.TempDir(), "metrics"))
	waitSynced(t, p)

	churn(t, ns, "a", 300, 2, 8, nil) // 600 pods + 600 RSs created, 1/4 relabeled, 1/4 updated, 1/4 deleted
	n := oracle(t, h.path, ns, 60*time.Second)
	if n < 800 {
		t.Fatalf("only %d objects survived the churn; the test is too weak", n)
	}
	t.Logf("oracle holds for %d objects after churn", n)

	if err := env.Cluster.RestartAPIServer(context.Background(), false); err != nil {
		t.Fatalf("restarting the apiserver: %v", err)
	}
	churn(t, ns, "b", 200, 1, 8, nil)
	n2 := oracle(t, h.path, ns, 90*time.Second)
	if n2 <= n {
		t.Fatalf("%d objects after the second churn, %d before: it created nothing", n2, n)
	}
	t.Logf("oracle holds for %d objects after an apiserver restart", n2)
}

// TestInformer_WarmRestart: kill -9 informerd under churn; the restarted informerd resumes every
// watch from the arena's resourceVersions with zero LIST requests, and the oracle still holds.
func TestInformer_WarmRestart(t *testing.T) {
	ns := Namespace(t)
	h := holdArena(t)
	metrics := filepath.Join(t.TempDir(), "metrics")
	p := startInformerd(t, h.path, metrics)
	waitSynced(t, p)

	stop := make(chan struct{})
	done := make(chan struct{})
	go func() { churn(t, ns, "w", 150, 0, 4, stop); close(done) }()
	time.Sleep(2 * time.Second)
	p.kill9()
	time.Sleep(1 * time.Second) // changes the dead informerd misses
	before := listRequests(t)
	p2 := startInformerd(t, h.path, metrics)
	line := waitSynced(t, p2)
	time.Sleep(2 * time.Second) // keep churning against the resumed watches
	close(stop)
	<-done
	after := listRequests(t)
	if !strings.Contains(line, "(0 LIST requests)") {
		t.Fatalf("restarted informerd listed: %s", line)
	}
	if after != before {
		t.Fatalf("apiserver counted %d LIST requests for pods/replicasets during the warm restart", after-before)
	}
	n := oracle(t, h.path, ns, 60*time.Second)
	t.Logf("warm restart without LIST; oracle holds for %d objects", n)
	if _, err := os.Stat(metrics); err != nil {
		t.Fatalf("metrics file: %v", err)
	}
}

// metric reads one counter of informerd's shared table through kcmd-cachedump.
func metric(t *testing.T, path, res, name string) int64 {
	t.Helper()
	out, err := exec.Command(filepath.Join(env.KcmdBinDir, "kcmd-cachedump"), "metrics", path).Output()
	if err != nil {
		t.Fatalf("kcmd-cachedump metrics: %v", err)
	}
	for _, l := range strings.Split(string(out), "\n") {
		f := strings.Fields(l)
		if len(f) == 3 && f[0] == res && f[1] == name {
			v, _ := strconv.ParseInt(f[2], 10, 64)
			return v
		}
	}
	t.Fatalf("no metric %s %s", res, name)
	return 0
}

// TestInformer_RelistAfter410: informerd restarts from a version the apiserver no longer has
// (the arena's synced version is set to "1" while informerd is down, as after a long outage
// and compaction). The WATCH answers 410, informerd relists, and the objects deleted while it
// was down leave the arena as tombstones: the oracle holds again.
func TestInformer_RelistAfter410(t *testing.T) {
	ns := Namespace(t)
	h := holdArena(t)
	metrics := filepath.Join(t.TempDir(), "metrics")
	p := startInformerd(t, h.path, metrics)
	waitSynced(t, p)
	churn(t, ns, "a", 100, 1, 4, nil)
	oracle(t, h.path, ns, 60*time.Second)
	expired := metric(t, metrics, "pods", "expired")
	relists := metric(t, metrics, "pods", "relists")

	p.kill9()
	ctx := context.Background()
	pods, err := env.Client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	zero := int64(0)
	for i, pod := range pods.Items {
		if i%2 == 0 { // deleted while informerd is down: seen only through the relist
			_ = env.Client.CoreV1().Pods(ns).Delete(ctx, pod.Name, metav1.DeleteOptions{GracePeriodSeconds: &zero})
		}
	}
	churn(t, ns, "b", 50, 1, 4, nil)
	for _, res := range []string{"pods", "replicasets.apps"} {
		out, err := exec.Command(filepath.Join(env.KcmdBinDir, "kcmd-cachedump"), "setrv", h.path, res, "1").CombinedOutput()
		if err != nil {
			t.Fatalf("setrv %s: %v: %s", res, err, out)
		}
	}
	p2 := startInformerd(t, h.path, metrics)
	waitSynced(t, p2)
	n := oracle(t, h.path, ns, 60*time.Second)
	if e := metric(t, metrics, "pods", "expired"); e <= expired {
		t.Fatalf("no 410 seen for pods (expired %d -> %d)", expired, e)
	}
	if r := metric(t, metrics, "pods", "relists"); r <= relists {
		t.Fatalf("pods were not relisted (relists %d -> %d)", relists, r)
	}
	t.Logf("410 -> relist; oracle holds for %d objects", n)
}

// TestInformer_DiscoveryCRD: with discovery on, a CRD that appears gets a metadata-only
// informer (its objects reach the arena), and when the CRD is deleted its informer and its
// objects go away (as the GC's monitors follow discovery).
func TestInformer_DiscoveryCRD(t *testing.T) {
	ns := Namespace(t)
	h := holdArena(t)
	p := startInformerd(t, h.path, filepath.Join(t.TempDir(), "metrics"), "--discover-deletable", "--discovery-period=2")
	waitSynced(t, p)
	ctx := context.Background()
	rc := env.Client.CoreV1().RESTClient()
	group := fmt.Sprintf("inf%d.kcmd.test", time.Now().UnixNano()%100000)
	plural := "widgets"
	createWidgetCRD(t, group, plural)
	crdDeleted := false
	t.Cleanup(func() {
		if !crdDeleted {
			_ = rc.Delete().AbsPath("/apis/apiextensions.k8s.io/v1/customresourcedefinitions/" + plural + "." + group).Do(context.Background()).Error()
		}
	})
	res := plural + "." + group
	var uid string
	Eventually(t, 60*time.Second, "a widget created", func() (bool, string) {
		raw, err := rc.Post().AbsPath("/apis/"+group+"/v1/namespaces/"+ns+"/"+plural).
			Body([]byte(`{"apiVersion":"` + group + `/v1","kind":"Widget","metadata":{"name":"w1"}}`)).DoRaw(ctx)
		if err != nil {
			return false, err.Error()
		}
		i := strings.Index(string(raw), `"uid":"`)
		if i < 0 {
			return false, "no uid in " + string(raw)
		}
		uid = string(raw)[i+7 : i+7+36]
		return true, ""
	})
	Eventually(t, 60*time.Second, "the widget in the arena", func() (bool, string) {
		a, err := arenaSet(t, h.path, ns)
		if err != nil {
			return false, err.Error()
		}
		_, ok := a[res+"/"+uid]
		return ok, fmt.Sprintf("%d objects of ns in the arena, none is %s/%s", len(a), res, uid)
	})
	if err := rc.Delete().AbsPath("/apis/apiextensions.k8s.io/v1/customresourcedefinitions/" + res).Do(ctx).Error(); err != nil {
		t.Fatalf("deleting the CRD: %v", err)
	}
	crdDeleted = true
	Eventually(t, 60*time.Second, "the widget gone from the arena", func() (bool, string) {
		a, err := arenaSet(t, h.path, ns)
		if err != nil {
			return false, err.Error()
		}
		_, ok := a[res+"/"+uid]
		return !ok, "still in the arena"
	})
	found := false
	for _, l := range p.Logs() {
		if strings.Contains(l, "discovery: "+res+" is gone") || strings.Contains(l, "discovery: watching "+res) {
			found = true
		}
	}
	if !found {
		t.Fatalf("no discovery log line for %s", res)
	}
}

// createWidgetCRD creates a namespaced CRD <plural>.<group> (kind Widget, v1, any fields).
func createWidgetCRD(t *testing.T, group, plural string) {
	t.Helper()
	crd := fmt.Sprintf(`{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition",
"metadata":{"name":"%s.%s"},"spec":{"group":"%s","scope":"Namespaced",
"names":{"plural":"%s","singular":"widget","kind":"Widget","listKind":"WidgetList"},
"versions":[{"name":"v1","served":true,"storage":true,
"schema":{"openAPIV3Schema":{"type":"object","x-kubernetes-preserve-unknown-fields":true}}}]}}`, plural, group, group, plural)
	rc := env.Client.CoreV1().RESTClient()
	if err := rc.Post().AbsPath("/apis/apiextensions.k8s.io/v1/customresourcedefinitions").Body([]byte(crd)).Do(context.Background()).Error(); err != nil {
		t.Fatalf("creating the CRD: %v", err)
	}
}

// TestInformer_GoneResourceDroppedAtOnce: a CRD deleted after discovery saw it leaves an
// informer whose list and watch get 404. informerd runs a discovery round at once (not a period
// later) and drops the informer, so it no longer holds informerd's "all synced". Stop 32's CI failed on this: another test's
// CRD went away while kcmd started, and every cache-sync wait hung for the 30 s period. The
// period here is 600 s, so without the early round the informer would stay for 10 minutes.
func TestInformer_GoneResourceDroppedAtOnce(t *testing.T) {
	h := holdArena(t)
	group := fmt.Sprintf("gone%d.kcmd.test", time.Now().UnixNano()%100000)
	plural := "widgets"
	res := plural + "." + group
	rc := env.Client.CoreV1().RESTClient()
	createWidgetCRD(t, group, plural)
	deleted := false
	t.Cleanup(func() {
		if !deleted {
			_ = rc.Delete().AbsPath("/apis/apiextensions.k8s.io/v1/customresourcedefinitions/" + res).Do(context.Background()).Error()
		}
	})
	// discovery serves the CRD before informerd starts, so its first (and, in 600 s, only
	// periodic) round watches it
	Eventually(t, 30*time.Second, "the CRD served", func() (bool, string) {
		err := rc.Get().AbsPath("/apis/" + group + "/v1/" + plural).Do(context.Background()).Error()
		return err == nil, fmt.Sprint(err)
	})
	p := startInformerd(t, h.path, filepath.Join(t.TempDir(), "metrics"), "--discover-deletable", "--discovery-period=600")
	// index of the first line (from line from on) holding sub, or -1
	find := func(sub string, from int) int {
		logs := p.Logs()
		for i := from; i < len(logs); i++ {
			if strings.Contains(logs[i], sub) {
				return i
			}
		}
		return -1
	}
	Eventually(t, 60*time.Second, "the CRD watched and synced", func() (bool, string) {
		w := find("discovery: watching "+res, 0)
		return w >= 0 && find("informers synced after", w) > w, "no 'watching' line, or no 'synced' line after it"
	})
	if err := rc.Delete().AbsPath("/apis/apiextensions.k8s.io/v1/customresourcedefinitions/" + res).Do(context.Background()).Error(); err != nil {
		t.Fatalf("deleting the CRD: %v", err)
	}
	deleted = true
	start := time.Now()
	Eventually(t, 20*time.Second, "the gone resource's informer dropped", func() (bool, string) {
		return find("discovery: "+res+" is gone: dropping", 0) >= 0, "informerd still has the informer"
	})
	t.Logf("dropped %.1f s after the CRD's deletion", time.Since(start).Seconds())
}

// TestInformer_OracleNegativeControl: the oracle must see a divergence when there is one: an
// informerd that does not watch ReplicaSets leaves them out of the arena, and a pod changed
// while informerd is stopped keeps its old version in the arena.
func TestInformer_OracleNegativeControl(t *testing.T) {
	ns := Namespace(t)
	h := holdArena(t)
	p := startInformerd(t, h.path, filepath.Join(t.TempDir(), "metrics"), "--resources=pods")
	waitSynced(t, p)
	ctx := context.Background()
	if _, err := env.Client.CoreV1().Pods(ns).Create(ctx, testPod(ns, "p", 0), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	Eventually(t, 30*time.Second, "the pod in the arena", func() (bool, string) {
		a, err := arenaSet(t, h.path, ns)
		return err == nil && len(a) == 1, fmt.Sprintf("%d objects", len(a))
	})
	if d := oracleDiff(t, h.path, ns); d != "" {
		t.Fatalf("pods only, no divergence yet, but the oracle says: %s", d)
	}
	if _, err := env.Client.AppsV1().ReplicaSets(ns).Create(ctx, testRS(ns, "rs", 0), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Second)
	if d := oracleDiff(t, h.path, ns); !strings.Contains(d, "replicasets.apps/") {
		t.Fatalf("an unwatched ReplicaSet went unnoticed by the oracle (%q)", d)
	}
	_ = env.Client.AppsV1().ReplicaSets(ns).Delete(ctx, "rs", metav1.DeleteOptions{})
	p.kill9()
	patch := []byte(`{"metadata":{"labels":{"changed":"yes"}}}`)
	if _, err := env.Client.CoreV1().Pods(ns).Patch(ctx, "p", types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	Eventually(t, 10*time.Second, "the oracle to see the stale version", func() (bool, string) {
		d := oracleDiff(t, h.path, ns)
		return strings.Contains(d, "pods/"), "oracle: " + d
	})
}
