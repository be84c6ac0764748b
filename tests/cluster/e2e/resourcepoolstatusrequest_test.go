package e2e

// kcmd's resourcepoolstatusrequest-controller (docs/resourcepoolstatusrequest.md) against the real
// apiserver, upstream kube-controller-manager not running. ResourcePoolStatusRequests
// (resource.k8s.io/v1alpha3) exist only with the DRAResourcePoolStatus gate (alpha, off in v1.37)
// and the alpha API turned on, so the scenarios run on a private cluster whose apiserver has both
// (and DRAPartitionableDevicesType, so slices keep partitionTypeAttribute); kcmd runs the
// controller alone with --feature-gates=DRAResourcePoolStatus=true, as its own service account
// (kcm's bootstrap role system:controller:resourcepoolstatusrequest-controller must allow every
// request).
//
// The cases are upstream's controller_test.go scenarios (TestCalculatePoolStatus, _DeviceCounts,
// _PartitionSummary, _ShareableSummary, TestSyncRequestRequeuesIncompletePool,
// TestCleanupExpiredRequests) on real objects: ResourceSlices are published by the test as a
// driver would, claims are "allocated" by writing status.allocation, and the request's status is
// read back as the controller wrote it through the status subresource.

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	resourcev1 "k8s.io/api/resource/v1"
	resourcev1alpha3 "k8s.io/api/resource/v1alpha3"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"kcmd.local/tests/cluster/harness"
)

var rpsrClusterOptions = harness.Options{ExtraAPIServerFlags: []string{
	"--feature-gates=DRAResourcePoolStatus=true,DRAPartitionableDevicesType=true",
	"--runtime-config=resource.k8s.io/v1alpha3=true"}}

func rpsrFlags(gate bool) []string {
	flags := []string{"--controllers=resourcepoolstatusrequest-controller", "--secure-port=0",
		"--leader-elect=false", "--use-service-account-credentials", "--v=4"}
	if gate {
		flags = append(flags, "--feature-gates=DRAResourcePoolStatus=true")
	}
	return flags
}

// rpsrSlice publishes a ResourceSlice of driver/pool with n plain devices device-0.. (the first
// tainted ones carry a taint of effect taint), at generation gen of count slices.
func rpsrSlice(t *testing.T, name, driver, pool, node string, n int, gen, count int64, tainted int, taint resourcev1.DeviceTaintEffect) {
	t.Helper()
	s := &resourcev1.ResourceSlice{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: resourcev1.ResourceSliceSpec{
			Driver: driver,
			Pool:   resourcev1.ResourcePool{Name: pool, Generation: gen, ResourceSliceCount: count},
		},
	}
	if node != "" {
		s.Spec.NodeName = ptr.To(node)
	} else {
		s.Spec.AllNodes = ptr.To(true)
	}
	for i := 0; i < n; i++ {
		d := resourcev1.Device{Name: fmt.Sprintf("device-%d", i)}
		if i < tainted {
			d.Taints = []resourcev1.DeviceTaint{{Key: "example.com/maintenance", Effect: taint}}
		}
		s.Spec.Devices = append(s.Spec.Devices, d)
	}
	rpsrCreateSlice(t, s)
}

func rpsrCreateSlice(t *testing.T, s *resourcev1.ResourceSlice) {
	t.Helper()
	if _, err := env.Client.ResourceV1().ResourceSlices().Create(context.Background(), s, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating ResourceSlice %s: %v", s.Name, err)
	}
}

