package e2e

// kcmd's persistentvolume-binder-controller (docs/pvbinder.md) against the real apiserver,
// upstream kube-controller-manager not running. Each test starts its own kcmd running only the
// binder, as its service account (kcm's bootstrap role system:controller:persistent-volume-binder
// must allow every request), at kcm's default --pvclaimbinder-sync-period (15s), and stops it
// when the test ends, so no other test's claims and volumes are bound by it. The cases are
// upstream's binder_test.go / provision_test.go scenarios and test/integration/volume's
// persistent_volumes_test.go ones on real objects: a static bind to the smallest match, a claim
// pre-bound by volumeName, Retain keeping a Released volume, a pending claim (FailedBinding)
// bound by the resync once a volume appears, the retroactive default StorageClass, a
// WaitForFirstConsumer claim left Pending, and an external provisioner (annotations, the
// ExternalProvisioning Event, the provisioned volume bound and, once its claim is gone,
// Released and left to its deleter).
//
// No PV/PVC protection controller runs: the finalizers the StorageObjectInUseProtection
// admission plugin adds are cleared by the test before a delete is expected to finish.

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
)

const (
	pbAnnBindCompleted = "pv.kubernetes.io/bind-completed"
	pbAnnBoundByCtrl   = "pv.kubernetes.io/bound-by-controller"
	pbAnnProvisioner   = "volume.kubernetes.io/storage-provisioner"
	pbAnnBetaProv      = "volume.beta.kubernetes.io/storage-provisioner"
	pbProvisioner      = "kcmd.test/external"
	// the binder's periodic resync (kcm's default) plus slack for a loaded machine
	pbResyncWait = 45 * time.Second
)

// pbStart runs kcmd with only the binder, as its service account; stopped when t ends.
func pbStart(t *testing.T, extra ...string) *kcmdProc {
	t.Helper()
	return pbStartServing(t, append([]string{"--secure-port=0"}, extra...)...)
}

// pbStartMetrics is pbStart serving /metrics (unauthenticated) on a free port, returned.
func pbStartMetrics(t *testing.T) (*kcmdProc, int) {
	t.Helper()
	port := gcxFreePort(t)
	p := pbStartServing(t, "--secure-port="+strconv.Itoa(port), "--bind-address=127.0.0.1",
		"--authorization-always-allow-paths=/healthz,/metrics")
	return p, port
}

func pbStartServing(t *testing.T, extra ...string) *kcmdProc {
	t.Helper()
	args := append([]string{"--controllers=persistentvolume-binder-controller",
		"--leader-elect=false", "--use-service-account-credentials", "--v=4"}, extra...)
	p := startKcmd(t, nil, args...)
	Eventually(t, 60*time.Second, "the binder acts as its service account", func() (bool, string) {
		return p.Logged("kube-system/persistent-volume-binder"), "not yet"
	})
	return p
}

func pbName(prefix string) string {
	return fmt.Sprintf("%s-%d", prefix, time.Now().UnixNano()%1000000)
}

// pbAccess is the one access mode of every volume and claim these tests make. Claims that
// other tests of the suite leave Pending in namespaces that never finish terminating (their
// pvc-protection finalizer stays when no controller removes it) ask for ReadWriteOnce and no
// class, as these tests' volumes would otherwise offer: the binder would rightly bind such a
// claim to a volume meant for this test (seen in a full e2e run: FailedBindingThenBind's late
// volume went to another test's data-par-0). No other test asks for ReadWriteOncePod.
const pbAccess = corev1.ReadWriteOncePod

// pbPV creates a CSI volume (removed, finalizers cleared, when t ends).
func pbPV(t *testing.T, name, size, class string, policy corev1.PersistentVolumeReclaimPolicy,
	ref *corev1.ObjectReference, anns map[string]string) {
	t.Helper()
	ctx := context.Background()
	_, err := env.Client.CoreV1().PersistentVolumes().Create(ctx, &corev1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: anns},
		Spec: corev1.PersistentVolumeSpec{
			Capacity:                      corev1.ResourceList{corev1.ResourceStorage: resource.MustParse(size)},
			AccessModes:                   []corev1.PersistentVolumeAccessMode{pbAccess},
			PersistentVolumeReclaimPolicy: policy,
			StorageClassName:              class,
			ClaimRef:                      ref,
			PersistentVolumeSource: corev1.PersistentVolumeSource{
				CSI: &corev1.CSIPersistentVolumeSource{Driver: "kcmd.test.csi", VolumeHandle: name},
			},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating PV %s: %v", name, err)
	}
	t.Cleanup(func() {
		patch := []byte(`{"metadata":{"finalizers":null}}`)
		_, _ = env.Client.CoreV1().PersistentVolumes().Patch(context.Background(), name, types.MergePatchType, patch, metav1.PatchOptions{})
		_ = env.Client.CoreV1().PersistentVolumes().Delete(context.Background(), name, metav1.DeleteOptions{})
	})
}

// pbPVC creates a claim; class nil leaves storageClassName unset.
func pbPVC(t *testing.T, ns, name, size string, class *string, volumeName string) *corev1.PersistentVolumeClaim {
	t.Helper()
	pvc, err := env.Client.CoreV1().PersistentVolumeClaims(ns).Create(context.Background(), &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes:      []corev1.PersistentVolumeAccessMode{pbAccess},
			Resources:        corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse(size)}},
			StorageClassName: class,
			VolumeName:       volumeName,
		},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating PVC %s: %v", name, err)
	}
	return pvc
}

