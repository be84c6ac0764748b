// SPDX-License-Identifier: Apache-2.0

package e2e

// Helpers of the ported upstream garbage-collector integration tests (gc_integration_test.go,
// spec §7.A). Upstream runs an in-process GC against an in-process apiserver; here kcmd runs
// with only its garbage collector (`--controllers=garbage-collector-controller`; upstream
// kube-controller-manager is not running), and the tests play the part of every other actor.
//
// Upstream's "in the graph" checks (gc.GraphHasUID) read the GC's dependency graph. kcmd's GC
// serves its graph as upstream does, in DOT at /debug/controllers/garbage-collector-controller/
// graph?uid=<uid> on the manager's HTTPS port (workers/garbagecollector/debug.h: rendered from
// the arena the GC works from, with a virtual vertex for every owner referenced but not
// observed). Every kcmd of these tests serves it on a port of its own (gciLaunchFlags), and
// gciInGraph asks it. As upstream's dump, the endpoint draws only objects that have owners or
// dependents: every uid these tests look up has one or the other.

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/utils/ptr"
)

// gciFlags are the flags of every GC-only kcmd of these tests: 5 workers as upstream's tests,
// all running from the start (--worker-idle-timeout=0), as before the worker pools.
var gciFlags = []string{"--controllers=garbage-collector-controller", "--leader-elect=false",
	"--concurrent-gc-syncs=5", "--kube-api-qps=200", "--kube-api-burst=400", "--v=4", "--worker-idle-timeout=0"}

// gciPorts: the HTTPS port of each kcmd started by gciSharedGC or gciStartGC.
var gciPorts sync.Map // *kcmdProc -> int

// gciLaunchFlags: gciFlags plus an HTTPS server on a free local port that serves the debug
// paths without a token (as kcm does with --authorization-always-allow-paths), so that the
// tests can read the GC's graph.
func gciLaunchFlags(t *testing.T) ([]string, int) {
	t.Helper()
	port := gcxFreePort(t)
	return append(append([]string(nil), gciFlags...), "--secure-port="+strconv.Itoa(port), "--bind-address=127.0.0.1",
		"--authorization-always-allow-paths=/healthz,/metrics,/debug/*"), port
}

// gciShared is the GC-only kcmd that the parallel scenarios share (each in its own namespace).
// It starts at the first parallel test, i.e. after every sequential test ended, so it never
// overlaps the scenarios that need a garbage collector started after their objects exist.
var gciShared struct {
	once sync.Once
	p    *kcmdProc
}

// gciSharedGC returns the shared GC kcmd, started once and stopped by TestMain; it waits until
// the informers of the core types the scenarios use are synced.
func gciSharedGC(t *testing.T) *kcmdProc {
	t.Helper()
	gciShared.once.Do(func() {
		flags, port := gciLaunchFlags(t)
		p := launchKcmd(t, nil, flags...)
		gciPorts.Store(p, port)
		sharedMu.Lock()
		sharedProcs = append(sharedProcs, p)
		sharedMu.Unlock()
		gciShared.p = p
	})
	p := gciShared.p
	t.Cleanup(func() { dumpKcmdLogs(t, p); gciSaveLog(t, p) })
	gciWaitSynced(t, p, "pods", "replicationcontrollers", "configmaps", "secrets", "persistentvolumes")
	gciWaitWorkersStarted(t, p)
	return p
}

// gciSaveLog writes kcmd's whole log to $GCI_KCMD_LOG_DIR/<test>.log if that is set (debugging).
func gciSaveLog(t *testing.T, p *kcmdProc) {
	dir := os.Getenv("GCI_KCMD_LOG_DIR")
	if dir == "" {
		return
	}
	_ = os.WriteFile(filepath.Join(dir, strings.ReplaceAll(t.Name(), "/", "_")+".log"),
		[]byte(strings.Join(p.Logs(), "\n")+"\n"), 0o644)
}

