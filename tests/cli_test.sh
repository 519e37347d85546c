#!/usr/bin/env bash
# The command line: exit codes (0 ok, 1 run/write failure, 2 bad input),
# messages, the default scenario, and that a refused run writes nothing.
set -uo pipefail
. "$(dirname "$0")/lib.sh"
src=$2
expect 0 '^retrystorm [0-9]+\.[0-9]+\.[0-9]+$' -- "$bin" --version
expect 0 '^retrystorm [0-9]+\.[0-9]+\.[0-9]+$' -- "$bin" run storm --version
expect 0 '^retrystorm [0-9]+\.[0-9]+\.[0-9]+$' -- "$bin" sweep --version
expect 0 'usage: retrystorm' -- "$bin" --help
expect 0 '^storm ' -- "$bin" list
# list and list presets: each column starts at the same place on every line
cols=$("$bin" list | awk '{ match($0, /^[^ ]+ +/); print RLENGTH }' | sort -u | wc -l)
[ "$cols" = 1 ] || fail "list's descriptions start at $cols different columns"
cols=$("$bin" list presets | awk '/^generic kinds:/ { exit } /^[a-z]/ { match($0, /^[^ ]+ +[^ ]+ +[^ ]+ +[^ ]+ +[^ ]+ +/); print RLENGTH }' | sort -u | wc -l)
[ "$cols" = 1 ] || fail "list presets' retry_on starts at $cols different columns"
cols=$("$bin" list presets | awk '/^hedging presets/ { on = 1; next } /^hedging modes/ { on = 0 } on && /^[a-z]/ { match($0, /^[^ ]+ +[^ ]+ +/); print RLENGTH }' | sort -u | wc -l)
[ "$cols" = 1 ] || fail "list presets' hedging copies start at $cols different columns"
expect 0 'storm.ini: ok \(storm, 1 layer, 1 phase; 0\.1 MB of state before the first request, at most 4 GB\)' -- "$bin" check "$src/scenarios/storm.ini"
expect 2 'unknown option' -- "$bin" run --frobnicate
# check's capacity table and lint (docs/lint.md): warnings on stdout, exit
# 0; --strict makes each an error on stderr, exit 2; none: exit 0 under
# --strict too. run prints them on stderr and runs; --quiet hides them.
expect 0 '^  server +800\.0 +- +10\.000 +10 x 1 +0\.80$' -- "$bin" check storm
expect 0 '^warning: service server: unbounded queue behind layer app \(timeout 200ms, deadline none\): work its caller gave up on waits and is served \(stale work\); bound the queue, or drop_expired with a propagated deadline$' -- "$bin" check storm
expect 2 '^error: service server: unbounded queue behind layer app \(timeout 200ms' -- "$bin" check storm --strict
expect 2 '^retrystorm: storm: 1 lint warning, errors under --strict$' -- "$bin" check storm --strict
expect 0 'storm: ok' -- "$bin" check storm --strict --set server.queue=100
n=$("$bin" check storm --set server.queue=100 | grep -c 'warning\|error')
[ "$n" = 0 ] || fail "check storm with a bounded queue printed $n warnings"
expect 0 '^error: service server: utilisation 1\.00 per replica \(1000\.0/s x 10\.000 ms / 10 workers x 1 replicas\): over capacity before any trigger$' -- "$bin" check storm --set load.rate=1000/s
expect 0 '^warning: service server: utilisation 0\.90 per replica \(900\.0/s x 10\.000 ms / 10 workers x 1 replicas\): at least 0\.9: waits are long and any trigger overloads it$' -- "$bin" check storm --set load.rate=900/s
expect 2 '^error: service server: utilisation 0\.90 per replica' -- "$bin" check storm --set load.rate=900/s --set server.queue=100 --strict
expect 2 '^retrystorm: cascade: 5 lint warnings, errors under --strict$' -- "$bin" check cascade --strict
expect 2 '^error: layer api-db \(api -> db\): 3 attempts x 100ms \+ 0\.0 ms of backoff = 300\.0 ms, not less than the timeout 300ms of layer edge-api, which calls api: that caller gives up before these retries end$' -- "$bin" check cascade --strict
"$bin" check cascade --set layer.edge-api.timeout=301ms | grep -q '^warning: layer api-db (api' && fail "api-db's 300 ms worst call warned under edge-api's 301 ms timeout"
expect 0 '^warning: layers multiply attempts to 27 per request along clients -> edge -> api -> db \(client 3 x edge-api 3 x api-db 3\), more than 10: a failure at db is tried 27 times$' -- "$bin" check cascade
expect 2 "run does not take --strict \(check does" -- "$bin" run storm --strict -o "$tmp/refused"
"$bin" run storm --set run.duration=70s --set load.rate=1000/s -o "$tmp/lint-run" > /dev/null 2> "$tmp/lint.err" || fail "a run over capacity did not run"
grep -q '^error: service server: utilisation 1\.00 per replica .*over capacity before any trigger$' "$tmp/lint.err" || fail "run did not print the lint: $(cat "$tmp/lint.err")"
"$bin" run storm --set run.duration=70s --quiet -o "$tmp/lint-run" --force > /dev/null 2> "$tmp/lint.err" || fail "run --quiet"
[ -s "$tmp/lint.err" ] && fail "run --quiet printed: $(head -3 "$tmp/lint.err")"
# Help everywhere (exit 0): each command help lists, its options and
# examples (help's own has none), by help CMD, CMD --help and CMD -h.
cmds=$("$bin" help | awk '/^commands:/ { on = 1; next } on && /^  [a-z]/ { print $1 } on && /^$/ { exit }')
[ "$(wc -w <<<"$cmds")" -ge 13 ] || fail "help lists only: $cmds"
for c in $cmds; do
  expect 0 "^retrystorm $c: " -- "$bin" "$c" --help
  [ "$c" = help ] || expect 0 'examples?:' -- "$bin" help "$c"
  expect 0 "usage: retrystorm .*$c|usage: retrystorm \[run\]" -- "$bin" "$c" -h
