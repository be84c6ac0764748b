package e2e

// The resourceclaim-controller (resource.k8s.io/v1) against the real apiserver, after upstream's
// pkg/controller/resourceclaim controller_test.go (create, find-existing-claim, recreate,
// missing-template, clear-reserved-structured, clear-reserved-when-done,
// delete-claim-when-done, remove-reserved) and test/integration/dra: kcmd runs only this
// controller; no kube-controller-manager and no scheduler run, so the tests play the scheduler
// (allocation, reservedFor, the finalizer) where one is needed.

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

const rcPodClaimAnnotation = "resource.kubernetes.io/pod-claim-name"
const rcFinalizer = "resource.kubernetes.io/delete-protection"

var (
	draProcMu   sync.Mutex
	draProcOnce sync.Once
	draProc     *kcmdProc
	draPort     int
)

func rcStart(t *testing.T) {
	t.Helper()
	draProcMu.Lock()
	draProcOnce.Do(func() {
		draPort = gcxFreePort(t)
		draProc = startKcmdShared(t, "--controllers=resourceclaim-controller",
			"--concurrent-resourceclaim-syncs=2", "--leader-elect=false",
			"--secure-port="+strconv.Itoa(draPort), "--bind-address=127.0.0.1",
			"--authorization-always-allow-paths=/healthz,/metrics",
			"--use-service-account-credentials", "--v=5")
	})
	p := draProc
	draProcMu.Unlock()
	t.Cleanup(func() { dumpKcmdLogs(t, p) })
	Eventually(t, 60*time.Second, "the controller acts as its service account", func() (bool, string) {
		return p.Logged("kube-system/resource-claim-controller"), "not yet"
	})
}

// draStopShared stops the shared kcmd (a later rcStart starts another): a test running a
// resourceclaim-controller of its own must not have a second one making claims beside it.
func draStopShared() {
	draProcMu.Lock()
	defer draProcMu.Unlock()
	if draProc != nil {
		_ = draProc.cmd.Process.Kill()
		<-draProc.done
		draProc = nil
		draProcOnce = sync.Once{}
	}
}

