package e2e

// The storage-version-migrator-controller under kill -9 (issue 21's crash tests): on a private
// cluster, a CRD's 40 custom resources are written while v1 is its storage version, v2 becomes
// the storage version, and three StorageVersionMigrations of the resource are created one by
// one, each shortly before a kill -9 of the controller's worker (every 1.5 s; informerd once),
// while objects keep being written (a migration waits for its cache to pass its checkpoint). The oracle (svmCrashVerdict) reads
// the apiserver and etcd: every migration Succeeded (StorageVersionMigrationSucceeded,
// "Migration completed"), Running=False MigrationCompleted, no Failed condition, its
// status.resourceVersion a checkpoint taken after its creation; every object is stored as v2 in
// etcd; the CRD's storedVersions are [v2].
//
// The negative control (same cluster, a second CRD, its own kcmd) runs the same churn with the
// test seam KCMD_TEST_SVM_SKIP_PREFIX=skip-, under which the worker counts the objects named
// skip-* as migrated without rewriting them (what a patch lost with a worker would leave): the
// oracle must report them still stored as v1.

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	svmv1 "k8s.io/api/storagemigration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"kcmd.local/tests/cluster/harness"
)

func TestSVM_WorkerKilled(t *testing.T) {
	withPrivateCluster(t, harness.Options{}, func() {
		t.Run("Crash", func(t *testing.T) { svmWorkerKilled(t, "svmk.kcmd.test", false) })
		t.Run("NegativeControl", func(t *testing.T) { svmWorkerKilled(t, "svmn.kcmd.test", true) })
	})
}

func svmkCRDPath(group string) string {
	return "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/" + svmPlural + "." + group
}

func svmkCRD(t *testing.T, group string) {
	t.Helper()
	body := fmt.Sprintf(`{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition",
"metadata":{"name":"%s.%s"},"spec":{"group":"%s","scope":"Namespaced",
"names":{"plural":"%s","singular":"widget","kind":"%s","listKind":"%sList"},"versions":%s}}`,
		svmPlural, group, group, svmPlural, svmKind, svmKind, svmCRDVersions([]string{"v1"}, "v1"))
	if err := env.Client.CoreV1().RESTClient().Post().AbsPath("/apis/apiextensions.k8s.io/v1/customresourcedefinitions").
		Body([]byte(body)).Do(context.Background()).Error(); err != nil {
		t.Fatalf("creating the CRD of %s: %v", group, err)
	}
}

func svmkSetStorage(t *testing.T, group string, names []string, storage string) {
	t.Helper()
	patch := fmt.Sprintf(`{"spec":{"versions":%s}}`, svmCRDVersions(names, storage))
	if err := env.Client.CoreV1().RESTClient().Patch("application/merge-patch+json").AbsPath(svmkCRDPath(group)).
		Body([]byte(patch)).Do(context.Background()).Error(); err != nil {
		t.Fatalf("changing the versions of %s: %v", group, err)
	}
}

func svmkStoredVersions(t *testing.T, group string) []string {
	t.Helper()
	raw, err := env.Client.CoreV1().RESTClient().Get().AbsPath(svmkCRDPath(group)).DoRaw(context.Background())
	if err != nil {
		t.Fatalf("reading the CRD of %s: %v", group, err)
	}
	var crd struct {
		Status struct {
			StoredVersions []string `json:"storedVersions"`
		} `json:"status"`
	}
	if err := json.Unmarshal(raw, &crd); err != nil {
		t.Fatal(err)
	}
	return crd.Status.StoredVersions
}

// svmkCR creates default/name as group/version (retried while the version is not served yet).
func svmkCR(t *testing.T, dyn dynamic.Interface, group, version, name string) {
	t.Helper()
	gvr := schema.GroupVersionResource{Group: group, Version: version, Resource: svmPlural}
	u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": group + "/" + version, "kind": svmKind,
		"metadata": map[string]any{"name": name, "namespace": "default"}, "spec": map[string]any{"size": 1}}}
	Eventually(t, 60*time.Second, "creating "+name+" as "+version, func() (bool, string) {
		if _, err := dyn.Resource(gvr).Namespace("default").Create(context.Background(), u, metav1.CreateOptions{}); err != nil {
			return false, err.Error()
		}
		return true, ""
	})
}

