package e2e

// kcmd's garbage collector against the real cluster (upstream kube-controller-manager is not
// running, so no other garbage collector acts). Each test stops the shared ReplicaSet kcmd and
// runs its own kcmd with the ReplicaSet controller and the garbage collector, so that exactly
// one ReplicaSet controller exists while it runs.

import (
	"context"
	"fmt"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
)

func startKcmdGC(t *testing.T) *kcmdProc {
	t.Helper()
	stopSharedRS(t)
	p := startKcmd(t, nil, "--controllers=replicaset-controller,garbage-collector-controller", "--secure-port=0",
		"--leader-elect=false", "--concurrent-gc-syncs=4", "--kube-api-qps=200", "--kube-api-burst=400", "--v=4")
	t.Cleanup(func() { dumpKcmdLogs(t, p) })
	return p
}

// gcRSWithPods creates a ReplicaSet of n pods and waits until kcmd's ReplicaSet controller made
// them (which also means informerd, where the GC's graph lives, has seen them).
func gcRSWithPods(t *testing.T, ns, name string, n int32) (*appsv1.ReplicaSet, []corev1.Pod) {
	t.Helper()
	rs := mustCreateRS(t, itRS(ns, name, n))
	var pods []corev1.Pod
	Eventually(t, 60*time.Second, fmt.Sprintf("%d pods of %s/%s", n, ns, name), func() (bool, string) {
		pods = pods[:0]
		for _, p := range listPods(t, ns, fooBar()) {
			if ownedBy(&p, rs) && p.DeletionTimestamp == nil {
				pods = append(pods, p)
			}
		}
		return len(pods) == int(n), fmt.Sprintf("%d pods owned", len(pods))
	})
	return rs, pods
}

func deleteRS(t *testing.T, rs *appsv1.ReplicaSet, policy metav1.DeletionPropagation) {
	t.Helper()
	err := env.Client.AppsV1().ReplicaSets(rs.Namespace).Delete(context.Background(), rs.Name,
		metav1.DeleteOptions{PropagationPolicy: &policy})
	if err != nil {
		t.Fatalf("deleting %s/%s (%s): %v", rs.Namespace, rs.Name, policy, err)
	}
}

func rsGone(t *testing.T, ns, name string) (bool, *appsv1.ReplicaSet) {
	rs, err := env.Client.AppsV1().ReplicaSets(ns).Get(context.Background(), name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return true, nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return false, rs
}

// Upstream TestCascadingDeletion's core: deleting an owner in the background deletes its
// dependents; an object with no owner is left alone.
func TestGC_CascadingDeletionBackground(t *testing.T) {
	ns := rsNamespace(t)
	startKcmdGC(t)
	bystander := mustCreatePod(t, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "no-owner"},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "fakeimage"}}},
	})
	rs, _ := gcRSWithPods(t, ns, "cascade", 3)
	start := time.Now()
	deleteRS(t, rs, metav1.DeletePropagationBackground)
	Eventually(t, 60*time.Second, "the ReplicaSet's pods deleted by the GC", func() (bool, string) {
		n := len(listPods(t, ns, fooBar()))
		return n == 0, fmt.Sprintf("%d pods left", n)
	})
	t.Logf("3 dependents collected %.2f s after the background delete", time.Since(start).Seconds())
	if gone, _ := rsGone(t, ns, rs.Name); !gone {
		t.Fatalf("ReplicaSet %s/%s still exists", ns, rs.Name)
	}
	time.Sleep(2 * time.Second)
	if _, err := env.Client.CoreV1().Pods(ns).Get(context.Background(), bystander.Name, metav1.GetOptions{}); err != nil {
		t.Fatalf("the pod without owners must stay: %v", err)
	}
}

