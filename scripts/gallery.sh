#!/usr/bin/env bash
# Regenerates the README gallery: runs every gallery scenario (and the
# comparisons that go with them) with --plot under out/gallery/, and copies
# one figure of each to plots/gallery/NAME.png.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/deps.sh
rs_need_packages "${RS_BUILD_PACKAGES[@]}" "${RS_PLOT_PACKAGES[@]}"
rs_build_release
bin=./build/retrystorm
out=out/gallery
mkdir -p plots/gallery
run() { # name figure [args...]
  local name=$1 fig=$2; shift 2
  "$bin" run "$name" -o "$out/$name" --plot "$@" > /dev/null
  cp "$out/$name/$fig.png" "plots/gallery/$name.png"
  echo "plots/gallery/$name.png"
}
compare() { # name figure [args...]
  local name=$1 fig=$2; shift 2
  "$bin" compare "$name" -o "$out/$name" --plot "$@" > /dev/null
  cp "$out/$name/$fig.png" "plots/gallery/$name.png"
  echo "plots/gallery/$name.png"
}
run storm load
compare storm-budget compare --vary layer.app.budget=none,aws-standard,grpc,ratio,envoy
compare herd compare --set run.duration=50s --vary layer.app.backoff=exponential,full
compare jitter compare --set run.duration=50s --vary layer.app.backoff=none,constant,exponential,full,equal,decorrelated
compare aws-occ occ --vary layer.app.backoff=exponential,decorrelated,equal,full,none \
  --vary load.clients=10,20,30,40,50,60,70,80,90,100,110,120,130,140,150,160,170,180,190 --reps 20
run layers-27 attempts
run layers-64 load
compare collapse compare --vary layer.app.backoff=none,full
compare omission compare --set run.duration=20s --vary layer.app.timeout=15ms,none
compare orbit compare --vary layer.app.attempts=5,1
compare payments compare --vary load.key=false,true --set layer.client.backoff=full --set layer.client.base=100ms \
  --set layer.client.cap=2s --set server.dedup=true --set layer.client.retry_on="timeout 409 503"
compare retry-after compare --vary layer.app.retry_after=honor,ignore
compare ratelimit-403 compare --vary layer.client.retry_on=403,none
compare outage-breaker compare --vary layer.app.breaker=gobreaker,none
compare breaker-scope compare --vary layer.app.breaker_scope=client,shared --set load.clients=1000
run cascade service_db
run cache-flush cache_objects
run cache-stampede cache_items
