# A comparison (compare's combined timeseries.csv): attempts reaching the
# server and goodput over time, one line per variant.
# Variables set by retrystorm: out, term, title, variants (an array), nphases
# and the arrays phase_from, phase_to (s), phase_name.
if (term eq 'svg') { set terminal svg size 1200,900 dynamic enhanced font 'Sans,12' } else { set terminal pngcairo size 1200,900 enhanced font 'Sans,12' }
set output out
set datafile separator ','
palette = '#000000 #E69F00 #56B4E9 #009E73 #0072B2 #D55E00 #CC79A7 #F0E442 #999999'
set multiplot layout 2,1 title sprintf('%s: variants compared on the same seed', title) noenhanced
set xlabel 'simulated time (s)'
set key top right opaque box noenhanced
set grid
set yrange [0:*]
do for [i=1:nphases] {
    set object i rect from phase_from[i], graph 0 to phase_to[i], graph 1 behind fc rgb '#E8E8E8' fs solid 1.0 noborder
    set label i phase_name[i] at (phase_from[i] + phase_to[i]) / 2, graph 0.97 center front textcolor rgb '#555555' noenhanced
}
set ylabel 'attempts reaching the server per second'
plot for [i=1:|variants|] 'timeseries.csv' \
     using 't':(strcol('variant') eq variants[i] ? column('server_arrivals') : NaN) \
     with lines lw 2 lc rgb word(palette, (i - 1) % 9 + 1) title variants[i]
set ylabel 'goodput (ok per second)'
plot for [i=1:|variants|] 'timeseries.csv' \
     using 't':(strcol('variant') eq variants[i] ? column('ok') : NaN) \
     with lines lw 2 lc rgb word(palette, (i - 1) % 9 + 1) title variants[i]
unset multiplot