// rpsrClaim creates a claim in ns and writes an allocation of driver/pool/device to its status.
func rpsrClaim(t *testing.T, ns, name, driver, pool, device string, adminAccess bool, consumed map[resourcev1.QualifiedName]resource.Quantity) {
	t.Helper()
	ctx := context.Background()
	c := &resourcev1.ResourceClaim{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: resourcev1.ResourceClaimSpec{Devices: resourcev1.DeviceClaim{Requests: []resourcev1.DeviceRequest{{
			Name: "req", Exactly: &resourcev1.ExactDeviceRequest{DeviceClassName: "example"},
		}}}},
	}
	if adminAccess {
		c.Spec.Devices.Requests[0].Exactly.AdminAccess = ptr.To(true)
	}
	c, err := env.Client.ResourceV1().ResourceClaims(ns).Create(ctx, c, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating ResourceClaim %s/%s: %v", ns, name, err)
	}
	r := resourcev1.DeviceRequestAllocationResult{Request: "req", Driver: driver, Pool: pool, Device: device}
	if adminAccess {
		r.AdminAccess = ptr.To(true)
	}
	if consumed != nil {
		r.ConsumedCapacity = consumed
		r.ShareID = ptr.To(types.UID(rpsrShareID(name)))
	}
	c.Status.Allocation = &resourcev1.AllocationResult{Devices: resourcev1.DeviceAllocationResult{Results: []resourcev1.DeviceRequestAllocationResult{r}}}
	if _, err := env.Client.ResourceV1().ResourceClaims(ns).UpdateStatus(ctx, c, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("allocating ResourceClaim %s/%s: %v", ns, name, err)
	}
}

func rpsrRequest(t *testing.T, name string, spec resourcev1alpha3.ResourcePoolStatusRequestSpec) {
	t.Helper()
	_, err := env.Client.ResourceV1alpha3().ResourcePoolStatusRequests().Create(context.Background(),
		&resourcev1alpha3.ResourcePoolStatusRequest{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: spec}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating ResourcePoolStatusRequest %s: %v", name, err)
	}
}

// rpsrWait returns the request's status once the controller wrote it.
func rpsrWait(t *testing.T, name string) *resourcev1alpha3.ResourcePoolStatusRequestStatus {
	t.Helper()
	var st *resourcev1alpha3.ResourcePoolStatusRequestStatus
	Eventually(t, 30*time.Second, "status of ResourcePoolStatusRequest "+name, func() (bool, string) {
		r, err := env.Client.ResourceV1alpha3().ResourcePoolStatusRequests().Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		st = r.Status
		return st != nil, "no status yet"
	})
	return st
}

func rpsrInt(p *int32) int32 {
	if p == nil {
		return -1
	}
	return *p
}

// rpsrPools renders the pools as "pool:node:slices/total/alloc/avail/unavail[:err]" for compact
// comparison.
func rpsrPools(st *resourcev1alpha3.ResourcePoolStatusRequestStatus) string {
	var out []string
	for _, p := range st.Pools {
		s := fmt.Sprintf("%s:%s:%d/%d/%d/%d/%d", p.PoolName, ptr.Deref(p.NodeName, ""), rpsrInt(p.ResourceSliceCount),
			rpsrInt(p.TotalDevices), rpsrInt(p.AllocatedDevices), rpsrInt(p.AvailableDevices), rpsrInt(p.UnavailableDevices))
		if p.ValidationError != nil {
			s += ":" + *p.ValidationError
		}
		out = append(out, s)
	}
	return strings.Join(out, " ")
}

func rpsrCheckComplete(t *testing.T, name string, st *resourcev1alpha3.ResourcePoolStatusRequestStatus, poolCount int32, pools, message string) {
	t.Helper()
	if got := rpsrPools(st); got != pools {
		t.Errorf("%s: pools %q, want %q", name, got, pools)
	}
	if rpsrInt(st.PoolCount) != poolCount {
		t.Errorf("%s: poolCount %d, want %d", name, rpsrInt(st.PoolCount), poolCount)
	}
	if len(st.Conditions) != 1 || st.Conditions[0].Type != "Complete" || st.Conditions[0].Status != metav1.ConditionTrue ||
		st.Conditions[0].Reason != "CalculationComplete" || st.Conditions[0].Message != message {
		t.Errorf("%s: conditions %+v, want one Complete/True/CalculationComplete %q", name, st.Conditions, message)
	}
}