done
expect 0 '^retrystorm help: ' -- "$bin" help --help
expect 0 '^retrystorm help: ' -- "$bin" help -h
expect 0 '^retrystorm help: ' -- "$bin" help help
expect 0 'usage: retrystorm COMMAND' -- "$bin" --help
expect 2 "^retrystorm: plot: --style slides: expected slide \(1920x1080, large type, thick lines\) or default; did you mean 'slide'\?$" -- "$bin" plot "$tmp" --style slides
# Ranges with units (sweep, tune, compare --vary share the parser): one unit
# for A, B and the step; another unit is refused, naming both, and nothing is written.
expect 0 'rate=700_s ' -- "$bin" compare storm --set run.duration=70s --vary load.rate=600/s..800/s+100/s -o "$tmp/vary-rate"
expect 2 "^retrystorm: --grid load\.rate=600/s\.\.1/ms: A is in '/s' and B in '/ms': write both in the same unit \(e\.g\. 600/s\.\.1000/s\+100/s\)$" -- "$bin" sweep storm --grid load.rate=600/s..1/ms -o "$tmp/refused"
expect 2 "^retrystorm: --grid load\.rate=600/s\.\.1000/s\+1/m: the step after '\+' must be a plain number or in A's unit '/s'$" -- "$bin" tune storm --grid load.rate=600/s..1000/s+1/m --objective max:ok_share -o "$tmp/refused"
expect 2 "^retrystorm: map: --load load\.rate=600/s\.\.1/ms: A is in '/s' and B in '/ms': write both in the same unit \(e\.g\. 600/s\.\.1000/s\+100/s\)$" -- "$bin" map storm --load load.rate=600/s..1/ms --trigger phase.spike.rate=x1..x2 -o "$tmp/refused"
expect 0 '^retrystorm run: ' -- "$bin" storm --help
expect 0 '^retrystorm run: ' -- "$bin" run storm --set layer.app.attempts=1 --help
expect 0 'compare +run variants' -- "$bin" help
expect 0 '^lat_p99 +s ' -- "$bin" help metrics
expect 2 "help: no topic 'compre'; did you mean 'compare'" -- "$bin" help compre
# Did you mean: commands, options, built-in scenarios, lists
expect 2 "unknown command 'comapre'; did you mean 'compare'" -- "$bin" comapre jitter
expect 2 "strom: cannot open: No such file or directory; did you mean the built-in 'storm'" -- "$bin" run strom -o "$tmp/refused"
expect 2 "unknown option '--sed'; did you mean '--set'" -- "$bin" run storm --sed 3 -o "$tmp/refused"
expect 2 "unknown option '--rep'; did you mean '--reps'" -- "$bin" compare storm --rep 3 -o "$tmp/refused"
expect 2 "list prestes: no such list; did you mean 'presets'" -- "$bin" list prestes
expect 2 "^retrystorm: list takes at most one word \('--frobnicate' is one too many; retrystorm help list\)$" -- "$bin" list presets --frobnicate
tshort=(--set run.duration=70s --grid layer.app.attempts=1..2)
expect 2 "objective okshare: no such metric; did you mean 'ok_share'" -- "$bin" tune storm "${tshort[@]}" --objective max:okshare -o "$tmp/refused"
expect 2 "constraint p99: no such metric; did you mean 'lat_p99'" -- "$bin" tune storm "${tshort[@]}" --objective max:ok_share --constraint 'p99<=1s' -o "$tmp/refused"
[ -e "$tmp/refused" ] && fail "a refused command created its output directory"
# A built-in's name means the built-in, whatever the directory holds; a
# file of that name is named by a path.
mkdir -p "$tmp/names/herd" && cp "$src/scenarios/storm.ini" "$tmp/names/storm"
sed 's/^name = storm/name = mine/' "$src/scenarios/storm.ini" > "$tmp/names/storm"
(cd "$tmp/names" && "$bin" check herd) | grep -q 'herd: ok (herd,' || fail "a directory named herd hid the built-in"
(cd "$tmp/names" && "$bin" check storm) | grep -q 'storm: ok (storm,' || fail "a file named storm hid the built-in"
(cd "$tmp/names" && "$bin" check ./storm) | grep -q './storm: ok (mine,' || fail "./storm is not the file"
# compare --vary takes every form sweep --grid does, and says what is wrong once
expect 0 'attempts=3 ' -- "$bin" compare storm --set run.duration=70s --vary layer.app.attempts=1..3 -o "$tmp/vary1"
expect 0 'timeout=400ms ' -- "$bin" compare storm --set run.duration=70s --vary layer.app.timeout=100ms..400ms*2 -o "$tmp/vary2"
expect 2 "vary load.clients=10..190\+10x: the step after '\+' must be a plain number" -- "$bin" compare herd --vary load.clients=10..190+10x -o "$tmp/refused"
n=$("$bin" compare herd --vary load.clients=10..190+10x -o "$tmp/refused" 2>&1 | grep -c 'must be a plain number')
[ "$n" = 1 ] || fail "a bad --vary's message printed $n times"
# constraints take spaces and units
expect 0 'recommended: ' -- "$bin" tune storm "${tshort[@]}" --objective max:ok_share --constraint 'lat_p99 <= 1 s' -o "$tmp/tune-spaces"
# list keys: every key it names is one the parser knows (and the other way:
# a known key of storm's layer is listed)
"$bin" list keys > "$tmp/keys.txt" || fail "list keys"
grep -q '^layer.NAME.attempts  *an integer from 1 to 100' "$tmp/keys.txt" || fail "list keys lacks layer.NAME.attempts"
awk 'NF < 2 { print; bad = 1 } END { exit bad }' "$tmp/keys.txt" > "$tmp/keys.bare" || fail "list keys: keys without what they allow: $(cat "$tmp/keys.bare")"
grep -q '^layer.NAME.budget .*aws-standard' "$tmp/keys.txt" || fail "list keys does not list the budget kinds"
while read -r key _; do
  k=${key/.NAME./.x.}
  out=$("$bin" check "$src/scenarios/storm.ini" --set "$k=@@@" 2>&1)
  echo "$out" | grep -q 'unknown key' && fail "list keys names $key, which --set refuses: $out"
