package e2e

// kcmd's persistentvolumeclaim-protection-controller and persistentvolume-protection-controller
// (docs/volumeprotection.md) against the real apiserver, upstream kube-controller-manager not
// running. The cases are upstream's pvc_protection_controller_test.go and
// pv_protection_controller_test.go scenarios (finalizer added, a PVC used by a scheduled pod kept
// until the pod is gone, a finished pod still keeping it, an unscheduled pod not, a bound PV kept
// and a released one let go), generic ephemeral volumes, and test/e2e/storage's "PVC Unused
// Condition" cases (PersistentVolumeClaimUnusedSinceTime, beta and on in v1.37).
//
// No kubelet or scheduler runs here: a "scheduled" pod is created with spec.nodeName, a running
// or finished one gets its status written by the test, and a pod is removed with grace period 0.
// A PVC is "Bound" when the test writes status.phase (no PV binder runs either). The
// StorageObjectInUseProtection admission plugin adds the finalizers on create, so the tests that
// check the controller adds them remove them first.

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
)

const (
	vpPVCFinalizer = "kubernetes.io/pvc-protection"
	vpPVFinalizer  = "kubernetes.io/pv-protection"
)

var (
	vpProc     *kcmdProc
	vpProcOnce sync.Once
	vpProcMu   sync.Mutex
)

// vpStart shares one kcmd running the three protection controllers as their service accounts
// (every request must pass kcm's bootstrap roles system:controller:pvc-protection-controller,
// pv-protection-controller and volumeattributesclass-protection-controller).
func vpStart(t *testing.T) {
	t.Helper()
	vpProcMu.Lock()
	vpProcOnce.Do(func() {
		vpProc = startKcmdShared(t, "--controllers=pvc-protection,persistentvolume-protection-controller,volumeattributesclass-protection-controller",
			"--secure-port=0", "--leader-elect=false", "--use-service-account-credentials", "--v=4")
	})
	p := vpProc
	vpProcMu.Unlock()
	t.Cleanup(func() { dumpKcmdLogs(t, p) })
	Eventually(t, 60*time.Second, "both controllers act as their service accounts", func() (bool, string) {
		return p.Logged("kube-system/pvc-protection-controller") && p.Logged("kube-system/pv-protection-controller") &&
			p.Logged("kube-system/volumeattributesclass-protection-controller"), "not yet"
	})
}

func vpPVC(t *testing.T, ns, name string) *corev1.PersistentVolumeClaim {
	t.Helper()
	pvc, err := env.Client.CoreV1().PersistentVolumeClaims(ns).Create(context.Background(), &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating PVC %s: %v", name, err)
	}
	return pvc
}

// vpBind marks the PVC Bound (what the PV binder would do).
func vpBind(t *testing.T, ns, name string) {
	t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		pvc, err := env.Client.CoreV1().PersistentVolumeClaims(ns).Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		pvc.Status.Phase = corev1.ClaimBound
		_, err = env.Client.CoreV1().PersistentVolumeClaims(ns).UpdateStatus(context.Background(), pvc, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		t.Fatalf("binding PVC %s: %v", name, err)
	}
}

// vpPod creates a pod naming claim (node "": unscheduled) and gives it phase (""; Pending).
func vpPod(t *testing.T, ns, name, node, claim string, phase corev1.PodPhase) *corev1.Pod {
	t.Helper()
	ctx := context.Background()
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.PodSpec{
			NodeName:   node,
			Containers: []corev1.Container{{Name: "c", Image: "fakeimage"}},
			Volumes: []corev1.Volume{
				{Name: "scratch", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
				{Name: "data", VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: claim}}},
			},
		},
	}
	p, err := env.Client.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating pod %s: %v", name, err)
	}
	if phase != "" {
		p = vpPodPhase(t, ns, name, phase)
	}
	return p
}

func vpPodPhase(t *testing.T, ns, name string, phase corev1.PodPhase) *corev1.Pod {
	t.Helper()
	var out *corev1.Pod
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		p, err := env.Client.CoreV1().Pods(ns).Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		p.Status.Phase = phase
		out, err = env.Client.CoreV1().Pods(ns).UpdateStatus(context.Background(), p, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		t.Fatalf("pod %s phase %s: %v", name, phase, err)
	}
	return out
}

