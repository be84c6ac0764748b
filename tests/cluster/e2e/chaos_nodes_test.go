// SPDX-License-Identifier: Apache-2.0

package e2e

// The chaos suite's churn over the workload, policy and node controllers (issue 21), in the same
// TestChaos run and under the same faults as chaos_test.go, chaos_workloads_test.go and
// chaos_more_test.go. The test plays the kubelet of a few Nodes of its own (label chaos-node):
// it renews each live node's Lease in kube-node-lease every second and posts the Ready
// condition again whenever it finds it not True (a kubelet does so on its next status sync);
// a "dead" node gets neither any more. The churn, one operation every 0.4–0.9 s:
//   - Nodes created (at most 5 of the test's own live), labelled and unlabelled chaos-ds-b=yes,
//     killed (heartbeats stop; at most one dead node at a time, so that the zone stays Normal
//     and the NoExecute tainting is not halted), and dead nodes deleted (only in the first
//     third of the 45 s run, or until 90 s before the end of a longer one: the pod GC removes
//     a deleted node's pods only after a 40 s quarantine and a 20 s period, constants
//     upstream with no kcm flag);
//   - DaemonSets created (nodeSelector chaos-node=true, or also chaos-ds-b=yes), rolled to a
//     new template, deleted and replaced;
//   - bare pods bound to a live node, tolerating node.kubernetes.io/unreachable and not-ready
//     NoExecute for 0–3 s, created and deleted;
//   - Jobs with ttlSecondsAfterFinished 0–5 (their pods marked Succeeded by the test's kubelet);
//   - CronJobs with schedule "* * * * *" and a suspended Job template (the Jobs never run: the
//     oracle is about which Jobs the schedule makes), created, deleted and replaced;
//   - pods with a generic ephemeral volume (unscheduled), created and deleted;
//   - in a namespace of its own with a ResourceQuota and two PodDisruptionBudgets: ConfigMaps
//     created and deleted, unscheduled pods created, deleted, flipped Ready/not Ready, and
//     (those no PDB selects) marked Succeeded;
//   - a HorizontalPodAutoscaler (min 1, max 3, a CPU utilization metric; the cluster serves no
//     metrics API) over one of two ReplicaSets: the ReplicaSets scaled to 0–5 behind its back,
//     its scaleTargetRef switched between them.
//
// chaosFlags turns on --allocate-node-cidrs with --cluster-cidr=10.200.0.0/20 (16 node CIDRs of
// /24) and sets --terminated-pod-gc-threshold=10, --node-monitor-grace-period=20s and
// --node-eviction-rate=1, --horizontal-pod-autoscaler-sync-period=3s and
// --resource-quota-sync-period=15s for these oracles.
//
// Oracles after the settle (problems(), with the others of chaosChurn):
//   - ttl-controller: every Node of the cluster has node.alpha.kubernetes.io/ttl "0" (fewer
//     than 100 nodes: upstream's first boundary);
//   - node-ipam-controller: every Node of the cluster has a spec.podCIDR, a /24 inside
//     10.200.0.0/20, podCIDRs == [podCIDR], no two nodes the same (the freeing on delete is
//     exercised once more nodes were ever made than the range holds: the summary says so);
//   - node-lifecycle-controller: a dead node has Ready Unknown and the taints
//     node.kubernetes.io/unreachable NoSchedule and NoExecute; a live node has neither taint;
//   - taint-eviction-controller: every bare pod bound to a dead node is gone or terminating
//     (evicted); every bare pod bound to a live node whose Ready the kubelet never had to post
//     again is there and not terminating (a node marked unreachable during a long fault may
//     legitimately lose its pods, hence the exception);
//   - pod-garbage-collector-controller: no pod is left bound to a deleted Node (orphans), and
//     the terminated pods of the cluster (phase Succeeded or Failed: the Job churn makes dozens)
//     are at most --terminated-pod-gc-threshold;
//   - daemonset-controller: for each DaemonSet, every live node its nodeSelector matches runs
//     exactly one active daemon pod, of the latest template; every other live node none; a dead
//     node at most one (an old pod may go on running there, upstream's shouldContinueRunning);
//     status: observedGeneration current, desiredNumberScheduled == currentNumberScheduled ==
//     updatedNumberScheduled == numberUnavailable == the live matching nodes,
//     numberMisscheduled == the dead nodes with one of its pods, numberReady == 0 (no pod is
//     ever Ready);
//   - cronjob-controller: the Jobs a live CronJob owns are exactly one per minute boundary after
//     its creationTimestamp up to 15 s before the check (the boundary of the last 15 s may or
//     may not have its Job yet), each named <cronjob>-<unix minutes> with the
//     batch.kubernetes.io/cronjob-scheduled-timestamp annotation of that minute;
//     status.active lists exactly those Jobs (none finishes) and status.lastScheduleTime is
//     the latest; a deleted CronJob leaves no Job behind;
//   - ttl-after-finished-controller: every Job with ttlSecondsAfterFinished is gone, and its
//     pods too;
//   - ephemeral-volume-controller: every live pod with a generic ephemeral volume has the PVC
//     <pod>-data, controlled by the pod (blockOwnerDeletion), with the template's request;
//     the PVCs of the deleted pods are gone;
//   - resourcequota-controller: status.hard == spec.hard, status.used of pods / configmaps /
//     secrets == the pods not Succeeded or Failed / the ConfigMaps / the Secrets of the
//     namespace. The periodic full sync is shortened to 15 s: under the faults the apiserver's
//     quota admission can charge a create that then fails (an etcd or apiserver restart
//     mid-request), and upstream's replenishment compares its count with the cached quota,
//     which may lag that charge, and then writes nothing; upstream too keeps such an
//     overcount until the next periodic sync. A first run with the default 5 m saw one that
//     lasted the whole 3 min settle (configmaps 2 for 1 ConfigMap); its cause was not pinned
//     down, a replenishment lost by kcmd is not ruled out. So the end state is exact, but a
//     lost replenishment would be repaired by the periodic sync rather than reported;
//   - disruption-controller: for each PDB (minAvailable 1 and 2), observedGeneration current,
//     expectedPods == the pods its selector matches, currentHealthy == those Ready and not
//     terminating, desiredHealthy == minAvailable, disruptionsAllowed ==
//     max(0, currentHealthy − desiredHealthy), condition DisruptionAllowed True/SufficientPods
//     when that is positive, else False/InsufficientPods;
//   - horizontal-pod-autoscaler-controller, upstream's paths without metrics: the target the
//     test left at 0 stays 0 (ScalingActive False/ScalingDisabled, desiredReplicas 0), above
//     3 comes down to 3 (desiredReplicas 3), else keeps its value (ScalingActive
//     False/FailedGetResourceMetric); status.currentReplicas is the target's; AbleToScale
//     True/SucceededGetScale; the ReplicaSet no longer targeted is at the test's value or its
//     clamp (a sync under way at the switch may still have clamped it).
//
// Not churned here: podgroup-protection-controller (chaos_rest_test.go, with GenericWorkload
// and scheduling.k8s.io/v1beta1 turned on in the chaos apiserver).
//
// chaosNodesNegative (subtest NodesNegativeControl, with no kcmd running) breaks the settled
// end state once per oracle and passes only if each break is reported by name.

import (
	"context"
	"fmt"
	"math/rand"
	"net"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	coordv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
)

const (
	chaosClusterCIDR    = "10.200.0.0/20"
	chaosPodGCThreshold = 10
	chaosTTLAnnotation  = "node.alpha.kubernetes.io/ttl"
	chaosCJAnnotation   = "batch.kubernetes.io/cronjob-scheduled-timestamp"
	chaosTaintUnreach   = "node.kubernetes.io/unreachable"
	chaosTaintNotReady  = "node.kubernetes.io/not-ready"
)

