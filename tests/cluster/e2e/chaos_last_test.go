// SPDX-License-Identifier: Apache-2.0

package e2e

// The chaos suite's churn over the last three controllers the other chaos files leave out
// (issue 21), in the same TestChaos run and under the same faults, in namespace chaos-last:
//   - device-taint-eviction-controller: a ResourceSlice of driver chaos-dte.example.com on
//     chaos-infra-node (a Node of chaos_infra_test.go's, never heartbeating: a new node would
//     change the zone's health and use a node CIDR chaos_nodes_test.go counts) with devices
//     dev-0..dev-11, dev-0 and dev-1 tainted NoExecute in the slice; during the churn
//     DeviceTaintRules (NoExecute) for more devices (at most 4, never deleted: a device's taint
//     only ever appears), and pods bound to the node, each with a claim the test allocates to a
//     random device and reserves for it as the scheduler would (tolerating every NoExecute
//     device taint, one in three), and pods deleted by the test (grace 0). Oracle: every pod of
//     a tainted device that does not tolerate is evicted (deletionTimestamp, and DisruptionTarget
//     True DeletionByDeviceTaintManager "Device Taint manager: deleting due to NoExecute taint");
//     every other pod untouched (no deletionTimestamp, no DisruptionTarget); and, from the audit
//     log, no pod DELETEd more than once by kcmd (nothing evicted twice, through kills and
//     failovers). The pods keep a grace period of 30 s (no kubelet: an evicted pod stays
//     terminating, where the oracle can read its condition) and tolerate every pod taint (the
//     node never heartbeats).
//   - persistentvolume-attach-detach-controller: chaos-infra-node and chaos-more-node are made
//     controller-managed (volumes.kubernetes.io/controller-managed-attach-detach); pods using a
//     pre-bound CSI volume of driver chaos-ad.csi.kcmd.test (ReadWriteOncePod, no CSIDriver
//     object: attach required) are created on either and deleted (grace 0); the test plays the
//     external attacher (every VolumeAttachment of the driver marked attached) and no kubelet
//     reports a volume in use. Oracle (attachdetach_crash_test.go's): exactly the
//     VolumeAttachments of the live pods' volumes on their nodes exist, upstream's names, and
//     each node's status.volumesAttached is exactly those volumes; none for a deleted pod.
//   - podcertificaterequest-cleaner: PodCertificateRequests created through the churn; the
//     chaos instances run with KCMD_TEST_PCR_THRESHOLD_MS=5000 and KCMD_TEST_PCR_INTERVAL_MS=1000
//     (kcm's 15 and 5 minutes have no flag). Oracle: a request at least threshold + 3 s old
//     (creationTimestamp) is gone, and no request was ever seen gone before it was threshold
//     old (upstream deletes iff now >= created + threshold, whatever the status).
//
// chaosLastNegative (in subtest RestNegativeControl, no kcmd running) makes one break per
// oracle that only a running controller would resolve, plus the breaks a wrong controller
// would make, and passes only if each is reported.

import (
	"bufio"
	"context"
	"crypto/ed25519"
	crand "crypto/rand"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	certsv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
)

const (
	chaosLastNS      = "chaos-last"
	chaosDTEDriver   = "chaos-dte.example.com"
	chaosDTEClass    = "chaos-dte-class"
	chaosDTEKey      = "kcmd.test/chaos-broken"
	chaosDTEDevices  = 12
	chaosADDriver    = "chaos-ad.csi.kcmd.test"
	chaosPCRThresh   = 5 * time.Second
	chaosPCRInterval = time.Second
	chaosPCRMargin   = 3 * time.Second
)

// chaosLastEnv: the test seams the chaos instances run with (the cleaner's durations).
var chaosLastEnv = []string{fmt.Sprintf("KCMD_TEST_PCR_THRESHOLD_MS=%d", chaosPCRThresh.Milliseconds()),
	fmt.Sprintf("KCMD_TEST_PCR_INTERVAL_MS=%d", chaosPCRInterval.Milliseconds())}