done < "$tmp/keys.txt"
for k in $(sed -n 's/^allowed: //p' <<< "$("$bin" check "$src/scenarios/storm.ini" --set layer.app.zz=1 2>&1 | sed 's/.*; allowed: /allowed: /')" | tr -d ','); do
  grep -q "^layer.NAME.$k " "$tmp/keys.txt" || fail "list keys does not name layer.NAME.$k"
done
# list metrics names every column a summary.csv can have: a run, a graph,
# caches, --reps (_sd, _hw) and compare (peak_rate_1s, _hw)
"$bin" list metrics > "$tmp/metrics.txt" || fail "list metrics"
"$bin" run storm --set run.duration=70s -o "$tmp/m1" > /dev/null
"$bin" run cascade --set run.duration=60s -o "$tmp/m2" > /dev/null
"$bin" run cache-flush --set run.duration=90s -o "$tmp/m3" > /dev/null
"$bin" run storm --set run.duration=70s --reps 2 -o "$tmp/m4" > /dev/null
"$bin" compare storm --set run.duration=70s --vary layer.app.attempts=1,2 --reps 2 -o "$tmp/m5" > /dev/null
for f in "$tmp"/m[1-5]/summary.csv; do
  for col in $(head -1 "$f" | tr ',' ' '); do
    name=$col
    case $col in
      variant | layer.*) continue ;; # compare's key columns: the --vary keys
    esac
    case $col in *_hw) name='<metric>_hw' ;; *_sd) name='<metric>_sd' ;; err_*) name='err_<class>' ;;
      *_utilization) name='<service>_utilization' ;; *_hit_ratio) name='<cache>_hit_ratio' ;; esac
    case $col in *_wasted) name='<service>_wasted' ;; *_calls) name='<service>_calls' ;;
      *_rejected) [ "$col" = rejected ] || name='<service>_rejected' ;; *_queue_mean) name='<service>_queue_mean' ;;
      *_attempts) name='<layer>_attempts' ;; *_retries) name='<layer>_retries' ;; *_hedges) name='<layer>_hedges' ;;
      *_timeouts) name='<layer>_timeouts' ;; *_refused) name='<layer>_refused' ;;
      *_short_circuited) name='<layer>_short_circuited' ;; esac
    case $col in err_bulkhead | *_sd | *_hw) ;; esac
    grep -q -F -- "$name " "$tmp/metrics.txt" || fail "list metrics does not name $col (of $f)"
  done
done
expect 2 "cannot open: No such file" -- "$bin" check "$tmp/none.ini"
expect 2 "not a regular file" -- "$bin" check "$tmp"
printf '[run]\nduration = 5\n[load]\nrate = 10\n[server]\nservice = exp(1ms)\n' > "$tmp/bad.ini"
expect 2 'bad.ini:2: \[run\] duration' -- "$bin" check "$tmp/bad.ini"
expect 2 'bad.ini:4: \[load\] rate' -- "$bin" check "$tmp/bad.ini"
expect 2 '2 problems' -- "$bin" check "$tmp/bad.ini"
expect 2 "did you mean 'attempts'" -- "$bin" run storm --set layer.app.atempts=1 -o "$tmp/refused"
[ -e "$tmp/refused" ] && fail "a refused run created its output directory"
expect 2 'run.seed=abc' -- "$bin" run storm --seed abc -o "$tmp/refused"
expect 1 'cannot create (a work )?directory' -- "$bin" run storm --set run.duration=100s -o /proc/retrystorm-test
# A model whose time stops advancing is stopped with a message, not left hanging.
printf '[run]\nduration = 2s\n[load]\nmodel = closed\nclients = 50\nthink = bimodal(0, 1s, 0.0000001)\n[phase down]\nstart = 0\nend = 2s\noutage = refuse\n[server]\nservice = exp(1ms)\n' > "$tmp/zero.ini"
expect 1 'simulated time stopped advancing' -- "$bin" run "$tmp/zero.ini" -o "$tmp/zero"
# The default: no arguments runs storm into out/storm and it does not recover.
cd "$tmp" # not in a subshell: a failure must reach the count
expect 0 'verdict: metastable: still out of the baseline' -- "$bin"
cd - > /dev/null
for f in timeseries.csv summary.csv latency.csv attempts.csv scenario.ini; do
  [ -s "$tmp/out/storm/$f" ] || fail "out/storm/$f missing"
