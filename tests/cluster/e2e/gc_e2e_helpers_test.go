// SPDX-License-Identifier: Apache-2.0

package e2e

// Helpers of gc_e2e_test.go (the ports of upstream's test/e2e/apimachinery/garbage_collector.go).
// The whole file shares the one kcmd running only the garbage collector that the ported
// integration scenarios share too (gciSharedGC: one garbage collector per test phase, so no
// second one can cover for a miss of the first), and one upstream
// kube-controller-manager running the controllers of the owner kinds kcmd does not have
// (Deployment, ReplicationController, CronJob, Job) with its garbage collector and ReplicaSet
// controller off; ReplicaSets are reconciled by the shared ReplicaSet kcmd (useSharedRS). Every
// test runs in parallel in its own namespace. All identifiers carry the prefix gce.

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
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

// gceKCMControllers are upstream kube-controller-manager's controllers for the owner kinds of
// these scenarios (names as in v1.37 cmd/kube-controller-manager/names). Listing them explicitly
// leaves everything else off, the garbage collector and the ReplicaSet controller included.
// ReplicationControllers are kcmd's own (the shared RC kcmd, useSharedRC): a second RC
// controller in the cluster would fight the TestReplicationController_ scenarios running in
// parallel over their RCs.
const gceKCMControllers = "deployment-controller,cronjob-controller,job-controller"

var (
	gceOnce sync.Once
	gceGC   *kcmdProc // kcmd with only garbage-collector-controller
	gceKCM  *kcmdProc // upstream kube-controller-manager (log captured like kcmd's)
	gceErr  error
)

// gceStart marks t parallel, makes sure the shared kcmd GC, the shared ReplicaSet kcmd and the
// upstream kube-controller-manager run, and returns a fresh namespace for t. On failure the log
// lines of both managers that name t's namespace are written to t's log.
func gceStart(t *testing.T) string {
	t.Helper()
	t.Parallel()
	gceOnce.Do(func() {
		kcm, err := gceLaunchKCM()
		if err != nil {
			gceErr = err
			return
		}
		gceKCM = kcm
		sharedMu.Lock()
		sharedProcs = append(sharedProcs, kcm)
		sharedMu.Unlock()
	})
	if gceErr != nil {
		t.Fatalf("starting upstream kube-controller-manager: %v", gceErr)
	}
	gceGC = gciSharedGC(t) // dumps its log lines of t's namespace if t fails
	if gceGC == nil || gceKCM == nil {
		t.Fatal("the shared garbage collector kcmd did not start (see the first TestGC_ test's log)")
	}
	for _, p := range []*kcmdProc{gceGC, gceKCM} {
		select {
		case <-p.done:
			t.Fatalf("shared process %s exited: %v; last lines:\n%s", p.cmd.Path, p.err, gceTail(p, 30))
		default:
		}
	}
	useSharedRS(t)
	useSharedRC(t)
	ns := rsNamespace(t)
	from := len(gceGC.Logs())
	t.Cleanup(func() {
		if t.Failed() {
			gceDumpNamed(t, "kube-controller-manager", gceKCM, ns)
		} else if os.Getenv("KCMD_GCE_LOGS") != "" {
			// debugging aid: every line the GC logged while t ran (run one test at a time)
			l := gceGC.Logs()[from:]
			if len(l) > 1000 {
				l = l[len(l)-1000:]
			}
			for _, x := range l {
				t.Logf("kcmd-gc: %s", x)
			}
		}
	})
	return ns
}

// gceLaunchKCM runs upstream kube-controller-manager (from the cluster's binary directory) with
// gceKCMControllers. It is a process of its own rather than the harness's single kcm slot, so
// that tests which start and stop the harness's kcm (the resourcequota ones) can run alongside.
func gceLaunchKCM() (*kcmdProc, error) {
	return launchUpstreamKCM("--kubeconfig="+env.Cluster.Kubeconfig, "--leader-elect=false", "--use-service-account-credentials=false",
		"--controllers="+gceKCMControllers, "--secure-port=0", "--kube-api-qps=100", "--kube-api-burst=200", "--v=2")
}

