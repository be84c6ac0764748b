// SPDX-License-Identifier: Apache-2.0

package e2e

// The chaos suite's churn over the controllers chaos_test.go, chaos_workloads_test.go,
// chaos_more_test.go, chaos_infra_test.go and chaos_nodes_test.go leave out (issue 21), in the
// same TestChaos run and under the same faults. The chaos instances also run with
// --legacy-service-account-token-clean-up-period=1s (kcm refuses only a period that is not
// positive) and --feature-gates=GenericWorkload=true (chaosRestFlags), the chaos apiserver with
// GenericWorkload and scheduling.k8s.io/v1beta1 (chaosRestAPIServerFlags, as
// podgroupprotection_test.go's cluster).
//
// Made before the first kcmd starts (newChaosRest), so that the first leader's start pass of
// each cleaner sees them (each later restart, failover or worker kill runs another pass), and
// checked exactly after the settle:
//   - certificatesigningrequest-cleaner, deletions: CSRs of a signer nobody signs for
//     (e2e.kcmd.io/chaos-expired), Approved 10 minutes ago through /approval and given through
//     /status a certificate signed by the chaos signing CA that expired a day ago, must all be
//     gone (upstream's isIssuedExpired rule); CSRs made the same way with a certificate valid
//     for another day must all still be there (approved less than an hour ago, unexpired).
//     chaos_infra_test.go's CSRs check that the cleaner deletes nothing early.
//   - legacy-serviceaccount-token-cleaner: the apiserver's tracking ConfigMap
//     (kube-system/kube-apiserver-legacy-service-account-token-tracking) is dated 2020-01-01,
//     and in namespace chaos-rest token Secrets of ServiceAccount legacy (with ca.crt, namespace
//     and a token already, so that the serviceaccount-token controller leaves them alone) are
//     made: unused ones its .secrets lists, unlabelled or labelled last-used 2020-03-01, must end
//     labelled kubernetes.io/legacy-token-invalid-since with the date (UTC) of the run and still
//     there (a mark is a date: upstream deletes a token marked today on the first pass of a
//     later day, never within the run); listed ones already labelled invalid-since 2020-06-01
//     must be gone; one a pod of the namespace mounts, one labelled last-used today and one the
//     ServiceAccount does not list (each labelled invalid-since 2020-06-01 but the second) must
//     be there with their labels untouched.
//   - validatingadmissionpolicy-status-controller: ValidatingAdmissionPolicies over
//     deployments.apps/v1, with no binding (they enforce nothing), created, given another set of
//     expressions (a new generation) and deleted during the churn, of three kinds (upstream's
//     TestTypeChecking): a correct expression, a type confusion (int > string) as the second of
//     two, an undefined field; at the end each live policy has status.observedGeneration = its
//     generation and status.typeChecking.expressionWarnings exactly the kind's fieldRefs, each
//     warning holding upstream's message; a deleted one is gone. The type checker is the Go
//     child kcmd-vapcheck, which the chaos kills too.
//   - podgroup-protection-controller: PodGroups created and deleted in chaos-rest, unscheduled
//     pods (Pending: active) naming a live one created and deleted (grace 0); at the end a live
//     PodGroup carries scheduling.k8s.io/podgroup-protection (the apiserver's admission puts it,
//     the controller must not take it off), a deleted one a live pod names is kept, terminating,
//     with it, and a deleted one no live pod names is gone.
//   - storage-version-migrator-controller: up to five StorageVersionMigrations of podtemplates
//     created during the churn; once there is one, every churn operation also creates a
//     PodTemplate (tick: the migrator waits for its cache to see a write past the migration's
//     checkpoint; the settle ticks too while one is unfinished). At the end each is
//     Succeeded=True/StorageVersionMigrationSucceeded/"Migration completed" and
//     Running=False/MigrationCompleted/"Migration completed" with no Failed condition (the
//     runner ran them one at a time, through the kills).
//
// device-taint-eviction, attach-detach and the PodCertificateRequest cleaner are churned in
// chaos_last_test.go.
//
// chaosRestNegative (subtest RestNegativeControl, after the churn, with no kcmd running) makes
// one change per oracle that only a running controller would resolve and passes only if these
// oracles report each one.

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	crand "crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"math/rand"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	certv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	svmv1 "k8s.io/api/storagemigration/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

