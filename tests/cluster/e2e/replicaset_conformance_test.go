package e2e

// The scenarios of upstream's test/e2e/apps/replica_set.go ("[sig-apps] ReplicaSet"), run
// against kcmd's ReplicaSet controller on a real kube-apiserver. Each test is named after the
// upstream It(...) text. No kubelet runs: fakeKubelet marks pods Running and Ready through the
// status subresource where upstream waits for running pods, and nothing can answer HTTP.

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/apimachinery/pkg/util/resourceversion"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/cache"
	watchtools "k8s.io/client-go/tools/watch"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"

	"kcmd.local/tests/cluster/harness"
)

// Images as upstream's e2e suite names them (nothing pulls them here).
const (
	agnhostImageName = "agnhost"
	agnhostImage     = "registry.k8s.io/e2e-test-images/agnhost:2.56"
	pauseImage       = "registry.k8s.io/pause:3.10.1"
)

// e2eRS is upstream e2e's newRS: labels on the ReplicaSet, its selector and template, grace 0.
func e2eRS(ns, name string, replicas int32, podLabels map[string]string, containerName, image string, args []string) *appsv1.ReplicaSet {
	return &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: podLabels},
		Spec: appsv1.ReplicaSetSpec{
			Replicas: ptr.To(replicas),
			Selector: &metav1.LabelSelector{MatchLabels: podLabels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: podLabels},
				Spec: corev1.PodSpec{
					TerminationGracePeriodSeconds: ptr.To[int64](0),
					Containers:                    []corev1.Container{{Name: containerName, Image: image, Args: args}},
				},
			},
		},
	}
}

// TestReplicaSet_ShouldServeABasicImageOnEachReplicaWithAPublicImage ports "should serve a basic
// image on each replica with a public image" [Conformance]: a ReplicaSet of 1 running agnhost
// serve-hostname gets its pod, built from the template, which runs. Dialling the pod (upstream's
// last step) needs a kubelet and a container runtime and is skipped.
func TestReplicaSet_ShouldServeABasicImageOnEachReplicaWithAPublicImage(t *testing.T) {
	t.Parallel()
	useSharedRS(t)
	ns := rsNamespace(t)
	fakeKubelet(t, ns)
	name := "my-hostname-basic-" + rand.String(8)
	podLabels := map[string]string{"name": name}
	spec := e2eRS(ns, name, 1, podLabels, name, agnhostImage, []string{"serve-hostname"})
	spec.Spec.Template.Spec.Containers[0].Ports = []corev1.ContainerPort{{ContainerPort: 9376}}
	rs := mustCreateRS(t, spec)

	pods := waitPodsRunning(t, ns, podLabels, 1)
	p := pods[0]
	if !ownedBy(&p, rs) {
		t.Errorf("pod %s: controller ref %+v, want the ReplicaSet", p.Name, metav1.GetControllerOf(&p))
	}
	c := p.Spec.Containers
	if len(c) != 1 || c[0].Name != name || c[0].Image != agnhostImage || len(c[0].Args) != 1 || c[0].Args[0] != "serve-hostname" ||
		len(c[0].Ports) != 1 || c[0].Ports[0].ContainerPort != 9376 {
		t.Errorf("pod %s containers %+v, want the template's", p.Name, c)
	}
	if p.Spec.TerminationGracePeriodSeconds == nil || *p.Spec.TerminationGracePeriodSeconds != 0 {
		t.Errorf("pod %s terminationGracePeriodSeconds %v, want 0 from the template", p.Name, p.Spec.TerminationGracePeriodSeconds)
	}
	Eventually(t, rsTimeout, "status: replicas 1, ready 1, available 1", func() (bool, string) {
		st := getRS(t, ns, name).Status
		return st.Replicas == 1 && st.ReadyReplicas == 1 && st.AvailableReplicas == 1,
			fmt.Sprintf("replicas %d ready %d available %d", st.Replicas, st.ReadyReplicas, st.AvailableReplicas)
	})
	t.Run("dial each pod", func(t *testing.T) {
		t.Skip("no kubelet or container runtime in the test cluster: nothing serves the pod's hostname")
	})
}

