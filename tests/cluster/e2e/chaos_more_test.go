// SPDX-License-Identifier: Apache-2.0

package e2e

// The chaos suite's churn over more of the controllers kcmd runs (issue 21), beside the
// ReplicaSet/GC churn of chaos_test.go and the Deployment/Job churn of chaos_workloads_test.go,
// in the same TestChaos run and under the same faults:
//   - ReplicationControllers created, scaled, deleted in the background and replaced;
//   - StatefulSets (podManagementPolicy Parallel: with no kubelet no pod ever becomes Ready, and
//     OrderedReady would stop at ordinal 0) created, scaled, deleted and replaced;
//   - Services with a selector over pods the test makes on a Node of its own and plays the
//     kubelet for (pod IP set, Ready flipped through the status subresource, pods deleted with
//     grace 0 so none is left terminating);
//   - Namespaces created with content (ConfigMaps, a Secret, a Service, an unscheduled pod) and
//     deleted again.
//
// Oracles after the settle (checked with the others in chaosChurn; the audit two-leader check
// covers these writes too):
//   - ReplicationController: observedGeneration current, status.replicas == spec.replicas,
//     exactly spec.replicas active pods controlled by it, no active pod carrying its label
//     without being controlled by a live one, and no over-creation: the pods ever seen (watch)
//     controlled by its uid do not exceed the sum of the positive steps of its spec.replicas;
//   - StatefulSet: observedGeneration current, status.replicas == spec.replicas, the active
//     pods it controls are exactly <name>-0 .. <name>-(n-1), each with the pod-index label of
//     its ordinal (no ordinal twice), no over-creation counted as for RCs;
//   - Service: the addresses of its EndpointSlices are exactly the active pods of its selector
//     that have an IP, each once, conditions.ready exactly as the pod's Ready condition; its
//     Endpoints lists the Ready pods' IPs as addresses and the others as notReadyAddresses;
//   - Namespace deleted: eventually gone, and no ConfigMap, Secret, pod, Service,
//     ServiceAccount or EndpointSlice left in it;
//   - every live namespace the churn touched (the RS, workload and these namespaces, and the
//     churned namespaces not deleted) has the ServiceAccount `default` and the ConfigMap
//     kube-root-ca.crt holding the --root-ca-file's PEM.
//
// chaosMoreNegative (subtest MoreNegativeControl, after the churn, with no kcmd running) breaks
// the settled end state the way a faulty controller would and passes only if these oracles
// report each break.

import (
	"context"
	"fmt"
	"math/rand"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	discovery "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
)

const chaosPodIndexLabel = "apps.kubernetes.io/pod-index"

// chaosSvcCount is the number of Services the churn keeps (never deleted: their slices and
// Endpoints are what the oracle checks).
const chaosSvcCount = 3

type chaosMore struct {
	mu     sync.Mutex
	ns     string // RCs, StatefulSets, Services and their pods
	node   string
	caPEM  string
	rc     map[string]int32 // RC name -> last spec.replicas written
	sts    map[string]int32 // StatefulSet name -> last spec.replicas written
	uid    map[string]types.UID
	bound  map[types.UID]int // sum of the positive steps of spec.replicas per RC/StatefulSet uid
	svcPod map[string]string // pod name -> its Service
	nsLive map[string]bool   // churned namespaces not deleted
	nsGone []string          // churned namespaces deleted
	next   int
	ip     int
	ops    int
	nsMade int
	rcEver int
	stsEv  int
	podsEv int
}

