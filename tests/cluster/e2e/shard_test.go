// SPDX-License-Identifier: Apache-2.0

package e2e

// Sharding, first slice (issue 23, docs/sharding.md): three kcmd instances (users kcmd-a,
// kcmd-b, kcmd-c, each its own identity) run with --shard-ranges=32 against a private test
// cluster with an audit log. Upstream kcm does not run there, so the ReplicaSet controller is
// kcmd's alone; only that controller is on (it is sharded by namespace).
//
// TestShard_ChurnKillRestart:
//   - every instance owns some ranges (the range Leases' holders);
//   - ReplicaSets are created and scaled across 30 namespaces (KCMD_SHARD_LONG=1: 300) while one
//     instance is killed with SIGKILL (its manager and every child); the others hold all of its
//     ranges within the lease duration + 5 s (printed as `bench: shard_failover_s`); it is
//     started again (a new identity) and gets ranges back;
//   - the end state is exact (hrtVerify in every namespace);
//   - no over-creation: the pods ever seen (a client-go watch per namespace) controlled by a
//     ReplicaSet uid do not exceed the sum of the positive steps of its spec.replicas;
//   - no write outside a term (shardAuditCheck): from the apiserver's audit log, a successful
//     write of range Lease i whose holderIdentity is set starts (or continues) the writing
//     user's term of range i, one that clears it (a release) ends it; every other write by a
//     kcmd user (create, update, patch, delete; Leases and Events aside) into namespace ns must
//     come in a term of range FNV-1a-32(ns) mod 32 held by that user.
//
// TestShard_NegativeControl: kcmd-a runs normally, kcmd-c with KCMD_TEST_SHARD_IGNORE_FENCE=1 (a
// test seam: it takes no range Lease and opens every range's fence word), so two instances
// write the same ranges; the oracle must fire.

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"math/rand"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"kcmd.local/tests/cluster/harness"
)

const shardRanges = 32

var shardUsers = []string{"kcmd-a", "kcmd-b", "kcmd-c"}

// Lease writes are logged with their request body (the holderIdentity says acquire/renew or
// release); every other write at Metadata.
const shardAuditPolicy = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: ["RequestReceived"]
rules:
- level: Request
  users: ["kcmd-a", "kcmd-b", "kcmd-c"]
  verbs: ["create", "update", "patch"]
  resources:
  - group: coordination.k8s.io
    resources: ["leases"]
- level: Metadata
  users: ["kcmd-a", "kcmd-b", "kcmd-c"]
  verbs: ["create", "update", "patch", "delete", "deletecollection"]
