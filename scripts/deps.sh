# Sourced by the other scripts: installs the Debian packages that are missing.
# Usage: rs_need_packages pkg...   (runs apt-get only when something is missing)
rs_need_packages() {
  local missing=()
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  echo "installing: ${missing[*]}"
  local sudo=""
  [ "$(id -u)" = 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" > /dev/null
}
RS_BUILD_PACKAGES=(gcc make cmake pkg-config libc6-dev libgsl-dev libcmocka-dev libinih-dev)
# gnuplot draws the figures; the tests check them (and skip without it).
RS_PLOT_PACKAGES=(gnuplot-nox)
# GNU parallel runs a sharded sweep in the tests; clang and its runtime
# build the libFuzzer target; valgrind checks runs for leaks and bad reads.
RS_TEST_PACKAGES=(parallel clang libclang-rt-14-dev valgrind)

# Builds the Release binary build/retrystorm (the demo and the gallery use it).
rs_build_release() {
  cmake -S . -B build -DCMAKE_BUILD_TYPE=Release > /dev/null
  cmake --build build -j "$(nproc)" --target retrystorm > /dev/null
}