func vpDeletePod(t *testing.T, ns, name string) {
	t.Helper()
	err := env.Client.CoreV1().Pods(ns).Delete(context.Background(), name, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)})
	if err != nil && !apierrors.IsNotFound(err) {
		t.Fatalf("deleting pod %s: %v", name, err)
	}
}

func vpDeletePVC(t *testing.T, ns, name string) {
	t.Helper()
	if err := env.Client.CoreV1().PersistentVolumeClaims(ns).Delete(context.Background(), name, metav1.DeleteOptions{}); err != nil {
		t.Fatalf("deleting PVC %s: %v", name, err)
	}
}

func vpPVCGone(t *testing.T, ns, name string) {
	t.Helper()
	Eventually(t, 30*time.Second, "PVC "+name+" deleted", func() (bool, string) {
		pvc, err := env.Client.CoreV1().PersistentVolumeClaims(ns).Get(context.Background(), name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return true, ""
		}
		if err != nil {
			return false, err.Error()
		}
		return false, "still there, finalizers " + vpJoin(pvc.Finalizers)
	})
}

// vpPVCStays checks for a while that the PVC is still there, being deleted, with its finalizer.
func vpPVCStays(t *testing.T, ns, name string) {
	t.Helper()
	deadline := time.Now().Add(4 * time.Second)
	for time.Now().Before(deadline) {
		pvc, err := env.Client.CoreV1().PersistentVolumeClaims(ns).Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			t.Fatalf("PVC %s should stay (in use): %v", name, err)
		}
		if pvc.DeletionTimestamp == nil || !vpHas(pvc.Finalizers, vpPVCFinalizer) {
			t.Fatalf("PVC %s: deletionTimestamp %v finalizers %v", name, pvc.DeletionTimestamp, pvc.Finalizers)
		}
		time.Sleep(300 * time.Millisecond)
	}
}

func vpHas(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}

func vpJoin(l []string) string {
	out := "["
	for i, s := range l {
		if i > 0 {
			out += ","
		}
		out += s
	}
	return out + "]"
}

// vpUnused waits for the PVC's Unused condition to have status and returns it.
func vpUnused(t *testing.T, ns, name string, status corev1.ConditionStatus) corev1.PersistentVolumeClaimCondition {
	t.Helper()
	var got corev1.PersistentVolumeClaimCondition
	Eventually(t, 30*time.Second, "PVC "+name+" Unused="+string(status), func() (bool, string) {
		pvc, err := env.Client.CoreV1().PersistentVolumeClaims(ns).Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		for _, c := range pvc.Status.Conditions {
			if c.Type == "Unused" {
				got = c
				return c.Status == status, "Unused=" + string(c.Status)
			}
		}
		return false, "no Unused condition"
	})
	return got
}

