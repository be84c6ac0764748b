// SPDX-License-Identifier: Apache-2.0

package e2e

// The sharded cache (issue 23, docs/sharding.md "Caches"): an instance that does not own range
// 0 stores in its arena only cluster-scoped objects and the objects of its own ranges.
//
// TestShard_FilteredCache: three instances as in TestShard_ChurnKillRestart; ReplicaSets and
// bare pods in 32 namespaces, one per range (so every range that moves moves pods); checks
// start once every range is held by its rendezvous owner. F is an instance that does not own
// range 0, and the victim the other one, whichever's death moves more ranges to F:
//   - F's arena (kcmd-cachedump objects) holds exactly the pods of the namespaces of its
//     ranges (the set equals a fresh client-go list of those namespaces), and no other pod;
//     its informerd counted the rest as filtered;
//   - the negative control of that oracle: the owner of range 0 holds every pod, the other
//     ranges' ones included (so the check can see a foreign pod);
//   - the other instance that does not own range 0 is killed with SIGKILL; once its ranges are
//     held again, F's arena holds exactly the pods of the namespaces of its new set (the moved
//     namespaces' pods included), and after a scale of every ReplicaSet the end state is exact;
//   - PSS of F's informerd and of the range-0 owner's, printed as `bench:` lines, with the
//     arena object counts.

import (
	"context"
	"fmt"
	"hash/fnv"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// shardInformerd is the pid of the running manager's kcmd-informerd and the path of its arena
// and metrics memfds (from its KCMD_ARENA_FD / KCMD_INFORMER_METRICS_FD).
func shardInformerd(si *shardInst) (pid int, arena, metrics string, err error) {
	for cpid, comm := range childrenOf(si.cur().cmd.Process.Pid) {
		if comm != "kcmd-informerd" {
			continue
		}
		b, e := os.ReadFile(fmt.Sprintf("/proc/%d/environ", cpid))
		if e != nil {
			return 0, "", "", e
		}
		for _, kv := range strings.Split(string(b), "\x00") {
			if v, ok := strings.CutPrefix(kv, "KCMD_ARENA_FD="); ok {
				arena = fmt.Sprintf("/proc/%d/fd/%s", cpid, v)
			}
			if v, ok := strings.CutPrefix(kv, "KCMD_INFORMER_METRICS_FD="); ok {
				metrics = fmt.Sprintf("/proc/%d/fd/%s", cpid, v)
			}
		}
		if arena == "" {
			return 0, "", "", fmt.Errorf("informerd %d has no KCMD_ARENA_FD", cpid)
		}
		return cpid, arena, metrics, nil
	}
	return 0, "", "", fmt.Errorf("no kcmd-informerd under %s's manager", si.user)
}

// shardArenaPods is the set of "ns/name" of the pods in the arena, restricted to namespaces
// with the prefix (the test's own).
func shardArenaPods(arena, prefix string) (map[string]bool, error) {
	out, err := exec.Command(filepath.Join(env.KcmdBinDir, "kcmd-cachedump"), "objects", arena, "pods").Output()
	if err != nil {
		return nil, fmt.Errorf("kcmd-cachedump objects: %v", err)
	}
	m := map[string]bool{}
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(l)
		if len(f) == 5 && f[0] == "pods" && strings.HasPrefix(f[1], prefix) {
			m[f[1]+"/"+f[2]] = true
		}
	}
	return m, nil
}

// shardCacheCheck compares an arena's pods with the apiserver's: the pods of the namespaces
// whose range is in owned must all be there, and no other pod. Returns "" when it holds.
func shardCacheCheck(ctx context.Context, arena string, nss []string, owned map[int]bool) string {
	got, err := shardArenaPods(arena, "shard-")
	if err != nil {
		return err.Error()
	}
	want := map[string]bool{}
	for _, ns := range nss {
		if !owned[shardRangeOf(ns)] {
			continue
		}
		pods, err := env.Client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return err.Error()
		}
		for _, p := range pods.Items {
			want[ns+"/"+p.Name] = true
		}
	}
	var missing, extra []string
	for k := range want {
		if !got[k] {
			missing = append(missing, k)
		}
	}
	for k := range got {
		if !want[k] {
			extra = append(extra, k+fmt.Sprintf(" (range %d)", shardRangeOf(k[:strings.IndexByte(k, '/')])))
		}
	}
	if len(missing)+len(extra) == 0 {
		if len(want) == 0 {
			return "no pod of the instance's ranges: the check would be vacuous"
		}
		return ""
	}
	sort.Strings(missing)
	sort.Strings(extra)
	first := func(s []string) string {
		if len(s) == 0 {
			return "-"
		}
		return s[0]
	}
	return fmt.Sprintf("%d of %d pods missing (first %s), %d not ours stored (first %s)",
		len(missing), len(want), first(missing), len(extra), first(extra))
}

