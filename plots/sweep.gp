# A sweep (sweep.csv): one metric over one key (line with 95 % error bars)
# or two keys (heat map, the first key across, the second up). Or (summary
# = 1) a comparison's summary (summary.csv): a horizontal bar per variant
# of four metrics, with 95 % error bars (the _hw columns) when it has
# replications, its value right of the bar.
# Variables set by retrystorm (and the look, see plot.c): out, term, title,
# metric, key1, key2 ('' for one key), xs, ys (the keys' values; ys ['']
# for one key), nys (0 for one key); summary, variants and reps.
if (term eq 'svg') { set terminal svg size fig_width(summary ? 1200 : 900),fig_height(summary ? 900 : 650) dynamic enhanced font 'Sans,12' fontscale font_scale linewidth line_scale } else { set terminal pngcairo size fig_width(summary ? 1200 : 900),fig_height(summary ? 900 : 650) enhanced font 'Sans,12' fontscale font_scale linewidth line_scale }
set output out
set datafile separator ','
if (summary) {
    n = |variants|
    palette = '#000000 #E69F00 #56B4E9 #009E73 #0072B2 #D55E00 #CC79A7 #F0E442 #999999'
    if (style_palette ne '') { palette = style_palette }
    set multiplot layout 2,2 title (title_given ? title : sprintf('%s: variants compared%s', title, reps > 1 ? sprintf(' (mean and 95%% interval over %d replications)', reps) : '')) noenhanced
    # horizontal bars: a variant per row, its name left of the axis (never
    # rotated, never cut), its value right of its bar on the row's own line
    # (values never collide); x room for the value, the first at the top
    set ytics () noenhanced
    do for [i=1:n] { set ytics add (legends[i] i) }
    # gnuplot's svg terminal guesses text widths low (about 0.45 em a
    # character); a browser's font is wider: room for 0.7 em
    maxlen = 0
    do for [i=1:n] { maxlen = strlen(legends[i]) > maxlen ? strlen(legends[i]) : maxlen }
    if (term eq 'svg') { set lmargin maxlen * 1.6 + 2 }
    set style fill solid 0.7 border -1
    set grid x
    set key off
    array ms[4] = ['amplification', 'recovery_s', 'lat_p99', 'ok_share']
    array ml[4] = ['attempts per request', 'time to recover (s)', 'p99 latency (s)', 'share ok']
    is(i) = strcol('variant') eq variants[i]
    hw(m) = strcol(m.'_hw') eq '' ? 0 : column(m.'_hw')
    has(i, m) = is(i) && strcol(m) ne ''
    top(i, m) = has(i, m) ? column(m) + hw(m) : 0 # gnuplot 5.4 crashes on labels of nothing
    txt(i, m) = has(i, m) ? sprintf('%.3g', column(m)) : ''
    late(i) = is(i) && (strcol('recovered') eq '' || column('recovered') < 1) ? i : NaN
    said(r) = r == 0 ? 'never' : sprintf('%.0f%% of runs', 100 * r)
    do for [j=1:4] {
        set xlabel ml[j]
        set xrange [*:*]; set yrange [*:*] # stats reads within the axes' ranges
        stats 'summary.csv' using (strcol(ms[j]) ne '' ? column(ms[j]) + hw(ms[j]) : 0) nooutput
        set xrange [0:(STATS_max > 0 ? STATS_max * 1.3 : 1)]
        set yrange [n + 0.6:0.4]
        if (j == 4) { set xrange [0:1.3]; set xtics 0, 0.25, 1 } else { set xtics autofreq }
        plot for [i=1:n] 'summary.csv' using (is(i) ? column(ms[j]) / 2 : NaN):(i):(column(ms[j]) / 2):(0.35) \
             with boxxyerror lc rgb word(palette, (i - 1) % 9 + 1), \
             for [i=1:n] '' using (is(i) ? column(ms[j]) : NaN):(i):(hw(ms[j])) with xerrorbars pt -1 lc rgb '#000000', \
             for [i=1:n] '' using (has(i, ms[j]) ? top(i, ms[j]) : NaN):(i):(txt(i, ms[j])) with labels left offset 0.5,0, \
             for [i=1:n] '' using (j == 2 ? 0 : NaN):(late(i)):(strcol('recovered') ne '' ? said(column('recovered')) : strcol('undetermined') ne '' && column('undetermined') > 0 ? 'undetermined' : 'no trigger') with labels left offset 0.5,0
    }
    unset multiplot
} else {
    nx = |xs|
    set xtics () noenhanced
    do for [i=1:nx] { set xtics add (xs[i] i - 1) }
    set xrange [-0.5:nx - 0.5]
    set xlabel key1 noenhanced
    if (key2 eq '') {
        set title (title_given ? title : sprintf('%s: %s (mean and 95%% interval over replications)', title, metric)) noenhanced
        set ylabel metric noenhanced
        set grid
        set key off
        # without replications the _hw cells are empty: no error bar, not no point
        plot 'sweep.csv' using (column('point')):(column(metric)):(strcol(metric.'_hw') eq '' ? 0 : column(metric.'_hw')) \
             with yerrorlines lw 2 pt 7 lc rgb '#0072B2'
    } else {
        ny = nys
        set ytics () noenhanced
        do for [j=1:ny] { set ytics add (ys[j] j - 1) }
        set yrange [-0.5:ny - 0.5]
        set ylabel key2 noenhanced
        set title (title_given ? title : sprintf('%s: %s (mean over replications)', title, metric)) noenhanced
        set palette defined (0 '#FDE725', 0.5 '#21918C', 1 '#440154')
        set cblabel metric noenhanced
        set style textbox opaque fc rgb '#FFFFFF' noborder
        plot 'sweep.csv' using (floor(column('point') / ny)):(int(column('point')) % ny):(column(metric)) \
             with image notitle, \
             '' using (floor(column('point') / ny)):(int(column('point')) % ny):(sprintf('%.3g', column(metric))) \
             with labels boxed font ',10' textcolor rgb '#000000' notitle
    }
}
