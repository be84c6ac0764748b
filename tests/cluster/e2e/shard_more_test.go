// SPDX-License-Identifier: Apache-2.0

package e2e

// Six more namespace-sharded controllers in TestShard_ChurnKillRestart (issue 23, docs/sharding.md
// "How far each verdict is checked"): in every namespace of the churn a Deployment, a
// ReplicationController, a Service over the Deployment's pods, a ResourceQuota and a
// PodDisruptionBudget over the StatefulSet's pods. They are churned with the rest through the
// kill and the restart, and at the end:
//   - each Deployment: one ReplicaSet (its template never changes), at the Deployment's size, with
//     exactly that many live pods, and the Deployment's status.replicas and observedGeneration;
//   - each ReplicationController: exactly its size of live pods, status.replicas,
//     observedGeneration, no over-creation (the pods ever seen against its positive steps);
//   - each Service: an EndpointSlice of the endpointslice controller and an Endpoints object;
//   - each ResourceQuota: status.used.pods equal to the namespace's live non-terminal pods;
//   - each PodDisruptionBudget: observedGeneration and expectedPods equal to the StatefulSet's
//     size (minAvailable an integer: the matched pods);
// and the audit oracle (shardAuditCheck) must have seen writes of each of their resources, every
// one inside the writer's term of the namespace's range.

import (
	"context"
	"fmt"
	"math/rand"
	"sort"
	"sync"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
)

// the resources whose writes the audit oracle must have seen for these controllers
var shardMoreResources = []string{"deployments", "replicationcontrollers", "endpointslices", "endpoints",
	"resourcequotas", "poddisruptionbudgets"}

const shardQuotaPods = 1000

type shardMore struct {
	mu  sync.Mutex
	dep map[string]int32            // namespace -> Deployment "dep"'s size
	rc  map[string]map[string]int32 // namespace -> "rc" -> size (shardBook.record's shape)
	nss []string
}

func newShardMore() *shardMore {
	return &shardMore{dep: map[string]int32{}, rc: map[string]map[string]int32{}}
}

func (m *shardMore) create(ctx context.Context, b *shardBook, ns string, i int) error {
	dl := map[string]string{"app": "dep"}
	tmpl := func(l map[string]string) corev1.PodTemplateSpec {
		return corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: l},
			Spec: corev1.PodSpec{Containers: shardPodSpec().Containers}}
	}
	nd, nrc := int32(1+i%3), int32(1+(i+1)%2)
	if err := chaosRetry(func() error {
		_, err := env.Client.AppsV1().Deployments(ns).Create(ctx, &appsv1.Deployment{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "dep"},
			Spec: appsv1.DeploymentSpec{Replicas: ptr.To(nd), Selector: &metav1.LabelSelector{MatchLabels: dl},
				Template: tmpl(dl)}}, metav1.CreateOptions{})
		return err
	}); err != nil {
		return err
	}
	m.mu.Lock()
	m.dep[ns] = nd
	m.nss = append(m.nss, ns)
	m.mu.Unlock()
	rl := map[string]string{"app": "rc"}
	var rcUID types.UID
	if err := chaosRetry(func() error {
		rc, err := env.Client.CoreV1().ReplicationControllers(ns).Create(ctx, &corev1.ReplicationController{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "rc"},
			Spec: corev1.ReplicationControllerSpec{Replicas: ptr.To(nrc), Selector: rl,
				Template: ptr.To(tmpl(rl))}}, metav1.CreateOptions{})
		if err == nil {
			rcUID = rc.UID
		}
		return err
	}); err != nil {
		return err
	}
	b.record(m.rc, ns, "rc", rcUID, nrc)
	if err := chaosRetry(func() error {
		_, err := env.Client.CoreV1().Services(ns).Create(ctx, &corev1.Service{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "svc"},
			Spec: corev1.ServiceSpec{Selector: dl,
				Ports: []corev1.ServicePort{{Name: "http", Port: 80, TargetPort: intstr.FromInt32(8080)}}}},
			metav1.CreateOptions{})
		return err
	}); err != nil {
		return err
	}
	if err := chaosRetry(func() error {
		_, err := env.Client.CoreV1().ResourceQuotas(ns).Create(ctx, &corev1.ResourceQuota{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "q"},
			Spec: corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{
				corev1.ResourcePods: *resource.NewQuantity(shardQuotaPods, resource.DecimalSI)}}},
			metav1.CreateOptions{})
		return err
	}); err != nil {
		return err
	}
	return chaosRetry(func() error {
		_, err := env.Client.PolicyV1().PodDisruptionBudgets(ns).Create(ctx, &policyv1.PodDisruptionBudget{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "pdb"},
			Spec: policyv1.PodDisruptionBudgetSpec{MinAvailable: ptr.To(intstr.FromInt32(0)),
				Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"sts": "sts"}}}},
			metav1.CreateOptions{})
		return err
	})
}

