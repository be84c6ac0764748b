package e2e

// kcmd's storage-version-migrator-controller (docs/svm.md) against the real apiserver, upstream
// kube-controller-manager not running. Each test has a private cluster (its own etcd, read
// directly for the stored form of an object, as upstream's integration test does).
//
// TestSVM_CRDMigration ports upstream's TestStorageVersionMigrationWithCRD
// (test/integration/storageversionmigrator): a CRD served and stored as v1, custom resources
// written under v1, v2 added and made the storage version (conversion None instead of
// upstream's webhook: the two versions have the same schema, so only apiVersion differs),
// a StorageVersionMigration, Succeeded, and every object stored as v2 in etcd afterwards; the
// objects already stored as v2 are not rewritten (same resourceVersion), the others are; the
// CRD's storedVersions end as [v2].

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	svmv1 "k8s.io/api/storagemigration/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"kcmd.local/tests/cluster/harness"
)

const (
	svmGroup  = "svm.kcmd.test"
	svmPlural = "widgets"
	svmKind   = "Widget"
)

func svmKcmdFlags() []string {
	return []string{"--controllers=storage-version-migrator-controller", "--secure-port=0",
		"--leader-elect=false", "--use-service-account-credentials", "--v=4"}
}

// svmEtcdGet reads a key from the cluster's etcd through its JSON gateway (/v3/kv/range).
func svmEtcdGet(t *testing.T, key string) ([]byte, bool) {
	t.Helper()
	body, _ := json.Marshal(map[string]string{"key": base64.StdEncoding.EncodeToString([]byte(key))})
	resp, err := http.Post(env.Cluster.EtcdURL+"/v3/kv/range", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatalf("etcd range %s: %v", key, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("etcd range %s: %s: %s", key, resp.Status, raw)
	}
	var out struct {
		Kvs []struct {
			Value string `json:"value"`
		} `json:"kvs"`
	}
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatalf("etcd range %s: %v", key, err)
	}
	if len(out.Kvs) == 0 {
		return nil, false
	}
	v, err := base64.StdEncoding.DecodeString(out.Kvs[0].Value)
	if err != nil {
		t.Fatal(err)
	}
	return v, true
}

// svmStoredVersion is the apiVersion of a custom resource as etcd holds it (JSON).
func svmStoredVersion(t *testing.T, ns, name string) string {
	t.Helper()
	raw, ok := svmEtcdGet(t, "/registry/"+svmGroup+"/"+svmPlural+"/"+ns+"/"+name)
	if !ok {
		t.Fatalf("%s/%s is not in etcd", ns, name)
	}
	var o struct {
		APIVersion string `json:"apiVersion"`
	}
	if err := json.Unmarshal(raw, &o); err != nil {
		t.Fatalf("%s/%s in etcd is not JSON: %v", ns, name, err)
	}
	return o.APIVersion
}

func svmCRDPath() string {
	return "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/" + svmPlural + "." + svmGroup
}

// svmCRDVersions writes spec.versions: every listed version served, storage the one named.
func svmCRDVersions(names []string, storage string) string {
	var vs []string
	for _, n := range names {
		vs = append(vs, fmt.Sprintf(`{"name":%q,"served":true,"storage":%t,
"schema":{"openAPIV3Schema":{"type":"object","x-kubernetes-preserve-unknown-fields":true}}}`, n, n == storage))
	}
	return "[" + strings.Join(vs, ",") + "]"
}

func svmCreateCRD(t *testing.T) {
	t.Helper()
	body := fmt.Sprintf(`{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition",
"metadata":{"name":"%s.%s"},"spec":{"group":"%s","scope":"Namespaced",
"names":{"plural":"%s","singular":"widget","kind":"%s","listKind":"%sList"},"versions":%s}}`,
		svmPlural, svmGroup, svmGroup, svmPlural, svmKind, svmKind, svmCRDVersions([]string{"v1"}, "v1"))
	rest := env.Client.CoreV1().RESTClient()
	if err := rest.Post().AbsPath("/apis/apiextensions.k8s.io/v1/customresourcedefinitions").Body([]byte(body)).
		Do(context.Background()).Error(); err != nil {
		t.Fatalf("creating the CRD: %v", err)
	}
}

