#!/usr/bin/env bash
# Every example is executed (issue 33): the example commands of
#  (a) `retrystorm help` and `retrystorm help CMD` for every command it
#      lists (their "examples:" blocks),
#  (b) man/retrystorm.1 (its .EX/.EE and .nf/.fi blocks),
#  (c) README.md, CONTRIBUTING.md (if present) and every docs/*.md (fenced
#      blocks marked ```, ```sh, ```bash, ```console or ```shell, and
#      indented blocks of lines starting "$ retrystorm ").
# In a block, a line that starts with "retrystorm " or "$ retrystorm "
# (after its indentation) is an example; a trailing "\" joins the next line.
# The exact rules are in examples_extract.awk, which does the extraction.
#
# Output claims: lines right after an example (in the same block)
#   # prints: TEXT   its stdout and stderr together contain TEXT (fixed)
#   # exits: N       it exits with N (a demonstration of a refusal);
# without "# exits:" an example must exit 0.
#
# Skipped, and listed as skipped with their rule: synopses (" [", "...",
# "| -" or a capitalised placeholder such as SCENARIO: a form, not a
# command); `serve` (it blocks until stopped); the blocks of a Markdown page
# preceded by "<!-- examples: skip REASON -->" (commands needing what this
# test cannot give: a cluster, a package install). An example whose text and
# claims are those of one that ran before (help and the man page share
# several) is not run twice: listed as checked by the first.
#
# How each runs: the examples of one source (help, the man page, one
# Markdown page) run in order, in one scratch directory of their own, so
# that later examples see what earlier ones wrote (plot out/storm after
# run storm). The directory holds scenarios/ (a link to the repository's),
# my.ini, a copy of scenarios/cancel.ini (a valid, lint-clean scenario with
# a spike phase and a layer app, standing for "your own scenario"), and
# storm, a copy of scenarios/storm.ini ("a file named like a built-in").
# `retrystorm` is the built binary, first on PATH; each example runs under
# `bash -o pipefail -c`.
#
# Short runs: the binary has no switch that shortens every run, so an
# example of run, compare, sweep, tune, map or margin that sets no
# run.duration and claims no output gets "--set run.duration=Ds" inserted
# after its scenario, D = 20 s after the scenario's last phase ends or herd
# fires (examples_duration.awk), when that is shorter than its own duration
# (storm: 300 s -> 90 s). hysteresis builds its own timeline and runs as
# written. The listing shows each command as run.
#
# A failure names the file, the line, the command, its exit code and the
# end of its output. Sources run two at a time (xargs -P2).
# Usage: examples_test.sh RETRYSTORM SOURCE_DIR
set -uo pipefail
. "$(dirname "$0")/lib.sh"
src=$(realpath "$2")
here=$(realpath "$(dirname "$0")")
mkdir -p "$tmp/bin" "$tmp/src" "$tmp/res"
ln -s "$bin" "$tmp/bin/retrystorm"

# The examples, one TSV file per source: FILE LINE STATUS COMMAND CLAIMS.
extract() { # extract KIND NAME FILE OUT
  awk -v kind="$1" -v file="$2" -f "$here/examples_extract.awk" "$3" >>"$4" || fail "extracting $2"
}
cmds=$("$bin" help | awk '/^commands:/ { on = 1; next } on && /^  [a-z]/ { print $1 } on && /^$/ { exit }')
[ "$(wc -w <<<"$cmds")" -ge 13 ] || fail "retrystorm help lists only: $cmds"
"$bin" help >"$tmp/help.txt"
extract help "retrystorm help" "$tmp/help.txt" "$tmp/src/00-help.tsv"
for c in $cmds; do
  "$bin" help "$c" >"$tmp/help-$c.txt" || fail "retrystorm help $c exited $?"
  extract help "retrystorm help $c" "$tmp/help-$c.txt" "$tmp/src/00-help.tsv"
