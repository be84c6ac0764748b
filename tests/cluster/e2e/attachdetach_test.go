package e2e

// kcmd's persistentvolume-attach-detach-controller, CSI slice (docs/attachdetach.md), against
// the real apiserver, upstream kube-controller-manager not running it. Each test starts its own
// kcmd running only this controller, as its service account (kcm's bootstrap role
// system:controller:attachdetach-controller must allow every request), and plays the kubelet
// (node status volumesInUse) and the external attacher (VolumeAttachment status.attached)
// itself. Ported from test/integration/volume/attach_detach_test.go where no kubelet or
// container runtime is needed: a pod's volume attached on a controller-managed node and
// reported in the node status, the detach after the pod goes (only once the volume is no
// longer in use), the Multi-Attach ("Waiting for detach") Event, attachRequired=false, a restart of kcmd (the
// populator: nothing detached, nothing created again) and a deleted node.
//
// Every test uses a CSI driver and node names of its own and ReadWriteOncePod volumes, so no
// other test's objects are touched.

import (
	"context"
	"crypto/sha256"
	"fmt"
	"strings"
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

const adAnnManaged = "volumes.kubernetes.io/controller-managed-attach-detach"

func adStart(t *testing.T, flags ...string) *kcmdProc {
	t.Helper()
	args := append([]string{"--controllers=persistentvolume-attach-detach-controller", "--secure-port=0",
		"--leader-elect=false", "--use-service-account-credentials", "--v=4"}, flags...)
	p := startKcmd(t, nil, args...)
	Eventually(t, 60*time.Second, "the controller acts as its service account", func() (bool, string) {
		return p.Logged("kube-system/attachdetach-controller"), "not yet"
	})
	return p
}

func adStop(p *kcmdProc) {
	_ = p.cmd.Process.Kill()
	<-p.done
}

type adFixture struct {
	t      *testing.T
	ns     string
	driver string
	suffix string
}

func adNew(t *testing.T) *adFixture {
	s := fmt.Sprintf("%d", time.Now().UnixNano()%10000000)
	return &adFixture{t: t, ns: Namespace(t), driver: "ad-" + s + ".csi.kcmd.test", suffix: s}
}

func (f *adFixture) name(p string) string { return p + "-" + f.suffix }

// node creates a Ready node, managed by the controller unless managed is false.
func (f *adFixture) node(p string, managed bool) string {
	t := f.t
	t.Helper()
	ctx := context.Background()
	name := f.name(p)
	anns := map[string]string{}
	if managed {
		anns[adAnnManaged] = "true"
	}
	if _, err := env.Client.CoreV1().Nodes().Create(ctx, &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: anns},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating node %s: %v", name, err)
	}
	t.Cleanup(func() { _ = env.Client.CoreV1().Nodes().Delete(context.Background(), name, metav1.DeleteOptions{}) })
	patch := []byte(fmt.Sprintf(`{"status":{"conditions":[{"type":"Ready","status":"True","reason":"KubeletReady","lastHeartbeatTime":%q,"lastTransitionTime":%q}]}}`,
		time.Now().UTC().Format(time.RFC3339), time.Now().UTC().Format(time.RFC3339)))
	if _, err := env.Client.CoreV1().Nodes().PatchStatus(ctx, name, patch); err != nil {
		t.Fatal(err)
	}
	return name
}

