// SPDX-License-Identifier: Apache-2.0

package e2e

// Issue 19, feature-gate parity: kcmd's --feature-gates accepts and refuses what the real
// kube-controller-manager v1.37 binary of the test cluster accepts and refuses, for the same
// reason (kcm's error text), and a controller kcm runs only behind a gate does not start in
// kcmd when that gate is off, as in kcm.

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// fgCase: one command line's --feature-gates flags (each element one flag) and whether kcm is
// expected to accept it (the table's own claim, checked against kcm too, so a wrong row fails).
type fgCase struct {
	name   string
	flags  []string
	accept bool
	// for an accepted GA or deprecated gate: kcm's warning names it
	warns string
	// more flags (--emulated-version, --min-compatibility-version)
	extra []string
	// run without --version and with a kubeconfig that does not exist: kcm checks the
	// emulation/min compatibility range only then (after printing --version)
	run bool
}

var fgCases = []fgCase{
	{name: "kcmd gate off", flags: []string{"PodDeletionCost=false"}, accept: true},
	{name: "spaces and empty entries", flags: []string{" PodDeletionCost = false , ,WatchListClient=true,"}, accept: true},
	{name: "kube prefix", flags: []string{"kube:PodDeletionCost=false,kube:GenericWorkload=true"}, accept: true},
	{name: "empty", flags: []string{""}, accept: true},
	{name: "AllBeta off", flags: []string{"AllBeta=false"}, accept: true},
	{name: "AllBeta on", flags: []string{"AllBeta=true"}, accept: true},
	{name: "AllAlpha with its beta", flags: []string{"AllAlpha=true,GenericWorkload=true"}, accept: true},
	{name: "GA at default", flags: []string{"MultiCIDRServiceAllocator=true"}, accept: true, warns: "MultiCIDRServiceAllocator"},
	{name: "GA unlocked off", flags: []string{"PodCertificateRequest=false"}, accept: true, warns: "PodCertificateRequest"},
	{name: "deprecated unlocked", flags: []string{"KMSv1=true"}, accept: true, warns: "KMSv1"},
	{name: "dependency off with its dependents", flags: []string{"ClusterTrustBundle=false,ClusterTrustBundleProjection=false"}, accept: true},
	{name: "dependencies over two flags", flags: []string{"AtomicFIFO=false,StaleControllerConsistencyDaemonSet=false,StaleControllerConsistencyHPA=false",
		"StaleControllerConsistencyJob=false,StaleControllerConsistencyReplicaSet=false,StaleControllerConsistencyStatefulSet=false,NodeControllerLeaseCircuitBreaker=false"}, accept: true},
	{name: "last value wins", flags: []string{"SELinuxChangePolicy=false", "SELinuxChangePolicy=true"}, accept: true},
	{name: "every gate of kcm's help at its default, prefixed", flags: nil, accept: true}, // filled from --help
	{name: "unknown", flags: []string{"NoSuchGate=true"}},
	{name: "empty name", flags: []string{"=true"}},
	{name: "locked", flags: []string{"MultiCIDRServiceAllocator=false"}},
	{name: "two locked", flags: []string{"SELinuxChangePolicy=false,MultiCIDRServiceAllocator=false"}},
	{name: "deprecated locked", flags: []string{"GitRepoVolumeDriver=true"}},
	{name: "dependency off", flags: []string{"AtomicFIFO=false"}},
	{name: "dependency off in a later flag", flags: []string{"WatchListClient=false", "AtomicFIFO=0"}},
	{name: "AllAlpha alone", flags: []string{"AllAlpha=true"}},
	{name: "GA dependency off", flags: []string{"ClusterTrustBundle=false"}},
	{name: "DRA taints off", flags: []string{"DRADeviceTaints=false"}},
	{name: "alpha needing an alpha", flags: []string{"DRAPartitionableDevicesType=true"}},
	{name: "missing value", flags: []string{"PodDeletionCost"}},
	{name: "bad value", flags: []string{"PodDeletionCost=maybe"}},
	{name: "mixed prefixes", flags: []string{"kube:APIServingWithRoutine=true,APIResponseCompression=true,kube:PodDeletionCost=false"}},
	{name: "mixed prefixes over two flags", flags: []string{"MultiCIDRServiceAllocator=true", "kube:PodCertificateRequest=true"}},
	{name: "other component", flags: []string{"wardle:A=true"}},

	// --emulated-version / --min-compatibility-version: the syntax is checked with --version,
	// the range only when kcm goes on to run
	{name: "emulated 1.37", flags: []string{}, extra: []string{"--emulated-version=1.37"}, accept: true},
	{name: "emulated kube=1.37", flags: []string{}, extra: []string{"--emulated-version=kube=1.37", "--emulated-version="}, accept: true},
	{name: "emulated v1.37.0", flags: []string{}, extra: []string{"--emulated-version=v1.37.0"}, accept: true},
	{name: "min compatibility 1.35", flags: []string{"PodDeletionCost=false"}, extra: []string{"--min-compatibility-version=kube=1.35"}, accept: true},
	{name: "emulated 1.38 with --version", flags: []string{}, extra: []string{"--emulated-version=1.38"}, accept: true},
	{name: "emulated not a version", flags: []string{}, extra: []string{"--emulated-version=foo"}},
	{name: "emulated empty item", flags: []string{}, extra: []string{"--emulated-version=,"}},
	{name: "emulated one number", flags: []string{}, extra: []string{"--emulated-version=1"}},
	{name: "emulated zero-prefixed", flags: []string{}, extra: []string{"--emulated-version=01.36"}},
	{name: "emulated too big", flags: []string{}, extra: []string{"--emulated-version=1.99999999999999999999999"}},
	{name: "emulated patch", flags: []string{}, extra: []string{"--emulated-version=1.36.1"}},
	{name: "emulated other component", flags: []string{}, extra: []string{"--emulated-version=wardle=1.2"}},
	{name: "emulated twice", flags: []string{}, extra: []string{"--emulated-version=1.36", "--emulated-version=kube=1.35"}},
	{name: "min compatibility patch", flags: []string{}, extra: []string{"--min-compatibility-version=1.35.2"}},
	{name: "emulated bad, gate bad", flags: []string{"Foo=true"}, extra: []string{"--emulated-version=foo"}},
	{name: "emulated 1.38, gate locked", flags: []string{"CPUManagerPolicyOptions=false"}, extra: []string{"--emulated-version=1.38"}},
	{name: "emulated 1.38", flags: []string{}, extra: []string{"--emulated-version=1.38"}, run: true},
	{name: "emulated 1.33", flags: []string{}, extra: []string{"--emulated-version=1.33"}, run: true},
	{name: "emulated 2.0", flags: []string{}, extra: []string{"--emulated-version=2.0"}, run: true},
	{name: "min compatibility 1.38", flags: []string{}, extra: []string{"--min-compatibility-version=1.38"}, run: true},
	{name: "min compatibility 1.33", flags: []string{}, extra: []string{"--min-compatibility-version=1.33"}, run: true},
	{name: "min compatibility over emulated", flags: []string{}, extra: []string{"--emulated-version=1.36", "--min-compatibility-version=1.37"}, run: true},
	{name: "emulated 1.38, dependency off", flags: []string{"AtomicFIFO=false"}, extra: []string{"--emulated-version=1.38"}, run: true},
	// the gates judged at the emulated version (their versioned specs): --version stops both
	// before the range and before kcmd's refusal of gates its code does not read
	{name: "emulated 1.35, gate PreAlpha there", flags: []string{"AtomicFIFO=true"}, extra: []string{"--emulated-version=1.35"}},
	{name: "emulated 1.34, gate PreAlpha there", flags: []string{"GenericWorkload=true"}, extra: []string{"--emulated-version=1.34"}},
	{name: "emulated 1.34, locked only later", flags: []string{"GitRepoVolumeDriver=true,JobManagedBy=false"}, extra: []string{"--emulated-version=1.34"}, accept: true},
	{name: "emulated 1.36, AllAlpha (GenericWorkload alpha there)", flags: []string{"AllAlpha=true"}, extra: []string{"--emulated-version=1.36"}, accept: true},
	{name: "emulated 1.36, dependency off", flags: []string{"AtomicFIFO=false"}, extra: []string{"--emulated-version=1.36"}},
	{name: "emulated 1.35, PreAlpha set off", flags: []string{"AtomicFIFO=false"}, extra: []string{"--emulated-version=1.35"}},
	{name: "min compatibility 1.37, gate on there", flags: []string{"DRAFractionalCapacityRange=false"}, extra: []string{"--min-compatibility-version=1.37"}, accept: true},
}

