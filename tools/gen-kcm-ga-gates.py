#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Writes lib/kcm-ga-gates.c: the feature gates kube-controller-manager v1.37 knows as GA (with
their default and whether they are locked to it). kcm's --help does not list GA gates, so
tools/gen-kcm-catalogue.py cannot see them; kcm still accepts them in --feature-gates (with a
warning), and refuses a locked one set away from its default. Read from the versioned feature
specs of the Go module cache of the test cluster's build:

    tools/gen-kcm-ga-gates.py ~/go/pkg/mod/k8s.io/kubernetes@v1.37.2/pkg/features/kube_features.go \\
        ~/go/pkg/mod/k8s.io/apiserver@v0.37.2/pkg/features/kube_features.go > lib/kcm-ga-gates.c
"""
import re
import sys

MINOR = 37
gates = {}
for path in sys.argv[1:]:
    text = open(path).read()
    for m in re.finditer(r"\n\t(\w+): \{\n((?:\t\t\{Version:[^\n]*\n)+)\t\}", text):
        best = None
        for e in re.finditer(r'\{Version: version\.MustParse\("1\.(\d+)"\), Default: (true|false), '
                             r"PreRelease: featuregate\.(\w+)(?:, LockToDefault: (true|false))?",
                             m.group(2)):
            v = int(e.group(1))
            if v <= MINOR and (best is None or v >= best[0]):
                best = (v, e.group(2) == "true", e.group(3), e.group(4) == "true")
        if best and best[2] == "GA":
            gates[m.group(1)] = best
print("/* SPDX-License-Identifier: Apache-2.0 */")
print("/* lib/kcm-ga-gates.c: written by tools/gen-kcm-ga-gates.py; do not edit. kcm v1.37's GA")
print(" * feature gates (kcm-catalogue.h). */")
print('#include "lib/kcm-catalogue.h"')
print()
print("/* clang-format off */")
print("const struct kcm_ga_gate kcm_ga_gates[] = {")
for name, (_, d, _, lock) in sorted(gates.items()):
    print(f'        {{"{name}", {"true" if d else "false"}, {"true" if lock else "false"}}},')
print("};")
print("/* clang-format on */")
print("const size_t kcm_ga_gates_n = sizeof(kcm_ga_gates) / sizeof(kcm_ga_gates[0]);")
