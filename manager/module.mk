# manager/: supervision, leader election, health and metrics, flags, systemd (see docs/manager.md)
LIBS            += kclog manager
kclog_SRCS      := manager/log.c
manager_SRCS    := manager/leader.c manager/supervisor.c manager/flags.c manager/httpd.c \
		   manager/metrics.c
manager_LIBDEPS := kube ipc kclog
manager_TESTS   := manager/tests/test-leader.c manager/tests/test-supervisor.c \
		   manager/tests/test-flags.c manager/tests/test-httpd.c manager/tests/test-metrics.c
kclog_TESTS     := manager/tests/test-log.c
