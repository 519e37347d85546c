/*
 * Backoff formulas: the deterministic kinds exactly; the jittered kinds by
 * range, mean and a chi-square goodness-of-fit test against the uniform law
 * each formula promises (docs/presets.md), and the cap at huge retry counts.
 *
 * Tolerance: 200,000 draws in 40 equiprobable bins; the test fails if the
 * chi-square p-value is below 1e-4 (a correct sampler fails once in 10,000
 * seeds; the seeds are fixed, so the result is reproducible) or if the mean
 * is off by more than 5 standard errors. A formula off by a factor (n vs
 * n−1 in the exponent, U(0,e) vs U(e/2,e)) fails both by orders of magnitude.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <gsl/gsl_cdf.h>
#include <math.h>
#include <string.h>

#include "backoff.h"

#define N 200000
#define BINS 40

static const struct backoff_kind *kind(const char *name)
{
    const struct backoff_kind *k = backoff_find(name);
    assert_non_null(k);
    return k;
}

/* Draws N delays for retry k (fresh state each time) and checks they are
 * uniform on [lo, hi). */
static void uniform_on(const char *name, struct backoff_params p, unsigned k, double lo, double hi)
{
    const struct backoff_kind *bk = kind(name);
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 11 + k);
    double count[BINS] = {0}, sum = 0;
    for (int i = 0; i < N; i++) {
        struct backoff_state st;
        backoff_state_init(&p, &st);
        double d = (double)bk->next_delay(&p, &st, k, CLS_503, r);
        /* Rounding to whole nanoseconds may land on hi itself. */
        if (d < lo - 0.5 || d > hi + 0.5)
            fail_msg("%s k=%u: %.0f outside [%.0f, %.0f)", name, k, d, lo, hi);
        int b = (int)((d - lo) / (hi - lo) * BINS);
        count[b < 0 ? 0 : b >= BINS ? BINS - 1 : b]++;
        sum += d;
    }
    double chi2 = 0, e = (double)N / BINS;
    for (int b = 0; b < BINS; b++)
        chi2 += (count[b] - e) * (count[b] - e) / e;
    double pval = gsl_cdf_chisq_Q(chi2, BINS - 1);
    if (pval < 1e-4)
        fail_msg("%s k=%u: chi-square %.1f, p = %.2g: not uniform on [%.0f, %.0f)", name, k, chi2,
                 pval, lo, hi);
    double mean = sum / N, se = (hi - lo) / sqrt(12.0 * N);
    if (fabs(mean - (lo + hi) / 2) > 5 * se)
        fail_msg("%s k=%u: mean %.1f, expected %.1f", name, k, mean, (lo + hi) / 2);
    gsl_rng_free(r);
}

static void deterministic_kinds(void **state)
{
    (void)state;
    struct backoff_params p = {10 * RS_MS, 2.0, RS_TIME_NEVER, 0};
    struct backoff_state st;
    backoff_state_init(&p, &st);
    for (unsigned k = 1; k <= 6; k++) {
        assert_true(kind("none")->next_delay(&p, &st, k, CLS_503, NULL) == 0);
        assert_true(kind("constant")->next_delay(&p, &st, k, CLS_503, NULL) == 10 * RS_MS);
        assert_true(kind("linear")->next_delay(&p, &st, k, CLS_503, NULL) == (rs_time)k * 10 * RS_MS);
        /* k-th retry waits base·multiplier^(k−1): 10, 20, 40, 80 ms... */
        assert_true(kind("exponential")->next_delay(&p, &st, k, CLS_503, NULL) ==
                    (10 * RS_MS) << (k - 1));
    }
    p.multiplier = 1.5;
    assert_true(kind("exponential")->next_delay(&p, &st, 3, CLS_503, NULL) == 22500 * RS_US);
    p.cap = 50 * RS_MS;
    assert_true(kind("exponential")->next_delay(&p, &st, 6, CLS_503, NULL) == 50 * RS_MS);
    assert_true(kind("linear")->next_delay(&p, &st, 9, CLS_503, NULL) == 50 * RS_MS);
}

static void full_jitter(void **state)
{
    (void)state;
    struct backoff_params p = {5 * RS_MS, 2.0, 2 * RS_S, 0};
    /* AWS study: U(0, min(cap, base·2^k)), k = 1 for the first retry. */
    uniform_on("full", p, 1, 0, 10e6);
    uniform_on("full", p, 4, 0, 80e6);
    uniform_on("full", p, 12, 0, 2e9); /* capped */
}