// volume creates a bound claim and its CSI volume (handle = the PV's name); returns the names.
func (f *adFixture) volume(p, driver string) (claim, pv string) {
	t := f.t
	t.Helper()
	ctx := context.Background()
	claim, pv = f.name(p), f.name(p+"-pv")
	c, err := env.Client.CoreV1().PersistentVolumeClaims(f.ns).Create(ctx, &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: claim},
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes:      []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOncePod},
			Resources:        corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}},
			StorageClassName: ptr.To(""),
			VolumeName:       pv,
		},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := env.Client.CoreV1().PersistentVolumes().Create(ctx, &corev1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: pv},
		Spec: corev1.PersistentVolumeSpec{
			Capacity:                      corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")},
			AccessModes:                   []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOncePod},
			PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimRetain,
			ClaimRef:                      &corev1.ObjectReference{Kind: "PersistentVolumeClaim", APIVersion: "v1", Namespace: f.ns, Name: claim, UID: c.UID},
			PersistentVolumeSource: corev1.PersistentVolumeSource{
				CSI: &corev1.CSIPersistentVolumeSource{Driver: driver, VolumeHandle: pv},
			},
		},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx := context.Background()
		clear := []byte(`{"metadata":{"finalizers":null}}`)
		_ = env.Client.CoreV1().PersistentVolumeClaims(f.ns).Delete(ctx, claim, metav1.DeleteOptions{})
		_, _ = env.Client.CoreV1().PersistentVolumeClaims(f.ns).Patch(ctx, claim, types.MergePatchType, clear, metav1.PatchOptions{})
		_ = env.Client.CoreV1().PersistentVolumes().Delete(ctx, pv, metav1.DeleteOptions{})
		_, _ = env.Client.CoreV1().PersistentVolumes().Patch(ctx, pv, types.MergePatchType, clear, metav1.PatchOptions{})
	})
	// no binder runs: the test binds the claim as the binder would
	c.Status.Phase = corev1.ClaimBound
	c.Status.AccessModes = c.Spec.AccessModes
	c.Status.Capacity = corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}
	if _, err := env.Client.CoreV1().PersistentVolumeClaims(f.ns).UpdateStatus(ctx, c, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	return claim, pv
}

// pod creates a pod scheduled to node using the claims.
func (f *adFixture) pod(p, node string, claims ...string) string {
	t := f.t
	t.Helper()
	name := f.name(p)
	var vols []corev1.Volume
	for i, c := range claims {
		vols = append(vols, corev1.Volume{Name: fmt.Sprintf("v%d", i), VolumeSource: corev1.VolumeSource{
			PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: c}}})
	}
	if _, err := env.Client.CoreV1().Pods(f.ns).Create(context.Background(), &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.PodSpec{
			NodeName:   node,
			Containers: []corev1.Container{{Name: "c", Image: "registry.k8s.io/pause:3.10"}},
			Volumes:    vols,
		},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	return name
}

func (f *adFixture) deletePod(name string) {
	f.t.Helper()
	if err := env.Client.CoreV1().Pods(f.ns).Delete(context.Background(), name, metav1.DeleteOptions{GracePeriodSeconds: ptr.To(int64(0))}); err != nil {
		f.t.Fatal(err)
	}
}

// adVAName is upstream's attachment name, computed here independently of kcmd.
func adVAName(handle, driver, node string) string {
	return fmt.Sprintf("csi-%x", sha256.Sum256([]byte(handle+driver+node)))
}

func adUnique(driver, handle string) string { return "kubernetes.io/csi/" + driver + "^" + handle }

func (f *adFixture) waitVA(name string) *storagev1.VolumeAttachment {
	f.t.Helper()
	var va *storagev1.VolumeAttachment
	Eventually(f.t, 60*time.Second, "VolumeAttachment "+name, func() (bool, string) {
		var err error
		va, err = env.Client.StorageV1().VolumeAttachments().Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		return true, ""
	})
	f.t.Cleanup(func() {
		ctx := context.Background()
		_, _ = env.Client.StorageV1().VolumeAttachments().Patch(ctx, name, types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{})
		_ = env.Client.StorageV1().VolumeAttachments().Delete(ctx, name, metav1.DeleteOptions{})
	})
	return va
}

func (f *adFixture) waitVAGone(name string) {
	f.t.Helper()
	Eventually(f.t, 60*time.Second, "VolumeAttachment "+name+" deleted", func() (bool, string) {
		_, err := env.Client.StorageV1().VolumeAttachments().Get(context.Background(), name, metav1.GetOptions{})
		return apierrors.IsNotFound(err), fmt.Sprint(err)
	})
}

func adVAExists(t *testing.T, name string) bool {
	t.Helper()
	_, err := env.Client.StorageV1().VolumeAttachments().Get(context.Background(), name, metav1.GetOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		t.Fatal(err)
	}
	return err == nil
}

