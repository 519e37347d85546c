#!/usr/bin/env bash
# Mutation testing: does the test suite fail when the code is wrong?
#
# Each mutant in tests/mutants/*.mut is a one-line bug a developer could
# write: a file, the exact text, its replacement, and why it is a bug
# (format: tests/mutants/README). This script copies the sources to a
# scratch directory (the working tree is never touched), builds them once,
# and for each mutant applies it, rebuilds incrementally and runs the
# tests: first the ones the mutant names, then, if they all pass, the whole
# suite (less browser, install and deps, which do not test sim/). A mutant
# is killed when a test fails; it survives when none does. Mutants marked
# `equivalent` (no output can change; the reason is in the file) are not
# run. Prints one line per mutant and the score; exits 1 if any mutant
# survives, does not compile, or no longer matches its file.
#
# Usage: scripts/mutate.sh [--sample N] [--seed S] [--quick] [--list] [NAME...]
#   --sample N   run N mutants drawn with the seed (default: today's UTC
#                date, so CI draws a different few each day)
#   --quick      run only each mutant's named tests: "unkilled" then means
#                that they miss it, not that the suite does (a first pass)
#   NAME...      run these mutants only
set -euo pipefail
cd "$(dirname "$0")/.."
src=$PWD
. scripts/deps.sh

die() { echo "mutate: $*" >&2; exit 2; }

sample=0 seed=$(date -u +%Y%m%d) list=0 quick=0 names=()
while [ $# -gt 0 ]; do
  case $1 in
    --sample) [ $# -ge 2 ] && [[ $2 =~ ^[0-9]+$ ]] || die "--sample needs a number"; sample=$2; shift 2 ;;
    --seed) [ $# -ge 2 ] && [[ $2 =~ ^[0-9]+$ ]] || die "--seed needs a number"; seed=$2; shift 2 ;;
    --list) list=1; shift ;;
    --quick) quick=1; shift ;;
    -h|--help) sed -n '2,22p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) die "unknown option $1 (allowed: --sample N, --seed S, --quick, --list, NAME...)" ;;
    *) names+=("$1"); shift ;;
  esac
done

