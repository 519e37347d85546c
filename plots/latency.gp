# Latency percentiles of the requests that ended in each bucket (timeseries.csv).
# Variables set by retrystorm: dir, out, term, title, phases.
if (term eq 'svg') { set terminal svg size 1200,600 dynamic enhanced font 'Sans,12' } else { set terminal pngcairo size 1200,600 enhanced font 'Sans,12' }
set output out
set datafile separator ','
set title sprintf('%s: latency over time', title) noenhanced
set xlabel 'simulated time (s)'
set ylabel 'latency of requests ending in the bucket (s)'
set logscale y
set key top right opaque box
set grid
eval(phases)
pos(x) = x > 0 ? x : NaN
plot dir.'/timeseries.csv' using 't':(pos(column('lat_p50'))) with lines lw 2 lc rgb '#0072B2' title 'p50', \
     '' using 't':(pos(column('lat_p99'))) with lines lw 2 lc rgb '#D55E00' title 'p99'
