#!/usr/bin/env python3
# tests/packaging/test-docs.py (in `make unit`): the man pages and /etc/default/kcmd stay in
# step with the programs, so `make test-packaging` (slow) does not have to find a missing flag.
#
# - every flag `build/bin/kcmd --help` prints is described in packaging/kcmd.8 and listed as
#   `# --flag=default` in packaging/default/kcmd; flags of a tool that is not a controller
#   (a section "<name> flags:" whose <name> is not in --help's controller list: the kubelet
#   simulator, left out of the package) need the man page only. The list comes from the binary,
#   so a controller flag another change adds is checked without editing this test.
# - every command `kcmctl` prints in its usage, and every option of `kcmctl top`, is in
#   packaging/kcmctl.1;
# - the bash completion (packaging/completion/kcmd.bash) completes every kcmd flag and every
#   kcmctl command;
# - both man pages render without groff warnings (when man is installed);
# - the README's plot (docs/headline.svg) is what tools/plot-headline.py draws from
#   docs/headline.tsv, every kcmd/kcm figure of the TSV is in the README's table, and the README
#   shows the plot;
# - docs/operations.md's table of kcm's controllers is what tools/gen-controller-table.py writes
#   for this build, and every controller kcmd builds is turned on by '*' exactly when kcm's is;
# - the checks themselves fail on a man page with one flag removed (self-test).
# Exit: 0 pass, 1 fail, 77 skip (kcmd not built).
import os
import re
import shutil
import subprocess
import sys
import tempfile

top = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
bindir = os.environ.get("KCMD_BIN_DIR", os.path.join(top, "build", "bin"))
kcmd, kcmctl = os.path.join(bindir, "kcmd"), os.path.join(bindir, "kcmctl")
if not (os.access(kcmd, os.X_OK) and os.access(kcmctl, os.X_OK)):
    print("SKIP: build/bin/kcmd or kcmctl not built")
    sys.exit(77)


def kcmd_flags():
    out = subprocess.run([kcmd, "--help"], capture_output=True, text=True).stdout
    controllers, section, flags = set(), None, []
    in_ctl = False
    for line in out.splitlines():
        if line.startswith("Controllers ("):
            in_ctl = True
            continue
        if in_ctl:
            m = re.match(r"^  ([a-z0-9-]+)\s", line)
            if m:
                controllers.add(m.group(1))
                continue
            in_ctl = False
        m = re.match(r"^([a-z0-9-]+) flags:$", line)
        if m:
            section = m.group(1)
            continue
        m = re.match(r"^  (--[a-z][a-z0-9-]*)", line)
        if m and m.group(1) not in ("--help", "--version"):
            flags.append((m.group(1), section))
    if not flags or not controllers:
        sys.exit("cannot parse kcmd --help:\n" + out)
    return [(f, s is None or s in controllers) for f, s in flags]


def man_text(path):
    # groff's \- is a plain '-' for the reader
    return open(path).read().replace("\\-", "-")


def missing_man(flags, man):
    # a flag is described when it appears as itself, not as the prefix of a longer flag
    return [f for f, _ in flags if not re.search(re.escape(f) + r"(?![a-z0-9-])", man)]


def missing_default(flags, default):
    return [f for f, shipped in flags
            if shipped and not re.search(r"^# " + re.escape(f) + r"(=|$)", default, re.M)]


def kcmctl_commands():
    r = subprocess.run([kcmctl], capture_output=True, text=True)
    cmds = set()
    for line in (r.stderr + r.stdout).splitlines():
        m = re.search(r"kcmctl (?:\[--pid PID\] )?([a-z-]+(?: (?:stats|list|get))?)", line)
        if m:
            cmds.add(m.group(1))
    if r.returncode != 2 or len(cmds) < 5:
        sys.exit("cannot parse kcmctl's usage:\n" + r.stderr)
    return sorted(cmds)


fails = []
flags = kcmd_flags()
man8 = man_text(os.path.join(top, "packaging", "kcmd.8"))
default = open(os.path.join(top, "packaging", "default", "kcmd")).read()
for f in missing_man(flags, man8):
    fails.append(f"{f}: in kcmd --help, not in packaging/kcmd.8")
for f in missing_default(flags, default):
    fails.append(f"{f}: in kcmd --help, not in packaging/default/kcmd as '# {f}=<default>'")

man1 = man_text(os.path.join(top, "packaging", "kcmctl.1"))
cmds = kcmctl_commands()
for c in cmds:
    # a command is described by an entry (.B/.TP) or in the synopsis in bold
    if not re.search(r"(\\fB|\.B )" + re.escape(c).replace(r"\ ", r"(\\fR)? ?(\\fB)?"), man1):
        fails.append(f"kcmctl {c}: in kcmctl's usage, not in packaging/kcmctl.1")
