#!/usr/bin/env bash
# Plots and compare: every plot script runs on small real outputs and writes
# a non-empty PNG and SVG; compare writes its combined files with a variant
# column. Then issue 12 (never run what we read): hostile keys, values and
# directory names run nothing; planted links are not followed; a malformed
# file is refused naming its line; gnuplot's stderr is shown; an interrupt
# stops gnuplot within a second. Service graphs draw a figure per service,
# runs with caches one per cache; a hostile services.csv or caches.csv is
# refused. Skipped (exit 77, reported as skipped by ctest) without gnuplot.
set -uo pipefail
. "$(dirname "$0")/lib.sh"
if ! command -v gnuplot > /dev/null; then
  echo "gnuplot not found: plot tests skipped"
  exit 77
fi
check() { # files that must exist and be non-empty
  for f in "$@"; do
    [ -s "$f" ] || fail "$f missing or empty"
  done
}
"$bin" run storm --set run.duration=90s -o "$tmp/run" --plot > "$tmp/run.log" || { cat "$tmp/run.log"; exit 1; }
for fig in load queue latency cdf attempts; do check "$tmp/run/$fig.png" "$tmp/run/$fig.svg"; done
grep -q '<svg' "$tmp/run/load.svg" || fail "load.svg is not SVG"
head -c 8 "$tmp/run/load.png" | grep -q PNG || fail "load.png is not PNG"
"$bin" compare storm --set run.duration=90s --vary layer.app.attempts=1,3 -o "$tmp/cmp" --plot > "$tmp/cmp.log" || { cat "$tmp/cmp.log"; exit 1; }
check "$tmp/cmp/compare.png" "$tmp/cmp/compare.svg" "$tmp/cmp/summary.csv" "$tmp/cmp/timeseries.csv" \
      "$tmp/cmp/attempts=1/summary.csv" "$tmp/cmp/attempts=3/summary.csv"
head -1 "$tmp/cmp/summary.csv" | grep -q '^variant,layer.app.attempts,reps,requests,requests_sd,requests_hw,' || fail "summary.csv header"
[ "$(wc -l < "$tmp/cmp/summary.csv")" = 3 ] || fail "summary.csv rows"
# map --plot: the phase diagram, one boundary line per --duration; a key
# with a quote and a level that is not a probability in envelope.csv (read
# back as hostile input) run nothing and are refused
"$bin" map storm --set run.duration=100s --set phase.spike.start=20s --load load.rate=700/s,800/s --duration phase.spike.end=25s,30s \
  --trigger phase.spike.rate=x1.2..x2 --resolution 0.4 --reps 5 -o "$tmp/map" --plot > "$tmp/map.log" || { cat "$tmp/map.log"; exit 1; }
check "$tmp/map/map.png" "$tmp/map/map.svg" "$tmp/map/map.csv" "$tmp/map/boundary.csv" "$tmp/map/envelope.csv"
grep -q 'boundary, 30s (bracket)' "$tmp/map/map.svg" || fail "map.svg has no boundary line for the duration 30s"
cp -r "$tmp/map" "$tmp/map-q"
key="a'b\`system('touch $tmp/pwned')\`\"c"
awk -v k="$key" '/^load_key,/ { print "load_key," k; next } { print }' "$tmp/map/envelope.csv" > "$tmp/map-q/envelope.csv"
grep -qF "load_key,$key" "$tmp/map-q/envelope.csv" || fail "the hostile key was not planted"
"$bin" plot "$tmp/map-q" > /dev/null 2>&1 || fail "a quoted key in envelope.csv was refused"
[ -e "$tmp/pwned" ] && fail "a key in envelope.csv ran a command"
sed -i 's/^level,.*/level,2/' "$tmp/map-q/envelope.csv"
expect 2 "envelope.csv: level 2 is not a probability" -- "$bin" plot "$tmp/map-q"
# A comparison draws a set: latency CDFs, attempts and a summary by variant,
# from latency.csv and attempts.csv behind the variant's columns and
# summary.csv's half-widths (empty with one replication, numbers with two)
for fig in compare_cdf compare_attempts compare_summary; do check "$tmp/cmp/$fig.png" "$tmp/cmp/$fig.svg"; done
head -1 "$tmp/cmp/latency.csv" | grep -q '^variant,layer.app.attempts,outcome,quantile,latency_s$' || fail "latency.csv header"
head -1 "$tmp/cmp/attempts.csv" | grep -q '^variant,layer.app.attempts,level,attempts,' || fail "attempts.csv header"
field() { awk -F, -v c="$2" -v r="${3:-2}" 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == c) k = i } NR == r { print $k }' "$1"; }
[ -z "$(field "$tmp/cmp/summary.csv" amplification_hw)" ] || fail "a half-width from one replication"
[ -n "$(field "$tmp/cmp/summary.csv" peak_rate_1s)" ] || fail "no peak_rate_1s in summary.csv"
"$bin" compare storm --set run.duration=90s --vary layer.app.attempts=1,3 --reps 2 -o "$tmp/cmp2" --plot > "$tmp/cmp2.log" || { cat "$tmp/cmp2.log"; exit 1; }
grep -q 'peak 1s /s' "$tmp/cmp2.log" || fail "the table's peak column is not the 1 s peak"
[ -n "$(field "$tmp/cmp2/summary.csv" amplification_hw 3)" ] || fail "no half-width from two replications"
[ -n "$(field "$tmp/cmp2/replications.csv" peak_rate_1s 5)" ] || fail "no peak_rate_1s in replications.csv"
grep -qi nan "$tmp/cmp2/"*.csv && fail "NaN in a comparison's CSV"
check "$tmp/cmp2/compare_summary.png"
"$bin" compare aws-occ --vary layer.app.backoff=none,full --vary load.clients=10,20 --reps 2 -o "$tmp/occ" --plot > "$tmp/occ.log" || { cat "$tmp/occ.log"; exit 1; }
check "$tmp/occ/occ.png" "$tmp/occ/occ.svg" "$tmp/occ/replications.csv"
[ -n "$(awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "lat_max_hw") k = i } NR == 2 && k { print $k }' "$tmp/occ/summary.csv")" ] ||
  fail "aws-occ's summary.csv has no lat_max_hw for its error bars"
