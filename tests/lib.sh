# Sourced by the shell tests; $1 is the retrystorm binary. Sets bin and a
# temporary directory tmp (removed on exit), and counts failures: fail
# reports one, finish prints the count and succeeds only with none.
bin=$(realpath "$1")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
finish() {
  echo "$fails failure(s)"
  [ "$fails" = 0 ]
}
