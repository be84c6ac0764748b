package e2e

// --use-service-account-credentials against the real apiserver: kcmd runs as the user "kcmd",
// which may read everything and manage Leases, events and kube-system ServiceAccounts (and their
// tokens) but may NOT write pods or ReplicaSets; the ReplicaSet controller's processes must act
// as system:serviceaccount:kube-system:replicaset-controller and the garbage collector's as
// ...:generic-garbage-collector, relying on the bootstrap ClusterRoles the apiserver creates.
// Who made each write is checked by the apiserver itself: a ValidatingAdmissionPolicy (GA since
// 1.30) on the test's namespace refuses a pod CREATE by anyone but the ReplicaSet controller's
// account and a pod DELETE by anyone but the garbage collector's.

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	authzv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

const (
	hmgRSUser = "system:serviceaccount:kube-system:replicaset-controller"
	hmgGCUser = "system:serviceaccount:kube-system:generic-garbage-collector"
)

// hmgKcmdRBAC grants the user "kcmd" what kcmd's manager and informerd need with
// --use-service-account-credentials, and nothing that writes pods or ReplicaSets.
func hmgKcmdRBAC(t *testing.T, name string) {
	t.Helper()
	ctx := context.Background()
	role := &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{"*"}, Resources: []string{"*"}, Verbs: []string{"get", "list", "watch"}}, // informers
			{APIGroups: []string{"coordination.k8s.io"}, Resources: []string{"leases"}, Verbs: []string{"create", "get", "update"}},
			{APIGroups: []string{"", "events.k8s.io"}, Resources: []string{"events"}, Verbs: []string{"create", "update", "patch"}},
			// what kube-controller-manager's own role has for the per-controller clients
			{APIGroups: []string{""}, Resources: []string{"serviceaccounts"}, Verbs: []string{"get", "create"}},
			{APIGroups: []string{""}, Resources: []string{"serviceaccounts/token"}, Verbs: []string{"create"}},
		},
	}
	if _, err := env.Client.RbacV1().ClusterRoles().Create(ctx, role, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	rb := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: name},
		Subjects:   []rbacv1.Subject{{APIGroup: "rbac.authorization.k8s.io", Kind: "User", Name: "kcmd"}},
	}
	if _, err := env.Client.RbacV1().ClusterRoleBindings().Create(ctx, rb, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = env.Client.RbacV1().ClusterRoleBindings().Delete(context.Background(), name, metav1.DeleteOptions{})
		_ = env.Client.RbacV1().ClusterRoles().Delete(context.Background(), name, metav1.DeleteOptions{})
	})
}