// TestReplicaSet_ShouldServeABasicImageOnEachReplicaWithAPrivateImage ports "should serve a basic
// image on each replica with a private image", which upstream runs only on GCE.
func TestReplicaSet_ShouldServeABasicImageOnEachReplicaWithAPrivateImage(t *testing.T) {
	t.Skip("upstream runs this only on GCE (SkipUnlessProviderIs(\"gce\"): private registry); not applicable here")
}

// TestReplicaSet_ShouldSurfaceAFailureConditionOnACommonIssueLikeExceededQuota ports "should
// surface a failure condition on a common issue like exceeded quota": with a ResourceQuota of 2
// pods, a ReplicaSet of 3 gets a ReplicaFailure condition; scaled to 2, the condition goes.
// Quota status needs upstream's resourcequota controller, started for this test only.
func TestReplicaSet_ShouldSurfaceAFailureConditionOnACommonIssueLikeExceededQuota(t *testing.T) {
	t.Parallel()
	useSharedRS(t)
	startQuotaController(t)
	ctx := context.Background()
	ns := rsNamespace(t)
	name := "condition-test"
	quota := &corev1.ResourceQuota{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{corev1.ResourcePods: resource.MustParse("2")}},
	}
	if _, err := env.Client.CoreV1().ResourceQuotas(ns).Create(ctx, quota, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	Eventually(t, 60*time.Second, "the quota's status.hard to be synced", func() (bool, string) {
		q, err := env.Client.CoreV1().ResourceQuotas(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		hard := q.Status.Hard[corev1.ResourcePods]
		return hard.Cmp(resource.MustParse("2")) == 0, fmt.Sprintf("status %+v", q.Status)
	})

	rs := mustCreateRS(t, e2eRS(ns, name, 3, map[string]string{"name": name}, agnhostImageName, agnhostImage, nil))
	gen := rs.Generation
	Eventually(t, rsTimeout, "a ReplicaFailure condition", func() (bool, string) {
		rs = getRS(t, ns, name)
		if gen > rs.Status.ObservedGeneration {
			return false, fmt.Sprintf("observedGeneration %d < %d", rs.Status.ObservedGeneration, gen)
		}
		return rsCondition(rs, appsv1.ReplicaSetReplicaFailure) != nil, fmt.Sprintf("conditions %+v", rs.Status.Conditions)
	})
	// beyond upstream's check: the condition is upstream's (reason FailedCreate, as 2 < 3 pods, and
	// the create error as its message)
	if c := rsCondition(rs, appsv1.ReplicaSetReplicaFailure); c.Status != corev1.ConditionTrue || c.Reason != "FailedCreate" ||
		!strings.Contains(c.Message, "exceeded quota: "+name) {
		t.Errorf("ReplicaFailure condition %+v, want status True, reason FailedCreate, the quota's error as message", *c)
	}

	rs = updateRS(t, ns, name, func(rs *appsv1.ReplicaSet) { rs.Spec.Replicas = ptr.To[int32](2) })
	gen = rs.Generation
	Eventually(t, rsTimeout, "no ReplicaFailure condition", func() (bool, string) {
		rs = getRS(t, ns, name)
		if gen > rs.Status.ObservedGeneration {
			return false, fmt.Sprintf("observedGeneration %d < %d", rs.Status.ObservedGeneration, gen)
		}
		return rsCondition(rs, appsv1.ReplicaSetReplicaFailure) == nil, fmt.Sprintf("conditions %+v", rs.Status.Conditions)
	})
}

func rsCondition(rs *appsv1.ReplicaSet, typ appsv1.ReplicaSetConditionType) *appsv1.ReplicaSetCondition {
	for i := range rs.Status.Conditions {
		if rs.Status.Conditions[i].Type == typ {
			return &rs.Status.Conditions[i]
		}
	}
	return nil
}

// startQuotaController runs upstream kube-controller-manager with only the resourcequota
// controller for the duration of t (the harness runs one kube-controller-manager at a time).
func startQuotaController(t *testing.T) {
	t.Helper()
	kcmMu.Lock()
	if err := env.Cluster.StartKCM(context.Background(), harness.KCMOptions{Controllers: "resourcequota-controller"}); err != nil {
		kcmMu.Unlock()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		env.Cluster.StopKCM()
		kcmMu.Unlock()
	})
}

