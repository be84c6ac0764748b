# workers/vapstatus/: kcm's validatingadmissionpolicy-status-controller (docs/vapstatus.md): the
# CEL expressions of ValidatingAdmissionPolicies type-checked, the warnings written to their
# status. The pure parts in vapstatus.c; handlers, sync, the type checker child and the
# descriptor in plugin.c (linked through the registry). The type checker itself is Go
# (vapcheck/: upstream's checker over cel-go), built into build/bin/kcmd-vapcheck when the Go
# toolchain is present (GO_BINS, Makefile).
LIBS               += vapstatus
vapstatus_SRCS     := workers/vapstatus/vapstatus.c
vapstatus_LIBDEPS  := kube
vapstatus_TESTS    := workers/vapstatus/tests/test-vapstatus.c
REGISTRY_PLUGIN_SRCS     += workers/vapstatus/plugin.c
REGISTRY_CONTROLLER_LIBS += vapstatus
GO_BINS            += kcmd-vapcheck
kcmd-vapcheck_GODIR := workers/vapstatus/vapcheck
