package e2e

// The scenarios of upstream's test/integration/replicaset/replicaset_test.go, run against kcmd's
// ReplicaSet controller on a real kube-apiserver (upstream kube-controller-manager's replicaset
// controller is not running). Each TestReplicaSet_<Name> ports upstream's Test<Name>.
//
// Upstream runs one controller per test; here most tests share one kcmd (startKcmdReplicaSet) and
// run in parallel, each in its own namespace. The two scenarios whose point is that the
// controller starts after the pods exist (Adoption, ExtraPodsAdoptionAndDeletion) are sequential
// and run a private kcmd started after their objects are created.

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
)

// TestReplicaSet_Adoption: a pod that exists before the controller starts ends with the owner
// references upstream's claim produces: a plain owner ref to the RS becomes its controller ref
// (blockOwnerDeletion set), an orphan gains one, an existing controller ref is left as is, and a
// pod controlled by another ReplicaSet is left alone.
func TestReplicaSet_Adoption(t *testing.T) {
	cases := []struct {
		name     string
		existing func(rs *appsv1.ReplicaSet) []metav1.OwnerReference
		expected func(rs *appsv1.ReplicaSet) []metav1.OwnerReference
	}{
		{
			"pod refers rs as an owner, not a controller",
			func(rs *appsv1.ReplicaSet) []metav1.OwnerReference {
				return []metav1.OwnerReference{{UID: rs.UID, Name: rs.Name, APIVersion: "apps/v1", Kind: "ReplicaSet"}}
			},
			func(rs *appsv1.ReplicaSet) []metav1.OwnerReference {
				return []metav1.OwnerReference{{UID: rs.UID, Name: rs.Name, APIVersion: "apps/v1", Kind: "ReplicaSet",
					Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}}
			},
		},
		{
			"pod doesn't have owner references",
			func(rs *appsv1.ReplicaSet) []metav1.OwnerReference { return []metav1.OwnerReference{} },
			func(rs *appsv1.ReplicaSet) []metav1.OwnerReference {
				return []metav1.OwnerReference{{UID: rs.UID, Name: rs.Name, APIVersion: "apps/v1", Kind: "ReplicaSet",
					Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}}
			},
		},
		{
			"pod refers rs as a controller",
			func(rs *appsv1.ReplicaSet) []metav1.OwnerReference {
				return []metav1.OwnerReference{{UID: rs.UID, Name: rs.Name, APIVersion: "apps/v1", Kind: "ReplicaSet", Controller: ptr.To(true)}}
			},
			func(rs *appsv1.ReplicaSet) []metav1.OwnerReference {
				return []metav1.OwnerReference{{UID: rs.UID, Name: rs.Name, APIVersion: "apps/v1", Kind: "ReplicaSet", Controller: ptr.To(true)}}
			},
		},
		{
			"pod refers other rs as the controller, refers the rs as an owner",
			func(rs *appsv1.ReplicaSet) []metav1.OwnerReference {
				return []metav1.OwnerReference{
					{UID: "1", Name: "anotherRS", APIVersion: "apps/v1", Kind: "ReplicaSet", Controller: ptr.To(true)},
					{UID: rs.UID, Name: rs.Name, APIVersion: "apps/v1", Kind: "ReplicaSet"},
				}
			},
			func(rs *appsv1.ReplicaSet) []metav1.OwnerReference {
				return []metav1.OwnerReference{
					{UID: "1", Name: "anotherRS", APIVersion: "apps/v1", Kind: "ReplicaSet", Controller: ptr.To(true)},
					{UID: rs.UID, Name: rs.Name, APIVersion: "apps/v1", Kind: "ReplicaSet"},
				}
			},
		},
	}
	stopSharedRS(t) // no controller may see the objects before they are all made
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ns := rsNamespace(t)
			rs := mustCreateRS(t, itRS(ns, "rs", 1))
			pod := itPod(ns, fmt.Sprintf("pod%d", i))
			pod.OwnerReferences = tc.existing(rs)
			mustCreatePod(t, pod)
			waitListCacheHasPods(t, ns, 1)
			startPrivateRS(t)

			want := tc.expected(rs)
			var got []metav1.OwnerReference
			Eventually(t, rsTimeout, "the pod's owner references as upstream leaves them, and the ReplicaSet synced", func() (bool, string) {
				p, err := env.Client.CoreV1().Pods(ns).Get(context.Background(), pod.Name, metav1.GetOptions{})
				if err != nil {
					return false, err.Error()
				}
				got = p.OwnerReferences
				cur := getRS(t, ns, rs.Name)
				synced := cur.Status.ObservedGeneration >= cur.Generation && cur.Status.Replicas == 1
				return reflect.DeepEqual(want, got) && synced, fmt.Sprintf("ownerReferences %+v (want %+v), status.replicas=%d observedGeneration=%d",
					got, want, cur.Status.Replicas, cur.Status.ObservedGeneration)
			})
		})
	}
}