const (
	chaosRestNS     = "chaos-rest"
	chaosRestSigner = "e2e.kcmd.io/chaos-expired"
	chaosRestSA     = "legacy"
	chaosRestPeriod = time.Second
)

// chaosRestFlags are the flags the chaos instances need for these oracles.
var chaosRestFlags = []string{"--legacy-service-account-token-clean-up-period=" + chaosRestPeriod.String(),
	"--feature-gates=GenericWorkload=true"}

// chaosRestAPIServerFlags serve PodGroups (the gate and the beta API, as pgpClusterOptions).
var chaosRestAPIServerFlags = pgpClusterOptions.ExtraAPIServerFlags

// the kinds of policy: expressions, the warnings' fieldRefs, a substring of each warning
type chaosVAPKind struct {
	exprs []string
	refs  []string
	subs  []string
}

var chaosVAPKinds = []chaosVAPKind{
	{exprs: []string{"object.spec.replicas > 1"}},
	{exprs: []string{"object.spec.replicas < 100", "object.spec.replicas > '1'"},
		refs: []string{"spec.validations[1].expression"},
		subs: []string{`found no matching overload for '_>_' applied to '(int, string)'`}},
	{exprs: []string{"object.spec.nonExistingFirst > 1"},
		refs: []string{"spec.validations[0].expression"},
		subs: []string{"undefined field 'nonExistingFirst'"}},
}

type chaosRest struct {
	mu        sync.Mutex
	next      int
	csrGone   []string // approved, issued, expired: the cleaner must delete them
	csrKept   []string // approved, issued, unexpired: they must stay
	today     string   // the date (UTC) when the tokens were made
	lsaMark   []string // unused and listed: they must end marked invalid-since today
	lsaGone   []string // marked long ago: they must be deleted
	lsaKeep   map[string]string
	vaps      map[string]int // live policy -> kind
	vapGone   map[string]bool
	vapOps    int
	vapUpdate int
	pgs       map[string]*chaosPG
	pgPods    map[string]string // live pod -> the PodGroup it names
	pgPodEver int
	svms      []string // StorageVersionMigrations of podtemplates
	ticks     int
}

type chaosPG struct {
	deleted bool
}

// chaosRestCert is a certificate for a fresh key signed by the chaos signing CA, valid from nb
// to na.
func chaosRestCert(nb, na time.Time, serial int64) ([]byte, error) {
	_, keyFile, ca, err := chaosInfraCA()
	if err != nil {
		return nil, err
	}
	kb, err := os.ReadFile(keyFile)
	if err != nil {
		return nil, err
	}
	blk, _ := pem.Decode(kb)
	if blk == nil {
		return nil, fmt.Errorf("%s: no PEM block", keyFile)
	}
	caKey, err := x509.ParseECPrivateKey(blk.Bytes)
	if err != nil {
		return nil, err
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), crand.Reader)
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: "chaos-expired"},
		NotBefore: nb, NotAfter: na, KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}
	der, err := x509.CreateCertificate(crand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		return nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), nil
}

// issuedCSR makes a CSR, approves it (10 minutes ago) and gives it cert.
func (r *chaosRest) issuedCSR(ctx context.Context, name string, cert []byte) error {
	csrs := env.Client.CertificatesV1().CertificateSigningRequests()
	req, err := chaosCSRRequest(name, nil, nil)
	if err != nil {
		return err
	}
	c, err := csrs.Create(ctx, &certv1.CertificateSigningRequest{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: certv1.CertificateSigningRequestSpec{Request: req, SignerName: chaosRestSigner,
			Usages: []certv1.KeyUsage{certv1.UsageDigitalSignature, certv1.UsageClientAuth}}}, metav1.CreateOptions{})
	if err != nil {
		return err
	}
	c.Status.Conditions = []certv1.CertificateSigningRequestCondition{{Type: certv1.CertificateApproved,
		Status: corev1.ConditionTrue, Reason: "ChaosTest", Message: "approved by the chaos test",
		LastUpdateTime: metav1.NewTime(time.Now().Add(-10 * time.Minute))}}
	if c, err = csrs.UpdateApproval(ctx, name, c, metav1.UpdateOptions{}); err != nil {
		return err
	}
	c.Status.Certificate = cert
	_, err = csrs.UpdateStatus(ctx, c, metav1.UpdateOptions{})
	return err
}

