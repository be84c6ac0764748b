// SPDX-License-Identifier: Apache-2.0

package e2e

// kcm's certificate controllers against the real apiserver (docs/certificates.md).
//
// TestCSR_Cleaner ports upstream's cleaner cases (cleaner_test.go) to real objects: CSRs whose
// conditions carry lastUpdateTimes in the past (the apiserver keeps a client's times) and
// certificates made here, then kcmd with only the cleaner; the ones past a deadline are deleted
// (and kcmd logged deleting each, so another cleaner running beside cannot pass the test for
// it), the others stay.

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"strings"
	"testing"
	"time"

	certv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// csrRequestPEM: a PKCS#10 request for cn/orgs with the given SANs, and its key.
func csrRequestPEM(t *testing.T, cn string, orgs []string, dns []string) ([]byte, *ecdsa.PrivateKey) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{
		Subject: pkix.Name{CommonName: cn, Organization: orgs}, DNSNames: dns}, key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der}), key
}

// selfSignedPEM: a certificate valid from nb to na (only its dates matter to the cleaner).
func selfSignedPEM(t *testing.T, nb, na time.Time) []byte {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "e2e"},
		NotBefore: nb, NotAfter: na}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}

func TestCSR_Cleaner(t *testing.T) {
	ctx := context.Background()
	csrs := env.Client.CertificatesV1().CertificateSigningRequests()
	prefix := "e2e-clean-" + strings.ToLower(fmt.Sprintf("%x", time.Now().UnixNano()&0xffffff)) + "-"
	now := time.Now()
	ago := func(d time.Duration) metav1.Time { return metav1.NewTime(now.Add(-d)) }
	unexpired := selfSignedPEM(t, now.Add(-time.Hour), now.Add(24*time.Hour))
	expired := selfSignedPEM(t, now.Add(-48*time.Hour), now.Add(-24*time.Hour))

	type cond struct {
		typ certv1.RequestConditionType
		age time.Duration
	}
	mk := func(name string, conds []cond, cert []byte) {
		t.Helper()
		req, _ := csrRequestPEM(t, name, nil, nil)
		c, err := csrs.Create(ctx, &certv1.CertificateSigningRequest{
			ObjectMeta: metav1.ObjectMeta{Name: prefix + name},
			Spec: certv1.CertificateSigningRequestSpec{Request: req, SignerName: "e2e.kcmd.io/cleaner",
				Usages: []certv1.KeyUsage{certv1.UsageDigitalSignature}}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = csrs.Delete(context.Background(), c.Name, metav1.DeleteOptions{}) })
		var approval, status []certv1.CertificateSigningRequestCondition
		for _, cd := range conds {
			x := certv1.CertificateSigningRequestCondition{Type: cd.typ, Status: corev1.ConditionTrue,
				Reason: "E2E", LastUpdateTime: ago(cd.age)}
			if cd.typ == certv1.CertificateFailed {
				status = append(status, x)
			} else {
				approval = append(approval, x)
			}
		}
		if len(approval) > 0 {
			c.Status.Conditions = approval
			if c, err = csrs.UpdateApproval(ctx, c.Name, c, metav1.UpdateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		if len(status) > 0 || cert != nil {
			c.Status.Conditions = append(c.Status.Conditions, status...)
			c.Status.Certificate = cert
			if _, err = csrs.UpdateStatus(ctx, c, metav1.UpdateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
	}
	// upstream's cases (the pending ones need a creationTimestamp 25 h ago, which the apiserver
	// does not let a client set: the fresh pending one must stay; the 24 h rule is unit-tested)
	gone := map[string]string{
		"approved-issued-old": "approvedExpiration duration old and approved",
		"denied-old":          "deniedExpiration duration old and denied",
		"failed-old":          "deniedExpiration duration old and failed",
		"issued-expired":      "the associated certificate is expired",
		"approved-unissued":   "approved but not issued",
	}
	mk("approved-issued-recent", []cond{{certv1.CertificateApproved, 50 * time.Minute}}, unexpired)
	mk("approved-unissued-recent", []cond{{certv1.CertificateApproved, 2 * time.Hour}}, nil)
	mk("approved-issued-old", []cond{{certv1.CertificateApproved, 2 * time.Hour}}, unexpired)
	mk("denied-recent", []cond{{certv1.CertificateDenied, 50 * time.Minute}}, nil)
	mk("denied-old", []cond{{certv1.CertificateDenied, 2 * time.Hour}}, nil)
	mk("failed-recent", []cond{{certv1.CertificateApproved, 2 * time.Hour}, {certv1.CertificateFailed, 50 * time.Minute}}, nil)
	mk("failed-old", []cond{{certv1.CertificateApproved, 2 * time.Hour}, {certv1.CertificateFailed, 2 * time.Hour}}, nil)
	mk("pending", nil, nil)
	mk("issued-expired", []cond{{certv1.CertificateApproved, 50 * time.Minute}}, expired)
	mk("approved-unissued", []cond{{certv1.CertificateApproved, 25 * time.Hour}}, nil)

	p := startKcmd(t, nil, "--controllers=certificatesigningrequest-cleaner-controller", "--secure-port=0",
		"--leader-elect=false", "--v=2")
	t.Cleanup(func() { dumpKcmdLogs(t, p) })
	for name, msg := range gone {
		full := prefix + name
		Eventually(t, 30*time.Second, full+" deleted by kcmd", func() (bool, string) {
			_, err := csrs.Get(ctx, full, metav1.GetOptions{})
			logged := p.Logged(msg + `." csr="` + full + `"`)
			return apierrors.IsNotFound(err) && logged, fmt.Sprintf("get: %v, kcmd logged it: %v", err, logged)
		})
	}
	// the pass is over (every deletion seen): the others are still there
	for _, name := range []string{"approved-issued-recent", "approved-unissued-recent", "denied-recent", "failed-recent", "pending"} {
		if _, err := csrs.Get(ctx, prefix+name, metav1.GetOptions{}); err != nil {
			t.Errorf("%s: %v (it must stay)", name, err)
		}
		if p.Logged(`csr="` + prefix + name + `"`) {
			t.Errorf("%s: kcmd logged cleaning it", name)
		}
	}
}
