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

// dpEvent waits for an Event of the Deployment with this type, reason and message.
func dpEvent(t *testing.T, d *appsv1.Deployment, typ, reason, msg string) {
	t.Helper()
	Eventually(t, 30*time.Second, "the "+reason+" event", func() (bool, string) {
		evs, err := env.Client.CoreV1().Events(d.Namespace).List(context.Background(), metav1.ListOptions{})
		if err != nil {
			return false, err.Error()
		}
		var seen []string
		for _, e := range evs.Items {
			if e.InvolvedObject.UID != d.UID {
				continue
			}
			if e.Type == typ && e.Reason == reason && e.Message == msg {
				return true, ""
			}
			seen = append(seen, e.Type+"/"+e.Reason+": "+e.Message)
		}
		return false, fmt.Sprintf("no %s %s %q among %q", typ, reason, msg, seen)
	})
}

func dpUpdateRS(t *testing.T, ns, name string, f func(rs *appsv1.ReplicaSet)) *appsv1.ReplicaSet {
	t.Helper()
	var out *appsv1.ReplicaSet
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		rs, err := env.Client.AppsV1().ReplicaSets(ns).Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		f(rs)
		out, err = env.Client.AppsV1().ReplicaSets(ns).Update(context.Background(), rs, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		t.Fatalf("updating replica set %s: %v", name, err)
	}
	return out
}

// dpWaitRevision waits for the Deployment's revision annotation and its new ReplicaSet (by
// upstream's hash) to carry rev and the image (upstream's waitForDeploymentRevisionAndImage).
func dpWaitRevision(t *testing.T, ns, name, rev, image string) (*appsv1.Deployment, *appsv1.ReplicaSet) {
	t.Helper()
	var d *appsv1.Deployment
	var rs *appsv1.ReplicaSet
	Eventually(t, 60*time.Second, "revision "+rev+" with "+image, func() (bool, string) {
		var err error
		if d, err = env.Client.AppsV1().Deployments(ns).Get(context.Background(), name, metav1.GetOptions{}); err != nil {
			return false, err.Error()
		}
		if rs = dpNewRS(t, d); rs == nil {
			return false, "no new ReplicaSet"
		}
		got := fmt.Sprintf("deployment %s/%s rs %s %s/%s", d.Annotations["deployment.kubernetes.io/revision"],
			d.Spec.Template.Spec.Containers[0].Image, rs.Name, rs.Annotations["deployment.kubernetes.io/revision"],
			rs.Spec.Template.Spec.Containers[0].Image)
		return d.Annotations["deployment.kubernetes.io/revision"] == rev &&
			rs.Annotations["deployment.kubernetes.io/revision"] == rev &&
			d.Spec.Template.Spec.Containers[0].Image == image && rs.Spec.Template.Spec.Containers[0].Image == image, got
	})
	return d, rs
}