func (r *chaosRest) addExpiredCSR(ctx context.Context) (string, error) {
	r.mu.Lock()
	i := r.next
	r.next++
	r.mu.Unlock()
	name := fmt.Sprintf("chaos-rest-expired-%03d", i)
	now := time.Now()
	cert, err := chaosRestCert(now.Add(-48*time.Hour), now.Add(-24*time.Hour), int64(1000+i))
	if err != nil {
		return "", err
	}
	if err := r.issuedCSR(ctx, name, cert); err != nil {
		return "", err
	}
	r.mu.Lock()
	r.csrGone = append(r.csrGone, name)
	r.mu.Unlock()
	return name, nil
}

// token makes a token Secret of ServiceAccount sa (uid) in chaos-rest with labels, complete
// (token, ca.crt of --root-ca-file, namespace) so that the serviceaccount-token controller has
// nothing to write.
func chaosRestToken(ctx context.Context, name string, sa *corev1.ServiceAccount, labels map[string]string) error {
	ca, err := os.ReadFile(env.Cluster.CAFile)
	if err != nil {
		return err
	}
	_, err = env.Client.CoreV1().Secrets(chaosRestNS).Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels, Annotations: map[string]string{
			corev1.ServiceAccountNameKey: sa.Name, corev1.ServiceAccountUIDKey: string(sa.UID)}},
		Type: corev1.SecretTypeServiceAccountToken,
		Data: map[string][]byte{"token": []byte("chaos-" + name), "ca.crt": ca, "namespace": []byte(chaosRestNS)},
	}, metav1.CreateOptions{})
	return err
}

func newChaosRest(ctx context.Context, t *testing.T) *chaosRest {
	t.Helper()
	r := &chaosRest{lsaKeep: map[string]string{}, vaps: map[string]int{}, vapGone: map[string]bool{},
		pgs: map[string]*chaosPG{}, pgPods: map[string]string{}}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("chaos_rest setup: %v", err)
		}
	}
	// CSRs: expired ones to delete, unexpired ones to keep
	now := time.Now()
	for i := 0; i < 4; i++ {
		_, err := r.addExpiredCSR(ctx)
		must(err)
		name := fmt.Sprintf("chaos-rest-valid-%03d", i)
		cert, err := chaosRestCert(now.Add(-time.Hour), now.Add(24*time.Hour), int64(2000+i))
		must(err)
		must(r.issuedCSR(ctx, name, cert))
		r.csrKept = append(r.csrKept, name)
	}

	// legacy tokens: the apiserver tracked their use since long ago
	cms := env.Client.CoreV1().ConfigMaps("kube-system")
	must(chaosRetry(func() error {
		cm, err := cms.Get(ctx, lsaTrackingCM, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if cm.Data == nil {
			cm.Data = map[string]string{}
		}
		cm.Data["since"] = "2020-01-01"
		_, err = cms.Update(ctx, cm, metav1.UpdateOptions{})
		return err
	}))
	_, err := env.Client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: chaosRestNS}},
		metav1.CreateOptions{})
	must(err)
	sa, err := env.Client.CoreV1().ServiceAccounts(chaosRestNS).Create(ctx,
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: chaosRestSA}}, metav1.CreateOptions{})
	must(err)
	r.today = time.Now().UTC().Format("2006-01-02")
	var listed []corev1.ObjectReference
	tok := func(name string, labels map[string]string, list bool) {
		must(chaosRestToken(ctx, name, sa, labels))
		if list {
			listed = append(listed, corev1.ObjectReference{Name: name})
		}
	}
	for i := 0; i < 3; i++ {
		n := fmt.Sprintf("lsa-unused-%d", i)
		tok(n, nil, true)
		r.lsaMark = append(r.lsaMark, n)
		n = fmt.Sprintf("lsa-used-long-ago-%d", i)
		tok(n, map[string]string{lsaLastUsed: "2020-03-01"}, true)
		r.lsaMark = append(r.lsaMark, n)
		n = fmt.Sprintf("lsa-invalid-long-ago-%d", i)
		tok(n, map[string]string{lsaInvalidSince: "2020-06-01"}, true)
		r.lsaGone = append(r.lsaGone, n)
	}
	tok("lsa-mounted", map[string]string{lsaInvalidSince: "2020-06-01"}, true)
	r.lsaKeep["lsa-mounted"] = "2020-06-01"
	tok("lsa-used-today", map[string]string{lsaLastUsed: r.today}, true)
	r.lsaKeep["lsa-used-today"] = ""
	tok("lsa-unlisted", map[string]string{lsaInvalidSince: "2020-06-01"}, false)
	r.lsaKeep["lsa-unlisted"] = "2020-06-01"
	sa.Secrets = listed
	_, err = env.Client.CoreV1().ServiceAccounts(chaosRestNS).Update(ctx, sa, metav1.UpdateOptions{})
	must(err)
	// a pod never scheduled (no node): the pod controllers of the chaos leave it alone
	_, err = env.Client.CoreV1().Pods(chaosRestNS).Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "mounts-token"},
		Spec: corev1.PodSpec{ServiceAccountName: chaosRestSA, AutomountServiceAccountToken: new(bool),
			Containers: []corev1.Container{{Name: "c", Image: "fakeimage"}},
			Volumes: []corev1.Volume{{Name: "t", VolumeSource: corev1.VolumeSource{
				Secret: &corev1.SecretVolumeSource{SecretName: "lsa-mounted"}}}}}},
		metav1.CreateOptions{})
	must(err)
	// every token older than the clean-up period before the first kcmd starts (creation
	// timestamps have whole seconds)
	time.Sleep(time.Until(now.Add(2 * chaosRestPeriod)))
	return r
}

