#!/usr/bin/env bash
# The layers of sim/ are one-way, and the build enforces it
# (docs/architecture.md):
#  - for each layer's library, a one-line file that includes a header of a
#    layer it may not use must fail to compile with exactly that library's
#    include directories (taken from the target by CMake), and fail because
#    the header is not found; one that includes a header of each layer it
#    may use must compile (so the test cannot pass by a broken command);
#  - docs/architecture.md names every .c and .h file under sim/ (or a folder
#    that holds it, written `sim/DIR/`), and every sim/ path it names
#    exists, so the document cannot go stale.
# Usage: layers_test.sh CC SOURCE_DIR LAYER=DIR:DIR:... ...
#   each LAYER=... is a layer and its target's include directories (joined
#   by ':'); a layer left out (serve, without RS_SERVE) is not checked.
set -uo pipefail
cc=$1 src=$(realpath "$2")
shift 2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

# One header per layer, and what each layer may include (its own and the
# layers below; serve sits beside study, on io).
declare -A header=([engine]=evq.h [policy]=backoff.h [model]=sim.h [io]=scenario.h
                   [study]=experiment.h [serve]=serve.h [cli]=cli.h)
declare -A may=([engine]="engine" [policy]="engine policy" [model]="engine policy model"
                [io]="engine policy model io" [study]="engine policy model io study"
                [serve]="engine policy model io serve"
                [cli]="engine policy model io study serve cli")
layers=(engine policy model io study serve cli)

# compile LAYER DIRS HEADER: 0 when a file including HEADER compiles with
# -I DIRS; the compiler's messages in $tmp/out.
compile() {
  local args=() ds=() d
  IFS=: read -ra ds <<<"$2"
  for d in "${ds[@]}"; do [ -n "$d" ] && args+=(-I "$d"); done
  printf '#include "%s"\n' "$3" >"$tmp/$1.c"
  "$cc" -std=c17 -fsyntax-only -DRS_VERSION='"0"' "${args[@]}" "$tmp/$1.c" >"$tmp/out" 2>&1
}

declare -A given=()
for arg in "$@"; do given[${arg%%=*}]=1; done
checked=0
for arg in "$@"; do
  layer=${arg%%=*} dirs=${arg#*=}
  [ -n "${may[$layer]:-}" ] || { fail "unknown layer '$layer' (allowed: ${layers[*]})"; continue; }
  checked=$((checked + 1))
  for other in "${layers[@]}"; do
    [ -n "${given[$other]:-}" ] || continue # not built: nothing may include it
    h=${header[$other]}
    if [[ " ${may[$layer]} " == *" $other "* ]]; then
      compile "$layer" "$dirs" "$h" ||
        { fail "$layer cannot include $other's $h:"; head -5 "$tmp/out"; }
    elif compile "$layer" "$dirs" "$h"; then
      fail "$layer can include $other's $h (a higher or side layer): its include directories are $dirs"
    elif ! grep -qE "$h: No such file|'$h' file not found" "$tmp/out"; then # GCC, Clang
      fail "$layer including $other's $h failed, but not for want of the header:"; head -5 "$tmp/out"
    fi
  done
done
[ "$checked" -ge 6 ] || fail "only $checked layers given (want engine policy model io study cli, and serve when built)"

# ---- docs/architecture.md names every file under sim/, and only those ----
doc=$src/docs/architecture.md
if [ ! -f "$doc" ]; then
  fail "$doc is missing"
else
  mapfile -t named < <(grep -oE 'sim/[A-Za-z0-9_./-]*[A-Za-z0-9_/]' "$doc" | sort -u)
  declare -A in_doc=()
  for n in "${named[@]}"; do
    in_doc[$n]=1
    [ -e "$src/$n" ] || fail "docs/architecture.md names $n, which does not exist"
  done
  while IFS= read -r f; do
    rel=${f#"$src"/} covered=
    [ -n "${in_doc[$rel]:-}" ] && covered=1
    d=$(dirname "$rel")
    while [ -z "$covered" ] && [ "$d" != . ]; do
      [ -n "${in_doc[$d/]:-}" ] && covered=1
      d=$(dirname "$d")
    done
    [ -n "$covered" ] || fail "$rel is not in docs/architecture.md (name it, or a folder sim/DIR/ that holds it)"
  done < <(find "$src/sim" -type f \( -name '*.c' -o -name '*.h' \) | sort)
fi

echo "$fails failure(s)"
[ "$fails" = 0 ]
