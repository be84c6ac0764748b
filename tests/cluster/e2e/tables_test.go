// SPDX-License-Identifier: Apache-2.0

package e2e

// Issue 21's fixed tables, at a scale a unit test cannot show against the real apiserver:
//   - TestTables_PodWith300OwnerRefs: a pod with 300 ownerReferences (the apiserver bounds only
//     the object's size) is cached: the ReplicaSet controller counts and adopts it instead of
//     creating another pod, and the garbage collector deletes it once its 300 owners are gone.
//     Before issue 21 the arena refused more than 255 references, informerd skipped the pod
//     and both controllers acted as if it did not exist.
//   - TestTables_ManyReplicaSets: ReplicaSets beyond the expectations table's old 4,096 slots.
//     Every synced ReplicaSet holds a slot (its consistency record), so with 5,000 of them
//     synced a ReplicaSet scaled up afterwards must still get its pods. 5,000 runs only with
//     KCMD_E2E_SCALE=1, any count with KCMD_E2E_TABLES_RS=N (issue 21's acceptance: 50000);
//     the default run does the same with 300.
//   - TestTables_InformerNeverSkips: informerd's informer with the arena's writes failing
//     (fault seam) during a LIST and during a WATCH event: the object is never skipped, the
//     informer relists (build/t/informerd/tests/e2e-informer, a C program: the seam is
//     in-process).

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