// ---- policies ----------------------------------------------------------------------------------

func chaosRestVAP(name string, kind int) *admissionregistrationv1.ValidatingAdmissionPolicy {
	return vapDeployments(name, chaosVAPKinds[kind].exprs...)
}

func (r *chaosRest) step(ctx context.Context, rng *rand.Rand) error {
	r.mu.Lock()
	svms := len(r.svms)
	r.mu.Unlock()
	if svms > 0 {
		// a write to podtemplates: the migrator's cache of them moves past each checkpoint
		if err := r.tick(ctx); err != nil {
			return err
		}
	}
	switch k := rng.Intn(20); {
	case k < 9:
		return r.vapStep(ctx, rng)
	case k < 18:
		return r.pgStep(ctx, rng)
	case svms < 5:
		return r.createSVM(ctx)
	}
	return nil
}

func (r *chaosRest) vapStep(ctx context.Context, rng *rand.Rand) error {
	r.mu.Lock()
	r.vapOps++
	names := chaosKeys(r.vaps)
	r.mu.Unlock()
	pols := env.Client.AdmissionregistrationV1().ValidatingAdmissionPolicies()
	kind := rng.Intn(len(chaosVAPKinds))
	switch k := rng.Intn(10); {
	case k < 4 || len(names) < 3:
		r.mu.Lock()
		name := fmt.Sprintf("chaos-vap-%03d", r.next)
		r.next++
		r.mu.Unlock()
		if err := chaosCreate(func() error {
			_, err := pols.Create(ctx, chaosRestVAP(name, kind), metav1.CreateOptions{})
			return err
		}); err != nil {
			return err
		}
		r.mu.Lock()
		r.vaps[name] = kind
		r.mu.Unlock()
	case k < 8:
		name := names[rng.Intn(len(names))]
		if err := chaosRetry(func() error {
			p, err := pols.Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return err
			}
			p.Spec.Validations = chaosRestVAP(name, kind).Spec.Validations
			_, err = pols.Update(ctx, p, metav1.UpdateOptions{})
			return err
		}); err != nil {
			return err
		}
		r.mu.Lock()
		r.vaps[name] = kind
		r.vapUpdate++
		r.mu.Unlock()
	default:
		name := names[rng.Intn(len(names))]
		if err := chaosDelete(func() error { return pols.Delete(ctx, name, metav1.DeleteOptions{}) }); err != nil {
			return err
		}
		r.mu.Lock()
		delete(r.vaps, name)
		r.vapGone[name] = true
		r.mu.Unlock()
	}
	return nil
}

// ---- PodGroups ---------------------------------------------------------------------------------

func (r *chaosRest) createPG(ctx context.Context) (string, error) {
	r.mu.Lock()
	name := fmt.Sprintf("chaos-pg-%03d", r.next)
	r.next++
	r.mu.Unlock()
	if err := chaosCreate(func() error {
		_, err := env.Client.SchedulingV1beta1().PodGroups(chaosRestNS).Create(ctx, &schedulingv1beta1.PodGroup{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: schedulingv1beta1.PodGroupSpec{SchedulingPolicy: schedulingv1beta1.PodGroupSchedulingPolicy{
				Basic: &schedulingv1beta1.BasicSchedulingPolicy{}}}}, metav1.CreateOptions{})
		return err
	}); err != nil {
		return "", err
	}
	r.mu.Lock()
	r.pgs[name] = &chaosPG{}
	r.mu.Unlock()
	return name, nil
}

