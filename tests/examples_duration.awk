# The shortened run.duration of a scenario file for examples_test.sh: 20 s
# after its last phase ends or herd fires ([phase NAME] end, [herd] at),
# printed in whole seconds when that is shorter than its [run] duration;
# nothing otherwise (no [run] duration given, or a unit it cannot read).
function secs(v,   n, u) {
    gsub(/[ \t]/, "", v)
    n = v + 0; u = v; sub(/^[0-9.]+/, "", u)
    if (u == "ms") return n / 1000
    if (u == "s") return n
    if (u == "m") return n * 60
    if (u == "h") return n * 3600
    bad = 1
    return 0
}
{ sub(/;.*/, "") }
/^[ \t]*\[/ { sect = $0; gsub(/[][ \t]/, "", sect); next }
sect == "run" && /^[ \t]*duration[ \t]*=/ { v = $0; sub(/^[^=]*=/, "", v); dur = secs(v) }
sect ~ /^phase/ && /^[ \t]*end[ \t]*=/ { v = $0; sub(/^[^=]*=/, "", v); t = secs(v); if (t > last) last = t }
sect == "herd" && /^[ \t]*at[ \t]*=/ {
    v = $0; sub(/^[^=]*=/, "", v); n = split(v, at, ",")
    for (i = 1; i <= n; i++) { t = secs(at[i]); if (t > last) last = t }
}
END {
    d = int(last + 20 + 0.999)
    if (!bad && dur > 0 && d < dur) print d
}