type chaosDTEPod struct {
	dev       int
	tolerates bool
}

type chaosLast struct {
	mu      sync.Mutex
	next    int
	adNodes []string
	// device taint eviction
	tainted  map[int]bool           // device -> tainted NoExecute (slice or rule)
	rules    int                    // DeviceTaintRules made
	dtePods  map[string]chaosDTEPod // live (not deleted by the test) -> device
	dteEver  int
	dteGone  int
	dteNeg   map[string]bool // pods the negative control deleted as a wrong evictor would
	adPods   map[string]adCrashPod
	adEver   int
	adGone   int
	pcrs     map[string]time.Time // request -> creationTimestamp
	pcrEarly map[string]string    // request seen gone before its threshold -> when
	pcrGone  int
}

func (l *chaosLast) id() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.next++
	return l.next
}

func newChaosLast(ctx context.Context, t *testing.T) *chaosLast {
	t.Helper()
	l := &chaosLast{adNodes: []string{chaosInfraNode, "chaos-more-node"}, tainted: map[int]bool{0: true, 1: true},
		dtePods: map[string]chaosDTEPod{}, dteNeg: map[string]bool{}, adPods: map[string]adCrashPod{},
		pcrs: map[string]time.Time{}, pcrEarly: map[string]string{}}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("chaos_last setup: %v", err)
		}
	}
	_, err := env.Client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: chaosLastNS}},
		metav1.CreateOptions{})
	must(err)
	for _, n := range l.adNodes {
		_, err := env.Client.CoreV1().Nodes().Patch(ctx, n, types.MergePatchType,
			[]byte(`{"metadata":{"annotations":{"`+adAnnManaged+`":"true"}}}`), metav1.PatchOptions{})
		must(err)
	}
	_, err = env.Client.ResourceV1().DeviceClasses().Create(ctx, &resourcev1.DeviceClass{ObjectMeta: metav1.ObjectMeta{Name: chaosDTEClass}},
		metav1.CreateOptions{})
	must(err)
	s := &resourcev1.ResourceSlice{ObjectMeta: metav1.ObjectMeta{Name: "chaos-dte-slice"},
		Spec: resourcev1.ResourceSliceSpec{Driver: chaosDTEDriver, NodeName: ptr.To(chaosInfraNode),
			Pool: resourcev1.ResourcePool{Name: "pool", Generation: 1, ResourceSliceCount: 1}}}
	for i := 0; i < chaosDTEDevices; i++ {
		d := resourcev1.Device{Name: fmt.Sprintf("dev-%d", i)}
		if l.tainted[i] {
			d.Taints = []resourcev1.DeviceTaint{{Key: chaosDTEKey, Value: "slice", Effect: resourcev1.DeviceTaintEffectNoExecute}}
		}
		s.Spec.Devices = append(s.Spec.Devices, d)
	}
	_, err = env.Client.ResourceV1().ResourceSlices().Create(ctx, s, metav1.CreateOptions{})
	must(err)
	return l
}

func (l *chaosLast) step(ctx context.Context, rng *rand.Rand) error {
	if err := chaosADAttachAll(ctx); err != nil {
		return err
	}
	switch k := rng.Intn(20); {
	case k < 5:
		_, err := l.addDTEPod(ctx, rng.Intn(chaosDTEDevices), rng.Intn(3) == 0)
		return err
	case k < 6:
		return l.addRule(ctx, rng)
	case k < 8:
		return l.deleteDTEPod(ctx, rng)
	case k < 14:
		return l.adStep(ctx, rng)
	default:
		if _, err := l.addPCR(ctx); err != nil {
			return err
		}
		// a look for a request deleted before its threshold (kept until the settle reports it)
		_ = l.pcrProblems(ctx)
		return nil
	}
}

// ---- device taint eviction ---------------------------------------------------------------------

