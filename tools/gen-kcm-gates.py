#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Writes lib/kcm-gates.c: every feature gate kube-controller-manager v1.37 registers with every
versioned spec its sources list (version, min compatibility version, stage, default, locked to
the default) and the gates it depends on; lib/features.c resolves a gate at the emulation and
min compatibility versions in force as component-base does.

kcm's --help lists only the alpha and beta gates (tools/gen-kcm-catalogue.py); its flag accepts
every registered gate, so the table is read from the Go sources that register them, in the
module cache of the test cluster's build (k8s.io/kubernetes v1.37.2 and its staging modules):

    M=~/go/pkg/mod/k8s.io
    tools/gen-kcm-gates.py $M/kubernetes@v1.37.2/pkg/features/kube_features.go \\
        $M/apiserver@v0.37.2/pkg/features/kube_features.go \\
        $M/apiextensions-apiserver@v0.37.2/pkg/features/kube_features.go \\
        $M/client-go@v0.37.2/features/known_features.go \\
        $M/controller-manager@v0.37.2/pkg/features/kube_features.go \\
        $M/component-base@v0.37.2/logs/api/v1/kube_features.go \\
        $M/component-base@v0.37.2/metrics/features/kube_features.go \\
        $M/component-base@v0.37.2/zpages/features/kube_features.go > lib/kcm-gates.c

(kcm's binary registers exactly these: pkg/features and the apiserver/apiextensions packages by
their init, client-go's through pkg/features' adapter, logs and metrics in kcm's own init, zpages
by pkg/features.) Every file is read for its `map[...]VersionedSpecs{...}` literals and, in
pkg/features, the dependency map; a gate registered twice must carry the same specs.

