package e2e

// kcmd's persistentvolume-expander-controller (docs/volumeexpand.md) against the real
// apiserver, upstream kube-controller-manager not running. Upstream's expand_controller_test.go
// cases on real objects: an in-tree PV under CSI migration (awsElasticBlockStore) gets the
// resizer annotation ebs.csi.aws.com and the ExternalExpanding Event; a native CSI volume (a
// fake driver) and an NFS volume get the Normal "waiting for an external controller" Event and
// no annotation; a claim whose request did not grow gets nothing.
//
// No PV binder runs: the test writes the binding (PV claimRef with the claim's uid, the claim's
// volumeName, both phases Bound, the claim's status capacity). The apiserver's
// PersistentVolumeClaimResize admission plugin lets a bound claim grow only when its
// StorageClass allows expansion, so every claim names one that does (refusing the others is the
// apiserver's part, not the controller's).

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
	"k8s.io/utils/ptr"
)

const veResizerAnn = "volume.kubernetes.io/storage-resizer"

var (
	veProc     *kcmdProc
	veProcOnce sync.Once
	veProcMu   sync.Mutex
)

// veStart shares one kcmd running only the expander, as its service account (every request
// must pass kcm's bootstrap role system:controller:expand-controller).
func veStart(t *testing.T) {
	t.Helper()
	veProcMu.Lock()
	veProcOnce.Do(func() {
		veProc = startKcmdShared(t, "--controllers=persistentvolume-expander", "--secure-port=0",
			"--leader-elect=false", "--use-service-account-credentials", "--v=4")
	})
	p := veProc
	veProcMu.Unlock()
	t.Cleanup(func() { dumpKcmdLogs(t, p) })
	Eventually(t, 60*time.Second, "the expander acts as its service account", func() (bool, string) {
		return p.Logged("kube-system/expand-controller"), "not yet"
	})
}

// veClass creates a StorageClass allowing expansion, deleted when t ends.
func veClass(t *testing.T, name string) {
	t.Helper()
	ctx := context.Background()
	_, err := env.Client.StorageV1().StorageClasses().Create(ctx, &storagev1.StorageClass{
		ObjectMeta:           metav1.ObjectMeta{Name: name},
		Provisioner:          "kcmd.test/fake",
		AllowVolumeExpansion: ptr.To(true),
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating StorageClass %s: %v", name, err)
	}
	t.Cleanup(func() { _ = env.Client.StorageV1().StorageClasses().Delete(ctx, name, metav1.DeleteOptions{}) })
}

// veBound creates a PV with src and a 1Gi claim bound to it (the binder's writes done by the
// test). The PV is removed (finalizers cleared: no PV protection controller runs) when t ends.
func veBound(t *testing.T, ns, class, name string, src corev1.PersistentVolumeSource) *corev1.PersistentVolumeClaim {
	t.Helper()
	ctx := context.Background()
	pvName := ns + "-" + name
	oneGi := resource.MustParse("1Gi")
	pvc, err := env.Client.CoreV1().PersistentVolumeClaims(ns).Create(ctx, &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes:      []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources:        corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: oneGi}},
			StorageClassName: ptr.To(class),
			VolumeName:       pvName,
		},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating PVC %s: %v", name, err)
	}
	pv, err := env.Client.CoreV1().PersistentVolumes().Create(ctx, &corev1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: pvName},
		Spec: corev1.PersistentVolumeSpec{
			Capacity:               corev1.ResourceList{corev1.ResourceStorage: oneGi},
			AccessModes:            []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			PersistentVolumeSource: src,
			StorageClassName:       class,
			ClaimRef: &corev1.ObjectReference{Kind: "PersistentVolumeClaim", APIVersion: "v1",
				Namespace: ns, Name: name, UID: pvc.UID},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating PV %s: %v", pvName, err)
	}
	t.Cleanup(func() {
		patch := []byte(`{"metadata":{"finalizers":null}}`)
		_, _ = env.Client.CoreV1().PersistentVolumes().Patch(ctx, pvName, types.MergePatchType, patch, metav1.PatchOptions{})
		_ = env.Client.CoreV1().PersistentVolumes().Delete(ctx, pvName, metav1.DeleteOptions{})
	})
	pv.Status.Phase = corev1.VolumeBound
	if _, err := env.Client.CoreV1().PersistentVolumes().UpdateStatus(ctx, pv, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("PV %s Bound: %v", pvName, err)
	}
	pvc.Status.Phase = corev1.ClaimBound
	pvc.Status.AccessModes = pvc.Spec.AccessModes
	pvc.Status.Capacity = corev1.ResourceList{corev1.ResourceStorage: oneGi}
	pvc, err = env.Client.CoreV1().PersistentVolumeClaims(ns).UpdateStatus(ctx, pvc, metav1.UpdateOptions{})
	if err != nil {
		t.Fatalf("PVC %s Bound: %v", name, err)
	}
	return pvc
}

