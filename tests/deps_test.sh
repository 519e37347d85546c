#!/usr/bin/env bash
# scripts/deps.sh waits for the package manager's lock instead of failing:
# a real fcntl lock (as dpkg and apt take) on a stand-in lock file is seen,
# with the holder named; the wait ends when the lock is released; and after
# RS_APT_LOCK_WAIT seconds it gives up with a message and status 1.
# Usage: deps_test.sh SOURCE_DIR
set -uo pipefail
src=$(realpath "$1")
tmp=$(mktemp -d)
holder=
trap '[ -n "$holder" ] && kill "$holder" 2> /dev/null; rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
command -v lslocks > /dev/null && command -v perl > /dev/null || { echo "no lslocks or perl: skipped"; exit 77; }
. "$src/scripts/deps.sh"
RS_APT_LOCKS="$tmp/lock-frontend"
: > "$RS_APT_LOCKS"
# hold LOCK for SECONDS with fcntl(F_SETLK, F_WRLCK), as dpkg does
# (struct flock on x86-64 and arm64: short, short, pad, off_t, off_t, pid_t, pad)
hold() {
  perl -e 'use Fcntl; open(my $fh, ">>", $ARGV[0]) or die $!;
    my $fl = pack("s s x4 q q l x4", F_WRLCK, 0, 0, 0, 0);
    fcntl($fh, F_SETLK, $fl) or die "fcntl: $!";
    $| = 1; print "locked\n"; sleep $ARGV[1];' "$1" "$2" > "$tmp/held" &
  holder=$!
  for _ in $(seq 50); do grep -q locked "$tmp/held" 2> /dev/null && return 0; sleep 0.1; done
  fail "the stand-in lock was not taken"
}
[ -z "$(rs_apt_lock_holder)" ] || fail "a free lock is reported held: $(rs_apt_lock_holder)"
hold "$RS_APT_LOCKS" 3
who=$(rs_apt_lock_holder)
grep -q "process $holder (perl" <<< "$who" || fail "the holder is not named: '$who' (want process $holder (perl ...))"
RS_APT_LOCK_POLL=1 RS_APT_LOCK_WAIT=30 rs_wait_apt_lock > "$tmp/out" 2>&1 || fail "the wait failed: $(cat "$tmp/out")"
grep -q "waiting for the package manager: process $holder (perl" "$tmp/out" || fail "no message while waiting: $(cat "$tmp/out")"
grep -q "the package manager is free after" "$tmp/out" || fail "no message when the lock was released: $(cat "$tmp/out")"
wait "$holder" 2> /dev/null; holder=
hold "$RS_APT_LOCKS" 30
RS_APT_LOCK_POLL=1 RS_APT_LOCK_WAIT=2 rs_wait_apt_lock > "$tmp/out" 2>&1 && fail "the wait did not give up"
grep -q "gave up after 2 s: process $holder (perl.*still holds the package manager's lock" "$tmp/out" \
  || fail "no message on giving up: $(cat "$tmp/out")"
# bad settings are refused with a message, never a loop without end
RS_APT_LOCK_POLL=0 rs_wait_apt_lock > "$tmp/out" 2>&1 && fail "a poll of 0 s was accepted"
grep -q "must be whole seconds" "$tmp/out" || fail "no message for a poll of 0: $(cat "$tmp/out")"
RS_APT_LOCK_WAIT=ten rs_wait_apt_lock > "$tmp/out" 2>&1 && fail "a wait of 'ten' was accepted"
echo "$fails failure(s)"
[ "$fails" = 0 ]
