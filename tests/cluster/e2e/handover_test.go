package e2e

// Issue 16: kcm and kcmd hand over to each other without a restart of anything they manage.
// Upstream kube-controller-manager (the real v1.37.2 binary) runs the deployment, replicaset,
// statefulset, daemonset and job controllers over a namespace of Deployments (one settled, one
// with three revisions, one stuck mid-rollout), StatefulSets (volumeClaimTemplates, a rolled
// ControllerRevision history), a DaemonSet over three Nodes made through the API and Jobs
// (NonIndexed and Indexed, some pods Succeeded, one Job complete). There is no kubelet: the
// test plays it (every pod Running and Ready, except the pods of the stuck rollout's new
// template). Once all is settled, kcm stops and kcmd starts with the same controllers; after
// its workers are up, its queues empty and a settle period, not one object of the namespace may
// have changed: every pod, ReplicaSet, ControllerRevision, PVC and workload keeps its uid and
// resourceVersion. The apiserver bumps a resourceVersion on every effective write (a write
// that changes nothing is not persisted), so equal resourceVersions mean that no field of any
// status, label (pod-template-hash, controller-revision-hash), annotation (revision) or spec
// was changed, and nothing is excluded from the comparison. Then kcmd stops and kcm starts
// again: the same check the other way. A last subtest changes one template under kcm and
// shows the comparison reports the new ReplicaSet (the check can fire).

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"

	"kcmd.local/tests/cluster/harness"
)

const hoControllers = "deployment-controller,replicaset-controller,statefulset-controller,daemonset-controller,job-controller"

// hoHold marks the pods the test's kubelet leaves Pending (the stuck rollout's new template).
const hoHold = "ho-hold"

// hoObj is one object of a snapshot: its identity, its resourceVersion and its whole content.
type hoObj struct {
	uid, rv string
	obj     map[string]any
}

// hoSnap maps "Kind/name" to the object.
type hoSnap map[string]hoObj

func hoAdd[T any](s hoSnap, kind string, items []T) error {
	for i := range items {
		m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&items[i])
		if err != nil {
			return err
		}
		md, _ := m["metadata"].(map[string]any)
		name, _ := md["name"].(string)
		uid, _ := md["uid"].(string)
		rv, _ := md["resourceVersion"].(string)
		s[kind+"/"+name] = hoObj{uid: uid, rv: rv, obj: m}
	}
	return nil
}

// hoSnapshot lists every kind the five controllers write (and the Nodes the DaemonSet uses).
func hoSnapshot(t *testing.T, ns, nodeSel string) hoSnap {
	t.Helper()
	ctx := context.Background()
	c := env.Client
	s := hoSnap{}
	lo := metav1.ListOptions{}
	must := func(err error) {
		if err != nil {
			t.Fatalf("snapshot: %v", err)
		}
	}
	pods, err := c.CoreV1().Pods(ns).List(ctx, lo)
	must(err)
	must(hoAdd(s, "Pod", pods.Items))
	rss, err := c.AppsV1().ReplicaSets(ns).List(ctx, lo)
	must(err)
	must(hoAdd(s, "ReplicaSet", rss.Items))
	crs, err := c.AppsV1().ControllerRevisions(ns).List(ctx, lo)
	must(err)
	must(hoAdd(s, "ControllerRevision", crs.Items))
	pvcs, err := c.CoreV1().PersistentVolumeClaims(ns).List(ctx, lo)
	must(err)
	must(hoAdd(s, "PersistentVolumeClaim", pvcs.Items))
	ds, err := c.AppsV1().Deployments(ns).List(ctx, lo)
	must(err)
	must(hoAdd(s, "Deployment", ds.Items))
	sts, err := c.AppsV1().StatefulSets(ns).List(ctx, lo)
	must(err)
	must(hoAdd(s, "StatefulSet", sts.Items))
	dss, err := c.AppsV1().DaemonSets(ns).List(ctx, lo)
	must(err)
	must(hoAdd(s, "DaemonSet", dss.Items))
	jobs, err := c.BatchV1().Jobs(ns).List(ctx, lo)
	must(err)
	must(hoAdd(s, "Job", jobs.Items))
	nodes, err := c.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: nodeSel})
	must(err)
	must(hoAdd(s, "Node", nodes.Items))
	return s
}

