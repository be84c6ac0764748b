package e2e

// kcmd's deployment-controller (docs/deployment.md) on a real kube-apiserver, with no upstream
// kube-controller-manager running: kcmd runs the deployment and ReplicaSet controllers and the
// kubelet simulator (pods become Running and Ready on simulated Nodes). Ported from upstream
// test/integration/deployment (v1.37): TestNewDeployment (a new ReplicaSet with the
// pod-template-hash label, the revision annotations, the status), a rolling update to a new
// template (TestDeploymentRollingUpdate), Recreate, a paused Deployment
// (TestPausedDeployment) and revisionHistoryLimit cleanup (TestDeploymentHashCollision's and
// testRevisionHistoryLimit's history checks). The pod-template hash is checked against
// upstream's own controller.ComputeHash.

import (
	"context"
	"fmt"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/util/retry"
	"k8s.io/kubernetes/pkg/controller"
	"k8s.io/utils/ptr"
)

func dpStart(t *testing.T) {
	t.Helper()
	hksCleanupSimNodes(t)
	hksStartSim(t, "--controllers=deployment-controller,replicaset-controller", "--simulate-kubelet-nodes=2",
		"--kube-api-qps=200", "--kube-api-burst=400", "--v=4")
}

func dpNew(ns, name string, replicas int32) *appsv1.Deployment {
	labels := map[string]string{"app": name}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To(replicas),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "fake/image:1"}}},
			},
		},
	}
}

func dpCreate(t *testing.T, d *appsv1.Deployment) *appsv1.Deployment {
	t.Helper()
	out, err := env.Client.AppsV1().Deployments(d.Namespace).Create(context.Background(), d, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating deployment %s: %v", d.Name, err)
	}
	return out
}

func dpUpdate(t *testing.T, ns, name string, f func(d *appsv1.Deployment)) {
	t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		d, err := env.Client.AppsV1().Deployments(ns).Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		f(d)
		_, err = env.Client.AppsV1().Deployments(ns).Update(context.Background(), d, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		t.Fatalf("updating deployment %s: %v", name, err)
	}
}

func dpOwnedRS(t *testing.T, d *appsv1.Deployment) []appsv1.ReplicaSet {
	t.Helper()
	l, err := env.Client.AppsV1().ReplicaSets(d.Namespace).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var out []appsv1.ReplicaSet
	for _, rs := range l.Items {
		if ref := metav1.GetControllerOf(&rs); ref != nil && ref.UID == d.UID {
			out = append(out, rs)
		}
	}
	return out
}

// dpWaitComplete waits for upstream's DeploymentComplete: every replica updated and available,
// observedGeneration caught up, and returns the Deployment.
func dpWaitComplete(t *testing.T, ns, name string) *appsv1.Deployment {
	t.Helper()
	var d *appsv1.Deployment
	Eventually(t, 90*time.Second, ns+"/"+name+" complete", func() (bool, string) {
		var err error
		d, err = env.Client.AppsV1().Deployments(ns).Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		s := d.Status
		want := *d.Spec.Replicas
		ok := s.ObservedGeneration >= d.Generation && s.UpdatedReplicas == want && s.Replicas == want &&
			s.AvailableReplicas == want
		return ok, fmt.Sprintf("status %+v generation %d", s, d.Generation)
	})
	return d
}

func dpCond(d *appsv1.Deployment, typ appsv1.DeploymentConditionType) *appsv1.DeploymentCondition {
	for i := range d.Status.Conditions {
		if d.Status.Conditions[i].Type == typ {
			return &d.Status.Conditions[i]
		}
	}
	return nil
}

// dpNewRS: the ReplicaSet whose hash label is upstream's hash of the Deployment's template.
func dpNewRS(t *testing.T, d *appsv1.Deployment) *appsv1.ReplicaSet {
	t.Helper()
	hash := controller.ComputeHash(&d.Spec.Template, d.Status.CollisionCount)
	for _, rs := range dpOwnedRS(t, d) {
		if rs.Labels[appsv1.DefaultDeploymentUniqueLabelKey] == hash {
			return &rs
		}
	}
	return nil
}

