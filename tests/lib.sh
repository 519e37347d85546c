# Sourced by the shell tests; $1 is the retrystorm binary. Sets bin and a
# temporary directory tmp (removed on exit), and counts failures: fail
# reports one, finish prints the count and succeeds only with none; expect
# runs a command and checks its exit code and (as an extended regular
# expression) its output.
bin=$(realpath "$1")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
finish() {
  echo "$fails failure(s)"
  [ "$fails" = 0 ]
}
expect() { # expect CODE PATTERN -- command...
  local code=$1 pat=$2; shift 3
  local out rc
  out=$("$@" 2>&1); rc=$?
  if [ "$rc" != "$code" ] || ! grep -qE -- "$pat" <<<"$out"; then
    echo "FAIL: $(cut -c1-300 <<<"$*") -> exit $rc (want $code), output:"; echo "$out" | head -5 | cut -c1-300
    echo "  (wanted /$pat/)"; fails=$((fails + 1))
  fi
}