// hoFlatten writes every leaf of v under its path (a.b[0].c) into out.
func hoFlatten(prefix string, v any, out map[string]string) {
	switch x := v.(type) {
	case map[string]any:
		if len(x) == 0 {
			out[prefix] = "{}"
		}
		for k, e := range x {
			p := k
			if prefix != "" {
				p = prefix + "." + k
			}
			hoFlatten(p, e, out)
		}
	case []any:
		if len(x) == 0 {
			out[prefix] = "[]"
		}
		for i, e := range x {
			hoFlatten(fmt.Sprintf("%s[%d]", prefix, i), e, out)
		}
	default:
		b, _ := json.Marshal(x)
		out[prefix] = string(b)
	}
}

// hoFieldDiff lists the fields that differ between two versions of an object, both values.
func hoFieldDiff(a, b map[string]any) []string {
	fa, fb := map[string]string{}, map[string]string{}
	hoFlatten("", a, fa)
	hoFlatten("", b, fb)
	var out []string
	for k, va := range fa {
		if vb, ok := fb[k]; !ok {
			out = append(out, fmt.Sprintf("%s: %s -> (absent)", k, va))
		} else if va != vb {
			out = append(out, fmt.Sprintf("%s: %s -> %s", k, va, vb))
		}
	}
	for k, vb := range fb {
		if _, ok := fa[k]; !ok {
			out = append(out, fmt.Sprintf("%s: (absent) -> %s", k, vb))
		}
	}
	sort.Strings(out)
	return out
}

func hoHashLabel(o map[string]any) string {
	md, _ := o["metadata"].(map[string]any)
	l, _ := md["labels"].(map[string]any)
	for _, k := range []string{"pod-template-hash", "controller-revision-hash"} {
		if v, ok := l[k].(string); ok {
			return " " + k + "=" + v
		}
	}
	return ""
}

// hoCompare reports every object created, deleted, replaced (new uid) or written (new
// resourceVersion, with the fields that changed) between two snapshots; nil when none.
func hoCompare(before, after hoSnap) []string {
	var out []string
	for k, b := range before {
		a, ok := after[k]
		switch {
		case !ok:
			out = append(out, fmt.Sprintf("deleted %s (uid %s)", k, b.uid))
		case a.uid != b.uid:
			out = append(out, fmt.Sprintf("replaced %s: uid %s -> %s", k, b.uid, a.uid))
		case a.rv != b.rv || !reflect.DeepEqual(a.obj, b.obj):
			out = append(out, fmt.Sprintf("changed %s (resourceVersion %s -> %s): %s", k, b.rv, a.rv,
				strings.Join(hoFieldDiff(b.obj, a.obj), "; ")))
		}
	}
	for k, a := range after {
		if _, ok := before[k]; !ok {
			out = append(out, fmt.Sprintf("created %s (uid %s%s)", k, a.uid, hoHashLabel(a.obj)))
		}
	}
	sort.Strings(out)
	return out
}

// hoKubelet plays the kubelet for the namespace until the test ends: every new Pending pod
// becomes Running and Ready (pods labelled ho-hold stay Pending).
func hoKubelet(t *testing.T, ns string) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	w, err := env.Client.CoreV1().Pods(ns).Watch(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	t.Cleanup(func() { cancel(); w.Stop(); <-done })
	go func() {
		defer close(done)
		for ev := range w.ResultChan() {
			p, ok := ev.Object.(*corev1.Pod)
			if !ok || (ev.Type != watch.Added && ev.Type != watch.Modified) || p.DeletionTimestamp != nil ||
				(p.Status.Phase != "" && p.Status.Phase != corev1.PodPending) || p.Labels[hoHold] != "" {
				continue
			}
			now := metav1.Now()
			p.Status.Phase = corev1.PodRunning
			p.Status.StartTime = &now
			p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: now}}
			_, _ = env.Client.CoreV1().Pods(ns).UpdateStatus(ctx, p, metav1.UpdateOptions{})
		}
	}()
}

