# workers/garbagecollector/: the garbage collector's decision logic (see docs/garbagecollector.md):
# identities and reference rules, the absentOwnerCache, the graph-change handler, the
# attemptToDelete / attemptToOrphan workers over graph and API seams.
LIBS        += gc
gc_SRCS     := workers/garbagecollector/identity.c workers/garbagecollector/absent-cache.c workers/garbagecollector/graph.c workers/garbagecollector/worker.c workers/garbagecollector/kube-api.c workers/garbagecollector/shard.c
gc_LIBDEPS  := kube
gc_TESTS    := workers/garbagecollector/tests/test-identity.c workers/garbagecollector/tests/test-absent-cache.c workers/garbagecollector/tests/test-graph.c workers/garbagecollector/tests/test-worker.c workers/garbagecollector/tests/test-kube-api.c workers/garbagecollector/tests/test-shard.c

# The process glue over shm/ipc/informer (kept apart so that `gc` stays pure): the informer
# handler table (informerd) and the arena-backed graph view (GC workers).
LIBS             += gchandlers
gchandlers_SRCS    := workers/garbagecollector/handlers.c workers/garbagecollector/arena-view.c workers/garbagecollector/debug.c
gchandlers_LIBDEPS := gc kcfence informer kcdispatch kcapi shm shmrec ipc kube
gchandlers_TESTS   := workers/garbagecollector/tests/test-handlers.c workers/garbagecollector/tests/test-arena-view.c workers/garbagecollector/tests/test-debug.c

# `make bench-gc`: kcmd's GC vs upstream kcm's against the real cluster (e2e/bench_gc_test.go).
gc_BENCH_SCRIPTS := tests/cluster/bench-gc.sh
# The registry (controllers/module.mk) links the descriptor and the library.
REGISTRY_PLUGIN_SRCS     += workers/garbagecollector/plugin.c
REGISTRY_CONTROLLER_LIBS += gc gchandlers