- level: None
`

type shardEnv struct {
	c     *harness.Cluster
	audit string
	kcfg  map[string]string
}

func startShardEnv(t *testing.T) *shardEnv {
	t.Helper()
	dir := t.TempDir()
	policy := filepath.Join(dir, "audit-policy.yaml")
	if err := os.WriteFile(policy, []byte(shardAuditPolicy), 0o600); err != nil {
		t.Fatal(err)
	}
	se := &shardEnv{audit: filepath.Join(dir, "audit.log"), kcfg: map[string]string{}}
	var ids []harness.Identity
	for _, u := range shardUsers {
		ids = append(ids, harness.Identity{Name: u, Groups: []string{"kcmd:shard"}})
	}
	c, err := harness.Start(context.Background(), harness.Options{
		BinDir: os.Getenv("KCMD_CLUSTER_BIN"), WorkDir: filepath.Join(dir, "cluster"), Identities: ids,
		ExtraAPIServerFlags: []string{"--audit-policy-file=" + policy, "--audit-log-path=" + se.audit,
			"--audit-log-format=json", "--audit-log-maxsize=0"},
	})
	if err != nil {
		t.Fatalf("starting the shard cluster: %v", err)
	}
	se.c = c
	t.Cleanup(func() { c.Stop() })
	for _, u := range shardUsers {
		path := filepath.Join(dir, "kubeconfig-"+u)
		if err := os.WriteFile(path, []byte(kubeconfigFor(c.Server, c.CAFile, u, c.Tokens[u])), 0o600); err != nil {
			t.Fatal(err)
		}
		se.kcfg[u] = path
	}
	useClusterAsAdmin(t, c, "kcmd-shard-admin", "kcmd:shard")
	return se
}

func shardFlags(lease string) []string {
	return append([]string{"--secure-port=0", "--leader-elect-resource-name=" + lease,
		"--controllers=replicaset-controller", fmt.Sprintf("--shard-ranges=%d", shardRanges),
		"--concurrent-replicaset-syncs=2", "--kube-api-qps=200", "--kube-api-burst=400"}, chaosElection...)
}

// shardInst is one kcmd instance of one user; a restart is a new process (a new identity).
type shardInst struct {
	user  string
	procs []*kcmdProc
}

func shardStart(t *testing.T, se *shardEnv, user string, extraEnv []string, lease string) *shardInst {
	t.Helper()
	si := &shardInst{user: user}
	si.launch(t, se, extraEnv, lease)
	t.Cleanup(func() {
		for _, p := range si.procs {
			_ = p.cmd.Process.Kill()
			<-p.done
		}
		if t.Failed() {
			for _, p := range si.procs {
				logs := p.Logs()
				if len(logs) > 80 {
					logs = logs[len(logs)-80:]
				}
				for _, l := range logs {
					t.Logf("%s[%d]: %s", user, p.cmd.Process.Pid, l)
				}
			}
		}
	})
	return si
}

func (si *shardInst) launch(t *testing.T, se *shardEnv, extraEnv []string, lease string) {
	t.Helper()
	p, err := chaosLaunch(se.kcfg[si.user], extraEnv, shardFlags(lease))
	if err != nil {
		t.Fatal(err)
	}
	si.procs = append(si.procs, p)
}

func (si *shardInst) cur() *kcmdProc { return si.procs[len(si.procs)-1] }

// identity is the running manager's leader-election identity, from its start-up line.
func (si *shardInst) identity() string {
	for _, l := range si.cur().Logs() {
		if i := strings.Index(l, "starting: identity "); i >= 0 {
			rest := l[i+len("starting: identity "):]
			if j := strings.IndexByte(rest, ','); j > 0 {
				return rest[:j]
			}
		}
	}
	return ""
}

// killAll sends SIGKILL to every child of the running manager, then to the manager.
func (si *shardInst) killAll() {
	p := si.cur()
	m := p.cmd.Process.Pid
	for pid := range childrenOf(m) {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
	_ = syscall.Kill(m, syscall.SIGKILL)
	<-p.done
}

func shardRangeOf(ns string) int {
	h := fnv.New32a()
	_, _ = h.Write([]byte(ns))
	return int(h.Sum32() % shardRanges)
}

// shardHolders reads every range Lease's holderIdentity ("" for a released or missing one).
func shardHolders(ctx context.Context, lease string) (map[int]string, error) {
	ls, err := env.Client.CoordinationV1().Leases("kube-system").List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	out := map[int]string{}
	prefix := lease + "-range-"
	for _, l := range ls.Items {
		if !strings.HasPrefix(l.Name, prefix) {
			continue
		}
		var i int
		if _, err := fmt.Sscanf(strings.TrimPrefix(l.Name, prefix), "%d", &i); err != nil {
			continue
		}
		h := ""
		if l.Spec.HolderIdentity != nil {
			h = *l.Spec.HolderIdentity
		}
		// a holder whose Lease expired holds nothing
		if h != "" && l.Spec.RenewTime != nil && l.Spec.LeaseDurationSeconds != nil &&
			l.Spec.RenewTime.Add(time.Duration(*l.Spec.LeaseDurationSeconds)*time.Second).Before(time.Now()) {
			h = ""
		}
		out[i] = h
	}
	return out, nil
}

func shardCountBy(h map[int]string, id string) int {
	n := 0
	for _, v := range h {
		if v == id {
			n++
		}
	}
	return n
}

// ---- the audit oracle: no write into a range outside the writer's term ------------------------

type shardAuditEvent struct {
	auditEvent
	RequestObject *struct {
		Spec struct {
			HolderIdentity *string `json:"holderIdentity"`
		} `json:"spec"`
	} `json:"requestObject"`
}

type shardAuditSummary struct {
	terms      int // range Lease holder changes between users (releases included)
	writes     int // namespaced and cluster-scoped writes checked
	violations []string
}

func shardAuditCheck(path, lease string) (shardAuditSummary, error) {
	var s shardAuditSummary
	f, err := os.Open(path)
	if err != nil {
		return s, err
	}
	defer f.Close()
	var evs []shardAuditEvent
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var e shardAuditEvent
		if json.Unmarshal(sc.Bytes(), &e) != nil || e.Stage != "ResponseComplete" || e.ObjectRef == nil {
			continue
		}
		evs = append(evs, e)
	}
	if err := sc.Err(); err != nil {
		return s, err
	}
	sort.SliceStable(evs, func(i, j int) bool { return evs[i].Received.Before(evs[j].Received) })
	holder := map[int]string{} // range -> user in its term ("" none)
	prefix := lease + "-range-"
	for _, e := range evs {
		code := 0
		if e.ResponseStatus != nil {
			code = e.ResponseStatus.Code
		}
		switch e.ObjectRef.Resource {
		case "leases":
			if !strings.HasPrefix(e.ObjectRef.Name, prefix) || code < 200 || code >= 300 ||
				(e.Verb != "create" && e.Verb != "update" && e.Verb != "patch") {
				continue
			}
			var i int
			if _, err := fmt.Sscanf(strings.TrimPrefix(e.ObjectRef.Name, prefix), "%d", &i); err != nil {
				continue
			}
			who := ""
			if e.RequestObject != nil && e.RequestObject.Spec.HolderIdentity != nil && *e.RequestObject.Spec.HolderIdentity != "" {
				who = e.User.Username
			}
			if holder[i] != who {
				s.terms++
			}
			holder[i] = who
			continue
		case "events":
			continue
		}
		if code < 200 || code >= 300 {
			continue // refused by the apiserver: nothing was written
		}
		s.writes++
		r := shardRangeOf(e.ObjectRef.Namespace)
		if e.ObjectRef.Namespace == "" {
			r = 0
		}
		if holder[r] != e.User.Username {
			s.violations = append(s.violations, fmt.Sprintf("%s %s %s/%s by %s at %s (code %d): range %d held by %q",
				e.Verb, e.ObjectRef.Resource, e.ObjectRef.Namespace, e.ObjectRef.Name, e.User.Username,
				e.Received.Format("15:04:05.000000"), code, r, holder[r]))
		}
	}
	return s, nil
}

// ---- the churn ---------------------------------------------------------------------------------

type shardBook struct {
	mu    sync.Mutex
	want  map[string]map[string]int32 // ns -> ReplicaSet -> spec.replicas
	bound map[types.UID]int           // sum of positive steps of spec.replicas per uid
	uid   map[string]types.UID        // ns/name -> uid
}

func (b *shardBook) create(ctx context.Context, ns, name string, replicas int32) error {
	var uid types.UID
	err := chaosRetry(func() error {
		rs, err := env.Client.AppsV1().ReplicaSets(ns).Create(ctx, demoReplicaSet(ns, name, replicas), metav1.CreateOptions{})
		if err == nil {
			uid = rs.UID
		}
		return err
	})
	if err != nil {
		return err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.want[ns] == nil {
		b.want[ns] = map[string]int32{}
	}
	b.want[ns][name] = replicas
	b.uid[ns+"/"+name] = uid
	b.bound[uid] = int(replicas)
	return nil
}

func (b *shardBook) scale(ctx context.Context, ns, name string, replicas int32) error {
	return chaosRetry(func() error {
		rs, err := env.Client.AppsV1().ReplicaSets(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		prev := *rs.Spec.Replicas
		rs.Spec.Replicas = &replicas
		if _, err := env.Client.AppsV1().ReplicaSets(ns).Update(ctx, rs, metav1.UpdateOptions{}); err != nil {
			return err
		}
		b.mu.Lock()
		defer b.mu.Unlock()
		if replicas > prev {
			b.bound[rs.UID] += int(replicas - prev)
		}
		b.want[ns][name] = replicas
		return nil
	})
}

func shardNamespaces(t *testing.T, n int) []string {
	t.Helper()
	var out []string
	base := time.Now().UnixNano() % 100000
	for i := 0; i < n; i++ {
		name := fmt.Sprintf("shard-%d-%03d", base, i)
		if _, err := env.Client.CoreV1().Namespaces().Create(context.Background(),
			&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
			t.Fatalf("creating namespace %s: %v", name, err)
		}
		out = append(out, name)
	}
	return out
}

// shardChurnRound scales every ReplicaSet of the book to a random size in [1, 5].
func shardChurnRound(ctx context.Context, b *shardBook, rng *rand.Rand) error {
	b.mu.Lock()
	type rs struct{ ns, name string }
	var all []rs
	for ns, m := range b.want {
		for name := range m {
			all = append(all, rs{ns, name})
		}
	}
	sizes := make([]int32, len(all))
	for i := range sizes {
		sizes[i] = int32(1 + rng.Intn(5))
	}
	b.mu.Unlock()
	return hrtParallel(len(all), 16, func(i int) error { return b.scale(ctx, all[i].ns, all[i].name, sizes[i]) })
}

func shardVerifyAll(b *shardBook) []string {
	b.mu.Lock()
	want := map[string]map[string]int32{}
	for ns, m := range b.want {
		want[ns] = map[string]int32{}
		for k, v := range m {
			want[ns][k] = v
		}
	}
	b.mu.Unlock()
	var probs []string
	for ns, m := range want {
		p, _ := hrtVerify(ns, m, false)
		for _, s := range p {
			probs = append(probs, ns+": "+s)
		}
	}
	sort.Strings(probs)
	return probs
}

func TestShard_ChurnKillRestart(t *testing.T) {
	stopSharedRS(t) // CPU for the private cluster
	ctx := context.Background()
	se := startShardEnv(t)
	lease := leaseName(t)
	nns := 30
	if os.Getenv("KCMD_SHARD_LONG") == "1" {
		nns = 300
	}
	insts := map[string]*shardInst{}
	for _, u := range shardUsers {
		insts[u] = shardStart(t, se, u, nil, lease)
	}
	ids := map[string]string{}
	Eventually(t, 30*time.Second, "every instance to start", func() (bool, string) {
		for _, u := range shardUsers {
			if ids[u] = insts[u].identity(); ids[u] == "" {
				return false, u + " has not logged its identity"
			}
		}
		return true, ""
	})
	// every instance owns some ranges, and every range is owned
	Eventually(t, 40*time.Second, "every range owned, every instance owning some", func() (bool, string) {
		h, err := shardHolders(ctx, lease)
		if err != nil {
			return false, err.Error()
		}
		owned := 0
		for i := 0; i < shardRanges; i++ {
			if h[i] != "" {
				owned++
			}
		}
		var per []string
		ok := owned == shardRanges
		for _, u := range shardUsers {
			n := shardCountBy(h, ids[u])
			per = append(per, fmt.Sprintf("%s:%d", u, n))
			ok = ok && n > 0
		}
		return ok, fmt.Sprintf("%d/%d ranges owned (%s)", owned, shardRanges, strings.Join(per, " "))
	})

	nss := shardNamespaces(t, nns)
	trs := map[string]*hrtTracker{}
	for _, ns := range nss {
		trs[ns] = hrtStartTracker(t, ns)
	}
	book := &shardBook{want: map[string]map[string]int32{}, bound: map[types.UID]int{}, uid: map[string]types.UID{}}
	if err := hrtParallel(len(nss)*2, 16, func(i int) error {
		return book.create(ctx, nss[i/2], fmt.Sprintf("rs-%d", i%2), int32(1+i%4))
	}); err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewSource(time.Now().UnixNano()))
	if err := shardChurnRound(ctx, book, rng); err != nil {
		t.Fatal(err)
	}

	// kill -9 of kcmd-b (every process), while the churn goes on
	victim := insts["kcmd-b"]
	before, err := shardHolders(ctx, lease)
	if err != nil {
		t.Fatal(err)
	}
	lost := shardCountBy(before, ids["kcmd-b"])
	victim.killAll()
	killed := time.Now()
	if err := shardChurnRound(ctx, book, rng); err != nil {
		t.Fatal(err)
	}
	Eventually(t, 6*time.Second+5*time.Second+30*time.Second, "kcmd-b's ranges taken over", func() (bool, string) {
		h, err := shardHolders(ctx, lease)
		if err != nil {
			return false, err.Error()
		}
		owned := 0
		for i := 0; i < shardRanges; i++ {
			if h[i] == ids["kcmd-a"] || h[i] == ids["kcmd-c"] {
				owned++
			}
		}
		return owned == shardRanges, fmt.Sprintf("%d/%d ranges held by kcmd-a and kcmd-c", owned, shardRanges)
	})
	failover := time.Since(killed)
	hrtBench(t, "shard_failover_s", failover.Seconds(), "s")
	if failover > 6*time.Second+5*time.Second {
		t.Errorf("the %d ranges of the killed instance were held again after %v, want at most the lease duration (6s) + 5s",
			lost, failover.Round(100*time.Millisecond))
	}

	// restart it: a new identity, which gets ranges back
	victim.launch(t, se, nil, lease)
	Eventually(t, 30*time.Second, "the restarted kcmd-b's identity", func() (bool, string) {
		ids["kcmd-b"] = victim.identity()
		return ids["kcmd-b"] != "", ""
	})
	if err := shardChurnRound(ctx, book, rng); err != nil {
		t.Fatal(err)
	}
	Eventually(t, 60*time.Second, "the restarted kcmd-b to own ranges, every range owned", func() (bool, string) {
		h, err := shardHolders(ctx, lease)
		if err != nil {
			return false, err.Error()
		}
		owned := 0
		for i := 0; i < shardRanges; i++ {
			if h[i] != "" {
				owned++
			}
		}
		n := shardCountBy(h, ids["kcmd-b"])
		return n > 0 && owned == shardRanges, fmt.Sprintf("kcmd-b holds %d, %d/%d owned", n, owned, shardRanges)
	})
	if err := shardChurnRound(ctx, book, rng); err != nil {
		t.Fatal(err)
	}

	// end state exact
	Eventually(t, 90*time.Second, "every ReplicaSet exact", func() (bool, string) {
		p := shardVerifyAll(book)
		if len(p) > 0 {
			return false, fmt.Sprintf("%d problems, first: %s", len(p), p[0])
		}
		return true, ""
	})
	// kcmctl status: the members, the ranges this instance owns, each range Lease's holder
	ida := ids["kcmd-a"]
	Eventually(t, 15*time.Second, "kcmctl status to show kcmd-a's ranges", func() (bool, string) {
		h, err := shardHolders(ctx, lease)
		if err != nil {
			return false, err.Error()
		}
		out := hmgKcmctlPid(t, insts["kcmd-a"].cur().cmd.Process.Pid, "status")
		own := shardCountBy(h, ida)
		ok := strings.Contains(out, fmt.Sprintf("sharding:  %d ranges (--shard-ranges), this manager owns %d:", shardRanges, own)) &&
			strings.Contains(out, "members:   3 live") && strings.Count(out, "(owned here)") == own &&
			strings.Contains(out, "member:    "+ida) && strings.Contains(out, ids["kcmd-b"]) && strings.Contains(out, ids["kcmd-c"])
		return ok, out
	})
	// SIGTERM: kcmd-a releases its range Leases, then its member Lease, and exits 0; the others
	// take its ranges without waiting for an expiry
	ha, err := shardHolders(ctx, lease)
	if err != nil {
		t.Fatal(err)
	}
	heldA := shardCountBy(ha, ida)
	pa := insts["kcmd-a"].cur()
	termed := time.Now()
	_ = pa.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-pa.done:
		if pa.err != nil {
			t.Errorf("kcmd-a after SIGTERM: %v", pa.err)
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("kcmd-a did not exit within 30 s of SIGTERM")
	}
	if !pa.Logged("shard: every range Lease released") {
		t.Errorf("kcmd-a exited without releasing its range Leases")
	}
	Eventually(t, 15*time.Second, "kcmd-a's ranges held by kcmd-b and kcmd-c", func() (bool, string) {
		h, err := shardHolders(ctx, lease)
		if err != nil {
			return false, err.Error()
		}
		n := shardCountBy(h, ids["kcmd-b"]) + shardCountBy(h, ids["kcmd-c"])
		return n == shardRanges, fmt.Sprintf("%d/%d", n, shardRanges)
	})
	hrtBench(t, "shard_handover_after_sigterm_s", time.Since(termed).Seconds(), "s")
	t.Logf("kcmd-a held %d ranges when it got SIGTERM", heldA)
	// no over-creation
	book.mu.Lock()
	for key, uid := range book.uid {
		ns := key[:strings.IndexByte(key, '/')]
		if got := trs[ns].Created(uid); got > book.bound[uid] {
			t.Errorf("%s: %d pods ever created, at most %d expected (over-creation)", key, got, book.bound[uid])
		}
	}
	book.mu.Unlock()
	// no write outside a term
	as, err := shardAuditCheck(se.audit, lease)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("audit: %d writes checked, %d range holder changes", as.writes, as.terms)
	if as.writes == 0 {
		t.Fatalf("the audit log shows no write by the kcmd users: the oracle checked nothing")
	}
	if len(as.violations) > 0 {
		n := len(as.violations)
		if n > 10 {
			as.violations = as.violations[:10]
		}
		t.Errorf("%d writes outside the writer's range term:\n%s", n, strings.Join(as.violations, "\n"))
	}
}

func TestShard_NegativeControl(t *testing.T) {
	stopSharedRS(t)
	ctx := context.Background()
	se := startShardEnv(t)
	lease := leaseName(t)
	a := shardStart(t, se, "kcmd-a", nil, lease)
	Eventually(t, 40*time.Second, "kcmd-a to own every range", func() (bool, string) {
		id := a.identity()
		h, err := shardHolders(ctx, lease)
		if err != nil || id == "" {
			return false, fmt.Sprint(err)
		}
		n := shardCountBy(h, id)
		return n == shardRanges, fmt.Sprintf("%d/%d", n, shardRanges)
	})
	c := shardStart(t, se, "kcmd-c", []string{"KCMD_TEST_SHARD_IGNORE_FENCE=1"}, lease)
	Eventually(t, 30*time.Second, "kcmd-c to be an active member", func() (bool, string) {
		return c.cur().Logged("became an active member"), ""
	})
	nss := shardNamespaces(t, 6)
	book := &shardBook{want: map[string]map[string]int32{}, bound: map[types.UID]int{}, uid: map[string]types.UID{}}
	if err := hrtParallel(len(nss), 6, func(i int) error { return book.create(ctx, nss[i], "rs-0", 2) }); err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewSource(time.Now().UnixNano()))
	for r := 0; r < 3; r++ {
		time.Sleep(2 * time.Second)
		if err := shardChurnRound(ctx, book, rng); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(3 * time.Second)
	as, err := shardAuditCheck(se.audit, lease)
	if err != nil {
		t.Fatal(err)
	}
	if len(as.violations) == 0 {
		t.Fatalf("negative control: an instance writing every range without its Leases ran beside their owner and the oracle caught nothing (%d writes, %d holder changes)",
			as.writes, as.terms)
	}
	t.Logf("negative control: the range-term oracle fired on %d of %d writes, first: %s", len(as.violations), as.writes, as.violations[0])
}
