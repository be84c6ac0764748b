#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Prints the table of kube-controller-manager v1.37's controllers beside kcmd's (the one in
docs/operations.md, "kcm's controllers in kcmd"), from controllers/kcm-controllers.c (kcm's
list, generated from its --help) and `kcmd --help` (what this build runs).

    tools/gen-controller-table.py [build/bin/kcmd]

tests/packaging/test-docs.py checks that docs/operations.md holds exactly this table, and that
every controller kcmd builds is turned on by '*' exactly when kcm's is.
"""
import os
import re
import subprocess
import sys

top = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))


def kcm_controllers():
    src = open(os.path.join(top, "controllers", "kcm-controllers.c")).read()
    return [(n, on == "true") for n, on in re.findall(r'\{"([a-z0-9-]+)",\s*(true|false)\}', src)]


def kcmd_controllers(kcmd):
    out = subprocess.run([kcmd, "--help"], capture_output=True, text=True).stdout
    ctl, inside = {}, False
    for line in out.splitlines():
        if line.startswith("Controllers ("):
            inside = True
            continue
        if inside:
            m = re.match(r"^  ([a-z0-9-]+)\s+(on|off)\b", line)
            if not m:
                break
            ctl[m.group(1)] = m.group(2) == "on"
    return ctl


def table(kcmd):
    kcm, mine = kcm_controllers(), kcmd_controllers(kcmd)
    rows = ["| kcm controller | kcm: on by `*` | in kcmd |", "|---|---|---|"]
    for name, on in kcm:
        have = "yes" if name in mine else "no (run it in kcm, or a plug-in)"
        rows.append(f"| `{name}` | {'yes' if on else 'no'} | {have} |")
    built = sum(1 for n, _ in kcm if n in mine)
    rows.append("")
    rows.append(f"{built} of kcm's {len(kcm)} controllers are built in kcmd.")
    return "\n".join(rows) + "\n", kcm, mine


if __name__ == "__main__":
    kcmd = sys.argv[1] if len(sys.argv) > 1 else os.path.join(top, "build", "bin", "kcmd")
    sys.stdout.write(table(kcmd)[0])
