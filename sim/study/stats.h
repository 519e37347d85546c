/*
 * stats — the statistics every experiment reports over replications: the
 * mean, the standard deviation and the half-width of the 95 % Student-t
 * interval of the mean, of the values that are not NaN (a run without a
 * value: no latency, no recovery). One helper for run --reps, compare,
 * sweep, merge and tune, for any number of replications.
 *
 * stats_row fills an experiment's summary row (results_stat_columns'
 * layout: reps, then NAME, NAME_sd, NAME_hw of each metric) from the
 * replications' summary rows. Costs: O(n) time and memory per column.
 */
#ifndef RS_STATS_H
#define RS_STATS_H

#include <stddef.h>

#include "summary.h"

struct stats {
    size_t n;              /* values that are not NaN */
    double mean, sd, hw;   /* NaN: below 1 (mean) or 2 (sd, hw) values */
};

/* The statistics of x[0], x[stride], ... x[(count − 1) · stride]. */
void stats_of(const double *x, size_t count, size_t stride, struct stats *s);

/* out[0] = reps, then each metric of cols (summary_row's columns) as
 * mean, sd, hw over the count rows rows[r · cols->n ...]. */
void stats_row(const struct summary_cols *cols, const double *rows, size_t count, double reps,
               double *out);

#endif
