#!/usr/bin/env bash
# Every documented rule has a test that pins it (tests/RULES.md):
#  - each row of RULES.md names a rule, the keys or summary columns it
#    governs, where the docs state it, the tests that fail when it breaks,
#    and the mutants (tests/mutants/*.mut) that check that they do;
#  - every name in those cells exists: the key or column in the binary's own
#    lists (list keys, list metrics), the phrase in the document it cites,
#    the test function registered with cmocka in its file (or the phrase in
#    a shell test), the mutant in tests/mutants/;
#  - every key the parser accepts and every column summary.csv can hold is
#    governed by at least one rule, so a new key or column without a rule
#    and a test fails here.
# Row format (one line; cells separated by " | "):
#   | R12 | the rule | `key`, `metric` | docs/guide.md "phrase" | tests/test_x.c: fn; tests/y_test.sh: "phrase" | mutant-a, mutant-b |
# Usage: rules_test.sh RETRYSTORM SOURCE_DIR
set -uo pipefail
. "$(dirname "$0")/lib.sh"
src=$(realpath "$2")
rules=$src/tests/RULES.md
[ -f "$rules" ] || { echo "FAIL: $rules is missing"; exit 1; }

mapfile -t keys < <("$bin" list keys | awk 'NF {print $1}')
mapfile -t metrics < <("$bin" list metrics | awk 'NR > 1 && NF {print $1}')
[ "${#keys[@]}" -gt 100 ] && [ "${#metrics[@]}" -gt 50 ] ||
  { echo "FAIL: list keys / list metrics gave ${#keys[@]} / ${#metrics[@]} names"; exit 1; }
declare -A known=() governed=() ids=()
for k in "${keys[@]}" "${metrics[@]}"; do known[$k]=1; done

# the mutants' names, from their [headers]
declare -A mutant=()
while IFS= read -r m; do mutant[$m]=1; done < <(sed -n 's/^\[\([a-z0-9-]*\)\]$/\1/p' "$src"/tests/mutants/*.mut)

# a document's text with its lines joined and spaces squeezed, so a cited
# phrase may wrap
flat() { tr '\n' ' ' <"$1" | tr -s ' \t'; }
declare -A flats=()
has_phrase() { # has_phrase FILE PHRASE
  [ -n "${flats[$1]:-}" ] || flats[$1]=$(flat "$1")
  grep -qF -- "$(tr -s ' \t' <<<"$2")" <<<"${flats[$1]}"
}

check_test() { # check_test ROW "tests/file: name"
  local row=$1 ref=$2 file name
  file=${ref%%: *} name=${ref#*: }
  [[ $ref == *': '* && $file == tests/* && -f $src/$file ]] || { fail "$row: test '$ref': not tests/FILE: NAME with FILE in tests/"; return; }
  case $file in
    *.c)
      [[ $name =~ ^[a-z_][a-z0-9_]*$ ]] && grep -qE "cmocka_unit_test[a-z_]*\($name[,)]" "$src/$file" ||
        fail "$row: $file has no test function '$name' registered with cmocka" ;;
    *.sh)
      [[ $name == \"*\" ]] && grep -qF -- "${name:1:${#name}-2}" "$src/$file" ||
        fail "$row: $file does not contain $name (a shell test is cited by a quoted phrase from it)" ;;
    *) fail "$row: test '$ref': a .c or .sh file" ;;
  esac
}

n=0
while IFS= read -r line; do
  [[ $line =~ ^\|\ R[0-9]+\ \| ]] || continue
  n=$((n + 1))
  IFS='|' read -r _ id rule names doc tests muts rest <<<"$line"
  trim() { local s=$1; s=${s#"${s%%[![:space:]]*}"}; echo "${s%"${s##*[![:space:]]}"}"; }
  id=$(trim "$id") rule=$(trim "$rule") names=$(trim "$names") doc=$(trim "$doc") tests=$(trim "$tests") muts=$(trim "$muts")
  [ -n "$id" ] && [ -n "$rule" ] && [ -n "$names" ] && [ -n "$doc" ] && [ -n "$tests" ] && [ -n "$muts" ] && [ "$(trim "$rest")" = "" ] ||
    { fail "$id: a row has six cells: id, rule, keys, documented, tests, mutants: $line"; continue; }
  [ -z "${ids[$id]:-}" ] || fail "$id: the id is used twice"
  ids[$id]=1
  # keys and columns
  if [ "$names" != - ]; then
    for k in $(grep -oE '`[^`]+`' <<<"$names" | tr -d '`'); do
      if [ -n "${known[$k]:-}" ]; then governed[$k]=1; else fail "$id: '$k' is neither a key (list keys) nor a column (list metrics)"; fi
    done
  fi
  # where it is documented: FILE "phrase"
  if [[ $doc =~ ^([A-Za-z0-9_./-]+)\ \"(.+)\"$ ]]; then
    f=${BASH_REMATCH[1]} p=${BASH_REMATCH[2]}
    if [ ! -f "$src/$f" ]; then fail "$id: documented in $f, which does not exist"
    elif ! has_phrase "$src/$f" "$p"; then fail "$id: $f does not say \"$p\" (update the citation with the docs)"; fi
  else
    fail "$id: documented: FILE \"phrase\", not: $doc"
  fi
  # the tests
  IFS=';' read -ra refs <<<"$tests"
  for r in "${refs[@]}"; do check_test "$id" "$(trim "$r")"; done
  # the mutants
  if [ "$muts" != - ]; then
    for m in ${muts//,/ }; do [ -n "${mutant[$m]:-}" ] || fail "$id: no mutant [$m] in tests/mutants/*.mut"; done
  fi
done <"$rules"
[ "$n" -gt 0 ] || fail "no rules in $rules"

for k in "${keys[@]}" "${metrics[@]}"; do
  [ -n "${governed[$k]:-}" ] || fail "'$k' is governed by no rule in tests/RULES.md (add its rule, the doc that states it and its test)"
done
echo "$n rules; ${#keys[@]} keys and ${#metrics[@]} columns, each governed by a rule"
finish
