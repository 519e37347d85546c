#!/usr/bin/env bash
# Output safety (issue 12), each case as a hostile user tried it: retrystorm
# deletes or replaces only what it provably created, never writes through a
# link or a predictable name, refuses malformed or mismatched result files
# with exit 2 naming file and line, keeps finished sweep jobs across a
# SIGKILL, stops compare and run --reps at SIGINT with what it has, and
# checks tune's metrics before running anything.
set -uo pipefail
. "$(dirname "$0")/lib.sh"
short=(--set run.duration=70s --set load.rate=50/s)
field() { # field FILE COLUMN: the value of COLUMN in FILE's last line
  awk -F, -v c="$2" 'NR==1{for(i=1;i<=NF;i++)h[$i]=i} END{print $h[c]}' "$1"
}

# -o naming an existing file (or a device) is refused and nothing is touched.
echo "my notes" > "$tmp/notes.txt"
expect 2 'not a directory' -- "$bin" run storm "${short[@]}" -o "$tmp/notes.txt"
[ "$(cat "$tmp/notes.txt")" = "my notes" ] || fail "-o FILE: the file was replaced"
# a device node of our own (never /dev/null: a binary with this bug replaces it)
if mknod "$tmp/null" c 1 3 2> /dev/null; then
  expect 2 'not a directory' -- "$bin" run storm "${short[@]}" -o "$tmp/null"
  [ -c "$tmp/null" ] || fail "-o DEVICE: the device was replaced"
fi

# --force writes our files into a foreign directory and leaves the rest.
mkdir "$tmp/theirs" && echo keep > "$tmp/theirs/thesis.tex" && mkdir "$tmp/theirs/data"
echo keep > "$tmp/theirs/data/x"
"$bin" run storm "${short[@]}" -o "$tmp/theirs" --force > /dev/null || fail "run --force"
[ "$(cat "$tmp/theirs/thesis.tex" 2> /dev/null)" = keep ] || fail "--force deleted a foreign file"
[ -f "$tmp/theirs/data/x" ] || fail "--force deleted a foreign subdirectory"
[ -s "$tmp/theirs/summary.csv" ] || fail "--force wrote no summary.csv"
[ -e "$tmp/theirs/.retrystorm" ] && fail "--force marked a foreign directory as ours"
# ... and a second run without --force is still refused there
expect 2 'add --force' -- "$bin" run storm "${short[@]}" -o "$tmp/theirs"

# A refused --resume leaves no marker; a later run does not take the directory for ours.
mkdir "$tmp/foreign" && echo keep > "$tmp/foreign/results.txt"
expect 2 'not a retrystorm output' -- "$bin" sweep storm "${short[@]}" --grid layer.app.attempts=1..2 --resume -o "$tmp/foreign"
[ -e "$tmp/foreign/.retrystorm" ] && fail "a refused --resume left a marker"
expect 2 'not a retrystorm output' -- "$bin" run storm "${short[@]}" -o "$tmp/foreign"
[ "$(ls -A "$tmp/foreign")" = results.txt ] || fail "the foreign directory was touched"

# Names an attacker can predict: the work directory of a run (once DIR.new-PID)
# and a sweep's temporaries (once .NAME.tmp.PID). exec keeps the shell's PID.
mkdir "$tmp/outside" && echo precious > "$tmp/outside/victim"
ln -s "$tmp/outside" "$tmp/planted"
bash -c 'ln -s "$1/outside" "$1/runout.new-$$"; exec "$2" run storm --set run.duration=70s --set load.rate=50/s -o "$1/runout"' \
  _ "$tmp" "$bin" > /dev/null 2>&1
[ "$(ls "$tmp/outside")" = victim ] || fail "a run wrote through a planted work directory link: $(ls "$tmp/outside")"
"$bin" sweep storm "${short[@]}" --grid layer.app.attempts=1..2 --quiet -o "$tmp/sw" > /dev/null || fail "sweep"
bash -c 'for f in experiment.csv jobs.csv status.csv sweep.csv; do ln -s "$1/outside/victim" "$1/sw/.$f.tmp.$$"; done
         exec "$2" sweep storm --set run.duration=70s --set load.rate=50/s --grid layer.app.attempts=1..2 --quiet -o "$1/sw"' \
  _ "$tmp" "$bin" > /dev/null 2>&1
