package e2e

// kcmd's horizontal-pod-autoscaler-controller (docs/hpa.md) on the real kube-apiserver,
// upstream kube-controller-manager not running it. The scale target is a Deployment (its
// /scale subresource, found through discovery; no deployment controller is needed: the test
// reads spec.replicas). No metrics API is registered in the default test cluster, so these
// tests cover the paths that need none: the min/max clamp, the missing metrics API
// (FailedGetResourceMetric), a target that does not exist (FailedGetScale) and two HPAs on one
// target (AmbiguousSelector). One kcmd runs the controller for every test (each in its own
// namespace) with --horizontal-pod-autoscaler-sync-period=2s, as the controller's service
// account, so its requests must pass upstream's bootstrap role
// system:controller:horizontal-pod-autoscaler.

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/utils/ptr"

	"kcmd.local/tests/cluster/metricssim"
)

var (
	kcmdHPA     *kcmdProc
	kcmdHPAOnce sync.Once
	hpaProcMu   sync.Mutex
)

func useHPAController(t *testing.T) *kcmdProc {
	t.Helper()
	hpaProcMu.Lock()
	kcmdHPAOnce.Do(func() {
		kcmdHPA = startKcmdShared(t, "--controllers=horizontal-pod-autoscaler-controller",
			"--secure-port=0", "--leader-elect=false", "--use-service-account-credentials",
			"--horizontal-pod-autoscaler-sync-period=2s",
			"--horizontal-pod-autoscaler-downscale-stabilization=4s", "--v=4")
	})
	p := kcmdHPA
	hpaProcMu.Unlock()
	t.Cleanup(func() { dumpKcmdLogs(t, p) })
	return p
}

func hpaDeployment(t *testing.T, ns, name string, replicas int32) {
	t.Helper()
	labels := map[string]string{"app": name}
	_, err := env.Client.AppsV1().Deployments(ns).Create(context.Background(), &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To(replicas),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "fakeimage",
					Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{}}}}},
			},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating deployment %s: %v", name, err)
	}
}

func hpaCreate(t *testing.T, ns, name, target string, min *int32, max int32, metrics []autoscalingv2.MetricSpec) {
	t.Helper()
	_, err := env.Client.AutoscalingV2().HorizontalPodAutoscalers(ns).Create(context.Background(),
		&autoscalingv2.HorizontalPodAutoscaler{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
				ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: target},
				MinReplicas:    min, MaxReplicas: max, Metrics: metrics,
			},
		}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating hpa %s: %v", name, err)
	}
}

func cpuMetric(util int32) []autoscalingv2.MetricSpec {
	return []autoscalingv2.MetricSpec{{Type: autoscalingv2.ResourceMetricSourceType,
		Resource: &autoscalingv2.ResourceMetricSource{Name: corev1.ResourceCPU,
			Target: autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: ptr.To(util)}}}}
}

func hpaCond(h *autoscalingv2.HorizontalPodAutoscaler, typ autoscalingv2.HorizontalPodAutoscalerConditionType) *autoscalingv2.HorizontalPodAutoscalerCondition {
	for i := range h.Status.Conditions {
		if h.Status.Conditions[i].Type == typ {
			return &h.Status.Conditions[i]
		}
	}
	return nil
}

// hpaWaitCond waits for the HPA's condition typ to have status st and reason, and returns it.
func hpaWaitCond(t *testing.T, ns, name string, typ autoscalingv2.HorizontalPodAutoscalerConditionType, st corev1.ConditionStatus, reason string) *autoscalingv2.HorizontalPodAutoscaler {
	t.Helper()
	var got *autoscalingv2.HorizontalPodAutoscaler
	Eventually(t, 20*time.Second, fmt.Sprintf("hpa %s condition %s=%s %s", name, typ, st, reason), func() (bool, string) {
		h, err := env.Client.AutoscalingV2().HorizontalPodAutoscalers(ns).Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		c := hpaCond(h, typ)
		if c == nil || c.Status != st || c.Reason != reason {
			return false, fmt.Sprintf("conditions %+v", h.Status.Conditions)
		}
		got = h
		return true, ""
	})
	return got
}