func (l *chaosLast) addRule(ctx context.Context, rng *rand.Rand) error {
	l.mu.Lock()
	var free []int
	for i := 0; i < chaosDTEDevices; i++ {
		if !l.tainted[i] {
			free = append(free, i)
		}
	}
	full := l.rules >= 4
	l.mu.Unlock()
	if full || len(free) == 0 {
		return nil
	}
	dev := free[rng.Intn(len(free))]
	if err := chaosCreate(func() error {
		_, err := env.Client.ResourceV1().DeviceTaintRules().Create(ctx, &resourcev1.DeviceTaintRule{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("chaos-dte-rule-dev-%d", dev)},
			Spec: resourcev1.DeviceTaintRuleSpec{
				DeviceSelector: &resourcev1.DeviceTaintSelector{Driver: ptr.To(chaosDTEDriver), Pool: ptr.To("pool"),
					Device: ptr.To(fmt.Sprintf("dev-%d", dev))},
				Taint: resourcev1.DeviceTaint{Key: chaosDTEKey, Value: "rule", Effect: resourcev1.DeviceTaintEffectNoExecute}}},
			metav1.CreateOptions{})
		return err
	}); err != nil {
		return err
	}
	l.mu.Lock()
	l.tainted[dev] = true
	l.rules++
	l.mu.Unlock()
	return nil
}

// addDTEPod: claim <name> and pod <name> on chaos-infra-node using it, then the claim allocated
// to device dev (tolerating every NoExecute device taint if tol) and reserved for the pod.
func (l *chaosLast) addDTEPod(ctx context.Context, dev int, tol bool) (string, error) {
	name := fmt.Sprintf("chaos-dte-%03d", l.id())
	claims := env.Client.ResourceV1().ResourceClaims(chaosLastNS)
	if err := chaosCreate(func() error {
		_, err := claims.Create(ctx, &resourcev1.ResourceClaim{ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: resourcev1.ResourceClaimSpec{Devices: resourcev1.DeviceClaim{Requests: []resourcev1.DeviceRequest{
				{Name: "req-0", Exactly: &resourcev1.ExactDeviceRequest{DeviceClassName: chaosDTEClass}}}}}},
			metav1.CreateOptions{})
		return err
	}); err != nil {
		return "", err
	}
	var pod *corev1.Pod
	if err := chaosRetry(func() error {
		var err error
		pod, err = env.Client.CoreV1().Pods(chaosLastNS).Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: corev1.PodSpec{NodeName: chaosInfraNode, TerminationGracePeriodSeconds: ptr.To[int64](30),
				Tolerations:    []corev1.Toleration{{Operator: corev1.TolerationOpExists}},
				ResourceClaims: []corev1.PodResourceClaim{{Name: "dev", ResourceClaimName: ptr.To(name)}},
				Containers: []corev1.Container{{Name: "c", Image: "registry.k8s.io/pause:3.10",
					Resources: corev1.ResourceRequirements{Claims: []corev1.ResourceClaim{{Name: "dev"}}}}}}},
			metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) {
			pod, err = env.Client.CoreV1().Pods(chaosLastNS).Get(ctx, name, metav1.GetOptions{})
		}
		return err
	}); err != nil {
		return "", err
	}
	var tols []resourcev1.DeviceToleration
	if tol {
		tols = []resourcev1.DeviceToleration{{Operator: resourcev1.DeviceTolerationOpExists, Effect: resourcev1.DeviceTaintEffectNoExecute}}
	}
	if err := chaosRetry(func() error {
		c, err := claims.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		c.Status.Allocation = &resourcev1.AllocationResult{Devices: resourcev1.DeviceAllocationResult{
			Results: []resourcev1.DeviceRequestAllocationResult{{Request: "req-0", Driver: chaosDTEDriver, Pool: "pool",
				Device: fmt.Sprintf("dev-%d", dev), Tolerations: tols}}}}
		c.Status.ReservedFor = []resourcev1.ResourceClaimConsumerReference{{Resource: "pods", Name: name, UID: pod.UID}}
		_, err = claims.UpdateStatus(ctx, c, metav1.UpdateOptions{})
		return err
	}); err != nil {
		return "", err
	}
	l.mu.Lock()
	l.dtePods[name] = chaosDTEPod{dev: dev, tolerates: tol}
	l.dteEver++
	l.mu.Unlock()
	return name, nil
}

