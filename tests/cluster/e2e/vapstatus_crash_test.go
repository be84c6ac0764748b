package e2e

// The validatingadmissionpolicy-status-controller under kill -9 (issue 21's crash tests): on a
// private cluster, policies are created (half with an expression that warns) and some changed
// (a new generation, the expression flipped) while the controller's worker is killed -9 every
// 1.5 s (informerd once). The oracle (vapCrashVerdict) reads every policy from the apiserver:
// status.observedGeneration is its generation, and status.typeChecking holds exactly the warning
// its current expression earns (none, or one on spec.validations[0].expression with the
// overload error), as upstream writes it.
//
// The negative control (same cluster, its own kcmd) runs the same churn with the test seam
// KCMD_TEST_VAP_DROP_PREFIX=<a prefix of some of its policies>, under which the worker drops the
// status write of those policies (what a key lost with a worker would leave): the oracle must
// report them unchecked.

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"kcmd.local/tests/cluster/harness"
)

const (
	vapGoodExpr = "object.spec.replicas > 1"
	vapBadExpr  = "object.spec.replicas > '1'"
)

type vapCrashWant struct {
	gen int64
	bad bool
}

func TestVAPStatus_WorkerKilled(t *testing.T) {
	withPrivateCluster(t, harness.Options{}, func() {
		t.Run("Crash", func(t *testing.T) { vapWorkerKilled(t, "vk-", "") })
		// the negative control: every third policy carries the dropped prefix
		t.Run("NegativeControl", func(t *testing.T) { vapWorkerKilled(t, "vn-", "vn-drop-") })
	})
}

func vapWorkerKilled(t *testing.T, prefix, drop string) {
	ctx := context.Background()
	var extraEnv []string
	if drop != "" {
		extraEnv = []string{"KCMD_TEST_VAP_DROP_PREFIX=" + drop}
	}
	p := startKcmd(t, extraEnv, "--controllers=validatingadmissionpolicy-status-controller", "--secure-port=0",
		"--leader-elect=false", "--use-service-account-credentials", "--v=4")
	defer dumpKcmdLogs(t, p)
	Eventually(t, 60*time.Second, "the controller's worker", func() (bool, string) {
		return p.Logged("validatingadmissionpolicy-status-controller worker ready"), "not yet"
	})

	want := map[string]vapCrashWant{}
	var names []string
	seq, updates := 0, 0
	kills := newCrashKills(p.cmd.Process.Pid)
	for end := time.Now().Add(9 * time.Second); time.Now().Before(end); time.Sleep(250 * time.Millisecond) {
		if seq%3 == 2 && len(names) > 0 {
			// a spec change: the expression flipped, a new generation to check
			name := names[(seq*7)%len(names)]
			v, err := env.Client.AdmissionregistrationV1().ValidatingAdmissionPolicies().Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			bad := !want[name].bad
			v.Spec.Validations[0].Expression = vapGoodExpr
			if bad {
				v.Spec.Validations[0].Expression = vapBadExpr
			}
			v, err = env.Client.AdmissionregistrationV1().ValidatingAdmissionPolicies().Update(ctx, v, metav1.UpdateOptions{})
			if err == nil {
				want[name] = vapCrashWant{v.Generation, bad}
				updates++
			}
		} else {
			name := fmt.Sprintf("%s%d", prefix, seq)
			if drop != "" && seq%3 == 0 {
				name = fmt.Sprintf("%s%d", drop, seq)
			}
			bad := seq%2 == 0
			expr := vapGoodExpr
			if bad {
				expr = vapBadExpr
			}
			v := vapCreate(t, vapDeployments(name, expr))
			want[name] = vapCrashWant{v.Generation, bad}
			names = append(names, name)
		}
		seq++
		kills.tick(t, func() int { return vapCrashPending(t, want) })
	}
	t.Logf("churn: %d policies, %d spec changes; kill -9: %d workers (%d with a status still to write), %d informerd",
		len(names), updates, kills.workers, kills.busy, kills.informerds)
	kills.exercised(t)

	settle := 45 * time.Second // the worker's restart backoff after the kills is part of it
	if drop != "" {
		settle = 15 * time.Second
	}
	problems := vapCrashVerdict(t, want, settle)
	if drop != "" {
		found := false
		for _, pr := range problems {
			found = found || strings.HasPrefix(pr, "policy "+drop) && strings.Contains(pr, "observedGeneration 0")
			if !strings.HasPrefix(pr, "policy "+drop) {
				t.Errorf("negative control: a policy the seam did not touch is wrong: %s", pr)
			}
		}
		if !found {
			t.Fatalf("negative control: the status writes of %s* were dropped, but the oracle said %v", drop, problems)
		}
		if !p.Logged("KCMD_TEST_VAP_DROP_PREFIX: status write of policy " + drop) {
			t.Fatal("negative control: the oracle fired, but the seam dropped no write")
		}
		t.Logf("negative control: the oracle reports %v", problems)
		return
	}
	if len(problems) > 0 {
		t.Fatalf("after the kills: %s", strings.Join(problems, "; "))
	}
}

