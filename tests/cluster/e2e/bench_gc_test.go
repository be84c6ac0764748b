package e2e

// `bench: gc.*` and `bench: gc.upstream.*`: kcmd's garbage collector against upstream
// kube-controller-manager's (--controllers=garbagecollector only), same client QPS, measured in
// the same run on the same cluster, one after the other:
//   - collect_10k_s: 100 ReplicaSets owning 10,000 pods deleted in the background, from the
//     last DELETE answered to the last pod gone;
//   - bytes_per_object: what tracking the objects costs, per object added (10,100). kcmd: the
//     arena's live bytes plus the anonymous memory (heap: GC private state, buffers) of
//     informerd and the GC workers; upstream: kcm's RSS;
//   - collect_2000_procs{1,2,4}_s: kcmd with --concurrent-gc-syncs 1, 2, 4 (processes), 20
//     ReplicaSets x 100 pods each, at the same QPS and (_lifted_s) at --kube-api-qps=1000: does
//     collection scale with in-flight keys, or is the client's bucket the ceiling?
//   - requests_per_object: API requests (rest_client_requests_total on /metrics, every client of
//     the process tree: for kcmd the GC's and informerd's, for kcm all of its clients) during
//     the 10,000-pod collection, per pod.
// Runs only with KCMD_BENCH=1 (make bench-gc); KCMD_BENCH_GC=procs runs only the process sweep,
// KCMD_BENCH_GC=main everything else.

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// gcxBenchQPS is --kube-api-qps for both (the GC's client gets twice as much, in both).
const gcxBenchQPS = 100

// gcxSmaps returns the kB value of field (e.g. "Anonymous", "Rss") in /proc/pid/smaps_rollup.
func gcxSmaps(pid int, field string) int64 {
	f, err := os.Open(fmt.Sprintf("/proc/%d/smaps_rollup", pid))
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		l := sc.Text()
		if strings.HasPrefix(l, field+":") {
			v, _ := strconv.ParseInt(strings.Fields(l)[1], 10, 64)
			return v
		}
	}
	return 0
}

// gcxTreeCPU is the CPU-seconds of kcmd's manager and its children (informerd, workers).
func gcxTreeCPU(pid int) float64 {
	sum := hksCPUSeconds(pid)
	for cpid := range childrenOf(pid) {
		sum += hksCPUSeconds(cpid)
	}
	return sum
}

// gcxKcmdAnon sums the anonymous memory (bytes) of kcmd's informerd and GC workers.
func gcxKcmdAnon(pid int) int64 {
	var sum int64
	for cpid, comm := range childrenOf(pid) {
		if strings.HasPrefix(comm, "kcmd-informe") || strings.HasPrefix(comm, "kcmd-worker") {
			sum += gcxSmaps(cpid, "Anonymous") * 1024
		}
	}
	return sum
}

var gcxStatsRe = regexp.MustCompile(`objects (\d+),.* live (\d+),`)

// gcxArena returns the arena's object count and live bytes (kcmctl cache stats).
func gcxArena(t *testing.T, pid int) (int64, int64) {
	t.Helper()
	out, err := exec.Command(filepath.Join(env.KcmdBinDir, "kcmctl"), "--pid", strconv.Itoa(pid), "cache", "stats").CombinedOutput()
	if err != nil {
		t.Fatalf("kcmctl cache stats: %v\n%s", err, out)
	}
	m := gcxStatsRe.FindStringSubmatch(string(out))
	if m == nil {
		t.Fatalf("kcmctl cache stats: no object count in\n%s", out)
	}
	o, _ := strconv.ParseInt(m[1], 10, 64)
	l, _ := strconv.ParseInt(m[2], 10, 64)
	return o, l
}

// gcxCollect deletes the ReplicaSets in the background and returns the seconds until the
// namespace has no pod left.
func gcxCollect(t *testing.T, ns string, nRS, perRS int) float64 {
	t.Helper()
	rss, _ := gcxOwnedPods(t, ns, "b", nRS, perRS)
	Eventually(t, 2*time.Minute, "the pods listed", func() (bool, string) {
		n := gcxPodCount(t, ns)
		return n == nRS*perRS, fmt.Sprintf("%d", n)
	})
	time.Sleep(2 * time.Second) // the controller's informers catch up
	gcxDeleteAll(t, rss, metav1.DeletePropagationBackground)
	start := time.Now()
	Eventually(t, 15*time.Minute, "every pod collected", func() (bool, string) {
		n := gcxPodCount(t, ns)
		return n == 0, fmt.Sprintf("%d pods left", n)
	})
	return time.Since(start).Seconds()
}