// hpaWaitEvent waits for an Event on the HPA with reason and a message starting with prefix.
func hpaWaitEvent(t *testing.T, ns, name, typ, reason, prefix string) string {
	t.Helper()
	var msg string
	Eventually(t, 20*time.Second, "event "+reason+" on "+name, func() (bool, string) {
		l, err := env.Client.CoreV1().Events(ns).List(context.Background(), metav1.ListOptions{})
		if err != nil {
			return false, err.Error()
		}
		var seen []string
		for _, e := range l.Items {
			if e.InvolvedObject.Kind != "HorizontalPodAutoscaler" || e.InvolvedObject.Name != name {
				continue
			}
			seen = append(seen, e.Reason+": "+e.Message)
			if e.Reason == reason && e.Type == typ && strings.HasPrefix(e.Message, prefix) &&
				e.Source.Component == "horizontal-pod-autoscaler" {
				msg = e.Message
				return true, ""
			}
		}
		return false, fmt.Sprintf("events %q", seen)
	})
	return msg
}

func deploymentReplicas(t *testing.T, ns, name string) int32 {
	t.Helper()
	d, err := env.Client.AppsV1().Deployments(ns).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return *d.Spec.Replicas
}

// TestHPA_ClampAboveMax: a target above maxReplicas is scaled down to it without any metric
// (upstream's "Current number of replicas above Spec.MaxReplicas" path), and one below
// minReplicas up to it; status, conditions and the SuccessfulRescale Events as upstream's.
func TestHPA_ClampAboveMaxBelowMin(t *testing.T) {
	useHPAController(t)
	ns := Namespace(t)
	hpaDeployment(t, ns, "big", 5)
	hpaDeployment(t, ns, "small", 1)
	hpaCreate(t, ns, "big", "big", ptr.To[int32](1), 3, cpuMetric(50))
	hpaCreate(t, ns, "small", "small", ptr.To[int32](2), 4, cpuMetric(50))

	h := hpaWaitCond(t, ns, "big", autoscalingv2.AbleToScale, corev1.ConditionTrue, "SucceededRescale")
	if c := hpaCond(h, autoscalingv2.AbleToScale); c.Message != "the HPA controller was able to update the target scale to 3" {
		t.Errorf("AbleToScale message %q", c.Message)
	}
	if h.Status.CurrentReplicas != 5 || h.Status.DesiredReplicas != 3 || h.Status.LastScaleTime == nil {
		t.Errorf("status %+v", h.Status)
	}
	if c := hpaCond(h, autoscalingv2.ScaledToZero); c == nil || c.Status != corev1.ConditionFalse || c.Reason != "NotScaledToZero" {
		t.Errorf("ScaledToZero %+v", c)
	}
	if h.Status.ObservedGeneration == nil || *h.Status.ObservedGeneration != h.Generation {
		t.Errorf("observedGeneration %v, generation %d", h.Status.ObservedGeneration, h.Generation)
	}
	hpaWaitEvent(t, ns, "big", "Normal", "SuccessfulRescale", "New size: 3; reason: Current number of replicas above Spec.MaxReplicas")
	if r := deploymentReplicas(t, ns, "big"); r != 3 {
		t.Errorf("big: spec.replicas %d, want 3", r)
	}
	hpaWaitEvent(t, ns, "small", "Normal", "SuccessfulRescale", "New size: 2; reason: Current number of replicas below Spec.MinReplicas")
	Eventually(t, 10*time.Second, "small at 2", func() (bool, string) {
		r := deploymentReplicas(t, ns, "small")
		return r == 2, fmt.Sprintf("spec.replicas %d", r)
	})
}

