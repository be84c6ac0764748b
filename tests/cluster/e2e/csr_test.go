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
	"encoding/asn1"
	"encoding/pem"
	"fmt"
	"math/big"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	certv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/retry"
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
		"--use-service-account-credentials", "--leader-elect=false", "--v=2")
	t.Cleanup(func() { dumpKcmdLogs(t, p) })
	// another kcmd or kcm started with '*' by a test running beside (another shard) has a
	// cleaner too and may delete one first: each must be gone, and kcmd must have deleted at
	// least one (all of them when it runs alone)
	logged := 0
	for name, msg := range gone {
		full := prefix + name
		Eventually(t, 30*time.Second, full+" deleted", func() (bool, string) {
			_, err := csrs.Get(ctx, full, metav1.GetOptions{})
			return apierrors.IsNotFound(err), fmt.Sprintf("get: %v", err)
		})
		Eventually(t, 5*time.Second, "kcmd's pass over", func() (bool, string) { return p.Logged("CSR cleaner pass"), "" })
		if p.Logged(msg + `. csr="` + full + `"`) {
			logged++
		}
	}
	if logged == 0 {
		t.Errorf("kcmd logged deleting none of the %d CSRs past a deadline", len(gone))
	} else if logged < len(gone) {
		t.Logf("kcmd deleted %d of %d (another cleaner ran beside)", logged, len(gone))
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

// csrTestCA: a CA (ECDSA P-256, a subject key id) valid until notAfter, written to dir.
func csrTestCA(t *testing.T, dir string, notAfter time.Time) (certFile, keyFile string, ca *x509.Certificate) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(7), Subject: pkix.Name{CommonName: "kcmd-e2e-csr-ca"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: notAfter, IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature, SubjectKeyId: []byte{1, 2, 3, 4, 5, 6, 7, 8}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	ca, _ = x509.ParseCertificate(der)
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile = dir+"/ca.crt", dir+"/ca.key"
	writeFile(t, certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
	writeFile(t, keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}))
	return certFile, keyFile, ca
}

// approveCSR approves a CSR unless an approver running beside (kcmd or kcm started by another
// test with '*') already did.
func approveCSR(t *testing.T, name string) {
	t.Helper()
	csrs := env.Client.CertificatesV1().CertificateSigningRequests()
	if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		o, err := csrs.Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		for _, c := range o.Status.Conditions {
			if c.Type == certv1.CertificateApproved {
				return nil
			}
		}
		o.Status.Conditions = append(o.Status.Conditions, certv1.CertificateSigningRequestCondition{
			Type: certv1.CertificateApproved, Status: corev1.ConditionTrue, Reason: "E2E", Message: "approved by the e2e test"})
		_, err = csrs.UpdateApproval(context.Background(), name, o, metav1.UpdateOptions{})
		return err
	}); err != nil {
		t.Fatalf("%s: approve: %v", name, err)
	}
}