// chaosNodesFlags are the kcmd flags these oracles need (appended to chaosFlags).
var chaosNodesFlags = []string{"--allocate-node-cidrs", "--cluster-cidr=" + chaosClusterCIDR,
	"--terminated-pod-gc-threshold=" + strconv.Itoa(chaosPodGCThreshold), "--node-monitor-grace-period=20s",
	"--node-eviction-rate=1", "--horizontal-pod-autoscaler-sync-period=3s",
	"--resource-quota-sync-period=15s"}

type chaosNodeState struct {
	dead     bool
	reposted bool // the kubelet had to post Ready again: kcmd had marked it not Ready
}

type chaosNodes struct {
	mu          sync.Mutex
	ns, qns     string
	nodes       map[string]*chaosNodeState // the test's own nodes, not deleted
	deleted     map[string]bool
	dsB         map[string]bool // nodes labelled chaos-ds-b=yes
	ds          map[string]bool // DaemonSet name -> selects chaos-ds-b too
	dsVer       map[string]int
	dsGone      []string
	bare        map[string]string // bare pod -> its node
	ttlJobs     []string
	cj          map[string]bool
	cjGone      []string
	cjUID       map[string]types.UID
	eph         map[string]bool
	ephGone     []string
	qcm         map[string]bool
	qpod        map[string]string // quota pod -> its PDB label ("" when none)
	hpaTarget   string            // the ReplicaSet the HPA scales
	hpaR        map[string]int32  // HPA ReplicaSet -> the last spec.replicas the test wrote
	hpaOps      int
	qlog        []string // the ConfigMap creates and deletes in the quota namespace, timed
	deleteUntil time.Time
	next        int
	ops         int
	nodesEver   int
	reposts     int
	dsEver      int
	bareEver    int
	cjEver      int
	ephEver     int
	qEver       int
}

func newChaosNodes(ns, qns string) *chaosNodes {
	return &chaosNodes{ns: ns, qns: qns, nodes: map[string]*chaosNodeState{}, deleted: map[string]bool{},
		dsB: map[string]bool{}, ds: map[string]bool{}, dsVer: map[string]int{}, bare: map[string]string{},
		cj: map[string]bool{}, cjUID: map[string]types.UID{}, eph: map[string]bool{}, qcm: map[string]bool{},
		qpod: map[string]string{}, hpaR: map[string]int32{}}
}

const chaosHPAMax = 3

func (n *chaosNodes) name(prefix string) string {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.next++
	return fmt.Sprintf("%s-%03d", prefix, n.next-1)
}

// start makes the initial objects and the kubelet, which runs until t ends.
func (n *chaosNodes) start(ctx context.Context, t *testing.T, dur time.Duration) {
	t.Helper()
	// deletes stop early enough for the pod GC's quarantine to end within the settle: a third
	// of the short run, all but the last 90 s of a long one (where the nodes ever made
	// outnumber the 16 node CIDRs, so that node IPAM must reuse freed ones)
	n.deleteUntil = time.Now().Add(max(dur/3, dur-90*time.Second))
	for i := 0; i < 4; i++ {
		if err := n.addNode(ctx); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < 2; i++ {
		if err := n.createDS(ctx, i == 1); err != nil {
			t.Fatal(err)
		}
		if err := n.createCJ(ctx); err != nil {
			t.Fatal(err)
		}
	}
	q := &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Name: "rq"}, Spec: corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{
		corev1.ResourcePods: resource.MustParse("100"), corev1.ResourceConfigMaps: resource.MustParse("100"),
		corev1.ResourceSecrets: resource.MustParse("100")}}}
	if _, err := env.Client.CoreV1().ResourceQuotas(n.qns).Create(ctx, q, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for i, lbl := range []string{"a", "b"} {
		pdb := &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Name: "pdb-" + lbl}, Spec: policyv1.PodDisruptionBudgetSpec{
			MinAvailable: ptr.To(intstr.FromInt32(int32(i + 1))),
			Selector:     &metav1.LabelSelector{MatchLabels: map[string]string{"chaos-pdb": lbl}}}}
		if _, err := env.Client.PolicyV1().PodDisruptionBudgets(n.qns).Create(ctx, pdb, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		for j := 0; j < 2; j++ {
			if err := n.addQPod(ctx, lbl, j == 0); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, r := range []struct {
		name string
		n    int32
	}{{"hpa-a", 2}, {"hpa-b", 5}} {
		if _, err := env.Client.AppsV1().ReplicaSets(n.ns).Create(ctx, demoReplicaSet(n.ns, r.name, r.n), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		n.hpaR[r.name] = r.n
	}
	n.hpaTarget = "hpa-a"
	if _, err := env.Client.AutoscalingV2().HorizontalPodAutoscalers(n.ns).Create(ctx, &autoscalingv2.HorizontalPodAutoscaler{
		ObjectMeta: metav1.ObjectMeta{Name: "hpa"},
		Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
			ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: n.hpaTarget},
			MinReplicas:    ptr.To[int32](1), MaxReplicas: chaosHPAMax,
			Metrics: []autoscalingv2.MetricSpec{{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricSource{
				Name: corev1.ResourceCPU, Target: autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: ptr.To[int32](50)}}}},
		}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	done := make(chan struct{})
	go n.kubelet(ctx, stop, done)
	t.Cleanup(func() { close(stop); <-done })
}

// ---- nodes and their kubelet -------------------------------------------------------------------

func (n *chaosNodes) addNode(ctx context.Context) error {
	name := n.name("chaos-node")
	var node *corev1.Node
	err := chaosRetry(func() error {
		var err error
		node, err = env.Client.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name,
			Labels: map[string]string{"chaos-node": "true"}}}, metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) {
			node, err = env.Client.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		}
		return err
	})
	if err != nil {
		return err
	}
	if err := chaosPostReady(ctx, name); err != nil {
		return err
	}
	now := metav1.NewMicroTime(time.Now())
	err = chaosRetry(func() error {
		_, err := env.Client.CoordinationV1().Leases("kube-node-lease").Create(ctx, &coordv1.Lease{
			ObjectMeta: metav1.ObjectMeta{Name: name, OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "Node", Name: name, UID: node.UID}}},
			Spec:       coordv1.LeaseSpec{HolderIdentity: ptr.To(name), LeaseDurationSeconds: ptr.To[int32](40), RenewTime: &now},
		}, metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) {
			err = nil
		}
		return err
	})
	if err != nil {
		return err
	}
	n.mu.Lock()
	n.nodes[name] = &chaosNodeState{}
	n.nodesEver++
	n.mu.Unlock()
	return nil
}

// chaosPostReady posts the Ready condition True with a new heartbeat, as a kubelet's status sync.
func chaosPostReady(ctx context.Context, name string) error {
	return chaosRetry(func() error {
		node, err := env.Client.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		now := metav1.Now()
		node.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady",
			Message: "kubelet is posting ready status", LastHeartbeatTime: now, LastTransitionTime: now}}
		_, err = env.Client.CoreV1().Nodes().UpdateStatus(ctx, node, metav1.UpdateOptions{})
		return err
	})
}

