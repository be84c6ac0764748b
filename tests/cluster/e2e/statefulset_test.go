package e2e

// kcmd's statefulset-controller (docs/statefulset.md) on a real kube-apiserver, with no
// upstream kube-controller-manager running: kcmd runs the statefulset controller and the
// kubelet simulator (pods become Running and Ready on simulated Nodes). Ported from upstream
// test/integration/statefulset (v1.37): TestSpecReplicasChange (scale up and down, status),
// TestStatefulSetStatusWithPodFail's identity checks, TestStatefulSetStartOrdinal,
// TestStatefulSetAvailable's counts, the rolling update with a partition and the OnDelete
// strategy of test/e2e/apps/statefulset.go, and TestAutodeleteOwnerRefs (retention policy owner
// references). The ControllerRevision's name is checked against upstream's own
// history.HashControllerRevision over upstream's getPatch bytes. The simulator is
// cluster-wide, so these tests do not run in parallel; each starts its own kcmd.

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/util/retry"
	"k8s.io/kubernetes/pkg/controller/history"
	"k8s.io/utils/ptr"
)

func stsStart(t *testing.T, flags ...string) *kcmdProc {
	t.Helper()
	hksCleanupSimNodes(t)
	return hksStartSim(t, append([]string{"--controllers=statefulset-controller", "--simulate-kubelet-nodes=2",
		"--kube-api-qps=200", "--kube-api-burst=400", "--v=4"}, flags...)...)
}

func stsNew(ns, name string, replicas int32) *appsv1.StatefulSet {
	labels := map[string]string{"app": name}
	return &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: appsv1.StatefulSetSpec{
			Replicas:    ptr.To(replicas),
			ServiceName: "svc-" + name,
			Selector:    &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels, Annotations: map[string]string{"a": "<b&c>"}},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "fake/image:1"}}},
			},
		},
	}
}

func stsWithClaim(s *appsv1.StatefulSet) *appsv1.StatefulSet {
	s.Spec.VolumeClaimTemplates = []corev1.PersistentVolumeClaim{{
		ObjectMeta: metav1.ObjectMeta{Name: "data"},
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}},
		},
	}}
	return s
}

func stsCreate(t *testing.T, s *appsv1.StatefulSet) *appsv1.StatefulSet {
	t.Helper()
	out, err := env.Client.AppsV1().StatefulSets(s.Namespace).Create(context.Background(), s, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating statefulset %s: %v", s.Name, err)
	}
	return out
}

func stsUpdate(t *testing.T, ns, name string, f func(s *appsv1.StatefulSet)) {
	t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		s, err := env.Client.AppsV1().StatefulSets(ns).Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		f(s)
		_, err = env.Client.AppsV1().StatefulSets(ns).Update(context.Background(), s, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		t.Fatalf("updating statefulset %s: %v", name, err)
	}
}