// launchUpstreamKCM runs the cluster's kube-controller-manager binary with args, its log lines
// collected as a kcmdProc's (it dies with the test binary).
func launchUpstreamKCM(args ...string) (*kcmdProc, error) {
	dir := os.Getenv("KCMD_CLUSTER_BIN")
	if dir == "" {
		return nil, fmt.Errorf("KCMD_CLUSTER_BIN is not set (run through make e2e)")
	}
	cmd := exec.Command(filepath.Join(dir, "kube-controller-manager"), args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	cmd.Stdout = nil
	p := &kcmdProc{cmd: cmd, done: make(chan struct{})}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	go func() {
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 64*1024), 1024*1024)
		for sc.Scan() {
			p.mu.Lock()
			p.logs = append(p.logs, sc.Text())
			p.mu.Unlock()
		}
		p.err = cmd.Wait()
		close(p.done)
	}()
	select {
	case <-p.done:
		return nil, fmt.Errorf("kube-controller-manager exited at start (%v):\n%s", p.err, gceTail(p, 30))
	case <-time.After(500 * time.Millisecond):
	}
	return p, nil
}

func gceTail(p *kcmdProc, n int) string {
	l := p.Logs()
	if len(l) > n {
		l = l[len(l)-n:]
	}
	return strings.Join(l, "\n")
}

// gceDumpNamed writes p's log lines that mention ns (at most 200) to t's log.
func gceDumpNamed(t *testing.T, what string, p *kcmdProc, ns string) {
	if p == nil {
		return
	}
	var mine []string
	for _, l := range p.Logs() {
		if strings.Contains(l, ns) {
			mine = append(mine, l)
		}
	}
	if len(mine) > 200 {
		mine = mine[len(mine)-200:]
	}
	t.Logf("%s log lines naming %s (%d):", what, ns, len(mine))
	for _, l := range mine {
		t.Logf("%s: %s", what, l)
	}
}

// gcePodTemplate is upstream's getPodTemplateSpec: the given labels, grace period 0, one
// container whose image never needs to run (no kubelet runs here: pods stay Pending).
func gcePodTemplate(labels map[string]string) corev1.PodTemplateSpec {
	return corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: labels},
		Spec: corev1.PodSpec{
			TerminationGracePeriodSeconds: ptr.To[int64](0),
			Containers:                    []corev1.Container{{Name: "nginx", Image: "registry.invalid/nginx:1"}},
		},
	}
}

// gceLabelSeq makes upstream's getUniqLabel labels unique across the file's tests.
var gceLabelSeq struct {
	sync.Mutex
	n int
}

func gceUniqLabel(key, value string) map[string]string {
	gceLabelSeq.Lock()
	gceLabelSeq.n++
	n := gceLabelSeq.n
	gceLabelSeq.Unlock()
	return map[string]string{fmt.Sprintf("%s-%05d", key, n): fmt.Sprintf("%s-%05d", value, n)}
}

// gceCreateRC creates upstream's newOwnerRC.
func gceCreateRC(t *testing.T, ns, name string, replicas int32, labels map[string]string) *corev1.ReplicationController {
	t.Helper()
	tmpl := gcePodTemplate(labels)
	rc := &corev1.ReplicationController{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec:       corev1.ReplicationControllerSpec{Replicas: ptr.To(replicas), Selector: labels, Template: &tmpl},
	}
	out, err := env.Client.CoreV1().ReplicationControllers(ns).Create(context.Background(), rc, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating ReplicationController %s/%s: %v", ns, name, err)
	}
	return out
}