// fgItems splits an error message into its errors: Go's aggregate prints several as "[a, b]"
// in a map's (random) order, so they are compared as a sorted list.
var fgItemRe = regexp.MustCompile(`(?:emulation|minCompatibilityVersion) version \S+ is not between \[[^\]]*\]|cannot set feature gate \S+ to \S+, feature is locked to (?:true|false)|[A-Za-z0-9]+ is enabled, but depends on features that are disabled: \[[^\]]*\]`)

func fgItems(msg string) []string {
	msg = strings.TrimSpace(msg)
	if strings.HasPrefix(msg, "[") && strings.HasSuffix(msg, "]") {
		items := fgItemRe.FindAllString(msg, -1)
		sort.Strings(items)
		return items
	}
	return []string{msg}
}

func fgArgs(c fgCase) []string {
	var a []string
	for _, f := range c.flags {
		a = append(a, "--feature-gates="+f)
	}
	a = append(a, c.extra...)
	if c.run {
		return append(a, "--kubeconfig=/nonexistent/kubeconfig")
	}
	return append(a, "--version")
}

// fgRun runs bin with the case's flags (fgArgs): accepted, or the refusal's message as msg
// extracts it from a line of the output.
func fgRun(bin string, c fgCase, msg func(string) (string, bool)) (bool, string, string) {
	cmd := exec.Command(bin, fgArgs(c)...)
	out, err := cmd.CombinedOutput()
	if err == nil {
		return true, "", string(out)
	}
	for _, l := range strings.Split(string(out), "\n") {
		if m, ok := msg(l); ok {
			return false, m, string(out)
		}
	}
	return false, "(no error line)", string(out)
}

