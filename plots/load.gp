# Load over time (timeseries.csv): offered requests, attempts reaching the
# server, goodput; phases shaded and labelled.
# Variables set by retrystorm: out, term, title, nphases and the arrays
# phase_from, phase_to (s), phase_name.
if (term eq 'svg') { set terminal svg size 1200,600 dynamic enhanced font 'Sans,12' } else { set terminal pngcairo size 1200,600 enhanced font 'Sans,12' }
set output out
set datafile separator ','
set title sprintf('%s: load over time', title) noenhanced
set xlabel 'simulated time (s)'
set ylabel 'per second'
set key outside right top
set grid
set yrange [0:*]
do for [i=1:nphases] {
    set object i rect from phase_from[i], graph 0 to phase_to[i], graph 1 behind fc rgb '#E8E8E8' fs solid 1.0 noborder
    set label i phase_name[i] at (phase_from[i] + phase_to[i]) / 2, graph 0.97 center front textcolor rgb '#555555' noenhanced
}
plot 'timeseries.csv' using 't':'offered' with lines lw 2 lc rgb '#000000' title 'offered requests', \
     '' using 't':'server_arrivals' with lines lw 2 lc rgb '#D55E00' title 'attempts reaching the server', \
     '' using 't':'ok' with lines lw 2 lc rgb '#009E73' title 'goodput (ok)'
