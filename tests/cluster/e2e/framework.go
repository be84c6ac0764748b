// Package e2e holds kcmd's end-to-end tests. They run against a real kube-apiserver and etcd
// started by package harness (one cluster per test binary, shared by the tests, each test in its
// own namespace) and assert only through client-go, the reference client, so that a bug in
// kcmd's own C client cannot hide a bug in kcmd.
package e2e

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"kcmd.local/tests/cluster/harness"
)

// Env is the cluster shared by the tests of one `go test` run.
type Env struct {
	Cluster *harness.Cluster
	Config  *rest.Config
	Client  kubernetes.Interface
	// KcmdBinDir holds kcmd's own binaries (make e2e sets KCMD_BIN_DIR).
	KcmdBinDir string
}

var env *Env

// startEnv brings the shared cluster up; TestMain calls it once.
func startEnv(ctx context.Context) (*Env, error) {
	bin := os.Getenv("KCMD_CLUSTER_BIN")
	if bin == "" {
		return nil, fmt.Errorf("KCMD_CLUSTER_BIN is not set: run through `make e2e` (tests/cluster/run-e2e.sh)")
	}
	var logw *os.File
	if testing.Verbose() {
		logw = os.Stderr
	}
	opts := harness.Options{BinDir: bin, WorkDir: os.Getenv("KCMD_CLUSTER_WORKDIR")}
	if logw != nil {
		opts.Log = logw
	}
	start := time.Now()
	c, err := harness.Start(ctx, opts)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(os.Stderr, "e2e: cluster up in %.1fs (%s, logs in %s/logs)\n", time.Since(start).Seconds(), c.Server, c.Dir)
	cfg, err := clientcmd.BuildConfigFromFlags("", c.Kubeconfig)
	if err != nil {
		c.Stop()
		return nil, err
	}
	cfg.QPS, cfg.Burst = 500, 1000
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		c.Stop()
		return nil, err
	}
	return &Env{Cluster: c, Config: cfg, Client: cs, KcmdBinDir: os.Getenv("KCMD_BIN_DIR")}, nil
}

// Namespace creates a fresh namespace for t and deletes it when t ends.
func Namespace(t *testing.T) string {
	t.Helper()
	name := strings.ToLower(strings.NewReplacer("_", "-", "/", "-").Replace(t.Name()))
	if len(name) > 50 {
		name = name[:50]
	}
	name = fmt.Sprintf("%s-%d", strings.Trim(name, "-"), time.Now().UnixNano()%100000)
	ctx := context.Background()
	if _, err := env.Client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating namespace %s: %v", name, err)
	}
	t.Cleanup(func() { deleteTestNamespace(name) })
	return name
}

// deleteTestNamespace deletes a test's namespace after emptying it of what the controllers under
// test act on. The test cluster runs no namespace controller, so a deleted namespace keeps its
// content forever (Terminating): left behind, every later kcmd's ReplicaSet controller would
// sync (and try to fill) thousands of other tests' ReplicaSets before the ones of its own test,
// and every GC would walk their pods.
func deleteTestNamespace(name string) {
	ctx := context.Background()
	c := env.Client
	all := metav1.ListOptions{}
	bg := metav1.DeletePropagationBackground
	_ = c.AppsV1().Deployments(name).DeleteCollection(ctx, metav1.DeleteOptions{PropagationPolicy: &bg}, all)
	_ = c.AppsV1().ReplicaSets(name).DeleteCollection(ctx, metav1.DeleteOptions{PropagationPolicy: &bg}, all)
	_ = c.CoreV1().ReplicationControllers(name).DeleteCollection(ctx, metav1.DeleteOptions{PropagationPolicy: &bg}, all)
	_ = c.BatchV1().Jobs(name).DeleteCollection(ctx, metav1.DeleteOptions{PropagationPolicy: &bg}, all)
	_ = c.BatchV1().CronJobs(name).DeleteCollection(ctx, metav1.DeleteOptions{PropagationPolicy: &bg}, all)
	zero := int64(0)
	_ = c.CoreV1().Pods(name).DeleteCollection(ctx, metav1.DeleteOptions{GracePeriodSeconds: &zero}, all)
	_ = c.CoreV1().Namespaces().Delete(ctx, name, metav1.DeleteOptions{})
}

// Eventually polls cond every interval until it returns true or timeout passes; on timeout the
// test fails with the last message cond gave.
func Eventually(t *testing.T, timeout time.Duration, what string, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	last := ""
	for {
		ok, msg := cond()
		if ok {
			return
		}
		last = msg
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s: %s", timeout, what, last)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
