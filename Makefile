# kcmd — top-level build.
#
# Every module directory carries a `module.mk` that only *declares* what it has; the rules live
# here, once. A module.mk may set (NAME is the module's short name, e.g. shm, ipc, kube):
#
#   LIBS        += NAME           a static library build/lib/libNAME.a
#   NAME_SRCS   := a.c b.c         its sources (paths from the top of the tree)
#   NAME_LIBDEPS := kube ipc       other kcmd libraries it uses (order does not matter)
#   NAME_TESTS  := x/tests/test-a.c  cmocka/standalone tests, each one program; run by `make unit`
#   NAME_SOAKS  := x/tests/soak-a.c  long runs; run by `make soak`
#   NAME_BENCHES := x/bench/bench-a.c benchmark programs; run by `make bench-NAME`
#   NAME_FUZZ   := x/fuzz/fuzz-a.c   libFuzzer targets (clang); `make fuzz` runs them
#   BINS        += PROG            an installed program build/bin/PROG
#   PROG_SRCS / PROG_LIBDEPS       as above
#   PROG_LDFLAGS                   extra link flags (e.g. the plug-in API's --dynamic-list)
#   GO_BINS     += PROG            a Go program build/bin/PROG, from the module in PROG_GODIR;
#                                  built only when the Go toolchain is on PATH (KCMD_NO_GO=1: never)
#   NAME_TEST_DEPS := files        built before NAME's tests (e.g. plug-in fixtures)
#
# A test program exits 0 on pass, 77 to skip, anything else fails (liburing's convention).
# Tests, benches and fuzzers of NAME link against libNAME and its LIBDEPS.

VERSION     := 0.1.0
PREFIX      ?= /usr/local
DESTDIR     ?=
BINDIR      ?= $(PREFIX)/bin
LIBDIR      ?= $(PREFIX)/lib
INCLUDEDIR  ?= $(PREFIX)/include
PKGCONFIGDIR ?= $(LIBDIR)/pkgconfig
UNITDIR     ?= $(PREFIX)/lib/systemd/system
CC          ?= cc
B           := build
BA          := build/asan
BP          := build/pic
PKGS        := libcurl libcjson liburing libsystemd cmocka yaml-0.1 libmicrohttpd gnutls

PKG_CFLAGS  := $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS    := $(shell pkg-config --libs $(PKGS) 2>/dev/null)
WARN        := -Wall -Wextra -Wshadow -Werror
BASE_CFLAGS := -std=c11 -D_GNU_SOURCE $(WARN) -g -I. -Iinclude -DKCMD_VERSION='"$(VERSION)"' $(PKG_CFLAGS)
CFLAGS      ?= -O2
ASAN_FLAGS  := -O1 -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
ASAN_LD     := -fsanitize=address,undefined
LDLIBS      := -Wl,--as-needed $(PKG_LIBS) -lpthread -lm

# A program that loads controller plug-ins exports the public API to them and links all of it
# (libkcmd below; PROG_LDFLAGS of kcmd, kcmd-dispatcher, kcmd-worker; kcapi in their LIBDEPS).
KCMD_PLUGIN_LDFLAGS := -Wl,--dynamic-list=lib/libkcmd.dynlist -Wl,--undefined=kcmd_api_abi