// pbDeletePVC deletes a claim and clears the protection finalizer (no controller removes it).
func pbDeletePVC(t *testing.T, ns, name string) {
	t.Helper()
	ctx := context.Background()
	if err := env.Client.CoreV1().PersistentVolumeClaims(ns).Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	patch := []byte(`{"metadata":{"finalizers":null}}`)
	_, err := env.Client.CoreV1().PersistentVolumeClaims(ns).Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		t.Fatal(err)
	}
	Eventually(t, 30*time.Second, "the claim gone", func() (bool, string) {
		_, err := env.Client.CoreV1().PersistentVolumeClaims(ns).Get(ctx, name, metav1.GetOptions{})
		return apierrors.IsNotFound(err), "still there"
	})
}

func pbClass(t *testing.T, name string, mode storagev1.VolumeBindingMode, isDefault bool) {
	t.Helper()
	ctx := context.Background()
	sc := &storagev1.StorageClass{
		ObjectMeta:        metav1.ObjectMeta{Name: name},
		Provisioner:       pbProvisioner,
		VolumeBindingMode: &mode,
	}
	if isDefault {
		sc.Annotations = map[string]string{"storageclass.kubernetes.io/is-default-class": "true"}
	}
	if _, err := env.Client.StorageV1().StorageClasses().Create(ctx, sc, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating StorageClass %s: %v", name, err)
	}
	t.Cleanup(func() { _ = env.Client.StorageV1().StorageClasses().Delete(ctx, name, metav1.DeleteOptions{}) })
}

func pbGetPVC(t *testing.T, ns, name string) *corev1.PersistentVolumeClaim {
	t.Helper()
	pvc, err := env.Client.CoreV1().PersistentVolumeClaims(ns).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return pvc
}

func pbGetPV(t *testing.T, name string) *corev1.PersistentVolume {
	t.Helper()
	pv, err := env.Client.CoreV1().PersistentVolumes().Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return pv
}

func pbWaitPVPhase(t *testing.T, name string, phase corev1.PersistentVolumePhase, timeout time.Duration) *corev1.PersistentVolume {
	t.Helper()
	var pv *corev1.PersistentVolume
	Eventually(t, timeout, fmt.Sprintf("PV %s %s", name, phase), func() (bool, string) {
		var err error
		pv, err = env.Client.CoreV1().PersistentVolumes().Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		return pv.Status.Phase == phase, string(pv.Status.Phase)
	})
	return pv
}

func pbWaitPVCBound(t *testing.T, ns, name string, timeout time.Duration) *corev1.PersistentVolumeClaim {
	t.Helper()
	var pvc *corev1.PersistentVolumeClaim
	Eventually(t, timeout, fmt.Sprintf("PVC %s Bound", name), func() (bool, string) {
		pvc = pbGetPVC(t, ns, name)
		return pvc.Status.Phase == corev1.ClaimBound, fmt.Sprintf("%s volumeName=%q", pvc.Status.Phase, pvc.Spec.VolumeName)
	})
	return pvc
}

// pbEvent waits for an Event of reason on the object and returns its message.
func pbEvent(t *testing.T, ns, kind, name, reason string, timeout time.Duration) string {
	t.Helper()
	msg := ""
	Eventually(t, timeout, fmt.Sprintf("a %s Event on %s %s", reason, kind, name), func() (bool, string) {
		evs, err := env.Client.CoreV1().Events(ns).List(context.Background(), metav1.ListOptions{
			FieldSelector: "involvedObject.kind=" + kind + ",involvedObject.name=" + name,
		})
		if err != nil {
			return false, err.Error()
		}
		var seen []string
		for _, e := range evs.Items {
			if e.Reason == reason {
				if e.Source.Component != "persistentvolume-controller" {
					return false, "source " + e.Source.Component
				}
				msg = e.Message
				return true, ""
			}
			seen = append(seen, e.Reason)
		}
		return false, "seen: " + strings.Join(seen, ",")
	})
	return msg
}

// A claim binds to the smallest Available volume that fits; both sides get upstream's
// annotations, phases and the claim's status capacity (binder_test 1-1 and 1-4).
func TestPVBinder_StaticBind(t *testing.T) {
	pbStart(t)
	ns := Namespace(t)
	small, big := pbName("pb-small"), pbName("pb-big")
	pbPV(t, big, "5Gi", "", corev1.PersistentVolumeReclaimRetain, nil, nil)
	pbPV(t, small, "2Gi", "", corev1.PersistentVolumeReclaimRetain, nil, nil)
	pbWaitPVPhase(t, big, corev1.VolumeAvailable, 30*time.Second)
	pv := pbWaitPVPhase(t, small, corev1.VolumeAvailable, 30*time.Second)
	if pv.Status.LastPhaseTransitionTime == nil {
		t.Errorf("PV %s Available without lastPhaseTransitionTime", small)
	}
	pbPVC(t, ns, "data", "1Gi", ptr.To(""), "")
	pvc := pbWaitPVCBound(t, ns, "data", pbResyncWait)
	if pvc.Spec.VolumeName != small {
		t.Fatalf("claim bound to %q, want the smallest match %q", pvc.Spec.VolumeName, small)
	}
	if pvc.Annotations[pbAnnBindCompleted] != "yes" || pvc.Annotations[pbAnnBoundByCtrl] != "yes" {
		t.Errorf("claim annotations %v", pvc.Annotations)
	}
	if q := pvc.Status.Capacity[corev1.ResourceStorage]; q.Cmp(resource.MustParse("2Gi")) != 0 {
		t.Errorf("claim status capacity %s, want the volume's 2Gi", q.String())
	}
	if len(pvc.Status.AccessModes) != 1 || pvc.Status.AccessModes[0] != pbAccess {
		t.Errorf("claim status accessModes %v", pvc.Status.AccessModes)
	}
	pv = pbWaitPVPhase(t, small, corev1.VolumeBound, 30*time.Second)
	if pv.Spec.ClaimRef == nil || pv.Spec.ClaimRef.UID != pvc.UID || pv.Spec.ClaimRef.Name != "data" ||
		pv.Spec.ClaimRef.Namespace != ns || pv.Spec.ClaimRef.Kind != "PersistentVolumeClaim" {
		t.Errorf("PV claimRef %+v", pv.Spec.ClaimRef)
	}
	if pv.Annotations[pbAnnBoundByCtrl] != "yes" {
		t.Errorf("PV annotations %v", pv.Annotations)
	}
	if got := pbGetPV(t, big); got.Spec.ClaimRef != nil || got.Status.Phase != corev1.VolumeAvailable {
		t.Errorf("the bigger PV was touched: %s %+v", got.Status.Phase, got.Spec.ClaimRef)
	}
}

