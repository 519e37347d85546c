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
  # another apt run (unattended upgrades) may hold the lock: wait for it
  $sudo apt-get -o DPkg::Lock::Timeout=600 update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get -o DPkg::Lock::Timeout=600 install -y -qq \
    --no-install-recommends "${missing[@]}" > /dev/null
}
RS_BUILD_PACKAGES=(gcc make cmake pkg-config libc6-dev libgsl-dev libcmocka-dev libinih-dev libmicrohttpd-dev libjson-c-dev)
# gnuplot draws the figures; the tests check them (and skip without it).
RS_PLOT_PACKAGES=(gnuplot-nox)
# GNU parallel runs a sharded sweep in the tests; clang and its runtime
# build the libFuzzer target; valgrind checks runs for leaks and bad reads;
# Chromium is the browser the live page is tested in; python3-jsonschema
# validates summary.json against its schema.
RS_TEST_PACKAGES=(parallel clang libclang-rt-14-dev valgrind chromium curl bc python3-jsonschema)

# npm fetches the page's chart library at build time (web/package-lock.json)
# and the browser test's driver: Node.js from Debian when none is installed.
rs_need_npm() {
  command -v npm > /dev/null && return 0
  rs_need_packages nodejs npm
}

# Builds the Release binary build/retrystorm (the demo and the gallery use it).
rs_build_release() {
  cmake -S . -B build -DCMAKE_BUILD_TYPE=Release > /dev/null
  cmake --build build -j "$(nproc)" --target retrystorm > /dev/null
}