// TestDeployment_OrphaningAndAdoptionWhenLabelsChange (upstream's integration
// TestReplicaSetOrphaningAndAdoptionWhenLabelsChange): a ReplicaSet whose labels stop matching
// is released (its controller reference removed), the Deployment creates another one (under a
// new name: collisionCount), and once its labels match again it is adopted back.
func TestDeployment_OrphaningAndAdoptionWhenLabelsChange(t *testing.T) {
	dpStart(t)
	ns := Namespace(t)
	d := dpCreate(t, dpNew(ns, "deployment", 1))
	d = dpWaitComplete(t, ns, d.Name)
	rs := dpNewRS(t, d)
	if rs == nil {
		t.Fatal("no new ReplicaSet")
	}
	other := metav1.OwnerReference{APIVersion: "v1", Kind: "ConfigMap", Name: "unrelated", UID: "0000-unrelated"}
	rs = dpUpdateRS(t, ns, rs.Name, func(x *appsv1.ReplicaSet) {
		x.Labels = map[string]string{"new-name": "new-test"}
		x.OwnerReferences = append(x.OwnerReferences, other)
	})
	Eventually(t, 30*time.Second, "the controllerRef removed", func() (bool, string) {
		x, err := env.Client.AppsV1().ReplicaSets(ns).Get(context.Background(), rs.Name, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		rs = x
		return metav1.GetControllerOf(x) == nil, fmt.Sprintf("%+v", x.OwnerReferences)
	})
	if len(rs.OwnerReferences) != 1 || rs.OwnerReferences[0].UID != other.UID {
		t.Errorf("owner references after release %+v, want only the unrelated one", rs.OwnerReferences)
	}
	var nrs *appsv1.ReplicaSet
	Eventually(t, 30*time.Second, "another new ReplicaSet", func() (bool, string) {
		d, _ = env.Client.AppsV1().Deployments(ns).Get(context.Background(), d.Name, metav1.GetOptions{})
		nrs = dpNewRS(t, d)
		return nrs != nil && nrs.UID != rs.UID, fmt.Sprintf("collisionCount %v", d.Status.CollisionCount)
	})
	if d.Status.CollisionCount == nil || *d.Status.CollisionCount != 1 {
		t.Errorf("collisionCount %v, want 1 (the released ReplicaSet holds the first name)", d.Status.CollisionCount)
	}
	dpUpdateRS(t, ns, rs.Name, func(x *appsv1.ReplicaSet) { x.Labels = map[string]string{"app": d.Name} })
	Eventually(t, 30*time.Second, "adopted back", func() (bool, string) {
		x, err := env.Client.AppsV1().ReplicaSets(ns).Get(context.Background(), rs.Name, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		ref := metav1.GetControllerOf(x)
		return ref != nil && ref.UID == d.UID && len(x.OwnerReferences) == 2, fmt.Sprintf("%+v", x.OwnerReferences)
	})
}

// TestDeployment_HashCollision (upstream's integration TestDeploymentHashCollision): the new
// ReplicaSet's template is changed behind the controller's back; the name the Deployment's
// template hashes to is then taken by a ReplicaSet with another template, so collisionCount is
// bumped and a ReplicaSet of revision 2 created under the new hash.
func TestDeployment_HashCollision(t *testing.T) {
	dpStart(t)
	ns := Namespace(t)
	d := dpCreate(t, dpNew(ns, "test-hash-collision-deployment", 1))
	d, rs := dpWaitRevision(t, ns, d.Name, "1", "fake/image:1")
	dpUpdateRS(t, ns, rs.Name, func(x *appsv1.ReplicaSet) { x.Spec.Template.Spec.TerminationGracePeriodSeconds = ptr.To[int64](5) })
	Eventually(t, 30*time.Second, "collisionCount 1", func() (bool, string) {
		d, _ = env.Client.AppsV1().Deployments(ns).Get(context.Background(), d.Name, metav1.GetOptions{})
		return d.Status.CollisionCount != nil && *d.Status.CollisionCount == 1, fmt.Sprintf("%v", d.Status.CollisionCount)
	})
	_, nrs := dpWaitRevision(t, ns, d.Name, "2", "fake/image:1")
	if want := d.Name + "-" + controller.ComputeHash(&d.Spec.Template, ptr.To[int32](1)); nrs.Name != want {
		t.Errorf("new ReplicaSet %s, want %s", nrs.Name, want)
	}
}

// TestDeployment_Rollback: the deprecated rollback annotation (upstream's rollback.go; the
// apps/v1 form of extensions/v1beta1's spec.rollbackTo): to revision 1 (the template and the
// annotations of that ReplicaSet come back, the ReplicaSet is re-used as revision 3 with
// revision-history "1", RollbackDone), to 0 (the last revision), to a revision that does not
// exist (RollbackRevisionNotFound) and to the current one (RollbackTemplateUnchanged); each
// time the annotation is cleared. Also SetNewReplicaSetAnnotations' copy onto an existing
// ReplicaSet: an annotation added to the Deployment alone appears on its new ReplicaSet.
func TestDeployment_Rollback(t *testing.T) {
	dpStart(t)
	ns := Namespace(t)
	const rb = "deprecated.deployment.rollback.to"
	d0 := dpNew(ns, "test-rollback", 2)
	d0.Annotations = map[string]string{"note": "one"}
	d := dpCreate(t, d0)
	_, rs1 := dpWaitRevision(t, ns, d.Name, "1", "fake/image:1")
	if rs1.Annotations["note"] != "one" {
		t.Errorf("new ReplicaSet note %q, want one", rs1.Annotations["note"])
	}
	dpWaitComplete(t, ns, d.Name)
	dpUpdate(t, ns, d.Name, func(x *appsv1.Deployment) {
		x.Spec.Template.Spec.Containers[0].Image = "fake/image:2"
		x.Annotations["note"] = "two"
	})
	_, rs2 := dpWaitRevision(t, ns, d.Name, "2", "fake/image:2")
	dpWaitComplete(t, ns, d.Name)
	// an annotation of the Deployment alone is copied onto its existing new ReplicaSet
	dpUpdate(t, ns, d.Name, func(x *appsv1.Deployment) { x.Annotations["extra"] = "x" })
	Eventually(t, 30*time.Second, "the annotation copied", func() (bool, string) {
		x, _ := env.Client.AppsV1().ReplicaSets(ns).Get(context.Background(), rs2.Name, metav1.GetOptions{})
		return x.Annotations["extra"] == "x" && x.Annotations["note"] == "two", fmt.Sprintf("%v", x.Annotations)
	})

	dpUpdate(t, ns, d.Name, func(x *appsv1.Deployment) { x.Annotations[rb] = "1" })
	d, rs := dpWaitRevision(t, ns, d.Name, "3", "fake/image:1")
	if rs.UID != rs1.UID {
		t.Errorf("rollback to 1 made ReplicaSet %s, want %s re-used", rs.Name, rs1.Name)
	}
	if h := rs.Annotations["deployment.kubernetes.io/revision-history"]; h != "1" {
		t.Errorf("revision-history %q, want 1", h)
	}
	if _, ok := d.Annotations[rb]; ok || d.Annotations["note"] != "one" || d.Annotations["extra"] != "" {
		t.Errorf("Deployment annotations after the rollback %v: want note=one, no extra, no %s", d.Annotations, rb)
	}
	dpEvent(t, d, "Normal", "RollbackDone", `Rolled back deployment "test-rollback" to revision 1`)
	dpWaitComplete(t, ns, d.Name)

	// 0: the last revision (2)
	dpUpdate(t, ns, d.Name, func(x *appsv1.Deployment) { x.Annotations[rb] = "0" })
	d, rs = dpWaitRevision(t, ns, d.Name, "4", "fake/image:2")
	if rs.UID != rs2.UID || rs.Annotations["deployment.kubernetes.io/revision-history"] != "2" {
		t.Errorf("rollback to 0: ReplicaSet %s history %q, want %s with history 2", rs.Name,
			rs.Annotations["deployment.kubernetes.io/revision-history"], rs2.Name)
	}
	dpEvent(t, d, "Normal", "RollbackDone", `Rolled back deployment "test-rollback" to revision 2`)

	// a revision that does not exist; then the current one
	dpUpdate(t, ns, d.Name, func(x *appsv1.Deployment) { x.Annotations[rb] = "99" })
	dpEvent(t, d, "Warning", "RollbackRevisionNotFound", "Unable to find the revision to rollback to.")
	dpUpdate(t, ns, d.Name, func(x *appsv1.Deployment) { x.Annotations[rb] = "4" })
	dpEvent(t, d, "Warning", "RollbackTemplateUnchanged",
		`The rollback revision contains the same template as current deployment "test-rollback"`)
	Eventually(t, 30*time.Second, "the annotation cleared", func() (bool, string) {
		d, _ = env.Client.AppsV1().Deployments(ns).Get(context.Background(), d.Name, metav1.GetOptions{})
		_, ok := d.Annotations[rb]
		return !ok, fmt.Sprintf("%v", d.Annotations)
	})
	if d.Annotations["deployment.kubernetes.io/revision"] != "4" || d.Spec.Template.Spec.Containers[0].Image != "fake/image:2" {
		t.Errorf("after the no-op rollbacks: revision %q image %s, want 4 and fake/image:2",
			d.Annotations["deployment.kubernetes.io/revision"], d.Spec.Template.Spec.Containers[0].Image)
	}
}

// dpNowhere: a template whose pods are bound to a node no kubelet (and no simulator) serves,
// so they stay Pending and unready until the test marks them Ready.
func dpNowhere(d *appsv1.Deployment) *appsv1.Deployment {
	d.Spec.Template.Spec.NodeName = "kcmd-e2e-no-such-node"
	return d
}

// TestDeployment_FailedDeployment (upstream's integration TestFailedDeployment): pods that never
// become Ready make the Deployment exceed its progress deadline (Progressing False
// ProgressDeadlineExceeded with upstream's message); marked Ready, it completes
// (NewReplicaSetAvailable).
func TestDeployment_FailedDeployment(t *testing.T) {
	dpStart(t)
	ns := Namespace(t)
	d0 := dpNowhere(dpNew(ns, "progress-check", 1))
	d0.Spec.ProgressDeadlineSeconds = ptr.To[int32](3)
	d := dpCreate(t, d0)
	var rs *appsv1.ReplicaSet
	Eventually(t, 30*time.Second, "ProgressDeadlineExceeded", func() (bool, string) {
		d, _ = env.Client.AppsV1().Deployments(ns).Get(context.Background(), d.Name, metav1.GetOptions{})
		rs = dpNewRS(t, d)
		p := dpCond(d, appsv1.DeploymentProgressing)
		return rs != nil && d.Status.UpdatedReplicas >= 1 && p != nil && p.Status == corev1.ConditionFalse &&
			p.Reason == "ProgressDeadlineExceeded" &&
			p.Message == fmt.Sprintf("ReplicaSet %q has timed out progressing.", rs.Name), fmt.Sprintf("%+v", d.Status)
	})
	pods, err := env.Client.CoreV1().Pods(ns).List(context.Background(), metav1.ListOptions{LabelSelector: "app=" + d.Name})
	if err != nil || len(pods.Items) != 1 {
		t.Fatalf("pods: %v %d", err, len(pods.Items))
	}
	setReadyCondition(t, ns, pods.Items[0].Name, corev1.ConditionTrue, time.Now())
	Eventually(t, 30*time.Second, "NewReplicaSetAvailable", func() (bool, string) {
		d, _ = env.Client.AppsV1().Deployments(ns).Get(context.Background(), d.Name, metav1.GetOptions{})
		p := dpCond(d, appsv1.DeploymentProgressing)
		return p != nil && p.Status == corev1.ConditionTrue && p.Reason == "NewReplicaSetAvailable", fmt.Sprintf("%+v", d.Status)
	})
}

// TestDeployment_ProportionalScalingMidRollout (upstream's TestScale cases and the integration
// TestScaledRolloutDeployment's idea): a rollout stuck with unready pods (maxSurge 3,
// maxUnavailable 2, 10 replicas: old 8, new 5), scaled to 20: both ReplicaSets grow in
// proportion to their size (GetReplicaSetProportion against max-replicas 13: old 8 -> 14,
// new 5 -> 9), and the annotations follow.
func TestDeployment_ProportionalScalingMidRollout(t *testing.T) {
	dpStart(t)
	ns := Namespace(t)
	d0 := dpNowhere(dpNew(ns, "test-proportional", 10))
	d0.Spec.Strategy = appsv1.DeploymentStrategy{Type: appsv1.RollingUpdateDeploymentStrategyType,
		RollingUpdate: &appsv1.RollingUpdateDeployment{MaxSurge: ptr.To(intstr.FromInt32(3)),
			MaxUnavailable: ptr.To(intstr.FromInt32(2))}}
	d := dpCreate(t, d0)
	d, old := dpWaitRevision(t, ns, d.Name, "1", "fake/image:1")
	dpUpdate(t, ns, d.Name, func(x *appsv1.Deployment) { x.Spec.Template.Spec.Containers[0].Image = "fake/image:2" })
	_, nrs := dpWaitRevision(t, ns, d.Name, "2", "fake/image:2")
	sizes := func(wantOld, wantNew int32, desired string) {
		t.Helper()
		Eventually(t, 30*time.Second, fmt.Sprintf("old %d new %d", wantOld, wantNew), func() (bool, string) {
			o, err1 := env.Client.AppsV1().ReplicaSets(ns).Get(context.Background(), old.Name, metav1.GetOptions{})
			n, err2 := env.Client.AppsV1().ReplicaSets(ns).Get(context.Background(), nrs.Name, metav1.GetOptions{})
			if err1 != nil || err2 != nil {
				return false, fmt.Sprintf("%v %v", err1, err2)
			}
			return *o.Spec.Replicas == wantOld && *n.Spec.Replicas == wantNew &&
					o.Annotations["deployment.kubernetes.io/desired-replicas"] == desired &&
					n.Annotations["deployment.kubernetes.io/desired-replicas"] == desired,
				fmt.Sprintf("old %d (%v) new %d (%v)", *o.Spec.Replicas, o.Annotations, *n.Spec.Replicas, n.Annotations)
		})
	}
	sizes(8, 5, "10")
	time.Sleep(2 * time.Second) // stable: no further step while nothing is available
	sizes(8, 5, "10")
	dpUpdate(t, ns, d.Name, func(x *appsv1.Deployment) { x.Spec.Replicas = ptr.To[int32](20) })
	sizes(14, 9, "20")
}
