# Attempts per logical request (attempts.csv): the outermost layer and the server.
# Variables set by retrystorm (besides the look: fig_width, fig_height,
# font_scale, line_scale, style_palette, frames): out, term, title, levels (an array).
if (term eq 'svg') { set terminal svg size fig_width(900),fig_height(600) dynamic enhanced font 'Sans,12' fontscale font_scale linewidth line_scale } else { set terminal pngcairo size fig_width(900),fig_height(600) enhanced font 'Sans,12' fontscale font_scale linewidth line_scale }
set output out
set datafile separator ','
set title sprintf('%s: attempts per logical request', title) noenhanced
set xlabel 'attempts'
set ylabel 'share of logical requests'
set yrange [0:1]
set style fill solid 0.6 border -1
set boxwidth 0.4
set key outside right top noenhanced
set grid y
# whole attempts only: a tick at each when there are few (not at 0.5, 1.5)
stats 'attempts.csv' using 'attempts' nooutput
if (STATS_max <= 20) { set xtics 1 } else { set xtics }
set format x '%.0f'
palette = '#0072B2 #D55E00 #009E73 #E69F00 #CC79A7 #56B4E9 #000000 #F0E442 #999999'
if (style_palette ne '') { palette = style_palette } # --style slide
n = |levels|
plot for [i=1:n] 'attempts.csv' \
     using (strcol('level') eq levels[i] ? column('attempts') + (i - (n + 1) / 2.0) * 0.4 / n : NaN):'share' \
     with boxes lc rgb word(palette, i) title levels[i]