func stsGet(t *testing.T, ns, name string) *appsv1.StatefulSet {
	t.Helper()
	s, err := env.Client.AppsV1().StatefulSets(ns).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func stsPods(t *testing.T, ns string) []corev1.Pod {
	t.Helper()
	l, err := env.Client.CoreV1().Pods(ns).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	sort.Slice(l.Items, func(i, j int) bool { return l.Items[i].Name < l.Items[j].Name })
	return l.Items
}

func stsPodReady(p *corev1.Pod) bool {
	if p.Status.Phase != corev1.PodRunning || p.DeletionTimestamp != nil {
		return false
	}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// stsWaitReady waits for exactly the named pods (ready, not terminating) and the status of a
// finished set: every replica ready and updated, currentRevision == updateRevision.
func stsWaitReady(t *testing.T, ns, name string, want ...string) *appsv1.StatefulSet {
	t.Helper()
	var s *appsv1.StatefulSet
	Eventually(t, 90*time.Second, ns+"/"+name+" ready", func() (bool, string) {
		s = stsGet(t, ns, name)
		var got []string
		for _, p := range stsPods(t, ns) {
			if stsPodReady(&p) {
				got = append(got, p.Name)
			} else {
				got = append(got, p.Name+"(not ready)")
			}
		}
		st := s.Status
		n := *s.Spec.Replicas
		ok := strings.Join(got, ",") == strings.Join(want, ",") && st.ObservedGeneration >= s.Generation &&
			st.Replicas == n && st.ReadyReplicas == n && st.AvailableReplicas == n && st.UpdatedReplicas == n &&
			st.CurrentReplicas == n && st.CurrentRevision == st.UpdateRevision && st.UpdateRevision != ""
		return ok, fmt.Sprintf("pods %v status %+v", got, st)
	})
	return s
}

// stsUpstreamRevision: upstream's getPatch over the set as client-go reads it, and the name
// upstream's history package gives it.
func stsUpstreamRevision(t *testing.T, s *appsv1.StatefulSet) (string, []byte) {
	t.Helper()
	codec := scheme.Codecs.LegacyCodec(appsv1.SchemeGroupVersion)
	data, err := runtime.Encode(codec, s)
	if err != nil {
		t.Fatal(err)
	}
	var raw map[string]interface{}
	if err := json.Unmarshal(data, &raw); err != nil {
		t.Fatal(err)
	}
	tmpl := raw["spec"].(map[string]interface{})["template"].(map[string]interface{})
	tmpl["$patch"] = "replace"
	patch, err := json.Marshal(map[string]interface{}{"spec": map[string]interface{}{"template": tmpl}})
	if err != nil {
		t.Fatal(err)
	}
	cc := int32(0)
	if s.Status.CollisionCount != nil {
		cc = *s.Status.CollisionCount
	}
	cr := &appsv1.ControllerRevision{Data: runtime.RawExtension{Raw: patch}}
	return history.ControllerRevisionName(s.Name, history.HashControllerRevision(cr, &cc)), patch
}

func stsRevisions(t *testing.T, ns string) []appsv1.ControllerRevision {
	t.Helper()
	l, err := env.Client.AppsV1().ControllerRevisions(ns).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return l.Items
}

func stsEvents(t *testing.T, ns, reason string) []corev1.Event {
	t.Helper()
	l, err := env.Client.CoreV1().Events(ns).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var out []corev1.Event
	for _, e := range l.Items {
		if e.Reason == reason && e.Source.Component == "statefulset-controller" {
			out = append(out, e)
		}
	}
	return out
}

func TestStatefulSet_ScaleOrderedReady(t *testing.T) {
	stsStart(t)
	ns := Namespace(t)
	s := stsCreate(t, stsWithClaim(stsNew(ns, "web", 3)))
	s = stsWaitReady(t, ns, "web", "web-0", "web-1", "web-2")

	// the ControllerRevision: upstream's name and data for this set
	wantName, wantPatch := stsUpstreamRevision(t, s)
	revs := stsRevisions(t, ns)
	if len(revs) != 1 || revs[0].Name != wantName || s.Status.UpdateRevision != wantName {
		t.Fatalf("revisions %v (status %s), want one named %s", revs, s.Status.UpdateRevision, wantName)
	}
	if string(revs[0].Data.Raw) != string(wantPatch) || revs[0].Revision != 1 {
		t.Fatalf("revision data %s rev %d, want %s rev 1", revs[0].Data.Raw, revs[0].Revision, wantPatch)
	}
	if ref := metav1.GetControllerOf(&revs[0]); ref == nil || ref.UID != s.UID {
		t.Fatalf("revision not controlled by the set: %v", revs[0].OwnerReferences)
	}
	if revs[0].Labels["app"] != "web" || revs[0].Labels[history.ControllerRevisionHashLabel] == "" {
		t.Fatalf("revision labels %v", revs[0].Labels)
	}
	if *s.Status.CollisionCount != 0 {
		t.Fatalf("collisionCount %v", s.Status.CollisionCount)
	}

	// identity, storage, owner of every pod; OrderedReady: each created after its predecessor was Ready
	pods := stsPods(t, ns)
	var prevReady time.Time
	for i, p := range pods {
		want := fmt.Sprintf("web-%d", i)
		if p.Name != want || p.GenerateName != "web-" || p.Spec.Hostname != want || p.Spec.Subdomain != "svc-web" ||
			p.Labels[appsv1.StatefulSetPodNameLabel] != want || p.Labels[appsv1.PodIndexLabel] != strconv.Itoa(i) ||
			p.Labels[appsv1.ControllerRevisionHashLabelKey] != wantName || p.Annotations["a"] != "<b&c>" {
			t.Fatalf("pod %d: name %s generateName %s hostname %s subdomain %s labels %v annotations %v", i, p.Name,
				p.GenerateName, p.Spec.Hostname, p.Spec.Subdomain, p.Labels, p.Annotations)
		}
		if ref := metav1.GetControllerOf(&p); ref == nil || ref.UID != s.UID || ref.Kind != "StatefulSet" ||
			ref.BlockOwnerDeletion == nil || !*ref.BlockOwnerDeletion {
			t.Fatalf("pod %s owner %v", p.Name, p.OwnerReferences)
		}
		var vol *corev1.Volume
		for k := range p.Spec.Volumes {
			if p.Spec.Volumes[k].Name == "data" {
				vol = &p.Spec.Volumes[k]
			}
		}
		if vol == nil || vol.PersistentVolumeClaim == nil || vol.PersistentVolumeClaim.ClaimName != "data-"+want {
			t.Fatalf("pod %s volumes %v", p.Name, p.Spec.Volumes)
		}
		pvc, err := env.Client.CoreV1().PersistentVolumeClaims(ns).Get(context.Background(), "data-"+want, metav1.GetOptions{})
		if err != nil || pvc.Labels["app"] != "web" {
			t.Fatalf("claim data-%s: %v %v", want, err, pvc)
		}
		if i > 0 && p.CreationTimestamp.Time.Before(prevReady) {
			t.Fatalf("%s created at %s, before its predecessor was ready (%s)", p.Name, p.CreationTimestamp, prevReady)
		}
		for _, c := range p.Status.Conditions {
			if c.Type == corev1.PodReady {
				prevReady = c.LastTransitionTime.Time
			}
		}
	}
	if n := len(stsEvents(t, ns, "SuccessfulCreate")); n < 6 { // 3 pods + 3 claims
		t.Fatalf("%d SuccessfulCreate events, want 6", n)
	}

	// scale down to 1: web-2 then web-1 go, claims stay (Retain)
	stsUpdate(t, ns, "web", func(s *appsv1.StatefulSet) { s.Spec.Replicas = ptr.To(int32(1)) })
	s = stsWaitReady(t, ns, "web", "web-0")
	if n := len(stsEvents(t, ns, "SuccessfulDelete")); n < 2 {
		t.Fatalf("%d SuccessfulDelete events, want 2", n)
	}
	if _, err := env.Client.CoreV1().PersistentVolumeClaims(ns).Get(context.Background(), "data-web-2", metav1.GetOptions{}); err != nil {
		t.Fatalf("claim of the scaled-down pod: %v", err)
	}
	// and up again: web-1, web-2 come back with the same names and claims
	stsUpdate(t, ns, "web", func(s *appsv1.StatefulSet) { s.Spec.Replicas = ptr.To(int32(3)) })
	stsWaitReady(t, ns, "web", "web-0", "web-1", "web-2")
	if revs := stsRevisions(t, ns); len(revs) != 1 {
		t.Fatalf("%d revisions after scaling, want 1", len(revs))
	}
}

func TestStatefulSet_ParallelAndStartOrdinal(t *testing.T) {
	stsStart(t)
	ns := Namespace(t)
	s := stsNew(ns, "par", 4)
	s.Spec.PodManagementPolicy = appsv1.ParallelPodManagement
	s.Spec.Ordinals = &appsv1.StatefulSetOrdinals{Start: 3}
	stsCreate(t, s)
	stsWaitReady(t, ns, "par", "par-3", "par-4", "par-5", "par-6")
	for _, p := range stsPods(t, ns) {
		if p.Labels[appsv1.PodIndexLabel] != strings.TrimPrefix(p.Name, "par-") {
			t.Fatalf("pod %s index label %v", p.Name, p.Labels)
		}
	}
	// a start ordinal move: par-3 goes, par-7 comes
	stsUpdate(t, ns, "par", func(s *appsv1.StatefulSet) { s.Spec.Ordinals.Start = 4 })
	stsWaitReady(t, ns, "par", "par-4", "par-5", "par-6", "par-7")
	stsUpdate(t, ns, "par", func(s *appsv1.StatefulSet) { s.Spec.Replicas = ptr.To(int32(0)) })
	stsWaitReady(t, ns, "par")
}

func stsSetImage(img string) func(s *appsv1.StatefulSet) {
	return func(s *appsv1.StatefulSet) { s.Spec.Template.Spec.Containers[0].Image = img }
}

func TestStatefulSet_RollingUpdatePartition(t *testing.T) {
	stsStart(t)
	ns := Namespace(t)
	s := stsNew(ns, "ru", 3)
	s.Spec.RevisionHistoryLimit = ptr.To(int32(1))
	stsCreate(t, s)
	s = stsWaitReady(t, ns, "ru", "ru-0", "ru-1", "ru-2")
	rev1 := s.Status.CurrentRevision

	// partition 2: only ru-2 moves to the new revision
	stsUpdate(t, ns, "ru", func(s *appsv1.StatefulSet) {
		s.Spec.UpdateStrategy.RollingUpdate = &appsv1.RollingUpdateStatefulSetStrategy{Partition: ptr.To(int32(2))}
		stsSetImage("fake/image:2")(s)
	})
	var rev2 string
	Eventually(t, 90*time.Second, "ru-2 at the new revision", func() (bool, string) {
		s = stsGet(t, ns, "ru")
		rev2 = s.Status.UpdateRevision
		pods := stsPods(t, ns)
		if len(pods) != 3 || rev2 == rev1 {
			return false, fmt.Sprintf("%d pods, status %+v", len(pods), s.Status)
		}
		ok := pods[0].Labels[appsv1.ControllerRevisionHashLabelKey] == rev1 &&
			pods[1].Labels[appsv1.ControllerRevisionHashLabelKey] == rev1 &&
			pods[2].Labels[appsv1.ControllerRevisionHashLabelKey] == rev2 && stsPodReady(&pods[2]) &&
			pods[2].Spec.Containers[0].Image == "fake/image:2" && s.Status.UpdatedReplicas == 1 &&
			s.Status.CurrentReplicas == 2 && s.Status.CurrentRevision == rev1
		return ok, fmt.Sprintf("status %+v", s.Status)
	})
	if want, _ := stsUpstreamRevision(t, s); want != rev2 {
		t.Fatalf("update revision %s, upstream names it %s", rev2, want)
	}
	// partition 0: the rest follows, and the set completes on the new revision
	stsUpdate(t, ns, "ru", func(s *appsv1.StatefulSet) { s.Spec.UpdateStrategy.RollingUpdate.Partition = ptr.To(int32(0)) })
	s = stsWaitReady(t, ns, "ru", "ru-0", "ru-1", "ru-2")
	for _, p := range stsPods(t, ns) {
		if p.Labels[appsv1.ControllerRevisionHashLabelKey] != rev2 || p.Spec.Containers[0].Image != "fake/image:2" {
			t.Fatalf("pod %s at %s image %s", p.Name, p.Labels[appsv1.ControllerRevisionHashLabelKey], p.Spec.Containers[0].Image)
		}
	}
	// back to image 1: upstream reuses revision 1 (renumbered 3), no new revision
	stsUpdate(t, ns, "ru", stsSetImage("fake/image:1"))
	s = stsWaitReady(t, ns, "ru", "ru-0", "ru-1", "ru-2")
	if s.Status.CurrentRevision != rev1 {
		t.Fatalf("rollback revision %s, want %s", s.Status.CurrentRevision, rev1)
	}
	// revisionHistoryLimit 1: the live one and one old one
	Eventually(t, 30*time.Second, "history truncated", func() (bool, string) {
		revs := stsRevisions(t, ns)
		var names []string
		for _, r := range revs {
			names = append(names, fmt.Sprintf("%s@%d", r.Name, r.Revision))
			if r.Name == rev1 && r.Revision != 3 {
				return false, fmt.Sprintf("rev1 numbered %d", r.Revision)
			}
		}
		return len(revs) == 2, fmt.Sprint(names)
	})
}

func TestStatefulSet_OnDelete(t *testing.T) {
	stsStart(t)
	ns := Namespace(t)
	s := stsNew(ns, "od", 2)
	s.Spec.UpdateStrategy = appsv1.StatefulSetUpdateStrategy{Type: appsv1.OnDeleteStatefulSetStrategyType}
	stsCreate(t, s)
	s = stsWaitReady(t, ns, "od", "od-0", "od-1")
	rev1 := s.Status.CurrentRevision
	stsUpdate(t, ns, "od", stsSetImage("fake/image:2"))
	Eventually(t, 30*time.Second, "a new update revision", func() (bool, string) {
		s = stsGet(t, ns, "od")
		return s.Status.UpdateRevision != rev1 && s.Status.ObservedGeneration == s.Generation, fmt.Sprintf("%+v", s.Status)
	})
	time.Sleep(2 * time.Second)
	for _, p := range stsPods(t, ns) {
		if p.Labels[appsv1.ControllerRevisionHashLabelKey] != rev1 {
			t.Fatalf("OnDelete replaced %s", p.Name)
		}
	}
	if err := env.Client.CoreV1().Pods(ns).Delete(context.Background(), "od-1", metav1.DeleteOptions{GracePeriodSeconds: ptr.To(int64(0))}); err != nil {
		t.Fatal(err)
	}
	Eventually(t, 60*time.Second, "od-1 recreated at the new revision", func() (bool, string) {
		s = stsGet(t, ns, "od")
		pods := stsPods(t, ns)
		if len(pods) != 2 {
			return false, fmt.Sprintf("%d pods", len(pods))
		}
		ok := pods[1].Labels[appsv1.ControllerRevisionHashLabelKey] == s.Status.UpdateRevision && stsPodReady(&pods[1]) &&
			pods[0].Labels[appsv1.ControllerRevisionHashLabelKey] == rev1 && s.Status.UpdatedReplicas == 1 &&
			s.Status.CurrentReplicas == 1
		return ok, fmt.Sprintf("status %+v", s.Status)
	})
}

func TestStatefulSet_RetentionPolicyOwners(t *testing.T) {
	stsStart(t)
	ns := Namespace(t)
	s := stsWithClaim(stsNew(ns, "rp", 2))
	s.Spec.PersistentVolumeClaimRetentionPolicy = &appsv1.StatefulSetPersistentVolumeClaimRetentionPolicy{
		WhenDeleted: appsv1.DeletePersistentVolumeClaimRetentionPolicyType,
		WhenScaled:  appsv1.DeletePersistentVolumeClaimRetentionPolicyType,
	}
	s = stsCreate(t, s)
	stsWaitReady(t, ns, "rp", "rp-0", "rp-1")
	owners := func(name string) string {
		c, err := env.Client.CoreV1().PersistentVolumeClaims(ns).Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			return err.Error()
		}
		var o []string
		for _, r := range c.OwnerReferences {
			o = append(o, fmt.Sprintf("%s/%s/%v", r.Kind, r.Name, r.Controller != nil && *r.Controller))
		}
		sort.Strings(o)
		return strings.Join(o, ",")
	}
	// in range: the set is the claims' controller (WhenDeleted=Delete)
	Eventually(t, 30*time.Second, "claims owned by the set", func() (bool, string) {
		a, b := owners("data-rp-0"), owners("data-rp-1")
		return a == "StatefulSet/rp/true" && b == "StatefulSet/rp/true", a + " " + b
	})
	// scaled down (WhenScaled=Delete): the condemned pod owns its claim, before it is deleted
	stsUpdate(t, ns, "rp", func(s *appsv1.StatefulSet) { s.Spec.Replicas = ptr.To(int32(1)) })
	stsWaitReady(t, ns, "rp", "rp-0")
	if got := owners("data-rp-1"); got != "Pod/rp-1/true" {
		t.Fatalf("scaled-down claim owners %q, want Pod/rp-1/true", got)
	}
	if got := owners("data-rp-0"); got != "StatefulSet/rp/true" {
		t.Fatalf("claim owners %q", got)
	}
}

// stsWorkers: the pids of the statefulset controller's kcmd-worker processes.
func stsWorkers(mgr int) []int {
	var out []int
	for pid, comm := range childrenOf(mgr) {
		if comm != "kcmd-worker" {
			continue
		}
		b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		if strings.Contains(string(b), "statefulset-controller") {
			out = append(out, pid)
		}
	}
	return out
}

// TestStatefulSet_CrashScaleUp: the statefulset worker is killed (SIGKILL) again and again while
// a Parallel set scales from 0 to 12 through a slow client (at most 4 kills in 20 s); the set
// converges to exactly cr-0..cr-11, each ordinal once, every pod created once (a watch counts
// pod uids). A kill is made only mid-scale-up: some pods exist, some are missing, and more
// exist than at the previous kill (a kill before the first create, after the last, or before
// the restarted worker created anything tests nothing).
func TestStatefulSet_CrashScaleUp(t *testing.T) {
	p := stsStart(t, "--concurrent-statefulset-syncs=1", "--kube-api-qps=10", "--kube-api-burst=2")
	mgr := p.cmd.Process.Pid
	ns := Namespace(t)
	tr := hjTrack(t, ns)
	s := stsNew(ns, "cr", 12)
	s.Spec.PodManagementPolicy = appsv1.ParallelPodManagement
	stsCreate(t, s)
	kills, atKill := 0, 0
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) && kills < 4 {
		n := len(stsPods(t, ns))
		if n >= 12 {
			break
		}
		// a kill while some pods exist and some are missing, and each kill after the worker
		// (the manager's new one) created more: every kill lands mid-creation
		if n == 0 || n <= atKill {
			time.Sleep(20 * time.Millisecond)
			continue
		}
		for _, pid := range stsWorkers(mgr) {
			if syscall.Kill(pid, syscall.SIGKILL) == nil {
				kills++
				atKill = n
				t.Logf("kill -9 the statefulset worker %d with %d of 12 pods", pid, n)
			}
		}
	}
	if kills == 0 {
		t.Fatal("no statefulset worker was killed while 1 to 11 of the 12 pods existed")
	}
	if problem := stsCrashVerdict(t, ns, "cr", 12, tr); problem != "" {
		t.Fatalf("%s (killed the worker %d times)", problem, kills)
	}
	t.Logf("killed the statefulset worker %d times mid-scale-up; 12 pods, each created once", kills)
}

