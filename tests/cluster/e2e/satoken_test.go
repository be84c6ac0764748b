package e2e

// kcmd's serviceaccount-token-controller (docs/satoken.md) against the real cluster, with no
// other copy of it running: a legacy token Secret gets its token (accepted by the apiserver as
// the ServiceAccount), ca.crt and namespace; header and claims equal what upstream's own
// generator (k8s.io/kubernetes/pkg/serviceaccount, v1.37.2) makes, and with an RSA key the
// whole token is byte for byte upstream's; a token of a missing ServiceAccount is deleted, the
// tokens of a deleted ServiceAccount go, a deleted token leaves its ServiceAccount's .secrets;
// without --service-account-private-key-file the controller does not start (kcm's message).

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/keyutil"
	"k8s.io/kubernetes/pkg/serviceaccount"
)

func stStart(t *testing.T, keyFile string) *kcmdProc {
	t.Helper()
	p := startKcmd(t, nil, "--controllers=serviceaccount-token-controller", "--secure-port=0",
		"--leader-elect=false", "--service-account-private-key-file="+keyFile,
		"--root-ca-file="+env.Cluster.CAFile, "--concurrent-serviceaccount-token-syncs=2", "--v=4")
	t.Cleanup(func() { dumpKcmdLogs(t, p) })
	return p
}

func stTokenSecret(t *testing.T, ns, name, sa string) *corev1.Secret {
	t.Helper()
	s, err := env.Client.CoreV1().Secrets(ns).Create(context.Background(), &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: map[string]string{corev1.ServiceAccountNameKey: sa}},
		Type:       corev1.SecretTypeServiceAccountToken,
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating secret %s: %v", name, err)
	}
	return s
}

func stWaitToken(t *testing.T, ns, name string) *corev1.Secret {
	t.Helper()
	var s *corev1.Secret
	Eventually(t, 30*time.Second, "token of "+ns+"/"+name, func() (bool, string) {
		var err error
		s, err = env.Client.CoreV1().Secrets(ns).Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		return len(s.Data[corev1.ServiceAccountTokenKey]) > 0, fmt.Sprintf("data keys %d", len(s.Data))
	})
	return s
}

