package e2e

// kcmd's clusterrole-aggregation-controller (docs/clusterroleaggregation.md) against the real
// cluster, upstream kube-controller-manager not running it. Upstream has no integration or e2e
// test of its own for it (pkg/controller/clusterroleaggregation's unit test is ported as
// workers/clusterroleaggregation/tests/test-cra.c); these check the same rules end to end and
// the bootstrap roles admin/edit/view that depend on it.

import (
	"context"
	"fmt"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func craRole(t *testing.T, name string, labels map[string]string, rules []rbacv1.PolicyRule, agg *rbacv1.AggregationRule) {
	t.Helper()
	ctx := context.Background()
	_, err := env.Client.RbacV1().ClusterRoles().Create(ctx, &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}, Rules: rules, AggregationRule: agg}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = env.Client.RbacV1().ClusterRoles().Delete(context.Background(), name, metav1.DeleteOptions{})
	})
}

func craWaitRules(t *testing.T, name string, want []rbacv1.PolicyRule) *rbacv1.ClusterRole {
	t.Helper()
	var cr *rbacv1.ClusterRole
	Eventually(t, 30*time.Second, "rules of "+name, func() (bool, string) {
		c, err := env.Client.RbacV1().ClusterRoles().Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		cr = c
		return apiequality.Semantic.DeepEqual(c.Rules, want), fmt.Sprintf("%+v", c.Rules)
	})
	return cr
}

// TestClusterRoleAggregation_Rules: rules of the selected roles, by name, without duplicates,
// from each selector in order; a role leaving the selection takes its rules away; written by a
// server-side apply of field manager clusterrole-aggregation-controller.
func TestClusterRoleAggregation_Rules(t *testing.T) {
	p := saStart(t, "clusterrole-aggregation-controller")
	sfx := fmt.Sprintf("%d", time.Now().UnixNano()%100000)
	lbl, other := "kcmd-test-"+sfx+"/agg", "kcmd-test-"+sfx+"/other"
	core := []string{""} // the apiserver wants an API group on resource rules
	hammer := []rbacv1.PolicyRule{{Verbs: []string{"hammer"}, APIGroups: core, Resources: []string{"nails"}},
		{Verbs: []string{"hammer"}, APIGroups: core, Resources: []string{"wedges"}}}
	chisel := []rbacv1.PolicyRule{{Verbs: []string{"chisel"}, APIGroups: core, Resources: []string{"mortises"}}}
	saw := []rbacv1.PolicyRule{{Verbs: []string{"saw"}, APIGroups: core, Resources: []string{"boards"}}}
	craRole(t, "hammer-"+sfx, map[string]string{lbl: "true"}, hammer, nil)
	craRole(t, "chisel-"+sfx, map[string]string{lbl: "true"}, chisel, nil)
	craRole(t, "saw-"+sfx, map[string]string{other: "true"}, saw, nil)
	craRole(t, "other-saw-"+sfx, map[string]string{lbl: "true"}, saw, nil)
	combined := "combined-" + sfx
	craRole(t, combined, nil, nil, &rbacv1.AggregationRule{ClusterRoleSelectors: []metav1.LabelSelector{
		{MatchLabels: map[string]string{lbl: "true"}}, {MatchLabels: map[string]string{other: "true"}}}})
	want := append(append(append([]rbacv1.PolicyRule{}, chisel...), hammer...), saw...)
	cr := craWaitRules(t, combined, want)
	found := false
	for _, mf := range cr.ManagedFields {
		found = found || (mf.Manager == "clusterrole-aggregation-controller" && mf.Operation == metav1.ManagedFieldsOperationApply)
	}
	if !found {
		t.Errorf("no Apply by clusterrole-aggregation-controller in %+v", cr.ManagedFields)
	}
	if !p.Logged("using service account kube-system/clusterrole-aggregation-controller") {
		t.Error("the controller does not act as its service account")
	}
	// chisel leaves the selection: its rule goes
	if err := env.Client.RbacV1().ClusterRoles().Delete(context.Background(), "chisel-"+sfx, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	craWaitRules(t, combined, append(append([]rbacv1.PolicyRule{}, hammer...), saw...))
}

// TestClusterRoleAggregation_BootstrapRoles: the apiserver's admin, edit and view roles are
// aggregated ones; with the controller they hold the rules of their aggregate-to-* roles (e.g.
// view can list pods).
func TestClusterRoleAggregation_BootstrapRoles(t *testing.T) {
	saStart(t, "clusterrole-aggregation-controller")
	Eventually(t, 30*time.Second, "view aggregated", func() (bool, string) {
		c, err := env.Client.RbacV1().ClusterRoles().Get(context.Background(), "view", metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		for _, r := range c.Rules {
			for _, res := range r.Resources {
				if res == "pods" {
					return true, ""
				}
			}
		}
		return false, fmt.Sprintf("%d rules, none on pods", len(c.Rules))
	})
}
