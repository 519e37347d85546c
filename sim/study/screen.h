/*
 * screen — the compact table a command prints from the summary table it
 * has just written (run --reps: summary.csv; compare: summary.csv; sweep
 * and merge: sweep.csv), from the numbers in memory (results.h).
 *
 * One row per variant or point, labelled by the variant, the grid values
 * or the scenario; the columns are a few metrics in one unit per kind of
 * quantity: counts as they are, shares in %, latencies in ms, durations in
 * s, rates per s, amplification as a factor. With replications each cell
 * is "mean ± 95 % half-width" (the NAME_hw column beside it). Rows may be
 * sorted by any metric (--sort max:METRIC, min:METRIC or METRIC, smallest
 * first) or by a grid or varied key (--sort max:KEY...: KEY the key or its
 * last parts, its values as numbers with their units, 100ms before 1s,
 * unbounded and none last, words after numbers by text); a table longer than `show` rows prints its first and last
 * show/2 (the best and the worst when sorted) and says how many it left
 * out. Costs: O(rows log rows) for the sort.
 */
#ifndef RS_SCREEN_H
#define RS_SCREEN_H

#include <stddef.h>
#include <stdio.h>

#include "labels.h"
#include "results.h"
#include "summary.h"

struct screen_sort {
    char metric[64]; /* empty: the table's own order */
    int dir;         /* +1 largest first, -1 smallest first */
};

/* Parses --sort's value (max:METRIC, min:METRIC or METRIC) and, with
 * cols, checks the metric is one of the scenario's (summary_check_metric).
 * Returns 0, or 2 with a message. */
int screen_parse_sort(const char *text, const struct summary_cols *cols, struct screen_sort *s, char *err,
                      size_t errsz);

struct screen_spec {
    const struct results *table;
    const char *file;         /* the file that holds the table, for "all in FILE" */
    const char *label;        /* the rows' label when the table has no variant or grid columns */
    struct screen_sort sort;
    size_t show;              /* at most this many rows (0: all) */
    const struct labels_map *given; /* texts --label gave variants (NULL: none) */
    const char (*keys)[128];  /* the grid keys' labels (labels.h), in column order; NULL: each key's last part */
};

/* value ± hw (hw NaN: the value alone) in the unit of the metric's kind
 * (shares and flags in %, latencies in ms, durations in s),
 * with the unit: "99.97 % ± 0.02", "46.8 ms ± 0.3", "28.0 s", "2.607". */
void screen_format(char *out, size_t size, const char *metric, enum output_kind kind, double value, double hw);

/* Prints the table. Returns 0, or -1 with a message (out of memory). */
int screen_print(FILE *f, const struct screen_spec *s, char *err, size_t errsz);

#endif