func (l *chaosLast) deleteDTEPod(ctx context.Context, rng *rand.Rand) error {
	l.mu.Lock()
	pods := chaosKeys(l.dtePods)
	l.mu.Unlock()
	if len(pods) < 4 {
		return nil
	}
	name := pods[rng.Intn(len(pods))]
	if err := chaosDelete(func() error {
		return env.Client.CoreV1().Pods(chaosLastNS).Delete(ctx, name, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)})
	}); err != nil {
		return err
	}
	l.mu.Lock()
	delete(l.dtePods, name)
	l.dteGone++
	l.mu.Unlock()
	return nil
}

func (l *chaosLast) dteProblems(ctx context.Context) []string {
	l.mu.Lock()
	pods := map[string]chaosDTEPod{}
	for k, v := range l.dtePods {
		pods[k] = v
	}
	tainted := map[int]bool{}
	for k, v := range l.tainted {
		tainted[k] = v
	}
	l.mu.Unlock()
	list, err := env.Client.CoreV1().Pods(chaosLastNS).List(ctx, metav1.ListOptions{})
	if err != nil {
		return []string{"device-taint pods: " + err.Error()}
	}
	byName := map[string]*corev1.Pod{}
	for i := range list.Items {
		byName[list.Items[i].Name] = &list.Items[i]
	}
	var probs []string
	for _, n := range chaosKeys(pods) {
		want := pods[n]
		p := byName[n]
		if p == nil {
			probs = append(probs, fmt.Sprintf("device-taint pod %s: gone (only the test deletes one with grace 0)", n))
			continue
		}
		var cond *corev1.PodCondition
		for i := range p.Status.Conditions {
			if p.Status.Conditions[i].Type == corev1.DisruptionTarget {
				cond = &p.Status.Conditions[i]
			}
		}
		evict := tainted[want.dev] && !want.tolerates
		switch {
		case evict && (p.DeletionTimestamp == nil || cond == nil || cond.Status != corev1.ConditionTrue ||
			cond.Reason != "DeletionByDeviceTaintManager" || cond.Message != "Device Taint manager: deleting due to NoExecute taint"):
			probs = append(probs, fmt.Sprintf("device-taint pod %s (dev-%d tainted, no toleration): not evicted: deletionTimestamp %v, DisruptionTarget %+v",
				n, want.dev, p.DeletionTimestamp, cond))
		case !evict && (p.DeletionTimestamp != nil || cond != nil):
			probs = append(probs, fmt.Sprintf("device-taint pod %s (dev-%d tainted %v, tolerates %v): evicted: deletionTimestamp %v, DisruptionTarget %+v",
				n, want.dev, tainted[want.dev], want.tolerates, p.DeletionTimestamp, cond))
		}
	}
	return probs
}

// dteAuditProblems: a pod of chaos-last DELETEd (successfully) more than once by kcmd's users
// (evicted twice).
func (l *chaosLast) dteAuditProblems(path string) ([]string, int, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	dels := map[string]int{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var e auditEvent
		if json.Unmarshal(sc.Bytes(), &e) != nil || e.Stage != "ResponseComplete" || e.ObjectRef == nil ||
			e.Verb != "delete" || e.ObjectRef.Resource != "pods" || e.ObjectRef.Namespace != chaosLastNS ||
			e.ResponseStatus == nil || e.ResponseStatus.Code < 200 || e.ResponseStatus.Code >= 300 {
			continue
		}
		if e.User.Username == chaosUsers[0] || e.User.Username == chaosUsers[1] {
			dels[e.ObjectRef.Name]++
		}
	}
	if err := sc.Err(); err != nil {
		return nil, 0, err
	}
	var probs []string
	for _, n := range chaosKeys(dels) {
		if dels[n] > 1 {
			probs = append(probs, fmt.Sprintf("device-taint pod %s: DELETEd %d times by kcmd (evicted twice)", n, dels[n]))
		}
	}
	return probs, len(dels), nil
}

// ---- attach/detach -----------------------------------------------------------------------------