done
extract man man/retrystorm.1 "$src/man/retrystorm.1" "$tmp/src/01-man.tsv"
n=2
for f in "$src/README.md" "$src/CONTRIBUTING.md" "$src"/docs/*.md; do
  [ -f "$f" ] || continue
  extract md "${f#"$src"/}" "$f" "$(printf '%s/src/%02d-md.tsv' "$tmp" "$n")"
  n=$((n + 1))
done

# Examples already seen (the same command, exit and claims) are marked
# "same:FILE:LINE" in the later source.
awk -F'\t' 'BEGIN { OFS = "\t" }
  FNR == 1 { out = FILENAME ".dedup" }
  $3 == "run" { k = $4 "\t" $5 "\t" $6; if (k in first) $3 = "same:" first[k]; else first[k] = $1 ":" $2 }
  { print > out }' "$tmp"/src/*.tsv
for f in "$tmp"/src/*.tsv; do [ ! -f "$f.dedup" ] || mv "$f.dedup" "$f"; done

# shorten CMD DIR: CMD with --set run.duration=Ds after its scenario, when
# the rule at the top applies; CMD as it is otherwise.
shorten() {
  local cmd=$1 dir=$2 sub scen file d
  read -r _ sub scen _ <<<"$cmd"
  case $sub in run | compare | sweep | tune | map | margin) ;; *) echo "$cmd"; return ;; esac
  if [[ $cmd == *run.duration* || $scen == -* || -z $scen ]]; then echo "$cmd"; return; fi
  if [ -f "$dir/$scen" ]; then file=$dir/$scen; elif [ -f "$src/scenarios/$scen.ini" ]; then file=$src/scenarios/$scen.ini
  else echo "$cmd"; return; fi
  d=$(awk -f "$here/examples_duration.awk" "$file")
  if [ -z "$d" ]; then echo "$cmd"; return; fi
  echo "retrystorm $sub $scen --set run.duration=${d}s${cmd#"retrystorm $sub $scen"}"
}

# run_source TSV: runs its examples in order in a scratch directory; writes
# one line per example to $tmp/res/: ok, same, skip or FAIL, and what.
run_source() {
  local tsv=$1 dir res file line status cmd want claims out rc claim run
  dir=$(mktemp -d "$tmp/run.XXXXXX") res=$tmp/res/$(basename "$tsv")
  ln -s "$src/scenarios" "$dir/scenarios"
  cp "$src/scenarios/cancel.ini" "$dir/my.ini" && cp "$src/scenarios/storm.ini" "$dir/storm"
  : >"$res"
  while IFS=$'\t' read -r file line status cmd want claims; do
    case $status in
    skip:*) printf 'skip\t%s:%s\t%s\t%s\n' "$file" "$line" "${status#skip:}" "$cmd" >>"$res"; continue ;;
    same:*) printf 'same\t%s:%s\t%s\tas %s\n' "$file" "$line" "$cmd" "${status#same:}" >>"$res"; continue ;;
    esac
    run=$cmd
    [ -z "$claims" ] && run=$(shorten "$cmd" "$dir")
    local t0=$SECONDS
    out=$(cd "$dir" && PATH="$tmp/bin:$PATH" bash -o pipefail -c "$run" 2>&1 </dev/null); rc=$?
    if [ "$rc" != "$want" ]; then
      printf 'FAIL\t%s:%s\t%s\texit %s (want %s): %s\n' "$file" "$line" "$run" "$rc" "$want" \
        "$(tail -3 <<<"$out" | cut -c1-240 | tr '\n' '|')" >>"$res"
      continue
    fi
    local bad="" list=()
    [ -n "$claims" ] && IFS=$'\037' read -ra list <<<"$claims"
    for claim in "${list[@]}"; do
      grep -qF -- "$claim" <<<"$out" || bad="$bad '$claim'"
    done
    if [ -n "$bad" ]; then
      printf 'FAIL\t%s:%s\t%s\tdoes not print%s\n' "$file" "$line" "$run" "$bad" >>"$res"
    else
      printf 'ok\t%s:%s\t%s\t%ss%s\n' "$file" "$line" "$run" $((SECONDS - t0)) \
        "${claims:+, output claimed}$([ "$want" = 0 ] || echo ", exit $want claimed")" >>"$res"
    fi
  done <"$tsv"
}
export -f run_source shorten
export tmp src here
# The test itself can fail: a page whose example fails, whose claims do
# not hold, and whose skipped block is listed, gives exactly these results.
cat >"$tmp/self.md" <<'EOF'
```sh
retrystorm check nosuch-scenario
retrystorm list
# prints: no such text in the list
retrystorm check storm --strict
# exits: 2
retrystorm list presets --frobnicate \
    --more
```
<!-- examples: skip needs a cluster -->
```
retrystorm list
```
EOF
extract md self.md "$tmp/self.md" "$tmp/self.tsv"
run_source "$tmp/self.tsv"
got=$(cut -f1,2 "$tmp/res/self.tsv" | tr '\t\n' ' ;')
[ "$got" = "FAIL self.md:2;FAIL self.md:3;ok self.md:5;FAIL self.md:7;skip self.md:12;" ] ||
  fail "the self-test page gave: $got"
grep -q "does not print 'no such text in the list'" "$tmp/res/self.tsv" || fail "a false claim was not named"
grep -q "retrystorm list presets --frobnicate --more" "$tmp/res/self.tsv" || fail "a continued line was not joined"
rm "$tmp/res/self.tsv"

ls "$tmp"/src/*.tsv | xargs -P2 -I{} bash -c 'run_source "$1"' _ {}

cat "$tmp"/res/*.tsv >"$tmp/all.tsv"
nrun=$(grep -c '^ok' "$tmp/all.tsv")
nskip=$(grep -c '^skip' "$tmp/all.tsv")
nclaims=$(grep -c '^ok.*claimed' "$tmp/all.tsv")
nsame=$(grep -c '^same' "$tmp/all.tsv")
echo "skipped ($nskip), by an explicit rule:"
awk -F'\t' '$1 == "skip" { printf "  %s: %s (%s)\n", $2, $4, $3 }' "$tmp/all.tsv"
echo "ran ($nrun ok, $nclaims with output claims; $nsame more checked by the same command elsewhere):"
awk -F'\t' '$1 == "ok" || $1 == "same" { printf "  %s: %s  [%s]\n", $2, $3, $4 }' "$tmp/all.tsv"
while IFS=$'\t' read -r _ where cmd why; do
  fail "$where: $cmd -> $why"
done < <(grep '^FAIL' "$tmp/all.tsv")
[ "$nrun" -ge 20 ] || fail "only $nrun examples ran: the extraction lost some"
grep -q 'help run:' "$tmp/all.tsv" || fail "no example of retrystorm help run was found"
grep -q 'man/retrystorm.1:' "$tmp/all.tsv" || fail "no example of the man page was found"
finish