[ "$(wc -l < "$tmp/occ/replications.csv")" = 9 ] || fail "replications.csv rows"
"$bin" sweep storm --set run.duration=80s --grid layer.app.attempts=1..2 --grid layer.app.timeout=100ms,200ms \
  --reps 2 -o "$tmp/sweep" --quiet --plot > "$tmp/sweep.log" || { cat "$tmp/sweep.log"; exit 1; }
for m in ok_share amplification lat_p99; do check "$tmp/sweep/sweep_$m.png" "$tmp/sweep/sweep_$m.svg"; done
"$bin" sweep storm --set run.duration=80s --grid layer.app.attempts=1..3 --reps 2 -o "$tmp/sweep1" --quiet --plot > /dev/null
check "$tmp/sweep1/sweep_ok_share.png"
# one key without replications: the _hw cells are empty; the line is drawn
# without error bars (gnuplot failed on it: "all points y value undefined")
"$bin" sweep storm --set run.duration=80s --grid layer.app.attempts=1..3 -o "$tmp/sweep0" --quiet --plot > "$tmp/sweep0.log" 2>&1 \
  || fail "sweep --plot without --reps: $(cat "$tmp/sweep0.log")"
check "$tmp/sweep0/sweep_ok_share.png"
# Service graphs: one figure per service of services.csv, PNG and SVG
# (cascade: three services; lb-crash: one of three replicas), none for a
# run without services.
"$bin" run cascade -o "$tmp/graph" --plot > "$tmp/graph.log" || { cat "$tmp/graph.log"; exit 1; }
for s in edge api db; do check "$tmp/graph/service_$s.png" "$tmp/graph/service_$s.svg"; done
[ "$(ls "$tmp/graph" | grep -c '^service_')" = 6 ] || fail "cascade: not one figure per service"
grep -q '<svg' "$tmp/graph/service_db.svg" || fail "service_db.svg is not SVG"
"$bin" run lb-crash -o "$tmp/lb" > /dev/null || fail "lb-crash"
"$bin" plot "$tmp/lb" > "$tmp/lb.log" 2>&1 || { cat "$tmp/lb.log"; fail "plot of lb-crash"; }
check "$tmp/lb/service_api.png" "$tmp/lb/service_api.svg"
ls "$tmp/run" | grep -q '^service_' && fail "service figures for a run without services"
# A hostile services.csv (a name that would be a path or code, NaN, too many
# rows) is refused, exit 2 naming the file and line, and nothing is drawn.
hostile_services() { # NAME VALUE AWK-PROGRAM PATTERN: cascade's services.csv edited by the program
  rm -rf "$tmp/hs" && mkdir "$tmp/hs" && cp "$tmp/graph/"*.csv "$tmp/graph/scenario.ini" "$tmp/hs/"
  awk -F, -v OFS=, -v v="$2" "$3" "$tmp/graph/services.csv" > "$tmp/hs/services.csv"
  expect 2 "$4" -- "$bin" plot "$tmp/hs" --force
  ls "$tmp/hs" | grep -q '\.png$' && fail "$1: figures drawn from a hostile services.csv"
}
hostile_services quote "x'.system('touch pwned7').'" 'NR == 3 { $2 = v } { print }' \
  "hs/services.csv:3: the service name 'x'\.system\('touch pwned7'\)\.'' is not 1 to 47"