[ "$(cat "$tmp/outside/victim")" = precious ] || fail "a sweep wrote through a planted temporary-file link"
# a symlink planted under one of our names is replaced, not followed
mkdir "$tmp/linked" && ln -s "$tmp/outside/victim" "$tmp/linked/summary.csv"
"$bin" run storm "${short[@]}" -o "$tmp/linked" --force > /dev/null || fail "run --force over a planted link"
[ "$(cat "$tmp/outside/victim")" = precious ] || fail "a run wrote through a planted summary.csv link"
[ -L "$tmp/linked/summary.csv" ] && fail "the planted link is still there"
# -o itself a symbolic link: refused, and the directory it points to untouched
expect 2 'symbolic link' -- "$bin" run storm "${short[@]}" -o "$tmp/planted"
[ "$(ls "$tmp/outside")" = victim ] || fail "-o LINK wrote into the link's target"

# Paths longer than the system's limit are an error, never truncated.
long="$tmp/long"
for i in $(seq 1 22); do long="$long/$(printf 'd%.0s' $(seq 1 200))"; done
expect 2 'longer than the system' -- "$bin" run storm "${short[@]}" -o "$long"
[ -e "$tmp/long" ] && fail "a path longer than PATH_MAX created a (truncated) directory"

# Crafted shard files: merge answers exit 2 naming the file and line, never a crash.
"$bin" sweep storm "${short[@]}" --grid layer.app.attempts=1..2 --reps 2 --shard 1/2 --quiet -o "$tmp/s1" > /dev/null || fail "shard 1"
"$bin" sweep storm "${short[@]}" --grid layer.app.attempts=1..2 --reps 2 --shard 2/2 --quiet -o "$tmp/s2" > /dev/null || fail "shard 2"
expect 0 'merged 2 shards' -- "$bin" merge "$tmp/s1" "$tmp/s2" -o "$tmp/merged"
cp -r "$tmp/s1" "$tmp/big" && sed -i 's/^points,.*/points,99999/; s/^reps,.*/reps,4096/' "$tmp/big/experiment.csv"
expect 2 'experiment.csv:[0-9]+:' -- "$bin" merge "$tmp/big" -o "$tmp/m1"
cp -r "$tmp/s1" "$tmp/over" && sed -i 's/^points,.*/points,18446744073709551615/' "$tmp/over/experiment.csv"
expect 2 'experiment.csv:[0-9]+:' -- "$bin" merge "$tmp/over" -o "$tmp/m2"
cp -r "$tmp/s1" "$tmp/wide" && awk -F, 'BEGIN{OFS=","} {s=$0; for(i=0;i<200;i++) s=s (NR==1 ? ",extra" i : ",1"); print s}' \
  "$tmp/s1/jobs.csv" > "$tmp/wide/jobs.csv"
expect 2 'jobs.csv:1:' -- "$bin" merge "$tmp/wide" "$tmp/s2" -o "$tmp/m3"
cp -r "$tmp/s1" "$tmp/badjob" && sed -i '2s/^[0-9]*,/99999999999,/' "$tmp/badjob/jobs.csv"
expect 2 'jobs.csv:2:' -- "$bin" merge "$tmp/badjob" "$tmp/s2" -o "$tmp/m4"
cp -r "$tmp/s1" "$tmp/nan" && sed -i '2s/,[0-9.]*$/,nan/' "$tmp/nan/jobs.csv"
expect 2 'jobs.csv:2:' -- "$bin" merge "$tmp/nan" "$tmp/s2" -o "$tmp/m5"
# a column twice (experiment.csv and jobs.csv agreeing), or named like a
# statistic: refused, never a table with a column twice
for pair in 'ok:requests' 'ok:reps' 'ok:ok_sd'; do
  d="$tmp/twice-${pair#*:}"
  cp -r "$tmp/s1" "$d" && sed -i "s/^column,${pair%:*},count\$/column,${pair#*:},count/" "$d/experiment.csv" &&
    sed -i "1s/,${pair%:*},/,${pair#*:},/" "$d/jobs.csv"
  expect 2 'experiment.csv:[0-9]+: not an experiment.csv' -- "$bin" merge "$d" -o "$tmp/m-${pair#*:}"
done
for m in m1 m2 m3 m4 m5; do [ -e "$tmp/$m" ] && fail "a refused merge created $m"; done