// stsCrashVerdict is TestStatefulSet_CrashScaleUp's oracle: the set converges to exactly
// <name>-0..<name>-(n-1), ready, with a finished status (stsWaitReady), and the watch tr saw
// exactly n pods created over the whole run (a pod created twice, or one beyond the replicas
// that the controller then deleted, still counts). It returns the problem, or "".
func stsCrashVerdict(t *testing.T, ns, name string, n int, tr *hjTracker) string {
	t.Helper()
	var want []string
	for i := 0; i < n; i++ {
		want = append(want, fmt.Sprintf("%s-%d", name, i))
	}
	sort.Strings(want)
	stsWaitReady(t, ns, name, want...)
	if c := tr.count(); c != n {
		return fmt.Sprintf("%d pods were created, want %d", c, n)
	}
	return ""
}

// TestStatefulSet_CrashScaleUpNegativeControl: the fault a killed worker could cause is a pod
// created beyond what the spec allows (a worker acting on a stale view of the set). The same
// set as the crash test, no kill; once it is ready a pod cr-12, owned by the set as its pods
// are, is created behind the controller's back. The controller deletes it (an ordinal beyond
// the replicas), so the end state is right again, and the crash test's oracle must still
// report the extra creation.
func TestStatefulSet_CrashScaleUpNegativeControl(t *testing.T) {
	stsStart(t, "--concurrent-statefulset-syncs=1", "--kube-api-qps=10", "--kube-api-burst=2")
	ns := Namespace(t)
	tr := hjTrack(t, ns)
	s := stsNew(ns, "cr", 12)
	s.Spec.PodManagementPolicy = appsv1.ParallelPodManagement
	stsCreate(t, s)
	var want []string
	for i := 0; i < 12; i++ {
		want = append(want, fmt.Sprintf("cr-%d", i))
	}
	sort.Strings(want)
	stsWaitReady(t, ns, "cr", want...)
	var orig corev1.Pod
	for _, p := range stsPods(t, ns) {
		if p.Name == "cr-11" {
			orig = p
		}
	}
	if orig.Name == "" {
		t.Fatal("no pod cr-11")
	}
	extra := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "cr-12", Labels: map[string]string{}, OwnerReferences: orig.OwnerReferences},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "fake/image:1"}}},
	}
	for k, v := range orig.Labels {
		extra.Labels[k] = v
	}
	extra.Labels["statefulset.kubernetes.io/pod-name"] = "cr-12"
	extra.Labels["apps.kubernetes.io/pod-index"] = "12"
	if _, err := env.Client.CoreV1().Pods(ns).Create(context.Background(), extra, metav1.CreateOptions{}); err != nil {
		t.Fatalf("injecting pod cr-12: %v", err)
	}
	problem := stsCrashVerdict(t, ns, "cr", 12, tr)
	if !strings.HasPrefix(problem, "13 pods were created, want 12") {
		t.Fatalf("negative control: a pod beyond the replicas was created, the oracle said %q", problem)
	}
	t.Logf("negative control: the oracle reports %q", problem)
}