// gceWaitRCReplicas is upstream's waitForReplicas: status.replicas reaches spec.replicas.
func gceWaitRCReplicas(t *testing.T, rc *corev1.ReplicationController) {
	t.Helper()
	Eventually(t, 2*time.Minute, fmt.Sprintf("ReplicationController %s status.replicas = %d", rc.Name, *rc.Spec.Replicas), func() (bool, string) {
		cur, err := env.Client.CoreV1().ReplicationControllers(rc.Namespace).Get(context.Background(), rc.Name, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		return cur.Status.Replicas == *rc.Spec.Replicas, fmt.Sprintf("status.replicas %d", cur.Status.Replicas)
	})
}

// gcePolicy returns delete options with the propagation policy (nil = none) and, as upstream
// does, a uid precondition.
func gcePolicy(p *metav1.DeletionPropagation, uid types.UID) metav1.DeleteOptions {
	o := metav1.DeleteOptions{PropagationPolicy: p}
	if uid != "" {
		o.Preconditions = metav1.NewUIDPreconditions(string(uid))
	}
	return o
}

var (
	gceForeground = ptr.To(metav1.DeletePropagationForeground)
	gceBackground = ptr.To(metav1.DeletePropagationBackground)
	gceOrphan     = ptr.To(metav1.DeletePropagationOrphan)
)

// gceCounts returns how many objects of each kind exist in ns (upstream's verifyRemainingObjects
// kinds: Pods, ReplicationControllers, Deployments, ReplicaSets, CronJobs, Jobs).
func gceCounts(t *testing.T, ns string, kinds ...string) (map[string]int, error) {
	t.Helper()
	ctx := context.Background()
	c := env.Client
	out := map[string]int{}
	for _, k := range kinds {
		var n int
		var err error
		switch k {
		case "Pods":
			var l *corev1.PodList
			if l, err = c.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{}); err == nil {
				n = len(l.Items)
			}
		case "ReplicationControllers":
			var l *corev1.ReplicationControllerList
			if l, err = c.CoreV1().ReplicationControllers(ns).List(ctx, metav1.ListOptions{}); err == nil {
				n = len(l.Items)
			}
		case "Deployments":
			l, e := c.AppsV1().Deployments(ns).List(ctx, metav1.ListOptions{})
			if err = e; err == nil {
				n = len(l.Items)
			}
		case "ReplicaSets":
			l, e := c.AppsV1().ReplicaSets(ns).List(ctx, metav1.ListOptions{})
			if err = e; err == nil {
				n = len(l.Items)
			}
		case "CronJobs":
			l, e := c.BatchV1().CronJobs(ns).List(ctx, metav1.ListOptions{})
			if err = e; err == nil {
				n = len(l.Items)
			}
		case "Jobs":
			l, e := c.BatchV1().Jobs(ns).List(ctx, metav1.ListOptions{})
			if err = e; err == nil {
				n = len(l.Items)
			}
		default:
			t.Fatalf("gceCounts: unknown kind %s", k)
		}
		if err != nil {
			return nil, fmt.Errorf("listing %s: %w", k, err)
		}
		out[k] = n
	}
	return out, nil
}

// gceWaitCounts waits until ns holds exactly want objects of each kind.
func gceWaitCounts(t *testing.T, timeout time.Duration, ns string, want map[string]int) {
	t.Helper()
	var kinds []string
	for k := range want {
		kinds = append(kinds, k)
	}
	start := time.Now()
	Eventually(t, timeout, fmt.Sprintf("remaining objects %v", want), func() (bool, string) {
		got, err := gceCounts(t, ns, kinds...)
		if err != nil {
			return false, err.Error()
		}
		for k, n := range want {
			if got[k] != n {
				return false, fmt.Sprintf("have %v", got)
			}
		}
		return true, ""
	})
	t.Logf("remaining objects %v after %.2f s", want, time.Since(start).Seconds())
}

