package e2e

// Issue 21, "Fencing must not depend on the manager's loop": the manager is stopped (SIGSTOP)
// while it leads, its renew deadline passes, and its worker processes, which the stopped manager
// can no longer kill, must not write: each checks the leadership deadline the manager published
// in shared memory before every write (kube/fence.h). The ReplicaSet is scaled up while the
// manager is stopped; no pod may appear. The negative control (KCMD_TEST_UNFENCED=1: the manager
// hands its workers no fence) shows the oracle fires: there the workers create the pods.

import (
	"context"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func livePods(t *testing.T, ns string) int {
	t.Helper()
	l, err := env.Client.CoreV1().Pods(ns).List(context.Background(), metav1.ListOptions{LabelSelector: "rs=fence"})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for i := range l.Items {
		if l.Items[i].DeletionTimestamp == nil && l.Items[i].Status.Phase != corev1.PodFailed {
			n++
		}
	}
	return n
}

func fenceRun(t *testing.T, unfenced bool) (before, after int) {
	stopSharedRS(t) // the shared ReplicaSet kcmd would scale the ReplicaSet while this one is fenced
	ns := rsNamespace(t)
	lease := leaseName(t)
	var extra []string
	if unfenced {
		extra = []string{"KCMD_TEST_UNFENCED=1"}
	}
	flags := append([]string{"--controllers=replicaset-controller", "--secure-port=0",
		"--leader-elect-resource-name=" + lease}, fastElection...)
	a := startKcmd(t, extra, flags...)
	Eventually(t, 20*time.Second, "kcmd to lead", func() (bool, string) { return a.Logged("became leader"), "" })
	mustCreateRS(t, testRS(ns, "fence", 2))
	Eventually(t, 30*time.Second, "2 pods", func() (bool, string) { return livePods(t, ns) == 2, "" })
	if err := a.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = a.cmd.Process.Signal(syscall.SIGCONT) }()
	// the renew deadline (3 s) counts from the last renewal's send time: 4 s is past it
	time.Sleep(4 * time.Second)
	// scale without waiting for it (scaleRS waits for the controller)
	rs, err := env.Client.AppsV1().ReplicaSets(ns).Get(context.Background(), "fence", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	six := int32(6)
	rs.Spec.Replicas = &six
	if _, err := env.Client.AppsV1().ReplicaSets(ns).Update(context.Background(), rs, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(6 * time.Second)
	return 2, livePods(t, ns)
}

func TestManager_FenceWhenManagerStalls(t *testing.T) {
	before, after := fenceRun(t, false)
	if after != before {
		t.Fatalf("the stopped leader's workers wrote past the renew deadline: %d pods, want %d", after, before)
	}
	t.Logf("manager stopped past its renew deadline: no write by its workers (%d pods)", after)
}

func TestManager_FenceNegativeControl(t *testing.T) {
	before, after := fenceRun(t, true)
	if after == before {
		t.Fatalf("negative control: with no fence the stopped leader's workers should have scaled up, got %d pods", after)
	}
	t.Logf("negative control: unfenced workers wrote past the deadline (%d pods, from %d)", after, before)
}