// svmkStored is the apiVersion etcd holds for default/name of group ("" when it is not there).
func svmkStored(t *testing.T, group, name string) string {
	t.Helper()
	raw, ok := svmEtcdGet(t, "/registry/"+group+"/"+svmPlural+"/default/"+name)
	if !ok {
		return ""
	}
	var o struct {
		APIVersion string `json:"apiVersion"`
	}
	if err := json.Unmarshal(raw, &o); err != nil {
		return "not JSON"
	}
	return o.APIVersion
}

func svmWorkerKilled(t *testing.T, group string, negative bool) {
	ctx := context.Background()
	dyn, err := dynamic.NewForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	svmkCRD(t, group)
	var objects []string
	for i := range 40 {
		name := fmt.Sprintf("w-%d", i)
		if negative && i%8 == 0 {
			name = fmt.Sprintf("skip-%d", i)
		}
		svmkCR(t, dyn, group, "v1", name)
		objects = append(objects, name)
	}
	// v2 the storage version; the apiserver takes a moment to switch (a probe object is
	// recreated until it is stored as v2)
	svmkSetStorage(t, group, []string{"v1", "v2"}, "v2")
	gvr := schema.GroupVersionResource{Group: group, Version: "v2", Resource: svmPlural}
	Eventually(t, 30*time.Second, "new objects stored as v2", func() (bool, string) {
		svmkCR(t, dyn, group, "v2", "probe")
		v := svmkStored(t, group, "probe")
		_ = dyn.Resource(gvr).Namespace("default").Delete(ctx, "probe", metav1.DeleteOptions{})
		return v == group+"/v2", "stored as " + v
	})
	for _, n := range objects {
		if v := svmkStored(t, group, n); v != group+"/v1" {
			t.Fatalf("%s stored as %q before the migrations, want v1", n, v)
		}
	}

	var extraEnv []string
	if negative {
		extraEnv = []string{"KCMD_TEST_SVM_SKIP_PREFIX=skip-"}
	}
	p := startKcmd(t, extraEnv, svmKcmdFlags()...)
	defer dumpKcmdLogs(t, p)
	Eventually(t, 60*time.Second, "the controller's worker", func() (bool, string) {
		return p.Logged("storage-version-migrator-controller worker ready"), "not yet"
	})
	prefix := strings.SplitN(group, ".", 2)[0]
	created := map[string]string{} // migration -> resourceVersion at its creation
	seq := 0
	// the migrations are created one by one, each ~0.3 s before a kill, so that the kills meet
	// them at different stages (a migration of 40 objects takes about a second)
	kills := newCrashKills(p.cmd.Process.Pid)
	migrateAt := kills.last.Add(1200 * time.Millisecond)
	for end := time.Now().Add(9 * time.Second); time.Now().Before(end); time.Sleep(250 * time.Millisecond) {
		if len(created) < 3 && time.Now().After(migrateAt) {
			migrateAt = migrateAt.Add(1500 * time.Millisecond)
			name := fmt.Sprintf("%s-%d", prefix, len(created))
			svm, err := env.Client.StoragemigrationV1().StorageVersionMigrations().Create(ctx,
				&svmv1.StorageVersionMigration{ObjectMeta: metav1.ObjectMeta{Name: name},
					Spec: svmv1.StorageVersionMigrationSpec{Resource: metav1.GroupResource{Group: group, Resource: svmPlural}}},
				metav1.CreateOptions{})
			if err != nil {
				t.Fatalf("creating StorageVersionMigration %s: %v", name, err)
			}
			created[name] = svm.ResourceVersion
		}
		// the migrations' checkpoints must be passed by the cache: a write now
		svmkCR(t, dyn, group, "v2", fmt.Sprintf("trigger-%d", seq))
		seq++
		kills.tick(t, func() int { return svmCrashPending(t, created) })
	}
	t.Logf("churn: %d migrations, %d objects written meanwhile; kill -9: %d workers (%d with a migration unfinished), %d informerd",
		len(created), seq, kills.workers, kills.busy, kills.informerds)
	kills.exercised(t)

	settle := 45 * time.Second // the worker's restart backoff after the kills is part of it
	if negative {
		settle = 15 * time.Second
	}
	problems := svmCrashVerdict(t, dyn, group, created, objects, &seq, settle)
	if negative {
		found := false
		for _, pr := range problems {
			found = found || strings.HasPrefix(pr, "skip-") && strings.Contains(pr, "stored as "+group+"/v1")
			if !strings.HasPrefix(pr, "skip-") {
				t.Errorf("negative control: a problem beside the skipped objects: %s", pr)
			}
		}
		if !found {
			t.Fatalf("negative control: the patches of skip-* were dropped, but the oracle said %v", problems)
		}
		if !p.Logged("KCMD_TEST_SVM_SKIP_PREFIX: patch of default/skip-") {
			t.Fatal("negative control: the oracle fired, but the seam dropped no patch")
		}
		t.Logf("negative control: the oracle reports %v", problems)
		return
	}
	if len(problems) > 0 {
		t.Fatalf("after the kills: %s", strings.Join(problems, "; "))
	}
}