// churn scales every Deployment to a random size in [0, 3] and every ReplicationController in [0, 2].
func (m *shardMore) churn(ctx context.Context, b *shardBook, rng *rand.Rand) error {
	m.mu.Lock()
	nss := append([]string(nil), m.nss...)
	m.mu.Unlock()
	dsz, rsz := make([]int32, len(nss)), make([]int32, len(nss))
	for i := range nss {
		dsz[i], rsz[i] = int32(rng.Intn(4)), int32(rng.Intn(3))
	}
	return hrtParallel(len(nss), 16, func(i int) error {
		ns := nss[i]
		if err := chaosRetry(func() error {
			d, err := env.Client.AppsV1().Deployments(ns).Get(ctx, "dep", metav1.GetOptions{})
			if err != nil {
				return err
			}
			d.Spec.Replicas = ptr.To(dsz[i])
			_, err = env.Client.AppsV1().Deployments(ns).Update(ctx, d, metav1.UpdateOptions{})
			return err
		}); err != nil {
			return err
		}
		m.mu.Lock()
		m.dep[ns] = dsz[i]
		m.mu.Unlock()
		return chaosRetry(func() error {
			rc, err := env.Client.CoreV1().ReplicationControllers(ns).Get(ctx, "rc", metav1.GetOptions{})
			if err != nil {
				return err
			}
			prev := *rc.Spec.Replicas
			rc.Spec.Replicas = ptr.To(rsz[i])
			if _, err := env.Client.CoreV1().ReplicationControllers(ns).Update(ctx, rc, metav1.UpdateOptions{}); err != nil {
				return err
			}
			b.mu.Lock()
			defer b.mu.Unlock()
			if rsz[i] > prev {
				b.bound[rc.UID] += int(rsz[i] - prev)
			}
			m.rc[ns]["rc"] = rsz[i]
			return nil
		})
	})
}

