#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Where a kcmd process tree's memory goes: PSS by process kind and by mapping class.

Usage: tools/pss-breakdown.py PID [--per-process] [--save DIR]

PID is the kcmd manager's (or any process whose descendants to walk). Every process of the
tree is read from /proc/<pid>/smaps (root or the same user), and each mapping is put in one
class:

  heap          [heap] and anonymous private mappings (malloc arenas, big mallocs)
  stack         [stack] and the thread stacks (anonymous, guard page below; by name when the
                kernel names them, else counted as heap)
  kcmd .data    the program's own file mapping, written pages (relocations, .data, .bss)
  kcmd text     the program's own file mapping, clean pages (shared between processes)
  lib:<name> rw a shared library's written pages (GOT, relocated .data.rel.ro, .data, .bss)
  lib text      every library's clean pages, all libraries together
  shm           memfd/shm mappings (the arena, the feed, the queues: shared by every process)
  io_uring      the rings
  other         anything else (vdso, vvar, files)

PSS counts a page shared by n processes as 1/n in each, so the sum over the tree is the tree's
real cost; Private_Dirty shows what each process holds alone. --save copies every smaps
into DIR for later study.
"""
import collections
import os
import re
import shutil
import sys


def children(pid):
    out = []
    try:
        for tid in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{tid}/children") as f:
                out += [int(x) for x in f.read().split()]
    except OSError:
        pass
    return out


def tree(pid):
    seen, todo = [], [pid]
    while todo:
        p = todo.pop()
        seen.append(p)
        todo += children(p)
    return seen


def args(pid):
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return [a.decode() for a in f.read().rstrip(b"\0").split(b"\0")]
    except OSError:
        return []


def kind(pid):
    """The program: kcmd, kcmd-informerd, kcmd-dispatcher, kcmd-worker (the zygote too)."""
    a = args(pid)
    return os.path.basename(a[0]) if a else "?"


def ctl(pid):
    """The --controller= of a dispatcher or worker, else ''."""
    for a in args(pid):
        if a.startswith("--controller="):
            return a[len("--controller="):]
    return ""


HDR = re.compile(r"^([0-9a-f]+)-([0-9a-f]+) (\S+) \S+ \S+ \S+\s*(.*)$")


def classify(path, perms, exe):
    if path == "[heap]":
        return "heap"
    if path.startswith("[stack"):
        return "stack"
    if path in ("[vdso]", "[vvar]", "[vsyscall]", "[vvar_vclock]"):
        return "other"
    if "io_uring" in path:
        return "io_uring"
    if path.startswith("/memfd:") or path.startswith("/dev/shm") or path.startswith("/SYSV"):
        return "shm"
    if path == "":
        return "heap" if "p" in perms else "shm"
    if path == exe:
        return "kcmd text" if "w" not in perms else "kcmd .data"
    if ".so" in path:
        if "w" in perms:
            return "lib:" + os.path.basename(path).split(".so")[0] + " rw"
        return "lib text"
    return "other"


def read(pid, save):
    try:
        exe = os.readlink(f"/proc/{pid}/exe")
        with open(f"/proc/{pid}/smaps") as f:
            text = f.read()
    except OSError:
        return None
    if save:
        with open(os.path.join(save, f"{pid}.{kind(pid)}.{ctl(pid) or 'x'}.smaps"), "w") as f:
            f.write(text)
    acc = collections.defaultdict(lambda: [0, 0])  # class -> [pss kB, private dirty kB]
    cls = None
    last_lib_rw = {}
    for line in text.splitlines():
        m = HDR.match(line)
        if m:
            perms, path = m.group(3), m.group(4).strip()
            cls = classify(path, perms, exe)
            # a library's relro (r--p after the rw mapping's relocation) is written too:
            # count its dirty pages as the library's
            if cls == "lib text" and "x" not in perms and path:
                cls = "lib:" + os.path.basename(path).split(".so")[0] + " rw?"
            if cls == "kcmd text" and "x" not in perms:
                cls = "kcmd .data"
            continue
        if cls is None:
            continue
        if line.startswith("Pss:"):
            acc[cls][0] += int(line.split()[1])
        elif line.startswith("Private_Dirty:"):
            acc[cls][1] += int(line.split()[1])
    # a library's read-only, never-written mappings are text; keep "rw" for those with dirty pages
    out = collections.defaultdict(lambda: [0, 0])
    for c, (p, d) in acc.items():
        if c.endswith(" rw?"):
            c = c[:-1] if d else "lib text"
        out[c][0] += p
        out[c][1] += d
    return out


def main():
    args = sys.argv[1:]
    per = "--per-process" in args
    save = None
    if "--save" in args:
        save = args[args.index("--save") + 1]
        os.makedirs(save, exist_ok=True)
    pid = int([a for a in args if a.isdigit()][0])
    kinds = collections.defaultdict(list)
    total = collections.defaultdict(lambda: [0, 0])
    for p in tree(pid):
        r = read(p, save)
        if r is None:
            continue
        k = kind(p)
        kinds[k].append((p, r))
        for c, (ps, d) in r.items():
            total[c][0] += ps
            total[c][1] += d
        if per:
            print(f"{p} {k} {ctl(p)}: PSS {sum(v[0] for v in r.values())} kB")
    print("kind                 n   PSS MB (sum)  PSS kB (mean)  private dirty kB (mean)")
    for k, lst in sorted(kinds.items()):
        pss = sum(sum(v[0] for v in r.values()) for _, r in lst)
        pd = sum(sum(v[1] for v in r.values()) for _, r in lst)
        print(f"{k:20} {len(lst):3} {pss/1024:12.1f} {pss/len(lst):14.0f} {pd/len(lst):20.0f}")
    allp = sum(v[0] for v in total.values())
    print(f"{'all':20} {sum(len(v) for v in kinds.values()):3} {allp/1024:12.1f}")
    print()
    for k, lst in sorted(kinds.items()):
        print(f"-- {k} (mean of {len(lst)}): class  PSS kB  private dirty kB")
        cl = collections.defaultdict(lambda: [0, 0])
        for _, r in lst:
            for c, (ps, d) in r.items():
                cl[c][0] += ps
                cl[c][1] += d
        for c, (ps, d) in sorted(cl.items(), key=lambda x: -x[1][0]):
            if ps / len(lst) >= 8:
                print(f"   {c:28} {ps/len(lst):8.0f} {d/len(lst):8.0f}")
    if save:
        print(f"(smaps saved in {save})")


if __name__ == "__main__":
    main()
