#!/usr/bin/env bash
# Figures a user drew are not lost (issue 33, item 5): `plot` records in
# figures.csv what it drew and from which data; a rerun into the same -o
# with the same seed keeps them, byte for byte; with another seed it says
# exactly which it removed and how to redraw them; figures that --plot
# draws again are named as replaced; a record that is not ours keeps
# nothing and says so; the redraw command quotes a title for a shell; a
# sweep rerun, which empties its directory in place, names what went; a
# user's own file is never touched. And a comparison of a service graph
# draws a figure per service, a line per variant, and a sweep one per
# service over its key (item 6). Skipped (exit 77) without gnuplot.
set -uo pipefail
. "$(dirname "$0")/lib.sh"
if ! command -v gnuplot > /dev/null; then
  echo "gnuplot not found: plot tests skipped"
  exit 77
fi
d=$tmp/run
run() { "$bin" run storm --set run.duration=90s -o "$d" "$@" > /dev/null 2> "$tmp/err"; }
figs="attempts.png attempts.svg cdf.png cdf.svg latency.png latency.svg load.gif load.png load.svg queue.png queue.svg"
pngs=$(echo $figs | sed 's/ load.gif//')
list=$(echo $pngs | sed 's/ /, /g')
said() { grep -qxF -- "$1" "$tmp/err" || { fail "not said: $1"; sed 's/^/  stderr: /' "$tmp/err"; }; }

run || fail "run"
"$bin" plot "$d" --style slide > /dev/null || fail "plot --style slide"
"$bin" plot "$d" --style slide --animate > /dev/null || fail "plot --style slide --animate"
mkdir "$tmp/drawn" && for f in $figs; do cp "$d/$f" "$tmp/drawn/" || fail "plot drew no $f"; done
# the same seed: the same data (but wall_s), every figure kept as it was
run || fail "rerun, same seed"
said "retrystorm: kept 10 figures drawn by \`plot --style slide\` from the same data ($list)"
said "retrystorm: kept 1 figure drawn by \`plot --style slide --animate\` from the same data (load.gif)"
for f in $figs; do cmp -s "$d/$f" "$tmp/drawn/$f" || fail "same seed: $f lost or changed"; done
grep -q '^load.gif,[0-9a-f]\{16\},slide,0x0,0,1,$' "$d/figures.csv" || fail "figures.csv does not record load.gif"
# with --plot the run draws the same names again: those are replaced, the GIF kept
run --plot || fail "rerun --plot"
said "retrystorm: kept 1 figure drawn by \`plot --style slide --animate\` from the same data (load.gif)"
said "retrystorm: replaced 10 figures drawn by \`plot --style slide\` with those --plot drew ($list); redraw with: retrystorm plot $d --style slide"
cmp -s "$d/load.gif" "$tmp/drawn/load.gif" || fail "--plot: load.gif lost or changed"
cmp -s "$d/load.png" "$tmp/drawn/load.png" && fail "--plot: load.png is still the slide one"
# another seed: other data, every figure plot drew (load.gif is left) removed, and said so
run --seed 2 || fail "rerun, seed 2"
said "retrystorm: removed 1 figure drawn by \`plot --style slide --animate\` from the old data (load.gif); redraw with: retrystorm plot $d --style slide --animate"
for f in load.gif figures.csv; do [ -e "$d/$f" ] && fail "seed 2: $f left"; done
# the redraw command quotes the title for a shell, its newline kept inside the quotes
"$bin" plot "$d" --title "x'; touch $tmp/pwned; '"$'\n''line 2' > /dev/null || fail "plot --title"
run || fail "rerun, seed 1"
want="redraw with: retrystorm plot $d --title 'x'\\''; touch $tmp/pwned; '\\''"$'\n'"line 2'"$'\n'
[[ $(cat "$tmp/err"; echo .) == *"$want"* ]] || { fail "the title is not quoted"; cat "$tmp/err"; }
# a record that is not ours keeps nothing, and says so
"$bin" plot "$d" > /dev/null || fail "plot, default look"
sed -i '2s/^[^,]*,/timeseries.csv,/' "$d/figures.csv"
run || fail "rerun, bad record"
said "retrystorm: $d/figures.csv is not a record of ours (line 2 is not a figure, a digest and a look): the figures it lists are not kept"
[ -e "$d/load.png" ] && fail "a bad record kept a figure"
[ -s "$d/timeseries.csv" ] || fail "a bad record cost the data"
# a user's own file is never touched: the directory is not ours any more
"$bin" plot "$d" --style slide > /dev/null || fail "plot, slide"
echo "my notes" > "$d/notes.txt"
cp "$d/notes.txt" "$tmp/notes.txt"
expect 2 "holds files that are not a retrystorm output" -- "$bin" run storm --set run.duration=90s --seed 3 -o "$d"
run --seed 3 --force || fail "rerun --force"
cmp -s "$d/notes.txt" "$tmp/notes.txt" || fail "--force: the user's notes.txt changed"
[ -s "$d/load.png" ] || fail "--force: a figure in a directory not ours was removed"

