package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"kcmd.local/tests/cluster/harness"
)

// TestKube_CClient runs kube/'s own end-to-end program (build/t/kube/tests/e2e-kube: HTTP/2,
// pagination, watch resume and 410, non-blocking multiplexing, conflicts and patches, adoption
// bodies, Lease, token / client-cert / exec-plugin auth) against a real apiserver. It gets a
// cluster of its own that compacts etcd every second and serves watches from etcd (no watch
// cache), so that an old resourceVersion really is gone (410 Expired) when the program asks for
// it; a watch cache may still answer an old version from its window.
func TestKube_CClient(t *testing.T) {
	bin := filepath.Join(env.KcmdBinDir, "..", "t", "kube", "tests", "e2e-kube")
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("%s not built: %v (make e2e builds it)", bin, err)
	}
	c, err := harness.Start(context.Background(), harness.Options{BinDir: os.Getenv("KCMD_CLUSTER_BIN"),
		CompactionInterval: time.Second, ExtraAPIServerFlags: []string{"--watch-cache=false"}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Stop()
	time.Sleep(3 * time.Second) // two compactions: resourceVersion 1 is history
	cmd := exec.Command(bin)
	cmd.Dir = filepath.Join(env.KcmdBinDir, "..", "..") // fixtures are found from the tree top
	cmd.Env = append(os.Environ(), "KUBECONFIG="+c.Kubeconfig, "KCMD_TEST_SERVER="+c.Server, "KCMD_TEST_CA="+c.CAFile,
		"KCMD_TEST_TOKEN="+c.AdminToken, "KCMD_CLUSTER_DIR="+c.Dir)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("e2e-kube failed: %v\n%s", err, out)
	}
	t.Logf("%s", out)
}