func writeFile(t *testing.T, path string, b []byte) {
	t.Helper()
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestCSR_Signing ports upstream's signer tests (signer_test.go: TestSigner, TestHandle's
// cases, TestDuration) to the real apiserver: approved CSRs of the built-in signers get a
// certificate that chains to the CA, carries the request's subject and SANs, the usages asked
// for, a random serial, notBefore 5 minutes back and notAfter capped by expirationSeconds,
// --cluster-signing-duration and the CA's own notAfter; requests a signer's rules refuse get
// the Failed condition SignerValidationFailure with upstream's message; CSRs not approved, or
// of another signer, are left alone.
func TestCSR_Signing(t *testing.T) {
	ctx := context.Background()
	csrs := env.Client.CertificatesV1().CertificateSigningRequests()
	prefix := "e2e-sign-" + strings.ToLower(fmt.Sprintf("%x", time.Now().UnixNano()&0xffffff)) + "-"
	caNotAfter := time.Now().Add(30 * 24 * time.Hour).Truncate(time.Second)
	certFile, keyFile, ca := csrTestCA(t, t.TempDir(), caNotAfter)

	type csrCase struct {
		name, signer string
		cn           string
		orgs, dns    []string
		usages       []certv1.KeyUsage
		exp          int32
		approve      bool
	}
	create := func(c csrCase) {
		t.Helper()
		req, _ := csrRequestPEM(t, c.cn, c.orgs, c.dns)
		o := &certv1.CertificateSigningRequest{ObjectMeta: metav1.ObjectMeta{Name: prefix + c.name},
			Spec: certv1.CertificateSigningRequestSpec{Request: req, SignerName: c.signer, Usages: c.usages}}
		if c.exp > 0 {
			o.Spec.ExpirationSeconds = &c.exp
		}
		o, err := csrs.Create(ctx, o, metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		t.Cleanup(func() { _ = csrs.Delete(context.Background(), o.Name, metav1.DeleteOptions{}) })
		if c.approve {
			approveCSR(t, o.Name)
		}
	}
	client := []certv1.KeyUsage{certv1.UsageDigitalSignature, certv1.UsageKeyEncipherment, certv1.UsageClientAuth}
	serving := []certv1.KeyUsage{certv1.UsageDigitalSignature, certv1.UsageKeyEncipherment, certv1.UsageServerAuth}
	cases := []csrCase{
		{"client", certv1.KubeAPIServerClientSignerName, "alice", []string{"devs", "ops"}, nil, client, 0, true},
		{"client-1h", certv1.KubeAPIServerClientSignerName, "bob", nil, nil, []certv1.KeyUsage{certv1.UsageClientAuth}, 3600, true},
		{"client-10m", certv1.KubeAPIServerClientSignerName, "carol", nil, nil, []certv1.KeyUsage{certv1.UsageClientAuth}, 600, true},
		{"client-9h", certv1.KubeAPIServerClientSignerName, "dave", nil, nil, []certv1.KeyUsage{certv1.UsageClientAuth}, 9 * 3600, true},
		{"kubelet-client", certv1.KubeAPIServerClientKubeletSignerName, "system:node:n1", []string{"system:nodes"}, nil,
			[]certv1.KeyUsage{certv1.UsageDigitalSignature, certv1.UsageClientAuth}, 0, true},
		{"kubelet-serving", certv1.KubeletServingSignerName, "system:node:n1", []string{"system:nodes"}, []string{"n1.example.com"}, serving, 0, true},
		{"client-escapes", certv1.KubeAPIServerClientSignerName, `Doe, John+x\y é`, []string{"a=b", "c"}, nil, client, 0, true},
		// refused by the signers' rules
		{"serving-no-san", certv1.KubeletServingSignerName, "system:node:n1", []string{"system:nodes"}, nil, serving, 0, true},
		{"serving-bad-cn", certv1.KubeletServingSignerName, "n1", []string{"system:nodes"}, []string{"n1"}, serving, 0, true},
		{"kubelet-client-org", certv1.KubeAPIServerClientKubeletSignerName, "system:node:n1", []string{"nodes"}, nil, client, 0, true},
		{"kubelet-client-usages", certv1.KubeAPIServerClientKubeletSignerName, "system:node:n1", []string{"system:nodes"}, nil,
			[]certv1.KeyUsage{certv1.UsageClientAuth}, 0, true},
		{"client-server-auth", certv1.KubeAPIServerClientSignerName, "eve", nil, nil, serving, 0, true},
		// left alone
		{"not-approved", certv1.KubeAPIServerClientSignerName, "frank", nil, nil, client, 0, false},
		{"other-signer", "e2e.kcmd.io/other", "grace", nil, nil, client, 0, true},
	}
	for _, c := range cases {
		create(c)
	}
	p := startKcmd(t, nil, "--controllers=certificatesigningrequest-signing-controller", "--secure-port=0",
		"--use-service-account-credentials", "--leader-elect=false", "--v=2", "--cluster-signing-cert-file="+certFile, "--cluster-signing-key-file="+keyFile)
	t.Cleanup(func() { dumpKcmdLogs(t, p) })

	get := func(name string) *certv1.CertificateSigningRequest {
		var o *certv1.CertificateSigningRequest
		Eventually(t, 30*time.Second, name+" handled", func() (bool, string) {
			var err error
			if o, err = csrs.Get(ctx, prefix+name, metav1.GetOptions{}); err != nil {
				return false, err.Error()
			}
			for _, c := range o.Status.Conditions {
				if c.Type == certv1.CertificateFailed {
					return true, ""
				}
			}
			return len(o.Status.Certificate) > 0, "no certificate yet"
		})
		return o
	}
	roots := x509.NewCertPool()
	roots.AddCert(ca)
	issued := func(c csrCase, eku x509.ExtKeyUsage) *x509.Certificate {
		t.Helper()
		o := get(c.name)
		block, _ := pem.Decode(o.Status.Certificate)
		if block == nil || block.Type != "CERTIFICATE" {
			t.Fatalf("%s: status.certificate is not a PEM certificate: %q", c.name, o.Status.Certificate)
		}
		crt, err := x509.ParseCertificate(block.Bytes)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if _, err := crt.Verify(x509.VerifyOptions{Roots: roots, KeyUsages: []x509.ExtKeyUsage{eku}}); err != nil {
			t.Errorf("%s: does not chain to the CA for %v: %v", c.name, eku, err)
		}
		// the subject as x509.CreateCertificate writes the request's (one RDN per value, Go's order)
		want, _ := asn1.Marshal(pkix.Name{CommonName: c.cn, Organization: c.orgs}.ToRDNSequence())
		if string(crt.RawSubject) != string(want) {
			t.Errorf("%s: subject %v (%x), want CN %q O %v (%x)", c.name, crt.Subject, crt.RawSubject, c.cn, c.orgs, want)
		}
		if crt.IsCA || !crt.BasicConstraintsValid {
			t.Errorf("%s: basic constraints valid=%v CA=%v, want CA:FALSE", c.name, crt.BasicConstraintsValid, crt.IsCA)
		}
		if crt.SerialNumber.Sign() <= 0 || crt.SerialNumber.BitLen() > 128 {
			t.Errorf("%s: serial %v not in (0, 2^128)", c.name, crt.SerialNumber)
		}
		if string(crt.AuthorityKeyId) != string(ca.SubjectKeyId) {
			t.Errorf("%s: authority key id %x, want the CA's %x", c.name, crt.AuthorityKeyId, ca.SubjectKeyId)
		}
		if len(crt.Extensions) == 0 {
			t.Errorf("%s: no extensions", c.name)
		}
		// notBefore: 5 minutes before it was signed (within the test's run)
		if back := time.Since(crt.NotBefore); back < 5*time.Minute || back > 5*time.Minute+2*time.Minute {
			t.Errorf("%s: notBefore %v is %v ago, want 5 min before signing", c.name, crt.NotBefore, back)
		}
		return crt
	}
	var first *x509.Certificate
	for _, c := range cases[:7] {
		eku := x509.ExtKeyUsageClientAuth
		if c.signer == certv1.KubeletServingSignerName {
			eku = x509.ExtKeyUsageServerAuth
		}
		crt := issued(c, eku)
		life := crt.NotAfter.Sub(crt.NotBefore)
		switch c.name {
		case "client":
			// 8760h asked by default, capped by the CA's notAfter
			if !crt.NotAfter.Equal(caNotAfter) {
				t.Errorf("client: notAfter %v, want the CA's %v", crt.NotAfter, caNotAfter)
			}
			if crt.KeyUsage != x509.KeyUsageDigitalSignature|x509.KeyUsageKeyEncipherment ||
				fmt.Sprint(crt.ExtKeyUsage) != fmt.Sprint([]x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}) {
				t.Errorf("client: key usage %v ext %v", crt.KeyUsage, crt.ExtKeyUsage)
			}
			first = crt
		case "client-1h": // short: notAfter not backdated
			if life != time.Hour+5*time.Minute {
				t.Errorf("client-1h: lifetime %v, want 1h5m", life)
			}
			if crt.KeyUsage != 0 {
				t.Errorf("client-1h: key usage %v, want none", crt.KeyUsage)
			}
		case "client-10m":
			if life != 15*time.Minute {
				t.Errorf("client-10m: lifetime %v, want 15m", life)
			}
		case "client-9h": // 8 h or more: notAfter backdated too
			if life != 9*time.Hour {
				t.Errorf("client-9h: lifetime %v, want 9h", life)
			}
		case "kubelet-serving":
			if fmt.Sprint(crt.DNSNames) != "[n1.example.com]" {
				t.Errorf("kubelet-serving: DNS names %v", crt.DNSNames)
			}
		}
		if first != nil && crt != first && crt.SerialNumber.Cmp(first.SerialNumber) == 0 {
			t.Errorf("%s: the same serial as another certificate", c.name)
		}
	}
	for name, msg := range map[string]string{
		"serving-no-san":        "DNS or IP subjectAltName is required",
		"serving-bad-cn":        "subject common name does not begin with system:node:",
		"kubelet-client-org":    "subject organization is not system:nodes",
		"kubelet-client-usages": "usages did not match [client auth digital signature key encipherment]",
		"client-server-auth":    "invalid usage for client certificate: server auth",
	} {
		o := get(name)
		var found bool
		for _, c := range o.Status.Conditions {
			if c.Type == certv1.CertificateFailed {
				found = true
				if c.Status != corev1.ConditionTrue || c.Reason != "SignerValidationFailure" || c.Message != msg || c.LastUpdateTime.IsZero() {
					t.Errorf("%s: Failed condition %+v, want True SignerValidationFailure %q", name, c, msg)
				}
			}
		}
		if !found || len(o.Status.Certificate) > 0 {
			t.Errorf("%s: failed=%v certificate=%d bytes", name, found, len(o.Status.Certificate))
		}
	}
	// every signable CSR is done: the ones left alone got nothing
	for _, name := range []string{"not-approved", "other-signer"} {
		o, err := csrs.Get(ctx, prefix+name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(o.Status.Certificate) > 0 {
			t.Errorf("%s: signed, want left alone", name)
		}
		for _, c := range o.Status.Conditions {
			if c.Type == certv1.CertificateFailed {
				t.Errorf("%s: %+v, want left alone", name, c)
			}
		}
	}
}

// TestCSR_Approving ports upstream's sarapprove_test.go (TestHandle, TestRecognizers) to the
// real apiserver: a kubelet client CSR created by the node it names, allowed by RBAC to create
// certificatesigningrequests/selfnodeclient, gets Approved/AutoApproved with the self message;
// one created by another user allowed certificatesigningrequests/nodeclient (an admin) gets the
// nodeclient message; one whose requester has neither permission, and one of another signer,
// stay pending (kcmd logged the refused review for the first).
func TestCSR_Approving(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	suffix := strings.ToLower(fmt.Sprintf("%x", time.Now().UnixNano()&0xffffff))
	prefix := "e2e-approve-" + suffix + "-"
	selfNode, otherNode := "system:node:e2e-self-"+suffix, "system:node:e2e-nobody-"+suffix
	rbac := env.Client.RbacV1().ClusterRoleBindings()
	bind := func(name, role, user string) {
		t.Helper()
		if _, err := rbac.Create(ctx, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name},
			RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: role},
			Subjects: []rbacv1.Subject{{APIGroup: "rbac.authorization.k8s.io", Kind: "User", Name: user}}},
			metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = rbac.Delete(context.Background(), name, metav1.DeleteOptions{}) })
	}
	// both nodes may create CSRs; only the first may have its own client certificate approved
	bind(prefix+"self-create", "system:node-bootstrapper", selfNode)
	bind(prefix+"self-approve", "system:certificates.k8s.io:certificatesigningrequests:selfnodeclient", selfNode)
	bind(prefix+"nobody-create", "system:node-bootstrapper", otherNode)
	as := func(user string) kubernetes.Interface {
		cfg := rest.CopyConfig(env.Config)
		cfg.Impersonate = rest.ImpersonationConfig{UserName: user, Groups: []string{"system:authenticated"}}
		return kubernetes.NewForConfigOrDie(cfg)
	}
	kubeletUsages := []certv1.KeyUsage{certv1.UsageDigitalSignature, certv1.UsageKeyEncipherment, certv1.UsageClientAuth}
	create := func(cs kubernetes.Interface, name, signer, cn string) {
		t.Helper()
		req, _ := csrRequestPEM(t, cn, []string{"system:nodes"}, nil)
		o, err := cs.CertificatesV1().CertificateSigningRequests().Create(ctx, &certv1.CertificateSigningRequest{
			ObjectMeta: metav1.ObjectMeta{Name: prefix + name},
			Spec:       certv1.CertificateSigningRequestSpec{Request: req, SignerName: signer, Usages: kubeletUsages}},
			metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		t.Cleanup(func() {
			_ = env.Client.CertificatesV1().CertificateSigningRequests().Delete(context.Background(), o.Name, metav1.DeleteOptions{})
		})
	}
	create(as(selfNode), "self", certv1.KubeAPIServerClientKubeletSignerName, selfNode)
	create(env.Client, "admin", certv1.KubeAPIServerClientKubeletSignerName, selfNode)
	create(as(otherNode), "denied", certv1.KubeAPIServerClientKubeletSignerName, otherNode)
	create(env.Client, "other-signer", "e2e.kcmd.io/other", selfNode)

	p := startKcmd(t, nil, "--controllers=certificatesigningrequest-approving-controller", "--secure-port=0",
		"--use-service-account-credentials", "--leader-elect=false", "--v=4")
	t.Cleanup(func() { dumpKcmdLogs(t, p) })
	csrs := env.Client.CertificatesV1().CertificateSigningRequests()
	for name, msg := range map[string]string{
		"self":  "Auto approving self kubelet client certificate after SubjectAccessReview.",
		"admin": "Auto approving kubelet client certificate after SubjectAccessReview.",
	} {
		Eventually(t, 30*time.Second, name+" approved", func() (bool, string) {
			o, err := csrs.Get(ctx, prefix+name, metav1.GetOptions{})
			if err != nil {
				return false, err.Error()
			}
			for _, c := range o.Status.Conditions {
				if c.Type == certv1.CertificateApproved {
					if c.Status != corev1.ConditionTrue || c.Reason != "AutoApproved" || c.Message != msg {
						t.Fatalf("%s: condition %+v, want True AutoApproved %q", name, c, msg)
					}
					return true, ""
				}
			}
			return false, fmt.Sprintf("conditions %+v", o.Status.Conditions)
		})
	}
	Eventually(t, 30*time.Second, "the refused review logged", func() (bool, string) {
		return p.Logged(`recognized csr "` + prefix + `denied" as [selfnodeclient nodeclient] but subject access review was not approved`), ""
	})
	for _, name := range []string{"denied", "other-signer"} {
		o, err := csrs.Get(ctx, prefix+name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(o.Status.Conditions) != 0 {
			t.Errorf("%s: conditions %+v, want still pending", name, o.Status.Conditions)
		}
	}
}

// TestCSR_SigningCAReload: upstream's signer reads its CA through dynamic file content; a CA
// pair replaced on disk signs the next CSR, with no restart, and content that does not load
// keeps the pair in force. (Not parallel with TestCSR_Signing: two kcmds with signers would
// sign each other's CSRs.)
func TestCSR_SigningCAReload(t *testing.T) {
	ctx := context.Background()
	csrs := env.Client.CertificatesV1().CertificateSigningRequests()
	prefix := "e2e-careload-" + strings.ToLower(fmt.Sprintf("%x", time.Now().UnixNano()&0xffffff)) + "-"
	dir := t.TempDir()
	certFile, keyFile, caA := csrTestCA(t, dir, time.Now().Add(24*time.Hour))
	p := startKcmd(t, nil, "--controllers=certificatesigningrequest-signing-controller", "--secure-port=0",
		"--use-service-account-credentials", "--leader-elect=false", "--v=2", "--cluster-signing-kube-apiserver-client-cert-file="+certFile,
		"--cluster-signing-kube-apiserver-client-key-file="+keyFile)
	t.Cleanup(func() { dumpKcmdLogs(t, p) })

	signedBy := func(name string) *x509.Certificate {
		t.Helper()
		req, _ := csrRequestPEM(t, name, nil, nil)
		o, err := csrs.Create(ctx, &certv1.CertificateSigningRequest{ObjectMeta: metav1.ObjectMeta{Name: prefix + name},
			Spec: certv1.CertificateSigningRequestSpec{Request: req, SignerName: certv1.KubeAPIServerClientSignerName,
				Usages: []certv1.KeyUsage{certv1.UsageClientAuth}}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = csrs.Delete(context.Background(), o.Name, metav1.DeleteOptions{}) })
		approveCSR(t, o.Name)
		var crt *x509.Certificate
		Eventually(t, 30*time.Second, name+" signed", func() (bool, string) {
			o, err := csrs.Get(ctx, prefix+name, metav1.GetOptions{})
			if err != nil || len(o.Status.Certificate) == 0 {
				return false, fmt.Sprint(err)
			}
			b, _ := pem.Decode(o.Status.Certificate)
			crt, err = x509.ParseCertificate(b.Bytes)
			return err == nil, fmt.Sprint(err)
		})
		return crt
	}
	if c := signedBy("first"); c.CheckSignatureFrom(caA) != nil {
		t.Fatalf("first: not signed by the first CA")
	}
	// the files replaced (each by a rename, as a secret volume or cert-manager does)
	dir2 := t.TempDir()
	cert2, key2, caB := csrTestCA(t, dir2, time.Now().Add(24*time.Hour))
	if err := os.Rename(key2, keyFile); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(cert2, certFile); err != nil {
		t.Fatal(err)
	}
	if c := signedBy("second"); c.CheckSignatureFrom(caB) != nil {
		t.Fatalf("second: not signed by the new CA (issuer %v)", c.Issuer)
	}
	// garbage in the files: the CA in force keeps signing
	writeFile(t, certFile, []byte("not a certificate"))
	if c := signedBy("third"); c.CheckSignatureFrom(caB) != nil {
		t.Fatalf("third: not signed by the CA in force (issuer %v)", c.Issuer)
	}
	if !p.Logged("keeping the current one") {
		t.Errorf("kcmd did not log keeping its CA")
	}
	// only the kube-apiserver-client pair given: the other three loops are skipped, as kcm logs
	for _, s := range []string{"kubernetes.io/kubelet-serving", "kubernetes.io/kube-apiserver-client-kubelet", "kubernetes.io/legacy-unknown"} {
		if !p.Logged(`specified for other signers and not this one controller="` + s + `"`) {
			t.Errorf("kcmd did not log skipping %s", s)
		}
	}
	if p.Logged(`not this one controller="kubernetes.io/kube-apiserver-client"`) {
		t.Errorf("kcmd logged skipping the signer it runs")
	}
}

// TestCSR_SigningRefusesBadFiles: kcm does not start when its signer's files cannot be used
// (its controller init fails); neither does kcmd, with kcm's message (kcmd with '*' and no file,
// as the other tests start it, runs without a signer).
func TestCSR_SigningRefusesBadFiles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	certFile, keyFile, _ := csrTestCA(t, dir, time.Now().Add(time.Hour))
	_, otherKey, _ := csrTestCA(t, t.TempDir(), time.Now().Add(time.Hour))
	garbage := dir + "/garbage"
	writeFile(t, garbage, []byte("garbage"))
	bin := filepath.Join(env.KcmdBinDir, "kcmd")
	for _, c := range []struct {
		flags []string
		want  string
	}{
		{[]string{"--cluster-signing-cert-file=" + certFile, "--cluster-signing-key-file=" + keyFile,
			"--cluster-signing-kubelet-serving-cert-file=" + certFile},
			"cannot specify default and per controller certs at the same time"},
		{[]string{"--cluster-signing-cert-file=" + certFile, "--cluster-signing-key-file=" + otherKey},
			"failed to start kubernetes.io/kubelet-serving certificate controller: tls: private key does not match public key"},
		{[]string{"--cluster-signing-kube-apiserver-client-cert-file=" + garbage,
			"--cluster-signing-kube-apiserver-client-key-file=" + keyFile},
			"failed to start kubernetes.io/kube-apiserver-client certificate controller: tls: failed to find any PEM data in certificate input"},
		{[]string{"--cluster-signing-legacy-unknown-cert-file=" + certFile},
			"failed to start kubernetes.io/legacy-unknown certificate controller: missing filename for serving cert"},
		{[]string{"--cluster-signing-cert-file=" + dir + "/absent", "--cluster-signing-key-file=" + keyFile},
			"failed to start kubernetes.io/kubelet-serving certificate controller: open " + dir + "/absent: no such file or directory"},
	} {
		cmd := exec.Command(bin, append([]string{"--kubeconfig=" + env.Cluster.Kubeconfig,
			"--controllers=certificatesigningrequest-signing-controller", "--secure-port=0", "--leader-elect=false"}, c.flags...)...)
		cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
		done := make(chan struct{})
		var out []byte
		var err error
		go func() { out, err = cmd.CombinedOutput(); close(done) }()
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			_ = cmd.Process.Kill()
			<-done
			t.Errorf("%v: kcmd still running after 20 s, want it refused", c.flags)
			continue
		}
		if err == nil || !strings.Contains(string(out), "error starting certificatesigningrequest-signing-controller: "+c.want) {
			t.Errorf("%v: exit %v, output:\n%s\nwant a refusal with %q", c.flags, err, out, c.want)
		}
	}
}