// vapCrashVerdict is TestVAPStatus_WorkerKilled's oracle: within settle, every policy of want
// has status.observedGeneration equal to its generation (the one the test last wrote) and
// exactly the warnings of its current expression. It returns the problems of the last look.
func vapCrashVerdict(t *testing.T, want map[string]vapCrashWant, settle time.Duration) []string {
	t.Helper()
	ctx := context.Background()
	var problems []string
	for end := time.Now().Add(settle); ; time.Sleep(500 * time.Millisecond) {
		problems = nil
		for name, w := range want {
			v, err := env.Client.AdmissionregistrationV1().ValidatingAdmissionPolicies().Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				problems = append(problems, fmt.Sprintf("policy %s: %v", name, err))
				continue
			}
			if v.Generation != w.gen {
				problems = append(problems, fmt.Sprintf("policy %s: generation %d, the test wrote %d", name, v.Generation, w.gen))
			}
			if v.Status.ObservedGeneration != v.Generation {
				problems = append(problems, fmt.Sprintf("policy %s: observedGeneration %d, generation %d", name,
					v.Status.ObservedGeneration, v.Generation))
				continue
			}
			problems = append(problems, vapCrashWarnings(v, w.bad)...)
		}
		sort.Strings(problems)
		if len(problems) == 0 || time.Now().After(end) {
			return problems
		}
	}
}

func vapCrashWarnings(v *admissionregistrationv1.ValidatingAdmissionPolicy, bad bool) []string {
	var w []admissionregistrationv1.ExpressionWarning
	if v.Status.TypeChecking != nil {
		w = v.Status.TypeChecking.ExpressionWarnings
	}
	if !bad {
		if len(w) != 0 {
			return []string{fmt.Sprintf("policy %s: warnings %+v for a correct expression", v.Name, w)}
		}
		return nil
	}
	if len(w) != 1 || w[0].FieldRef != "spec.validations[0].expression" ||
		!strings.Contains(w[0].Warning, "found no matching overload for '_>_' applied to '(int, string)'") {
		return []string{fmt.Sprintf("policy %s: warnings %+v, want one overload error on spec.validations[0].expression",
			v.Name, w)}
	}
	return nil
}

// vapCrashPending counts the policies of want whose status is not written for their generation
// yet (the work a kill meets).
func vapCrashPending(t *testing.T, want map[string]vapCrashWant) int {
	t.Helper()
	l, err := env.Client.AdmissionregistrationV1().ValidatingAdmissionPolicies().List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, v := range l.Items {
		if _, ok := want[v.Name]; ok && v.Status.ObservedGeneration != v.Generation {
			n++
		}
	}
	return n
}
