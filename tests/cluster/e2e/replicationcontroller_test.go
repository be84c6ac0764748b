package e2e

// The scenarios of upstream's test/integration/replicationcontroller/replicationcontroller_test.go
// (v1.37), run against kcmd's replicationcontroller-controller (the ReplicaSet engine over
// ReplicationControllers, docs/replicationcontroller.md) on a real kube-apiserver, with no
// upstream kube-controller-manager running. Each TestReplicationController_<Name> ports upstream's
// Test<Name>; Events and a crash test are kcmd's additions.
//
// Most tests share one kcmd running only this controller (startKcmdRC) and run in parallel, each
// in its own namespace. The two scenarios whose point is that the controller starts after the pods
// exist (Adoption, ExtraPodsAdoptionAndDeletion) are sequential and run a private kcmd started
// after their objects are created.

import (
	"context"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
)

var (
	kcmdRC     *kcmdProc
	kcmdRCOnce sync.Once
	rcProcMu   sync.Mutex
)

var rcFlags = []string{"--controllers=replicationcontroller-controller", "--secure-port=0", "--leader-elect=false",
	"--concurrent-rc-syncs=5", "--kube-api-qps=200", "--kube-api-burst=400",
	// the crash test kills workers mid-sync; keep their orphaned expectations short
	"--replicationcontroller-orphaned-expectations-grace=5s", "--v=4"}

// useSharedRC makes sure the shared kcmd running the replication controller runs.
func useSharedRC(t *testing.T) {
	t.Helper()
	rcProcMu.Lock()
	kcmdRCOnce.Do(func() { kcmdRC = startKcmdShared(t, rcFlags...) })
	p := kcmdRC
	rcProcMu.Unlock()
	t.Cleanup(func() { dumpKcmdLogs(t, p) })
}

// stopSharedRC stops the shared RC kcmd if it runs (sequential tests only).
func stopSharedRC(t *testing.T) {
	t.Helper()
	rcProcMu.Lock()
	defer rcProcMu.Unlock()
	p := kcmdRC
	if p == nil {
		return
	}
	sharedMu.Lock()
	for i, q := range sharedProcs {
		if q == p {
			sharedProcs = append(sharedProcs[:i], sharedProcs[i+1:]...)
			break
		}
	}
	sharedMu.Unlock()
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(10 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.done
	}
	kcmdRC = nil
	kcmdRCOnce = sync.Once{}
}

// startPrivateRC runs a kcmd with only the replication controller for t alone.
func startPrivateRC(t *testing.T) *kcmdProc {
	t.Helper()
	stopSharedRC(t)
	p := startKcmd(t, nil, rcFlags...)
	t.Cleanup(func() { dumpKcmdLogs(t, p) })
	return p
}

// newITRC is upstream's newRC: selector and template labels foo=bar, one container.
func newITRC(ns, name string, replicas int32) *corev1.ReplicationController {
	return &corev1.ReplicationController{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: corev1.ReplicationControllerSpec{
			Selector: fooBar(),
			Replicas: ptr.To(replicas),
			Template: &corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: fooBar()},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "fake-name", Image: "fakeimage"}}},
			},
		},
	}
}

func mustCreateRC(t *testing.T, rc *corev1.ReplicationController) *corev1.ReplicationController {
	t.Helper()
	out, err := env.Client.CoreV1().ReplicationControllers(rc.Namespace).Create(context.Background(), rc, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating rc %s: %v", rc.Name, err)
	}
	return out
}

func getRC(t *testing.T, ns, name string) *corev1.ReplicationController {
	t.Helper()
	rc, err := env.Client.CoreV1().ReplicationControllers(ns).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("getting rc %s: %v", name, err)
	}
	return rc
}

func updateRC(t *testing.T, ns, name string, fn func(*corev1.ReplicationController)) *corev1.ReplicationController {
	t.Helper()
	var out *corev1.ReplicationController
	if err := retry.RetryOnConflict(retry.DefaultBackoff, func() error {
		rc, err := env.Client.CoreV1().ReplicationControllers(ns).Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		fn(rc)
		out, err = env.Client.CoreV1().ReplicationControllers(ns).Update(context.Background(), rc, metav1.UpdateOptions{})
		return err
	}); err != nil {
		t.Fatalf("updating rc %s: %v", name, err)
	}
	return out
}

