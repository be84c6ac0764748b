// SPDX-License-Identifier: Apache-2.0

package e2e

// kcm's legacy-serviceaccount-token-cleaner-controller against the real apiserver, from
// upstream's TestLegacyServiceAccountTokenCleanUp and test/integration/serviceaccount's legacy
// token clean-up test: with the apiserver's tracking ConfigMap dated long ago and a clean-up
// period of 2 s, an unused token Secret its ServiceAccount lists gets the invalid-since label
// (today's date), one already invalid for longer than the period is deleted, and tokens mounted
// by a pod, used today, or not listed by their ServiceAccount are left alone.

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
)

const (
	lsaTrackingCM   = "kube-apiserver-legacy-service-account-token-tracking"
	lsaInvalidSince = "kubernetes.io/legacy-token-invalid-since"
	lsaLastUsed     = "kubernetes.io/legacy-token-last-used"
)

func TestLegacySAToken_CleanUp(t *testing.T) {
	ctx := context.Background()
	ns := Namespace(t)
	cs := env.Client.CoreV1()

	// the apiserver has tracked legacy token use since long ago
	var since string
	if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cm, err := cs.ConfigMaps("kube-system").Get(ctx, lsaTrackingCM, metav1.GetOptions{})
		if err != nil {
			return err
		}
		since = cm.Data["since"]
		cm.Data["since"] = "2020-01-01"
		_, err = cs.ConfigMaps("kube-system").Update(ctx, cm, metav1.UpdateOptions{})
		return err
	}); err != nil {
		t.Fatalf("the apiserver's tracking ConfigMap: %v", err)
	}
	t.Cleanup(func() {
		_ = retry.RetryOnConflict(retry.DefaultRetry, func() error {
			cm, err := cs.ConfigMaps("kube-system").Get(ctx, lsaTrackingCM, metav1.GetOptions{})
			if err != nil {
				return err
			}
			cm.Data["since"] = since
			_, err = cs.ConfigMaps("kube-system").Update(ctx, cm, metav1.UpdateOptions{})
			return err
		})
	})

	sa, err := cs.ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "legacy"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	today := time.Now().UTC().Format("2006-01-02")
	token := func(name string, labels map[string]string) {
		t.Helper()
		if _, err := cs.Secrets(ns).Create(ctx, &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels, Annotations: map[string]string{
				"kubernetes.io/service-account.name": sa.Name, "kubernetes.io/service-account.uid": string(sa.UID)}},
			Type: corev1.SecretTypeServiceAccountToken,
			Data: map[string][]byte{"token": []byte("x")},
		}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	token("unused", nil)
	token("invalid-long-ago", map[string]string{lsaInvalidSince: "2020-06-01"})
	token("mounted", map[string]string{lsaInvalidSince: "2020-06-01"})
	token("used-today", map[string]string{lsaLastUsed: today})
	token("unlisted", map[string]string{lsaInvalidSince: "2020-06-01"})
	if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cur, err := cs.ServiceAccounts(ns).Get(ctx, sa.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		cur.Secrets = nil
		for _, n := range []string{"unused", "invalid-long-ago", "mounted", "used-today"} {
			cur.Secrets = append(cur.Secrets, corev1.ObjectReference{Name: n})
		}
		_, err = cs.ServiceAccounts(ns).Update(ctx, cur, metav1.UpdateOptions{})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.Pods(ns).Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "uses-token"},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "fakeimage"}},
			Volumes: []corev1.Volume{{Name: "t", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "mounted"}}}}}},
		metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// every token older than the period when kcmd first looks
	time.Sleep(2500 * time.Millisecond)

	p := startKcmd(t, nil, "--controllers=legacy-serviceaccount-token-cleaner-controller", "--secure-port=0",
		"--leader-elect=false", "--legacy-service-account-token-clean-up-period=2s", "--v=2")
	t.Cleanup(func() { dumpKcmdLogs(t, p) })
	Eventually(t, 30*time.Second, "the unused token labelled invalid since today", func() (bool, string) {
		s, err := cs.Secrets(ns).Get(ctx, "unused", metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		return s.Labels[lsaInvalidSince] == today, fmt.Sprintf("labels %v", s.Labels)
	})
	Eventually(t, 30*time.Second, "the token invalid for longer than the period deleted", func() (bool, string) {
		_, err := cs.Secrets(ns).Get(ctx, "invalid-long-ago", metav1.GetOptions{})
		return apierrors.IsNotFound(err), fmt.Sprintf("%v", err)
	})
	for name, want := range map[string]string{"mounted": "2020-06-01", "used-today": "", "unlisted": "2020-06-01"} {
		s, err := cs.Secrets(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Errorf("%s: %v (it must stay)", name, err)
			continue
		}
		if s.Labels[lsaInvalidSince] != want {
			t.Errorf("%s: invalid-since %q, want %q (left alone)", name, s.Labels[lsaInvalidSince], want)
		}
	}
}