// svmCrashVerdict is TestSVM_WorkerKilled's oracle (see the file's comment); while it waits
// (settle at most) it writes an object per look so that a migration waiting for its checkpoint
// sees it passed. It returns the problems of the last look.
func svmCrashVerdict(t *testing.T, dyn dynamic.Interface, group string, created map[string]string, objects []string,
	seq *int, settle time.Duration) []string {
	t.Helper()
	var problems []string
	for end := time.Now().Add(settle); ; time.Sleep(500 * time.Millisecond) {
		problems = nil
		for name, createdRV := range created {
			svm := svmGet(t, name)
			problems = append(problems, svmCrashConditions(svm, createdRV)...)
		}
		for _, n := range objects {
			if v := svmkStored(t, group, n); v != group+"/v2" {
				problems = append(problems, fmt.Sprintf("%s stored as %s", n, v))
			}
		}
		if sv := svmkStoredVersions(t, group); strings.Join(sv, ",") != "v2" {
			problems = append(problems, fmt.Sprintf("the CRD's storedVersions %v, want [v2]", sv))
		}
		sort.Strings(problems)
		if len(problems) == 0 || time.Now().After(end) {
			return problems
		}
		*seq++
		svmkCR(t, dyn, group, "v2", fmt.Sprintf("trigger-%d", *seq))
	}
}

func svmCrashConditions(svm *svmv1.StorageVersionMigration, createdRV string) []string {
	var out []string
	want := func(typ svmv1.MigrationConditionType, status metav1.ConditionStatus, reason, message string) {
		c := svmCond(svm, typ)
		if c == nil {
			out = append(out, fmt.Sprintf("migration %s: no %s condition", svm.Name, typ))
		} else if c.Status != status || c.Reason != reason || c.Message != message {
			out = append(out, fmt.Sprintf("migration %s: %s = %s/%s/%q, want %s/%s/%q", svm.Name, typ, c.Status,
				c.Reason, c.Message, status, reason, message))
		}
	}
	want(svmv1.MigrationSucceeded, metav1.ConditionTrue, "StorageVersionMigrationSucceeded", "Migration completed")
	want(svmv1.MigrationRunning, metav1.ConditionFalse, "MigrationCompleted", "Migration completed")
	if c := svmCond(svm, svmv1.MigrationFailed); c != nil {
		out = append(out, fmt.Sprintf("migration %s: Failed condition %+v", svm.Name, c))
	}
	// the checkpoint: a LIST's resourceVersion, taken after the migration was created
	rv, err1 := strconv.ParseUint(svm.Status.ResourceVersion, 10, 64)
	c, err2 := strconv.ParseUint(createdRV, 10, 64)
	if err1 != nil || err2 != nil || rv < c {
		out = append(out, fmt.Sprintf("migration %s: status.resourceVersion %q, want one at or after its creation (%s)",
			svm.Name, svm.Status.ResourceVersion, createdRV))
	}
	return out
}

// svmCrashPending counts the migrations of created not yet Succeeded and cleaned up (the work
// a kill meets).
func svmCrashPending(t *testing.T, created map[string]string) int {
	t.Helper()
	n := 0
	for name := range created {
		svm := svmGet(t, name)
		r := svmCond(svm, svmv1.MigrationRunning)
		if svmCond(svm, svmv1.MigrationSucceeded) == nil || r == nil || r.Status != metav1.ConditionFalse {
			n++
		}
	}
	return n
}