hostile_services dquote 'a"b' 'NR == 3 { $2 = v } { print }' 'hs/services.csv:3: a double quote in column 2'
hostile_services slash "../../evil" 'NR == 4 { $2 = v } { print }' "hs/services.csv:4: the service name '\.\./\.\./evil' is not"
hostile_services nan NaN 'NR == 5 { $9 = v } { print }' "hs/services.csv:5: 'NaN' in column busy is not a number"
hostile_services rows "0,a,0,0,0,0,0,0,0,0,0,0,0" 'NR == 1 { print; for (i = 0; i <= 1000000; i++) print v; exit }' \
  "hs/services.csv:1000002: more than 1000000 rows"
find "$tmp" -name pwned7 | grep -q . && fail "a service's name ran a command"
rm -rf "$tmp/hs"
# Caches: one figure per cache of caches.csv, PNG and SVG (cache-flush: one
# cache), none for a run without caches; a second run into the directory
# replaces them (they are recognised as ours).
"$bin" run cache-flush --set run.duration=90s -o "$tmp/cache" --plot > "$tmp/cache.log" || { cat "$tmp/cache.log"; exit 1; }
check "$tmp/cache/cache_objects.png" "$tmp/cache/cache_objects.svg"
[ "$(ls "$tmp/cache" | grep -c '^cache_')" = 2 ] || fail "cache-flush: not one figure per cache"
grep -q '<svg' "$tmp/cache/cache_objects.svg" || fail "cache_objects.svg is not SVG"
grep -q 'NaN' "$tmp/cache/cache_objects.svg" && fail "cache_objects.svg shows NaN"
"$bin" run cache-flush --set run.duration=80s -o "$tmp/cache" --plot > "$tmp/cache2.log" 2>&1 ||
  { cat "$tmp/cache2.log"; fail "a rerun into a directory with cache figures"; }
ls "$tmp/run" "$tmp/graph" | grep -q '^cache_' && fail "cache figures for a run without caches"
# A hostile caches.csv (a name that would be a path or code, NaN, too many
# rows, rows out of order) is refused, exit 2 naming the file and line, and
# nothing is drawn.
hostile_caches() { # NAME VALUE AWK-PROGRAM PATTERN: cache-flush's caches.csv edited by the program
  rm -rf "$tmp/hc" && mkdir "$tmp/hc" && cp "$tmp/cache/"*.csv "$tmp/cache/scenario.ini" "$tmp/hc/"
  awk -F, -v OFS=, -v v="$2" "$3" "$tmp/cache/caches.csv" > "$tmp/hc/caches.csv"
  expect 2 "$4" -- "$bin" plot "$tmp/hc" --force
  ls "$tmp/hc" | grep -q '\.png$' && fail "$1: figures drawn from a hostile caches.csv"
}
hostile_caches quote "x'.system('touch pwned8').'" 'NR == 3 { $2 = v } { print }' \
  "hc/caches.csv:3: the cache name 'x'\.system\('touch pwned8'\)\.'' is not 1 to 47"
hostile_caches dquote 'a"b' 'NR == 3 { $2 = v } { print }' 'hc/caches.csv:3: a double quote in column 2'
hostile_caches slash "../../evil" 'NR == 4 { $2 = v } { print }' "hc/caches.csv:4: the cache name '\.\./\.\./evil' is not"
hostile_caches nan NaN 'NR == 5 { $4 = v } { print }' "hc/caches.csv:5: 'NaN' in column hits is not a number"
hostile_caches order other 'NR == 6 { $2 = v } { print }' "hc/caches.csv:6: cache 'other' where 'objects' was expected"
hostile_caches rows "0,a,0,0,0,0,0,0,0" 'NR == 1 { print; for (i = 0; i <= 1000000; i++) print v; exit }' \
  "hc/caches.csv:1000002: more than 1000000 rows"
