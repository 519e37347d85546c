# Latency percentiles of the requests that ended in each bucket (timeseries.csv).
# Variables set by retrystorm (besides the look: fig_width, fig_height,
# font_scale, line_scale, style_palette, frames): out, term, title, nphases and the arrays
# phase_from, phase_to (s), phase_name; ts_data (timeseries.csv, or its
# rows decimated for drawing: a run's minimum and maximum, see plotdec.h).
if (term eq 'svg') { set terminal svg size fig_width(1200),fig_height(600) dynamic enhanced font 'Sans,12' fontscale font_scale linewidth line_scale } else { set terminal pngcairo size fig_width(1200),fig_height(600) enhanced font 'Sans,12' fontscale font_scale linewidth line_scale }
set output out
set datafile separator ','
set title (title_given ? title : sprintf('%s: latency over time', title)) noenhanced
set xlabel 'simulated time (s)'
set ylabel 'latency of requests ending in the bucket (s)'
set logscale y
set format y '10^{%L}' # decades, not 0.0000010
if (slide) { set key below center horizontal } else { set key outside right top }
set grid
do for [i=1:nphases] {
    set object i rect from phase_from[i], graph 0 to phase_to[i], graph 1 behind fc rgb '#E8E8E8' fs solid 1.0 noborder
    set label i phase_name[i] at (phase_from[i] + phase_to[i]) / 2, graph 0.97 center front textcolor rgb '#555555' noenhanced
}
pos(x) = x > 0 ? x : NaN
plot ts_data using 't':(pos(column('lat_p50'))) with lines lw 2 lc rgb '#0072B2' title 'p50', \
     '' using 't':(pos(column('lat_p99'))) with lines lw 2 lc rgb '#D55E00' title 'p99'
