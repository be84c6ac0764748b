package e2e

// kcmd's storageversion-garbage-collector-controller (docs/storageversiongc.md) against the real
// apiserver, upstream kube-controller-manager not running. StorageVersions
// (internal.apiserver.k8s.io/v1alpha1) exist only with the StorageVersionAPI gate (alpha, off in
// v1.37) and the API turned on, so the scenarios run on a private cluster whose apiserver has
// both; kcmd runs the controller alone with --feature-gates=StorageVersionAPI=true, as its own
// service account (kcm's bootstrap role system:controller:storage-version-garbage-collector must
// allow every request).
//
// The cases are upstream's gc_controller_test.go on real objects: identity Leases of made-up
// kube-apiservers in kube-system (renewed "now" for an hour, so the apiserver's own identity
// Lease GC leaves them alone) and StorageVersions naming them. The apiserver's own
// StorageVersions (its real identity) must come through untouched.

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	apiserverinternalv1alpha1 "k8s.io/api/apiserverinternal/v1alpha1"
	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"kcmd.local/tests/cluster/harness"
)

var svgcClusterOptions = harness.Options{ExtraAPIServerFlags: []string{
	"--feature-gates=StorageVersionAPI=true,APIServerIdentity=true",
	"--runtime-config=internal.apiserver.k8s.io/v1alpha1=true"}}

func svgcFlags(gate bool) []string {
	flags := []string{"--controllers=storageversion-garbage-collector-controller", "--secure-port=0",
		"--leader-elect=false", "--use-service-account-credentials", "--v=4"}
	if gate {
		flags = append(flags, "--feature-gates=StorageVersionAPI=true")
	}
	return flags
}

// svgcLease creates an identity Lease kube-system/name (labelled as a kube-apiserver's unless
// plain).
func svgcLease(t *testing.T, name string, plain bool) {
	t.Helper()
	l := &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "kube-system"},
		Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To(name), LeaseDurationSeconds: ptr.To[int32](3600),
			RenewTime: &metav1.MicroTime{Time: time.Now()}},
	}
	if !plain {
		l.Labels = map[string]string{"apiserver.kubernetes.io/identity": "kube-apiserver"}
	}
	if _, err := env.Client.CoordinationV1().Leases("kube-system").Create(context.Background(), l, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating Lease %s: %v", name, err)
	}
}

func svgcDeleteLease(t *testing.T, name string) {
	t.Helper()
	if err := env.Client.CoordinationV1().Leases("kube-system").Delete(context.Background(), name, metav1.DeleteOptions{}); err != nil {
		t.Fatalf("deleting Lease %s: %v", name, err)
	}
}

type svgcEntry struct{ id, enc string }

func svgcEntries(es []svgcEntry) []apiserverinternalv1alpha1.ServerStorageVersion {
	var out []apiserverinternalv1alpha1.ServerStorageVersion
	for _, e := range es {
		out = append(out, apiserverinternalv1alpha1.ServerStorageVersion{APIServerID: e.id, EncodingVersion: e.enc,
			DecodableVersions: []string{e.enc}})
	}
	return out
}

