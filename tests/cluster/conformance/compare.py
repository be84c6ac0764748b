#!/usr/bin/env python3
"""Compares the ginkgo JSON reports of the two conformance runs (kcm.json, kcmd.json in --out).

Prints each run's pass/fail counts, the tests that pass under kcm and fail under kcmd and the
reverse, and each run's failures with the first line of the failure message. With --update-doc
FILE, the text between the results markers in FILE is replaced by the same information in
Markdown (the rest of the file is kept)."""
import argparse
import datetime
import json
import os
import sys

BEGIN = "<!-- conformance:begin results -->"
END = "<!-- conformance:end results -->"


def load(path):
    """name -> (state, first failure line, seconds) for the It specs that ran."""
    if not os.path.exists(path):
        return None
    with open(path) as f:
        reports = json.load(f)
    specs = {}
    suite_failures = []
    for rep in reports:
        for s in rep.get("SpecReports") or []:
            state = s.get("State", "")
            msg = ((s.get("Failure") or {}).get("Message") or "").strip().splitlines()
            msg = msg[0] if msg else ""
            if s.get("LeafNodeType") != "It":
                if state not in ("passed", "skipped"):
                    suite_failures.append("%s: %s %s" % (s.get("LeafNodeType"), state, msg))
                continue
            if state in ("skipped", "pending"):
                continue
            name = " ".join([t for t in s.get("ContainerHierarchyTexts") or []] + [s.get("LeafNodeText", "")])
            specs[name] = (state, msg, (s.get("RunTime") or 0) / 1e9)
    return specs, suite_failures


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--cmd", default="make conformance")
    ap.add_argument("--focus", default="")
    ap.add_argument("--skip", default="")
    ap.add_argument("--update-doc")
    a = ap.parse_args()
    runs = {}
    for side in ("kcm", "kcmd"):
        r = load(os.path.join(a.out, side + ".json"))
        if r is not None:
            runs[side] = r
    if not runs:
        print("conformance: no report found in %s (e2e.test did not run)" % a.out, file=sys.stderr)
        return 1
    lines = []
    for side, (specs, suite_failures) in runs.items():
        passed = sum(1 for v in specs.values() if v[0] == "passed")
        lines.append("%s: %d ran, %d passed, %d failed" % (side, len(specs), passed, len(specs) - passed))
        for f in suite_failures:
            lines.append("%s: suite: %s" % (side, f))
    diff_kcm_only, diff_kcmd_only, one_sided = [], [], []
    if len(runs) == 2:
        k, d = runs["kcm"][0], runs["kcmd"][0]
        for name in sorted(set(k) | set(d)):
            ks = k.get(name, ("not run", "", 0))[0]
            ds = d.get(name, ("not run", "", 0))[0]
            if ks == "not run" or ds == "not run":
                # the suite timeout or an interruption reached it in one run only
                one_sided.append((name, ks, ds))
            elif ks == "passed" and ds != "passed":
                diff_kcm_only.append((name, ds, d.get(name, ("", "", 0))[1]))
            elif ds == "passed" and ks != "passed":
                diff_kcmd_only.append((name, ks, k.get(name, ("", "", 0))[1]))
        lines.append("passing under kcm, not under kcmd: %d" % len(diff_kcm_only))
        for n, st, m in diff_kcm_only:
            lines.append("  %s  [kcmd: %s: %s]" % (n, st, m))
        lines.append("passing under kcmd, not under kcm: %d" % len(diff_kcmd_only))
        for n, st, m in diff_kcmd_only:
            lines.append("  %s  [kcm: %s: %s]" % (n, st, m))
        lines.append("ran in one run only (not compared): %d" % len(one_sided))
        for n, ks, ds in one_sided:
            lines.append("  %s  [kcm: %s, kcmd: %s]" % (n, ks, ds))
    for line in lines:
        print("conformance: " + line)

    if a.update_doc:
        md = []
        md.append(BEGIN)
        md.append("")
        md.append("Run on %s UTC with `%s` (reports: `%s`)." % (
            datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M"), a.cmd, a.out))
        md.append("")
        md.append("| run | ran | passed | failed |")
        md.append("|---|---|---|---|")
        for side, (specs, _) in runs.items():
            passed = sum(1 for v in specs.values() if v[0] == "passed")
            md.append("| %s | %d | %d | %d |" % (side, len(specs), passed, len(specs) - passed))
        md.append("")
        if len(runs) == 2:
            md.append("**Passing under kcm, failing under kcmd (%d):**" % len(diff_kcm_only))
            md.append("")
            for n, st, m in diff_kcm_only or [("none", "", "")]:
                md.append("- `%s`%s" % (n, (" — kcmd: %s: %s" % (st, m.replace("|", "\\|"))) if st else ""))
            md.append("")
            md.append("**Passing under kcmd, failing under kcm (%d):**" % len(diff_kcmd_only))
            md.append("")
            for n, st, m in diff_kcmd_only or [("none", "", "")]:
                md.append("- `%s`%s" % (n, (" — kcm: %s: %s" % (st, m.replace("|", "\\|"))) if st else ""))
            md.append("")
            md.append("**Ran in one run only, not compared (%d):** the suite timeout or an interruption "
                      "reached them in the other run (%s)." % (len(one_sided), ", ".join(
                          "`%s` (kcm: %s, kcmd: %s)" % (n, ks, ds) for n, ks, ds in one_sided) or "none"))
            md.append("")
        md.append("Every test that ran, per run (P = passed, F = failed or timed out):")
        md.append("")
        sides = list(runs)
        md.append("| test | " + " | ".join(sides) + " |")
        md.append("|---|" + "---|" * len(sides))
        names = sorted(set().union(*[set(runs[s][0]) for s in sides]))
        for n in names:
            cells = []
            for s in sides:
                st = runs[s][0].get(n, ("-", "", 0))[0]
                cells.append("P" if st == "passed" else ("-" if st == "-" else "F (%s)" % st))
            md.append("| %s | %s |" % (n.replace("|", "\\|"), " | ".join(cells)))
        md.append("")
        md.append(END)
        with open(a.update_doc) as f:
            text = f.read()
        if BEGIN not in text or END not in text:
            print("conformance: %s has no results markers" % a.update_doc, file=sys.stderr)
            return 1
        head, rest = text.split(BEGIN, 1)
        _, tail = rest.split(END, 1)
        with open(a.update_doc, "w") as f:
            f.write(head + "\n".join(md) + tail)
    return 0


if __name__ == "__main__":
    sys.exit(main())
