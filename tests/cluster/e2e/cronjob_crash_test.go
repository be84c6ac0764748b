package e2e

// The CronJob controller killed around a scheduled time: informerd is killed (-9) just before
// the minute boundary, so the controller is blind across it, and the cronjob workers are killed
// (-9) between the Job's create and the status write that records it (a test seam,
// KCMD_TEST_CJ_CREATE_PAUSE_MS, holds the worker there). The replayed sync must find the Job by
// its deterministic name (create -> AlreadyExists -> adopt it into status.active): exactly one
// Job per scheduled time, none missed, status.lastScheduleTime the last scheduled time.
//
// The negative control runs in the same kcmd, at the same boundary, in a second namespace named
// by KCMD_TEST_CJ_UNGUARDED_NS: there each create gets a unique name (generateName), so the
// replay after the kill makes a second Job for the same time, and the same oracle must report
// it. It runs in shard C (it waits for a minute boundary: 60 to 75 s).

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
)

// cjcJobs records every Job ever added in a namespace (a watch started before the CronJob).
type cjcJobs struct {
	mu   sync.Mutex
	jobs map[string]batchv1.Job // by uid
}

func cjcTrack(t *testing.T, ns string) *cjcJobs {
	t.Helper()
	tr := &cjcJobs{jobs: map[string]batchv1.Job{}}
	w, err := env.Client.BatchV1().Jobs(ns).Watch(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Stop)
	go func() {
		for ev := range w.ResultChan() {
			if j, ok := ev.Object.(*batchv1.Job); ok && ev.Type == watch.Added {
				tr.mu.Lock()
				tr.jobs[string(j.UID)] = *j
				tr.mu.Unlock()
			}
		}
	}()
	return tr
}

func (tr *cjcJobs) all() []batchv1.Job {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	out := make([]batchv1.Job, 0, len(tr.jobs))
	for _, j := range tr.jobs {
		out = append(out, j)
	}
	return out
}

// cjcOracle checks the Jobs ever created for a CronJob "* * * * *" created at `created` and
// its status, at `now`: one Job per minute boundary in (created, now], none twice, none
// missing (a boundary less than `grace` ago may still be on its way), lastScheduleTime the
// newest boundary that has its Job, status.active exactly the Jobs. Returns the problems found.
func cjcOracle(created, now time.Time, grace time.Duration, jobs []batchv1.Job, cj *batchv1.CronJob) []string {
	var bad []string
	per := map[int64][]string{} // by Unix second (time.Time keys would compare locations)
	for _, j := range jobs {
		ts, err := time.Parse(time.RFC3339, j.Annotations[batchv1.CronJobScheduledTimestampAnnotation])
		if err != nil {
			bad = append(bad, fmt.Sprintf("job %s: scheduled-timestamp %q", j.Name, j.Annotations[batchv1.CronJobScheduledTimestampAnnotation]))
			continue
		}
		per[ts.Unix()] = append(per[ts.Unix()], j.Name)
	}
	var last time.Time
	for m := created.Truncate(time.Minute).Add(time.Minute); !m.After(now); m = m.Add(time.Minute) {
		names := per[m.Unix()]
		sort.Strings(names)
		switch {
		case len(names) > 1:
			bad = append(bad, fmt.Sprintf("duplicate: %d jobs for %s: %v", len(names), m.UTC().Format(time.RFC3339), names))
		case len(names) == 0 && now.Sub(m) >= grace:
			bad = append(bad, "missed: no job for "+m.UTC().Format(time.RFC3339))
		}
		if len(names) > 0 {
			last = m
		}
		delete(per, m.Unix())
	}
	for m, names := range per {
		bad = append(bad, fmt.Sprintf("jobs %v for %s, not a scheduled time of the test", names, time.Unix(m, 0).UTC().Format(time.RFC3339)))
	}
	if last.IsZero() {
		return append(bad, "no job at all")
	}
	if lst := cj.Status.LastScheduleTime; lst == nil || !lst.Time.Equal(last) {
		bad = append(bad, fmt.Sprintf("lastScheduleTime %v, want %s", lst, last.UTC().Format(time.RFC3339)))
	}
	var active, want []string
	for _, a := range cj.Status.Active {
		active = append(active, a.Name)
	}
	for _, j := range jobs {
		want = append(want, j.Name)
	}
	sort.Strings(active)
	sort.Strings(want)
	if strings.Join(active, ",") != strings.Join(want, ",") {
		bad = append(bad, fmt.Sprintf("status.active %v, want %v", active, want))
	}
	return bad
}

// stopSharedProc stops a kcmd started by startKcmdShared before the test binary ends.
func stopSharedProc(p *kcmdProc) {
	sharedMu.Lock()
	for i, q := range sharedProcs {
		if q == p {
			sharedProcs = append(sharedProcs[:i], sharedProcs[i+1:]...)
			break
		}
	}
	sharedMu.Unlock()
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(10 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.done
	}
}

// cjcKillWorkers kills every cronjob-controller worker of the kcmd manager mgr.
func cjcKillWorkers(t *testing.T, mgr int) int {
	return gcxKillChildren(t, mgr, "kcmd-worker", "cronjob-controller")
}

