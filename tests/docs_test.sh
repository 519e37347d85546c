#!/usr/bin/env bash
# The reference pages in docs/ stand alone and follow the code:
#  - every backoff kind and preset the binary names (list presets, and the
#    names `check` lists for a bad `backoff`) has a heading in
#    docs/presets.md; every budget kind in docs/budgets.md; every breaker
#    kind in docs/breakers.md; every hedging preset in docs/hedging.md. A
#    heading documents a name when the heading
#    line holds it in backquotes: "### `ratio`, `finagle`, `linkerd`".
#  - every page of docs/ is linked from docs/README.md and README.md;
#  - no page (docs/*.md, README.md, CONTRIBUTING.md) links outside the
#    repository (../shared, an absolute path, a
#    path that climbs out of the tree) or to a path the repository does not
#    hold (in a git checkout: tracked, or new and not ignored).
# Usage: docs_test.sh RETRYSTORM SOURCE_DIR. The lists of names come from
# the binary, never from this file, so a new kind without a page fails.
set -uo pipefail
. "$(dirname "$0")/lib.sh"
src=$(realpath "$2")
docs=$src/docs

# names_for KEY: the names `check` accepts for KEY, from its message about
# a bad value ("... KEY = 'x': expected a, b, c").
probe=$tmp/probe.ini
cat >"$probe" <<'EOF'
[load]
rate = 10/s
[server]
service = exp(10ms)
[layer probe]
backoff = not-a-kind-docs-test
budget = not-a-kind-docs-test
breaker = not-a-kind-docs-test
hedge = not-a-kind-docs-test
EOF
check_out=$("$bin" check "$probe" 2>&1)
check_rc=$?
[ "$check_rc" = 2 ] || fail "check of a scenario with unknown kinds exited $check_rc, want 2"
names_for() {
  sed -n "s/.*\] $1 = 'not-a-kind-docs-test': expected \(.*\)$/\1/p" <<<"$check_out" | tr ',' '\n' |
    sed 's/^ *//; s/ *$//' | grep -v '^$'
}

# documented PAGE NAME: a heading line of PAGE holds `NAME`.
documented() {
  grep -E '^#{1,6} ' "$1" | grep -qF "\`$2\`"
}

check_names() { # check_names WHAT PAGE NAME... (a name given twice is checked once)
  local what=$1 page=$2 n=0
  local -A seen=()
  shift 2
  if [ ! -f "$page" ]; then
    fail "${page#"$src"/}: missing (it documents the $what)"
    return
  fi
  for name in "$@"; do
    [ -z "${seen[$name]:-}" ] || continue
    seen[$name]=1
    n=$((n + 1))
    documented "$page" "$name" ||
      fail "${page#"$src"/}: no heading for the $what '$name' (a heading line with \`$name\`)"
  done
  [ "$n" -gt 0 ] || fail "found no $what names to check (has the binary's output changed?)"
}

# Presets: the first column of `list presets` between its header and the
# generic kinds; generic kinds: its last line. Both must agree with check.
list_out=$("$bin" list presets 2>&1) || fail "list presets failed: $list_out"
mapfile -t presets < <(awk '/^generic kinds:/{exit} /^preset /{on=1; next} on && /^[a-z0-9]/{print $1}' <<<"$list_out")
# hedging presets: the table after "hedging presets"; hedging modes: its last line
mapfile -t hedges < <(awk '/^hedging presets/{on=1; next} /^hedging modes:/{on=0} on && !/^preset / && /^[a-z0-9]/{print $1}' <<<"$list_out")
mapfile -t hmodes < <(sed -n 's/^hedging modes: *//p' <<<"$list_out" | tr ' ' '\n' | grep -v '^$')
mapfile -t hedge_names < <(names_for hedge)
mapfile -t generic < <(sed -n 's/^generic kinds: *//p' <<<"$list_out" | tr ' ' '\n' | grep -v '^$')
mapfile -t backoffs < <(names_for backoff)
mapfile -t budgets < <(names_for budget)
mapfile -t breakers < <(names_for breaker)
[ "${#presets[@]}" -ge 1 ] || fail "list presets printed no preset"
[ "${#generic[@]}" -ge 1 ] || fail "list presets printed no generic kinds"
for name in "${presets[@]}" "${generic[@]}"; do
  grep -qxF -- "$name" <(printf "%s\n" "${backoffs[@]}") ||
    fail "'$name' from list presets is not among the backoff names check accepts"
