/*
 * plotdec — decimation of a CSV for drawing: what gnuplot gets of a long
 * time series (plot.c), so that drawing costs the same for 10^3 buckets
 * as for 10^6 while the CSV in the output directory stays whole.
 *
 * A series is the rows that share the values of the key columns (a
 * variant, a service and replica, a cache; none: the whole file; every
 * column before t is one: a comparison's axes), in time order. When the longest series has more than 2 × groups rows, every
 * series is cut into runs of g consecutive rows (g = ceil(longest /
 * groups): at most `groups` runs a series), and each run becomes two rows:
 *  - t: the run's first t, then its last (both as written);
 *  - a key column: its value (the same over the run);
 *  - any other column: its minimum and its maximum over the run, the one
 *    that came first in time in the first row (an empty cell counts for
 *    neither; both empty when every cell was) — so a spike of one bucket
 *    still reaches the figure, at most half a pixel column away;
 *  - NAME_mean, for each column asked for (the `means`), its mean over the
 *    run, in both rows: what a rolling mean over the rows is then taken of.
 * A run of one row (a series' last) becomes that row. Values are copied as
 * written, means printed with %.9g: the same input gives the same bytes.
 * Rows come out where their run ended, a run's second rows after the
 * first rows of every run that ended with it (files that interleave their
 * series row by row — caches.csv, services.csv — keep that shape).
 *
 * Use: plotdec_new on the header; plotdec_count on every data row; then
 * plotdec_plan; then (after a rewind) plotdec_header and plotdec_row on
 * every data row; plotdec_finish. Blank rows are the caller's to skip.
 * Errors (a row's columns, a cell that is not a number) return -1 with a
 * message (without the file and line, which the caller adds).
 *
 * Cost: two passes; O(columns) a row, plus the series' lookup (O(1) when
 * rows come a series at a time or in a fixed cycle of series); memory
 * O(series × columns).
 */
#ifndef RS_PLOTDEC_H
#define RS_PLOTDEC_H

#include <stddef.h>
#include <stdio.h>

#define PLOTDEC_GROUPS 2048 /* the runs of a decimated series: at most 4096 rows drawn */
#define PLOTDEC_CELL 40     /* the longest number a decimated column may hold, bytes */

struct plotdec;

/* keys, means: column names, NULL-terminated (keys may be {NULL}). NULL,
 * with a message, when t or one of them is not a column of header. */
struct plotdec *plotdec_new(const char *header, const char *const *keys, const char *const *means,
                            char *err, size_t errsz);
void plotdec_free(struct plotdec *d);

/* The first pass: counts the row's series. 0, or -1 with a message. */
int plotdec_count(struct plotdec *d, const char *line, char *err, size_t errsz);

/* Chooses g for at most `groups` runs a series and returns it; 1: no
 * series is longer than 2 × groups rows, nothing to decimate. */
size_t plotdec_plan(struct plotdec *d, size_t groups);

/* The second pass: the header (with a NAME_mean column for each of
 * means), then each row in the order of the first pass. */
void plotdec_header(const struct plotdec *d, FILE *out);
int plotdec_row(struct plotdec *d, const char *line, FILE *out, char *err, size_t errsz);
void plotdec_finish(struct plotdec *d, FILE *out);

#endif