find "$tmp" -name pwned8 | grep -q . && fail "a cache's name ran a command"
rm -rf "$tmp/hc"
# Legends and titles (docs/labels.md): compare --label reaches the figures
# through labels.csv, plot --label adds to it; none reads "no backoff
# (immediate)"; --title is the whole title, and without it the suffix stays.
"$bin" compare jitter --set run.duration=45s --vary layer.app.backoff=none,full --label 'backoff=full=Full jitter' -o "$tmp/leg" --plot > "$tmp/leg.log" 2>&1 || fail "compare --label --plot: $(cat "$tmp/leg.log")"
for fig in compare compare_cdf compare_attempts compare_summary; do
  grep -q '>Full jitter<' "$tmp/leg/$fig.svg" || fail "$fig.svg: no legend 'Full jitter'"
  grep -q '>no backoff (immediate)<' "$tmp/leg/$fig.svg" || fail "$fig.svg: none is not 'no backoff (immediate)'"
done
grep -q 'jitter: variants compared on the same seed' "$tmp/leg/compare.svg" || fail "compare.svg: the default title lost its suffix"
"$bin" plot "$tmp/leg" --title 'Jitter in two lines' --label 'layer.app.backoff=none=Immediate=0 ms' > "$tmp/leg2.log" 2>&1 || fail "plot --title --label: $(cat "$tmp/leg2.log")"
grep -q '>Jitter in two lines<' "$tmp/leg/compare.svg" || fail "compare.svg: not titled by --title"
grep -q 'variants compared on the same seed' "$tmp/leg/compare.svg" && fail "compare.svg: --title kept the suffix"
grep -q '>Immediate=0 ms<' "$tmp/leg/compare.svg" && grep -q '>Full jitter<' "$tmp/leg/compare.svg" || fail "plot --label: the legends"
expect 2 "^retrystorm: --label 'backoff=equal=x': names no variant; give VARIANT=TEXT with VARIANT one of: backoff=none, backoff=full$" -- "$bin" plot "$tmp/leg" --label 'backoff=equal=x'
expect 2 "^retrystorm: --label 'a=b': .*/run is not a comparison; only compare's variants take labels$" -- "$bin" plot "$tmp/run" --label 'a=b'
printf 'variant,label\nbackoff=full,a"b\n' > "$tmp/leg/labels.csv"
expect 2 "labels\.csv:2: the text 'a\"b' holds a double quote" -- "$bin" plot "$tmp/leg"
# The look: --size, --style slide, --font-scale; a title with quotes,
# backslashes, a newline and code is drawn as text and runs nothing; a bad
# value exits 2 naming the option, the value and what is allowed; --animate
# writes an animated GIF (GIF89a, more than one frame) that leaves the
# directory ours.
png_size() { od -An -tu1 -j16 -N8 "$1" | awk '{ print $1 * 16777216 + $2 * 65536 + $3 * 256 + $4 "x" $5 * 16777216 + $6 * 65536 + $7 * 256 + $8 }'; }
"$bin" run storm --set run.duration=90s -o "$tmp/look" > /dev/null || fail "run for the look"
"$bin" plot "$tmp/look" --size 800x500 > /dev/null || fail "plot --size 800x500"
[ "$(png_size "$tmp/look/load.png")" = 800x500 ] || fail "--size 800x500 gave $(png_size "$tmp/look/load.png")"
[ "$(png_size "$tmp/look/cdf.png")" = 800x500 ] || fail "--size is not applied to every figure"
title=$(printf "It's a \"storm\" \\ '.system('touch pwned9').' @t\nsecond line")
(cd "$tmp" && "$bin" plot "$tmp/look" --style slide --title "$title" --font-scale 2) > /dev/null || fail "plot --style slide --title"
[ "$(png_size "$tmp/look/latency.png")" = 1920x1080 ] || fail "--style slide is not 1920x1080"
grep -q "system(.*touch pwned9" "$tmp/look/load.svg" || fail "the title is not drawn as text"
grep -q "second line" "$tmp/look/load.svg" || fail "the title's second line is not drawn"
find "$tmp" -name pwned9 | grep -q . && fail "a title ran a command"
expect 2 "plot: --size 10x10: expected WIDTHxHEIGHT in pixels, width 320 to 7680 and height 240 to 4320" -- "$bin" plot "$tmp/look" --size 10x10
expect 2 "plot: --size 1920x1080x: expected WIDTHxHEIGHT" -- "$bin" plot "$tmp/look" --size 1920x1080x
expect 2 "plot: --font-scale 9: expected a number from 0.5 to 4" -- "$bin" plot "$tmp/look" --font-scale 9
expect 2 "plot: --style poster: expected slide" -- "$bin" plot "$tmp/look" --style poster
expect 2 "plot: --title: a control character \(byte 9\)" -- "$bin" plot "$tmp/look" --title "$(printf 'a\tb')"
expect 2 "plot: --size needs a value" -- "$bin" plot "$tmp/look" --size
"$bin" plot "$tmp/look" --animate > "$tmp/anim.log" 2>&1 || { cat "$tmp/anim.log"; fail "plot --animate"; }
[ "$(head -c 6 "$tmp/look/load.gif")" = GIF89a ] || fail "load.gif is not a GIF89a"
frames=$(LC_ALL=C grep -obUaP '\x21\xF9\x04' "$tmp/look/load.gif" | wc -l)
[ "$frames" -gt 1 ] || fail "load.gif has $frames frames"
"$bin" plot "$tmp/look" > /dev/null 2>&1 || fail "a directory with load.gif is no longer ours"
"$bin" plot "$tmp/cmp" --animate > /dev/null 2>&1 || fail "plot --animate of a comparison"
[ "$(head -c 6 "$tmp/cmp/compare.gif")" = GIF89a ] || fail "compare.gif is not a GIF89a"
ls -a "$tmp/look" "$tmp/cmp" | grep -q '\.tmp' && fail "temporary files left by the look"
# Slides (issue 33). --animate draws the GIF only: no PNG or SVG is drawn
# again; a directory with no load over time (a map) is refused, exit 2.
rm -f "$tmp/look/"*.png "$tmp/look/"*.svg "$tmp/look/load.gif"
"$bin" plot "$tmp/look" --animate > "$tmp/anim2.log" 2>&1 || { cat "$tmp/anim2.log"; fail "plot --animate (the GIF only)"; }
grep -q '1 animated GIF in' "$tmp/anim2.log" || { cat "$tmp/anim2.log"; fail "plot --animate does not say it drew one GIF"; }
[ -s "$tmp/look/load.gif" ] || fail "plot --animate drew no load.gif"
ls "$tmp/look" | grep -qE '\.(png|svg)$' && fail "plot --animate drew $(ls "$tmp/look" | grep -E '\.(png|svg)$' | tr '\n' ' ')"
ls -l --time-style=+%s "$tmp/map" > "$tmp/map-before.ls"
expect 2 "--animate: .*/map has no load over time to animate" -- "$bin" plot "$tmp/map" --animate
ls -l --time-style=+%s "$tmp/map" | cmp -s - "$tmp/map-before.ls" || fail "a refused plot --animate changed the map's directory"
# A GIF's axes are its PNG's, and a latency CDF's x axis spans its data:
# a gnuplot in front of the real one appends to each script a line that
# prints the figure's kind, terminal and axis ranges as drawn (GPVAL_*: of
# the last panel, compare's goodput).
mkdir "$tmp/axes"
cat > "$tmp/axes/gnuplot" <<'END'
#!/bin/sh
[ -x "$REAL_GNUPLOT" ] && ! [ "$REAL_GNUPLOT" -ef "$0" ] || { echo "no real gnuplot behind the wrapper" >&2; exit 127; }
cat > "$AXES_DIR/script"
kind=other
grep -q '^# Load over time' "$AXES_DIR/script" && kind=load
grep -q '^# A comparison (compare' "$AXES_DIR/script" && kind=compare
grep -q '^# End-to-end latency CDF' "$AXES_DIR/script" && kind=cdf
{ cat "$AXES_DIR/script"; printf '\nset print "%s" append\nprint sprintf("%s %%s %%.6g %%.6g %%.6g %%.6g", GPVAL_TERM, GPVAL_X_MIN, GPVAL_X_MAX, GPVAL_Y_MIN, GPVAL_Y_MAX)\n' "$AXES_DIR/log" "$kind"; } |
  "$REAL_GNUPLOT" "$@"
