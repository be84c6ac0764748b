# controllers/: the registry, the one table of this build's controllers (kcmd/controller.h).
# Each controller lives in its own folder (workers/<name>/) with a plugin.c holding its
# descriptor; linking the registry links every controller.
LIBS              += registry
# Each controller's own module.mk adds its descriptor (REGISTRY_PLUGIN_SRCS += .../plugin.c) and
# its library (REGISTRY_CONTROLLER_LIBS += name): adding a controller touches its folder and one
# line of registry.c. Recursive (=) on purpose: the controllers' module.mk files are read after
# this one.
registry_SRCS     = controllers/registry.c controllers/kcm-compat.c controllers/kcm-controllers.c \
                    $(REGISTRY_PLUGIN_SRCS)
registry_LIBDEPS  = kcflag kcmetrics $(REGISTRY_CONTROLLER_LIBS) kube shm ipc kclog kcfeat kcdispatch
registry_TESTS    := controllers/tests/test-registry.c

# The loader's test (--controller-plugins, registry.h) loads plug-in fixtures built from one
# source with different macros: a good one, a second good one (another name), one without the
# symbol, one for another ABI, one with a duplicate name, one declaring an in-tree flag with
# another default and one with the same (accepted), one with an unresolved symbol.
registry_TESTS    += controllers/tests/test-plugins.c
PLUGIN_FIXTURE_SRC := controllers/tests/plugins/good.c
PLUGIN_FIXTURES   := good good2 nosym badabi dupname dupflag sameflag undef
fixture_good      := -DFIXTURE_NAME='"test-plugin-controller"' -DFIXTURE_QUEUE='"test-plugin"' -DFIXTURE_FLAG='"test-plugin-syncs"' -DFIXTURE_ABI=KCMD_CONTROLLER_ABI
fixture_good2     := -DFIXTURE_NAME='"test-plugin2-controller"' -DFIXTURE_QUEUE='"test-plugin2"' -DFIXTURE_FLAG='"test-plugin2-syncs"' -DFIXTURE_ABI=KCMD_CONTROLLER_ABI
fixture_nosym     := $(fixture_good) -DFIXTURE_NO_SYMBOL
fixture_badabi    := -DFIXTURE_NAME='"test-plugin3-controller"' -DFIXTURE_QUEUE='"test-plugin3"' -DFIXTURE_FLAG='"test-plugin3-syncs"' -DFIXTURE_ABI='(KCMD_CONTROLLER_ABI + 1)'
fixture_dupname   := -DFIXTURE_NAME='"test-plugin-controller"' -DFIXTURE_QUEUE='"test-plugin4"' -DFIXTURE_FLAG='"test-plugin4-syncs"' -DFIXTURE_ABI=KCMD_CONTROLLER_ABI
fixture_dupflag   := -DFIXTURE_NAME='"test-plugin5-controller"' -DFIXTURE_QUEUE='"test-plugin5"' -DFIXTURE_FLAG='"concurrent-replicaset-syncs"' -DFIXTURE_ABI=KCMD_CONTROLLER_ABI
fixture_sameflag  := -DFIXTURE_NAME='"test-plugin7-controller"' -DFIXTURE_QUEUE='"test-plugin7"' -DFIXTURE_FLAG='"concurrent-replicaset-syncs"' -DFIXTURE_FLAG_DEF='"5"' -DFIXTURE_ABI=KCMD_CONTROLLER_ABI
fixture_undef     := -DFIXTURE_NAME='"test-plugin6-controller"' -DFIXTURE_QUEUE='"test-plugin6"' -DFIXTURE_FLAG='"test-plugin6-syncs"' -DFIXTURE_ABI=KCMD_CONTROLLER_ABI -DFIXTURE_UNDEFINED
registry_TEST_DEPS := $(foreach r,$(B) $(BA),$(foreach f,$(PLUGIN_FIXTURES),$(r)/t/controllers/tests/plugins/$(f).so))
define plugin_fixture_template
$(1)/t/controllers/tests/plugins/$(2).so: $(PLUGIN_FIXTURE_SRC) include/kcmd/controller.h
	@mkdir -p $$(@D)
	$$(CC) -std=c11 -Wall -Wextra -Werror -Iinclude -fPIC -shared $(fixture_$(2)) -o $$@ $$<
endef
$(foreach r,$(B) $(BA),$(foreach f,$(PLUGIN_FIXTURES),$(eval $(call plugin_fixture_template,$(r),$(f)))))