func (r *chaosRest) deletePG(ctx context.Context, name string) error {
	if err := chaosDelete(func() error {
		return env.Client.SchedulingV1beta1().PodGroups(chaosRestNS).Delete(ctx, name, metav1.DeleteOptions{})
	}); err != nil {
		return err
	}
	r.mu.Lock()
	r.pgs[name].deleted = true
	r.mu.Unlock()
	return nil
}

// createPGPod: an unscheduled pod (no scheduler runs; Pending is active) naming PodGroup pg.
func (r *chaosRest) createPGPod(ctx context.Context, pg string) (string, error) {
	r.mu.Lock()
	name := fmt.Sprintf("chaos-pgpod-%03d", r.next)
	r.next++
	r.mu.Unlock()
	if err := chaosCreate(func() error {
		_, err := env.Client.CoreV1().Pods(chaosRestNS).Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: corev1.PodSpec{ServiceAccountName: chaosRestSA, AutomountServiceAccountToken: new(bool),
				Containers:      []corev1.Container{{Name: "c", Image: "fakeimage"}},
				SchedulingGroup: &corev1.PodSchedulingGroup{PodGroupName: ptr.To(pg)}}}, metav1.CreateOptions{})
		return err
	}); err != nil {
		return "", err
	}
	r.mu.Lock()
	r.pgPods[name] = pg
	r.pgPodEver++
	r.mu.Unlock()
	return name, nil
}

func (r *chaosRest) deletePGPod(ctx context.Context, name string) error {
	if err := chaosDelete(func() error {
		return env.Client.CoreV1().Pods(chaosRestNS).Delete(ctx, name, metav1.DeleteOptions{GracePeriodSeconds: ptr.To(int64(0))})
	}); err != nil {
		return err
	}
	r.mu.Lock()
	delete(r.pgPods, name)
	r.mu.Unlock()
	return nil
}

func (r *chaosRest) pgStep(ctx context.Context, rng *rand.Rand) error {
	r.mu.Lock()
	var live []string
	for _, n := range chaosKeys(r.pgs) {
		if !r.pgs[n].deleted {
			live = append(live, n)
		}
	}
	pods := chaosKeys(r.pgPods)
	r.mu.Unlock()
	switch k := rng.Intn(10); {
	case k < 3 || len(live) < 2:
		_, err := r.createPG(ctx)
		return err
	case k < 6:
		_, err := r.createPGPod(ctx, live[rng.Intn(len(live))])
		return err
	case k < 8:
		return r.deletePG(ctx, live[rng.Intn(len(live))])
	case len(pods) > 0:
		return r.deletePGPod(ctx, pods[rng.Intn(len(pods))])
	}
	return nil
}

// ---- storage version migrations ----------------------------------------------------------------

func (r *chaosRest) createSVM(ctx context.Context) error {
	r.mu.Lock()
	name := fmt.Sprintf("chaos-svm-%03d", r.next)
	r.next++
	r.mu.Unlock()
	if err := chaosCreate(func() error {
		_, err := env.Client.StoragemigrationV1().StorageVersionMigrations().Create(ctx, &svmv1.StorageVersionMigration{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec:       svmv1.StorageVersionMigrationSpec{Resource: metav1.GroupResource{Resource: "podtemplates"}}},
			metav1.CreateOptions{})
		return err
	}); err != nil {
		return err
	}
	r.mu.Lock()
	r.svms = append(r.svms, name)
	r.mu.Unlock()
	return nil
}

// tick writes PodTemplate chaos-tick-<n> (a new one each time, so no write conflicts): the
// migrator rewrites what its cache of podtemplates holds once that cache has seen a write at or
// past the migration's checkpoint; with no writer, only the apiserver's watch bookmarks
// (about a minute apart) would move it.
func (r *chaosRest) tick(ctx context.Context) error {
	r.mu.Lock()
	n := r.ticks
	r.ticks++
	r.mu.Unlock()
	return chaosCreate(func() error {
		_, err := env.Client.CoreV1().PodTemplates(chaosRestNS).Create(ctx, &corev1.PodTemplate{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("chaos-tick-%03d", n)},
			Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
				Containers: []corev1.Container{{Name: "c", Image: "fakeimage"}}}}}, metav1.CreateOptions{})
		return err
	})
}

