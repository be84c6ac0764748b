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
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
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
			"--horizontal-pod-autoscaler-sync-period=2s", "--v=4")
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
