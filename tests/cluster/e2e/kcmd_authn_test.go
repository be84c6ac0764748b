package e2e

// kcmd's HTTPS endpoint behind delegated authentication and authorization, as
// kube-controller-manager serves its own: a bearer token is checked with a TokenReview, then a
// SubjectAccessReview decides the non-resource path, against the real apiserver. The same
// requests go to upstream kube-controller-manager started with the same flags: both must answer
// with the same status codes (the oracle is upstream, not a table written here).

import (
	"bufio"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	authnv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// authGet is a GET on 127.0.0.1:port with an optional bearer token; it returns the status code
// and the body.
func authGet(port int, path, token string) (int, string, error) {
	return authGetCert(port, path, token, nil)
}

// authGetCert is authGet presenting a client certificate when cert is not nil.
func authGetCert(port int, path, token string, cert *tls.Certificate) (int, string, error) {
	tc := &tls.Config{InsecureSkipVerify: true} // self-signed serving certs
	if cert != nil {
		tc.Certificates = []tls.Certificate{*cert}
	}
	c := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: tc}}
	req, err := http.NewRequest("GET", fmt.Sprintf("https://127.0.0.1:%d%s", port, path), nil)
	if err != nil {
		return 0, "", err
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := c.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), err
}

func authSAToken(t *testing.T, ns, name string) string {
	t.Helper()
	ctx := context.Background()
	if _, err := env.Client.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{
		ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	tr, err := env.Client.CoreV1().ServiceAccounts(ns).CreateToken(ctx, name, &authnv1.TokenRequest{
		Spec: authnv1.TokenRequestSpec{ExpirationSeconds: ptr.To(int64(3600))}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return tr.Status.Token
}

// authStartKCM starts upstream kube-controller-manager with no controllers, serving on port.
func authStartKCM(t *testing.T, port int, flags ...string) {
	t.Helper()
	dir := os.Getenv("KCMD_CLUSTER_BIN")
	if dir == "" {
		t.Fatal("KCMD_CLUSTER_BIN is not set (run through make e2e)")
	}
	args := append([]string{"--kubeconfig=" + env.Cluster.Kubeconfig, "--leader-elect=false",
		"--controllers=-garbage-collector-controller", "--secure-port=" + strconv.Itoa(port),
		"--bind-address=127.0.0.1"}, flags...)
	cmd := exec.Command(filepath.Join(dir, "kube-controller-manager"), args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	var logs []string
	done := make(chan struct{})
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			logs = append(logs, sc.Text())
		}
		close(done)
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		<-done
		if t.Failed() {
			for _, l := range logs {
				t.Logf("kcm: %s", l)
			}
		}
	})
}

func TestKcmd_DelegatedAuth(t *testing.T) {
	ctx := context.Background()
	ns := Namespace(t)
	allowed := authSAToken(t, ns, "scraper")
	denied := authSAToken(t, ns, "nobody")
	name := "kcmd-authn-" + ns
	if _, err := env.Client.RbacV1().ClusterRoles().Create(ctx, &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Rules:      []rbacv1.PolicyRule{{NonResourceURLs: []string{"/metrics"}, Verbs: []string{"get"}}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Client.RbacV1().ClusterRoles().Delete(ctx, name, metav1.DeleteOptions{}) })
	if _, err := env.Client.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: name},
		Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Namespace: ns, Name: "scraper"}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Client.RbacV1().ClusterRoleBindings().Delete(ctx, name, metav1.DeleteOptions{}) })

	flags := []string{"--authentication-kubeconfig=" + env.Cluster.Kubeconfig,
		"--authorization-kubeconfig=" + env.Cluster.Kubeconfig, "--client-ca-file=" + env.Cluster.CAFile}
	kport, uport := hmgFreePort(t), hmgFreePort(t)
	p := startKcmd(t, nil, append([]string{"--controllers=-replicaset-controller,-garbage-collector-controller,-pod-garbage-collector-controller,-job-controller",
		"--leader-elect=false", "--secure-port=" + strconv.Itoa(kport), "--bind-address=127.0.0.1"}, flags...)...)
	authStartKCM(t, uport, flags...)
	for _, port := range []int{kport, uport} {
		Eventually(t, 60*time.Second, fmt.Sprintf("HTTPS on port %d", port), func() (bool, string) {
			code, body, err := authGet(port, "/healthz", "")
			if err != nil {
				return false, err.Error()
			}
			return code == 200, fmt.Sprintf("%d %s", code, body)
		})
	}
	if !p.Logged("delegated authentication: TokenReview through --authentication-kubeconfig") {
		t.Error("kcmd did not log its delegated authentication")
	}

	cases := []struct {
		what, path, token string
		want              int
	}{
		{"healthz without a token", "/healthz", "", 200},
		{"metrics without a token (anonymous)", "/metrics", "", 403},
		{"metrics with a service account not allowed", "/metrics", denied, 403},
		{"metrics with a service account bound to get /metrics", "/metrics", allowed, 200},
		{"metrics with an invalid token", "/metrics", "not-a-token", 401},
		{"healthz with an invalid token", "/healthz", "not-a-token", 401},
		{"a check path not always allowed", "/healthz/ping", "", 403},
		{"an unknown path with the allowed token", "/nope", allowed, 403},
	}
	for _, c := range cases {
		kc, kb, err := authGet(kport, c.path, c.token)
		if err != nil {
			t.Fatalf("kcmd %s: %v", c.what, err)
		}
		uc, ub, err := authGet(uport, c.path, c.token)
		if err != nil {
			t.Fatalf("kcm %s: %v", c.what, err)
		}
		t.Logf("%s: kcmd %d, kube-controller-manager %d", c.what, kc, uc)
		if kc != c.want || uc != c.want {
			t.Errorf("%s: kcmd %d (%.200s), kube-controller-manager %d (%.200s), want %d", c.what, kc, kb, uc, ub, c.want)
		}
	}
	// kcm v1.37 serves no /readyz (404 after authorization); kcmd does, and it is always allowed
	if code, body, err := authGet(kport, "/readyz", ""); err != nil || code != 200 {
		t.Errorf("kcmd /readyz without a token: %d %.200s %v", code, body, err)
	}
	if code, _, err := authGet(uport, "/readyz", ""); err != nil || code == 401 || code == 403 {
		t.Errorf("kcm /readyz without a token: %d %v (the path is always allowed)", code, err)
	}
	// the cluster CA's admin client certificate (CN kcmd-admin, O system:masters) authenticates
	// without a token, and system:masters needs no SubjectAccessReview
	admin, err := tls.LoadX509KeyPair(filepath.Join(env.Cluster.Dir, "pki", "admin.crt"),
		filepath.Join(env.Cluster.Dir, "pki", "admin.key"))
	if err != nil {
		t.Fatal(err)
	}
	for _, port := range []int{kport, uport} {
		if code, body, err := authGetCert(port, "/metrics", "", &admin); err != nil || code != 200 {
			t.Errorf("port %d: /metrics with the admin client certificate: %d %.200s %v", port, code, body, err)
		}
	}
	// the apiserver's serving certificate is signed by the same CA but not for client auth
	server, err := tls.LoadX509KeyPair(filepath.Join(env.Cluster.Dir, "pki", "apiserver.crt"),
		filepath.Join(env.Cluster.Dir, "pki", "apiserver.key"))
	if err != nil {
		t.Fatal(err)
	}
	kc, _, _ := authGetCert(kport, "/healthz", "", &server)
	uc, _, _ := authGetCert(uport, "/healthz", "", &server)
	t.Logf("a serving (not client-auth) certificate: kcmd %d, kube-controller-manager %d", kc, uc)
	if kc != uc {
		t.Errorf("a serving certificate as client certificate: kcmd %d, kube-controller-manager %d", kc, uc)
	}
	// the body of a 403 names the user and the path, as kcm's does
	_, kb, _ := authGet(kport, "/metrics", denied)
	want := fmt.Sprintf(`forbidden: User \"system:serviceaccount:%s:nobody\" cannot get path \"/metrics\"`, ns)
	if !strings.Contains(kb, want) {
		t.Errorf("kcmd's 403 body %q does not contain %q", kb, want)
	}
	code, body, _ := authGet(kport, "/metrics", allowed)
	if code != 200 || !strings.Contains(body, "# TYPE") {
		t.Errorf("kcmd /metrics with the allowed token: %d %.200s", code, body)
	}
}

