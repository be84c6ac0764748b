package e2e

import (
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

// procCPU returns utime+stime (clock ticks) and the parent pid of a process from /proc.
func procCPU(pid int) (ticks int64, ppid int, comm string, ok bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, 0, "", false
	}
	s := string(b)
	open, end := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
	if open < 0 || end < open {
		return 0, 0, "", false
	}
	f := strings.Fields(s[end+2:])
	if len(f) < 13 {
		return 0, 0, "", false
	}
	pp, _ := strconv.Atoi(f[1])
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return ut + st, pp, s[open+1 : end], true
}

// childrenCPU maps each direct child of parent (and parent itself) to its CPU ticks.
func childrenCPU(parent int) map[int]int64 {
	out := map[int]int64{}
	if t, _, _, ok := procCPU(parent); ok {
		out[parent] = t
	}
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if t, pp, _, ok := procCPU(pid); ok && pp == parent {
			out[pid] = t
		}
	}
	return out
}

// An idle kcmd sleeps: no process polls its loop. Every process of a synced kcmd with nothing
// to do must stay under 5 % of a core over 6 s (an idle dispatcher that re-posted its drain
// for ever burnt 15-40 % of a core each). CPU time, not wall time: other load on the machine
// does not inflate it.
func TestKcmd_IdleProcessesSleep(t *testing.T) {
	lease := leaseName(t)
	p := startKcmd(t, nil, append([]string{"--secure-port=0", "--leader-elect-resource-name=" + lease}, fastElection...)...)
	Eventually(t, 60*time.Second, "kcmd's GC started", func() (bool, string) { return p.Logged("resource monitors"), "" })
	time.Sleep(3 * time.Second) // start-up work (initial syncs) done
	pid := p.cmd.Process.Pid
	before := childrenCPU(pid)
	if len(before) < 4 {
		t.Fatalf("found %d kcmd processes, want the manager, informerd, dispatchers and workers", len(before))
	}
	const window = 6 * time.Second
	time.Sleep(window)
	after := childrenCPU(pid)
	hz := int64(100) // USER_HZ on Linux
	limit := int64(window.Seconds()*float64(hz)) * 5 / 100
	for pid, t0 := range before {
		t1, ok := after[pid]
		if !ok {
			t.Errorf("process %d exited while idle", pid)
			continue
		}
		_, _, comm, _ := procCPU(pid)
		if d := t1 - t0; d > limit {
			t.Errorf("%s (pid %d) used %d ticks of CPU in %s idle, limit %d (5 %% of a core): it polls instead of sleeping", comm, pid, d, window, limit)
		} else {
			t.Logf("%s (pid %d): %d ticks in %s", comm, pid, d, window)
		}
	}
}