// Upstream TestOrphaning: Orphan keeps the dependents, strips the owner's reference from them,
// and removes the orphan finalizer so that the owner goes away.
func TestGC_Orphan(t *testing.T) {
	ns := rsNamespace(t)
	startKcmdGC(t)
	rs, pods := gcRSWithPods(t, ns, "orphan", 3)
	start := time.Now()
	deleteRS(t, rs, metav1.DeletePropagationOrphan)
	Eventually(t, 60*time.Second, "the ReplicaSet gone (orphan finalizer removed)", func() (bool, string) {
		gone, cur := rsGone(t, ns, rs.Name)
		if gone {
			return true, ""
		}
		return false, fmt.Sprintf("finalizers %v, deletionTimestamp %v", cur.Finalizers, cur.DeletionTimestamp)
	})
	t.Logf("orphaned 3 dependents in %.2f s", time.Since(start).Seconds())
	time.Sleep(2 * time.Second)
	for _, p := range pods {
		cur, err := env.Client.CoreV1().Pods(ns).Get(context.Background(), p.Name, metav1.GetOptions{})
		if err != nil {
			t.Fatalf("orphaned pod %s: %v", p.Name, err)
		}
		if cur.DeletionTimestamp != nil {
			t.Fatalf("orphaned pod %s is being deleted", p.Name)
		}
		for _, ref := range cur.OwnerReferences {
			if ref.UID == rs.UID {
				t.Fatalf("pod %s still references the deleted ReplicaSet: %+v", p.Name, cur.OwnerReferences)
			}
		}
	}
}

// Upstream TestBlockingOwnerRefDoesBlock / the foreground e2e: the owner stays (deletionTimestamp
// and the foregroundDeletion finalizer) until its blocking dependents are gone, then goes.
func TestGC_Foreground(t *testing.T) {
	ns := rsNamespace(t)
	startKcmdGC(t)
	rs, pods := gcRSWithPods(t, ns, "foreground", 3)
	for _, p := range pods {
		var ref *metav1.OwnerReference
		for i := range p.OwnerReferences {
			if p.OwnerReferences[i].UID == rs.UID {
				ref = &p.OwnerReferences[i]
			}
		}
		if ref == nil || !ptr.Deref(ref.BlockOwnerDeletion, false) {
			t.Fatalf("pod %s: the ReplicaSet controller's reference should block owner deletion: %+v", p.Name, p.OwnerReferences)
		}
	}
	start := time.Now()
	deleteRS(t, rs, metav1.DeletePropagationForeground)
	sawFinalizer := false
	Eventually(t, 60*time.Second, "the ReplicaSet gone after its pods", func() (bool, string) {
		gone, cur := rsGone(t, ns, rs.Name)
		left := len(listPods(t, ns, fooBar()))
		if gone {
			if left != 0 {
				t.Fatalf("the ReplicaSet is gone but %d of its pods exist", left)
			}
			return true, ""
		}
		if cur.DeletionTimestamp == nil {
			t.Fatalf("the ReplicaSet is not being deleted")
		}
		has := false
		for _, f := range cur.Finalizers {
			has = has || f == metav1.FinalizerDeleteDependents
		}
		if !has && left > 0 {
			t.Fatalf("the ReplicaSet lost %s while %d pods exist", metav1.FinalizerDeleteDependents, left)
		}
		sawFinalizer = sawFinalizer || has
		return false, fmt.Sprintf("%d pods left, finalizers %v", left, cur.Finalizers)
	})
	if !sawFinalizer {
		t.Logf("the ReplicaSet was gone at the first poll (finalizer not observed)")
	}
	t.Logf("foreground cascade of 3 pods in %.2f s", time.Since(start).Seconds())
}

// Upstream TestCascadingDeletion's "pod whose owner does not exist": an owner uid that never
// existed is verified absent with a GET, and the dependent is deleted.
func TestGC_DanglingOwnerReference(t *testing.T) {
	ns := rsNamespace(t)
	startKcmdGC(t)
	uid := types.UID(fmt.Sprintf("doesnotexist-%d", time.Now().UnixNano()))
	pod := mustCreatePod(t, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "dangling",
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "ReplicationController", Name: "ghost", UID: uid}}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "fakeimage"}}},
	})
	start := time.Now()
	Eventually(t, 60*time.Second, "the pod with a dangling owner deleted", func() (bool, string) {
		_, err := env.Client.CoreV1().Pods(ns).Get(context.Background(), pod.Name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return true, ""
		}
		return false, fmt.Sprintf("pod exists (err %v)", err)
	})
	t.Logf("dangling dependent collected in %.2f s", time.Since(start).Seconds())
}