func svmGetCRD(t *testing.T) map[string]any {
	t.Helper()
	raw, err := env.Client.CoreV1().RESTClient().Get().AbsPath(svmCRDPath()).DoRaw(context.Background())
	if err != nil {
		t.Fatalf("reading the CRD: %v", err)
	}
	var crd map[string]any
	if err := json.Unmarshal(raw, &crd); err != nil {
		t.Fatal(err)
	}
	return crd
}

func svmStoredVersions(t *testing.T) []string {
	crd := svmGetCRD(t)
	st, _ := crd["status"].(map[string]any)
	var out []string
	if l, ok := st["storedVersions"].([]any); ok {
		for _, v := range l {
			out = append(out, fmt.Sprint(v))
		}
	}
	return out
}

func svmCRDCondition(t *testing.T, typ string) map[string]any {
	crd := svmGetCRD(t)
	st, _ := crd["status"].(map[string]any)
	conds, _ := st["conditions"].([]any)
	for _, c := range conds {
		if m, ok := c.(map[string]any); ok && m["type"] == typ {
			return m
		}
	}
	return nil
}

// svmSetStorage makes the CRD serve names with storage as its storage version.
func svmSetStorage(t *testing.T, names []string, storage string) {
	t.Helper()
	patch := fmt.Sprintf(`{"spec":{"versions":%s}}`, svmCRDVersions(names, storage))
	if err := env.Client.CoreV1().RESTClient().Patch("application/merge-patch+json").AbsPath(svmCRDPath()).
		Body([]byte(patch)).Do(context.Background()).Error(); err != nil {
		t.Fatalf("changing the CRD's versions: %v", err)
	}
}

func svmCR(t *testing.T, dyn dynamic.Interface, version, name string) *unstructured.Unstructured {
	t.Helper()
	gvr := schema.GroupVersionResource{Group: svmGroup, Version: version, Resource: svmPlural}
	u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": svmGroup + "/" + version, "kind": svmKind,
		"metadata": map[string]any{"name": name, "namespace": "default"}, "spec": map[string]any{"size": 1}}}
	var out *unstructured.Unstructured
	Eventually(t, 60*time.Second, "creating "+name+" as "+version, func() (bool, string) {
		var err error
		out, err = dyn.Resource(gvr).Namespace("default").Create(context.Background(), u, metav1.CreateOptions{})
		if err != nil {
			return false, err.Error()
		}
		return true, ""
	})
	return out
}

func svmGetCR(t *testing.T, dyn dynamic.Interface, name string) *unstructured.Unstructured {
	t.Helper()
	gvr := schema.GroupVersionResource{Group: svmGroup, Version: "v2", Resource: svmPlural}
	u, err := dyn.Resource(gvr).Namespace("default").Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("reading %s: %v", name, err)
	}
	return u
}

func svmCreate(t *testing.T, name, group, resource string) {
	t.Helper()
	svm := &svmv1.StorageVersionMigration{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: svmv1.StorageVersionMigrationSpec{Resource: metav1.GroupResource{Group: group, Resource: resource}}}
	if _, err := env.Client.StoragemigrationV1().StorageVersionMigrations().Create(context.Background(), svm,
		metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating StorageVersionMigration %s: %v", name, err)
	}
}

func svmGet(t *testing.T, name string) *svmv1.StorageVersionMigration {
	t.Helper()
	svm, err := env.Client.StoragemigrationV1().StorageVersionMigrations().Get(context.Background(), name,
		metav1.GetOptions{})
	if err != nil {
		t.Fatalf("reading StorageVersionMigration %s: %v", name, err)
	}
	return svm
}

func svmCond(svm *svmv1.StorageVersionMigration, typ svmv1.MigrationConditionType) *metav1.Condition {
	return meta.FindStatusCondition(svm.Status.Conditions, string(typ))
}

