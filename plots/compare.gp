# A comparison (compare's combined timeseries.csv): attempts reaching the
# server and goodput over time, one line per variant, the first drawn last
# (on top); legends outside the data (on a slide one, under the lower
# panel), panels on one left margin. One
# instant that dwarfs the rest (a herd) turns the attempts to a log scale,
# its peak named. At fine buckets (smooth_n > 1) lines are rolling means
# and the attempts' needles mark buckets over 10x theirs. As a GIF
# (`frames` frames) the lines grow over time on fixed axes.
# Variables set by retrystorm (besides the look: fig_width, fig_height,
# font_scale, line_scale, style_palette, frames): out, term, title,
# title_given (1: --title, the whole title), variants and legends (their
# texts in the legend: --label's or the label, none in words) (arrays), nphases, phase_from, phase_to (s), phase_name, bucket_s,
# smooth_n, smooth_s and roll() (see plot.c); ts_data (timeseries.csv, or
# its rows decimated for drawing, dec buckets a run: each run's minimum and
# maximum, and its means in NAME_mean, which the rolling means are taken
# of; see plotdec.h).
m(c) = dec > 1 ? c.'_mean' : c
if (term eq 'svg') { set terminal svg size fig_width(1200),fig_height(900) dynamic enhanced font 'Sans,12' fontscale font_scale linewidth line_scale } else { set terminal pngcairo size fig_width(1200),fig_height(900) enhanced font 'Sans,12' fontscale font_scale linewidth line_scale }
if (term eq 'gif') { set terminal gif animate delay int(600 / frames) loop 0 size fig_width(1200),fig_height(900) font 'Sans,12' fontscale font_scale linewidth line_scale }
set output out
set datafile separator ','
palette = '#000000 #E69F00 #56B4E9 #009E73 #0072B2 #D55E00 #CC79A7 #F0E442 #999999'
if (style_palette ne '') { palette = style_palette } # --style slide
set xlabel 'simulated time (s)'
if (slide) { set key below center horizontal noenhanced invert } else { set key outside right top noenhanced invert }
set grid
set lmargin 12
do for [i=1:nphases] {
    set object i rect from phase_from[i], graph 0 to phase_to[i], graph 1 behind fc rgb '#E8E8E8' fs solid 1.0 noborder
    set label i phase_name[i] at (phase_from[i] + phase_to[i]) / 2, graph 0.97 center front textcolor rgb '#555555' noenhanced
}
stats ts_data using 'server_arrivals' nooutput
amax = STATS_max
stats ts_data using (column(m('server_arrivals'))) nooutput
logy = amax > 50 * (STATS_mean > 0 ? STATS_mean : 1)
floor1(x) = (logy && x < 1) ? 1 : x # on a log scale empty buckets sit on the floor
tcut = 1e300 # a frame shows the rows up to tcut
upto(x) = column('t') <= tcut ? x : NaN
is(i) = strcol('variant') eq variants[i]
lc(i) = word(palette, (i - 1) % 9 + 1)
smooth = smooth_n > 1 || dec > 1
spike(x) = smooth && x > 10 * rs_mean ? x : NaN
# The axes, once, from what is drawn: the PNG, the SVG and every frame of
# the GIF share them (the run's time; up to the highest line or needle of
# any variant).
nz(x) = x == x ? x : 0 # NaN (nothing drawn) counts as 0
max2(a, b) = a > b ? a : b
stats ts_data using 't' nooutput
t0 = STATS_min
t1 = STATS_max
amax_drawn = 0
okmax = 0
do for [i=1:|variants|] {
    stats ts_data using (is(i) ? roll(i, column('t'), column(m('server_arrivals'))) : NaN):(max2(rs_mean, nz(spike(column('server_arrivals'))))) nooutput
    amax_drawn = max2(amax_drawn, STATS_max_y)
    stats ts_data using (is(i) ? roll(i, column('t'), column(m('ok'))) : NaN):(rs_mean) nooutput
    okmax = max2(okmax, STATS_max_y)
}
amax_drawn = amax_drawn > 0 ? amax_drawn * 1.05 : 1
okmax = okmax > 0 ? okmax * 1.05 : 1
averages = smooth ? sprintf('lines: %g s averages', floor(smooth_s * 10 + 0.5) / 10) : ''
spiky = smooth ? sprintf('thin spikes: %g ms bursts (over 10x the average)', bucket_s * 1000) : ''
spiky2 = smooth ? sprintf("thin spikes: %g ms bursts\n(over 10x the average)", bucket_s * 1000) : '' # beside the plot: narrower
do for [k=1:frames] {
    if (frames > 1) { tcut = t0 + (t1 - t0) * k / frames }
    set multiplot layout 2,1 title (title_given ? title : sprintf('%s: variants compared on the same seed', title)) noenhanced
    set xrange [t0:t1]
    # on a slide the panels are placed (the legend under the lower one
    # would otherwise shrink it) and share the lower one's time label
    if (slide) { set tmargin at screen 0.91; set bmargin at screen 0.60; set xlabel '' }
    set ylabel 'attempts/s at the server'
    set yrange [0:amax_drawn]
    if (logy) {
        set logscale y
        set yrange [1:amax * 2]
        set ylabel 'attempts/s (log scale)'
        set label 99 sprintf('peak %.0f/s', amax) at graph 0.99, graph 0.90 right front noenhanced
    }
    # on a slide one legend, under the lower panel (the same colours above)
    if (slide) { set key off } else { set key title (smooth ? averages."\n".spiky2 : '') }
    if (slide && smooth) { set label 98 spiky at graph 0.01, graph 0.90 left front noenhanced }
    plot for [i=|variants|:1:-1] ts_data \
         using (is(i) ? roll(i, column('t'), column(m('server_arrivals'))) : NaN):(upto(floor1(rs_mean))) \
         with lines lw 2 lc rgb lc(i) title legends[i], \
         for [i=|variants|:1:-1] '' \
         using (is(i) ? (roll(i, column('t'), column(m('server_arrivals'))), column('t')) : NaN):(upto(spike(column('server_arrivals')))) \
         with impulses lw 1 lc rgb lc(i) notitle
    unset logscale y
    unset label 99
    unset label 98
    set yrange [0:okmax]
    set ylabel 'goodput (ok/s)'
    if (slide) { set key on below center horizontal; set tmargin at screen 0.55; set bmargin at screen 0.27; set xlabel 'simulated time (s)' }
    set key title averages
    plot for [i=|variants|:1:-1] ts_data \
         using (is(i) ? roll(i, column('t'), column(m('ok'))) : NaN):(upto(rs_mean)) \
         with lines lw 2 lc rgb lc(i) title legends[i]
    set key title ''
    unset multiplot
}