// chaosADAttachAll plays the external attacher (adAttachAll, with the chaos's retries).
func chaosADAttachAll(ctx context.Context) error {
	var l *storagev1.VolumeAttachmentList
	if err := chaosRetry(func() error {
		var err error
		l, err = chaosListVAs(ctx)
		return err
	}); err != nil {
		return err
	}
	for i := range l.Items {
		va := &l.Items[i]
		if va.Spec.Attacher != chaosADDriver || va.Status.Attached || va.DeletionTimestamp != nil {
			continue
		}
		va.Status.Attached = true
		// a conflict or a VolumeAttachment deleted meanwhile is taken at the next round
		_, _ = env.Client.StorageV1().VolumeAttachments().UpdateStatus(ctx, va, metav1.UpdateOptions{})
	}
	return nil
}

func (l *chaosLast) adStep(ctx context.Context, rng *rand.Rand) error {
	l.mu.Lock()
	pods := adSortedKeys(l.adPods)
	l.mu.Unlock()
	if len(pods) < 3 || (len(pods) < 6 && rng.Intn(2) == 0) {
		_, err := l.addADPod(ctx, l.adNodes[rng.Intn(len(l.adNodes))])
		return err
	}
	return l.deleteADPod(ctx, pods[rng.Intn(len(pods))])
}

// addADPod: a pre-bound claim and CSI volume (handle = the volume's name), the claim marked
// Bound as the binder would, then a pod on node using it.
func (l *chaosLast) addADPod(ctx context.Context, node string) (string, error) {
	i := l.id()
	name, pv := fmt.Sprintf("chaos-ad-%03d", i), fmt.Sprintf("chaos-ad-pv-%03d", i)
	q := corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}
	pvcs := env.Client.CoreV1().PersistentVolumeClaims(chaosLastNS)
	var c *corev1.PersistentVolumeClaim
	if err := chaosRetry(func() error {
		var err error
		c, err = pvcs.Create(ctx, &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: corev1.PersistentVolumeClaimSpec{AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOncePod},
				Resources: corev1.VolumeResourceRequirements{Requests: q}, StorageClassName: ptr.To(""), VolumeName: pv}},
			metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) {
			c, err = pvcs.Get(ctx, name, metav1.GetOptions{})
		}
		return err
	}); err != nil {
		return "", err
	}
	if err := chaosCreate(func() error {
		_, err := env.Client.CoreV1().PersistentVolumes().Create(ctx, &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: pv},
			Spec: corev1.PersistentVolumeSpec{Capacity: q, AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOncePod},
				PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimRetain,
				ClaimRef: &corev1.ObjectReference{Kind: "PersistentVolumeClaim", APIVersion: "v1", Namespace: chaosLastNS,
					Name: name, UID: c.UID},
				PersistentVolumeSource: corev1.PersistentVolumeSource{CSI: &corev1.CSIPersistentVolumeSource{
					Driver: chaosADDriver, VolumeHandle: pv}}}}, metav1.CreateOptions{})
		return err
	}); err != nil {
		return "", err
	}
	if err := chaosRetry(func() error {
		c, err := pvcs.Get(ctx, name, metav1.GetOptions{})
		if err != nil || c.Status.Phase == corev1.ClaimBound {
			return err
		}
		c.Status.Phase = corev1.ClaimBound
		c.Status.AccessModes = c.Spec.AccessModes
		c.Status.Capacity = q
		_, err = pvcs.UpdateStatus(ctx, c, metav1.UpdateOptions{})
		return err
	}); err != nil {
		return "", err
	}
	if err := chaosCreate(func() error {
		_, err := env.Client.CoreV1().Pods(chaosLastNS).Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: corev1.PodSpec{NodeName: node, TerminationGracePeriodSeconds: ptr.To[int64](0),
				Tolerations: []corev1.Toleration{{Operator: corev1.TolerationOpExists}},
				Containers:  []corev1.Container{{Name: "c", Image: "registry.k8s.io/pause:3.10"}},
				Volumes: []corev1.Volume{{Name: "v", VolumeSource: corev1.VolumeSource{
					PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: name}}}}}},
			metav1.CreateOptions{})
		return err
	}); err != nil {
		return "", err
	}
	l.mu.Lock()
	l.adPods[name] = adCrashPod{node: node, pv: pv}
	l.adEver++
	l.mu.Unlock()
	return name, nil
}