func hoSetPodPhase(t *testing.T, p *corev1.Pod, phase corev1.PodPhase) {
	t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cur, err := env.Client.CoreV1().Pods(p.Namespace).Get(context.Background(), p.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		now := metav1.Now()
		cur.Status.Phase = phase
		cur.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionFalse, LastTransitionTime: now}}
		_, err = env.Client.CoreV1().Pods(p.Namespace).UpdateStatus(context.Background(), cur, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		t.Fatalf("pod %s phase %s: %v", p.Name, phase, err)
	}
}

func hoDeployment(ns, name string, replicas int32) *appsv1.Deployment {
	d := dpNew(ns, name, replicas)
	d.Spec.ProgressDeadlineSeconds = ptr.To[int32](3600) // no deadline passes during the test
	return d
}

func hoJob(ns, name string, completions, parallelism int32, indexed bool) *batchv1.Job {
	j := hjJob(ns, name)
	j.Spec.Completions = ptr.To(completions)
	j.Spec.Parallelism = ptr.To(parallelism)
	if indexed {
		j.Spec.CompletionMode = ptr.To(batchv1.IndexedCompletion)
	}
	return j
}

// hoSettled checks the workloads reached the shapes the test built.
func hoSettled(t *testing.T, ns string) (bool, string) {
	ctx := context.Background()
	c := env.Client
	deps, err := c.AppsV1().Deployments(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return false, err.Error()
	}
	for _, d := range deps.Items {
		st, want := d.Status, *d.Spec.Replicas
		if st.ObservedGeneration != d.Generation {
			return false, "deployment " + d.Name + " not observed"
		}
		if d.Spec.Template.Labels[hoHold] != "" { // stuck: 3 old available, 1 new not ready
			if st.Replicas != want+1 || st.UpdatedReplicas != 1 || st.AvailableReplicas != want || st.UnavailableReplicas != 1 {
				return false, fmt.Sprintf("deployment stuck: %+v", st)
			}
			continue
		}
		if st.Replicas != want || st.UpdatedReplicas != want || st.ReadyReplicas != want || st.AvailableReplicas != want {
			return false, fmt.Sprintf("deployment %s: %+v", d.Name, st)
		}
	}
	stss, err := c.AppsV1().StatefulSets(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return false, err.Error()
	}
	for _, s := range stss.Items {
		st, want := s.Status, *s.Spec.Replicas
		if st.ObservedGeneration != s.Generation || st.ReadyReplicas != want || st.AvailableReplicas != want ||
			st.UpdatedReplicas != want || st.CurrentRevision != st.UpdateRevision || st.CurrentReplicas != want {
			return false, fmt.Sprintf("statefulset %s: %+v", s.Name, st)
		}
	}
	dss, err := c.AppsV1().DaemonSets(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return false, err.Error()
	}
	for _, d := range dss.Items {
		st := d.Status
		if st.ObservedGeneration != d.Generation || st.DesiredNumberScheduled != 3 || st.NumberReady != 3 ||
			st.UpdatedNumberScheduled != 3 || st.NumberAvailable != 3 {
			return false, fmt.Sprintf("daemonset %s: %+v", d.Name, st)
		}
	}
	return true, ""
}

// hoQuiet waits until the snapshot stops changing for `quiet` (the controllers' last writes,
// e.g. a Job pod's finalizer removal after it succeeded, have landed).
func hoQuiet(t *testing.T, ns, nodeSel string, quiet, timeout time.Duration) hoSnap {
	t.Helper()
	deadline := time.Now().Add(timeout)
	s := hoSnapshot(t, ns, nodeSel)
	since := time.Now()
	for time.Since(since) < quiet {
		if time.Now().After(deadline) {
			t.Fatalf("the namespace did not stay unchanged for %s within %s", quiet, timeout)
		}
		time.Sleep(500 * time.Millisecond)
		n := hoSnapshot(t, ns, nodeSel)
		if d := hoCompare(s, n); len(d) > 0 {
			s, since = n, time.Now()
		}
	}
	return s
}