// gciWaitWorkersStarted waits until the GC's first worker process of p passed
// GarbageCollector.Run's start-up wait: the monitors synced, or 30 s went by.
func gciWaitWorkersStarted(t *testing.T, p *kcmdProc) {
	t.Helper()
	Eventually(t, 90*time.Second, "kcmd's GC workers started", func() (bool, string) {
		n := 0
		for _, l := range p.Logs() {
			if strings.Contains(l, "Garbage collector: all resource monitors have synced") ||
				strings.Contains(l, "Garbage collector: not all resource monitors could be synced") {
				n++
			}
		}
		// the first worker process; the GC's others start while keys wait (docs/manager.md,
		// "Worker pools") and sync their monitors before they take one
		return n >= 1, fmt.Sprintf("%d workers", n)
	})
}

// gciStartGC runs a GC-only kcmd for t alone (killed when t ends), for the scenarios in which
// upstream starts the garbage collector after creating the objects (a controller-manager
// restart). The caller waits for what it needs to be synced.
func gciStartGC(t *testing.T) *kcmdProc {
	t.Helper()
	flags, port := gciLaunchFlags(t)
	p := startKcmd(t, nil, flags...)
	gciPorts.Store(p, port)
	t.Cleanup(func() { dumpKcmdLogs(t, p); gciSaveLog(t, p) })
	return p
}

// gciStop kills a kcmd started by gciStartGC now (before a private cluster goes away).
func gciStop(p *kcmdProc) {
	_ = p.cmd.Process.Kill()
	<-p.done
}

// gciKcmctl runs kcmctl against kcmd p; it returns the output and whether kcmctl exited 0.
func gciKcmctl(t *testing.T, p *kcmdProc, args ...string) (string, bool) {
	t.Helper()
	all := append([]string{"--pid", strconv.Itoa(p.cmd.Process.Pid)}, args...)
	out, err := exec.Command(filepath.Join(env.KcmdBinDir, "kcmctl"), all...).CombinedOutput()
	return string(out), err == nil
}

// gciSyncedTypes parses `kcmctl cache stats`: resource[.group] -> synced.
func gciSyncedTypes(t *testing.T, p *kcmdProc) map[string]bool {
	t.Helper()
	out, ok := gciKcmctl(t, p, "cache", "stats")
	res := map[string]bool{}
	if !ok {
		return res
	}
	for _, l := range strings.Split(out, "\n") {
		f := strings.Fields(l)
		if len(f) >= 4 && (f[1] == "yes" || f[1] == "no") {
			res[f[0]] = f[1] == "yes"
		}
	}
	return res
}

// gciWaitSynced waits until kcmd's informers of the given resources (plural[.group]) synced.
func gciWaitSynced(t *testing.T, p *kcmdProc, resources ...string) {
	t.Helper()
	Eventually(t, 60*time.Second, "kcmd's informers synced: "+strings.Join(resources, ","), func() (bool, string) {
		st := gciSyncedTypes(t, p)
		for _, r := range resources {
			if !st[r] {
				return false, r + " not synced"
			}
		}
		return true, ""
	})
}

// gciGraphVertex asks kcmd p's GC for the component of uid in its graph and reports whether
// uid's own vertex is in it, and whether that vertex is virtual (an owner referenced but not
// observed). The endpoint answers 200 with an empty digraph for a uid it does not know, and a
// vertex is "missing" when it stands for an owner outside the component (never uid itself).
// err: the endpoint could not be read or answered something else than DOT.
func gciGraphVertex(p *kcmdProc, uid types.UID) (present, virtual bool, err error) {
	v, ok := gciPorts.Load(p)
	if !ok {
		return false, false, fmt.Errorf("kcmd %d serves no HTTPS port (not started by gciSharedGC/gciStartGC)", p.cmd.Process.Pid)
	}
	c := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	resp, err := c.Get(fmt.Sprintf("https://127.0.0.1:%d/debug/controllers/garbage-collector-controller/graph?uid=%s",
		v.(int), uid))
	if err != nil {
		return false, false, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return false, false, err
	}
	body := string(b)
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(body, "strict digraph full {\n") {
		return false, false, fmt.Errorf("graph endpoint: %d %q", resp.StatusCode, body)
	}
	head := fmt.Sprintf("\n  %q [\n", string(uid))
	k := strings.Index(body, head)
	if k < 0 {
		return false, false, nil
	}
	block := body[k+len(head):]
	if e := strings.Index(block, "\n  ];\n"); e >= 0 {
		block = block[:e+1]
	}
	if strings.Contains(block, "\n    missing=\"true\"\n") {
		return false, false, nil
	}
	return true, strings.Contains(block, "\n    virtual=\"true\"\n"), nil
}