// kcmMu keeps parallel tests from starting upstream kube-controller-manager twice.
var kcmMu sync.Mutex

// TestReplicaSet_ShouldAdoptMatchingPodsOnCreationAndReleaseNoLongerMatchingPods ports "should
// adopt matching pods on creation and release no longer matching pods" [Conformance]: a running
// orphan with the selector's labels is adopted (or deleted and replaced); an owned pod whose
// labels stop matching is released.
func TestReplicaSet_ShouldAdoptMatchingPodsOnCreationAndReleaseNoLongerMatchingPods(t *testing.T) {
	t.Parallel()
	useSharedRS(t)
	ctx := context.Background()
	ns := rsNamespace(t)
	fakeKubelet(t, ns)
	name := "pod-adoption-release"
	podLabels := map[string]string{"name": name}
	p := mustCreatePod(t, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: podLabels},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: name, Image: agnhostImage}}},
	})
	waitPodsRunning(t, ns, podLabels, 1) // upstream's CreateSync

	rs := mustCreateRS(t, e2eRS(ns, name, 1, podLabels, name, agnhostImage, nil))
	Eventually(t, 60*time.Second, "the orphan adopted (or deleted)", func() (bool, string) {
		p2, err := env.Client.CoreV1().Pods(ns).Get(ctx, p.Name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return true, ""
		}
		if err != nil {
			return false, err.Error()
		}
		for _, o := range p2.OwnerReferences {
			if o.Controller != nil && *o.Controller && o.UID == rs.UID {
				return true, ""
			}
		}
		return false, fmt.Sprintf("ownerReferences %+v", p2.OwnerReferences)
	})

	// upstream's PodsCreatedByLabel: exactly replicas active pods with the labels
	var pods []corev1.Pod
	Eventually(t, rsTimeout, "1 active pod with the ReplicaSet's labels", func() (bool, string) {
		pods = pods[:0]
		for _, q := range listPods(t, ns, podLabels) {
			if q.DeletionTimestamp == nil {
				pods = append(pods, q)
			}
		}
		return len(pods) == 1, fmt.Sprintf("%d pods: %s", len(pods), podNames(pods))
	})
	victim := pods[0].Name
	updatePod(t, ns, victim, func(q *corev1.Pod) { q.Labels = map[string]string{"name": "not-matching-name"} })
	Eventually(t, 60*time.Second, "the relabelled pod released", func() (bool, string) {
		p2, err := env.Client.CoreV1().Pods(ns).Get(ctx, victim, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		for _, o := range p2.OwnerReferences {
			if o.Controller != nil && *o.Controller && o.UID == rs.UID {
				return false, fmt.Sprintf("ownerReferences %+v", p2.OwnerReferences)
			}
		}
		return true, ""
	})
}