func svmWant(t *testing.T, svm *svmv1.StorageVersionMigration, typ svmv1.MigrationConditionType,
	status metav1.ConditionStatus, reason, message string) {
	t.Helper()
	c := svmCond(svm, typ)
	if c == nil {
		t.Fatalf("%s: no %s condition: %+v", svm.Name, typ, svm.Status.Conditions)
	}
	if c.Status != status || c.Reason != reason || c.Message != message {
		t.Errorf("%s: condition %s = %s/%s/%q, want %s/%s/%q", svm.Name, typ, c.Status, c.Reason, c.Message,
			status, reason, message)
	}
}

// TestSVM_CRDMigration: TestStorageVersionMigrationWithCRD (see the file's comment).
func TestSVM_CRDMigration(t *testing.T) {
	withPrivateCluster(t, harness.Options{}, func() {
		dyn, err := dynamic.NewForConfig(env.Config)
		if err != nil {
			t.Fatal(err)
		}
		svmCreateCRD(t)
		cr1 := svmCR(t, dyn, "v1", "cr1")
		if v := svmStoredVersion(t, "default", "cr1"); v != svmGroup+"/v1" {
			t.Fatalf("cr1 stored as %s, want v1", v)
		}
		// v2 served, v1 still stored
		svmSetStorage(t, []string{"v1", "v2"}, "v1")
		cr2 := svmCR(t, dyn, "v2", "cr2")
		if v := svmStoredVersion(t, "default", "cr2"); v != svmGroup+"/v1" {
			t.Fatalf("cr2 stored as %s, want v1", v)
		}
		// v2 the storage version: new objects are stored as v2 (the apiserver takes a moment
		// to switch, as upstream's test notes: recreate until it has)
		svmSetStorage(t, []string{"v1", "v2"}, "v2")
		var cr3 *unstructured.Unstructured
		Eventually(t, 30*time.Second, "cr3 stored as v2", func() (bool, string) {
			cr3 = svmCR(t, dyn, "v1", "cr3")
			if v := svmStoredVersion(t, "default", "cr3"); v != svmGroup+"/v2" {
				gvr := schema.GroupVersionResource{Group: svmGroup, Version: "v1", Resource: svmPlural}
				_ = dyn.Resource(gvr).Namespace("default").Delete(context.Background(), "cr3", metav1.DeleteOptions{})
				return false, "stored as " + v
			}
			return true, ""
		})
		cr4 := svmCR(t, dyn, "v2", "cr4")
		for _, n := range []string{"cr1", "cr2"} {
			if v := svmStoredVersion(t, "default", n); v != svmGroup+"/v1" {
				t.Fatalf("%s stored as %s before the migration, want v1", n, v)
			}
		}
		if sv := svmStoredVersions(t); strings.Join(sv, ",") != "v1,v2" {
			t.Fatalf("storedVersions before the migration = %v, want [v1 v2]", sv)
		}

		p := startKcmd(t, nil, svmKcmdFlags()...)
		defer dumpKcmdLogs(t, p)
		svmCreate(t, "crdsvm", svmGroup, svmPlural)

		// as upstream's isCRDMigrated: the migration waits until the cache has seen its
		// resourceVersion, so a trigger object is written while it waits
		i := 0
		Eventually(t, 150*time.Second, "the migration Succeeded", func() (bool, string) {
			svm := svmGet(t, "crdsvm")
			if c := svmCond(svm, svmv1.MigrationFailed); c != nil && c.Status == metav1.ConditionTrue {
				t.Fatalf("the migration failed: %s", c.Message)
			}
			if c := svmCond(svm, svmv1.MigrationSucceeded); c != nil && c.Status == metav1.ConditionTrue {
				return true, ""
			}
			if svm.Status.ResourceVersion != "" {
				i++
				svmCR(t, dyn, "v2", fmt.Sprintf("triggercr-%d", i))
			}
			return false, fmt.Sprintf("rv %q conditions %+v", svm.Status.ResourceVersion, svm.Status.Conditions)
		})
		// the runner's clean-up: Running False, the CRD's stored versions reduced to v2
		Eventually(t, 30*time.Second, "Running=False and storedVersions [v2]", func() (bool, string) {
			svm := svmGet(t, "crdsvm")
			c := svmCond(svm, svmv1.MigrationRunning)
			sv := svmStoredVersions(t)
			if c == nil || c.Status != metav1.ConditionFalse || strings.Join(sv, ",") != "v2" {
				return false, fmt.Sprintf("running %+v storedVersions %v", c, sv)
			}
			return true, ""
		})
		svm := svmGet(t, "crdsvm")
		svmWant(t, svm, svmv1.MigrationSucceeded, metav1.ConditionTrue, "StorageVersionMigrationSucceeded",
			"Migration completed")
		svmWant(t, svm, svmv1.MigrationRunning, metav1.ConditionFalse, "MigrationCompleted", "Migration completed")
		if c := svmCond(svm, svmv1.MigrationFailed); c != nil {
			t.Errorf("a Failed condition on a migration that succeeded: %+v", c)
		}
		if c := svmCRDCondition(t, "StorageMigrating"); c == nil || c["status"] != "False" ||
			c["reason"] != "MigrationSucceeded" ||
			c["message"] != "The migration has succeeded and the stored versions have been updated" {
			t.Errorf("the CRD's StorageMigrating condition = %v", c)
		}
		for _, n := range []string{"cr1", "cr2", "cr3", "cr4"} {
			if v := svmStoredVersion(t, "default", n); v != svmGroup+"/v2" {
				t.Errorf("%s stored as %s after the migration, want v2", n, v)
			}
		}
		// rewritten: cr1 and cr2 (new resourceVersion, same generation); cr3 and cr4 were
		// stored as v2 already: their no-op write leaves them as they were
		for _, c := range []struct {
			before  *unstructured.Unstructured
			updated bool
		}{{cr1, true}, {cr2, true}, {cr3, false}, {cr4, false}} {
			now := svmGetCR(t, dyn, c.before.GetName())
			if (now.GetResourceVersion() != c.before.GetResourceVersion()) != c.updated {
				t.Errorf("%s: resourceVersion %s -> %s, rewritten want %t", c.before.GetName(),
					c.before.GetResourceVersion(), now.GetResourceVersion(), c.updated)
			}
			if now.GetGeneration() != c.before.GetGeneration() {
				t.Errorf("%s: generation %d -> %d", c.before.GetName(), c.before.GetGeneration(), now.GetGeneration())
			}
		}
		// v1 no longer served: the v2 list works
		svmSetStorage(t, []string{"v2"}, "v2")
		gvr := schema.GroupVersionResource{Group: svmGroup, Version: "v2", Resource: svmPlural}
		Eventually(t, 30*time.Second, "v2 list", func() (bool, string) {
			l, err := dyn.Resource(gvr).Namespace("default").List(context.Background(), metav1.ListOptions{})
			if err != nil {
				return false, err.Error()
			}
			return len(l.Items) >= 4, fmt.Sprintf("%d items", len(l.Items))
		})
	})
}

