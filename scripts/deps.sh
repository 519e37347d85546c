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
  # another apt run (unattended upgrades) may hold the lock: wait for it,
  # saying so; apt's own timeout covers one that starts in between
  rs_wait_apt_lock || return 1
  $sudo apt-get -o DPkg::Lock::Timeout="$RS_APT_LOCK_WAIT" update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get -o DPkg::Lock::Timeout="$RS_APT_LOCK_WAIT" install -y -qq \
    --no-install-recommends "${missing[@]}" > /dev/null
}

# How long to wait for another program's apt or dpkg run (s), how often to
# look (s), and the lock files they hold.
RS_APT_LOCK_WAIT=${RS_APT_LOCK_WAIT:-600}
RS_APT_LOCK_POLL=${RS_APT_LOCK_POLL:-5}
RS_APT_LOCKS=${RS_APT_LOCKS:-"/var/lib/dpkg/lock-frontend /var/lib/dpkg/lock /var/lib/apt/lists/lock /var/cache/apt/archives/lock"}

# Prints "process PID (COMMAND)" for a process holding one of RS_APT_LOCKS
# (from lslocks: fcntl and flock locks alike), or nothing. As root: lslocks
# shows another user's lock without its path ("/...").
rs_apt_lock_holder() {
  local pid sudo=""
  [ "$(id -u)" = 0 ] || sudo="sudo"
  pid=$($sudo lslocks -n -o PID,PATH 2> /dev/null | awk -v locks="$RS_APT_LOCKS" '
    BEGIN { n = split(locks, l, " "); for (i = 1; i <= n; i++) want[l[i]] = 1 }
    ($2 in want) && $1 != "" { print $1; exit }')
  [ -n "$pid" ] || return 0
  echo "process $pid ($(tr '\0\n' '  ' < "/proc/$pid/cmdline" 2> /dev/null | cut -c1-80 | sed 's/ *$//'))"
}

# Waits while another program holds the package manager's lock, saying who
# and for how long at most; 1, with a message, if it still holds it then.
rs_wait_apt_lock() {
  local waited=0 holder
  if ! [[ $RS_APT_LOCK_WAIT =~ ^[0-9]+$ && $RS_APT_LOCK_POLL =~ ^[1-9][0-9]*$ ]]; then
    echo "RS_APT_LOCK_WAIT ('$RS_APT_LOCK_WAIT') and RS_APT_LOCK_POLL ('$RS_APT_LOCK_POLL') must be" \
         "whole seconds, the poll at least 1" >&2
    return 1
  fi
  while holder=$(rs_apt_lock_holder); [ -n "$holder" ]; do
    if [ "$waited" -ge "$RS_APT_LOCK_WAIT" ]; then
      echo "gave up after ${RS_APT_LOCK_WAIT} s: $holder still holds the package manager's lock;" \
           "run this again when it has finished (or wait longer: RS_APT_LOCK_WAIT=SECONDS)" >&2
      return 1
    fi
    [ "$waited" = 0 ] && echo "waiting for the package manager: $holder holds its lock (waiting up to ${RS_APT_LOCK_WAIT} s)"
    sleep "$RS_APT_LOCK_POLL"
    waited=$((waited + RS_APT_LOCK_POLL))
  done
  [ "$waited" = 0 ] || echo "the package manager is free after ${waited} s"
}
RS_BUILD_PACKAGES=(gcc make cmake pkg-config libc6-dev libgsl-dev libcmocka-dev libinih-dev libmicrohttpd-dev libjson-c-dev)
# gnuplot draws the figures; the tests check them (and skip without it).
RS_PLOT_PACKAGES=(gnuplot-nox)
# GNU parallel runs a sharded sweep in the tests; clang and its runtime
# build the libFuzzer target; valgrind checks runs for leaks and bad reads;
# Chromium is the browser the live page is tested in; python3-jsonschema
# validates summary.json against its schema; man-db and groff-base render
# the man page, dpkg-dev gives the .deb its dependencies (dpkg-shlibdeps).
RS_TEST_PACKAGES=(parallel clang libclang-rt-14-dev valgrind chromium curl bc python3-jsonschema
  man-db groff-base dpkg-dev)

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