func rcOwns(p *corev1.Pod, rc *corev1.ReplicationController) bool {
	ref := metav1.GetControllerOf(p)
	return ref != nil && ref.UID == rc.UID && ref.Kind == "ReplicationController" && ref.APIVersion == "v1"
}

// waitRCStable waits for status.replicas == spec.replicas and observedGeneration >= generation
// (upstream's waitRCStable checks the first; kcmd's also requires exactly spec.replicas active
// pods controlled by the RC).
func waitRCStable(t *testing.T, rc *corev1.ReplicationController) *corev1.ReplicationController {
	t.Helper()
	want := *rc.Spec.Replicas
	var cur *corev1.ReplicationController
	Eventually(t, rsTimeout, fmt.Sprintf("rc %s/%s stable at %d replicas", rc.Namespace, rc.Name, want), func() (bool, string) {
		var err error
		cur, err = env.Client.CoreV1().ReplicationControllers(rc.Namespace).Get(context.Background(), rc.Name, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		pods, err := env.Client.CoreV1().Pods(rc.Namespace).List(context.Background(), metav1.ListOptions{})
		if err != nil {
			return false, err.Error()
		}
		owned := 0
		for i := range pods.Items {
			if isActive(&pods.Items[i]) && rcOwns(&pods.Items[i], cur) {
				owned++
			}
		}
		return cur.Status.ObservedGeneration >= rc.Generation && cur.Status.Replicas == want && owned == int(want),
			fmt.Sprintf("status.replicas=%d observedGeneration=%d owned active pods=%d", cur.Status.Replicas, cur.Status.ObservedGeneration, owned)
	})
	return cur
}

func scaleRC(t *testing.T, ns, name string, replicas int32) *corev1.ReplicationController {
	t.Helper()
	return waitRCStable(t, updateRC(t, ns, name, func(rc *corev1.ReplicationController) { rc.Spec.Replicas = ptr.To(replicas) }))
}

// TestReplicationController_Adoption: upstream's TestAdoption, the four owner-reference cases.
func TestReplicationController_Adoption(t *testing.T) {
	cases := []struct {
		name     string
		existing func(rc *corev1.ReplicationController) []metav1.OwnerReference
		expected func(rc *corev1.ReplicationController) []metav1.OwnerReference
	}{
		{
			"pod refers rc as an owner, not a controller",
			func(rc *corev1.ReplicationController) []metav1.OwnerReference {
				return []metav1.OwnerReference{{UID: rc.UID, Name: rc.Name, APIVersion: "v1", Kind: "ReplicationController"}}
			},
			func(rc *corev1.ReplicationController) []metav1.OwnerReference {
				return []metav1.OwnerReference{{UID: rc.UID, Name: rc.Name, APIVersion: "v1", Kind: "ReplicationController",
					Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}}
			},
		},
		{
			"pod doesn't have owner references",
			func(rc *corev1.ReplicationController) []metav1.OwnerReference { return []metav1.OwnerReference{} },
			func(rc *corev1.ReplicationController) []metav1.OwnerReference {
				return []metav1.OwnerReference{{UID: rc.UID, Name: rc.Name, APIVersion: "v1", Kind: "ReplicationController",
					Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}}
			},
		},
		{
			"pod refers rc as a controller",
			func(rc *corev1.ReplicationController) []metav1.OwnerReference {
				return []metav1.OwnerReference{{UID: rc.UID, Name: rc.Name, APIVersion: "v1", Kind: "ReplicationController", Controller: ptr.To(true)}}
			},
			func(rc *corev1.ReplicationController) []metav1.OwnerReference {
				return []metav1.OwnerReference{{UID: rc.UID, Name: rc.Name, APIVersion: "v1", Kind: "ReplicationController", Controller: ptr.To(true)}}
			},
		},
		{
			"pod refers other rc as the controller, refers the rc as an owner",
			func(rc *corev1.ReplicationController) []metav1.OwnerReference {
				return []metav1.OwnerReference{
					{UID: "1", Name: "anotherRC", APIVersion: "v1", Kind: "ReplicationController", Controller: ptr.To(true)},
					{UID: rc.UID, Name: rc.Name, APIVersion: "v1", Kind: "ReplicationController"},
				}
			},
			func(rc *corev1.ReplicationController) []metav1.OwnerReference {
				return []metav1.OwnerReference{
					{UID: "1", Name: "anotherRC", APIVersion: "v1", Kind: "ReplicationController", Controller: ptr.To(true)},
					{UID: rc.UID, Name: rc.Name, APIVersion: "v1", Kind: "ReplicationController"},
				}
			},
		},
	}
	stopSharedRC(t)
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ns := rsNamespace(t)
			rc := mustCreateRC(t, newITRC(ns, "rc", 1))
			pod := itPod(ns, fmt.Sprintf("pod%d", i))
			pod.OwnerReferences = tc.existing(rc)
			mustCreatePod(t, pod)
			waitListCacheHasPods(t, ns, 1)
			startPrivateRC(t)

			want := tc.expected(rc)
			Eventually(t, rsTimeout, "the pod's owner references as upstream leaves them, and the rc synced", func() (bool, string) {
				p, err := env.Client.CoreV1().Pods(ns).Get(context.Background(), pod.Name, metav1.GetOptions{})
				if err != nil {
					return false, err.Error()
				}
				cur := getRC(t, ns, rc.Name)
				synced := cur.Status.ObservedGeneration >= cur.Generation && cur.Status.Replicas == 1
				return reflect.DeepEqual(want, p.OwnerReferences) && synced, fmt.Sprintf("ownerReferences %+v (want %+v), status.replicas=%d",
					p.OwnerReferences, want, cur.Status.Replicas)
			})
		})
	}
}

