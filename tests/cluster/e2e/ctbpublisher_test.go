package e2e

// kcmd's kube-apiserver-serving-clustertrustbundle-publisher-controller
// (docs/ctbpublisher.md) against the real cluster, with no other copy of it running: the root
// CA published as the one ClusterTrustBundle of signer kubernetes.io/kube-apiserver-serving,
// under upstream's name (computed here as constructBundleName does); a changed bundle is put
// back, a stale bundle of the signer deleted, another signer's bundle left alone.

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"os"
	"strings"
	"testing"
	"time"

	certsv1 "k8s.io/api/certificates/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

const ctbSigner = "kubernetes.io/kube-apiserver-serving"

func ctbName(signer string, ca []byte) string {
	sum := sha256.Sum256(ca)
	return fmt.Sprintf("%s%x", strings.ReplaceAll(signer, "/", ":")+":", sum[:12])
}

// ctbSelfSignedPEM: a fresh self-signed CA certificate, PEM.
func ctbSelfSignedPEM(t *testing.T) []byte {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "ctb-test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &k.PublicKey, k)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}

func TestCTBPublisher_PublishesRootCA(t *testing.T) {
	ctx := context.Background()
	ctbs := env.Client.CertificatesV1().ClusterTrustBundles()
	ca, err := os.ReadFile(env.Cluster.CAFile)
	if err != nil {
		t.Fatal(err)
	}
	name := ctbName(ctbSigner, ca)
	stale := strings.ReplaceAll(ctbSigner, "/", ":") + ":stale"
	other := "example.com:other:x"
	// a stale bundle of the signer (another name), and one of another signer
	for _, b := range []*certsv1.ClusterTrustBundle{
		{ObjectMeta: metav1.ObjectMeta{Name: stale}, Spec: certsv1.ClusterTrustBundleSpec{SignerName: ctbSigner, TrustBundle: string(ca)}},
		{ObjectMeta: metav1.ObjectMeta{Name: other}, Spec: certsv1.ClusterTrustBundleSpec{SignerName: "example.com/other", TrustBundle: string(ca)}},
	} {
		if _, err := ctbs.Create(ctx, b, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatalf("creating %s: %v", b.Name, err)
		}
	}
	t.Cleanup(func() {
		for _, n := range []string{name, stale, other} {
			_ = ctbs.Delete(context.Background(), n, metav1.DeleteOptions{})
		}
	})
	p := startKcmd(t, nil, "--controllers=kube-apiserver-serving-clustertrustbundle-publisher-controller",
		"--secure-port=0", "--leader-elect=false", "--use-service-account-credentials",
		"--root-ca-file="+env.Cluster.CAFile, "--v=4")
	t.Cleanup(func() { dumpKcmdLogs(t, p) })

	Eventually(t, 30*time.Second, "the bundle "+name, func() (bool, string) {
		b, err := ctbs.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		return b.Spec.SignerName == ctbSigner && b.Spec.TrustBundle == string(ca), "content differs"
	})
	Eventually(t, 30*time.Second, "the stale bundle deleted", func() (bool, string) {
		_, err := ctbs.Get(ctx, stale, metav1.GetOptions{})
		return apierrors.IsNotFound(err), fmt.Sprint(err)
	})
	if _, err := ctbs.Get(ctx, other, metav1.GetOptions{}); err != nil {
		t.Errorf("another signer's bundle: %v (it must stay)", err)
	}

	// changed by someone else: put back
	b, err := ctbs.Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	b.Spec.TrustBundle = string(ctbSelfSignedPEM(t))
	if _, err := ctbs.Update(ctx, b, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	Eventually(t, 30*time.Second, "the bundle put back", func() (bool, string) {
		b, err := ctbs.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		return b.Spec.TrustBundle == string(ca), "still changed"
	})
}
