#!/usr/bin/env bash
# bench-manager: leader failover against the real cluster (see e2e/bench_manager_test.go).
exec "$(dirname "$0")/bench-go.sh" Manager
