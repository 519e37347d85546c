#!/usr/bin/env bash
# hysteresis: the claims of issue 32 over 20 seeds (replications 0..19 of
# the scenario's seed), with a control for each; the same bytes with -j 1
# and -j 2; each threshold recomputed by hand from hysteresis.csv; bad
# inputs are in cli_test.sh.
set -uo pipefail
. "$(dirname "$0")/lib.sh"
# val FILE ROW COLUMN: a cell of thresholds.csv (ROW: mean, hw, n or a rep)
val() { awk -F, -v r="$2" -v c="$3" 'NR == 1 { for (i = 1; i <= NF; i++) k[$i] = i; next } $1 == r { print $k[c] }' "$1"; }
# count FILE STATE: replications in that state
count() { awk -F, -v s="$2" 'NR > 1 && $5 == s { n++ } END { print n + 0 }' "$1"; }
# holds EXPR: an awk condition over the numbers given as a, b, c, d
holds() { awk -v a="$2" -v b="${3:-0}" -v c="${4:-0}" -v d="${5:-0}" "BEGIN { exit !($1) }"; }

# orbit at the default ramp (1800 s): a gap of more than 5/s, the tip's and
# the return's 95 % intervals apart, in every replication.
o=(hysteresis orbit --load load.rate=1/s..14/s --reps 20)
out=$("$bin" "${o[@]}" -j 1 -o "$tmp/orbit")
[ $? = 0 ] || fail "hysteresis orbit: $out"
grep -qE '^  tip +[0-9.]+/s ± [0-9.]+ \(95 %; 20 of 20' <<<"$out" || fail "orbit: no tip in 20 of 20: $out"
grep -qE '^  return +[0-9.]+/s ± [0-9.]+ \(95 %; 20 of 20' <<<"$out" || fail "orbit: no return in 20 of 20: $out"
t=$(val "$tmp/orbit/thresholds.csv" mean tip) th=$(val "$tmp/orbit/thresholds.csv" hw tip)
r=$(val "$tmp/orbit/thresholds.csv" mean return) rh=$(val "$tmp/orbit/thresholds.csv" hw return)
g=$(val "$tmp/orbit/thresholds.csv" mean gap) gh=$(val "$tmp/orbit/thresholds.csv" hw gap)
holds 'a - b > c + d' "$t" "$th" "$r" "$rh" || fail "orbit: tip $t ± $th and return $r ± $rh overlap"
holds 'a - b > 5' "$g" "$gh" || fail "orbit: gap $g ± $gh not above 5/s"
[ "$(count "$tmp/orbit/thresholds.csv" returned)" = 20 ] || fail "orbit: not 20 replications returned on the way down"
# every window's load is the ramp's at its middle (no window straddles a
# corner at the default ramp: lead 180 s, ramps 1800 s, tail 360 s)
awk -F, 'NR > 1 && $1 == 0 { m = $2 + 2.5; f = m < 180 ? 1 : m < 1980 ? 1 + 13 * (m - 180) / 1800 : m < 3780 ? 14 - 13 * (m - 1980) / 1800 : 1
  if ($4 - f > 1e-4 || f - $4 > 1e-4) { print "t = " $2 ": load " $4 ", want " f; exit 1 } }' "$tmp/orbit/hysteresis.csv" ||
  fail "orbit: a window's load is not the ramp's"
# replications differ (each seeded from (seed, r))
[ "$(awk -F, 'NR > 1 && $1 ~ /^[0-9]+$/ { print $2 }' "$tmp/orbit/thresholds.csv" | sort -u | wc -l)" -ge 10 ] ||
  fail "orbit: fewer than 10 distinct tips in 20 replications"
# the control: without retries the loop closes (the gap's 95 % interval
# within ±1/s: no bistability, and the ramp slow enough to show no lag)
"$bin" "${o[@]}" --set layer.app.attempts=1 -o "$tmp/orbit1" > /dev/null || fail "hysteresis orbit attempts=1"
g=$(val "$tmp/orbit1/thresholds.csv" mean gap) gh=$(val "$tmp/orbit1/thresholds.csv" hw gap)
[ "$(val "$tmp/orbit1/thresholds.csv" n gap)" = 20 ] || fail "orbit attempts=1: not 20 gaps"
holds '(a < 0 ? -a : a) + b < 1' "$g" "$gh" || fail "orbit attempts=1: gap $g ± $gh not within ±1/s"
# the same bytes whatever the thread count
"$bin" "${o[@]}" -j 2 -o "$tmp/orbit2" > /dev/null || fail "hysteresis orbit -j 2"
diff -r "$tmp/orbit" "$tmp/orbit2" > "$tmp/d" || fail "-j 1 and -j 2 differ: $(head -3 "$tmp/d")"

# Replication 0's tip and return recomputed from its windows: the first
# window of the way up that begins 3 out of band (ok < 0.9 × offered), the
# first of the way down that begins 3 in band.
awk -F, 'NR > 1 && $1 == 0 { n++; leg[n] = $3; load[n] = $4; out[n] = $6 < 0.9 * $5 }
  END {
    for (i = 1; i <= n - 2; i++) if (leg[i] != "lead" && leg[i] != "down" && leg[i] != "tail" && out[i] && out[i+1] && out[i+2]) { tip = load[i]; break }
    for (j = i + 3; j <= n - 2; j++) if ((leg[j] == "down" || leg[j] == "tail") && !out[j] && !out[j+1] && !out[j+2]) { ret = load[j]; break }
    print tip, ret }' "$tmp/orbit/hysteresis.csv" > "$tmp/by-hand"
[ "$(cat "$tmp/by-hand")" = "$(val "$tmp/orbit/thresholds.csv" 0 tip) $(val "$tmp/orbit/thresholds.csv" 0 return)" ] ||
  fail "replication 0: by hand $(cat "$tmp/by-hand"), thresholds.csv $(sed -n 2p "$tmp/orbit/thresholds.csv")"

# collapse (a 120 s ramp keeps it cheap): tips in every replication and
# never comes back, even at A = 100/s (the gap is at least tip − A);
# without retries it comes back in every one, above A.
c=(hysteresis collapse --load load.rate=100/s..750/s --ramp 120s --reps 20)
out=$("$bin" "${c[@]}" -o "$tmp/collapse")
[ $? = 0 ] || fail "hysteresis collapse: $out"
[ "$(val "$tmp/collapse/thresholds.csv" n tip)" = 20 ] || fail "collapse: not 20 tips"
[ "$(count "$tmp/collapse/thresholds.csv" stuck)" = 20 ] || fail "collapse: not 20 replications stuck: $out"
t=$(val "$tmp/collapse/thresholds.csv" mean tip) th=$(val "$tmp/collapse/thresholds.csv" hw tip)
holds 'a - b > 600' "$t" "$th" || fail "collapse: tip $t ± $th"
grep -q 'the gap is at least tip - A' <<<"$out" || fail "collapse: no lower bound said: $out"
"$bin" "${c[@]}" --set layer.app.attempts=1 -o "$tmp/collapse1" > /dev/null || fail "hysteresis collapse attempts=1"
[ "$(count "$tmp/collapse1/thresholds.csv" returned)" = 20 ] || fail "collapse attempts=1: not 20 returned"
finish
