/*
 * plot — figures from a run's or a comparison's CSV files, drawn by gnuplot
 * (an external program) with the scripts in plots/, which are compiled
 * into the binary.
 *
 * plot_dir looks at what DIR holds and draws every figure its files
 * support, each as PNG (pngcairo) and SVG: load, queue and latency over
 * time, the latency CDF and the attempts histogram of a run; the
 * comparison panels of a `compare` directory; the AWS study's two panels
 * when the comparison varies load.clients and layer.app.backoff. Phases
 * (from DIR/scenario.ini) are shaded and labelled on time plots. Each
 * figure is written under a temporary name and renamed when gnuplot
 * succeeds. Cost: one gnuplot process per figure and format.
 */
#ifndef RS_PLOT_H
#define RS_PLOT_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>

/* Whether a gnuplot can be run. */
bool plot_available(void);

/* Draws every figure DIR supports. Returns the number of files written,
 * or -1 with a message in err (gnuplot failed, or DIR has nothing to draw),
 * or -2 when *stop was set (by a signal) before it finished. */
int plot_dir(const char *dir, volatile sig_atomic_t *stop, char *err, size_t errsz);

#endif
