#!/usr/bin/env bash
# Every subcommand against a tree of hostile entries: symbolic links to
# files and directories outside the tree, our output names planted as links
# to outside files, fifos, a character device, unreadable entries, a
# directory named like a work directory. Each command runs under timeout 20
# (a hang fails); a refused command must exit 2; and after each, a snapshot
# of the tree and of the outside directory (every entry's type, link
# target, size and mode, and the sha256 of every regular file) may differ
# from the one before only in what that command may write. The outside
# directory may never change.
set -uo pipefail
. "$(dirname "$0")/lib.sh"
cd "$tmp" || exit 1
log="$tmp/log"
: > "$tmp/empty" # stdin of every command (no /dev/null: a broken build may replace it)

# a tiny scenario (2 simulated seconds at 50/s), and two genuine shards
cat > tiny.ini << 'EOF'
[run]
name = tiny
duration = 2s
[load]
rate = 50/s
[server]
workers = 2
service = exp(10ms)
[layer app]
attempts = 2
timeout = 100ms
EOF
grid=(--grid layer.app.attempts=1,2 --reps 2 -j 1 --quiet)
"$bin" sweep tiny.ini "${grid[@]}" --shard 1/2 -o good1 > "$log" 2>&1 || fail "shard 1/2: $(cat "$log")"
"$bin" sweep tiny.ini "${grid[@]}" --shard 2/2 -o good2 > "$log" 2>&1 || fail "shard 2/2: $(cat "$log")"

# the outside directory and the tree, made again whenever a command changed
# them (so that each command meets every hostile entry)
o=outside
t=tree
mkworld() {
  # outside: what no command may ever touch
  mkdir -p $o/dir $o/emptydir
  echo secret > $o/secret.txt
  for f in summary.csv jobs.csv experiment.csv timeseries.csv status.csv marker; do
    echo "outside $f" > $o/$f
  done
  cp good1/experiment.csv $o/good-experiment.csv
  cp good1/jobs.csv $o/good-jobs.csv
  echo 'status' > $o/good-status.csv
  echo inner > $o/dir/inner.txt
  echo locked > $o/locked.txt && chmod 000 $o/locked.txt
  mkfifo $o/fifo

  # the tree
  mkdir $t
  echo notes > $t/notes.txt
  ln -s ../$o/secret.txt $t/link-file
  ln -s ../$o/dir $t/link-dir
  ln -s ../$o/emptydir $t/link-emptydir
  ln -s ../$o/nowhere $t/link-dangling
  mkfifo $t/fifo
  echo locked > $t/unreadable.txt && chmod 000 $t/unreadable.txt
  mkdir $t/unreadable-dir && chmod 000 $t/unreadable-dir
  mknod $t/chardev c 1 3 2> "$log" || echo "(not root: no character device)"
  # our output names, planted as links to outside files
  ln -s ../$o/summary.csv $t/summary.csv
  ln -s ../$o/jobs.csv $t/jobs.csv
  ln -s ../$o/experiment.csv $t/experiment.csv
  ln -s ../$o/timeseries.csv $t/timeseries.csv
  ln -s ../$o/marker $t/.retrystorm
  # a directory named like a work directory, and a link named like one
  mkdir $t/res.work-AAAAAA && echo precious > $t/res.work-AAAAAA/precious.txt
  ln -s ../$o/dir $t/res.work-BBBBBB
  # looks like an output of ours (a real marker), but its CSVs are links out:
  # planted is only ever refused; --force writes into planted-run and
  # planted-merge (replacing the links, never what they point to)
  for p in planted planted-run planted-merge; do
    mkdir $t/$p && : > $t/$p/.retrystorm
    for f in summary.csv timeseries.csv latency.csv jobs.csv experiment.csv; do
      ln -s ../../$o/$f $t/$p/$f
    done
  done
  # a shard whose files are links to a genuine shard's files outside
  mkdir $t/linkshard && : > $t/linkshard/.retrystorm
  ln -s ../../$o/good-experiment.csv $t/linkshard/experiment.csv
  ln -s ../../$o/good-jobs.csv $t/linkshard/jobs.csv
  ln -s ../../$o/good-status.csv $t/linkshard/status.csv
  # shards whose files are fifos, unreadable, or links to fifos
  mkdir $t/fifoshard && : > $t/fifoshard/.retrystorm
  mkfifo $t/fifoshard/experiment.csv $t/fifoshard/jobs.csv $t/fifoshard/status.csv
  mkdir $t/fifoshard2 && : > $t/fifoshard2/.retrystorm
  cp good2/experiment.csv $t/fifoshard2/ && mkfifo $t/fifoshard2/jobs.csv
  mkdir $t/lockshard && : > $t/lockshard/.retrystorm
  cp good2/experiment.csv good2/jobs.csv $t/lockshard/ && chmod 000 $t/lockshard/jobs.csv
  mkdir $t/fifolinkshard && : > $t/fifolinkshard/.retrystorm
  ln -s ../../$o/fifo $t/fifolinkshard/experiment.csv
  # an unfinished sweep whose status.csv is a fifo
  mkdir $t/fifostatus && : > $t/fifostatus/.retrystorm && mkfifo $t/fifostatus/status.csv
}