# Values out of their column's range in jobs.csv (issue 29): --resume and
# merge check every cell by its column's kind and refuse with exit 2, the
# file, line, value, column and what is allowed; --resume leaves the sweep's
# directory byte for byte as it was (sweep.csv not rewritten), merge creates
# nothing. The bounds themselves are accepted.
printf '[run]\nname = tiny\nduration = 2s\n[load]\nrate = 50/s\n[server]\nworkers = 2\nservice = exp(10ms)\n' > "$tmp/tiny.ini"
tiny=("$tmp/tiny.ini" --grid layer.app.attempts=1,2 --reps 2 -j 1 --quiet)
"$bin" sweep "${tiny[@]}" -o "$tmp/kinds" > /dev/null || fail "tiny sweep"
tamper() { # tamper DIR COLUMN VALUE: a copy of kinds in DIR, COLUMN of job 1 (line 3) set to VALUE
  rm -rf "$1" && cp -r "$tmp/kinds" "$1" &&
    awk -F, -v c="$2" -v v="$3" 'BEGIN { OFS = "," } NR == 1 { for (i = 1; i <= NF; i++) if ($i == c) k = i }
      NR == 3 { $k = v } 1' "$tmp/kinds/jobs.csv" > "$1/jobs.csv"
}
count='a count (an integer from 0 to 9007199254740992)'
share='a share (a number from 0 to 1)'
seconds='seconds (a finite number >= 0)'
while IFS='|' read -r col val allowed; do
  d="$tmp/tampered"
  tamper "$d" "$col" "$val" && rm -rf "$tmp/before" "$tmp/tm" && cp -r "$d" "$tmp/before"
  want="retrystorm: $d/jobs.csv:3: '$val' in column $col is not $allowed"
  out=$("$bin" sweep "${tiny[@]}" --resume -o "$d" 2>&1)
  rc=$?
  [ $rc = 2 ] && [ "$out" = "$want" ] || fail "--resume with $col = $val -> exit $rc: $out (wanted: $want)"
  diff -r "$tmp/before" "$d" > /dev/null || fail "a refused --resume with $col = $val changed $d"
  out=$("$bin" merge "$d" -o "$tmp/tm" 2>&1)
  rc=$?
  [ $rc = 2 ] && [ "$out" = "$want" ] || fail "merge with $col = $val -> exit $rc: $out (wanted: $want)"
  [ -e "$tmp/tm" ] && fail "a refused merge with $col = $val created its output"
done << EOF
requests|-5|$count
requests|1e30|$count
requests|18446744073709551616|$count
requests|9007199254740994|$count
events|1.5|$count
ok_share|1e308|$share
ok_share|-0.1|$share
ok_share|1.0000001|$share
in_flight_share|nan|$share
lat_p99|inf|$seconds
lat_mean|-0.001|$seconds
recovery_s|-1|$seconds
goodput|-inf|a finite number >= 0
amplification|-1e-9|a finite number >= 0
complete|2|a flag (0 or 1)
recovered|0.5|a flag (0 or 1)
EOF
# the bounds are values: both commands accept them
for cv in requests=9007199254740992 ok_share=1 ok_share=0 lat_p99=0 recovered=0; do
  tamper "$tmp/bound" "${cv%=*}" "${cv#*=}"
  "$bin" merge "$tmp/bound" -o "$tmp/bound-m" > /dev/null 2>&1 || fail "merge refused $cv"
  "$bin" sweep "${tiny[@]}" --resume -o "$tmp/bound" > /dev/null 2>&1 || fail "--resume refused $cv"
  rm -rf "$tmp/bound-m"
done

# An experiment has a fingerprint: other --set values are another experiment.
"$bin" sweep storm "${short[@]}" --grid layer.app.attempts=1..2 --reps 2 --shard 2/2 --set layer.app.timeout=300ms \
  --quiet -o "$tmp/s2x" > /dev/null || fail "shard 2 with another --set"
expect 2 'scenario differs' -- "$bin" merge "$tmp/s1" "$tmp/s2x" -o "$tmp/m6"
sed -i 's/^complete,1/complete,0/' "$tmp/s1/status.csv"
expect 2 'scenario differs' -- "$bin" sweep storm "${short[@]}" --set layer.app.timeout=300ms --grid layer.app.attempts=1..2 \
  --reps 2 --shard 1/2 --quiet --resume -o "$tmp/s1"