// "PVC without finalizer -> finalizer is added" (the admission plugin adds it on create; the
// controller puts it back when it is taken off a PVC that is not being deleted)
func TestPVCProtection_FinalizerAdded(t *testing.T) {
	vpStart(t)
	ns := Namespace(t)
	ctx := context.Background()
	pvc := vpPVC(t, ns, "pvc1")
	if !vpHas(pvc.Finalizers, vpPVCFinalizer) {
		t.Fatalf("admission did not add %s: %v", vpPVCFinalizer, pvc.Finalizers)
	}
	patch := []byte(`{"metadata":{"finalizers":["example.com/other"]}}`)
	if _, err := env.Client.CoreV1().PersistentVolumeClaims(ns).Patch(ctx, "pvc1", types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	Eventually(t, 30*time.Second, "the finalizer added back", func() (bool, string) {
		p, err := env.Client.CoreV1().PersistentVolumeClaims(ns).Get(ctx, "pvc1", metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		return vpHas(p.Finalizers, vpPVCFinalizer) && vpHas(p.Finalizers, "example.com/other"), vpJoin(p.Finalizers)
	})
	// let the PVC go
	patch = []byte(`{"metadata":{"finalizers":["` + vpPVCFinalizer + `"]}}`)
	_, _ = env.Client.CoreV1().PersistentVolumeClaims(ns).Patch(ctx, "pvc1", types.MergePatchType, patch, metav1.PatchOptions{})
	vpDeletePVC(t, ns, "pvc1")
	vpPVCGone(t, ns, "pvc1")
}

// "deleted PVC with finalizer -> finalizer is removed", and a pod with an unrelated PVC and an
// emptyDir does not keep it
func TestPVCProtection_UnusedDeletedAtOnce(t *testing.T) {
	vpStart(t)
	ns := Namespace(t)
	vpPVC(t, ns, "pvc1")
	vpPVC(t, ns, "unrelated")
	vpPod(t, ns, "pod1", "node1", "unrelated", corev1.PodRunning)
	vpDeletePVC(t, ns, "pvc1")
	vpPVCGone(t, ns, "pvc1")
}

// "deleted PVC with finalizer + pod with the PVC exists -> finalizer is not removed", then
// "deleted running Pod -> finalizer is removed"
func TestPVCProtection_InUseUntilPodGone(t *testing.T) {
	vpStart(t)
	ns := Namespace(t)
	vpPVC(t, ns, "pvc1")
	vpPod(t, ns, "pod1", "node1", "pvc1", corev1.PodRunning)
	vpDeletePVC(t, ns, "pvc1")
	vpPVCStays(t, ns, "pvc1")
	vpDeletePod(t, ns, "pod1")
	vpPVCGone(t, ns, "pvc1")
}

// "deleted PVC with finalizer + pod with the PVC finished but is not deleted -> finalizer is not
// removed" (a scheduled finished pod still keeps it), then the pod goes
func TestPVCProtection_FinishedPodKeeps(t *testing.T) {
	vpStart(t)
	ns := Namespace(t)
	vpPVC(t, ns, "pvc1")
	vpPod(t, ns, "pod1", "node1", "pvc1", corev1.PodRunning)
	vpDeletePVC(t, ns, "pvc1")
	vpPVCStays(t, ns, "pvc1")
	vpPodPhase(t, ns, "pod1", corev1.PodSucceeded)
	vpPVCStays(t, ns, "pvc1")
	vpDeletePod(t, ns, "pod1")
	vpPVCGone(t, ns, "pvc1")
}

// "updated unscheduled Pod -> finalizer is removed": kubelet never saw an unscheduled pod
func TestPVCProtection_UnscheduledPodDoesNotKeep(t *testing.T) {
	vpStart(t)
	ns := Namespace(t)
	vpPVC(t, ns, "pvc1")
	vpPod(t, ns, "pod1", "", "pvc1", "")
	vpDeletePVC(t, ns, "pvc1")
	vpPVCGone(t, ns, "pvc1")
}

// A generic ephemeral volume's claim <pod>-<volume>, controlled by the pod, is kept while the
// pod runs; a claim of that name the pod does not own is not.
func TestPVCProtection_EphemeralVolume(t *testing.T) {
	vpStart(t)
	ns := Namespace(t)
	ctx := context.Background()
	pod, err := env.Client.CoreV1().Pods(ns).Create(ctx, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "pod1"},
		Spec: corev1.PodSpec{
			NodeName:   "node1",
			Containers: []corev1.Container{{Name: "c", Image: "fakeimage"}},
			Volumes: []corev1.Volume{{Name: "eph", VolumeSource: corev1.VolumeSource{Ephemeral: &corev1.EphemeralVolumeSource{
				VolumeClaimTemplate: &corev1.PersistentVolumeClaimTemplate{Spec: corev1.PersistentVolumeClaimSpec{
					AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
					Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}},
				}},
			}}}},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	vpPodPhase(t, ns, "pod1", corev1.PodRunning)
	// not owned by the pod: nothing keeps it
	vpPVC(t, ns, "pod1-eph")
	vpDeletePVC(t, ns, "pod1-eph")
	vpPVCGone(t, ns, "pod1-eph")
	// owned (controller) by the pod: kept while the pod is there
	claim := &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: "pod1-eph", OwnerReferences: []metav1.OwnerReference{{
			APIVersion: "v1", Kind: "Pod", Name: "pod1", UID: pod.UID, Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}}},
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}},
		},
	}
	if _, err := env.Client.CoreV1().PersistentVolumeClaims(ns).Create(ctx, claim, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	vpDeletePVC(t, ns, "pod1-eph")
	vpPVCStays(t, ns, "pod1-eph")
	vpDeletePod(t, ns, "pod1")
	vpPVCGone(t, ns, "pod1-eph")
}

