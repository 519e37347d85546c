# One service of a graph in a comparison: its load (arrivals per second),
# its queue and the workers it holds over time, one line per variant (the
# first drawn last, on top, the later ones wider so that lines that
# coincide show as stripes), from each variant's services.csv (the
# service's total rows, replica 0); phases shaded and labelled.
# Variables set by retrystorm (besides the look: fig_width, fig_height,
# font_scale, line_scale, style_palette, frames): out, term, title, service
# (its name), variants (an array), nphases and the arrays phase_from,
# phase_to (s), phase_name; the datablocks $svc_1, $svc_2, ... (variant
# i's services.csv, its rows decimated for drawing when long: each run's
# minimum and maximum; see plotdec.h).
if (term eq 'svg') { set terminal svg size fig_width(1200),fig_height(1100) dynamic enhanced font 'Sans,12' fontscale font_scale linewidth line_scale } else { set terminal pngcairo size fig_width(1200),fig_height(1100) enhanced font 'Sans,12' fontscale font_scale linewidth line_scale }
set output out
set datafile separator ','
set datafile missing NaN # the other services' rows: skipped, lines not broken
# landscape (--style slide, a wide --size): the panels side by side, the
# legend under them; else stacked, the legend beside the first
wide = fig_width(1200) > 1.3 * fig_height(1100)
lw = 0
do for [i=1:|legends|] { lw = strlen(legends[i]) > lw ? strlen(legends[i]) : lw }
if (wide) { set multiplot layout 1,3 title (title_given ? sprintf('%s: service %s', title, service) : sprintf('%s: service %s, variants compared on the same seed', title, service)) noenhanced margins 0.1,0.98,0.22,0.9 spacing 0.1,0 } else { set multiplot layout 3,1 title (title_given ? sprintf('%s: service %s', title, service) : sprintf('%s: service %s, variants compared on the same seed', title, service)) noenhanced; set lmargin 12; set rmargin lw + 10 }
set xlabel 'simulated time (s)'
if (wide) { set key at screen 0.5, screen 0.02 center bottom horizontal noenhanced invert } else { set key outside right top box noenhanced invert }
set grid
set yrange [0:*]
do for [i=1:nphases] {
    set object i rect from phase_from[i], graph 0 to phase_to[i], graph 1 behind fc rgb '#E8E8E8' fs solid 1.0 noborder
    set label i phase_name[i] at (phase_from[i] + phase_to[i]) / 2, graph 0.97 center front textcolor rgb '#555555' noenhanced
}
palette = '#000000 #E69F00 #56B4E9 #009E73 #0072B2 #D55E00 #CC79A7 #F0E442 #999999'
if (style_palette ne '') { palette = style_palette } # --style slide
lc(i) = word(palette, (i - 1) % 9 + 1)
# later variants drawn wider, under the earlier: lines that coincide show as stripes
lwv(i) = 1.5 + (i - 1 < 3 ? i - 1 : 3) * 1.8
block(i) = sprintf('$svc_%d', i)
at(col) = strcol('service') eq service && column('replica') == 0 ? column(col) : NaN
set ylabel 'arrivals/s (load)'
plot for [i=|variants|:1:-1] block(i) using 't':(at('arrivals')) with lines lw lwv(i) lc rgb lc(i) title legends[i]
unset key # one legend: the variants are the same in every panel
set ylabel 'queue length (mean)'
plot for [i=|variants|:1:-1] block(i) using 't':(at('queue_len')) with lines lw lwv(i) lc rgb lc(i) title legends[i]
set ylabel 'workers held (mean)'
plot for [i=|variants|:1:-1] block(i) using 't':(at('busy')) with lines lw lwv(i) lc rgb lc(i) title legends[i]
unset multiplot