// hoKCMLog is the log of the harness's kube-controller-manager (appended to on each start).
func hoKCMLog(t *testing.T) []string {
	b, err := os.ReadFile(filepath.Join(env.Cluster.Dir, "logs", "kube-controller-manager.log"))
	if err != nil {
		return nil
	}
	return strings.Split(string(b), "\n")
}

func hoStartKCM(t *testing.T) {
	t.Helper()
	from := len(hoKCMLog(t))
	if err := env.Cluster.StartKCM(context.Background(), harness.KCMOptions{Controllers: hoControllers,
		QPS: 200, Burst: 400}); err != nil {
		t.Fatal(err)
	}
	// the five controllers log "Caches are synced" (WaitForNamedCacheSync) before their workers run
	Eventually(t, 60*time.Second, "kcm's five controllers' caches synced", func() (bool, string) {
		n := 0
		lines := hoKCMLog(t)
		for _, l := range lines[min(from, len(lines)):] {
			if strings.Contains(l, "Caches are synced") {
				n++
			}
		}
		return n >= 5, fmt.Sprintf("%d 'Caches are synced' lines", n)
	})
}

func TestHandover_KcmToKcmdAndBack(t *testing.T) {
	// a shared kcmd with the ReplicaSet controller (TestReplicaSet_*) would act beside kcm
	stopSharedRS(t)
	ctx := context.Background()
	ns := Namespace(t)
	hjStripFinalizers(t, ns) // runs after the cleanup below (kcm stopped)
	t.Cleanup(func() {
		env.Cluster.StopKCM()
		_ = env.Client.AppsV1().StatefulSets(ns).DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{})
		_ = env.Client.AppsV1().DaemonSets(ns).DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{})
		_ = env.Client.AppsV1().ControllerRevisions(ns).DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{})
		_ = env.Client.CoreV1().PersistentVolumeClaims(ns).DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{})
	})
	group := "ho-" + ns
	nodeSel := "ds-test=" + group
	for i := 0; i < 3; i++ {
		dsNode(t, fmt.Sprintf("ho-%d-%s", i, ns), group, nil)
	}
	hoKubelet(t, ns)
	hoStartKCM(t)
	kcmOn := true
	t.Cleanup(func() {
		if kcmOn && t.Failed() {
			t.Logf("kcm's log: %s", filepath.Join(env.Cluster.Dir, "logs", "kube-controller-manager.log"))
		}
	})

	// Deployments: settled; three revisions; stuck mid-rollout (maxUnavailable 0, the new pod
	// never Ready)
	dpCreate(t, hoDeployment(ns, "plain", 2))
	dpCreate(t, hoDeployment(ns, "revs", 2))
	stuck := hoDeployment(ns, "stuck", 3)
	stuck.Spec.Strategy.RollingUpdate = &appsv1.RollingUpdateDeployment{
		MaxSurge: ptr.To(intstr.FromInt32(1)), MaxUnavailable: ptr.To(intstr.FromInt32(0))}
	dpCreate(t, stuck)
	// StatefulSets: claims and a rolled revision (OrderedReady); claims, Parallel
	dpSts := stsWithClaim(stsNew(ns, "web", 3))
	stsCreate(t, dpSts)
	par := stsWithClaim(stsNew(ns, "par", 2))
	par.Spec.PodManagementPolicy = appsv1.ParallelPodManagement
	stsCreate(t, par)
	// a DaemonSet over the three Nodes
	dsCreate(t, dsNew(ns, "ds", group))
	// Jobs: NonIndexed with one pod Succeeded; Indexed with index 0 Succeeded; one Complete
	jNon := hjCreate(t, hoJob(ns, "nonindexed", 3, 2, false))
	jIdx := hjCreate(t, hoJob(ns, "indexed", 3, 3, true))
	jDone := hjCreate(t, hoJob(ns, "done", 1, 1, false))

	Eventually(t, 60*time.Second, "first rollouts", func() (bool, string) { return hoSettled(t, ns) })
	for i, img := range []string{"fake/image:2", "fake/image:3"} {
		dpUpdate(t, ns, "revs", func(d *appsv1.Deployment) { d.Spec.Template.Spec.Containers[0].Image = img })
		Eventually(t, 60*time.Second, fmt.Sprintf("revs rollout %d", i+2), func() (bool, string) { return hoSettled(t, ns) })
	}
	stsUpdate(t, ns, "web", func(s *appsv1.StatefulSet) { s.Spec.Template.Spec.Containers[0].Image = "fake/image:2" })
	dpUpdate(t, ns, "stuck", func(d *appsv1.Deployment) { d.Spec.Template.Labels[hoHold] = "true" })
	validateJobPodsStatus(t, jNon, podsByStatus{Active: 2, Ready: 2, Terminating: ptr.To[int32](0)})
	hoSetPodPhase(t, &hjPods(t, jNon)[0], corev1.PodSucceeded)
	setJobPhaseForIndex(t, jIdx, corev1.PodSucceeded, 0)
	validateJobPodsStatus(t, jDone, podsByStatus{Active: 1, Ready: 1, Terminating: ptr.To[int32](0)})
	hoSetPodPhase(t, &hjPods(t, jDone)[0], corev1.PodSucceeded)
	validateJobPodsStatus(t, jNon, podsByStatus{Active: 2, Ready: 2, Succeeded: 1, Terminating: ptr.To[int32](0)})
	validateIndexedJobPods(t, jIdx, []int{1, 2}, "0")
	validateJobCondition(t, jDone, batchv1.JobComplete, "")
	Eventually(t, 90*time.Second, "everything settled under kcm", func() (bool, string) { return hoSettled(t, ns) })
	// 3 s without any write in the namespace: the last finalizer removals and status writes
	// land within a second of the change that caused them
	s1 := hoQuiet(t, ns, nodeSel, 3*time.Second, 30*time.Second)
	t.Logf("settled under kcm: %d objects", len(s1))
	if n := len(hjPods(t, jNon)); n != 3 {
		t.Fatalf("nonindexed job: %d pods, want 3", n)
	}

	// kcm -> kcmd
	env.Cluster.StopKCM()
	kcmOn = false
	p := startKcmd(t, nil, "--controllers="+hoControllers, "--secure-port=0", "--leader-elect=false",
		"--kube-api-qps=200", "--kube-api-burst=400", "--v=2")
	t.Cleanup(func() { dumpKcmdLogs(t, p) })
	hoKcmdSettle(t, p)
	s2 := hoSnapshot(t, ns, nodeSel)
	var known []string
	for _, l := range hoCompare(s1, s2) {
		if hoKnownIndexedFinalizerBug(l) {
			known = append(known, l)
			continue
		}
		t.Errorf("kcm -> kcmd: %s", l) // one line each: make e2e keeps only lines naming the test file
	}
	// Once a known bug (kcmd's Job workers synced before the informers had listed, so a Job not
	// listed yet read as deleted and its running pods lost the tracking finalizer as orphans);
	// fixed by the cache-synced check in workers/job/sync.c, kept as a sub-check of its own.
	t.Run("IndexedJobActivePodsKeepFinalizer", func(t *testing.T) {
		for _, l := range known {
			t.Errorf("kcm -> kcmd: %s", l)
		}
	})

	// kcmd -> kcm (kcmd stops as on a rollout: SIGTERM)
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(15 * time.Second):
		t.Fatal("kcmd did not exit within 15 s of SIGTERM")
	}
	hoStartKCM(t)
	kcmOn = true
	time.Sleep(hoSettle)
	s3 := hoSnapshot(t, ns, nodeSel)
	if d := hoCompare(s2, s3); len(d) > 0 {
		for _, l := range d { // one line each: make e2e keeps only lines naming the test file
			t.Errorf("kcmd -> kcm: %s", l)
		}
	}

	// the check can fire: a template change under kcm is a new ReplicaSet and a status change
	t.Run("ComparisonFires", func(t *testing.T) {
		dpUpdate(t, ns, "plain", func(d *appsv1.Deployment) { d.Spec.Template.Annotations = map[string]string{"x": "y"} })
		Eventually(t, 30*time.Second, "a new ReplicaSet of plain reported", func() (bool, string) {
			d := hoCompare(s3, hoSnapshot(t, ns, nodeSel))
			newRS, depStatus := false, false
			for _, l := range d {
				newRS = newRS || (strings.HasPrefix(l, "created ReplicaSet/plain-") && strings.Contains(l, "pod-template-hash="))
				depStatus = depStatus || (strings.HasPrefix(l, "changed Deployment/plain ") && strings.Contains(l, "status."))
			}
			return newRS && depStatus, strings.Join(d, "\n")
		})
	})
}

