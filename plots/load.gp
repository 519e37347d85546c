# Load over time (timeseries.csv): offered requests, attempts reaching the
# server, goodput; phases shaded and labelled. As an animated GIF (term
# 'gif', `frames` frames) the lines grow over simulated time on fixed axes.
# At fine buckets, rolling means (smooth_n buckets, smooth_s s; roll() from
# plot.c) and needles at the attempts' buckets over 10x their mean. The
# axes are computed once from the data drawn, so the GIF's match the
# PNG's; with slide = 1 the legend sits under the plot.
# Variables set by retrystorm (besides the look: fig_width, fig_height,
# font_scale, line_scale, style_palette, frames): out, term, title, nphases
# and the arrays phase_from, phase_to (s), phase_name; ts_data
# (timeseries.csv, or its rows decimated for drawing, dec buckets a run:
# each run's minimum and maximum, and its means in NAME_mean, which the
# rolling means are taken of; see plotdec.h).
m(c) = dec > 1 ? c.'_mean' : c
if (term eq 'svg') { set terminal svg size fig_width(1200),fig_height(600) dynamic enhanced font 'Sans,12' fontscale font_scale linewidth line_scale } else { set terminal pngcairo size fig_width(1200),fig_height(600) enhanced font 'Sans,12' fontscale font_scale linewidth line_scale }
if (term eq 'gif') { set terminal gif animate delay int(600 / frames) loop 0 size fig_width(1200),fig_height(600) font 'Sans,12' fontscale font_scale linewidth line_scale }
set output out
set datafile separator ','
set title (title_given ? title : sprintf('%s: load over time', title)) noenhanced
set xlabel 'simulated time (s)'
set ylabel 'per second'
if (slide) { set key below center horizontal noenhanced } else { set key outside right top noenhanced }
set grid
do for [i=1:nphases] {
    set object i rect from phase_from[i], graph 0 to phase_to[i], graph 1 behind fc rgb '#E8E8E8' fs solid 1.0 noborder
    set label i phase_name[i] at (phase_from[i] + phase_to[i]) / 2, graph 0.97 center front textcolor rgb '#555555' noenhanced
}
tcut = 1e300 # an animation's frame shows the rows up to tcut
upto(x) = column('t') <= tcut ? x : NaN
# at fine buckets (smooth_n > 1) rolling means, and needles at the buckets
# of attempts over 10x theirs (a herd's waves)
smooth = smooth_n > 1 || dec > 1
if (smooth) { set key title sprintf('lines: %g s averages', floor(smooth_s * 10 + 0.5) / 10) }
spiky = smooth ? sprintf('thin spikes: %g ms bursts (over 10x the average)', bucket_s * 1000) : ''
spike(x) = smooth && x > 10 * rs_mean ? x : NaN
# an instant that dwarfs the rest (a herd): a log scale, the peak named
stats ts_data using 'server_arrivals' nooutput
amax = STATS_max
stats ts_data using (column(m('server_arrivals'))) nooutput
logy = amax > 50 * (STATS_mean > 0 ? STATS_mean : 1)
floor1(x) = (logy && x < 1) ? 1 : x
# The axes, once, from what is drawn: the PNG, the SVG and every frame of
# the GIF share them (the run's time; up to the highest line or needle).
nz(x) = x == x ? x : 0 # NaN (nothing drawn) counts as 0
max2(a, b) = a > b ? a : b
stats ts_data using 't' nooutput
t0 = STATS_min
t1 = STATS_max
set xrange [t0:t1]
ymax = 0
stats ts_data using (roll(1, column('t'), column(m('offered')))):(rs_mean) nooutput
ymax = STATS_max_y > ymax ? STATS_max_y : ymax
stats ts_data using (roll(2, column('t'), column(m('server_arrivals')))):(max2(rs_mean, nz(spike(column('server_arrivals'))))) nooutput
ymax = STATS_max_y > ymax ? STATS_max_y : ymax
stats ts_data using (roll(3, column('t'), column(m('ok')))):(rs_mean) nooutput
ymax = STATS_max_y > ymax ? STATS_max_y : ymax
set yrange [0:(ymax > 0 ? ymax * 1.05 : 1)]
if (logy) {
    set logscale y
    set yrange [1:amax * 2]
    set ylabel 'per second (log scale)'
    set label 99 sprintf('peak %.0f/s', amax) at graph 0.99, graph 0.90 right front noenhanced
}
do for [k=1:frames] {
    if (frames > 1) { tcut = t0 + (t1 - t0) * k / frames }
    plot ts_data using (roll(1, column('t'), column(m('offered')))):(upto(floor1(rs_mean))) with lines lw 2 lc rgb '#000000' title 'offered requests', \
         '' using (roll(2, column('t'), column(m('server_arrivals')))):(upto(floor1(rs_mean))) with lines lw 2 lc rgb '#D55E00' title 'attempts reaching the server', \
         '' using (roll(2, column('t'), column(m('server_arrivals'))), column('t')):(upto(spike(column('server_arrivals')))) with impulses lw 1 lc rgb '#D55E00' title spiky, \
         '' using (roll(3, column('t'), column(m('ok')))):(upto(floor1(rs_mean))) with lines lw 2 lc rgb '#009E73' title 'goodput (ok)'
}