func TestDeployment_NewDeployment(t *testing.T) {
	dpStart(t)
	ns := Namespace(t)
	d := dpCreate(t, dpNew(ns, "test-new-deployment", 3))
	d = dpWaitComplete(t, ns, d.Name)
	rs := dpNewRS(t, d)
	if rs == nil {
		t.Fatalf("no ReplicaSet with upstream's hash %s; owned: %v", controller.ComputeHash(&d.Spec.Template, nil), dpOwnedRS(t, d))
	}
	hash := rs.Labels[appsv1.DefaultDeploymentUniqueLabelKey]
	if rs.Name != d.Name+"-"+hash {
		t.Errorf("ReplicaSet name %s, want %s-%s", rs.Name, d.Name, hash)
	}
	if rs.Spec.Selector.MatchLabels[appsv1.DefaultDeploymentUniqueLabelKey] != hash ||
		rs.Spec.Template.Labels[appsv1.DefaultDeploymentUniqueLabelKey] != hash {
		t.Errorf("hash label missing from the selector or template: %+v %+v", rs.Spec.Selector, rs.Spec.Template.Labels)
	}
	for k, want := range map[string]string{"deployment.kubernetes.io/revision": "1",
		"deployment.kubernetes.io/desired-replicas": "3", "deployment.kubernetes.io/max-replicas": "4"} {
		if rs.Annotations[k] != want {
			t.Errorf("ReplicaSet annotation %s=%q, want %q", k, rs.Annotations[k], want)
		}
	}
	if d.Annotations["deployment.kubernetes.io/revision"] != "1" {
		t.Errorf("Deployment revision annotation %q, want 1", d.Annotations["deployment.kubernetes.io/revision"])
	}
	Eventually(t, 30*time.Second, "conditions", func() (bool, string) {
		d, _ = env.Client.AppsV1().Deployments(ns).Get(context.Background(), d.Name, metav1.GetOptions{})
		a, p := dpCond(d, appsv1.DeploymentAvailable), dpCond(d, appsv1.DeploymentProgressing)
		ok := a != nil && a.Status == corev1.ConditionTrue && a.Reason == "MinimumReplicasAvailable" &&
			p != nil && p.Status == corev1.ConditionTrue && p.Reason == "NewReplicaSetAvailable" &&
			p.Message == fmt.Sprintf("ReplicaSet %q has successfully progressed.", rs.Name)
		return ok, fmt.Sprintf("%+v", d.Status.Conditions)
	})
	Eventually(t, 30*time.Second, "the ScalingReplicaSet event", func() (bool, string) {
		evs, err := env.Client.CoreV1().Events(ns).List(context.Background(), metav1.ListOptions{})
		if err != nil {
			return false, err.Error()
		}
		want := fmt.Sprintf("Scaled up replica set %s from 0 to 3", rs.Name)
		for _, e := range evs.Items {
			if e.Reason == "ScalingReplicaSet" && e.Message == want && e.InvolvedObject.UID == d.UID {
				return true, ""
			}
		}
		return false, fmt.Sprintf("no %q among %d events", want, len(evs.Items))
	})
}

func dpRollout(t *testing.T, strategy appsv1.DeploymentStrategy, name string) {
	dpStart(t)
	ns := Namespace(t)
	d0 := dpNew(ns, name, 3)
	d0.Spec.Strategy = strategy
	d := dpCreate(t, d0)
	d = dpWaitComplete(t, ns, d.Name)
	old := dpNewRS(t, d)
	if old == nil {
		t.Fatal("no first ReplicaSet")
	}
	dpUpdate(t, ns, d.Name, func(x *appsv1.Deployment) { x.Spec.Template.Spec.Containers[0].Image = "fake/image:2" })
	d = dpWaitComplete(t, ns, d.Name)
	var nrs *appsv1.ReplicaSet
	Eventually(t, 60*time.Second, "old ReplicaSet scaled to 0, new at 3", func() (bool, string) {
		d, _ = env.Client.AppsV1().Deployments(ns).Get(context.Background(), d.Name, metav1.GetOptions{})
		nrs = dpNewRS(t, d)
		o, err := env.Client.AppsV1().ReplicaSets(ns).Get(context.Background(), old.Name, metav1.GetOptions{})
		if err != nil || nrs == nil {
			return false, fmt.Sprintf("%v %v", err, nrs)
		}
		return *o.Spec.Replicas == 0 && *nrs.Spec.Replicas == 3 && nrs.Annotations["deployment.kubernetes.io/revision"] == "2",
			fmt.Sprintf("old %d new %d rev %s", *o.Spec.Replicas, *nrs.Spec.Replicas, nrs.Annotations["deployment.kubernetes.io/revision"])
	})
	if d.Annotations["deployment.kubernetes.io/revision"] != "2" {
		t.Errorf("Deployment revision %q, want 2", d.Annotations["deployment.kubernetes.io/revision"])
	}
	Eventually(t, 30*time.Second, "the old ReplicaSet's pods gone", func() (bool, string) {
		owned, _ := activePods(t, ns, "app="+name, old.UID)
		return owned == 0, fmt.Sprintf("%d pods", owned)
	})
}

func TestDeployment_RollingUpdate(t *testing.T) {
	dpRollout(t, appsv1.DeploymentStrategy{Type: appsv1.RollingUpdateDeploymentStrategyType,
		RollingUpdate: &appsv1.RollingUpdateDeployment{MaxSurge: ptr.To(intstr.FromInt32(1)),
			MaxUnavailable: ptr.To(intstr.FromInt32(0))}}, "test-rolling-update")
}

