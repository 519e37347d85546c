# The AWS backoff-and-jitter study (a compare of scenarios/aws-occ.ini over
# load.clients and layer.app.backoff): total write calls and the time the
# last client finishes, against the number of clients, one line per strategy.
# Variables set by retrystorm (besides the look: fig_width, fig_height,
# font_scale, line_scale, style_palette, frames): out, term, title, strategies (an array).
if (term eq 'svg') { set terminal svg size fig_width(1200),fig_height(550) dynamic enhanced font 'Sans,12' fontscale font_scale linewidth line_scale } else { set terminal pngcairo size fig_width(1200),fig_height(550) enhanced font 'Sans,12' fontscale font_scale linewidth line_scale }
set output out
set datafile separator ','
palette = '#000000 #E69F00 #56B4E9 #009E73 #D55E00 #CC79A7 #0072B2'
if (style_palette ne '') { palette = style_palette } # --style slide
set multiplot layout 1,2 title sprintf('%s: optimistic concurrency, base 5 ms, cap 2 s', title) noenhanced
set xlabel 'clients'
set key outside right top noenhanced
set grid
set ylabel 'write calls (mean over replications)'
plot for [i=1:|strategies|] 'summary.csv' \
     using 'load.clients':(strcol('layer.app.backoff') eq strategies[i] ? column('server_arrivals') : NaN) \
     with linespoints lw 2 pt 7 lc rgb word(palette, i) title strategies[i]
set ylabel 'time until the last client is done (s)'
plot for [i=1:|strategies|] 'summary.csv' \
     using 'load.clients':(strcol('layer.app.backoff') eq strategies[i] ? column('lat_max') : NaN) \
     with linespoints lw 2 pt 7 lc rgb word(palette, i) title strategies[i]
unset multiplot