# type, link target, size and mode of every entry, and the sha256 of every
# regular file, one line each, the path first
snap() {
  find $o $t -printf '%p %y %l %s %m\n' 2> "$tmp/snap.err" | awk '$2 == "d" {$4 = "-"} 1' | sort
  find $o $t -type f -print0 2> "$tmp/snap.err" | xargs -0 -r sha256sum 2> "$tmp/snap.err" |
    awk '{print $2, "sha", $1}' | sort
}

# try WANT ALLOWED -- COMMAND...: runs the command (SIGTERM after 20 s,
# SIGKILL 5 s later: a stop flag does not end a blocked open); WANT is
# its exit code (or "any"); ALLOWED an extended regex of the paths it may
# change (or "^$" for none). The outside directory may never change.
n=0
try() {
  local want=$1 allow=$2
  shift 3
  n=$((n + 1))
  # nothing changes between two commands: the last snapshot is this one's
  [ -e "$tmp/after" ] && mv "$tmp/after" "$tmp/before" || snap > "$tmp/before"
  if ! cmp -s "$tmp/before" "$tmp/pristine"; then
    chmod -R u+rwx $o $t 2> "$tmp/snap.err"
    rm -rf $o $t fresh-*
    mkworld
    snap > "$tmp/before"
  fi
  timeout -k 5 20 "$@" > "$tmp/out" 2>&1 < "$tmp/empty"
  local rc=$?
  if [ $rc = 124 ] || [ $rc = 137 ]; then
    fail "[$n] hangs (stopped after 20 s): $*"
  elif [ "$want" != any ] && [ $rc != "$want" ]; then
    fail "[$n] exit $rc, not $want: $*: $(head -c 400 "$tmp/out")"
  fi
  snap > "$tmp/after"
  local changed
  changed=$(diff "$tmp/before" "$tmp/after" | sed -n 's/^[<>] \([^ ]*\) .*/\1/p' | sort -u |
    grep -Ev -- "$allow" | tr '\n' ' ')
  [ -z "$changed" ] || fail "[$n] changed what it may not: $changed: $*"
  changed=$(diff "$tmp/before" "$tmp/after" | sed -n 's/^[<>] \([^ ]*\) .*/\1/p' | grep "^$o" | sort -u | tr '\n' ' ')
  [ -z "$changed" ] || fail "[$n] changed the outside directory: $changed: $*"
  # no work directory or temporary left behind
  local left
  left=$(find . -maxdepth 3 \( -name '*.work-*' -o -name '.*.tmp' \) ! -name 'res.work-AAAAAA' \
    ! -name 'res.work-BBBBBB' -print 2> "$tmp/snap.err" | tr '\n' ' ')
  [ -z "$left" ] || fail "[$n] left behind: $left: $*"
}
mkworld
snap > "$tmp/pristine"
none='^$'
tmpname='/\.[^/]*\.tmp$' # a temporary that a command renamed away (it shows in no snapshot)
runnames="^$t/(summary|timeseries|latency|attempts|layers|replications)\.csv\$|^$t/(scenario\.ini|summary\.json)\$|^$t\$"
short=(--set run.duration=2s --set load.rate=50/s)