// A claim naming its volume binds to it even though another one would match; the claim gets
// no bound-by-controller annotation, the volume does (binder_test 2-3).
func TestPVBinder_PreboundClaim(t *testing.T) {
	pbStart(t)
	ns := Namespace(t)
	want, other := pbName("pb-named"), pbName("pb-other")
	pbPV(t, other, "1Gi", "", corev1.PersistentVolumeReclaimRetain, nil, nil)
	pbPV(t, want, "3Gi", "", corev1.PersistentVolumeReclaimRetain, nil, nil)
	pbPVC(t, ns, "named", "1Gi", ptr.To(""), want)
	pvc := pbWaitPVCBound(t, ns, "named", pbResyncWait)
	if pvc.Spec.VolumeName != want {
		t.Fatalf("volumeName %q", pvc.Spec.VolumeName)
	}
	if pvc.Annotations[pbAnnBindCompleted] != "yes" {
		t.Errorf("claim annotations %v", pvc.Annotations)
	}
	if _, ok := pvc.Annotations[pbAnnBoundByCtrl]; ok {
		t.Errorf("claim pre-bound by the user got %s", pbAnnBoundByCtrl)
	}
	pv := pbWaitPVPhase(t, want, corev1.VolumeBound, 30*time.Second)
	if pv.Spec.ClaimRef == nil || pv.Spec.ClaimRef.UID != pvc.UID || pv.Annotations[pbAnnBoundByCtrl] != "yes" {
		t.Errorf("PV %+v annotations %v", pv.Spec.ClaimRef, pv.Annotations)
	}
	if got := pbGetPV(t, other); got.Spec.ClaimRef != nil {
		t.Errorf("the other PV got a claimRef %+v", got.Spec.ClaimRef)
	}
}

