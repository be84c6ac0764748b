#!/usr/bin/env python3
"""tests/packaging/filter-allows.py UNIT [SYSCALL...]: the system calls a unit's SystemCallFilter=
lets through, computed as systemd does for an allow-list filter followed by deny (~) entries:
the union of the first assignments' sets minus the union of the ~ assignments' sets, with every
@group expanded (recursively) by `systemd-analyze syscall-filter`. Prints each SYSCALL that the
filter would refuse, one a line; exit 1 if there is one, 0 otherwise. With no SYSCALL, prints the
allowed set."""
import subprocess
import sys

_groups = {}


def expand(name):
    if not name.startswith("@"):
        return {name}
    if name not in _groups:
        out = subprocess.run(["systemd-analyze", "syscall-filter", name], check=True,
                             capture_output=True, text=True).stdout
        members = set()
        for line in out.splitlines()[1:]:
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            members |= expand(line)
        _groups[name] = members
    return _groups[name]


def main():
    allow, deny, seen_allow = set(), set(), False
    with open(sys.argv[1]) as f:
        for line in f:
            line = line.strip()
            if not line.startswith("SystemCallFilter="):
                continue
            value = line.split("=", 1)[1].strip()
            if not value:
                allow, deny, seen_allow = set(), set(), False
                continue
            target = allow
            if value.startswith("~"):
                target, value = deny, value[1:]
            else:
                seen_allow = True
            for word in value.split():
                target |= expand(word)
    if not seen_allow:
        sys.exit("no allow-list SystemCallFilter= in %s" % sys.argv[1])
    effective = allow - deny
    if len(sys.argv) == 2:
        print("\n".join(sorted(effective)))
        return 0
    refused = [s for s in sys.argv[2:] if s not in effective]
    for s in refused:
        print(s)
    return 1 if refused else 0


if __name__ == "__main__":
    sys.exit(main())