func newChaosMore(ctx context.Context, t *testing.T, ns string) *chaosMore {
	t.Helper()
	ca, err := os.ReadFile(env.Cluster.CAFile)
	if err != nil {
		t.Fatal(err)
	}
	m := &chaosMore{ns: ns, node: "chaos-more-node", caPEM: string(ca), rc: map[string]int32{}, sts: map[string]int32{},
		uid: map[string]types.UID{}, bound: map[types.UID]int{}, svcPod: map[string]string{}, nsLive: map[string]bool{}}
	if _, err := env.Client.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: m.node}},
		metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	for i := 0; i < chaosSvcCount; i++ {
		name := fmt.Sprintf("svc-%d", i)
		if _, err := env.Client.CoreV1().Services(ns).Create(ctx, chaosService(name), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		for j := 0; j < 2; j++ {
			if _, err := m.addSvcPod(ctx, name, j == 0); err != nil {
				t.Fatal(err)
			}
		}
	}
	for i := 0; i < 2; i++ {
		if err := m.createRC(ctx, int32(1+i)); err != nil {
			t.Fatal(err)
		}
		if err := m.createSTS(ctx, int32(2+i)); err != nil {
			t.Fatal(err)
		}
		if err := m.createNS(ctx); err != nil {
			t.Fatal(err)
		}
	}
	return m
}

func chaosService(name string) *corev1.Service {
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.ServiceSpec{Selector: map[string]string{"chaos-svc": name},
			Ports: []corev1.ServicePort{{Name: "http", Port: 80, TargetPort: intstr.FromInt32(8080)}}},
	}
}

func (m *chaosMore) name(prefix string) string {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.next++
	return fmt.Sprintf("%s-%03d", prefix, m.next-1)
}

// ---- ReplicationControllers and StatefulSets --------------------------------------------------

func (m *chaosMore) createRC(ctx context.Context, replicas int32) error {
	name := m.name("rc")
	rc := &corev1.ReplicationController{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.ReplicationControllerSpec{Replicas: ptr.To(replicas), Selector: map[string]string{"chaos-rc": name},
			Template: &corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"chaos-rc": name}},
				Spec: chaosPodSpec(0)}},
	}
	var got *corev1.ReplicationController
	err := chaosRetry(func() error {
		var err error
		got, err = env.Client.CoreV1().ReplicationControllers(m.ns).Create(ctx, rc, metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) { // a retried create that had landed
			got, err = env.Client.CoreV1().ReplicationControllers(m.ns).Get(ctx, name, metav1.GetOptions{})
		}
		return err
	})
	if err != nil {
		return err
	}
	m.mu.Lock()
	m.rc[name], m.uid[name], m.bound[got.UID] = replicas, got.UID, int(replicas)
	m.rcEver++
	m.mu.Unlock()
	return nil
}

func (m *chaosMore) createSTS(ctx context.Context, replicas int32) error {
	name := m.name("sts")
	s := &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: appsv1.StatefulSetSpec{
			Replicas: ptr.To(replicas), ServiceName: name, PodManagementPolicy: appsv1.ParallelPodManagement,
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"chaos-sts": name}},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"chaos-sts": name}},
				Spec: chaosPodSpec(0)},
		},
	}
	var got *appsv1.StatefulSet
	err := chaosRetry(func() error {
		var err error
		got, err = env.Client.AppsV1().StatefulSets(m.ns).Create(ctx, s, metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) {
			got, err = env.Client.AppsV1().StatefulSets(m.ns).Get(ctx, name, metav1.GetOptions{})
		}
		return err
	})
	if err != nil {
		return err
	}
	m.mu.Lock()
	m.sts[name], m.uid[name], m.bound[got.UID] = replicas, got.UID, int(replicas)
	m.stsEv++
	m.mu.Unlock()
	return nil
}