expect 2 'grid differs' -- "$bin" sweep storm "${short[@]}" --grid layer.app.attempts=1..3 \
  --reps 2 --shard 1/2 --quiet --resume -o "$tmp/s1"

# SIGKILL during a sweep keeps every finished job; --resume finishes the rest.
grid=(storm --set run.duration=100s --grid layer.app.attempts=1..4 --grid layer.app.timeout=100ms..800ms*2 --reps 2 -j 1 --quiet)
"$bin" sweep "${grid[@]}" -o "$tmp/whole" > /dev/null || fail "uninterrupted sweep"
"$bin" sweep "${grid[@]}" -o "$tmp/killed" > /dev/null 2>&1 &
pid=$!
for i in $(seq 1 600); do # until at least two jobs are on disk (60 s at most: a busy machine)
  [ "$({ wc -l < "$tmp/killed/jobs.csv"; } 2> /dev/null || echo 0)" -ge 3 ] && break
  sleep 0.1
done
kill -KILL $pid; wait $pid 2> /dev/null
kept=$(($(wc -l < "$tmp/killed/jobs.csv") - 1))
[ "$kept" -ge 2 ] || fail "SIGKILL lost the finished jobs ($kept kept)"
"$bin" sweep "${grid[@]}" -o "$tmp/killed" --resume > /dev/null || fail "--resume after SIGKILL"
cmp -s "$tmp/killed/sweep.csv" "$tmp/whole/sweep.csv" || fail "a sweep resumed after SIGKILL differs"
cmp -s "$tmp/killed/jobs.csv" "$tmp/whole/jobs.csv" || fail "jobs.csv resumed after SIGKILL differs"

# SIGINT stops compare with what it has (exit 130, complete = 0).
# (30,000 simulated s: its first variant, over 100 M events, cannot finish
# within the 1 s on any machine; at 3,000 s a quiet one finished it)
"$bin" compare storm --set run.duration=30000s --vary layer.app.attempts=1,2,3 -o "$tmp/cmp" > /dev/null 2>&1 &
pid=$!
sleep 1
kill -INT $pid
wait $pid
rc=$?
[ $rc = 130 ] || fail "an interrupted compare exited $rc, not 130"
[ "$(field "$tmp/cmp/summary.csv" complete)" = 0 ] || fail "an interrupted compare's summary.csv says complete != 0"

# SIGINT during run --reps: the replications done, marked complete = 0, at a path that exists.
# (20 s replications: a few finish within the 2 s even under sanitizers on a busy machine)
"$bin" run storm --set run.duration=20s --set phase.spike.start=5s --set phase.spike.end=10s --reps 4000 -o "$tmp/reps" > /dev/null 2> "$tmp/reps.err" &
pid=$!
sleep 2
kill -INT $pid
wait $pid
rc=$?
[ $rc = 130 ] || fail "an interrupted run --reps exited $rc, not 130"
[ "$(field "$tmp/reps/summary.csv" complete)" = 0 ] || fail "an interrupted run --reps says complete != 0"
reps=$(field "$tmp/reps/summary.csv" reps)
[ "$reps" -ge 1 ] && [ "$reps" -lt 4000 ] || fail "run --reps interrupted: reps = $reps"
[ "$(($(wc -l < "$tmp/reps/replications.csv") - 1))" = "$reps" ] || fail "replications.csv does not hold the $reps replications"
for p in $(grep -oE "$tmp[^ :;]*" "$tmp/reps.err"); do
  [ -e "${p%/}" ] || fail "the message points at $p, which does not exist"
done

# SIGTERM stops tune (exit 143) with the jobs done kept and marked unfinished.
"$bin" tune storm --set run.duration=400s --grid layer.app.attempts=1..8 --reps 4 -j 1 --objective max:ok_share \
  -o "$tmp/tunestop" > /dev/null 2>&1 &
pid=$!
sleep 1
kill -TERM $pid
wait $pid
rc=$?
[ $rc = 143 ] || fail "a terminated tune exited $rc, not 143"
grep -q 'complete,0' "$tmp/tunestop/status.csv" || fail "a terminated tune's status.csv does not say complete,0"