done
ls -a "$tmp/out/storm" | grep -q '\.tmp' && fail "temporary files left"
grep -q ',0,,' "$tmp/out/storm/summary.csv" || fail "summary does not say recovered = 0"
grep -qi 'nan' "$tmp/out/storm/"*.csv && fail "NaN in a CSV"
expect 0 'verdict: recovered: every signal back in the baseline.s band from [0-9]+ s, [0-9]+ s after' -- "$bin" run storm --set layer.app.attempts=1 -o "$tmp/one"
# The effective scenario is itself a valid scenario that gives the same run.
expect 0 'ok \(storm' -- "$bin" check "$tmp/one/scenario.ini"
"$bin" run "$tmp/one/scenario.ini" -o "$tmp/again" > /dev/null
cmp -s "$tmp/one/timeseries.csv" "$tmp/again/timeseries.csv" || fail "rerunning scenario.ini gives other results"
# Traces: relative to the scenario file; every bad row named by its line;
# a refused trace writes nothing; the effective scenario replays the same.
mkdir -p "$tmp/traces"
printf 't,rate\n0,100\n5,x\n0,200\n10,-3\n20,50,1\n' > "$tmp/traces/bad.csv"
printf '[run]\nduration = 30s\n[load]\ntrace = bad.csv\n[server]\nservice = exp(1ms)\n' > "$tmp/traces/bad.ini"
expect 2 'bad.csv:3: t: .x. is not|bad.csv:3: rate' -- "$bin" check "$tmp/traces/bad.ini"
expect 2 'bad.csv:4: t: 0 is not after' -- "$bin" check "$tmp/traces/bad.ini"
expect 2 'bad.csv:5: rate' -- "$bin" check "$tmp/traces/bad.ini"
expect 2 'bad.csv:6: 3 fields' -- "$bin" run "$tmp/traces/bad.ini" -o "$tmp/traced"
[ -e "$tmp/traced" ] && fail "a refused trace created its output directory"
printf 't,rate\n0,100\n10,300\n' > "$tmp/traces/good.csv"
printf '[run]\nduration = 30s\n[load]\ntrace = good.csv\n[server]\nservice = exp(1ms)\n' > "$tmp/traces/good.ini"
(cd / && "$bin" run "$tmp/traces/good.ini" -o "$tmp/traced" > /dev/null) || fail "a trace beside its scenario was not found from another directory"
"$bin" run "$tmp/traced/scenario.ini" -o "$tmp/traced2" > /dev/null || fail "the effective scenario of a traced run is refused"
cmp -s "$tmp/traced/timeseries.csv" "$tmp/traced2/timeseries.csv" || fail "rerunning a traced scenario.ini gives other results"
expect 0 'cache objects: hit ratio' -- "$bin" run cache-flush --set run.duration=70s -o "$tmp/cached"
[ -s "$tmp/cached/caches.csv" ] || fail "caches.csv missing"
"$bin" run "$tmp/cached/scenario.ini" -o "$tmp/cached2" > /dev/null || fail "the effective scenario of cache-flush is refused"
cmp -s "$tmp/cached/caches.csv" "$tmp/cached2/caches.csv" || fail "rerunning cache-flush's scenario.ini gives other results"
# phases.csv (docs/verdicts.md): a run with phases has one, the same bytes
# when its scenario.ini runs again; a run with neither phase nor herd has none.
[ -s "$tmp/cached/phases.csv" ] || fail "cache-flush (a phase) wrote no phases.csv"
cmp -s "$tmp/cached/phases.csv" "$tmp/cached2/phases.csv" || fail "rerunning cache-flush's scenario.ini gives another phases.csv"
"$bin" run omission --set run.duration=5s -o "$tmp/nophase" > /dev/null || fail "omission did not run"
[ -e "$tmp/nophase/phases.csv" ] && fail "a run without phase or herd wrote phases.csv"
# The compact tables (one unit per kind: shares in %, latencies in ms,
# durations in s): compare --reps and run --reps show mean ± half-width;
# --sort orders sweep and compare; past 10 points a sweep shows the first
# and last 5; a bad --sort is refused before anything runs.
st=(--set run.duration=90s)
"$bin" compare storm "${st[@]}" --vary layer.app.attempts=1,3 --reps 3 -o "$tmp/tab-cmp" > "$tmp/tab.txt" 2>&1 || fail "compare --reps: $(cat "$tmp/tab.txt")"
grep -qE '^ +requests +ok % +in flight % +amplif +p50 ms +p99 ms' "$tmp/tab.txt" || fail "compare's table has not its units: $(head -3 "$tmp/tab.txt")"
# the verdict per row (90 s: 20 s after the spike, too soon to tell), and
# under the table each variant's verdict and why
grep -qE '^  attempts=3 .* undetermined$' "$tmp/tab.txt" || fail "compare's table shows no verdict: $(cat "$tmp/tab.txt")"
grep -q '^  why (each variant.s first replication):$' "$tmp/tab.txt" && \
  grep -q '^    attempts=1  undetermined: the run ended 20 s after the trigger ended, before recovery or 60 s of persistence' "$tmp/tab.txt" \
  || fail "compare does not say why: $(cat "$tmp/tab.txt")"