END
chmod +x "$tmp/axes/gnuplot"
real_gnuplot=$(command -v gnuplot) # found before the wrapper is first in PATH
axes() { PATH="$tmp/axes:$PATH" AXES_DIR="$tmp/axes" REAL_GNUPLOT="$real_gnuplot" "$bin" plot "$@" > /dev/null 2>&1 || fail "plot $* (reporting axes)"; }
axes "$tmp/cmp" --style slide
axes "$tmp/cmp" --style slide --animate
axes "$tmp/look" --style slide
axes "$tmp/look" --style slide --animate
for kind in compare load; do
  png=$(awk -v k="$kind" '$1 == k && $2 == "pngcairo" { $2 = ""; print; exit }' "$tmp/axes/log")
  gif=$(awk -v k="$kind" '$1 == k && $2 == "gif" { $2 = ""; print; exit }' "$tmp/axes/log")
  [ -n "$png" ] && [ "$png" = "$gif" ] || fail "$kind: the GIF's axes ($gif) are not the PNG's ($png)"
done
# the CDF: from the decade of the least first percentile (at least 1 ns)
# to the decade above the greatest latency
awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
         $c["outcome"] == "all" && $c["quantile"] >= 0.01 && $c["latency_s"] >= 1e-9 && (lo == "" || $c["latency_s"] < lo) { lo = $c["latency_s"] }
         $c["latency_s"] > hi { hi = $c["latency_s"] }
         END { print lo, hi }' "$tmp/cmp/latency.csv" > "$tmp/axes/data"
