package e2e

// kcmd's podgroup-protection-controller (docs/podgroupprotection.md) against the real apiserver,
// upstream kube-controller-manager not running. PodGroups (scheduling.k8s.io/v1beta1) exist only
// with the GenericWorkload gate (beta, off in v1.37) and the beta API turned on, so the scenarios
// run on a private cluster whose apiserver has both; kcmd runs the controller alone, with
// --feature-gates=GenericWorkload=true, as its own service account (kcm's bootstrap role
// system:controller:podgroup-protection-controller must allow every request).
//
// The cases are upstream's podgroup_protection_controller_test.go TestPodGroupProtectionController
// scenarios on real objects. The finalizer is stamped on create by the apiserver's
// PodGroupProtection admission plugin (on by default, acting with the gate), not by the
// controller: the first case checks that it is there and that the controller does not put it
// back once removed. No kubelet or scheduler runs: a pod is "scheduled" with spec.nodeName, its
// phase is written by the test through the status subresource, and it is removed with grace
// period 0. A PodGroup kept by a pod is checked twice: the controller logged that it keeps it
// (it looked), and the PodGroup is still there, being deleted, with the finalizer.

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"kcmd.local/tests/cluster/harness"
)

const pgpFinalizer = "scheduling.k8s.io/podgroup-protection"

// pgpClusterOptions: the gate and the beta API on in the apiserver.
var pgpClusterOptions = harness.Options{ExtraAPIServerFlags: []string{
	"--feature-gates=GenericWorkload=true", "--runtime-config=scheduling.k8s.io/v1beta1=true"}}

func pgpCreate(t *testing.T, ns, name string) *schedulingv1beta1.PodGroup {
	t.Helper()
	pg, err := env.Client.SchedulingV1beta1().PodGroups(ns).Create(context.Background(), &schedulingv1beta1.PodGroup{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: schedulingv1beta1.PodGroupSpec{
			SchedulingPolicy: schedulingv1beta1.PodGroupSchedulingPolicy{Basic: &schedulingv1beta1.BasicSchedulingPolicy{}},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating PodGroup %s/%s: %v", ns, name, err)
	}
	return pg
}

// pgpPod creates a pod naming PodGroup pg (none when pg is ""), scheduled on node-1 unless
// unscheduled, with the given phase written to its status ("" leaves it Pending).
func pgpPod(t *testing.T, ns, name, pg string, phase corev1.PodPhase, unscheduled bool) *corev1.Pod {
	t.Helper()
	ctx := context.Background()
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.PodSpec{
			Containers: []corev1.Container{{Name: "c", Image: "registry.k8s.io/pause:3.10"}},
		},
	}
	if !unscheduled {
		pod.Spec.NodeName = "node-1"
	}
	if pg != "" {
		pod.Spec.SchedulingGroup = &corev1.PodSchedulingGroup{PodGroupName: ptr.To(pg)}
	}
	out, err := env.Client.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating pod %s/%s: %v", ns, name, err)
	}
	if pg != "" && (out.Spec.SchedulingGroup == nil || out.Spec.SchedulingGroup.PodGroupName == nil) {
		t.Fatalf("pod %s/%s lost spec.schedulingGroup on create (is GenericWorkload on in the apiserver?)", ns, name)
	}
	if phase != "" {
		out = pgpSetPhase(t, ns, name, phase)
	}
	return out
}

func pgpSetPhase(t *testing.T, ns, name string, phase corev1.PodPhase) *corev1.Pod {
	t.Helper()
	ctx := context.Background()
	p, err := env.Client.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	p.Status.Phase = phase
	out, err := env.Client.CoreV1().Pods(ns).UpdateStatus(ctx, p, metav1.UpdateOptions{})
	if err != nil {
		t.Fatalf("writing phase %s of pod %s/%s: %v", phase, ns, name, err)
	}
	return out
}

func pgpDeletePod(t *testing.T, ns, name string) {
	t.Helper()
	err := env.Client.CoreV1().Pods(ns).Delete(context.Background(), name, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)})
	if err != nil && !apierrors.IsNotFound(err) {
		t.Fatalf("deleting pod %s/%s: %v", ns, name, err)
	}
}

func pgpDelete(t *testing.T, ns, name string) {
	t.Helper()
	if err := env.Client.SchedulingV1beta1().PodGroups(ns).Delete(context.Background(), name, metav1.DeleteOptions{}); err != nil {
		t.Fatalf("deleting PodGroup %s/%s: %v", ns, name, err)
	}
}

