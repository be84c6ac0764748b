# workers/cronjob/: the CronJob controller (docs/cronjob.md): robfig/cron's schedules over the tz
# database (schedule.c), upstream's sync over the objects' JSON (cronjob.c), its handlers and
# worker (controller.c).
LIBS            += cronjob
cronjob_SRCS    := workers/cronjob/schedule.c workers/cronjob/cronjob.c workers/cronjob/controller.c
cronjob_LIBDEPS := kube shmrec shm kcflag kcapi kcmetrics
cronjob_TESTS   := workers/cronjob/tests/test-schedule.c workers/cronjob/tests/test-cronjob.c \
                   workers/cronjob/tests/test-metrics.c
cronjob_FUZZ    := workers/cronjob/fuzz/fuzz-schedule.c
# The registry (controllers/module.mk) links the descriptor and the library.
REGISTRY_PLUGIN_SRCS     += workers/cronjob/plugin.c
REGISTRY_CONTROLLER_LIBS += cronjob