// scale sets spec.replicas of the RC or StatefulSet name and counts a positive step in its bound.
func (m *chaosMore) scale(ctx context.Context, name string, replicas int32) error {
	return chaosRetry(func() error {
		var prev int32
		var uid types.UID
		if strings.HasPrefix(name, "rc-") {
			rc, err := env.Client.CoreV1().ReplicationControllers(m.ns).Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return err
			}
			prev, uid = *rc.Spec.Replicas, rc.UID
			rc.Spec.Replicas = ptr.To(replicas)
			if _, err := env.Client.CoreV1().ReplicationControllers(m.ns).Update(ctx, rc, metav1.UpdateOptions{}); err != nil {
				return err
			}
		} else {
			s, err := env.Client.AppsV1().StatefulSets(m.ns).Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return err
			}
			prev, uid = *s.Spec.Replicas, s.UID
			s.Spec.Replicas = ptr.To(replicas)
			if _, err := env.Client.AppsV1().StatefulSets(m.ns).Update(ctx, s, metav1.UpdateOptions{}); err != nil {
				return err
			}
		}
		m.mu.Lock()
		if replicas > prev {
			m.bound[uid] += int(replicas - prev)
		}
		if strings.HasPrefix(name, "rc-") {
			m.rc[name] = replicas
		} else {
			m.sts[name] = replicas
		}
		m.mu.Unlock()
		return nil
	})
}

func (m *chaosMore) remove(ctx context.Context, name string) error {
	bg := metav1.DeletePropagationBackground
	opts := metav1.DeleteOptions{PropagationPolicy: &bg}
	err := chaosRetry(func() error {
		if strings.HasPrefix(name, "rc-") {
			return env.Client.CoreV1().ReplicationControllers(m.ns).Delete(ctx, name, opts)
		}
		return env.Client.AppsV1().StatefulSets(m.ns).Delete(ctx, name, opts)
	})
	if err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	m.mu.Lock()
	delete(m.rc, name)
	delete(m.sts, name)
	m.mu.Unlock()
	return nil
}

// ---- Services and the pods the test plays the kubelet for -------------------------------------

func (m *chaosMore) addSvcPod(ctx context.Context, svc string, ready bool) (string, error) {
	name := m.name("svcpod")
	m.mu.Lock()
	m.ip++
	ip := fmt.Sprintf("10.77.%d.%d", m.ip/250, 1+m.ip%250)
	m.mu.Unlock()
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"chaos-svc": svc}},
		Spec: corev1.PodSpec{NodeName: m.node, TerminationGracePeriodSeconds: ptr.To[int64](0),
			// never evicted from the heartbeat-less node, however long `make chaos` runs
			Tolerations: []corev1.Toleration{{Operator: corev1.TolerationOpExists}},
			Containers: []corev1.Container{{Name: "c", Image: "registry.k8s.io/pause:3.10",
				Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 8080}}}}},
	}
	err := chaosRetry(func() error {
		_, err := env.Client.CoreV1().Pods(m.ns).Create(ctx, p, metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) {
			err = nil
		}
		return err
	})
	if err != nil {
		return "", err
	}
	m.mu.Lock()
	m.svcPod[name] = svc
	m.podsEv++
	m.mu.Unlock()
	return ip, m.setReady(ctx, name, ip, ready)
}

// setReady writes the pod's status as a kubelet would: Running, its IP, Ready as asked.
func (m *chaosMore) setReady(ctx context.Context, name, ip string, ready bool) error {
	err := chaosRetry(func() error {
		p, err := env.Client.CoreV1().Pods(m.ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if ip == "" {
			ip = p.Status.PodIP
		}
		st := corev1.ConditionFalse
		if ready {
			st = corev1.ConditionTrue
		}
		p.Status = corev1.PodStatus{Phase: corev1.PodRunning, PodIP: ip, PodIPs: []corev1.PodIP{{IP: ip}},
			Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: st, LastTransitionTime: metav1.Now()}}}
		_, err = env.Client.CoreV1().Pods(m.ns).UpdateStatus(ctx, p, metav1.UpdateOptions{})
		return err
	})
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

func (m *chaosMore) deleteSvcPod(ctx context.Context, name string) error {
	err := chaosRetry(func() error {
		return env.Client.CoreV1().Pods(m.ns).Delete(ctx, name, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)})
	})
	if err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	m.mu.Lock()
	delete(m.svcPod, name)
	m.mu.Unlock()
	return nil
}