// hoSettle is how long the test watches kcmd (and kcm again) after its workers run and its
// queues first drain. kcmd queues every object at its dispatchers' start and upstream's
// informers deliver every object as an add at start, so each workload is synced once at once;
// what could still come later is a delayed requeue: the deployment controller's progress check
// (progressDeadlineSeconds is 3600 here), minReadySeconds requeues (0 here: none), the Job
// controller's backoff (no failed pod) and the DaemonSet/StatefulSet controllers' none. A
// changed object shows within a second of its sync; 5 s covers the first syncs of all 60-odd
// objects with room on a loaded machine.
const hoSettle = 5 * time.Second

// hoKcmdSettle waits for kcmd's five workers, for its queues to drain once, then hoSettle.
func hoKcmdSettle(t *testing.T, p *kcmdProc) {
	t.Helper()
	for _, c := range strings.Split(hoControllers, ",") {
		Eventually(t, 60*time.Second, c+" worker ready", func() (bool, string) {
			select {
			case <-p.done:
				t.Fatalf("kcmd exited: %v", p.err)
			default:
			}
			return p.Logged(c + " worker ready"), "not yet"
		})
	}
	Eventually(t, 30*time.Second, "kcmd's queues drained", func() (bool, string) {
		out := hmgKcmctlPid(t, p.cmd.Process.Pid, "queues")
		return hoQueuesDrained(out), out
	})
	time.Sleep(hoSettle)
}

