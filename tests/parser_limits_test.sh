#!/usr/bin/env bash
# Limits on scenario input (issue 12), through the command line: an
# over-long line or --set value (or a NUL byte) is refused naming file and
# line, never cut short; 200,000 bogus sections are rejected within a
# generous timeout, the problems past the 100th counted in one line;
# budget and breaker states over all layers, and attempts per request (the
# product of every layer's attempts), are refused by check and by every
# command before anything is allocated, run or written. $1 is the binary.
set -uo pipefail
. "$(dirname "$0")/lib.sh"
base='[run]\nname = t\nduration = 10s\n[load]\nrate = 100/s\n[server]\nservice = exp(10ms)\n'

# A line longer than 197 characters: refused, not cut short (the old parser
# kept the first 198 characters: 51 of these 59 instants).
at=$(seq -s, 1 59 | sed 's/,/s,/g; s/$/s/')
printf "$base[herd]\nat = %s\n" "$at" > "$tmp/long.ini"
expect 2 "long.ini:9: \[herd\] at = '1s,2s,3s,.*the line is 231 characters long; at most 197 are allowed" -- \
  "$bin" check "$tmp/long.ini"
expect 2 'the line is 231 characters long' -- "$bin" run "$tmp/long.ini" -o "$tmp/long"
[ -e "$tmp/long" ] && fail "a refused run created its output directory"
printf "$base[run]\nseed = 7%300s; a comment\n" "" > "$tmp/long2.ini"
expect 2 "long2.ini:9: \[run\] seed = '7\.\.\.': the line is 319 characters long" -- "$bin" check "$tmp/long2.ini"
printf "$base[run]\nseed = 7\0 junk\n" > "$tmp/nul.ini" # libinih would stop at the NUL
expect 2 'nul.ini:9: the line holds a NUL byte; a scenario file is text' -- "$bin" check "$tmp/nul.ini"
name=$(printf 'n%.0s' $(seq 300))
expect 2 "^retrystorm: --set run.name=n+: the value is 300 characters long; at most 255 are allowed" -- \
  "$bin" check storm --set "run.name=$name"

# What scenario.ini could not hold is refused when read, so that the
# effective scenario of anything accepted is accepted: a file's
# `calls=A,B,...` without blanks (written back as `calls = A B ...`, longer),
# and a trace whose absolute path would not fit on the `trace = ` line.
svc=$(for i in 1 2 3 4 5 6 7 8; do printf 'svc%s%s ' "$i" "$(printf 'x%.0s' $(seq 16))"; done)
{ printf "$base[service front]\nservice = exp(1ms)\ncalls="; for v in $svc; do printf '%s*64,' "$v"; done | sed 's/,$//'
  printf '\n'; for v in $svc; do printf '[service %s]\nservice = exp(1ms)\n' "$v"; done; } > "$tmp/calls.ini"
expect 2 "calls.ini:10: \[service front\] calls = 'svc1xxxxxxxxxxxxxxxx\*64,...': the value is 191 characters long; at most 189 are allowed for calls" -- \
  "$bin" check "$tmp/calls.ini"
deep="$tmp/$(printf 'd%.0s' $(seq 100))/$(printf 'e%.0s' $(seq 100))"
mkdir -p "$deep" && printf 't\n0\n0.5\n' > "$deep/t.csv"
printf "$base[load]\ntrace = t.csv\n" | sed 's/^rate = 100\/s$//' > "$deep/deep.ini"
expect 2 "its absolute path is longer than 189 characters, which a line of scenario.ini cannot hold" -- \
  "$bin" check "$deep/deep.ini"

# 200,000 bogus sections: rejected in linear time (the quadratic parser took
# minutes), 100 problems listed and the rest counted.
{ printf "$base"; seq 200000 | sed 's/.*/[bogus&]/'; } > "$tmp/many.ini"
out=$(timeout 30 "$bin" check "$tmp/many.ini" 2>&1); rc=$?
[ "$rc" = 2 ] || fail "200,000 sections: exit $rc (want 2; 124 is the 30 s timeout)"
lines=$(wc -l <<<"$out")
[ "$lines" -le 102 ] || fail "200,000 sections: $lines lines of messages (want at most 102)"
grep -q 'many.ini: \.\.\. and 199900 more problems (only the first 100 are listed)$' <<<"$out" ||
  fail "200,000 sections: no line counting the problems not listed"
grep -q 'many.ini: 200000 problems$' <<<"$out" || fail "200,000 sections: the count of problems is wrong"