// TestReplicaSet_RSSelectorImmutability: the apps/v1 selector cannot be changed (API validation).
func TestReplicaSet_RSSelectorImmutability(t *testing.T) {
	t.Parallel()
	useSharedRS(t)
	ns := rsNamespace(t)
	// upstream runs no controller here; let kcmd's first status write land before reading, so the
	// update below meets the selector check rather than a resourceVersion conflict
	waitRSStable(t, mustCreateRS(t, itRS(ns, "rs", 0)))
	rs := getRS(t, ns, "rs")
	changed := map[string]string{"changed_name_apps_v1": "changed_test_apps_v1"}
	rs.Spec.Selector.MatchLabels = changed
	rs.Spec.Template.Labels = changed
	_, err := env.Client.AppsV1().ReplicaSets(ns).Update(context.Background(), rs, metav1.UpdateOptions{})
	if err == nil {
		t.Fatal("changing the apps/v1 selector was accepted")
	}
	if !strings.Contains(err.Error(), "Invalid value") || !strings.Contains(err.Error(), "field is immutable") {
		t.Errorf("error %q, want it to say \"Invalid value\" and \"field is immutable\"", err)
	}
}

// TestReplicaSet_SpecReplicasChange: status.replicas follows spec.replicas through 2 → 3 → 0 → 2,
// and a template-only change (new generation) is reflected in status.observedGeneration.
func TestReplicaSet_SpecReplicasChange(t *testing.T) {
	t.Parallel()
	useSharedRS(t)
	ns := rsNamespace(t)
	waitRSStable(t, mustCreateRS(t, itRS(ns, "rs", 2)))
	scaleRS(t, ns, "rs", 3)
	scaleRS(t, ns, "rs", 0)
	scaleRS(t, ns, "rs", 2)

	var oldGeneration int64
	rs := updateRS(t, ns, "rs", func(rs *appsv1.ReplicaSet) {
		oldGeneration = rs.Generation
		rs.Spec.Template.Annotations = map[string]string{"test": "annotation"}
	})
	if rs.Generation == oldGeneration {
		t.Fatalf("generation did not change on a template update (%d)", rs.Generation)
	}
	Eventually(t, rsTimeout, "status.observedGeneration to reach the new generation", func() (bool, string) {
		cur := getRS(t, ns, "rs")
		return cur.Status.ObservedGeneration >= rs.Generation, fmt.Sprintf("observedGeneration=%d, generation=%d", cur.Status.ObservedGeneration, rs.Generation)
	})
}

