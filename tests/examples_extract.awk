# Extracts the example commands of one document for examples_test.sh.
# Variables: kind = help | man | md; file = the name printed in messages.
# Prints one record per example: FILE \t LINE \t STATUS \t COMMAND \t EXIT
# \t CLAIMS where STATUS is "run" or "skip:REASON", EXIT the exit code
# claimed ("# exits: N", default 0) and CLAIMS the "# prints:" texts joined
# by \037. The rules (also stated at the top of examples_test.sh):
#  - help: the lines of an "examples:" or "example:" block (up to a blank
#    line); man: the lines between .EX and .EE or .nf and .fi, roff escapes
#    undone; md: the lines of fenced blocks whose info string is empty, sh,
#    bash, console or shell, and of indented blocks (4 spaces) that start
#    with "$ retrystorm ".
#  - in a block, a line (leading blanks and a "$ " prompt removed) that
#    starts with "retrystorm " is an example; one ending in "\" is joined
#    with the next. Following lines "# prints: TEXT" and "# exits: N ..."
#    are claims: the command's output (stdout and stderr) contains TEXT;
#    it exits with N (without one: 0).
#  - md: "<!-- examples: skip REASON -->" on the line before a fence skips
#    that block's examples, listed with REASON.
#  - skipped, listed with the rule: a synopsis (" [", "...", "| -" or a
#    placeholder of 3+ capitals, such as SCENARIO, outside a # comment);
#    serve (it blocks until stopped).
function unroff(s) {
    gsub(/\\-/, "-", s); gsub(/\\\(aq/, "'", s); gsub(/\\\(dq/, "\"", s); gsub(/\\\(ti/, "~", s)
    gsub(/\\&/, "", s); gsub(/\\e/, "\\", s)
    return s
}
function flush() {
    if (cmd != "")
        printf "%s\t%d\t%s\t%s\t%d\t%s\n", file, cmdline, status(cmd), cmd, exitcode, claims
    cmd = ""; claims = ""; joining = 0; exitcode = 0
}
function status(c,   code) {
    if (skipblock != "")
        return "skip:" skipblock
    code = c; sub(/[ \t]+#.*$/, "", code)
    if (code ~ / \[|\.\.\.|\| -|(^|[^A-Za-z0-9_$])[A-Z][A-Z_][A-Z_]+([^A-Za-z0-9_]|$)/)
        return "skip:a synopsis, not an example"
    if (code ~ /^retrystorm serve( |$)/)
        return "skip:serve blocks until stopped"
    return "run"
}
# One line of a block, already unescaped.
function take(s,   t) {
    t = s; sub(/^[ \t]+/, "", t)
    if (joining) {
        cmd = cmd " " t
        joining = sub(/[ \t]*\\$/, "", cmd)
        return
    }
    if (cmd != "" && t ~ /^# exits: [0-9]+/) {
        exitcode = substr(t, 10) + 0
        return
    }
    if (cmd != "" && t ~ /^# prints: /) {
        sub(/^# prints: /, "", t)
        claims = claims (claims == "" ? "" : "\037") t
        return
    }
    flush()
    sub(/^\$ /, "", t)
    if (t !~ /^retrystorm /)
        return
    cmd = t; cmdline = FNR
    joining = sub(/[ \t]*\\$/, "", cmd)
}
function endblock() { flush(); inblock = 0; skipblock = "" }

kind == "help" && /^examples?:$/ { inblock = 1; next }
kind == "help" && inblock && /^$/ { endblock(); next }
kind == "help" && inblock { take($0); next }

kind == "man" && /^\.(EX|nf)$/ { inblock = 1; next }
kind == "man" && /^\.(EE|fi)$/ { endblock(); next }
kind == "man" && inblock { take(unroff($0)); next }

kind == "md" && /^[ \t]*<!-- examples: skip .* -->/ {
    pending = $0; sub(/^[ \t]*<!-- examples: skip /, "", pending); sub(/ -->.*$/, "", pending)
    pendingline = FNR; next
}
kind == "md" && !infence && /^[ \t]*```[A-Za-z0-9_+-]*[ \t]*$/ {
    info = $0; sub(/^[ \t]*```/, "", info); sub(/[ \t]+$/, "", info)
    infence = 1; inblock = info ~ /^(sh|bash|console|shell)?$/
    skipblock = FNR - pendingline <= 1 ? pending : ""
    next
}
kind == "md" && infence && /^[ \t]*```[ \t]*$/ { endblock(); infence = 0; next }
kind == "md" && infence { if (inblock) take($0); next }
kind == "md" && /^    \$ retrystorm / { take($0); indented = 1; next }
kind == "md" && indented && /^    / { take($0); next }
kind == "md" && indented { flush(); indented = 0; next }

END { flush() }