// kubelet renews the live nodes' Leases every second, posts Ready again on a live node found
// not Ready, and finishes the pods of the TTL Jobs.
func (n *chaosNodes) kubelet(ctx context.Context, stop <-chan struct{}, done chan<- struct{}) {
	defer close(done)
	for i := 0; ; i++ {
		select {
		case <-stop:
			return
		case <-time.After(time.Second):
		}
		n.mu.Lock()
		var live []string
		for name, st := range n.nodes {
			if !st.dead {
				live = append(live, name)
			}
		}
		n.mu.Unlock()
		for _, name := range live {
			l, err := env.Client.CoordinationV1().Leases("kube-node-lease").Get(ctx, name, metav1.GetOptions{})
			if err == nil {
				l.Spec.RenewTime = ptr.To(metav1.NewMicroTime(time.Now()))
				_, _ = env.Client.CoordinationV1().Leases("kube-node-lease").Update(ctx, l, metav1.UpdateOptions{})
			}
			if i%3 != 0 {
				continue
			}
			node, err := env.Client.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				continue
			}
			ready := false
			for _, c := range node.Status.Conditions {
				if c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue {
					ready = true
				}
			}
			n.mu.Lock()
			st := n.nodes[name]
			stillLive := st != nil && !st.dead
			n.mu.Unlock()
			if ready || !stillLive {
				continue
			}
			if chaosPostReady(ctx, name) == nil {
				n.mu.Lock()
				if st := n.nodes[name]; st != nil {
					st.reposted = true
				}
				n.reposts++
				n.mu.Unlock()
			}
		}
		pods, err := env.Client.CoreV1().Pods(n.ns).List(ctx, metav1.ListOptions{LabelSelector: "chaos-ttl"})
		if err != nil {
			continue
		}
		for i := range pods.Items {
			p := &pods.Items[i]
			if !isActive(p) {
				continue
			}
			now := metav1.Now()
			p.Status.Phase = corev1.PodSucceeded
			p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "c", Image: "registry.k8s.io/pause:3.10",
				State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 0, Reason: "Completed",
					StartedAt: now, FinishedAt: now}}}}
			_, _ = env.Client.CoreV1().Pods(n.ns).UpdateStatus(ctx, p, metav1.UpdateOptions{})
		}
	}
}

func (n *chaosNodes) setLabel(ctx context.Context, name string, on bool) error {
	err := chaosRetry(func() error {
		node, err := env.Client.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if on {
			node.Labels["chaos-ds-b"] = "yes"
		} else {
			delete(node.Labels, "chaos-ds-b")
		}
		_, err = env.Client.CoreV1().Nodes().Update(ctx, node, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		return err
	}
	n.mu.Lock()
	if on {
		n.dsB[name] = true
	} else {
		delete(n.dsB, name)
	}
	n.mu.Unlock()
	return nil
}

func (n *chaosNodes) deleteNode(ctx context.Context, name string) error {
	err := chaosRetry(func() error { return env.Client.CoreV1().Nodes().Delete(ctx, name, metav1.DeleteOptions{}) })
	if err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	n.mu.Lock()
	delete(n.nodes, name)
	delete(n.dsB, name)
	n.deleted[name] = true
	n.mu.Unlock()
	return nil
}

// ---- pods, DaemonSets, Jobs, CronJobs ----------------------------------------------------------

func (n *chaosNodes) createPod(ctx context.Context, ns string, p *corev1.Pod) error {
	err := chaosRetry(func() error {
		_, err := env.Client.CoreV1().Pods(ns).Create(ctx, p, metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) {
			err = nil
		}
		return err
	})
	return err
}

func (n *chaosNodes) deletePod(ctx context.Context, ns, name string) error {
	err := chaosRetry(func() error {
		return env.Client.CoreV1().Pods(ns).Delete(ctx, name, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)})
	})
	if err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	return nil
}

func (n *chaosNodes) addBare(ctx context.Context, node string, tolerate int64) error {
	name := n.name("bare")
	spec := chaosPodSpec(0)
	spec.NodeName = node
	for _, k := range []string{chaosTaintUnreach, chaosTaintNotReady} {
		spec.Tolerations = append(spec.Tolerations, corev1.Toleration{Key: k, Operator: corev1.TolerationOpExists,
			Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptr.To(tolerate)})
	}
	if err := n.createPod(ctx, n.ns, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"chaos-bare": "1"}},
		Spec: spec}); err != nil {
		return err
	}
	n.mu.Lock()
	n.bare[name] = node
	n.bareEver++
	n.mu.Unlock()
	return nil
}

func chaosDaemonSet(name string, b bool, ver int) *appsv1.DaemonSet {
	sel := map[string]string{"chaos-node": "true"}
	if b {
		sel["chaos-ds-b"] = "yes"
	}
	spec := chaosPodSpec(ver)
	spec.NodeSelector = sel
	return &appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: appsv1.DaemonSetSpec{
		Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"chaos-ds": name}},
		Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"chaos-ds": name}}, Spec: spec}}}
}

func (n *chaosNodes) createDS(ctx context.Context, b bool) error {
	name := n.name("ds")
	err := chaosRetry(func() error {
		_, err := env.Client.AppsV1().DaemonSets(n.ns).Create(ctx, chaosDaemonSet(name, b, 0), metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) {
			err = nil
		}
		return err
	})
	if err != nil {
		return err
	}
	n.mu.Lock()
	n.ds[name], n.dsVer[name] = b, 0
	n.dsEver++
	n.mu.Unlock()
	return nil
}

func (n *chaosNodes) rollDS(ctx context.Context, name string) error {
	return chaosRetry(func() error {
		d, err := env.Client.AppsV1().DaemonSets(n.ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		n.mu.Lock()
		ver := n.dsVer[name] + 1
		n.mu.Unlock()
		sel := d.Spec.Template.Spec.NodeSelector
		d.Spec.Template.Spec = chaosPodSpec(ver)
		d.Spec.Template.Spec.NodeSelector = sel
		if _, err := env.Client.AppsV1().DaemonSets(n.ns).Update(ctx, d, metav1.UpdateOptions{}); err != nil {
			return err
		}
		n.mu.Lock()
		n.dsVer[name] = ver
		n.mu.Unlock()
		return nil
	})
}

func (n *chaosNodes) deleteDS(ctx context.Context, name string) error {
	bg := metav1.DeletePropagationBackground
	err := chaosRetry(func() error {
		return env.Client.AppsV1().DaemonSets(n.ns).Delete(ctx, name, metav1.DeleteOptions{PropagationPolicy: &bg})
	})
	if err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	n.mu.Lock()
	delete(n.ds, name)
	delete(n.dsVer, name)
	n.dsGone = append(n.dsGone, name)
	n.mu.Unlock()
	return nil
}

func (n *chaosNodes) createTTLJob(ctx context.Context, ttl int32) error {
	name := n.name("ttljob")
	j := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: batchv1.JobSpec{
		TTLSecondsAfterFinished: ptr.To(ttl), Completions: ptr.To[int32](1), Parallelism: ptr.To[int32](1), BackoffLimit: ptr.To[int32](0),
		Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"chaos-ttl": name}},
			Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever, TerminationGracePeriodSeconds: ptr.To[int64](0),
				Containers: []corev1.Container{{Name: "c", Image: "registry.k8s.io/pause:3.10"}}}}}}
	err := chaosRetry(func() error {
		_, err := env.Client.BatchV1().Jobs(n.ns).Create(ctx, j, metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) {
			err = nil
		}
		return err
	})
	if err != nil {
		return err
	}
	n.mu.Lock()
	n.ttlJobs = append(n.ttlJobs, name)
	n.mu.Unlock()
	return nil
}

func (n *chaosNodes) createCJ(ctx context.Context) error {
	name := n.name("cj")
	cj := &batchv1.CronJob{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: batchv1.CronJobSpec{
		Schedule: "* * * * *", ConcurrencyPolicy: batchv1.AllowConcurrent,
		JobTemplate: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{Suspend: ptr.To(true),
			Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever,
				Containers: []corev1.Container{{Name: "c", Image: "registry.k8s.io/pause:3.10"}}}}}}}}
	var got *batchv1.CronJob
	err := chaosRetry(func() error {
		var err error
		got, err = env.Client.BatchV1().CronJobs(n.ns).Create(ctx, cj, metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) {
			got, err = env.Client.BatchV1().CronJobs(n.ns).Get(ctx, name, metav1.GetOptions{})
		}
		return err
	})
	if err != nil {
		return err
	}
	n.mu.Lock()
	n.cj[name], n.cjUID[name] = true, got.UID
	n.cjEver++
	n.mu.Unlock()
	return nil
}

