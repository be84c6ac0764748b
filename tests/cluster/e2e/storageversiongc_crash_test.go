package e2e

// The storageversion-garbage-collector-controller under kill -9 (issue 21's crash tests): on the
// private cluster of its scenarios (StorageVersionAPI on), six made-up kube-apiservers hold
// identity Leases; twelve StorageVersions naming three of them each (some also an apiserver that
// never had a Lease) are created while four of the Leases are deleted one by one and the
// controller's worker is killed -9 every 1.5 s (informerd once). The oracle (svgcCrashVerdict)
// reads every StorageVersion from the apiserver: the entries of the deleted or absent
// apiservers are gone, those of live ones are all there in their order, a StorageVersion left
// with none is deleted and no other is, commonEncodingVersion and the AllEncodingVersionsEqual
// condition are what the controller writes for the entries left, a StorageVersion with nothing
// stale was not written at all, and the apiserver's own StorageVersions are untouched.
//
// The negative control (same cluster, its own kcmd) runs the same churn with the test seam
// KCMD_TEST_SVGC_KEEP_ID=<the first deleted apiserver>, under which the worker never removes an
// entry of that apiserver (what keys lost with a worker would leave): the oracle must report
// its entries still there.

import (
	"context"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	apiserverinternalv1alpha1 "k8s.io/api/apiserverinternal/v1alpha1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

const svgcCrashSVs = 12

func TestStorageVersionGC_WorkerKilled(t *testing.T) {
	withPrivateCluster(t, svgcClusterOptions, func() {
		var own *apiserverinternalv1alpha1.StorageVersionList
		Eventually(t, 60*time.Second, "the apiserver's own StorageVersions", func() (bool, string) {
			var err error
			own, err = env.Client.InternalV1alpha1().StorageVersions().List(context.Background(), metav1.ListOptions{})
			if err != nil {
				return false, err.Error()
			}
			return len(own.Items) > 0, "none yet"
		})
		t.Run("Crash", func(t *testing.T) { svgcWorkerKilled(t, own, "svgck", false) })
		t.Run("NegativeControl", func(t *testing.T) { svgcWorkerKilled(t, own, "svgcn", true) })
	})
}

// svgcCrashID is the apiserver id j of a phase; svgcCrashEnc its encoding version.
func svgcCrashID(prefix string, j int) string { return fmt.Sprintf("%s-id-%d", prefix, j) }

func svgcCrashEnc(j int) string { return []string{"v1", "v2"}[j%2] }

func svgcWorkerKilled(t *testing.T, own *apiserverinternalv1alpha1.StorageVersionList, prefix string, negative bool) {
	keep := svgcCrashID(prefix, 0) // the first Lease deleted
	var extraEnv []string
	if negative {
		extraEnv = []string{"KCMD_TEST_SVGC_KEEP_ID=" + keep}
	}
	p := startKcmd(t, extraEnv, svgcFlags(true)...)
	defer dumpKcmdLogs(t, p)
	Eventually(t, 60*time.Second, "the controller's worker", func() (bool, string) {
		return p.Logged("storageversion-garbage-collector-controller worker ready"), "not yet"
	})
	for j := range 6 {
		svgcLease(t, svgcCrashID(prefix, j), false)
	}
	live := map[string]bool{}
	for j := range 6 {
		live[svgcCrashID(prefix, j)] = true
	}

	// StorageVersion i names the apiservers i, i+1 and i+3 (mod 6); every fourth also one that
	// never had a Lease
	created := map[string]*apiserverinternalv1alpha1.StorageVersion{}
	entries := map[string][]svgcEntry{}
	deleted := 0
	kills := newCrashKills(p.cmd.Process.Pid)
	for i := 0; i < svgcCrashSVs+4 || deleted < 4; i++ {
		if i < svgcCrashSVs {
			var es []svgcEntry
			for _, j := range []int{i % 6, (i + 1) % 6, (i + 3) % 6} {
				es = append(es, svgcEntry{svgcCrashID(prefix, j), svgcCrashEnc(j)})
			}
			if i%4 == 0 {
				es = append(es, svgcEntry{prefix + "-ghost", "v1"})
			}
			name := fmt.Sprintf("%s-%d.test.widgets", prefix, i)
			created[name] = svgcSV(t, name, es)
			entries[name] = es
		}
		if i%3 == 1 && deleted < 4 {
			id := svgcCrashID(prefix, deleted)
			svgcDeleteLease(t, id)
			live[id] = false
			deleted++
		}
		kills.tick(t, func() int { return svgcCrashPending(t, entries, live) })
		time.Sleep(600 * time.Millisecond)
	}
	t.Logf("churn: %d StorageVersions, %d Leases deleted; kill -9: %d workers (%d with a stale entry left), %d informerd",
		len(created), deleted, kills.workers, kills.busy, kills.informerds)
	kills.exercised(t)

	settle := 45 * time.Second // the worker's restart backoff after the kills is part of it
	if negative {
		settle = 15 * time.Second
	}
	problems := svgcCrashVerdict(t, own, created, entries, live, settle)
	if negative {
		found := false
		for _, pr := range problems {
			found = found || strings.Contains(pr, "stale entry of "+keep+" still there")
			if !strings.Contains(pr, keep) {
				t.Errorf("negative control: a problem not of the kept apiserver: %s", pr)
			}
		}
		if !found {
			t.Fatalf("negative control: the entries of %s were kept, but the oracle said %v", keep, problems)
		}
		if !p.Logged("KCMD_TEST_SVGC_KEEP_ID: entr") {
			t.Fatal("negative control: the oracle fired, but the seam kept no entry")
		}
		t.Logf("negative control: the oracle reports %v", problems)
		return
	}
	if len(problems) > 0 {
		t.Fatalf("after the kills: %s", strings.Join(problems, "; "))
	}
	if p.Logged("forbidden") || p.Logged("Forbidden") {
		t.Errorf("a request of the controller's service account was forbidden")
	}
}

// svgcCrashVerdict is TestStorageVersionGC_WorkerKilled's oracle (see the file's comment):
// within settle, each StorageVersion of created lists exactly its entries of live apiservers
// (or is gone when none is left). It returns the problems of the last look.
func svgcCrashVerdict(t *testing.T, own *apiserverinternalv1alpha1.StorageVersionList,
	created map[string]*apiserverinternalv1alpha1.StorageVersion, entries map[string][]svgcEntry,
	live map[string]bool, settle time.Duration) []string {
	t.Helper()
	var problems []string
	for end := time.Now().Add(settle); ; time.Sleep(500 * time.Millisecond) {
		problems = nil
		for name, es := range entries {
			var left []svgcEntry
			for _, e := range es {
				if live[e.id] {
					left = append(left, e)
				}
			}
			sv, err := svgcGet(t, name)
			if apierrors.IsNotFound(err) {
				if len(left) > 0 {
					problems = append(problems, fmt.Sprintf("%s deleted with live entries %v", name, left))
				}
				continue
			}
			if err != nil {
				problems = append(problems, fmt.Sprintf("%s: %v", name, err))
				continue
			}
			if len(left) == 0 {
				problems = append(problems, fmt.Sprintf("%s: no live entry, not deleted (entries %+v)", name,
					sv.Status.StorageVersions))
			}
			got := map[string]bool{}
			for _, e := range sv.Status.StorageVersions {
				got[e.APIServerID] = true
				if !live[e.APIServerID] {
					problems = append(problems, fmt.Sprintf("%s: stale entry of %s still there", name, e.APIServerID))
				}
			}
			if len(left) == 0 {
				continue
			}
			if !reflect.DeepEqual(sv.Status.StorageVersions, svgcEntries(left)) {
				problems = append(problems, fmt.Sprintf("%s: entries %+v, want %+v", name, sv.Status.StorageVersions, left))
				continue
			}
			if len(left) == len(es) {
				// nothing was stale: never written
				if sv.ResourceVersion != created[name].ResourceVersion {
					problems = append(problems, fmt.Sprintf("%s: nothing stale, written anyway (resourceVersion %s -> %s)",
						name, created[name].ResourceVersion, sv.ResourceVersion))
				}
				continue
			}
			problems = append(problems, svgcCrashCommon(sv, left)...)
		}
		for _, o := range own.Items {
			sv, err := svgcGet(t, o.Name)
			if err != nil {
				problems = append(problems, fmt.Sprintf("the apiserver's StorageVersion %s: %v", o.Name, err))
			} else if !reflect.DeepEqual(sv.Status.StorageVersions, o.Status.StorageVersions) {
				problems = append(problems, fmt.Sprintf("the apiserver's StorageVersion %s changed", o.Name))
			}
		}
		sort.Strings(problems)
		if len(problems) == 0 || time.Now().After(end) {
			return problems
		}
	}
}

// svgcCrashCommon: commonEncodingVersion and the one condition a written StorageVersion gets
// for the entries left.
func svgcCrashCommon(sv *apiserverinternalv1alpha1.StorageVersion, left []svgcEntry) []string {
	common := left[0].enc
	for _, e := range left {
		if e.enc != common {
			common = ""
		}
	}
	status, reason := apiserverinternalv1alpha1.ConditionTrue, "CommonEncodingVersionSet"
	if common == "" {
		status, reason = apiserverinternalv1alpha1.ConditionFalse, "CommonEncodingVersionUnset"
	}
	var out []string
	got := ""
	if sv.Status.CommonEncodingVersion != nil {
		got = *sv.Status.CommonEncodingVersion
	}
	if got != common {
		out = append(out, fmt.Sprintf("%s: commonEncodingVersion %q, want %q", sv.Name, got, common))
	}
	if len(sv.Status.Conditions) != 1 {
		return append(out, fmt.Sprintf("%s: conditions %+v, want one", sv.Name, sv.Status.Conditions))
	}
	c := sv.Status.Conditions[0]
	if c.Type != apiserverinternalv1alpha1.AllEncodingVersionsEqual || c.Status != status || c.Reason != reason ||
		c.ObservedGeneration != sv.Generation || c.LastTransitionTime.IsZero() {
		out = append(out, fmt.Sprintf("%s: condition %+v, want AllEncodingVersionsEqual %s/%s observedGeneration %d",
			sv.Name, c, status, reason, sv.Generation))
	}
	return out
}

// svgcCrashPending counts the StorageVersions of entries that still list an apiserver without a
// Lease (the work a kill meets).
func svgcCrashPending(t *testing.T, entries map[string][]svgcEntry, live map[string]bool) int {
	t.Helper()
	l, err := env.Client.InternalV1alpha1().StorageVersions().List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, sv := range l.Items {
		if _, ok := entries[sv.Name]; !ok {
			continue
		}
		for _, e := range sv.Status.StorageVersions {
			if !live[e.APIServerID] {
				n++
				break
			}
		}
	}
	return n
}