// TestStatefulSet_MinReadySeconds: OrderedReady waits for each pod to be available
// (minReadySeconds after Ready) before the next; availableReplicas follows (upstream
// TestStatefulSetAvailable's counts, the requeue after minReadySeconds).
func TestStatefulSet_MinReadySeconds(t *testing.T) {
	stsStart(t)
	ns := Namespace(t)
	s := stsNew(ns, "mr", 2)
	s.Spec.MinReadySeconds = 2
	stsCreate(t, s)
	Eventually(t, 20*time.Second, "mr-0 ready, not yet available", func() (bool, string) {
		s = stsGet(t, ns, "mr")
		return s.Status.ReadyReplicas == 1, fmt.Sprintf("%+v", s.Status)
	})
	if s.Status.AvailableReplicas != 0 {
		t.Fatalf("available before minReadySeconds: %+v", s.Status)
	}
	s = stsWaitReady(t, ns, "mr", "mr-0", "mr-1")
	pods := stsPods(t, ns)
	var ready0 time.Time
	for _, c := range pods[0].Status.Conditions {
		if c.Type == corev1.PodReady {
			ready0 = c.LastTransitionTime.Time
		}
	}
	// metav1.Time has second precision: allow the rounding
	if pods[1].CreationTimestamp.Time.Before(ready0.Add(time.Second)) {
		t.Fatalf("mr-1 created at %s, mr-0 ready at %s: not %ds apart", pods[1].CreationTimestamp, ready0, s.Spec.MinReadySeconds)
	}
}