// gcxStable waits until f() changes by less than 1 % over 2 s (at most 60 s) and returns it.
func gcxStable(f func() int64) int64 {
	prev := f()
	for i := 0; i < 30; i++ {
		time.Sleep(2 * time.Second)
		cur := f()
		d := cur - prev
		if d < 0 {
			d = -d
		}
		if prev > 0 && d*100 < prev {
			return cur
		}
		prev = cur
	}
	return prev
}

func gcxStop(p *kcmdProc) {
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(20 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.done
	}
}

// gcxRequests sums rest_client_requests_total over all labels, from an HTTPS /metrics.
func gcxRequests(t *testing.T, port int) float64 {
	t.Helper()
	_, _, m := gcxGet(t, port, "/metrics")
	sum := 0.0
	for _, l := range strings.Split(m, "\n") {
		if strings.HasPrefix(l, "rest_client_requests_total{") {
			f := strings.Fields(l)
			v, _ := strconv.ParseFloat(f[len(f)-1], 64)
			sum += v
		}
	}
	return sum
}

func TestBench_GC(t *testing.T) {
	if os.Getenv("KCMD_BENCH") != "1" {
		t.Skip("benchmark: run with make bench-gc")
	}
	const nRS, perRS = 100, 100
	qps := strconv.Itoa(gcxBenchQPS)
	burst := strconv.Itoa(2 * gcxBenchQPS)

	stopSharedRS(t)
	sweep := func(label, q, b string) {
		for _, procs := range []int{1, 2, 4} {
			k := startKcmd(t, nil, "--controllers=garbage-collector-controller", "--secure-port=0", "--leader-elect=false",
				"--kube-api-qps="+q, "--kube-api-burst="+b, "--concurrent-gc-syncs="+strconv.Itoa(procs), "--v=1")
			Eventually(t, 60*time.Second, "kcmd's GC started", func() (bool, string) { return k.Logged("resource monitors"), "" })
			s := gcxCollect(t, rsNamespace(t), 20, 100)
			fmt.Printf("bench: gc.collect_2000_procs%d%s_s %.1f s\n", procs, label, s)
			gcxStop(k)
		}
	}
	mode := os.Getenv("KCMD_BENCH_GC")
	if mode == "procs" {
		sweep("", qps, burst)
		sweep("_lifted", "1000", "2000")
		return
	}

	// ---- kcmd ----
	port := gcxFreePort(t)
	p := startKcmd(t, nil, "--controllers=garbage-collector-controller", "--secure-port="+strconv.Itoa(port),
		"--bind-address=127.0.0.1", "--authorization-always-allow-paths=/healthz,/metrics", "--leader-elect=false", "--kube-api-qps="+qps, "--kube-api-burst="+burst, "--v=1")
	Eventually(t, 60*time.Second, "kcmd's GC started", func() (bool, string) { return p.Logged("resource monitors"), "" })
	pid := p.cmd.Process.Pid
	time.Sleep(2 * time.Second)
	o0, l0 := gcxArena(t, pid)
	a0 := gcxStable(func() int64 { return gcxKcmdAnon(pid) })
	ns := rsNamespace(t)
	rss, _ := gcxOwnedPods(t, ns, "m", nRS, perRS)
	Eventually(t, 2*time.Minute, "kcmd's arena holds every object", func() (bool, string) {
		o, _ := gcxArena(t, pid)
		return o-o0 >= int64(nRS*(perRS+1)), fmt.Sprintf("%d objects added", o-o0)
	})
	a1 := gcxStable(func() int64 { return gcxKcmdAnon(pid) })
	o1, l1 := gcxArena(t, pid)
	objs := float64(o1 - o0)
	fmt.Printf("bench: gc.arena_bytes_per_object %.0f bytes\n", float64(l1-l0)/objs)
	fmt.Printf("bench: gc.private_bytes_per_object %.0f bytes\n", float64(a1-a0)/objs)
	fmt.Printf("bench: gc.bytes_per_object %.0f bytes\n", float64(l1-l0+a1-a0)/objs)
	req0 := gcxRequests(t, port)
	cpu0 := gcxTreeCPU(pid)
	gcxDeleteAll(t, rss, metav1.DeletePropagationBackground)
	start := time.Now()
	Eventually(t, 15*time.Minute, "kcmd collected every pod", func() (bool, string) {
		n := gcxPodCount(t, ns)
		return n == 0, fmt.Sprintf("%d pods left", n)
	})
	fmt.Printf("bench: gc.collect_10k_s %.1f s\n", time.Since(start).Seconds())
	time.Sleep(3 * time.Second) // the last virtual-node checks
	kreqs := gcxRequests(t, port) - req0
	fmt.Printf("bench: gc.requests_per_object %.2f requests\n", kreqs/float64(nRS*perRS))
	// CPU of the whole kcmd tree (informerd's graph builder included) per API request
	fmt.Printf("bench: gc.cpu_us_per_request %.0f us\n", (gcxTreeCPU(pid)-cpu0)*1e6/kreqs)
	gcxStop(p)

	// ---- --concurrent-gc-syncs: 1, 2, 4 processes on 2,000 dependents ----
	if mode != "main" {
		sweep("", qps, burst)
		sweep("_lifted", "1000", "2000")
	}

	// ---- upstream kube-controller-manager, garbage collector only ----
	kport := gcxFreePort(t)
	dir := os.Getenv("KCMD_CLUSTER_BIN")
	if dir == "" {
		t.Fatal("KCMD_CLUSTER_BIN is not set (run through make bench-gc)")
	}
	cmd := exec.Command(filepath.Join(dir, "kube-controller-manager"), "--kubeconfig="+env.Cluster.Kubeconfig,
		"--leader-elect=false", "--use-service-account-credentials=false", "--controllers=garbagecollector",
		"--secure-port="+strconv.Itoa(kport), "--bind-address=127.0.0.1", "--authorization-always-allow-paths=/healthz,/metrics",
		"--kube-api-qps="+qps, "--kube-api-burst="+burst, "--v=2")
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	k := &kcmdProc{cmd: cmd, done: make(chan struct{})}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			k.mu.Lock()
			k.logs = append(k.logs, sc.Text())
			k.mu.Unlock()
		}
		k.err = cmd.Wait()
		close(k.done)
	}()
	t.Cleanup(func() { _ = cmd.Process.Kill(); <-k.done })
	Eventually(t, 90*time.Second, "kcm's GC started", func() (bool, string) {
		return k.Logged("resource monitors"), "no 'resource monitors' line yet"
	})
	kpid := cmd.Process.Pid
	r0 := gcxStable(func() int64 { return gcxSmaps(kpid, "Rss") * 1024 })
	ns = rsNamespace(t)
	rss, _ = gcxOwnedPods(t, ns, "u", nRS, perRS)
	time.Sleep(5 * time.Second) // the informers receive the last events
	r1 := gcxStable(func() int64 { return gcxSmaps(kpid, "Rss") * 1024 })
	fmt.Printf("bench: gc.upstream.bytes_per_object %.0f bytes\n", float64(r1-r0)/float64(nRS*(perRS+1)))
	kreq0 := gcxRequests(t, kport)
	kcpu0 := hksCPUSeconds(kpid)
	gcxDeleteAll(t, rss, metav1.DeletePropagationBackground)
	start = time.Now()
	Eventually(t, 15*time.Minute, "kcm collected every pod", func() (bool, string) {
		n := gcxPodCount(t, ns)
		return n == 0, fmt.Sprintf("%d pods left", n)
	})
	fmt.Printf("bench: gc.upstream.collect_10k_s %.1f s\n", time.Since(start).Seconds())
	time.Sleep(3 * time.Second)
	ureqs := gcxRequests(t, kport) - kreq0
	fmt.Printf("bench: gc.upstream.requests_per_object %.2f requests\n", ureqs/float64(nRS*perRS))
	fmt.Printf("bench: gc.upstream.cpu_us_per_request %.0f us\n", (hksCPUSeconds(kpid)-kcpu0)*1e6/ureqs)
}