read -r lo hi < "$tmp/axes/data"
awk -v lo="$lo" -v hi="$hi" '$1 == "cdf" && $2 == "pngcairo" { found = 1; ok = $3 <= lo && $3 > lo / 10 && $4 >= hi && $4 < hi * 10 }
     END { exit !(found && ok) }' "$tmp/axes/log" ||
  fail "compare_cdf's x axis ($(awk '$1 == "cdf" && $2 == "pngcairo" { print $3, $4; exit }' "$tmp/axes/log")) does not span its data, $lo to $hi, to whole decades"
# compare_summary of the 7-variant jitter comparison, default and slide:
# every text within the canvas, no two overlapping (svg_labels.py)
"$bin" compare jitter --set run.duration=50s --set run.bucket=1s --vary layer.app.backoff=none,constant,linear,exponential,full,equal,decorrelated \
  -o "$tmp/j7" --plot > "$tmp/j7.log" 2>&1 || { cat "$tmp/j7.log"; fail "compare jitter, 7 variants"; }
python3 "$(dirname "$0")/svg_labels.py" "$tmp/j7/compare_summary.svg" || fail "compare_summary.svg: texts collide or leave the canvas"
"$bin" plot "$tmp/j7" --style slide > /dev/null 2>&1 || fail "plot --style slide, 7 variants"
python3 "$(dirname "$0")/svg_labels.py" "$tmp/j7/compare_summary.svg" || fail "compare_summary.svg (slide): texts collide or leave the canvas"
# Shading covers the whole plot height on any y axis (log ones too): every
# phase rectangle of every script spans graph 0 to graph 1 in y.
for gp in "$(dirname "$0")"/../plots/*.gp; do
  grep -E 'set object .* rect ' "$gp" | grep -vE 'rect from [^,]+, graph 0 to [^,]+, graph 1 ' |
    sed "s|^|$(basename "$gp"): a rectangle not from graph 0 to graph 1 in y: |" | grep . && fail "$(basename "$gp") shades in data units of y"
done

# plot on a directory with nothing to draw is a clear error
mkdir "$tmp/emptyd"
"$bin" plot "$tmp/emptyd" > "$tmp/empty.log" 2>&1 && fail "plot on an empty directory succeeded"
grep -q 'no retrystorm output to plot' "$tmp/empty.log" || { echo "FAIL: message"; cat "$tmp/empty.log"; fails=$((fails + 1)); }
ls -a "$tmp/run" "$tmp/cmp" | grep -q '\.tmp' && fail "temporary files left"
# A sweep whose keys (experiment.csv, sweep.csv's header) and values would
# run commands if they were pasted into a gnuplot script: drawn, nothing run.
cp -r "$tmp/sweep" "$tmp/evil"
k1="x'.system(\"touch $tmp/pwned1\").'" k2="y\`touch $tmp/pwned2\`@title"
v1="'.system(\"touch $tmp/pwned3\").'" v2="''\`touch $tmp/pwned4\`''"
awk -v a="$k1" -v b="$k2" '$0 == "key,layer.app.attempts,attempts" { $0 = "key," a ",x" }
  $0 == "key,layer.app.timeout,timeout" { $0 = "key," b } { print }' "$tmp/sweep/experiment.csv" > "$tmp/evil/experiment.csv"
grep -qF "key,$k1,x" "$tmp/evil/experiment.csv" && grep -qxF "key,$k2" "$tmp/evil/experiment.csv" ||
  fail "the hostile keys were not planted"
awk -v a="$k1" -v b="$k2" -v c="$v1" -v d="$v2" 'BEGIN { FS = OFS = "," }
  NR == 1 { $2 = a; $3 = b } NR > 1 { $3 = $3 == "100ms" ? c : d } { print }' \
  "$tmp/sweep/sweep.csv" > "$tmp/evil/sweep.csv"
(cd "$tmp" && "$bin" plot "$tmp/evil" --force) > "$tmp/evil.log" 2>&1 || { cat "$tmp/evil.log"; fail "plot of hostile keys"; }
check "$tmp/evil/sweep_ok_share.png" "$tmp/evil/sweep_lat_p99.svg"
ls "$tmp" "$tmp/evil" | grep -q pwned && fail "a key or value from the sweep's files ran a command"

# -o and DIR names are never pasted into a script: a quote and a space work,
# and a directory named like code runs nothing.
"$bin" run storm --set run.duration=90s -o "$tmp/it's a dir" --plot > "$tmp/quote.log" 2>&1 ||
  { cat "$tmp/quote.log"; fail "run --plot into a directory named with a quote and a space"; }
check "$tmp/it's a dir/load.png" "$tmp/it's a dir/attempts.svg"
cp -r "$tmp/run" "$tmp/d'.system(\"touch pwned5\").'"
(cd "$tmp" && "$bin" plot --force "d'.system(\"touch pwned5\").'") > "$tmp/dname.log" 2>&1 ||
  { cat "$tmp/dname.log"; fail "plot of a directory named like code"; }
find "$tmp" -name pwned5 | grep -q . && fail "a directory's name ran a command"

# Links planted at the old temporary names and at a figure's name: nothing
# outside the directory is written, and the figure replaces the link.
"$bin" run storm --set run.duration=90s -o "$tmp/sym" > /dev/null || fail "run for the planted links"
for v in 1 2 3; do echo precious > "$tmp/victim$v"; done
ln -s "$tmp/victim1" "$tmp/sym/.load.png.tmp"
ln -s "$tmp/victim2" "$tmp/sym/.gnuplot-errors.tmp"
ln -s "$tmp/victim3" "$tmp/sym/load.svg"
"$bin" plot "$tmp/sym" --force > "$tmp/sym.log" 2>&1 || { cat "$tmp/sym.log"; fail "plot with planted links"; }
for v in 1 2 3; do
  [ "$(cat "$tmp/victim$v")" = precious ] || fail "a planted link was followed: victim$v overwritten"
done
[ -f "$tmp/sym/load.svg" ] && [ ! -L "$tmp/sym/load.svg" ] || fail "load.svg is still the planted link"

# A malformed file is refused (exit 2), naming the file and line, and nothing is drawn.
mkdir "$tmp/bad" && cp "$tmp/run/"*.csv "$tmp/run/scenario.ini" "$tmp/bad/"
awk 'NR == 3 { sub(/^[^,]*/, "ok\033]0;owned\007") } { print }' "$tmp/run/latency.csv" > "$tmp/bad/latency.csv"
"$bin" plot "$tmp/bad" --force > "$tmp/bad.log" 2>&1
rc=$?
[ $rc = 2 ] || fail "plot of a malformed latency.csv: exit $rc"
grep -q "bad/latency.csv:3: a control character (byte 27) in column outcome" "$tmp/bad.log" ||
  { cat -v "$tmp/bad.log"; fail "the message does not name latency.csv:3"; }
