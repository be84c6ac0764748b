# lib/: the process-support libraries every kcmd program links (docs/architecture.md):
#   kclog    logging (klog text on stderr, or journald fields)
#   kubeloop runs a kube_client inside an ipc_loop
#   kcfeat   --feature-gates (kcm's syntax) and the gates' values in every child
# lib/ may use kube/, shm/ and ipc/; nothing below it uses lib/.
LIBS             += kclog kubeloop kcfeat
kclog_SRCS       := lib/log.c lib/childenv.c
kclog_TESTS      := lib/tests/test-log.c lib/tests/test-childenv.c
kubeloop_SRCS    := lib/kube-loop.c
kubeloop_LIBDEPS := kube ipc
kcfeat_SRCS      := lib/features.c lib/kcm-catalogue.c lib/kcm-gates.c
kcfeat_FUZZ      := lib/fuzz/fuzz-features.c
#   kcflag   Go-style bool/duration parsing and controller flag values (kcmd/controller.h)
LIBS             += kcflag
kcflag_SRCS      := lib/goflag.c lib/ctlhost.c
kcflag_TESTS     := lib/tests/test-goflag.c
kcflag_FUZZ      := lib/fuzz/fuzz-goflag.c
#   kcdispatch   the handler-table interface controllers implement and its dispatcher (used by
#                each controller's kcmd-dispatcher, and by informerd for its test table)
#   kcinfmetrics informerd's per-resource counters in shared memory (written by informerd,
#                read by the manager for /metrics)
LIBS                 += kcdispatch kcinfmetrics
kcdispatch_SRCS      := lib/handlers.c
kcdispatch_LIBDEPS   := kube shm ipc
kcinfmetrics_SRCS    := lib/infmetrics.c
kcinfmetrics_LIBDEPS :=
kcinfmetrics_TESTS   := lib/tests/test-infmetrics.c
#   kcfence      KCMD_FENCE_FD -> every kube client of a child refuses writes past the
#                leadership deadline (kube/fence.h); KCMD_LEADERSHIP_FD -> the arena's
#                "synced" waits for the acquisition barrier (kube/fence.h F5)
LIBS                 += kcfence
kcfence_SRCS         := lib/fence-env.c
kcfence_LIBDEPS      := kube kclog shm ipc
#   kcapi        the functions of the public controller API (include/kcmd/: cache, client,
#                handlers' queues, log), linked into every program that runs plug-ins and into
#                libkcmd.so (the library out-of-tree controllers link)
LIBS                 += kcapi
kcapi_SRCS           := lib/api.c
kcapi_LIBDEPS        := kube shm ipc kclog kcflag kcmetrics kcevrec
kcapi_TESTS          := lib/tests/test-api.c lib/tests/test-evrec.c
#   kcevrec      the Event recorder (lib/evrec.h): client-go's recordToSink over the
#                correlator, and the process's asynchronous queue behind kcmd_event_record
LIBS                 += kcevrec
kcevrec_SRCS         := lib/evrec.c
kcevrec_LIBDEPS      := kube kclog
#   kcmetrics    controllers' declared metrics (kcmd/controller.h `metrics`): the shared region
#                per controller the manager creates and renders, updated by the controller's
#                processes (kcmd/metrics.h); part of the public API (libkcmd.so)
LIBS                 += kcmetrics
kcmetrics_SRCS       := lib/ctlmetrics.c
kcmetrics_LIBDEPS    :=
kcmetrics_TESTS      := lib/tests/test-ctlmetrics.c