func hmgCan(t *testing.T, user, verb, group, resource, sub, ns string) bool {
	t.Helper()
	sar := &authzv1.SubjectAccessReview{Spec: authzv1.SubjectAccessReviewSpec{
		User: user,
		ResourceAttributes: &authzv1.ResourceAttributes{Namespace: ns, Verb: verb, Group: group,
			Resource: resource, Subresource: sub},
	}}
	r, err := env.Client.AuthorizationV1().SubjectAccessReviews().Create(context.Background(), sar, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return r.Status.Allowed
}

// hmgWhoPolicy makes the apiserver refuse, in namespace ns, a pod CREATE not made by the
// ReplicaSet controller's account and a pod DELETE not made by the garbage collector's.
func hmgWhoPolicy(t *testing.T, ns string) {
	t.Helper()
	ctx := context.Background()
	name := "hmg-who-" + ns
	pol := &admissionv1.ValidatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: admissionv1.ValidatingAdmissionPolicySpec{
			FailurePolicy: ptr.To(admissionv1.Fail),
			MatchConstraints: &admissionv1.MatchResources{ResourceRules: []admissionv1.NamedRuleWithOperations{{
				RuleWithOperations: admissionv1.RuleWithOperations{
					Operations: []admissionv1.OperationType{admissionv1.Create, admissionv1.Delete},
					Rule:       admissionv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"pods"}},
				},
			}}},
			Validations: []admissionv1.Validation{
				{Expression: fmt.Sprintf("request.operation != 'CREATE' || request.userInfo.username == '%s'", hmgRSUser),
					Message: "hmg: pods here are created only by " + hmgRSUser},
				{Expression: fmt.Sprintf("request.operation != 'DELETE' || request.userInfo.username == '%s'", hmgGCUser),
					Message: "hmg: pods here are deleted only by " + hmgGCUser},
			},
		},
	}
	if _, err := env.Client.AdmissionregistrationV1().ValidatingAdmissionPolicies().Create(ctx, pol, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	bind := &admissionv1.ValidatingAdmissionPolicyBinding{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: admissionv1.ValidatingAdmissionPolicyBindingSpec{
			PolicyName:        name,
			ValidationActions: []admissionv1.ValidationAction{admissionv1.Deny},
			MatchResources: &admissionv1.MatchResources{NamespaceSelector: &metav1.LabelSelector{
				MatchLabels: map[string]string{"kubernetes.io/metadata.name": ns}}},
		},
	}
	if _, err := env.Client.AdmissionregistrationV1().ValidatingAdmissionPolicyBindings().Create(ctx, bind, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = env.Client.AdmissionregistrationV1().ValidatingAdmissionPolicyBindings().Delete(context.Background(), name, metav1.DeleteOptions{})
		_ = env.Client.AdmissionregistrationV1().ValidatingAdmissionPolicies().Delete(context.Background(), name, metav1.DeleteOptions{})
	})
	// The policy is enforced once the apiserver compiled it: until then a probe pod goes through.
	probe := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "hmg-probe"},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "registry.invalid/pause:1"}}}}
	Eventually(t, 30*time.Second, "the admission policy to refuse the admin's pod", func() (bool, string) {
		_, err := env.Client.CoreV1().Pods(ns).Create(ctx, probe, metav1.CreateOptions{})
		if err == nil {
			_ = env.Client.CoreV1().Pods(ns).Delete(ctx, probe.Name, metav1.DeleteOptions{GracePeriodSeconds: ptr.To(int64(0))})
			return false, "admitted"
		}
		return strings.Contains(err.Error(), "hmg: pods here are created only by"), err.Error()
	})
}

func hmgFreePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

func hmgGetMetrics(port int) (string, error) { return hmgGet(port, "/metrics") }

func hmgGet(port int, path string) (string, error) {
	c := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} // kcmd's self-signed serving cert
	resp, err := c.Get(fmt.Sprintf("https://127.0.0.1:%d%s", port, path))
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err == nil && resp.StatusCode != http.StatusOK {
		err = fmt.Errorf("GET %s: %s: %s", path, resp.Status, b)
	}
	return string(b), err
}

// hmgMetric sums the samples of name whose label set contains every want label.
func hmgMetric(text, name string, want ...string) (float64, bool) {
	re := regexp.MustCompile(`^` + regexp.QuoteMeta(name) + `\{([^}]*)\} ([0-9.e+-]+)$`)
	sum, found := 0.0, false
	for _, l := range strings.Split(text, "\n") {
		m := re.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		ok := true
		for _, w := range want {
			ok = ok && strings.Contains(m[1], w)
		}
		if !ok {
			continue
		}
		v, err := strconv.ParseFloat(m[2], 64)
		if err == nil {
			sum += v
			found = true
		}
	}
	return sum, found
}

// hmgCheckGates: --feature-gates=WatchListClient=false,PodDeletionCost=false reached the
// children: informerd was started with --watch-list=false, every child's KCMD_FEATURE_GATES
// carries both values, and a worker's credentials come from KCMD_TOKEN_FD.
func hmgCheckGates(t *testing.T, pid int) {
	t.Helper()
	var out string
	Eventually(t, 20*time.Second, "informerd and a worker running", func() (bool, string) {
		out = hmgKcmctlPid(t, pid, "status")
		_, _, a, ok1 := hmgProcessRow(out, "informerd")
		_, _, b, ok2 := hmgProcessRow(out, "worker-replicaset-controller-0")
		return ok1 && ok2 && a == "running" && b == "running", out
	})
	ipid, _, _, _ := hmgProcessRow(out, "informerd")
	wpid, _, _, _ := hmgProcessRow(out, "worker-replicaset-controller-0")
	cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", ipid))
	if err != nil || !strings.Contains(string(cmdline), "--watch-list=false") {
		t.Errorf("informerd's command line %q (%v) lacks --watch-list=false", strings.ReplaceAll(string(cmdline), "\x00", " "), err)
	}
	for _, p := range []int{ipid, wpid} {
		environ, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", p))
		if err != nil {
			t.Fatal(err)
		}
		e := string(environ)
		if !strings.Contains(e, "KCMD_FEATURE_GATES=") || !strings.Contains(e, "WatchListClient=false") ||
			!strings.Contains(e, "PodDeletionCost=false") || !strings.Contains(e, "StaleControllerConsistencyReplicaSet=true") {
			t.Errorf("pid %d's KCMD_FEATURE_GATES does not carry the gates: %q", p, e)
		}
		if hasTok := strings.Contains(e, "KCMD_TOKEN_FD="); hasTok != (p == wpid) {
			t.Errorf("pid %d: KCMD_TOKEN_FD present=%v, want it in the worker only", p, hasTok)
		}
	}
}

