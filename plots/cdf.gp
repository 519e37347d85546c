# End-to-end latency CDF (latency.csv), log time axis: a run's by outcome,
# or a comparison's by variant (its requests of every outcome, 'all').
# Variables set by retrystorm (besides the look: fig_width, fig_height,
# font_scale, line_scale, style_palette, frames): out, term, title, outcomes
# (an array), variants (an array; [''] for a run). The x axis spans the
# data (slide = 1: the legend under the plot).
if (term eq 'svg') { set terminal svg size fig_width(900),fig_height(600) dynamic enhanced font 'Sans,12' fontscale font_scale linewidth line_scale } else { set terminal pngcairo size fig_width(900),fig_height(600) enhanced font 'Sans,12' fontscale font_scale linewidth line_scale }
set output out
set datafile separator ','
byvar = variants[1] ne ''
set title (title_given ? title : sprintf(byvar ? '%s: latency CDF by variant (every outcome)' : '%s: latency CDF by outcome', title)) noenhanced
set xlabel 'end-to-end latency (s)'
set ylabel (byvar ? 'share of requests' : 'share of requests with this outcome')
set format x '10^{%L}'   # decades, not 0.0000001
if (slide) { set key below center horizontal noenhanced } else { set key outside right top noenhanced }
set grid
palette = '#000000 #0072B2 #D55E00 #009E73 #E69F00 #CC79A7 #56B4E9 #F0E442'
if (byvar) { palette = '#000000 #E69F00 #56B4E9 #009E73 #0072B2 #D55E00 #CC79A7 #F0E442 #999999' } # compare's
if (style_palette ne '') { palette = style_palette } # --style slide
pos(x) = x > 0 ? x : NaN
# x clipped to the data: from the least first percentile of the curves
# drawn (latencies under 1 ns, the clock's grain, are zeros: they sit on
# the left edge) to the greatest latency, out to whole decades
shown(x) = (byvar ? strcol('outcome') eq 'all' : 1) && column('quantile') >= 0.01 && x >= 1e-9 ? x : NaN
big(x) = x == x ? x : 1e300 # stats on every row: none may be left out
unset logscale x
stats 'latency.csv' using (big(shown(column('latency_s')))) nooutput
lo = STATS_min < 1e300 ? STATS_min : 1e-9
stats 'latency.csv' using (column('latency_s') > 0 ? column('latency_s') : 0) nooutput
hi = STATS_max > lo ? STATS_max : lo * 10
set logscale x
set yrange [0:1] # after the stats, which read within the axes' ranges
set xrange [10.0 ** floor(log10(lo) + 1e-9):10.0 ** ceil(log10(hi) - 1e-9)]
if (byvar) {
    plot for [i=|variants|:1:-1] 'latency.csv' \
         using (strcol('variant') eq variants[i] && strcol('outcome') eq 'all' ? pos(column('latency_s')) : NaN):'quantile' \
         with lines lw 2 lc rgb word(palette, (i - 1) % 9 + 1) title legends[i]
} else {
    plot for [i=1:|outcomes|] 'latency.csv' \
         using (strcol('outcome') eq outcomes[i] ? pos(column('latency_s')) : NaN):'quantile' \
         with lines lw 2 lc rgb word(palette, i) title outcomes[i]
}
