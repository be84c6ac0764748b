// SPDX-License-Identifier: Apache-2.0

package e2e

// kcm's token-cleaner-controller and bootstrap-signer-controller (kubeadm turns them on with
// --controllers=*,bootstrapsigner,tokencleaner), from upstream's tokencleaner_test.go and
// bootstrapsigner_test.go against the real apiserver: an expired bootstrap token Secret is
// deleted, one that expires later is deleted then and not before, one without an expiration
// and a Secret of another type stay; kube-public/cluster-info is signed with every token valid
// for signing (the expected detached JWS computed here with Go's HMAC, checked against
// upstream's vectors in the unit test), re-signed when its kubeconfig changes, and the
// signature goes with the token.

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/watch"
)

// btJWS is cluster-bootstrap's ComputeDetachedSignature: HS256 over the protected header
// {"alg":"HS256","kid":id} and the content, the key zero-padded to 32 bytes, the content part
// left out.
func btJWS(content, id, secret string) string {
	enc := base64.RawURLEncoding
	header := enc.EncodeToString([]byte(`{"alg":"HS256","kid":"` + id + `"}`))
	key := []byte(secret)
	if len(key) < 32 {
		key = append(key, make([]byte, 32-len(key))...)
	}
	m := hmac.New(sha256.New, key)
	m.Write([]byte(header + "." + enc.EncodeToString([]byte(content))))
	return header + ".." + enc.EncodeToString(m.Sum(nil))
}

func btTokenSecret(id, secret string, extra map[string]string) *corev1.Secret {
	data := map[string][]byte{"token-id": []byte(id), "token-secret": []byte(secret)}
	for k, v := range extra {
		data[k] = []byte(v)
	}
	return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: "bootstrap-token-" + id},
		Type: "bootstrap.kubernetes.io/token", Data: data}
}

func btID(t *testing.T, n int) string {
	return fmt.Sprintf("e%d%04d", n, time.Now().UnixNano()%10000)
}

func TestBootstrap_TokenCleanerAndSigner(t *testing.T) {
	ctx := context.Background()
	secrets := env.Client.CoreV1().Secrets("kube-system")
	p := startKcmd(t, nil, "--controllers=bootstrapsigner,tokencleaner", "--secure-port=0",
		"--leader-elect=false", "--v=3")
	t.Cleanup(func() { dumpKcmdLogs(t, p) })
	mk := func(s *corev1.Secret) {
		t.Helper()
		if _, err := secrets.Create(ctx, s, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = secrets.Delete(ctx, s.Name, metav1.DeleteOptions{}) })
	}

	// ---- the cleaner
	expired, later, forever := btID(t, 1), btID(t, 2), btID(t, 3)
	laterAt := time.Now().Add(5 * time.Second).UTC().Truncate(time.Second)
	w, err := secrets.Watch(ctx, metav1.ListOptions{FieldSelector: fields.OneTermEqualSelector("metadata.name", "bootstrap-token-"+later).String()})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	mk(btTokenSecret(expired, "0123456789abcdef", map[string]string{"expiration": time.Now().Add(-time.Hour).UTC().Format(time.RFC3339)}))
	mk(btTokenSecret(later, "0123456789abcdef", map[string]string{"expiration": laterAt.Format(time.RFC3339)}))
	mk(btTokenSecret(forever, "0123456789abcdef", nil))
	opaque := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: "bootstrap-token-" + btID(t, 4)},
		Data: map[string][]byte{"expiration": []byte("2000-01-01T00:00:00Z")}}
	mk(opaque)
	gone := func(name string) (bool, string) {
		_, err := secrets.Get(ctx, name, metav1.GetOptions{})
		return apierrors.IsNotFound(err), fmt.Sprintf("%v", err)
	}
	Eventually(t, 30*time.Second, "the expired token Secret deleted", func() (bool, string) { return gone("bootstrap-token-" + expired) })
	var deletedAt time.Time
	deadline := time.After(30 * time.Second)
	for deletedAt.IsZero() {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				t.Fatal("the watch of the later-expiring token ended")
			}
			if ev.Type == watch.Deleted {
				deletedAt = time.Now()
			}
		case <-deadline:
			t.Fatalf("the token expiring at %s was not deleted", laterAt.Format(time.RFC3339))
		}
	}
	if deletedAt.Before(laterAt) {
		t.Errorf("the token expiring at %s was deleted early, at %s", laterAt.Format(time.RFC3339Nano), deletedAt.Format(time.RFC3339Nano))
	}
	t.Logf("the token expiring at %s deleted %.2f s after", laterAt.Format("15:04:05"), deletedAt.Sub(laterAt).Seconds())
	for _, name := range []string{"bootstrap-token-" + forever, opaque.Name} {
		if ok, _ := gone(name); ok {
			t.Errorf("%s was deleted (no expiration, or not a bootstrap token)", name)
		}
	}

	// ---- the signer
	cms := env.Client.CoreV1().ConfigMaps("kube-public")
	payload := fmt.Sprintf("apiVersion: v1\nkind: Config\nclusters: [] # %d\n", time.Now().UnixNano())
	if _, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cluster-info"},
		Data: map[string]string{"kubeconfig": payload}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cms.Delete(ctx, "cluster-info", metav1.DeleteOptions{}) })
	signer, noUsage := btID(t, 5), btID(t, 6)
	mk(btTokenSecret(signer, "s3cr3t0123456789", map[string]string{"usage-bootstrap-signing": "true"}))
	mk(btTokenSecret(noUsage, "s3cr3t0123456789", map[string]string{"usage-bootstrap-signing": "false"}))
	sigs := func() map[string]string {
		cm, err := cms.Get(ctx, "cluster-info", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]string{}
		for k, v := range cm.Data {
			if len(k) > len("jws-kubeconfig-") && k[:len("jws-kubeconfig-")] == "jws-kubeconfig-" {
				out[k[len("jws-kubeconfig-"):]] = v
			}
		}
		return out
	}
	want := btJWS(payload, signer, "s3cr3t0123456789")
	Eventually(t, 30*time.Second, "cluster-info signed by the signing token", func() (bool, string) {
		s := sigs()
		return len(s) == 1 && s[signer] == want, fmt.Sprintf("%v, want %s: %s", s, signer, want)
	})
	// a new kubeconfig is signed again
	cm, err := cms.Get(ctx, "cluster-info", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	payload += "# changed\n"
	cm.Data["kubeconfig"] = payload
	if _, err := cms.Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	want = btJWS(payload, signer, "s3cr3t0123456789")
	Eventually(t, 30*time.Second, "cluster-info signed again after its kubeconfig changed", func() (bool, string) {
		s := sigs()
		return len(s) == 1 && s[signer] == want, fmt.Sprintf("%v", s)
	})
	// the signature goes with its token
	if err := secrets.Delete(ctx, "bootstrap-token-"+signer, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	Eventually(t, 30*time.Second, "the deleted token's signature removed", func() (bool, string) {
		s := sigs()
		return len(s) == 0, fmt.Sprintf("%v", s)
	})
}
