# bash completion for retrystorm                            -*- shell-script -*-
#
# Everything that can drift is asked of the binary being completed
# ("${COMP_WORDS[0]}") at completion time, never kept in a table here:
#   the commands                 retrystorm help
#   a command's options          retrystorm help COMMAND (every -x / --xx it mentions)
#   an option's fixed values     retrystorm help COMMAND (--style slide|default)
#   list's and help's topics     retrystorm help list, retrystorm help help
#   built-in scenarios           retrystorm list (first column)
#   --set/--vary/--grid keys     retrystorm list keys (first column; NAME is a section's name)
#   their fixed values           retrystorm list keys (a description like "fifo, lifo")
#   backoff kinds and presets    retrystorm list presets
#   metrics                      retrystorm list metrics (first column)
# The one table is the options that take a value (_retrystorm_valued): it
# tells an option's value from a positional argument. Without the binary,
# only files and directories are completed, and nothing is printed.
#
# Does not need the bash-completion package. COMP_WORDBREAKS may hold '='
# and ':' (it does by default): the words are put back together from the
# line, and each reply is trimmed to the part readline replaces.

# Options whose next argument is their value (all commands).
_retrystorm_valued='-o --set --seed --reps --vary --grid -j --shard --objective --constraint
--sort --label --format --title --size --font-scale --style --bind --port --jobs --max-seconds --max-memory
--load --ramp --hold --window --duration --trigger --level --batch --resolution'

