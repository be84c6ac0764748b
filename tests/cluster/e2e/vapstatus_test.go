package e2e

// kcmd's validatingadmissionpolicy-status-controller (docs/vapstatus.md) against the real
// apiserver, upstream kube-controller-manager not running; a private cluster so no other kcmd
// of the suite writes the policies' status. kcmd runs the controller alone, as its own service
// account (kcm's bootstrap role system:controller:validatingadmissionpolicy-status-controller
// must allow every request, the type checker's discovery included).
//
// The cases are upstream's controller_test.go TestTypeChecking on real policies (the type
// checker resolves apps/v1 Deployment from the built-in definitions), plus what the fake client
// of that test cannot show: a policy on a CRD (its schema resolved through the apiserver's
// /openapi/v3), a paramKind, a policy already checked at its generation left alone, a spec
// change checked again, and the type checker killed -9 (restarted at the next policy).

import (
	"context"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"kcmd.local/tests/cluster/harness"
)

func vapPolicy(name string, groups, versions, resources []string, exprs ...string) *admissionregistrationv1.ValidatingAdmissionPolicy {
	p := &admissionregistrationv1.ValidatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			MatchConstraints: &admissionregistrationv1.MatchResources{ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{
				RuleWithOperations: admissionregistrationv1.RuleWithOperations{
					Operations: []admissionregistrationv1.OperationType{"*"},
					Rule:       admissionregistrationv1.Rule{APIGroups: groups, APIVersions: versions, Resources: resources},
				},
			}}},
		},
	}
	for _, e := range exprs {
		p.Spec.Validations = append(p.Spec.Validations, admissionregistrationv1.Validation{Expression: e})
	}
	return p
}

func vapCreate(t *testing.T, p *admissionregistrationv1.ValidatingAdmissionPolicy) *admissionregistrationv1.ValidatingAdmissionPolicy {
	t.Helper()
	out, err := env.Client.AdmissionregistrationV1().ValidatingAdmissionPolicies().Create(context.Background(), p, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating ValidatingAdmissionPolicy %s: %v", p.Name, err)
	}
	return out
}

// vapWaitChecked waits until the policy's status was written for generation gen.
func vapWaitChecked(t *testing.T, name string, gen int64) *admissionregistrationv1.ValidatingAdmissionPolicy {
	t.Helper()
	var p *admissionregistrationv1.ValidatingAdmissionPolicy
	Eventually(t, 60*time.Second, "policy "+name+" type-checked", func() (bool, string) {
		var err error
		p, err = env.Client.AdmissionregistrationV1().ValidatingAdmissionPolicies().Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		// the status of generation gen: observedGeneration is applied with typeChecking, whose
		// warnings may be none (an empty typeChecking, which the apiserver may drop)
		return p.Status.ObservedGeneration == gen,
			fmt.Sprintf("observedGeneration %d, typeChecking %+v", p.Status.ObservedGeneration, p.Status.TypeChecking)
	})
	return p
}

// vapExpect: the warnings' fieldRefs are exactly refs, and warning i holds every substring of
// subs[i].
func vapExpect(t *testing.T, p *admissionregistrationv1.ValidatingAdmissionPolicy, refs []string, subs [][]string) {
	t.Helper()
	var w []admissionregistrationv1.ExpressionWarning
	if p.Status.TypeChecking != nil {
		w = p.Status.TypeChecking.ExpressionWarnings
	}
	if len(w) != len(refs) {
		t.Fatalf("%s: %d warnings, want %d: %+v", p.Name, len(w), len(refs), w)
	}
	for i := range refs {
		if w[i].FieldRef != refs[i] {
			t.Errorf("%s: warning %d fieldRef %q, want %q", p.Name, i, w[i].FieldRef, refs[i])
		}
		for _, s := range subs[i] {
			if !strings.Contains(w[i].Warning, s) {
				t.Errorf("%s: warning %d %q lacks %q", p.Name, i, w[i].Warning, s)
			}
		}
	}
}

func vapDeployments(name string, exprs ...string) *admissionregistrationv1.ValidatingAdmissionPolicy {
	return vapPolicy(name, []string{"apps"}, []string{"v1"}, []string{"deployments"}, exprs...)
}

