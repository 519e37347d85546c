#!/usr/bin/env bash
# retrystorm serve over HTTP (curl): the page and its files, the api's
# answers, and every refusal with its status and message: a body over
# 256 KiB (413), a body that is not a form (415), other methods (405),
# unknown paths (404), a foreign Host or Origin (other site, port or
# scheme: 403), too many overrides and NUL bytes (400), bad options (exit
# 2); and a clean stop on SIGTERM that stops the run in progress and the
# waiting one (503). Slowloris (serve_slowloris.py): while 64 connections
# from 127.0.0.2 send a byte every 2 s (after a first request answered at
# once), at most 16 of them are kept, requests from 127.0.0.1 are answered
# at once, and the kept ones are closed 10 s after that first answer
# although they keep sending (the other checks run meanwhile).
# Usage: serve_test.sh BIN
set -euo pipefail
bin=$1
tmp=$(mktemp -d)
fails=0
expect() { # what status body-pattern -- curl args...
  local what=$1 status=$2 pattern=$3; shift 4
  local got
  # || true: a server that answers 413 before the body is sent closes the
  # connection under curl, which then exits non-zero after printing the status
  got=$(curl -s -o "$tmp/body" -w '%{http_code}' "$@") || true
  if [ "$got" = "$status" ] && grep -q -e "$pattern" "$tmp/body"; then
    echo "ok   $what ($got)"
  else
    echo "FAIL $what: status $got, want $status with '$pattern'; body: $(head -c 300 "$tmp/body")"
    fails=$((fails + 1))
  fi
}

# bad options: exit 2 and a message, nothing listening
for args in "--port 70000" "--port x" "--jobs 0" "--max-seconds 0" "--bind nowhere" "--frobnicate 1" "--port"; do
  rc=0
  # shellcheck disable=SC2086
  "$bin" serve $args > "$tmp/out" 2>&1 || rc=$?
  if [ $rc -eq 2 ] && grep -q 'retrystorm serve:' "$tmp/out"; then
    echo "ok   serve $args: exit 2: $(head -1 "$tmp/out")"
  else
    echo "FAIL serve $args: exit $rc: $(cat "$tmp/out")"
    fails=$((fails + 1))
  fi
done
"$bin" serve --help | grep -q 'usage: retrystorm serve' && echo "ok   serve --help" || { echo "FAIL serve --help"; fails=$((fails + 1)); }

"$bin" serve --port 0 --jobs 1 > "$tmp/log" 2>&1 &
pid=$!
trap 'kill $pid 2> /dev/null || true; rm -rf "$tmp"' EXIT
url=
for _ in $(seq 100); do
  url=$(grep -oE 'http://127\.0\.0\.1:[0-9]+/' "$tmp/log" || true)
  [ -n "$url" ] && break
  sleep 0.1
done
[ -n "$url" ] || { echo "FAIL: no URL"; cat "$tmp/log"; exit 1; }

