/*
 * Metrics: latency quantiles against exact order statistics, the bucket
 * level integration on hand-made buckets.
 *
 * The histogram's bins are 0.5 % wide, so a quantile read from it is within
 * 0.5 % of the exact sample quantile (between the two order statistics that
 * bracket it); we assert 1 %, the accuracy the issue asks for.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>
#include <math.h>
#include <stdlib.h>

#include "metrics.h"

static void quantiles_within_one_percent(void **state)
{
    (void)state;
    const size_t n = 200000;
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    double *x = malloc(n * sizeof *x);
    struct lat_hist h;
    assert_int_equal(metrics_lat_init(&h), 0);
    /* Latencies over seven decades: lognormal around 10 ms, sigma 2. */
    for (size_t i = 0; i < n; i++) {
        rs_time v = (rs_time)llround(gsl_ran_lognormal(r, log(1e7), 2.0));
        x[i] = (double)v;
        metrics_lat_add(&h, v);
    }
    gsl_sort(x, 1, n);
    double qs[] = {0.001, 0.01, 0.1, 0.5, 0.9, 0.99, 0.999, 0.9999};
    for (size_t i = 0; i < sizeof qs / sizeof qs[0]; i++) {
        double exact = gsl_stats_quantile_from_sorted_data(x, 1, n, qs[i]) / 1e9;
        double got = metrics_quantile(&h, qs[i]);
        if (fabs(got - exact) > 0.01 * exact)
            fail_msg("q=%g: histogram %.9g s, exact %.9g s", qs[i], got, exact);
    }
    assert_true(metrics_quantile(&h, 0.0) == x[0] / 1e9);
    assert_true(metrics_quantile(&h, 1.0) == x[n - 1] / 1e9);
    assert_true(fabs(metrics_mean_s(&h) - gsl_stats_mean(x, 1, n) / 1e9) < 1e-12);
    /* Reset empties it, and an empty histogram has no quantile. */
    metrics_lat_reset(&h);
    assert_true(metrics_quantile(&h, 0.5) < 0);
    metrics_lat_add(&h, 0);
    assert_true(metrics_quantile(&h, 0.5) == 0.0);
    metrics_lat_fini(&h);
    free(x);
    gsl_rng_free(r);
}

static void levels_are_time_weighted(void **state)
{
    (void)state;
    struct metrics m;
    char err[128];
    unsigned att[1] = {1};
    assert_int_equal(metrics_init(&m, 3 * RS_S, RS_S, 1, att, err, sizeof err), 0);
    /* queue 0 on [0, 0.5 s), 4 on [0.5 s, 2.5 s), 2 on [2.5 s, 3 s) */
    metrics_advance(&m, RS_S / 2, 0, 0, 0);
    metrics_advance(&m, 5 * RS_S / 2, 4, 0, 0);
    metrics_finish(&m, 3 * RS_S, 2, 0, 0);
    assert_true(fabs(m.b[0].area_queue / 1e9 - 2.0) < 1e-9);
    assert_true(fabs(m.b[1].area_queue / 1e9 - 4.0) < 1e-9);
    assert_true(fabs(m.b[2].area_queue / 1e9 - 3.0) < 1e-9);
    metrics_fini(&m);
}
/* A duration that is not a whole number of buckets ends in a short bucket:
 * 10.5 s in 1 s buckets is 11 buckets, the last half a second long. */
static void a_partial_last_bucket_is_kept(void **state)
{
    (void)state;
    struct metrics m;
    char err[128];
    unsigned att[1] = {1};
    assert_int_equal(metrics_init(&m, 10 * RS_S + RS_S / 2, RS_S, 1, att, err, sizeof err), 0);
    assert_int_equal(m.nbuckets, 11);
    assert_true(metrics_bucket_len(&m, 9) == 1.0 && metrics_bucket_len(&m, 10) == 0.5);
    metrics_fini(&m);
    assert_int_equal(metrics_init(&m, 10 * RS_S, RS_S, 1, att, err, sizeof err), 0);
    assert_int_equal(m.nbuckets, 10);
    metrics_fini(&m);
}

/* A request's attempts land in the bin of their number, whatever the
 * number of bins (GSL's uniform edges are not exact: with 25 bins the edge
 * of 7 is 7.0000000000000009, and 7 attempts were counted as 6), and the
 * last bin holds every larger count. */
static void attempts_land_in_their_bin(void **state)
{
    (void)state;
    struct metrics m;
    char err[256];
    for (unsigned a = 1; a <= 100; a++) {
        unsigned att[1] = {a}; /* bins 0..a at the layer, a + 1 of them */
        assert_int_equal(metrics_init(&m, RS_S, RS_S, 1, att, err, sizeof err), 0);
        for (uint64_t k = 0; k <= a + 1; k++) {
            uint64_t n[2] = {k, k};
            metrics_request_attempts(&m, n);
        }
        for (size_t i = 0; i <= a; i++)
            assert_true(gsl_histogram_get(m.att[0], i) == (i == a ? 2.0 : 1.0));
        assert_int_equal(m.att_max[0], a + 1);
        metrics_fini(&m);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(quantiles_within_one_percent),
        cmocka_unit_test(levels_are_time_weighted),
        cmocka_unit_test(a_partial_last_bucket_is_kept),
        cmocka_unit_test(attempts_land_in_their_bin),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