func TestCronJob_CrashDuringSchedule(t *testing.T) {
	// no other kcmd's CronJob controller may act on these namespaces (TestCronJob_Scenarios's
	// shared one normally starts after this test; stop it if it already runs)
	if cjKcmd != nil {
		stopSharedProc(cjKcmd)
		cjKcmd, cjKcmdOnce = nil, sync.Once{}
	}
	ns, bad := Namespace(t), Namespace(t)
	p := startKcmd(t, []string{"KCMD_TEST_CJ_CREATE_PAUSE_MS=3000", "KCMD_TEST_CJ_UNGUARDED_NS=" + bad},
		"--controllers=cronjob-controller", "--secure-port=0", "--leader-elect=false",
		"--concurrent-cron-job-syncs=2", "--v=4")
	t.Cleanup(func() { dumpKcmdLogs(t, p) })
	mgr := p.cmd.Process.Pid
	Eventually(t, 60*time.Second, "the CronJob controller's workers", func() (bool, string) {
		return p.Logged("cronjob-controller worker ready"), "not yet"
	})
	if !p.Logged("KCMD_TEST_CJ_CREATE_PAUSE_MS=3000") || !p.Logged("KCMD_TEST_CJ_UNGUARDED_NS="+bad) {
		t.Fatal("the worker did not take the test seams from its environment")
	}
	// at least 8 s before the boundary: the CronJobs are synced and queued for it before
	// informerd is killed
	if until := time.Until(time.Now().Truncate(time.Minute).Add(time.Minute)); until < 8*time.Second {
		time.Sleep(until + 100*time.Millisecond)
	}
	trGood, trBad := cjcTrack(t, ns), cjcTrack(t, bad)
	good := cjCreate(t, ns, cjNew("cj", "* * * * *", batchv1.AllowConcurrent, nil, nil, true))
	ctrl := cjCreate(t, bad, cjNew("cj", "* * * * *", batchv1.AllowConcurrent, nil, nil, true))
	boundary := good.CreationTimestamp.Time.Truncate(time.Minute).Add(time.Minute)
	if !ctrl.CreationTimestamp.Time.Truncate(time.Minute).Add(time.Minute).Equal(boundary) {
		t.Fatal("the two CronJobs were created on both sides of a minute boundary")
	}

	// informerd down across the boundary
	time.Sleep(time.Until(boundary.Add(-1500 * time.Millisecond)))
	if n := gcxKillChildren(t, mgr, "kcmd-informe", "kcmd-informerd"); n != 1 {
		t.Fatalf("killed %d informerd processes, want 1", n)
	}
	t.Logf("kill -9 informerd %s before %s", time.Until(boundary), boundary.Format(time.TimeOnly))

	// each namespace's first Job: kill the workers while the worker holding it pauses before
	// its status write
	killedFor := map[string]bool{}
	deadline := boundary.Add(40 * time.Second)
	for !(killedFor[ns] && killedFor[bad]) {
		if time.Now().After(deadline) {
			t.Fatalf("no job in both namespaces 40 s after %s (killed for %v)", boundary.Format(time.TimeOnly), killedFor)
		}
		for n, tr := range map[string]*cjcJobs{ns: trGood, bad: trBad} {
			if !killedFor[n] && len(tr.all()) > 0 {
				killedFor[n] = true
				k := cjcKillWorkers(t, mgr)
				t.Logf("first job in %s: kill -9 %d cronjob worker(s)", n, k)
				if k == 0 {
					t.Fatal("no cronjob worker to kill")
				}
			}
		}
		time.Sleep(10 * time.Millisecond)
	}

	// the guarded namespace: one Job, adopted into status.active, lastScheduleTime the boundary
	var last []string
	Eventually(t, 30*time.Second, "the guarded CronJob's status to record its one job", func() (bool, string) {
		last = cjcOracle(good.CreationTimestamp.Time, time.Now(), 20*time.Second, trGood.all(), cjGet(t, ns, "cj"))
		return len(last) == 0, strings.Join(last, "; ")
	})
	// the negative control: the replay made a second Job (its status records the second)
	Eventually(t, 30*time.Second, "the unguarded CronJob's duplicate to be reported", func() (bool, string) {
		d := cjcOracle(ctrl.CreationTimestamp.Time, time.Now(), 20*time.Second, trBad.all(), cjGet(t, bad, "cj"))
		for _, l := range d {
			if strings.HasPrefix(l, "duplicate: ") && strings.Contains(l, " jobs for "+boundary.UTC().Format(time.RFC3339)) {
				t.Logf("negative control: %s", strings.Join(d, "; "))
				return true, ""
			}
		}
		return false, strings.Join(d, "; ")
	})
	time.Sleep(2 * time.Second) // a late duplicate in the guarded namespace would show by now
	if d := cjcOracle(good.CreationTimestamp.Time, time.Now(), 20*time.Second, trGood.all(), cjGet(t, ns, "cj")); len(d) > 0 {
		t.Fatalf("after the crash: %s", strings.Join(d, "; "))
	}
}