// TestReplicationController_ExtraPodsAdoptionAndDeletion: three matching pods exist before the
// controller starts; an RC of 2 adopts them and deletes the extra one.
func TestReplicationController_ExtraPodsAdoptionAndDeletion(t *testing.T) {
	stopSharedRC(t)
	ns := rsNamespace(t)
	rc := mustCreateRC(t, newITRC(ns, "rc", 2))
	for i := range 3 {
		mustCreatePod(t, itPod(ns, fmt.Sprintf("pod-%d", i+1)))
	}
	waitListCacheHasPods(t, ns, 3)
	startPrivateRC(t)
	waitRCStable(t, rc)
	Eventually(t, rsTimeout, "as many pods as spec.replicas", func() (bool, string) {
		n := 0
		for _, p := range listPods(t, ns, fooBar()) {
			if p.DeletionTimestamp == nil {
				n++
			}
		}
		return n == 2, fmt.Sprintf("%d pods", n)
	})
	// none was created: the two left are two of the three made above
	for _, p := range listPods(t, ns, fooBar()) {
		if p.DeletionTimestamp == nil && !strings.HasPrefix(p.Name, "pod-") {
			t.Errorf("pod %s was created although matching pods were there to adopt", p.Name)
		}
	}
}

// TestReplicationController_SpecReplicasChange: status follows 2 → 3 → 0 → 2, and a template-only
// change is reflected in status.observedGeneration.
func TestReplicationController_SpecReplicasChange(t *testing.T) {
	t.Parallel()
	useSharedRC(t)
	ns := rsNamespace(t)
	rc := waitRCStable(t, mustCreateRC(t, newITRC(ns, "rc", 2)))
	scaleRC(t, ns, rc.Name, 3)
	scaleRC(t, ns, rc.Name, 0)
	scaleRC(t, ns, rc.Name, 2)
	var oldGen int64
	n := updateRC(t, ns, rc.Name, func(rc *corev1.ReplicationController) {
		oldGen = rc.Generation
		rc.Spec.Template.Annotations = map[string]string{"test": "annotation"}
	})
	if n.Generation == oldGen {
		t.Fatalf("generation did not change on a template update")
	}
	Eventually(t, rsTimeout, "status.observedGeneration reaches the new generation", func() (bool, string) {
		cur := getRC(t, ns, rc.Name)
		return cur.Status.ObservedGeneration >= n.Generation, fmt.Sprintf("observedGeneration=%d want %d", cur.Status.ObservedGeneration, n.Generation)
	})
}