func pgpWaitGone(t *testing.T, ns, name string) {
	t.Helper()
	Eventually(t, 30*time.Second, "PodGroup "+ns+"/"+name+" gone", func() (bool, string) {
		pg, err := env.Client.SchedulingV1beta1().PodGroups(ns).Get(context.Background(), name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return true, ""
		}
		if err != nil {
			return false, err.Error()
		}
		return false, fmt.Sprintf("still there: deletionTimestamp %v, finalizers %v", pg.DeletionTimestamp, pg.Finalizers)
	})
}

// pgpWaitKept: the controller logged that it keeps the finalizer of ns/name, and the PodGroup is
// then still there, being deleted, with the finalizer.
func pgpWaitKept(t *testing.T, p *kcmdProc, ns, name string) {
	t.Helper()
	line := fmt.Sprintf(`Keeping PodGroup finalizer because it is still being used by pods podGroup="%s/%s"`, ns, name)
	Eventually(t, 30*time.Second, "the controller keeping "+ns+"/"+name, func() (bool, string) {
		return p.Logged(line), "not logged yet"
	})
	pg, err := env.Client.SchedulingV1beta1().PodGroups(ns).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("PodGroup %s/%s, kept by a pod: %v", ns, name, err)
	}
	if pg.DeletionTimestamp == nil || !slices.Contains(pg.Finalizers, pgpFinalizer) {
		t.Fatalf("PodGroup %s/%s: deletionTimestamp %v, finalizers %v; want being deleted with %s",
			ns, name, pg.DeletionTimestamp, pg.Finalizers, pgpFinalizer)
	}
}

func pgpFlags(gate bool) []string {
	flags := []string{"--controllers=podgroup-protection-controller", "--secure-port=0",
		"--leader-elect=false", "--use-service-account-credentials", "--v=4"}
	if gate {
		flags = append(flags, "--feature-gates=GenericWorkload=true")
	}
	return flags
}

func startPGPKcmd(t *testing.T, gate bool) *kcmdProc {
	t.Helper()
	return startKcmd(t, nil, pgpFlags(gate)...)
}