// TestHPA_NoMetricsAPI: no metrics.k8s.io is served: a CPU utilization metric cannot be read,
// ScalingActive=False FailedGetResourceMetric, the FailedGetResourceMetric and
// FailedComputeMetricsReplicas Events, the target left alone, currentMetrics with the empty
// status upstream writes for a failed metric.
func TestHPA_NoMetricsAPI(t *testing.T) {
	useHPAController(t)
	ns := Namespace(t)
	hpaDeployment(t, ns, "web", 2)
	hpaCreate(t, ns, "web", "web", nil, 5, cpuMetric(50))

	h := hpaWaitCond(t, ns, "web", autoscalingv2.ScalingActive, corev1.ConditionFalse, "FailedGetResourceMetric")
	c := hpaCond(h, autoscalingv2.ScalingActive)
	const prefix = "failed to get cpu utilization: unable to get metrics for resource cpu: unable to fetch metrics from resource metrics API: "
	if !strings.HasPrefix(c.Message, "the HPA was unable to compute the replica count: "+prefix) {
		t.Errorf("ScalingActive message %q", c.Message)
	}
	if a := hpaCond(h, autoscalingv2.AbleToScale); a == nil || a.Status != corev1.ConditionTrue || a.Reason != "SucceededGetScale" ||
		a.Message != "the HPA controller was able to get the target's current scale" {
		t.Errorf("AbleToScale %+v", a)
	}
	if h.Status.CurrentReplicas != 2 || len(h.Status.CurrentMetrics) != 1 || h.Status.CurrentMetrics[0].Type != "" {
		t.Errorf("status %+v", h.Status)
	}
	hpaWaitEvent(t, ns, "web", "Warning", "FailedGetResourceMetric", prefix)
	m := hpaWaitEvent(t, ns, "web", "Warning", "FailedComputeMetricsReplicas",
		"invalid metrics (1 invalid out of 1), first error is: failed to get cpu resource metric value: "+prefix)
	t.Logf("FailedComputeMetricsReplicas: %s", m)
	if r := deploymentReplicas(t, ns, "web"); r != 2 {
		t.Errorf("spec.replicas %d, want 2 (untouched)", r)
	}
}

// TestHPA_FailedGetScale: the target does not exist: AbleToScale=False FailedGetScale with the
// apiserver's NotFound message, and the FailedGetScale Event.
func TestHPA_FailedGetScale(t *testing.T) {
	useHPAController(t)
	ns := Namespace(t)
	hpaCreate(t, ns, "ghost", "nope", nil, 5, cpuMetric(50))
	h := hpaWaitCond(t, ns, "ghost", autoscalingv2.AbleToScale, corev1.ConditionFalse, "FailedGetScale")
	want := `deployments.apps "nope" not found`
	if c := hpaCond(h, autoscalingv2.AbleToScale); c.Message != "the HPA controller was unable to get the target's current scale: "+want {
		t.Errorf("AbleToScale message %q", c.Message)
	}
	hpaWaitEvent(t, ns, "ghost", "Warning", "FailedGetScale", want)
}

// TestHPA_AmbiguousSelector: two HPAs scale one Deployment whose pod both selectors match:
// upstream's selector tracker sets ScalingActive=False AmbiguousSelector.
func TestHPA_AmbiguousSelector(t *testing.T) {
	useHPAController(t)
	ns := Namespace(t)
	hpaDeployment(t, ns, "shared", 1)
	if _, err := env.Client.CoreV1().Pods(ns).Create(context.Background(), &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "shared-pod", Labels: map[string]string{"app": "shared"}},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "fakeimage"}}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	hpaCreate(t, ns, "one", "shared", nil, 5, cpuMetric(50))
	hpaCreate(t, ns, "two", "shared", nil, 5, cpuMetric(50))
	var msg string
	Eventually(t, 20*time.Second, "AmbiguousSelector on both HPAs", func() (bool, string) {
		for _, n := range []string{"one", "two"} {
			h, err := env.Client.AutoscalingV2().HorizontalPodAutoscalers(ns).Get(context.Background(), n, metav1.GetOptions{})
			if err != nil {
				return false, err.Error()
			}
			c := hpaCond(h, autoscalingv2.ScalingActive)
			if c == nil || c.Reason != "AmbiguousSelector" {
				return false, fmt.Sprintf("%s: %+v", n, c)
			}
			msg = c.Message
		}
		return true, ""
	})
	if !strings.HasPrefix(msg, "pods by selector app=shared are controlled by more than one HPA (e.g. [") ||
		!strings.Contains(msg, ns+"/one") || !strings.Contains(msg, ns+"/two") {
		t.Errorf("message %q", msg)
	}
	hpaWaitEvent(t, ns, "one", "Warning", "AmbiguousSelector", "pods by selector app=shared")
}

