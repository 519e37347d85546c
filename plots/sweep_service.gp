# One service of a graph in a sweep (sweep.csv's <service>_ columns): the
# attempts that reached it, its mean queue and the share of its workers
# held, over the sweep's first key, a line per value of its second key (one
# line for one key), with 95 % error bars over replications.
# Variables set by retrystorm (besides the look: fig_width, fig_height,
# font_scale, line_scale, style_palette): out, term, title, service (its
# name), key1, key2 ('' for one key), xs, ys (the keys' values; ys [''] for
# one key), nys (0 for one key). sweep.csv's rows are in point order, the
# second key's values within each of the first's.
if (term eq 'svg') { set terminal svg size fig_width(1200),fig_height(1000) dynamic enhanced font 'Sans,12' fontscale font_scale linewidth line_scale } else { set terminal pngcairo size fig_width(1200),fig_height(1000) enhanced font 'Sans,12' fontscale font_scale linewidth line_scale }
set output out
set datafile separator ','
nx = |xs|
ny = nys > 0 ? nys : 1
wide = fig_width(1200) > 1.3 * fig_height(1000)
lw = strlen(key2) + 12
do for [j=1:|ys|] { lw = strlen(ys[j]) + strlen(key2) + 3 > lw ? strlen(ys[j]) + strlen(key2) + 3 : lw }
head = (title_given ? sprintf('%s: service %s', title, service) : sprintf('%s: service %s over %s (mean and 95%% interval over replications)', title, service, key1))
if (wide) { set multiplot layout 1,3 title head noenhanced margins 0.1,0.98,0.22,0.9 spacing 0.1,0 } else { set multiplot layout 3,1 title head noenhanced; set lmargin 12; set rmargin (nys > 0 ? lw + 10 : 4) }
set xtics () noenhanced
do for [i=1:nx] { set xtics add (xs[i] i - 1) }
set xrange [-0.5:nx - 0.5]
set xlabel key1 noenhanced
set grid
if (nys == 0) { set key off } else { if (wide) { set key at screen 0.5, screen 0.02 center bottom horizontal noenhanced } else { set key outside right top box noenhanced } }
palette = '#0072B2 #D55E00 #009E73 #CC79A7 #E69F00 #56B4E9 #000000 #F0E442 #999999'
if (style_palette ne '') { palette = style_palette } # --style slide
lc(j) = word(palette, (j - 1) % 9 + 1)
hw(m) = strcol(m.'_hw') eq '' ? 0 : column(m.'_hw')
name(j) = nys > 0 ? sprintf('%s = %s', key2, ys[j]) : ''
array ms[3]
ms[1] = service.'_calls'
ms[2] = service.'_queue_mean'
ms[3] = service.'_utilization'
array ml[3] = ['attempts that reached it', 'queue length (mean)', 'workers held (share)']
do for [k=1:3] {
    set ylabel ml[k]
    set yrange [0:*]
    if (k == 3) { set yrange [0:1.05] }
    plot for [j=1:ny] 'sweep.csv' every ny::(j - 1) using (floor(column('point') / ny)):(column(ms[k])):(hw(ms[k])) \
         with yerrorlines lw 2 pt 7 lc rgb lc(j) title name(j)
    unset key # one legend: the lines are the same in every panel
}
unset multiplot
