# A sweep (sweep.csv): one metric over one key (line with 95 % error bars)
# or two keys (heat map, the first key across, the second up).
# Variables set by retrystorm (besides the look: fig_width, fig_height,
# font_scale, line_scale, style_palette, frames): out, term, title, metric, key1, key2 ('' for one key),
# xs, ys (arrays of the keys' values; ys [''] for one key), nys (0 for one key).
if (term eq 'svg') { set terminal svg size fig_width(900),fig_height(650) dynamic enhanced font 'Sans,12' fontscale font_scale linewidth line_scale } else { set terminal pngcairo size fig_width(900),fig_height(650) enhanced font 'Sans,12' fontscale font_scale linewidth line_scale }
set output out
set datafile separator ','
nx = |xs|
set xtics () noenhanced
do for [i=1:nx] { set xtics add (xs[i] i - 1) }
set xrange [-0.5:nx - 0.5]
set xlabel key1 noenhanced
if (key2 eq '') {
    set title sprintf('%s: %s (mean and 95%% interval over replications)', title, metric) noenhanced
    set ylabel metric noenhanced
    set grid
    set key off
    plot 'sweep.csv' using (column('point')):(column(metric)):(column(metric.'_hw')) \
         with yerrorlines lw 2 pt 7 lc rgb '#0072B2'
} else {
    ny = nys
    set ytics () noenhanced
    do for [j=1:ny] { set ytics add (ys[j] j - 1) }
    set yrange [-0.5:ny - 0.5]
    set ylabel key2 noenhanced
    set title sprintf('%s: %s (mean over replications)', title, metric) noenhanced
    set palette defined (0 '#FDE725', 0.5 '#21918C', 1 '#440154')
    set cblabel metric noenhanced
    set style textbox opaque fc rgb '#FFFFFF' noborder
    plot 'sweep.csv' using (floor(column('point') / ny)):(int(column('point')) % ny):(column(metric)) \
         with image notitle, \
         '' using (floor(column('point') / ny)):(int(column('point')) % ny):(sprintf('%.3g', column(metric))) \
         with labels boxed font ',10' textcolor rgb '#000000' notitle
}
