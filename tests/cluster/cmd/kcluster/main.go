// Command kcluster starts and stops the real test control plane for kcmd (see package harness).
// It is normally run through tests/cluster/cluster, which builds it and the binaries first.
//
//	kcluster up [--dir D] [--kcm CONTROLLERS] [--kcm-qps Q] [--kcm-burst B] [--compaction-interval D]
//	kcluster down [--dir D]
//	kcluster env [--dir D]          print shell exports (KUBECONFIG, KCMD_TEST_SERVER, ...)
//	kcluster restart apiserver|etcd [--hard] [--dir D]
//	kcluster kcm start CONTROLLERS | stop [--dir D]
//	kcluster status [--dir D]
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"sort"
	"syscall"
	"time"

	"kcmd.local/tests/cluster/harness"
)

func defaultDir() string {
	if d := os.Getenv("KCMD_CLUSTER_DIR"); d != "" {
		return d
	}
	return filepath.Join(os.TempDir(), fmt.Sprintf("kcmd-cluster-%d", os.Getuid()))
}

func die(format string, a ...any) {
	fmt.Fprintf(os.Stderr, "kcluster: "+format+"\n", a...)
	os.Exit(1)
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: kcluster up|down|env|status|restart apiserver|etcd|kcm start CONTROLLERS|kcm stop [flags]")
	os.Exit(2)
}

func main() {
	if len(os.Args) < 2 {
		usage()
	}
	cmd := os.Args[1]
	args := os.Args[2:]
	var sub string
	if (cmd == "restart" || cmd == "kcm") && len(args) > 0 {
		sub, args = args[0], args[1:]
	}
	var ctrlArg string
	if cmd == "kcm" && sub == "start" && len(args) > 0 && args[0][0] != '-' {
		ctrlArg, args = args[0], args[1:]
	}
	fs := flag.NewFlagSet(cmd, flag.ExitOnError)
	dir := fs.String("dir", defaultDir(), "cluster work directory (state, pki, logs)")
	bin := fs.String("bin", os.Getenv("KCMD_CLUSTER_BIN"), "directory with etcd, kube-apiserver, kube-controller-manager")
	kcm := fs.String("kcm", "", "start upstream kube-controller-manager with these --controllers")
	qps := fs.Float64("kcm-qps", 0, "kube-controller-manager --kube-api-qps")
	burst := fs.Int("kcm-burst", 0, "kube-controller-manager --kube-api-burst")
	compaction := fs.Duration("compaction-interval", 0, "apiserver --etcd-compaction-interval (short values provoke 410 Gone)")
	hard := fs.Bool("hard", false, "restart: SIGKILL instead of SIGTERM")
	_ = fs.Parse(args)

	opts := harness.Options{BinDir: *bin, WorkDir: *dir, Detach: true, Log: os.Stderr, CompactionInterval: *compaction}
	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer cancel()

	switch cmd {
	case "up":
		if _, err := os.Stat(filepath.Join(*dir, "state.json")); err == nil {
			die("a cluster already runs in %s (kcluster down --dir %s first)", *dir, *dir)
		}
		if *kcm != "" {
			opts.KCM = &harness.KCMOptions{Controllers: *kcm, QPS: *qps, Burst: *burst}
		}
		start := time.Now()
		c, err := harness.Start(ctx, opts)
		if err != nil {
			_ = os.RemoveAll(*dir)
			die("%v", err)
		}
		fmt.Fprintf(os.Stderr, "kcluster: up in %.1fs: server %s, kubeconfig %s, logs %s\n",
			time.Since(start).Seconds(), c.Server, c.Kubeconfig, filepath.Join(c.Dir, "logs"))
	case "down":
		c, err := harness.Load(*dir, opts)
		if err != nil {
			if os.IsNotExist(err) {
				_ = os.RemoveAll(*dir)
				return
			}
			die("%v", err)
		}
		c.Stop()
		if err := os.RemoveAll(*dir); err != nil {
			die("removing %s: %v", *dir, err)
		}
		fmt.Fprintf(os.Stderr, "kcluster: down, removed %s\n", *dir)
	case "env":
		c, err := harness.Load(*dir, opts)
		if err != nil {
			die("no cluster in %s: %v", *dir, err)
		}
		fmt.Printf("export KUBECONFIG=%s\nexport KCMD_TEST_SERVER=%s\nexport KCMD_TEST_CA=%s\nexport KCMD_TEST_TOKEN=%s\nexport KCMD_CLUSTER_DIR=%s\n",
			c.Kubeconfig, c.Server, c.CAFile, c.AdminToken, c.Dir)
	case "status":
		c, err := harness.Load(*dir, opts)
		if err != nil {
			die("no cluster in %s: %v", *dir, err)
		}
		names := make([]string, 0, len(c.Procs))
		for n := range c.Procs {
			names = append(names, n)
		}
		sort.Strings(names)
		fmt.Printf("server %s\nkubeconfig %s\n", c.Server, c.Kubeconfig)
		for _, n := range names {
			fmt.Printf("%-24s pid %d\n", n, c.Procs[n].Pid)
		}
	case "restart":
		c, err := harness.Load(*dir, opts)
		if err != nil {
			die("no cluster in %s: %v", *dir, err)
		}
		switch sub {
		case "apiserver":
			err = c.RestartAPIServer(ctx, *hard)
		case "etcd":
			err = c.RestartEtcd(ctx, *hard)
		default:
			usage()
		}
		if err != nil {
			die("%v", err)
		}
	case "kcm":
		c, err := harness.Load(*dir, opts)
		if err != nil {
			die("no cluster in %s: %v", *dir, err)
		}
		switch sub {
		case "start":
			if ctrlArg == "" {
				usage()
			}
			err = c.StartKCM(ctx, harness.KCMOptions{Controllers: ctrlArg, QPS: *qps, Burst: *burst})
		case "stop":
			c.StopKCM()
		default:
			usage()
		}
		if err != nil {
			die("%v", err)
		}
	default:
		usage()
	}
}