# Budget and breaker states: the limit holds over all layers together, in
# check as in run (two layers of 3.6 GB were each under the old per-layer
# limit); one layer of 13.8 GB is refused as bad input (exit 2), not at run time.
two='[load]\nclients = 10000000\n[layer a]\nbreaker = rate\nbreaker_scope = client\nbreaker_window = 300\n'
two+='[layer b]\nbreaker = rate\nbreaker_scope = client\nbreaker_window = 300\n'
printf "$base$two" > "$tmp/state2.ini"
expect 2 'state2.ini:11: the run'"'"'s state would need 7\.28 GB before its first request; at most 4 GB are allowed \(layer\.a\.breaker = rate with breaker_scope = client: load\.clients = 10000000 states of 364 bytes, 3\.64 GB; layer\.b\.breaker' -- \
  "$bin" check "$tmp/state2.ini"
one='[load]\nclients = 10000000\n[layer a]\nbreaker = rate\nbreaker_scope = client\nbreaker_window = 1000\nbudget = ratio\nbudget_scope = client\n'
printf "$base$one" > "$tmp/state1.ini"
expect 2 'would need 13\.84 GB before its first request; at most 4 GB.*layer\.a\.budget = ratio.*layer\.a\.breaker = rate' -- \
  "$bin" run "$tmp/state1.ini" -o "$tmp/state1"
[ -e "$tmp/state1" ] && fail "a refused run created its output directory"

# Attempts per request: eight layers of 100 attempts (10^16) could never
# finish; refused by check, run and compare before anything runs.
layers=''
for l in a b c d e f g h; do layers+="[layer $l]\nattempts = 100\nbackoff = constant\nbase = 1ns\n"; done
printf "$base$layers" > "$tmp/att.ini"
msg="att.ini:21: \[layer d\] attempts = 100: a request could make 10000000000000000 attempts, the product of every layer's attempts \(layer\.a\.attempts = 100 x .* x layer\.h\.attempts = 100\); at most 1000000 are allowed"
expect 2 "$msg" -- "$bin" check "$tmp/att.ini"
expect 2 "$msg" -- timeout 20 "$bin" run "$tmp/att.ini" -o "$tmp/att"
expect 2 'a request could make' -- timeout 20 "$bin" compare "$tmp/att.ini" --vary layer.a.backoff=none,constant -o "$tmp/attc"
[ -e "$tmp/att" ] || [ -e "$tmp/attc" ] && fail "a refused run created its output directory"

# A graph without any [layer]: the fan-outs alone multiply (64^4 = 16.7 M
# calls per request through five services); the implicit client layer
# makes one attempt, and the limit holds all the same (it skipped paths
# without a layer). Three fan-outs (262,144) pass.
fan='[run]\nduration = 10s\n[load]\nrate = 1/s\n'
for v in a b c d; do fan+="[service $v]\nservice = exp(1ms)\ncalls = $(echo "$v" | tr 'a-d' 'b-e')*64\n"; done
printf "$fan[service e]\nservice = exp(1ms)\n" > "$tmp/fan.ini"
msg="fan.ini:16: \[service d\] calls: a request could make 17043521 attempts over the service graph, most of them down the path clients -> a -> b -> c -> d -> e, which multiplies to 16777216 \(service\.a\.calls = b\*64 x service\.b\.calls = c\*64 x service\.c\.calls = d\*64 x service\.d\.calls = e\*64\); at most 1000000 are allowed: lower a fan-out or some layer's attempts"
expect 2 "$msg" -- "$bin" check "$tmp/fan.ini"
expect 2 "$msg" -- timeout 20 "$bin" run "$tmp/fan.ini" -o "$tmp/fan"
[ -e "$tmp/fan" ] && fail "a refused run created its output directory"
expect 0 ": ok \(" -- "$bin" check "$tmp/fan.ini" --set service.d.calls=e
expect 2 "\[layer y\] attempts = 100: a request could make 3280961 attempts over the service graph, most of them down the path clients -> a -> b -> c -> d -> e, which multiplies to 1638400 \(layer\.x\.attempts = 1 x service\.a\.calls = b\*64 x service\.b\.calls = c\*64 x service\.c\.calls = d\*4 x layer\.y\.attempts = 100\)" -- \
  "$bin" check "$tmp/fan.ini" --set service.c.calls=d*4 --set service.d.calls=e --set layer.x.attempts=1 \
  --set layer.y.from=c --set layer.y.to=d --set layer.y.attempts=100

# check reports the state the run allocates before its first request, all
# of it counted: 16 layers of per-client bulkheads at 10^6 clients are
# 16 x 10^6 x 16 bytes (they were not counted at all).
bh='[load]\nclients = 1000000\n'
for l in $(seq 16); do bh+="[layer l$l]\ninstances = per-client\nconcurrency = 1\n"; done
printf "$base$bh" > "$tmp/bh.ini"
expect 0 'bh.ini: ok \(t, 16 layers, 0 phases; 256\.[0-9] MB of state before the first request, at most 4 GB\)' -- \
  "$bin" check "$tmp/bh.ini"

# Every built-in scenario stays within the limits (layers-27 and layers-64 included).
for s in $("$bin" list | awk '{print $1}'); do
  expect 0 ": ok \(" -- "$bin" check "$s"
done
finish