// TestKcmd_ServiceAccountCredentials: with --use-service-account-credentials a kcmd whose own
// identity cannot write pods reconciles a ReplicaSet and garbage-collects its pods, each write
// made under the controller's own service account (checked by the apiserver's admission), and
// /metrics counts the requests of every kcmd process in rest_client_requests_total.
func TestKcmd_ServiceAccountCredentials(t *testing.T) {
	ctx := context.Background()
	stopSharedRS(t)
	ns := Namespace(t)
	hmgKcmdRBAC(t, "hmg-kcmd-sacreds")
	if hmgCan(t, "kcmd", "create", "", "pods", "", ns) || hmgCan(t, "kcmd", "update", "apps", "replicasets", "status", ns) ||
		hmgCan(t, "kcmd", "delete", "", "pods", "", ns) {
		t.Fatal("the user kcmd may write pods or ReplicaSet status: the test would prove nothing")
	}
	if !hmgCan(t, hmgRSUser, "create", "", "pods", "", ns) || !hmgCan(t, hmgGCUser, "delete", "", "pods", "", ns) {
		t.Fatal("the bootstrap controller roles are not bound to the kube-system service accounts")
	}
	hmgWhoPolicy(t, ns)

	port := hmgFreePort(t)
	p := startKcmd(t, nil, "--kubeconfig="+env.Cluster.Kubeconfigs["kcmd"], "--use-service-account-credentials",
		"--controllers=replicaset-controller,garbage-collector-controller", "--leader-elect=false",
		"--concurrent-replicaset-syncs=2", "--concurrent-gc-syncs=2",
		"--secure-port="+strconv.Itoa(port), "--bind-address=127.0.0.1", "--v=2",
		"--authorization-always-allow-paths=/healthz,/healthz/*,/readyz,/readyz/*,/metrics",
		// also checks that the gates reach the children
		"--feature-gates=WatchListClient=false, PodDeletionCost=false")
	t.Cleanup(func() { dumpKcmdLogs(t, p) })

	Eventually(t, 60*time.Second, "kcmd to get both service-account tokens", func() (bool, string) {
		return p.Logged("using service account kube-system/replicaset-controller") &&
			p.Logged("using service account kube-system/generic-garbage-collector"), "not yet"
	})
	hmgCheckGates(t, p.cmd.Process.Pid)
	for _, sa := range []string{"replicaset-controller", "generic-garbage-collector"} {
		if _, err := env.Client.CoreV1().ServiceAccounts("kube-system").Get(ctx, sa, metav1.GetOptions{}); err != nil {
			t.Errorf("service account kube-system/%s: %v", sa, err)
		}
	}

	rs, err := env.Client.AppsV1().ReplicaSets(ns).Create(ctx, demoReplicaSet(ns, "sacreds", 3), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// The pods exist, so the apiserver admitted their CREATE as the ReplicaSet controller's account.
	Eventually(t, 60*time.Second, "3 pods created by "+hmgRSUser, func() (bool, string) {
		owned, total := activePods(t, ns, "app=sacreds", rs.UID)
		return owned == 3 && total == 3, fmt.Sprintf("%d owned of %d", owned, total)
	})
	Eventually(t, 60*time.Second, "status.replicas=3 written by the ReplicaSet controller's account", func() (bool, string) {
		cur, err := env.Client.AppsV1().ReplicaSets(ns).Get(ctx, rs.Name, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		return cur.Status.Replicas == 3, fmt.Sprintf("status.replicas=%d", cur.Status.Replicas)
	})
	// The bootstrap role grants update, not patch, on replicasets/status: the worker must have
	// fallen back from its merge PATCH to upstream's PUT.
	if !p.Logged("writing status with PUT from now on") {
		t.Error("the ReplicaSet worker did not log its switch to PUT for status writes")
	}

	// Background deletion: the garbage collector deletes the pods; admission lets only its
	// account do that.
	if err := env.Client.AppsV1().ReplicaSets(ns).Delete(ctx, rs.Name,
		metav1.DeleteOptions{PropagationPolicy: ptr.To(metav1.DeletePropagationBackground)}); err != nil {
		t.Fatal(err)
	}
	Eventually(t, 60*time.Second, "the garbage collector to delete the pods as "+hmgGCUser, func() (bool, string) {
		pods, err := env.Client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "app=sacreds"})
		if err != nil {
			return false, err.Error()
		}
		live := 0
		for _, pod := range pods.Items {
			if pod.DeletionTimestamp == nil {
				live++
			}
		}
		return live == 0, fmt.Sprintf("%d pods not deleted", live)
	})
	if _, err := env.Client.AppsV1().ReplicaSets(ns).Get(ctx, rs.Name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("ReplicaSet still there after background deletion: %v", err)
	}
	if p.Logged("Forbidden") || p.Logged("forbidden") {
		for _, l := range p.Logs() {
			// a write into a namespace another test left Terminating is refused as
			// "forbidden ... being terminated": not an authorization refusal
			if strings.Contains(strings.ToLower(l), "forbidden") && !strings.Contains(l, "because it is being terminated") {
				t.Errorf("kcmd was refused something: %s", l)
			}
		}
	}

	// rest_client_requests_total sums every process: the workers' POSTs of pods (201) and the
	// manager's TokenRequests (201) appear, as do informerd's GETs.
	var text string
	Eventually(t, 20*time.Second, "rest_client_requests_total on /metrics", func() (bool, string) {
		var err error
		if text, err = hmgGetMetrics(port); err != nil {
			return false, err.Error()
		}
		posts, _ := hmgMetric(text, "rest_client_requests_total", `code="201"`, `method="POST"`)
		gets, _ := hmgMetric(text, "rest_client_requests_total", `code="200"`, `method="GET"`)
		deletes, _ := hmgMetric(text, "rest_client_requests_total", `method="DELETE"`)
		// 2 tokens + 3 pods + events; informerd's lists/watches; the GC's 3 pod deletions
		return posts >= 5 && gets >= 1 && deletes >= 3, fmt.Sprintf("POST 201=%v GET 200=%v DELETE=%v", posts, gets, deletes)
	})
	if n, ok := hmgMetric(text, "rest_client_request_duration_seconds_count", `verb="POST"`); !ok || n < 5 {
		t.Errorf("rest_client_request_duration_seconds_count{verb=POST} = %v (found %v), want >= 5", n, ok)
	}
	if !strings.Contains(text, `host="`+strings.TrimPrefix(env.Cluster.Server, "https://")+`"`) {
		t.Errorf("rest_client_* lacks host=%q", strings.TrimPrefix(env.Cluster.Server, "https://"))
	}
	// one health check per started controller, as kube-controller-manager registers them
	for _, c := range []string{"replicaset-controller", "garbage-collector-controller"} {
		if body, err := hmgGet(port, "/healthz/"+c); err != nil || body != "ok" {
			t.Errorf("/healthz/%s = %q, %v; want ok", c, body, err)
		}
	}
	if body, err := hmgGet(port, "/healthz?verbose"); err != nil || !strings.Contains(body, "[+]replicaset-controller ok") ||
		!strings.Contains(body, "[+]garbage-collector-controller ok") || !strings.Contains(body, "[+]leaderElection ok") {
		t.Errorf("/healthz?verbose = %q, %v", body, err)
	}
	if body, err := hmgGet(port, "/readyz/serviceaccount-tokens"); err != nil || body != "ok" {
		t.Errorf("/readyz/serviceaccount-tokens = %q, %v; want ok", body, err)
	}
}
