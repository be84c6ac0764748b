package e2e

// kcmd's podcertificaterequest-cleaner-controller (docs/pcrcleaner.md) against the real
// cluster, with no other copy of it running: a PodCertificateRequest is deleted once it is as old
// as the threshold, not before. kcm's threshold (15 minutes) and interval (5 minutes) have no
// flag; the test-only KCMD_TEST_PCR_THRESHOLD_MS / KCMD_TEST_PCR_INTERVAL_MS shorten them to 4 s
// and 500 ms.

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/x509"
	"fmt"
	"testing"
	"time"

	certsv1 "k8s.io/api/certificates/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

func pcrCreate(t *testing.T, ns, name string) *certsv1.PodCertificateRequest {
	t.Helper()
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	stub, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{}, priv)
	if err != nil {
		t.Fatal(err)
	}
	p, err := env.Client.CertificatesV1().PodCertificateRequests(ns).Create(context.Background(), &certsv1.PodCertificateRequest{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: certsv1.PodCertificateRequestSpec{
			SignerName: "foo.com/abc", PodName: "pod-1", PodUID: "pod-uid-1",
			ServiceAccountName: "sa-1", ServiceAccountUID: "sa-uid-1", NodeName: "node-1", NodeUID: "node-uid-1",
			MaxExpirationSeconds: ptr.To[int32](86400), StubPKCS10Request: stub,
		},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating PodCertificateRequest %s: %v", name, err)
	}
	return p
}

func TestPCRCleaner_DeletesAfterThreshold(t *testing.T) {
	ctx := context.Background()
	p := startKcmd(t, []string{"KCMD_TEST_PCR_THRESHOLD_MS=4000", "KCMD_TEST_PCR_INTERVAL_MS=500"},
		"--controllers=podcertificaterequest-cleaner-controller", "--secure-port=0", "--leader-elect=false",
		"--use-service-account-credentials", "--v=2")
	t.Cleanup(func() { dumpKcmdLogs(t, p) })
	ns := Namespace(t)
	first := pcrCreate(t, ns, "first")
	time.Sleep(2 * time.Second)
	pcrCreate(t, ns, "second")
	pcrs := env.Client.CertificatesV1().PodCertificateRequests(ns)

	// the first goes about 4 s after its creation, while the second (2 s younger) stays
	var firstGone time.Time
	Eventually(t, 30*time.Second, "the first request deleted", func() (bool, string) {
		_, err := pcrs.Get(ctx, "first", metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			firstGone = time.Now()
			return true, ""
		}
		return false, fmt.Sprint(err)
	})
	if age := firstGone.Sub(first.CreationTimestamp.Time); age < 3*time.Second {
		t.Errorf("the first request was deleted %.1fs after its creation, before the 4 s threshold", age.Seconds())
	}
	if _, err := pcrs.Get(ctx, "second", metav1.GetOptions{}); err != nil {
		// creationTimestamp has one-second resolution: the second may only just be due
		if time.Since(first.CreationTimestamp.Time) < 5*time.Second {
			t.Errorf("the second request is gone too early: %v", err)
		}
	}
	Eventually(t, 30*time.Second, "the second request deleted", func() (bool, string) {
		_, err := pcrs.Get(ctx, "second", metav1.GetOptions{})
		return apierrors.IsNotFound(err), fmt.Sprint(err)
	})
}