func (l *chaosLast) deleteADPod(ctx context.Context, name string) error {
	if err := chaosDelete(func() error {
		return env.Client.CoreV1().Pods(chaosLastNS).Delete(ctx, name, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)})
	}); err != nil {
		return err
	}
	l.mu.Lock()
	delete(l.adPods, name)
	l.adGone++
	l.mu.Unlock()
	return nil
}

// adProblems: adCrashVerdict's look, once.
func (l *chaosLast) adProblems(ctx context.Context) []string {
	l.mu.Lock()
	live := map[string]adCrashPod{}
	for k, v := range l.adPods {
		live[k] = v
	}
	l.mu.Unlock()
	if err := chaosADAttachAll(ctx); err != nil {
		return []string{"attach-detach: listing VolumeAttachments: " + err.Error()}
	}
	var probs []string
	want := map[string]string{} // VolumeAttachment -> pod
	wantNode := map[string]map[string]bool{}
	for _, n := range l.adNodes {
		wantNode[n] = map[string]bool{}
	}
	for pod, lp := range live {
		want[adVAName(lp.pv, chaosADDriver, lp.node)] = pod
		wantNode[lp.node][adUnique(chaosADDriver, lp.pv)] = true
	}
	vas, err := chaosListVAs(ctx)
	if err != nil {
		return []string{"attach-detach: " + err.Error()}
	}
	seen := map[string]bool{}
	for _, va := range vas.Items {
		if va.Spec.Attacher != chaosADDriver {
			continue
		}
		seen[va.Name] = true
		if _, ok := want[va.Name]; !ok {
			probs = append(probs, fmt.Sprintf("attach-detach: VolumeAttachment %s (volume %s, node %s) of no live pod still there",
				va.Name, ptr.Deref(va.Spec.Source.PersistentVolumeName, ""), va.Spec.NodeName))
		}
	}
	for name, pod := range want {
		if !seen[name] {
			probs = append(probs, fmt.Sprintf("attach-detach: pod %s: no VolumeAttachment %s", pod, name))
		}
	}
	for _, n := range l.adNodes {
		node, err := env.Client.CoreV1().Nodes().Get(ctx, n, metav1.GetOptions{})
		if err != nil {
			probs = append(probs, fmt.Sprintf("attach-detach: node %s: %v", n, err))
			continue
		}
		got := map[string]bool{}
		for _, av := range node.Status.VolumesAttached {
			if strings.HasPrefix(string(av.Name), "kubernetes.io/csi/"+chaosADDriver+"^") {
				got[string(av.Name)] = true
			}
		}
		for u := range wantNode[n] {
			if !got[u] {
				probs = append(probs, fmt.Sprintf("attach-detach: node %s: %s not in volumesAttached", n, u))
			}
		}
		for u := range got {
			if !wantNode[n][u] {
				probs = append(probs, fmt.Sprintf("attach-detach: node %s: %s in volumesAttached, no live pod uses it", n, u))
			}
		}
	}
	sort.Strings(probs)
	return probs
}

// ---- PodCertificateRequests --------------------------------------------------------------------

