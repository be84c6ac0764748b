package e2e

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
)

type interval struct {
	who        string
	start, end time.Time
}

// klogTime reads the timestamp of a klog line ("I1202 17:23:43.962243 ...") in local time.
func klogTime(line string) (time.Time, bool) {
	if len(line) < 21 {
		return time.Time{}, false
	}
	ts, err := time.ParseInLocation("0102 15:04:05.000000", line[1:21], time.Local)
	if err != nil {
		return time.Time{}, false
	}
	now := time.Now()
	return ts.AddDate(now.Year(), 0, 0), true
}

// kcmdIntervals turns kcmd's "became leader" / "stopped leading" log lines into intervals;
// an open interval ends at `end` (the process was killed then).
func kcmdIntervals(p *kcmdProc, end time.Time) []interval {
	var out []interval
	var start time.Time
	open := false
	for _, l := range p.Logs() {
		ts, ok := klogTime(l)
		if !ok {
			continue
		}
		switch {
		case strings.Contains(l, "became leader"):
			start, open = ts, true
		case strings.Contains(l, "stopped leading") && open:
			out = append(out, interval{"kcmd", start, ts})
			open = false
		}
	}
	if open {
		out = append(out, interval{"kcmd", start, end})
	}
	return out
}

type goElector struct {
	mu        sync.Mutex
	intervals []interval
	cancel    context.CancelFunc
	done      chan struct{}
}

func runGoElector(t *testing.T, lease, id string) *goElector {
	t.Helper()
	lock, err := resourcelock.New(resourcelock.LeasesResourceLock, "kube-system", lease, nil,
		env.Client.CoordinationV1(), resourcelock.ResourceLockConfig{Identity: id})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	g := &goElector{cancel: cancel, done: make(chan struct{})}
	le, err := leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{
		Lock:            lock,
		LeaseDuration:   4 * time.Second,
		RenewDeadline:   3 * time.Second,
		RetryPeriod:     1 * time.Second,
		ReleaseOnCancel: true,
		Name:            id,
		Callbacks: leaderelection.LeaderCallbacks{
			OnStartedLeading: func(context.Context) {
				g.mu.Lock()
				g.intervals = append(g.intervals, interval{who: id, start: time.Now()})
				g.mu.Unlock()
			},
			OnStoppedLeading: func() {
				g.mu.Lock()
				if n := len(g.intervals); n > 0 && g.intervals[n-1].end.IsZero() {
					g.intervals[n-1].end = time.Now()
				}
				g.mu.Unlock()
			},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	go func() { le.Run(ctx); close(g.done) }()
	return g
}

func (g *goElector) stop() {
	g.cancel()
	<-g.done
}

func (g *goElector) leading() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	n := len(g.intervals)
	return n > 0 && g.intervals[n-1].end.IsZero()
}

func (g *goElector) all(end time.Time) []interval {
	g.mu.Lock()
	defer g.mu.Unlock()
	out := append([]interval(nil), g.intervals...)
	for i := range out {
		if out[i].end.IsZero() {
			out[i].end = end
		}
	}
	return out
}

// TestManager_InteropWithClientGoElector: client-go's elector and kcmd on one Lease exclude
// each other both ways: a graceful release hands over at once, a kill -9 after the lease
// duration, and their leadership intervals never overlap.
func TestManager_InteropWithClientGoElector(t *testing.T) {
	lease := leaseName(t)
	g1 := runGoElector(t, lease, "client-go-1")
	Eventually(t, 15*time.Second, "client-go to lead", func() (bool, string) { return g1.leading(), "" })

	k := startKcmd(t, nil, electionOnly(lease)...)
	time.Sleep(4 * time.Second)
	if k.Logged("became leader") {
		t.Fatal("kcmd led while client-go held the lease")
	}
	g1.stop() // ReleaseOnCancel: kcmd may take the empty lease at its next retry
	Eventually(t, 10*time.Second, "kcmd to take the released lease", func() (bool, string) {
		return k.Logged("became leader"), "holder " + holder(t, lease)
	})

	g2 := runGoElector(t, lease, "client-go-2")
	time.Sleep(4 * time.Second)
	if g2.leading() {
		t.Fatal("client-go led while kcmd held the lease")
	}
	_ = k.cmd.Process.Signal(syscall.SIGKILL)
	<-k.done
	killed := time.Now()
	Eventually(t, 15*time.Second, "client-go to take over after kcmd was killed", func() (bool, string) {
		return g2.leading(), "holder " + holder(t, lease)
	})
	g2.stop()

	now := time.Now()
	all := append(append(g1.all(now), kcmdIntervals(k, killed)...), g2.all(now)...)
	if len(all) < 3 {
		t.Fatalf("expected three leadership intervals, got %+v", all)
	}
	for i := range all {
		for j := i + 1; j < len(all); j++ {
			a, b := all[i], all[j]
			if a.start.Before(b.end) && b.start.Before(a.end) {
				t.Errorf("leadership overlap: %s [%s, %s] and %s [%s, %s]", a.who, a.start.Format("15:04:05.000"),
					a.end.Format("15:04:05.000"), b.who, b.start.Format("15:04:05.000"), b.end.Format("15:04:05.000"))
			}
		}
	}
}

// TestManager_SdNotify: with NOTIFY_SOCKET set, kcmd sends READY=1 and STATUS=, and STOPPING=1
// on SIGTERM, in that order.
func TestManager_SdNotify(t *testing.T) {
	dir := t.TempDir()
	sock := filepath.Join(dir, "notify.sock")
	conn, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: sock, Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	var mu sync.Mutex
	var msgs []string
	go func() {
		buf := make([]byte, 4096)
		for {
			n, _, err := conn.ReadFromUnix(buf)
			if err != nil {
				return
			}
			mu.Lock()
			msgs = append(msgs, strings.Split(strings.TrimSpace(string(buf[:n])), "\n")...)
			mu.Unlock()
		}
	}()
	got := func(prefix string) int {
		mu.Lock()
		defer mu.Unlock()
		for i, m := range msgs {
			if strings.HasPrefix(m, prefix) {
				return i
			}
		}
		return -1
	}
	k := startKcmd(t, []string{"NOTIFY_SOCKET=" + sock}, electionOnly(leaseName(t))...)
	Eventually(t, 15*time.Second, "READY=1", func() (bool, string) { return got("READY=1") >= 0, "" })
	Eventually(t, 15*time.Second, "STATUS=leading", func() (bool, string) { return got("STATUS=leading") >= 0, "" })
	_ = k.cmd.Process.Signal(syscall.SIGTERM)
	<-k.done
	Eventually(t, 5*time.Second, "STOPPING=1", func() (bool, string) { return got("STOPPING=1") >= 0, "" })
	if got("READY=1") > got("STOPPING=1") {
		t.Errorf("READY=1 after STOPPING=1: %v", msgs)
	}
	_ = os.Remove(sock)
}