// test/e2e/storage "PVC Unused Condition": Unused=True without pods (NoPodsUsingPVC), False
// while a pod (even unscheduled, Pending) references it (PodUsingPVC), True again once the only
// pod is terminated, with lastTransitionTime moving on each transition; multiple pods: True
// only after the last one goes.
func TestPVCProtection_UnusedCondition(t *testing.T) {
	vpStart(t)
	ns := Namespace(t)
	vpPVC(t, ns, "pvc1")
	vpBind(t, ns, "pvc1")
	c := vpUnused(t, ns, "pvc1", corev1.ConditionTrue)
	if c.Reason != "NoPodsUsingPVC" || c.Message != "No pods are currently referencing this PVC" || c.LastTransitionTime.IsZero() {
		t.Fatalf("Unused=True condition: %+v", c)
	}
	// unscheduled pending pod counts
	vpPod(t, ns, "pod1", "", "pvc1", "")
	c2 := vpUnused(t, ns, "pvc1", corev1.ConditionFalse)
	if c2.Reason != "PodUsingPVC" || c2.Message != "A pod is currently referencing this PVC" {
		t.Fatalf("Unused=False condition: %+v", c2)
	}
	if c2.LastTransitionTime.Before(&c.LastTransitionTime) {
		t.Fatalf("lastTransitionTime went back: %v then %v", c.LastTransitionTime, c2.LastTransitionTime)
	}
	// a second pod; the first terminates: still used
	vpPod(t, ns, "pod2", "node1", "pvc1", corev1.PodRunning)
	time.Sleep(1100 * time.Millisecond) // transition times have second precision
	vpPodPhase(t, ns, "pod1", corev1.PodSucceeded)
	time.Sleep(2 * time.Second)
	if c3 := vpUnused(t, ns, "pvc1", corev1.ConditionFalse); !c3.LastTransitionTime.Equal(&c2.LastTransitionTime) {
		t.Fatalf("Unused=False rewritten without a transition: %v then %v", c2.LastTransitionTime, c3.LastTransitionTime)
	}
	// the last user goes
	vpDeletePod(t, ns, "pod2")
	c4 := vpUnused(t, ns, "pvc1", corev1.ConditionTrue)
	if c4.Reason != "NoPodsUsingPVC" || !c4.LastTransitionTime.After(c2.LastTransitionTime.Time) {
		t.Fatalf("Unused=True again: %+v (False at %v)", c4, c2.LastTransitionTime)
	}
	// an unbound PVC gets no condition
	vpPVC(t, ns, "pending")
	time.Sleep(2 * time.Second)
	p, err := env.Client.CoreV1().PersistentVolumeClaims(ns).Get(context.Background(), "pending", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Status.Conditions) != 0 {
		t.Fatalf("a Pending PVC got conditions: %+v", p.Status.Conditions)
	}
}

func vpPV(t *testing.T, name string) {
	t.Helper()
	ctx := context.Background()
	pv, err := env.Client.CoreV1().PersistentVolumes().Create(ctx, &corev1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.PersistentVolumeSpec{
			Capacity:                      corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")},
			AccessModes:                   []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimRetain,
			PersistentVolumeSource:        corev1.PersistentVolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/tmp/" + name}},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating PV %s: %v", name, err)
	}
	if !vpHas(pv.Finalizers, vpPVFinalizer) {
		t.Fatalf("admission did not add %s: %v", vpPVFinalizer, pv.Finalizers)
	}
	t.Cleanup(func() {
		patch := []byte(`{"metadata":{"finalizers":null}}`)
		_, _ = env.Client.CoreV1().PersistentVolumes().Patch(context.Background(), name, types.MergePatchType, patch, metav1.PatchOptions{})
		_ = env.Client.CoreV1().PersistentVolumes().Delete(context.Background(), name, metav1.DeleteOptions{})
	})
}

