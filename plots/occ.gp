# The AWS backoff-and-jitter study (a compare of scenarios/aws-occ.ini over
# load.clients and layer.app.backoff): total write calls and the time the
# last client finishes (log scale), against the number of clients, one line
# per strategy, with 95 % error bars over replications (the _hw columns of
# summary.csv; none in a comparison written before they were, or of one
# replication).
# Variables set by retrystorm (besides the look: fig_width, fig_height,
# font_scale, line_scale, style_palette, frames): out, term, title, strategies
# (an array), hw (1 when summary.csv has the _hw columns).
if (term eq 'svg') { set terminal svg size fig_width(1200),fig_height(550) dynamic enhanced font 'Sans,12' fontscale font_scale linewidth line_scale } else { set terminal pngcairo size fig_width(1200),fig_height(550) enhanced font 'Sans,12' fontscale font_scale linewidth line_scale }
set output out
set datafile separator ','
palette = '#000000 #E69F00 #56B4E9 #009E73 #D55E00 #CC79A7 #0072B2'
if (style_palette ne '') { palette = style_palette } # --style slide
set multiplot layout 1,2 title (title_given ? title : sprintf('%s: optimistic concurrency, base 5 ms, cap 2 s (mean and 95%% interval)', title)) noenhanced
set xlabel 'clients'
set xtics 40
set key off # one legend, right of the second panel; panels of equal width
set grid
set lmargin at screen 0.08
set rmargin at screen 0.41
is(i) = strcol('layer.app.backoff') eq strategies[i]
err(c) = hw && strcol(c.'_hw') ne '' ? column(c.'_hw') : 0
set ylabel 'write calls (mean over replications)'
plot for [i=1:|strategies|] 'summary.csv' \
     using 'load.clients':(is(i) ? column('server_arrivals') : NaN):(err('server_arrivals')) \
     with yerrorlines lw 2 pt 7 ps 0.6 lc rgb word(palette, (i - 1) % 7 + 1) title strategies[i]
set ylabel 'time until the last client is done (s, log scale)'
set logscale y
set lmargin at screen 0.5
set rmargin at screen 0.83
set key outside right top noenhanced
plot for [i=1:|strategies|] 'summary.csv' \
     using 'load.clients':(is(i) ? column('lat_max') : NaN):(err('lat_max')) \
     with yerrorlines lw 2 pt 7 ps 0.6 lc rgb word(palette, (i - 1) % 7 + 1) title strategies[i]
unset multiplot
