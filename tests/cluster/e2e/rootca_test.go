package e2e

// kcmd's root-ca-certificate-publisher-controller (docs/rootcacert.md) against the real cluster,
// upstream kube-controller-manager not running it. Ported from upstream's e2e
// test/e2e/auth/service_accounts.go (v1.37, "should guarantee kube-root-ca.crt exist in any
// namespace" [Conformance]: present in a new namespace, recreated when deleted, reconciled when
// its data is changed) and the facts of publisher_test.go (a different non-empty description
// is left alone); plus kcm's start-up rules for --root-ca-file.

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"kcmd.local/tests/cluster/harness"
)

const (
	rcName = "kube-root-ca.crt"
	rcAnn  = "kubernetes.io/description"
	rcDesc = "Contains a CA bundle that can be used to verify the kube-apiserver when using internal endpoints such as the internal service IP or kubernetes.default.svc. No other usage is guaranteed across distributions of Kubernetes clusters."
)

func rcGet(ns string) (*corev1.ConfigMap, error) {
	return env.Client.CoreV1().ConfigMaps(ns).Get(context.Background(), rcName, metav1.GetOptions{})
}

// rcWait waits for the ConfigMap to hold exactly {ca.crt: ca} and upstream's description, and
// (notUID != "") to be another object than notUID.
func rcWait(t *testing.T, ns, ca string, notUID types.UID) *corev1.ConfigMap {
	t.Helper()
	var cm *corev1.ConfigMap
	Eventually(t, 30*time.Second, "ConfigMap "+ns+"/"+rcName, func() (bool, string) {
		c, err := rcGet(ns)
		if err != nil {
			return false, err.Error()
		}
		if c.UID == notUID {
			return false, "still the deleted one"
		}
		if len(c.Data) != 1 || c.Data["ca.crt"] != ca {
			return false, "data is not {ca.crt: <root CA>}"
		}
		if c.Annotations[rcAnn] == "" {
			return false, "no description"
		}
		cm = c
		return true, ""
	})
	return cm
}

func TestRootCA_PublishRecreateReconcile(t *testing.T) {
	ctx := context.Background()
	caPEM, err := os.ReadFile(env.Cluster.CAFile)
	if err != nil {
		t.Fatal(err)
	}
	ca := string(caPEM)
	p := saStart(t, "root-ca-certificate-publisher-controller", "--root-ca-file="+env.Cluster.CAFile)
	// upstream's WaitForNamedCacheSync: no namespace is synced (a ConfigMap written, or a
	// failed sync) before Namespaces and ConfigMaps have been listed (workers/cachewait.h)
	waitCachesSynced(t, p, "root-ca-certificate-publisher-controller", func(l string) bool {
		return strings.Contains(l, "/"+rcName) || strings.Contains(l, `syncing "`)
	})
	ns := Namespace(t)
	cm := rcWait(t, ns, ca, "")
	// the order check looked for the right lines: this write is logged (--v=4)
	Eventually(t, 10*time.Second, "the create logged", func() (bool, string) {
		return p.Logged("created configmap " + ns + "/" + rcName), "not logged"
	})
	if cm.Annotations[rcAnn] != rcDesc {
		t.Errorf("description %q", cm.Annotations[rcAnn])
	}
	if !p.Logged("using service account kube-system/root-ca-cert-publisher") {
		t.Error("the controller does not act as its service account")
	}

	// deleted: recreated
	if err := env.Client.CoreV1().ConfigMaps(ns).Delete(ctx, rcName, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	cm = rcWait(t, ns, ca, cm.UID)

	// data changed (a value, an added key): reconciled
	cm.Data = map[string]string{"ca.crt": "changed", "other": "x"}
	if _, err := env.Client.CoreV1().ConfigMaps(ns).Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	cm = rcWait(t, ns, ca, "")

	// a description of another non-empty text with the right data: left alone
	cm.Annotations[rcAnn] = "different"
	cm.Labels = map[string]string{"touched": "yes"}
	if _, err := env.Client.CoreV1().ConfigMaps(ns).Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(2 * time.Second)
	if c, err := rcGet(ns); err != nil || c.Annotations[rcAnn] != "different" {
		t.Fatalf("a different description was rewritten (or %v)", err)
	}
	// removed: set again
	cm, _ = rcGet(ns)
	delete(cm.Annotations, rcAnn)
	if _, err := env.Client.CoreV1().ConfigMaps(ns).Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	Eventually(t, 30*time.Second, "the description set again", func() (bool, string) {
		c, err := rcGet(ns)
		if err != nil {
			return false, err.Error()
		}
		return c.Annotations[rcAnn] == rcDesc, c.Annotations[rcAnn]
	})
}

// TestRootCA_SameAsUpstream: without --root-ca-file both publish the kubeconfig's
// certificate-authority-data (the test kubeconfig names a CA file instead, so both publish an
// empty ca.crt: kcm reads rest.Config.CAData, which clientcmd does not fill from a file).
func TestRootCA_SameAsUpstream(t *testing.T) {
	ctx := context.Background()
	if err := env.Cluster.StartKCM(ctx, harness.KCMOptions{Controllers: "root-ca-certificate-publisher-controller"}); err != nil {
		t.Fatal(err)
	}
	nsU := Namespace(t)
	var up *corev1.ConfigMap
	Eventually(t, 60*time.Second, "upstream's ConfigMap", func() (bool, string) {
		c, err := rcGet(nsU)
		if err != nil {
			return false, err.Error()
		}
		up = c
		return true, ""
	})
	env.Cluster.StopKCM()

	saStart(t, "root-ca-certificate-publisher-controller")
	ns := Namespace(t)
	cm := rcWait(t, ns, up.Data["ca.crt"], "")
	if len(up.Data) != len(cm.Data) || up.Annotations[rcAnn] != cm.Annotations[rcAnn] {
		t.Errorf("kcm published %v %v, kcmd %v %v", up.Data, up.Annotations, cm.Data, cm.Annotations)
	}
}

// TestRootCA_BadFile: a --root-ca-file that is not PEM certificates stops kcmd at start with
// kcm's message, as kcm does not start.
func TestRootCA_BadFile(t *testing.T) {
	f := filepath.Join(t.TempDir(), "ca.crt")
	if err := os.WriteFile(f, []byte("not a certificate\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	p := startKcmd(t, nil, "--controllers=root-ca-certificate-publisher-controller", "--secure-port=0",
		"--leader-elect=false", "--root-ca-file="+f)
	select {
	case <-p.done:
	case <-time.After(30 * time.Second):
		t.Fatal("kcmd still runs with a bad --root-ca-file")
	}
	if !p.Logged("error parsing root-ca-file at " + f) {
		t.Errorf("no error naming the file: %v", p.Logs())
	}
}