// Issue 21, --authentication-skip-lookup: without --client-ca-file, kcm (and kcmd) read the
// client CA from kube-system/extension-apiserver-authentication (TestKcmd_RequestHeaderAuth
// shows the cluster's admin client certificate then authenticates). With the flag there is no
// lookup: no client CA, so that certificate is not an identity and /metrics is anonymous (403),
// while a bearer token still goes through the TokenReview. kcm runs beside kcmd with the same
// flags and must answer the same.
func TestKcmd_AuthenticationSkipLookup(t *testing.T) {
	ctx := context.Background()
	ns := Namespace(t)
	allowed := authSAToken(t, ns, "scraper")
	name := "kcmd-skiplookup-" + ns
	if _, err := env.Client.RbacV1().ClusterRoles().Create(ctx, &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Rules:      []rbacv1.PolicyRule{{NonResourceURLs: []string{"/metrics"}, Verbs: []string{"get"}}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Client.RbacV1().ClusterRoles().Delete(ctx, name, metav1.DeleteOptions{}) })
	if _, err := env.Client.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: name},
		Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Namespace: ns, Name: "scraper"}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Client.RbacV1().ClusterRoleBindings().Delete(ctx, name, metav1.DeleteOptions{}) })

	flags := []string{"--authentication-kubeconfig=" + env.Cluster.Kubeconfig,
		"--authorization-kubeconfig=" + env.Cluster.Kubeconfig, "--authentication-skip-lookup"}
	kport, uport := hmgFreePort(t), hmgFreePort(t)
	p := startKcmd(t, nil, append([]string{"--controllers=-replicaset-controller,-garbage-collector-controller,-pod-garbage-collector-controller,-job-controller",
		"--leader-elect=false", "--secure-port=" + strconv.Itoa(kport), "--bind-address=127.0.0.1"}, flags...)...)
	t.Cleanup(func() { dumpKcmdLogs(t, p) })
	authStartKCM(t, uport, flags...)
	for _, port := range []int{kport, uport} {
		Eventually(t, 60*time.Second, fmt.Sprintf("HTTPS on port %d", port), func() (bool, string) {
			code, body, err := authGet(port, "/healthz", "")
			if err != nil {
				return false, err.Error()
			}
			return code == 200, fmt.Sprintf("%d %s", code, body)
		})
	}
	admin, err := tls.LoadX509KeyPair(filepath.Join(env.Cluster.Dir, "pki", "admin.crt"),
		filepath.Join(env.Cluster.Dir, "pki", "admin.key"))
	if err != nil {
		t.Fatal(err)
	}
	// kcm would load a looked-up CA shortly after it serves: watch long enough to see it
	for end := time.Now().Add(8 * time.Second); time.Now().Before(end); time.Sleep(500 * time.Millisecond) {
		for _, port := range []int{kport, uport} {
			code, body, err := authGetCert(port, "/metrics", "", &admin)
			if err != nil {
				t.Fatalf("port %d: %v", port, err)
			}
			if code != 403 {
				t.Fatalf("port %d (kcmd %d, kcm %d): /metrics with the admin client certificate: %d %.200s, "+
					"want 403 (no client CA without the lookup)", port, kport, uport, code, body)
			}
		}
	}
	for _, port := range []int{kport, uport} {
		if code, body, err := authGet(port, "/metrics", allowed); err != nil || code != 200 {
			t.Errorf("port %d (kcmd %d): /metrics with a token allowed by RBAC: %d %.200s %v", port, kport, code, body, err)
		}
	}
}