// ---- oracles -----------------------------------------------------------------------------------

func (r *chaosRest) problems(ctx context.Context) []string {
	r.mu.Lock()
	csrGone, csrKept := append([]string(nil), r.csrGone...), append([]string(nil), r.csrKept...)
	lsaMark, lsaGone := append([]string(nil), r.lsaMark...), append([]string(nil), r.lsaGone...)
	lsaKeep := map[string]string{}
	for k, v := range r.lsaKeep {
		lsaKeep[k] = v
	}
	vaps := map[string]int{}
	for k, v := range r.vaps {
		vaps[k] = v
	}
	vapGone := chaosKeys(r.vapGone)
	today := r.today
	r.mu.Unlock()
	var probs []string
	csrs := env.Client.CertificatesV1().CertificateSigningRequests()
	for _, n := range csrGone {
		if _, err := csrs.Get(ctx, n, metav1.GetOptions{}); err == nil {
			probs = append(probs, fmt.Sprintf("csr %s: issued a certificate that has expired, still there", n))
		} else if !apierrors.IsNotFound(err) {
			probs = append(probs, fmt.Sprintf("csr %s: %v", n, err))
		}
	}
	for _, n := range csrKept {
		if _, err := csrs.Get(ctx, n, metav1.GetOptions{}); err != nil {
			probs = append(probs, fmt.Sprintf("csr %s: approved 10 min ago with an unexpired certificate: %v", n, err))
		}
	}

	secrets := env.Client.CoreV1().Secrets(chaosRestNS)
	// the date of the run: at the start, or now if the run crossed midnight UTC (the mark is
	// the date of the pass)
	dates := map[string]bool{today: true, time.Now().UTC().Format("2006-01-02"): true}
	for _, n := range lsaMark {
		s, err := secrets.Get(ctx, n, metav1.GetOptions{})
		if err != nil {
			probs = append(probs, fmt.Sprintf("legacy token %s: unused, marked at most today: %v", n, err))
			continue
		}
		if !dates[s.Labels[lsaInvalidSince]] {
			probs = append(probs, fmt.Sprintf("legacy token %s: invalid-since %q, want %s", n, s.Labels[lsaInvalidSince], today))
		}
	}
	for _, n := range lsaGone {
		if _, err := secrets.Get(ctx, n, metav1.GetOptions{}); err == nil {
			probs = append(probs, fmt.Sprintf("legacy token %s: invalid since 2020-06-01, still there", n))
		} else if !apierrors.IsNotFound(err) {
			probs = append(probs, fmt.Sprintf("legacy token %s: %v", n, err))
		}
	}
	for _, n := range chaosKeys(lsaKeep) {
		s, err := secrets.Get(ctx, n, metav1.GetOptions{})
		if err != nil {
			probs = append(probs, fmt.Sprintf("legacy token %s: must stay: %v", n, err))
			continue
		}
		if got := s.Labels[lsaInvalidSince]; got != lsaKeep[n] {
			probs = append(probs, fmt.Sprintf("legacy token %s: invalid-since %q, want %q (left alone)", n, got, lsaKeep[n]))
		}
	}

	pols := env.Client.AdmissionregistrationV1().ValidatingAdmissionPolicies()
	for _, n := range chaosKeys(vaps) {
		want := chaosVAPKinds[vaps[n]]
		p, err := pols.Get(ctx, n, metav1.GetOptions{})
		if err != nil {
			probs = append(probs, fmt.Sprintf("vap %s: %v", n, err))
			continue
		}
		if p.Status.ObservedGeneration != p.Generation {
			probs = append(probs, fmt.Sprintf("vap %s: observedGeneration %d, generation %d", n, p.Status.ObservedGeneration, p.Generation))
			continue
		}
		var w []admissionregistrationv1.ExpressionWarning
		if p.Status.TypeChecking != nil {
			w = p.Status.TypeChecking.ExpressionWarnings
		}
		if len(w) != len(want.refs) {
			probs = append(probs, fmt.Sprintf("vap %s: %d warnings, want %d: %+v", n, len(w), len(want.refs), w))
			continue
		}
		for i := range w {
			if w[i].FieldRef != want.refs[i] || !strings.Contains(w[i].Warning, want.subs[i]) {
				probs = append(probs, fmt.Sprintf("vap %s: warning %d %s %q, want %s %q", n, i, w[i].FieldRef, w[i].Warning,
					want.refs[i], want.subs[i]))
			}
		}
	}
	for _, n := range vapGone {
		if _, err := pols.Get(ctx, n, metav1.GetOptions{}); err == nil {
			probs = append(probs, fmt.Sprintf("vap %s: deleted, still there", n))
		}
	}
	probs = append(probs, r.pgProblems(ctx)...)
	return append(probs, r.svmProblems(ctx)...)
}