// shardNamespacesEveryRange creates one namespace per range (names searched by their hash), so
// that every range that moves in a failover moves a namespace with it.
func shardNamespacesEveryRange(t *testing.T) []string {
	t.Helper()
	base := time.Now().UnixNano() % 100000
	var out []string
	seen := map[int]bool{}
	for i := 0; len(seen) < shardRanges; i++ {
		name := fmt.Sprintf("shard-%d-%04d", base, i)
		if r := shardRangeOf(name); seen[r] {
			continue
		} else {
			seen[r] = true
		}
		if _, err := env.Client.CoreV1().Namespaces().Create(context.Background(),
			&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
			t.Fatalf("creating namespace %s: %v", name, err)
		}
		out = append(out, name)
	}
	return out
}

// shardWeight is kube_shard_weight (kube/shard.c): fmix64(FNV-1a-64("<member>\n<range>")).
func shardWeight(member string, r int) uint64 {
	f := fnv.New64a()
	_, _ = f.Write([]byte(fmt.Sprintf("%s\n%d", member, r)))
	x := f.Sum64()
	x ^= x >> 33
	x *= 0xff51afd7ed558ccd
	x ^= x >> 33
	x *= 0xc4ceb9fe1a85ec53
	x ^= x >> 33
	return x
}

// shardSettled: every range is held by its rendezvous owner among the users' identities.
func shardSettled(h map[int]string, ids map[string]string, users []string) (bool, string) {
	bad := 0
	for r := 0; r < shardRanges; r++ {
		best := ""
		var bw uint64
		for _, u := range users {
			if w := shardWeight(ids[u], r); best == "" || w > bw || (w == bw && ids[u] < best) {
				best, bw = ids[u], w
			}
		}
		if h[r] != best {
			bad++
		}
	}
	return bad == 0, fmt.Sprintf("%d of %d ranges not (yet) held by their rendezvous owner", bad, shardRanges)
}

func shardOwnedBy(h map[int]string, id string) map[int]bool {
	o := map[int]bool{}
	for r, v := range h {
		if v == id {
			o[r] = true
		}
	}
	return o
}

