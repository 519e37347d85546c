/*
 * dist — random durations: service times, think times.
 *
 * A distribution is written as kind(params) with durations in units:
 *   const(5ms)              always 5 ms
 *   exp(10ms)               exponential with mean 10 ms
 *   uniform(1ms, 3ms)       uniform on [1 ms, 3 ms)
 *   lognormal(10ms, 0.5)    lognormal with mean 10 ms and coefficient of variation 0.5
 *   gamma(10ms, 0.5)        gamma with mean 10 ms and coefficient of variation 0.5
 *   pareto(10ms, 2.5)       Pareto with mean 10 ms and shape 2.5 (> 1; scale = mean·(shape−1)/shape)
 *   absnormal(10ms, 2ms)    |N(10 ms, 2 ms)|, the AWS study's network delay
 *   bimodal(0.1ms, 10ms, 0.001)  0.1 ms, or 10 ms with probability 0.001
 * Every kind but bimodal takes the mean first, so swapping kinds keeps the
 * load the same.
 * Sampling is O(1) through GSL (the exponential by a ziggurat on GSL's
 * draws); parsing is O(length of the text).
 */
#ifndef RS_DIST_H
#define RS_DIST_H

#include <gsl/gsl_rng.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "units.h"

enum dist_kind {
    DIST_CONST, DIST_EXP, DIST_UNIFORM, DIST_LOGNORMAL, DIST_GAMMA, DIST_PARETO, DIST_ABSNORMAL,
    DIST_BIMODAL
};

struct dist {
    enum dist_kind kind;
    double a, b, c; /* parameters as written (ns, or dimensionless) */
    double p1, p2;  /* parameters in the form GSL wants */
};

/* Parses text into *d. On failure returns false and writes what is allowed
 * (or what is wrong) into why. */
bool dist_parse(const char *text, struct dist *d, char *why, size_t why_size);

/* Writes the canonical text of d. Returns buf. */
char *dist_format(const struct dist *d, char *buf, size_t size);

/* The mean in nanoseconds. */
double dist_mean_ns(const struct dist *d);

/* Draws one duration; O(1). */
rs_time dist_sample(const struct dist *d, gsl_rng *r);

/* A standard exponential (mean 1) by the ziggurat: one 32-bit draw from r
 * (which must give 32 bits, as taus2 and mt19937 do) 98.9 % of the time;
 * O(1) expected. */
double dist_std_exponential(gsl_rng *r);

/* Copies the ziggurat's 256-entry tables (for tests). */
void dist_ziggurat_tables(uint32_t *k, double *w, double *f);

/* The same distribution with every duration multiplied by f (> 0). */
struct dist dist_scaled(const struct dist *d, double f);

#endif