done
[ "${#hedges[@]}" -ge 1 ] || fail "list presets printed no hedging preset"
for name in "${hedges[@]}" "${hmodes[@]}"; do
  grep -qxF -- "$name" <(printf "%s\n" "${hedge_names[@]}") ||
    fail "'$name' from list presets is not among the hedge names check accepts"
done
check_names "backoff kind or preset" "$docs/presets.md" "${backoffs[@]}" "${presets[@]}"
check_names "budget kind" "$docs/budgets.md" "${budgets[@]}"
check_names "breaker kind" "$docs/breakers.md" "${breakers[@]}"
check_names "hedging preset" "$docs/hedging.md" "${hedges[@]}"
[ -f "$docs/README.md" ] || fail "docs/README.md: missing (the index)"
# every page of docs/ is in the index's tables and in the README's "Read next"
for page in "$docs"/*.md "$docs"/*.json; do
  name=${page##*/}
  [ "$name" = README.md ] && continue
  grep -qF "]($name)" "$docs/README.md" || fail "docs/README.md: no link to the page $name (add it to a table)"
  grep -qF "](docs/$name)" "$src/README.md" || fail "README.md: no link to docs/$name (add it to Read next)"
done

# Links. in_repo PATH (relative to src): a file or directory the repository
# holds. In a git checkout that is a tracked path or a new one that is not
# ignored (build trees and out/ are ignored); elsewhere, one that exists.
if git -C "$src" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  in_repo() { [ -e "$src/$1" ] && [ -n "$(git -C "$src" ls-files -co --exclude-standard -- "$1" | head -1)" ]; }
else
  in_repo() { [ -e "$src/$1" ]; }
fi
for page in "$docs"/*.md "$src/README.md" "$src/CONTRIBUTING.md"; do
  [ -e "$page" ] || { fail "docs/ holds no page"; break; }
  rel_page=${page#"$src"/}
  if grep -nE '(\.\./)+shared/|/work/shared|shared/POLICIES\.md' "$page" >"$tmp/shared"; then
    while IFS= read -r line; do
      fail "$rel_page:${line%%:*}: refers to a file outside the repository: ${line#*:}"
    done <"$tmp/shared"
  fi
  # inline links [text](target) and reference definitions [id]: target
  { grep -noE '\]\([^)[:space:]]+' "$page" | sed 's/\](/\t/'
    grep -noE '^ {0,3}\[[^]]+\]:[[:space:]]*[^[:space:]]+' "$page" | sed -E 's/\]:[[:space:]]*/\t/; s/:\[.*\t/\t/'
  } | while IFS=$'\t' read -r where target; do
    line=${where%%:*}
    target=${target#<}; target=${target%>}
    case $target in
      http://* | https://* | mailto:*) continue ;;
      '#'*) continue ;; # an anchor in the same page
      /*) echo "$rel_page:$line: absolute link '$target'"; continue ;;
    esac
    path=${target%%#*}
    path=${path%%\?*}
    resolved=$(realpath -m "$(dirname "$page")/$path")
    case $resolved in
      "$src" | "$src"/*) ;;
      *) echo "$rel_page:$line: link '$target' leaves the repository"; continue ;;
    esac
    rel=${resolved#"$src"}
    rel=${rel#/}
    in_repo "${rel:-.}" || echo "$rel_page:$line: link '$target' names '$rel', which the repository does not hold"
  done >"$tmp/links"
  while IFS= read -r msg; do fail "$msg"; done <"$tmp/links"
done
finish