func vpPVPhase(t *testing.T, name string, phase corev1.PersistentVolumePhase) {
	t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		pv, err := env.Client.CoreV1().PersistentVolumes().Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		pv.Status.Phase = phase
		_, err = env.Client.CoreV1().PersistentVolumes().UpdateStatus(context.Background(), pv, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		t.Fatalf("PV %s phase %s: %v", name, phase, err)
	}
}

// TestPVProtectionController: "PV without finalizer -> finalizer is added", "deleted PV with
// finalizer + PV is bound -> finalizer is not removed", then released -> removed.
func TestPVProtection_BoundKeptReleasedGoes(t *testing.T) {
	vpStart(t)
	ctx := context.Background()
	name := fmt.Sprintf("vp-pv-bound-%d", time.Now().UnixNano()%1000000)
	vpPV(t, name)
	patch := []byte(`{"metadata":{"finalizers":["example.com/other"]}}`)
	if _, err := env.Client.CoreV1().PersistentVolumes().Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	Eventually(t, 30*time.Second, "the PV finalizer added back", func() (bool, string) {
		pv, err := env.Client.CoreV1().PersistentVolumes().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		return vpHas(pv.Finalizers, vpPVFinalizer), vpJoin(pv.Finalizers)
	})
	patch = []byte(`{"metadata":{"finalizers":["` + vpPVFinalizer + `"]}}`)
	if _, err := env.Client.CoreV1().PersistentVolumes().Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	vpPVPhase(t, name, corev1.VolumeBound)
	if err := env.Client.CoreV1().PersistentVolumes().Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(4 * time.Second)
	for time.Now().Before(deadline) {
		pv, err := env.Client.CoreV1().PersistentVolumes().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatalf("bound PV should stay: %v", err)
		}
		if !vpHas(pv.Finalizers, vpPVFinalizer) {
			t.Fatalf("bound PV lost its finalizer: %v", pv.Finalizers)
		}
		time.Sleep(300 * time.Millisecond)
	}
	vpPVPhase(t, name, corev1.VolumeReleased)
	Eventually(t, 30*time.Second, "the released PV deleted", func() (bool, string) {
		_, err := env.Client.CoreV1().PersistentVolumes().Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return true, ""
		}
		return false, "still there"
	})
}

// "deleted PV with finalizer -> finalizer is removed" (Available: never bound)
func TestPVProtection_UnboundDeletedAtOnce(t *testing.T) {
	vpStart(t)
	ctx := context.Background()
	name := fmt.Sprintf("vp-pv-avail-%d", time.Now().UnixNano()%1000000)
	vpPV(t, name)
	vpPVPhase(t, name, corev1.VolumeAvailable)
	if err := env.Client.CoreV1().PersistentVolumes().Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	Eventually(t, 30*time.Second, "the PV deleted", func() (bool, string) {
		_, err := env.Client.CoreV1().PersistentVolumes().Get(ctx, name, metav1.GetOptions{})
		return apierrors.IsNotFound(err), "still there"
	})
}

const vpVACFinalizer = "kubernetes.io/vac-protection"

func vpVAC(t *testing.T, name string) {
	t.Helper()
	ctx := context.Background()
	vac, err := env.Client.StorageV1().VolumeAttributesClasses().Create(ctx, &storagev1.VolumeAttributesClass{
		ObjectMeta: metav1.ObjectMeta{Name: name}, DriverName: "example.com/driver",
		Parameters: map[string]string{"iops": "100"},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating VolumeAttributesClass %s: %v", name, err)
	}
	t.Cleanup(func() {
		patch := []byte(`{"metadata":{"finalizers":null}}`)
		_, _ = env.Client.StorageV1().VolumeAttributesClasses().Patch(context.Background(), name, types.MergePatchType, patch, metav1.PatchOptions{})
		_ = env.Client.StorageV1().VolumeAttributesClasses().Delete(context.Background(), name, metav1.DeleteOptions{})
	})
	if !vpHas(vac.Finalizers, vpVACFinalizer) {
		// the admission plugin adds it when it knows the resource; else the controller must
		Eventually(t, 30*time.Second, "the VAC finalizer added", func() (bool, string) {
			v, err := env.Client.StorageV1().VolumeAttributesClasses().Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return false, err.Error()
			}
			return vpHas(v.Finalizers, vpVACFinalizer), vpJoin(v.Finalizers)
		})
	}
}