// A Retain volume whose claim is deleted is Released and stays so, its claimRef kept
// (binder_test 4-3; persistent_volumes_test's TestPersistentVolumeRecycler with Retain).
func TestPVBinder_RetainReleased(t *testing.T) {
	pbStart(t)
	ns := Namespace(t)
	name := pbName("pb-retain")
	pbPV(t, name, "1Gi", "", corev1.PersistentVolumeReclaimRetain, nil, nil)
	pbPVC(t, ns, "keep", "1Gi", ptr.To(""), name)
	pvc := pbWaitPVCBound(t, ns, "keep", pbResyncWait)
	pbWaitPVPhase(t, name, corev1.VolumeBound, 30*time.Second)
	pbDeletePVC(t, ns, "keep")
	pv := pbWaitPVPhase(t, name, corev1.VolumeReleased, 30*time.Second)
	if pv.Spec.ClaimRef == nil || pv.Spec.ClaimRef.UID != pvc.UID {
		t.Fatalf("Released PV lost its claimRef: %+v", pv.Spec.ClaimRef)
	}
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		if pv := pbGetPV(t, name); pv.Status.Phase != corev1.VolumeReleased || pv.Spec.ClaimRef == nil {
			t.Fatalf("Retain PV changed: %s %+v", pv.Status.Phase, pv.Spec.ClaimRef)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// A claim with no match and no class gets FailedBinding and stays Pending; the periodic
// resync binds it once a volume appears (binder_test 1-2; persistent_volumes_test's
// TestPersistentVolumeBindRace shape).
func TestPVBinder_FailedBindingThenBind(t *testing.T) {
	pbStart(t)
	ns := Namespace(t)
	pbPVC(t, ns, "waiting", "7Gi", ptr.To(""), "")
	msg := pbEvent(t, ns, "PersistentVolumeClaim", "waiting", "FailedBinding", 30*time.Second)
	if msg != "no persistent volumes available for this claim and no storage class is set" {
		t.Errorf("FailedBinding message %q", msg)
	}
	if pvc := pbGetPVC(t, ns, "waiting"); pvc.Status.Phase != corev1.ClaimPending {
		t.Fatalf("claim %s", pvc.Status.Phase)
	}
	name := pbName("pb-late")
	pbPV(t, name, "8Gi", "", corev1.PersistentVolumeReclaimRetain, nil, nil)
	pvc := pbWaitPVCBound(t, ns, "waiting", pbResyncWait)
	if pvc.Spec.VolumeName != name {
		t.Fatalf("bound to %q", pvc.Spec.VolumeName)
	}
}

// A claim created with no class while no default class exists gets the default class once
// one is made (RetroactiveDefaultStorageClass), then is handed to its external provisioner.
func TestPVBinder_DefaultClassRetroactive(t *testing.T) {
	ctx := context.Background()
	scs, err := env.Client.StorageV1().StorageClasses().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, sc := range scs.Items {
		if sc.Annotations["storageclass.kubernetes.io/is-default-class"] == "true" {
			t.Fatalf("the cluster already has a default StorageClass %s: the claim would get it at creation", sc.Name)
		}
	}
	_, port := pbStartMetrics(t)
	ns := Namespace(t)
	pbPVC(t, ns, "classless", "1Gi", nil, "")
	pbEvent(t, ns, "PersistentVolumeClaim", "classless", "FailedBinding", 30*time.Second)
	if pvc := pbGetPVC(t, ns, "classless"); pvc.Spec.StorageClassName != nil {
		t.Fatalf("claim got class %q before any default existed", *pvc.Spec.StorageClassName)
	}
	class := pbName("pb-default")
	pbClass(t, class, storagev1.VolumeBindingImmediate, true)
	Eventually(t, pbResyncWait, "the default class assigned", func() (bool, string) {
		pvc := pbGetPVC(t, ns, "classless")
		if pvc.Spec.StorageClassName == nil {
			return false, "no class"
		}
		return *pvc.Spec.StorageClassName == class, *pvc.Spec.StorageClassName
	})
	Eventually(t, 30*time.Second, "the provisioner annotation", func() (bool, string) {
		pvc := pbGetPVC(t, ns, "classless")
		return pvc.Annotations[pbAnnProvisioner] == pbProvisioner, fmt.Sprint(pvc.Annotations)
	})
	// the assignment counted (RecordRetroactiveStorageClassMetric(true)); an attempt that
	// failed (a conflict with a stale cached claim, retried) counts in both. Every classless
	// claim of the cluster gets the new default class (other tests leave some behind), so the
	// successes are at least this claim's and at most the claims that now have the class.
	_, _, body := gcxGet(t, port, "/metrics")
	for _, want := range []string{
		"# HELP retroactive_storageclass_total [ALPHA] Total number of retroactive StorageClass assignments to persistent volume claim\n# TYPE retroactive_storageclass_total counter\n",
		"# HELP retroactive_storageclass_errors_total [ALPHA] Total number of failed retroactive StorageClass assignments to persistent volume claim\n# TYPE retroactive_storageclass_errors_total counter\n",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
	total := ctlmSum(t, body, "retroactive_storageclass_total ")
	errs := ctlmSum(t, body, "retroactive_storageclass_errors_total ")
	all, err := env.Client.CoreV1().PersistentVolumeClaims("").List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	withClass := 0
	for i := range all.Items {
		if c := all.Items[i].Spec.StorageClassName; c != nil && *c == class {
			withClass++
		}
	}
	if total < 1 || errs < 0 || total-errs < 1 || total-errs > float64(withClass) {
		t.Errorf("retroactive_storageclass_total %v, _errors_total %v: want between 1 and %d successes (the claims with class %s)",
			total, errs, withClass, class)
	}
}

// A claim of a WaitForFirstConsumer class with no selected node gets the
// WaitForFirstConsumer Event and nothing else: no binding (an Available volume of the class
// is left to the scheduler), no provisioner annotation; with an unscheduled pod using it, the
// WaitForPodScheduled Event; once the scheduler's selected-node annotation is there, it is
// handed to the provisioner.
func TestPVBinder_WaitForFirstConsumer(t *testing.T) {
	pbStart(t)
	ns := Namespace(t)
	class := pbName("pb-wffc")
	pbClass(t, class, storagev1.VolumeBindingWaitForFirstConsumer, false)
	name := pbName("pb-wffc-pv")
	pbPV(t, name, "1Gi", class, corev1.PersistentVolumeReclaimRetain, nil, nil)
	pbWaitPVPhase(t, name, corev1.VolumeAvailable, 30*time.Second)
	pbPVC(t, ns, "later", "1Gi", ptr.To(class), "")
	msg := pbEvent(t, ns, "PersistentVolumeClaim", "later", "WaitForFirstConsumer", 30*time.Second)
	if msg != "waiting for first consumer to be created before binding" {
		t.Errorf("message %q", msg)
	}
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		pvc := pbGetPVC(t, ns, "later")
		if pvc.Status.Phase != corev1.ClaimPending || pvc.Spec.VolumeName != "" || pvc.Annotations[pbAnnProvisioner] != "" {
			t.Fatalf("claim acted on: %s %q %v", pvc.Status.Phase, pvc.Spec.VolumeName, pvc.Annotations)
		}
		time.Sleep(500 * time.Millisecond)
	}
	if pv := pbGetPV(t, name); pv.Spec.ClaimRef != nil {
		t.Fatalf("the Available volume was bound: %+v", pv.Spec.ClaimRef)
	}
	// an unscheduled pod using the claim names the wait (the pods read as the binder's
	// service account)
	_, err := env.Client.CoreV1().Pods(ns).Create(context.Background(), &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "consumer"},
		Spec: corev1.PodSpec{
			Containers: []corev1.Container{{Name: "c", Image: "fakeimage"}},
			Volumes: []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{
				PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "later"}}}},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	msg = pbEvent(t, ns, "PersistentVolumeClaim", "later", "WaitForPodScheduled", pbResyncWait)
	if msg != "waiting for pod consumer to be scheduled" {
		t.Errorf("WaitForPodScheduled message %q", msg)
	}
	patch := []byte(`{"metadata":{"annotations":{"volume.kubernetes.io/selected-node":"node-1"}}}`)
	if _, err := env.Client.CoreV1().PersistentVolumeClaims(ns).Patch(context.Background(), "later", types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	Eventually(t, 30*time.Second, "the provisioner annotation after node selection", func() (bool, string) {
		pvc := pbGetPVC(t, ns, "later")
		return pvc.Annotations[pbAnnProvisioner] == pbProvisioner, fmt.Sprint(pvc.Annotations)
	})
}

// An Immediate class of an external provisioner: the claim gets both provisioner annotations
// and the ExternalProvisioning Event; the volume the provisioner then creates (pre-bound by
// claimRef uid, provisioned-by, Delete) is bound; after the claim is deleted the volume is
// Released and left for the external deleter (not Failed, not deleted).
func TestPVBinder_ExternalProvisioner(t *testing.T) {
	pbStart(t)
	ns := Namespace(t)
	class := pbName("pb-ext")
	pbClass(t, class, storagev1.VolumeBindingImmediate, false)
	pvc := pbPVC(t, ns, "dyn", "1Gi", ptr.To(class), "")
	Eventually(t, 30*time.Second, "both provisioner annotations", func() (bool, string) {
		pvc = pbGetPVC(t, ns, "dyn")
		return pvc.Annotations[pbAnnProvisioner] == pbProvisioner && pvc.Annotations[pbAnnBetaProv] == pbProvisioner,
			fmt.Sprint(pvc.Annotations)
	})
	msg := pbEvent(t, ns, "PersistentVolumeClaim", "dyn", "ExternalProvisioning", 30*time.Second)
	want := "Waiting for a volume to be created either by the external provisioner '" + pbProvisioner +
		"' or manually by the system administrator. If volume creation is delayed, please verify " +
		"that the provisioner is running and correctly registered."
	if msg != want {
		t.Errorf("ExternalProvisioning message\n got  %q\n want %q", msg, want)
	}
	// the external provisioner's part
	name := "pvc-" + string(pvc.UID)
	pbPV(t, name, "1Gi", class, corev1.PersistentVolumeReclaimDelete,
		&corev1.ObjectReference{Kind: "PersistentVolumeClaim", APIVersion: "v1", Namespace: ns, Name: "dyn", UID: pvc.UID},
		map[string]string{"pv.kubernetes.io/provisioned-by": pbProvisioner})
	pvc = pbWaitPVCBound(t, ns, "dyn", pbResyncWait)
	if pvc.Spec.VolumeName != name {
		t.Fatalf("bound to %q", pvc.Spec.VolumeName)
	}
	pbWaitPVPhase(t, name, corev1.VolumeBound, 30*time.Second)
	pbDeletePVC(t, ns, "dyn")
	pbWaitPVPhase(t, name, corev1.VolumeReleased, 30*time.Second)
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		pv, err := env.Client.CoreV1().PersistentVolumes().Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			t.Fatalf("the external provisioner's volume: %v", err)
		}
		if pv.Status.Phase != corev1.VolumeReleased || pv.DeletionTimestamp != nil {
			t.Fatalf("the external provisioner's volume: %s deleting=%v", pv.Status.Phase, pv.DeletionTimestamp != nil)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// pbCrashPairs is the number of claim/volume pairs of the crash test.
const pbCrashPairs = 30

// pbCrashSetup creates pbCrashPairs volumes and claims in ns, pair i a volume of (1000+i)Mi
// labelled pair=<i> and crash=<run> and a claim of the same size selecting pair=<i>: each claim
// has exactly one right volume. It returns the claim name -> volume name pairs and the run
// label's value.
func pbCrashSetup(t *testing.T, ns string) (map[string]string, string) {
	t.Helper()
	run := pbName("pbc")
	pairs := map[string]string{}
	ctx := context.Background()
	for i := 0; i < pbCrashPairs; i++ {
		size := fmt.Sprintf("%dMi", 1000+i)
		vol := fmt.Sprintf("%s-%d", run, i)
		pbPV(t, vol, size, "", corev1.PersistentVolumeReclaimRetain, nil, nil)
		patch := []byte(fmt.Sprintf(`{"metadata":{"labels":{"crash":%q,"pair":"%d"}}}`, run, i))
		if _, err := env.Client.CoreV1().PersistentVolumes().Patch(ctx, vol, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
		claim := fmt.Sprintf("c-%d", i)
		_, err := env.Client.CoreV1().PersistentVolumeClaims(ns).Create(ctx, &corev1.PersistentVolumeClaim{
			ObjectMeta: metav1.ObjectMeta{Name: claim},
			Spec: corev1.PersistentVolumeClaimSpec{
				AccessModes: []corev1.PersistentVolumeAccessMode{pbAccess},
				Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse(size)}},
				Selector: &metav1.LabelSelector{MatchLabels: map[string]string{
					"crash": run, "pair": fmt.Sprint(i)}},
				StorageClassName: ptr.To(""),
			},
		}, metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("creating PVC %s: %v", claim, err)
		}
		pairs[claim] = vol
	}
	return pairs, run
}

// pbCrashVerdict is the crash test's oracle. It waits (up to timeout) for every claim of pairs
// to be Bound, then checks the claims and every volume labelled crash=<run>: each claim Bound to
// exactly its volume with bind-completed and bound-by-controller "yes"; each volume with a
// claimRef Bound, the claimRef naming (kind, namespace, name, uid) a claim whose volumeName is
// this volume, bound-by-controller "yes"; no claim named by two volumes; each pair's volume
// carrying its claim's uid. It returns the problems found, or "".
func pbCrashVerdict(t *testing.T, ns, run string, pairs map[string]string, timeout time.Duration) string {
	t.Helper()
	ctx := context.Background()
	claims := map[string]corev1.PersistentVolumeClaim{}
	deadline := time.Now().Add(timeout)
	for {
		l, err := env.Client.CoreV1().PersistentVolumeClaims(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		bound := 0
		claims = map[string]corev1.PersistentVolumeClaim{}
		for _, c := range l.Items {
			claims[c.Name] = c
			if _, ok := pairs[c.Name]; ok && c.Status.Phase == corev1.ClaimBound {
				bound++
			}
		}
		if bound == len(pairs) || time.Now().After(deadline) {
			break
		}
		time.Sleep(500 * time.Millisecond)
	}
	vl, err := env.Client.CoreV1().PersistentVolumes().List(ctx, metav1.ListOptions{LabelSelector: "crash=" + run})
	if err != nil {
		t.Fatal(err)
	}
	vols := map[string]corev1.PersistentVolume{}
	for _, v := range vl.Items {
		vols[v.Name] = v
	}
	var problems []string
	bad := func(f string, a ...any) { problems = append(problems, fmt.Sprintf(f, a...)) }
	for claim, vol := range pairs {
		c, ok := claims[claim]
		if !ok {
			bad("claim %s is gone", claim)
			continue
		}
		if c.Status.Phase != corev1.ClaimBound || c.Spec.VolumeName != vol {
			bad("claim %s is %s on %q, want Bound on %s", claim, c.Status.Phase, c.Spec.VolumeName, vol)
		}
		if c.Annotations[pbAnnBindCompleted] != "yes" || c.Annotations[pbAnnBoundByCtrl] != "yes" {
			bad("claim %s annotations %v", claim, c.Annotations)
		}
		if v, ok := vols[vol]; !ok {
			bad("volume %s is gone", vol)
		} else if v.Spec.ClaimRef == nil || v.Spec.ClaimRef.UID != c.UID {
			bad("volume %s does not carry claim %s's uid: %+v", vol, claim, v.Spec.ClaimRef)
		}
	}
	named := map[string][]string{}
	for name, v := range vols {
		ref := v.Spec.ClaimRef
		if ref == nil {
			continue
		}
		key := ref.Namespace + "/" + ref.Name
		named[key] = append(named[key], name)
		c, ok := claims[ref.Name]
		switch {
		case ref.Namespace != ns || !ok:
			bad("volume %s names claim %s, which does not exist", name, key)
		case ref.Kind != "PersistentVolumeClaim" || ref.UID != c.UID:
			bad("volume %s claimRef %s/%s uid %q, the claim's uid is %q", name, ref.Kind, key, ref.UID, c.UID)
		case c.Spec.VolumeName != name:
			bad("volume %s names claim %s, which points at volume %q", name, key, c.Spec.VolumeName)
		}
		if v.Status.Phase != corev1.VolumeBound {
			bad("volume %s with a claimRef is %s", name, v.Status.Phase)
		}
		if v.Annotations[pbAnnBoundByCtrl] != "yes" {
			bad("volume %s annotations %v", name, v.Annotations)
		}
	}
	for key, vs := range named {
		if len(vs) > 1 {
			sort.Strings(vs)
			bad("claim %s is named by %d volumes: %v", key, len(vs), vs)
		}
	}
	sort.Strings(problems)
	return strings.Join(problems, "; ")
}

// TestPVBinder_CrashDuringBinding: 30 claims and their 30 volumes (one right volume each, by a
// label selector and a unique size) are bound by a binder on a slow client (10 QPS, each bind
// is four writes) whose worker is killed (SIGKILL) up to four times while some claims are Bound
// and some are not, each kill after more claims were bound than at the previous one; the
// second kill also kills informerd. Every claim must end Bound to exactly its volume, both
// sides as one uninterrupted bind leaves them (pbCrashVerdict).
func TestPVBinder_CrashDuringBinding(t *testing.T) {
	p := pbStart(t, "--kube-api-qps=10", "--kube-api-burst=2")
	mgr := p.cmd.Process.Pid
	ns := Namespace(t)
	pairs, run := pbCrashSetup(t, ns)
	ctx := context.Background()
	kills, informerdKills, atKill := 0, 0, 0
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) && kills < 4 {
		l, err := env.Client.CoreV1().PersistentVolumeClaims(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, c := range l.Items {
			if c.Status.Phase == corev1.ClaimBound {
				n++
			}
		}
		if n >= pbCrashPairs {
			break
		}
		if n == 0 || n <= atKill {
			time.Sleep(20 * time.Millisecond)
			continue
		}
		killed := false
		for pid, comm := range childrenOf(mgr) {
			if comm == "kcmd-worker" && syscall.Kill(pid, syscall.SIGKILL) == nil {
				killed = true
				t.Logf("kill -9 the binder's worker %d with %d of %d claims Bound", pid, n, pbCrashPairs)
			}
		}
		if killed {
			kills++
			atKill = n
		}
		if kills == 2 && informerdKills == 0 {
			if pid := hgmInformerdPid(mgr); pid != 0 && syscall.Kill(pid, syscall.SIGKILL) == nil {
				informerdKills++
				t.Logf("kill -9 informerd %d with %d of %d claims Bound", pid, n, pbCrashPairs)
			}
		}
	}
	if kills == 0 {
		t.Fatalf("no binder worker was killed while 1 to %d of the %d claims were Bound", pbCrashPairs-1, pbCrashPairs)
	}
	if problem := pbCrashVerdict(t, ns, run, pairs, 120*time.Second); problem != "" {
		t.Fatalf("%s (killed the worker %d times, informerd %d)", problem, kills, informerdKills)
	}
	t.Logf("killed the binder's worker %d times and informerd %d times mid-binding; %d claims each bound to its volume",
		kills, informerdKills, pbCrashPairs)
}

// TestPVBinder_CrashDuringBindingNegativeControl: the fault a killed binder could leave is a
// claim bound on two volumes (a bind redone on another volume after a crash between the
// volume's write and the claim's). The same pairs as the crash test, no kill; once all are
// bound, a 31st volume labelled as the test's, pre-bound by claimRef (with uid) to the already
// bound claim c-0 (no bound-by-controller annotation: a user's pre-binding, which the binder
// keeps, only dropping the uid), is created behind the controller's back; the crash test's
// oracle must report the claim named by two volumes.
func TestPVBinder_CrashDuringBindingNegativeControl(t *testing.T) {
	pbStart(t, "--kube-api-qps=10", "--kube-api-burst=2")
	ns := Namespace(t)
	pairs, run := pbCrashSetup(t, ns)
	if problem := pbCrashVerdict(t, ns, run, pairs, 120*time.Second); problem != "" {
		t.Fatalf("without any fault: %s", problem)
	}
	c0 := pbGetPVC(t, ns, "c-0")
	extra := run + "-extra"
	pbPV(t, extra, "1000Mi", "", corev1.PersistentVolumeReclaimRetain,
		&corev1.ObjectReference{Kind: "PersistentVolumeClaim", APIVersion: "v1", Namespace: ns, Name: "c-0", UID: c0.UID}, nil)
	patch := []byte(fmt.Sprintf(`{"metadata":{"labels":{"crash":%q}}}`, run))
	if _, err := env.Client.CoreV1().PersistentVolumes().Patch(context.Background(), extra, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(2 * time.Second) // the binder's answer to the extra volume, whatever it is
	problem := pbCrashVerdict(t, ns, run, pairs, 10*time.Second)
	if !strings.Contains(problem, "claim "+ns+"/c-0 is named by 2 volumes") {
		t.Fatalf("negative control: a second volume names the bound claim c-0, the oracle said %q", problem)
	}
	t.Logf("negative control: the oracle reports %q", problem)
}

// pbPluginName is the plugin_name label kcm's binder gives a volume: the in-tree plugin of its
// plugin manager that supports it (hostPath, nfs), else "N/A" (CSI included: not in the
// binder's plugin list).
func pbPluginName(pv *corev1.PersistentVolume) string {
	switch {
	case pv.Spec.HostPath != nil:
		return "kubernetes.io/host-path"
	case pv.Spec.NFS != nil:
		return "kubernetes.io/nfs"
	}
	return "N/A"
}

// TestPVBinder_Metrics: upstream's pv_collector_* gauges, computed from the cache at each
// scrape, against the objects: volumes of a class of the test's own by phase (bound /
// unbound), claims of the test's namespace by class and VolumeAttributesClass, the total of
// every volume of the cluster by plugin and volume mode (compared with a list of them); a
// series whose objects are gone disappears (no stale 0), as upstream's const metrics.
func TestPVBinder_Metrics(t *testing.T) {
	_, port := pbStartMetrics(t)
	ns := Namespace(t)
	ctx := context.Background()
	cls := pbName("pbm")
	pvA, pvB, pvHost := cls+"-a", cls+"-b", cls+"-host"
	pbPV(t, pvA, "1Gi", cls, corev1.PersistentVolumeReclaimRetain, nil, nil)
	pbPV(t, pvB, "2Gi", cls, corev1.PersistentVolumeReclaimRetain, nil, nil)
	_, err := env.Client.CoreV1().PersistentVolumes().Create(ctx, &corev1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: pvHost},
		Spec: corev1.PersistentVolumeSpec{
			Capacity:                      corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("9Gi")},
			AccessModes:                   []corev1.PersistentVolumeAccessMode{pbAccess},
			PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimRetain,
			StorageClassName:              cls,
			VolumeMode:                    ptr.To(corev1.PersistentVolumeBlock),
			PersistentVolumeSource: corev1.PersistentVolumeSource{
				HostPath: &corev1.HostPathVolumeSource{Path: "/tmp/" + pvHost}},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = env.Client.CoreV1().PersistentVolumes().Delete(context.Background(), pvHost, metav1.DeleteOptions{})
	})
	pbPVC(t, ns, "bound", "1Gi", ptr.To(cls), "")
	pbPVC(t, ns, "toobig", "100Gi", ptr.To(cls), "")
	pbPVC(t, ns, "noclass", "50Gi", ptr.To(""), "")
	_, err = env.Client.CoreV1().PersistentVolumeClaims(ns).Create(ctx, &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: "vac"},
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes:               []corev1.PersistentVolumeAccessMode{pbAccess},
			Resources:                 corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("100Gi")}},
			StorageClassName:          ptr.To(cls),
			VolumeAttributesClassName: ptr.To("pbm-vac"),
		},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if pvc := pbWaitPVCBound(t, ns, "bound", pbResyncWait); pvc.Spec.VolumeName != pvA {
		t.Fatalf("bound to %q", pvc.Spec.VolumeName)
	}
	pbWaitPVPhase(t, pvA, corev1.VolumeBound, 30*time.Second)
	scrape := func() string {
		code, _, b := gcxGet(t, port, "/metrics")
		if code != 200 {
			t.Fatalf("/metrics: %d", code)
		}
		return b
	}
	sc := `storage_class="` + cls + `"`
	pvc := func(class, vac string) string {
		return fmt.Sprintf(`{namespace="%s",storage_class="%s",volume_attributes_class="%s"} `, ns, class, vac)
	}
	want := map[string]float64{
		"pv_collector_bound_pv_count{" + sc + "} ":             1,
		"pv_collector_unbound_pv_count{" + sc + "} ":           2,
		"pv_collector_bound_pvc_count" + pvc(cls, ""):          1,
		"pv_collector_unbound_pvc_count" + pvc(cls, ""):        1,
		"pv_collector_unbound_pvc_count" + pvc("", ""):         1,
		"pv_collector_unbound_pvc_count" + pvc(cls, "pbm-vac"): 1,
	}
	Eventually(t, 30*time.Second, "the class's and namespace's gauges", func() (bool, string) {
		body := scrape()
		for k, v := range want {
			if got := ctlmSum(t, body, k); got != v {
				return false, fmt.Sprintf("%s= %v, want %v", k, got, v)
			}
		}
		return true, ""
	})
	body := scrape()
	for _, h := range []string{
		"# HELP pv_collector_bound_pv_count [ALPHA] Gauge measuring number of persistent volume currently bound\n# TYPE pv_collector_bound_pv_count gauge\n",
		"# HELP pv_collector_unbound_pvc_count [ALPHA] Gauge measuring number of persistent volume claim currently unbound\n# TYPE pv_collector_unbound_pvc_count gauge\n",
		"# HELP pv_collector_total_pv_count [ALPHA] Gauge measuring total number of persistent volumes\n# TYPE pv_collector_total_pv_count gauge\n",
	} {
		if !strings.Contains(body, h) {
			t.Errorf("/metrics lacks %q", h)
		}
	}
	// every volume of the cluster, by plugin and mode: the list and the scrape agree (other
	// tests' volumes may come and go between the two: retried)
	Eventually(t, 30*time.Second, "pv_collector_total_pv_count against the volumes", func() (bool, string) {
		l, err := env.Client.CoreV1().PersistentVolumes().List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err.Error()
		}
		count := map[string]float64{}
		for i := range l.Items {
			mode := "Filesystem"
			if m := l.Items[i].Spec.VolumeMode; m != nil {
				mode = string(*m)
			}
			count[fmt.Sprintf(`pv_collector_total_pv_count{plugin_name="%s",volume_mode="%s"} `, pbPluginName(&l.Items[i]), mode)]++
		}
		body := scrape()
		total := ctlmSum(t, body, "pv_collector_total_pv_count{")
		if total != float64(len(l.Items)) {
			return false, fmt.Sprintf("total %v, %d volumes listed", total, len(l.Items))
		}
		for k, v := range count {
			if got := ctlmSum(t, body, k); got != v {
				return false, fmt.Sprintf("%s= %v, want %v", k, got, v)
			}
		}
		return true, ""
	})
	if v := ctlmSum(t, scrape(), `pv_collector_total_pv_count{plugin_name="kubernetes.io/host-path",volume_mode="Block"} `); v < 1 {
		t.Errorf("the hostPath Block volume is not counted under its plugin: %v", v)
	}
	// the bound claim gone: its series is gone (not 0), its volume Released counts unbound
	pbDeletePVC(t, ns, "bound")
	pbWaitPVPhase(t, pvA, corev1.VolumeReleased, 30*time.Second)
	Eventually(t, 30*time.Second, "the emptied series gone", func() (bool, string) {
		body := scrape()
		if strings.Contains(body, "pv_collector_bound_pvc_count"+pvc(cls, "")) {
			return false, "bound_pvc_count of the namespace still rendered"
		}
		if strings.Contains(body, "pv_collector_bound_pv_count{"+sc+"} ") {
			return false, "bound_pv_count of the class still rendered"
		}
		if got := ctlmSum(t, body, "pv_collector_unbound_pv_count{"+sc+"} "); got != 3 {
			return false, fmt.Sprintf("unbound_pv_count %v", got)
		}
		return true, ""
	})
}