func (r *chaosRest) pgProblems(ctx context.Context) []string {
	r.mu.Lock()
	deleted := map[string]bool{}
	for n, pg := range r.pgs {
		deleted[n] = pg.deleted
	}
	used := map[string]int{} // PodGroup -> live pods naming it (all Pending: active)
	for _, pg := range r.pgPods {
		used[pg]++
	}
	r.mu.Unlock()
	var probs []string
	for _, n := range chaosKeys(deleted) {
		pg, err := env.Client.SchedulingV1beta1().PodGroups(chaosRestNS).Get(ctx, n, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			if !deleted[n] || used[n] > 0 {
				probs = append(probs, fmt.Sprintf("podgroup %s: gone, deleted %v, named by %d live pods", n, deleted[n], used[n]))
			}
			continue
		}
		if err != nil {
			probs = append(probs, fmt.Sprintf("podgroup %s: %v", n, err))
			continue
		}
		fin := false
		for _, f := range pg.Finalizers {
			fin = fin || f == pgpFinalizer
		}
		switch {
		case !deleted[n] && (!fin || pg.DeletionTimestamp != nil):
			probs = append(probs, fmt.Sprintf("podgroup %s: live, finalizers %v, deletionTimestamp %v", n, pg.Finalizers, pg.DeletionTimestamp))
		case deleted[n] && used[n] == 0:
			probs = append(probs, fmt.Sprintf("podgroup %s: deleted, named by no live pod, still there (finalizers %v)", n, pg.Finalizers))
		case deleted[n] && (!fin || pg.DeletionTimestamp == nil):
			probs = append(probs, fmt.Sprintf("podgroup %s: deleted, named by %d live pods, finalizers %v, deletionTimestamp %v",
				n, used[n], pg.Finalizers, pg.DeletionTimestamp))
		}
	}
	return probs
}

func (r *chaosRest) svmProblems(ctx context.Context) []string {
	r.mu.Lock()
	names := append([]string(nil), r.svms...)
	r.mu.Unlock()
	var probs []string
	for _, n := range names {
		m, err := env.Client.StoragemigrationV1().StorageVersionMigrations().Get(ctx, n, metav1.GetOptions{})
		if err != nil {
			probs = append(probs, fmt.Sprintf("storageversionmigration %s: %v", n, err))
			continue
		}
		want := func(typ svmv1.MigrationConditionType, status metav1.ConditionStatus, reason, msg string) {
			c := svmCond(m, typ)
			if c == nil {
				probs = append(probs, fmt.Sprintf("storageversionmigration %s: no %s condition", n, typ))
			} else if c.Status != status || c.Reason != reason || c.Message != msg {
				probs = append(probs, fmt.Sprintf("storageversionmigration %s: %s %s/%s/%q, want %s/%s/%q", n, typ,
					c.Status, c.Reason, c.Message, status, reason, msg))
			}
		}
		want(svmv1.MigrationSucceeded, metav1.ConditionTrue, "StorageVersionMigrationSucceeded", "Migration completed")
		want(svmv1.MigrationRunning, metav1.ConditionFalse, "MigrationCompleted", "Migration completed")
		if c := svmCond(m, svmv1.MigrationFailed); c != nil {
			probs = append(probs, fmt.Sprintf("storageversionmigration %s: Failed %s/%s/%q", n, c.Status, c.Reason, c.Message))
		}
	}
	if len(probs) > 0 {
		// the writer the settle needs (tick's comment); its error shows in the next round
		if err := r.tick(ctx); err != nil {
			probs = append(probs, "podtemplate tick: "+err.Error())
		}
	}
	return probs
}

