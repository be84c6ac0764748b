#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""tools/lint/tests/test-lint.py - the negative test of `make lint` (tools/lint/lint.py).

Builds a small clean tree in a temporary directory (the checked-in .clang-format, one file in
each layer, a controller, the registry naming it) and checks that the linter passes it; then,
one case at a time, plants exactly one violation of one rule and checks that the linter reports
exactly that violation (`file:line: rule: ...`, nothing else) and exits 1. Also: rule selection
(LINT_RULES, --rules), an unknown rule (exit 2), and --fix repairing format and SPDX.

Run by `make unit` through tests/run-tests.sh: exit 0 pass, 77 skip (no clang-format), else fail.
"""

import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(HERE))
TOP = os.path.dirname(TOP)
LINT = os.path.join(TOP, "tools", "lint", "lint.py")
SPDX = "/* SPDX-License-Identifier: Apache-2.0 */\n"


def c(body):
    """A C file: the SPDX line, then body (already in .clang-format's style)."""
    return SPDX + body


# A clean tree: every rule passes. The registry and the controller's own folder name the
# controller; nobody else does.
CLEAN = {
    "kube/a.h": c("#pragma once\nint kube_a(void);\n"),
    "kube/a.c": c('#include "kube/a.h"\n\nint kube_a(void)\n{\n\treturn 1;\n}\n'),
    "shm/b.h": c("#pragma once\nint shm_b(void);\n"),
    "ipc/c.h": c("#pragma once\nint ipc_c(void);\n"),
    "lib/log.h": c('#pragma once\n#include "kube/a.h"\n#include "shm/b.h"\n#include "ipc/c.h"\n'),
    "informerd/main.c": c('#include "lib/log.h"\n#include "shm/b.h"\n\nint main(void)\n{\n\treturn shm_b();\n}\n'),
    "manager/flags.h": c("#pragma once\nint mgr_flags(void);\n"),
    "manager/main.c": c(
        '#include "controllers/registry.h"\n#include "lib/log.h"\n#include "manager/flags.h"\n\n'
        "int main(void)\n{\n\treturn ctl_registry_count() + mgr_flags();\n}\n"
    ),
    "workers/worker.h": c("#pragma once\nstruct worker_controller {\n\tconst char *name;\n};\n"),
    "workers/main.c": c(
        '#include "controllers/registry.h"\n#include "lib/log.h"\n#include "workers/worker.h"\n\n'
        "int main(void)\n{\n\treturn ctl_registry_count();\n}\n"
    ),
    "workers/replicaset/sync.h": c(
        '#pragma once\n#include "workers/worker.h"\nextern const struct worker_controller rs_controller;\n'
    ),
    "workers/replicaset/sync.c": c(
        '#include "workers/replicaset/sync.h"\n#include "lib/log.h"\n\n'
        'const struct worker_controller rs_controller = {.name = "replicaset-controller"};\n'
    ),
    "workers/replicaset/tests/test-sync.c": c(
        '#include "workers/replicaset/sync.h"\n\nint main(void)\n{\n\treturn rs_controller.name[0] != \'r\';\n}\n'
    ),
    "controllers/registry.h": c("#pragma once\nint ctl_registry_count(void);\n"),
    "controllers/registry.c": c(
        '#include "controllers/registry.h"\n#include "workers/replicaset/sync.h"\n\n'
        "/* the one place that names replicaset-controller */\n"
        "static const struct worker_controller *const all[] = {&rs_controller};\n\n"
        "int ctl_registry_count(void)\n{\n\treturn (int)(sizeof(all) / sizeof(all[0]));\n}\n"
    ),
    "tests/helper.c": c('#include "workers/replicaset/sync.h"\n#include "manager/flags.h"\n'),
}

# One planted violation per case: (what, files to add or replace, expected file, line, rule).
CASES = [
    ("format: a one-line function", {"kube/bad.c": c("int kube_bad(void) { return 1; }\n")},
     "kube/bad.c", 2, "format"),
    ("format: spaces for indentation", {"shm/bad.c": c("int shm_bad(void)\n{\n    return 1;\n}\n")},
     "shm/bad.c", 3, "format"),
    ("spdx: no licence line", {"shm/nospdx.c": "/* shm/nospdx.c: no licence line */\nint shm_x;\n"},
     "shm/nospdx.c", 1, "spdx"),
    ("spdx: another licence", {"ipc/mit.h": "/* SPDX-License-Identifier: MIT */\n#pragma once\n"},
     "ipc/mit.h", 1, "spdx"),
    ("spdx: licence line not first", {"kube/late.h": "#pragma once\n" + SPDX},
     "kube/late.h", 1, "spdx"),
    ("layers: kube includes shm", {"kube/x.c": c('#include "kube/a.h"\n#include "shm/b.h"\n')},
     "kube/x.c", 3, "layers"),
    ("layers: ipc includes kube", {"ipc/x.c": c('#include "ipc/c.h"\n#include "kube/a.h"\n')},
     "ipc/x.c", 3, "layers"),
    ("layers: shm includes lib", {"shm/x.c": c('#include "lib/log.h"\n')}, "shm/x.c", 2, "layers"),
    ("layers: lib includes a process folder", {"lib/x.c": c('#include "lib/log.h"\n#include "manager/flags.h"\n')},
     "lib/x.c", 3, "layers"),
    ("layers: informerd includes a controller", {"informerd/x.c": c('#include "workers/replicaset/sync.h"\n')},
     "informerd/x.c", 2, "layers"),
    ("layers: informerd includes the registry", {"informerd/y.c": c('#include "controllers/registry.h"\n')},
     "informerd/y.c", 2, "layers"),
    ("layers: manager includes informerd", {"manager/x.c": c('#include "manager/flags.h"\n#include "informerd/z.h"\n')},
     "manager/x.c", 3, "layers"),
    ("layers: a controller includes another", {"workers/garbagecollector/x.c": c('#include "workers/replicaset/sync.h"\n')},
     "workers/garbagecollector/x.c", 2, "layers"),
    ("layers: a controller's test includes another", {"workers/garbagecollector/tests/t.c": c('#include "workers/replicaset/sync.h"\n')},
     "workers/garbagecollector/tests/t.c", 2, "layers"),
    ("layers: an out-of-tree example includes kcmd's internals", {"examples/demo/x.c": c('#include "lib/log.h"\n')},
     "examples/demo/x.c", 2, "layers"),
    ("layers: an out-of-tree example includes another example", {"examples/demo/x.c": c('#include "examples/other/y.h"\n')},
     "examples/demo/x.c", 2, "layers"),
    ("layers: a controller includes the manager", {"workers/replicaset/x.c": c('#include "manager/flags.h"\n')},
     "workers/replicaset/x.c", 2, "layers"),
    ("layers: the worker main includes a controller", {"workers/main.c": CLEAN["workers/main.c"] + '#include "workers/replicaset/sync.h"\n'},
     "workers/main.c", 10, "layers"),
    ("layers: a relative include resolves beside the file", {"ipc/y.c": c('#include "c.h"\n#include "../kube/a.h"\n')},
     "ipc/y.c", 3, "layers"),
    ("layers: a relative include of an allowed file passes", {"ipc/z.c": c('#include "../ipc/c.h"\n#include "shm/b.h"\n')},
     "ipc/z.c", 3, "layers"),
    ("layers: a folder without a row", {"frob/x.c": c("int frob;\n")}, "frob/x.c", 1, "layers"),
    ("names: a controller name in the manager", {"manager/y.c": c('const char *mgr_y = "garbage-collector-controller";\n')},
     "manager/y.c", 2, "names"),
    ("names: a controller name in a comment", {"informerd/w.c": c("/* starts the replicaset-controller */\nint inf_w;\n")},
     "informerd/w.c", 2, "names"),
    ("names: a controller symbol in informerd", {"informerd/z.c": c("int rs_sync(void);\nint inf_z(void)\n{\n\treturn 0;\n}\n")},
     "informerd/z.c", 2, "names"),
    ("names: a gc_ table in the worker main", {"workers/main.c": CLEAN["workers/main.c"] + "extern int gc_handler_table;\n"},
     "workers/main.c", 10, "names"),
    ("names: an alias in the worker process", {"workers/w.c": c('const char *w_alias = "replicaset";\n')},
     "workers/w.c", 2, "names"),
    ("names: a controller queue in lib", {"lib/q.c": c('const char *lib_q = "gc-attempt-to-delete";\n')},
     "lib/q.c", 2, "names"),
    ("names: a per-controller enum in the manager", {"manager/e.h": c("#pragma once\nenum { MGR_CTRL_REPLICASET, MGR_CTRL_COUNT };\n")},
     "manager/e.h", 3, "names"),
]

failures = 0


def check(ok, what, detail=""):
    global failures
    if ok:
        print("ok      %s" % what)
    else:
        failures += 1
        print("FAILED  %s%s" % (what, ("\n" + detail) if detail else ""))


def write_tree(root, files):
    shutil.copy(os.path.join(TOP, ".clang-format"), os.path.join(root, ".clang-format"))
    for path, text in files.items():
        full = os.path.join(root, path)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "w") as fh:
            fh.write(text)


