#!/usr/bin/env bash
# The live page in a real browser (tests/browser/serve.test.mjs): starts
# `retrystorm serve` on a free port and drives Debian's Chromium against it
# with puppeteer-core (pinned in tests/browser/package-lock.json, installed
# with npm ci into the build directory). Skipped, visibly (exit 77), only
# where Chromium is not installed; scripts/test.sh installs it.
# Usage: browser_test.sh BIN SOURCE_DIR WORK_DIR
set -euo pipefail
bin=$1 src=$2 work=$3
chromium=${CHROMIUM:-/usr/bin/chromium}
if [ ! -x "$chromium" ]; then
  echo "SKIPPED: no Chromium at $chromium (apt-get install chromium; scripts/test.sh does)"
  exit 77
fi
if ! "$bin" serve --help > /dev/null 2>&1; then
  echo "FAIL: $bin was built without serve (-DRS_SERVE=OFF)"
  exit 1
fi
mkdir -p "$work"
cp "$src/tests/browser/package.json" "$src/tests/browser/package-lock.json" "$src/tests/browser/serve.test.mjs" "$work/"
if ! cmp -s "$work/package-lock.json" "$work/node_modules/.package-lock.json.installed" 2> /dev/null; then
  (cd "$work" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error)
  cp "$work/package-lock.json" "$work/node_modules/.package-lock.json.installed"
fi
log=$(mktemp)
"$bin" serve --port 0 > "$log" 2>&1 &
pid=$!
trap 'kill $pid 2> /dev/null || true; wait $pid 2> /dev/null || true; rm -f "$log"' EXIT
url=
for _ in $(seq 100); do
  url=$(grep -oE 'http://127\.0\.0\.1:[0-9]+/' "$log" || true)
  [ -n "$url" ] && break
  kill -0 $pid 2> /dev/null || { cat "$log"; exit 1; }
  sleep 0.1
done
[ -n "$url" ] || { echo "serve printed no URL"; cat "$log"; exit 1; }
echo "serving at $url"
(cd "$work" && CHROMIUM=$chromium RS_SOURCE=$src node serve.test.mjs "$url" "$bin" "$work")
# Ctrl-C's sibling stops the server cleanly (and, in the sanitizer build,
# its leak check runs at exit): exit 0, nothing on stderr but its lines.
kill -TERM $pid
rc=0
wait $pid || rc=$?
trap 'rm -f "$log"' EXIT
if [ $rc -ne 0 ] || grep -q -E 'Sanitizer|runtime error' "$log"; then
  echo "FAIL: serve exited $rc"
  cat "$log"
  exit 1
fi
grep -q 'retrystorm serve: stopped (terminated)' "$log" || { echo "FAIL: serve did not say it stopped"; cat "$log"; exit 1; }
echo "serve stopped cleanly"