// TestSVM_UnknownResource: a migration of a resource discovery does not list fails a minute
// after its creation with the resource version controller's condition, and the runner then
// marks it no longer running.
func TestSVM_UnknownResource(t *testing.T) {
	withPrivateCluster(t, harness.Options{}, func() {
		p := startKcmd(t, nil, svmKcmdFlags()...)
		defer dumpKcmdLogs(t, p)
		svmCreate(t, "nothing", "nope.kcmd.test", "things")
		start := time.Now()
		Eventually(t, 30*time.Second, "Running", func() (bool, string) {
			c := svmCond(svmGet(t, "nothing"), svmv1.MigrationRunning)
			return c != nil && c.Status == metav1.ConditionTrue, fmt.Sprintf("%+v", c)
		})
		Eventually(t, 150*time.Second, "Failed", func() (bool, string) {
			svm := svmGet(t, "nothing")
			c := svmCond(svm, svmv1.MigrationFailed)
			r := svmCond(svm, svmv1.MigrationRunning)
			return c != nil && r != nil && r.Status == metav1.ConditionFalse, fmt.Sprintf("%+v", svm.Status.Conditions)
		})
		if d := time.Since(start); d < 50*time.Second {
			t.Errorf("failed after %v: the minute of grace was not given", d)
		}
		svm := svmGet(t, "nothing")
		svmWant(t, svm, svmv1.MigrationFailed, metav1.ConditionTrue, "StorageVersionMigrationFailed",
			"resource does not exist in discovery")
		svmWant(t, svm, svmv1.MigrationRunning, metav1.ConditionFalse, "MigrationCompleted", "Migration completed")
		if c := svmCond(svm, svmv1.MigrationSucceeded); c != nil {
			t.Errorf("Succeeded on a failed migration: %+v", c)
		}
		if svm.Status.ResourceVersion != "" {
			t.Errorf("status.resourceVersion %q set for an unknown resource", svm.Status.ResourceVersion)
		}
	})
}