// ---- Namespaces --------------------------------------------------------------------------------

func (m *chaosMore) createNS(ctx context.Context) error {
	name := m.name("chaos-ns")
	err := chaosRetry(func() error {
		_, err := env.Client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}},
			metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) {
			err = nil
		}
		return err
	})
	if err != nil {
		return err
	}
	m.mu.Lock()
	m.nsLive[name] = true
	m.nsMade++
	m.mu.Unlock()
	core := env.Client.CoreV1()
	creates := []func() error{
		func() error {
			_, err := core.ConfigMaps(name).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "a"}}, metav1.CreateOptions{})
			return err
		},
		func() error {
			_, err := core.ConfigMaps(name).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "b"}}, metav1.CreateOptions{})
			return err
		},
		func() error {
			_, err := core.Secrets(name).Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "s"},
				StringData: map[string]string{"k": "v"}}, metav1.CreateOptions{})
			return err
		},
		func() error {
			_, err := core.Services(name).Create(ctx, chaosService("svc"), metav1.CreateOptions{})
			return err
		},
		func() error { // unscheduled: deleted at once, no kubelet needed
			_, err := core.Pods(name).Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p",
				Labels: map[string]string{"chaos-svc": "svc"}}, Spec: chaosPodSpec(0)}, metav1.CreateOptions{})
			return err
		},
	}
	for _, c := range creates {
		if err := chaosRetry(c); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("namespace %s content: %w", name, err)
		}
	}
	return nil
}

func (m *chaosMore) deleteNS(ctx context.Context, name string) error {
	err := chaosRetry(func() error { return env.Client.CoreV1().Namespaces().Delete(ctx, name, metav1.DeleteOptions{}) })
	if err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	m.mu.Lock()
	delete(m.nsLive, name)
	m.nsGone = append(m.nsGone, name)
	m.mu.Unlock()
	return nil
}

// ---- the churn step ----------------------------------------------------------------------------

