# One service of a graph (services.csv), over time: its load, its queue and
# its workers, from the service's total rows (replica 0), with the workers
# held by each of its first replicas; phases shaded and labelled.
# Variables set by retrystorm (besides the look: fig_width, fig_height,
# font_scale, line_scale, style_palette, frames): out, term, title, service (its name),
# replicas (its highest replica number; 0: a single replica), nrep (the
# replicas drawn, at most 8), nphases and the arrays phase_from, phase_to
# (s), phase_name; svc_data (services.csv, or its rows decimated for
# drawing: each run's minimum and maximum, and the means of utilization
# and busy, which the workers are drawn from; see plotdec.h).
m(c) = svc_data ne 'services.csv' ? c.'_mean' : c
if (term eq 'svg') { set terminal svg size fig_width(1200),fig_height(1100) dynamic enhanced font 'Sans,12' fontscale font_scale linewidth line_scale } else { set terminal pngcairo size fig_width(1200),fig_height(1100) enhanced font 'Sans,12' fontscale font_scale linewidth line_scale }
set output out
set datafile separator ','
set datafile missing NaN # the other services' rows: skipped, lines not broken
more = replicas > nrep ? sprintf(' (workers held: replicas 1 to %d of %d)', nrep, replicas) : ''
set multiplot layout 3,1 title sprintf('%s: service %s%s', title, service, more) noenhanced
set xlabel 'simulated time (s)'
set key outside right top box noenhanced
set lmargin 12 # fixed margins: the three time axes line up
set rmargin 32
set grid
set yrange [0:*]
do for [i=1:nphases] {
    set object i rect from phase_from[i], graph 0 to phase_to[i], graph 1 behind fc rgb '#E8E8E8' fs solid 1.0 noborder
    set label i phase_name[i] at (phase_from[i] + phase_to[i]) / 2, graph 0.97 center front textcolor rgb '#555555' noenhanced
}
palette = '#E69F00 #56B4E9 #009E73 #F0E442 #0072B2 #D55E00 #CC79A7 #999999'
if (style_palette ne '') { palette = style_palette } # --style slide
at(r, col) = strcol('service') eq service && column('replica') == r ? column(col) : NaN
workers(u, b) = u > 0 ? b / u : NaN
set ylabel 'per second'
plot svc_data using 't':(at(0, 'arrivals')) with lines lw 2 lc rgb '#000000' title 'arrivals', \
     '' using 't':(at(0, 'completed')) with lines lw 2 lc rgb '#009E73' title 'completed', \
     '' using 't':(at(0, 'rejected')) with lines lw 2 lc rgb '#D55E00' title 'rejected', \
     '' using 't':(at(0, 'wasted')) with lines lw 2 lc rgb '#E69F00' title 'wasted (nobody waiting)'
set ylabel 'queue length (time average)'
plot svc_data using 't':(at(0, 'queue_len')) with lines lw 2 lc rgb '#0072B2' title 'queue length'
set ylabel 'workers (time average)'
plot svc_data using 't':(workers(at(0, m('utilization')), at(0, m('busy')))) with lines lw 1 dt 3 lc rgb '#000000' title 'workers', \
     '' using 't':(at(0, 'busy')) with lines lw 2 lc rgb '#000000' title 'held (busy)', \
     '' using 't':(at(0, 'working')) with lines lw 2 dt 2 lc rgb '#000000' title 'doing local work', \
     for [k=1:nrep] '' using 't':(at(k, 'busy')) with lines lw 1.5 lc rgb word(palette, k) title sprintf('held at replica %d', k)
unset multiplot