func (l *chaosLast) addPCR(ctx context.Context) (string, error) {
	name := fmt.Sprintf("chaos-pcr-%03d", l.id())
	_, priv, err := ed25519.GenerateKey(crand.Reader)
	if err != nil {
		return "", err
	}
	stub, err := x509.CreateCertificateRequest(crand.Reader, &x509.CertificateRequest{}, priv)
	if err != nil {
		return "", err
	}
	pcrs := env.Client.CertificatesV1().PodCertificateRequests(chaosLastNS)
	var p *certsv1.PodCertificateRequest
	if err := chaosRetry(func() error {
		var err error
		p, err = pcrs.Create(ctx, &certsv1.PodCertificateRequest{ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: certsv1.PodCertificateRequestSpec{SignerName: "chaos.kcmd.test/pcr", PodName: "pod-1", PodUID: "pod-uid-1",
				ServiceAccountName: "sa-1", ServiceAccountUID: "sa-uid-1", NodeName: "node-1", NodeUID: "node-uid-1",
				MaxExpirationSeconds: ptr.To[int32](86400), StubPKCS10Request: stub}}, metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) {
			p, err = pcrs.Get(ctx, name, metav1.GetOptions{})
		}
		return err
	}); err != nil {
		if apierrors.IsNotFound(err) {
			// created, and already deleted by the cleaner before the test could read it back
			return name, nil
		}
		return "", err
	}
	l.mu.Lock()
	l.pcrs[name] = p.CreationTimestamp.Time
	l.mu.Unlock()
	return name, nil
}

func (l *chaosLast) pcrProblems(ctx context.Context) []string {
	l.mu.Lock()
	pcrs := map[string]time.Time{}
	for k, v := range l.pcrs {
		pcrs[k] = v
	}
	l.mu.Unlock()
	list, err := env.Client.CertificatesV1().PodCertificateRequests(chaosLastNS).List(ctx, metav1.ListOptions{})
	if err != nil {
		return []string{"podcertificaterequests: " + err.Error()}
	}
	// the time of the look: the list came after it, so anything missing from the list went
	// before it, anything in it was there at it
	now := time.Now()
	live := map[string]bool{}
	for _, p := range list.Items {
		live[p.Name] = true
	}
	var probs []string
	l.mu.Lock()
	for _, n := range chaosKeys(pcrs) {
		due := pcrs[n].Add(chaosPCRThresh)
		switch {
		case !live[n] && l.pcrEarly[n] == "" && now.Before(due):
			l.pcrEarly[n] = fmt.Sprintf("podcertificaterequest %s: deleted before its threshold: gone %.1f s after creation",
				n, now.Sub(pcrs[n]).Seconds())
		case live[n] && now.After(due.Add(chaosPCRMargin)):
			probs = append(probs, fmt.Sprintf("podcertificaterequest %s: %.1f s old, still there (threshold %s)",
				n, now.Sub(pcrs[n]).Seconds(), chaosPCRThresh))
		}
	}
	for _, n := range chaosKeys(l.pcrEarly) {
		probs = append(probs, l.pcrEarly[n])
	}
	l.pcrGone = 0
	for n := range pcrs {
		if !live[n] {
			l.pcrGone++
		}
	}
	l.mu.Unlock()
	return probs
}

// ---- all ---------------------------------------------------------------------------------------

func (l *chaosLast) problems(ctx context.Context) []string {
	probs := l.dteProblems(ctx)
	probs = append(probs, l.adProblems(ctx)...)
	return append(probs, l.pcrProblems(ctx)...)
}

func (l *chaosLast) summary() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	evict, tol := 0, 0
	for _, p := range l.dtePods {
		if l.tainted[p.dev] && !p.tolerates {
			evict++
		} else if l.tainted[p.dev] {
			tol++
		}
	}
	return fmt.Sprintf("device-taint: %d pods ever (%d deleted by the test), %d DeviceTaintRules, %d devices tainted, "+
		"%d pods evicted exactly, %d tolerating a taint kept, %d untainted kept; attach-detach: %d pods ever (%d deleted), %d live "+
		"with their VolumeAttachments; %d PodCertificateRequests (%d deleted by the cleaner)",
		l.dteEver, l.dteGone, l.rules, len(l.tainted), evict, tol, len(l.dtePods)-evict-tol, l.adEver, l.adGone, len(l.adPods),
		len(l.pcrs), l.pcrGone)
}

