# A hysteresis loop (hysteresis.csv, thresholds.csv): goodput against the
# offered load, the way up in orange and the way down in blue, one thin
# line per replication; each replication's tip (triangle up) and return
# (triangle down) marked on the axis, their means large; the line where
# goodput equals the offered load in grey. Variables set by retrystorm
# (and the look, see plot.c): out, term, title.
if (term eq 'svg') { set terminal svg size fig_width(1200),fig_height(800) dynamic enhanced font 'Sans,12' fontscale font_scale linewidth line_scale } else { set terminal pngcairo size fig_width(1200),fig_height(800) enhanced font 'Sans,12' fontscale font_scale linewidth line_scale }
set output out
set datafile separator ','
set title (title_given ? title : sprintf('%s: goodput against offered load, ramped up and back down', title)) noenhanced
set xlabel 'offered load (requests/s, the ramp)'
set ylabel 'goodput (ok outcomes/s)'
set grid
set key top left
set yrange [0:*]
up(l) = l eq 'lead' || l eq 'up' || l eq 'hold'
down(l) = l eq 'down' || l eq 'tail'
rep(s) = s ne 'mean' && s ne 'hw' && s ne 'n' && strcol(2) ne ''
plot x lc rgb '#999999' dt 2 title 'goodput = offered', \
     'hysteresis.csv' using (up(strcol('leg')) ? column('load') : NaN):(column('goodput')) \
         with lines lw 0.6 lc rgb '#D55E00' title 'way up', \
     '' using (down(strcol('leg')) ? column('load') : NaN):(column('goodput')) \
         with lines lw 0.6 lc rgb '#0072B2' title 'way down', \
     'thresholds.csv' using (rep(strcol(1)) ? column(2) : NaN):(0) with points pt 9 ps 1 lc rgb '#D55E00' title 'tip (each replication)', \
     '' using (rep(strcol(1)) && strcol(3) ne '' ? column(3) : NaN):(0) with points pt 11 ps 1 lc rgb '#0072B2' title 'return (each replication)', \
     '' using (strcol(1) eq 'mean' && strcol(2) ne '' ? column(2) : NaN):(0):(sprintf('tip %.3g/s', column(2))) with labels point pt 9 ps 3 lc rgb '#D55E00' offset 0,1.5 notitle, \
     '' using (strcol(1) eq 'mean' && strcol(3) ne '' ? column(3) : NaN):(0):(sprintf('return %.3g/s', column(3))) with labels point pt 11 ps 3 lc rgb '#0072B2' offset 0,1.5 notitle