func rcClass(t *testing.T, ns string) string {
	t.Helper()
	name := "class-" + ns
	_, err := env.Client.ResourceV1().DeviceClasses().Create(context.Background(), &resourcev1.DeviceClass{
		ObjectMeta: metav1.ObjectMeta{Name: name},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating DeviceClass (is resource.k8s.io/v1 served?): %v", err)
	}
	t.Cleanup(func() {
		_ = env.Client.ResourceV1().DeviceClasses().Delete(context.Background(), name, metav1.DeleteOptions{})
	})
	return name
}

func rcSpec(class string) resourcev1.ResourceClaimSpec {
	return resourcev1.ResourceClaimSpec{Devices: resourcev1.DeviceClaim{Requests: []resourcev1.DeviceRequest{
		{Name: "req-0", Exactly: &resourcev1.ExactDeviceRequest{DeviceClassName: class}},
	}}}
}

func rcTemplate(t *testing.T, ns, name, class string) {
	t.Helper()
	_, err := env.Client.ResourceV1().ResourceClaimTemplates(ns).Create(context.Background(), &resourcev1.ResourceClaimTemplate{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: resourcev1.ResourceClaimTemplateSpec{
			ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"from": "template"},
				Annotations: map[string]string{"example.com/a": "b"}},
			Spec: rcSpec(class),
		},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
}

// rcPod: a pod (not scheduled) with the given spec.resourceClaims
func rcPod(t *testing.T, ns, name string, claims ...corev1.PodResourceClaim) *corev1.Pod {
	t.Helper()
	c := corev1.Container{Name: "c", Image: "fakeimage"}
	for _, pc := range claims {
		c.Resources.Claims = append(c.Resources.Claims, corev1.ResourceClaim{Name: pc.Name})
	}
	pod, err := env.Client.CoreV1().Pods(ns).Create(context.Background(), &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{c}, ResourceClaims: claims},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return pod
}

func fromTemplate(name, tmpl string) corev1.PodResourceClaim {
	return corev1.PodResourceClaim{Name: name, ResourceClaimTemplateName: &tmpl}
}

// rcGenerated: the claims of ns that pod controls for pod claim pc
func rcGenerated(t *testing.T, ns string, pod *corev1.Pod, pc string) []resourcev1.ResourceClaim {
	t.Helper()
	l, err := env.Client.ResourceV1().ResourceClaims(ns).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var out []resourcev1.ResourceClaim
	for _, c := range l.Items {
		ref := metav1.GetControllerOf(&c)
		if ref != nil && ref.UID == pod.UID && c.Annotations[rcPodClaimAnnotation] == pc {
			out = append(out, c)
		}
	}
	return out
}

// rcRecorded: the claim name pod.status.resourceClaimStatuses records for pc, "" if none
func rcRecorded(t *testing.T, ns, pod, pc string) string {
	t.Helper()
	p, err := env.Client.CoreV1().Pods(ns).Get(context.Background(), pod, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range p.Status.ResourceClaimStatuses {
		if s.Name == pc && s.ResourceClaimName != nil {
			return *s.ResourceClaimName
		}
	}
	return ""
}

// rcWaitClaim waits for the one claim generated for pc and its name in the pod's status.
func rcWaitClaim(t *testing.T, ns string, pod *corev1.Pod, pc string) resourcev1.ResourceClaim {
	t.Helper()
	var got resourcev1.ResourceClaim
	Eventually(t, 30*time.Second, "the generated claim recorded in the pod's status", func() (bool, string) {
		cs := rcGenerated(t, ns, pod, pc)
		if len(cs) != 1 {
			return false, fmt.Sprintf("%d claims", len(cs))
		}
		got = cs[0]
		rec := rcRecorded(t, ns, pod.Name, pc)
		return rec == got.Name, "status records " + rec + ", claim " + got.Name
	})
	return got
}

// upstream "create": the claim comes from the template (generateName <pod>-<claim>-, the
// template's labels and annotations plus the pod-claim-name annotation, its spec, the pod as
// controller) and its name is applied to the pod's status; it is made once.
func TestResourceClaim_CreatedFromTemplate(t *testing.T) {
	rcStart(t)
	ns := Namespace(t)
	class := rcClass(t, ns)
	rcTemplate(t, ns, "tmpl", class)
	pod := rcPod(t, ns, "pod1", fromTemplate("gpu", "tmpl"))
	c := rcWaitClaim(t, ns, pod, "gpu")
	if c.GenerateName != "pod1-gpu-" || !strings.HasPrefix(c.Name, "pod1-gpu-") {
		t.Fatalf("generateName %q name %q", c.GenerateName, c.Name)
	}
	if c.Labels["from"] != "template" || c.Annotations["example.com/a"] != "b" {
		t.Fatalf("labels %v annotations %v", c.Labels, c.Annotations)
	}
	ref := metav1.GetControllerOf(&c)
	if ref == nil || ref.Kind != "Pod" || ref.APIVersion != "v1" || ref.Name != "pod1" || ref.UID != pod.UID {
		t.Fatalf("owner %+v", c.OwnerReferences)
	}
	if ref.BlockOwnerDeletion != nil {
		t.Fatalf("blockOwnerDeletion set (upstream v1.37 leaves it unset): %+v", ref)
	}
	if len(c.Spec.Devices.Requests) != 1 || c.Spec.Devices.Requests[0].Exactly == nil ||
		c.Spec.Devices.Requests[0].Exactly.DeviceClassName != class {
		t.Fatalf("spec %+v", c.Spec)
	}
	p, err := env.Client.CoreV1().Pods(ns).Get(context.Background(), "pod1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	managed := false
	for _, f := range p.ManagedFields {
		if f.Manager == "ResourceClaimController" && f.Operation == metav1.ManagedFieldsOperationApply && f.Subresource == "status" {
			managed = true
		}
	}
	if !managed {
		t.Fatalf("the status was not applied by ResourceClaimController: %+v", p.ManagedFields)
	}
	// the two families on /metrics (the shared kcmd counts every test's claims)
	Eventually(t, 20*time.Second, "the claim counted on /metrics", func() (bool, string) {
		code, _, b := gcxGet(t, draPort, "/metrics")
		if code != 200 {
			return false, fmt.Sprint("HTTP ", code)
		}
		for _, want := range []string{
			"# HELP dynamic_resource_allocation_resourceclaim_creates_total [ALPHA] Number of ResourceClaims creation requests, categorized by creation status, admin access, and owning API group and kind (either Pod or scheduling.k8s.io/PodGroup)\n# TYPE dynamic_resource_allocation_resourceclaim_creates_total counter\n",
			"# TYPE dynamic_resource_allocation_resource_claims gauge\n",
		} {
			if !strings.Contains(b, want) {
				return false, "no " + want
			}
		}
		created := ctlmSum(t, b, `dynamic_resource_allocation_resourceclaim_creates_total{admin_access="false",owner_api_group="",owner_api_kind="Pod",status="success"} `)
		claims := ctlmSum(t, b, `dynamic_resource_allocation_resource_claims{admin_access="false",allocated="false",source="resource_claim_template"} `)
		return created >= 1 && claims >= 1, fmt.Sprintf("creates %v, claims %v", created, claims)
	})
	// nothing more is created while the pod stays
	time.Sleep(2 * time.Second)
	if cs := rcGenerated(t, ns, pod, "gpu"); len(cs) != 1 {
		t.Fatalf("%d claims for the pod claim, want 1", len(cs))
	}
}

// upstream "recreate": the recorded claim is deleted while the pod still needs it: a new one is
// made and recorded; and "find-existing-claim-by-label": a second pod claim of the same pod
// whose claim already exists (made before the status names it) is found, not made again.
func TestResourceClaim_RecreatedAndFound(t *testing.T) {
	rcStart(t)
	ns := Namespace(t)
	class := rcClass(t, ns)
	rcTemplate(t, ns, "tmpl", class)
	pod := rcPod(t, ns, "pod1", fromTemplate("gpu", "tmpl"))
	first := rcWaitClaim(t, ns, pod, "gpu")
	if err := env.Client.ResourceV1().ResourceClaims(ns).Delete(context.Background(), first.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	Eventually(t, 30*time.Second, "a new claim recorded", func() (bool, string) {
		cs := rcGenerated(t, ns, pod, "gpu")
		if len(cs) != 1 || cs[0].UID == first.UID {
			return false, fmt.Sprintf("%d claims", len(cs))
		}
		rec := rcRecorded(t, ns, "pod1", "gpu")
		return rec == cs[0].Name, "status records " + rec
	})

	// upstream "find-existing-claim-by-label": pod2's template is missing, so nothing is made;
	// a claim controlled by pod2 with the pod-claim-name annotation appears (as if a worker
	// had made it and died before the status apply); once the template exists the controller
	// records that claim instead of making another
	pod2 := rcPod(t, ns, "pod2", fromTemplate("gpu", "tmpl2"))
	yes := true
	made, err := env.Client.ResourceV1().ResourceClaims(ns).Create(context.Background(), &resourcev1.ResourceClaim{
		ObjectMeta: metav1.ObjectMeta{Name: "made-before", Annotations: map[string]string{rcPodClaimAnnotation: "gpu"},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "Pod", Name: "pod2", UID: pod2.UID, Controller: &yes}}},
		Spec: rcSpec(class)}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	rcTemplate(t, ns, "tmpl2", class)
	c := rcWaitClaim(t, ns, pod2, "gpu")
	if c.UID != made.UID {
		t.Fatalf("recorded %s, want the existing made-before", c.Name)
	}
}

// upstream "missing-template": a Warning FailedResourceClaimCreation Event on the pod; once the
// template exists the claim is made (the template's event queues the pod).
func TestResourceClaim_MissingTemplate(t *testing.T) {
	rcStart(t)
	ns := Namespace(t)
	class := rcClass(t, ns)
	pod := rcPod(t, ns, "pod1", fromTemplate("gpu", "later"))
	want := `PodResourceClaim gpu: resource claim template "later": resourceclaimtemplate.resource.k8s.io "later" not found`
	Eventually(t, 30*time.Second, "a FailedResourceClaimCreation Event", func() (bool, string) {
		evs, err := env.Client.CoreV1().Events(ns).List(context.Background(), metav1.ListOptions{})
		if err != nil {
			return false, err.Error()
		}
		for _, e := range evs.Items {
			if e.InvolvedObject.UID == pod.UID && e.Reason == "FailedResourceClaimCreation" {
				if e.Type != corev1.EventTypeWarning || e.Message != want || e.Source.Component != "resource_claim" {
					return false, fmt.Sprintf("event %s %q from %s", e.Type, e.Message, e.Source.Component)
				}
				return true, ""
			}
		}
		return false, "no event yet"
	})
	rcTemplate(t, ns, "later", class)
	rcWaitClaim(t, ns, pod, "gpu")
}

// rcAllocate plays the scheduler: the finalizer, an allocation and reservedFor the pods.
func rcAllocate(t *testing.T, ns, name string, pods ...*corev1.Pod) {
	t.Helper()
	ctx := context.Background()
	c, err := env.Client.ResourceV1().ResourceClaims(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	c.Finalizers = append(c.Finalizers, rcFinalizer)
	if c, err = env.Client.ResourceV1().ResourceClaims(ns).Update(ctx, c, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	c.Status.Allocation = &resourcev1.AllocationResult{Devices: resourcev1.DeviceAllocationResult{
		Results: []resourcev1.DeviceRequestAllocationResult{{Request: "req-0", Driver: "test.example.com", Pool: "pool", Device: "dev-0"}},
	}}
	for _, p := range pods {
		c.Status.ReservedFor = append(c.Status.ReservedFor, resourcev1.ResourceClaimConsumerReference{Resource: "pods", Name: p.Name, UID: p.UID})
	}
	if _, err = env.Client.ResourceV1().ResourceClaims(ns).UpdateStatus(ctx, c, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

func rcClaimState(t *testing.T, ns, name string) (string, bool) {
	t.Helper()
	c, err := env.Client.ResourceV1().ResourceClaims(ns).Get(context.Background(), name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return "gone", false
	}
	if err != nil {
		t.Fatal(err)
	}
	var rf []string
	for _, r := range c.Status.ReservedFor {
		rf = append(rf, r.Name)
	}
	fin := false
	for _, f := range c.Finalizers {
		fin = fin || f == rcFinalizer
	}
	return fmt.Sprintf("reservedFor=%v allocated=%v finalizer=%v", rf, c.Status.Allocation != nil, fin), true
}

// upstream "remove-reserved", "clear-reserved-structured" and "clear-reserved-when-done": a
// user's claim shared by two pods: the entry of the pod that finished goes (the claim stays
// allocated for the other), then the other pod is deleted: the last entry goes, the allocation
// is cleared and the finalizer removed; the user's claim itself stays.
func TestResourceClaim_ReservedForCleanup(t *testing.T) {
	rcStart(t)
	ns := Namespace(t)
	ctx := context.Background()
	class := rcClass(t, ns)
	if _, err := env.Client.ResourceV1().ResourceClaims(ns).Create(ctx, &resourcev1.ResourceClaim{
		ObjectMeta: metav1.ObjectMeta{Name: "shared"}, Spec: rcSpec(class)}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	shared := "shared"
	a := rcPod(t, ns, "a", corev1.PodResourceClaim{Name: "dev", ResourceClaimName: &shared})
	b := rcPod(t, ns, "b", corev1.PodResourceClaim{Name: "dev", ResourceClaimName: &shared})
	rcAllocate(t, ns, "shared", a, b)

	a.Status.Phase = corev1.PodSucceeded
	if _, err := env.Client.CoreV1().Pods(ns).UpdateStatus(ctx, a, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	Eventually(t, 30*time.Second, "the finished pod's entry removed", func() (bool, string) {
		s, _ := rcClaimState(t, ns, "shared")
		return s == "reservedFor=[b] allocated=true finalizer=true", s
	})
	zero := int64(0)
	if err := env.Client.CoreV1().Pods(ns).Delete(ctx, "b", metav1.DeleteOptions{GracePeriodSeconds: &zero}); err != nil {
		t.Fatal(err)
	}
	Eventually(t, 30*time.Second, "the claim released and deallocated", func() (bool, string) {
		s, _ := rcClaimState(t, ns, "shared")
		return s == "reservedFor=[] allocated=false finalizer=false", s
	})
}

// upstream "delete-claim-when-done": the generated claim of a pod that finished is deleted once
// nothing reserves it (the pod itself stays; no garbage collector runs here).
func TestResourceClaim_GeneratedDeletedWhenPodDone(t *testing.T) {
	rcStart(t)
	ns := Namespace(t)
	ctx := context.Background()
	class := rcClass(t, ns)
	rcTemplate(t, ns, "tmpl", class)
	pod := rcPod(t, ns, "pod1", fromTemplate("gpu", "tmpl"))
	c := rcWaitClaim(t, ns, pod, "gpu")
	rcAllocate(t, ns, c.Name, pod)
	p, err := env.Client.CoreV1().Pods(ns).Get(ctx, "pod1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	p.Status.Phase = corev1.PodFailed
	if _, err := env.Client.CoreV1().Pods(ns).UpdateStatus(ctx, p, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	Eventually(t, 30*time.Second, "the generated claim deleted", func() (bool, string) {
		s, _ := rcClaimState(t, ns, c.Name)
		return s == "gone", s
	})
	if _, err := env.Client.CoreV1().Pods(ns).Get(ctx, "pod1", metav1.GetOptions{}); err != nil {
		t.Fatalf("the pod: %v", err)
	}
}

// kill -9 of the workers while they create claims: every pod claim ends with exactly one claim,
// recorded in its pod's status (a claim made by a worker that died before the status apply is
// found by annotation and owner, in the cache or by a live LIST, and not made again).
func TestResourceClaim_CrashDuringCreation(t *testing.T) {
	draStopShared()
	p := startKcmd(t, nil, "--controllers=resourceclaim-controller", "--secure-port=0", "--leader-elect=false",
		"--concurrent-resourceclaim-syncs=1", "--kube-api-qps=8", "--kube-api-burst=2", "--v=5")
	t.Cleanup(func() { dumpKcmdLogs(t, p) })
	mgr := p.cmd.Process.Pid
	ns := Namespace(t)
	class := rcClass(t, ns)
	rcTemplate(t, ns, "tmpl", class)
	const n = 10
	var pods []*corev1.Pod
	for i := 0; i < n; i++ {
		pods = append(pods, rcPod(t, ns, fmt.Sprintf("pod-%d", i), fromTemplate("a", "tmpl"), fromTemplate("b", "tmpl")))
	}
	kills := 0
	deadline := time.Now().Add(8 * time.Second)
	for time.Now().Before(deadline) && kills < 5 {
		time.Sleep(700 * time.Millisecond)
		for pid, comm := range childrenOf(mgr) {
			if comm != "kcmd-worker" {
				continue
			}
			b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
			if strings.Contains(string(b), "resourceclaim-controller") && syscall.Kill(pid, syscall.SIGKILL) == nil {
				kills++
			}
		}
	}
	if kills == 0 {
		t.Fatal("no resourceclaim worker was killed")
	}
	for _, pod := range pods {
		for _, pc := range []string{"a", "b"} {
			Eventually(t, 60*time.Second, pod.Name+"/"+pc+" recorded", func() (bool, string) {
				rec := rcRecorded(t, ns, pod.Name, pc)
				return rec != "", "not yet"
			})
		}
	}
	l, err := env.Client.ResourceV1().ResourceClaims(ns).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Items) != 2*n {
		var desc []string
		for _, c := range l.Items {
			desc = append(desc, fmt.Sprintf("%s(%s %s)", c.Name, c.Annotations[rcPodClaimAnnotation], c.CreationTimestamp.Format("15:04:05")))
		}
		t.Fatalf("%d claims for %d pod claims (killed the worker %d times): %v", len(l.Items), 2*n, kills, desc)
	}
	for _, pod := range pods {
		for _, pc := range []string{"a", "b"} {
			cs := rcGenerated(t, ns, pod, pc)
			if len(cs) != 1 || cs[0].Name != rcRecorded(t, ns, pod.Name, pc) {
				t.Fatalf("%s/%s: %d claims", pod.Name, pc, len(cs))
			}
		}
	}
	t.Logf("killed the resourceclaim worker %d times; %d claims, each made once", kills, 2*n)
}