func TestTables_PodWith300OwnerRefs(t *testing.T) {
	ctx := context.Background()
	const nOwners = 300
	ns := rsNamespace(t)
	stopSharedRS(t) // one ReplicaSet controller and one GC: this test's kcmd
	p := startKcmd(t, nil, "--controllers=replicaset-controller,garbage-collector-controller", "--secure-port=0",
		"--leader-elect=false", "--kube-api-qps=200", "--kube-api-burst=400", "--v=4")
	t.Cleanup(func() { dumpKcmdLogs(t, p) })

	// 300 ConfigMaps as owners (the GC watches configmaps)
	refs := make([]metav1.OwnerReference, nOwners)
	err := hrtParallel(nOwners, 16, func(i int) error {
		cm, err := env.Client.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("owner-%03d", i)}}, metav1.CreateOptions{})
		if err != nil {
			return err
		}
		refs[i] = metav1.OwnerReference{APIVersion: "v1", Kind: "ConfigMap", Name: cm.Name, UID: cm.UID}
		return nil
	})
	if err != nil {
		t.Fatalf("creating the owners: %v", err)
	}
	// the pod: 300 references, none a controller; it matches the ReplicaSet made next
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "many-owners", Labels: map[string]string{"app": "tbl"},
			OwnerReferences: refs},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "registry.invalid/pause:1"}}},
	}
	if _, err := env.Client.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatalf("the apiserver refused a pod with %d ownerReferences: %v", nOwners, err)
	}
	rs := demoReplicaSet(ns, "tbl", 1)
	rs, err = env.Client.AppsV1().ReplicaSets(ns).Create(ctx, rs, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// The ReplicaSet sees the pod in the cache: it adopts it (a 301st reference, the
	// controller) and creates nothing.
	hrtWait(t, 60*time.Second, 200*time.Millisecond, "the pod adopted", func() (bool, string) {
		got, err := env.Client.CoreV1().Pods(ns).Get(ctx, "many-owners", metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		c := metav1.GetControllerOf(got)
		if c == nil || c.UID != rs.UID {
			return false, fmt.Sprintf("%d references, no controller yet", len(got.OwnerReferences))
		}
		return len(got.OwnerReferences) == nOwners+1, fmt.Sprintf("%d references", len(got.OwnerReferences))
	})
	hrtWait(t, 30*time.Second, 200*time.Millisecond, "status.replicas 1", func() (bool, string) {
		cur, err := env.Client.AppsV1().ReplicaSets(ns).Get(ctx, "tbl", metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		return cur.Status.Replicas == 1 && cur.Status.ObservedGeneration == cur.Generation,
			fmt.Sprintf("replicas %d, observed %d/%d", cur.Status.Replicas, cur.Status.ObservedGeneration, cur.Generation)
	})
	for end := time.Now().Add(3 * time.Second); time.Now().Before(end); time.Sleep(300 * time.Millisecond) {
		pods, err := env.Client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(pods.Items) != 1 {
			t.Fatalf("%d pods: the ReplicaSet did not count the pod with %d owners (not cached?)",
				len(pods.Items), nOwners)
		}
	}

	// The garbage collector: the ReplicaSet goes with the orphan policy (the pod loses its
	// controller reference), then the 300 ConfigMaps; with every owner gone the pod is garbage.
	orphan := metav1.DeletePropagationOrphan
	if err := env.Client.AppsV1().ReplicaSets(ns).Delete(ctx, "tbl", metav1.DeleteOptions{PropagationPolicy: &orphan}); err != nil {
		t.Fatal(err)
	}
	hrtWait(t, 60*time.Second, 200*time.Millisecond, "the pod orphaned by the GC", func() (bool, string) {
		got, err := env.Client.CoreV1().Pods(ns).Get(ctx, "many-owners", metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		return metav1.GetControllerOf(got) == nil && len(got.OwnerReferences) == nOwners,
			fmt.Sprintf("%d references", len(got.OwnerReferences))
	})
	if err := hrtParallel(nOwners, 16, func(i int) error {
		return env.Client.CoreV1().ConfigMaps(ns).Delete(ctx, fmt.Sprintf("owner-%03d", i), metav1.DeleteOptions{})
	}); err != nil {
		t.Fatal(err)
	}
	hrtWait(t, 90*time.Second, 300*time.Millisecond, "the pod collected", func() (bool, string) {
		_, err := env.Client.CoreV1().Pods(ns).Get(ctx, "many-owners", metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return true, ""
		}
		if err != nil {
			return false, err.Error()
		}
		return false, "still there"
	})
}

func TestTables_ManyReplicaSets(t *testing.T) {
	ctx := context.Background()
	n := 300
	if os.Getenv("KCMD_E2E_SCALE") == "1" {
		n = 5000 // beyond the old 4,096 expectations slots
	}
	if v, err := strconv.Atoi(os.Getenv("KCMD_E2E_TABLES_RS")); err == nil && v > 0 {
		n = v
	}
	ns := rsNamespace(t)
	stopSharedRS(t)
	p := startKcmd(t, nil, "--controllers=replicaset-controller", "--secure-port=0", "--leader-elect=false",
		"--kube-api-qps=1000", "--kube-api-burst=2000", "--concurrent-replicaset-syncs=5")
	t.Cleanup(func() { dumpKcmdLogs(t, p) })

	t0 := time.Now()
	err := hrtParallel(n, 32, func(i int) error {
		_, err := env.Client.AppsV1().ReplicaSets(ns).Create(ctx, demoReplicaSet(ns, fmt.Sprintf("rs-%05d", i), 0),
			metav1.CreateOptions{})
		return err
	})
	if err != nil {
		t.Fatalf("creating %d ReplicaSets: %v", n, err)
	}
	t.Logf("%d ReplicaSets created in %.1f s", n, hrtSince(t0))
	// every one synced: each status write leaves a record in the expectations table
	syncWait, poll := 10*time.Minute, time.Second
	if n > 5000 {
		syncWait, poll = time.Duration(n/5000)*10*time.Minute, 5*time.Second
	}
	hrtWait(t, syncWait, poll, "every ReplicaSet synced", func() (bool, string) {
		list, err := env.Client.AppsV1().ReplicaSets(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err.Error()
		}
		synced := 0
		for i := range list.Items {
			if list.Items[i].Status.ObservedGeneration == list.Items[i].Generation {
				synced++
			}
		}
		return synced == n, fmt.Sprintf("%d of %d synced", synced, n)
	})
	t.Logf("%d ReplicaSets synced %.1f s after the first create", n, hrtSince(t0))
	// then 20 of them scale up: each needs an expectations record to create its pod
	const up = 20
	err = hrtParallel(up, 8, func(i int) error {
		name := fmt.Sprintf("rs-%05d", n-1-i)
		rs, err := env.Client.AppsV1().ReplicaSets(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		rs.Spec.Replicas = ptr.To(int32(1))
		_, err = env.Client.AppsV1().ReplicaSets(ns).Update(ctx, rs, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	hrtWait(t, 2*time.Minute, 500*time.Millisecond, "a pod for each scaled ReplicaSet", func() (bool, string) {
		pods, err := env.Client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err.Error()
		}
		owners := map[string]bool{}
		for i := range pods.Items {
			if c := metav1.GetControllerOf(&pods.Items[i]); c != nil {
				owners[c.Name] = true
			}
		}
		return len(owners) == up && len(pods.Items) == up, fmt.Sprintf("%d pods for %d ReplicaSets", len(pods.Items), len(owners))
	})
	if p.Logged("expectations table is full") {
		t.Fatal("kcmd logged a full expectations table")
	}
}

func TestTables_InformerNeverSkips(t *testing.T) {
	bin := filepath.Join(env.KcmdBinDir, "..", "t", "informerd", "tests", "e2e-informer")
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("%s not built: %v (make e2e builds it)", bin, err)
	}
	cmd := exec.Command(bin)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+env.Cluster.Kubeconfig, "KCMD_TEST_SERVER="+env.Cluster.Server)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("e2e-informer failed: %v\n%s", err, out)
	}
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		t.Logf("%s", l)
	}
}