# in flight % beside ok %, and a note under the table for rows above 1 %
# (herd cut at 50 s: ~7 % in flight; drained: none)
"$bin" compare herd --set run.duration=50s --vary run.drain=false,true -o "$tmp/tab-drain" > "$tmp/tab-drain.txt" 2>&1 || fail "compare --vary run.drain: $(cat "$tmp/tab-drain.txt")"
grep -qE '^  drain=true +[0-9]+ +100\.00 +0\.00 ' "$tmp/tab-drain.txt" && grep -qE '^  drain=false +[0-9]+ +9[0-9]\.[0-9]+ +[1-9]\.[0-9]+ ' "$tmp/tab-drain.txt" \
  || fail "compare's table shows no in flight % beside ok %: $(cat "$tmp/tab-drain.txt")"
grep -q '^  note: 1 row above 1 % in flight at the end: its shares depend on where the runs stopped; --set run.drain=true gives every request an outcome$' "$tmp/tab-drain.txt" \
  || fail "a table row with 7 % in flight has no note: $(cat "$tmp/tab-drain.txt")"
grep -qE '^  attempts=3 .*[0-9] ± [0-9]' "$tmp/tab.txt" || fail "compare --reps shows no ± half-widths: $(cat "$tmp/tab.txt")"
"$bin" run storm "${st[@]}" --reps 3 -o "$tmp/tab-reps" > "$tmp/tab.txt" 2>&1 || fail "run --reps"
grep -qE '^  storm +[0-9]+ ± [0-9]+ +[0-9.]+ ± [0-9.]+' "$tmp/tab.txt" || fail "run --reps shows no table with ±: $(cat "$tmp/tab.txt")"
grep -q 'p99 ms' "$tmp/tab.txt" || fail "run --reps does not give latencies in ms"
"$bin" sweep storm "${st[@]}" --grid layer.app.attempts=1..3 --quiet --sort max:amplification -o "$tmp/tab-sw" > "$tmp/tab.txt" 2>&1 || fail "sweep --sort"
[ "$(sed -n 2p "$tmp/tab.txt" | awk '{print $1}')" = attempts=3 ] && [ "$(sed -n 4p "$tmp/tab.txt" | awk '{print $1}')" = attempts=1 ] \
  || fail "sweep --sort max:amplification: not attempts 3 to 1: $(cat "$tmp/tab.txt")"
"$bin" sweep storm "${st[@]}" --grid layer.app.attempts=1..3 --quiet --sort min:amplification -o "$tmp/tab-sw" --force > "$tmp/tab.txt" 2>&1
[ "$(sed -n 2p "$tmp/tab.txt" | awk '{print $1}')" = attempts=1 ] || fail "sweep --sort min:amplification: attempts=1 not first: $(cat "$tmp/tab.txt")"
"$bin" sweep storm --set run.duration=70s --set load.rate=100/s --grid layer.app.attempts=1..12 --quiet -o "$tmp/tab-12" > "$tmp/tab.txt" 2>&1
grep -q '^  \.\.\. 2 more (all in sweep.csv)$' "$tmp/tab.txt" || fail "a 12-point sweep does not say it left 2 out: $(cat "$tmp/tab.txt")"
[ "$(grep -c '^  attempts=' "$tmp/tab.txt")" = 10 ] || fail "a 12-point sweep does not show 10 rows"
expect 2 "--sort okshare: no such metric; did you mean 'ok_share'" -- "$bin" sweep storm --grid layer.app.attempts=1..2 --sort okshare -o "$tmp/refused"
expect 2 "--sort queue: names 2 of the keys varied \(service.backend.queue, service.api.queue\); give more of the key$" -- "$bin" sweep fanout --grid service.backend.queue=16,64 --grid service.api.queue=16,unbounded --sort queue -o "$tmp/refused"
expect 2 "--sort max:: expected max:METRIC" -- "$bin" compare storm --vary layer.app.attempts=1,2 --sort max: -o "$tmp/refused"
[ -e "$tmp/refused" ] && fail "a refused --sort wrote its output directory"
# Options: a value missing at the end of the line is a message, never a
# crash (wants_help read past argv); an option of another command is
# refused, naming the commands that take it; merge's 66th directory.
for c in run compare sweep merge tune check; do
  for opt in -o --set --seed --grid --vary --objective --constraint -j --shard --reps --format --sort; do
    out=$("$bin" "$c" storm "$opt" 2>&1); rc=$?
    [ "$rc" = 2 ] || fail "$c storm $opt (no value): exit $rc, not 2: $out"
    grep -qE "needs a value|does not take" <<< "$out" || fail "$c storm $opt: $out"
  done
