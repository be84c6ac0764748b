# shm/: the shared-memory informer cache (arena, indexes, listers). See shm/arena.h.
LIBS         += shm
shm_SRCS     := shm/arena.c shm/index.c shm/reader.c
shm_LIBDEPS  :=
shm_TESTS    := shm/tests/test-arena.c
shm_SOAKS    :=
shm_BENCHES  :=
