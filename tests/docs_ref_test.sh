#!/usr/bin/env bash
# The manual's key and column references follow the code, both ways:
#  - docs/scenarios.md documents every key `retrystorm list keys` prints: a
#    row of one of its key tables (| section | key | meaning | default |)
#    whose section cell holds the key's section (`[layer NAME]`) and whose
#    key cell holds the key in backquotes; and every key that page names,
#    in a table row or as a dotted reference (`layer.app.timeout`,
#    `--set load.rate=...`), is a key the parser knows;
#  - docs/outputs.md names every column of `retrystorm list metrics` and
#    every file an output directory may hold (the list `our_files` in
#    sim/io/outdir.c, and the animations), each in backquotes; and every
#    name it gives as a summary column (in the `summary.csv` item and under
#    "Summary columns, every one") is a column `list metrics` prints.
# A failure names the missing or extra item and the page.
# Usage: docs_ref_test.sh RETRYSTORM SOURCE_DIR
set -uo pipefail
. "$(dirname "$0")/lib.sh"
src=$(realpath "$2")
"$bin" list keys >"$tmp/keys" 2>&1 || fail "list keys failed: $(head -3 "$tmp/keys")"
"$bin" list metrics >"$tmp/metrics" 2>&1 || fail "list metrics failed: $(head -3 "$tmp/metrics")"
python3 - "$tmp/keys" "$tmp/metrics" "$src" >"$tmp/out" 2>&1 <<'PY'
import re, sys, os
keys_file, metrics_file, src = sys.argv[1:4]
keys = [l.split()[0] for l in open(keys_file) if l.strip()]
metrics = [l.split()[0] for l in open(metrics_file).read().splitlines()[1:] if l.strip()]
fails = []
def fail(msg): fails.append(msg)
if len(keys) < 100 or len(metrics) < 50:
    fail(f"list keys / list metrics gave {len(keys)} / {len(metrics)} names (has the output changed?)")

# ---- docs/scenarios.md and the keys ----
page = 'docs/scenarios.md'
text = open(os.path.join(src, page)).read()
SECT = re.compile(r'`\[([a-z]+)( NAME)?\]`')
documented = {}          # key -> line
section = None
for n, line in enumerate(text.splitlines(), 1):
    if not line.startswith('|'):
        section = None
        continue
    cells = [c.strip() for c in line.strip().strip('|').split('|')]
    if len(cells) < 4:
        continue
    if cells[0]:
        found = SECT.findall(cells[0])
        section = [s + ('.NAME' if named else '') for s, named in found] or None
    if not section:
        continue
    for name in re.findall(r'`([a-z][a-z0-9_]*)`', cells[1]):
        for s in section:
            documented.setdefault(f'{s}.{name}', n)
known = set(keys)
for k in keys:
    if k not in documented:
        fail(f"{page}: no row documents the key '{k}' (list keys prints it): add it to a key table")
for k, n in sorted(documented.items(), key=lambda kv: kv[1]):
    if k not in known:
        fail(f"{page}:{n}: the table names the key '{k}', which list keys does not print")
# dotted references in backquotes: section.key or section.NAME.key
NAMED = ('layer', 'service', 'cache', 'phase')
PLAIN = ('run', 'load', 'server', 'herd')
FILE_EXT = re.compile(r'\.(csv|png|svg|gif|ini|json|md|c|h|sh|gp)$')
for n, line in enumerate(text.splitlines(), 1):
    for span in re.findall(r'`([^`]+)`', line):
        for m in re.finditer(r'(?<![\w./-])(run|load|server|herd|layer|service|cache|phase)\.([A-Za-z0-9_#-]+)(?:\.([a-z_]+))?', span):
            sect, a, b = m.groups()
            if FILE_EXT.search(m.group(0)):
                continue
            if sect in PLAIN:
                key = f'{sect}.{a}'
            elif b:
                key = f'{sect}.NAME.{b}'
            else:
                continue  # e.g. `layer.app`: a section, not a key
            if key not in known:
                fail(f"{page}:{n}: '{m.group(0)}' names the key '{key}', which list keys does not print")

# ---- docs/outputs.md: columns and files ----
page = 'docs/outputs.md'
text = open(os.path.join(src, page)).read()
prose = re.sub(r'^```.*?^```[^\n]*$', '', text, flags=re.S | re.M)  # fenced blocks out: their backquotes pair among themselves
ticked = set(re.findall(r'`([^`]+)`', prose))
for c in metrics:
    if c not in ticked:
        fail(f"{page}: the column '{c}' (list metrics prints it) is not named (in backquotes)")
outdir = open(os.path.join(src, 'sim/io/outdir.c')).read()
m = re.search(r'our_files\[\]\s*=\s*\{(.*?)\};', outdir, re.S)
files = re.findall(r'"([^"]+)"', m.group(1)) if m else []
if 'MARKER' in (m.group(1) if m else ''):
    mk = re.search(r'#define MARKER "([^"]+)"', outdir)
    files.append(mk.group(1) if mk else '.retrystorm')
a = re.search(r'our_animations\[\]\s*=\s*\{(.*?)\};', outdir, re.S)
files += re.findall(r'"([^"]+)"', a.group(1)) if a else []
if len(files) < 20:
    fail(f"sim/io/outdir.c: found {len(files)} output file names in our_files and our_animations (has the list moved?)")
for f in files:
    if f not in ticked:
        fail(f"{page}: the output file '{f}' (sim/io/outdir.c writes it) is not named (in backquotes)")
# names given as summary columns: the `summary.csv` item and the
# "Summary columns, every one" section
blocks = []
item = re.search(r'^- `summary\.csv`.*?(?=^- |^\S)', text, re.S | re.M)
if item: blocks.append(item.group(0))
else: fail(f"{page}: no item starting '- `summary.csv`' (the summary columns)")
sec = re.search(r'^### Summary columns, every one\n(.*?)(?=^#)', text, re.S | re.M)
if sec: blocks.append(sec.group(1))
else: fail(f"{page}: no section '### Summary columns, every one'")
known_cols = set(metrics)
key_words = {k.rsplit('.', 1)[1] for k in keys}
for blk in blocks:
    for name in re.findall(r'`([^`\s]+)`', blk):
        if not re.fullmatch(r'[a-z<>][a-z0-9_<>]*', name):
            continue  # a file, a value or an option, not a column name
        if name in known_cols or name in key_words:
            continue
        fail(f"{page}: names the summary column '{name}', which list metrics does not print")
for f in fails: print('FAIL:', f)
print(len(fails))
PY
py_rc=$?
grep '^FAIL:' "$tmp/out" | while IFS= read -r l; do echo "$l"; done
n=$(tail -1 "$tmp/out")
[ "$py_rc" = 0 ] && [[ $n =~ ^[0-9]+$ ]] || { cat "$tmp/out"; fail "the reference check did not run"; }
[[ $n =~ ^[0-9]+$ ]] && fails=$((fails + n))
finish