func (m *shardMore) verify(ctx context.Context, b *shardBook) []string {
	m.mu.Lock()
	nss := append([]string(nil), m.nss...)
	dep := map[string]int32{}
	for k, v := range m.dep {
		dep[k] = v
	}
	m.mu.Unlock()
	b.mu.Lock()
	rcw, sts := map[string]int32{}, map[string]int32{}
	for _, ns := range nss {
		rcw[ns] = m.rc[ns]["rc"]
		sts[ns] = b.sts[ns]["sts"]
	}
	b.mu.Unlock()
	var probs []string
	bad := func(ns, f string, a ...any) { probs = append(probs, ns+": "+fmt.Sprintf(f, a...)) }
	for _, ns := range nss {
		pods, err := env.Client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			bad(ns, "pods: %v", err)
			continue
		}
		byOwner, active := map[string]int32{}, int32(0)
		for i := range pods.Items {
			p := &pods.Items[i]
			if p.DeletionTimestamp != nil {
				continue
			}
			if p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed {
				active++
			}
			if ref := metav1.GetControllerOf(p); ref != nil {
				byOwner[string(ref.UID)]++
			}
		}
		// the Deployment: one ReplicaSet at its size, that many pods, its status
		d, err := env.Client.AppsV1().Deployments(ns).Get(ctx, "dep", metav1.GetOptions{})
		if err != nil {
			bad(ns, "Deployment: %v", err)
			continue
		}
		rss, err := env.Client.AppsV1().ReplicaSets(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			bad(ns, "ReplicaSets: %v", err)
			continue
		}
		var owned []appsv1.ReplicaSet
		for _, rs := range rss.Items {
			if ref := metav1.GetControllerOf(&rs); ref != nil && ref.UID == d.UID {
				owned = append(owned, rs)
			}
		}
		if len(owned) != 1 || *owned[0].Spec.Replicas != dep[ns] || byOwner[string(owned[0].UID)] != dep[ns] ||
			d.Status.Replicas != dep[ns] || d.Status.ObservedGeneration != d.Generation {
			n := -1
			if len(owned) == 1 {
				n = int(byOwner[string(owned[0].UID)])
			}
			bad(ns, "Deployment dep: want %d, %d ReplicaSets (pods of the one: %d), status.replicas %d, observedGeneration %d of %d",
				dep[ns], len(owned), n, d.Status.Replicas, d.Status.ObservedGeneration, d.Generation)
		}
		// the ReplicationController
		rc, err := env.Client.CoreV1().ReplicationControllers(ns).Get(ctx, "rc", metav1.GetOptions{})
		if err != nil {
			bad(ns, "ReplicationController: %v", err)
		} else if byOwner[string(rc.UID)] != rcw[ns] || rc.Status.Replicas != rcw[ns] || rc.Status.ObservedGeneration != rc.Generation {
			bad(ns, "ReplicationController rc: want %d, %d pods, status.replicas %d, observedGeneration %d of %d",
				rcw[ns], byOwner[string(rc.UID)], rc.Status.Replicas, rc.Status.ObservedGeneration, rc.Generation)
		}
		// the Service's EndpointSlice and Endpoints
		sl, err := env.Client.DiscoveryV1().EndpointSlices(ns).List(ctx, metav1.ListOptions{
			LabelSelector: "kubernetes.io/service-name=svc,endpointslice.kubernetes.io/managed-by=endpointslice-controller.k8s.io"})
		if err != nil || len(sl.Items) == 0 {
			bad(ns, "no EndpointSlice of the endpointslice controller for svc (%v)", err)
		}
		if _, err := env.Client.CoreV1().Endpoints(ns).Get(ctx, "svc", metav1.GetOptions{}); err != nil {
			bad(ns, "Endpoints svc: %v", err)
		}
		// the ResourceQuota's pod count
		q, err := env.Client.CoreV1().ResourceQuotas(ns).Get(ctx, "q", metav1.GetOptions{})
		if err != nil {
			bad(ns, "ResourceQuota: %v", err)
		} else {
			used, hard := q.Status.Used[corev1.ResourcePods], q.Status.Hard[corev1.ResourcePods]
			if used.Value() != int64(active) || hard.Value() != shardQuotaPods {
				bad(ns, "ResourceQuota q: status.used.pods %s, hard %s; %d live pods", used.String(), hard.String(), active)
			}
		}
		// the PodDisruptionBudget over the StatefulSet's pods
		pdb, err := env.Client.PolicyV1().PodDisruptionBudgets(ns).Get(ctx, "pdb", metav1.GetOptions{})
		if err != nil {
			bad(ns, "PodDisruptionBudget: %v", err)
		} else if pdb.Status.ObservedGeneration != pdb.Generation || pdb.Status.ExpectedPods != sts[ns] {
			bad(ns, "PodDisruptionBudget pdb: expectedPods %d, want %d (the StatefulSet's), observedGeneration %d of %d",
				pdb.Status.ExpectedPods, sts[ns], pdb.Status.ObservedGeneration, pdb.Generation)
		}
	}
	sort.Strings(probs)
	return probs
}
