# manager/: supervision, leader election, health and metrics, flags, systemd (see docs/manager.md)
LIBS            += manager
manager_SRCS    := manager/leader.c manager/supervisor.c manager/flags.c manager/httpd.c
manager_LIBDEPS := kube ipc
manager_TESTS   := manager/tests/test-leader.c manager/tests/test-supervisor.c manager/tests/test-flags.c manager/tests/test-httpd.c
