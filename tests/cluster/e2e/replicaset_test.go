package e2e

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

var (
	kcmdRSOnce sync.Once
	kcmdRS     *kcmdProc // the shared kcmd running the ReplicaSet controller
)

// startKcmdReplicaSet runs one kcmd with only the ReplicaSet controller for the rest of the test
// binary (upstream kube-controller-manager's replicaset controller stays off), so every
// TestReplicaSet_* test is reconciled by kcmd.
func startKcmdReplicaSet(t *testing.T) {
	t.Helper()
	kcmdRSOnce.Do(func() {
		kcmdRS = startKcmdShared(t, "--controllers=replicaset-controller", "--secure-port=0", "--leader-elect=false",
			"--concurrent-replicaset-syncs=3", "--kube-api-qps=200", "--kube-api-burst=400",
			// crash tests kill workers mid-sync; keep their orphaned expectations short
			"--replicaset-orphaned-expectations-grace=5s")
	})
}

func activePods(t *testing.T, ns, selector string, owner types.UID) (owned, total int) {
	pods, err := env.Client.CoreV1().Pods(ns).List(context.Background(), metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pods.Items {
		if p.DeletionTimestamp != nil {
			continue
		}
		total++
		if ref := metav1.GetControllerOf(&p); ref != nil && ref.UID == owner {
			owned++
		}
	}
	return owned, total
}

func waitReplicas(t *testing.T, ns, name string, want int32) *appsv1.ReplicaSet {
	t.Helper()
	var rs *appsv1.ReplicaSet
	Eventually(t, 90*time.Second, fmt.Sprintf("%s/%s with %d pods and status.replicas=%d", ns, name, want, want), func() (bool, string) {
		var err error
		rs, err = env.Client.AppsV1().ReplicaSets(ns).Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		owned, total := activePods(t, ns, "app="+name, rs.UID)
		ok := owned == int(want) && total == int(want) && rs.Status.Replicas == want &&
			rs.Status.ObservedGeneration == rs.Generation
		return ok, fmt.Sprintf("owned=%d total=%d status.replicas=%d observedGeneration=%d/%d", owned, total,
			rs.Status.Replicas, rs.Status.ObservedGeneration, rs.Generation)
	})
	return rs
}

// TestReplicaSet_KcmdCreatesScalesAndAdopts: kcmd's ReplicaSet controller, alone, creates the
// pods of a new ReplicaSet with a controller owner reference, reports them in status, scales
// up and down, records SuccessfulCreate/SuccessfulDelete events, adopts a matching orphan and
// releases a pod whose labels stop matching.
func TestReplicaSet_KcmdCreatesScalesAndAdopts(t *testing.T) {
	startKcmdReplicaSet(t)
	ctx := context.Background()
	ns := Namespace(t)
	rs, err := env.Client.AppsV1().ReplicaSets(ns).Create(ctx, demoReplicaSet(ns, "web", 3), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	rs = waitReplicas(t, ns, "web", 3)
	pods, _ := env.Client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "app=web"})
	for _, p := range pods.Items {
		ref := metav1.GetControllerOf(&p)
		if ref == nil || ref.Kind != "ReplicaSet" || ref.Name != "web" || ref.BlockOwnerDeletion == nil || !*ref.BlockOwnerDeletion {
			t.Errorf("pod %s: controller ref %+v, want ReplicaSet web with blockOwnerDeletion", p.Name, ref)
		}
		if p.GenerateName != "web-" {
			t.Errorf("pod %s: generateName %q, want web-", p.Name, p.GenerateName)
		}
	}

	// scale up, then down
	for _, n := range []int32{5, 1} {
		cur, err := env.Client.AppsV1().ReplicaSets(ns).Get(ctx, "web", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		cur.Spec.Replicas = &n
		if _, err := env.Client.AppsV1().ReplicaSets(ns).Update(ctx, cur, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		waitReplicas(t, ns, "web", n)
	}

	// events as upstream records them
	Eventually(t, 30*time.Second, "SuccessfulCreate and SuccessfulDelete events", func() (bool, string) {
		evs, err := env.Client.CoreV1().Events(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err.Error()
		}
		var create, del bool
		for _, e := range evs.Items {
			if e.InvolvedObject.Kind != "ReplicaSet" || e.InvolvedObject.Name != "web" || e.Source.Component != "replicaset-controller" {
				continue
			}
			create = create || (e.Reason == "SuccessfulCreate" && e.Type == corev1.EventTypeNormal)
			del = del || (e.Reason == "SuccessfulDelete" && e.Type == corev1.EventTypeNormal)
		}
		return create && del, fmt.Sprintf("create=%v delete=%v among %d events", create, del, len(evs.Items))
	})

	// an orphan with matching labels is adopted (and then one pod too many is deleted)
	orphan := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "orphan", Labels: map[string]string{"app": "web"}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "registry.invalid/pause:1"}}}}
	if _, err := env.Client.CoreV1().Pods(ns).Create(ctx, orphan, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	Eventually(t, 60*time.Second, "the orphan adopted or deleted, one pod left", func() (bool, string) {
		owned, total := activePods(t, ns, "app=web", rs.UID)
		return owned == 1 && total == 1, fmt.Sprintf("owned=%d total=%d", owned, total)
	})

	// a pod whose labels stop matching is released and replaced
	pods, _ = env.Client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "app=web"})
	var victim string
	for _, p := range pods.Items {
		if p.DeletionTimestamp == nil {
			victim = p.Name
		}
	}
	patch := []byte(`{"metadata":{"labels":{"app":"elsewhere"}}}`)
	if _, err := env.Client.CoreV1().Pods(ns).Patch(ctx, victim, types.StrategicMergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	Eventually(t, 60*time.Second, "released pod without controller ref, a replacement owned", func() (bool, string) {
		p, err := env.Client.CoreV1().Pods(ns).Get(ctx, victim, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		owned, _ := activePods(t, ns, "app=web", rs.UID)
		return metav1.GetControllerOf(p) == nil && owned == 1, fmt.Sprintf("released=%v owned=%d", metav1.GetControllerOf(p) == nil, owned)
	})
}