// TestReplicaSet_ReplicasetShouldHaveAWorkingScaleSubresource ports "Replicaset should have a
// working scale subresource" [Conformance].
func TestReplicaSet_ReplicasetShouldHaveAWorkingScaleSubresource(t *testing.T) {
	t.Parallel()
	useSharedRS(t)
	ctx := context.Background()
	ns := rsNamespace(t)
	fakeKubelet(t, ns)
	podLabels := map[string]string{"name": "sample-pod", "pod": agnhostImageName}
	rsName := "test-rs"
	rsc := env.Client.AppsV1().ReplicaSets(ns)
	mustCreateRS(t, e2eRS(ns, rsName, 1, podLabels, agnhostImageName, agnhostImage, nil))
	waitPodsRunning(t, ns, map[string]string{"name": "sample-pod"}, 1)

	// Upstream reads the scale right after the pod runs; a kubelet takes seconds to start a pod,
	// the fake one does not, so give the controller's status write the same head start.
	var scale *autoscalingv1.Scale
	Eventually(t, 10*time.Second, "scale status.replicas 1", func() (bool, string) {
		var err error
		if scale, err = rsc.GetScale(ctx, rsName, metav1.GetOptions{}); err != nil {
			return false, err.Error()
		}
		return scale.Status.Replicas == 1, fmt.Sprintf("scale %+v", scale.Status)
	})
	if scale.Spec.Replicas != 1 {
		t.Fatalf("scale.spec.replicas %d, want 1", scale.Spec.Replicas)
	}

	scale.ResourceVersion = "" // unconditional
	scale.Spec.Replicas = 2
	res, err := rsc.UpdateScale(ctx, rsName, scale, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Spec.Replicas != 2 {
		t.Fatalf("UpdateScale returned spec.replicas %d, want 2", res.Spec.Replicas)
	}
	if rs := getRS(t, ns, rsName); *rs.Spec.Replicas != 2 {
		t.Fatalf("spec.replicas %d after UpdateScale, want 2", *rs.Spec.Replicas)
	}

	body, err := json.Marshal(autoscalingv1.Scale{Spec: autoscalingv1.ScaleSpec{Replicas: 4}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rsc.Patch(ctx, rsName, types.StrategicMergePatchType, body, metav1.PatchOptions{}, "scale"); err != nil {
		t.Fatal(err)
	}
	rs := getRS(t, ns, rsName)
	if *rs.Spec.Replicas != 4 {
		t.Fatalf("spec.replicas %d after patching the scale, want 4", *rs.Spec.Replicas)
	}
	// beyond upstream's checks: the controller follows
	waitRSStable(t, rs)
}

// TestReplicaSet_ReplaceAndPatchTests ports "Replace and Patch tests" [Conformance]: a running
// ReplicaSet is scaled to 2 by update, then patched (label, 3 replicas, pause image); a watch
// sees it with 3 ready and available replicas and the new template.
func TestReplicaSet_ReplaceAndPatchTests(t *testing.T) {
	t.Parallel()
	useSharedRS(t)
	ctx := context.Background()
	ns := rsNamespace(t)
	fakeKubelet(t, ns)
	podLabels := map[string]string{"name": "sample-pod", "pod": agnhostImageName}
	rsName := "test-rs"
	label := "test-rs=patched"
	rsc := env.Client.AppsV1().ReplicaSets(ns)

	w := &cache.ListWatch{WatchFunc: func(o metav1.ListOptions) (watch.Interface, error) {
		o.LabelSelector = label
		return rsc.Watch(ctx, o)
	}}
	list, err := env.Client.AppsV1().ReplicaSets("").List(ctx, metav1.ListOptions{LabelSelector: label})
	if err != nil {
		t.Fatal(err)
	}
	created := mustCreateRS(t, e2eRS(ns, rsName, 1, podLabels, agnhostImageName, agnhostImage, nil))
	if created.ResourceVersion == "" {
		t.Fatal("created ReplicaSet has no resourceVersion")
	}
	waitPodsRunning(t, ns, map[string]string{"name": "sample-pod"}, 1)

	updateRS(t, ns, rsName, func(rs *appsv1.ReplicaSet) { rs.Spec.Replicas = ptr.To[int32](2) })

	patch, err := json.Marshal(map[string]any{
		"metadata": map[string]any{"labels": map[string]string{"test-rs": "patched"}},
		"spec": map[string]any{
			"replicas": 3,
			"template": map[string]any{"spec": map[string]any{
				"terminationGracePeriodSeconds": 0,
				"containers":                    []map[string]any{{"name": rsName, "image": pauseImage}},
			}},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	patched, err := rsc.Patch(ctx, rsName, types.StrategicMergePatchType, patch, metav1.PatchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if c, err := resourceversion.CompareResourceVersion(created.ResourceVersion, patched.ResourceVersion); err != nil || c != -1 {
		t.Fatalf("patched resourceVersion %s not larger than created %s (%d, %v)", patched.ResourceVersion, created.ResourceVersion, c, err)
	}

	wctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	var last string
	_, err = watchtools.Until(wctx, list.ResourceVersion, w, func(ev watch.Event) (bool, error) {
		rs, ok := ev.Object.(*appsv1.ReplicaSet)
		if !ok {
			return false, nil
		}
		last = fmt.Sprintf("labels %v ready %d available %d image %s", rs.Labels, rs.Status.ReadyReplicas, rs.Status.AvailableReplicas,
			rs.Spec.Template.Spec.Containers[0].Image)
		return rs.Name == rsName && rs.Labels["test-rs"] == "patched" && rs.Status.ReadyReplicas == 3 && rs.Status.AvailableReplicas == 3 &&
			rs.Spec.Template.Spec.Containers[0].Image == pauseImage && *rs.Spec.Template.Spec.TerminationGracePeriodSeconds == 0, nil
	})
	if err != nil {
		t.Fatalf("never saw the patched ReplicaSet with 3 ready and available replicas: %v (last: %s)", err, last)
	}
}

// TestReplicaSet_ShouldListAndDeleteACollectionOfReplicaSets ports "should list and delete a
// collection of ReplicaSets" [Conformance].
func TestReplicaSet_ShouldListAndDeleteACollectionOfReplicaSets(t *testing.T) {
	t.Parallel()
	useSharedRS(t)
	ctx := context.Background()
	ns := rsNamespace(t)
	fakeKubelet(t, ns)
	e2eValue := rand.String(5)
	podLabels := map[string]string{"name": "sample-pod", "pod": agnhostImageName, "e2e": e2eValue}
	rsc := env.Client.AppsV1().ReplicaSets(ns)
	mustCreateRS(t, e2eRS(ns, "test-rs", 3, podLabels, agnhostImageName, agnhostImage, nil))
	waitPodsRunning(t, ns, map[string]string{"name": "sample-pod"}, 3)

	list, err := env.Client.AppsV1().ReplicaSets("").List(ctx, metav1.ListOptions{LabelSelector: "e2e=" + e2eValue})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != 1 {
		t.Fatalf("%d ReplicaSets with e2e=%s, want 1", len(list.Items), e2eValue)
	}
	if err := rsc.DeleteCollection(ctx, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](1)},
		metav1.ListOptions{LabelSelector: "e2e=" + e2eValue}); err != nil {
		t.Fatal(err)
	}
	list, err = env.Client.AppsV1().ReplicaSets("").List(ctx, metav1.ListOptions{LabelSelector: "e2e=" + e2eValue})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != 0 {
		t.Fatalf("%d ReplicaSets left after DeleteCollection, want 0", len(list.Items))
	}
}

// TestReplicaSet_ShouldValidateReplicasetStatusEndpoints ports "should validate Replicaset Status
// endpoints" [Conformance]: GET /status, UpdateStatus adding a condition and a merge PATCH of
// /status are each seen by a watch. kcmd writes the status too, so this also checks that it keeps
// conditions it does not own.
func TestReplicaSet_ShouldValidateReplicasetStatusEndpoints(t *testing.T) {
	t.Parallel()
	useSharedRS(t)
	ctx := context.Background()
	ns := rsNamespace(t)
	fakeKubelet(t, ns)
	podLabels := map[string]string{"name": "sample-pod", "pod": agnhostImageName}
	selector := labels.SelectorFromSet(podLabels).String()
	rsName := "test-rs"
	rsc := env.Client.AppsV1().ReplicaSets(ns)
	w := &cache.ListWatch{WatchFunc: func(o metav1.ListOptions) (watch.Interface, error) {
		o.LabelSelector = selector
		return rsc.Watch(ctx, o)
	}}
	list, err := env.Client.AppsV1().ReplicaSets("").List(ctx, metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		t.Fatal(err)
	}
	mustCreateRS(t, e2eRS(ns, rsName, 1, podLabels, agnhostImageName, agnhostImage, nil))
	waitPodsRunning(t, ns, map[string]string{"name": "sample-pod"}, 1)

	dyn, err := dynamic.NewForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	gvr := schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "replicasets"}
	u, err := dyn.Resource(gvr).Namespace(ns).Get(ctx, rsName, metav1.GetOptions{}, "status")
	if err != nil {
		t.Fatal(err)
	}
	var viaStatus appsv1.ReplicaSet
	if b, err := json.Marshal(u); err != nil {
		t.Fatal(err)
	} else if err := json.Unmarshal(b, &viaStatus); err != nil {
		t.Fatal(err)
	}
	if viaStatus.Name != rsName {
		t.Fatalf("GET /status returned %q", viaStatus.Name)
	}

	if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		rs, err := rsc.Get(ctx, rsName, metav1.GetOptions{})
		if err != nil {
			return err
		}
		rs.Status.Conditions = append(rs.Status.Conditions, appsv1.ReplicaSetCondition{
			Type: "StatusUpdate", Status: "True", Reason: "E2E", Message: "Set from e2e test"})
		_, err = rsc.UpdateStatus(ctx, rs, metav1.UpdateOptions{})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	watchFor := func(what string, found func(*appsv1.ReplicaSet) bool) {
		t.Helper()
		wctx, cancel := context.WithTimeout(ctx, 60*time.Second)
		defer cancel()
		if _, err := watchtools.Until(wctx, list.ResourceVersion, w, func(ev watch.Event) (bool, error) {
			rs, ok := ev.Object.(*appsv1.ReplicaSet)
			return ok && rs.Name == rsName && rs.Labels["name"] == podLabels["name"] && rs.Labels["pod"] == podLabels["pod"] && found(rs), nil
		}); err != nil {
			t.Fatalf("watching for %s: %v", what, err)
		}
	}
	hasUpdate := func(rs *appsv1.ReplicaSet) bool {
		c := rsCondition(rs, "StatusUpdate")
		return c != nil && c.Reason == "E2E" && c.Message == "Set from e2e test"
	}
	watchFor("the StatusUpdate condition", hasUpdate)

	// beyond upstream: a spec change makes kcmd write the status (new observedGeneration); the
	// foreign condition must survive that write
	rs := updateRS(t, ns, rsName, func(rs *appsv1.ReplicaSet) { rs.Spec.Template.Annotations = map[string]string{"x": "y"} })
	Eventually(t, rsTimeout, "kcmd's status write for the new generation, keeping StatusUpdate", func() (bool, string) {
		cur := getRS(t, ns, rsName)
		if cur.Status.ObservedGeneration < rs.Generation {
			return false, fmt.Sprintf("observedGeneration %d < %d", cur.Status.ObservedGeneration, rs.Generation)
		}
		if !hasUpdate(cur) {
			t.Fatalf("kcmd dropped the StatusUpdate condition: %+v", cur.Status.Conditions)
		}
		return true, ""
	})

	payload := []byte(`{"status":{"conditions":[{"type":"StatusPatched","status":"True"}]}}`)
	if _, err := rsc.Patch(ctx, rsName, types.MergePatchType, payload, metav1.PatchOptions{}, "status"); err != nil {
		t.Fatal(err)
	}
	watchFor("the StatusPatched condition", func(rs *appsv1.ReplicaSet) bool { return rsCondition(rs, "StatusPatched") != nil })
}