func chaosKeys[V any](mp map[string]V) []string {
	var ks []string
	for k := range mp {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

func (m *chaosMore) step(ctx context.Context, rng *rand.Rand) error {
	m.mu.Lock()
	rcs, stss, pods, nss := chaosKeys(m.rc), chaosKeys(m.sts), chaosKeys(m.svcPod), chaosKeys(m.nsLive)
	m.ops++
	m.mu.Unlock()
	switch k := rng.Intn(12); {
	case k < 2 && len(rcs) > 0:
		if len(rcs) >= 2 && rng.Intn(3) == 0 {
			if err := m.remove(ctx, rcs[rng.Intn(len(rcs))]); err != nil {
				return err
			}
			return m.createRC(ctx, int32(rng.Intn(4)))
		}
		return m.scale(ctx, rcs[rng.Intn(len(rcs))], int32(rng.Intn(6)))
	case k < 4 && len(stss) > 0:
		if len(stss) >= 2 && rng.Intn(3) == 0 {
			if err := m.remove(ctx, stss[rng.Intn(len(stss))]); err != nil {
				return err
			}
			return m.createSTS(ctx, int32(rng.Intn(4)))
		}
		return m.scale(ctx, stss[rng.Intn(len(stss))], int32(rng.Intn(6)))
	case k < 6 && len(pods) < 15:
		_, err := m.addSvcPod(ctx, fmt.Sprintf("svc-%d", rng.Intn(chaosSvcCount)), rng.Intn(2) == 0)
		return err
	case k < 8 && len(pods) > 0:
		return m.setReady(ctx, pods[rng.Intn(len(pods))], "", rng.Intn(2) == 0)
	case k < 9 && len(pods) > 3:
		return m.deleteSvcPod(ctx, pods[rng.Intn(len(pods))])
	case k < 10 && len(nss) < 4:
		return m.createNS(ctx)
	case k < 11 && len(nss) > 1:
		return m.deleteNS(ctx, nss[rng.Intn(len(nss))])
	default:
		if len(rcs) == 0 {
			return m.createRC(ctx, 1)
		}
		return m.scale(ctx, rcs[rng.Intn(len(rcs))], int32(rng.Intn(6)))
	}
}

// ---- the oracles -------------------------------------------------------------------------------

// problems lists what differs from the exact end state; live are the other namespaces the
// chaos run churned (each must have the ServiceAccount default and kube-root-ca.crt).
func (m *chaosMore) problems(ctx context.Context, tr *hrtTracker, live []string) []string {
	m.mu.Lock()
	rcs, stss, uid, bound := map[string]int32{}, map[string]int32{}, map[string]types.UID{}, map[types.UID]int{}
	for k, v := range m.rc {
		rcs[k], uid[k] = v, m.uid[k]
	}
	for k, v := range m.sts {
		stss[k], uid[k] = v, m.uid[k]
	}
	for k, v := range m.bound {
		bound[k] = v
	}
	live = append(append([]string{m.ns}, live...), chaosKeys(m.nsLive)...)
	gone := append([]string(nil), m.nsGone...)
	m.mu.Unlock()
	pods, err := env.Client.CoreV1().Pods(m.ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return []string{err.Error()}
	}
	var probs []string
	liveUID := map[types.UID]bool{}
	for _, u := range uid {
		liveUID[u] = true
	}
	for i := range pods.Items {
		p := &pods.Items[i]
		if !isActive(p) || (p.Labels["chaos-rc"] == "" && p.Labels["chaos-sts"] == "") {
			continue
		}
		if ref := metav1.GetControllerOf(p); ref == nil || !liveUID[ref.UID] {
			probs = append(probs, fmt.Sprintf("pod %s: active with no live controller (labels %v)", p.Name, p.Labels))
		}
	}
	owned := func(u types.UID) []*corev1.Pod {
		var out []*corev1.Pod
		for i := range pods.Items {
			p := &pods.Items[i]
			if ref := metav1.GetControllerOf(p); ref != nil && ref.UID == u && isActive(p) {
				out = append(out, p)
			}
		}
		return out
	}
	overCreated := func(kind, name string) {
		if c := tr.Created(uid[name]); c > bound[uid[name]] {
			probs = append(probs, fmt.Sprintf("%s %s: over-creation: %d pods created, its spec steps ask for %d", kind, name, c, bound[uid[name]]))
		}
	}
	for name, want := range rcs {
		rc, err := env.Client.CoreV1().ReplicationControllers(m.ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			probs = append(probs, fmt.Sprintf("replicationcontroller %s: %v", name, err))
			continue
		}
		if rc.Status.ObservedGeneration != rc.Generation || rc.Status.Replicas != want {
			probs = append(probs, fmt.Sprintf("replicationcontroller %s: generation %d observed %d, status.replicas %d, want %d",
				name, rc.Generation, rc.Status.ObservedGeneration, rc.Status.Replicas, want))
		}
		if n := len(owned(rc.UID)); n != int(want) {
			probs = append(probs, fmt.Sprintf("replicationcontroller %s: %d active pods, want %d", name, n, want))
		}
		overCreated("replicationcontroller", name)
	}
	for name, want := range stss {
		s, err := env.Client.AppsV1().StatefulSets(m.ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			probs = append(probs, fmt.Sprintf("statefulset %s: %v", name, err))
			continue
		}
		if s.Status.ObservedGeneration != s.Generation || s.Status.Replicas != want {
			probs = append(probs, fmt.Sprintf("statefulset %s: generation %d observed %d, status.replicas %d, want %d",
				name, s.Generation, s.Status.ObservedGeneration, s.Status.Replicas, want))
		}
		seen := map[int]string{}
		for _, p := range owned(s.UID) {
			ord, err := strconv.Atoi(strings.TrimPrefix(p.Name, name+"-"))
			if err != nil || !strings.HasPrefix(p.Name, name+"-") || ord < 0 || ord >= int(want) {
				probs = append(probs, fmt.Sprintf("statefulset %s: pod %s outside ordinals 0..%d", name, p.Name, want-1))
				continue
			}
			if idx := p.Labels[chaosPodIndexLabel]; idx != strconv.Itoa(ord) {
				probs = append(probs, fmt.Sprintf("statefulset %s: pod %s has %s %q", name, p.Name, chaosPodIndexLabel, idx))
			}
			if prev, dup := seen[ord]; dup {
				probs = append(probs, fmt.Sprintf("statefulset %s: ordinal %d twice (%s, %s)", name, ord, prev, p.Name))
			}
			seen[ord] = p.Name
		}
		if len(seen) != int(want) {
			probs = append(probs, fmt.Sprintf("statefulset %s: ordinals %v present, want 0..%d", name, chaosKeys(chaosOrdNames(seen)), want-1))
		}
		overCreated("statefulset", name)
	}
	for i := 0; i < chaosSvcCount; i++ {
		probs = append(probs, chaosSvcProblems(ctx, m.ns, fmt.Sprintf("svc-%d", i), pods.Items)...)
	}
	for _, ns := range gone {
		probs = append(probs, chaosGoneProblems(ctx, ns)...)
	}
	for _, ns := range live {
		if _, err := env.Client.CoreV1().ServiceAccounts(ns).Get(ctx, "default", metav1.GetOptions{}); err != nil {
			probs = append(probs, fmt.Sprintf("namespace %s: ServiceAccount default: %v", ns, err))
		}
		cm, err := env.Client.CoreV1().ConfigMaps(ns).Get(ctx, "kube-root-ca.crt", metav1.GetOptions{})
		if err != nil {
			probs = append(probs, fmt.Sprintf("namespace %s: ConfigMap kube-root-ca.crt: %v", ns, err))
		} else if cm.Data["ca.crt"] != m.caPEM {
			probs = append(probs, fmt.Sprintf("namespace %s: ConfigMap kube-root-ca.crt does not hold the --root-ca-file (%d bytes, want %d)",
				ns, len(cm.Data["ca.crt"]), len(m.caPEM)))
		}
	}
	return probs
}

func chaosOrdNames(seen map[int]string) map[string]bool {
	out := map[string]bool{}
	for o := range seen {
		out[strconv.Itoa(o)] = true
	}
	return out
}

// chaosSvcProblems compares the EndpointSlices and the Endpoints of Service svc with its pods.
func chaosSvcProblems(ctx context.Context, ns, svc string, pods []corev1.Pod) []string {
	want := map[string]bool{} // pod IP -> Ready
	for i := range pods {
		p := &pods[i]
		if p.Labels["chaos-svc"] == svc && isActive(p) && p.Status.PodIP != "" {
			want[p.Status.PodIP] = isReady(p)
		}
	}
	var probs []string
	sl, err := env.Client.DiscoveryV1().EndpointSlices(ns).List(ctx, metav1.ListOptions{LabelSelector: discovery.LabelServiceName + "=" + svc})
	if err != nil {
		return []string{err.Error()}
	}
	got := map[string]bool{}
	for _, s := range sl.Items {
		for _, ep := range s.Endpoints {
			for _, a := range ep.Addresses {
				if _, dup := got[a]; dup {
					probs = append(probs, fmt.Sprintf("service %s/%s: address %s in two endpoints", ns, svc, a))
				}
				got[a] = ep.Conditions.Ready != nil && *ep.Conditions.Ready
			}
		}
	}
	if d := chaosDiffReady(want, got); d != "" {
		probs = append(probs, fmt.Sprintf("service %s/%s: EndpointSlices differ from the pods: %s", ns, svc, d))
	}
	ep, err := env.Client.CoreV1().Endpoints(ns).Get(ctx, svc, metav1.GetOptions{})
	if err != nil {
		return append(probs, fmt.Sprintf("service %s/%s: Endpoints: %v", ns, svc, err))
	}
	got = map[string]bool{}
	for _, ss := range ep.Subsets {
		for _, a := range ss.Addresses {
			got[a.IP] = true
		}
		for _, a := range ss.NotReadyAddresses {
			if _, dup := got[a.IP]; dup {
				probs = append(probs, fmt.Sprintf("service %s/%s: Endpoints lists %s ready and not ready", ns, svc, a.IP))
			}
			got[a.IP] = false
		}
	}
	if d := chaosDiffReady(want, got); d != "" {
		probs = append(probs, fmt.Sprintf("service %s/%s: Endpoints differ from the pods: %s", ns, svc, d))
	}
	return probs
}

func chaosDiffReady(want, got map[string]bool) string {
	var d []string
	for ip, r := range want {
		if g, ok := got[ip]; !ok {
			d = append(d, ip+" missing")
		} else if g != r {
			d = append(d, fmt.Sprintf("%s ready %v, pod ready %v", ip, g, r))
		}
	}
	for ip := range got {
		if _, ok := want[ip]; !ok {
			d = append(d, ip+" listed with no such pod")
		}
	}
	sort.Strings(d)
	return strings.Join(d, ", ")
}

// chaosGoneProblems: a deleted namespace must be gone, with nothing left in it.
func chaosGoneProblems(ctx context.Context, ns string) []string {
	var probs []string
	if n, err := env.Client.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{}); err == nil {
		probs = append(probs, fmt.Sprintf("namespace %s: still there (phase %s)", ns, n.Status.Phase))
	} else if !apierrors.IsNotFound(err) {
		return append(probs, fmt.Sprintf("namespace %s: %v", ns, err))
	}
	c, lo := env.Client.CoreV1(), metav1.ListOptions{}
	lists := map[string]func() (int, error){
		"ConfigMaps": func() (int, error) {
			l, err := c.ConfigMaps(ns).List(ctx, lo)
			return chaosLen(err, func() int { return len(l.Items) })
		},
		"Secrets": func() (int, error) {
			l, err := c.Secrets(ns).List(ctx, lo)
			return chaosLen(err, func() int { return len(l.Items) })
		},
		"Pods": func() (int, error) {
			l, err := c.Pods(ns).List(ctx, lo)
			return chaosLen(err, func() int { return len(l.Items) })
		},
		"Services": func() (int, error) {
			l, err := c.Services(ns).List(ctx, lo)
			return chaosLen(err, func() int { return len(l.Items) })
		},
		"ServiceAccounts": func() (int, error) {
			l, err := c.ServiceAccounts(ns).List(ctx, lo)
			return chaosLen(err, func() int { return len(l.Items) })
		},
		"EndpointSlices": func() (int, error) {
			l, err := env.Client.DiscoveryV1().EndpointSlices(ns).List(ctx, lo)
			return chaosLen(err, func() int { return len(l.Items) })
		},
	}
	for _, kind := range chaosKeys(lists) {
		n, err := lists[kind]()
		if err != nil {
			probs = append(probs, fmt.Sprintf("namespace %s: listing %s: %v", ns, kind, err))
		} else if n > 0 {
			probs = append(probs, fmt.Sprintf("namespace %s: deleted, %d %s left", ns, n, kind))
		}
	}
	return probs
}

// chaosLen is n() unless the list failed.
func chaosLen(err error, n func() int) (int, error) {
	if err != nil {
		return 0, err
	}
	return n(), nil
}

func (m *chaosMore) summary(tr *hrtTracker) string {
	m.mu.Lock()
	defer m.mu.Unlock()
	created, bound := 0, 0
	for u, b := range m.bound {
		created += tr.Created(u)
		bound += b
	}
	return fmt.Sprintf("%d operations; %d ReplicationControllers ever (%d at the end), %d StatefulSets ever (%d at the end), "+
		"their pods created %d (bound %d); %d Service pods ever (%d at the end over %d Services), "+
		"%d namespaces made (%d deleted, each gone and empty)",
		m.ops, m.rcEver, len(m.rc), m.stsEv, len(m.sts), created, bound, m.podsEv, len(m.svcPod), chaosSvcCount, m.nsMade, len(m.nsGone))
}

// ---- negative control --------------------------------------------------------------------------

// chaosMoreNegative runs right after the churn, with no kcmd left running: into the settled end
// state it injects an extra pod under a ReplicationController, a StatefulSet pod beyond its
// ordinals, a Ready pod of a Service that no slice lists, and a missing kube-root-ca.crt; the
// oracles must report each injected break by name.
func chaosMoreNegative(t *testing.T, m *chaosMore, tr *hrtTracker) {
	ctx := context.Background()
	// the churn's last check passed; kcmd was stopped since, so nothing should have moved (the
	// node lifecycle controller marking the heartbeat-less node's pods NotReady just before the
	// stop is the one way it could, hence a log, not a failure: the checks below name only the
	// injected objects)
	if probs := m.problems(ctx, tr, nil); len(probs) != 0 {
		t.Logf("before the injection (%d problems): %s", len(probs), strings.Join(probs, "; "))
	}
	m.mu.Lock()
	rcs, stss := chaosKeys(m.rc), chaosKeys(m.sts)
	m.mu.Unlock()
	if len(rcs) == 0 || len(stss) == 0 {
		t.Fatalf("the churn left no ReplicationController (%d) or StatefulSet (%d) to break", len(rcs), len(stss))
	}
	m.mu.Lock()
	rcUID, rcN, stsUID, stsN := m.uid[rcs[0]], m.rc[rcs[0]], m.uid[stss[0]], m.sts[stss[0]]
	m.mu.Unlock()
	mk := func(name string, labels map[string]string, ref metav1.OwnerReference) {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels, OwnerReferences: []metav1.OwnerReference{ref}},
			Spec: chaosPodSpec(0)}
		if _, err := env.Client.CoreV1().Pods(m.ns).Create(ctx, p, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	mk("injected-rc-pod", map[string]string{"chaos-rc": rcs[0]}, metav1.OwnerReference{APIVersion: "v1",
		Kind: "ReplicationController", Name: rcs[0], UID: rcUID, Controller: ptr.To(true)})
	extraSTS := fmt.Sprintf("%s-%d", stss[0], stsN+3)
	mk(extraSTS, map[string]string{"chaos-sts": stss[0], chaosPodIndexLabel: strconv.Itoa(int(stsN + 3))},
		metav1.OwnerReference{APIVersion: "apps/v1", Kind: "StatefulSet", Name: stss[0], UID: stsUID, Controller: ptr.To(true)})
	ip, err := m.addSvcPod(ctx, "svc-0", true)
	if err != nil {
		t.Fatal(err)
	}
	if err := env.Client.CoreV1().ConfigMaps(m.ns).Delete(ctx, "kube-root-ca.crt", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	all := m.problems(ctx, tr, nil)
	probs := strings.Join(all, "\n")
	for _, want := range []string{
		fmt.Sprintf("replicationcontroller %s: %d active pods, want %d", rcs[0], rcN+1, rcN),
		fmt.Sprintf("statefulset %s: pod %s outside ordinals", stss[0], extraSTS),
		fmt.Sprintf("service %s/svc-0: EndpointSlices differ from the pods: ", m.ns),
		fmt.Sprintf("service %s/svc-0: Endpoints differ from the pods: ", m.ns),
		ip + " missing",
		fmt.Sprintf("namespace %s: ConfigMap kube-root-ca.crt: ", m.ns),
	} {
		if !strings.Contains(probs, want) {
			t.Errorf("negative control: an injected break went unreported: want a problem %q, got:\n%s", want, probs)
		}
	}
	if !t.Failed() {
		t.Logf("negative control: the oracles reported every injected break (%d problems):\n%s", len(all), probs)
	}
}
