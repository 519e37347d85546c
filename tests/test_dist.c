/*
 * Distributions: each kind parses, formats back to itself, and samples with
 * the stated mean (and, where it has one, coefficient of variation).
 *
 * Tolerance: with n = 400,000 draws the sample mean's standard error is
 * cv/sqrt(n) of the mean (0.16 % at cv = 1); we allow 5 standard errors
 * (computed from the distribution's own cv), which a correct sampler fails
 * with probability below 1e-6 while a wrong parameterisation (mean and
 * scale confused, cv and sigma confused) misses by far more.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <gsl/gsl_statistics_double.h>
#include <math.h>
#include <stdlib.h>

#include "dist.h"

#define N 400000

static void check(const char *text, double mean_ns, double cv)
{
    struct dist d;
    char why[256], buf[128];
    assert_true(dist_parse(text, &d, why, sizeof why));
    struct dist d2;
    assert_true(dist_parse(dist_format(&d, buf, sizeof buf), &d2, why, sizeof why));
    assert_true(d2.kind == d.kind && d2.a == d.a && d2.b == d.b);
    assert_true(fabs(dist_mean_ns(&d) - mean_ns) < 1e-6 * mean_ns);

    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 7);
    double *x = malloc(N * sizeof *x);
    for (int i = 0; i < N; i++)
        x[i] = (double)dist_sample(&d, r);
    double m = gsl_stats_mean(x, 1, N);
    double sd = gsl_stats_sd_m(x, 1, N, m);
    double se = (cv > 0 ? cv : 1e-9) * mean_ns / sqrt((double)N);
    if (fabs(m - mean_ns) > 5 * se + 1.0)
        fail_msg("%s: sample mean %.6g ns, expected %.6g ± %.3g", text, m, mean_ns, 5 * se);
    if (cv > 0 && cv < 2 && fabs(sd / m - cv) > 0.05 * cv)
        fail_msg("%s: sample cv %.4f, expected %.4f", text, sd / m, cv);
    free(x);
    gsl_rng_free(r);
}

static void kinds(void **state)
{
    (void)state;
    check("const(5ms)", 5e6, 0);
    check("exp(10ms)", 1e7, 1.0);
    check("uniform(1ms, 3ms)", 2e6, 1e6 / sqrt(3.0) / 2e6);
    check("lognormal(10ms, 0.5)", 1e7, 0.5);
    check("gamma(10ms, 0.5)", 1e7, 0.5);
    check("gamma(10ms, 1.5)", 1e7, 1.5);
    /* pareto(mean, shape): cv = 1/sqrt(shape·(shape−2)); shape 6 keeps the
     * fourth moment finite so the sample cv converges. */
    check("pareto(10ms, 6)", 1e7, 1.0 / sqrt(24.0));
    check("absnormal(10ms, 2ms)", 1e7, 0.2); /* folding at 5 sd changes nothing visible */
    /* bimodal: mean 0.999·0.1 + 0.001·10 ms; cv = sd/mean with sd² = E[X²] − mean² */
    double m = 0.999 * 1e5 + 0.001 * 1e7, ex2 = 0.999 * 1e10 + 0.001 * 1e14;
    check("bimodal(100us, 10ms, 0.001)", m, sqrt(ex2 - m * m) / m);
}

static void bad_text(void **state)
{
    (void)state;
    static const char *bad[] = {"exp", "exp()", "exp(10)", "exp(10ms", "expo(10ms)",
                                "uniform(3ms, 1ms)", "lognormal(10ms)", "lognormal(10ms, -1)",
                                "pareto(10ms, 1)", "gamma(0, 1)", "const(1ms, 2ms)",
                                "uniform(1ms, 2ms, 3ms)", "bimodal(1ms, 2ms, 1.5)", "absnormal(1ms)"};
    struct dist d;
    char why[256];
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        if (dist_parse(bad[i], &d, why, sizeof why))
            fail_msg("'%s' was accepted", bad[i]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(kinds),
        cmocka_unit_test(bad_text),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
