# Load over time (timeseries.csv): offered requests, attempts reaching the
# server, goodput; phases shaded and labelled. As an animated GIF (term
# 'gif', `frames` frames) the lines grow over simulated time on fixed axes.
# Variables set by retrystorm (besides the look: fig_width, fig_height,
# font_scale, line_scale, style_palette, frames): out, term, title, nphases
# and the arrays phase_from, phase_to (s), phase_name.
if (term eq 'svg') { set terminal svg size fig_width(1200),fig_height(600) dynamic enhanced font 'Sans,12' fontscale font_scale linewidth line_scale } else { set terminal pngcairo size fig_width(1200),fig_height(600) enhanced font 'Sans,12' fontscale font_scale linewidth line_scale }
if (term eq 'gif') { set terminal gif animate delay 10 loop 0 size fig_width(1200),fig_height(600) font 'Sans,12' fontscale font_scale linewidth line_scale }
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
tcut = 1e300 # an animation's frame shows the rows up to tcut
upto(x) = column('t') <= tcut ? x : NaN
if (frames > 1) { # fixed axes: the whole run's
    stats 'timeseries.csv' using 't' nooutput
    t0 = STATS_min
    t1 = STATS_max
    set xrange [t0:t1]
    stats 'timeseries.csv' using 'offered' nooutput
    ymax = STATS_max
    stats 'timeseries.csv' using 'server_arrivals' nooutput
    ymax = STATS_max > ymax ? STATS_max : ymax
    set yrange [0:(ymax > 0 ? ymax * 1.05 : 1)]
}
do for [k=1:frames] {
    if (frames > 1) { tcut = t0 + (t1 - t0) * k / frames }
    plot 'timeseries.csv' using 't':(upto(column('offered'))) with lines lw 2 lc rgb '#000000' title 'offered requests', \
         '' using 't':(upto(column('server_arrivals'))) with lines lw 2 lc rgb '#D55E00' title 'attempts reaching the server', \
         '' using 't':(upto(column('ok'))) with lines lw 2 lc rgb '#009E73' title 'goodput (ok)'
}