// hoQueuesDrained reads `kcmctl queues`: every queue has had adds (its dispatcher queued the
// objects at start), none holds a key or has one in a worker's hands.
func hoQueuesDrained(out string) bool {
	n := 0
	for _, l := range strings.Split(out, "\n")[1:] {
		f := strings.Fields(l)
		if len(f) < 8 {
			continue
		}
		if f[1] != "0" || f[6] != "0.000" {
			return false
		}
		if f[2] != "0" {
			n++
		}
	}
	return n >= 5
}

// hoKnownIndexedFinalizerBug matches the change kcmd made on taking over before the Job
// workers waited for their caches (docs/job.md): the tracking finalizer removed from a running
// pod of the Indexed Job "indexed", nothing else of the pod changed. Such a change is reported
// by the sub-check IndexedJobActivePodsKeepFinalizer; every other change by the test itself.
func hoKnownIndexedFinalizerBug(l string) bool {
	if !strings.HasPrefix(l, "changed Pod/indexed-") {
		return false
	}
	i := strings.Index(l, "): ")
	if i < 0 || !strings.Contains(l, `metadata.finalizers[0]: "batch.kubernetes.io/job-tracking" -> (absent)`) {
		return false
	}
	for _, f := range strings.Split(l[i+3:], "; ") {
		if !strings.HasPrefix(f, "metadata.finalizers") && !strings.HasPrefix(f, "metadata.managedFields") &&
			!strings.HasPrefix(f, "metadata.resourceVersion") {
			return false
		}
	}
	return true
}