func TestPodGroupProtection_Scenarios(t *testing.T) {
	withPrivateCluster(t, pgpClusterOptions, func() {
		p := startPGPKcmd(t, true)
		defer dumpKcmdLogs(t, p)
		Eventually(t, 60*time.Second, "the controller's worker, as its service account", func() (bool, string) {
			return p.Logged("using service account kube-system/podgroup-protection-controller") &&
				p.Logged("podgroup-protection-controller worker ready"), "not yet"
		})
		// the worker logs its caches synced at its first key: give it one
		ns0 := Namespace(t)
		pgpCreate(t, ns0, "warm-up")
		pgpDelete(t, ns0, "warm-up")
		pgpWaitGone(t, ns0, "warm-up")
		if !p.Logged("Caches are synced for podgroup-protection-controller") {
			t.Error("the worker did not log its caches synced")
		}

		// a group of parallel subtests returns once they all have ended (withPrivateCluster
		// stops the cluster when this function returns)
		t.Run("group", func(t *testing.T) {
			t.Run("NewPodGroupHasFinalizerNotPutBack", func(t *testing.T) {
				t.Parallel()
				ctx := context.Background()
				ns := Namespace(t)
				pg := pgpCreate(t, ns, "pg")
				if !slices.Contains(pg.Finalizers, pgpFinalizer) {
					t.Fatalf("new PodGroup: finalizers %v, want %s (the admission plugin's)", pg.Finalizers, pgpFinalizer)
				}
				pgpPod(t, ns, "pod-1", "pg", corev1.PodRunning, false)
				// no action on a PodGroup without the finalizer, even with an active pod
				pg.Finalizers = nil
				pg, err := env.Client.SchedulingV1beta1().PodGroups(ns).Update(ctx, pg, metav1.UpdateOptions{})
				if err != nil {
					t.Fatal(err)
				}
				time.Sleep(3 * time.Second)
				got, err := env.Client.SchedulingV1beta1().PodGroups(ns).Get(ctx, "pg", metav1.GetOptions{})
				if err != nil {
					t.Fatal(err)
				}
				if len(got.Finalizers) != 0 || got.ResourceVersion != pg.ResourceVersion {
					t.Fatalf("PodGroup without finalizer was written: finalizers %v, resourceVersion %s -> %s",
						got.Finalizers, pg.ResourceVersion, got.ResourceVersion)
				}
				// and deleting it, active pod or not, is not held by anyone
				pgpDelete(t, ns, "pg")
				pgpWaitGone(t, ns, "pg")
			})
			t.Run("FinalizerKeptWhileNotDeleted", func(t *testing.T) {
				t.Parallel()
				ns := Namespace(t)
				pg := pgpCreate(t, ns, "pg")
				pgpPod(t, ns, "pod-1", "", corev1.PodRunning, false) // a pod without schedulingGroup
				pgpPod(t, ns, "pod-2", "pg", corev1.PodSucceeded, false)
				pgpDeletePod(t, ns, "pod-2")
				time.Sleep(2 * time.Second)
				got, err := env.Client.SchedulingV1beta1().PodGroups(ns).Get(context.Background(), "pg", metav1.GetOptions{})
				if err != nil {
					t.Fatal(err)
				}
				if !slices.Contains(got.Finalizers, pgpFinalizer) || got.ResourceVersion != pg.ResourceVersion {
					t.Fatalf("PodGroup not being deleted was written: finalizers %v, resourceVersion %s -> %s",
						got.Finalizers, pg.ResourceVersion, got.ResourceVersion)
				}
			})
			t.Run("DeletedNoPods", func(t *testing.T) {
				t.Parallel()
				ns := Namespace(t)
				pgpCreate(t, ns, "pg")
				pgpDelete(t, ns, "pg")
				pgpWaitGone(t, ns, "pg")
			})
			t.Run("DeletedActivePodKeepsUntilPodDeleted", func(t *testing.T) {
				t.Parallel()
				ns := Namespace(t)
				pgpCreate(t, ns, "pg")
				pgpPod(t, ns, "pod-1", "pg", corev1.PodRunning, false)
				pgpDelete(t, ns, "pg")
				pgpWaitKept(t, p, ns, "pg")
				pgpDeletePod(t, ns, "pod-1")
				pgpWaitGone(t, ns, "pg")
			})
			t.Run("DeletedUnscheduledPodKeeps", func(t *testing.T) {
				t.Parallel()
				ns := Namespace(t)
				pgpCreate(t, ns, "pg")
				pgpPod(t, ns, "pod-1", "pg", "", true) // Pending, no node: still active
				pgpDelete(t, ns, "pg")
				pgpWaitKept(t, p, ns, "pg")
				pgpDeletePod(t, ns, "pod-1")
				pgpWaitGone(t, ns, "pg")
			})
			for _, phase := range []corev1.PodPhase{corev1.PodSucceeded, corev1.PodFailed} {
				t.Run("DeletedOnlyTerminatedPods"+string(phase), func(t *testing.T) {
					t.Parallel()
					ns := Namespace(t)
					pgpCreate(t, ns, "pg")
					pgpPod(t, ns, "pod-1", "pg", phase, false)
					pgpDelete(t, ns, "pg")
					pgpWaitGone(t, ns, "pg")
					// the pod itself is left alone
					if _, err := env.Client.CoreV1().Pods(ns).Get(context.Background(), "pod-1", metav1.GetOptions{}); err != nil {
						t.Fatalf("the terminated pod: %v", err)
					}
				})
				t.Run("PodTerminates"+string(phase), func(t *testing.T) {
					t.Parallel()
					ns := Namespace(t)
					pgpCreate(t, ns, "pg")
					pgpPod(t, ns, "pod-1", "pg", corev1.PodRunning, false)
					pgpDelete(t, ns, "pg")
					pgpWaitKept(t, p, ns, "pg")
					pgpSetPhase(t, ns, "pod-1", phase) // the last active pod finishes
					pgpWaitGone(t, ns, "pg")
				})
			}
			t.Run("DeletedMixOfActiveAndTerminated", func(t *testing.T) {
				t.Parallel()
				ns := Namespace(t)
				pgpCreate(t, ns, "pg")
				pgpPod(t, ns, "pod-active", "pg", corev1.PodRunning, false)
				pgpPod(t, ns, "pod-done", "pg", corev1.PodSucceeded, false)
				pgpDelete(t, ns, "pg")
				pgpWaitKept(t, p, ns, "pg")
				pgpDeletePod(t, ns, "pod-done") // not the one keeping it
				time.Sleep(2 * time.Second)
				if _, err := env.Client.SchedulingV1beta1().PodGroups(ns).Get(context.Background(), "pg", metav1.GetOptions{}); err != nil {
					t.Fatalf("PodGroup with an active pod left: %v", err)
				}
				pgpDeletePod(t, ns, "pod-active")
				pgpWaitGone(t, ns, "pg")
			})
			t.Run("OtherPodsDoNotKeep", func(t *testing.T) {
				t.Parallel()
				ns, other := Namespace(t), Namespace(t)
				pgpCreate(t, ns, "pg")
				pgpPod(t, ns, "no-group", "", corev1.PodRunning, false)
				pgpPod(t, ns, "other-group", "other-pg", corev1.PodRunning, false)
				pgpPod(t, other, "same-name-other-ns", "pg", corev1.PodRunning, false)
				pgpDelete(t, ns, "pg")
				pgpWaitGone(t, ns, "pg")
			})
			t.Run("DeletedWithoutFinalizerNoAction", func(t *testing.T) {
				t.Parallel()
				ctx := context.Background()
				ns := Namespace(t)
				pg := pgpCreate(t, ns, "pg")
				// another finalizer holds the deletion; the protection one is taken away
				pg.Finalizers = []string{"example.com/hold"}
				if _, err := env.Client.SchedulingV1beta1().PodGroups(ns).Update(ctx, pg, metav1.UpdateOptions{}); err != nil {
					t.Fatal(err)
				}
				pgpPod(t, ns, "pod-1", "pg", corev1.PodRunning, false)
				pgpDelete(t, ns, "pg")
				time.Sleep(3 * time.Second)
				got, err := env.Client.SchedulingV1beta1().PodGroups(ns).Get(ctx, "pg", metav1.GetOptions{})
				if err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(got.Finalizers, []string{"example.com/hold"}) {
					t.Fatalf("deleted PodGroup without the protection finalizer: finalizers %v, want only example.com/hold", got.Finalizers)
				}
				got.Finalizers = nil
				if _, err := env.Client.SchedulingV1beta1().PodGroups(ns).Update(ctx, got, metav1.UpdateOptions{}); err != nil {
					t.Fatal(err)
				}
				pgpWaitGone(t, ns, "pg")
			})
			t.Run("OtherFinalizersKept", func(t *testing.T) {
				t.Parallel()
				ctx := context.Background()
				ns := Namespace(t)
				pg := pgpCreate(t, ns, "pg")
				pg.Finalizers = append([]string{"example.com/a"}, append(pg.Finalizers, "example.com/b")...)
				if _, err := env.Client.SchedulingV1beta1().PodGroups(ns).Update(ctx, pg, metav1.UpdateOptions{}); err != nil {
					t.Fatal(err)
				}
				pgpDelete(t, ns, "pg")
				Eventually(t, 30*time.Second, "the protection finalizer removed, the others kept", func() (bool, string) {
					got, err := env.Client.SchedulingV1beta1().PodGroups(ns).Get(ctx, "pg", metav1.GetOptions{})
					if err != nil {
						return false, err.Error()
					}
					return slices.Equal(got.Finalizers, []string{"example.com/a", "example.com/b"}), fmt.Sprint(got.Finalizers)
				})
				got, err := env.Client.SchedulingV1beta1().PodGroups(ns).Get(ctx, "pg", metav1.GetOptions{})
				if err != nil {
					t.Fatal(err)
				}
				got.Finalizers = nil
				if _, err := env.Client.SchedulingV1beta1().PodGroups(ns).Update(ctx, got, metav1.UpdateOptions{}); err != nil {
					t.Fatal(err)
				}
				pgpWaitGone(t, ns, "pg")
			})
		})
		// every write was the controller's own account's (the bootstrap role allowed it)
		for _, l := range p.Logs() {
			if strings.Contains(l, "Error removing protection finalizer") || strings.Contains(l, "Forbidden") {
				t.Errorf("kcmd logged: %s", l)
			}
		}
	})
}

