#!/usr/bin/env bash
# Line and branch coverage of the test suite, per module of sim/.
#
# Builds build-cov (gcov counters, -O0, no serve), runs every test that
# tests sim/ (not browser, install, deps), and reports with gcovr the lines
# and branches each module's tests execute. sim/model and sim/policy must
# reach 95 % of lines and 85 % of branches; below that the script exits 1.
# Their uncovered lines and branches are listed, file by file, to be read:
# each is tested, or marked in the source as unreachable with its reason,
#   /* unreachable: REASON */  ... GCOVR_EXCL_LINE (or _EXCL_BR_LINE)
# on the line gcovr should not count; a marker without a reason fails here.
# Branches gcc adds that no source can take (--exclude-unreachable-branches)
# are not counted.
#
# Usage: scripts/coverage.sh [--report-only]
#   --report-only  report, and exit 0 whatever the figures
# Writes build-cov/coverage.json (gcovr's JSON summary) and coverage.txt.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/deps.sh
strict=1
case ${1:-} in
  --report-only) strict=0 ;;
  '') ;;
  -h | --help) sed -n '2,18p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
  *) echo "coverage: unknown option $1 (allowed: --report-only)" >&2; exit 2 ;;
esac
rs_need_packages "${RS_BUILD_PACKAGES[@]}" "${RS_PLOT_PACKAGES[@]}" "${RS_TEST_PACKAGES[@]}" gcovr
jobs=$(nproc)
b=build-cov

# a marker that excludes code from the figures says why
bad=$(grep -nE 'GCOVR_EXCL' sim/model/*.c sim/policy/*.c | grep -vE 'unreachable: [a-z].{10,}' || true)
[ -z "$bad" ] || { echo "coverage: an exclusion without its reason ('unreachable: ...'):"; echo "$bad"; exit 1; }

cmake -S . -B $b -DCMAKE_BUILD_TYPE=Debug -DRS_COVERAGE=ON -DRS_SERVE=OFF -DRS_LTO=OFF -DBUILD_TESTING=ON > /dev/null
cmake --build $b -j "$jobs" > $b/build.log 2>&1 || { tail -30 $b/build.log; exit 1; }
find $b -name '*.gcda' -delete
failed=0
ctest --test-dir $b --output-on-failure -j "$jobs" -E '^(browser|install|deps)$' || failed=1

gcovr --root . --object-directory $b --filter 'sim/' --exclude-unreachable-branches \
  --json-summary $b/coverage.json --txt $b/coverage.txt > /dev/null
gcovr --root . --object-directory $b --filter 'sim/(model|policy)/' --exclude-unreachable-branches \
  --branches --txt $b/coverage-branches.txt > /dev/null

python3 - "$b/coverage.json" "$strict" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
mods = {}
for f in d["files"]:
    m = "/".join(f["filename"].split("/")[:2])
    a = mods.setdefault(m, [0, 0, 0, 0])
    a[0] += f["line_covered"]; a[1] += f["line_total"]
    a[2] += f["branch_covered"]; a[3] += f["branch_total"]
pct = lambda c, t: 100.0 * c / t if t else 100.0
print(f"{'module':12} {'lines':>16} {'branches':>16}")
bad = []
for m in sorted(mods):
    lc, lt, bc, bt = mods[m]
    print(f"{m:12} {lc:6}/{lt:<6} {pct(lc, lt):5.1f}% {bc:6}/{bt:<6} {pct(bc, bt):5.1f}%")
    if m in ("sim/model", "sim/policy"):
        if pct(lc, lt) < 95: bad.append(f"{m} lines {pct(lc, lt):.1f} % < 95 %")
        if pct(bc, bt) < 85: bad.append(f"{m} branches {pct(bc, bt):.1f} % < 85 %")
print("uncovered in sim/model and sim/policy (lines; branches in build-cov/coverage-branches.txt):")
for f in sorted(d["files"], key=lambda f: f["filename"]):
    if f["filename"].startswith(("sim/model/", "sim/policy/")) and f["line_covered"] < f["line_total"]:
        print(f"  {f['filename']}: {f['line_total'] - f['line_covered']} lines")
for b in bad:
    print("coverage: below target:", b)
sys.exit(1 if bad and sys.argv[2] == "1" else 0)
EOF
[ "$failed" = 0 ] || { echo "coverage: a test failed (the figures above are of a suite that did not pass)"; exit 1; }