// veGrow raises the claim's request to 2Gi.
func veGrow(t *testing.T, ns, name string) {
	t.Helper()
	patch := []byte(`{"spec":{"resources":{"requests":{"storage":"2Gi"}}}}`)
	if _, err := env.Client.CoreV1().PersistentVolumeClaims(ns).Patch(context.Background(), name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatalf("growing PVC %s: %v", name, err)
	}
}

func veEvents(t *testing.T, ns, name string) []corev1.Event {
	t.Helper()
	l, err := env.Client.CoreV1().Events(ns).List(context.Background(), metav1.ListOptions{
		FieldSelector: "involvedObject.kind=PersistentVolumeClaim,involvedObject.name=" + name})
	if err != nil {
		t.Fatalf("listing events: %v", err)
	}
	return l.Items
}

// veWaitEvent waits for the ExternalExpanding Event of the claim with type and message.
func veWaitEvent(t *testing.T, ns, name, typ, msg string) {
	t.Helper()
	Eventually(t, 20*time.Second, fmt.Sprintf("%s ExternalExpanding %q on %s", typ, msg, name), func() (bool, string) {
		evs := veEvents(t, ns, name)
		for _, e := range evs {
			if e.Reason == "ExternalExpanding" && e.Type == typ && e.Message == msg {
				if e.Source.Component != "volume_expand" {
					t.Fatalf("event source %q, want volume_expand", e.Source.Component)
				}
				return true, ""
			}
		}
		return false, fmt.Sprintf("%d events: %v", len(evs), evs)
	})
}

func veAnnotation(t *testing.T, ns, name string) (string, bool) {
	t.Helper()
	pvc, err := env.Client.CoreV1().PersistentVolumeClaims(ns).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		if apierrors.IsNotFound(err) {
			t.Fatalf("PVC %s gone", name)
		}
		t.Fatal(err)
	}
	v, ok := pvc.Annotations[veResizerAnn]
	return v, ok
}

// "when pvc and pv has everything for in-tree plugin": the annotation with the CSI driver the
// in-tree plugin migrates to, and upstream's Event; a bound claim that did not grow is left
// alone.
func TestVolumeExpand_MigratedInTree(t *testing.T) {
	veStart(t)
	ns := Namespace(t)
	class := ns + "-sc"
	veClass(t, class)
	ebs := corev1.PersistentVolumeSource{AWSElasticBlockStore: &corev1.AWSElasticBlockStoreVolumeSource{VolumeID: "vol-1", FSType: "ext4"}}
	veBound(t, ns, class, "still", ebs)
	veBound(t, ns, class, "grown", ebs)
	veGrow(t, ns, "grown")
	Eventually(t, 20*time.Second, "resizer annotation on grown", func() (bool, string) {
		v, ok := veAnnotation(t, ns, "grown")
		return ok && v == "ebs.csi.aws.com", fmt.Sprintf("%q %v", v, ok)
	})
	veWaitEvent(t, ns, "grown", "Normal", "CSI migration enabled for kubernetes.io/aws-ebs; waiting for external resizer to expand the pvc")
	if v, ok := veAnnotation(t, ns, "still"); ok {
		t.Fatalf("claim that did not grow got the resizer annotation %q", v)
	}
	if evs := veEvents(t, ns, "still"); len(evs) != 0 {
		t.Fatalf("claim that did not grow got events: %v", evs)
	}
}

// "for csi plugin without migration path" (and a volume of no plugin, NFS): no annotation, the
// Normal Event upstream records when it leaves the expansion to an external controller.
func TestVolumeExpand_ExternalController(t *testing.T) {
	veStart(t)
	ns := Namespace(t)
	class := ns + "-sc"
	veClass(t, class)
	veBound(t, ns, class, "csi", corev1.PersistentVolumeSource{CSI: &corev1.CSIPersistentVolumeSource{Driver: "fake.csi.kcmd.test", VolumeHandle: "h1"}})
	veBound(t, ns, class, "nfs", corev1.PersistentVolumeSource{NFS: &corev1.NFSVolumeSource{Server: "nfs.example", Path: "/x"}})
	veGrow(t, ns, "csi")
	veGrow(t, ns, "nfs")
	for _, n := range []string{"csi", "nfs"} {
		veWaitEvent(t, ns, n, "Normal", "waiting for an external controller to expand this PVC")
		if v, ok := veAnnotation(t, ns, n); ok {
			t.Fatalf("%s: resizer annotation %q, upstream sets none", n, v)
		}
	}
}
