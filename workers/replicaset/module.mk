# workers/replicaset/: the ReplicaSet controller's decision logic (see docs/replicaset.md):
# shared-memory expectations, deletion ranking, sync planning/driving, events, informer handlers.
LIBS        += rs
rs_SRCS     := workers/replicaset/expectations.c workers/replicaset/ranking.c \
               workers/replicaset/sync.c workers/replicaset/events.c workers/replicaset/handlers.c \
               workers/replicaset/evq.c workers/replicaset/flavour.c
rs_LIBDEPS  := kube shmrec
rs_TESTS    := workers/replicaset/tests/test-expectations.c workers/replicaset/tests/test-ranking.c \
               workers/replicaset/tests/test-sync.c workers/replicaset/tests/test-handlers.c \
               workers/replicaset/tests/test-evq.c \
               workers/replicaset/tests/test-exp-torture.c
rs_SOAKS    := workers/replicaset/tests/soak-exp-torture.c
rs_BENCHES  := workers/replicaset/bench/bench-rs.c
# issue 8: 1,000 RSs x 100 side by side with upstream kcm (kcmd bench, about an hour)
rs_BENCH_SCRIPTS := tests/cluster/bench-rs.sh
# The registry (controllers/module.mk) links the descriptor and the library.
REGISTRY_PLUGIN_SRCS     += workers/replicaset/plugin.c workers/replicaset/plugin-rc.c \
                            workers/replicaset/mgr.c
REGISTRY_CONTROLLER_LIBS += rs rshandlers worker