// TestCSR_KubeletClientBootstrap: kubelet TLS bootstrapping end to end with kcmd's approver and
// signer together (upstream's test/integration/certificates auto-approval + signing): a node's
// own client CSR, allowed selfnodeclient by RBAC, is approved by kcmd and then signed by it, and
// the certificate authenticates as the node to a Go TLS check (client auth, chain to the CA).
// Not parallel: its signer would sign the other signing tests' CSRs.
func TestCSR_KubeletClientBootstrap(t *testing.T) {
	ctx := context.Background()
	suffix := strings.ToLower(fmt.Sprintf("%x", time.Now().UnixNano()&0xffffff))
	node := "system:node:e2e-boot-" + suffix
	name := "e2e-boot-" + suffix
	rbac := env.Client.RbacV1().ClusterRoleBindings()
	for role, bname := range map[string]string{
		"system:node-bootstrapper": name + "-create",
		"system:certificates.k8s.io:certificatesigningrequests:selfnodeclient": name + "-approve",
	} {
		if _, err := rbac.Create(ctx, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: bname},
			RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: role},
			Subjects: []rbacv1.Subject{{APIGroup: "rbac.authorization.k8s.io", Kind: "User", Name: node}}},
			metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		bname := bname
		t.Cleanup(func() { _ = rbac.Delete(context.Background(), bname, metav1.DeleteOptions{}) })
	}
	certFile, keyFile, ca := csrTestCA(t, t.TempDir(), time.Now().Add(24*time.Hour))
	p := startKcmd(t, nil, "--controllers=csrapproving,csrsigning", "--secure-port=0",
		"--use-service-account-credentials", "--leader-elect=false", "--v=2",
		"--cluster-signing-cert-file="+certFile, "--cluster-signing-key-file="+keyFile)
	t.Cleanup(func() { dumpKcmdLogs(t, p) })

	cfg := rest.CopyConfig(env.Config)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: node, Groups: []string{"system:authenticated"}}
	asNode := kubernetes.NewForConfigOrDie(cfg)
	req, _ := csrRequestPEM(t, node, []string{"system:nodes"}, nil)
	if _, err := asNode.CertificatesV1().CertificateSigningRequests().Create(ctx, &certv1.CertificateSigningRequest{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: certv1.CertificateSigningRequestSpec{Request: req, SignerName: certv1.KubeAPIServerClientKubeletSignerName,
			Usages: []certv1.KeyUsage{certv1.UsageDigitalSignature, certv1.UsageClientAuth}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	csrs := env.Client.CertificatesV1().CertificateSigningRequests()
	t.Cleanup(func() { _ = csrs.Delete(context.Background(), name, metav1.DeleteOptions{}) })
	var o *certv1.CertificateSigningRequest
	Eventually(t, 30*time.Second, "the node's CSR approved and signed", func() (bool, string) {
		var err error
		if o, err = csrs.Get(ctx, name, metav1.GetOptions{}); err != nil {
			return false, err.Error()
		}
		return len(o.Status.Certificate) > 0, fmt.Sprintf("conditions %+v", o.Status.Conditions)
	})
	if len(o.Status.Conditions) != 1 || o.Status.Conditions[0].Reason != "AutoApproved" ||
		o.Status.Conditions[0].Message != "Auto approving self kubelet client certificate after SubjectAccessReview." {
		t.Errorf("conditions %+v, want one AutoApproved (self)", o.Status.Conditions)
	}
	b, _ := pem.Decode(o.Status.Certificate)
	crt, err := x509.ParseCertificate(b.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AddCert(ca)
	if _, err := crt.Verify(x509.VerifyOptions{Roots: roots, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
		t.Errorf("the node's certificate does not verify as a client certificate: %v", err)
	}
	if crt.Subject.CommonName != node || fmt.Sprint(crt.Subject.Organization) != "[system:nodes]" {
		t.Errorf("subject %v", crt.Subject)
	}
	if !p.Logged("CSR " + name + " signed by kubernetes.io/kube-apiserver-client-kubelet") {
		t.Errorf("kcmd did not log signing %s", name)
	}
	if !p.Logged("CSR " + name + " approved") { // an approver of a '*' kcmd beside may be first
		t.Logf("%s was approved by another approver running beside", name)
	}
}
