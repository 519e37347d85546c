#!/usr/bin/env bash
# Bash completion (completions/retrystorm.bash) and the manual page
# (man/retrystorm.1), against the binary, so that neither can drift from it:
# completions of commands, options, scenarios, keys, values, metrics, list
# and help topics and directories, with COMP_WORDBREAKS holding ':' and '='
# or not, and quietly without the binary; every command and option of
# 'retrystorm help' is in the manual, every option of the manual is in some
# command's help, and the manual renders without a warning. $1: the binary,
# $2: the source directory. (Not under set -u: completion functions run in
# interactive shells, which do not set it.)
set -o pipefail
. "$(dirname "$0")/lib.sh"
src=$(realpath "$2")
cd "$tmp" || exit 1 # relative names complete from an empty directory
comp=$src/completions/retrystorm.bash
page=$src/man/retrystorm.1

# ---- completion ----

out=$(bash -c '. "$1"; complete -p retrystorm' _ "$comp" 2>&1)
[ "$out" = "complete -F _retrystorm retrystorm" ] || fail "sourcing the completion registers: $out"
. "$comp"
compopt() { opts+=" $*"; } # completion's compopt only works under readline: record what is asked

# comp LINE (the cursor at its end): splits LINE into COMP_WORDS as bash
# does (at blanks, and around runs of COMP_WORDBREAKS characters), calls
# _retrystorm, and sets got to the words the user would see (each reply put
# in place of what readline replaces: what follows the last word-break
# character of the word) and opts to the compopt options asked for.
errs=$tmp/completion-stderr
comp() {
  local line=$1 breaks=${COMP_WORDBREAKS//[[:space:]\"\']/} ch i tok='' kind='' k word keep='' r
  COMP_WORDS=()
  for ((i = 0; i < ${#line}; i++)); do
    ch=${line:i:1}
    if [[ $ch == [[:space:]] ]]; then
      [[ -n $tok ]] && COMP_WORDS+=("$tok")
      tok='' kind=''
      continue
    fi
    if [[ $breaks == *"$ch"* ]]; then k=b; else k=w; fi
    if [[ -n $tok && $k != "$kind" ]]; then COMP_WORDS+=("$tok"); tok=; fi
    tok+=$ch kind=$k
  done
  COMP_WORDS+=("$tok")
  COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
  COMP_LINE=$line COMP_POINT=${#line}
  COMPREPLY=() opts=
  _retrystorm 2> "$errs"
  [ -s "$errs" ] && fail "completing '$line' printed: $(head -3 "$errs")"
  word=${line##*[[:space:]]}
  for ((i = ${#word} - 1; i >= 0; i--)); do
    if [[ $breaks == *"${word:i:1}"* ]]; then keep=${word:0:i+1}; break; fi
  done
  got=()
  for r in "${COMPREPLY[@]}"; do got+=("$keep$r"); done
}
shown() { ((${#got[@]})) && printf '%s\n' "${got[@]}" | sort -u | tr '\n' ' '; }
# includes LINE WORD...: completing LINE offers (at least) every WORD, and
# nothing that does not start with the word at the cursor
includes() {
  local line=$1 w; shift
  comp "$line"
  for w in "$@"; do
    grep -qxF -- "$w" <(printf "%s\n" "${got[@]}") || fail "completing '$line' does not offer '$w' (offers: $(shown))"
  done
  word=${line##*[[:space:]]}
  for w in "${got[@]}"; do
    [[ $w == "$word"* ]] || fail "completing '$line' offers '$w', which does not start with '$word'"
  done
}
# exactly LINE WORD...: completing LINE offers these words and no other
exactly() {
  local line=$1 want have; shift
  comp "$line"
  want=$(printf '%s\n' "$@" | sed '/^$/d' | sort -u | tr '\n' ' ')
  have=$(shown)
  [ "$want" = "$have" ] || fail "completing '$line' offers '$have', not '$want'"
}
nospace() { [[ $opts == *nospace* ]] || fail "completing '$1' leaves a space after '${got[*]}'"; }

commands=$("$bin" help | awk '/^commands:/ { on = 1; next } on && /^  [a-z]/ { print $1 }')
[ "$(wc -w <<<"$commands")" -ge 10 ] || fail "retrystorm help lists only: $commands"
r=$bin # the command word: the binary's path, as "${COMP_WORDS[0]}" would be

# the first word: the commands
exactly "$r com" compare
exactly "$r " $commands
exactly "$r --v" --version
# a command's options, from its help
seed=; "$bin" help run | grep -q -- '--seed' && seed=--seed
exactly "$r run --se" --set $seed
exactly "$r storm --se" --set $seed # without a command: run
includes "$r sweep storm --" --grid --reps --shard --resume --quiet --progress --set --help
includes "$r sweep storm -" -j -o
exactly "$r plot out --st" --style
exactly "$r plot out --style " slide default
exactly "$r serve --p" --port
exactly "$r hysteresis orbit --lo" --load
exactly "$r hysteresis orbit --load " load.rate=
includes "$r hysteresis or" orbit
includes "$r hysteresis orbit --ramp 300s --" --hold --window --reps --plot
# the scenario: built-ins (and *.ini files, directories)
includes "$r run st" storm storm-budget
exactly "$r st" # the first word is a command, never a scenario
exactly "$r run -o $tmp/x st" $("$bin" list | awk '$1 ~ /^st/ { print $1 }') # -o's value is not the scenario
exactly "$r check storm -o x st" # one scenario only
mkdir -p "$tmp/scen/dir" && touch "$tmp/scen/a.ini" "$tmp/scen/notes.txt"
exactly "$r run $tmp/scen/" "$tmp/scen/a.ini" "$tmp/scen/dir"
# keys after --set, --vary and --grid: a section, then its keys; a named
# section's names from the line or the scenario file, then its keys
exactly "$r run storm --set lay" layer.
nospace "$r run storm --set lay"
exactly "$r run storm --set layer.app.att" layer.app.attempts=
nospace "$r run storm --set layer.app.att"
includes "$r run storm --set run." run.duration= run.seed= run.warmup=
includes "$r compare storm --vary layer.app.ba" layer.app.backoff= layer.app.base=
includes "$r sweep storm --grid ph" phase.
exactly "$r run storm --set layer.edge.attempts=2 --set layer." layer.edge.
exactly "$r run $src/scenarios/cascade.ini --set layer." layer.client. layer.edge-api. layer.api-db.
includes "$r run $src/scenarios/cascade.ini --set service.d" service.db.
# Section names from the scenario file are only those the parser takes (1
# to 47 letters, digits, '-', '_' after "[kind "), so a hostile header can
# never put shell syntax on the line. Each case: the name the parser takes
# from the header line (empty: none), and the line, last in a scenario
# whose line before it is a key (so an indented header is that key's value
# continued). The binary's check is the judge: it accepts the file exactly
# when a name is expected, and completion offers exactly that name.
long47=$(printf 'n%.0s' {1..47})
names_cases=(
  "ok-1_A|[layer ok-1_A]"
  "$long47|[layer $long47]"
  "spaced|[ layer   spaced	] ; a note"
  "|[layer ${long47}x]"
  "|[layer $(printf 'x%.0s' {1..300})]"
  '|[layer x;touch${IFS}pwned]'
  '|[layer $(touch${IFS}pwned)]'
  '|[layer `touch${IFS}pwned`]'
  '|[layer x|touch${IFS}pwned]'
  '|[layer x&&touch${IFS}pwned]'
  '|[layer >pwned]'
  "|[layer a'b]"
  '|[layer a"b]'
  '|[layer a b]'
  '|[layer *]'
  '|[layer a?]'
  '|[layer {a,b}]'
  '|[layer ~root]'
  '|[layer a.b]'
  '|[layer a=b]'
  '|[layer a:b]'
  '|[layer a\b]'
  "|[layer	tab]"
  "|[layer 	tab]"
  '|[layer café]'
  $'|[layer x\xff]'
  '|[Layer up]'
  '|  [layer continued]'
)
hostile=$tmp/hostile.ini
printf '[load]\nrate = 100/s\n[server]\nservice = exp(10ms)\n' > "$hostile"
for c in "${names_cases[@]}"; do
  want=${c%%|*} header=${c#*|}
  f=$tmp/names.ini
  printf '[load]\nrate = 100/s\n[server]\nservice = exp(10ms)\n%s\n' "$header" > "$f"
  if "$bin" check "$f" > /dev/null 2>&1; then ok=yes; else ok=no; fi
  [[ $ok == yes && -n $want || $ok == no && -z $want ]] ||
    fail "the test's case '$header' expects name '$want' but the parser's check says $ok"
  exactly "$r run $f --set layer." ${want:+"layer.$want."}
  [[ $header == ' '* ]] || printf '%s\n' "$header" >> "$hostile"
done
# every kind with a name, all in one file: only the good names
printf '%s\n' '[service db]' '[service x;touch${IFS}pwned]' '[cache c-1]' '[cache $(touch${IFS}pwned)]' \
  '[phase p_1]' '[phase a b]' >> "$hostile"
exactly "$r run $hostile --set layer." layer.ok-1_A. "layer.$long47." layer.spaced.
exactly "$r run $hostile --set service." service.db.
exactly "$r run $hostile --set cache." cache.c-1.
exactly "$r run $hostile --set phase." phase.p_1.
exactly "$r sweep $hostile --grid layer.ok" layer.ok-1_A.
# a name typed on the line is held to the same rule
exactly "$r run storm --set layer.x;touch\${IFS}pwned.attempts=2 --set layer." 
exactly "$r run storm --set layer.ok.attempts=2 --set layer." layer.ok.
# and nothing runs when a candidate is put on the line and the line is run,
# with or without ':' and '=' in COMP_WORDBREAKS
saved=$COMP_WORDBREAKS
for breaks in "$saved" "${saved//[:=]/}"; do
  COMP_WORDBREAKS=$breaks
  for opt in --set --vary --grid; do
    for sect in layer. service. cache. phase. layer.x; do
      comp "$r run $hostile $opt $sect"
      for w in "${got[@]}"; do
        (cd "$tmp" && eval ": run \"\$hostile\" $opt $w") > /dev/null 2>&1
      done
    done
  done
done
COMP_WORDBREAKS=$saved
shopt -s nullglob
marks=("$tmp"/pwned* "$tmp"/*/pwned*)
shopt -u nullglob
((${#marks[@]} == 0)) || fail "running a completed line ran a section name's command: ${marks[*]}"
# fixed values after '=' (after the last ',' for --vary and --grid)
exactly "$r run storm --set load.model=" load.model=open load.model=closed
exactly "$r compare storm --vary server.discipline=fifo," server.discipline=fifo,fifo server.discipline=fifo,lifo
includes "$r compare jitter --vary layer.app.backoff=none,f" layer.app.backoff=none,full
includes "$r run storm --set layer.app.backoff=aws-" layer.app.backoff=aws-standard
# list's and help's topics
exactly "$r list " presets metrics keys
exactly "$r help " $commands metrics
# metrics after --objective max: / min: and --constraint
exactly "$r tune storm --objective " max: min:
nospace "$r tune storm --objective "
includes "$r tune storm --grid layer.app.attempts=1..3 --objective max:ok_" max:ok_share
includes "$r tune storm --objective min:amp" min:amplification
includes "$r tune storm --objective max:err_" max:err_timeout max:err_503
includes "$r tune storm --constraint lat_p9" lat_p99
# the same with COMP_WORDBREAKS without ':' and '=' (words are not split there)
saved=$COMP_WORDBREAKS
COMP_WORDBREAKS=${COMP_WORDBREAKS//[:=]/}
includes "$r tune storm --objective max:ok_" max:ok_share
exactly "$r run storm --set layer.app.att" layer.app.attempts=
exactly "$r run storm --set load.model=c" load.model=closed
COMP_WORDBREAKS=$saved
# directories: -o, plot, merge (a variant's name holds '=')
mkdir -p "$tmp/outs/one" "$tmp/outs/two" "$tmp/outs/cmp/attempts=1"
touch "$tmp/outs/file"
exactly "$r run storm -o $tmp/outs/" "$tmp/outs/one" "$tmp/outs/two" "$tmp/outs/cmp"
exactly "$r plot $tmp/outs/" "$tmp/outs/one" "$tmp/outs/two" "$tmp/outs/cmp"
exactly "$r plot $tmp/outs/cmp/attempts=" "$tmp/outs/cmp/attempts=1"
exactly "$r merge $tmp/outs/one $tmp/outs/t" "$tmp/outs/two"
# the binary found on PATH, as when it is installed
mkdir -p "$tmp/pathbin" && ln -s "$bin" "$tmp/pathbin/retrystorm"
saved=$PATH
PATH=$tmp/pathbin:$PATH
exactly "retrystorm com" compare
exactly "retrystorm run storm --set layer.app.att" layer.app.attempts=
PATH=$saved
# without the binary: nothing printed, directories still completed
r=$tmp/none/retrystorm
exactly "$r com"
exactly "$r run storm --set lay"
exactly "$r plot $tmp/outs/o" "$tmp/outs/one"
r=$bin

# The options that take a value (the completion's one table) are those the
# help shows with a value (--seed N, -o DIR, --set K=V, --style slide|default)
helps=$(for c in $commands; do "$bin" help "$c"; done)
shown_valued=$(grep -oE -- '(^|[][ |])--?[a-z][a-z0-9-]* ([A-Z]|max:|slide|text|.METRIC)' <<<"$helps" |
  sed -E 's/^[^-]*//; s/ .*//' | sort -u)
for o in $shown_valued; do
  [[ " ${_retrystorm_valued//$'\n'/ } " == *" $o "* ]] || fail "the help shows $o with a value, but the completion does not know it takes one"
done
for o in $_retrystorm_valued; do
  grep -qE -- "(^|[][ |,])$o( |,|$)" <<<"$helps" || fail "the completion takes $o for an option with a value, but no help names it"
done

# ---- the manual page ----

[ -f "$page" ] || fail "no $page"
# the roff source with its escapes for '-', '&' and quotes read as text
text=$(sed -e 's/\\-/-/g; s/\\&//g; s/\\(aq/'"'"'/g' "$page")
for c in $commands; do
  grep -qE "^\.SS \"$c( |\")" "$page" || fail "the manual has no section for the command $c"
  # the command's section: every option its help names is there
  sect=$(awk -v c="$c" '/^\.S[SH] / { on = ($1 == ".SS" && ($2 == "\"" c || index($2, "\"" c " ") == 1)) } on' <<<"$text")
  for o in $("$bin" help "$c" | grep -oE -- '(^|[][ |(,])--?[a-z][a-z0-9-]*' | sed 's/^[^-]*//' | sort -u); do
    grep -qE -- "(^|[^a-z0-9-])$o([^a-z0-9-]|$)" <<<"$sect" ||
      fail "the manual's section on $c does not mention $o (in 'retrystorm help $c')"
  done
done
# every long option the manual names is one some command's help names
known=$( (grep -oE -- '--[a-z][a-z0-9-]*' <<<"$helps"; "$bin" --help | grep -oE -- '--[a-z][a-z0-9-]*') | sort -u)
for o in $(grep -oE -- '--[a-z][a-z0-9-]*' <<<"$text" | sort -u); do
  grep -qxF -- "$o" <<<"$known" || fail "the manual names $o, which no help of the binary names"
done
version=$("$bin" --version)
grep -qF "\"$version\"" "$page" || fail "the manual's .TH does not name \"$version\" (retrystorm --version)"
for s in NAME SYNOPSIS DESCRIPTION COMMANDS OPTIONS SCENARIOS FILES ENVIRONMENT "EXIT STATUS" EXAMPLES "SEE ALSO"; do
  grep -qE "^\.SH \"?$s\"?$" "$page" || fail "the manual has no $s section"
done
# every file of a run's output directory is in FILES
"$bin" run storm --set run.duration=5s --set run.warmup=1s --set phase.spike.start=1s --set phase.spike.end=2s -o "$tmp/run" > /dev/null ||
  fail "a short run of storm failed"
files=$(awk '/^\.SH FILES/ { on = 1; next } /^\.SH / { on = 0 } on' <<<"$text")
shopt -s dotglob nullglob
for f in "$tmp/run"/*; do
  f=${f##*/}
  grep -qF -- "$f" <<<"$files" || fail "the manual's FILES does not name $f, which a run writes"
done
shopt -u dotglob nullglob
# it renders, without a warning
if command -v groff > /dev/null; then
  w=$(groff -man -Tutf8 -ww -z "$page" 2>&1)
  [ -z "$w" ] || fail "groff warns about the manual: $(head -5 <<<"$w")"
else
  echo "SKIP: groff is not installed (Debian: groff-base): the manual's warnings not checked"
fi
if command -v man > /dev/null; then
  rendered=$(MANWIDTH=80 man -l "$page" 2> "$tmp/man-stderr")
  grep -iE 'troff|warn|error' "$tmp/man-stderr" && fail "man -l printed warnings (above)"
  grep -q '^RETRYSTORM(1)' <<<"$rendered" || fail "man -l renders no RETRYSTORM(1) header"
  grep -q '^EXIT STATUS' <<<"$rendered" || fail "man -l renders no EXIT STATUS"
  grep -qE -- '--max-seconds s' <<<"$rendered" || fail "man -l renders no --max-seconds s"
  grep -q '‐' <<<"$rendered" && fail "man -l hyphenates words (a code word cut in two): $(grep -m2 '‐' <<<"$rendered")"
  [ "$(awk 'length > 80' <<<"$rendered" | wc -l)" = 0 ] || fail "the manual has lines over 80 columns: $(awk 'length > 80' <<<"$rendered" | head -2)"
else
  echo "SKIP: man is not installed (Debian: man-db): the manual's rendering not checked"
fi
finish