static void equal_jitter(void **state)
{
    (void)state;
    struct backoff_params p = {5 * RS_MS, 2.0, 2 * RS_S, 0};
    uniform_on("equal", p, 1, 5e6, 10e6);
    uniform_on("equal", p, 3, 20e6, 40e6);
    uniform_on("equal", p, 20, 1e9, 2e9);
}

static void decorrelated_jitter(void **state)
{
    (void)state;
    struct backoff_params p = {5 * RS_MS, 3.0, 2 * RS_S, 0};
    /* First retry: U(base, 3·base). */
    uniform_on("decorrelated", p, 1, 5e6, 15e6);
    /* Later retries: each within [base, min(cap, 3·previous)], and the cap holds. */
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 3);
    for (int run = 0; run < 1000; run++) {
        struct backoff_state st;
        backoff_state_init(&p, &st);
        for (unsigned k = 1; k <= 30; k++) {
            double prev = st.prev;
            rs_time d = kind("decorrelated")->next_delay(&p, &st, k, CLS_503, r);
            assert_true(d >= p.base);
            assert_true(d <= p.cap);
            assert_true((double)d <= 3.0 * prev + 1);
        }
    }
    gsl_rng_free(r);
}

static void huge_exponents_do_not_wrap(void **state)
{
    (void)state;
    struct backoff_params p = {RS_S, 2.0, 3 * 86400 * RS_S, 0}; /* a cap of days */
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    struct backoff_state st;
    backoff_state_init(&p, &st);
    unsigned ks[] = {60, 64, 1000, 100000};
    for (size_t i = 0; i < sizeof ks / sizeof ks[0]; i++) {
        assert_true(kind("exponential")->next_delay(&p, &st, ks[i], CLS_503, r) == p.cap);
        rs_time f = kind("full")->next_delay(&p, &st, ks[i], CLS_503, r);
        assert_true(f >= 0 && f <= p.cap);
    }
    p.cap = RS_TIME_NEVER; /* no cap: clamped to the longest duration, never negative */
    assert_true(kind("exponential")->next_delay(&p, &st, 100000, CLS_503, r) == RS_TIME_LIMIT);
    gsl_rng_free(r);
}


/* A preset's parameters, as the scenario would give them. */
static struct backoff_params preset_params(const char *name)
{
    const struct backoff_kind *k = kind(name);
    assert_true(backoff_is_preset(k));
    return k->defaults;
}

/* cenkalti's interval grows by 1.5 up to Max (60 s), which caps the
 * interval, not the jittered value: late delays lie in [30 s, 90 s]. */
static void cenkalti_interval_caps(void **state)
{
    (void)state;
    struct backoff_params p = preset_params("cenkalti");
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    struct backoff_state st;
    backoff_state_init(&p, &st);
    double i = 500e6;
    for (unsigned k = 1; k <= 30; k++) {
        rs_time d = kind("cenkalti")->next_delay(&p, &st, k, CLS_503, r);
        assert_true((double)d >= 0.5 * i - 1 && (double)d <= 1.5 * i + 2);
        i = i >= 60e9 / 1.5 ? 60e9 : i * 1.5;
        assert_true(fabs(st.interval - i) < 1.0);
    }
    gsl_rng_free(r);
}

/* Polly's DecorrelatedJitterBackoffV2 telescopes: the sum of the first K
 * delays is f(t_K)·base/1.4 with t_K in [K−1, K), so it lies between
 * f(K−1) and f(K) times base/1.4, whatever the draws. */
static void polly_v2_telescopes(void **state)
{
    (void)state;
    struct backoff_params p = preset_params("polly-v2");
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    double scale = (double)p.base / 1.4;
    for (int run = 0; run < 2000; run++) {
        struct backoff_state st;
        backoff_state_init(&p, &st);
        double sum = 0;
        for (unsigned k = 1; k <= 8; k++) {
            rs_time d = kind("polly-v2")->next_delay(&p, &st, k, CLS_503, r);
            assert_true(d >= 0);
            sum += (double)d;
            double lo = pow(2, k - 1.0) * tanh(sqrt(4.0 * (k - 1.0))) * scale;
            double hi = pow(2, (double)k) * tanh(sqrt(4.0 * k)) * scale;
            if (sum < lo - 8 || sum > hi + 8) /* rounding to ns, 1 per delay */
                fail_msg("k=%u: sum %.0f outside [%.0f, %.0f]", k, sum, lo, hi);
        }
    }
    gsl_rng_free(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(deterministic_kinds),
        cmocka_unit_test(full_jitter),
        cmocka_unit_test(equal_jitter),
        cmocka_unit_test(decorrelated_jitter),
        cmocka_unit_test(huge_exponents_do_not_wrap),
        cmocka_unit_test(cenkalti_interval_caps),
        cmocka_unit_test(polly_v2_telescopes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
