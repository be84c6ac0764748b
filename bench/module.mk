# bench/: `kcmd bench`, the benchmark driver (docs/bench.md). `kcmd bench ...` execs the
# program kcmd-bench. The pure parts (options, statistics, Prometheus text, reports, /proc
# sampling, the pod map) are the library kbench, unit-tested; driver.c is the orchestration.
LIBS                 += kbench
kbench_SRCS          := bench/opts.c bench/stats.c bench/prom.c \
			bench/report.c bench/procs.c bench/podmap.c bench/shards.c
kbench_LIBDEPS       :=
kbench_TESTS         := bench/tests/test-bench-opts.c bench/tests/test-bench-stats.c \
			bench/tests/test-bench-prom.c bench/tests/test-bench-report.c \
			bench/tests/test-bench-procs.c bench/tests/test-bench-shards.c

BINS                 += kcmd-bench
kcmd-bench_SRCS      := bench/main.c bench/driver.c
kcmd-bench_LIBDEPS   := kbench kube