// TestReplicaSet_DeletingAndFailedPods: a pod stuck terminating (finalizer) and a Failed pod are
// both replaced; the controller deletes neither, so 4 pods exist in the end.
func TestReplicaSet_DeletingAndFailedPods(t *testing.T) {
	t.Parallel()
	useSharedRS(t)
	ns := rsNamespace(t)
	waitRSStable(t, mustCreateRS(t, itRS(ns, "rs", 2)))
	pods := listPods(t, ns, fooBar())
	if len(pods) != 2 {
		t.Fatalf("%d pods (%s), want 2", len(pods), podNames(pods))
	}
	deleting, failed := pods[0], pods[1]
	clearFinalizersOnCleanup(t, ns, deleting.Name)
	updatePod(t, ns, deleting.Name, func(p *corev1.Pod) { p.Finalizers = []string{"fake.example.com/blockDeletion"} })
	if err := env.Client.CoreV1().Pods(ns).Delete(context.Background(), deleting.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	updatePodStatus(t, ns, failed.Name, func(p *corev1.Pod) { p.Status.Phase = corev1.PodFailed })

	Eventually(t, rsTimeout, "2 replacement pods (4 in all)", func() (bool, string) {
		pods = listPods(t, ns, fooBar())
		return len(pods) == 4, fmt.Sprintf("%d pods: %s", len(pods), podNames(pods))
	})
	var foundDeleting, foundFailed bool
	for _, p := range pods {
		foundDeleting = foundDeleting || p.UID == deleting.UID
		foundFailed = foundFailed || p.UID == failed.UID
	}
	if !foundDeleting || !foundFailed {
		t.Fatalf("deleting pod %s found=%v, failed pod %s found=%v; both must remain", deleting.Name, foundDeleting, failed.Name, foundFailed)
	}
	// and it stays at 4: no further creation, the ReplicaSet is stable at 2 active pods
	waitRSStable(t, getRS(t, ns, "rs"))
	if pods = listPods(t, ns, fooBar()); len(pods) != 4 {
		t.Fatalf("%d pods after the ReplicaSet settled, want 4: %s", len(pods), podNames(pods))
	}
}

// TestReplicaSet_PodDeletionCost: scaling 2 → 1 deletes the pod with the lower
// controller.kubernetes.io/pod-deletion-cost, and with equal or no costs the one with more
// restarts. With the PodDeletionCost gate off (a kcmd of its own started with
// --feature-gates=PodDeletionCost=false, the shared one stopped meanwhile: one ReplicaSet
// controller at a time) the costs are ignored. Not parallel: the gate-off case must run while
// no other test relies on the shared controller.
func TestReplicaSet_PodDeletionCost(t *testing.T) {
	cases := []struct {
		name      string
		costs     []string
		restarts  []int32
		enabled   bool
		remaining int
	}{
		{"enabled-with-different-costs", []string{"1000", "100"}, []int32{5, 0}, true, 0},
		{"enabled-with-same-costs", []string{"100", "100"}, []int32{5, 0}, true, 1},
		{"enabled-with-no-costs", nil, []int32{5, 0}, true, 1},
		{"disabled-with-different-costs", []string{"1000", "100"}, []int32{5, 0}, false, 1},
	}
	// the gate-off cases first, one at a time, each with its own kcmd
	for _, tc := range cases {
		if tc.enabled {
			continue
		}
		t.Run(tc.name, func(t *testing.T) {
			startPrivateRS(t, "--feature-gates=PodDeletionCost=false")
			podDeletionCostCase(t, tc.costs, tc.restarts, tc.remaining)
		})
	}
	useSharedRS(t)
	for _, tc := range cases {
		if !tc.enabled {
			continue
		}
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			podDeletionCostCase(t, tc.costs, tc.restarts, tc.remaining)
		})
	}
}

// podDeletionCostCase: 2 pods with the given costs and restart counts, scaled to 1; the pod at
// index remaining must be the one left.
func podDeletionCostCase(t *testing.T, costs []string, restarts []int32, remaining int) {
	t.Helper()
	ns := rsNamespace(t)
	waitRSStable(t, mustCreateRS(t, itRS(ns, "rs", 2)))
	pods := listPods(t, ns, fooBar())
	if len(pods) != 2 {
		t.Fatalf("%d pods, want 2", len(pods))
	}
	remainingUID := pods[remaining].UID
	for i, p := range pods {
		if len(costs) != 0 {
			cost := costs[i]
			updatePod(t, ns, p.Name, func(p *corev1.Pod) {
				p.Annotations = map[string]string{"controller.kubernetes.io/pod-deletion-cost": cost}
			})
		}
		rc := restarts[i]
		updatePodStatus(t, ns, p.Name, func(p *corev1.Pod) {
			p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "fake-name", Image: "fakeimage", RestartCount: rc}}
		})
	}
	updateRS(t, ns, "rs", func(rs *appsv1.ReplicaSet) { rs.Spec.Replicas = ptr.To[int32](1) })
	Eventually(t, rsTimeout, "the ReplicaSet scaled down to 1 pod", func() (bool, string) {
		pods = listPods(t, ns, fooBar())
		return len(pods) == 1, fmt.Sprintf("%d pods: %s", len(pods), podNames(pods))
	})
	if pods[0].UID != remainingUID {
		t.Errorf("remaining pod %s (uid %s, restarts %v, annotations %v), want uid %s", pods[0].Name, pods[0].UID,
			pods[0].Status.ContainerStatuses, pods[0].Annotations, remainingUID)
	}
}