done
expect 2 "run does not take --grid \(sweep, tune do; retrystorm help run\)" -- "$bin" run storm --grid layer.app.attempts=1,2 -o "$tmp/refused"
expect 2 "check does not take --format" -- "$bin" check storm --format json
expect 2 "compare does not take --shard \(sweep does" -- "$bin" compare storm --vary layer.app.attempts=1,2 --shard 1/2 -o "$tmp/refused"
expect 2 "tune does not take --plot" -- "$bin" tune storm --grid layer.app.attempts=1,2 --objective max:ok_share --plot -o "$tmp/refused"
expect 2 "merge does not take --set \(run, compare, sweep, tune, check, hysteresis do" -- "$bin" merge a b --set x=1 -o "$tmp/refused"
# hysteresis: each bad input named with what is allowed, exit 2, nothing written
h=(hysteresis orbit -o "$tmp/refused")
expect 2 'hysteresis needs a scenario and --load load.rate=A..B, such as --load load.rate=5/s..15/s' -- "$bin" "${h[@]}"
expect 2 "--load load.clients=1..5: the key 'load.clients' cannot be ramped; allowed: load.rate \(an open loop's rate\)" -- "$bin" "${h[@]}" --load load.clients=1..5
expect 2 '--load load.rate: expected KEY=A..B, such as load.rate=5/s..15/s' -- "$bin" "${h[@]}" --load load.rate
expect 2 '--load load.rate=15/s..5/s: the ramp goes up from A to B: A must be below B' -- "$bin" "${h[@]}" --load load.rate=15/s..5/s
expect 2 '--load load.rate=5/s..5/s: the ramp goes up from A to B: A must be below B' -- "$bin" "${h[@]}" --load load.rate=5/s..5/s
expect 2 '--load load.rate=5..15: A and B must be rates above 0 and at most 1e9/s, such as load.rate=5/s..15/s' -- "$bin" "${h[@]}" --load load.rate=5..15
expect 2 '--load load.rate=0/s..15/s: A and B must be rates above 0' -- "$bin" "${h[@]}" --load load.rate=0/s..15/s
expect 2 '--ramp fast: expected a duration above 0 and at most 1000000s, such as 300s' -- "$bin" "${h[@]}" --load load.rate=5/s..15/s --ramp fast
expect 2 '--ramp 0s: expected a duration above 0' -- "$bin" "${h[@]}" --load load.rate=5/s..15/s --ramp 0s
expect 2 '--ramp 50s: a ramp must span at least 20 windows of 5s \(--window\)' -- "$bin" "${h[@]}" --load load.rate=5/s..15/s --ramp 50s
expect 2 '--hold -1s: expected a duration from 0 and at most 1000000s, such as 60s' -- "$bin" "${h[@]}" --load load.rate=5/s..15/s --hold -1s
expect 2 '--window 0: expected a duration above 0 and at most 1000000s, such as 5s' -- "$bin" "${h[@]}" --load load.rate=5/s..15/s --window 0
expect 2 'hysteresis herd: the scenario is a closed loop \(load.model = closed\): load.rate does not set its load; --load ramps an open loop.s load.rate' -- "$bin" hysteresis herd --load load.rate=5/s..15/s -o "$tmp/refused"
expect 2 'hysteresis does not take --sort' -- "$bin" "${h[@]}" --load load.rate=5/s..15/s --sort ok_share
expect 2 "--set layer.app.attempts=0: \[layer app\] attempts = '0': expected an integer from 1 to 100" -- "$bin" "${h[@]}" --load load.rate=5/s..15/s --set layer.app.attempts=0
expect 2 'orbit as ramped by hysteresis:[0-9]+: \[run\] warmup = 5000s: must be less than duration \(690s\)' -- "$bin" "${h[@]}" --load load.rate=5/s..15/s --set run.duration=10000s --set run.warmup=5000s --ramp 300s
[ ! -e "$tmp/refused" ] || fail "a refused hysteresis wrote $tmp/refused"
expect 2 "merge takes at most 65 shard directories \('d66' is the 66th\)" -- "$bin" merge $(seq -f 'd%g' 1 66) -o "$tmp/refused"
[ -e "$tmp/refused" ] && fail "a refused command created its output directory"
# map and margin (docs/envelope.md): bad inputs, exact messages, nothing written
expect 2 "^retrystorm: map needs a scenario, --load KEY=VALUES and --trigger KEY=A\.\.B \(retrystorm help map\)$" -- "$bin" map storm --load load.rate=800/s -o "$tmp/refused"
expect 2 "^retrystorm: margin needs a scenario and --trigger KEY=A\.\.B \(retrystorm help margin\)$" -- "$bin" margin storm -o "$tmp/refused"
expect 2 "^retrystorm: map: --trigger phase\.spike\.rate=xa\.\.x4: A and B must be numbers with the same unit \(e\.g\. x1\.2\.\.x4, 5s\.\.30s\)$" -- "$bin" map storm --load load.rate=800/s --trigger phase.spike.rate=xa..x4 -o "$tmp/refused"
expect 2 "^retrystorm: map: --trigger phase\.spike\.rate=x4\.\.x2: the range needs A < B$" -- "$bin" map storm --load load.rate=800/s --trigger phase.spike.rate=x4..x2 -o "$tmp/refused"
expect 2 "^retrystorm: margin: --trigger phase\.spike\.rate=x2\.\.x2: the range needs A < B$" -- "$bin" margin storm --trigger phase.spike.rate=x2..x2 -o "$tmp/refused"
expect 2 "^retrystorm: --level 1: expected a number strictly between 0 and 1$" -- "$bin" margin storm --trigger phase.spike.rate=x1..x4 --level 1 -o "$tmp/refused"
expect 2 "^retrystorm: --level 0: expected a number strictly between 0 and 1$" -- "$bin" map storm --load load.rate=800/s --trigger phase.spike.rate=x1..x4 --level 0 -o "$tmp/refused"
expect 2 "^retrystorm: --set layer\.app\.backoff=1: \[layer app\] backoff = '1': expected none, constant" -- "$bin" map storm --load load.rate=800/s --trigger layer.app.backoff=1..2 -o "$tmp/refused"
expect 2 "^retrystorm: margin does not take --load \(retrystorm help margin\)$" -- "$bin" margin storm --trigger phase.spike.rate=x1..x4 --load load.rate=1/s -o "$tmp/refused"
expect 2 "^retrystorm: map: --resolution 5: expected a step from \(B - A\) / 1048576 to below B - A = 3$" -- "$bin" map storm --load load.rate=800/s --trigger phase.spike.rate=x1..x4 --resolution 5 -o "$tmp/refused"
expect 2 "^retrystorm: --reps 0: expected an integer from 1 to 100000$" -- "$bin" map storm --load load.rate=800/s --trigger phase.spike.rate=x1..x4 --reps 0 -o "$tmp/refused"
[ -e "$tmp/refused" ] && fail "a refused map or margin created its output directory"
expect 2 "^retrystorm: max:margin: the margin needs --trigger KEY=A\.\.B \(the trigger whose margin to widen, e\.g\. phase\.spike\.rate=x1\.\.x4\)$" -- "$bin" tune storm --grid layer.app.attempts=1..2 --objective max:margin -o "$tmp/refused"
expect 2 "^retrystorm: tune: --trigger phase\.spike\.rate=x3\.\.x1: the range needs A < B$" -- "$bin" tune storm --grid layer.app.attempts=1..2 --objective max:margin --trigger phase.spike.rate=x3..x1 -o "$tmp/refused"
expect 2 "^retrystorm: --set phase\.spike\.rat=x1: \[phase spike\] unknown key 'rat'" -- "$bin" tune storm --grid layer.app.attempts=1..2 --objective max:margin --trigger phase.spike.rat=x1..x2 -o "$tmp/refused"
[ -e "$tmp/refused" ] && fail "a refused tune --trigger created its output directory"
# tune --objective max:margin: one attempt widens storm's envelope most
# (each point's margin over 20 seeds), and p99 stays under its constraint
expect 0 "recommended: attempts=1$" -- "$bin" tune storm --set run.duration=100s --set phase.spike.start=20s --set phase.spike.end=30s --grid layer.app.attempts=1,3 --objective max:margin --constraint 'lat_p99<=1s' --trigger phase.spike.rate=x1..x4 -o "$tmp/tune-margin"
head -1 "$tmp/tune-margin/tune.csv" | grep -q ',margin,margin_sd,margin_hw,margin_fails,' || fail "tune.csv lacks the margin columns"
awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
         !($c["margin"] < $c["margin_fails"] && $c["margin_fails"] - $c["margin"] <= 3 / 32 + 1e-9) { bad = 1 }
         END { exit bad }' "$tmp/tune-margin/tune.csv" || fail "tune.csv: a margin not just below its margin_fails (the bracket at the resolution)"
