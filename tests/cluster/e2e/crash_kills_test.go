// SPDX-License-Identifier: Apache-2.0

package e2e

import (
	"testing"
	"time"
)

// crashKills is the kill cadence of the single-controller crash tests (svm, svgc, vapstatus):
// every 1.5 s one kcmd-worker under the manager pid is killed -9, informerd once after the
// second worker kill; a kill counts as busy when pending() reported unfinished work just before
// it.
type crashKills struct {
	pid                       int
	last                      time.Time
	workers, busy, informerds int
}

func newCrashKills(pid int) *crashKills { return &crashKills{pid: pid, last: time.Now()} }

// tick kills when the cadence says so; pending is read only then.
func (c *crashKills) tick(t *testing.T, pending func() int) {
	t.Helper()
	if time.Since(c.last) <= 1500*time.Millisecond {
		return
	}
	c.last = time.Now()
	p := pending()
	k := killChildren(t, c.pid, "kcmd-worker", 1)
	if k > 0 && p > 0 {
		c.busy++
	}
	c.workers += k
	if c.workers == 2 && c.informerds == 0 {
		c.informerds += killChildren(t, c.pid, "kcmd-informerd", 1)
	}
}

// exercised fails the test unless the crash was: at least 3 worker kills, one with work in
// flight, and the one informerd kill.
func (c *crashKills) exercised(t *testing.T) {
	t.Helper()
	if c.workers < 3 || c.busy < 1 || c.informerds != 1 {
		t.Fatalf("%d worker kills (%d with work in flight) and %d informerd kills: the crash was not exercised",
			c.workers, c.busy, c.informerds)
	}
}