// rpsrShareID: a share ID (a UID's syntax) derived from a name
func rpsrShareID(name string) string {
	return fmt.Sprintf("00000000-0000-0000-0000-%012x", len(name)*7919)
}

// rpsrExpired: a request whose status the test writes as completed at `at` (the cleanup pass's
// input: upstream's TestCleanupExpiredRequests).
func rpsrCompleted(t *testing.T, name string, at time.Time) {
	t.Helper()
	ctx := context.Background()
	rpsrRequest(t, name, resourcev1alpha3.ResourcePoolStatusRequestSpec{Driver: "cleanup.example.com"})
	r, err := env.Client.ResourceV1alpha3().ResourcePoolStatusRequests().Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	r.Status = &resourcev1alpha3.ResourcePoolStatusRequestStatus{PoolCount: ptr.To[int32](0), Conditions: []metav1.Condition{{
		Type: "Complete", Status: metav1.ConditionTrue, Reason: "CalculationComplete", Message: "Calculated status for 0 pools",
		LastTransitionTime: metav1.NewTime(at),
	}}}
	if _, err := env.Client.ResourceV1alpha3().ResourcePoolStatusRequests().UpdateStatus(ctx, r, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("writing the status of %s: %v", name, err)
	}
}

func TestResourcePoolStatusRequest_Scenarios(t *testing.T) {
	withPrivateCluster(t, rpsrClusterOptions, func() {
		ctx := context.Background()
		// TestCleanupExpiredRequests: before kcmd starts (its first cleanup pass runs at start)
		rpsrCompleted(t, "expired-request", time.Now().Add(-2*time.Hour))
		rpsrCompleted(t, "recent-request", time.Now().Add(-10*time.Minute))

		p := startKcmd(t, nil, rpsrFlags(true)...)
		defer dumpKcmdLogs(t, p)
		Eventually(t, 60*time.Second, "the controller's worker, as its service account", func() (bool, string) {
			return p.Logged("using service account kube-system/resourcepoolstatusrequest-controller") &&
				p.Logged("resourcepoolstatusrequest-controller worker ready"), "not yet"
		})

		Eventually(t, 30*time.Second, "the expired request deleted by the cleanup pass", func() (bool, string) {
			_, err := env.Client.ResourceV1alpha3().ResourcePoolStatusRequests().Get(ctx, "expired-request", metav1.GetOptions{})
			return apierrors.IsNotFound(err), fmt.Sprint(err)
		})
		if _, err := env.Client.ResourceV1alpha3().ResourcePoolStatusRequests().Get(ctx, "recent-request", metav1.GetOptions{}); err != nil {
			t.Errorf("the recently completed request: %v (want kept)", err)
		}
		if !p.Logged(`Deleted expired ResourcePoolStatusRequest request="expired-request"`) {
			t.Error("the deletion was not the controller's")
		}

		ns := Namespace(t)
		var r *resourcev1alpha3.ResourcePoolStatusRequest
		const drv = "test.example.com"
		// basic counts: pool-1 (4 devices, node-1, 2 claims on device-0 and one on device-1, one
		// adminAccess claim), pool-2 (8 devices over two slices on two nodes: no nodeName),
		// pool-3 (5 devices, 2 NoSchedule-tainted, one more by a DeviceTaintRule), another
		// driver's pool, and an older generation of pool-1 that must not count
		rpsrSlice(t, "p1-old", drv, "pool-1", "node-1", 9, 1, 1, 0, "")
		rpsrSlice(t, "p1", drv, "pool-1", "node-1", 4, 2, 1, 0, "")
		rpsrSlice(t, "p2a", drv, "pool-2", "node-1", 4, 1, 2, 0, "")
		rpsrSlice(t, "p2b", drv, "pool-2", "node-2", 4, 1, 2, 0, "")
		rpsrSlice(t, "p3", drv, "pool-3", "", 5, 1, 1, 2, resourcev1.DeviceTaintEffectNoSchedule)
		rpsrSlice(t, "other", "other.example.com", "pool-1", "node-1", 3, 1, 1, 0, "")
		rpsrClaim(t, ns, "c1", drv, "pool-1", "device-0", false, nil)
		rpsrClaim(t, ns, "c2", drv, "pool-1", "device-0", false, nil)
		rpsrClaim(t, ns, "c3", drv, "pool-1", "device-1", false, nil)
		// adminAccess requests are allowed only in a namespace labelled for it
		nso, err := env.Client.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if nso.Labels == nil {
			nso.Labels = map[string]string{}
		}
		nso.Labels["resource.kubernetes.io/admin-access"] = "true"
		if _, err := env.Client.CoreV1().Namespaces().Update(ctx, nso, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		rpsrClaim(t, ns, "admin", drv, "pool-1", "device-2", true, nil)
		if _, err := env.Client.ResourceV1().DeviceTaintRules().Create(ctx, &resourcev1.DeviceTaintRule{
			ObjectMeta: metav1.ObjectMeta{Name: "rule-1"},
			Spec: resourcev1.DeviceTaintRuleSpec{
				DeviceSelector: &resourcev1.DeviceTaintSelector{Driver: ptr.To(drv), Pool: ptr.To("pool-3"), Device: ptr.To("device-4")},
				Taint:          resourcev1.DeviceTaint{Key: "example.com/maintenance", Effect: resourcev1.DeviceTaintEffectNoSchedule},
			}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Second) // the informers see them before the request arrives

		rpsrRequest(t, "all", resourcev1alpha3.ResourcePoolStatusRequestSpec{Driver: drv})
		rpsrCheckComplete(t, "all", rpsrWait(t, "all"), 3,
			"pool-1:node-1:1/4/2/2/0 pool-2::2/8/0/8/0 pool-3::1/5/0/2/3", "Calculated status for 3 pools")
		rpsrRequest(t, "by-pool", resourcev1alpha3.ResourcePoolStatusRequestSpec{Driver: drv, PoolName: ptr.To("pool-2")})
		rpsrCheckComplete(t, "by-pool", rpsrWait(t, "by-pool"), 1, "pool-2::2/8/0/8/0", "Calculated status for 1 pools")
		rpsrRequest(t, "limit", resourcev1alpha3.ResourcePoolStatusRequestSpec{Driver: drv, Limit: ptr.To[int32](1)})
		rpsrCheckComplete(t, "limit", rpsrWait(t, "limit"), 3, "pool-1:node-1:1/4/2/2/0", "Calculated status for 1 pools")
		rpsrRequest(t, "none", resourcev1alpha3.ResourcePoolStatusRequestSpec{Driver: "nonexistent.example.com"})
		rpsrCheckComplete(t, "none", rpsrWait(t, "none"), 0, "", "Calculated status for 0 pools")

		// TestSyncRequestRequeuesIncompletePool: an incomplete pool is retried, not written, and
		// dropped after 5 retries; once the pool is complete an update of the request brings it
		// back and the status is written
		const inc = "inc.example.com"
		rpsrSlice(t, "inc-a", inc, "pool-i", "node-1", 2, 1, 2, 0, "")
		time.Sleep(time.Second)
		rpsrRequest(t, "incomplete", resourcev1alpha3.ResourcePoolStatusRequestSpec{Driver: inc})
		Eventually(t, 30*time.Second, "the incomplete request dropped after max retries", func() (bool, string) {
			return p.Logged(`Dropping request out of the queue after max retries err="incomplete pools detected, requeueing" request="incomplete" retries=5`), "not yet"
		})
		r, err = env.Client.ResourceV1alpha3().ResourcePoolStatusRequests().Get(ctx, "incomplete", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if r.Status != nil {
			t.Fatalf("a request with an incomplete pool got a status: %+v", r.Status)
		}
		rpsrSlice(t, "inc-b", inc, "pool-i", "node-1", 3, 1, 2, 0, "")
		time.Sleep(time.Second)
		r.Labels = map[string]string{"touch": "1"}
		if _, err := env.Client.ResourceV1alpha3().ResourcePoolStatusRequests().Update(ctx, r, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		rpsrCheckComplete(t, "incomplete", rpsrWait(t, "incomplete"), 1, "pool-i:node-1:2/5/0/5/0", "Calculated status for 1 pools")

		// _PartitionSummary: counters in one slice, partitions in another, one Full in use
		const gpu = "gpu.example.com"
		dev := func(name, profile, cost string) resourcev1.Device {
			return resourcev1.Device{Name: name,
				Attributes:       map[resourcev1.QualifiedName]resourcev1.DeviceAttribute{"profile": {StringValue: ptr.To(profile)}},
				ConsumesCounters: []resourcev1.DeviceCounterConsumption{{CounterSet: "gpu-0", Counters: map[string]resourcev1.Counter{"memory": {Value: resource.MustParse(cost)}}}},
			}
		}
		for _, s := range []*resourcev1.ResourceSlice{
			{ObjectMeta: metav1.ObjectMeta{Name: "gpu-counters"}, Spec: resourcev1.ResourceSliceSpec{Driver: gpu, NodeName: ptr.To("node-0"),
				// the apiserver allows partitionTypeAttribute only beside devices consuming counters
				Pool:           resourcev1.ResourcePool{Name: "pool-0", Generation: 1, ResourceSliceCount: 2},
				SharedCounters: []resourcev1.CounterSet{{Name: "gpu-0", Counters: map[string]resourcev1.Counter{"memory": {Value: resource.MustParse("80Gi")}}}}}},
			{ObjectMeta: metav1.ObjectMeta{Name: "gpu-devices"}, Spec: resourcev1.ResourceSliceSpec{Driver: gpu, NodeName: ptr.To("node-0"),
				Pool:                   resourcev1.ResourcePool{Name: "pool-0", Generation: 1, ResourceSliceCount: 2},
				PartitionTypeAttribute: ptr.To(resourcev1.FullyQualifiedName(gpu + "/profile")),
				Devices:                []resourcev1.Device{dev("full-0", "Full", "80Gi"), dev("half-0", "Half", "40Gi"), dev("half-1", "Half", "40Gi")}}},
		} {
			rpsrCreateSlice(t, s)
		}
		rpsrClaim(t, ns, "gpu-half", gpu, "pool-0", "half-0", false, nil)
		time.Sleep(time.Second)
		rpsrRequest(t, "partitions", resourcev1alpha3.ResourcePoolStatusRequestSpec{Driver: gpu})
		st := rpsrWait(t, "partitions")
		rpsrCheckComplete(t, "partitions", st, 1, "pool-0:node-0:2/3/1/2/0", "Calculated status for 1 pools")
		if len(st.Pools) == 1 {
			var got []string
			for _, ps := range st.Pools[0].PartitionSummary {
				got = append(got, fmt.Sprintf("%s|%s=%d/%d", ps.Attribute, ps.Type, rpsrInt(ps.Total), rpsrInt(ps.Allocatable)))
			}
			// half-0 in use takes 40Gi of 80Gi: no Full fits, one more Half does
			want := gpu + "/profile|Full=1/0 " + gpu + "/profile|Half=2/1"
			if strings.Join(got, " ") != want {
				t.Errorf("partitionSummary %q, want %q", strings.Join(got, " "), want)
			}
		}

		// _ShareableSummary: one shareable device, one claim consuming part of it
		const shr = "share.example.com"
		rpsrCreateSlice(t, &resourcev1.ResourceSlice{ObjectMeta: metav1.ObjectMeta{Name: "shareable"}, Spec: resourcev1.ResourceSliceSpec{
			Driver: shr, NodeName: ptr.To("node-0"), Pool: resourcev1.ResourcePool{Name: "pool-0", Generation: 1, ResourceSliceCount: 1},
			Devices: []resourcev1.Device{{Name: "device-0", AllowMultipleAllocations: ptr.To(true),
				Capacity: map[resourcev1.QualifiedName]resourcev1.DeviceCapacity{"memory": {Value: resource.MustParse("40Gi")}, "cores": {Value: resource.MustParse("8")}}}}}})
		rpsrClaim(t, ns, "share", shr, "pool-0", "device-0", false,
			map[resourcev1.QualifiedName]resource.Quantity{"memory": resource.MustParse("10Gi"), "cores": resource.MustParse("2")})
		time.Sleep(time.Second)
		rpsrRequest(t, "shareable", resourcev1alpha3.ResourcePoolStatusRequestSpec{Driver: shr})
		st = rpsrWait(t, "shareable")
		rpsrCheckComplete(t, "shareable", st, 1, "pool-0:node-0:1/1/1/0/0", "Calculated status for 1 pools")
		if len(st.Pools) == 1 {
			sh := st.Pools[0].ShareableSummary
			if sh == nil {
				t.Fatal("no shareableSummary")
			}
			var got []string
			for _, c := range sh.Capacity {
				got = append(got, fmt.Sprintf("%s=%s/%s/%s", c.Name, c.Total, c.Consumed, c.Available))
			}
			if rpsrInt(sh.FullyAvailableDevices) != 0 || rpsrInt(sh.PartiallyAvailableDevices) != 1 ||
				strings.Join(got, " ") != "cores=8/2/6 memory=40Gi/10Gi/30Gi" {
				t.Errorf("shareableSummary full %d partial %d capacity %q, want 0 1 \"cores=8/2/6 memory=40Gi/10Gi/30Gi\"",
					rpsrInt(sh.FullyAvailableDevices), rpsrInt(sh.PartiallyAvailableDevices), strings.Join(got, " "))
			}
		}

		// a written request is not written again (TestSkipProcessedRequest): its status stays
		r, err = env.Client.ResourceV1alpha3().ResourcePoolStatusRequests().Get(ctx, "all", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		rv := r.ResourceVersion
		rpsrSlice(t, "p4", drv, "pool-4", "node-1", 1, 1, 1, 0, "")
		time.Sleep(2 * time.Second)
		if r, err = env.Client.ResourceV1alpha3().ResourcePoolStatusRequests().Get(ctx, "all", metav1.GetOptions{}); err != nil || r.ResourceVersion != rv {
			t.Errorf("a processed request was written again: %v, resourceVersion %s -> %s", err, rv, r.ResourceVersion)
		}
		for _, l := range p.Logs() {
			if strings.Contains(l, "Forbidden") || strings.Contains(l, "failed to update status") {
				t.Errorf("kcmd logged: %s", l)
			}
		}
	})
}

// TestResourcePoolStatusRequest_WorkerKilled: the worker is killed -9; a request created while no
// worker runs is answered by the restarted worker (the request's add event was queued by the
// dispatcher, or its resync queues it again).
func TestResourcePoolStatusRequest_WorkerKilled(t *testing.T) {
	withPrivateCluster(t, rpsrClusterOptions, func() { rpsrWorkerKilled(t, false) })
}

// TestResourcePoolStatusRequest_WorkerKilledNegativeControl: the fault the kill could cause is a
// request whose key died with the worker and is never answered. The same scenario with the test
// seam KCMD_TEST_RPSR_DROP=killed-, under which the worker drops the requests named so without
// writing them: the crash test's oracle must report the request without status.
func TestResourcePoolStatusRequest_WorkerKilledNegativeControl(t *testing.T) {
	withPrivateCluster(t, rpsrClusterOptions, func() { rpsrWorkerKilled(t, true) })
}

func rpsrWorkerKilled(t *testing.T, negative bool) {
	var extraEnv []string
	if negative {
		extraEnv = []string{"KCMD_TEST_RPSR_DROP=killed-"}
	}
	p := startKcmd(t, extraEnv, rpsrFlags(true)...)
	defer dumpKcmdLogs(t, p)
	Eventually(t, 60*time.Second, "the controller's worker", func() (bool, string) {
		return p.Logged("resourcepoolstatusrequest-controller worker ready"), "not yet"
	})
	const drv = "kill.example.com"
	rpsrSlice(t, "k1", drv, "pool-1", "node-1", 3, 1, 1, 1, resourcev1.DeviceTaintEffectNoExecute)
	// a first request answered: the worker has its caches synced
	rpsrRequest(t, "warm-up", resourcev1alpha3.ResourcePoolStatusRequestSpec{Driver: drv})
	rpsrWait(t, "warm-up")
	if killChildren(t, p.cmd.Process.Pid, "kcmd-worker", 4) == 0 {
		t.Fatal("no kcmd-worker process to kill")
	}
	rpsrRequest(t, "killed-1", resourcev1alpha3.ResourcePoolStatusRequestSpec{Driver: drv})
	problem := rpsrKilledVerdict(t, "killed-1")
	if negative {
		if !strings.Contains(problem, "no status") {
			t.Fatalf("negative control: the request was dropped, the oracle said %q", problem)
		}
		if !p.Logged("KCMD_TEST_RPSR_DROP: request killed-1 dropped") {
			t.Fatal("negative control: no status, but not because the seam dropped the request")
		}
		t.Logf("negative control: the oracle reports %q", problem)
		return
	}
	if problem != "" {
		t.Fatal(problem)
	}
	r, _ := env.Client.ResourceV1alpha3().ResourcePoolStatusRequests().Get(context.Background(), "killed-1", metav1.GetOptions{})
	rpsrCheckComplete(t, "killed-1", r.Status, 1, "pool-1:node-1:1/3/0/2/1", "Calculated status for 1 pools")
}

// rpsrKilledVerdict is the crash test's oracle: the request gets its status within 30 s of its
// creation. It returns the problem, or "".
func rpsrKilledVerdict(t *testing.T, name string) string {
	t.Helper()
	last := ""
	for end := time.Now().Add(30 * time.Second); time.Now().Before(end); time.Sleep(200 * time.Millisecond) {
		r, err := env.Client.ResourceV1alpha3().ResourcePoolStatusRequests().Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			last = err.Error()
			continue
		}
		if r.Status != nil {
			return ""
		}
		last = "no status"
	}
	return fmt.Sprintf("ResourcePoolStatusRequest %s not answered 30 s after its creation: %s", name, last)
}

// TestResourcePoolStatusRequest_GateOff: without DRAResourcePoolStatus kcmd does not start the
// controller, named in --controllers or not, and says so as kcm does. The shared cluster (no
// v1alpha3 API) is enough: nothing may run.
func TestResourcePoolStatusRequest_GateOff(t *testing.T) {
	p := startKcmd(t, nil, rpsrFlags(false)...)
	defer dumpKcmdLogs(t, p)
	Eventually(t, 30*time.Second, "the disabled-by-gate message", func() (bool, string) {
		return p.Logged(`Controller is disabled by a feature gate controller="resourcepoolstatusrequest-controller" requiredFeatureGates=["DRAResourcePoolStatus"]`) &&
			p.Logged(`starting: `), "not yet"
	})
	for _, l := range p.Logs() {
		if strings.Contains(l, "starting: ") && !strings.Contains(l, "controllers: (none)") {
			t.Errorf("kcmd started controllers with the gate off: %s", l)
		}
	}
	time.Sleep(2 * time.Second)
	for pid, comm := range childrenOf(p.cmd.Process.Pid) {
		if strings.HasPrefix(comm, "kcmd-worker") || strings.HasPrefix(comm, "kcmd-dispatch") {
			t.Errorf("a controller process runs with the gate off: %d %s", pid, comm)
		}
	}
}