// TestSVM_RequiresGarbageCollector: kcm refuses to start the migrator without the garbage
// collector (--enable-garbage-collector=false); so does kcmd, with kcm's message.
func TestSVM_RequiresGarbageCollector(t *testing.T) {
	if env.KcmdBinDir == "" {
		t.Fatal("KCMD_BIN_DIR is not set (run through make e2e)")
	}
	run := func(args ...string) (string, error) {
		cmd := exec.Command(filepath.Join(env.KcmdBinDir, "kcmd"),
			append([]string{"--kubeconfig=" + env.Cluster.Kubeconfig, "--secure-port=0", "--leader-elect=false"}, args...)...)
		// its own process group, killed whole; pipes held by a straggler do not block Wait
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
		cmd.WaitDelay = 5 * time.Second
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		done := make(chan struct{})
		var out []byte
		var err error
		go func() { out, err = cmd.CombinedOutput(); close(done) }()
		select {
		case <-done:
			return string(out), err
		case <-ctx.Done():
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-done
			return string(out), ctx.Err()
		}
	}
	out, err := run("--controllers=svm", "--enable-garbage-collector=false")
	if err == nil || err == context.DeadlineExceeded ||
		!strings.Contains(out, "storage version migrator requires garbage collector") {
		t.Fatalf("kcmd --controllers=svm --enable-garbage-collector=false: err %v, output:\n%s", err, out)
	}
	// negative control: with the garbage collector flag on, the same kcmd runs until killed
	if out, err := run("--controllers=svm", "--enable-garbage-collector=true"); err != context.DeadlineExceeded {
		t.Fatalf("kcmd --controllers=svm --enable-garbage-collector=true ended: %v\n%s", err, out)
	}
}