port=${url#http://127.0.0.1:}
python3 "$(dirname "$0")/serve_slowloris.py" "${port%/}" > "$tmp/slow" 2>&1 &
slow=$!
for _ in $(seq 100); do grep -qs ready "$tmp/slow" && break; sleep 0.1; done
expect "a request while 64 connections from another address trickle" 200 '<title>retrystorm</title>' -- --max-time 3 "$url"

expect "the page" 200 '<title>retrystorm</title>' -- "$url"
expect "the chart library, from the binary" 200 'uPlot' -- "${url}uPlot.iife.min.js"
expect "the list of built-ins" 200 '"name":"storm"' -- "${url}api/scenarios"
expect "a run" 200 '"summary.csv":"scenario,seed' -- --data-urlencode scenario=storm --data-urlencode set=run.duration=90s "${url}api/run"
expect "a check" 200 '"shape":{"name":"x"' -- --data-urlencode $'text=[run]\nname = x\n[load]\nrate = 1/s\n[server]\nservice = exp(1ms)\n' "${url}api/check"
expect "a bad scenario" 400 "pasted:2: \[run\] duration = 'x'" -- --data-urlencode $'text=[run]\nduration = x\n' "${url}api/run"
expect "no such page" 404 'no such page' -- "${url}etc/passwd"
expect "no path outside the page" 404 'no such page' -- --path-as-is "${url}../../etc/passwd"
expect "another method" 405 'GET or POST only' -- -X DELETE "$url"
expect "a body that is not a form" 415 'x-www-form-urlencoded' -- -H 'Content-Type: application/json' -d '{}' "${url}api/run"
head -c 300000 /dev/zero | tr '\0' a > "$tmp/big"
expect "a body over 256 KiB" 413 'larger than 256 KiB' -- --data-binary "@$tmp/big" -H 'Content-Type: application/x-www-form-urlencoded' "${url}api/run"
sets=()
for i in $(seq 65); do sets+=(--data-urlencode "set=run.seed=$i"); done
expect "65 overrides" 400 'at most 64 sets' -- "${sets[@]}" --data-urlencode scenario=storm "${url}api/run"
expect "an unknown field" 400 'malformed request' -- --data-urlencode path=/etc/passwd "${url}api/run"
expect "a foreign Host (DNS rebinding)" 403 'refused' -- -H 'Host: attacker.example:8080' "$url"
expect "a foreign Origin" 403 'refused' -- -H 'Origin: http://attacker.example' --data-urlencode scenario=storm "${url}api/run"
expect "the page's own Origin" 200 '"ok":true' -- -H "Origin: ${url%/}" --data-urlencode scenario=storm --data-urlencode set=run.duration=70s "${url}api/run"
expect "an Origin on another port" 403 'refused' -- -H 'Origin: http://127.0.0.1:1' --data-urlencode scenario=storm "${url}api/run"
expect "an Origin with another scheme" 403 'refused' -- -H "Origin: https://${url#http://}" --data-urlencode scenario=storm "${url}api/run"
expect "a body announced over 256 KiB, refused before it is sent" 413 'larger than 256 KiB' -- -H 'Content-Length: 100000000' -H 'Content-Type: application/x-www-form-urlencoded' --max-time 5 --data-binary 'scenario=storm' "${url}api/run"
expect "a NUL in a field" 400 'malformed request' -- --data-binary 'scenario=storm&set=run.seed%3D1%00' "${url}api/run"
got=$(curl -s -I -o /dev/null -w '%{http_code}' "$url")
[ "$got" = 200 ] && echo "ok   HEAD (200)" || { echo "FAIL HEAD: $got"; fails=$((fails + 1)); }
expect "a run too big for a page" 422 'the page draws at most 20000' -- --data-urlencode scenario=storm --data-urlencode set=run.bucket=1ms "${url}api/run"

wait $slow || true
read -r _ at_once _ kept _ last _ fewest _ open <<< "$(tail -1 "$tmp/slow")"
if [ "${open:-x}" = 0 ] && [ "$kept" -ge 1 ] && [ "$kept" -le 16 ] && [ $((at_once + kept)) = 64 ] &&
   [ "$(echo "$last >= 9.5 && $last <= 12.5" | bc -l)" = 1 ] && [ "$fewest" -ge 4 ]; then
  echo "ok   Slowloris: $kept of 64 connections from one address kept, closed by $last s though each sent $fewest+ bytes"
else
  echo "FAIL: Slowloris: want at most 16 of 64 kept, all closed 10 to 12.5 s after opening while sending: $(cat "$tmp/slow")"
  fails=$((fails + 1))
fi

# SIGTERM while a long run goes and another waits for the one slot: both
# answer 503 at once, and the server stops within a second or two
long=(--data-urlencode scenario=storm --data-urlencode set=run.duration=15000s --data-urlencode set=layer.app.attempts=1
      --max-time 30 "${url}api/run")
curl -s -o "$tmp/run1" -w '%{http_code}' "${long[@]}" > "$tmp/code1" &
c1=$!
sleep 0.3
curl -s -o "$tmp/run2" -w '%{http_code}' "${long[@]}" > "$tmp/code2" &
c2=$!
sleep 0.5
start=$(date +%s.%N)
kill -TERM $pid
rc=0
wait $pid || rc=$?
took=$(echo "$(date +%s.%N) - $start" | bc -l)
wait $c1 $c2 || true
if [ "$(cat "$tmp/code1")" = 503 ] && [ "$(cat "$tmp/code2")" = 503 ] && grep -q 'the server is stopping' "$tmp/run1" &&
   [ "$(echo "$took < 5" | bc -l)" = 1 ]; then
  echo "ok   SIGTERM stops the run in progress and the waiting one (503 both) in $(printf %.2f "$took") s"
else
  echo "FAIL: SIGTERM during runs: $(cat "$tmp/code1") $(cat "$tmp/code2") after $took s: $(head -c 200 "$tmp/run1")"
  fails=$((fails + 1))
fi
if [ $rc -eq 0 ] && grep -q 'stopped (terminated)' "$tmp/log" && ! grep -q -E 'Sanitizer|runtime error' "$tmp/log"; then
  echo "ok   stopped cleanly by SIGTERM"
else
  echo "FAIL: serve exited $rc: $(cat "$tmp/log")"
  fails=$((fails + 1))
fi
[ $fails -eq 0 ] || { echo "$fails failure(s)"; exit 1; }
echo "serve over HTTP: all passed"