// TestReplicationController_LogarithmicScaleDown: after a scale up 10 s later and back down, the
// pods left are the two original ones (the newer pod is in a lower logarithmic age rank).
func TestReplicationController_LogarithmicScaleDown(t *testing.T) {
	t.Parallel()
	useSharedRC(t)
	ns := rsNamespace(t)
	rc := waitRCStable(t, mustCreateRC(t, newITRC(ns, "rc", 2)))
	before, err := env.Client.CoreV1().Pods(ns).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(10 * time.Second)
	scaleRC(t, ns, rc.Name, 3)
	scaleRC(t, ns, rc.Name, 2)
	var after *corev1.PodList
	Eventually(t, rsTimeout, "the third pod gone", func() (bool, string) {
		after, err = env.Client.CoreV1().Pods(ns).List(context.Background(), metav1.ListOptions{})
		if err != nil {
			return false, err.Error()
		}
		return len(after.Items) == 2, fmt.Sprintf("%d pods", len(after.Items))
	})
	if !apiequality.Semantic.DeepEqual(before.Items, after.Items) {
		t.Fatalf("pods before %s, after %s", podNames(before.Items), podNames(after.Items))
	}
}

// TestReplicationController_DeletingAndFailedPods: a terminating pod (held by a finalizer) and a
// failed pod are replaced, and both stay.
func TestReplicationController_DeletingAndFailedPods(t *testing.T) {
	t.Parallel()
	useSharedRC(t)
	ns := rsNamespace(t)
	rc := waitRCStable(t, mustCreateRC(t, newITRC(ns, "rc", 2)))
	pods := listPods(t, ns, fooBar())
	if len(pods) != 2 {
		t.Fatalf("%d pods, want 2", len(pods))
	}
	deleting, failed := pods[0], pods[1]
	clearFinalizersOnCleanup(t, ns, deleting.Name)
	updatePod(t, ns, deleting.Name, func(p *corev1.Pod) { p.Finalizers = []string{"fake.example.com/blockDeletion"} })
	if err := env.Client.CoreV1().Pods(ns).Delete(context.Background(), deleting.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	updatePodStatus(t, ns, failed.Name, func(p *corev1.Pod) { p.Status.Phase = corev1.PodFailed })
	Eventually(t, rsTimeout, "two replacement pods", func() (bool, string) {
		pods = listPods(t, ns, fooBar())
		return len(pods) == 4, fmt.Sprintf("%d pods", len(pods))
	})
	var foundDeleting, foundFailed bool
	for _, p := range pods {
		foundDeleting = foundDeleting || p.UID == deleting.UID
		foundFailed = foundFailed || p.UID == failed.UID
	}
	if !foundDeleting || !foundFailed {
		t.Fatalf("deleting pod kept: %v, failed pod kept: %v", foundDeleting, foundFailed)
	}
	_ = rc
}

// TestReplicationController_OverlappingRCs: two RCs with the same selector (1 and 2 replicas) end
// with 3 pods and each status.replicas == spec.replicas.
func TestReplicationController_OverlappingRCs(t *testing.T) {
	t.Parallel()
	useSharedRC(t)
	ns := rsNamespace(t)
	for i := range 2 {
		waitRCStable(t, mustCreateRC(t, newITRC(ns, fmt.Sprintf("rc-%d", i+1), int32(i+1))))
	}
	if pods := listPods(t, ns, fooBar()); len(pods) != 3 {
		t.Errorf("%d pods, want 3", len(pods))
	}
	for i := range 2 {
		rc := getRC(t, ns, fmt.Sprintf("rc-%d", i+1))
		if rc.Status.Replicas != *rc.Spec.Replicas {
			t.Fatalf("rc-%d: status.replicas %d, spec.replicas %d", i+1, rc.Status.Replicas, *rc.Spec.Replicas)
		}
	}
}

// TestReplicationController_PodOrphaningAndAdoptionWhenLabelsChange: a pod relabelled out of the
// selector is released; relabelled back it is adopted again (or deleted as an extra).
func TestReplicationController_PodOrphaningAndAdoptionWhenLabelsChange(t *testing.T) {
	t.Parallel()
	useSharedRC(t)
	ns := rsNamespace(t)
	rc := waitRCStable(t, mustCreateRC(t, newITRC(ns, "rc", 1)))
	pods := listPods(t, ns, fooBar())
	if len(pods) != 1 || metav1.GetControllerOf(&pods[0]) == nil {
		t.Fatalf("want one controlled pod, got %d", len(pods))
	}
	name := pods[0].Name
	updatePod(t, ns, name, func(p *corev1.Pod) { p.Labels = map[string]string{"new-foo": "new-bar"} })
	Eventually(t, rsTimeout, "the relabelled pod released", func() (bool, string) {
		p, err := env.Client.CoreV1().Pods(ns).Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		return metav1.GetControllerOf(p) == nil, fmt.Sprintf("ownerReferences %+v", p.OwnerReferences)
	})
	updatePod(t, ns, name, func(p *corev1.Pod) { p.Labels = fooBar() })
	var pod *corev1.Pod
	Eventually(t, rsTimeout, "the pod adopted again, or deleted as an extra", func() (bool, string) {
		p, err := env.Client.CoreV1().Pods(ns).Get(context.Background(), name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			left := listPods(t, ns, fooBar())
			if len(left) != 1 {
				return false, fmt.Sprintf("%d pods", len(left))
			}
			pod = &left[0]
			return true, ""
		}
		if err != nil {
			return false, err.Error()
		}
		pod = p
		return metav1.GetControllerOf(p) != nil, fmt.Sprintf("ownerReferences %+v", p.OwnerReferences)
	})
	if ref := metav1.GetControllerOf(pod); ref == nil || ref.UID != rc.UID {
		t.Fatalf("pod %s controller %+v, want rc %s", pod.Name, ref, rc.UID)
	}
}

// TestReplicationController_GeneralPodAdoption: a pod whose only owner is another kind
// (controller=false) gains the RC's controller ref beside it; a pod whose only owner ref is the
// RC with controller=false gets it turned into the controller ref.
func TestReplicationController_GeneralPodAdoption(t *testing.T) {
	t.Parallel()
	useSharedRC(t)
	ns := rsNamespace(t)
	rc := waitRCStable(t, mustCreateRC(t, newITRC(ns, "rc", 1)))
	pods := listPods(t, ns, fooBar())
	if len(pods) != 1 {
		t.Fatalf("%d pods, want 1", len(pods))
	}
	check := func(ref metav1.OwnerReference, wantRefs int) {
		t.Helper()
		updatePod(t, ns, pods[0].Name, func(p *corev1.Pod) { p.OwnerReferences = []metav1.OwnerReference{ref} })
		Eventually(t, rsTimeout, "the rc's controller ref on the pod", func() (bool, string) {
			p, err := env.Client.CoreV1().Pods(ns).Get(context.Background(), pods[0].Name, metav1.GetOptions{})
			if err != nil {
				return false, err.Error()
			}
			c := metav1.GetControllerOf(p)
			return c != nil && c.UID == rc.UID && len(p.OwnerReferences) == wantRefs, fmt.Sprintf("ownerReferences %+v", p.OwnerReferences)
		})
	}
	check(metav1.OwnerReference{UID: uuid.NewUUID(), APIVersion: "apps/v1beta1", Kind: "StatefulSet", Name: rc.Name, Controller: ptr.To(false)}, 2)
	check(metav1.OwnerReference{UID: rc.UID, APIVersion: "v1", Kind: "ReplicationController", Name: rc.Name, Controller: ptr.To(false)}, 1)
}

// TestReplicationController_ReadyAndAvailableReplicas: with minReadySeconds 3600, of three pods
// (running not ready; ready now; ready two hours ago) two are ready and one available.
func TestReplicationController_ReadyAndAvailableReplicas(t *testing.T) {
	t.Parallel()
	useSharedRC(t)
	ns := rsNamespace(t)
	rc := newITRC(ns, "rc", 3)
	rc.Spec.MinReadySeconds = 3600
	rc = waitRCStable(t, mustCreateRC(t, rc))
	if rc.Status.AvailableReplicas != 0 {
		t.Fatalf("status.availableReplicas %d, want 0", rc.Status.AvailableReplicas)
	}
	pods := listPods(t, ns, fooBar())
	if len(pods) != 3 {
		t.Fatalf("%d pods, want 3", len(pods))
	}
	setReadyCondition(t, ns, pods[0].Name, corev1.ConditionFalse, time.Now())
	setReadyCondition(t, ns, pods[1].Name, corev1.ConditionTrue, time.Now())
	setReadyCondition(t, ns, pods[2].Name, corev1.ConditionTrue, time.Now().Add(-120*time.Minute))
	Eventually(t, rsTimeout, "3 replicas, 2 ready, 1 available", func() (bool, string) {
		cur := getRC(t, ns, rc.Name)
		s := cur.Status
		return s.Replicas == 3 && s.ReadyReplicas == 2 && s.AvailableReplicas == 1,
			fmt.Sprintf("replicas=%d ready=%d available=%d", s.Replicas, s.ReadyReplicas, s.AvailableReplicas)
	})
}

// TestReplicationController_RCScaleSubresource: scaling through the scale subresource to 3, then 0.
func TestReplicationController_RCScaleSubresource(t *testing.T) {
	t.Parallel()
	useSharedRC(t)
	ns := rsNamespace(t)
	rc := waitRCStable(t, mustCreateRC(t, newITRC(ns, "rc", 1)))
	for _, n := range []int32{3, 0} {
		if err := retry.RetryOnConflict(retry.DefaultBackoff, func() error {
			sc, err := env.Client.CoreV1().ReplicationControllers(ns).GetScale(context.Background(), rc.Name, metav1.GetOptions{})
			if err != nil {
				return err
			}
			sc.Spec.Replicas = n
			_, err = env.Client.CoreV1().ReplicationControllers(ns).UpdateScale(context.Background(), rc.Name, sc, metav1.UpdateOptions{})
			return err
		}); err != nil {
			t.Fatal(err)
		}
		cur := getRC(t, ns, rc.Name)
		if *cur.Spec.Replicas != n {
			t.Fatalf("spec.replicas %d after the scale subresource set %d", *cur.Spec.Replicas, n)
		}
		waitRCStable(t, cur)
	}
}

// TestReplicationController_FullyLabeledReplicas: the template gains a label the selector does not
// have; of two pods the one relabelled to match the template counts as fully labeled.
func TestReplicationController_FullyLabeledReplicas(t *testing.T) {
	t.Parallel()
	useSharedRC(t)
	ns := rsNamespace(t)
	extra := map[string]string{"foo": "bar", "extraKey": "extraValue"}
	rc := waitRCStable(t, mustCreateRC(t, newITRC(ns, "rc", 2)))
	updateRC(t, ns, rc.Name, func(rc *corev1.ReplicationController) { rc.Spec.Template.Labels = extra })
	pods := listPods(t, ns, fooBar())
	if len(pods) != 2 {
		t.Fatalf("%d pods, want 2", len(pods))
	}
	updatePod(t, ns, pods[0].Name, func(p *corev1.Pod) { p.Labels = extra })
	Eventually(t, rsTimeout, "2 replicas, 1 fully labeled", func() (bool, string) {
		s := getRC(t, ns, rc.Name).Status
		return s.Replicas == 2 && s.FullyLabeledReplicas == 1, fmt.Sprintf("replicas=%d fullyLabeled=%d", s.Replicas, s.FullyLabeledReplicas)
	})
}

// TestReplicationController_Events (kcmd): the Events are upstream's, recorded by the source
// component "replication-controller" on the ReplicationController (v1), and the created pods'
// controller refs name the RC as v1 ReplicationController.
func TestReplicationController_Events(t *testing.T) {
	t.Parallel()
	useSharedRC(t)
	ns := rsNamespace(t)
	rc := waitRCStable(t, mustCreateRC(t, newITRC(ns, "rc", 2)))
	for _, p := range listPods(t, ns, fooBar()) {
		if !rcOwns(&p, rc) || !strings.HasPrefix(p.Name, "rc-") {
			t.Errorf("pod %s: ownerReferences %+v", p.Name, p.OwnerReferences)
		}
	}
	scaleRC(t, ns, rc.Name, 1)
	Eventually(t, rsTimeout, "SuccessfulCreate x2 and SuccessfulDelete x1 from replication-controller", func() (bool, string) {
		evs, err := env.Client.CoreV1().Events(ns).List(context.Background(), metav1.ListOptions{})
		if err != nil {
			return false, err.Error()
		}
		var got []string
		creates, deletes := 0, 0
		for _, e := range evs.Items {
			got = append(got, fmt.Sprintf("%s/%s/%s/%s %q", e.Source.Component, e.InvolvedObject.APIVersion, e.InvolvedObject.Kind, e.Reason, e.Message))
			if e.Source.Component != "replication-controller" || e.InvolvedObject.Kind != "ReplicationController" ||
				e.InvolvedObject.APIVersion != "v1" || e.InvolvedObject.UID != rc.UID || e.Type != corev1.EventTypeNormal {
				continue
			}
			switch {
			case e.Reason == "SuccessfulCreate" && strings.HasPrefix(e.Message, "Created pod: rc-"):
				creates += int(e.Count)
			case e.Reason == "SuccessfulDelete" && strings.HasPrefix(e.Message, "Deleted pod: rc-"):
				deletes += int(e.Count)
			}
		}
		sort.Strings(got)
		return creates == 2 && deletes == 1, strings.Join(got, "; ")
	})
}

// TestReplicationController_CrashDuringScaleUp (kcmd): the RC workers are killed with SIGKILL
// while an RC scales up to 60; the manager restarts them and the RC ends with exactly 60 pods
// (no pod created twice: the expectations of the dead workers survive in shared memory). Beside
// the final count, every pod name that ever existed is recorded: a restarted worker that
// created again what a killed one had in flight would show as more than 60 names.
func TestReplicationController_CrashDuringScaleUp(t *testing.T) {
	stopSharedRC(t)
	p := startPrivateRC(t)
	ns := rsNamespace(t)
	rc := waitRCStable(t, mustCreateRC(t, newITRC(ns, "rc", 0)))
	seen := map[string]bool{}
	var seenMu sync.Mutex
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { // every pod name that ever existed
		for ctx.Err() == nil {
			pods, err := env.Client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
			if err == nil {
				seenMu.Lock()
				for _, q := range pods.Items {
					seen[q.Name] = true
				}
				seenMu.Unlock()
			}
			time.Sleep(20 * time.Millisecond)
		}
	}()
	updateRC(t, ns, rc.Name, func(rc *corev1.ReplicationController) { rc.Spec.Replicas = ptr.To(int32(60)) })
	killed := 0
	deadline := time.Now().Add(3 * time.Second)
	for killed < 4 && time.Now().Before(deadline) {
		// only the replication controller runs in p: every kcmd-worker child is one of its
		killed += killChildren(t, p.cmd.Process.Pid, "kcmd-worker", 2)
		time.Sleep(150 * time.Millisecond)
	}
	if killed == 0 {
		t.Fatal("no RC worker process found to kill")
	}
	waitRCStable(t, getRC(t, ns, rc.Name))
	time.Sleep(2 * time.Second) // anything created late would show now
	cancel()
	pods := listPods(t, ns, fooBar())
	active := 0
	for i := range pods {
		if isActive(&pods[i]) {
			active++
		}
	}
	seenMu.Lock()
	ever := len(seen)
	seenMu.Unlock()
	t.Logf("killed %d worker processes; %d active pods, %d pod names ever seen", killed, active, ever)
	if active != 60 || len(pods) != 60 {
		t.Fatalf("%d pods (%d active), want exactly 60", len(pods), active)
	}
	if ever > 60 {
		t.Fatalf("%d pods existed at some point, want 60 (a pod was created twice)", ever)
	}
}
