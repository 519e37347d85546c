#!/usr/bin/env python3
"""svg_labels.py FILE.svg: every text of a gnuplot SVG lies within the
canvas and no two overlap. Exit 0, or 1 naming the texts at fault.

A text's box is estimated from its characters (DejaVu Sans advances: 0.32 em
for narrow ones, 0.64 em for the rest, a little more than most glyphs),
its font size (0.75 em above the baseline, 0.25 below), its anchor and its
rotation (the box's corners rotated; the bounding box of them kept). Used
by plot_test.sh on compare_summary.svg of a 7-variant comparison."""
import math, re, sys

NARROW = set(".,:;'!|ijlI ()[]-/t")

def width(text, size):
    return sum(0.32 if c in NARROW else 0.64 for c in text) * size

def boxes(svg):
    pat = re.compile(r'<g transform="translate\(([-\d.]+),([-\d.]+)\)(?: rotate\(([-\d.]+)\))?"[^>]*'
                     r'font-size="([\d.]+)"[^>]*text-anchor="(\w+)">\s*<text>(.*?)</text>', re.S)
    for m in pat.finditer(svg):
        x, y, rot, size, anchor, body = m.groups()
        text = re.sub(r'<[^>]*>', '', body).strip()
        if not text:
            continue
        x, y, size = float(x), float(y), float(size)
        w = width(text, size)
        x0 = {'start': 0, 'middle': -w / 2, 'end': -w}[anchor]
        corners = [(x0, -0.75 * size), (x0 + w, -0.75 * size), (x0, 0.25 * size), (x0 + w, 0.25 * size)]
        a = math.radians(float(rot or 0))
        pts = [(x + cx * math.cos(a) - cy * math.sin(a), y + cx * math.sin(a) + cy * math.cos(a)) for cx, cy in corners]
        yield text, min(p[0] for p in pts), min(p[1] for p in pts), max(p[0] for p in pts), max(p[1] for p in pts)

def main(path):
    svg = open(path, encoding='utf-8').read()
    vb = re.search(r'viewBox="0 0 ([\d.]+) ([\d.]+)"', svg)
    W, H = float(vb.group(1)), float(vb.group(2))
    bs = list(boxes(svg))
    bad = [f"'{t}' [{a:.0f},{b:.0f} to {c:.0f},{d:.0f}] is outside the {W:.0f}x{H:.0f} canvas"
           for t, a, b, c, d in bs if a < 0 or b < 0 or c > W or d > H]
    for i, (t, a, b, c, d) in enumerate(bs):
        for u, e, f, g, h in bs[i + 1:]:
            if a < g and e < c and b < h and f < d:
                bad.append(f"'{t}' overlaps '{u}'")
    for m in bad:
        print(f"{path}: {m}")
    if len(bs) < 10:
        print(f"{path}: only {len(bs)} texts found: not a gnuplot SVG this checker reads")
        return 1
    return 1 if bad else 0

sys.exit(main(sys.argv[1]))
