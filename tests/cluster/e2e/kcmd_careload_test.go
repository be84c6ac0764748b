// SPDX-License-Identifier: Apache-2.0

package e2e

// Issue 21: the client CAs are followed while kcmd runs, as kube-controller-manager's dynamic CA
// content does. A rotated --requestheader-client-ca-file (the file replaced) and a CA added to
// kube-system/extension-apiserver-authentication's client-ca-file (the looked-up one) are in force
// without a restart. The clients are Go's: a Go client sends its certificate only when the
// server's CertificateRequest names its CA, so this also checks that new connections are offered
// the new CAs. Upstream kube-controller-manager runs beside kcmd with the same flags and must
// answer the same.

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
	"math/big"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
)

func TestKcmd_ClientCARotation(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	pemOf := func(der []byte) []byte { return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}) }
	proxyCA1, key1, _ := rhIssue(t, "front-proxy-ca-1", nil, nil)
	proxyCA2, key2, _ := rhIssue(t, "front-proxy-ca-2", nil, nil)
	_, _, proxy1 := rhIssue(t, "front-proxy-client", proxyCA1, key1)
	_, _, proxy2 := rhIssue(t, "front-proxy-client", proxyCA2, key2)
	rhFile := filepath.Join(dir, "front-proxy-ca.crt")
	writeSwap := func(content []byte) {
		tmp := rhFile + ".new"
		if err := os.WriteFile(tmp, content, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, rhFile); err != nil {
			t.Fatal(err)
		}
	}
	writeSwap(pemOf(proxyCA1.Raw))

	flags := []string{"--authentication-kubeconfig=" + env.Cluster.Kubeconfig,
		"--authorization-kubeconfig=" + env.Cluster.Kubeconfig,
		"--requestheader-client-ca-file=" + rhFile, "--requestheader-allowed-names=front-proxy-client"}
	kport, uport := hmgFreePort(t), hmgFreePort(t)
	p := startKcmd(t, nil, append([]string{"--controllers=-replicaset-controller,-garbage-collector-controller,-pod-garbage-collector-controller",
		"--leader-elect=false", "--secure-port=" + strconv.Itoa(kport), "--bind-address=127.0.0.1"}, flags...)...)
	t.Cleanup(func() { dumpKcmdLogs(t, p) })
	authStartKCM(t, uport, flags...)
	masters := [][2]string{{"X-Remote-User", "rotated"}, {"X-Remote-Group", "system:masters"}}
	code := func(port int, cert *tls.Certificate, hdrs [][2]string) (int, string) {
		c, body, err := rhGet(port, "/metrics", cert, hdrs)
		if err != nil {
			return 0, err.Error()
		}
		return c, fmt.Sprintf("%d %.200s", c, body)
	}
	both := func(what string, cert *tls.Certificate, hdrs [][2]string, want int, within time.Duration) {
		t.Helper()
		for _, port := range []int{kport, uport} {
			who := map[int]string{kport: "kcmd", uport: "kube-controller-manager"}[port]
			Eventually(t, within, fmt.Sprintf("%s: %s answers %d", what, who, want), func() (bool, string) {
				c, s := code(port, cert, hdrs)
				return c == want, s
			})
		}
	}
	both("the first proxy CA in force", &proxy1, masters, 200, 60*time.Second)
	// the second proxy's CA is not offered: a Go client sends no certificate, so it is anonymous
	both("the second proxy before the rotation", &proxy2, masters, 403, 5*time.Second)

	// the file rotated to both CAs, then to the second only
	writeSwap(append(pemOf(proxyCA1.Raw), pemOf(proxyCA2.Raw)...))
	both("the second proxy after the file holds both CAs", &proxy2, masters, 200, 30*time.Second)
	both("the first proxy after the file holds both CAs", &proxy1, masters, 200, 5*time.Second)
	writeSwap(pemOf(proxyCA2.Raw))
	both("the first proxy after its CA left the file", &proxy1, masters, 403, 30*time.Second)

	// a client CA added to the ConfigMap the apiserver publishes (kcmd reads it every minute)
	clientCA, clientKey, _ := rhIssue(t, "rotated-client-ca", nil, nil)
	_, _, someone := rhIssueOrg(t, "rotated-admin", "system:masters", clientCA, clientKey)
	both("a client certificate of a CA not yet published", &someone, nil, 403, 5*time.Second)
	var before string
	cms := env.Client.CoreV1().ConfigMaps("kube-system")
	if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cm, err := cms.Get(ctx, "extension-apiserver-authentication", metav1.GetOptions{})
		if err != nil {
			return err
		}
		before = cm.Data["client-ca-file"]
		cm.Data["client-ca-file"] = before + string(pemOf(clientCA.Raw))
		_, err = cms.Update(ctx, cm, metav1.UpdateOptions{})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = retry.RetryOnConflict(retry.DefaultRetry, func() error {
			cm, err := cms.Get(ctx, "extension-apiserver-authentication", metav1.GetOptions{})
			if err != nil {
				return err
			}
			cm.Data["client-ca-file"] = before
			_, err = cms.Update(ctx, cm, metav1.UpdateOptions{})
			return err
		})
	})
	both("a client certificate of the CA added to the ConfigMap", &someone, nil, 200, 90*time.Second)
}

// rhIssueOrg is rhIssue for a client certificate with an Organization (a group).
func rhIssueOrg(t *testing.T, cn, org string, ca *x509.Certificate, caKey *ecdsa.PrivateKey) (*x509.Certificate, *ecdsa.PrivateKey, tls.Certificate) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	serial, _ := rand.Int(rand.Reader, big.NewInt(1<<62))
	tmpl := &x509.Certificate{SerialNumber: serial, Subject: pkix.Name{CommonName: cn, Organization: []string{org}},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	crt, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return crt, key, tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}