// TestPodGroupProtection_WorkerKilled: the worker is killed -9 while a PodGroup is kept by a pod;
// the pod goes while no worker runs, and the restarted worker (its dispatcher re-queues from the
// cache, or the pod's delete event was queued before) still lets the PodGroup go.
func TestPodGroupProtection_WorkerKilled(t *testing.T) {
	withPrivateCluster(t, pgpClusterOptions, func() { pgpWorkerKilled(t, false) })
}

// TestPodGroupProtection_WorkerKilledNegativeControl: the fault the kill could cause is a
// PodGroup whose release is lost (its key died with the worker and nothing queues it again).
// The same scenario with the test seam KCMD_TEST_PGP_KEEP_NS=<the test's namespace>, under
// which the worker drops every release there: the crash test's oracle must report the PodGroup
// still there with its finalizer.
func TestPodGroupProtection_WorkerKilledNegativeControl(t *testing.T) {
	withPrivateCluster(t, pgpClusterOptions, func() { pgpWorkerKilled(t, true) })
}

func pgpWorkerKilled(t *testing.T, negative bool) {
	ns := Namespace(t)
	var extraEnv []string
	if negative {
		extraEnv = []string{"KCMD_TEST_PGP_KEEP_NS=" + ns}
	}
	p := startKcmd(t, extraEnv, pgpFlags(true)...)
	defer dumpKcmdLogs(t, p)
	pgpCreate(t, ns, "pg")
	pgpPod(t, ns, "pod-1", "pg", corev1.PodRunning, false)
	pgpDelete(t, ns, "pg")
	pgpWaitKept(t, p, ns, "pg")
	// kcmd runs this one controller: its worker is kcmd's one kcmd-worker child
	if killChildren(t, p.cmd.Process.Pid, "kcmd-worker", 4) == 0 {
		t.Fatal("no kcmd-worker process to kill")
	}
	pgpDeletePod(t, ns, "pod-1")
	problem := pgpKilledVerdict(t, ns, "pg")
	if negative {
		if !strings.Contains(problem, "still there") || !strings.Contains(problem, pgpFinalizer) {
			t.Fatalf("negative control: the release of %s/pg was dropped, the oracle said %q", ns, problem)
		}
		if !p.Logged(fmt.Sprintf("KCMD_TEST_PGP_KEEP_NS: release of PodGroup %s/pg dropped", ns)) {
			t.Fatal("negative control: the PodGroup stayed, but not because the seam dropped its release")
		}
		t.Logf("negative control: the oracle reports %q", problem)
		return
	}
	if problem != "" {
		t.Fatal(problem)
	}
	Eventually(t, 30*time.Second, "the worker restarted", func() (bool, string) {
		for _, comm := range childrenOf(p.cmd.Process.Pid) {
			if strings.HasPrefix(comm, "kcmd-worker") {
				return true, ""
			}
		}
		return false, fmt.Sprint(childrenOf(p.cmd.Process.Pid))
	})
}

