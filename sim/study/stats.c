/*
 * stats — statistics over replications. See stats.h.
 */
#include "stats.h"

#include <gsl/gsl_cdf.h>
#include <gsl/gsl_statistics_double.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

void stats_of(const double *x, size_t count, size_t stride, struct stats *s)
{
    double *v = malloc((count ? count : 1) * sizeof *v);
    if (v == NULL) { /* STYLE: out of memory aborts */
        fprintf(stderr, "retrystorm: out of memory for the statistics of %zu replications\n", count);
        abort();
    }
    size_t n = 0;
    for (size_t i = 0; i < count; i++)
        if (!isnan(x[i * stride]))
            v[n++] = x[i * stride];
    s->n = n;
    s->mean = n ? gsl_stats_mean(v, 1, n) : NAN;
    s->sd = n >= 2 ? gsl_stats_sd(v, 1, n) : NAN;
    s->hw = n >= 2 ? gsl_cdf_tdist_Pinv(0.975, (double)(n - 1)) * s->sd / sqrt((double)n) : NAN;
    free(v);
}

void stats_row(const struct summary_cols *cols, const double *rows, size_t count, double reps,
               double *out)
{
    size_t at = 0;
    out[at++] = reps;
    for (size_t c = 0; c < cols->n; c++) {
        if (!output_kind_is_metric(cols->c[c].kind))
            continue;
        struct stats s;
        stats_of(rows + c, count, cols->n, &s);
        out[at++] = s.mean;
        out[at++] = s.sd;
        out[at++] = s.hw;
    }
}
