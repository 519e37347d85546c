/*
 * serve — `retrystorm serve`: a local web page for live demonstrations.
 *
 * The page (web/index.html, app.js, app.css and the uPlot chart library,
 * all compiled into the binary) lists the built-in scenarios, takes
 * overrides from its fields and sliders, and asks api.c to run them; it
 * draws the time series, replays them progressively, and compares two
 * variants on the same seed. serve_main parses the options, listens (on
 * 127.0.0.1:8080 unless told otherwise) and answers until Ctrl-C.
 * Returns the exit code: 0, 1 (cannot listen) or 2 (bad option).
 */
#ifndef RS_SERVE_H
#define RS_SERVE_H

int serve_main(int argc, char **argv);

#endif
