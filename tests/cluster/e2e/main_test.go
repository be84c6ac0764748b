package e2e

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"testing"
)

func TestMain(m *testing.M) {
	flag.Parse()
	// -test.list (run-e2e.sh asks for the names to deal them out to its shards) runs no test:
	// no cluster for it.
	if f := flag.Lookup("test.list"); f != nil && f.Value.String() != "" {
		os.Exit(m.Run())
	}
	e, err := startEnv(context.Background())
	if err != nil {
		fmt.Fprintf(os.Stderr, "e2e: cannot start the test cluster: %v\n", err)
		os.Exit(1)
	}
	env = e
	// A signal (Ctrl-C, CI timeout) still tears the cluster down.
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		s := <-sigs
		fmt.Fprintf(os.Stderr, "e2e: %v: stopping the test cluster\n", s)
		stopShared()
		env.Cluster.Stop()
		os.Exit(1)
	}()
	code := m.Run()
	signal.Stop(sigs)
	stopShared()
	env.Cluster.Stop()
	os.Exit(code)
}
