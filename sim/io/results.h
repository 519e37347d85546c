/*
 * results — a table of results in memory: label columns (text: the
 * variant, the scenario, each grid key's value) and number columns (a
 * summary column, or a statistic of one over replications), one row per
 * run, job, point or variant.
 *
 * Every summary table a command writes is one of these, written as CSV by
 * results_write_csv and as summary.json by jsonout_write_results, so the two
 * hold the same digits; the screen table and tune read the numbers, never
 * the files. A number column's cells are written by its kind
 * (summary_format: counts exact) or, for statistics, in 9 significant
 * digits; NaN (or an infinity) is an empty cell, and so is an empty label. Costs: O(rows × columns) memory and time.
 */
#ifndef RS_RESULTS_H
#define RS_RESULTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "summary.h"

struct results_col {
    char name[80];
    enum output_kind kind;
    bool stat; /* a mean, sd or half-width: 9 significant digits */
};

struct results {
    size_t nlabels, ncols, nrows, cap;
    char (*label_names)[128];
    struct results_col *cols;
    char **labels; /* nrows × nlabels, each malloc'd */
    double *v;     /* nrows × ncols; NaN: no value */
};

/* An empty table of nlabels label and ncols number columns (their names
 * to be set by the caller). Returns 0, or -1 when memory is short. */
int results_init(struct results *r, size_t nlabels, size_t ncols);
void results_fini(struct results *r);

/* Appends a row (labels copied); returns 0, or -1 when memory is short. */
int results_add(struct results *r, const char *const *labels, const double *v);

/* The number columns of an experiment's summary: each metric column of
 * cols (output_kind_is_metric) as NAME, NAME_sd, NAME_hw, after `reps`,
 * from number column `at` on. Returns the next column; the table must have
 * room for 1 + 3 × metrics columns from `at`. */
size_t results_stat_columns(struct results *r, size_t at, const struct summary_cols *cols);
/* One metric's three columns NAME, NAME_sd, NAME_hw from column `at`;
 * returns the next. */
size_t results_stat_metric(struct results *r, size_t at, const char *name, enum output_kind kind);
/* The number of metric columns of cols. */
size_t results_metrics(const struct summary_cols *cols);

/* The index of the number column called name, or -1. */
long results_find(const struct results *r, const char *name);

/* The CSV text of the table: header, then one line per row. */
void results_write_csv(FILE *f, const struct results *r);
/* One number cell as results_write_csv writes it (nothing for NaN or an
 * infinity: no value), to f or into out (64 bytes are enough). */
void results_cell(FILE *f, const struct results_col *c, double v);
void results_format(char *out, size_t size, const struct results_col *c, double v);

#endif
