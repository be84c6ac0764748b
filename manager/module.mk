# manager/: supervision, leader election, health and metrics, flags, systemd (see docs/manager.md)
LIBS             += mgrstatus manager
mgrstatus_SRCS   := manager/status.c
mgrstatus_TESTS  := manager/tests/test-status.c
manager_SRCS     := manager/leader.c manager/supervisor.c manager/flags.c manager/httpd.c \
		    manager/metrics.c manager/lease-client.c manager/sa-tokens.c \
		    manager/termend.c manager/shard.c manager/zygote.c
manager_LIBDEPS  := kube ipc shm kclog kubeloop kcfeat kcflag kcinfmetrics registry mgrstatus
manager_TESTS    := manager/tests/test-leader.c manager/tests/test-supervisor.c \
		    manager/tests/test-flags.c manager/tests/test-httpd.c manager/tests/test-metrics.c \
		    manager/tests/test-sa-tokens.c manager/tests/test-termend.c \
		    manager/tests/test-shard.c manager/tests/test-zygote.c
# test-zygote forks children from the real kcmd-worker --zygote
manager_TEST_DEPS := $(B)/bin/kcmd-worker

BINS             += kcmd
kcmd_SRCS        := manager/main.c
kcmd_LIBDEPS     := manager registry kcapi
kcmd_LDFLAGS     := $(KCMD_PLUGIN_LDFLAGS)
manager_BENCH_SCRIPTS := tests/cluster/bench-manager.sh

BINS             += kcmctl
kcmctl_SRCS      := manager/kcmctl.c manager/top.c manager/scaffold.c
# `kcmctl new-controller`: the templates are embedded with .incbin (manager/scaffold.c)
$(B)/obj/manager/scaffold.o $(BA)/obj/manager/scaffold.o: $(wildcard manager/scaffold/*.in)
kcmctl_LIBDEPS   := shm ipc kube mgrstatus kclog

manager_FUZZ     := manager/fuzz/fuzz-flags.c