// TestSVM_DuringChaos ports upstream's TestStorageVersionMigrationDuringChaos: 50 custom
// resources stored at the storage version already, objects created and deleted all along (so
// some patches meet NotFound), and 10 migrations of the resource created at once. Every
// migration Succeeds; at no observed moment do two of them run (the runner starts the oldest
// only when none is running); every one ends Running=False; and the 50 objects are untouched
// (their rewrite is a no-op: same resourceVersion and generation).
func TestSVM_DuringChaos(t *testing.T) {
	withPrivateCluster(t, harness.Options{}, func() {
		dyn, err := dynamic.NewForConfig(env.Config)
		if err != nil {
			t.Fatal(err)
		}
		svmCreateCRD(t)
		gvr := schema.GroupVersionResource{Group: svmGroup, Version: "v1", Resource: svmPlural}
		before := map[string]*unstructured.Unstructured{}
		for i := range 50 {
			cr := svmCR(t, dyn, "v1", fmt.Sprintf("created-cr-%d", i))
			before[cr.GetName()] = cr
		}
		p := startKcmd(t, nil, svmKcmdFlags()...)
		defer dumpKcmdLogs(t, p)

		// the chaos: create and delete objects until the migrations are over
		stop := make(chan struct{})
		chaosDone := make(chan struct{})
		go func() {
			defer close(chaosDone)
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				name := fmt.Sprintf("chaos-%d", i)
				u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": svmGroup + "/v1", "kind": svmKind,
					"metadata": map[string]any{"name": name, "namespace": "default"}}}
				_, _ = dyn.Resource(gvr).Namespace("default").Create(context.Background(), u, metav1.CreateOptions{})
				time.Sleep(20 * time.Millisecond)
				_ = dyn.Resource(gvr).Namespace("default").Delete(context.Background(), name, metav1.DeleteOptions{})
			}
		}()
		defer func() {
			select {
			case <-stop:
			default:
				close(stop)
			}
			<-chaosDone
		}()

		const migrations = 10
		errs := make(chan error, migrations)
		for i := range migrations {
			go func() {
				svm := &svmv1.StorageVersionMigration{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("chaos-svm-%d", i)},
					Spec: svmv1.StorageVersionMigrationSpec{Resource: metav1.GroupResource{Group: svmGroup, Resource: svmPlural}}}
				_, err := env.Client.StoragemigrationV1().StorageVersionMigrations().Create(context.Background(), svm,
					metav1.CreateOptions{})
				errs <- err
			}()
		}
		for range migrations {
			if err := <-errs; err != nil {
				t.Fatalf("creating a StorageVersionMigration: %v", err)
			}
		}
		maxRunning, n := 0, 0
		Eventually(t, 240*time.Second, "every migration Succeeded", func() (bool, string) {
			l, err := env.Client.StoragemigrationV1().StorageVersionMigrations().List(context.Background(), metav1.ListOptions{})
			if err != nil {
				return false, err.Error()
			}
			running, done := 0, 0
			for i := range l.Items {
				svm := &l.Items[i]
				if c := svmCond(svm, svmv1.MigrationFailed); c != nil && c.Status == metav1.ConditionTrue {
					t.Fatalf("%s failed: %s", svm.Name, c.Message)
				}
				succeeded := svmCond(svm, svmv1.MigrationSucceeded) != nil
				if c := svmCond(svm, svmv1.MigrationRunning); c != nil && c.Status == metav1.ConditionTrue && !succeeded {
					running++
				}
				if succeeded {
					done++
				}
			}
			maxRunning = max(maxRunning, running)
			if running > 1 {
				t.Errorf("%d migrations of one resource running at once", running)
			}
			// the cache must observe each migration's checkpoint: an object written now
			n++
			svmCR(t, dyn, "v1", fmt.Sprintf("chaos-trigger-%d", n))
			return len(l.Items) == migrations && done == migrations, fmt.Sprintf("%d/%d succeeded", done, len(l.Items))
		})
		close(stop)
		<-chaosDone
		t.Logf("at most %d migration(s) seen running at once over %d polls", maxRunning, n)
		Eventually(t, 60*time.Second, "every migration Running=False", func() (bool, string) {
			l, err := env.Client.StoragemigrationV1().StorageVersionMigrations().List(context.Background(), metav1.ListOptions{})
			if err != nil {
				return false, err.Error()
			}
			for i := range l.Items {
				c := svmCond(&l.Items[i], svmv1.MigrationRunning)
				if c == nil || c.Status != metav1.ConditionFalse || c.Reason != "MigrationCompleted" {
					return false, fmt.Sprintf("%s: %+v", l.Items[i].Name, c)
				}
			}
			return true, ""
		})
		for name, b := range before {
			now, err := dyn.Resource(gvr).Namespace("default").Get(context.Background(), name, metav1.GetOptions{})
			if err != nil {
				t.Fatalf("reading %s: %v", name, err)
			}
			if now.GetResourceVersion() != b.GetResourceVersion() || now.GetGeneration() != b.GetGeneration() {
				t.Errorf("%s changed by a no-op migration: rv %s -> %s, generation %d -> %d", name,
					b.GetResourceVersion(), now.GetResourceVersion(), b.GetGeneration(), now.GetGeneration())
			}
		}
	})
}