// svgcSV creates StorageVersion name and writes its status: the entries, and
// commonEncodingVersion when they agree (the apiserver's validation wants it exactly then).
func svgcSV(t *testing.T, name string, es []svgcEntry) *apiserverinternalv1alpha1.StorageVersion {
	t.Helper()
	ctx := context.Background()
	c := env.Client.InternalV1alpha1().StorageVersions()
	sv, err := c.Create(ctx, &apiserverinternalv1alpha1.StorageVersion{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating StorageVersion %s: %v", name, err)
	}
	sv.Status.StorageVersions = svgcEntries(es)
	common := es[0].enc
	for _, e := range es {
		if e.enc != common {
			common = ""
		}
	}
	if common != "" {
		sv.Status.CommonEncodingVersion = ptr.To(common)
	}
	sv, err = c.UpdateStatus(ctx, sv, metav1.UpdateOptions{})
	if err != nil {
		t.Fatalf("writing the status of StorageVersion %s: %v", name, err)
	}
	return sv
}

func svgcGet(t *testing.T, name string) (*apiserverinternalv1alpha1.StorageVersion, error) {
	t.Helper()
	return env.Client.InternalV1alpha1().StorageVersions().Get(context.Background(), name, metav1.GetOptions{})
}

// svgcWaitEntries waits until StorageVersion name lists exactly want, and returns it.
func svgcWaitEntries(t *testing.T, name string, want []svgcEntry) *apiserverinternalv1alpha1.StorageVersion {
	t.Helper()
	var sv *apiserverinternalv1alpha1.StorageVersion
	Eventually(t, 30*time.Second, "StorageVersion "+name+" with the stale entries removed", func() (bool, string) {
		var err error
		if sv, err = svgcGet(t, name); err != nil {
			return false, err.Error()
		}
		return reflect.DeepEqual(sv.Status.StorageVersions, svgcEntries(want)),
			fmt.Sprintf("entries %+v", sv.Status.StorageVersions)
	})
	return sv
}

func svgcCondition(t *testing.T, sv *apiserverinternalv1alpha1.StorageVersion, status apiserverinternalv1alpha1.ConditionStatus, reason string) {
	t.Helper()
	if len(sv.Status.Conditions) != 1 {
		t.Fatalf("%s: %d conditions, want 1: %+v", sv.Name, len(sv.Status.Conditions), sv.Status.Conditions)
	}
	c := sv.Status.Conditions[0]
	if c.Type != apiserverinternalv1alpha1.AllEncodingVersionsEqual || c.Status != status || c.Reason != reason ||
		c.ObservedGeneration != sv.Generation || c.LastTransitionTime.IsZero() {
		t.Fatalf("%s: condition %+v, want AllEncodingVersionsEqual %s/%s observedGeneration %d", sv.Name, c, status, reason, sv.Generation)
	}
}

func TestStorageVersionGC_Scenarios(t *testing.T) {
	withPrivateCluster(t, svgcClusterOptions, func() {
		ctx := context.Background()
		// the apiserver's own StorageVersions, before kcmd starts
		var own *apiserverinternalv1alpha1.StorageVersionList
		Eventually(t, 60*time.Second, "the apiserver's own StorageVersions", func() (bool, string) {
			var err error
			own, err = env.Client.InternalV1alpha1().StorageVersions().List(ctx, metav1.ListOptions{})
			if err != nil {
				return false, err.Error()
			}
			return len(own.Items) > 0, "none yet"
		})
		p := startKcmd(t, nil, svgcFlags(true)...)
		defer dumpKcmdLogs(t, p)
		Eventually(t, 60*time.Second, "the controller's worker, as its service account", func() (bool, string) {
			return p.Logged("using service account kube-system/storage-version-garbage-collector") &&
				p.Logged("storageversion-garbage-collector-controller worker ready"), "not yet"
		})

		// Test_StorageVersionUpdatedWithAllEncodingVersionsEqualOnLeaseDeletion
		t.Run("LeaseDeletedVersionsAgree", func(t *testing.T) {
			for _, l := range []string{"svgc-a-1", "svgc-a-2", "svgc-a-3"} {
				svgcLease(t, l, false)
			}
			svgcSV(t, "svgc-a.test.widgets", []svgcEntry{{"svgc-a-1", "v1"}, {"svgc-a-2", "v2"}, {"svgc-a-3", "v2"}})
			svgcDeleteLease(t, "svgc-a-1")
			sv := svgcWaitEntries(t, "svgc-a.test.widgets", []svgcEntry{{"svgc-a-2", "v2"}, {"svgc-a-3", "v2"}})
			if sv.Status.CommonEncodingVersion == nil || *sv.Status.CommonEncodingVersion != "v2" {
				t.Fatalf("commonEncodingVersion %v, want v2", sv.Status.CommonEncodingVersion)
			}
			svgcCondition(t, sv, apiserverinternalv1alpha1.ConditionTrue, "CommonEncodingVersionSet")
		})

		// Test_StorageVersionUpdatedWithDifferentEncodingVersionsOnLeaseDeletion: the deleted
		// Lease names no entry; nothing is written
		t.Run("LeaseDeletedNotListed", func(t *testing.T) {
			for _, l := range []string{"svgc-b-1", "svgc-b-2", "svgc-b-3"} {
				svgcLease(t, l, false)
			}
			before := svgcSV(t, "svgc-b.test.widgets", []svgcEntry{{"svgc-b-1", "v1"}, {"svgc-b-3", "v2"}})
			svgcDeleteLease(t, "svgc-b-2")
			Eventually(t, 30*time.Second, "the controller to see the Lease deleted", func() (bool, string) {
				return p.Logged(`Observed lease deleted castObjName="svgc-b-2"`), "not logged"
			})
			time.Sleep(2 * time.Second)
			sv, err := svgcGet(t, "svgc-b.test.widgets")
			if err != nil {
				t.Fatal(err)
			}
			if sv.ResourceVersion != before.ResourceVersion || !reflect.DeepEqual(sv.Status, before.Status) {
				t.Fatalf("StorageVersion written: resourceVersion %s -> %s, status %+v", before.ResourceVersion,
					sv.ResourceVersion, sv.Status)
			}
		})

		// Test_StorageVersionContainsInvalidLeaseID: an entry of an apiserver with no Lease, and
		// one whose Lease is not labelled as a kube-apiserver's
		t.Run("InvalidLeaseID", func(t *testing.T) {
			for _, l := range []string{"svgc-c-1", "svgc-c-2", "svgc-c-3"} {
				svgcLease(t, l, false)
			}
			svgcLease(t, "svgc-c-plain", true)
			svgcSV(t, "svgc-c.test.widgets", []svgcEntry{{"svgc-c-1", "v1"}, {"svgc-c-2", "v2"}, {"svgc-c-3", "v2"},
				{"svgc-c-4", "v2"}, {"svgc-c-plain", "v1"}})
			sv := svgcWaitEntries(t, "svgc-c.test.widgets", []svgcEntry{{"svgc-c-1", "v1"}, {"svgc-c-2", "v2"}, {"svgc-c-3", "v2"}})
			if sv.Status.CommonEncodingVersion != nil {
				t.Fatalf("commonEncodingVersion %q, want none", *sv.Status.CommonEncodingVersion)
			}
			svgcCondition(t, sv, apiserverinternalv1alpha1.ConditionFalse, "CommonEncodingVersionUnset")
		})

		// Test_StorageVersionDeletedOnLeaseDeletion
		t.Run("DeletedOnLastLease", func(t *testing.T) {
			svgcLease(t, "svgc-d-1", false)
			svgcSV(t, "svgc-d.test.widgets", []svgcEntry{{"svgc-d-1", "v1"}})
			svgcDeleteLease(t, "svgc-d-1")
			Eventually(t, 30*time.Second, "the StorageVersion deleted", func() (bool, string) {
				_, err := svgcGet(t, "svgc-d.test.widgets")
				return apierrors.IsNotFound(err), fmt.Sprintf("get: %v", err)
			})
		})

		// the apiserver's own StorageVersions name its live identity: untouched
		t.Run("OwnUntouched", func(t *testing.T) {
			for _, o := range own.Items {
				sv, err := svgcGet(t, o.Name)
				if err != nil {
					t.Fatalf("the apiserver's StorageVersion %s: %v", o.Name, err)
				}
				if !reflect.DeepEqual(sv.Status.StorageVersions, o.Status.StorageVersions) {
					t.Fatalf("the apiserver's StorageVersion %s changed: %+v -> %+v", o.Name,
						o.Status.StorageVersions, sv.Status.StorageVersions)
				}
			}
		})
		if p.Logged("forbidden") || p.Logged("Forbidden") {
			t.Errorf("a request of the controller's service account was forbidden")
		}
	})
}

// Without the StorageVersionAPI gate (v1.37's default) kcm does not start the controller, even
// named in --controllers: a StorageVersion with a stale entry stays as it is.
func TestStorageVersionGC_GateOff(t *testing.T) {
	withPrivateCluster(t, svgcClusterOptions, func() {
		p := startKcmd(t, nil, svgcFlags(false)...)
		defer dumpKcmdLogs(t, p)
		Eventually(t, 60*time.Second, "the disabled-by-gate message", func() (bool, string) {
			return p.Logged(`Controller is disabled by a feature gate controller="storageversion-garbage-collector-controller"`) &&
				p.Logged(`starting: `), "not yet"
		})
		before := svgcSV(t, "svgc-off.test.widgets", []svgcEntry{{"svgc-off-1", "v1"}})
		time.Sleep(5 * time.Second)
		sv, err := svgcGet(t, "svgc-off.test.widgets")
		if err != nil {
			t.Fatal(err)
		}
		if sv.ResourceVersion != before.ResourceVersion {
			t.Fatalf("the StorageVersion was written with the gate off: %+v", sv.Status)
		}
		for pid, comm := range childrenOf(p.cmd.Process.Pid) {
			if strings.HasPrefix(comm, "kcmd-worker") || strings.HasPrefix(comm, "kcmd-dispatch") {
				t.Errorf("a controller process runs with the gate off: %d %s", pid, comm)
			}
		}
	})
}
