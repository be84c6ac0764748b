package e2e

// kcmd's selinux-warning-controller (docs/selinux-warning.md) against the real cluster, with no
// other copy of it running (the harness starts no kube-controller-manager; kcm has it off by
// default anyway). Ported from upstream's pkg/controller/volume/selinuxwarning tests (v1.37.2:
// the controller's sync cases and the cache's conflict cases), observed through the API: the
// Events on the pods and the selinux_warning_controller_selinux_volume_conflict series on
// /metrics. No binder runs: the tests bind claims as the binder would. No scheduler runs: the
// controller looks at every pod, scheduled or not, as upstream's does.

import (
	"context"
	"fmt"
	"hash/fnv"
	"net"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
)

var (
	swOnce sync.Once
	swKcmd *kcmdProc
	swPort int
)

// swStart runs one kcmd with only the SELinux warning controller for the rest of the test
// binary, acting as kube-system/selinux-warning-controller (upstream's bootstrap role
// system:controller:selinux-warning-controller must allow every request).
func swStart(t *testing.T) {
	t.Helper()
	swOnce.Do(func() {
		swPort = gcxFreePort(t)
		swKcmd = startKcmdShared(t, "--controllers=selinux-warning-controller", "--secure-port="+strconv.Itoa(swPort),
			"--bind-address=127.0.0.1", "--authorization-always-allow-paths=/healthz,/metrics", "--leader-elect=false",
			"--use-service-account-credentials", "--v=4")
	})
	Eventually(t, 60*time.Second, "the SELinux warning controller's caches synced", func() (bool, string) {
		return swKcmd.Logged("Caches are synced for selinux-warning-controller"), "not yet"
	})
	if !swKcmd.Logged("using service account kube-system/selinux-warning-controller") {
		t.Fatal("the controller does not act as its service account")
	}
}

// swDriverName: a CSI driver name of the test's own (at most 63 bytes, unlike ns + a suffix)
func swDriverName(ns string) string {
	h := fnv.New32a()
	h.Write([]byte(ns))
	return fmt.Sprintf("sw-%08x.csi.example.com", h.Sum32())
}

func swDriver(t *testing.T, name string, seLinuxMount bool) {
	t.Helper()
	ctx := context.Background()
	if _, err := env.Client.StorageV1().CSIDrivers().Create(ctx, &storagev1.CSIDriver{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       storagev1.CSIDriverSpec{SELinuxMount: ptr.To(seLinuxMount)},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = env.Client.StorageV1().CSIDrivers().Delete(context.Background(), name, metav1.DeleteOptions{})
	})
}