# compare on a graph of three services: compare_service_NAME per service,
# each with every variant
c=$tmp/cmp
"$bin" compare cascade --set run.duration=45s --vary layer.api-db.attempts=1,3 -o "$c" --plot > "$tmp/cmp.log" 2>&1 ||
  { cat "$tmp/cmp.log"; fail "compare cascade"; }
for s in edge api db; do
  for t in png svg; do [ -s "$c/compare_service_$s.$t" ] || fail "no compare_service_$s.$t"; done
  grep -q "service $s, variants compared" "$c/compare_service_$s.svg" || fail "compare_service_$s.svg: no title"
  for v in api-db.attempts=1 api-db.attempts=3; do grep -q ">$v<" "$c/compare_service_$s.svg" || fail "compare_service_$s.svg: no $v"; done
done
[ "$(ls "$c" | grep -c '^compare_service_')" = 6 ] || fail "not one figure per service and format"
# plot --label: kept in labels.csv, drawn in every figure of the comparison
# (the per-service ones too), and carried to a rerun that names none, so the
# figures drawn with it are kept; a rerun with another --label removes them
"$bin" plot "$c" --label 'api-db.attempts=3=three tries' > /dev/null || fail "plot --label"
grep -qx 'api-db.attempts=3,three tries' "$c/labels.csv" || fail "plot --label: not kept in labels.csv"
for s in edge api db; do grep -q '>three tries<' "$c/compare_service_$s.svg" || fail "compare_service_$s.svg: no --label text"; done
"$bin" compare cascade --set run.duration=45s --vary layer.api-db.attempts=1,3 -o "$c" > /dev/null 2> "$tmp/err" || fail "compare again"
grep -q '^retrystorm: kept 14 figures drawn by `plot` from the same data' "$tmp/err" || { fail "rerun: plot --label's figures not kept"; cat "$tmp/err"; }
grep -q '>three tries<' "$c/compare_service_db.svg" || fail "rerun: the kept figure lost its label"
"$bin" compare cascade --set run.duration=45s --vary layer.api-db.attempts=1,3 --label 'api-db.attempts=3=3' -o "$c" > /dev/null 2> "$tmp/err" || fail "compare --label"
grep -q '^retrystorm: removed 14 figures drawn by `plot` from the old data' "$tmp/err" || { fail "rerun with another --label: figures not removed"; cat "$tmp/err"; }
# sweep --plot on the same graph: sweep_service_NAME per service, over the key
"$bin" sweep cascade --set run.duration=45s --grid layer.api-db.attempts=1,3 -j 1 -o "$tmp/sw" --plot > "$tmp/sw.log" 2>&1 ||
  { cat "$tmp/sw.log"; fail "sweep cascade"; }
for s in edge api db; do
  for t in png svg; do [ -s "$tmp/sw/sweep_service_$s.$t" ] || fail "no sweep_service_$s.$t"; done
  grep -q "service $s over layer.api-db.attempts" "$tmp/sw/sweep_service_$s.svg" || fail "sweep_service_$s.svg: no title"
done
[ "$(ls "$tmp/sw" | grep -c '^sweep_service_')" = 6 ] || fail "a sweep: not one figure per service and format"
# a sweep empties its directory in place: it keeps nothing, but says which went
"$bin" plot "$tmp/sw" --style slide > /dev/null || fail "plot the sweep"
swl=$(ls "$tmp/sw" | grep -E '[.](png|svg)$' | LC_ALL=C sort | paste -sd, | sed 's/,/, /g')
"$bin" sweep cascade --set run.duration=45s --grid layer.api-db.attempts=1,3 -j 1 -o "$tmp/sw" > /dev/null 2> "$tmp/err" || fail "sweep again"
said "retrystorm: removed 12 figures drawn by \`plot --style slide\` with the earlier output ($swl); redraw with: retrystorm plot $tmp/sw --style slide"
# a variant's directory is read only as itself: a link in its place draws nothing
rm -f "$c"/compare_service_*
mv "$c/api-db.attempts=1" "$tmp/elsewhere" && ln -s "$tmp/elsewhere" "$c/api-db.attempts=1"
"$bin" plot "$c" --force > /dev/null 2>&1 || fail "plot with a linked variant"
ls "$c" | grep -q '^compare_service_' && fail "a linked variant directory was read"
finish