# the same bytes whatever -j; the runs line
mshort=(--set run.duration=100s --set phase.spike.start=20s --set phase.spike.end=30s --load load.rate=700/s,800/s --trigger phase.spike.rate=x1.2..x2 --resolution 0.2 --reps 5)
expect 0 "^[0-9]+ runs, against 50 for the full grid at the same resolution \(5 reps each\)$" -- "$bin" map storm "${mshort[@]}" -j 1 -o "$tmp/map1"
expect 0 "^[0-9]+ runs, against 50 for the full grid" -- "$bin" map storm "${mshort[@]}" -j 2 -o "$tmp/map2"
for f in map.csv boundary.csv envelope.csv; do
  cmp -s "$tmp/map1/$f" "$tmp/map2/$f" || fail "map's $f differs between -j 1 and -j 2"
done
# map --resume: an interrupted map (its first three probes settled) is
# finished with the bytes of an uninterrupted one; a probes file that is not
# this study's, or another option, is refused
cp -r "$tmp/map1" "$tmp/map-resume"
head -4 "$tmp/map1/map.csv" > "$tmp/map-resume/map.csv"
rm "$tmp/map-resume/boundary.csv"
sed -i 's/^complete,1$/complete,0/' "$tmp/map-resume/envelope.csv"
expect 0 "runs, against 50 for the full grid" -- "$bin" map storm "${mshort[@]}" -j 1 -o "$tmp/map-resume" --resume
for f in map.csv boundary.csv envelope.csv; do
  cmp -s "$tmp/map1/$f" "$tmp/map-resume/$f" || fail "map --resume: $f differs from an uninterrupted map's"
done
# ... and the settled probes are taken, not run again: a first probe whose
# 5 recovered runs are edited to 4 and 1 undetermined stays so (and still
# decides: 4/4 excludes 0.5)
awk -F, -v OFS=, 'NR == 2 && $10 == 5 { $10 = 4; $12 = 1 } NR <= 4' "$tmp/map1/map.csv" > "$tmp/map-resume/map.csv"
sed -i 's/^complete,1$/complete,0/' "$tmp/map-resume/envelope.csv"
expect 0 "runs, against 50 for the full grid" -- "$bin" map storm "${mshort[@]}" -j 1 -o "$tmp/map-resume" --resume
[ "$(sed -n 2p "$tmp/map-resume/map.csv" | cut -d, -f1-12)" = "$(awk -F, -v OFS=, 'NR == 2 { $10 = 4; $12 = 1; print }' "$tmp/map1/map.csv" | cut -d, -f1-12)" ] ||
  fail "map --resume ran a settled probe again: $(sed -n 2p "$tmp/map-resume/map.csv")"