// gciInGraph: the object with this uid is an observed node of kcmd's GC graph (upstream's
// gc.GraphHasUID for an object that exists: a virtual node, an owner only referenced, does not
// count, so that an informer that lost the object is not covered by a dependent's reference).
func gciInGraph(t *testing.T, p *kcmdProc, uid types.UID) bool {
	present, virtual, err := gciGraphVertex(p, uid)
	if err != nil {
		t.Logf("reading the GC graph of %s: %v", uid, err)
	}
	return present && !virtual
}

// gciWaitInGraph waits until every uid is an observed node of kcmd's GC graph (upstream: the
// pods are in the graph before the orphaning delete, else the owner's delete may be seen before
// its dependents).
func gciWaitInGraph(t *testing.T, p *kcmdProc, what string, uids ...types.UID) {
	t.Helper()
	Eventually(t, 60*time.Second, what+" in kcmd's GC graph", func() (bool, string) {
		for _, u := range uids {
			present, virtual, err := gciGraphVertex(p, u)
			switch {
			case err != nil:
				return false, err.Error()
			case !present:
				return false, string(u) + " not yet"
			case virtual:
				return false, string(u) + " only virtual (referenced, not observed)"
			}
		}
		return true, ""
	})
}

// gciWaitLeavesGraph waits until uid has no node in kcmd's GC graph, observed or virtual.
func gciWaitLeavesGraph(t *testing.T, p *kcmdProc, timeout time.Duration, what string, uid types.UID) {
	t.Helper()
	Eventually(t, timeout, what+" gone from kcmd's GC graph", func() (bool, string) {
		present, virtual, err := gciGraphVertex(p, uid)
		if err != nil {
			return false, err.Error()
		}
		return !present, fmt.Sprintf("still there (virtual: %v)", virtual)
	})
}

// gciNamespace makes a namespace named after the test plus a suffix (upstream's fixed names
// "a", "b", … would collide between tests sharing one cluster).
func gciNamespace(t *testing.T, suffix string) string {
	t.Helper()
	// the prefix dumpKcmdLogs looks for: the test name, lower case, [^a-z0-9] -> '-', 40 chars
	var b strings.Builder
	for _, r := range strings.ToLower(t.Name()) {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') {
			b.WriteRune(r)
		} else {
			b.WriteByte('-')
		}
	}
	name := b.String()
	if len(name) > 40 {
		name = name[:40]
	}
	name = fmt.Sprintf("%s-%s-%d", strings.TrimRight(name, "-"), suffix, time.Now().UnixNano()%100000)
	if _, err := env.Client.CoreV1().Namespaces().Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating namespace %s: %v", name, err)
	}
	t.Cleanup(func() { deleteTestNamespace(name) })
	return name
}

// gciRC is upstream's newOwnerRC with 0 replicas: upstream's test server runs no RC
// controller, but other tests of this binary run upstream kube-controller-manager's (with the
// GC off), which would add a pod to an RC of the default 1 replica.
func gciRC(ns, name string) *corev1.ReplicationController {
	return &corev1.ReplicationController{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: corev1.ReplicationControllerSpec{
			Replicas: ptr.To(int32(0)),
			Selector: map[string]string{"name": "test"},
			Template: &corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"name": "test"}},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "fake-name", Image: "fakeimage"}}},
			},
		},
	}
}

func gciCreateRC(t *testing.T, rc *corev1.ReplicationController) *corev1.ReplicationController {
	t.Helper()
	out, err := env.Client.CoreV1().ReplicationControllers(rc.Namespace).Create(context.Background(), rc, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating RC %s/%s: %v", rc.Namespace, rc.Name, err)
	}
	return out
}

