package e2e

// The deployment controller under --use-service-account-credentials (kubeadm's setup): its
// account's bootstrap role may update deployments and deployments/status but not patch
// deployments. Moving the Deployment's revision annotation onto an existing ReplicaSet (a
// template changed back) must go through the status update, as upstream's getNewReplicaSet
// does; a PATCH there was refused with 403 and the rollout stayed half done (found by upstream's
// "[sig-apps] Deployment should run the lifecycle of a Deployment" under `make conformance`).

import (
	"context"
	"fmt"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestDeployment_RevisionAnnotationWithServiceAccountCredentials(t *testing.T) {
	hksCleanupSimNodes(t)
	hksStartSim(t, "--controllers=deployment-controller,replicaset-controller", "--simulate-kubelet-nodes=2",
		"--use-service-account-credentials", "--v=2")
	ns := Namespace(t)
	const name = "sacreds"
	dpCreate(t, dpNew(ns, name, 2))
	dpWaitComplete(t, ns, name)
	setImage := func(img string) {
		dpUpdate(t, ns, name, func(d *appsv1.Deployment) { d.Spec.Template.Spec.Containers[0].Image = img })
	}
	// revision 2 on a new ReplicaSet, then back to the first template: its ReplicaSet becomes
	// revision 3 and so must the Deployment, with the image-2 ReplicaSet scaled to 0.
	setImage("fake/image:2")
	dpWaitComplete(t, ns, name)
	setImage("fake/image:1")
	Eventually(t, 90*time.Second, "rollout back to the first template", func() (bool, string) {
		d, err := env.Client.AppsV1().Deployments(ns).Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		s := d.Status
		rev := d.Annotations["deployment.kubernetes.io/revision"]
		var rsState string
		old := false
		for _, rs := range dpOwnedRS(t, d) {
			rsState += fmt.Sprintf(" %s(image %s, rev %s, replicas %d)", rs.Name,
				rs.Spec.Template.Spec.Containers[0].Image, rs.Annotations["deployment.kubernetes.io/revision"], *rs.Spec.Replicas)
			if rs.Spec.Template.Spec.Containers[0].Image == "fake/image:2" && *rs.Spec.Replicas != 0 {
				old = true
			}
		}
		ok := rev == "3" && !old && s.ObservedGeneration >= d.Generation && s.UpdatedReplicas == 2 &&
			s.Replicas == 2 && s.AvailableReplicas == 2
		return ok, fmt.Sprintf("revision %q, status %+v, ReplicaSets%s", rev, s, rsState)
	})
}