func TestShard_FilteredCache(t *testing.T) {
	stopSharedRS(t)
	ctx := context.Background()
	se := startShardEnv(t)
	lease := leaseName(t)
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
	var h map[int]string
	// settled: every range held by its rendezvous owner among the three (the instances start
	// one after the other, so the first takes every range and hands most of them over)
	Eventually(t, 40*time.Second, "every range held by its rendezvous owner", func() (bool, string) {
		var err error
		if h, err = shardHolders(ctx, lease); err != nil {
			return false, err.Error()
		}
		return shardSettled(h, ids, shardUsers)
	})
	// the roles: of the two instances not owning range 0, the victim is the one whose death
	// moves the most ranges to the other (the rendezvous of kube/shard.c, recomputed here)
	var owner0 string
	var others []string
	for _, u := range shardUsers {
		if h[0] == ids[u] {
			owner0 = u
		} else {
			others = append(others, u)
		}
	}
	if owner0 == "" || len(others) != 2 {
		t.Fatalf("range 0 held by %q, not by one of the instances", h[0])
	}
	movesTo := func(victim, to string) int {
		n := 0
		for r, holder := range h {
			if holder == ids[victim] && shardWeight(ids[to], r) > shardWeight(ids[owner0], r) {
				n++
			}
		}
		return n
	}
	filt, victim := others[0], others[1]
	if movesTo(others[0], others[1]) > movesTo(others[1], others[0]) {
		filt, victim = others[1], others[0]
	}
	t.Logf("range 0: %s; filtered instance %s; to be killed %s (%d of its ranges should move to %s)",
		owner0, filt, victim, movesTo(victim, filt), filt)

	nss := shardNamespacesEveryRange(t)
	book := &shardBook{want: map[string]map[string]int32{}, bound: map[types.UID]int{}, uid: map[string]types.UID{}}
	if err := hrtParallel(len(nss), 16, func(i int) error {
		return book.create(ctx, nss[i], "rs-0", int32(1+i%3))
	}); err != nil {
		t.Fatal(err)
	}
	// bare pods, for a PSS difference above the noise
	bare := 100
	if v, err := strconv.Atoi(os.Getenv("KCMD_SHARD_CACHE_PODS")); err == nil && v >= 0 {
		bare = v
	}
	for _, ns := range nss {
		loadPods(t, ns, bare, 8)
	}
	Eventually(t, 90*time.Second, "every ReplicaSet exact", func() (bool, string) {
		p := shardVerifyAll(book)
		if len(p) > 0 {
			return false, fmt.Sprintf("%d problems, first: %s", len(p), p[0])
		}
		return true, ""
	})

	fpid, farena, fmetrics, err := shardInformerd(insts[filt])
	if err != nil {
		t.Fatal(err)
	}
	opid, oarena, _, err := shardInformerd(insts[owner0])
	if err != nil {
		t.Fatal(err)
	}
	Eventually(t, 30*time.Second, filt+"'s arena: exactly its ranges' pods", func() (bool, string) {
		h, err := shardHolders(ctx, lease)
		if err != nil {
			return false, err.Error()
		}
		p := shardCacheCheck(ctx, farena, nss, shardOwnedBy(h, ids[filt]))
		return p == "", p
	})
	// negative control: the owner of range 0 caches every pod, so a foreign pod is visible
	all := map[int]bool{}
	for i := 0; i < shardRanges; i++ {
		all[i] = true
	}
	Eventually(t, 30*time.Second, owner0+"'s arena: every pod", func() (bool, string) {
		p := shardCacheCheck(ctx, oarena, nss, all)
		return p == "", p
	})
	if p := shardCacheCheck(ctx, oarena, nss, shardOwnedBy(h, ids[owner0])); !strings.Contains(p, "not ours stored") {
		t.Errorf("negative control: the range-0 owner's arena checked against its own ranges alone passed (%q): the oracle cannot see a foreign pod", p)
	}
	if n := gceInfMetric(t, fmetrics, "pods", "filtered"); n <= 0 {
		t.Errorf("%s's informerd counted %d pods filtered, want > 0", filt, n)
	}
	fa, _ := shardArenaPods(farena, "shard-")
	oa, _ := shardArenaPods(oarena, "shard-")
	fpss, err1 := pssMB(fpid)
	opss, err2 := pssMB(opid)
	if err1 != nil || err2 != nil {
		t.Fatalf("PSS: %v %v", err1, err2)
	}
	hrtBench(t, "shard_cache_pods_filtered", float64(len(fa)), "pods")
	hrtBench(t, "shard_cache_pods_range0_owner", float64(len(oa)), "pods")
	hrtBench(t, "shard_cache_informerd_pss_filtered_mb", fpss, "MB")
	hrtBench(t, "shard_cache_informerd_pss_range0_owner_mb", opss, "MB")

	// kill -9 the other instance: some of its ranges move to F, whose cache must take them
	before := shardOwnedBy(h, ids[filt])
	insts[victim].killAll()
	Eventually(t, 6*time.Second+5*time.Second+30*time.Second, victim+"'s ranges taken over", func() (bool, string) {
		var err error
		if h, err = shardHolders(ctx, lease); err != nil {
			return false, err.Error()
		}
		return shardSettled(h, ids, []string{filt, owner0})
	})
	after := shardOwnedBy(h, ids[filt])
	var moved []string
	for _, ns := range nss {
		if r := shardRangeOf(ns); after[r] && !before[r] {
			moved = append(moved, ns)
		}
	}
	if after[0] {
		t.Fatalf("%s took range 0: its filter is off, nothing left to check", filt)
	}
	if len(moved) == 0 {
		t.Fatalf("no namespace of the test moved to %s (ranges before %v, after %v)", filt, before, after)
	}
	t.Logf("%d namespaces moved to %s", len(moved), filt)
	Eventually(t, 30*time.Second, filt+"'s arena: exactly its new ranges' pods", func() (bool, string) {
		h, err := shardHolders(ctx, lease)
		if err != nil {
			return false, err.Error()
		}
		p := shardCacheCheck(ctx, farena, nss, shardOwnedBy(h, ids[filt]))
		return p == "", p
	})
	// its controllers reconcile the moved namespaces: scale everything, end state exact
	rng := rand.New(rand.NewSource(time.Now().UnixNano()))
	if err := shardChurnRound(ctx, book, rng); err != nil {
		t.Fatal(err)
	}
	Eventually(t, 90*time.Second, "every ReplicaSet exact after the failover", func() (bool, string) {
		p := shardVerifyAll(book)
		if len(p) > 0 {
			return false, fmt.Sprintf("%d problems, first: %s", len(p), p[0])
		}
		return true, ""
	})
	Eventually(t, 30*time.Second, filt+"'s arena after the churn", func() (bool, string) {
		h, err := shardHolders(ctx, lease)
		if err != nil {
			return false, err.Error()
		}
		p := shardCacheCheck(ctx, farena, nss, shardOwnedBy(h, ids[filt]))
		return p == "", p
	})
}