// gciPod is upstream's newPod: references without a kind name a ReplicationController, and
// every reference gets apiVersion v1.
func gciPod(ns, name string, refs ...metav1.OwnerReference) *corev1.Pod {
	for i := range refs {
		if refs[i].Kind == "" {
			refs[i].Kind = "ReplicationController"
		}
		refs[i].APIVersion = "v1"
	}
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, OwnerReferences: refs},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "fake-name", Image: "fakeimage"}}},
	}
}

// gciRef is a reference to rc (kind and apiVersion are filled by gciPod).
func gciRef(rc *corev1.ReplicationController) metav1.OwnerReference {
	return metav1.OwnerReference{UID: rc.UID, Name: rc.Name}
}

// gciGone polls get until it returns NotFound.
func gciGone(t *testing.T, timeout time.Duration, what string, get func() error) {
	t.Helper()
	Eventually(t, timeout, what+" deleted", func() (bool, string) {
		err := get()
		if apierrors.IsNotFound(err) {
			return true, ""
		}
		if err != nil {
			return false, err.Error()
		}
		return false, "still exists"
	})
}

func gciPodGetter(ns, name string) func() error {
	return func() error {
		_, err := env.Client.CoreV1().Pods(ns).Get(context.Background(), name, metav1.GetOptions{})
		return err
	}
}

func gciRCGetter(ns, name string) func() error {
	return func() error {
		_, err := env.Client.CoreV1().ReplicationControllers(ns).Get(context.Background(), name, metav1.GetOptions{})
		return err
	}
}

func gciCMGetter(ns, name string) func() error {
	return func() error {
		_, err := env.Client.CoreV1().ConfigMaps(ns).Get(context.Background(), name, metav1.GetOptions{})
		return err
	}
}

func gciDelete(t *testing.T, what string, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("deleting %s: %v", what, err)
	}
}

func gciForeground() metav1.DeleteOptions {
	p := metav1.DeletePropagationForeground
	return metav1.DeleteOptions{PropagationPolicy: &p}
}

func gciOrphanDependents(orphan bool) metav1.DeleteOptions {
	return metav1.DeleteOptions{OrphanDependents: &orphan}
}

// gciCRD is a CustomResourceDefinition made by a test, with a dynamic client for its objects.
type gciCRD struct {
	name, group, plural, kind, version string
	obj                                map[string]any // as sent on create (for re-creating it)
	gvr                                schema.GroupVersionResource
	dyn                                dynamic.Interface
}

var gciCRDGVR = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

func gciDynamic(t *testing.T) dynamic.Interface {
	t.Helper()
	d, err := dynamic.NewForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// gciNewCRD creates a CRD with a random group (as apiextensions' NewRandomNameV1CustomResourceDefinition:
// one version v1beta1, everything allowed) and waits until its objects can be created; it is
// deleted when t ends.
func gciNewCRD(t *testing.T, scope string) *gciCRD {
	t.Helper()
	n := time.Now().UnixNano() % 10000000
	c := &gciCRD{group: fmt.Sprintf("g%d.gci.kcmd.test", n), plural: fmt.Sprintf("foo%ds", n),
		kind: fmt.Sprintf("Foo%d", n), version: "v1beta1", dyn: gciDynamic(t)}
	c.name = c.plural + "." + c.group
	c.gvr = schema.GroupVersionResource{Group: c.group, Version: c.version, Resource: c.plural}
	c.obj = map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
		"metadata": map[string]any{"name": c.name},
		"spec": map[string]any{
			"group": c.group, "scope": scope,
			"names": map[string]any{"plural": c.plural, "singular": strings.ToLower(c.kind), "kind": c.kind,
				"listKind": c.kind + "List"},
			"versions": []any{map[string]any{"name": c.version, "served": true, "storage": true,
				"schema": gciAllowAll()}},
		},
	}
	c.create(t)
	t.Cleanup(func() { c.delete(nil) })
	return c
}