def lint(root, *args, env=None):
    e = dict(os.environ)
    e.pop("LINT_RULES", None)
    e.update(env or {})
    p = subprocess.run([sys.executable, LINT, "--root=" + root] + list(args), capture_output=True, text=True, env=e)
    return p.returncode, [l for l in p.stdout.splitlines() if l], p.stderr


def fresh(files):
    root = tempfile.mkdtemp(prefix="kcmd-lint-")
    write_tree(root, files)
    return root


def main():
    if not shutil.which("clang-format"):
        print("SKIP: clang-format not installed (make deps installs it)")
        return 77
    roots = []
    try:
        # 1. the clean tree passes every rule
        root = fresh(CLEAN)
        roots.append(root)
        rc, out, err = lint(root)
        check(rc == 0 and not out, "clean tree: exit 0, no output", "rc=%d\n%s\n%s" % (rc, "\n".join(out), err))

        # 2. one planted violation per case: exactly that line, exit 1
        for what, plant, f, line, rule in CASES:
            files = dict(CLEAN)
            files.update(plant)
            root = fresh(files)
            roots.append(root)
            rc, out, err = lint(root)
            want = "%s:%d: %s: " % (f, line, rule)
            check(rc == 1 and len(out) == 1 and out[0].startswith(want),
                  "%s -> %s" % (what, want.strip()), "rc=%d\n%s\n%s" % (rc, "\n".join(out), err))

        # 3. rule selection: one tree with a spdx and a layers violation
        files = dict(CLEAN)
        files.update({"shm/nospdx.c": "int shm_x;\n", "kube/x.c": c('#include "shm/b.h"\n')})
        root = fresh(files)
        roots.append(root)
        rc, out, _ = lint(root, env={"LINT_RULES": "spdx"})
        check(rc == 1 and len(out) == 1 and re.match(r"shm/nospdx\.c:1: spdx: ", out[0]),
              "LINT_RULES=spdx reports only the spdx violation", "\n".join(out))
        rc, out, _ = lint(root, "--rules=layers,format")
        check(rc == 1 and len(out) == 1 and re.match(r"kube/x\.c:2: layers: ", out[0]),
              "--rules=layers,format reports only the layers violation", "\n".join(out))
        rc, out, _ = lint(root, "--rules=format,names")
        check(rc == 0 and not out, "--rules=format,names passes that tree", "\n".join(out))
        rc, out, err = lint(root, "--rules=spdx,bogus")
        check(rc == 2 and "bogus" in err, "an unknown rule is a usage error (exit 2)", err)
        rc, out, _ = lint(root, "--rules=layers", "shm/nospdx.c")
        check(rc == 0 and not out, "FILE arguments limit the check to those files", "\n".join(out))

        # 4. --fix repairs format and SPDX (what `make format` runs), leaves the rest
        files = dict(CLEAN)
        files.update({
            "kube/bad.c": "int kube_bad(void) { return 1; }\n",
            "ipc/mit.h": "/* SPDX-License-Identifier: MIT */\n#pragma once\n",
            "informerd/x.c": c('#include "workers/replicaset/sync.h"\n'),
            "kube/late.h": "#pragma once\n" + SPDX,
        })
        root = fresh(files)
        roots.append(root)
        rc, out, _ = lint(root)
        check(rc == 1 and len(out) == 5, "before --fix: 5 violations (format, spdx x3, layers)", "\n".join(out))
        rc, out, _ = lint(root, "--fix", "--rules=format,spdx")
        check(rc == 0 and not out, "--fix --rules=format,spdx: clean afterwards", "\n".join(out))
        rc, out, _ = lint(root)
        check(rc == 1 and len(out) == 1 and out[0].startswith("informerd/x.c:2: layers: "),
              "--fix leaves the layers violation alone", "\n".join(out))
        with open(os.path.join(root, "kube/bad.c")) as fh:
            check(fh.read() == SPDX + "int kube_bad(void)\n{\n\treturn 1;\n}\n", "--fix wrote the expected kube/bad.c")
        with open(os.path.join(root, "ipc/mit.h")) as fh:
            check(fh.read() == SPDX + "#pragma once\n", "--fix replaced the wrong licence line")
        with open(os.path.join(root, "kube/late.h")) as fh:
            check(fh.read() == SPDX + "#pragma once\n", "--fix moved the misplaced licence line first")
    finally:
        for r in roots:
            shutil.rmtree(r, ignore_errors=True)
    print("%d failure(s)" % failures)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