func vpVACStays(t *testing.T, name string) {
	t.Helper()
	deadline := time.Now().Add(4 * time.Second)
	for time.Now().Before(deadline) {
		v, err := env.Client.StorageV1().VolumeAttributesClasses().Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			t.Fatalf("VAC %s should stay (referenced): %v", name, err)
		}
		if v.DeletionTimestamp == nil || !vpHas(v.Finalizers, vpVACFinalizer) {
			t.Fatalf("VAC %s: deletionTimestamp %v finalizers %v", name, v.DeletionTimestamp, v.Finalizers)
		}
		time.Sleep(300 * time.Millisecond)
	}
}

func vpVACGone(t *testing.T, name string) {
	t.Helper()
	Eventually(t, 30*time.Second, "VAC "+name+" deleted", func() (bool, string) {
		_, err := env.Client.StorageV1().VolumeAttributesClasses().Get(context.Background(), name, metav1.GetOptions{})
		return apierrors.IsNotFound(err), "still there"
	})
}

// TestVACProtectionController: "VAC without finalizer -> finalizer is added", "deleted VAC with
// finalizer but it's referenced by a PVC -> finalizer is not removed", "pvc is deleted ... ->
// finalizer is removed".
func TestVACProtection_PVCReference(t *testing.T) {
	vpStart(t)
	ns := Namespace(t)
	ctx := context.Background()
	name := fmt.Sprintf("vp-vac-pvc-%d", time.Now().UnixNano()%1000000)
	vpVAC(t, name)
	patch := []byte(`{"metadata":{"finalizers":["example.com/other"]}}`)
	if _, err := env.Client.StorageV1().VolumeAttributesClasses().Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	Eventually(t, 30*time.Second, "the VAC finalizer added back", func() (bool, string) {
		v, err := env.Client.StorageV1().VolumeAttributesClasses().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		return vpHas(v.Finalizers, vpVACFinalizer) && vpHas(v.Finalizers, "example.com/other"), vpJoin(v.Finalizers)
	})
	patch = []byte(`{"metadata":{"finalizers":["` + vpVACFinalizer + `"]}}`)
	if _, err := env.Client.StorageV1().VolumeAttributesClasses().Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	_, err := env.Client.CoreV1().PersistentVolumeClaims(ns).Create(ctx, &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: "pvc1"},
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes:               []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources:                 corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}},
			VolumeAttributesClassName: ptr.To(name),
		},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(500 * time.Millisecond) // the PVC reaches kcmd's cache (the check reads the cache, as upstream's)
	if err := env.Client.StorageV1().VolumeAttributesClasses().Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	vpVACStays(t, name)
	vpDeletePVC(t, ns, "pvc1")
	vpPVCGone(t, ns, "pvc1")
	vpVACGone(t, name)
}