func TestDeployment_Recreate(t *testing.T) {
	dpRollout(t, appsv1.DeploymentStrategy{Type: appsv1.RecreateDeploymentStrategyType}, "test-recreate")
}

func TestDeployment_Paused(t *testing.T) {
	dpStart(t)
	ns := Namespace(t)
	d0 := dpNew(ns, "test-paused-deployment", 2)
	d0.Spec.Paused = true
	d := dpCreate(t, d0)
	Eventually(t, 30*time.Second, "observedGeneration and DeploymentPaused", func() (bool, string) {
		d, _ = env.Client.AppsV1().Deployments(ns).Get(context.Background(), d.Name, metav1.GetOptions{})
		p := dpCond(d, appsv1.DeploymentProgressing)
		return d.Status.ObservedGeneration == d.Generation && p != nil && p.Reason == "DeploymentPaused",
			fmt.Sprintf("%+v", d.Status)
	})
	if rs := dpOwnedRS(t, d); len(rs) != 0 {
		t.Fatalf("a paused new Deployment got ReplicaSets: %d", len(rs))
	}
	dpUpdate(t, ns, d.Name, func(x *appsv1.Deployment) { x.Spec.Paused = false })
	d = dpWaitComplete(t, ns, d.Name)
	if dpNewRS(t, d) == nil {
		t.Fatal("no new ReplicaSet after resuming")
	}
	// paused again, scaled: the new ReplicaSet follows, no new template is rolled out
	dpUpdate(t, ns, d.Name, func(x *appsv1.Deployment) {
		x.Spec.Paused = true
		x.Spec.Replicas = ptr.To[int32](4)
		x.Spec.Template.Spec.Containers[0].Image = "fake/image:2"
	})
	Eventually(t, 60*time.Second, "scaled while paused", func() (bool, string) {
		rs := dpOwnedRS(t, d)
		if len(rs) != 1 {
			return false, fmt.Sprintf("%d ReplicaSets", len(rs))
		}
		return *rs[0].Spec.Replicas == 4, fmt.Sprintf("replicas %d", *rs[0].Spec.Replicas)
	})
}

func TestDeployment_RevisionHistoryLimit(t *testing.T) {
	dpStart(t)
	ns := Namespace(t)
	d0 := dpNew(ns, "test-history", 1)
	d0.Spec.RevisionHistoryLimit = ptr.To[int32](1)
	d := dpCreate(t, d0)
	dpWaitComplete(t, ns, d.Name)
	for i := 2; i <= 4; i++ {
		dpUpdate(t, ns, d.Name, func(x *appsv1.Deployment) {
			x.Spec.Template.Spec.Containers[0].Image = fmt.Sprintf("fake/image:%d", i)
		})
		dpWaitComplete(t, ns, d.Name)
	}
	Eventually(t, 60*time.Second, "one old ReplicaSet kept", func() (bool, string) {
		rs := dpOwnedRS(t, d)
		return len(rs) == 2, fmt.Sprintf("%d ReplicaSets", len(rs))
	})
}

// TestDeployment_AdoptsOrphan (kcmd's addition; upstream's ClaimReplicaSets unit cases): an
// orphan ReplicaSet whose labels match the selector and whose template equals the
// Deployment's is adopted (controllerRef added, its other owner reference kept) and used as
// the new ReplicaSet instead of creating one.
func TestDeployment_AdoptsOrphan(t *testing.T) {
	dpStart(t)
	ns := Namespace(t)
	ctx := context.Background()
	d0 := dpNew(ns, "test-adopt", 2)
	cm, err := env.Client.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "other-owner"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	tmpl := *d0.Spec.Template.DeepCopy()
	tmpl.Labels = map[string]string{"app": d0.Name, appsv1.DefaultDeploymentUniqueLabelKey: "orphan"}
	rs := &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "test-adopt-orphan", Labels: tmpl.Labels,
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: cm.Name, UID: cm.UID}}},
		Spec: appsv1.ReplicaSetSpec{Replicas: ptr.To[int32](2),
			Selector: &metav1.LabelSelector{MatchLabels: tmpl.Labels}, Template: tmpl},
	}
	if rs, err = env.Client.AppsV1().ReplicaSets(ns).Create(ctx, rs, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	d := dpCreate(t, d0)
	dpWaitComplete(t, ns, d.Name)
	owned := dpOwnedRS(t, d)
	if len(owned) != 1 || owned[0].UID != rs.UID {
		t.Fatalf("owned ReplicaSets %d, want only the adopted orphan", len(owned))
	}
	if len(owned[0].OwnerReferences) != 2 {
		t.Errorf("owner references %+v, want the ConfigMap's and the Deployment's", owned[0].OwnerReferences)
	}
	if owned[0].Annotations["deployment.kubernetes.io/revision"] != "1" {
		t.Errorf("adopted ReplicaSet revision %q, want 1", owned[0].Annotations["deployment.kubernetes.io/revision"])
	}
}