echo "== run"
try 2 "$none" -- "$bin" run tiny.ini -o $t
try 0 "$runnames" -- "$bin" run tiny.ini -o $t --force
[ -L $t/.retrystorm ] || fail "run --force replaced the planted marker link"
[ -f $t/notes.txt ] && [ -p $t/fifo ] && [ -L $t/link-file ] || fail "run --force removed an entry not ours"
for target in link-dir link-emptydir link-dangling link-file fifo notes.txt chardev unreadable.txt \
  res.work-BBBBBB summary.csv .retrystorm; do
  [ $target != chardev ] || [ "$(id -u)" = 0 ] || continue # mknod needs root
  try 2 "$none" -- "$bin" run tiny.ini -o $t/$target
  try 2 "$none" -- "$bin" run tiny.ini -o $t/$target --force
  try 2 "$none" -- "$bin" run tiny.ini -o $t/$target/ --force
done
[ -c $t/chardev ] || [ ! -e $t/chardev ] || fail "the character device was replaced"
try 2 "$none" -- "$bin" run tiny.ini -o $t/planted
try 2 "$none" -- "$bin" run tiny.ini --reps 2 -o $t/planted
try 0 "^$t/planted-run(/|\$)" -- "$bin" run tiny.ini --reps 2 -o $t/planted-run --force
[ -f $o/summary.csv ] && [ -L $t/planted-run/jobs.csv ] || fail "run --force: a link not of a run's names was replaced"
try 0 "^$t/res(/|\$)" -- "$bin" run tiny.ini -o $t/res
[ -f $t/res.work-AAAAAA/precious.txt ] || fail "a directory named like a work directory was removed"
# scenarios that are not files
for s in fifo link-dir unreadable-dir chardev; do
  [ $s != chardev ] || [ "$(id -u)" = 0 ] || continue # mknod needs root
  try 2 "$none" -- "$bin" run $t/$s -o fresh-run
  try 2 "$none" -- "$bin" check $t/$s
done
try 2 "$none" -- "$bin" check $t/link-file
try any "$none" -- "$bin" check $t/unreadable.txt # root may read it: a parse error either way
try 2 "$none" -- "$bin" check $t/fifolinkshard/experiment.csv

echo "== compare"
cmp=(compare tiny.ini --vary layer.app.attempts=1,2)
try 2 "$none" -- "$bin" "${cmp[@]}" -o $t
try 2 "$none" -- "$bin" "${cmp[@]}" -o $t/link-dir
try 2 "$none" -- "$bin" "${cmp[@]}" -o $t/link-dir --force
try 2 "$none" -- "$bin" "${cmp[@]}" -o $t/fifo --force
try 2 "$none" -- "$bin" "${cmp[@]}" -o $t/planted
try 0 "^$t/cmp(/|\$)" -- "$bin" "${cmp[@]}" -o $t/cmp

echo "== sweep"
sweepnames="^$t/(experiment|jobs|status|sweep)\.csv\$|/summary\.json\$|^$t\$"
try 2 "$none" -- "$bin" sweep tiny.ini "${grid[@]}" -o $t
try 2 "$none" -- "$bin" sweep tiny.ini "${grid[@]}" -o $t/link-dir
try 2 "$none" -- "$bin" sweep tiny.ini "${grid[@]}" -o $t/link-dir --force
try 2 "$none" -- "$bin" sweep tiny.ini "${grid[@]}" -o $t/fifo --force
try 2 "$none" -- "$bin" sweep tiny.ini "${grid[@]}" -o $t/notes.txt --force
try 2 "$none" -- "$bin" sweep tiny.ini "${grid[@]}" -o $t/planted
try 2 "$none" -- "$bin" sweep tiny.ini "${grid[@]}" -o $t/linkshard
try 2 "$none" -- "$bin" sweep tiny.ini "${grid[@]}" -o $t/linkshard --resume
try 2 "$none" -- "$bin" sweep tiny.ini "${grid[@]}" -o $t/fifoshard --resume
try 2 "$none" -- "$bin" sweep tiny.ini "${grid[@]}" -o $t/fifoshard --resume --force
try 2 "$none" -- "$bin" sweep tiny.ini "${grid[@]}" -o $t/fifolinkshard --resume --force
try 2 "$none" -- "$bin" sweep tiny.ini "${grid[@]}" -o $t/fifostatus
try 0 "^$t/fifostatus/(experiment|jobs|status|sweep)\.csv\$|/summary\.json\$|^$t/fifostatus\$" -- \
  "$bin" sweep tiny.ini "${grid[@]}" -o $t/fifostatus --force
