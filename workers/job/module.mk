# workers/job/: the Job controller (docs/job.md): its pure parts (job.c), its sync (sync.c, run
# by kcmd-worker --controller=job-controller) and its handler table (table.c, run by its
# dispatcher). Expectations: the ReplicaSet controller's shared-memory module (lib rs).
LIBS         += job
job_SRCS     := workers/job/job.c workers/job/sync.c workers/job/table.c
job_LIBDEPS  := rs kcapi kcmetrics kcfeat kube shm shmrec kclog
job_TESTS    := workers/job/tests/test-job.c
# The registry (controllers/module.mk) links the descriptor and the library.
REGISTRY_PLUGIN_SRCS     += workers/job/plugin.c
REGISTRY_CONTROLLER_LIBS += job
