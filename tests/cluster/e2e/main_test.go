package e2e

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"testing"
)

func TestMain(m *testing.M) {
	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	e, err := startEnv(ctx)
	if err != nil {
		fmt.Fprintf(os.Stderr, "e2e: cannot start the test cluster: %v\n", err)
		cancel()
		os.Exit(1)
	}
	env = e
	// A signal (Ctrl-C, CI timeout) still tears the cluster down.
	go func() {
		<-ctx.Done()
		if ctx.Err() != nil && env != nil {
			env.Cluster.Stop()
			os.Exit(1)
		}
	}()
	code := m.Run()
	env.Cluster.Stop()
	cancel()
	os.Exit(code)
}