// TestReplicaSet_OverlappingRSs: two ReplicaSets with the same selector (1 and 2 replicas) end
// with 3 pods and each status.replicas equal to its spec; the controller ref keeps one from
// taking the other's pods.
func TestReplicaSet_OverlappingRSs(t *testing.T) {
	t.Parallel()
	useSharedRS(t)
	ns := rsNamespace(t)
	for i := 0; i < 2; i++ {
		waitRSStable(t, mustCreateRS(t, itRS(ns, fmt.Sprintf("rs-%d", i+1), int32(i+1))))
	}
	if pods := listPods(t, ns, fooBar()); len(pods) != 3 {
		t.Errorf("%d pods (%s), want 3", len(pods), podNames(pods))
	}
	for i := 0; i < 2; i++ {
		rs := getRS(t, ns, fmt.Sprintf("rs-%d", i+1))
		if rs.Status.Replicas != *rs.Spec.Replicas {
			t.Fatalf("%s: status.replicas %d, spec.replicas %d", rs.Name, rs.Status.Replicas, *rs.Spec.Replicas)
		}
	}
}

// TestReplicaSet_PodOrphaningAndAdoptionWhenLabelsChange: relabelling an owned pod so it no
// longer matches removes its controller ref; relabelling it back makes the ReplicaSet adopt it
// again, or (as it has made a replacement meanwhile) delete it, leaving one owned pod.
func TestReplicaSet_PodOrphaningAndAdoptionWhenLabelsChange(t *testing.T) {
	t.Parallel()
	useSharedRS(t)
	ns := rsNamespace(t)
	rs := waitRSStable(t, mustCreateRS(t, itRS(ns, "rs", 1)))
	pods := listPods(t, ns, fooBar())
	if len(pods) != 1 {
		t.Fatalf("%d pods, want 1", len(pods))
	}
	pod := pods[0]
	if metav1.GetControllerOf(&pod) == nil {
		t.Fatalf("pod %s has no controller ref", pod.Name)
	}
	updatePod(t, ns, pod.Name, func(p *corev1.Pod) { p.Labels = map[string]string{"new-foo": "new-bar"} })
	Eventually(t, rsTimeout, "the relabelled pod released (no controller ref)", func() (bool, string) {
		p, err := env.Client.CoreV1().Pods(ns).Get(context.Background(), pod.Name, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		return metav1.GetControllerOf(p) == nil, fmt.Sprintf("ownerReferences %+v", p.OwnerReferences)
	})

	updatePod(t, ns, pod.Name, func(p *corev1.Pod) { p.Labels = fooBar() })
	var final *corev1.Pod
	Eventually(t, rsTimeout, "the pod adopted again, or deleted as one too many", func() (bool, string) {
		p, err := env.Client.CoreV1().Pods(ns).Get(context.Background(), pod.Name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			left := listPods(t, ns, fooBar())
			if len(left) != 1 {
				return false, fmt.Sprintf("pod deleted, %d pods left: %s", len(left), podNames(left))
			}
			final = &left[0]
			return true, ""
		}
		if err != nil {
			return false, err.Error()
		}
		final = p
		return metav1.GetControllerOf(p) != nil, fmt.Sprintf("ownerReferences %+v", p.OwnerReferences)
	})
	if ref := metav1.GetControllerOf(final); ref == nil || ref.UID != rs.UID {
		t.Fatalf("pod %s controller ref %+v, want the ReplicaSet (uid %s)", final.Name, ref, rs.UID)
	}
	// either way the ReplicaSet settles at exactly one pod
	waitRSStable(t, rs)
	if left := listPods(t, ns, fooBar()); len(left) != 1 {
		t.Fatalf("%d matching pods after settling, want 1: %s", len(left), podNames(left))
	}
}

// TestReplicaSet_GeneralPodAdoption: the ReplicaSet adds its controller ref next to a
// non-controller StatefulSet ref (2 refs), and turns a non-controller ref to itself into its
// controller ref (1 ref).
func TestReplicaSet_GeneralPodAdoption(t *testing.T) {
	t.Parallel()
	useSharedRS(t)
	ns := rsNamespace(t)
	rs := waitRSStable(t, mustCreateRS(t, itRS(ns, "rs", 1)))
	pods := listPods(t, ns, fooBar())
	if len(pods) != 1 {
		t.Fatalf("%d pods, want 1", len(pods))
	}
	pod := pods[0]
	check := func(ref metav1.OwnerReference, wantRefs int) {
		t.Helper()
		updatePod(t, ns, pod.Name, func(p *corev1.Pod) { p.OwnerReferences = []metav1.OwnerReference{ref} })
		var p *corev1.Pod
		Eventually(t, rsTimeout, "the pod to have a controller ref again", func() (bool, string) {
			var err error
			p, err = env.Client.CoreV1().Pods(ns).Get(context.Background(), pod.Name, metav1.GetOptions{})
			if err != nil {
				return false, err.Error()
			}
			return metav1.GetControllerOf(p) != nil, fmt.Sprintf("ownerReferences %+v", p.OwnerReferences)
		})
		if c := metav1.GetControllerOf(p); c.UID != rs.UID {
			t.Fatalf("controller ref uid %s, want the ReplicaSet's %s", c.UID, rs.UID)
		}
		if len(p.OwnerReferences) != wantRefs {
			t.Fatalf("%d owner references (%+v), want %d", len(p.OwnerReferences), p.OwnerReferences, wantRefs)
		}
	}
	// Upstream points the non-controller ref at a StatefulSet that does not exist; that works in
	// its integration test because no garbage collector runs there. Here other tests run kcmd's
	// garbage collector beside this one, and a pod whose only owner is dangling gets deleted (and
	// a dangling ref beside a live controller gets removed), so the StatefulSet is made real: a
	// zero-replica one no controller acts on.
	sts := mustCreateIdleStatefulSet(t, ns, rs.Name)
	check(metav1.OwnerReference{UID: sts.UID, APIVersion: "apps/v1", Kind: "StatefulSet", Name: sts.Name, Controller: ptr.To(false)}, 2)
	check(metav1.OwnerReference{UID: rs.UID, APIVersion: "apps/v1", Kind: "ReplicaSet", Name: rs.Name, Controller: ptr.To(false)}, 1)
}

// mustCreateIdleStatefulSet creates a StatefulSet with zero replicas whose selector matches nothing
// the tests create, so it is a live owner no controller changes.
func mustCreateIdleStatefulSet(t *testing.T, ns, name string) *appsv1.StatefulSet {
	t.Helper()
	lbl := map[string]string{"kcmd-e2e-idle-statefulset": name}
	sts := &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: appsv1.StatefulSetSpec{
			Replicas: ptr.To(int32(0)),
			Selector: &metav1.LabelSelector{MatchLabels: lbl},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: lbl},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "kcmd.invalid/idle"}}},
			},
		},
	}
	out, err := env.Client.AppsV1().StatefulSets(ns).Create(context.Background(), sts, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestReplicaSet_ReadyAndAvailableReplicas: with minReadySeconds 3600, a pod not Ready, one Ready
// since now and one Ready for 2 h give replicas 3, readyReplicas 2, availableReplicas 1.
func TestReplicaSet_ReadyAndAvailableReplicas(t *testing.T) {
	t.Parallel()
	useSharedRS(t)
	ns := rsNamespace(t)
	spec := itRS(ns, "rs", 3)
	spec.Spec.MinReadySeconds = 3600
	rs := waitRSStable(t, mustCreateRS(t, spec))
	if rs.Status.AvailableReplicas != 0 {
		t.Fatalf("availableReplicas %d before any pod is ready, want 0", rs.Status.AvailableReplicas)
	}
	pods := listPods(t, ns, fooBar())
	if len(pods) != 3 {
		t.Fatalf("%d pods, want 3", len(pods))
	}
	setReadyCondition(t, ns, pods[0].Name, corev1.ConditionFalse, time.Now())
	setReadyCondition(t, ns, pods[1].Name, corev1.ConditionTrue, time.Now())
	setReadyCondition(t, ns, pods[2].Name, corev1.ConditionTrue, time.Now().Add(-120*time.Minute))
	Eventually(t, rsTimeout, "replicas 3, ready 2, available 1", func() (bool, string) {
		cur := getRS(t, ns, "rs")
		st := cur.Status
		return st.Replicas == 3 && st.ReadyReplicas == 2 && st.AvailableReplicas == 1,
			fmt.Sprintf("replicas %d, ready %d, available %d", st.Replicas, st.ReadyReplicas, st.AvailableReplicas)
	})
}

// TestReplicaSet_RSScaleSubresource: the scale subresource reads spec.replicas, and writing it
// (3, then 0) changes spec.replicas.
func TestReplicaSet_RSScaleSubresource(t *testing.T) {
	t.Parallel()
	useSharedRS(t)
	ns := rsNamespace(t)
	waitRSStable(t, mustCreateRS(t, itRS(ns, "rs", 1)))
	rsc := env.Client.AppsV1().ReplicaSets(ns)
	ctx := context.Background()
	for _, n := range []int32{3, 0} {
		cur := getRS(t, ns, "rs")
		scale, err := rsc.GetScale(ctx, "rs", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if scale.Spec.Replicas != *cur.Spec.Replicas {
			t.Fatalf("scale.spec.replicas %d, spec.replicas %d", scale.Spec.Replicas, *cur.Spec.Replicas)
		}
		if err := retry.RetryOnConflict(retry.DefaultBackoff, func() error {
			s, err := rsc.GetScale(ctx, "rs", metav1.GetOptions{})
			if err != nil {
				return err
			}
			s.Spec.Replicas = n
			_, err = rsc.UpdateScale(ctx, "rs", s, metav1.UpdateOptions{})
			return err
		}); err != nil {
			t.Fatal(err)
		}
		if cur = getRS(t, ns, "rs"); *cur.Spec.Replicas != n {
			t.Fatalf("spec.replicas %d after writing the scale subresource, want %d", *cur.Spec.Replicas, n)
		}
		// beyond upstream's check: the controller follows the new size
		waitRSStable(t, cur)
	}
}

// TestReplicaSet_ExtraPodsAdoptionAndDeletion: three matching orphans exist before the controller
// starts; a ReplicaSet of 2 adopts them and deletes the one too many.
func TestReplicaSet_ExtraPodsAdoptionAndDeletion(t *testing.T) {
	stopSharedRS(t) // no controller may see the objects before they are all made
	ns := rsNamespace(t)
	rs := mustCreateRS(t, itRS(ns, "rs", 2))
	orig := map[types.UID]bool{}
	for i := 0; i < 3; i++ {
		orig[mustCreatePod(t, itPod(ns, fmt.Sprintf("pod-%d", i+1))).UID] = true
	}
	waitListCacheHasPods(t, ns, 3)
	startPrivateRS(t)
	rs = waitRSStable(t, rs)
	var pods []corev1.Pod
	Eventually(t, rsTimeout, "2 pods left", func() (bool, string) {
		pods = listPods(t, ns, fooBar())
		return len(pods) == 2, fmt.Sprintf("%d pods: %s", len(pods), podNames(pods))
	})
	for _, p := range pods {
		if !ownedBy(&p, rs) {
			t.Errorf("pod %s not controlled by the ReplicaSet: %+v", p.Name, p.OwnerReferences)
		}
		// the controller saw the orphans on its first sync (it starts after its informers synced),
		// so it adopted them rather than creating pods
		if !orig[p.UID] {
			t.Errorf("pod %s was created by the controller; the pre-existing orphans should have been adopted", p.Name)
		}
	}
}

// TestReplicaSet_FullyLabeledReplicas: after the template gains a label the selector does not
// have, only the pod relabelled to match the template counts as fully labeled.
func TestReplicaSet_FullyLabeledReplicas(t *testing.T) {
	t.Parallel()
	useSharedRS(t)
	ns := rsNamespace(t)
	waitRSStable(t, mustCreateRS(t, itRS(ns, "rs", 2)))
	extra := map[string]string{"foo": "bar", "extraKey": "extraValue"}
	updateRS(t, ns, "rs", func(rs *appsv1.ReplicaSet) { rs.Spec.Template.Labels = extra })
	pods := listPods(t, ns, fooBar())
	if len(pods) != 2 {
		t.Fatalf("%d pods, want 2", len(pods))
	}
	updatePod(t, ns, pods[0].Name, func(p *corev1.Pod) { p.Labels = extra })
	Eventually(t, rsTimeout, "replicas 2, fullyLabeledReplicas 1", func() (bool, string) {
		st := getRS(t, ns, "rs").Status
		return st.Replicas == 2 && st.FullyLabeledReplicas == 1, fmt.Sprintf("replicas %d, fullyLabeledReplicas %d", st.Replicas, st.FullyLabeledReplicas)
	})
}

// TestReplicaSet_ReplicaSetsAppsV1DefaultGCPolicy: deleting an apps/v1 ReplicaSet with default
// options keeps exactly its own finalizer (no orphan finalizer is added).
func TestReplicaSet_ReplicaSetsAppsV1DefaultGCPolicy(t *testing.T) {
	t.Parallel()
	useSharedRS(t)
	ns := rsNamespace(t)
	const fin = "kube.io/dummy-finalizer"
	spec := itRS(ns, "rs", 2)
	spec.Finalizers = []string{fin}
	waitRSStable(t, mustCreateRS(t, spec))
	if pods := listPods(t, ns, fooBar()); len(pods) != 2 {
		t.Fatalf("%d pods, want 2", len(pods))
	}
	rsc := env.Client.AppsV1().ReplicaSets(ns)
	if err := rsc.Delete(context.Background(), "rs", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	Eventually(t, rsTimeout, "deletionTimestamp set, finalizers exactly ["+fin+"]", func() (bool, string) {
		rs := getRS(t, ns, "rs")
		if rs.DeletionTimestamp == nil {
			return false, "no deletionTimestamp"
		}
		if !reflect.DeepEqual(rs.Finalizers, []string{fin}) {
			t.Fatalf("finalizers %v, want [%s]", rs.Finalizers, fin)
		}
		return true, ""
	})
	updateRS(t, ns, "rs", func(rs *appsv1.ReplicaSet) {
		var keep []string
		for _, f := range rs.Finalizers {
			if f != fin {
				keep = append(keep, f)
			}
		}
		rs.Finalizers = keep
	})
	_ = rsc.Delete(context.Background(), "rs", metav1.DeleteOptions{})
}

// waitTerminatingReplicas waits for status.terminatingReplicas to be want.
func waitTerminatingReplicas(t *testing.T, ns, name string, want int32) {
	t.Helper()
	Eventually(t, rsTimeout, fmt.Sprintf("status.terminatingReplicas=%d", want), func() (bool, string) {
		rs := getRS(t, ns, name)
		got := rs.Status.TerminatingReplicas
		if got == nil {
			// kcmd runs with DeploymentReplicaSetTerminatingReplicas on (upstream's default since
			// 1.35), where the field is always reported, 0 included
			return false, "terminatingReplicas absent"
		}
		return *got == want, fmt.Sprintf("terminatingReplicas %d", *got)
	})
}

// TestReplicaSet_TerminatingReplicas: pods that are terminating (deletionTimestamp set, grace
// period running on a node) are counted in status.terminatingReplicas and replaced.
//
// Upstream toggles the DeploymentReplicaSetTerminatingReplicas gate during the test (off, on,
// off) in one process. kcmd's gates are fixed per process (--feature-gates), so the gate-off
// expectations run first against a kcmd of their own started with the gate off (the shared
// ReplicaSet kcmd stopped meanwhile: one controller at a time; the test is not parallel for
// that reason), and the gate-on steps against the shared kcmd (upstream's default: on).
func TestReplicaSet_TerminatingReplicas(t *testing.T) {
	t.Run("gate-off", func(t *testing.T) {
		startPrivateRS(t, "--feature-gates=DeploymentReplicaSetTerminatingReplicas=false")
		ns := rsNamespace(t)
		spec := itRS(ns, "rs", 5)
		spec.Spec.Template.Spec.NodeName = "fake-node"
		spec.Spec.Template.Spec.TerminationGracePeriodSeconds = ptr.To[int64](300)
		rs := waitRSStable(t, mustCreateRS(t, spec))
		pods := listPods(t, ns, fooBar())
		if len(pods) != 5 {
			t.Fatalf("%d pods, want 5", len(pods))
		}
		t.Cleanup(func() {
			_ = env.Client.AppsV1().ReplicaSets(ns).Delete(context.Background(), "rs", metav1.DeleteOptions{})
			for _, p := range listPods(t, ns, fooBar()) {
				_ = env.Client.CoreV1().Pods(ns).Delete(context.Background(), p.Name, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)})
			}
		})
		// gate off: terminating pods are still replaced, but never counted: the field is absent
		for i, want := range []int{6, 7} {
			if err := env.Client.CoreV1().Pods(ns).Delete(context.Background(), pods[i].Name, metav1.DeleteOptions{}); err != nil {
				t.Fatal(err)
			}
			Eventually(t, rsTimeout, fmt.Sprintf("%d pods (5 active, %d terminating)", want, i+1), func() (bool, string) {
				all := listPods(t, ns, fooBar())
				return len(all) == want, fmt.Sprintf("%d pods", len(all))
			})
			rs = waitRSStable(t, rs)
			if got := getRS(t, ns, "rs").Status.TerminatingReplicas; got != nil {
				t.Fatalf("gate off: status.terminatingReplicas = %d, want the field absent", *got)
			}
		}
	})
	useSharedRS(t)
	t.Run("gate-on", func(t *testing.T) {
		ns := rsNamespace(t)
		spec := itRS(ns, "rs", 5)
		spec.Spec.Template.Spec.NodeName = "fake-node"
		spec.Spec.Template.Spec.TerminationGracePeriodSeconds = ptr.To[int64](300)
		rs := waitRSStable(t, mustCreateRS(t, spec))
		waitTerminatingReplicas(t, ns, "rs", 0)
		pods := listPods(t, ns, fooBar())
		if len(pods) != 5 {
			t.Fatalf("%d pods, want 5", len(pods))
		}
		for _, p := range pods {
			setReadyCondition(t, ns, p.Name, corev1.ConditionTrue, time.Now())
		}
		t.Cleanup(func() {
			// nothing will ever finish these pods' grace period: remove them (the ReplicaSet
			// first, so that no replacements follow)
			_ = env.Client.AppsV1().ReplicaSets(ns).Delete(context.Background(), "rs", metav1.DeleteOptions{})
			for _, p := range listPods(t, ns, fooBar()) {
				_ = env.Client.CoreV1().Pods(ns).Delete(context.Background(), p.Name, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)})
			}
		})
		del := func(name string, grace *int64) {
			t.Helper()
			if err := env.Client.CoreV1().Pods(ns).Delete(context.Background(), name, metav1.DeleteOptions{GracePeriodSeconds: grace}); err != nil {
				t.Fatal(err)
			}
		}
		// upstream, gate off: deleting pod 0 leaves terminatingReplicas at 0; gate on: 1
		del(pods[0].Name, nil)
		waitRSStable(t, rs)
		waitTerminatingReplicas(t, ns, "rs", 1)
		// gate on: deleting pod 1 → 2 (upstream expects 2 here, with the gate on)
		del(pods[1].Name, nil)
		waitRSStable(t, rs)
		waitTerminatingReplicas(t, ns, "rs", 2)
		// the status follows when a terminating pod goes away: force-delete pod 0 → 1
		del(pods[0].Name, ptr.To[int64](0))
		waitTerminatingReplicas(t, ns, "rs", 1)
		// upstream, gate off again: deleting pod 2 → 0; gate on: 2
		del(pods[2].Name, nil)
		waitRSStable(t, rs)
		waitTerminatingReplicas(t, ns, "rs", 2)
		// 5 active pods and 2 terminating ones (pods 1 and 2)
		if all := listPods(t, ns, fooBar()); len(all) != 7 {
			t.Fatalf("%d pods, want 7 (5 active + 2 terminating): %s", len(all), podNames(all))
		}
	})
}
