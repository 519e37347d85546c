# The gallery of docs/experiments.md, one figure per line, shared by scripts/gallery.sh
# (which draws the figures) and tests/gallery_test.sh (which checks that
# the committed figures are not stale). Sourced by both; defines:
#   gallery_each FN   calls FN KIND NAME FIGURE [ARGS...] for each figure,
#                     KIND run or compare, FIGURE the figure copied to
#                     plots/gallery/NAME.png
#   gallery_fingerprint DIR
#                     a sha256 of what a figure is drawn from: every CSV
#                     under DIR but phases.csv, which no figure draws
#                     (wall-clock columns wall_s dropped), every
#                     scenario.ini without its version line, and the plot
#                     scripts (plots/*.gp), in a fixed order
gallery_each() {
  local fn=$1
  "$fn" run storm load
  "$fn" compare storm-budget compare --vary layer.app.budget=none,aws-standard,grpc,ratio,envoy
  "$fn" compare herd compare --set run.duration=50s --vary layer.app.backoff=exponential,full
  "$fn" compare jitter compare --set run.duration=50s --vary layer.app.backoff=none,constant,exponential,full,equal,decorrelated
  "$fn" compare aws-occ occ --vary layer.app.backoff=exponential,decorrelated,equal,full,none \
    --vary load.clients=10,20,30,40,50,60,70,80,90,100,110,120,130,140,150,160,170,180,190 --reps 20
  "$fn" run layers-27 attempts
  "$fn" run layers-64 load
  "$fn" compare collapse compare --vary layer.app.backoff=none,full
  "$fn" compare omission compare --set run.duration=20s --vary layer.app.timeout=15ms,none
  "$fn" compare orbit compare --vary layer.app.attempts=5,1
  "$fn" compare payments compare --vary load.key=false,true --set layer.client.backoff=full --set layer.client.base=100ms \
    --set layer.client.cap=2s --set server.dedup=true --set layer.client.retry_on="timeout 409 503"
  "$fn" compare retry-after compare --vary layer.app.retry_after=honor,ignore
  "$fn" compare ratelimit-403 compare --vary layer.client.retry_on=403,none
  "$fn" compare outage-breaker compare --vary layer.app.breaker=gobreaker,none
  "$fn" compare breaker-scope compare --vary layer.app.breaker_scope=client,shared --set load.clients=1000
  "$fn" run cascade service_db
  "$fn" run cache-flush cache_objects
  "$fn" run cache-stampede cache_items
  "$fn" compare hedge compare --vary layer.app.hedge=none,fixed,percentile --set layer.app.timeout=50ms \
    --set layer.app.retry_on=timeout --set layer.app.hedge_delay=none \
    --set phase.busy.start=40s --set phase.busy.end=120s --set phase.busy.rate=x3
  "$fn" compare cancel compare --vary layer.app.cancel=on-abandon,none --vary server.cancel_running=true,false
}

gallery_fingerprint() {
  local dir=$1 root=${2:-.}
  {
    find "$dir" -type f -name '*.csv' ! -name phases.csv -printf '%P\n' | LC_ALL=C sort | while IFS= read -r f; do
      printf '== %s\n' "$f"
      awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) drop[i] = ($i == "wall_s") }
               { line = ""; sep = ""
                 for (i = 1; i <= NF; i++) if (!drop[i]) { line = line sep $i; sep = "," }
                 print line }' "$dir/$f"
    done
    find "$dir" -type f -name 'scenario.ini' -printf '%P\n' | LC_ALL=C sort | while IFS= read -r f; do
      printf '== %s\n' "$f"
      tail -n +2 "$dir/$f"
    done
    for g in "$root"/plots/*.gp; do
      printf '== %s\n' "${g##*/}"
      cat "$g"
    done
  } | sha256sum | cut -d' ' -f1
}
