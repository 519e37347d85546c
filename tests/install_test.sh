#!/usr/bin/env bash
# Installing like a real tool: cmake --install into a temporary prefix
# (the binary, every built-in scenario as a file, the man page, bash
# completion, the docs), the installed binary runs, the man page renders
# with man -l in its sections, and the completion loads; then CPack's .deb
# is installed with dpkg -i into a temporary root, with a copy of this
# machine's dpkg database (so its dependencies are checked against the
# packages really installed, and nothing on the machine is touched), run,
# and removed with dpkg -r.
# Usage: install_test.sh BUILD_DIR SOURCE_DIR
set -uo pipefail
build=$(realpath "$1") src=$(realpath "$2")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

p="$tmp/prefix"
cmake --install "$build" --prefix "$p" > "$tmp/install.log" 2>&1 || { cat "$tmp/install.log"; fail "cmake --install"; }
rs="$p/bin/retrystorm"
"$rs" --version | grep -qE '^retrystorm [0-9]+\.[0-9]+\.[0-9]+$' || fail "the installed binary does not run"
for f in share/man/man1/retrystorm.1 share/bash-completion/completions/retrystorm \
  share/doc/retrystorm/README.md share/doc/retrystorm/CONTRIBUTING.md share/doc/retrystorm/docs/presets.md \
  share/doc/retrystorm/docs/guide.md share/doc/retrystorm/docs/scenarios.md share/doc/retrystorm/docs/outputs.md \
  share/doc/retrystorm/docs/summary.schema.json \
  share/retrystorm/scenarios/fleet.ini share/retrystorm/scenarios/large-open.ini; do
  [ -f "$p/$f" ] || fail "not installed: $f"
done
# every built-in is installed as a file, and the file is the built-in
while read -r name _; do
  f="$p/share/retrystorm/scenarios/$name.ini"
  [ -f "$f" ] || { fail "built-in $name not installed"; continue; }
  cmp -s "$f" "$src/scenarios/$name.ini" || fail "$f differs from scenarios/$name.ini"
done < <("$rs" list)
"$rs" check "$p/share/retrystorm/scenarios/fleet.ini" > /dev/null || fail "the installed fleet.ini does not check"
# the man page: rendered by man -l, with the sections of a man page, and
# groff finds nothing to warn about
if command -v man > /dev/null; then
  MANWIDTH=80 man -l "$p/share/man/man1/retrystorm.1" > "$tmp/man.txt" 2> "$tmp/man.err" || fail "man -l: $(cat "$tmp/man.err")"
  for s in NAME SYNOPSIS DESCRIPTION COMMANDS OPTIONS FILES 'EXIT STATUS' EXAMPLES; do
    grep -q "^$s" "$tmp/man.txt" || fail "the man page has no $s section"
  done
  grep -q 'retrystorm - ' "$tmp/man.txt" || fail "the man page's NAME line is not 'retrystorm - ...'"
  warn=$(groff -man -Tutf8 -ww -z "$p/share/man/man1/retrystorm.1" 2>&1)
  [ -z "$warn" ] || fail "groff warns: $warn"
else
  echo "man is not installed (scripts/test.sh installs man-db): the man page's rendering not checked"
fi
bash -c "source '$p/share/bash-completion/completions/retrystorm' && complete -p retrystorm" 2>&1 |
  grep -q -- '-F _retrystorm retrystorm' || fail "the installed completion does not load"

# the .deb
if ! command -v cpack > /dev/null || ! command -v dpkg > /dev/null; then
  echo "no cpack or dpkg: the .deb not checked"
else
  (cd "$build" && cpack -G DEB -B "$tmp/deb" > "$tmp/cpack.log" 2>&1) || { cat "$tmp/cpack.log"; fail "cpack -G DEB"; }
  deb=$(ls "$tmp"/deb/retrystorm_*.deb 2> /dev/null | head -1)
  if [ -z "$deb" ]; then
    fail "cpack made no .deb"
  else
    deps=$(dpkg-deb -f "$deb" Depends)
    libs=(libgsl libinih libjson-c)
    # serve loads libmicrohttpd when it starts (not linked): declared by hand
    grep -q '^RS_SERVE:BOOL=ON' "$build/CMakeCache.txt" && libs+=(libmicrohttpd12)
    for lib in "${libs[@]}"; do
      grep -q "$lib" <<< "$deps" || fail "the .deb does not depend on $lib: $deps"
    done
    admin="$tmp/dpkg" root="$tmp/root"
    mkdir -p "$admin/info" "$admin/updates" "$admin/triggers" "$root"
    cp /var/lib/dpkg/status "$admin/status" && : > "$admin/available"
    # (the copy has no file lists: dpkg's warnings about them are noise)
    dpkg_here() { dpkg --admindir="$admin" --instdir="$root" --force-script-chrootless "$@" 2>&1 |
      grep -v 'files list file for package'; return "${PIPESTATUS[0]}"; }
    dpkg_here -i "$deb" > "$tmp/dpkg.log" || { cat "$tmp/dpkg.log"; fail "dpkg -i $(basename "$deb")"; }
    "$root/usr/bin/retrystorm" --version | grep -q "^retrystorm " || fail "the .deb's retrystorm --version"
    [ -f "$root/usr/share/man/man1/retrystorm.1" ] || fail "the .deb has no man page"
    dpkg --admindir="$admin" -s retrystorm 2> /dev/null | grep -q 'Status: install ok installed' || fail "dpkg does not list the package as installed"
    dpkg_here -r retrystorm > "$tmp/dpkg.log" || { cat "$tmp/dpkg.log"; fail "dpkg -r retrystorm"; }
    [ -e "$root/usr/bin/retrystorm" ] && fail "dpkg -r left the binary"
    # a dependency this machine lacks is refused: dpkg really checks them
    awk 'BEGIN{RS=""; ORS="\n\n"} !/^Package: libjson-c5\n/' /var/lib/dpkg/status > "$admin/status"
    dpkg_here -i "$deb" > "$tmp/dpkg.log" && fail "dpkg -i succeeded without libjson-c5 installed"
    grep -q 'libjson-c5' "$tmp/dpkg.log" || fail "dpkg's refusal does not name libjson-c5: $(cat "$tmp/dpkg.log")"
  fi
fi
echo "$fails failure(s)"
[ "$fails" = 0 ]