func TestVAPStatus_Scenarios(t *testing.T) {
	withPrivateCluster(t, harness.Options{}, func() {
		ctx := context.Background()
		p := startKcmd(t, nil, "--controllers=validatingadmissionpolicy-status-controller", "--secure-port=0",
			"--leader-elect=false", "--use-service-account-credentials", "--v=4")
		defer dumpKcmdLogs(t, p)
		Eventually(t, 60*time.Second, "the controller's worker, as its service account", func() (bool, string) {
			return p.Logged("using service account kube-system/validatingadmissionpolicy-status-controller") &&
				p.Logged("validatingadmissionpolicy-status-controller worker ready"), "not yet"
		})

		// TestTypeChecking's four cases
		t.Run("CorrectExpression", func(t *testing.T) {
			v := vapCreate(t, vapDeployments("replicated-deployment", "object.spec.replicas > 1"))
			vapExpect(t, vapWaitChecked(t, v.Name, v.Generation), nil, nil)
		})
		t.Run("TypeConfusion", func(t *testing.T) {
			v := vapCreate(t, vapDeployments("confused-deployment", "object.spec.replicas < 100", "object.spec.replicas > '1'"))
			vapExpect(t, vapWaitChecked(t, v.Name, v.Generation), []string{"spec.validations[1].expression"},
				[][]string{{`found no matching overload for '_>_' applied to '(int, string)'`}})
		})
		t.Run("TwoExpressionsTwoErrors", func(t *testing.T) {
			v := vapCreate(t, vapDeployments("confused-deployment-2", "object.spec.nonExistingFirst > 1", "object.spec.replicas > '1'"))
			vapExpect(t, vapWaitChecked(t, v.Name, v.Generation),
				[]string{"spec.validations[0].expression", "spec.validations[1].expression"},
				[][]string{{"undefined field 'nonExistingFirst'"}, {`found no matching overload for '_>_' applied to '(int, string)'`}})
		})
		t.Run("OneExpressionTwoWarnings", func(t *testing.T) {
			v := vapCreate(t, vapDeployments("confused-deployment-3", "object.spec.replicas < 100",
				"object.spec.replicas > '1' && object.spec.nonExisting == 1"))
			vapExpect(t, vapWaitChecked(t, v.Name, v.Generation), []string{"spec.validations[1].expression"},
				[][]string{{"undefined field 'nonExisting'", `found no matching overload for '_>_' applied to '(int, string)'`}})
		})

		// a spec change is checked again; the status of the previous generation is replaced
		t.Run("SpecChangeCheckedAgain", func(t *testing.T) {
			v := vapCreate(t, vapDeployments("changing", "object.spec.replicas > '1'"))
			v = vapWaitChecked(t, v.Name, v.Generation)
			vapExpect(t, v, []string{"spec.validations[0].expression"}, [][]string{{"no matching overload"}})
			v.Spec.Validations[0].Expression = "object.spec.replicas > 1"
			v, err := env.Client.AdmissionregistrationV1().ValidatingAdmissionPolicies().Update(ctx, v, metav1.UpdateOptions{})
			if err != nil {
				t.Fatal(err)
			}
			vapExpect(t, vapWaitChecked(t, v.Name, v.Generation), nil, nil)
		})

		// a policy on a CRD: its schema comes from the apiserver's /openapi/v3 (spec.replicas is
		// an integer there: compared with a string it warns, with an int it does not)
		t.Run("CRDSchemaFromOpenAPI", func(t *testing.T) {
			group, plural, kind := vapCreateCRD(t)
			v := vapCreate(t, vapPolicy("on-crd", []string{group}, []string{"v1"}, []string{plural},
				"object.spec.replicas > '1'", "object.spec.replicas > 1"))
			v = vapWaitChecked(t, v.Name, v.Generation)
			vapExpect(t, v, []string{"spec.validations[0].expression"},
				[][]string{{group + "/v1, Kind=" + kind, "found no matching overload for '_>_' applied to '(int, string)'"}})
		})

		// paramKind: params typed as a ConfigMap
		t.Run("ParamKind", func(t *testing.T) {
			v := vapDeployments("with-params", "object.spec.replicas > params.data", "params.data['max'] == 'x'")
			v.Spec.ParamKind = &admissionregistrationv1.ParamKind{APIVersion: "v1", Kind: "ConfigMap"}
			v = vapCreate(t, v)
			vapExpect(t, vapWaitChecked(t, v.Name, v.Generation), []string{"spec.validations[0].expression"},
				[][]string{{"no matching overload for '_>_' applied to '(int, map(string, string))'"}})
		})

		// checked at its generation: a label change (no new generation) writes nothing
		t.Run("CheckedGenerationLeftAlone", func(t *testing.T) {
			v := vapCreate(t, vapDeployments("left-alone", "object.spec.replicas > 1"))
			v = vapWaitChecked(t, v.Name, v.Generation)
			v.Labels = map[string]string{"touched": "yes"}
			v, err := env.Client.AdmissionregistrationV1().ValidatingAdmissionPolicies().Update(ctx, v, metav1.UpdateOptions{})
			if err != nil {
				t.Fatal(err)
			}
			time.Sleep(3 * time.Second)
			got, err := env.Client.AdmissionregistrationV1().ValidatingAdmissionPolicies().Get(ctx, v.Name, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if got.ResourceVersion != v.ResourceVersion {
				t.Fatalf("a policy checked at its generation was written again: resourceVersion %s -> %s",
					v.ResourceVersion, got.ResourceVersion)
			}
		})

		// the type checker killed -9: the next policy restarts it
		t.Run("CheckerKilled", func(t *testing.T) {
			killed := 0
			for pid, comm := range childrenTree(p.cmd.Process.Pid) {
				if strings.HasPrefix(comm, "kcmd-vapcheck") {
					if syscall.Kill(pid, syscall.SIGKILL) == nil {
						killed++
					}
				}
			}
			if killed != 1 {
				t.Fatalf("killed %d type checkers, want 1 (one worker, one checker)", killed)
			}
			v := vapCreate(t, vapDeployments("after-kill", "object.spec.replicas > '1'"))
			vapExpect(t, vapWaitChecked(t, v.Name, v.Generation), []string{"spec.validations[0].expression"},
				[][]string{{"no matching overload"}})
		})
		for _, l := range p.Logs() {
			if strings.Contains(l, "Forbidden") || strings.Contains(l, "forbidden") {
				t.Errorf("kcmd logged: %s", l)
			}
		}
	})
}

// childrenTree lists every descendant of pid with its command name.
func childrenTree(pid int) map[int]string {
	out := map[int]string{}
	for c, comm := range childrenOf(pid) {
		out[c] = comm
		for g, gc := range childrenTree(c) {
			out[g] = gc
		}
	}
	return out
}

// vapCreateCRD makes a namespaced CRD (group, plural, kind) with a structural schema:
// spec.replicas an integer. Deleted when t ends.
func vapCreateCRD(t *testing.T) (string, string, string) {
	t.Helper()
	ctx := context.Background()
	n := time.Now().UnixNano() % 1000000
	group, plural, kind := fmt.Sprintf("vap%d.kcmd.test", n), fmt.Sprintf("widgets%d", n), fmt.Sprintf("Widget%d", n)
	body := fmt.Sprintf(`{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition",
"metadata":{"name":"%s.%s"},"spec":{"group":"%s","scope":"Namespaced",
"names":{"plural":"%s","singular":"widget%d","kind":"%s","listKind":"%sList"},
"versions":[{"name":"v1","served":true,"storage":true,
"schema":{"openAPIV3Schema":{"type":"object","properties":{"spec":{"type":"object",
"properties":{"replicas":{"type":"integer"}}}}}}}]}}`, plural, group, group, plural, n, kind, kind)
	rest := env.Client.CoreV1().RESTClient()
	path := "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
	if err := rest.Post().AbsPath(path).Body([]byte(body)).Do(ctx).Error(); err != nil {
		t.Fatalf("creating the CRD %s.%s: %v", plural, group, err)
	}
	t.Cleanup(func() { _ = rest.Delete().AbsPath(path + "/" + plural + "." + group).Do(context.Background()).Error() })
	Eventually(t, 60*time.Second, "the CRD served", func() (bool, string) {
		err := rest.Get().AbsPath("/apis/" + group + "/v1/" + plural).Do(ctx).Error()
		if err != nil {
			return false, err.Error()
		}
		return true, ""
	})
	// the type checker resolves the schema through /openapi/v3, which lists the CRD's group a
	// moment after it is served (checked before, the policy would get no warning)
	Eventually(t, 60*time.Second, "the CRD's schema in /openapi/v3", func() (bool, string) {
		raw, err := rest.Get().AbsPath("/openapi/v3").DoRaw(ctx)
		if err != nil {
			return false, err.Error()
		}
		return strings.Contains(string(raw), `"apis/`+group+`/v1"`), "not listed yet"
	})
	return group, plural, kind
}