# The binary to ask, or nothing when there is none.
_retrystorm_bin()
{
    local b=$1
    # shellcheck disable=SC2088 # a literal ~/ that the line did not expand
    [[ $b == "~/"* ]] && b=$HOME/${b#"~/"}
    if [[ $b == */* ]]; then
        [[ -f $b && -x $b ]] && printf '%s\n' "$b"
    else
        type -P -- "$b" 2>/dev/null
    fi
}

# Sets words and cword (the caller's locals): the line up to the cursor
# split at blanks, the words bash split at COMP_WORDBREAKS joined again.
_retrystorm_words()
{
    local line=${COMP_LINE:0:COMP_POINT} i w trimmed
    words=() cword=0
    for ((i = 0; i <= COMP_CWORD && i < ${#COMP_WORDS[@]}; i++)); do
        w=${COMP_WORDS[i]}
        trimmed=${line#"${line%%[![:space:]]*}"}
        if ((i == COMP_CWORD)); then
            w=$trimmed # the current word: up to the cursor
        fi
        if ((i > 0 && ${#trimmed} == ${#line})); then
            words[${#words[@]} - 1]+=$w # no blank before it: one word with the previous
        else
            words+=("$w")
        fi
        line=${trimmed:${#w}}
    done
    cword=$((${#words[@]} - 1))
}

# Adds each candidate (the arguments, or stdin's lines with -) that starts
# with $cur to COMPREPLY.
_retrystorm_add()
{
    local c
    if [[ $# == 1 && $1 == - ]]; then
        while IFS= read -r c; do
            [[ -n $c && $c == "$cur"* ]] && COMPREPLY+=("$c")
        done
        return
    fi
    for c in "$@"; do
        [[ $c == "$cur"* ]] && COMPREPLY+=("$c")
    done
}

# Directories (and with -ini, *.ini files) starting with $cur.
_retrystorm_files()
{
    local c
    while IFS= read -r c; do
        COMPREPLY+=("$c")
    done < <(compgen -d -- "$cur"; [[ ${1-} == -ini ]] && compgen -f -X '!*.ini' -- "$cur")
    compopt -o filenames 2>/dev/null
}

# Replies that end in '.', '=', ':' or ',' are a part of a word: no space after.
_retrystorm_nospace()
{
    local c
    for c in "${COMPREPLY[@]}"; do
        case $c in
        *. | *= | *: | *,) compopt -o nospace 2>/dev/null; return ;;
        esac
    done
}

# readline replaces only what follows the last COMP_WORDBREAKS character
# of the word: trim that much of every reply.
_retrystorm_trim()
{
    local i ch pre=
    for ((i = ${#cur} - 1; i >= 0; i--)); do
        ch=${cur:i:1}
        if [[ $ch != [[:space:]] && $COMP_WORDBREAKS == *"$ch"* ]]; then
            pre=${cur:0:i+1}
            break
        fi
    done
    [[ -z $pre ]] && return
    for i in "${!COMPREPLY[@]}"; do
        COMPREPLY[i]=${COMPREPLY[i]#"$pre"}
    done
}

_retrystorm_commands()
{
    [[ -n $bin ]] || return
    "$bin" help 2>/dev/null | awk '/^commands:/ { on = 1; next } on && /^  [a-z]/ { print $1 } on && /^$/ { exit }'
}

# The options a command's help mentions.
_retrystorm_options()
{
    [[ -n $bin ]] || return
    "$bin" help "$1" 2>/dev/null | grep -oE -- '(^|[][ |(,])--?[a-z][a-z0-9-]*' | sed 's/^[^-]*//' | sort -u
    echo --help
}

# The fixed values of a command's option, as its help writes them (--style slide|default).
_retrystorm_option_values()
{
    [[ -n $bin ]] || return
    "$bin" help "$1" 2>/dev/null | grep -oE -- "(^|[ [])$2 [a-z]+(\|[a-z]+)+" | sed 's/.* //' | tr '|' '\n'
}

# The topics of a command written as [a|b|C] in its usage (list, help);
# COMMAND stands for the commands.
_retrystorm_topics()
{
    [[ -n $bin ]] || return
    local t
    for t in $("$bin" help "$1" 2>/dev/null | sed -n 's/^usage: retrystorm [a-z]* \[\([A-Za-z|]*\)\].*/\1/p' | tr '|' ' '); do
        if [[ $t == COMMAND ]]; then
            _retrystorm_commands
        elif [[ $t != *[A-Z]* ]]; then
            echo "$t"
        fi
    done
}

_retrystorm_builtins()
{
    [[ -n $bin ]] || return
    "$bin" list 2>/dev/null | awk '/^[a-z0-9]/ { print $1 }'
}

# The metrics an objective or a constraint can name: list metrics' first
# column without the ones no sweep has (scenario, seed, wall_s and those
# described as belonging to one command), err_<class> spelled out.
_retrystorm_metrics()
{
    [[ -n $bin ]] || return
    "$bin" list metrics 2>/dev/null | awk '
        NR == 1 && $1 == "metric" { next }
        $1 == "err_<class>" {
            sub(/^[^:]*: */, "")
            for (i = 1; i <= NF && substr($i, 1, 1) != "("; i++) print "err_" $i
            next
        }
        $1 ~ /[<>]/ || $1 == "scenario" || $1 == "seed" || $1 == "wall_s" || $3 ~ /^\(/ { next }
        { print $1 }'
}

# The characters of a section's name, as the scenario parser takes it
# (scn_valid_name, sim/io/scenario_apply.c): 1 to 47 ASCII letters, digits,
# '-' and '_'. Spelt out, not a range: [A-Z] takes other letters in some
# locales. A name outside this rule is never offered, so a scenario file
# cannot put shell syntax on the line.
_retrystorm_name_chars=abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-
_retrystorm_name_max=47

# "section name" lines (stdin) whose name the parser takes, the name quoted
# as the shell reads it (printf %q: the same text for every such name).
_retrystorm_valid_names()
{
    local sect name
    while IFS=' ' read -r sect name; do
        [[ -n $name && ${#name} -le $_retrystorm_name_max && $name != *[!$_retrystorm_name_chars]* ]] &&
            printf '%s %q\n' "$sect" "$name"
    done
}

# "section name" lines of a scenario file's headers as the parser reads
# them (sim/io/scenario.c): '[' after blanks, the text up to the first ']'
# without the spaces and tabs around it, the kind, spaces, then the name
# (the rest). Not a header: an indented line after a key (libinih takes it
# for the key's value continued), a line over 197 characters.
_retrystorm_file_names()
{
    # shellcheck disable=SC2016 # the program is awk's
    env LC_ALL=C awk '
        NR == 1 { sub(/^\357\273\277/, "") }
        length($0) - ($0 ~ /\r$/) > 197 && $0 !~ /^[ \t]*[;#]/ { next }
        {
            line = $0; sub(/^[ \t\v\f\r]+/, "", line); continued = line != $0 && line != "" && key
            if (substr(line, 1, 1) == "[" && !continued) {
                key = 0; end = index(line, "]"); if (!end) next
                s = substr(line, 2, end - 2); sub(/^[ \t]+/, "", s); sub(/[ \t]+$/, "", s)
                sp = index(s, " "); if (!sp) next
                kind = substr(s, 1, sp - 1); name = substr(s, sp + 1); sub(/^ +/, "", name)
                if (kind ~ /^(layer|service|phase|cache)$/) print kind, name
            } else if (!continued && line ~ /[=:]/ && line !~ /^[;#]/) key = 1
        }' < "$1" 2>/dev/null
}

# Section names used on the line (--set layer.edge.attempts=2) or in the
# scenario file (not a built-in's name: that always means the built-in),
# as "section name" lines; only names the parser takes.
_retrystorm_names()
{
    local w re='^["'\'']?(layer|service|phase|cache)\.([^.=]+)\.'
    {
        for w in "${words[@]:0:cword}"; do
            [[ $w =~ $re ]] && echo "${BASH_REMATCH[1]} ${BASH_REMATCH[2]}"
        done
        if [[ -n $scenario && -f $scenario && -r $scenario ]] &&
            ! _retrystorm_builtins | grep -qxF -- "$scenario"; then
            _retrystorm_file_names "$scenario"
        fi
    } | _retrystorm_valid_names | head -n 200
}

# A key after --set, --vary or --grid: "section." first, then
# "section.key=", or for the sections that have names (layer.NAME.attempts)
# "section.NAME." for each name known (on the line or in the scenario
# file), then "section.NAME.key=". After '=', the key's fixed values (for
# --vary and --grid after the last ',').
_retrystorm_keys()
{
    [[ -n $bin ]] || return
    local keys typed=$cur
    keys=$("$bin" list keys 2>/dev/null)
    if [[ $typed == *=* ]]; then
        local key=${typed%%=*} value=${typed#*=} pre desc
        [[ $key =~ ^(layer|service|phase|cache)\.[^.]+\.(.*)$ ]] &&
            key=${BASH_REMATCH[1]}.NAME.${BASH_REMATCH[2]}
        pre=${typed%%=*}=
        [[ $opt != --set && $value == *,* ]] && pre+=${value%,*},
        desc=$(awk -v k="$key" '$1 == k { $1 = ""; sub(/^ +/, ""); print; exit }' <<<"$keys")
        if [[ $key == layer.NAME.backoff ]]; then
            _retrystorm_add - < <("$bin" list presets 2>/dev/null | awk -v p="$pre" '
                /^generic kinds:/ { for (i = 3; i <= NF; i++) print p $i; next }
                NR > 1 && /^[a-z]/ { print p $1 }')
        elif [[ $desc =~ ^[a-z0-9-]+(,\ [a-z0-9-]+)+$ ]]; then
            _retrystorm_add - < <(tr -d ' ' <<<"$desc" | tr ',' '\n' | awk -v p="$pre" '{ print p $0 }')
        fi
        return
    fi
    # keys: "section.key" or "section.NAME.key"; names: "section name" lines
    _retrystorm_add - < <(awk -v typed="$typed" -v names="$(_retrystorm_names)" '
        BEGIN { n = split(names, line, "\n"); for (i = 1; i <= n; i++) { split(line[i], f, " "); known[f[1]] = known[f[1]] " " f[2] } }
        {
            k = $1; dot = index(k, "."); if (!dot) next
            sec = substr(k, 1, dot - 1); rest = substr(k, dot + 1)
            if (index(typed, ".") == 0) c[sec "."]
            else if (substr(rest, 1, 5) == "NAME.") {
                if (index(typed, sec ".") != 1) next
                t = substr(typed, length(sec) + 2); d = index(t, ".")
                if (d) c[sec "." substr(t, 1, d - 1) "." substr(rest, 6) "="]
                else { m = split(known[sec], nm, " "); for (i = 1; i <= m; i++) c[sec "." nm[i] "."] }
            } else c[k "="]
        }
        END { for (x in c) print x }' <<<"$keys")
}

_retrystorm()
{
    local -a words=()
    local cword cur cmd bin first i w opt='' scenario='' npos=0 commands
    local valued=" ${_retrystorm_valued//$'\n'/ } "
    COMPREPLY=()
    _retrystorm_words
    cur=${words[cword]}
    bin=$(_retrystorm_bin "${COMP_WORDS[0]}")
    commands=$(_retrystorm_commands)

    if ((cword <= 1)); then
        if [[ $cur == -* ]]; then
            _retrystorm_add --help --version
        else
            _retrystorm_add - <<<"$commands"
        fi
        return 0
    fi

    cmd=${words[1]} first=2
    if [[ -z $bin ]]; then
        cmd='' first=1 # nothing to ask: files and directories only
    elif ! grep -qxF -- "$cmd" <<<"$commands"; then
        cmd=run first=1 # retrystorm [run] ...
    fi

    # The words before the cursor: options, their values, and the
    # positional arguments (the scenario is the first).
    for ((i = first; i < cword; i++)); do
        w=${words[i]}
        if [[ $valued == *" $w "* ]]; then
            ((i + 1 == cword)) && opt=$w
            ((i++))
        elif [[ $w != -?* ]]; then
            ((npos == 0)) && scenario=$w
            ((npos++))
        fi
    done

    case $opt in
    -o)
        _retrystorm_files
        ;;
    --load)
        if [[ $cmd == hysteresis ]]; then
            _retrystorm_add load.rate=
        else
            _retrystorm_keys
        fi
        ;;
    --set | --vary | --grid | --duration | --trigger)
        _retrystorm_keys
        ;;
    --objective | --sort)
        if [[ $cur == *:* ]]; then
            _retrystorm_add - < <(_retrystorm_metrics | awk -v p="${cur%%:*}:" '{ print p $0 }')
        else
            _retrystorm_add max: min:
        fi
        ;;
    --constraint)
        local q=
        [[ $cur == [\'\"]* ]] && q=${cur:0:1}
        _retrystorm_add - < <(_retrystorm_metrics | awk -v p="$q" '{ print p $0 }')
        ;;
    ?*)
        _retrystorm_add - < <(_retrystorm_option_values "$cmd" "$opt")
        ;;
    *)
        if [[ $cur == -* ]]; then
            [[ -n $cmd ]] && _retrystorm_add - < <(_retrystorm_options "$cmd")
        else
            case $cmd in
            run | compare | sweep | tune | check | hysteresis | map | margin)
                if ((npos == 0)); then
                    _retrystorm_add - < <(_retrystorm_builtins)
                    _retrystorm_files -ini
                fi
                ;;
            '') _retrystorm_files -ini ;;
            plot) ((npos == 0)) && _retrystorm_files ;;
            merge) _retrystorm_files ;;
            list | help) ((npos == 0)) && _retrystorm_add - < <(_retrystorm_topics "$cmd") ;;
            esac
        fi
        ;;
    esac
    _retrystorm_nospace
    _retrystorm_trim
    return 0
} &&
    complete -F _retrystorm retrystorm

# ex: filetype=sh