var (
	// kcm fails in its PersistentPreRunE, after logging is set up: component-base's cli.Run
	// logs `"command failed" err="..."` (klog's text, the value Go-quoted); before that it
	// prints "Error: ...".
	kcmFailedRe = regexp.MustCompile(`"command failed" err="((?:[^"\\]|\\.)*)"`)
	kcmErrRe    = regexp.MustCompile(`^Error: (.*)$`)
	kcmdErrRe   = regexp.MustCompile(`^kcmd: --(?:feature-gates|emulated-version|min-compatibility-version): (.*)$`)
)

func kcmErrMsg(l string) (string, bool) {
	if m := kcmFailedRe.FindStringSubmatch(l); m != nil {
		if u, err := strconv.Unquote(`"` + m[1] + `"`); err == nil {
			return u, true
		}
		return m[1], true
	}
	if m := kcmErrRe.FindStringSubmatch(l); m != nil {
		return m[1], true
	}
	return "", false
}

func kcmdErrMsg(l string) (string, bool) {
	if m := kcmdErrRe.FindStringSubmatch(l); m != nil {
		return m[1], true
	}
	return "", false
}

func TestKcmd_FeatureGateChecksMatchKCM(t *testing.T) {
	t.Parallel()
	kcm := filepath.Join(os.Getenv("KCMD_CLUSTER_BIN"), "kube-controller-manager")
	kcmd := filepath.Join(env.KcmdBinDir, "kcmd")
	_, helpGates := kcmHelp(t)
	cases := append([]fgCase(nil), fgCases...)
	for i := range cases {
		if cases[i].flags == nil {
			var g []string
			for _, h := range helpGates {
				g = append(g, "kube:"+h)
			}
			cases[i].flags = []string{strings.Join(g, ",")}
		}
	}
	var mu sync.Mutex
	var wg sync.WaitGroup
	sem := make(chan struct{}, 4)
	refused := 0
	for _, c := range cases {
		wg.Add(1)
		sem <- struct{}{}
		go func(c fgCase) {
			defer wg.Done()
			defer func() { <-sem }()
			kOK, kMsg, kOut := fgRun(kcm, c, kcmErrMsg)
			dOK, dMsg, dOut := fgRun(kcmd, c, kcmdErrMsg)
			mu.Lock()
			defer mu.Unlock()
			if !kOK {
				refused++
			}
			switch {
			case kOK != c.accept:
				t.Errorf("%s %q: kube-controller-manager accepts it: %v, the table says %v (%s)", c.name, c.flags, kOK, c.accept, strings.TrimSpace(kOut))
			case kOK != dOK:
				t.Errorf("%s %q: kube-controller-manager accepts it: %v, kcmd: %v\nkcm: %s\nkcmd: %s", c.name, c.flags, kOK, dOK, strings.TrimSpace(kOut), strings.TrimSpace(dOut))
			case !kOK && strings.Join(fgItems(kMsg), "\n") != strings.Join(fgItems(dMsg), "\n"):
				t.Errorf("%s %q: refused for another reason\nkcm:  %s\nkcmd: %s", c.name, c.flags, kMsg, dMsg)
			default:
				t.Logf("%s %q: both %s", c.name, c.flags, map[bool]string{true: "accept", false: "refuse: " + kMsg}[kOK])
			}
			if c.warns != "" && kOK && !strings.Contains(kOut, `featureGate="`+c.warns+`"`) {
				t.Errorf("%s: kube-controller-manager did not warn of %s: %s", c.name, c.warns, kOut)
			}
		}(c)
	}
	wg.Wait()
	if refused < 10 {
		t.Errorf("only %d of %d command lines refused by kube-controller-manager: the table tests too little", refused, len(cases))
	}
}

