package e2e

// The out-of-tree controller example (examples/configmap, docs/writing-a-controller.md) end to
// end: kcmd is installed into a temporary DESTDIR with `make install`, the example is built
// from a copy of its folder against that install only (pkg-config, no path into the source
// tree), loaded with --controller-plugins and enabled with --controllers=*,<name>, and its
// behaviour is checked on the real apiserver.

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

const (
	exController = "example-configmap-controller"
	exConfigMap  = "kcmd-example"
	exLabel      = "example.kcmd.io/configmap"
)

// exRun runs a command with a clean make environment (no outer jobserver), returning its output.
func exRun(dir string, extraEnv []string, name string, args ...string) (string, error) {
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	for _, e := range os.Environ() {
		if !strings.HasPrefix(e, "MAKEFLAGS=") && !strings.HasPrefix(e, "MFLAGS=") &&
			!strings.HasPrefix(e, "MAKELEVEL=") && !strings.HasPrefix(e, "PKG_CONFIG") {
			cmd.Env = append(cmd.Env, e)
		}
	}
	cmd.Env = append(cmd.Env, extraEnv...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out), nil
}

// exInstall runs `make install DESTDIR=<t's temp dir> PREFIX=/usr` in kcmd's tree; returns
// the DESTDIR.
func exInstall(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join(env.KcmdBinDir, "..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	destdir := filepath.Join(t.TempDir(), "root")
	if _, err := exRun(root, nil, "make", "install", "DESTDIR="+destdir, "PREFIX=/usr"); err != nil {
		t.Fatalf("make install: %v", err)
	}
	return destdir
}

// exPlugin installs kcmd into a DESTDIR and builds a copy of the example's folder against it
// (so nothing but the install is in reach), with its unit test; returns the plug-in's path.
func exPlugin(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join(env.KcmdBinDir, "..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	destdir := exInstall(t)
	src := filepath.Join(t.TempDir(), "src")
	if err := os.MkdirAll(src, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"Makefile", "configmap.c", "configmap.h", "test-configmap.c"} {
		b, err := os.ReadFile(filepath.Join(root, "examples", "configmap", f))
		if err == nil {
			err = os.WriteFile(filepath.Join(src, f), b, 0o644)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if _, err := exRun(src, exPkgConfig(destdir), "make", "all", "check"); err != nil {
		t.Fatalf("building the example against the DESTDIR install: %v", err)
	}
	return filepath.Join(src, "example-configmap.so")
}

// exPkgConfig: pkg-config finds only the DESTDIR install's kcmd.pc, and prefixes its paths.
func exPkgConfig(destdir string) []string {
	return []string{"PKG_CONFIG_LIBDIR=" + filepath.Join(destdir, "usr", "lib", "pkgconfig"),
		"PKG_CONFIG_SYSROOT_DIR=" + destdir}
}

func exStart(t *testing.T, controllers string, verbosity int, extra ...string) *kcmdProc {
	t.Helper()
	plugin := exPlugin(t)
	flags := append([]string{"--controller-plugins=" + plugin, "--controllers=" + controllers,
		"--secure-port=0", fmt.Sprintf("--v=%d", verbosity), "--leader-elect-resource-name=" + leaseName(t)},
		fastElection...)
	flags = append(flags, extra...)
	p := startKcmd(t, nil, flags...)
	t.Cleanup(func() { dumpKcmdLogs(t, p) })
	return p
}

func exLabelNamespace(t *testing.T, ns string, value *string) {
	t.Helper()
	patch := `{"metadata":{"labels":{"` + exLabel + `":null}}}`
	if value != nil {
		patch = `{"metadata":{"labels":{"` + exLabel + `":"` + *value + `"}}}`
	}
	if _, err := env.Client.CoreV1().Namespaces().Patch(context.Background(), ns, types.MergePatchType,
		[]byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatalf("labelling namespace %s: %v", ns, err)
	}
}

func exGet(ns string) (*corev1.ConfigMap, error) {
	return env.Client.CoreV1().ConfigMaps(ns).Get(context.Background(), exConfigMap, metav1.GetOptions{})
}

func exWaitPresent(t *testing.T, ns string, notUID types.UID) *corev1.ConfigMap {
	t.Helper()
	var cm *corev1.ConfigMap
	Eventually(t, 20*time.Second, "ConfigMap "+ns+"/"+exConfigMap, func() (bool, string) {
		c, err := exGet(ns)
		if err != nil {
			return false, err.Error()
		}
		if c.UID == notUID {
			return false, "still the deleted one"
		}
		cm = c
		return true, ""
	})
	return cm
}

func exWaitGone(t *testing.T, ns string) {
	t.Helper()
	Eventually(t, 20*time.Second, "ConfigMap "+ns+"/"+exConfigMap+" deleted", func() (bool, string) {
		_, err := exGet(ns)
		if apierrors.IsNotFound(err) {
			return true, ""
		}
		return false, fmt.Sprintf("get: %v", err)
	})
}

// workerReady waits for the controller's worker process to have started (kcmd-worker logs it
// at --v=1), so a check that nothing happened is not just a check that nothing ran yet.
func workerReady(t *testing.T, p *kcmdProc, controller string) {
	t.Helper()
	Eventually(t, 30*time.Second, controller+" worker started", func() (bool, string) {
		return p.Logged(controller + " worker ready"), "not logged yet"
	})
}

// waitCachesSynced waits for the controller's worker to log upstream's WaitForNamedCacheSync
// lines (kcmd-worker's start barrier, workers/cachewait.h): "Waiting for caches to sync for
// <controller>", then "Caches are synced for <controller>", each once; and checks that no line
// for which handled is true (a key the controller's worker handled) came before the second.
// A worker's lines reach the log in the order it wrote them.
func waitCachesSynced(t *testing.T, p *kcmdProc, controller string, handled func(string) bool) {
	t.Helper()
	waiting, synced := "Waiting for caches to sync for "+controller, "Caches are synced for "+controller
	Eventually(t, 60*time.Second, synced, func() (bool, string) {
		return p.Logged(synced), "not logged yet"
	})
	logs := p.Logs()
	wAt, sAt, nW, nS := -1, -1, 0, 0
	for i, l := range logs {
		// the exact line: "... for <controller>" ends it (progress lines go on with " for Ns")
		if strings.HasSuffix(l, waiting) {
			if wAt < 0 {
				wAt = i
			}
			nW++
		}
		if strings.HasSuffix(l, synced) {
			if sAt < 0 {
				sAt = i
			}
			nS++
		}
	}
	if nW != 1 || nS != 1 || wAt > sAt {
		t.Errorf("%q logged %d times (line %d), %q %d times (line %d): want each once, in that order",
			waiting, nW, wAt, synced, nS, sAt)
	}
	for _, l := range logs[:sAt] {
		if handled(l) {
			t.Errorf("%s handled a key before its caches synced: %s", controller, l)
		}
	}
}

// TestExample_ConfigMapPlugin: the example plug-in creates the ConfigMap in a labelled
// namespace (owned by it, with an Event), recreates it when deleted, creates it when a label
// is added, deletes it when the label goes, and leaves unlabelled namespaces alone. Its worker
// handles no key before the cache has listed Namespaces and ConfigMaps (every key it handles
// is logged at --v=4, from configmap.c).
func TestExample_ConfigMapPlugin(t *testing.T) {
	ctx := context.Background()
	on, labelled, unlabelled := "true", Namespace(t), Namespace(t)
	exLabelNamespace(t, labelled, &on)
	p := exStart(t, "*,"+exController, 4)
	waitCachesSynced(t, p, exController, func(l string) bool { return strings.Contains(l, " configmap.c:") })

	cm := exWaitPresent(t, labelled, "")
	// the order check looked for the right lines: the key just handled is logged (once its
	// sync, which records an Event after the create, returns)
	Eventually(t, 10*time.Second, "the example's worker logging the keys it handles at --v=4", func() (bool, string) {
		return p.Logged(`Finished syncing namespace "` + labelled + `"`), "not logged"
	})
	nsObj, err := env.Client.CoreV1().Namespaces().Get(ctx, labelled, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ref := metav1.GetControllerOf(cm)
	if ref == nil || ref.Kind != "Namespace" || ref.Name != labelled || ref.UID != nsObj.UID {
		t.Fatalf("ConfigMap's controller reference = %+v, want the Namespace %s (%s)", ref, labelled, nsObj.UID)
	}
	Eventually(t, 20*time.Second, "a SuccessfulCreate Event on the namespace", func() (bool, string) {
		evs, err := env.Client.CoreV1().Events("default").List(ctx, metav1.ListOptions{
			FieldSelector: "involvedObject.name=" + labelled + ",reason=SuccessfulCreate"})
		if err != nil {
			return false, err.Error()
		}
		for _, e := range evs.Items {
			if e.Source.Component == exController && e.InvolvedObject.Kind == "Namespace" &&
				e.Type == corev1.EventTypeNormal {
				return true, ""
			}
		}
		return false, fmt.Sprintf("%d events", len(evs.Items))
	})

	// deleted by someone: created again
	if err := env.Client.CoreV1().ConfigMaps(labelled).Delete(ctx, exConfigMap, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	again := exWaitPresent(t, labelled, cm.UID)
	if metav1.GetControllerOf(again) == nil {
		t.Fatalf("the recreated ConfigMap has no controller reference")
	}
	// The same Event again (same object, reason and message, one worker process): client-go's
	// correlator counts it on the first Event object (count 2) instead of posting a second one.
	Eventually(t, 20*time.Second, "the second SuccessfulCreate counted on the first Event", func() (bool, string) {
		evs, err := env.Client.CoreV1().Events("default").List(ctx, metav1.ListOptions{
			FieldSelector: "involvedObject.name=" + labelled + ",reason=SuccessfulCreate"})
		if err != nil {
			return false, err.Error()
		}
		var mine []corev1.Event
		for _, e := range evs.Items {
			if e.Source.Component == exController {
				mine = append(mine, e)
			}
		}
		if len(mine) == 1 && mine[0].Count == 2 && mine[0].Source.Host == "" &&
			mine[0].ReportingController == exController && mine[0].ReportingInstance == "" {
			return true, ""
		}
		var got []string
		for _, e := range mine {
			got = append(got, fmt.Sprintf("%s count=%d host=%q reporting=%q/%q", e.Name, e.Count,
				e.Source.Host, e.ReportingController, e.ReportingInstance))
		}
		return false, fmt.Sprintf("events %v, want one with count 2", got)
	})

	// the label added later: created there too
	if _, err := exGet(unlabelled); !apierrors.IsNotFound(err) {
		t.Fatalf("unlabelled namespace %s has the ConfigMap (err %v)", unlabelled, err)
	}
	exLabelNamespace(t, unlabelled, &on)
	exWaitPresent(t, unlabelled, "")

	// the label removed: deleted
	exLabelNamespace(t, labelled, nil)
	exWaitGone(t, labelled)
	if _, err := exGet(unlabelled); err != nil {
		t.Fatalf("the other namespace's ConfigMap went too: %v", err)
	}
	if !p.Logged("deleted configmap " + labelled + "/" + exConfigMap) {
		t.Errorf("kcmd did not log the deletion")
	}
}

// TestExample_NoKeyBeforeCachesSynced: the worker handles no key before the cache has listed
// both resources it watches (kcmd-worker's start barrier, upstream's WaitForNamedCacheSync),
// with the lists made slow enough to land apart: only this controller (informerd lists
// Namespaces, then ConfigMaps) and one request a second for every process, so informerd's
// ConfigMap list lands about a second after its Namespace list has queued every namespace.
// A worker that took keys at once would handle them meanwhile, reading every namespace as
// having no ConfigMap (a labelled one with its ConfigMap already there: a create refused as
// AlreadyExists), and log them before the synced line.
func TestExample_NoKeyBeforeCachesSynced(t *testing.T) {
	on, labelled := "true", Namespace(t)
	exLabelNamespace(t, labelled, &on)
	// the ConfigMap the controller would make, there before it starts (with its owner)
	nsObj, err := env.Client.CoreV1().Namespaces().Get(context.Background(), labelled, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	isController := true
	if _, err := env.Client.CoreV1().ConfigMaps(labelled).Create(context.Background(), &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: exConfigMap, OwnerReferences: []metav1.OwnerReference{{
			APIVersion: "v1", Kind: "Namespace", Name: labelled, UID: nsObj.UID, Controller: &isController}}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	p := exStart(t, exController, 4, "--kube-api-qps=1", "--kube-api-burst=1")
	waitCachesSynced(t, p, exController, func(l string) bool { return strings.Contains(l, " configmap.c:") })
	Eventually(t, 30*time.Second, "the labelled namespace's key handled", func() (bool, string) {
		return p.Logged(`Finished syncing namespace "` + labelled + `"`), "not logged"
	})
	if p.Logged("created configmap " + labelled + "/") {
		t.Errorf("the worker created the ConfigMap that was there all along")
	}
}

// TestExample_NotEnabledCreatesNothing: with the plug-in loaded but the controller not named,
// '*' does not turn it on (as kcm's optional controllers): no process runs it, and a labelled
// namespace gets no ConfigMap while the in-tree controllers run.
func TestExample_NotEnabledCreatesNothing(t *testing.T) {
	on, ns := "true", Namespace(t)
	exLabelNamespace(t, ns, &on)
	p := exStart(t, "*", 1)
	workerReady(t, p, "replicaset-controller")
	deadline := time.Now().Add(3 * time.Second)
	for time.Now().Before(deadline) {
		if _, err := exGet(ns); !apierrors.IsNotFound(err) {
			t.Fatalf("ConfigMap in %s with the controller off (err %v)", ns, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
	for _, l := range p.Logs() {
		if strings.Contains(l, exController) {
			t.Fatalf("a process of the disabled controller ran: %s", l)
		}
	}
}

// TestExample_NewController: `kcmctl new-controller` (the installed kcmctl) scaffolds a project
// that builds against the DESTDIR install, whose unit test passes, and whose generated e2e test
// passes against the real apiserver with the kcmd under test running the plug-in.
func TestExample_NewController(t *testing.T) {
	destdir := exInstall(t)
	dir := filepath.Join(t.TempDir(), "hello")
	kcmctl := filepath.Join(destdir, "usr", "bin", "kcmctl")
	if out, err := exRun("/", nil, kcmctl, "new-controller", "hello", dir); err != nil {
		t.Fatalf("kcmctl new-controller: %v %s", err, out)
	}
	for _, f := range []string{"hello-controller.c", "hello-controller.h", "test-hello-controller.c",
		"e2e-hello-controller.c", "Makefile", "README.md", ".gitignore"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Fatalf("scaffold lacks %s: %v", f, err)
		}
	}
	// a second run into the same directory refuses to overwrite
	if _, err := exRun("/", nil, kcmctl, "new-controller", "hello", dir); err == nil {
		t.Fatalf("kcmctl new-controller overwrote a non-empty directory")
	}
	out, err := exRun(dir, exPkgConfig(destdir), "make", "all", "check")
	if err != nil {
		t.Fatalf("building the scaffold: %v", err)
	}
	if !strings.Contains(out, "PASS") {
		t.Fatalf("the scaffold's unit test did not pass:\n%s", out)
	}
	e2eEnv := []string{"KUBECONFIG=" + env.Cluster.Kubeconfig, "KCMD=" + filepath.Join(env.KcmdBinDir, "kcmd")}
	if out, err := exRun(dir, e2eEnv, "./e2e-hello-controller"); err != nil {
		t.Fatalf("the scaffold's e2e test: %v", err)
	} else if !strings.Contains(out, "e2e: PASS") {
		t.Fatalf("the scaffold's e2e test did not pass:\n%s", out)
	}
}