[ -e "$tmp/bad/load.png" ] && fail "figures drawn from a malformed directory"
# A data file that is a link to a file outside is not read (nor drawn into
# a figure inside the directory).
cp "$tmp/bad/latency.csv" "$tmp/outside.csv" && cp "$tmp/run/latency.csv" "$tmp/bad/latency.csv"
ln -sf "$tmp/outside.csv" "$tmp/bad/timeseries.csv"
"$bin" plot "$tmp/bad" --force > "$tmp/link.log" 2>&1 && fail "plot read a linked timeseries.csv"
grep -q "bad/timeseries.csv is a symbolic link: refused" "$tmp/link.log" ||
  { cat "$tmp/link.log"; fail "the message does not name the linked timeseries.csv"; }

# A fake gnuplot first in PATH: what it says on stderr is in the message
# (the error, not the echo of its input or the caret under it).
mkdir "$tmp/fake"
cat > "$tmp/fake/gnuplot" <<'EOF'
#!/bin/sh
cat > /dev/null
printf '\ngnuplot> plot x\n          ^\n         line 0: warning: minor\n         line 0: all points y value undefined!\n' >&2
exit 1
EOF
chmod +x "$tmp/fake/gnuplot"
PATH="$tmp/fake:$PATH" "$bin" plot "$tmp/run" > "$tmp/said.log" 2>&1 && fail "plot succeeded with a failing gnuplot"
grep -q 'gnuplot failed on load.png: all points y value undefined' "$tmp/said.log" ||
  { cat "$tmp/said.log"; fail "gnuplot's error is not in the message"; }