// pgpKilledVerdict is TestPodGroupProtection_WorkerKilled's oracle: once the last pod naming it
// is gone, the PodGroup being deleted goes within 30 s (its finalizer removed by the restarted
// worker). It returns the problem, or "".
func pgpKilledVerdict(t *testing.T, ns, name string) string {
	t.Helper()
	last := ""
	for end := time.Now().Add(30 * time.Second); time.Now().Before(end); time.Sleep(200 * time.Millisecond) {
		pg, err := env.Client.SchedulingV1beta1().PodGroups(ns).Get(context.Background(), name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return ""
		}
		if err != nil {
			last = err.Error()
			continue
		}
		last = fmt.Sprintf("still there: deletionTimestamp %v, finalizers %v", pg.DeletionTimestamp, pg.Finalizers)
	}
	return fmt.Sprintf("PodGroup %s/%s not gone 30 s after its last pod: %s", ns, name, last)
}

// TestPodGroupProtection_GateOff: without GenericWorkload kcmd does not start the controller, named
// in --controllers or not, and says so as kcm does ("Controller is disabled by a feature gate").
// The shared cluster (no PodGroup API) is enough: nothing may run.
func TestPodGroupProtection_GateOff(t *testing.T) {
	p := startPGPKcmd(t, false)
	defer dumpKcmdLogs(t, p)
	Eventually(t, 30*time.Second, "the disabled-by-gate message", func() (bool, string) {
		return p.Logged(`Controller is disabled by a feature gate controller="podgroup-protection-controller" requiredFeatureGates=["GenericWorkload"]`) &&
			p.Logged(`kcmd `) && p.Logged(`starting: `), "not yet"
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
	if p.Logged("Starting PodGroup protection controller") {
		t.Error("the controller started with the gate off")
	}
}
