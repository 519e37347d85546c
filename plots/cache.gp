# One cache (caches.csv), over time: its hit ratio (hits / lookups per
# bucket; a gap where it had no lookups) with its entries, and its lookups,
# misses, coalesced misses, expirations and evictions per second; phases
# shaded and labelled.
# Variables set by retrystorm (besides the look: fig_width, fig_height,
# font_scale, line_scale, style_palette, frames): out, term, title, cache (its name), ncaches
# (the caches of caches.csv) and slot (this cache's place among them, from
# 0: its rows are every ncaches-th from row slot, which retrystorm checked),
# nphases and the arrays phase_from, phase_to (s), phase_name; cache_data
# (caches.csv, or its rows decimated for drawing: each run's minimum and
# maximum, and the means of hits and lookups, which the hit ratio is taken
# of; see plotdec.h).
m(c) = cache_data ne 'caches.csv' ? c.'_mean' : c
if (term eq 'svg') { set terminal svg size fig_width(1200),fig_height(800) dynamic enhanced font 'Sans,12' fontscale font_scale linewidth line_scale } else { set terminal pngcairo size fig_width(1200),fig_height(800) enhanced font 'Sans,12' fontscale font_scale linewidth line_scale }
set output out
set datafile separator ','
set datafile columnheaders # also for stats, whose using names no column: `every` counts rows after the header
# No "set datafile missing NaN": a NaN (a bucket without lookups) breaks the
# line. Rows of the other caches are passed over by `every`, not by NaN.
at(col) = strcol('cache') eq cache ? column(col) : NaN
ratio(h, n) = n > 0 ? h / n : NaN
stats cache_data every ncaches::slot using (at('entries')) nooutput
emax = 1 # the right axis: 30 % above the most entries, below a full hit ratio
if (exists('STATS_max') && STATS_max > 0) { emax = STATS_max }
set multiplot layout 2,1 title sprintf('%s: cache %s', title, cache) noenhanced
set xlabel 'simulated time (s)'
set key outside right top box noenhanced
set lmargin 12 # fixed margins: the two time axes line up
set rmargin 34
set grid
do for [i=1:nphases] {
    set object i rect from phase_from[i], graph 0 to phase_to[i], graph 1 behind fc rgb '#E8E8E8' fs solid 1.0 noborder
    set label i phase_name[i] at (phase_from[i] + phase_to[i]) / 2, graph 0.97 center front textcolor rgb '#555555' noenhanced
}
set ylabel 'hit ratio (hits / lookups)'
set yrange [0:1.05]
set ytics 0, 0.2, 1 nomirror
set y2label 'entries'
set y2range [0:emax * 1.3]
set y2tics
plot cache_data every ncaches::slot using 't':(ratio(at(m('hits')), at(m('lookups')))) with linespoints lw 2 pt 7 ps 0.25 lc rgb '#0072B2' title 'hit ratio', \
     '' every ncaches::slot using 't':(at('entries')) axes x1y2 with lines lw 1.5 dt 2 lc rgb '#555555' title 'entries (right)'
unset y2label
unset y2tics
set ytics mirror autofreq
set yrange [0:*]
set ylabel 'per second'
plot cache_data every ncaches::slot using 't':(at('lookups')) with lines lw 2 lc rgb '#000000' title 'lookups', \
     '' every ncaches::slot using 't':(at('misses')) with lines lw 2 lc rgb '#D55E00' title 'misses', \
     '' every ncaches::slot using 't':(at('coalesced')) with lines lw 2 lc rgb '#009E73' title 'coalesced', \
     '' every ncaches::slot using 't':(at('expirations')) with lines lw 2 lc rgb '#E69F00' title 'expirations', \
     '' every ncaches::slot using 't':(at('evictions')) with lines lw 1.5 dt 2 lc rgb '#CC79A7' title 'evictions'
unset multiplot