# A run of 10^5 buckets (issue 29): gnuplot gets at most 4096 rows of its
# timeseries.csv a figure (min and max per run of buckets, plotdec.h), as a
# datablock, and never the file's name; the file stays whole; the real
# gnuplot draws it.
"$bin" run storm --set run.duration=100s --set run.bucket=1ms -o "$tmp/fine" > "$tmp/fine.log" || { cat "$tmp/fine.log"; exit 1; }
sum_before=$(md5sum < "$tmp/fine/timeseries.csv")
printf '#!/bin/sh\ncat >> "$0.in"\necho x >&3\n' > "$tmp/fake/gnuplot"
PATH="$tmp/fake:$PATH" "$bin" plot "$tmp/fine" > "$tmp/fine-fake.log" 2>&1 || { cat "$tmp/fine-fake.log"; fail "plot with a counting gnuplot"; }
awk '/^\$ts_data << EOD$/ { n = 0; on = 1; next } /^EOD$/ { if (n > m) m = n; on = 0; b++ } on { n++ }
     /\047timeseries\.csv\047/ { whole = 1 } END { exit !(b >= 3 && m > 1000 && m <= 4097 && !whole) }' "$tmp/fake/gnuplot.in" ||
  fail "gnuplot got more than 4096 rows of a 10^5-bucket timeseries.csv, or the file itself"
rm -f "$tmp/fake/gnuplot.in"
"$bin" plot "$tmp/fine" > "$tmp/fine-plot.log" 2>&1 || { cat "$tmp/fine-plot.log"; fail "plot of a 10^5-bucket run"; }
check "$tmp/fine/load.png" "$tmp/fine/queue.svg" "$tmp/fine/latency.png"
[ "$(md5sum < "$tmp/fine/timeseries.csv")" = "$sum_before" ] || fail "plot changed timeseries.csv"

# Interrupts while gnuplot runs (a fake that hangs): retrystorm stops it and
# exits within a second, leaving no gnuplot and no temporary behind.
cat > "$tmp/fake/gnuplot" <<EOF
#!/bin/sh
echo \$\$ > "$tmp/fake/pid"
exec sleep 3
EOF
now_ms() { echo $(($(date +%s%N) / 1000000)); }
interrupt() { # NAME group|pid COMMAND...: runs COMMAND, sends SIGINT once gnuplot runs
  local name=$1 target=$2 pid t0 i
  shift 2
  rm -f "$tmp/fake/pid"
  PATH="$tmp/fake:$PATH" setsid "$@" > "$tmp/$name.log" 2>&1 &
  pid=$!
  for i in $(seq 100); do [ -s "$tmp/fake/pid" ] && break; sleep 0.1; done
  [ -s "$tmp/fake/pid" ] || { fail "$name: gnuplot never started"; kill -KILL "$pid"; return; }
  t0=$(now_ms)
  if [ "$target" = group ]; then kill -INT -- "-$pid"; else kill -INT "$pid"; fi
  for i in $(seq 20); do kill -0 "$pid" 2> /dev/null || break; sleep 0.1; done
  if kill -0 "$pid" 2> /dev/null; then
    fail "$name: still running 2 s after SIGINT"
    kill -KILL "$pid" "$(cat "$tmp/fake/pid")" 2> /dev/null
  fi
  wait "$pid"
  [ $(($(now_ms) - t0)) -le 1000 ] || fail "$name: took $(($(now_ms) - t0)) ms to stop"
  kill -0 "$(cat "$tmp/fake/pid")" 2> /dev/null && fail "$name: gnuplot left running"
  grep -q 'gnuplot failed' "$tmp/$name.log" && { cat "$tmp/$name.log"; fail "$name: reported as a gnuplot failure"; }
  grep -q 'interrupted' "$tmp/$name.log" || { cat "$tmp/$name.log"; fail "$name: no word of the interruption"; }
}
# Ctrl-C at a terminal signals the whole foreground process group ...
interrupt ctrl-c group "$bin" plot "$tmp/run"
ls -a "$tmp/run" | grep -q '\.tmp' && fail "ctrl-c: temporary files left"
# ... kill -INT signals retrystorm alone.
interrupt run-plot pid "$bin" run storm --set run.duration=90s -o "$tmp/intr" --plot
finish
