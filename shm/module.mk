# shm/: the shared-memory informer cache (arena, indexes, listers). See shm/arena.h.
LIBS         += shm
shm_SRCS     := shm/arena.c shm/index.c shm/reader.c shm/records.c
shm_LIBDEPS  :=
shm_TESTS    := shm/tests/test-arena.c shm/tests/test-torture.c
shm_SOAKS    := shm/tests/soak-torture.c
shm_BENCHES  := shm/bench/bench-shm.c
# The change feed (shm/feed.h): informerd -> every controller's dispatcher.
shm_SRCS     += shm/feed.c
shm_TESTS    += shm/tests/test-feed.c shm/tests/test-feed-torture.c shm/tests/test-feed-durable.c
shm_SOAKS    += shm/tests/soak-feed-torture.c
shm_BENCHES  += shm/bench/bench-feed.c
# The record codec (shm/record-model.h): kube/model.h objects <-> arena records. Its own library
# so that the arena itself links nothing of kube/.
LIBS           += shmrec
shmrec_SRCS    := shm/record-model.c
shmrec_LIBDEPS := shm kube
shmrec_TESTS   := shm/tests/test-records.c
shmrec_FUZZ    := shm/fuzz/fuzz-records.c