topusage = subprocess.run([kcmctl, "top", "--bogus"], capture_output=True, text=True).stderr
for opt in re.findall(r"(--[a-z]+|-o)\b", topusage.split(" top ", 1)[-1]):
    if opt not in man1:
        fails.append(f"kcmctl top {opt}: in its usage, not in packaging/kcmctl.1")

# bash completion: `kcmd --<TAB>` offers every flag, `kcmctl <TAB>` every command
comp = os.path.join(top, "packaging", "completion", "kcmd.bash")
script = f"""source '{comp}'
PATH='{bindir}':$PATH
COMP_WORDS=(kcmd --); COMP_CWORD=1; COMPREPLY=(); _kcmd; echo "kcmd: ${{COMPREPLY[*]}}"
COMP_WORDS=(kcmctl ''); COMP_CWORD=1; COMPREPLY=(); _kcmctl; echo "kcmctl: ${{COMPREPLY[*]}}"
"""
r = subprocess.run(["bash", "-c", script], capture_output=True, text=True)
offered = {l.split(": ", 1)[0]: set(l.split(": ", 1)[1].split()) for l in r.stdout.splitlines() if ": " in l}
for f, _ in flags:
    if f not in offered.get("kcmd", set()):
        fails.append(f"{f}: not offered by the bash completion of kcmd")
for c in {c.split()[0] for c in cmds}:
    if c not in offered.get("kcmctl", set()):
        fails.append(f"kcmctl {c}: not offered by the bash completion of kcmctl")

plot = subprocess.run([sys.executable, os.path.join(top, "tools", "plot-headline.py"), "--check",
                       os.path.join(top, "docs", "headline.tsv"), os.path.join(top, "docs", "headline.svg")],
                      capture_output=True, text=True)
if plot.returncode != 0:
    fails.append("docs/headline.svg: " + (plot.stdout + plot.stderr).strip())
readme = open(os.path.join(top, "README.md"), encoding="utf-8").read()
if "docs/headline.svg" not in readme:
    fails.append("README.md does not show docs/headline.svg")
for line in open(os.path.join(top, "docs", "headline.tsv"), encoding="utf-8"):
    if line.startswith("#") or not line.strip():
        continue
    name, unit, a, b = line.rstrip("\n").split("\t")
    for v in (a, b):
        if not re.search(r"(?<![\d.])" + re.escape(v) + r"(?![\d])", readme):
            fails.append(f"docs/headline.tsv: {name}: {v} {unit} is not in the README's table")
if shutil.which("man"):
    for page in ("kcmd.8", "kcmctl.1"):
        r = subprocess.run(["man", "--warnings", "-l", os.path.join(top, "packaging", page)],
                           capture_output=True, text=True,
                           env=dict(os.environ, LC_ALL="C.UTF-8", MANWIDTH="80"))
        if r.stderr.strip():
            fails.append(f"packaging/{page}: groff warnings:\n{r.stderr}")

# kcm's controllers beside kcmd's
sys.path.insert(0, os.path.join(top, "tools"))
gen = __import__("gen-controller-table")
want, kcm_ctl, kcmd_ctl = gen.table(kcmd)
ops = open(os.path.join(top, "docs", "operations.md"), encoding="utf-8").read()
m = re.search(r"<!-- controller-table -->\n(.*?)<!-- /controller-table -->", ops, re.S)
if not m or m.group(1) != want:
    fails.append("docs/operations.md: the table of kcm's controllers is not this build's "
                 "(tools/gen-controller-table.py writes it)")
for name, on in kcm_ctl:
    if name in kcmd_ctl and kcmd_ctl[name] != on:
        fails.append(f"{name}: '*' turns it {'on' if kcmd_ctl[name] else 'off'} in kcmd, "
                     f"{'on' if on else 'off'} in kcm")

# self-test: drop one controller flag's mentions from the man page and the default file
victim = next((f for f, shipped in flags if shipped and f.startswith("--concurrent-")), flags[0][0])
doctored = re.sub(re.escape(victim) + r"(?![a-z0-9-])", "--removed", man8)
if victim not in missing_man(flags, doctored):
    fails.append(f"self-test: a kcmd.8 without {victim} was not caught")
if victim not in missing_default(flags, re.sub(r"^# " + re.escape(victim) + "=", "# x=", default, flags=re.M)):
    fails.append(f"self-test: a default file without {victim} was not caught")

print(f"{len(flags)} kcmd flags ({sum(1 for _, s in flags if not s)} of test tools), "
      f"kcmctl commands: {', '.join(cmds)}")
for f in fails:
    print("FAIL", f)
sys.exit(1 if fails else 0)
