# Load over time (timeseries.csv): offered requests, attempts reaching the
# server, goodput; phases shaded and labelled.
# Variables set by retrystorm: dir, out, term, title, phases.
if (term eq 'svg') { set terminal svg size 1200,600 dynamic enhanced font 'Sans,12' } else { set terminal pngcairo size 1200,600 enhanced font 'Sans,12' }
set output out
set datafile separator ','
set title sprintf('%s: load over time', title) noenhanced
set xlabel 'simulated time (s)'
set ylabel 'per second'
set key top right opaque box
set grid
set yrange [0:*]
eval(phases)
plot dir.'/timeseries.csv' using 't':'offered' with lines lw 2 lc rgb '#000000' title 'offered requests', \
     '' using 't':'server_arrivals' with lines lw 2 lc rgb '#D55E00' title 'attempts reaching the server', \
     '' using 't':'ok' with lines lw 2 lc rgb '#009E73' title 'goodput (ok)'
