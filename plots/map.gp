# The vulnerability map (map.csv, boundary.csv): every probe as a point at
# (load, trigger) coloured by its recovery share, and each cell's boundary
# (the crossing of the level, with the bracketing probes as an error bar).
# Variables set by retrystorm (and the look, see plot.c): out, term, title,
# xkey (the load's key), ykey (the trigger's key), level, durs and ndurs
# (the durations of --duration, one boundary line each; ndurs 0: none;
# boundary.csv has each load's durations in turn, so line d takes every
# ndurs-th row from row d).
if (term eq 'svg') { set terminal svg size fig_width(1200),fig_height(900) dynamic enhanced font 'Sans,12' fontscale font_scale linewidth line_scale } else { set terminal pngcairo size fig_width(1200),fig_height(900) enhanced font 'Sans,12' fontscale font_scale linewidth line_scale }
set output out
set datafile separator ','
set title (title_given ? title : sprintf('%s: recovery share by load and trigger (boundary at %g)', title, level)) noenhanced
set xlabel xkey noenhanced
set ylabel ykey noenhanced
set cblabel 'share of runs that recover' noenhanced
set cbrange [0:1]
set palette defined (0 '#D55E00', 0.5 '#F0E442', 1 '#0072B2')
set grid
set offsets graph 0.05, graph 0.05, graph 0.05, graph 0.05
set key top right opaque box
share(c) = strcol(c) eq '' ? NaN : column(c)
has(c) = strcol(c) eq '' ? NaN : column(c)
palette = '#000000 #E69F00 #56B4E9 #009E73 #CC79A7'
nb = ndurs > 0 ? ndurs : 1
label(d) = ndurs == 0 ? 'boundary (bracket)' : sprintf('boundary, %s (bracket)', durs[d])
plot 'map.csv' using 'load_value':'trigger_value':(share('share')) with points pt 7 ps 2.2 lc palette title 'probes', \
     for [d=1:nb] 'boundary.csv' every nb::(d - 1) using 'load_value':(has('crossing')):(has('recovered_value')):(has('failed_value')) \
         with yerrorlines lw 3 pt 5 ps 1.5 lc rgb word(palette, (d - 1) % 5 + 1) title label(d) noenhanced