func gciAllowAll() map[string]any {
	return map[string]any{"openAPIV3Schema": map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true}}
}

func (c *gciCRD) create(t *testing.T) {
	t.Helper()
	obj := &unstructured.Unstructured{Object: runtimeDeepCopy(c.obj)}
	if _, err := c.dyn.Resource(gciCRDGVR).Create(context.Background(), obj, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating CRD %s: %v", c.name, err)
	}
	// Established, and the resource is served (a list works).
	Eventually(t, 60*time.Second, "CRD "+c.name+" served", func() (bool, string) {
		_, err := c.dyn.Resource(c.gvr).List(context.Background(), metav1.ListOptions{})
		if err != nil {
			return false, err.Error()
		}
		return true, ""
	})
}

// delete deletes the CRD; with t it waits until the CRD is gone.
func (c *gciCRD) delete(t *testing.T) {
	err := c.dyn.Resource(gciCRDGVR).Delete(context.Background(), c.name, metav1.DeleteOptions{})
	if t == nil {
		return
	}
	t.Helper()
	if err != nil && !apierrors.IsNotFound(err) {
		t.Fatalf("deleting CRD %s: %v", c.name, err)
	}
	gciGone(t, 60*time.Second, "CRD "+c.name, func() error {
		_, err := c.dyn.Resource(gciCRDGVR).Get(context.Background(), c.name, metav1.GetOptions{})
		return err
	})
}

func runtimeDeepCopy(m map[string]any) map[string]any {
	return (&unstructured.Unstructured{Object: m}).DeepCopy().Object
}

// res is the resource as kcmctl names it: plural.group.
func (c *gciCRD) res() string { return c.plural + "." + c.group }

func (c *gciCRD) client(ns string) dynamic.ResourceInterface {
	if ns == "" {
		return c.dyn.Resource(c.gvr)
	}
	return c.dyn.Resource(c.gvr).Namespace(ns)
}

// newObj creates an object of the CRD, with the given owner references.
func (c *gciCRD) newObj(t *testing.T, ns, name string, refs ...metav1.OwnerReference) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	u.SetAPIVersion(c.group + "/" + c.version)
	u.SetKind(c.kind)
	u.SetName(name)
	u.SetNamespace(ns)
	u.SetOwnerReferences(refs)
	out, err := c.client(ns).Create(context.Background(), u, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating %s %s/%s: %v", c.kind, ns, name, err)
	}
	return out
}

func (c *gciCRD) getter(ns, name string) func() error {
	return func() error {
		_, err := c.client(ns).Get(context.Background(), name, metav1.GetOptions{})
		return err
	}
}

// gciRefTo is upstream's link(): a plain reference to owner (no controller, no blocking).
func gciRefTo(apiVersion, kind, name string, uid types.UID) metav1.OwnerReference {
	return metav1.OwnerReference{APIVersion: apiVersion, Kind: kind, Name: name, UID: uid}
}

// gciHold is a finalizer nobody handles: it keeps a deleted object until the test removes it.
const gciHold = "x/y"

// gciObj is one object of gciCheckBlockedCascade: what to call it, how to read it (NotFound once
// gone) and, for a held dependent, how to remove gciHold.
type gciObj struct {
	what    string
	get     func() (metav1.Object, error)
	release func() error
}