try any "^$t/linkshard/(experiment|jobs|status|sweep)\.csv\$|/summary\.json\$|^$t/linkshard\$" -- \
  "$bin" sweep tiny.ini "${grid[@]}" --shard 1/2 -o $t/linkshard --resume --force
try 0 "$sweepnames" -- "$bin" sweep tiny.ini "${grid[@]}" -o $t --force
[ -L $t/.retrystorm ] || fail "sweep --force replaced the planted marker link"
try 0 "^$t/sw(/|\$)" -- "$bin" sweep tiny.ini "${grid[@]}" -o $t/sw

echo "== merge"
try 2 "$none" -- "$bin" merge good1 good2 -o $t
try 0 "$sweepnames" -- "$bin" merge good1 good2 -o $t --force
try 0 "^$t/planted-merge/(experiment|jobs|status|sweep)\.csv\$|/summary\.json\$|^$t/planted-merge\$" -- \
  "$bin" merge good1 good2 -o $t/planted-merge --force
for target in link-dir link-emptydir link-dangling fifo notes.txt chardev res.work-BBBBBB; do
  [ $target != chardev ] || [ "$(id -u)" = 0 ] || continue # mknod needs root
  try 2 "$none" -- "$bin" merge good1 good2 -o $t/$target
  try 2 "$none" -- "$bin" merge good1 good2 -o $t/$target --force
done
try 2 "$none" -- "$bin" merge good1 good2 -o $t/planted
for shard in fifoshard fifoshard2 fifolinkshard lockshard fifostatus link-dir fifo notes.txt unreadable-dir; do
  [ $shard != chardev ] || [ "$(id -u)" = 0 ] || continue # mknod needs root
  want=2
  # root reads an unreadable jobs.csv: then the merge may succeed
  [ $shard = lockshard ] && [ "$(id -u)" = 0 ] && want=any
  try $want "^fresh-merge" -- "$bin" merge good1 $t/$shard -o fresh-merge
  rm -rf fresh-merge
done
try any "$none" -- "$bin" merge $t/linkshard good2 -o fresh-merge2
try 0 "^$t/merged(/|\$)" -- "$bin" merge good1 good2 -o $t/merged

echo "== tune"
tune=(tune tiny.ini --grid layer.app.attempts=1,2 --objective max:ok_share --quiet)
try 2 "$none" -- "$bin" "${tune[@]}" -o $t
try 2 "$none" -- "$bin" "${tune[@]}" -o $t/link-dir
try 2 "$none" -- "$bin" "${tune[@]}" -o $t/link-dir --force
try 2 "$none" -- "$bin" "${tune[@]}" -o $t/fifo --force
try 2 "$none" -- "$bin" "${tune[@]}" -o $t/planted
try 0 "^$t/tuned(/|\$)" -- "$bin" "${tune[@]}" -o $t/tuned

echo "== plot"
figures="^$t/[^/]*\.(png|svg)\$|^$t\$"
try 2 "$none" -- "$bin" plot $t
try any "$figures" -- "$bin" plot $t --force
for target in link-dir link-emptydir link-dangling fifo notes.txt chardev res.work-BBBBBB; do
  [ $target != chardev ] || [ "$(id -u)" = 0 ] || continue # mknod needs root
  try 2 "$none" -- "$bin" plot $t/$target
  try 2 "$none" -- "$bin" plot $t/$target --force
done
for d in planted linkshard fifoshard fifostatus; do
  try 2 "$none" -- "$bin" plot $t/$d
  try any "^$t/$d/[^/]*\.(png|svg)\$|^$t/$d\$" -- "$bin" plot $t/$d --force
done

echo "$n commands"
chmod -R u+rwx "$tmp" 2> "$tmp/snap.err"
finish
