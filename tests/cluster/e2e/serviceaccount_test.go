package e2e

// kcmd's serviceaccount-controller (docs/serviceaccount.md) against the real cluster, upstream
// kube-controller-manager not running. Ported from upstream's test/integration/serviceaccount
// (v1.37, TestServiceAccountAutoCreate: the default account appears, and reappears after a
// delete) and a namespace that existed before kcmd started. The
// terminating-namespace rule is a unit test (the apiserver refuses such a create anyway).

import (
	"context"
	"strconv"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// saStart runs kcmd with only the given controllers, each acting as its own service account
// (so every request must be allowed by upstream's bootstrap role for it).
func saStart(t *testing.T, controllers string, extra ...string) *kcmdProc {
	t.Helper()
	port := gcxFreePort(t)
	flags := append([]string{"--controllers=" + controllers, "--secure-port=" + strconv.Itoa(port),
		"--bind-address=127.0.0.1", "--authorization-always-allow-paths=/healthz,/metrics",
		"--use-service-account-credentials", "--leader-elect=false", "--v=4"}, extra...)
	p := startKcmd(t, nil, flags...)
	t.Cleanup(func() { dumpKcmdLogs(t, p) })
	return p
}

func saWaitDefault(t *testing.T, ns string, notUID types.UID) *corev1.ServiceAccount {
	t.Helper()
	var sa *corev1.ServiceAccount
	Eventually(t, 30*time.Second, "ServiceAccount "+ns+"/default", func() (bool, string) {
		s, err := env.Client.CoreV1().ServiceAccounts(ns).Get(context.Background(), "default", metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		if s.UID == notUID {
			return false, "still the deleted one"
		}
		sa = s
		return true, ""
	})
	return sa
}

// TestServiceAccount_AutoCreate: upstream's TestServiceAccountAutoCreate.
func TestServiceAccount_AutoCreate(t *testing.T) {
	p := saStart(t, "serviceaccount-controller")
	ns := Namespace(t)
	sa := saWaitDefault(t, ns, "")
	if !p.Logged("using service account kube-system/service-account-controller") {
		t.Error("the controller does not act as its service account")
	}
	if err := env.Client.CoreV1().ServiceAccounts(ns).Delete(context.Background(), "default", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	saWaitDefault(t, ns, sa.UID)
}

// TestServiceAccount_ExistingNamespaces: namespaces created before kcmd started get theirs too
// (the informer's initial list, here the dispatcher's resync from the arena).
func TestServiceAccount_ExistingNamespaces(t *testing.T) {
	ns := Namespace(t)
	if _, err := env.Client.CoreV1().ServiceAccounts(ns).Get(context.Background(), "default", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("default account before kcmd runs: %v (is upstream kcm running?)", err)
	}
	saStart(t, "serviceaccount-controller")
	saWaitDefault(t, ns, "")
}