// upstreamToken is what kcm's generator makes for sa and secret with key.
func upstreamToken(t *testing.T, key interface{}, sa *corev1.ServiceAccount, secret *corev1.Secret) string {
	t.Helper()
	g, err := serviceaccount.JWTTokenGenerator(serviceaccount.LegacyIssuer, key)
	if err != nil {
		t.Fatal(err)
	}
	c, pc := serviceaccount.LegacyClaims(*sa, *secret)
	tok, err := g.GenerateToken(context.Background(), c, pc)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

func TestServiceAccountToken_Controller(t *testing.T) {
	ctx := context.Background()
	cs := env.Client.CoreV1()
	keyFile := filepath.Join(env.Cluster.Dir, "pki", "sa.key")
	ca, err := os.ReadFile(env.Cluster.CAFile)
	if err != nil {
		t.Fatal(err)
	}
	p := stStart(t, keyFile)
	ns := Namespace(t)
	sa, err := cs.ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "tok"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}

	// populated: token, ca.crt, namespace, both annotations
	stTokenSecret(t, ns, "tok-secret", "tok")
	s := stWaitToken(t, ns, "tok-secret")
	if string(s.Data[corev1.ServiceAccountRootCAKey]) != string(ca) {
		t.Errorf("ca.crt is not --root-ca-file's content")
	}
	if string(s.Data[corev1.ServiceAccountNamespaceKey]) != ns {
		t.Errorf("namespace data %q, want %q", s.Data[corev1.ServiceAccountNamespaceKey], ns)
	}
	if s.Annotations[corev1.ServiceAccountUIDKey] != string(sa.UID) {
		t.Errorf("uid annotation %q, want %q", s.Annotations[corev1.ServiceAccountUIDKey], sa.UID)
	}
	// the same header and claims as upstream's generator (ECDSA signatures differ by design)
	key, err := keyutil.PrivateKeyFromFile(keyFile)
	if err != nil {
		t.Fatal(err)
	}
	got := string(s.Data[corev1.ServiceAccountTokenKey])
	want := upstreamToken(t, key, sa, s)
	if g, w := got[:strings.LastIndex(got, ".")], want[:strings.LastIndex(want, ".")]; g != w {
		t.Errorf("token header and claims\n got %s\nwant %s", g, w)
	}
	// the apiserver takes it as the ServiceAccount
	cfg := rest.CopyConfig(env.Config)
	cfg.BearerToken, cfg.CertData, cfg.KeyData, cfg.CertFile, cfg.KeyFile = got, nil, nil, "", ""
	review, err := kubernetes.NewForConfigOrDie(cfg).AuthenticationV1().SelfSubjectReviews().Create(ctx,
		&authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("authenticating with the token: %v", err)
	}
	if u := review.Status.UserInfo.Username; u != "system:serviceaccount:"+ns+":tok" {
		t.Errorf("authenticated as %q", u)
	}

	// a token Secret of a ServiceAccount that does not exist is deleted
	stTokenSecret(t, ns, "orphan-secret", "nobody")
	Eventually(t, 30*time.Second, "the orphan token deleted", func() (bool, string) {
		_, err := cs.Secrets(ns).Get(ctx, "orphan-secret", metav1.GetOptions{})
		return apierrors.IsNotFound(err), fmt.Sprint(err)
	})

	// a deleted token leaves the ServiceAccount's .secrets (the other reference stays)
	stTokenSecret(t, ns, "ref-secret", "tok")
	stWaitToken(t, ns, "ref-secret")
	cur, err := cs.ServiceAccounts(ns).Get(ctx, "tok", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cur.Secrets = []corev1.ObjectReference{{Name: "keep"}, {Name: "ref-secret"}}
	if _, err := cs.ServiceAccounts(ns).Update(ctx, cur, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := cs.Secrets(ns).Delete(ctx, "ref-secret", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	Eventually(t, 30*time.Second, "the reference removed", func() (bool, string) {
		cur, err := cs.ServiceAccounts(ns).Get(ctx, "tok", metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		return len(cur.Secrets) == 1 && cur.Secrets[0].Name == "keep", fmt.Sprint(cur.Secrets)
	})

	// the ServiceAccount deleted: its tokens go
	if err := cs.ServiceAccounts(ns).Delete(ctx, "tok", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	Eventually(t, 30*time.Second, "the deleted account's token deleted", func() (bool, string) {
		_, err := cs.Secrets(ns).Get(ctx, "tok-secret", metav1.GetOptions{})
		return apierrors.IsNotFound(err), fmt.Sprint(err)
	})
	_ = p.cmd.Process.Kill()
	<-p.done

	// an RSA key: the token is byte for byte upstream's (RS256 is deterministic)
	rk, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	rsaFile := filepath.Join(t.TempDir(), "rsa.key")
	if err := os.WriteFile(rsaFile, pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(rk)}), 0o600); err != nil {
		t.Fatal(err)
	}
	stStart(t, rsaFile)
	sa2, err := cs.ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "rsa"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	stTokenSecret(t, ns, "rsa-secret", "rsa")
	s2 := stWaitToken(t, ns, "rsa-secret")
	if got, want := string(s2.Data[corev1.ServiceAccountTokenKey]), upstreamToken(t, rk, sa2, s2); got != want {
		t.Errorf("RSA token\n got %s\nwant %s", got, want)
	}
}

// TestServiceAccountToken_NoKey: without --service-account-private-key-file kcm leaves the
// controller off ("Controller is disabled because there is no private key"); a bad key file
// stops kcm at start ("error reading key for service account token controller").
func TestServiceAccountToken_NoKey(t *testing.T) {
	p := startKcmd(t, nil, "--controllers=serviceaccount-token-controller,serviceaccount-controller",
		"--secure-port=0", "--leader-elect=false", "--v=2")
	t.Cleanup(func() { dumpKcmdLogs(t, p) })
	Eventually(t, 20*time.Second, "the disabled message", func() (bool, string) {
		return p.Logged("Controller is disabled because there is no private key"), "not logged yet"
	})
	bad := filepath.Join(t.TempDir(), "bad.key")
	if err := os.WriteFile(bad, []byte("not a key"), 0o600); err != nil {
		t.Fatal(err)
	}
	q := startKcmd(t, nil, "--controllers=serviceaccount-token-controller", "--secure-port=0",
		"--leader-elect=false", "--service-account-private-key-file="+bad)
	select {
	case <-q.done:
	case <-time.After(20 * time.Second):
		t.Fatal("kcmd still runs with a bad --service-account-private-key-file")
	}
	if !q.Logged("error reading key for service account token controller") {
		t.Errorf("no 'error reading key' message")
	}
}

// TestServiceAccountToken_DispatcherKilledBeforeDelete: a delete event survives the death of the
// controller's dispatcher (docs/reliability.md, "A Secret delete lost with a dispatcher"). The
// dispatcher is stopped, a token Secret listed in its ServiceAccount's .secrets is deleted
// (informerd writes the delete into the arena and the feed), and the stopped dispatcher is
// killed -9 before it reads the entry. The restarted dispatcher resumes the feed where the dead
// one stopped (shm/feed.h F8) and hands the delete to the handlers, so the reference goes. Before
// F8 it opened the feed at its end, re-added only the keys of objects the arena holds, and the
// reference stayed. The control is the same sequence with SIGCONT instead of the kill; the
// negative control runs the kill with the resume switched off (KCMD_TEST_NO_RESUME=1, a test
// seam), where the reference must stay: the oracle fires.
func TestServiceAccountToken_DispatcherKilledBeforeDelete(t *testing.T) {
	ctx := context.Background()
	cs := env.Client.CoreV1()
	key := filepath.Join(env.Cluster.Dir, "pki", "sa.key")
	run := func(t *testing.T, p *kcmdProc, ns, name string, kill, wantDropped bool) {
		dispatcher := func() int {
			for pid, comm := range childrenOf(p.cmd.Process.Pid) {
				b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
				if strings.HasPrefix(comm, "kcmd-dispatch") &&
					strings.Contains(string(b), "--controller=serviceaccount-token-controller") {
					return pid
				}
			}
			return 0
		}
		stTokenSecret(t, ns, name, "tok")
		stWaitToken(t, ns, name)
		sa, err := cs.ServiceAccounts(ns).Get(ctx, "tok", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		sa.Secrets = []corev1.ObjectReference{{Name: name}}
		if _, err := cs.ServiceAccounts(ns).Update(ctx, sa, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		var d int
		Eventually(t, 30*time.Second, "the controller's dispatcher", func() (bool, string) { d = dispatcher(); return d != 0, "" })
		time.Sleep(time.Second) // the ServiceAccount update handled
		if err := syscall.Kill(d, syscall.SIGSTOP); err != nil {
			t.Fatal(err)
		}
		if err := cs.Secrets(ns).Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		time.Sleep(2 * time.Second) // informerd has the delete in the arena and the feed
		sig := syscall.SIGCONT
		if kill {
			sig = syscall.SIGKILL
		}
		if err := syscall.Kill(d, sig); err != nil {
			t.Fatal(err)
		}
		t.Logf("dispatcher %d: %v", d, sig)
		if kill {
			Eventually(t, 30*time.Second, "a new dispatcher", func() (bool, string) {
				n := dispatcher()
				return n != 0 && n != d, fmt.Sprint(n)
			})
		}
		dropped := func() (bool, string) {
			sa, err := cs.ServiceAccounts(ns).Get(ctx, "tok", metav1.GetOptions{})
			if err != nil {
				return false, err.Error()
			}
			return len(sa.Secrets) == 0, fmt.Sprint(sa.Secrets)
		}
		if wantDropped {
			Eventually(t, 30*time.Second, fmt.Sprintf("%s dropped from .secrets (dispatcher %v)", name, sig), dropped)
			return
		}
		// negative control: the new dispatcher is up and has resynced; the reference stays
		time.Sleep(10 * time.Second)
		if ok, refs := dropped(); ok {
			t.Fatalf("negative control: with the resume off the reference went anyway (%s): the test cannot tell a lost delete", refs)
		} else {
			t.Logf("negative control: the reference stays with the resume off (%s), as expected", refs)
		}
	}
	newSA := func(t *testing.T, ns string) {
		if _, err := cs.ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "tok"}},
			metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	t.Run("resume", func(t *testing.T) {
		ns := Namespace(t)
		newSA(t, ns)
		p := stStart(t, key)
		run(t, p, ns, "gone-sigcont", false, true)
		run(t, p, ns, "gone-kill", true, true)
		if !p.Logged("not handled yet, handled now") {
			t.Errorf("the restarted dispatcher did not say it handled the dead one's delete")
		}
	})
	t.Run("negative-control-no-resume", func(t *testing.T) {
		ns := Namespace(t)
		newSA(t, ns)
		p := startKcmd(t, []string{"KCMD_TEST_NO_RESUME=1"}, "--controllers=serviceaccount-token-controller", "--secure-port=0",
			"--leader-elect=false", "--service-account-private-key-file="+key,
			"--root-ca-file="+env.Cluster.CAFile, "--concurrent-serviceaccount-token-syncs=2", "--v=4")
		t.Cleanup(func() { dumpKcmdLogs(t, p) })
		run(t, p, ns, "gone-kill", true, false)
	})
}
