#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""kcmd lint: the house rules of docs/conventions (issue 15) checked by a program.

usage: tools/lint/lint.py [--rules=R1,R2] [--root=DIR] [--fix] [FILE...]

Checks the git-tracked C sources and headers (*.c, *.h) of the tree at --root (default: the
top of this checkout), or only the FILEs named (paths from the root). Rules, each selectable
with --rules or the LINT_RULES environment variable (comma-separated; default: all):

  format  clang-format --dry-run --Werror with the checked-in .clang-format
  spdx    the first line is exactly `/* SPDX-License-Identifier: Apache-2.0 */`
  layers  quoted #includes follow the LAYERS table below (lower layers include nothing above
          them; process folders include no other process folder)
  names   only the controller registry names controllers (NAME_SCOPE below)

Every violation is one line `file:line: rule: message` on stdout; a summary goes to stderr.
Exit status: 0 clean, 1 violations, 2 usage error or a missing tool (clang-format).

--fix rewrites what can be fixed mechanically (format: clang-format -i; spdx: insert or replace
the first line) and then checks again. `make format` is `--fix --rules=format,spdx`.

Outside a git work tree (the self-test's temporary trees) every *.c/*.h under the root is
checked. Python 3 standard library only.
"""

import functools
import os
import re
import shutil
import subprocess
import sys

RULES = ("format", "spdx", "layers", "names")
SPDX = "/* SPDX-License-Identifier: Apache-2.0 */"

# Files never checked: Go and generated trees, fuzz corpora, build output.
EXCLUDE = [
    "build/**",
    "tests/cluster/**",
    "**/fuzz/corpus/**",
]

# ---- rule `layers`: who may include what ---------------------------------------------------
# One row per kind of folder: a pattern for the including file, then the patterns of what it
# may include ("..." includes, as paths from the top of the tree; <...> includes are not
# checked). The first row whose pattern matches the including file applies; a file that no row
# matches is itself reported, so a new folder gets a row before it gets code.
#
# Pattern syntax: paths from the top; `*` = any characters within one path segment, `**` = any
# depth (`a/**` is everything under a/); `<c>` = one segment, bound to the same name on both
# sides of a row (a controller folder may include its own folder, not another's).
#
# The layering (docs/architecture.md, "Modules"): kube/, shm/, ipc/ are the bottom and include
# only themselves (today none includes another; change a row here, with the why, if one must);
# lib/ (logging, loop glue, feature gates) may use those three; the process folders use lib/ and
# below and never each other; controllers/ is the registry, the one place that knows every
# controller; bench/ and tests/ may use anything (never linked into production processes).
BELOW = ["kube/**", "shm/**", "ipc/**"]
API = ["kcmd/**"]  # the public controller interface, include/kcmd/ (-Iinclude)
LIB = ["lib/**"] + BELOW + API
REGISTRY_H = ["controllers/*.h"]  # the registry's (and controller interface's) headers
LAYERS = [
    # the public controller API (include/kcmd/, included as "kcmd/...") includes nothing of kcmd
    ("include/kcmd/**", ["kcmd/**"]),
    # the protobuf-c comparison benchmark (not built by make; includes code protoc-c generates)
    ("kube/bench/protobuf-c/**", ["**"]),
    ("kube/**", ["kube/**"]),
    # the record codec (shm/record-model.*, its test and fuzz target): the one edge between the
    # bottom layers, shm -> kube's object model and selectors (kube/ includes nothing of shm/;
    # the arena itself, libshm, stays free of kube/ types)
    ("shm/record-model.*", ["shm/**", "kube/model.h", "kube/selector.h"]),
    ("shm/tests/test-records.c", ["shm/**", "kube/model.h", "kube/selector.h", "kube/encode.h"]),
    ("shm/fuzz/fuzz-records.c", ["shm/**", "kube/model.h", "kube/selector.h"]),
    ("shm/**", ["shm/**"]),
    ("ipc/**", ["ipc/**"]),
    ("lib/**", ["lib/**"] + BELOW + API),
    # the registry: its top-level files include every controller's descriptor
    ("controllers/*", ["**"]),
    ("controllers/tests/**", ["**"]),
    # controllers may also live under controllers/<name>/ (same rule as workers/<name>/)
    ("controllers/<c>/**", ["controllers/<c>/**"] + REGISTRY_H + ["workers/*.h"] + LIB),
    ("informerd/**", ["informerd/**"] + LIB),
    ("manager/**", ["manager/**"] + REGISTRY_H + LIB),
    # the worker process: its main and the headers every controller implements
    ("workers/*", ["workers/*"] + REGISTRY_H + LIB),
    # the worker glue's tests drive a controller's executor and fill arenas with informerd's store
    ("workers/tests/**", ["workers/**", "informerd/*.h"] + REGISTRY_H + LIB),
    # a controller's tests: its own folder, plus informerd's store to fill an arena as informerd does
    ("workers/<c>/tests/**", ["workers/<c>/**", "workers/*.h", "informerd/*.h"] + REGISTRY_H + LIB),
    # the Job controller keeps its expectations with the ReplicaSet controller's module (a region
    # of its own; docs/job.md): that header is the one it may include from another folder
    ("workers/job/**", ["workers/job/**", "workers/replicaset/expectations.h", "workers/*.h"]
     + REGISTRY_H + LIB),
    # the DaemonSet controller keeps its expectations with the ReplicaSet controller's module (a
    # region of its own) and makes its revision data with the StatefulSet controller's getPatch
    # (docs/daemonset.md): those two headers
    ("workers/daemonset/**", ["workers/daemonset/**", "workers/replicaset/expectations.h",
                              "workers/statefulset/ident.h", "workers/*.h"] + REGISTRY_H + LIB),
    # the Endpoints controller shares the EndpointSlice controller's pod helpers and trigger-time
    # tracker and its cached pod list (docs/endpoints.md): those headers
    ("workers/endpoints/**", ["workers/endpoints/**", "workers/endpointslice/reconcile.h",
                              "workers/endpointslice/tracker.h", "workers/endpointslice/podlist.h",
                              "workers/*.h"] + REGISTRY_H + LIB),
    # the token controller puts the root CA publisher's CA into its Secrets, loaded the same
    # way (--root-ca-file or the kubeconfig's CA; docs/satoken.md): that header
    ("workers/satoken/**", ["workers/satoken/**", "workers/rootcacert/rootca.h", "workers/*.h"]
     + REGISTRY_H + LIB),
    # so does the ClusterTrustBundle publisher (docs/ctbpublisher.md)
    ("workers/ctbpublisher/**", ["workers/ctbpublisher/**", "workers/rootcacert/rootca.h",
                                 "workers/*.h"] + REGISTRY_H + LIB),
    # the EndpointSlice mirroring controller keeps its slices in the EndpointSlice controller's
    # slice tracker (upstream's shared EndpointSliceTracker; docs/endpointslicemirroring.md)
    ("workers/endpointslicemirroring/**", ["workers/endpointslicemirroring/**",
                                           "workers/endpointslice/tracker.h", "workers/*.h"]
     + REGISTRY_H + LIB),
    # the ResourcePoolStatusRequest controller sums, subtracts and prints quantities with the
    # quota controller's resource.Quantity module (docs/resourcepoolstatusrequest.md)
    ("workers/resourcepoolstatus/**", ["workers/resourcepoolstatus/**",
                                       "workers/resourcequota/quantity.h", "workers/*.h"]
     + REGISTRY_H + LIB),
    # one folder per controller: itself, the worker interface, lib and below
    ("workers/<c>/**", ["workers/<c>/**", "workers/*.h"] + REGISTRY_H + LIB),
    ("bench/**", ["**"]),
    ("tests/**", ["**"]),
    # an out-of-tree controller example is built only against the installed API (kcmd/, as
    # <kcmd/...>) and its own folder: nothing of kcmd's internals
    ("examples/<c>/**", ["examples/<c>/**"] + API),
]

# ---- rule `names`: only the registry names controllers --------------------------------------
# Where no controller may be named: the manager, informerd, the worker process's own files
# (workers/*, not the controller folders) and lib/. kube/ is out of scope: its object model
# names ReplicaSets (rs_ helpers) as a resource, not as a controller. Tests and benchmarks are
# out of scope too (tests name controllers in their fixtures; bench/ drives them by name).
NAME_SCOPE = ["manager/**", "informerd/**", "workers/*", "lib/**"]
NAME_SCOPE_EXCLUDE = ["**/tests/**", "**/bench/**", "controllers/**"]

# kube-controller-manager v1.37's controller names (`kube-controller-manager --help`, see
# cmd/kube-controller-manager/names upstream), kcmd's own worker names, and the aliases kcmd's
# --controllers accepts today.
KCM_CONTROLLERS = """
bootstrap-signer certificatesigningrequest-approving certificatesigningrequest-cleaner
certificatesigningrequest-signing clusterrole-aggregation cronjob daemonset deployment
device-taint-eviction disruption endpoints endpointslice endpointslice-mirroring
ephemeral-volume garbage-collector horizontal-pod-autoscaler job
kube-apiserver-serving-clustertrustbundle-publisher legacy-serviceaccount-token-cleaner
namespace node-ipam node-lifecycle persistentvolume-attach-detach persistentvolume-binder
persistentvolume-expander persistentvolume-protection persistentvolumeclaim-protection
pod-garbage-collector podcertificaterequest-cleaner podgroup-protection replicaset
replicationcontroller resourceclaim resourcepoolstatusrequest resourcequota
root-ca-certificate-publisher selinux-warning service-cidr serviceaccount serviceaccount-token
statefulset storage-version-migrator storageversion-garbage-collector taint-eviction
token-cleaner ttl-after-finished ttl validatingadmissionpolicy-status
volumeattributesclass-protection
""".split()
CONTROLLER_NAMES = [n + "-controller" for n in KCM_CONTROLLERS] + [
    "kubelet-simulator",  # kcmd's benchmark worker (kcmd-worker --controller=kubelet-simulator)
    "generic-garbage-collector",  # the GC's event source / user agent
]
# Aliases, matched only as a whole string literal ("replicaset"): as bare words they are
# resource names and ordinary English.
CONTROLLER_ALIASES = ["replicaset", "garbagecollector"]
# Controller-owned symbols: the controllers' module prefixes (conventions.md: rs_, gc_), the
# manager's per-controller enum, and controller queue names.
CONTROLLER_SYMBOLS = [
    (r"\b(?:rs|gc|RS|GC)_\w+", "controller symbol"),
    (r"\bMGR_CTRL_(?!COUNT\b)\w+", "per-controller enum"),
    (r'"(?:rs|gc)-[a-z0-9-]+"', "controller queue name"),
]


# ---- helpers --------------------------------------------------------------------------------
@functools.lru_cache(maxsize=None)
def _glob_re(pat, binds):
    return glob_re_uncached(pat, dict(binds) if binds is not None else None)


def glob_re(pat, binds=None):
    """A table pattern as a compiled regex (see LAYERS for the syntax); cached."""
    return _glob_re(pat, tuple(sorted(binds.items())) if binds is not None else None)


def glob_re_uncached(pat, binds):
    out, i = [], 0
    while i < len(pat):
        if pat.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif pat.startswith("**", i):
            out.append(".*")
            i += 2
        elif pat[i] == "*":
            out.append("[^/]*")
            i += 1
        elif pat[i] == "<":
            j = pat.index(">", i)
            name = pat[i + 1 : j]
            if binds is not None and name in binds:
                out.append(re.escape(binds[name]))
            else:
                out.append("(?P<%s>[^/]+)" % name)
            i = j + 1
        else:
            out.append(re.escape(pat[i]))
            i += 1
    return re.compile("".join(out) + r"\Z")


def matches_any(path, pats):
    return any(glob_re(p).match(path) for p in pats)


def list_files(root):
    """The tracked *.c/*.h when root is the top of a git work tree, else every *.c/*.h under it."""
    files = None
    try:
        top = subprocess.run(["git", "-C", root, "rev-parse", "--show-toplevel"], check=True,
                             capture_output=True, text=True).stdout.strip()
        if os.path.realpath(top) == os.path.realpath(root):
            out = subprocess.run(["git", "-C", root, "ls-files", "-z", "--", "*.c", "*.h"],
                                 check=True, capture_output=True, text=True).stdout
            files = [f for f in out.split("\0") if f]
    except (subprocess.CalledProcessError, FileNotFoundError):
        pass
    if files is None:
        files = []
        for d, dirs, names in os.walk(root):
            dirs[:] = [x for x in dirs if x != ".git"]
            for n in names:
                if n.endswith((".c", ".h")):
                    files.append(os.path.relpath(os.path.join(d, n), root))
    files = [f for f in files if os.path.isfile(os.path.join(root, f))]
    return sorted(f for f in files if not matches_any(f, EXCLUDE))


def read_lines(root, f):
    with open(os.path.join(root, f), encoding="utf-8", errors="replace") as fh:
        return fh.read().split("\n")


# ---- the rules ------------------------------------------------------------------------------
def check_format(root, files, fix):
    exe = shutil.which("clang-format")
    if not exe:
        print("lint: format: clang-format not found (`make deps` installs it)", file=sys.stderr)
        sys.exit(2)
    out = []
    for i in range(0, len(files), 64):
        batch = files[i : i + 64]
        if fix:
            subprocess.run([exe, "-i", "--style=file", "--"] + batch, cwd=root, check=False)
            continue
        p = subprocess.run(
            [exe, "--dry-run", "--Werror", "--style=file", "--"] + batch,
            cwd=root,
            capture_output=True,
            text=True,
        )
        first, count, other = {}, {}, []
        for ln in p.stderr.splitlines():
            m = re.match(r"(.+?):(\d+):\d+: (?:error|warning): code should be clang-formatted", ln)
            if m:
                f = m.group(1)
                count[f] = count.get(f, 0) + 1
                first.setdefault(f, int(m.group(2)))
            elif re.match(r"(.+?):\d+:\d+: error: ", ln) or ln.startswith("error:"):
                other.append(ln)
        for f in batch:
            if f in count:
                out.append(
                    (f, first[f], "format",
                     "%d place(s) differ from .clang-format (`make format` fixes)" % count[f])
                )
        for ln in other:
            out.append(("clang-format", 0, "format", ln))
        if p.returncode != 0 and not count and not other:
            out.append(("clang-format", 0, "format", "exited %d: %s" % (p.returncode, p.stderr.strip())))
    return out


def check_spdx(root, files, fix):
    out = []
    for f in files:
        path = os.path.join(root, f)
        with open(path, encoding="utf-8", errors="replace") as fh:
            text = fh.read()
        first = text.split("\n", 1)[0]
        if first == SPDX:
            continue
        wrong = first.startswith("/* SPDX-License-Identifier:")
        if fix:  # drop a wrong first SPDX line and any misplaced right one, then prepend
            lines = text.split("\n")
            if wrong:
                lines = lines[1:]
            lines = [ln for ln in lines if ln != SPDX]
            with open(path, "w", encoding="utf-8") as fh:
                fh.write(SPDX + "\n" + "\n".join(lines))
            continue
        msg = ("first line is %r, want %r" % (first, SPDX)) if wrong else ("first line is not %r" % SPDX)
        out.append((f, 1, "spdx", msg))
    return out


INCLUDE_RE = re.compile(r'^\s*#\s*include\s*"([^"]+)"')


def layer_row(f):
    for pat, allowed in LAYERS:
        m = glob_re(pat).match(f)
        if m:
            return pat, allowed, m.groupdict()
    return None, None, None


def check_layers(root, files):
    out = []
    for f in files:
        pat, allowed, binds = layer_row(f)
        lines = read_lines(root, f)
        if pat is None:
            out.append((f, 1, "layers", "no row of the LAYERS table (tools/lint/lint.py) covers this file"))
            continue
        for n, ln in enumerate(lines, 1):
            m = INCLUDE_RE.match(ln)
            if not m:
                continue
            # as the compiler searches: beside the including file first, then from the top (-I.)
            inc = os.path.normpath(os.path.join(os.path.dirname(f), m.group(1)))
            if not os.path.isfile(os.path.join(root, inc)):
                inc = os.path.normpath(m.group(1))
            if any(glob_re(a, binds).match(inc) for a in allowed):
                continue
            where = pat.replace("<c>", binds.get("c", "<c>")) if binds else pat
            out.append((f, n, "layers", '#include "%s": %s may include only %s'
                        % (m.group(1), where, " ".join(a.replace("<c>", binds.get("c", "<c>")) for a in allowed))))
    return out


def check_names(root, files):
    names = "|".join(re.escape(n) for n in sorted(CONTROLLER_NAMES, key=len, reverse=True))
    name_re = re.compile(r"(?<![\w-])(%s)(?![\w-])" % names)
    alias_re = re.compile(r'"(%s)"' % "|".join(re.escape(a) for a in CONTROLLER_ALIASES))
    sym_res = [(re.compile(r), what) for r, what in CONTROLLER_SYMBOLS]
    out = []
    for f in files:
        if not matches_any(f, NAME_SCOPE) or matches_any(f, NAME_SCOPE_EXCLUDE):
            continue
        for n, ln in enumerate(read_lines(root, f), 1):
            seen = []
            for m in name_re.finditer(ln):
                seen.append(("controller name", m.group(1)))
            for m in alias_re.finditer(ln):
                seen.append(("controller alias", m.group(0)))
            for r, what in sym_res:
                for m in r.finditer(ln):
                    seen.append((what, m.group(0)))
            done = set()
            for what, tok in seen:
                if tok in done:
                    continue
                done.add(tok)
                out.append((f, n, "names", "%s %s outside the controller registry" % (what, tok)))
    return out


def main(argv):
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    rules = os.environ.get("LINT_RULES", "") or ",".join(RULES)
    fix, explicit = False, []
    for a in argv:
        if a.startswith("--rules="):
            rules = a[len("--rules="):]
        elif a.startswith("--root="):
            root = a[len("--root="):]
        elif a == "--fix":
            fix = True
        elif a in ("-h", "--help"):
            print(__doc__)
            return 0
        elif a.startswith("-"):
            print("lint: unknown option %s" % a, file=sys.stderr)
            return 2
        else:
            explicit.append(os.path.normpath(a))
    sel = [r.strip() for r in rules.split(",") if r.strip()]
    bad = [r for r in sel if r not in RULES]
    if bad or not sel:
        print("lint: unknown rule(s) %s; the rules are %s" % (",".join(bad) or "(none)", ",".join(RULES)),
              file=sys.stderr)
        return 2
    files = [f for f in explicit if f.endswith((".c", ".h")) and not matches_any(f, EXCLUDE)] if explicit \
        else list_files(root)

    if fix:
        if "spdx" in sel:
            check_spdx(root, files, True)
        if "format" in sel:
            # clang-format 14 is not always idempotent (long string concatenations settle on
            # the second pass): reformat what still differs, up to three passes
            todo = files
            for _ in range(3):
                check_format(root, todo, True)
                todo = sorted({v[0] for v in check_format(root, todo, False) if v[0] in todo})
                if not todo:
                    break

    out = []
    if "format" in sel:
        out += check_format(root, files, False)
    if "spdx" in sel:
        out += check_spdx(root, files, False)
    if "layers" in sel:
        out += check_layers(root, files)
    if "names" in sel:
        out += check_names(root, files)
    out.sort(key=lambda v: (v[0], v[1], RULES.index(v[2]) if v[2] in RULES else 9))
    for f, n, rule, msg in out:
        print("%s:%d: %s: %s" % (f, n, rule, msg))
    counts = {r: sum(1 for v in out if v[2] == r) for r in sel}
    print("lint: %d file(s), %d violation(s) (%s)"
          % (len(files), len(out), ", ".join("%s %d" % (r, counts[r]) for r in sel)), file=sys.stderr)
    return 1 if out else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