// TestStatefulSet_AdoptRelease: an orphan pod with the set's labels, one of its names and the
// update revision's hash (upstream's name for it, computed before the set has replicas) is
// adopted as it is (same pod, controllerRef added); once its labels no longer match it is
// released (upstream e2e "should adopt matching orphans and release non-matching pods"). An
// orphan without the revision label would be replaced by a rolling update, as upstream does.
func TestStatefulSet_AdoptRelease(t *testing.T) {
	stsStart(t)
	ns := Namespace(t)
	// the defaulted set from a dry run: the revision's name depends on its template only (a set
	// with 0 replicas would adopt the orphan and scale it away)
	dry, err := env.Client.AppsV1().StatefulSets(ns).Create(context.Background(), stsNew(ns, "ad", 1),
		metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
	if err != nil {
		t.Fatal(err)
	}
	rev, _ := stsUpstreamRevision(t, dry)
	orphan := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "ad-0",
			Labels: map[string]string{"app": "ad", appsv1.ControllerRevisionHashLabelKey: rev}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "fake/image:1"}}},
	}
	orphan, err = env.Client.CoreV1().Pods(ns).Create(context.Background(), orphan, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	s := stsCreate(t, stsNew(ns, "ad", 1))
	Eventually(t, 30*time.Second, "ad-0 adopted", func() (bool, string) {
		p, err := env.Client.CoreV1().Pods(ns).Get(context.Background(), "ad-0", metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		ref := metav1.GetControllerOf(p)
		ok := p.UID == orphan.UID && ref != nil && ref.UID == s.UID && p.Labels[appsv1.StatefulSetPodNameLabel] == "ad-0"
		return ok, fmt.Sprintf("uid %s (orphan %s) owners %v labels %v", p.UID, orphan.UID, p.OwnerReferences, p.Labels)
	})
	p, _ := env.Client.CoreV1().Pods(ns).Get(context.Background(), "ad-0", metav1.GetOptions{})
	p.Labels = map[string]string{"app": "other"}
	if _, err := env.Client.CoreV1().Pods(ns).Update(context.Background(), p, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	Eventually(t, 30*time.Second, "ad-0 released", func() (bool, string) {
		p, err := env.Client.CoreV1().Pods(ns).Get(context.Background(), "ad-0", metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		return metav1.GetControllerOf(p) == nil, fmt.Sprintf("owners %v", p.OwnerReferences)
	})
}
