#!/usr/bin/env bash
# The committed gallery is not stale: every figure in plots/gallery/ comes
# from an entry of scripts/gallery-list.sh, and running that entry's
# command again (without drawing) gives the data the figure was drawn from,
# as scripts/gallery.sh fingerprinted it in plots/gallery/DATA.sha256 (the
# CSVs without wall-clock columns, the effective scenarios, the plot
# scripts). A change of the model, a scenario or a plot script that alters
# a figure fails here until scripts/gallery.sh redraws it.
set -uo pipefail
. "$(dirname "$0")/lib.sh"
src=$2
cd "$src" || exit 1
. scripts/gallery-list.sh
sums=plots/gallery/DATA.sha256
[ -s "$sums" ] || { fail "$sums missing: run scripts/gallery.sh"; finish; exit; }
declare -A listed
check() { # run|compare name figure [args...]
  local kind=$1 name=$2; shift 3
  listed[$name]=1
  "$bin" "$kind" "$name" -o "$tmp/$name" "$@" > /dev/null 2>&1 || { fail "$name: $kind failed"; return; }
  local want got
  want=$(awk -v n="$name" '$2 == n { print $1 }' "$sums")
  got=$(gallery_fingerprint "$tmp/$name" "$src")
  [ -n "$want" ] || { fail "$name: no fingerprint in $sums (run scripts/gallery.sh)"; return; }
  [ "$want" = "$got" ] || fail "plots/gallery/$name.png is stale: its data changed (run scripts/gallery.sh)"
  [ -s "plots/gallery/$name.png" ] || fail "plots/gallery/$name.png missing"
  rm -rf "${tmp:?}/$name"
}
gallery_each check
for f in plots/gallery/*.png; do
  n=${f##*/}; n=${n%.png}
  [ -n "${listed[$n]:-}" ] || fail "$f is in no entry of scripts/gallery-list.sh"
done
while read -r _ n; do
  if [ -z "${n:-}" ] || [ -z "${listed[$n]:-}" ]; then
    fail "$sums has a line for '${n:-}', which scripts/gallery-list.sh does not list"
  fi
done < "$sums"
finish
