# Load over time from a run directory's timeseries.csv.
# usage: gnuplot -e "dir='out/storm'; out='out/storm/load.png'" plots/load.gp
# Offered requests, attempts reaching the server and goodput (ok per second),
# with the queue length on a second axis. Colours from the Okabe-Ito palette,
# distinguishable for colour-blind readers and in print.
if (!exists("dir")) dir = 'out/storm'
if (!exists("out")) out = dir.'/load.png'
set terminal pngcairo size 1200,600 enhanced font 'Sans,11'
set output out
set datafile separator ','
set key autotitle columnhead top left
set title sprintf("retrystorm: load over time (%s)", dir) noenhanced
set xlabel 'simulated time (s)'
set ylabel 'rate (per second)'
set y2label 'queue length (requests)'
set ytics nomirror
set y2tics
set grid
set style line 1 lc rgb '#000000' lw 2
set style line 2 lc rgb '#D55E00' lw 2
set style line 3 lc rgb '#009E73' lw 2
set style line 4 lc rgb '#0072B2' lw 1 dt 2
plot dir.'/timeseries.csv' using 't':'offered' with lines ls 1 title 'offered requests/s', \
     '' using 't':'server_arrivals' with lines ls 2 title 'attempts reaching the server/s', \
     '' using 't':'ok' with lines ls 3 title 'goodput (ok/s)', \
     '' using 't':'queue_len' axes x1y2 with lines ls 4 title 'queue length (right axis)'
