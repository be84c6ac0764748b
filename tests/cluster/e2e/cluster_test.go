package e2e

import (
	"context"
	"fmt"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"kcmd.local/tests/cluster/harness"
)

func demoReplicaSet(ns, name string, replicas int32) *appsv1.ReplicaSet {
	labels := map[string]string{"app": name}
	return &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: appsv1.ReplicaSetSpec{
			Replicas: ptr.To(replicas),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "registry.invalid/pause:1"}}},
			},
		},
	}
}

// TestCluster_UpstreamReplicaSetSmoke checks the harness end to end: a real apiserver accepts a
// ReplicaSet and upstream kube-controller-manager (replicaset controller only) creates its pods
// with a controller owner reference, then reports them in status.
func TestCluster_UpstreamReplicaSetSmoke(t *testing.T) {
	ctx := context.Background()
	if err := env.Cluster.StartKCM(ctx, harness.KCMOptions{Controllers: "replicaset-controller"}); err != nil {
		t.Fatal(err)
	}
	defer env.Cluster.StopKCM()
	ns := Namespace(t)
	rs, err := env.Client.AppsV1().ReplicaSets(ns).Create(ctx, demoReplicaSet(ns, "smoke", 3), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	Eventually(t, 60*time.Second, "3 pods owned by the ReplicaSet", func() (bool, string) {
		pods, err := env.Client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "app=smoke"})
		if err != nil {
			return false, err.Error()
		}
		owned := 0
		for _, p := range pods.Items {
			if ref := metav1.GetControllerOf(&p); ref != nil && ref.UID == rs.UID {
				owned++
			}
		}
		return owned == 3, fmt.Sprintf("%d pods, %d owned", len(pods.Items), owned)
	})
	Eventually(t, 30*time.Second, "status.replicas == 3", func() (bool, string) {
		got, err := env.Client.AppsV1().ReplicaSets(ns).Get(ctx, "smoke", metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		return got.Status.Replicas == 3, fmt.Sprintf("status.replicas=%d", got.Status.Replicas)
	})
}

// TestCluster_Identities checks that every identity in the token file authenticates and that the
// client-certificate kubeconfig works.
func TestCluster_Identities(t *testing.T) {
	for _, name := range []string{"kubeconfig-cert", "kubeconfig-kcm", "kubeconfig-kcmd"} {
		t.Run(name, func(t *testing.T) {
			cs := clientFromKubeconfig(t, env.Cluster.Dir+"/"+name)
			if _, err := cs.Discovery().ServerVersion(); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
		})
	}
}