// TestPVBinder_InTreeDeletionFinalizer: upstream's modifyDeletionFinalizers on real volumes: a
// volume provisioned by a (not migrated) in-tree plugin with reclaim policy Delete gets
// kubernetes.io/pv-controller (and loses the external provisioner's finalizer), loses it again
// when its policy becomes Retain; a volume of a plugin migrated to CSI loses the in-tree
// finalizer and keeps the CSI provisioner's (with its migrated-to annotation set); a volume of
// an external provisioner is left alone.
func TestPVBinder_InTreeDeletionFinalizer(t *testing.T) {
	pbStart(t)
	ctx := context.Background()
	const inTree, external = "kubernetes.io/pv-controller", "external-provisioner.volume.kubernetes.io/finalizer"
	base := pbName("pbf")
	hp, gce, ext := base+"-hp", base+"-gce", base+"-ext"
	pbPV(t, hp, "1Gi", "", corev1.PersistentVolumeReclaimDelete, nil,
		map[string]string{"pv.kubernetes.io/provisioned-by": "kubernetes.io/host-path"})
	pbPV(t, gce, "1Gi", "", corev1.PersistentVolumeReclaimDelete, nil,
		map[string]string{"pv.kubernetes.io/provisioned-by": "kubernetes.io/gce-pd"})
	pbPV(t, ext, "1Gi", "", corev1.PersistentVolumeReclaimDelete, nil,
		map[string]string{"pv.kubernetes.io/provisioned-by": pbProvisioner})
	// the finalizers a provisioner would have set, behind the binder's back
	setFins := func(name string, fins ...string) {
		Eventually(t, 30*time.Second, "finalizers on "+name, func() (bool, string) {
			pv := pbGetPV(t, name)
			pv.Finalizers = append(pv.Finalizers, fins...)
			_, err := env.Client.CoreV1().PersistentVolumes().Update(ctx, pv, metav1.UpdateOptions{})
			return err == nil, fmt.Sprint(err)
		})
	}
	setFins(hp, external)
	setFins(gce, inTree, external)
	setFins(ext, external)
	has := func(pv *corev1.PersistentVolume, f string) bool {
		for _, x := range pv.Finalizers {
			if x == f {
				return true
			}
		}
		return false
	}
	Eventually(t, pbResyncWait, "the in-tree volume's finalizers", func() (bool, string) {
		pv := pbGetPV(t, hp)
		return has(pv, inTree) && !has(pv, external), fmt.Sprint(pv.Finalizers)
	})
	Eventually(t, pbResyncWait, "the migrated volume's finalizers", func() (bool, string) {
		pv := pbGetPV(t, gce)
		return !has(pv, inTree) && has(pv, external) &&
			pv.Annotations["pv.kubernetes.io/migrated-to"] == "pd.csi.storage.gke.io", fmt.Sprint(pv.Finalizers, pv.Annotations)
	})
	Eventually(t, 30*time.Second, "the policy Retain", func() (bool, string) {
		pv := pbGetPV(t, hp)
		pv.Spec.PersistentVolumeReclaimPolicy = corev1.PersistentVolumeReclaimRetain
		_, err := env.Client.CoreV1().PersistentVolumes().Update(ctx, pv, metav1.UpdateOptions{})
		return err == nil, fmt.Sprint(err)
	})
	Eventually(t, pbResyncWait, "the in-tree finalizer removed under Retain", func() (bool, string) {
		pv := pbGetPV(t, hp)
		return !has(pv, inTree), fmt.Sprint(pv.Finalizers)
	})
	if pv := pbGetPV(t, ext); !has(pv, external) || has(pv, inTree) {
		t.Errorf("the external provisioner's volume was touched: %v", pv.Finalizers)
	}
}
