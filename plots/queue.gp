# Queue length, requests in flight and busy workers over time (timeseries.csv).
# Variables set by retrystorm (besides the look: fig_width, fig_height,
# font_scale, line_scale, style_palette, frames): out, term, title, nphases and the arrays
# phase_from, phase_to (s), phase_name; ts_data (timeseries.csv, or its
# rows decimated for drawing: a run's minimum and maximum, see plotdec.h).
if (term eq 'svg') { set terminal svg size fig_width(1200),fig_height(600) dynamic enhanced font 'Sans,12' fontscale font_scale linewidth line_scale } else { set terminal pngcairo size fig_width(1200),fig_height(600) enhanced font 'Sans,12' fontscale font_scale linewidth line_scale }
set output out
set datafile separator ','
set title (title_given ? title : sprintf('%s: queue and work in progress', title)) noenhanced
set xlabel 'simulated time (s)'
set ylabel 'requests (time average over the bucket)'
set y2label 'busy workers'
set ytics nomirror
set y2tics
set yrange [0:*]
# headroom above the busy workers, so that a full service's line does not
# hide on the top border
stats ts_data using 'busy' nooutput
set y2range [0:(STATS_max > 0 ? STATS_max * 1.1 : 1)]
if (slide) { set key below center horizontal } else { set key outside right top }
set grid
do for [i=1:nphases] {
    set object i rect from phase_from[i], graph 0 to phase_to[i], graph 1 behind fc rgb '#E8E8E8' fs solid 1.0 noborder
    set label i phase_name[i] at (phase_from[i] + phase_to[i]) / 2, graph 0.97 center front textcolor rgb '#555555' noenhanced
}
plot ts_data using 't':'queue_len' with lines lw 2 lc rgb '#0072B2' title 'queue length', \
     '' using 't':'in_flight' with lines lw 2 lc rgb '#E69F00' title 'logical requests in flight', \
     '' using 't':'busy' axes x1y2 with lines lw 1 dt 2 lc rgb '#000000' title 'busy workers (right axis)'