// ---- with a metrics API: tests/cluster/metricssim registered as v1beta1.metrics.k8s.io ----

var hpaAPIServices = schema.GroupVersionResource{Group: "apiregistration.k8s.io", Version: "v1", Resource: "apiservices"}

// hpaMetricsAPI starts the simulator and registers it as the cluster's metrics.k8s.io/v1beta1
// (an ExternalName Service "localhost" in ns, so the aggregator dials 127.0.0.1:port); waits
// for the APIService to be Available. Cleanup: the APIService deleted, the server stopped.
func hpaMetricsAPI(t *testing.T, ns string) *metricssim.Server {
	t.Helper()
	ctx := context.Background()
	s, err := metricssim.Start()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := env.Client.CoreV1().Services(ns).Create(ctx, &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "metrics-sim"},
		Spec:       corev1.ServiceSpec{Type: corev1.ServiceTypeExternalName, ExternalName: "localhost"},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	dyn := dynamic.NewForConfigOrDie(env.Config)
	apis := dyn.Resource(hpaAPIServices)
	obj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService",
		"metadata": map[string]any{"name": "v1beta1.metrics.k8s.io"},
		"spec": map[string]any{
			"group": "metrics.k8s.io", "version": "v1beta1", "insecureSkipTLSVerify": true,
			"groupPriorityMinimum": int64(100), "versionPriority": int64(100),
			"service": map[string]any{"namespace": ns, "name": "metrics-sim", "port": int64(s.Port())},
		},
	}}
	if _, err := apis.Create(ctx, obj, metav1.CreateOptions{}); err != nil {
		s.Close()
		t.Fatalf("creating the APIService: %v", err)
	}
	t.Cleanup(func() {
		_ = apis.Delete(context.Background(), "v1beta1.metrics.k8s.io", metav1.DeleteOptions{})
		s.Close()
	})
	Eventually(t, 30*time.Second, "APIService v1beta1.metrics.k8s.io Available", func() (bool, string) {
		u, err := apis.Get(ctx, "v1beta1.metrics.k8s.io", metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
		for _, c := range conds {
			m, _ := c.(map[string]any)
			if m["type"] == "Available" && m["status"] == "True" {
				return true, ""
			}
		}
		return false, fmt.Sprintf("conditions %v", conds)
	})
	return s
}

// hpaPod creates a Running, Ready pod started 10 minutes ago (past the CPU initialization
// period) requesting 100m CPU, and gives the simulator its CPU sample.
func hpaPod(t *testing.T, s *metricssim.Server, ns, name string, labels map[string]string, cpuMilli int64) {
	t.Helper()
	ctx := context.Background()
	p, err := env.Client.CoreV1().Pods(ns).Create(ctx, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "fakeimage",
			Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m")}}}}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	past := metav1.NewTime(time.Now().Add(-10 * time.Minute))
	p.Status = corev1.PodStatus{Phase: corev1.PodRunning, StartTime: &past,
		Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: past}}}
	if _, err := env.Client.CoreV1().Pods(ns).UpdateStatus(ctx, p, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	s.Set(metricssim.Pod{Namespace: ns, Name: name, Labels: labels, CPUMilli: cpuMilli})
}

