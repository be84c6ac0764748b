// SPDX-License-Identifier: Apache-2.0

package e2e

// Issue 21, delegated authentication as kube-controller-manager has it: a front proxy (its
// client certificate signed by --requestheader-client-ca-file, CommonName allowed) names the user
// in X-Remote-User / X-Remote-Group, and a client CA not given as a flag is looked up in
// kube-system/extension-apiserver-authentication (the test cluster's apiserver publishes its
// --client-ca-file there). The same requests go to upstream kube-controller-manager started with
// the same flags; both must answer with the expected status code.

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// rhIssue makes a certificate for cn signed by (ca, caKey), or a self-signed CA when ca is nil.
func rhIssue(t *testing.T, cn string, ca *x509.Certificate, caKey *ecdsa.PrivateKey) (*x509.Certificate, *ecdsa.PrivateKey, tls.Certificate) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	serial, _ := rand.Int(rand.Reader, big.NewInt(1<<62))
	tmpl := &x509.Certificate{SerialNumber: serial, Subject: pkix.Name{CommonName: cn},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
	parent, signer := tmpl, key
	if ca == nil {
		tmpl.IsCA, tmpl.BasicConstraintsValid = true, true
		tmpl.KeyUsage = x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature
	} else {
		tmpl.KeyUsage = x509.KeyUsageDigitalSignature
		tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}
		parent, signer = ca, caKey
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, &key.PublicKey, signer)
	if err != nil {
		t.Fatal(err)
	}
	crt, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return crt, key, tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}

func rhGet(port int, path string, cert *tls.Certificate, hdrs [][2]string) (int, string, error) {
	tc := &tls.Config{InsecureSkipVerify: true}
	if cert != nil {
		tc.Certificates = []tls.Certificate{*cert}
	}
	c := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: tc}}
	req, err := http.NewRequest("GET", fmt.Sprintf("https://127.0.0.1:%d%s", port, path), nil)
	if err != nil {
		return 0, "", err
	}
	for _, h := range hdrs {
		req.Header.Add(h[0], h[1])
	}
	resp, err := c.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), err
}

func TestKcmd_RequestHeaderAuth(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	ca, caKey, _ := rhIssue(t, "front-proxy-ca", nil, nil)
	_, _, proxy := rhIssue(t, "front-proxy-client", ca, caKey)
	_, _, other := rhIssue(t, "not-the-proxy", ca, caKey)
	caFile := filepath.Join(dir, "front-proxy-ca.crt")
	if err := os.WriteFile(caFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ca.Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	// a user only the proxy names: allowed to get /metrics through RBAC
	user := fmt.Sprintf("rh-user-%d", time.Now().UnixNano()%100000)
	if _, err := env.Client.RbacV1().ClusterRoles().Create(ctx, &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: user},
		Rules:      []rbacv1.PolicyRule{{NonResourceURLs: []string{"/metrics"}, Verbs: []string{"get"}}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Client.RbacV1().ClusterRoles().Delete(ctx, user, metav1.DeleteOptions{}) })
	if _, err := env.Client.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: user},
		RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: user},
		Subjects:   []rbacv1.Subject{{Kind: "User", APIGroup: "rbac.authorization.k8s.io", Name: user}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Client.RbacV1().ClusterRoleBindings().Delete(ctx, user, metav1.DeleteOptions{}) })

	// no --client-ca-file: both look it up in the cluster
	flags := []string{"--authentication-kubeconfig=" + env.Cluster.Kubeconfig,
		"--authorization-kubeconfig=" + env.Cluster.Kubeconfig,
		"--requestheader-client-ca-file=" + caFile, "--requestheader-allowed-names=front-proxy-client"}
	kport, uport := hmgFreePort(t), hmgFreePort(t)
	p := startKcmd(t, nil, append([]string{"--controllers=-replicaset-controller,-garbage-collector-controller,-pod-garbage-collector-controller",
		"--leader-elect=false", "--secure-port=" + strconv.Itoa(kport), "--bind-address=127.0.0.1"}, flags...)...)
	t.Cleanup(func() { dumpKcmdLogs(t, p) })
	authStartKCM(t, uport, flags...)
	for _, port := range []int{kport, uport} {
		Eventually(t, 60*time.Second, fmt.Sprintf("HTTPS on port %d", port), func() (bool, string) {
			code, body, err := rhGet(port, "/healthz", nil, nil)
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
	// kcm loads the client CA it looked up in the cluster by a controller of its own, after it
	// serves: until then a client certificate is anonymous to it. Wait for both to know it (the
	// admin certificate authenticates) before comparing.
	for _, port := range []int{kport, uport} {
		Eventually(t, 30*time.Second, fmt.Sprintf("the looked-up client CA in use on port %d", port), func() (bool, string) {
			code, body, err := rhGet(port, "/metrics", &admin, nil)
			if err != nil {
				return false, err.Error()
			}
			return code == 200, fmt.Sprintf("%d %.200s", code, body)
		})
	}
	cases := []struct {
		what string
		cert *tls.Certificate
		hdrs [][2]string
		want int
	}{
		{"the proxy names a user RBAC lets get /metrics", &proxy, [][2]string{{"X-Remote-User", user}}, 200},
		{"the proxy names a user in system:masters", &proxy, [][2]string{{"X-Remote-User", "someone"}, {"X-Remote-Group", "team"}, {"X-Remote-Group", "system:masters"}}, 200},
		{"the proxy names a user without rights", &proxy, [][2]string{{"X-Remote-User", "someone"}}, 403},
		{"the proxy names no user", &proxy, [][2]string{{"X-Remote-Group", "system:masters"}}, 401},
		{"a certificate of the proxy CA with a CommonName not allowed", &other, [][2]string{{"X-Remote-User", user}}, 401},
		{"the cluster CA's admin certificate (client CA looked up in the cluster)", &admin, [][2]string{{"X-Remote-User", "someone"}}, 200},
		{"headers without a certificate", nil, [][2]string{{"X-Remote-User", user}, {"X-Remote-Group", "system:masters"}}, 403},
	}
	for _, c := range cases {
		kc, kb, err := rhGet(kport, "/metrics", c.cert, c.hdrs)
		if err != nil {
			t.Fatalf("kcmd, %s: %v", c.what, err)
		}
		uc, ub, err := rhGet(uport, "/metrics", c.cert, c.hdrs)
		if err != nil {
			t.Fatalf("kcm, %s: %v", c.what, err)
		}
		t.Logf("%s: kcmd %d, kube-controller-manager %d", c.what, kc, uc)
		if kc != c.want || uc != c.want {
			t.Errorf("%s: kcmd %d (%.200s), kube-controller-manager %d (%.200s), want %d", c.what, kc, kb, uc, ub, c.want)
		}
	}
}