// gciCheckBlockedCascade deletes owner (del: a Foreground delete) whose dependent dep refers to
// it with blockOwnerDeletion=true and is held by gciHold, and checks the order the GC promises
// for a blocking reference: the GC deletes dep (it gets a deletionTimestamp) while owner stays,
// with foregroundDeletion, for as long as dep exists; once gciHold is removed, both go, dep
// first (whenever owner is seen gone, a later GET of dep is NotFound).
func gciCheckBlockedCascade(t *testing.T, owner, dep gciObj, del func() error) {
	t.Helper()
	// ownerWaits fails t unless owner exists, is being deleted and keeps foregroundDeletion.
	ownerWaits := func(when string) {
		t.Helper()
		o, err := owner.get()
		if err != nil {
			t.Fatalf("%s: %s while %s exists: %v", when, owner.what, dep.what, err)
		}
		if o.GetDeletionTimestamp() == nil || !gciHas(o.GetFinalizers(), metav1.FinalizerDeleteDependents) {
			t.Fatalf("%s: %s is not waiting for %s: deletionTimestamp %v, finalizers %v", when, owner.what,
				dep.what, o.GetDeletionTimestamp(), o.GetFinalizers())
		}
	}
	gciDelete(t, owner.what, del())
	// 60 s: the GC may first have to discover a new custom resource (its 30 s period)
	Eventually(t, 60*time.Second, "the GC deleting "+dep.what, func() (bool, string) {
		d, err := dep.get()
		if err != nil {
			t.Fatalf("%s: %v (it is held by %s)", dep.what, err, gciHold)
		}
		ownerWaits("before " + dep.what + " is deleted")
		return d.GetDeletionTimestamp() != nil, "no deletionTimestamp"
	})
	gceConsistently(t, 5*time.Second, owner.what+" waiting for "+dep.what, func() (bool, string) {
		if _, err := dep.get(); err != nil {
			return false, fmt.Sprintf("%s: %v", dep.what, err)
		}
		ownerWaits("while " + dep.what + " is held")
		return true, ""
	})
	if err := dep.release(); err != nil {
		t.Fatalf("removing %s from %s: %v", gciHold, dep.what, err)
	}
	Eventually(t, 60*time.Second, owner.what+" deleted after "+dep.what, func() (bool, string) {
		_, err := owner.get()
		if err == nil {
			return false, "still exists"
		}
		if !apierrors.IsNotFound(err) {
			return false, err.Error()
		}
		if _, err := dep.get(); !apierrors.IsNotFound(err) {
			t.Fatalf("%s is gone but %s is not (%v): the blocking reference did not hold it", owner.what, dep.what, err)
		}
		return true, ""
	})
}

// gciReleasePatch removes every finalizer (a JSON merge patch: custom resources take it too).
var gciReleasePatch = []byte(`{"metadata":{"finalizers":null}}`)

// newHeldObj is newObj with the finalizer gciHold, removed (if still there) when t ends.
func (c *gciCRD) newHeldObj(t *testing.T, ns, name string, refs ...metav1.OwnerReference) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	u.SetAPIVersion(c.group + "/" + c.version)
	u.SetKind(c.kind)
	u.SetName(name)
	u.SetNamespace(ns)
	u.SetOwnerReferences(refs)
	u.SetFinalizers([]string{gciHold})
	release := c.releaser(ns, name)
	t.Cleanup(func() { _ = release() })
	out, err := c.client(ns).Create(context.Background(), u, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating %s %s/%s: %v", c.kind, ns, name, err)
	}
	return out
}

func (c *gciCRD) metaGetter(ns, name string) func() (metav1.Object, error) {
	return func() (metav1.Object, error) {
		u, err := c.client(ns).Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			return nil, err
		}
		return u, nil
	}
}

func (c *gciCRD) releaser(ns, name string) func() error {
	return func() error {
		_, err := c.client(ns).Patch(context.Background(), name, types.MergePatchType, gciReleasePatch, metav1.PatchOptions{})
		return err
	}
}

func gciCMMetaGetter(ns, name string) func() (metav1.Object, error) {
	return func() (metav1.Object, error) {
		cm, err := env.Client.CoreV1().ConfigMaps(ns).Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			return nil, err
		}
		return cm, nil
	}
}

func gciCMReleaser(ns, name string) func() error {
	return func() error {
		_, err := env.Client.CoreV1().ConfigMaps(ns).Patch(context.Background(), name, types.MergePatchType, gciReleasePatch,
			metav1.PatchOptions{})
		return err
	}
}

// gciReleaseCMOnCleanup removes the finalizers of ConfigMap ns/name (if it still exists) when t ends.
func gciReleaseCMOnCleanup(t *testing.T, ns, name string) {
	release := gciCMReleaser(ns, name)
	t.Cleanup(func() { _ = release() })
}