// "deleted VAC with finalizer but it's referenced by a PV -> finalizer is not removed", "pv
// changes vac and deleted VAC with finalizer -> finalizer is removed"
func TestVACProtection_PVReference(t *testing.T) {
	vpStart(t)
	ctx := context.Background()
	suffix := time.Now().UnixNano() % 1000000
	vac1, vac2 := fmt.Sprintf("vp-vac1-%d", suffix), fmt.Sprintf("vp-vac2-%d", suffix)
	vpVAC(t, vac1)
	vpVAC(t, vac2)
	pv := fmt.Sprintf("vp-pv-vac-%d", suffix)
	_, err := env.Client.CoreV1().PersistentVolumes().Create(ctx, &corev1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: pv},
		Spec: corev1.PersistentVolumeSpec{
			Capacity:                  corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")},
			AccessModes:               []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			VolumeAttributesClassName: ptr.To(vac1),
			PersistentVolumeSource: corev1.PersistentVolumeSource{CSI: &corev1.CSIPersistentVolumeSource{
				Driver: "driver.example.com", VolumeHandle: pv}},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		patch := []byte(`{"metadata":{"finalizers":null}}`)
		_, _ = env.Client.CoreV1().PersistentVolumes().Patch(context.Background(), pv, types.MergePatchType, patch, metav1.PatchOptions{})
		_ = env.Client.CoreV1().PersistentVolumes().Delete(context.Background(), pv, metav1.DeleteOptions{})
	})
	time.Sleep(500 * time.Millisecond)
	if err := env.Client.StorageV1().VolumeAttributesClasses().Delete(ctx, vac1, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	vpVACStays(t, vac1)
	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		p, err := env.Client.CoreV1().PersistentVolumes().Get(ctx, pv, metav1.GetOptions{})
		if err != nil {
			return err
		}
		p.Spec.VolumeAttributesClassName = ptr.To(vac2)
		_, err = env.Client.CoreV1().PersistentVolumes().Update(ctx, p, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		t.Fatalf("moving the PV to %s: %v", vac2, err)
	}
	vpVACGone(t, vac1)
}

var (
	evProc     *kcmdProc
	evProcOnce sync.Once
	evProcMu   sync.Mutex
)

// evStart shares one kcmd running ephemeral-volume-controller (with a non-default
// --concurrent-ephemeralvolume-syncs) and the PVC protection controller, as their service
// accounts (kcm's bootstrap role system:controller:ephemeral-volume-controller).
func evStart(t *testing.T) {
	t.Helper()
	evProcMu.Lock()
	evProcOnce.Do(func() {
		evProc = startKcmdShared(t, "--controllers=ephemeral-volume,persistentvolumeclaim-protection-controller",
			"--concurrent-ephemeralvolume-syncs=2", "--secure-port=0", "--leader-elect=false",
			"--use-service-account-credentials", "--v=5")
	})
	p := evProc
	evProcMu.Unlock()
	t.Cleanup(func() { dumpKcmdLogs(t, p) })
	Eventually(t, 60*time.Second, "the controller acts as its service account", func() (bool, string) {
		return p.Logged("kube-system/ephemeral-volume-controller"), "not yet"
	})
}

func evPod(t *testing.T, ns, name string) *corev1.Pod {
	t.Helper()
	pod, err := env.Client.CoreV1().Pods(ns).Create(context.Background(), &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.PodSpec{
			Containers: []corev1.Container{{Name: "c", Image: "fakeimage"}},
			Volumes: []corev1.Volume{
				{Name: "scratch", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
				{Name: "eph", VolumeSource: corev1.VolumeSource{Ephemeral: &corev1.EphemeralVolumeSource{
					VolumeClaimTemplate: &corev1.PersistentVolumeClaimTemplate{
						ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "x"}, Annotations: map[string]string{"note": "y"}},
						Spec: corev1.PersistentVolumeClaimSpec{
							AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
							Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}},
						},
					},
				}}},
			},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating pod %s: %v", name, err)
	}
	return pod
}

func evClaim(t *testing.T, ns, name string, pod *corev1.Pod) *corev1.PersistentVolumeClaim {
	t.Helper()
	var pvc *corev1.PersistentVolumeClaim
	Eventually(t, 30*time.Second, "claim "+name+" created", func() (bool, string) {
		var err error
		pvc, err = env.Client.CoreV1().PersistentVolumeClaims(ns).Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		return pvc.UID != "" && pvc.DeletionTimestamp == nil, "being deleted"
	})
	if len(pvc.OwnerReferences) != 1 {
		t.Fatalf("claim %s owners: %+v", name, pvc.OwnerReferences)
	}
	o := pvc.OwnerReferences[0]
	if o.APIVersion != "v1" || o.Kind != "Pod" || o.Name != pod.Name || o.UID != pod.UID ||
		o.Controller == nil || !*o.Controller || o.BlockOwnerDeletion == nil || !*o.BlockOwnerDeletion {
		t.Fatalf("claim %s owner: %+v", name, o)
	}
	if pvc.Labels["app"] != "x" || pvc.Annotations["note"] != "y" || pvc.Spec.Resources.Requests.Storage().String() != "1Gi" {
		t.Fatalf("claim %s not from the template: labels %v annotations %v spec %+v", name, pvc.Labels, pvc.Annotations, pvc.Spec)
	}
	return pvc
}