LIBS    :=
BINS    :=
GO_BINS :=
include $(sort $(wildcard */module.mk */*/module.mk))

# ---- derived lists --------------------------------------------------------------------------
obj       = $(patsubst %.c,$(1)/obj/%.o,$(2))
alltests  := $(foreach m,$(LIBS),$($(m)_TESTS))
allbench  := $(foreach m,$(LIBS),$($(m)_BENCHES))
allsoak   := $(foreach m,$(LIBS),$($(m)_SOAKS))
prog      = $(1)/t/$(basename $(2))

.PHONY: all deps unit asan e2e chaos conformance check run run-smoke bench soak fuzz fuzz-replay install clean cluster format lint \
	lint-selftest \
	$(addprefix bench-,kube shm ipc informer manager rs gc)
.DEFAULT_GOAL := all

all: $(addprefix $(B)/bin/,$(BINS))

# ---- compile --------------------------------------------------------------------------------
$(B)/obj/%.o: %.c
	@mkdir -p $(@D)
	$(CC) $(BASE_CFLAGS) $(CFLAGS) -MMD -MP -c $< -o $@
$(BA)/obj/%.o: %.c
	@mkdir -p $(@D)
	$(CC) $(BASE_CFLAGS) $(ASAN_FLAGS) -MMD -MP -c $< -o $@
$(BP)/obj/%.o: %.c
	@mkdir -p $(@D)
	$(CC) $(BASE_CFLAGS) $(CFLAGS) -fPIC -MMD -MP -c $< -o $@

# Transitive closure of library dependencies (five applications of the expansion: deeper than
# the deepest chain of this tree, kcmd-worker -> registry -> gchandlers -> informer -> kcdispatch).
libclose1 = $(sort $(1) $(foreach d,$(1),$($(d)_LIBDEPS)))
libclose  = $(call libclose1,$(call libclose1,$(call libclose1,$(call libclose1,$(call libclose1,$(1))))))
# The libraries a program needs; they are linked as one group, so their order does not matter.
linkorder = $(call libclose,$(1))
linkargs  = $(filter-out %.a,$(1)) -Wl,--start-group $(filter %.a,$(1)) -Wl,--end-group

define lib_template
$(B)/lib/lib$(1).a: $(call obj,$(B),$($(1)_SRCS))
	@mkdir -p $$(@D)
	rm -f $$@ && ar rcs $$@ $$^
$(BA)/lib/lib$(1).a: $(call obj,$(BA),$($(1)_SRCS))
	@mkdir -p $$(@D)
	rm -f $$@ && ar rcs $$@ $$^
endef
$(foreach m,$(LIBS),$(eval $(call lib_template,$(m))))

# $(1)=module $(2)=program source $(3)=build root $(4)=extra flags
define test_template
$(call prog,$(3),$(2)): $(call obj,$(3),$(2)) $(foreach l,$(call linkorder,$(1)),$(3)/lib/lib$(l).a) | $($(1)_TEST_DEPS)
	@mkdir -p $$(@D)
	$(CC) $(4) -o $$@ $$(call linkargs,$$^) $(LDLIBS)
endef
$(foreach m,$(LIBS),$(foreach t,$($(m)_TESTS) $($(m)_SOAKS) $($(m)_BENCHES),\
	$(eval $(call test_template,$(m),$(t),$(B),))))
$(foreach m,$(LIBS),$(foreach t,$($(m)_TESTS),\
	$(eval $(call test_template,$(m),$(t),$(BA),$$(ASAN_LD)))))

define bin_template
$(B)/bin/$(1): $(call obj,$(B),$($(1)_SRCS)) $(foreach l,$(call linkorder,$($(1)_LIBDEPS)),$(B)/lib/lib$(l).a)
	@mkdir -p $$(@D)
	$(CC) $($(1)_LDFLAGS) -o $$@ $$(call linkargs,$$^) $(LDLIBS)
endef
$(foreach p,$(BINS),$(eval $(call bin_template,$(p))))

# Go programs (GO_BINS): the same build flags as tests/cluster/build.sh's, so the Go build cache
# of the test cluster serves them. Without Go they are not built, and what needs them says so
# when it runs (e.g. workers/vapstatus: docs/vapstatus.md).
GO ?= $(shell command -v go 2>/dev/null)
GO_BINS_BUILT :=
ifneq ($(GO),)
ifneq ($(KCMD_NO_GO),1)
GO_BINS_BUILT := $(GO_BINS)
define gobin_template
$(B)/bin/$(1): $(wildcard $($(1)_GODIR)/*.go) $($(1)_GODIR)/go.mod $($(1)_GODIR)/go.sum
	@mkdir -p $$(@D)
	cd $($(1)_GODIR) && CGO_ENABLED=0 $(GO) build -ldflags "-s -w" -o $$(abspath $$@).partial . && mv $$(abspath $$@).partial $$(abspath $$@)
endef
$(foreach p,$(GO_BINS),$(eval $(call gobin_template,$(p))))
all: $(addprefix $(B)/bin/,$(GO_BINS))
endif
endif

# ---- libkcmd: the public controller API as a shared library (docs/writing-a-controller.md) ----
# An out-of-tree controller links it (pkg-config kcmd). Its soname's major is the controller
# ABI (include/kcmd/controller.h, KCMD_CONTROLLER_ABI): a plug-in built for another ABI neither
# links nor loads. Built from position-independent copies of the modules the API functions
# (library kcapi) use, exporting only the API (lib/libkcmd.map); kcmd's own programs export the
# same functions (lib/libkcmd.dynlist, PROG_LDFLAGS) so a loaded plug-in binds to the program's.
KCMD_ABI     := $(shell sed -n 's/^\#define KCMD_CONTROLLER_ABI \([0-9]*\)u.*/\1/p' include/kcmd/controller.h)
LIBKCMD      := $(B)/lib/libkcmd.so.$(KCMD_ABI)
LIBKCMD_SRCS := $(sort $(foreach l,$(call libclose,kcapi),$($(l)_SRCS)))
$(LIBKCMD): $(call obj,$(BP),$(LIBKCMD_SRCS)) lib/libkcmd.map
	@mkdir -p $(@D)
	$(CC) -shared -Wl,-soname,libkcmd.so.$(KCMD_ABI) -Wl,--version-script=lib/libkcmd.map \
		-Wl,--no-undefined -o $@ $(filter %.o,$^) $(LDLIBS)
	ln -sf libkcmd.so.$(KCMD_ABI) $(B)/lib/libkcmd.so
all: $(LIBKCMD)

-include $(shell find $(B) -name '*.d' 2>/dev/null)

# ---- dependencies ---------------------------------------------------------------------------
# Installs the Debian packages and checks Go; idempotent and quiet when all is present.
deps:
	@tests/deps.sh

# ---- tests ----------------------------------------------------------------------------------
UNIT_PROGS := $(foreach t,$(alltests),$(call prog,$(B),$(t)))
ASAN_PROGS := $(foreach t,$(alltests),$(call prog,$(BA),$(t)))

# DOC_TESTS: the man pages and /etc/default/kcmd against `kcmd --help` and kcmctl's usage.
DOC_TESTS  := tests/packaging/test-docs.py
unit: deps $(UNIT_PROGS) $(B)/bin/kcmd $(B)/bin/kcmctl
	@tests/run-tests.sh unit $(UNIT_PROGS) $(LINT_TESTS) $(DOC_TESTS)

asan: deps $(ASAN_PROGS)
	@ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
		tests/run-tests.sh asan $(ASAN_PROGS)

soak: deps $(foreach t,$(allsoak),$(call prog,$(B),$(t)))
	@tests/run-tests.sh soak $(foreach t,$(allsoak),$(call prog,$(B),$(t)))

# The e2e tests are Go tests (client-go) in the tests/cluster module. RUN=<regex> selects tests.
RUN ?=
e2e: deps all $(B)/t/kube/tests/e2e-kube $(B)/t/informerd/tests/e2e-informer $(B)/t/kube/tests/test-deephash
	@KCMD_BIN_DIR=$(CURDIR)/$(B)/bin tests/cluster/run-e2e.sh $(if $(RUN),-run '$(RUN)')

# The chaos suite (tests/cluster/e2e/chaos_test.go): TestChaos for CHAOS_DURATION of churn under
# kill -9, transport faults, apiserver/etcd restarts, 429 storms and failovers. `make e2e` runs
# the same test for 45 s; figures in docs/reliability.md.
CHAOS_DURATION ?= 10m
chaos: deps all
	@KCMD_CHAOS_DURATION=$(CHAOS_DURATION) KCMD_BIN_DIR=$(CURDIR)/$(B)/bin tests/cluster/run-e2e.sh -run 'TestChaos'

# Opt-in, not part of check: upstream's e2e.test (built once into the cluster cache) against the
# test cluster with upstream kcm, then with kcmd alone; prints both pass counts and the tests that
# differ and rewrites the results in docs/conformance.md. See docs/conformance.md.
conformance: deps all
	@KCMD_CONFORMANCE_UPDATE_DOC=1 KCMD_BIN_DIR=$(CURDIR)/$(B)/bin tests/cluster/conformance/run.sh

# tests/run-check.sh runs the steps, each a sub-make: lint, unit with asan then fuzz-replay
# beside it (their programs mostly wait; asan's lines are printed after unit's), then run-smoke,
# then e2e with the CPUs to itself; a `check:` line gives each step's wall time. The builds
# inside each tier still run in parallel under -j. deps runs first in its own step so the
# sub-makes see the pkg-config flags of freshly installed packages.
check:
	@tests/deps.sh
	@MAKE='$(MAKE)' CHECK_LINT_RULES='$(CHECK_LINT_RULES)' tests/run-check.sh

run:
	@tests/deps.sh
	$(MAKE) all
	@KCMD_BIN_DIR=$(CURDIR)/$(B)/bin tests/run-demo.sh

# `make run`'s demo, non-interactive, each step with a deadline (part of check; ~30 s).
run-smoke: deps all
	@KCMD_BIN_DIR=$(CURDIR)/$(B)/bin tests/run-demo.sh --smoke

cluster: deps
	@tests/cluster/build.sh

# ---- benchmarks -----------------------------------------------------------------------------
# Each area's bench programs print `bench: <name> <value> <unit>` lines; tests/bench-json.sh
# keeps them on stdout and writes build/bench/<area>.json.
BENCH_AREAS := kube shm ipc informer manager rs gc kubeletsim
# An area may also name scripts (NAME_BENCH_SCRIPTS), e.g. Go benchmarks against the real cluster.
define bench_area_template
bench-$(1): deps all $(foreach t,$($(1)_BENCHES),$(call prog,$(B),$(t)))
	@KCMD_BIN_DIR=$(CURDIR)/$(B)/bin tests/bench-json.sh $(1) $(foreach t,$($(1)_BENCHES),$(call prog,$(B),$(t))) $($(1)_BENCH_SCRIPTS)
endef
$(foreach a,$(BENCH_AREAS),$(eval $(call bench_area_template,$(a))))

bench: $(addprefix bench-,$(BENCH_AREAS))

# `kcmd bench` default comparison (docs/bench.md): the load workload on a private test cluster,
# kcmd vs upstream kube-controller-manager at kcm's default client limits and with limits lifted;
# writes $(B)/bench/load.json, the plots, and the kcmd bench section of docs/benchmarks.md.
# Installs gnuplot-nox for the plots when missing (the plots are skipped if that fails).
BENCH_COMPARE_ARGS ?= --workload=load --target-pods=2000 --unlimited
.PHONY: bench-compare
bench-compare: deps all
	@command -v gnuplot >/dev/null 2>&1 || { $(if $(filter 0,$(shell id -u)),,sudo) apt-get install -y -q gnuplot-nox >/dev/null 2>&1 || echo "bench-compare: gnuplot not installed; plots skipped"; }
	$(B)/bin/kcmd bench $(BENCH_COMPARE_ARGS) --plot --output=$(B)/bench/load.json --update-doc=docs/benchmarks.md

# `kcmd bench` workloads of the workload controllers (issue 16; docs/bench.md): deployments, jobs,
# daemonsets, kcmd vs upstream kcm in one run each, limits lifted. bench-workloads-short: small
# sizes (about 1.5 min each on the 2-vCPU VM), JSON in $(B)/bench/<workload>-short.json, docs
# untouched; bench-workloads: issue 16's sizes (1,000 Deployments x 10, 10,000 completions, 1,000
# nodes), which update docs/benchmarks.md. Neither is part of `make check`. Run them under
# `flock /tmp/kcmd-e2e.lock` on a shared machine.
BENCH_WL_SHORT_ARGS ?= --raw-pods=200 --phase-timeout=300
BENCH_WL_ARGS       ?= --phase-timeout=1800
.PHONY: bench-workloads-short bench-workloads
bench-workloads-short: deps all
	$(B)/bin/kcmd bench --workload=deployments --deployments=50 $(BENCH_WL_SHORT_ARGS) --output=$(B)/bench/deployments-short.json
	$(B)/bin/kcmd bench --workload=jobs --completions=500 $(BENCH_WL_SHORT_ARGS) --output=$(B)/bench/jobs-short.json
	$(B)/bin/kcmd bench --workload=daemonsets --nodes=50 $(BENCH_WL_SHORT_ARGS) --output=$(B)/bench/daemonsets-short.json
# issue 19: every controller (kubeadm's flags) on a cl2-"load"-shaped mix, kcmd alone then
# upstream kcm alone. bench-cluster-short: a few objects (JSON only); bench-cluster: the default
# size (about 8 min on the 2-vCPU VM), plots, docs/benchmarks.md updated. Not in `make check`; run
# under `flock /tmp/kcmd-e2e.lock` on a shared machine.
BENCH_CLUSTER_SHORT_ARGS ?= --deployments=6 --replicas=3 --completions=20 --namespaces=3 \
			    --nodes=10 --node-churn=3 --raw-pods=0 --phase-timeout=120
.PHONY: bench-cluster-short bench-cluster
bench-cluster-short: deps all
	$(B)/bin/kcmd bench --workload=cluster $(BENCH_CLUSTER_SHORT_ARGS) --output=$(B)/bench/cluster-short.json
bench-cluster: deps all
	$(B)/bin/kcmd bench --workload=cluster --phase-timeout=600 --plot --output=$(B)/bench/cluster.json --update-doc=docs/benchmarks.md
# issue 23: `kcmd bench --shards`: the load workload with 1, 2 (4) kcmd instances sharing the
# controllers (--shard-ranges=32), per instance CPU-seconds, PSS, keys and ranges, and the
# failover of one. bench-shards-short: 300 pods, N=1,2, 8 ranges, 6 s leases, no upstream pass
# (JSON only);
# bench-shards: N=1,2,4 and upstream kcm, docs/benchmarks.md updated (~10 min). Not in `make
# check`; run under `flock /tmp/kcmd-e2e.lock`.
BENCH_SHARDS_SHORT_ARGS ?= --shards=1,2 --target-pods=300 --namespaces=40 --lease-duration=6 \
			   --shard-ranges=8 --compare-upstream=false --phase-timeout=180
.PHONY: bench-shards-short bench-shards
bench-shards-short: deps all
	$(B)/bin/kcmd bench $(BENCH_SHARDS_SHORT_ARGS) --output=$(B)/bench/shards-short.json
bench-shards: deps all
	$(B)/bin/kcmd bench --shards=1,2,4 --target-pods=1000 --phase-timeout=300 --output=$(B)/bench/shards.json --update-doc=docs/benchmarks.md
bench-workloads: deps all
	$(B)/bin/kcmd bench --workload=deployments $(BENCH_WL_ARGS) --output=$(B)/bench/deployments.json --update-doc=docs/benchmarks.md
	$(B)/bin/kcmd bench --workload=jobs $(BENCH_WL_ARGS) --output=$(B)/bench/jobs.json --update-doc=docs/benchmarks.md
	$(B)/bin/kcmd bench --workload=daemonsets $(BENCH_WL_ARGS) --output=$(B)/bench/daemonsets.json --update-doc=docs/benchmarks.md
# Issue 17's cluster-controller figures, the same way: bench-ns-eps-short (10 namespaces x 50
# objects; 20 Services x 20 pods), bench-ns-eps (the issue's sizes: 100 namespaces x 200
# objects; 1,000 Services x 100 pods), which updates docs/benchmarks.md.
.PHONY: bench-ns-eps-short bench-ns-eps
bench-ns-eps-short: deps all
	$(B)/bin/kcmd bench --workload=namespaces --namespaces=10 --objects-per-namespace=50 $(BENCH_WL_SHORT_ARGS) --output=$(B)/bench/namespaces-short.json
	$(B)/bin/kcmd bench --workload=endpointslices --services=20 --pods-per-service=20 $(BENCH_WL_SHORT_ARGS) --output=$(B)/bench/endpointslices-short.json
bench-ns-eps: deps all
	$(B)/bin/kcmd bench --workload=namespaces $(BENCH_WL_ARGS) --output=$(B)/bench/namespaces.json --update-doc=docs/benchmarks.md
	$(B)/bin/kcmd bench --workload=endpointslices $(BENCH_WL_ARGS) --output=$(B)/bench/endpointslices.json --update-doc=docs/benchmarks.md

# Issue 20's request-path figure: kcmd's CPU per API request (kube/bench/bench-requests.c)
# beside client-go's, configured as kube-controller-manager's clients
# (tests/cluster/cmd/reqbench), on one private test cluster, twice in alternating order.
# Not in `make check`; run under `flock /tmp/kcmd-e2e.lock`. BENCH_REQ_N pods per shape.
BENCH_REQ_N ?= 1000
.PHONY: bench-requests
bench-requests: deps all $(call prog,$(B),kube/bench/bench-requests.c)
	@B=$(CURDIR)/$(B) tests/cluster/bench-requests.sh $(BENCH_REQ_N)

# Issue 18's node-failure figure (docs/bench.md "nodefailure"): one zone of nodes stops
# heartbeating, time to taint, eviction rate, CPU and memory, kcmd vs upstream kcm in one run.
# bench-nodefailure-short: 100 nodes x 5 pods in 2 zones (JSON only, docs untouched);
# bench-nodefailure: the issue's 1,000 nodes x 50 pods in 10 zones, updating docs/benchmarks.md.
# Not in `make check`; run under `flock /tmp/kcmd-e2e.lock`.
BENCH_NF_SHORT_ARGS ?= --nodes=100 --pods-per-node=5 --zones=2 --raw-pods=0 --phase-timeout=300
BENCH_NF_ARGS       ?= --raw-pods=0 --phase-timeout=1800
.PHONY: bench-nodefailure-short bench-nodefailure
bench-nodefailure-short: deps all
	$(B)/bin/kcmd bench --workload=nodefailure $(BENCH_NF_SHORT_ARGS) --output=$(B)/bench/nodefailure-short.json
bench-nodefailure: deps all
	$(B)/bin/kcmd bench --workload=nodefailure $(BENCH_NF_ARGS) --output=$(B)/bench/nodefailure.json --update-doc=docs/benchmarks.md

# ---- fuzzing (clang libFuzzer) ----------------------------------------------------------------
# A fuzz target is linked from its module's sources (and their dependencies'), every one compiled
# instrumented (-fsanitize=fuzzer-no-link plus ASan/UBSan) into build/fuzz/obj once and shared by
# the targets, so a changed file is compiled once, not once per target, and -j compiles in
# parallel. Corpora live in <dir>/fuzz/corpus/<target without fuzz->/. `make fuzz` runs each
# target for FUZZ_SECONDS; `make fuzz-replay` (part of check) runs each over its corpus once.
BF           := build/fuzz
FUZZ_SECONDS ?= 60
FUZZ_SAN     := -fsanitize=address,undefined -fno-sanitize-recover=all
FUZZ_CFLAGS  := -O1 -g -fsanitize=fuzzer-no-link $(FUZZ_SAN)
FUZZ_FLAGS   := -O1 -g -fsanitize=fuzzer $(FUZZ_SAN)
allfuzz      := $(foreach m,$(LIBS),$($(m)_FUZZ))
FUZZ_PROGS   := $(foreach f,$(allfuzz),$(call prog,$(BF),$(f)))
fuzzobj       = $(patsubst %.c,$(BF)/obj/%.o,$(1))
$(BF)/obj/%.o: %.c
	@mkdir -p $(@D)
	clang $(BASE_CFLAGS) -Wno-unused-command-line-argument $(FUZZ_CFLAGS) -MMD -MP -c $< -o $@
define fuzz_template
$(call prog,$(BF),$(2)): $(call fuzzobj,$(2) $(foreach l,$(call libclose,$(1)),$($(l)_SRCS)))
	@mkdir -p $$(@D)
	clang $(FUZZ_FLAGS) -o $$@ $$^ $(LDLIBS)
endef
$(foreach m,$(LIBS),$(foreach f,$($(m)_FUZZ),$(eval $(call fuzz_template,$(m),$(f)))))

fuzz: deps $(FUZZ_PROGS)
	@tests/run-fuzz.sh run $(FUZZ_SECONDS) $(allfuzz)

fuzz-replay: deps $(FUZZ_PROGS)
	@tests/run-fuzz.sh replay 0 $(allfuzz)

# ---- install --------------------------------------------------------------------------------
install: all
	install -d $(DESTDIR)$(BINDIR)
	$(if $(BINS),install -m 0755 $(addprefix $(B)/bin/,$(BINS)) $(DESTDIR)$(BINDIR)/)
	$(if $(GO_BINS_BUILT),install -m 0755 $(addprefix $(B)/bin/,$(GO_BINS_BUILT)) $(DESTDIR)$(BINDIR)/)
	install -d $(DESTDIR)$(UNITDIR) $(DESTDIR)$(PREFIX)/share/bash-completion/completions
	install -m 0644 packaging/completion/kcmd.bash $(DESTDIR)$(PREFIX)/share/bash-completion/completions/kcmd
	ln -sf kcmd $(DESTDIR)$(PREFIX)/share/bash-completion/completions/kcmctl
	# The unit names /usr/bin/kcmd (the package's path); point it at this install's BINDIR.
	$(foreach u,$(wildcard packaging/*.service),sed 's|/usr/bin/kcmd|$(BINDIR)/kcmd|g' $(u) > $(DESTDIR)$(UNITDIR)/$(notdir $(u)) && chmod 0644 $(DESTDIR)$(UNITDIR)/$(notdir $(u));)
	# the controller API for out-of-tree controllers: headers, libkcmd, kcmd.pc
	install -d $(DESTDIR)$(INCLUDEDIR)/kcmd $(DESTDIR)$(LIBDIR) $(DESTDIR)$(PKGCONFIGDIR)
	install -m 0644 $(wildcard include/kcmd/*.h) $(DESTDIR)$(INCLUDEDIR)/kcmd/
	install -m 0755 $(LIBKCMD) $(DESTDIR)$(LIBDIR)/
	ln -sf libkcmd.so.$(KCMD_ABI) $(DESTDIR)$(LIBDIR)/libkcmd.so
	# kcmd.pc names this install's directories (PREFIX, LIBDIR, INCLUDEDIR; not DESTDIR)
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(LIBDIR)|' -e 's|@INCLUDEDIR@|$(INCLUDEDIR)|' \
		-e 's|@VERSION@|$(VERSION)|' lib/kcmd.pc.in > $(DESTDIR)$(PKGCONFIGDIR)/kcmd.pc
	chmod 0644 $(DESTDIR)$(PKGCONFIGDIR)/kcmd.pc

# ---- house rules (tools/lint/lint.py; docs/testing.md) ----------------------------------------
# `make lint` checks clang-format, the SPDX line, the include layers and that only the controller
# registry names controllers; LINT_RULES=format,spdx (or any subset) selects rules. Its negative
# test (LINT_TESTS) runs in `make unit`. `make format` fixes what can be fixed mechanically.
LINT_TESTS := tools/lint/tests/test-lint.py
# The rules `make check` enforces.
CHECK_LINT_RULES ?= format,spdx,layers,names
lint:
	@tools/lint/lint.py

lint-selftest:
	@tests/run-tests.sh lint $(LINT_TESTS)

format:
	tools/lint/lint.py --fix --rules=format,spdx

clean:
	rm -rf $(B)

# ---- Debian package (packaging/debian/) -------------------------------------------------------
# `make deb` builds build/deb/kcmd_$(VERSION)_<arch>.deb from a copy of the tree (packaging/debian
# becomes debian/) made in a temporary directory outside build/ (the .d dependency files and the
# *.d directories of a package tree must not reach this Makefile's -include), then runs lintian
# (overrides and their reasons: packaging/debian/).
# The Go helper kcmd-vapcheck is built here, in the source tree, before dpkg-buildpackage (it needs
# Go modules through the Go proxy, which a package build must not fetch), and handed to
# debian/rules as prebuilt/kcmd-vapcheck; without Go `make deb` stops and says so.
# `make test-packaging` (slow, not part of check) builds it and checks the installed package.
.PHONY: deb test-packaging
deb: deps
	@test -n "$(GO)" || { echo "make deb: Go is needed to build kcmd-vapcheck (not found on PATH)" >&2; exit 1; }
	+$(MAKE) $(B)/bin/kcmd-vapcheck
	+@set -e; tmp=$$(mktemp -d "$${TMPDIR:-/tmp}/kcmd-deb.XXXXXX"); trap 'rm -rf "$$tmp"' EXIT; \
	src=$$tmp/kcmd-$(VERSION); mkdir -p "$$src" $(B)/deb; \
	tar -cf - --exclude=./build --exclude=./.git . | tar -xf - -C "$$src"; \
	cp -a packaging/debian "$$src/debian"; \
	mkdir -p "$$src/prebuilt"; cp $(B)/bin/kcmd-vapcheck "$$src/prebuilt/kcmd-vapcheck"; \
	(cd "$$src" && dpkg-buildpackage -us -uc -b); \
	rm -f $(B)/deb/kcmd*_$(VERSION)_*; mv "$$tmp"/kcmd*_$(VERSION)_* $(B)/deb/
	lintian --info --fail-on error,warning $(B)/deb/kcmd_$(VERSION)_*.changes

test-packaging:
	+@tests/packaging/test-deb.sh
