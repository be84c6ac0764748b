# workers/garbagecollector/: the garbage collector's decision logic (see docs/garbagecollector.md):
# identities and reference rules, the absentOwnerCache, the graph-change handler, the
# attemptToDelete / attemptToOrphan workers over graph and API seams.
LIBS        += gc
gc_SRCS     := workers/garbagecollector/identity.c workers/garbagecollector/absent-cache.c workers/garbagecollector/graph.c workers/garbagecollector/worker.c
gc_LIBDEPS  := kube
gc_TESTS    := workers/garbagecollector/tests/test-identity.c workers/garbagecollector/tests/test-absent-cache.c workers/garbagecollector/tests/test-graph.c workers/garbagecollector/tests/test-worker.c

# The informer handler table, linked into informerd (kept apart so that `gc` stays pure).
LIBS             += gchandlers
gchandlers_SRCS    := workers/garbagecollector/handlers.c
gchandlers_LIBDEPS := gc informer shm ipc kube
gchandlers_TESTS   := workers/garbagecollector/tests/test-handlers.c