// swClaim creates claim bound to a new CSI PV of driver, as the binder would bind them.
func swClaim(t *testing.T, ns, claim, pv, driver string) {
	t.Helper()
	ctx := context.Background()
	c, err := env.Client.CoreV1().PersistentVolumeClaims(ns).Create(ctx, &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: claim},
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes:      []corev1.PersistentVolumeAccessMode{corev1.ReadWriteMany},
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
			AccessModes:                   []corev1.PersistentVolumeAccessMode{corev1.ReadWriteMany},
			PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimRetain,
			ClaimRef:                      &corev1.ObjectReference{Kind: "PersistentVolumeClaim", APIVersion: "v1", Namespace: ns, Name: claim, UID: c.UID},
			PersistentVolumeSource:        corev1.PersistentVolumeSource{CSI: &corev1.CSIPersistentVolumeSource{Driver: driver, VolumeHandle: pv}},
		},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx := context.Background()
		clear := []byte(`{"metadata":{"finalizers":null}}`)
		_ = env.Client.CoreV1().PersistentVolumes().Delete(ctx, pv, metav1.DeleteOptions{})
		_, _ = env.Client.CoreV1().PersistentVolumes().Patch(ctx, pv, types.MergePatchType, clear, metav1.PatchOptions{})
	})
	c.Status.Phase = corev1.ClaimBound
	c.Status.AccessModes = c.Spec.AccessModes
	c.Status.Capacity = corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}
	if _, err := env.Client.CoreV1().PersistentVolumeClaims(ns).UpdateStatus(ctx, c, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// swPod is upstream's pod(name, level, policy) builder: one container mounting vol, the level in
// the pod's securityContext (none when ""), and the given volume as "vol".
func swPod(t *testing.T, ns, name, level string, policy *corev1.PodSELinuxChangePolicy, vol corev1.VolumeSource) *corev1.Pod {
	t.Helper()
	var opts *corev1.SELinuxOptions
	if level != "" {
		opts = &corev1.SELinuxOptions{Level: level}
	}
	p, err := env.Client.CoreV1().Pods(ns).Create(context.Background(), &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.PodSpec{
			Containers: []corev1.Container{{Name: "c", Image: "busybox",
				VolumeMounts: []corev1.VolumeMount{{Name: "vol", MountPath: "/mnt"}}}},
			SecurityContext: &corev1.PodSecurityContext{SELinuxChangePolicy: policy, SELinuxOptions: opts},
			Volumes:         []corev1.Volume{{Name: "vol", VolumeSource: vol}},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func swClaimVol(claim string) corev1.VolumeSource {
	return corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: claim}}
}

// swEvents: "type reason message" of the Events about pod name in ns from the controller
func swEvents(t *testing.T, ns, name string) []string {
	t.Helper()
	l, err := env.Client.CoreV1().Events(ns).List(context.Background(), metav1.ListOptions{FieldSelector: "involvedObject.name=" + name})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range l.Items {
		if e.Source.Component != "selinux_warning" {
			t.Errorf("Event %s/%s has source.component %q, want selinux_warning", ns, e.Name, e.Source.Component)
		}
		if e.InvolvedObject.Kind != "Pod" || e.InvolvedObject.UID == "" {
			t.Errorf("Event %s/%s is about %+v, want the pod with its uid", ns, e.Name, e.InvolvedObject)
		}
		out = append(out, e.Type+" "+e.Reason+" "+e.Message)
	}
	sort.Strings(out)
	return out
}

func swWaitEvents(t *testing.T, ns, name string, want ...string) {
	t.Helper()
	sort.Strings(want)
	Eventually(t, 30*time.Second, fmt.Sprintf("the Events of pod %s/%s", ns, name), func() (bool, string) {
		got := swEvents(t, ns, name)
		return strings.Join(got, "\n") == strings.Join(want, "\n"), fmt.Sprintf("got %q, want %q", got, want)
	})
}

// swSeries: the conflict gauge's series naming namespace ns (as pod1 or pod2), sorted, from the
// shared kcmd
func swSeries(t *testing.T, ns string) []string {
	t.Helper()
	return swSeriesAt(t, swPort, ns)
}

// swSeriesAt: the same from the kcmd serving on port
func swSeriesAt(t *testing.T, port int, ns string) []string {
	t.Helper()
	code, _, body := gcxGet(t, port, "/metrics")
	if code != 200 {
		t.Fatalf("/metrics: %d", code)
	}
	var out []string
	for _, l := range strings.Split(body, "\n") {
		if strings.HasPrefix(l, "selinux_warning_controller_selinux_volume_conflict{") && strings.Contains(l, `namespace="`+ns+`"`) {
			out = append(out, l)
		}
	}
	sort.Strings(out)
	return out
}

func swWaitSeries(t *testing.T, ns string, want ...string) {
	t.Helper()
	sort.Strings(want)
	Eventually(t, 30*time.Second, "the conflict series of "+ns, func() (bool, string) {
		got := swSeries(t, ns)
		return strings.Join(got, "\n") == strings.Join(want, "\n"), fmt.Sprintf("got %q, want %q", got, want)
	})
}

func swSeriesLine(prop, ns1, pod1, v1, ns2, pod2, v2 string) string {
	return fmt.Sprintf(`selinux_warning_controller_selinux_volume_conflict{pod1_name="%s",pod1_namespace="%s",pod1_value="%s",pod2_name="%s",pod2_namespace="%s",pod2_value="%s",property="%s"} 1`,
		pod1, ns1, v1, pod2, ns2, v2, prop)
}

func swSameNsMsg(prop, value, other, otherValue string) string {
	return fmt.Sprintf(`%s "%s" conflicts with pod %s that uses the same volume as this pod with %s "%s". If both pods land on the same node, only one of them may access the volume.`,
		prop, value, other, prop, otherValue)
}

// "existing pod with PVC generates conflict, the other pod exists": each pod gets its Event, the
// gauge has both directions; a pod that reaches Succeeded leaves the cache and its series go,
// with no new Event.
func TestSELinuxWarning_LabelConflict(t *testing.T) {
	swStart(t)
	ctx := context.Background()
	ns := Namespace(t)
	driver := swDriverName(ns)
	swDriver(t, driver, true)
	swClaim(t, ns, "pvc1", ns+"-pv1", driver)
	swPod(t, ns, "pod1", "s0:c1,c2", nil, swClaimVol("pvc1"))
	p2 := swPod(t, ns, "pod2", "s0:c98,c99", nil, swClaimVol("pvc1"))

	swWaitEvents(t, ns, "pod1", "Normal SELinuxLabelConflict "+swSameNsMsg("SELinuxLabel", ":::s0:c1,c2", "pod2", ":::s0:c98,c99"))
	swWaitEvents(t, ns, "pod2", "Normal SELinuxLabelConflict "+swSameNsMsg("SELinuxLabel", ":::s0:c98,c99", "pod1", ":::s0:c1,c2"))
	swWaitSeries(t, ns,
		swSeriesLine("SELinuxLabel", ns, "pod1", ":::s0:c1,c2", ns, "pod2", ":::s0:c98,c99"),
		swSeriesLine("SELinuxLabel", ns, "pod2", ":::s0:c98,c99", ns, "pod1", ":::s0:c1,c2"))
	code, _, body := gcxGet(t, swPort, "/metrics")
	if code != 200 || !strings.Contains(body, "# HELP selinux_warning_controller_selinux_volume_conflict [ALPHA] Conflict between two Pods using the same volume\n# TYPE selinux_warning_controller_selinux_volume_conflict gauge\n") {
		t.Errorf("/metrics lacks the family's HELP and TYPE lines")
	}

	p2.Status.Phase = corev1.PodSucceeded
	if _, err := env.Client.CoreV1().Pods(ns).UpdateStatus(ctx, p2, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	swWaitSeries(t, ns)
	if got := swEvents(t, ns, "pod1"); len(got) != 1 {
		t.Errorf("pod1 has %d Events after pod2 finished, want 1: %q", len(got), got)
	}
}

// "existing pod with Recursive policy does not conflict with pod with MountOption policy label,
// only with the policy": the Recursive pod's mount label is cleared, so the policies conflict, and
// so do the labels ("" against a level); "existing pod with Recursive policy does not generate
// conflicts": two Recursive pods with different labels are silent.
func TestSELinuxWarning_ChangePolicyConflict(t *testing.T) {
	swStart(t)
	ns := Namespace(t)
	driver := swDriverName(ns)
	swDriver(t, driver, true)
	swClaim(t, ns, "pvc1", ns+"-pv1", driver)
	swClaim(t, ns, "pvc2", ns+"-pv2", driver)
	rec, mo := ptr.To(corev1.SELinuxChangePolicyRecursive), ptr.To(corev1.SELinuxChangePolicyMountOption)
	swPod(t, ns, "quiet1", "s0:c1,c2", rec, swClaimVol("pvc2"))
	swPod(t, ns, "quiet2", "s0:c98,c99", rec, swClaimVol("pvc2"))
	swPod(t, ns, "pod1", "s0:c1,c2", rec, swClaimVol("pvc1"))
	swPod(t, ns, "pod2", "s0:c1,c2", mo, swClaimVol("pvc1"))

	swWaitEvents(t, ns, "pod1",
		"Normal SELinuxChangePolicyConflict "+swSameNsMsg("SELinuxChangePolicy", "Recursive", "pod2", "MountOption"),
		"Normal SELinuxLabelConflict "+swSameNsMsg("SELinuxLabel", "", "pod2", ":::s0:c1,c2"))
	swWaitEvents(t, ns, "pod2",
		"Normal SELinuxChangePolicyConflict "+swSameNsMsg("SELinuxChangePolicy", "MountOption", "pod1", "Recursive"),
		"Normal SELinuxLabelConflict "+swSameNsMsg("SELinuxLabel", ":::s0:c1,c2", "pod1", ""))
	swWaitSeries(t, ns,
		swSeriesLine("SELinuxChangePolicy", ns, "pod1", "Recursive", ns, "pod2", "MountOption"),
		swSeriesLine("SELinuxChangePolicy", ns, "pod2", "MountOption", ns, "pod1", "Recursive"),
		swSeriesLine("SELinuxLabel", ns, "pod1", "", ns, "pod2", ":::s0:c1,c2"),
		swSeriesLine("SELinuxLabel", ns, "pod2", ":::s0:c1,c2", ns, "pod1", ""))
	for _, q := range []string{"quiet1", "quiet2"} {
		if got := swEvents(t, ns, q); len(got) != 0 {
			t.Errorf("Recursive pod %s got Events: %q", q, got)
		}
	}
}

// "existing pod with fully bound PVC and CSIDriver.SELinuxMount disabled": the driver mounts
// without -o context, so both pods are Recursive with no label and nothing conflicts; turning
// seLinuxMount on re-evaluates the driver's pods (upstream's updateCSIDriver) and the labels
// conflict.
func TestSELinuxWarning_CSIDriverSELinuxMount(t *testing.T) {
	swStart(t)
	ctx := context.Background()
	ns := Namespace(t)
	driver := swDriverName(ns)
	swDriver(t, driver, false)
	swClaim(t, ns, "pvc1", ns+"-pv1", driver)
	swPod(t, ns, "pod1", "s0:c1,c2", nil, swClaimVol("pvc1"))
	swPod(t, ns, "pod2", "s0:c98,c99", nil, swClaimVol("pvc1"))
	Eventually(t, 30*time.Second, "both pods synced", func() (bool, string) {
		return swKcmd.Logged(`Syncing pod volume pod="`+ns+`/pod1"`) && swKcmd.Logged(`Syncing pod volume pod="`+ns+`/pod2"`), "not yet"
	})
	if !swKcmd.Logged(`Syncing pod volume pod="` + ns + `/pod2" volume="vol" label="" uniqueVolumeName="kubernetes.io/csi/` + driver + `^` + ns + `-pv1" changePolicy="Recursive" csiDriver="` + driver + `"`) {
		t.Errorf("pod2's volume is not Recursive without a label")
	}
	if got := swEvents(t, ns, "pod1"); len(got) != 0 {
		t.Errorf("pod1 got Events with seLinuxMount false: %q", got)
	}
	if got := swSeries(t, ns); len(got) != 0 {
		t.Errorf("conflicts with seLinuxMount false: %q", got)
	}

	if _, err := env.Client.StorageV1().CSIDrivers().Patch(ctx, driver, types.MergePatchType, []byte(`{"spec":{"seLinuxMount":true}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	// The pods are synced one after the other, as upstream's queue does: the first one synced
	// meets the other still Recursive without a label (a policy conflict and a label conflict,
	// reported as upstream reports them); once both are synced only the label conflict is left.
	for _, pods := range [][2]string{{"pod1", "pod2"}, {"pod2", "pod1"}} {
		want := "Normal SELinuxLabelConflict " + swSameNsMsg("SELinuxLabel", map[string]string{"pod1": ":::s0:c1,c2", "pod2": ":::s0:c98,c99"}[pods[0]],
			pods[1], map[string]string{"pod1": ":::s0:c1,c2", "pod2": ":::s0:c98,c99"}[pods[1]])
		Eventually(t, 30*time.Second, "the label conflict Event of "+pods[0], func() (bool, string) {
			got := swEvents(t, ns, pods[0])
			for _, e := range got {
				if e == want {
					return true, ""
				}
			}
			return false, fmt.Sprintf("%q", got)
		})
	}
	swWaitSeries(t, ns,
		swSeriesLine("SELinuxLabel", ns, "pod1", ":::s0:c1,c2", ns, "pod2", ":::s0:c98,c99"),
		swSeriesLine("SELinuxLabel", ns, "pod2", ":::s0:c98,c99", ns, "pod1", ":::s0:c1,c2"))
}

// "existing pod with unbound PVC": an error, retried; once the claim is bound (upstream's addPVC
// / addPV handlers) the pods are synced and conflict.
func TestSELinuxWarning_ClaimBoundLater(t *testing.T) {
	swStart(t)
	ns := Namespace(t)
	driver := swDriverName(ns)
	swDriver(t, driver, true)
	swPod(t, ns, "pod1", "s0:c1,c2", nil, swClaimVol("pvc1"))
	swPod(t, ns, "pod2", "s0:c98,c99", nil, swClaimVol("pvc1"))
	time.Sleep(2 * time.Second)
	if got := swEvents(t, ns, "pod1"); len(got) != 0 {
		t.Errorf("pod1 got Events before its claim exists: %q", got)
	}
	swClaim(t, ns, "pvc1", ns+"-pv1", driver)
	swWaitEvents(t, ns, "pod1", "Normal SELinuxLabelConflict "+swSameNsMsg("SELinuxLabel", ":::s0:c1,c2", "pod2", ":::s0:c98,c99"))
	swWaitEvents(t, ns, "pod2", "Normal SELinuxLabelConflict "+swSameNsMsg("SELinuxLabel", ":::s0:c98,c99", "pod1", ":::s0:c1,c2"))
}

// Two namespaces sharing one inline iSCSI volume: the other pod is not named (upstream's
// EventMessage for pods of different namespaces, including its missing space).
func TestSELinuxWarning_AcrossNamespaces(t *testing.T) {
	swStart(t)
	ns1, ns2 := Namespace(t), Namespace(t)
	iscsi := corev1.VolumeSource{ISCSI: &corev1.ISCSIVolumeSource{TargetPortal: "10.0.0.1:3260",
		IQN: "iqn.2001-04.com.example:" + ns1, Lun: 0, FSType: "ext4"}}
	swPod(t, ns1, "pod1", "s0:c1,c2", nil, iscsi)
	swPod(t, ns2, "pod2", "s0:c98,c99", nil, iscsi)
	msg := func(v string) string {
		return `Normal SELinuxLabelConflict SELinuxLabel"` + v + `" conflicts with another pod that uses the same volume as this pod with a different SELinuxLabel. If both pods land on the same node, only one of them may access the volume.`
	}
	swWaitEvents(t, ns1, "pod1", msg(":::s0:c1,c2"))
	swWaitEvents(t, ns2, "pod2", msg(":::s0:c98,c99"))
	swWaitSeries(t, ns1,
		swSeriesLine("SELinuxLabel", ns1, "pod1", ":::s0:c1,c2", ns2, "pod2", ":::s0:c98,c99"),
		swSeriesLine("SELinuxLabel", ns2, "pod2", ":::s0:c98,c99", ns1, "pod1", ":::s0:c1,c2"))
	// deleting a pod takes its conflicts away
	if err := env.Client.CoreV1().Pods(ns2).Delete(context.Background(), "pod2", metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)}); err != nil {
		t.Fatal(err)
	}
	swWaitSeries(t, ns1)
}

// One volume mounted by two containers of a pod with different labels: a Warning on the pod.
func TestSELinuxWarning_MultipleLabels(t *testing.T) {
	swStart(t)
	ns := Namespace(t)
	driver := swDriverName(ns)
	swDriver(t, driver, true)
	swClaim(t, ns, "pvc1", ns+"-pv1", driver)
	if _, err := env.Client.CoreV1().Pods(ns).Create(context.Background(), &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "pod1"},
		Spec: corev1.PodSpec{
			Containers: []corev1.Container{
				{Name: "a", Image: "busybox", VolumeMounts: []corev1.VolumeMount{{Name: "vol", MountPath: "/a"}},
					SecurityContext: &corev1.SecurityContext{SELinuxOptions: &corev1.SELinuxOptions{Level: "s0:c1,c2"}}},
				{Name: "b", Image: "busybox", VolumeMounts: []corev1.VolumeMount{{Name: "vol", MountPath: "/b"}},
					SecurityContext: &corev1.SecurityContext{SELinuxOptions: &corev1.SELinuxOptions{Level: "s0:c3,c4"}}},
			},
			Volumes: []corev1.Volume{{Name: "vol", VolumeSource: swClaimVol("pvc1")}},
		},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	Eventually(t, 30*time.Second, "the MultipleSELinuxLabels Warning", func() (bool, string) {
		got := swEvents(t, ns, "pod1")
		return len(got) == 1 && got[0] == `Warning MultipleSELinuxLabels Volume "vol" is mounted twice with different SELinux labels inside this pod`, fmt.Sprintf("%q", got)
	})
}

// The worker holds the volume cache in memory: killed with kill -9, its restart must rebuild it
// from the shared cache, so conflicts with pods it knew before are still found and the gauge
// still lists them. Oracle: after the kill, a third pod joins the volume with a third label; the
// gauge must show all three pairs both ways (6 series). The negative control starts the worker
// with KCMD_TEST_SW_NO_REBUILD (an empty cache after the restart): the oracle must miss them.
func TestSELinuxWarning_WorkerKilled(t *testing.T) { swWorkerKilled(t, false) }

func TestSELinuxWarning_WorkerKilledNegativeControl(t *testing.T) { swWorkerKilled(t, true) }

func swWorkerKilled(t *testing.T, negative bool) {
	var extraEnv []string
	if negative {
		extraEnv = []string{"KCMD_TEST_SW_NO_REBUILD=1"}
	}
	port := gcxFreePort(t)
	p := startKcmd(t, extraEnv, "--controllers=selinux-warning-controller", "--secure-port="+strconv.Itoa(port),
		"--bind-address=127.0.0.1", "--authorization-always-allow-paths=/healthz,/metrics", "--leader-elect=false",
		"--use-service-account-credentials", "--v=4")
	defer dumpKcmdLogs(t, p)
	// its /metrics is read below: wait until it serves and its caches are synced
	Eventually(t, 60*time.Second, "the SELinux warning controller's caches synced and /metrics served", func() (bool, string) {
		if !p.Logged("Caches are synced for selinux-warning-controller") {
			return false, "caches not synced"
		}
		c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", port), time.Second)
		if err != nil {
			return false, err.Error()
		}
		c.Close()
		return true, ""
	})
	ns := Namespace(t)
	driver := swDriverName(ns)
	swDriver(t, driver, true)
	swClaim(t, ns, "pvc1", ns+"-pv1", driver)
	swPod(t, ns, "pod1", "s0:c1,c2", nil, swClaimVol("pvc1"))
	swPod(t, ns, "pod2", "s0:c3,c4", nil, swClaimVol("pvc1"))
	series := func() []string { return swSeriesAt(t, port, ns) }
	label := map[string]string{"pod1": ":::s0:c1,c2", "pod2": ":::s0:c3,c4", "pod3": ":::s0:c5,c6"}
	pairs := func(pods ...string) []string {
		var out []string
		for _, a := range pods {
			for _, b := range pods {
				if a != b {
					out = append(out, swSeriesLine("SELinuxLabel", ns, a, label[a], ns, b, label[b]))
				}
			}
		}
		sort.Strings(out)
		return out
	}
	want := strings.Join(pairs("pod1", "pod2"), "\n")
	Eventually(t, 60*time.Second, "the first conflict on /metrics", func() (bool, string) {
		got := strings.Join(series(), "\n")
		return got == want, got
	})
	if n := killChildren(t, p.cmd.Process.Pid, "kcmd-worker", 1); n != 1 {
		t.Fatalf("killed %d workers, want 1", n)
	}
	Eventually(t, 60*time.Second, "the worker restarted", func() (bool, string) {
		n := 0
		for _, l := range p.Logs() {
			if strings.Contains(l, "Caches are synced for selinux-warning-controller") {
				n++
			}
		}
		return n >= 2, fmt.Sprintf("%d cache syncs logged", n)
	})
	swPod(t, ns, "pod3", "s0:c5,c6", nil, swClaimVol("pvc1"))
	want = strings.Join(pairs("pod1", "pod2", "pod3"), "\n")
	deadline := time.Now().Add(30 * time.Second)
	got := ""
	for time.Now().Before(deadline) {
		if got = strings.Join(series(), "\n"); got == want {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	ok := got == want
	switch {
	case !negative && !ok:
		t.Errorf("after the worker's restart the gauge lists\n%s\nwant\n%s", got, want)
	case negative && ok:
		t.Errorf("negative control: the oracle found every conflict without the rebuild (it cannot fail)")
	case negative:
		n := 0
		if got != "" {
			n = len(strings.Split(got, "\n"))
		}
		t.Logf("negative control: the oracle saw the lost cache (%d of 6 series)", n)
	}
}