func (n *chaosNodes) deleteCJ(ctx context.Context, name string) error {
	bg := metav1.DeletePropagationBackground
	err := chaosRetry(func() error {
		return env.Client.BatchV1().CronJobs(n.ns).Delete(ctx, name, metav1.DeleteOptions{PropagationPolicy: &bg})
	})
	if err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	n.mu.Lock()
	delete(n.cj, name)
	n.cjGone = append(n.cjGone, name)
	n.mu.Unlock()
	return nil
}

func (n *chaosNodes) addEph(ctx context.Context) error {
	name := n.name("eph")
	spec := chaosPodSpec(0)
	spec.Volumes = []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{Ephemeral: &corev1.EphemeralVolumeSource{
		VolumeClaimTemplate: &corev1.PersistentVolumeClaimTemplate{Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce}, StorageClassName: ptr.To("chaos-none"),
			Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Mi")}}}}}}}}
	if err := n.createPod(ctx, n.ns, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: spec}); err != nil {
		return err
	}
	n.mu.Lock()
	n.eph[name] = true
	n.ephEver++
	n.mu.Unlock()
	return nil
}

// addQPod makes an unscheduled pod in the quota namespace (pdb "a", "b" or "" for none),
// Running with Ready as asked.
func (n *chaosNodes) addQPod(ctx context.Context, pdb string, ready bool) error {
	name := n.name("qpod")
	labels := map[string]string{}
	if pdb != "" {
		labels["chaos-pdb"] = pdb
	}
	if err := n.createPod(ctx, n.qns, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}, Spec: chaosPodSpec(0)}); err != nil {
		return err
	}
	n.mu.Lock()
	n.qpod[name] = pdb
	n.qEver++
	n.mu.Unlock()
	return n.setQPhase(ctx, name, corev1.PodRunning, ready)
}

func (n *chaosNodes) setQPhase(ctx context.Context, name string, phase corev1.PodPhase, ready bool) error {
	err := chaosRetry(func() error {
		p, err := env.Client.CoreV1().Pods(n.qns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if p.Status.Phase == corev1.PodSucceeded {
			return nil
		}
		st := corev1.ConditionFalse
		if ready {
			st = corev1.ConditionTrue
		}
		p.Status = corev1.PodStatus{Phase: phase, Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: st,
			LastTransitionTime: metav1.Now()}}}
		_, err = env.Client.CoreV1().Pods(n.qns).UpdateStatus(ctx, p, metav1.UpdateOptions{})
		return err
	})
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

