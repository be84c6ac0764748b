#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Draws docs/headline.svg (the README's plot) from docs/headline.tsv: one row of two bars a
figure, kcmd beside upstream kcm, each bar as a share of the larger of the two (lower is better
for every figure). Usage: plot-headline.py [TSV] [SVG]; `--check` exits 1 when SVG is not what
TSV draws (the docs test runs that)."""
import sys
from xml.sax.saxutils import escape


def rows(path):
    out = []
    for line in open(path, encoding="utf-8"):
        if not line.strip() or line.startswith("#"):
            continue
        name, unit, a, b = line.rstrip("\n").split("\t")
        out.append((name, unit, float(a.replace(",", "")), float(b.replace(",", ""))))
    return out


def fmt(v):
    return ("%.2f" % v).rstrip("0").rstrip(".")


def draw(data):
    w, label_w, bar_w, row_h = 720, 230, 400, 44
    h = 40 + row_h * len(data) + 20
    o = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" '
         'font-family="sans-serif" font-size="13">' % (w, h),
         '<rect width="100%" height="100%" fill="white"/>',
         '<text x="10" y="20" font-weight="bold">kcmd vs upstream kube-controller-manager '
         '(same run; lower is better)</text>',
         '<rect x="%d" y="28" width="12" height="10" fill="#2b7bba"/>'
         '<text x="%d" y="37">kcmd</text>' % (label_w, label_w + 16),
         '<rect x="%d" y="28" width="12" height="10" fill="#b0b0b0"/>'
         '<text x="%d" y="37">kcm</text>' % (label_w + 70, label_w + 86)]
    for i, (name, unit, a, b) in enumerate(data):
        y = 48 + i * row_h
        top = max(a, b) or 1.0
        o.append('<text x="10" y="%d">%s</text>' % (y + 17, escape(name)))
        for j, (v, colour) in enumerate(((a, "#2b7bba"), (b, "#b0b0b0"))):
            bw = max(1, round(bar_w * v / top))
            yy = y + 4 + j * 18
            o.append('<rect x="%d" y="%d" width="%d" height="15" fill="%s"/>'
                     % (label_w, yy, bw, colour))
            o.append('<text x="%d" y="%d">%s %s</text>'
                     % (label_w + bw + 6, yy + 12, fmt(v), escape(unit)))
    o.append("</svg>")
    return "\n".join(o) + "\n"


def main(argv):
    check = "--check" in argv
    args = [a for a in argv if a != "--check"]
    tsv = args[0] if args else "docs/headline.tsv"
    svg = args[1] if len(args) > 1 else "docs/headline.svg"
    text = draw(rows(tsv))
    if check:
        try:
            cur = open(svg, encoding="utf-8").read()
        except OSError:
            cur = None
        if cur != text:
            print("%s is not what %s draws: run tools/plot-headline.py" % (svg, tsv))
            return 1
        return 0
    open(svg, "w", encoding="utf-8").write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