Each entry's min compatibility version is stored completed, as component-base's AddVersioned
does (an entry without one takes the previous entry's). With --audit (anywhere in the
arguments) it prints instead every gate whose (stage, default, locked) at emulation 1.34, 1.35,
1.36 (at kcm's default min compatibility) or at min compatibility 1.37 differs from 1.37's: the
input of the audit table in docs/manager.md ("Emulation versions").
"""
import re
import sys

EMULATED = (1, 37)
MIN_COMPAT = (1, 36)  # kcm's default: the emulated version minus one minor
FLOOR = (1, 34)  # the lowest emulation/min compatibility version kcm v1.37 takes
STAGES = {"Alpha": "ALPHA", "Beta": "BETA", "GA": "GA", "Deprecated": "DEPRECATED"}


def block(text, start):
    """The text between the brace at `start` and its match."""
    depth = 0
    for i in range(start, len(text)):
        if text[i] == "{":
            depth += 1
        elif text[i] == "}":
            depth -= 1
            if depth == 0:
                return text[start + 1:i]
    raise SystemExit("unbalanced braces")


def entries(body):
    """(key, value-body) of a map literal body `Key: {...},`."""
    body = re.sub(r"//[^\n]*", "", body)
    i = 0
    while True:
        m = re.compile(r"([\w.]+(?:\([\w.]+\))?)\s*:\s*\{").search(body, i)
        if not m:
            return
        inner = block(body, m.end() - 1)
        yield m.group(1), inner
        i = m.end() - 1 + len(inner) + 2


def ident(key):
    """The Go identifier of a map key (pkg.Name, featuregate.Feature(pkg.Name))."""
    m = re.fullmatch(r"(?:[\w.]+\()?(?:\w+\.)?(\w+)\)?", key)
    if not m:
        raise SystemExit("cannot read key %r" % key)
    return m.group(1)


def ver(s):
    a, b = s.split(".")
    return (int(a), int(b))


AUDIT = "--audit" in sys.argv[1:]
paths = [a for a in sys.argv[1:] if a != "--audit"]
consts, specs, deps = {}, {}, {}
texts = [open(p).read() for p in paths]
for text in texts:
    for m in re.finditer(r'\b(\w+)\s+(?:(?:featuregate\.)?Feature\s*)?=\s*(?:featuregate\.Feature\()?"(\w+)"', text):
        consts[m.group(1)] = m.group(2)
for path, text in zip(paths, texts):
    for m in re.finditer(r"map\[(?:featuregate\.)?Feature\](?:featuregate\.)?VersionedSpecs\{", text):
        for key, inner in entries(text[m.end() - 1:m.end() - 1 + len(block(text, m.end() - 1)) + 2]
                                  [1:-1]):
            name = consts.get(ident(key))
            if name is None:
                raise SystemExit("%s: no constant for %s" % (path, key))
            vs = []
            for s in re.finditer(r"\{([^{}]*)\}", inner):
                f = dict(re.findall(r"(\w+):\s*([^,]+?)\s*(?:,|$)", s.group(1)))
                v = re.search(r'"(\d+\.\d+)"', f["Version"])
                mc = re.search(r'"(\d+\.\d+)"', f.get("MinCompatibilityVersion", ""))
                vs.append((ver(v.group(1)), f["Default"] == "true",
                           STAGES[f["PreRelease"].split(".")[-1]],
                           f.get("LockToDefault") == "true", ver(mc.group(1)) if mc else None))
            if name in specs and specs[name] != vs:
                raise SystemExit("%s: %s registered twice with different specs" % (path, name))
            specs[name] = vs
    m = re.search(r"map\[featuregate\.Feature\]\[\]featuregate\.Feature\{", text)
    if m:
        body = re.sub(r"//[^\n]*", "", block(text, m.end() - 1))
        for e in re.finditer(r"([\w.]+)\s*:\s*\{([^{}]*)\}", body):
            ds = [consts[ident(d.strip())] for d in e.group(2).split(",") if d.strip()]
            deps[consts[ident(e.group(1))]] = sorted(set(ds))

def completed(vs):
    """vs as component-base's AddVersioned stores it: an entry without a min compatibility
    version takes the previous entry's (so it never decreases)."""
    out, last = [], None
    for v in vs:
        if v[4] is None and last is not None:
            v = v[:4] + (last,)
        out.append(v)
        last = v[4]
    return out


def at(vs, emu, min_compat):
    """The entry in force (component-base's featureSpecAtEmulationAndMinCompatVersion): the
    last one not after the emulated version whose min compatibility version is met; None is
    PreAlpha, default off."""
    for v in reversed(vs):
        if v[0] > emu or (v[4] is not None and min_compat < v[4]):
            continue
        return v
    return None


for name, vs in specs.items():
    specs[name] = completed(vs)
    for dep in deps.get(name, []):
        if dep not in specs:
            raise SystemExit("%s depends on unknown %s" % (name, dep))



def state(v):
    return ("PREALPHA", False, False) if v is None else (v[2], v[1], v[3])


if AUDIT:
    # every gate whose stage, default or lock at another accepted (emulation, min
    # compatibility) differs from kcmd's default (1.37, 1.36)
    base = {n: state(at(vs, EMULATED, MIN_COMPAT)) for n, vs in specs.items()}
    for emu, mc in ((34, 33), (35, 34), (36, 35), (37, 37)):
        for name in sorted(specs):
            s = state(at(specs[name], (1, emu), (1, max(mc, FLOOR[1]))))
            if s != base[name]:
                print("1.%d/1.%d %s %s -> %s" % (emu, max(mc, FLOOR[1]), name, base[name], s))
    raise SystemExit(0)


def cstage(stage):
    return "KCM_SPEC_" + stage


print("/* SPDX-License-Identifier: Apache-2.0 */")
print("/* lib/kcm-gates.c: written by tools/gen-kcm-gates.py; do not edit. Every feature gate of")
print(" * kube-controller-manager v1.37.2 with all its versioned specs (kcm-catalogue.h), read from")
print(" * k8s.io/kubernetes v1.37.2 pkg/features/kube_features.go and the v0.37.2 modules")
print(" * apiserver/pkg/features, apiextensions-apiserver/pkg/features, client-go/features,")
print(" * controller-manager/pkg/features, component-base/{logs/api/v1,metrics/features,")
print(" * zpages/features} (their VersionedSpecs and pkg/features' dependency map). Each entry's")
print(" * min compatibility minor is component-base's completed one (0: none). */")
print('#include "lib/kcm-catalogue.h"')
print()
print("/* clang-format off */")
print("const struct kcm_gate_spec kcm_gate_specs[] = {")
for name, vs in sorted(specs.items()):
    ds = " ".join(deps.get(name, []))
    if any(v[0][0] != 1 or (v[4] and v[4][0] != 1) for v in vs):
        raise SystemExit("%s: a version not 1.x" % name)
    print('        {"%s", %s, %d, (const struct kcm_gate_version[]){' % (
        name, '"%s"' % ds if ds else "NULL", len(vs)))
    for v in vs:
        print("                {%d, %d, %s, %s, %s}," % (
            v[0][1], v[4][1] if v[4] else 0, cstage(v[2]), "true" if v[1] else "false",
            "true" if v[3] else "false"))
    print("        }},")
print("};")
print("/* clang-format on */")
print("const size_t kcm_gate_specs_n = sizeof(kcm_gate_specs) / sizeof(kcm_gate_specs[0]);")