cmp -s "$tmp/map1/boundary.csv" "$tmp/map-resume/boundary.csv" || fail "map --resume: another boundary"
cp -r "$tmp/map1" "$tmp/map-bad"
sed -i '3s/.*/0,700\/s,,x1.2,700,1.2,5,0,0,9,0,0,1,0,1,1,1/' "$tmp/map-bad/map.csv"
expect 2 "^retrystorm: map: .*/map-bad/map\.csv:3: not a probe of this study$" -- "$bin" map storm "${mshort[@]}" -o "$tmp/map-bad" --resume
expect 2 "^retrystorm: map: .*/map1/envelope\.csv:13: written for another study \(reps,5; this one has reps,6\): run without --resume into a new directory$" -- "$bin" map storm "${mshort[@]}" --reps 6 -o "$tmp/map1" --resume
# Labels (docs/labels.md): variants, rows and keys by their shortest
# unambiguous key; compare --label; --sort by a grid key; tune's marks.
lab=(--set run.duration=45s)
expect 2 "^retrystorm: --label 'backoff=equal=Equal': names no variant; give VARIANT=TEXT with VARIANT one of: backoff=none, backoff=full$" -- "$bin" compare jitter "${lab[@]}" --vary layer.app.backoff=none,full --label 'backoff=equal=Equal' -o "$tmp/refused-label"
expect 2 "^retrystorm: --label 'backoff=full=a,b': the text 'a,b' holds a comma; a label may hold any printable character but a comma or a double quote$" -- "$bin" compare jitter "${lab[@]}" --vary layer.app.backoff=none,full --label 'backoff=full=a,b' -o "$tmp/refused-label"
[ -e "$tmp/refused-label" ] && fail "a refused --label wrote its directory"
"$bin" compare jitter "${lab[@]}" --vary layer.app.backoff=none,full --label 'layer.app.backoff=full=Full jitter=AWS' -o "$tmp/label" > "$tmp/label.log" 2>&1 || fail "compare --label: $(cat "$tmp/label.log")"
grep -qE '^  backoff=none +[0-9]+ ' "$tmp/label.log" && grep -qE '^  Full jitter=AWS +[0-9]+ ' "$tmp/label.log" || fail "compare --label: the table's rows: $(cat "$tmp/label.log")"
grep -qE '^    Full jitter=AWS  [a-z]+: ' "$tmp/label.log" || fail "compare --label: the why lines: $(cat "$tmp/label.log")"
[ "$(cat "$tmp/label/labels.csv")" = "$(printf 'variant,label\nbackoff=full,Full jitter=AWS')" ] || fail "labels.csv: $(cat "$tmp/label/labels.csv")"
# two layers with attempts: the layer's name; services with queue: the service's
"$bin" compare cascade --set run.duration=30s --vary layer.client.attempts=1,2 -o "$tmp/label2" > "$tmp/label2.log" 2>&1 || fail "compare cascade: $(cat "$tmp/label2.log")"
[ -d "$tmp/label2/client.attempts=1" ] && [ -d "$tmp/label2/client.attempts=2" ] || fail "cascade's variants: $(ls "$tmp/label2")"
"$bin" sweep cascade --set run.duration=30s --grid service.db.queue=64,8 --grid load.rate=400/s -o "$tmp/label3" --quiet > "$tmp/label3.log" 2>&1 || fail "sweep cascade: $(cat "$tmp/label3.log")"
grep -qE '^  db\.queue=64 load\.rate=400/s +[0-9]' "$tmp/label3.log" || fail "sweep cascade's rows: $(cat "$tmp/label3.log")"
grep -qx 'key,service.db.queue,db.queue' "$tmp/label3/experiment.csv" || fail "experiment.csv's key label: $(grep key "$tmp/label3/experiment.csv")"
# --sort KEY: by the values with their units, unbounded last; max: reversed
rows() { sed -n 's/^  \(queue=[^ ]*\) .*/\1/p' "$1" | tr '\n' ' '; }
"$bin" sweep storm --set run.duration=70s --grid server.queue=512,unbounded,64 --sort queue -o "$tmp/ksort" --quiet > "$tmp/ksort.log" 2>&1
[ "$(rows "$tmp/ksort.log")" = "queue=64 queue=512 queue=unbounded " ] || fail "--sort queue: $(cat "$tmp/ksort.log")"
"$bin" sweep storm --set run.duration=70s --grid server.queue=512,unbounded,64 --sort max:server.queue -o "$tmp/ksort" --force --quiet > "$tmp/ksort.log" 2>&1
[ "$(rows "$tmp/ksort.log")" = "queue=unbounded queue=512 queue=64 " ] || fail "--sort max:server.queue: $(cat "$tmp/ksort.log")"
"$bin" sweep storm --set run.duration=70s --grid layer.app.timeout=1s,50ms,200ms --sort timeout -o "$tmp/ksort" --force --quiet > "$tmp/ksort.log" 2>&1
[ "$(sed -n 's/^  \(timeout=[^ ]*\) .*/\1/p' "$tmp/ksort.log" | tr '\n' ' ')" = "timeout=50ms timeout=200ms timeout=1s " ] || fail "--sort timeout: $(cat "$tmp/ksort.log")"
expect 2 "^retrystorm: --sort queu: no such metric; .*; or a key of --grid or --vary \(or its last parts\)$" -- "$bin" sweep storm --grid server.queue=64,512 --sort queu -o "$tmp/refused-sort"
[ -e "$tmp/refused-sort" ] && fail "a refused --sort wrote its directory"
# tune: the markers it showed, explained under the lists
"$bin" tune storm --set run.duration=80s --grid server.queue=64,512 --objective max:ok_share --constraint 'recovery_s<=5s' -o "$tmp/tmarks" --quiet > "$tmp/tmarks.log" 2>&1
grep -qF '  marks: (Pareto) no feasible point is better on every objective; (-) no value (recovery_s where nothing recovered, say): it breaks the constraint' "$tmp/tmarks.log" || fail "tune's marks: $(cat "$tmp/tmarks.log")"
finish
