/*
 * Queueing formulas and the confidence-interval check shared by the tests
 * against theory (test_queueing.c, test_services.c).
 *
 * check_ci: the mean of n independent replications, its Student-t 99 %
 * interval (GSL), and two requirements: the interval contains the
 * theoretical value, and it is narrower than max_rel_width of it, so that
 * the test has the power to see a bias of that size.
 */
#ifndef RS_THEORY_H
#define RS_THEORY_H

#include <gsl/gsl_cdf.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_roots.h>
#include <gsl/gsl_statistics_double.h>
#include <math.h>

#include "rs_test.h"

/* Erlang C probability of waiting for c servers at offered load a = λ/μ. */
static inline double erlang_c(unsigned c, double a)
{
    double sum = 0, term = 1;
    for (unsigned k = 0; k < c; k++) {
        sum += term;
        term *= a / (k + 1);
    }
    /* term is now a^c / c! */
    double top = term * c / (c - a);
    return top / (sum + top);
}

/* Erlang B by the stable recursion B(0) = 1, B(k) = a·B(k−1)/(k + a·B(k−1)). */
static inline double erlang_b(unsigned c, double a)
{
    double b = 1.0;
    for (unsigned k = 1; k <= c; k++)
        b = a * b / (k + a * b);
    return b;
}

static inline void check_ci_n(const char *what, const double *x, size_t n, double theory,
                              double max_rel_width)
{
    double mean = gsl_stats_mean(x, 1, n);
    double sd = gsl_stats_sd_m(x, 1, n, mean);
    double half = gsl_cdf_tdist_Pinv(1 - 0.005, (double)n - 1) * sd / sqrt((double)n);
    print_message("%s: simulated %.6g ± %.3g (99%% CI), theory %.6g, error %.3f%%\n", what, mean,
                  half, theory, 100 * (mean - theory) / theory);
    if (fabs(mean - theory) > half)
        fail_msg("%s: theory %.6g outside the 99%% interval %.6g ± %.3g", what, theory, mean, half);
    if (half > max_rel_width * theory)
        fail_msg("%s: interval ± %.3g is wider than %.1f%% of %.6g: the test has no power", what,
                 half, 100 * max_rel_width, theory);
}

struct che {
    const double *p;
    size_t n;
    double cap;
};

/* Che's approximation of an LRU cache of C entries under independent
 * requests with key probabilities p (test_cache.c, test_traffic.c). */

/* Expected number of distinct keys requested within time t, minus C. */
static inline double che_f(double t, void *v)
{
    const struct che *ch = v;
    double sum = 0;
    for (size_t i = 0; i < ch->n; i++)
        sum += -expm1(-ch->p[i] * t);
    return sum - ch->cap;
}

/* Che's characteristic time t_C (in requests): sum_i 1 − e^(−p_i t) = C,
 * by Brent's method on a bracket doubled until it holds the root. */
static inline double che_time(struct che *ch)
{
    gsl_function f = {che_f, ch};
    double lo = 0, hi = 1;
    while (che_f(hi, ch) < 0)
        lo = hi, hi *= 2;
    gsl_root_fsolver *s = gsl_root_fsolver_alloc(gsl_root_fsolver_brent);
    assert_non_null(s);
    assert_int_equal(gsl_root_fsolver_set(s, &f, lo, hi), GSL_SUCCESS);
    int status = GSL_CONTINUE;
    for (int it = 0; it < 200 && status == GSL_CONTINUE; it++) {
        assert_int_equal(gsl_root_fsolver_iterate(s), GSL_SUCCESS);
        status = gsl_root_test_interval(gsl_root_fsolver_x_lower(s), gsl_root_fsolver_x_upper(s),
                                        0, 1e-12);
    }
    assert_int_equal(status, GSL_SUCCESS);
    double t = gsl_root_fsolver_root(s);
    gsl_root_fsolver_free(s);
    return t;
}

/* The hit ratio Che predicts: sum_i p_i (1 − e^(−p_i t_C)); *tc is t_C. */
static inline double che_hit_ratio(const double *p, size_t n, double cap, double *tc)
{
    struct che ch = {p, n, cap};
    double t = che_time(&ch), h = 0;
    for (size_t i = 0; i < n; i++)
        h += p[i] * -expm1(-p[i] * t);
    *tc = t;
    return h;
}

#endif