// TestHPA_ScaleUpOnCPU: two pods at 200% of their CPU request, target 50%: upstream's replica
// calculator proposes 8, the scale-up limit (max(2*current, 4)) caps it at 4; the Event, the
// conditions and the status's current metric as upstream writes them.
func TestHPA_ScaleUpOnCPU(t *testing.T) {
	useHPAController(t)
	ns := Namespace(t)
	s := hpaMetricsAPI(t, ns)
	hpaDeployment(t, ns, "web", 2)
	for i := 0; i < 2; i++ {
		hpaPod(t, s, ns, fmt.Sprintf("web-%d", i), map[string]string{"app": "web"}, 200)
	}
	hpaCreate(t, ns, "web", "web", nil, 10, cpuMetric(50))
	hpaWaitEvent(t, ns, "web", "Normal", "SuccessfulRescale", "New size: 4; reason: cpu resource utilization (percentage of request) above target")
	h := hpaWaitCond(t, ns, "web", autoscalingv2.ScalingLimited, corev1.ConditionTrue, "ScaleUpLimit")
	if c := hpaCond(h, autoscalingv2.ScalingActive); c == nil || c.Status != corev1.ConditionTrue || c.Reason != "ValidMetricFound" ||
		c.Message != "the HPA was able to successfully calculate a replica count from cpu resource utilization (percentage of request)" {
		t.Errorf("ScalingActive %+v", c)
	}
	if c := hpaCond(h, autoscalingv2.ScalingLimited); c.Message != "the desired replica count is increasing faster than the maximum scale rate" {
		t.Errorf("ScalingLimited message %q", c.Message)
	}
	if len(h.Status.CurrentMetrics) != 1 || h.Status.CurrentMetrics[0].Resource == nil ||
		*h.Status.CurrentMetrics[0].Resource.Current.AverageUtilization != 200 ||
		h.Status.CurrentMetrics[0].Resource.Current.AverageValue.String() != "200m" {
		t.Errorf("currentMetrics %+v", h.Status.CurrentMetrics)
	}
	if r := deploymentReplicas(t, ns, "web"); r < 4 {
		t.Errorf("spec.replicas %d, want >= 4", r)
	}
}

// TestHPA_BehaviorLimitsStep: spec.behavior.scaleUp allows one pod per minute: the same load
// scales 2 -> 3 and stays at 3 over the next syncs (ScalingLimited=True ScaleUpLimit), the
// scale event counted inside the policy's period as upstream's storeScaleEvent keeps it.
func TestHPA_BehaviorLimitsStep(t *testing.T) {
	useHPAController(t)
	ns := Namespace(t)
	s := hpaMetricsAPI(t, ns)
	hpaDeployment(t, ns, "web", 2)
	for i := 0; i < 2; i++ {
		hpaPod(t, s, ns, fmt.Sprintf("web-%d", i), map[string]string{"app": "web"}, 200)
	}
	_, err := env.Client.AutoscalingV2().HorizontalPodAutoscalers(ns).Create(context.Background(),
		&autoscalingv2.HorizontalPodAutoscaler{
			ObjectMeta: metav1.ObjectMeta{Name: "web"},
			Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
				ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"},
				MaxReplicas:    10, Metrics: cpuMetric(50),
				Behavior: &autoscalingv2.HorizontalPodAutoscalerBehavior{ScaleUp: &autoscalingv2.HPAScalingRules{
					StabilizationWindowSeconds: ptr.To[int32](0),
					Policies:                   []autoscalingv2.HPAScalingPolicy{{Type: autoscalingv2.PodsScalingPolicy, Value: 1, PeriodSeconds: 60}},
				}},
			},
		}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	hpaWaitEvent(t, ns, "web", "Normal", "SuccessfulRescale", "New size: 3; reason: cpu resource utilization (percentage of request) above target")
	hpaWaitCond(t, ns, "web", autoscalingv2.ScalingLimited, corev1.ConditionTrue, "ScaleUpLimit")
	time.Sleep(5 * time.Second) // two more syncs
	if r := deploymentReplicas(t, ns, "web"); r != 3 {
		t.Errorf("spec.replicas %d, want 3 (one pod per 60 s)", r)
	}
	h, _ := env.Client.AutoscalingV2().HorizontalPodAutoscalers(ns).Get(context.Background(), "web", metav1.GetOptions{})
	if c := hpaCond(h, autoscalingv2.ScalingLimited); c == nil || c.Reason != "ScaleUpLimit" || c.Status != corev1.ConditionTrue {
		t.Errorf("ScalingLimited %+v", c)
	}
}