// chaosLastNegative: with no kcmd running, a break per oracle; each must be reported. between
// runs after the breaks are made and before they are checked (the PCR break needs the
// threshold to pass).
func chaosLastNegative(t *testing.T, l *chaosLast, audit string, between func()) {
	ctx := context.Background()
	if probs := l.problems(ctx); len(probs) != 0 {
		t.Logf("before the injection (%d problems): %s", len(probs), strings.Join(probs, "; "))
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	// a stale request nobody cleans
	pcr, err := l.addPCR(ctx)
	must(err)
	// a pod on a tainted device that does not tolerate: nobody evicts it
	victim, err := l.addDTEPod(ctx, 0, false)
	must(err)
	// a pod that must stay, deleted as a wrong evictor would (grace period kept)
	l.mu.Lock()
	wrong := ""
	var wp chaosDTEPod
	for _, n := range chaosKeys(l.dtePods) {
		if p := l.dtePods[n]; !l.tainted[p.dev] || p.tolerates {
			wrong, wp = n, p
			break
		}
	}
	l.mu.Unlock()
	if wrong == "" {
		wp = chaosDTEPod{dev: chaosDTEDevices - 1, tolerates: true}
		wrong, err = l.addDTEPod(ctx, wp.dev, wp.tolerates)
		must(err)
	}
	l.mu.Lock()
	wrongTainted := l.tainted[wp.dev]
	l.mu.Unlock()
	must(env.Client.CoreV1().Pods(chaosLastNS).Delete(ctx, wrong, metav1.DeleteOptions{}))
	// a pod's volume nobody attaches, and (if one is live) a pod deleted whose VolumeAttachment
	// nobody removes
	l.mu.Lock()
	adLive := adSortedKeys(l.adPods)
	l.mu.Unlock()
	gone := ""
	if len(adLive) > 0 {
		gone = adLive[0]
		must(l.deleteADPod(ctx, gone))
	}
	adNew, err := l.addADPod(ctx, l.adNodes[0])
	must(err)
	between()
	l.mu.Lock()
	created := l.pcrs[pcr]
	l.mu.Unlock()
	time.Sleep(time.Until(created.Add(chaosPCRThresh + chaosPCRMargin + time.Second)))

	all := l.problems(ctx)
	probs := strings.Join(all, "\n")
	wants := []string{
		fmt.Sprintf("podcertificaterequest %s: ", pcr),
		fmt.Sprintf("device-taint pod %s (dev-0 tainted, no toleration): not evicted", victim),
		fmt.Sprintf("device-taint pod %s (dev-%d tainted %v, tolerates %v): evicted: deletionTimestamp", wrong, wp.dev, wrongTainted, wp.tolerates),
		fmt.Sprintf("attach-detach: pod %s: no VolumeAttachment", adNew),
	}
	if gone != "" {
		wants = append(wants, "of no live pod still there")
	}
	for _, want := range wants {
		if !strings.Contains(probs, want) {
			t.Errorf("negative control: an injected break went unreported: want a problem %q, got:\n%s", want, probs)
		}
	}
	// the evicted-twice oracle counts kcmd's successful DELETEs per pod in the audit log; no
	// kcmd runs here to make a second one, so what is checked is that it sees the first: one
	// per pod the churn saw evicted
	l.mu.Lock()
	evicted := 0
	for _, p := range l.dtePods {
		if l.tainted[p.dev] && !p.tolerates {
			evicted++
		}
	}
	l.mu.Unlock()
	evicted-- // the victim above
	if _, n, err := l.dteAuditProblems(audit); err != nil {
		t.Error(err)
	} else if n < evicted {
		t.Errorf("negative control: %d pods were evicted in the churn, the audit log shows kcmd DELETEs of %d: the evicted-twice oracle is blind", evicted, n)
	} else {
		t.Logf("negative control: the audit log holds kcmd DELETEs of %d pods of %s (%d evicted pods live)", n, chaosLastNS, evicted)
	}
	if !t.Failed() {
		t.Logf("negative control: the oracles reported every injected break (%d problems):\n%s", len(all), probs)
	}
}

func chaosListVAs(ctx context.Context) (*storagev1.VolumeAttachmentList, error) {
	return env.Client.StorageV1().VolumeAttachments().List(ctx, metav1.ListOptions{})
}
