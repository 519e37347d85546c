# Attempts per logical request (attempts.csv): a run's at each level (the
# outermost layer and the server), or a comparison's at its outermost
# level, a bar per variant.
# Variables set by retrystorm (besides the look: fig_width, fig_height,
# font_scale, line_scale, style_palette, frames): out, term, title, levels
# (an array), variants (an array; [''] for a run).
if (term eq 'svg') { set terminal svg size fig_width(900),fig_height(600) dynamic enhanced font 'Sans,12' fontscale font_scale linewidth line_scale } else { set terminal pngcairo size fig_width(900),fig_height(600) enhanced font 'Sans,12' fontscale font_scale linewidth line_scale }
set output out
set datafile separator ','
byvar = variants[1] ne ''
set title (title_given ? title : sprintf(byvar ? '%s: attempts per logical request by variant' : '%s: attempts per logical request', title)) noenhanced
set xlabel (byvar ? sprintf('attempts (layer %s)', levels[1]) : 'attempts') noenhanced
set ylabel 'share of logical requests'
set yrange [0:1]
set style fill solid 0.6 border -1
set boxwidth 0.4
if (slide) { set key below center horizontal noenhanced } else { set key outside right top noenhanced }
set grid y
# whole attempts only: a tick at each when there are few (not at 0.5, 1.5)
stats 'attempts.csv' using 'attempts' nooutput
if (STATS_max <= 20) { set xtics 1 } else { set xtics }
set format x '%.0f'
palette = '#0072B2 #D55E00 #009E73 #E69F00 #CC79A7 #56B4E9 #000000 #F0E442 #999999'
if (byvar) { palette = '#000000 #E69F00 #56B4E9 #009E73 #0072B2 #D55E00 #CC79A7 #F0E442 #999999' } # compare's
if (style_palette ne '') { palette = style_palette } # --style slide
if (byvar) {
    n = |variants|
    set boxwidth 0.8 / n
    plot for [i=1:n] 'attempts.csv' \
         using (strcol('variant') eq variants[i] && strcol('level') eq levels[1] ? column('attempts') + (i - (n + 1) / 2.0) * 0.8 / n : NaN):'share' \
         with boxes lc rgb word(palette, (i - 1) % 9 + 1) title legends[i]
} else {
    n = |levels|
    plot for [i=1:n] 'attempts.csv' \
         using (strcol('level') eq levels[i] ? column('attempts') + (i - (n + 1) / 2.0) * 0.4 / n : NaN):'share' \
         with boxes lc rgb word(palette, i) title levels[i]
}