// TestHPA_ScaleDownAfterStabilization: four pods at 10% of their request, target 50%: the
// recommendation (1) is held at 4 while the downscale stabilization window
// (--horizontal-pod-autoscaler-downscale-stabilization=4s here) still holds the initial
// recommendation (AbleToScale ScaleDownStabilized), then applied.
func TestHPA_ScaleDownAfterStabilization(t *testing.T) {
	useHPAController(t)
	ns := Namespace(t)
	s := hpaMetricsAPI(t, ns)
	hpaDeployment(t, ns, "web", 4)
	for i := 0; i < 4; i++ {
		hpaPod(t, s, ns, fmt.Sprintf("web-%d", i), map[string]string{"app": "web"}, 10)
	}
	start := time.Now()
	hpaCreate(t, ns, "web", "web", nil, 10, cpuMetric(50))
	hpaWaitCond(t, ns, "web", autoscalingv2.AbleToScale, corev1.ConditionTrue, "ScaleDownStabilized")
	if r := deploymentReplicas(t, ns, "web"); r != 4 {
		t.Errorf("spec.replicas %d inside the window, want 4", r)
	}
	hpaWaitEvent(t, ns, "web", "Normal", "SuccessfulRescale", "New size: 1; reason: All metrics below target")
	if d := time.Since(start); d < 4*time.Second {
		t.Errorf("scaled down after %v, inside the 4 s stabilization window", d)
	}
	if r := deploymentReplicas(t, ns, "web"); r != 1 {
		t.Errorf("spec.replicas %d, want 1", r)
	}
}

// TestHPA_MetricsAPIDown: the metrics API answers, then its server stops: ScalingActive goes
// from True ValidMetricFound to False FailedGetResourceMetric, with the Event.
func TestHPA_MetricsAPIDown(t *testing.T) {
	useHPAController(t)
	ns := Namespace(t)
	s := hpaMetricsAPI(t, ns)
	hpaDeployment(t, ns, "web", 2)
	for i := 0; i < 2; i++ {
		hpaPod(t, s, ns, fmt.Sprintf("web-%d", i), map[string]string{"app": "web"}, 50)
	}
	hpaCreate(t, ns, "web", "web", nil, 10, cpuMetric(50))
	hpaWaitCond(t, ns, "web", autoscalingv2.ScalingActive, corev1.ConditionTrue, "ValidMetricFound")
	if r := deploymentReplicas(t, ns, "web"); r != 2 {
		t.Errorf("spec.replicas %d at target utilization, want 2", r)
	}
	s.Close()
	h := hpaWaitCond(t, ns, "web", autoscalingv2.ScalingActive, corev1.ConditionFalse, "FailedGetResourceMetric")
	const prefix = "failed to get cpu utilization: unable to get metrics for resource cpu: unable to fetch metrics from resource metrics API: "
	c := hpaCond(h, autoscalingv2.ScalingActive)
	if !strings.HasPrefix(c.Message, "the HPA was unable to compute the replica count: "+prefix) {
		t.Errorf("ScalingActive message %q", c.Message)
	}
	t.Logf("ScalingActive: %s", c.Message)
	hpaWaitEvent(t, ns, "web", "Warning", "FailedGetResourceMetric", prefix)
}
