// SPDX-License-Identifier: Apache-2.0

package e2e

// Issue 19, "every kcm flag": kcmd starts with kube-controller-manager's command line unchanged.
// The test reads the flags and feature gates from the real kube-controller-manager v1.37 binary
// the test cluster runs (its --help) and checks that kcmd accepts every one of them at kcm's
// default value, and that for every flag with a checked type (bool, integers, floats,
// durations, IPs) a value of the wrong type is refused by both. No apiserver is needed.

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
)

type kcmHelpFlag struct{ name, typ, def string }

// kcmHelp parses `kube-controller-manager --help`: flags (name, pflag type, default) and gates.
func kcmHelp(t *testing.T) ([]kcmHelpFlag, []string) {
	bin := filepath.Join(os.Getenv("KCMD_CLUSTER_BIN"), "kube-controller-manager")
	out, _ := exec.Command(bin, "--help").CombinedOutput()
	flagRe := regexp.MustCompile(`^\s+(?:-[a-z], )?--([a-z0-9-]+)(?: (\S+))?(?:\s{2,}(.*))?$`)
	defRe := regexp.MustCompile(`\(default (.*?)\)\s*$`)
	var flags []kcmHelpFlag
	var cur *kcmHelpFlag
	var desc []string
	flush := func() {
		if cur == nil {
			return
		}
		// pflag prints no default for a zero value
		cur.def = map[string]string{"bool": "false", "int": "0", "int32": "0", "Level": "0",
			"float32": "0", "float": "0", "duration": "0s"}[cur.typ]
		for i := len(desc) - 1; i >= 0; i-- {
			if m := defRe.FindStringSubmatch(desc[i]); m != nil {
				cur.def = strings.Trim(m[1], `"`)
				break
			}
		}
		flags = append(flags, *cur)
		cur, desc = nil, nil
	}
	for _, l := range strings.Split(string(out), "\n") {
		if m := flagRe.FindStringSubmatch(l); m != nil {
			flush()
			typ := m[2]
			if typ == "" {
				typ = "bool"
			}
			cur = &kcmHelpFlag{name: m[1], typ: typ}
			desc = []string{m[3]}
		} else if cur != nil && strings.HasPrefix(l, strings.Repeat(" ", 20)) && strings.TrimSpace(l) != "" {
			desc = append(desc, strings.TrimSpace(l))
		} else {
			flush()
		}
	}
	flush()
	gates := regexp.MustCompile(`kube:([A-Za-z0-9]+)=true\|false \((?:ALPHA|BETA|DEPRECATED) - default=(true|false)\)`).FindAllStringSubmatch(string(out), -1)
	var gs []string
	for _, g := range gates {
		gs = append(gs, g[1]+"="+g[2])
	}
	if len(flags) < 100 || len(gs) < 50 {
		t.Fatalf("cannot parse %s --help (%d flags, %d gates)", bin, len(flags), len(gs))
	}
	return flags, gs
}

// kcmdParses runs kcmd with the flags and --version: exit 0 means every flag was accepted.
func kcmdParses(args ...string) (bool, string) {
	out, err := exec.Command(filepath.Join(env.KcmdBinDir, "kcmd"), append(args, "--version")...).CombinedOutput()
	return err == nil, string(out)
}

func TestKcmd_AcceptsEveryKCMFlagAndGate(t *testing.T) {
	t.Parallel()
	flags, gates := kcmHelp(t)
	// kcm's own values that kcmd cannot take as they are: the Lease name kcmd defaults to its
	// own (so it can run beside kcm; kcm's is accepted and used), and --v's "Level" type.
	var all []string
	for _, f := range flags {
		switch {
		case f.name == "help" || f.name == "version":
			continue
		case f.typ == "bool":
			all = append(all, "--"+f.name+"="+f.def)
		case f.def == "" || f.def == "[]" || f.def == "[*]" && f.name != "controllers":
			all = append(all, "--"+f.name+"=")
		case strings.HasPrefix(f.def, "[") && strings.HasSuffix(f.def, "]"):
			all = append(all, "--"+f.name+"="+strings.Trim(f.def, "[]"))
		default:
			all = append(all, "--"+f.name+"="+f.def)
		}
	}
	all = append(all, "--feature-gates="+strings.Join(gates, ","))
	// one flag at a time first, so a failure names the flag
	var mu sync.Mutex
	var wg sync.WaitGroup
	sem := make(chan struct{}, 4)
	for _, a := range all {
		wg.Add(1)
		sem <- struct{}{}
		go func(a string) {
			defer wg.Done()
			defer func() { <-sem }()
			if ok, out := kcmdParses(a); !ok {
				mu.Lock()
				t.Errorf("kcmd refuses kube-controller-manager's %s: %s", a, strings.TrimSpace(out))
				mu.Unlock()
			}
		}(a)
	}
	wg.Wait()
	if ok, out := kcmdParses(all...); !ok {
		t.Errorf("kcmd refuses kube-controller-manager's whole default command line: %s", strings.TrimSpace(out))
	}
	t.Logf("%d kube-controller-manager flags and %d gates accepted at their defaults", len(all)-1, len(gates))

	// a value of the wrong type: refused by both, for every type pflag checks
	kcm := filepath.Join(os.Getenv("KCMD_CLUSTER_BIN"), "kube-controller-manager")
	checked := map[string]bool{"bool": true, "int32": true, "int": true, "float32": true, "float": true, "duration": true, "ip": true}
	n := 0
	for _, f := range flags {
		if !checked[f.typ] {
			continue
		}
		n++
		wg.Add(1)
		sem <- struct{}{}
		go func(f kcmHelpFlag) {
			defer wg.Done()
			defer func() { <-sem }()
			bad := "--" + f.name + "=not-a-" + f.typ
			kcmErr := exec.Command(kcm, bad, "--version").Run() != nil
			kcmdOK, _ := kcmdParses(bad)
			if kcmErr == kcmdOK {
				mu.Lock()
				t.Errorf("%s (%s): kube-controller-manager refuses it %v, kcmd refuses it %v", bad, f.typ, kcmErr, !kcmdOK)
				mu.Unlock()
			}
		}(f)
	}
	wg.Wait()
	t.Logf("%d typed flags: a wrongly typed value refused by both", n)
}