# tune checks its metrics before anything runs or is written.
expect 2 'no such metric' -- "$bin" tune storm "${short[@]}" --grid layer.app.attempts=1..2 --objective max:okshare -o "$tmp/tune"
expect 2 'no such metric' -- "$bin" tune storm "${short[@]}" --grid layer.app.attempts=1..2 --objective max:ok_share \
  --constraint 'p99<=1s' -o "$tmp/tune"
[ -e "$tmp/tune" ] && fail "tune with an unknown metric wrote its directory"
# a key repeated on the grid or in --vary is an error before anything runs
expect 2 'twice' -- "$bin" sweep storm "${short[@]}" --grid layer.app.attempts=1..2 --grid layer.app.attempts=3 -o "$tmp/dup"
expect 2 'twice' -- "$bin" compare storm "${short[@]}" --vary layer.app.attempts=1,2 --vary layer.app.attempts=3 -o "$tmp/dupc"
[ -e "$tmp/dup" ] || [ -e "$tmp/dupc" ] && fail "a refused grid wrote its directory"
# plot writes figures into DIR: a foreign DIR needs --force, as for every output
mkdir "$tmp/colleague" && cp "$tmp/theirs/"*.csv "$tmp/colleague/" && echo mine > "$tmp/colleague/load.png"
expect 2 'add --force' -- "$bin" plot "$tmp/colleague"
[ "$(cat "$tmp/colleague/load.png")" = mine ] || fail "plot replaced a foreign load.png without --force"

# -o naming '.', '..' or '/' is refused before anything runs
mkdir "$tmp/here" && echo keep > "$tmp/here/notes"
cd "$tmp/here" # not in a subshell: a failure must reach the count
expect 2 'name the output directory itself' -- "$bin" run storm "${short[@]}" -o .
expect 2 'name the output directory itself' -- "$bin" run storm "${short[@]}" -o sub/..
cd - > /dev/null
[ "$(ls -A "$tmp/here")" = notes ] || fail "-o . left something behind: $(ls -A "$tmp/here")"
# an output directory gets the usual permissions (0777 less the umask), not mkdtemp's 0700
(umask 022 && "$bin" run storm "${short[@]}" -o "$tmp/mode" > /dev/null)
[ "$(stat -c %a "$tmp/mode")" = 755 ] || fail "an output directory has mode $(stat -c %a "$tmp/mode")"
# --force where a foreign entry blocks one of our files: nothing is moved, all is left in the work directory
mkdir -p "$tmp/blocked/summary.csv"
expect 1 'not ours is in the way' -- "$bin" run storm "${short[@]}" -o "$tmp/blocked" --force
[ "$(ls -A "$tmp/blocked")" = summary.csv ] || fail "a blocked install moved part of the outputs: $(ls -A "$tmp/blocked")"
rm -rf "$tmp"/blocked.work-*
# merge -o must not be, or hold, one of its shards
mkdir "$tmp/P"
"$bin" sweep storm "${short[@]}" --grid layer.app.attempts=1..2 --shard 1/2 --quiet -o "$tmp/P/a" > /dev/null
"$bin" sweep storm "${short[@]}" --grid layer.app.attempts=1..2 --shard 2/2 --quiet -o "$tmp/P/b" > /dev/null
touch "$tmp/P/.retrystorm"
expect 2 'holds the shard' -- "$bin" merge "$tmp/P/a" "$tmp/P/b" -o "$tmp/P"
expect 2 'holds the shard' -- "$bin" merge "$tmp/P/a" "$tmp/P/b" -o "$tmp/P/a"
[ -s "$tmp/P/a/jobs.csv" ] && [ -s "$tmp/P/b/jobs.csv" ] || fail "merge -o removed a shard"
# run over an unfinished sweep is refused without --force
cp -r "$tmp/s1" "$tmp/unfin" && sed -i 's/^complete,1/complete,0/' "$tmp/unfin/status.csv"
expect 2 'unfinished sweep' -- "$bin" run storm "${short[@]}" -o "$tmp/unfin"
[ -s "$tmp/unfin/jobs.csv" ] || fail "run replaced an unfinished sweep"
# the fingerprint does not depend on the path the scenario came from
printf '[run]\nduration = 20s\n[load]\nrate = 20/s\n[server]\nservice = exp(10ms)\n' > "$tmp/fp.ini"
"$bin" sweep "$tmp/fp.ini" --grid layer.app.attempts=1..2 --shard 1/2 --quiet -o "$tmp/fp1" > /dev/null || fail "fp shard 1"
(cd "$tmp" && "$bin" sweep ./fp.ini --grid layer.app.attempts=1..2 --shard 2/2 --quiet -o fp2 > /dev/null) || fail "fp shard 2"
expect 0 'merged 2 shards' -- "$bin" merge "$tmp/fp1" "$tmp/fp2" -o "$tmp/fpm"
# long --vary values in three keys: refused, no overflow of the variant's label
V=$(printf 'x%.0s' $(seq 127))
expect 2 'label is longer than' -- "$bin" compare storm "${short[@]}" --vary "a=$V" --vary "b=$V" --vary "c=$V" -o "$tmp/lab"

