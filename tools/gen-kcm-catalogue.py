#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Writes lib/kcm-catalogue.c (flags, gates) and controllers/kcm-controllers.c from `kube-controller-manager --help` (the v1.37 binary the test
cluster builds): every flag with its pflag type and default, every feature gate with its stage
and default, every controller with whether '*' turns it on. Run once per Kubernetes minor; TestKcmd_AcceptsEveryKCMFlagAndGate checks the table
against the binary.

    tools/gen-kcm-catalogue.py ~/.cache/kcmd-cluster/<ver>/bin/kube-controller-manager
"""
import re
import subprocess
import sys

KCM = sys.argv[1]
help_text = subprocess.run([KCM, "--help"], capture_output=True, text=True).stdout
flags, blocks, cur = {}, [], None
for line in help_text.splitlines():
    m = re.match(r"^\s+(?:-[a-z], )?--([a-z0-9-]+)(?: (\S+))?(?:\s{2,}(.*))?$", line)
    if m:
        cur = [m.group(1), m.group(2) or "bool", m.group(3) or ""]
        blocks.append(cur)
    elif cur and line.startswith(" " * 20) and line.strip():
        cur[2] += "\n" + line.strip()
    else:
        cur = None
for name, typ, desc in blocks:
    if name in ("help", "version"):
        continue
    d = re.findall(r"\(default (.*?)\)\s*$", desc, re.M)
    # pflag prints no default for a zero value
    zero = {"bool": "false", "int": "0", "int32": "0", "Level": "0", "float32": "0",
            "float": "0", "duration": "0s"}
    default = d[-1] if d else zero.get(typ, "")
    if default.startswith('"') and default.endswith('"'):
        default = default[1:-1]
    flags.setdefault(name, (typ, default))
ctl_desc = next(d for n, _, d in blocks if n == "controllers")
every = re.search(r"All controllers: ([a-z0-9, -]+)", ctl_desc.replace("\n", " ")).group(1)
every = [x.strip() for x in every.split(",") if x.strip()]
off = re.search(r"Disabled-by-default controllers: ([a-z0-9, -]+?)(?: \(default|$)", ctl_desc.replace("\n", " ")).group(1)
off = {x.strip() for x in off.split(",") if x.strip()}
gates = sorted(set(re.findall(r"kube:([A-Za-z0-9]+)=true\|false \((ALPHA|BETA|DEPRECATED) - default=(true|false)\)", help_text)))
gates = [g for g in gates if g[0] not in ("AllAlpha", "AllBeta")]
if len(flags) < 100 or len(gates) < 50 or len(every) < 40:
    sys.exit("cannot parse %s --help" % KCM)
version = subprocess.run([KCM, "--version"], capture_output=True, text=True).stdout.strip()


def c(s):
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


out = ["/* SPDX-License-Identifier: Apache-2.0 */",
       "/* lib/kcm-catalogue.c: written by tools/gen-kcm-catalogue.py from `kube-controller-manager",
       " * --help` of %s; do not edit (lib/kcm-catalogue.h). */" % version,
       '#include "lib/kcm-catalogue.h"', "",
       "const struct kcm_flag kcm_flags[] = {"]
for name in sorted(flags):
    typ, default = flags[name]
    out.append("        {%s, %s, %s}," % (c(name), c(typ), c(default)))
out += ["};", "const size_t kcm_flags_n = sizeof(kcm_flags) / sizeof(kcm_flags[0]);", "",
        "const struct kcm_gate kcm_gates[] = {"]
for name, stage, default in gates:
    out.append("        {%s, KCM_GATE_%s, %s}," % (c(name), stage, default))
out += ["};", "const size_t kcm_gates_n = sizeof(kcm_gates) / sizeof(kcm_gates[0]);", ""]
ctl = ["/* SPDX-License-Identifier: Apache-2.0 */",
       "/* controllers/kcm-controllers.c: written by tools/gen-kcm-catalogue.py from",
       " * `kube-controller-manager --help` of %s; do not edit (controllers/kcm-compat.h). */" % version,
       '#include "controllers/kcm-compat.h"', "",
       "/* on: turned on by '*' (feature gates aside) */",
       "const struct kcm_controller kcm_controllers[] = {"]
for name in every:
    ctl.append("        {%s, %s}," % (c(name), "false" if name in off else "true"))
ctl += ["};",
        "const size_t kcm_controllers_n = sizeof(kcm_controllers) / sizeof(kcm_controllers[0]);",
        ""]
open("controllers/kcm-controllers.c", "w").write("\n".join(ctl))
open("lib/kcm-catalogue.c", "w").write("\n".join(out))
# the house style (make lint's format rule)
subprocess.run(["clang-format", "-i", "controllers/kcm-controllers.c", "lib/kcm-catalogue.c"], check=True)
print("%d flags, %d gates, %d controllers" % (len(flags), len(gates), len(every)))