// upstream's "create" case and the e2e "generic ephemeral volume" flow without a kubelet: the
// claim <pod>-<volume> made from the template, owned by the pod; deleted, it is made again.
func TestEphemeralVolume_ClaimCreated(t *testing.T) {
	evStart(t)
	ns := Namespace(t)
	pod := evPod(t, ns, "pod1")
	first := evClaim(t, ns, "pod1-eph", pod)
	// the pod is not scheduled, so nothing keeps the claim: deleting it lets it go, and the
	// controller makes a new one (onPVCDelete)
	vpDeletePVC(t, ns, "pod1-eph")
	Eventually(t, 30*time.Second, "a new claim", func() (bool, string) {
		pvc, err := env.Client.CoreV1().PersistentVolumeClaims(ns).Get(context.Background(), "pod1-eph", metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		return pvc.UID != first.UID, "still the first one"
	})
	evClaim(t, ns, "pod1-eph", pod)
}

// upstream's "wrong-PVC-owner": a claim of that name the pod does not own is left alone, with a
// Warning FailedBinding Event on the pod.
func TestEphemeralVolume_NameTaken(t *testing.T) {
	evStart(t)
	ns := Namespace(t)
	vpPVC(t, ns, "pod1-eph")
	pod := evPod(t, ns, "pod1")
	want := "ephemeral volume eph: PVC " + ns + "/pod1-eph was not created for pod " + ns + "/pod1 (pod is not owner)"
	Eventually(t, 30*time.Second, "a FailedBinding Event", func() (bool, string) {
		evs, err := env.Client.CoreV1().Events(ns).List(context.Background(), metav1.ListOptions{})
		if err != nil {
			return false, err.Error()
		}
		for _, e := range evs.Items {
			if e.InvolvedObject.UID == pod.UID && e.Reason == "FailedBinding" && e.Type == corev1.EventTypeWarning {
				if e.Message != want || e.Source.Component != "ephemeral_volume" {
					return false, "event " + e.Message + " from " + e.Source.Component
				}
				return true, ""
			}
		}
		return false, "no event yet"
	})
	pvc, err := env.Client.CoreV1().PersistentVolumeClaims(ns).Get(context.Background(), "pod1-eph", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(pvc.OwnerReferences) != 0 {
		t.Fatalf("the foreign claim was changed: %+v", pvc.OwnerReferences)
	}
}

// A pod without ephemeral volumes gets no claim; a pod being deleted whose claim is deleted does
// not get it back ("Ignore pods which are already getting deleted").
func TestEphemeralVolume_NoClaim(t *testing.T) {
	evStart(t)
	ns := Namespace(t)
	ctx := context.Background()
	vpPod(t, ns, "plain", "", "some-claim", "")
	held := evPod(t, ns, "held")
	patch := []byte(`{"metadata":{"finalizers":["example.com/hold"]}}`)
	if _, err := env.Client.CoreV1().Pods(ns).Patch(ctx, "held", types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_, _ = env.Client.CoreV1().Pods(ns).Patch(context.Background(), "held", types.MergePatchType,
			[]byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{})
	})
	evClaim(t, ns, "held-eph", held)
	if err := env.Client.CoreV1().Pods(ns).Delete(ctx, "held", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	vpDeletePVC(t, ns, "held-eph")
	vpPVCGone(t, ns, "held-eph")
	time.Sleep(3 * time.Second)
	pvcs, err := env.Client.CoreV1().PersistentVolumeClaims(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(pvcs.Items) != 0 {
		names := []string{}
		for _, c := range pvcs.Items {
			names = append(names, c.Name)
		}
		t.Fatalf("claims %v: want none (the plain pod has no ephemeral volume, the held one is being deleted)", names)
	}
}
