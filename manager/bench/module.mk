# manager/bench/: `kcmd bench`, the benchmark driver (docs/bench.md). `kcmd bench ...` execs the
# program kcmd-bench. The pure parts (options, statistics, Prometheus text, reports, /proc
# sampling, the pod map) are the library kbench, unit-tested; driver.c is the orchestration.
LIBS                 += kbench
kbench_SRCS          := manager/bench/opts.c manager/bench/stats.c manager/bench/prom.c \
			manager/bench/report.c manager/bench/procs.c manager/bench/podmap.c
kbench_LIBDEPS       :=
kbench_TESTS         := manager/bench/tests/test-bench-opts.c manager/bench/tests/test-bench-stats.c \
			manager/bench/tests/test-bench-prom.c manager/bench/tests/test-bench-report.c \
			manager/bench/tests/test-bench-procs.c

BINS                 += kcmd-bench
kcmd-bench_SRCS      := manager/bench/main.c manager/bench/driver.c
kcmd-bench_LIBDEPS   := kbench kube