// gceConsistently checks cond every 500 ms for d; the first false fails t. It stands in for
// upstream's "sleep 30 s (+ 1 min) and check": the GC acts within a second here, so a few seconds
// of stability show it did not act.
func gceConsistently(t *testing.T, d time.Duration, what string, cond func() (bool, string)) {
	t.Helper()
	end := time.Now().Add(d)
	for {
		if ok, msg := cond(); !ok {
			t.Fatalf("%s no longer holds: %s", what, msg)
		}
		if time.Now().After(end) {
			return
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// gceStable is how long "the GC must not act" is observed.
const gceStable = 8 * time.Second

// gcePodNames lists the pods of ns, failing t on error.
func gcePods(t *testing.T, ns string) []corev1.Pod {
	t.Helper()
	l, err := env.Client.CoreV1().Pods(ns).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatalf("listing pods of %s: %v", ns, err)
	}
	return l.Items
}

// gceCRD is a cluster-scoped CustomResourceDefinition with a random group made for one test
// (upstream's NewRandomNameV1CustomResourceDefinition(ClusterScoped)), deleted when t ends.
type gceCRD struct {
	Group, Plural, Kind, Version string
	Client                       dynamic.ResourceInterface
}

func (c *gceCRD) APIVersion() string { return c.Group + "/" + c.Version }

func gceCreateClusterCRD(t *testing.T) *gceCRD {
	t.Helper()
	ctx := context.Background()
	n := time.Now().UnixNano() % 1000000
	c := &gceCRD{Group: fmt.Sprintf("gce%d.kcmd.test", n), Plural: fmt.Sprintf("foos%d", n), Kind: fmt.Sprintf("Foo%d", n), Version: "v1beta1"}
	body := fmt.Sprintf(`{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition",
"metadata":{"name":"%s.%s"},"spec":{"group":"%s","scope":"Cluster",
"names":{"plural":"%s","singular":"foo%d","kind":"%s","listKind":"%sList"},
"versions":[{"name":"%s","served":true,"storage":true,
"schema":{"openAPIV3Schema":{"type":"object","x-kubernetes-preserve-unknown-fields":true}}}]}}`,
		c.Plural, c.Group, c.Group, c.Plural, n, c.Kind, c.Kind, c.Version)
	rest := env.Client.CoreV1().RESTClient()
	path := "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
	if err := rest.Post().AbsPath(path).Body([]byte(body)).Do(ctx).Error(); err != nil {
		t.Fatalf("creating the CRD %s.%s: %v", c.Plural, c.Group, err)
	}
	t.Cleanup(func() {
		err := rest.Delete().AbsPath(path + "/" + c.Plural + "." + c.Group).Do(context.Background()).Error()
		if err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("deleting the CRD: %v", err)
		}
	})
	dyn, err := dynamic.NewForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	c.Client = dyn.Resource(schema.GroupVersionResource{Group: c.Group, Version: c.Version, Resource: c.Plural})
	// Established: a list answers (upstream's CreateNewV1CustomResourceDefinition waits likewise).
	Eventually(t, 60*time.Second, "the CRD served", func() (bool, string) {
		_, err := c.Client.List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err.Error()
		}
		return true, ""
	})
	return c
}

// gceCreateCR creates a custom resource named name, with owner references refs.
func gceCreateCR(t *testing.T, c *gceCRD, name string, refs ...metav1.OwnerReference) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": c.APIVersion(), "kind": c.Kind,
		"metadata": map[string]any{"name": name}}}
	if len(refs) > 0 {
		u.SetOwnerReferences(refs)
	}
	out, err := c.Client.Create(context.Background(), u, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating %s %s: %v", c.Kind, name, err)
	}
	return out
}

// gceCRGone reports whether the custom resource name is gone (NotFound).
func gceCRGone(t *testing.T, c *gceCRD, name string) (bool, *unstructured.Unstructured) {
	t.Helper()
	u, err := c.Client.Get(context.Background(), name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return true, nil
	}
	if err != nil {
		t.Fatalf("getting %s %s: %v", c.Kind, name, err)
	}
	return false, u
}
