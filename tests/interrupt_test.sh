#!/usr/bin/env bash
# Interruption and output directories: SIGINT stops a run and a sweep at
# their next batch of events; what they wrote is valid CSV marked
# incomplete; the sweep resumes with --resume to exactly the result of an
# uninterrupted sweep; a directory holding other files is refused unless
# --force and left untouched; a rerun replaces an earlier output whole.
set -uo pipefail
. "$(dirname "$0")/lib.sh"
valid_csv() { # every row has as many fields as the header
  awk -F, 'NR==1{n=NF} NF!=n{bad=1} END{exit bad}' "$1" || fail "$1 is not rectangular CSV"
}
# a run: 2 million requests, interrupted after a moment
"$bin" run storm --set run.duration=3000s -o "$tmp/run" > /dev/null 2>&1 &
pid=$!
sleep 1
kill -INT $pid
wait $pid
rc=$?
[ $rc = 130 ] || fail "an interrupted run exited $rc, not 130"
for f in summary.csv timeseries.csv latency.csv attempts.csv layers.csv; do
  [ -s "$tmp/run/$f" ] || fail "interrupted run: $f missing"
  valid_csv "$tmp/run/$f"
done
awk -F, 'NR==1{for(i=1;i<=NF;i++)h[$i]=i} NR==2{exit $h["complete"]!=0}' "$tmp/run/summary.csv" \
  || fail "interrupted run not marked complete = 0"
grep -qi nan "$tmp/run/"*.csv && fail "NaN in an interrupted run's CSV"
# a sweep: interrupted, then resumed, equals an uninterrupted one
grid=(storm --set run.duration=200s --grid layer.app.attempts=1..4 --grid layer.app.timeout=100ms..800ms*2 --reps 2 -j 1 --quiet)
"$bin" sweep "${grid[@]}" -o "$tmp/whole" > /dev/null || fail "uninterrupted sweep"
"$bin" sweep "${grid[@]}" -o "$tmp/cut" > /dev/null 2>&1 &
pid=$!
sleep 1
kill -INT $pid
wait $pid
rc=$?
[ $rc = 130 ] || fail "an interrupted sweep exited $rc, not 130"
grep -q 'complete,0' "$tmp/cut/status.csv" || fail "interrupted sweep: status.csv does not say complete,0"
valid_csv "$tmp/cut/jobs.csv"
[ -e "$tmp/cut/sweep.csv" ] && fail "an interrupted sweep wrote sweep.csv"
out=$("$bin" sweep "${grid[@]}" -o "$tmp/cut" 2>&1) && fail "rerunning over an unfinished sweep without --resume succeeded"
grep -q -- '--resume' <<<"$out" || fail "no pointer to --resume: $out"
"$bin" sweep "${grid[@]}" -o "$tmp/cut" --resume > /dev/null || fail "resume"
cmp -s "$tmp/cut/sweep.csv" "$tmp/whole/sweep.csv" || fail "resumed sweep differs from an uninterrupted one"
cmp -s "$tmp/cut/jobs.csv" "$tmp/whole/jobs.csv" || fail "resumed jobs.csv differs"
# output directories
mkdir "$tmp/mine" && echo keep > "$tmp/mine/notes.txt"
out=$("$bin" run storm --set run.duration=80s -o "$tmp/mine" 2>&1)
[ $? = 2 ] || fail "writing into a foreign directory was not refused"
grep -q -- '--force' <<<"$out" || fail "no pointer to --force: $out"
[ "$(ls -A "$tmp/mine")" = notes.txt ] || fail "the foreign directory was touched"
"$bin" run storm --set run.duration=80s -o "$tmp/mine" --force > /dev/null || fail "--force"
"$bin" run storm --set run.duration=80s -o "$tmp/again" --reps 2 > /dev/null || fail "first run"
[ -e "$tmp/again/replications.csv" ] || fail "replications.csv"
"$bin" run storm --set run.duration=80s -o "$tmp/again" > /dev/null || fail "rerun into an earlier output"
[ -e "$tmp/again/replications.csv" ] && fail "a rerun left a file of the earlier output (a mix)"
ls -d "$tmp"/again.* 2> /dev/null && fail "work directories left behind"
finish
