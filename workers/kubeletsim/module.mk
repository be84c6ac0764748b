# workers/kubeletsim/: the kubelet simulator for benchmarks (docs/bench.md "Kubelet simulator"):
# the process (run.c, entered from kcmd-worker --controller=kubelet-simulator), its pure
# decisions and bodies (sim.c), the fake Node setup (nodes.c, also used by the manager's
# refusal check) and its informerd handler table (table.c, linked into kcmd-informerd).
LIBS               += kubeletsim
kubeletsim_SRCS    := workers/kubeletsim/sim.c workers/kubeletsim/nodes.c workers/kubeletsim/table.c \
		      workers/kubeletsim/run.c
kubeletsim_LIBDEPS := kube shm ipc kubeloop kclog kcflag informer kcdispatch
kubeletsim_TESTS   := workers/kubeletsim/tests/test-kubeletsim.c
kubeletsim_BENCH_SCRIPTS := tests/cluster/bench-kubeletsim.sh
# The registry (controllers/module.mk) links the descriptor and the library.
REGISTRY_PLUGIN_SRCS     += workers/kubeletsim/plugin.c
REGISTRY_CONTROLLER_LIBS += kubeletsim