// kcmProcLog runs the upstream kube-controller-manager against the test cluster until every
// want string is in its log (or the timeout), then kills it; returns its log.
func kcmProcLog(t *testing.T, timeout time.Duration, want []string, args ...string) string {
	t.Helper()
	bin := filepath.Join(os.Getenv("KCMD_CLUSTER_BIN"), "kube-controller-manager")
	cmd := exec.Command(bin, append([]string{"--kubeconfig=" + env.Cluster.Kubeconfig, "--leader-elect=false",
		"--secure-port=0", "--v=2"}, args...)...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var log strings.Builder
	done := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			mu.Lock()
			log.WriteString(sc.Text() + "\n")
			mu.Unlock()
		}
		close(done)
	}()
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		mu.Lock()
		s := log.String()
		mu.Unlock()
		all := true
		for _, w := range want {
			all = all && strings.Contains(s, w)
		}
		if all {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	_ = cmd.Process.Kill()
	<-done
	_ = cmd.Wait()
	mu.Lock()
	defer mu.Unlock()
	return log.String()
}

// TestKcmd_FeatureGateOffStopsControllers: the ClusterTrustBundle publisher and the
// PodCertificateRequest cleaner run in kcm only behind ClusterTrustBundle and
// PodCertificateRequest (GA, not locked in v1.37). With both off, named in --controllers, kcm and
// kcmd both say "Controller is disabled by a feature gate" for each and kcmd starts no controller
// process and publishes no bundle; kcmd warns of the GA gates as kcm does. The same kcmd command
// line with the gates at their default publishes the bundle (the negative control).
func TestKcmd_FeatureGateOffStopsControllers(t *testing.T) {
	const ctb = "kube-apiserver-serving-clustertrustbundle-publisher-controller"
	const pcr = "podcertificaterequest-cleaner-controller"
	gatesOff := "--feature-gates=ClusterTrustBundle=false,ClusterTrustBundleProjection=false,PodCertificateRequest=false"
	ctx := context.Background()
	ctbs := env.Client.CertificatesV1().ClusterTrustBundles()
	ca, err := os.ReadFile(env.Cluster.CAFile)
	if err != nil {
		t.Fatal(err)
	}
	bundle := ctbName(ctbSigner, ca)
	_ = ctbs.Delete(ctx, bundle, metav1.DeleteOptions{})
	Eventually(t, 30*time.Second, "no bundle "+bundle+" before the test", func() (bool, string) {
		_, err := ctbs.Get(ctx, bundle, metav1.GetOptions{})
		return apierrors.IsNotFound(err), fmt.Sprint(err)
	})
	t.Cleanup(func() { _ = ctbs.Delete(context.Background(), bundle, metav1.DeleteOptions{}) })

	disabled := func(c, gate string) string {
		return fmt.Sprintf(`controller="%s" requiredFeatureGates=["%s"]`, c, gate)
	}
	// upstream first: what kcm says with the gates off
	kcmLog := kcmProcLog(t, 60*time.Second, []string{disabled(ctb, "ClusterTrustBundle"), disabled(pcr, "PodCertificateRequest")},
		"--controllers="+ctb+","+pcr, "--root-ca-file="+env.Cluster.CAFile, gatesOff)
	for _, w := range []string{disabled(ctb, "ClusterTrustBundle"), disabled(pcr, "PodCertificateRequest"),
		"Controller is disabled by a feature gate", `featureGate="PodCertificateRequest"`, `featureGate="ClusterTrustBundle"`} {
		if !strings.Contains(kcmLog, w) {
			t.Errorf("kube-controller-manager did not log %s:\n%s", w, kcmLog)
		}
	}
	for _, l := range strings.Split(kcmLog, "\n") {
		if strings.Contains(l, "disabled by a feature gate") || strings.Contains(l, "featureGate=") {
			t.Logf("kcm: %s", l)
		}
	}

	common := []string{"--controllers=" + ctb + "," + pcr, "--secure-port=0", "--leader-elect=false",
		"--use-service-account-credentials", "--root-ca-file=" + env.Cluster.CAFile, "--v=4"}
	p := startKcmd(t, nil, append(append([]string(nil), common...), gatesOff)...)
	Eventually(t, 30*time.Second, "kcmd's disabled-by-gate lines", func() (bool, string) {
		return p.Logged("Controller is disabled by a feature gate") && p.Logged(disabled(ctb, "ClusterTrustBundle")) &&
			p.Logged(disabled(pcr, "PodCertificateRequest")) && p.Logged("starting: "), "not yet"
	})
	for _, g := range []string{"PodCertificateRequest", "ClusterTrustBundle", "ClusterTrustBundleProjection"} {
		if !p.Logged(`featureGate="`+g+`"`) || !p.Logged("Warning: setting GA feature gate. It will be removed in a future release.") {
			t.Errorf("kcmd did not warn of the GA gate %s as kcm does", g)
		}
	}
	for _, l := range p.Logs() {
		if strings.Contains(l, "disabled by a feature gate") || strings.Contains(l, "featureGate=") ||
			strings.Contains(l, "starting: ") {
			t.Logf("kcmd: %s", l)
		}
		if strings.Contains(l, "starting: ") && !strings.Contains(l, "controllers: (none)") {
			t.Errorf("kcmd started controllers with their gates off: %s", l)
		}
	}
	time.Sleep(5 * time.Second)
	for pid, comm := range childrenOf(p.cmd.Process.Pid) {
		if strings.HasPrefix(comm, "kcmd-worker") || strings.HasPrefix(comm, "kcmd-dispatch") {
			t.Errorf("a controller process runs with the gates off: %d %s", pid, comm)
		}
	}
	if _, err := ctbs.Get(ctx, bundle, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the bundle %s exists with ClusterTrustBundle off (%v)", bundle, err)
	}
	_ = p.cmd.Process.Kill()
	<-p.done

	// the negative control: gates at their default, the publisher publishes
	q := startKcmd(t, nil, common...)
	start := time.Now()
	Eventually(t, 60*time.Second, "the bundle "+bundle+" with the gates on", func() (bool, string) {
		_, err := ctbs.Get(ctx, bundle, metav1.GetOptions{})
		return err == nil, fmt.Sprint(err)
	})
	t.Logf("with the gates at their default the bundle %s appeared after %v", bundle, time.Since(start))
	if q.Logged("Controller is disabled by a feature gate") {
		t.Error("kcmd disabled a controller with its gates at their default")
	}
}
