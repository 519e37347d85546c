# A comparison (compare's combined timeseries.csv): attempts reaching the
# server and goodput over time, one line per variant, the first drawn last
# (on top). Legends sit outside the data, both panels share a left margin.
# Variables set by retrystorm: out, term, title, variants (an array), nphases
# and the arrays phase_from, phase_to (s), phase_name.
if (term eq 'svg') { set terminal svg size 1200,900 dynamic enhanced font 'Sans,12' } else { set terminal pngcairo size 1200,900 enhanced font 'Sans,12' }
set output out
set datafile separator ','
palette = '#000000 #E69F00 #56B4E9 #009E73 #0072B2 #D55E00 #CC79A7 #F0E442 #999999'
set multiplot layout 2,1 title sprintf('%s: variants compared on the same seed', title) noenhanced
set xlabel 'simulated time (s)'
set key outside right top noenhanced
set grid
set yrange [0:*]
set lmargin 12 # the same left margin in both panels: their time axes line up
do for [i=1:nphases] {
    set object i rect from phase_from[i], graph 0 to phase_to[i], graph 1 behind fc rgb '#E8E8E8' fs solid 1.0 noborder
    set label i phase_name[i] at (phase_from[i] + phase_to[i]) / 2, graph 0.97 center front textcolor rgb '#555555' noenhanced
}
set ylabel 'attempts reaching the server per second'
# one instant that dwarfs the rest (a herd at fine buckets) would flatten
# every other line: then a log scale, the peak named
stats 'timeseries.csv' using 'server_arrivals' nooutput
logy = STATS_max > 50 * (STATS_mean > 0 ? STATS_mean : 1)
floor1(x) = (logy && x < 1) ? 1 : x # on a log scale empty buckets sit on the floor, not in a gap
if (logy) {
    set logscale y
    set yrange [1:*]
    set ylabel 'attempts at the server per second (log scale)'
    set label 99 sprintf('peak %.0f/s', STATS_max) at graph 0.99, graph 0.90 right front noenhanced
}
plot for [i=|variants|:1:-1] 'timeseries.csv' \
     using 't':(strcol('variant') eq variants[i] ? floor1(column('server_arrivals')) : NaN) \
     with lines lw 2 lc rgb word(palette, (i - 1) % 9 + 1) title variants[i]
unset logscale y
unset label 99
set yrange [0:*]
set ylabel 'goodput (ok per second)'
plot for [i=|variants|:1:-1] 'timeseries.csv' \
     using 't':(strcol('variant') eq variants[i] ? column('ok') : NaN) \
     with lines lw 2 lc rgb word(palette, (i - 1) % 9 + 1) title variants[i]
unset multiplot