# ---- the mutant list ----
M_NAME=() M_FILE=() M_FROM=() M_TO=() M_WHY=() M_TESTS=() M_EQUIV=() M_AT=()
parse() { # parse FILE: appends its mutants
  local f=$1 line key val n=-1 no=0
  while IFS= read -r line || [ -n "$line" ]; do
    no=$((no + 1))
    case $line in
      '' | '#'*) continue ;;
      '['*']')
        n=${#M_NAME[@]}
        M_NAME[n]=${line:1:${#line}-2} M_AT[n]="$f:$no"
        M_FILE[n]='' M_FROM[n]='' M_TO[n]='' M_WHY[n]='' M_TESTS[n]='' M_EQUIV[n]=''
        continue ;;
    esac
    [ "$n" -ge 0 ] || die "$f:$no: a mutant starts with [name]: $line"
    [[ $line == *' = '* ]] || die "$f:$no: expected 'key = value': $line"
    key=${line%% = *} val=${line#* = }
    val=${val#"${val%%[![:space:]]*}"} val=${val%"${val##*[![:space:]]}"} # trimmed
    case $key in
      file) M_FILE[n]=$val ;;
      from) M_FROM[n]=$val ;;
      to) M_TO[n]=$val ;;
      why) M_WHY[n]=$val ;;
      tests) M_TESTS[n]=$val ;;
      equivalent) M_EQUIV[n]=$val ;;
      *) die "$f:$no: unknown key '$key' (allowed: file, from, to, why, tests, equivalent)" ;;
    esac
  done < "$f"
}
for f in tests/mutants/*.mut; do parse "$f"; done
total=${#M_NAME[@]}
[ "$total" -gt 0 ] || die "no mutants in tests/mutants/*.mut"

# Each mutant is whole, its name unique, its file under sim/ and its text
# found exactly once (perl -0777: literal, across the whole file).
count() { FROM=$2 perl -0777 -ne '$c = () = /\Q$ENV{FROM}\E/g; print $c' "$1"; }
declare -A seen=()
stale=0
for ((i = 0; i < total; i++)); do
  at=${M_AT[i]} name=${M_NAME[i]}
  [[ $name =~ ^[a-z0-9-]+$ ]] || die "$at: name '$name': lowercase letters, digits and dashes"
  [ -z "${seen[$name]:-}" ] || die "$at: [$name] is also at ${seen[$name]}"
  seen[$name]=$at
  for k in FILE FROM TO WHY; do
    v="M_$k[$i]"
    [ -n "${!v}" ] || die "$at: [$name] has no ${k,,}"
  done
  [[ ${M_FILE[i]} == sim/* && -f ${M_FILE[i]} ]] || die "$at: [$name] file ${M_FILE[i]}: not a file under sim/"
  [ "${M_FROM[i]}" != "${M_TO[i]}" ] || die "$at: [$name] replaces its text with itself"
  [[ ${M_TESTS[i]} =~ ^[a-z0-9_\ ]*$ ]] || die "$at: [$name] tests = ${M_TESTS[i]}: test names separated by spaces"
  c=$(count "${M_FILE[i]}" "${M_FROM[i]}")
  if [ "$c" != 1 ]; then
    echo "stale: [$name] ($at): its text is found $c times in ${M_FILE[i]}, not once: update the mutant"
    stale=$((stale + 1))
  fi
done

if [ "$list" = 1 ]; then
  for ((i = 0; i < total; i++)); do
    printf '%-36s %-28s %s\n' "${M_NAME[i]}" "${M_FILE[i]#sim/}" "${M_EQUIV[i]:+(equivalent) }${M_WHY[i]}"
  done
  echo "$total mutants"
  [ "$stale" -eq 0 ] || { echo "mutate: $stale stale mutant(s)"; exit 1; }
  exit 0
fi

# ---- which to run ----
pick=()
if [ ${#names[@]} -gt 0 ]; then
  for want in "${names[@]}"; do
    found=-1
    for ((i = 0; i < total; i++)); do [ "${M_NAME[i]}" = "$want" ] && found=$i; done
    [ "$found" -ge 0 ] || die "no mutant named '$want' (scripts/mutate.sh --list)"
    pick+=("$found")
  done
elif [ "$sample" -gt 0 ]; then
  live=()
  for ((i = 0; i < total; i++)); do [ -z "${M_EQUIV[i]}" ] && live+=("$i"); done
  mapfile -t pick < <(printf '%s\n' "${live[@]}" |
    awk -v seed="$seed" 'BEGIN{srand(seed)} {printf "%.9f\t%s\n", rand(), $0}' | LC_ALL=C sort -n |
    head -n "$sample" | cut -f2)
  echo "== mutants sampled with seed $seed:$(for i in "${pick[@]}"; do printf ' %s' "${M_NAME[i]}"; done)"
else
  for ((i = 0; i < total; i++)); do pick+=("$i"); done
fi
[ "$stale" -eq 0 ] || { echo "mutate: $stale stale mutant(s): the code changed under them"; exit 1; }

# ---- a scratch copy, built once ----
rs_need_packages "${RS_BUILD_PACKAGES[@]}" "${RS_PLOT_PACKAGES[@]}" "${RS_TEST_PACKAGES[@]}"
jobs=$(nproc)
scratch=$(mktemp -d /tmp/retrystorm-mutate.XXXXXX)
trap 'rm -rf "$scratch"' EXIT
if git -C "$src" rev-parse --is-inside-work-tree > /dev/null 2>&1; then
  # tracked and new files as they are in the working tree (not build output)
  git -C "$src" ls-files -z --cached --others --exclude-standard |
    (cd "$src" && while IFS= read -r -d '' f; do [ -e "$f" ] && printf '%s\0' "$f"; done |
      xargs -0 cp --parents -t "$scratch") # (a file deleted but not committed is left out)
else
  tar -C "$src" --exclude='./build*' --exclude=./out --exclude=./node_modules -cf - . | tar -C "$scratch" -xf -
fi
b=$scratch/build
# no LTO (an incremental rebuild takes seconds), no serve (not mutated)
cmake -S "$scratch" -B "$b" -DCMAKE_BUILD_TYPE=Release -DRS_LTO=OFF -DRS_SERVE=OFF \
  -DBUILD_TESTING=ON > "$scratch/configure.log" 2>&1 || { cat "$scratch/configure.log"; exit 1; }
cmake --build "$b" -j "$jobs" > "$scratch/build.log" 2>&1 || { tail -40 "$scratch/build.log"; exit 1; }
suite_skip='^(browser|install|deps|serve|serve_api)$'
# every test a mutant names exists (a misspelt name would match nothing)
mapfile -t known < <(ctest --test-dir "$b" -N | sed -nE 's/^\s*Test +#[0-9]+: ([^ ]+)$/\1/p')
for i in "${pick[@]}"; do
  for t in ${M_TESTS[i]}; do
    [[ " ${known[*]} " == *" $t "* ]] || die "${M_AT[i]}: [${M_NAME[i]}] names test '$t', which ctest does not have"
  done
done

# ctest over a regex; prints the names of the tests that failed
run_tests() { # run_tests ctest-args...
  local out
  if out=$(ctest --test-dir "$b" --timeout 300 -j "$jobs" --stop-on-failure "$@" 2>&1); then
    return 0
  fi
  grep -E '^\s+[0-9]+ - ' <<<"$out" | sed -E 's/^\s+[0-9]+ - ([^ ]+).*/\1/' | tr '\n' ' '
  return 1
}
tests_regex() { # "a b" -> ^(a|b)$
  local t=${1// /|}
  echo "^($t)\$"
}

# The tests must pass without any mutant, or every mutant looks killed: the
# whole suite once (every mutant), or the named tests of those picked, and
# then any other test that fails with a mutant is run again without it.
named=()
for i in "${pick[@]}"; do [ -n "${M_TESTS[i]}" ] && [ -z "${M_EQUIV[i]}" ] && named+=(${M_TESTS[i]}); done
full=0 confirmed=''
if [ ${#names[@]} -eq 0 ] && [ "$sample" -eq 0 ] && [ "$quick" = 0 ]; then
  full=1
  echo "== the whole suite without mutants"
  failed=$(run_tests -E "$suite_skip") || { echo "fails without any mutant: $failed"; exit 1; }
elif [ ${#named[@]} -gt 0 ]; then
  failed=$(run_tests -R "$(tests_regex "$(printf '%s\n' "${named[@]}" | sort -u | tr '\n' ' ' | sed 's/ $//')")") ||
    { echo "fails without any mutant: $failed"; exit 1; }
fi

# ---- each mutant ----
killed=0 survived=0 broken=0 equivalent=0 ran=0
for i in "${pick[@]}"; do
  name=${M_NAME[i]} file=${M_FILE[i]}
  if [ -n "${M_EQUIV[i]}" ]; then
    printf '%-10s %-36s %s\n' equivalent "$name" "(not run: ${M_EQUIV[i]})"
    equivalent=$((equivalent + 1))
    continue
  fi
  ran=$((ran + 1))
  t0=$SECONDS
  cp "$scratch/$file" "$scratch/.orig"
  FROM=${M_FROM[i]} TO=${M_TO[i]} perl -0777 -i -pe 's/\Q$ENV{FROM}\E/$ENV{TO}/' "$scratch/$file"
  verdict='' by='' by_suite=0
  if ! cmake --build "$b" -j "$jobs" > "$scratch/build.log" 2>&1; then
    verdict=broken by='does not compile'
  elif [ -n "${M_TESTS[i]}" ] && by=$(run_tests -R "$(tests_regex "${M_TESTS[i]}")"); then
    by=''
  elif [ -n "$by" ]; then
    verdict=killed
  fi
  if [ -z "$verdict" ] && [ "$quick" = 1 ]; then
    verdict=unkilled
  elif [ -z "$verdict" ]; then
    skip=$suite_skip
    [ -n "${M_TESTS[i]}" ] && skip="${suite_skip%)\$}|${M_TESTS[i]// /|})\$" # they passed already
    if by=$(run_tests -E "$skip"); then verdict=survived by=''; else verdict=killed by_suite=1; fi
  fi
  cp "$scratch/.orig" "$scratch/$file"
  if [ "$by_suite" = 1 ] && [ "$full" = 0 ] && [ -n "$by" ] && ! [[ " $confirmed " == *" $by "* ]]; then
    # killed by a test the named ones did not include: does it pass unmutated?
    cmake --build "$b" -j "$jobs" > "$scratch/build.log" 2>&1 || { tail -20 "$scratch/build.log"; exit 1; }
    failed=$(run_tests -R "$(tests_regex "${by% }")") || { echo "fails without any mutant: $failed"; exit 1; }
    confirmed+=" $by"
  fi
  case $verdict in
    killed) killed=$((killed + 1)) ;;
    survived | unkilled) survived=$((survived + 1)) ;;
    broken) broken=$((broken + 1)); tail -5 "$scratch/build.log" ;;
  esac
  printf '%-10s %-36s %4ds  %s\n' "$verdict" "$name" $((SECONDS - t0)) "${by:+by $by}"
  [ "$verdict" = killed ] || [ "$verdict" = broken ] || echo "           ${M_AT[i]}: ${M_WHY[i]}"
done

score=$(awk -v k=$killed -v n=$ran 'BEGIN{printf "%.1f", n ? 100 * k / n : 100}')
echo "== $killed killed of $ran run ($score %); $survived $([ "$quick" = 1 ] && echo unkilled by their named tests || echo survived), $broken broken;" \
  "$equivalent equivalent, not run; $total mutants in tests/mutants"
[ "$survived" -eq 0 ] && [ "$broken" -eq 0 ]