// hpaScale sets spec.replicas of an HPA ReplicaSet, as a user would behind the HPA's back.
func (n *chaosNodes) hpaScale(ctx context.Context, name string, r int32) error {
	err := chaosRetry(func() error {
		rs, err := env.Client.AppsV1().ReplicaSets(n.ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		rs.Spec.Replicas = ptr.To(r)
		_, err = env.Client.AppsV1().ReplicaSets(n.ns).Update(ctx, rs, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		return err
	}
	n.mu.Lock()
	n.hpaR[name] = r
	n.hpaOps++
	n.mu.Unlock()
	return nil
}

// hpaSwitch points the HPA at the other ReplicaSet.
func (n *chaosNodes) hpaSwitch(ctx context.Context) error {
	var to string
	err := chaosRetry(func() error {
		h, err := env.Client.AutoscalingV2().HorizontalPodAutoscalers(n.ns).Get(ctx, "hpa", metav1.GetOptions{})
		if err != nil {
			return err
		}
		to = "hpa-a"
		if h.Spec.ScaleTargetRef.Name == "hpa-a" {
			to = "hpa-b"
		}
		h.Spec.ScaleTargetRef.Name = to
		_, err = env.Client.AutoscalingV2().HorizontalPodAutoscalers(n.ns).Update(ctx, h, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		return err
	}
	n.mu.Lock()
	n.hpaTarget = to
	n.hpaOps++
	n.mu.Unlock()
	return nil
}

// chaosHPAClamp is where the HPA (min 1, max chaosHPAMax, no metrics) leaves a target the test
// set to r: 0 stays 0 (scaling disabled), above the maximum comes down to it, else r stays.
func chaosHPAClamp(r int32) int32 {
	return min(r, chaosHPAMax)
}

// ---- the churn step ----------------------------------------------------------------------------

func (n *chaosNodes) step(ctx context.Context, rng *rand.Rand) error {
	n.mu.Lock()
	var live, dead []string
	for name, st := range n.nodes {
		if st.dead {
			dead = append(dead, name)
		} else {
			live = append(live, name)
		}
	}
	sort.Strings(live)
	sort.Strings(dead)
	dss, bare, cjs, eph, qcm, qpod := chaosKeys(n.ds), chaosKeys(n.bare), chaosKeys(n.cj), chaosKeys(n.eph), chaosKeys(n.qcm), chaosKeys(n.qpod)
	canDelete := time.Now().Before(n.deleteUntil)
	n.ops++
	n.mu.Unlock()
	switch k := rng.Intn(22); {
	case k < 1 && len(live) < 5:
		return n.addNode(ctx)
	case k < 2 && len(live) > 0:
		name := live[rng.Intn(len(live))]
		n.mu.Lock()
		on := !n.dsB[name]
		n.mu.Unlock()
		return n.setLabel(ctx, name, on)
	case k < 3 && len(dead) == 0 && len(live) >= 3:
		name := live[rng.Intn(len(live))]
		n.mu.Lock()
		n.nodes[name].dead = true
		n.mu.Unlock()
		return nil
	case k < 4 && len(dead) > 0 && canDelete:
		return n.deleteNode(ctx, dead[0])
	case k < 6 && len(bare) < 10 && len(live) > 0:
		return n.addBare(ctx, live[rng.Intn(len(live))], int64(rng.Intn(4)))
	case k < 7 && len(bare) > 3:
		name := bare[rng.Intn(len(bare))]
		if err := n.deletePod(ctx, n.ns, name); err != nil {
			return err
		}
		n.mu.Lock()
		delete(n.bare, name)
		n.mu.Unlock()
		return nil
	case k < 8 && len(dss) > 0:
		return n.rollDS(ctx, dss[rng.Intn(len(dss))])
	case k < 9 && len(dss) >= 2:
		// the replacement selects the same nodes: one DaemonSet over every node stays
		name := dss[rng.Intn(len(dss))]
		n.mu.Lock()
		b := n.ds[name]
		n.mu.Unlock()
		if err := n.deleteDS(ctx, name); err != nil {
			return err
		}
		return n.createDS(ctx, b)
	case k < 10:
		return n.createTTLJob(ctx, int32(rng.Intn(6)))
	case k < 11 && len(cjs) >= 2 && rng.Intn(3) == 0:
		if err := n.deleteCJ(ctx, cjs[rng.Intn(len(cjs))]); err != nil {
			return err
		}
		return n.createCJ(ctx)
	case k < 13 && len(eph) < 6:
		return n.addEph(ctx)
	case k < 14 && len(eph) > 0:
		name := eph[rng.Intn(len(eph))]
		if err := n.deletePod(ctx, n.ns, name); err != nil {
			return err
		}
		n.mu.Lock()
		delete(n.eph, name)
		n.ephGone = append(n.ephGone, name)
		n.mu.Unlock()
		return nil
	case k < 15 && len(qcm) < 8:
		name := n.name("qcm")
		err := chaosRetry(func() error {
			_, err := env.Client.CoreV1().ConfigMaps(n.qns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
			if apierrors.IsAlreadyExists(err) {
				err = nil
			}
			return err
		})
		if err != nil {
			return err
		}
		n.mu.Lock()
		n.qcm[name] = true
		n.qlog = append(n.qlog, time.Now().UTC().Format("15:04:05.000")+" created "+name)
		n.mu.Unlock()
		return nil
	case k < 16 && len(qcm) > 0:
		name := qcm[rng.Intn(len(qcm))]
		err := chaosRetry(func() error { return env.Client.CoreV1().ConfigMaps(n.qns).Delete(ctx, name, metav1.DeleteOptions{}) })
		if err != nil && !apierrors.IsNotFound(err) {
			return err
		}
		n.mu.Lock()
		delete(n.qcm, name)
		n.qlog = append(n.qlog, time.Now().UTC().Format("15:04:05.000")+" deleted "+name)
		n.mu.Unlock()
		return nil
	case k < 17 && len(qpod) < 12:
		return n.addQPod(ctx, []string{"", "a", "b"}[rng.Intn(3)], rng.Intn(2) == 0)
	case k < 18 && len(qpod) > 0:
		name := qpod[rng.Intn(len(qpod))]
		n.mu.Lock()
		pdb := n.qpod[name]
		n.mu.Unlock()
		if pdb == "" && rng.Intn(2) == 0 {
			return n.setQPhase(ctx, name, corev1.PodSucceeded, false)
		}
		return n.setQPhase(ctx, name, corev1.PodRunning, rng.Intn(2) == 0)
	case k < 19 && len(qpod) > 4:
		name := qpod[rng.Intn(len(qpod))]
		if err := n.deletePod(ctx, n.qns, name); err != nil {
			return err
		}
		n.mu.Lock()
		delete(n.qpod, name)
		n.mu.Unlock()
		return nil
	case k < 20:
		return n.hpaScale(ctx, []string{"hpa-a", "hpa-b"}[rng.Intn(2)], int32(rng.Intn(6)))
	case k < 21 && rng.Intn(2) == 0:
		return n.hpaSwitch(ctx)
	default:
		if len(live) > 0 && len(bare) < 10 {
			return n.addBare(ctx, live[rng.Intn(len(live))], int64(rng.Intn(4)))
		}
		return n.createTTLJob(ctx, int32(rng.Intn(6)))
	}
}

// ---- the oracles -------------------------------------------------------------------------------

func chaosHasTaint(node *corev1.Node, key string, effect corev1.TaintEffect) bool {
	for _, t := range node.Spec.Taints {
		if t.Key == key && t.Effect == effect {
			return true
		}
	}
	return false
}

func chaosReadyStatus(node *corev1.Node) corev1.ConditionStatus {
	for _, c := range node.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status
		}
	}
	return ""
}

// problems lists what differs from the exact end state; now is the time of the check.
func (n *chaosNodes) problems(ctx context.Context) []string {
	n.mu.Lock()
	states := map[string]chaosNodeState{}
	for k, v := range n.nodes {
		states[k] = *v
	}
	deleted, dsB, ds, dsVer := map[string]bool{}, map[string]bool{}, map[string]bool{}, map[string]int{}
	for k := range n.deleted {
		deleted[k] = true
	}
	for k := range n.dsB {
		dsB[k] = true
	}
	for k, v := range n.ds {
		ds[k], dsVer[k] = v, n.dsVer[k]
	}
	bare := map[string]string{}
	for k, v := range n.bare {
		bare[k] = v
	}
	dsGone, ttlJobs, cjGone, ephGone := append([]string(nil), n.dsGone...), append([]string(nil), n.ttlJobs...),
		append([]string(nil), n.cjGone...), append([]string(nil), n.ephGone...)
	cjs, eph := chaosKeys(n.cj), chaosKeys(n.eph)
	cjUID := map[string]types.UID{}
	for k, v := range n.cjUID {
		cjUID[k] = v
	}
	n.mu.Unlock()
	now := time.Now()
	var probs []string
	add := func(f string, a ...any) { probs = append(probs, fmt.Sprintf(f, a...)) }

	nodes, err := env.Client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return []string{err.Error()}
	}
	allPods, err := env.Client.CoreV1().Pods("").List(ctx, metav1.ListOptions{})
	if err != nil {
		return []string{err.Error()}
	}
	// ttl-controller and node-ipam-controller, over every node of the cluster
	_, cluster, _ := net.ParseCIDR(chaosClusterCIDR)
	cidrOf := map[string]string{}
	byName := map[string]*corev1.Node{}
	for i := range nodes.Items {
		node := &nodes.Items[i]
		byName[node.Name] = node
		if v, ok := node.Annotations[chaosTTLAnnotation]; !ok || v != "0" {
			add("node %s: %s annotation %q (present %v), want \"0\"", node.Name, chaosTTLAnnotation, v, ok)
		}
		ip, c, err := net.ParseCIDR(node.Spec.PodCIDR)
		if err != nil {
			add("node %s: no podCIDR (%q)", node.Name, node.Spec.PodCIDR)
			continue
		}
		if ones, _ := c.Mask.Size(); ones != 24 || !cluster.Contains(ip) || !ip.Equal(c.IP) {
			add("node %s: podCIDR %s is not a /24 of %s", node.Name, node.Spec.PodCIDR, chaosClusterCIDR)
		}
		if len(node.Spec.PodCIDRs) != 1 || node.Spec.PodCIDRs[0] != node.Spec.PodCIDR {
			add("node %s: podCIDRs %v, podCIDR %s", node.Name, node.Spec.PodCIDRs, node.Spec.PodCIDR)
		}
		if prev, dup := cidrOf[node.Spec.PodCIDR]; dup {
			add("node %s: podCIDR %s also on node %s", node.Name, node.Spec.PodCIDR, prev)
		}
		cidrOf[node.Spec.PodCIDR] = node.Name
	}
	// node-lifecycle-controller
	for name, st := range states {
		node := byName[name]
		if node == nil {
			add("node %s: gone (the test never deleted it)", name)
			continue
		}
		unreach := chaosHasTaint(node, chaosTaintUnreach, corev1.TaintEffectNoSchedule) && chaosHasTaint(node, chaosTaintUnreach, corev1.TaintEffectNoExecute)
		if st.dead && (!unreach || chaosReadyStatus(node) != corev1.ConditionUnknown) {
			add("node %s: dead, Ready %q, taints %v: want Ready Unknown and %s NoSchedule+NoExecute", name, chaosReadyStatus(node),
				node.Spec.Taints, chaosTaintUnreach)
		}
		if !st.dead && (chaosHasTaint(node, chaosTaintUnreach, corev1.TaintEffectNoSchedule) ||
			chaosHasTaint(node, chaosTaintUnreach, corev1.TaintEffectNoExecute) || chaosReadyStatus(node) != corev1.ConditionTrue) {
			add("node %s: live, Ready %q, taints %v", name, chaosReadyStatus(node), node.Spec.Taints)
		}
	}
	// taint-eviction-controller and the pod GC
	podsByNS := map[string]map[string]*corev1.Pod{}
	terminated := 0
	for i := range allPods.Items {
		p := &allPods.Items[i]
		if podsByNS[p.Namespace] == nil {
			podsByNS[p.Namespace] = map[string]*corev1.Pod{}
		}
		podsByNS[p.Namespace][p.Name] = p
		if p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
			terminated++
		}
		if p.Spec.NodeName != "" && deleted[p.Spec.NodeName] {
			add("pod %s/%s: bound to the deleted node %s, still there", p.Namespace, p.Name, p.Spec.NodeName)
		}
	}
	if terminated > chaosPodGCThreshold {
		add("pod GC: %d terminated pods, --terminated-pod-gc-threshold %d", terminated, chaosPodGCThreshold)
	}
	mine := podsByNS[n.ns]
	for name, node := range bare {
		st, ok := states[node]
		if !ok {
			continue // its node was deleted: the orphan check above covers it
		}
		p := mine[name]
		if st.dead && p != nil && p.DeletionTimestamp == nil {
			add("pod %s: on the dead node %s, not evicted", name, node)
		}
		if !st.dead && !st.reposted && (p == nil || p.DeletionTimestamp != nil) {
			add("pod %s: on the live node %s (never marked not Ready), evicted", name, node)
		}
	}
	// daemonset-controller
	dsets, err := env.Client.AppsV1().DaemonSets(n.ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return append(probs, err.Error())
	}
	dsByName := map[string]*appsv1.DaemonSet{}
	for i := range dsets.Items {
		dsByName[dsets.Items[i].Name] = &dsets.Items[i]
	}
	for _, name := range chaosKeys(ds) {
		d := dsByName[name]
		if d == nil {
			add("daemonset %s: gone", name)
			continue
		}
		perNode := map[string][]*corev1.Pod{}
		for _, p := range mine {
			if ref := metav1.GetControllerOf(p); ref != nil && ref.UID == d.UID && isActive(p) {
				tn := chaosTargetNode(p)
				perNode[tn] = append(perNode[tn], p)
			}
		}
		want, missched := 0, 0
		for node := range perNode {
			if _, ok := states[node]; !ok {
				add("daemonset %s: %d pods on node %q, not one of the test's nodes", name, len(perNode[node]), node)
			}
		}
		for _, node := range chaosKeys(states) {
			st := states[node]
			match := !ds[name] || dsB[node]
			got := perNode[node]
			switch {
			case st.dead:
				if len(got) > 1 {
					add("daemonset %s: dead node %s has %d pods", name, node, len(got))
				}
				if len(got) > 0 {
					missched++
				}
			case match:
				want++
				if len(got) != 1 {
					add("daemonset %s: node %s has %d pods, want 1", name, node, len(got))
				} else if v := got[0].Spec.Containers[0].Env[0].Value; v != strconv.Itoa(dsVer[name]) {
					add("daemonset %s: node %s runs template version %s, want %d", name, node, v, dsVer[name])
				}
			default:
				if len(got) != 0 {
					add("daemonset %s: node %s does not match, has %d pods", name, node, len(got))
				}
			}
		}
		s := d.Status
		if s.ObservedGeneration != d.Generation || s.DesiredNumberScheduled != int32(want) || s.CurrentNumberScheduled != int32(want) ||
			s.UpdatedNumberScheduled != int32(want) || s.NumberUnavailable != int32(want) || s.NumberMisscheduled != int32(missched) ||
			s.NumberReady != 0 {
			add("daemonset %s: generation %d observed %d, desired %d current %d updated %d unavailable %d misscheduled %d ready %d; want %d, %d misscheduled",
				name, d.Generation, s.ObservedGeneration, s.DesiredNumberScheduled, s.CurrentNumberScheduled, s.UpdatedNumberScheduled,
				s.NumberUnavailable, s.NumberMisscheduled, s.NumberReady, want, missched)
		}
	}
	for _, name := range dsGone {
		for _, p := range mine {
			if p.Labels["chaos-ds"] == name {
				add("daemonset %s: deleted, its pod %s left", name, p.Name)
			}
		}
	}
	// cronjob-controller
	jobs, err := env.Client.BatchV1().Jobs(n.ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return append(probs, err.Error())
	}
	for _, name := range cjs {
		cj, err := env.Client.BatchV1().CronJobs(n.ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			add("cronjob %s: %v", name, err)
			continue
		}
		got := map[int64]*batchv1.Job{}
		for i := range jobs.Items {
			j := &jobs.Items[i]
			if ref := metav1.GetControllerOf(j); ref == nil || ref.UID != cj.UID {
				continue
			}
			m, err := strconv.ParseInt(strings.TrimPrefix(j.Name, name+"-"), 10, 64)
			if err != nil || !strings.HasPrefix(j.Name, name+"-") {
				add("cronjob %s: job %s is not named <cronjob>-<minutes>", name, j.Name)
				continue
			}
			got[m] = j
			if a := j.Annotations[chaosCJAnnotation]; a != time.Unix(m*60, 0).UTC().Format(time.RFC3339) {
				add("cronjob %s: job %s has %s %q", name, j.Name, chaosCJAnnotation, a)
			}
		}
		first := cj.CreationTimestamp.Unix()/60 + 1
		var latest int64
		for m := first; m*60 <= now.Unix(); m++ {
			if got[m] == nil && m*60 <= now.Add(-15*time.Second).Unix() {
				add("cronjob %s: no job for %s (created %s)", name, time.Unix(m*60, 0).UTC().Format(time.RFC3339),
					cj.CreationTimestamp.UTC().Format(time.RFC3339))
			}
			if got[m] != nil {
				latest = m
			}
		}
		active := map[types.UID]bool{}
		for _, r := range cj.Status.Active {
			active[r.UID] = true
		}
		for m, j := range got {
			if m < first || m*60 > now.Unix() {
				add("cronjob %s: job %s for a minute its schedule does not allow (created %s)", name, j.Name,
					cj.CreationTimestamp.UTC().Format(time.RFC3339))
			}
			if !active[j.UID] {
				add("cronjob %s: job %s not in status.active", name, j.Name)
			}
			delete(active, j.UID)
		}
		if len(active) > 0 {
			add("cronjob %s: status.active lists %d jobs that are not its", name, len(active))
		}
		switch {
		case latest == 0 && cj.Status.LastScheduleTime != nil:
			add("cronjob %s: lastScheduleTime %s and no job", name, cj.Status.LastScheduleTime.UTC().Format(time.RFC3339))
		case latest != 0 && (cj.Status.LastScheduleTime == nil || cj.Status.LastScheduleTime.Unix() != latest*60):
			add("cronjob %s: lastScheduleTime %v, latest job at %s", name, cj.Status.LastScheduleTime,
				time.Unix(latest*60, 0).UTC().Format(time.RFC3339))
		}
	}
	for _, name := range cjGone {
		for i := range jobs.Items {
			if strings.HasPrefix(jobs.Items[i].Name, name+"-") {
				add("cronjob %s: deleted, its job %s left", name, jobs.Items[i].Name)
			}
		}
	}
	// ttl-after-finished-controller
	jobByName := map[string]bool{}
	for i := range jobs.Items {
		jobByName[jobs.Items[i].Name] = true
	}
	for _, name := range ttlJobs {
		if jobByName[name] {
			add("ttl job %s: still there", name)
		}
	}
	for _, p := range mine {
		if l := p.Labels["chaos-ttl"]; l != "" {
			add("ttl job %s: its pod %s left", l, p.Name)
		}
	}
	// ephemeral-volume-controller
	pvcs, err := env.Client.CoreV1().PersistentVolumeClaims(n.ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return append(probs, err.Error())
	}
	pvcBy := map[string]*corev1.PersistentVolumeClaim{}
	for i := range pvcs.Items {
		pvcBy[pvcs.Items[i].Name] = &pvcs.Items[i]
	}
	for _, name := range eph {
		p := mine[name]
		if p == nil {
			add("ephemeral pod %s: gone", name)
			continue
		}
		c := pvcBy[name+"-data"]
		if c == nil {
			add("ephemeral pod %s: no PVC %s-data", name, name)
			continue
		}
		ref := metav1.GetControllerOf(c)
		if ref == nil || ref.UID != p.UID || ref.Kind != "Pod" || ref.BlockOwnerDeletion == nil || !*ref.BlockOwnerDeletion {
			add("ephemeral pod %s: PVC %s owner references %v", name, c.Name, c.OwnerReferences)
		}
		if q := c.Spec.Resources.Requests[corev1.ResourceStorage]; q.Cmp(resource.MustParse("1Mi")) != 0 {
			add("ephemeral pod %s: PVC %s requests %s", name, c.Name, q.String())
		}
	}
	for _, name := range ephGone {
		if pvcBy[name+"-data"] != nil {
			add("ephemeral pod %s: deleted, PVC %s-data left", name, name)
		}
	}
	probs = append(probs, n.quotaProblems(ctx, podsByNS[n.qns])...)
	probs = append(probs, n.hpaProblems(ctx)...)
	return probs
}

// hpaProblems checks the HPA and its two ReplicaSets (there is no metrics API in the cluster).
func (n *chaosNodes) hpaProblems(ctx context.Context) []string {
	n.mu.Lock()
	target := n.hpaTarget
	written := map[string]int32{}
	for k, v := range n.hpaR {
		written[k] = v
	}
	n.mu.Unlock()
	var probs []string
	add := func(f string, a ...any) { probs = append(probs, fmt.Sprintf(f, a...)) }
	for _, name := range chaosKeys(written) {
		rs, err := env.Client.AppsV1().ReplicaSets(n.ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			add("hpa: replicaset %s: %v", name, err)
			continue
		}
		got, w := *rs.Spec.Replicas, written[name]
		// the HPA may have clamped the other ReplicaSet in a sync under way when it was switched
		if got != chaosHPAClamp(w) && (name == target || got != w) {
			add("hpa: replicaset %s at %d replicas, the test wrote %d (target of the HPA %v): want %d", name, got, w, name == target, chaosHPAClamp(w))
		}
	}
	h, err := env.Client.AutoscalingV2().HorizontalPodAutoscalers(n.ns).Get(ctx, "hpa", metav1.GetOptions{})
	if err != nil {
		return append(probs, "hpa: "+err.Error())
	}
	w := written[target]
	want := chaosHPAClamp(w)
	if h.Status.CurrentReplicas != want {
		add("hpa: status.currentReplicas %d, its target %s should be at %d", h.Status.CurrentReplicas, target, want)
	}
	if (w == 0 || w > chaosHPAMax) && h.Status.DesiredReplicas != want {
		add("hpa: status.desiredReplicas %d, want %d (the test wrote %d to %s)", h.Status.DesiredReplicas, want, w, target)
	}
	cond := func(typ autoscalingv2.HorizontalPodAutoscalerConditionType) *autoscalingv2.HorizontalPodAutoscalerCondition {
		for i := range h.Status.Conditions {
			if h.Status.Conditions[i].Type == typ {
				return &h.Status.Conditions[i]
			}
		}
		return nil
	}
	if c := cond(autoscalingv2.AbleToScale); c == nil || c.Status != corev1.ConditionTrue || c.Reason != "SucceededGetScale" {
		add("hpa: condition AbleToScale %v, want True/SucceededGetScale", c)
	}
	wantReason := "FailedGetResourceMetric"
	if w == 0 {
		wantReason = "ScalingDisabled"
	}
	if c := cond(autoscalingv2.ScalingActive); c == nil || c.Status != corev1.ConditionFalse || c.Reason != wantReason {
		add("hpa: condition ScalingActive %v, want False/%s (the test wrote %d to %s)", c, wantReason, w, target)
	}
	return probs
}

// quotaProblems checks the ResourceQuota and the PodDisruptionBudgets of the quota namespace.
func (n *chaosNodes) quotaProblems(ctx context.Context, pods map[string]*corev1.Pod) []string {
	var probs []string
	add := func(f string, a ...any) { probs = append(probs, fmt.Sprintf(f, a...)) }
	q, err := env.Client.CoreV1().ResourceQuotas(n.qns).Get(ctx, "rq", metav1.GetOptions{})
	if err != nil {
		return []string{"resourcequota: " + err.Error()}
	}
	cms, err := env.Client.CoreV1().ConfigMaps(n.qns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return []string{err.Error()}
	}
	secrets, err := env.Client.CoreV1().Secrets(n.qns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return []string{err.Error()}
	}
	live := 0
	for _, p := range pods {
		if p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed {
			live++
		}
	}
	want := map[corev1.ResourceName]int{corev1.ResourcePods: live, corev1.ResourceConfigMaps: len(cms.Items),
		corev1.ResourceSecrets: len(secrets.Items)}
	for r, w := range want {
		if u, ok := q.Status.Used[r]; !ok || u.Value() != int64(w) {
			// the writers' times and the last ConfigMap operations, to tell a lost
			// replenishment from a charge the admission made for a create that failed
			var mf []string
			for _, m := range q.ManagedFields {
				if m.Time != nil {
					mf = append(mf, fmt.Sprintf("%s %s %s", m.Manager, m.Operation, m.Time.UTC().Format("15:04:05")))
				}
			}
			n.mu.Lock()
			ql := n.qlog[max(0, len(n.qlog)-4):]
			n.mu.Unlock()
			add("resourcequota %s: used %s %s (present %v), want %d (writers %v; last ConfigMap operations %v)", n.qns, r, u.String(), ok, w,
				mf, ql)
		}
		h, hs := q.Status.Hard[r], q.Spec.Hard[r]
		if h.Cmp(hs) != 0 {
			add("resourcequota %s: status.hard %s %s, spec %s", n.qns, r, h.String(), hs.String())
		}
	}
	if len(q.Status.Used) != len(want) {
		add("resourcequota %s: used lists %d resources, want %d", n.qns, len(q.Status.Used), len(want))
	}
	for i, lbl := range []string{"a", "b"} {
		pdb, err := env.Client.PolicyV1().PodDisruptionBudgets(n.qns).Get(ctx, "pdb-"+lbl, metav1.GetOptions{})
		if err != nil {
			add("pdb-%s: %v", lbl, err)
			continue
		}
		expected, healthy := 0, 0
		for _, p := range pods {
			if p.Labels["chaos-pdb"] != lbl {
				continue
			}
			expected++
			if p.DeletionTimestamp == nil && isReady(p) {
				healthy++
			}
		}
		desired := i + 1
		allowed := max(0, healthy-desired)
		s := pdb.Status
		if s.ObservedGeneration != pdb.Generation || s.ExpectedPods != int32(expected) || s.CurrentHealthy != int32(healthy) ||
			s.DesiredHealthy != int32(desired) || s.DisruptionsAllowed != int32(allowed) {
			add("pdb-%s: generation %d observed %d, expectedPods %d currentHealthy %d desiredHealthy %d disruptionsAllowed %d; want %d %d %d %d",
				lbl, pdb.Generation, s.ObservedGeneration, s.ExpectedPods, s.CurrentHealthy, s.DesiredHealthy, s.DisruptionsAllowed,
				expected, healthy, desired, allowed)
		}
		wantSt, wantReason := metav1.ConditionFalse, policyv1.InsufficientPodsReason
		if allowed > 0 {
			wantSt, wantReason = metav1.ConditionTrue, policyv1.SufficientPodsReason
		}
		c := chaosFindCondition(s.Conditions, policyv1.DisruptionAllowedCondition)
		if c == nil || c.Status != wantSt || c.Reason != wantReason {
			add("pdb-%s: condition DisruptionAllowed %v, want %s/%s", lbl, c, wantSt, wantReason)
		}
	}
	return probs
}

// chaosTargetNode is the node a daemon pod is for: spec.nodeName once bound, else the node its
// required affinity names (matchFields metadata.name), as the DaemonSet controller reads it
// (there is no scheduler in the test cluster: daemon pods stay unbound).
func chaosTargetNode(p *corev1.Pod) string {
	if p.Spec.NodeName != "" {
		return p.Spec.NodeName
	}
	if a := p.Spec.Affinity; a != nil && a.NodeAffinity != nil && a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution != nil {
		for _, term := range a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms {
			for _, f := range term.MatchFields {
				if f.Key == "metadata.name" && f.Operator == corev1.NodeSelectorOpIn && len(f.Values) == 1 {
					return f.Values[0]
				}
			}
		}
	}
	return ""
}

func chaosFindCondition(cs []metav1.Condition, typ string) *metav1.Condition {
	for i := range cs {
		if cs[i].Type == typ {
			return &cs[i]
		}
	}
	return nil
}

func (n *chaosNodes) summary() string {
	n.mu.Lock()
	defer n.mu.Unlock()
	dead := 0
	for _, st := range n.nodes {
		if st.dead {
			dead++
		}
	}
	_, cluster, _ := net.ParseCIDR(chaosClusterCIDR)
	ones, _ := cluster.Mask.Size()
	return fmt.Sprintf("%d operations; %d nodes ever (%d at the end, %d dead, %d deleted; %d node CIDRs in the range: reuse exercised %v), "+
		"kubelet re-posted Ready %d times; %d DaemonSets ever (%d at the end); %d bare pods; %d TTL Jobs; %d CronJobs ever (%d at the end); "+
		"%d ephemeral-volume pods; %d quota/PDB pods; %d HPA target scalings and switches",
		n.ops, n.nodesEver, len(n.nodes), dead, len(n.deleted), 1<<(24-ones), n.nodesEver+1 > 1<<(24-ones), n.reposts,
		n.dsEver, len(n.ds), n.bareEver, len(n.ttlJobs), n.cjEver, len(n.cj), n.ephEver, n.qEver, n.hpaOps)
}

// ---- negative control --------------------------------------------------------------------------

// chaosNodesNegative runs after the churn with no kcmd left running: it breaks the settled end
// state once per oracle and checks that each break is reported.
func chaosNodesNegative(t *testing.T, n *chaosNodes) {
	ctx := context.Background()
	if probs := n.problems(ctx); len(probs) != 0 {
		t.Logf("before the injection (%d problems): %s", len(probs), strings.Join(probs, "; "))
	}
	n.mu.Lock()
	var live []string
	for name, st := range n.nodes {
		if !st.dead {
			live = append(live, name)
		}
	}
	sort.Strings(live)
	var dsAll string
	for _, name := range chaosKeys(n.ds) {
		if !n.ds[name] {
			dsAll = name
			break
		}
	}
	cjs := chaosKeys(n.cj)
	n.mu.Unlock()
	if len(live) < 2 || len(cjs) == 0 {
		t.Fatalf("the churn left %d live nodes and %d CronJobs: nothing to break", len(live), len(cjs))
	}
	var want []string
	c := env.Client
	// ttl: the annotation removed from a node
	node, err := c.CoreV1().Nodes().Get(ctx, live[0], metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	delete(node.Annotations, chaosTTLAnnotation)
	if _, err := c.CoreV1().Nodes().Update(ctx, node, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	want = append(want, fmt.Sprintf("node %s: %s annotation", live[0], chaosTTLAnnotation))
	// node IPAM: a node with no podCIDR
	if _, err := c.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "chaos-nodes-injected"}},
		metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	want = append(want, "node chaos-nodes-injected: no podCIDR")
	// node lifecycle and taint eviction: a live node taken for dead (no taint, its pods kept)
	n.mu.Lock()
	n.nodes[live[1]].dead = true
	n.mu.Unlock()
	if err := n.addBare(ctx, live[1], 0); err != nil {
		t.Fatal(err)
	}
	want = append(want, fmt.Sprintf("node %s: dead, Ready", live[1]), fmt.Sprintf("on the dead node %s, not evicted", live[1]))
	// pod GC: a pod on a deleted node, and more terminated pods than the threshold
	n.mu.Lock()
	n.deleted["chaos-nodes-gone"] = true
	n.mu.Unlock()
	spec := chaosPodSpec(0)
	spec.NodeName = "chaos-nodes-gone"
	if err := n.createPod(ctx, n.ns, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "injected-orphan"}, Spec: spec}); err != nil {
		t.Fatal(err)
	}
	want = append(want, "bound to the deleted node chaos-nodes-gone, still there")
	for i := 0; i <= chaosPodGCThreshold; i++ {
		if err := n.addQPod(ctx, "", false); err != nil {
			t.Fatal(err)
		}
	}
	n.mu.Lock()
	qpods := chaosKeys(n.qpod)
	n.mu.Unlock()
	for _, name := range qpods {
		n.mu.Lock()
		pdb := n.qpod[name]
		n.mu.Unlock()
		if pdb != "" {
			continue
		}
		if err := n.setQPhase(ctx, name, corev1.PodSucceeded, false); err != nil {
			t.Fatal(err)
		}
	}
	want = append(want, "pod GC: ")
	// DaemonSet: one of its pods on a live node deleted
	if dsAll != "" {
		pods, err := c.CoreV1().Pods(n.ns).List(ctx, metav1.ListOptions{LabelSelector: "chaos-ds=" + dsAll})
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range pods.Items {
			if chaosTargetNode(&p) == live[0] {
				if err := n.deletePod(ctx, n.ns, p.Name); err != nil {
					t.Fatal(err)
				}
			}
		}
		want = append(want, fmt.Sprintf("daemonset %s: node %s has 0 pods, want 1", dsAll, live[0]))
	} else {
		t.Logf("no DaemonSet over every node at the end: its break is skipped")
	}
	// CronJob: a Job for a minute its schedule never allowed
	cj, err := c.BatchV1().CronJobs(n.ns).Get(ctx, cjs[0], metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	fake := fmt.Sprintf("%s-%d", cj.Name, time.Now().Add(time.Hour).Unix()/60)
	if _, err := c.BatchV1().Jobs(n.ns).Create(ctx, &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: fake,
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "batch/v1", Kind: "CronJob", Name: cj.Name, UID: cj.UID, Controller: ptr.To(true)}}},
		Spec: batchv1.JobSpec{Suspend: ptr.To(true), Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever,
			Containers: []corev1.Container{{Name: "c", Image: "registry.k8s.io/pause:3.10"}}}}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	want = append(want, fmt.Sprintf("cronjob %s: job %s for a minute its schedule does not allow", cj.Name, fake))
	// TTL after finished: a Job with a TTL that is still there
	if err := n.createTTLJob(ctx, 0); err != nil {
		t.Fatal(err)
	}
	n.mu.Lock()
	ttl := n.ttlJobs[len(n.ttlJobs)-1]
	n.mu.Unlock()
	want = append(want, fmt.Sprintf("ttl job %s: still there", ttl))
	// ephemeral volume: a pod with no PVC
	if err := n.addEph(ctx); err != nil {
		t.Fatal(err)
	}
	n.mu.Lock()
	eph := fmt.Sprintf("eph-%03d", n.next-1)
	n.mu.Unlock()
	want = append(want, fmt.Sprintf("ephemeral pod %s: no PVC", eph))
	// resource quota: a ConfigMap deleted with no controller to replenish the quota (a create
	// would not do: the apiserver's quota admission charges it itself); PDB: a Ready pod more
	if err := c.CoreV1().ConfigMaps(n.qns).Delete(ctx, "kube-root-ca.crt", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	want = append(want, fmt.Sprintf("resourcequota %s: used configmaps", n.qns))
	if err := n.addQPod(ctx, "a", true); err != nil {
		t.Fatal(err)
	}
	want = append(want, "pdb-a: generation")
	// HPA: its target above the maximum
	n.mu.Lock()
	target := n.hpaTarget
	n.mu.Unlock()
	if err := n.hpaScale(ctx, target, chaosHPAMax+2); err != nil {
		t.Fatal(err)
	}
	want = append(want, fmt.Sprintf("hpa: replicaset %s at %d replicas", target, chaosHPAMax+2))
	all := n.problems(ctx)
	probs := strings.Join(all, "\n")
	for _, w := range want {
		if !strings.Contains(probs, w) {
			t.Errorf("negative control: an injected break went unreported: want a problem %q, got:\n%s", w, probs)
		}
	}
	if !t.Failed() {
		t.Logf("negative control: the oracles reported every injected break (%d problems):\n%s", len(all), probs)
	}
}