// attach plays the external attacher.
func (f *adFixture) attach(name string) {
	f.t.Helper()
	ctx := context.Background()
	va, err := env.Client.StorageV1().VolumeAttachments().Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		f.t.Fatal(err)
	}
	va.Status.Attached = true
	if _, err := env.Client.StorageV1().VolumeAttachments().UpdateStatus(ctx, va, metav1.UpdateOptions{}); err != nil {
		f.t.Fatal(err)
	}
}

// setInUse plays the kubelet: node.status.volumesInUse.
func setInUse(t *testing.T, node string, unique ...string) {
	t.Helper()
	list := "null"
	if len(unique) > 0 {
		list = `["` + strings.Join(unique, `","`) + `"]`
	}
	if _, err := env.Client.CoreV1().Nodes().PatchStatus(context.Background(), node, []byte(`{"status":{"volumesInUse":`+list+`}}`)); err != nil {
		t.Fatal(err)
	}
}

func adAttached(t *testing.T, node string) []corev1.AttachedVolume {
	t.Helper()
	n, err := env.Client.CoreV1().Nodes().Get(context.Background(), node, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return n.Status.VolumesAttached
}

func waitAttached(t *testing.T, node string, want ...string) {
	t.Helper()
	Eventually(t, 60*time.Second, fmt.Sprintf("node %s volumesAttached %v", node, want), func() (bool, string) {
		got := adAttached(t, node)
		if len(got) != len(want) {
			return false, fmt.Sprint(got)
		}
		for _, w := range want {
			found := false
			for _, g := range got {
				found = found || (g.Name == corev1.UniqueVolumeName(w) && g.DevicePath == "")
			}
			if !found {
				return false, fmt.Sprint(got)
			}
		}
		return true, ""
	})
}

// adEvent waits for an Event of reason on the pod from the controller and returns its message.
func (f *adFixture) adEvent(pod, reason string) string {
	f.t.Helper()
	msg := ""
	Eventually(f.t, 60*time.Second, fmt.Sprintf("a %s Event on pod %s", reason, pod), func() (bool, string) {
		evs, err := env.Client.CoreV1().Events(f.ns).List(context.Background(), metav1.ListOptions{
			FieldSelector: "involvedObject.kind=Pod,involvedObject.name=" + pod,
		})
		if err != nil {
			return false, err.Error()
		}
		var seen []string
		for _, e := range evs.Items {
			if e.Reason == reason && e.Source.Component == "attachdetach-controller" {
				msg = e.Message
				return true, ""
			}
			seen = append(seen, e.Reason+"/"+e.Source.Component)
		}
		return false, "seen: " + strings.Join(seen, ",")
	})
	return msg
}

// A pod's volume on a managed node gets upstream's VolumeAttachment (name, spec, no finalizer
// of the controller's), is reported in the node status once attached (SuccessfulAttachVolume),
// and after the pod goes is detached only when the node no longer lists it in volumesInUse:
// first out of volumesAttached, then the VolumeAttachment deleted.
func TestAttachDetach_AttachThenDetachAfterUnmount(t *testing.T) {
	adStart(t)
	f := adNew(t)
	node := f.node("n", true)
	claim, pv := f.volume("data", f.driver)
	pod := f.pod("p", node, claim)

	vaName := adVAName(pv, f.driver, node)
	va := f.waitVA(vaName)
	if va.Spec.Attacher != f.driver || va.Spec.NodeName != node || va.Spec.Source.PersistentVolumeName == nil ||
		*va.Spec.Source.PersistentVolumeName != pv || va.Spec.Source.InlineVolumeSpec != nil {
		t.Fatalf("VolumeAttachment spec: %+v", va.Spec)
	}
	if len(va.Finalizers) != 0 {
		t.Fatalf("the controller added finalizers: %v", va.Finalizers)
	}
	if got := adAttached(t, node); len(got) != 0 {
		t.Fatalf("reported before the attacher attached it: %v", got)
	}
	f.attach(vaName)
	unique := adUnique(f.driver, pv)
	waitAttached(t, node, unique)
	msg := f.adEvent(pod, "SuccessfulAttachVolume")
	if want := fmt.Sprintf("AttachVolume.Attach succeeded for volume %q", pv); !strings.HasPrefix(msg, want) {
		t.Fatalf("event message %q, want prefix %q", msg, want)
	}

	// the kubelet mounts it; the pod goes: no detach while it is in use
	setInUse(t, node, unique)
	time.Sleep(2 * time.Second)
	f.deletePod(pod)
	time.Sleep(8 * time.Second)
	if !adVAExists(t, vaName) {
		t.Fatal("detached while the node still lists the volume in volumesInUse")
	}
	waitAttached(t, node, unique)

	// the kubelet unmounts it: reported no more, then detached
	setInUse(t, node)
	waitAttached(t, node)
	f.waitVAGone(vaName)
}

// A ReadWriteOncePod volume attached to one node is not attached to a second: the second pod
// gets upstream's Multi-Attach Event (v1.37 words it "Waiting for detach") naming the pod that
// holds it, and once no pod holds it, the exclusively-attached text.
func TestAttachDetach_MultiAttachError(t *testing.T) {
	adStart(t)
	f := adNew(t)
	n1, n2 := f.node("a", true), f.node("b", true)
	claim, pv := f.volume("data", f.driver)
	p1 := f.pod("p1", n1, claim)
	va1 := adVAName(pv, f.driver, n1)
	f.waitVA(va1)
	f.attach(va1)
	waitAttached(t, n1, adUnique(f.driver, pv))

	p2 := f.pod("p2", n2, claim)
	msg := f.adEvent(p2, "FailedAttachVolume")
	want := fmt.Sprintf("Waiting for detach for volume %q Volume is already used by pod(s) %s", pv, p1)
	if msg != want {
		t.Fatalf("event message %q, want %q", msg, want)
	}
	if adVAExists(t, adVAName(pv, f.driver, n2)) {
		t.Fatal("a second VolumeAttachment was created")
	}

	// the holder goes but the volume is still mounted there: a pod on a third node is told
	// the volume waits for its detach
	setInUse(t, n1, adUnique(f.driver, pv))
	time.Sleep(2 * time.Second)
	f.deletePod(p1)
	n3 := f.node("c", true)
	p3 := f.pod("p3", n3, claim)
	msg = f.adEvent(p3, "FailedAttachVolume")
	want = fmt.Sprintf("Waiting for detach for volume %q Volume is already exclusively attached to one node, waiting on detach before it can be attached to another node", pv)
	if msg != want {
		t.Fatalf("event message %q, want %q", msg, want)
	}
	if !adVAExists(t, va1) || adVAExists(t, adVAName(pv, f.driver, n3)) {
		t.Fatal("the mounted volume was detached, or attached to a third node")
	}
}

// A driver whose CSIDriver says attachRequired=false gets no VolumeAttachment; in the same pod
// a volume of a driver without a CSIDriver object (attach required, as upstream) gets one, so
// the node was synced.
func TestAttachDetach_AttachNotRequired(t *testing.T) {
	adStart(t)
	f := adNew(t)
	noAttach := "na-" + f.driver
	if _, err := env.Client.StorageV1().CSIDrivers().Create(context.Background(), &storagev1.CSIDriver{
		ObjectMeta: metav1.ObjectMeta{Name: noAttach},
		Spec:       storagev1.CSIDriverSpec{AttachRequired: ptr.To(false)},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = env.Client.StorageV1().CSIDrivers().Delete(context.Background(), noAttach, metav1.DeleteOptions{})
	})
	node := f.node("n", true)
	c1, pv1 := f.volume("plain", noAttach)
	c2, pv2 := f.volume("attached", f.driver)
	f.pod("p", node, c1, c2)
	f.waitVA(adVAName(pv2, f.driver, node))
	time.Sleep(3 * time.Second)
	if adVAExists(t, adVAName(pv1, noAttach, node)) {
		t.Fatal("a VolumeAttachment for a driver with attachRequired=false")
	}

	// a node without the controller-managed annotation is the kubelet's: nothing created
	other := f.node("kubelet", false)
	c3, pv3 := f.volume("kubelet", f.driver)
	f.pod("pk", other, c3)
	time.Sleep(5 * time.Second)
	if adVAExists(t, adVAName(pv3, f.driver, other)) {
		t.Fatal("a VolumeAttachment on a node not managed by the controller")
	}
}

// A restart of kcmd neither detaches nor re-creates what is attached (the populator): the
// VolumeAttachment keeps its uid, the node keeps reporting it; the new kcmd does sync the node
// (a second pod's volume attaches).
func TestAttachDetach_RestartKeepsAttachments(t *testing.T) {
	p := adStart(t)
	f := adNew(t)
	node := f.node("n", true)
	claim, pv := f.volume("data", f.driver)
	f.pod("p", node, claim)
	vaName := adVAName(pv, f.driver, node)
	f.waitVA(vaName)
	f.attach(vaName)
	unique := adUnique(f.driver, pv)
	waitAttached(t, node, unique)
	va, err := env.Client.StorageV1().VolumeAttachments().Get(context.Background(), vaName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}

	adStop(p)
	adStart(t)
	claim2, pv2 := f.volume("more", f.driver)
	f.pod("p2", node, claim2)
	va2 := adVAName(pv2, f.driver, node)
	f.waitVA(va2)
	f.attach(va2)
	waitAttached(t, node, unique, adUnique(f.driver, pv2))
	after, err := env.Client.StorageV1().VolumeAttachments().Get(context.Background(), vaName, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("the first VolumeAttachment after the restart: %v", err)
	}
	if after.UID != va.UID || after.DeletionTimestamp != nil {
		t.Fatalf("the VolumeAttachment was re-created or deleted: uid %s -> %s, deletion %v", va.UID, after.UID, after.DeletionTimestamp)
	}
}

// The volumes of a deleted node are detached.
func TestAttachDetach_DeletedNodeDetached(t *testing.T) {
	adStart(t)
	f := adNew(t)
	node := f.node("n", true)
	claim, pv := f.volume("data", f.driver)
	f.pod("p", node, claim)
	vaName := adVAName(pv, f.driver, node)
	f.waitVA(vaName)
	f.attach(vaName)
	waitAttached(t, node, adUnique(f.driver, pv))
	if err := env.Client.CoreV1().Nodes().Delete(context.Background(), node, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	f.waitVAGone(vaName)
}

// kcm refuses to start with --attach-detach-reconcile-sync-period under one second; so does kcmd.
func TestAttachDetach_SyncPeriodUnderOneSecondRefused(t *testing.T) {
	p := launchKcmd(t, nil, "--controllers=persistentvolume-attach-detach-controller", "--secure-port=0",
		"--leader-elect=false", "--attach-detach-reconcile-sync-period=500ms")
	select {
	case <-p.done:
	case <-time.After(30 * time.Second):
		adStop(p)
		t.Fatal("kcmd still running with a sync period of 500ms")
	}
	if p.err == nil {
		t.Fatal("kcmd exited with status 0")
	}
	if !p.Logged("duration time must be greater than one second as set via command line option reconcile-sync-loop-period") {
		t.Fatalf("no upstream message in the log:\n%s", strings.Join(p.Logs(), "\n"))
	}
}

// The attacher's error (status.attachError) fails the attach as upstream's
// verifyAttachmentStatus does: a FailedAttachVolume Event with GenerateError's text on the pod;
// once the attacher succeeds the volume is reported.
func TestAttachDetach_AttachErrorEvent(t *testing.T) {
	adStart(t)
	f := adNew(t)
	node := f.node("n", true)
	claim, pv := f.volume("data", f.driver)
	pod := f.pod("p", node, claim)
	vaName := adVAName(pv, f.driver, node)
	f.waitVA(vaName)
	ctx := context.Background()
	va, err := env.Client.StorageV1().VolumeAttachments().Get(ctx, vaName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	va.Status.AttachError = &storagev1.VolumeError{Time: metav1.Now(), Message: "rpc error: code = Internal desc = boom"}
	if _, err := env.Client.StorageV1().VolumeAttachments().UpdateStatus(ctx, va, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	msg := f.adEvent(pod, "FailedAttachVolume")
	if want := fmt.Sprintf("AttachVolume.Attach failed for volume %q : rpc error: code = Internal desc = boom", pv); msg != want {
		t.Fatalf("event message %q, want %q", msg, want)
	}
	if got := adAttached(t, node); len(got) != 0 {
		t.Fatalf("reported although the attach failed: %v", got)
	}
	f.attach(vaName)
	waitAttached(t, node, adUnique(f.driver, pv))
}

// A generic ephemeral volume is attached through its claim "<pod>-<volume>", but only when the
// pod owns that claim (ephemeral.VolumeIsForPod): a claim of that name owned by nobody gets no
// VolumeAttachment, the pod's own does.
func TestAttachDetach_GenericEphemeralVolume(t *testing.T) {
	adStart(t)
	f := adNew(t)
	ctx := context.Background()
	node := f.node("n", true)
	name := f.name("eph")
	pod, err := env.Client.CoreV1().Pods(f.ns).Create(ctx, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.PodSpec{
			NodeName:   node,
			Containers: []corev1.Container{{Name: "c", Image: "registry.k8s.io/pause:3.10"}},
			Volumes: []corev1.Volume{{Name: "scratch", VolumeSource: corev1.VolumeSource{Ephemeral: &corev1.EphemeralVolumeSource{
				VolumeClaimTemplate: &corev1.PersistentVolumeClaimTemplate{Spec: corev1.PersistentVolumeClaimSpec{
					AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOncePod},
					Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}},
				}}}}}},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// no ephemeral-volume controller runs: the test makes the claim, first without an owner
	claimName := name + "-scratch"
	pv := f.name("eph-pv")
	c, err := env.Client.CoreV1().PersistentVolumeClaims(f.ns).Create(ctx, &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: claimName},
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes:      []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOncePod},
			Resources:        corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}},
			StorageClassName: ptr.To(""),
			VolumeName:       pv,
		},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx := context.Background()
		clear := []byte(`{"metadata":{"finalizers":null}}`)
		_ = env.Client.CoreV1().PersistentVolumeClaims(f.ns).Delete(ctx, claimName, metav1.DeleteOptions{})
		_, _ = env.Client.CoreV1().PersistentVolumeClaims(f.ns).Patch(ctx, claimName, types.MergePatchType, clear, metav1.PatchOptions{})
		_ = env.Client.CoreV1().PersistentVolumes().Delete(ctx, pv, metav1.DeleteOptions{})
		_, _ = env.Client.CoreV1().PersistentVolumes().Patch(ctx, pv, types.MergePatchType, clear, metav1.PatchOptions{})
	})
	if _, err := env.Client.CoreV1().PersistentVolumes().Create(ctx, &corev1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: pv},
		Spec: corev1.PersistentVolumeSpec{
			Capacity:                      corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")},
			AccessModes:                   []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOncePod},
			PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimRetain,
			ClaimRef:                      &corev1.ObjectReference{Kind: "PersistentVolumeClaim", APIVersion: "v1", Namespace: f.ns, Name: claimName, UID: c.UID},
			PersistentVolumeSource: corev1.PersistentVolumeSource{
				CSI: &corev1.CSIPersistentVolumeSource{Driver: f.driver, VolumeHandle: pv},
			},
		},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	c.Status.Phase = corev1.ClaimBound
	c.Status.AccessModes = c.Spec.AccessModes
	c.Status.Capacity = corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}
	if c, err = env.Client.CoreV1().PersistentVolumeClaims(f.ns).UpdateStatus(ctx, c, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	vaName := adVAName(pv, f.driver, node)
	time.Sleep(5 * time.Second)
	if adVAExists(t, vaName) {
		t.Fatal("attached through a claim the pod does not own")
	}
	c.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "Pod", Name: pod.Name, UID: pod.UID, Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}}
	if _, err := env.Client.CoreV1().PersistentVolumeClaims(f.ns).Update(ctx, c, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	f.waitVA(vaName)
}