func (r *chaosRest) summary() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return fmt.Sprintf("%d expired CSRs deleted, %d unexpired kept; %d legacy tokens marked, %d deleted, %d left alone; "+
		"%d policy operations (%d updates), %d policies at the end type-checked exactly, %d deleted; "+
		"%d PodGroups ever (%d deleted), %d pods naming one ever (%d at the end); %d StorageVersionMigrations Succeeded",
		len(r.csrGone), len(r.csrKept), len(r.lsaMark), len(r.lsaGone), len(r.lsaKeep), r.vapOps, r.vapUpdate,
		len(r.vaps), len(r.vapGone), len(r.pgs), r.pgDeleted(), r.pgPodEver, len(r.pgPods), len(r.svms))
}

func (r *chaosRest) pgDeleted() int {
	n := 0
	for _, pg := range r.pgs {
		if pg.deleted {
			n++
		}
	}
	return n
}

// chaosRestNegative: with no kcmd running, one break per oracle; each must be reported.
func chaosRestNegative(t *testing.T, r *chaosRest) {
	ctx := context.Background()
	if probs := r.problems(ctx); len(probs) != 0 {
		t.Logf("before the injection (%d problems): %s", len(probs), strings.Join(probs, "; "))
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	csr, err := r.addExpiredCSR(ctx)
	must(err)
	// a kept CSR deleted, as an over-eager cleaner would
	must(env.Client.CertificatesV1().CertificateSigningRequests().Delete(ctx, r.csrKept[0], metav1.DeleteOptions{}))
	sa, err := env.Client.CoreV1().ServiceAccounts(chaosRestNS).Get(ctx, chaosRestSA, metav1.GetOptions{})
	must(err)
	must(chaosRestToken(ctx, "lsa-invalid-long-ago-neg", sa, map[string]string{lsaInvalidSince: "2020-06-01"}))
	sa.Secrets = append(sa.Secrets, corev1.ObjectReference{Name: "lsa-invalid-long-ago-neg"})
	_, err = env.Client.CoreV1().ServiceAccounts(chaosRestNS).Update(ctx, sa, metav1.UpdateOptions{})
	must(err)
	r.mu.Lock()
	r.lsaGone = append(r.lsaGone, "lsa-invalid-long-ago-neg")
	mark := r.lsaMark[0]
	r.mu.Unlock()
	// a mark taken off (a token the cleaner never marked)
	_, err = env.Client.CoreV1().Secrets(chaosRestNS).Patch(ctx, mark, "application/merge-patch+json",
		[]byte(`{"metadata":{"labels":{"`+lsaInvalidSince+`":null}}}`), metav1.PatchOptions{})
	must(err)
	vap := "chaos-vap-neg"
	_, err = env.Client.AdmissionregistrationV1().ValidatingAdmissionPolicies().Create(ctx, chaosRestVAP(vap, 1), metav1.CreateOptions{})
	must(err)
	r.mu.Lock()
	r.vaps[vap] = 1
	r.mu.Unlock()
	// a PodGroup deleted with no pod naming it: its finalizer stays with no controller
	pg, err := r.createPG(ctx)
	must(err)
	must(r.deletePG(ctx, pg))
	// a migration nobody runs
	must(r.createSVM(ctx))
	r.mu.Lock()
	svm := r.svms[len(r.svms)-1]
	r.mu.Unlock()

	all := r.problems(ctx)
	probs := strings.Join(all, "\n")
	for _, want := range []string{
		fmt.Sprintf("csr %s: issued a certificate that has expired, still there", csr),
		fmt.Sprintf("csr %s: approved 10 min ago with an unexpired certificate", r.csrKept[0]),
		"legacy token lsa-invalid-long-ago-neg: invalid since 2020-06-01, still there",
		fmt.Sprintf("legacy token %s: invalid-since \"\", want", mark),
		fmt.Sprintf("vap %s: observedGeneration 0, generation 1", vap),
		fmt.Sprintf("podgroup %s: deleted, named by no live pod, still there (finalizers [%s])", pg, pgpFinalizer),
		fmt.Sprintf("storageversionmigration %s: no Succeeded condition", svm),
	} {
		if !strings.Contains(probs, want) {
			t.Errorf("negative control: an injected break went unreported: want a problem %q, got:\n%s", want, probs)
		}
	}
	if !t.Failed() {
		t.Logf("negative control: the oracles reported every injected break (%d problems):\n%s", len(all), probs)
	}
}