# values are never cut short into something else
expect 2 'expected an integer' -- "$bin" run storm "${short[@]}" --seed "$(printf '0%.0s' $(seq 50))1junk" -o "$tmp/seed"
expect 2 'longer than 127 bytes' -- "$bin" sweep storm "${short[@]}" --grid "layer.app.backoff=$(printf 'x%.0s' $(seq 200))" -o "$tmp/g"
expect 2 'longer than 127 bytes' -- "$bin" compare storm "${short[@]}" --vary "layer.app.backoff=$(printf 'x%.0s' $(seq 400))" -o "$tmp/c"
ls -d "$tmp"/*.work-* 2> /dev/null && fail "work directories left behind"

# Requests in flight are bounded on the command line too (issue 29): a flood
# of 10^9/s into one worker grew to 7.4 GB and ended in abort() with no
# output. It stops at --max-memory (default 4 GB) with a message, exit 1 and
# its outputs marked complete = 0; compare and sweep fail the job, naming it.
flood=(--set load.rate=1000000000/s --max-memory 100MB)
expect 1 'the run was stopped at 0\.[0-9]+ s of simulated time: its [0-9]+ requests, attempts and messages in flight passed the limit of 100\.0 MB \(--max-memory\)' -- \
  "$bin" run storm "${flood[@]}" -o "$tmp/flood"
[ "$(field "$tmp/flood/summary.csv" complete)" = 0 ] || fail "a run stopped at the memory limit is not marked complete = 0"
expect 1 'variant [0-9]+, replication 0: the run was stopped at' -- \
  "$bin" compare storm "${flood[@]}" --vary server.workers=10,1 -o "$tmp/floodc"
expect 1 'job 0: the run was stopped at .* passed the limit of 100\.0 MB' -- \
  "$bin" sweep storm "${flood[@]}" --grid server.workers=1 -o "$tmp/floods"
# A herd starts a request for every client inside one event: the limit
# holds inside it too (10^7 clients at once grew to 2.3 GB under a 100 MB
# limit, and herds at one instant past any memory), cut short and marked.
# Three herds of 10^6 clients would hold about 700 MB; 20 MB stop them.
printf '[run]\nduration = 10s\n[load]\nclients = 1000000\nrate = 1/s\n[herd]\nat = 1s 1s 1s\n[server]\nservice = exp(1ms)\n[layer app]\nattempts = 3\n' > "$tmp/herd.ini"
expect 1 'the run was stopped at 1\.000 s of simulated time: its [0-9]+ requests, attempts and messages in flight passed the limit of 20\.0 MB' -- \
  "$bin" run "$tmp/herd.ini" --max-memory 20MB -o "$tmp/herd"
[ "$(field "$tmp/herd/summary.csv" complete)" = 0 ] || fail "a herd cut short at the memory limit is not marked complete = 0"
[ "$(field "$tmp/herd/summary.csv" requests)" -lt 500000 ] || fail "the herd ran on past the memory limit"
expect 2 'expected a size from 1MB to 1000GB' -- "$bin" run storm --max-memory 5KB -o "$tmp/m"
expect 2 'expected a size from 1MB to 1000GB' -- "$bin" run storm --max-memory 2000GB -o "$tmp/m"
[ -e "$tmp/m" ] && fail "a refused --max-memory created its output directory"
# --shard N is at most the 65 directories merge takes
expect 2 'expected K/N with 1 <= K <= N <= 65' -- "$bin" sweep storm --grid layer.app.attempts=1,2 --shard 1/66 -o "$tmp/sh"
[ -e "$tmp/sh" ] && fail "a refused --shard created its output directory"

finish
