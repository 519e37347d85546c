/*
 * Every backoff preset, budget and breaker held to its library at the
 * pinned version (docs/presets.md "How we verified the presets").
 *
 * Presets: one row per preset (and per entry point that matters), loaded
 * as a user writes it (`backoff = NAME` in a scenario), so the defaults the
 * scenario applies are tested along with the formula. For retries 1…6 a
 * row gives the delay's support and mean, or its exact value, from the
 * library's own formula at that version (written out here from the upstream
 * source, not computed by retrystorm's code); then the attempts, the
 * retried classes, and what the layer does with a Retry-After.
 *
 * Tolerances. Each law is checked on N = 100,000 call sequences (retries
 * 1 to k on one state, as a call does):
 *  - every draw lies in the support (±0.5 ns of rounding), and where the
 *    library works in whole milliseconds every draw is a whole number of
 *    them;
 *  - the smallest and largest draws come within 1 % of the support's ends
 *    (a uniform law misses an end with probability below e^(−1000)); the
 *    polly-v2 delays, differences of two draws, thin out towards their
 *    ends, so for them only the upper end is checked, within 10 %;
 *  - the mean lies within 5 standard errors of the library's mean, plus
 *    1e-4 of it for the table's rounding to 5 digits (a correct sampler
 *    fails one check in 1.7 million; the seeds are fixed);
 *  - uniform laws pass a χ² test on 40 equiprobable bins (whole-millisecond
 *    laws: the largest number of bins up to 40 that divides their values
 *    evenly) at p ≥ 1e-4.
 * A formula off by one in its exponent, or drawing U(e/2, e) for U(0, e),
 * misses its mean by tens of standard errors; a continuous draw where the
 * library truncates to milliseconds fails the whole-millisecond check.
 * Keys written over a preset's, and gRPC's clamp of attempts to 5, are
 * tested in test_semantics.c.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <gsl/gsl_cdf.h>
#include <gsl/gsl_rng.h>
#include <math.h>
#include <string.h>

#include "rs_test.h"

#define N 100000
#define RETRIES 6
#define MS 1e6
#define SEC 1e9

/* The delay before retry k, in nanoseconds: its support [lo, hi], its mean
 * and its shape. */
enum shape {
    EXACT_VALUE, /* lo == hi */
    UNIFORM,     /* continuous uniform on [lo, hi) */
    UNIFORM_MS,  /* uniform on the whole milliseconds lo, …, hi */
    WHOLE_MS,    /* whole milliseconds, not uniform (resilience4j-exp's ends) */
    OTHER,       /* polly-v2: a difference of two draws */
};
struct delay_law {
    double lo, hi, mean;
    enum shape shape;
};
#define EXACT(v) {(v), (v), (v), EXACT_VALUE}
#define U(lo, hi) {(lo), (hi), ((lo) + (hi)) / 2, UNIFORM}
#define MS_INT(n) {0, ((n) - 1) * MS, ((n) - 1) * MS / 2, UNIFORM_MS} /* {0, …, n−1} ms */
#define R4J(lo, hi, mean) {(lo) * MS, (hi) * MS, (mean) * MS, WHOLE_MS}
#define SUMS(hi, mean) {0, (hi) * SEC, (mean) * SEC, OTHER}

struct preset_row {
    const char *library; /* the library and version the row follows, named in a failure */
    const char *preset;
    const char *set;     /* an override as the user writes it, or NULL */
    enum errclass cls;   /* the failure being retried */
    struct delay_law d[RETRIES];
    unsigned attempts;
    const char *retry_on;
    bool honour_ra;
    rs_time ra_max;     /* RS_TIME_NEVER: none */
    enum retry_after_over ra_over;
    rs_time deadline;   /* the whole loop's; RS_TIME_NEVER: none */
};

#define NEVER RS_TIME_NEVER
#define AWS "timeout conn 429 500 502 503 504"
#define ALL "timeout conn 400 403 404 409 429 500 502 503 504"

static const struct preset_row rows[] = {
    {"botocore 0719e79 standard.py ExponentialBackoff: random()·min(2^(a−1), 20) s",
     "aws-standard", NULL, CLS_503,
     {U(0, 1 * SEC), U(0, 2 * SEC), U(0, 4 * SEC), U(0, 8 * SEC), U(0, 16 * SEC), U(0, 20 * SEC)},
     3, AWS, false, NEVER, RA_OVER_CLAMP, NEVER},
    {"botocore retryhandler.py 0992565 delay_exponential: rand·2^(a−1) s, no cap; _retry.json 6403a35 max_attempts 5",
     "aws-legacy", NULL, CLS_503,
     {U(0, 1 * SEC), U(0, 2 * SEC), U(0, 4 * SEC), U(0, 8 * SEC), U(0, 16 * SEC), U(0, 32 * SEC)},
     5, AWS, false, NEVER, RA_OVER_CLAMP, NEVER},
    {"aws-sdk-go-v2 aws v1.16.13 backoffDelayLegacy: a > log2(20) → 20 s, else rand·2^a s",
     "aws-go", NULL, CLS_503,
     {U(0, 2 * SEC), U(0, 4 * SEC), U(0, 8 * SEC), U(0, 16 * SEC), EXACT(20 * SEC), EXACT(20 * SEC)},
     3, AWS, false, NEVER, RA_OVER_CLAMP, NEVER},
    {"smithy-typescript util-retry cffd868: floor(random()·min(100·2^i, 20000)) ms",
     "aws-js", NULL, CLS_503,
     {MS_INT(100), MS_INT(200), MS_INT(400), MS_INT(800), MS_INT(1600), MS_INT(3200)}, 3,
     AWS, false, NEVER, RA_OVER_CLAMP, NEVER},
    {"smithy-typescript util-retry cffd868: throttling base 500 ms",
     "aws-js", NULL, CLS_429,
     {MS_INT(500), MS_INT(1000), MS_INT(2000), MS_INT(4000), MS_INT(8000), MS_INT(16000)}, 3,
     AWS, false, NEVER, RA_OVER_CLAMP, NEVER},
    {"gRFC A6 dc9fd4f / grpc-go 67bee55: min(100 ms·2^(n−1), 1 s)·U(0.8, 1.2)",
     "grpc", NULL, CLS_503,
     {U(80 * MS, 120 * MS), U(160 * MS, 240 * MS), U(320 * MS, 480 * MS), U(640 * MS, 960 * MS),
      U(800 * MS, 1200 * MS), U(800 * MS, 1200 * MS)},
     4, "conn 503", false, NEVER, RA_OVER_CLAMP, NEVER},
    {"envoy backoff_strategy.cc: random() % I, I = 25, 50, 100, 200, 250 ms; retry_on 5xx with resets; route timeout 15 s",
     "envoy", NULL, CLS_503,
     {MS_INT(25), MS_INT(50), MS_INT(100), MS_INT(200), MS_INT(250), MS_INT(250)}, 2,
     "timeout conn 500 502 503 504", false, NEVER, RA_OVER_BACKOFF, 15 * RS_S},
    {"istio retry.go 7adf609: Envoy's backoff, 2 retries, connect-failure (503 excluded)",
     "istio", NULL, CLS_CONN,
     {MS_INT(25), MS_INT(50), MS_INT(100), MS_INT(200), MS_INT(250), MS_INT(250)}, 3, "conn",
     false, NEVER, RA_OVER_BACKOFF, NEVER},
    {"Polly v8 RetryConstants.cs 243b044: constant 2 s, 3 retries",
     "polly", NULL, CLS_503,
     {EXACT(2 * SEC), EXACT(2 * SEC), EXACT(2 * SEC), EXACT(2 * SEC), EXACT(2 * SEC), EXACT(2 * SEC)},
     4, ALL, false, NEVER, RA_OVER_CLAMP, NEVER},
    /* (f(k) − f(k−2))·2 s/1.4 bounds retry k; the means are E f(k−1+U) −
     * E f(k−2+U) times 2 s/1.4, integrated numerically. */
    {"Polly v8 RetryHelper.cs 156a9bb DecorrelatedJitterBackoffV2, base 2 s; dotnet/extensions f497c4c",
     "polly-v2", NULL, CLS_503,
     {SUMS(2.7544, 1.7422), SUMS(5.6745, 2.3163), SUMS(8.6518, 4.1558), SUMS(17.1673, 8.2552),
      SUMS(34.2962, 16.4929), SUMS(68.5766, 32.9784)},
     4, AWS, true, NEVER, RA_OVER_CLAMP, NEVER},
    {"resilience4j RetryConfig.java 19c02ce: fixed 500 ms, 3 attempts",
     "resilience4j", NULL, CLS_503,
     {EXACT(500 * MS), EXACT(500 * MS), EXACT(500 * MS), EXACT(500 * MS), EXACT(500 * MS),
      EXACT(500 * MS)},
     3, ALL, false, NEVER, RA_OVER_CLAMP, NEVER},
    /* I = 500, 750, 1125, 1687, 2530, 3795 ms; (long)(I − I/2 + U·(I + 1)) */
    {"resilience4j IntervalFunction.java 3e088d1 ofExponentialRandomBackoff(500 ms, 1.5, 0.5)",
     "resilience4j-exp", NULL, CLS_503,
     {R4J(250, 750, 500), R4J(375, 1125, 750), R4J(562, 1688, 1125), R4J(843, 2531, 1687),
      R4J(1265, 3795, 2530), R4J(1897, 5693, 3795)},
     3, ALL, false, NEVER, RA_OVER_CLAMP, NEVER},
    /* I = 500 ms·1.5^(k−1); I − I/2 + U·(I + 1 ns) */
    {"cenkalti/backoff v4.2.1 exponential.go: I·(1 ± 0.5), I from 500 ms ×1.5, 15 min",
     "cenkalti", NULL, CLS_503,
     {U(250 * MS, 750 * MS + 1), U(375 * MS, 1125 * MS + 1), U(562.5 * MS, 1687.5 * MS + 1),
      U(843.75 * MS, 2531.25 * MS + 1), U(1265.625 * MS, 3796.875 * MS + 1),
      U(1898.4375 * MS, 5695.3125 * MS + 1)},
     100, ALL, false, NEVER, RA_OVER_CLAMP, 15 * 60 * RS_S},
    {"tenacity wait.py 299c057 (PR #176): uniform(0, 2^(attempt−1)) s",
     "tenacity", NULL, CLS_503,
     {U(0, 1 * SEC), U(0, 2 * SEC), U(0, 4 * SEC), U(0, 8 * SEC), U(0, 16 * SEC), U(0, 32 * SEC)},
     100, ALL, false, NEVER, RA_OVER_CLAMP, NEVER},
    {"go-retryablehttp v0.7.6 DefaultBackoff: min(2^i·1 s, 30 s), RetryMax 4",
     "retryablehttp", NULL, CLS_503,
     {EXACT(1 * SEC), EXACT(2 * SEC), EXACT(4 * SEC), EXACT(8 * SEC), EXACT(16 * SEC),
      EXACT(30 * SEC)},
     5, AWS, true, NEVER, RA_OVER_CLAMP, NEVER},
    {"urllib3 2.6.3 (00f30f0) Retry.DEFAULT = Retry(3): backoff_factor 0, Retry-After ≤ 6 h",
     "urllib3", NULL, CLS_CONN,
     {EXACT(0), EXACT(0), EXACT(0), EXACT(0), EXACT(0), EXACT(0)}, 4, "timeout conn", true,
     21600 * RS_S, RA_OVER_CLAMP, NEVER},
    {"urllib3 2.6.3 get_backoff_time, backoff_factor 0.5: 0, then 0.5·2^(n−1) s",
     "urllib3", "layer.app.base=500ms", CLS_CONN,
     {EXACT(0), EXACT(1 * SEC), EXACT(2 * SEC), EXACT(4 * SEC), EXACT(8 * SEC), EXACT(16 * SEC)},
     4, "timeout conn", true, 21600 * RS_S, RA_OVER_CLAMP, NEVER},
};

/* Far retries, where the caps take over (and the interval stops growing);
 * and the generic kinds as a scenario loads them, with their default
 * multipliers (2; decorrelated 3, as in the AWS study). */
struct far_row {
    const char *library, *preset, *set;
    enum errclass cls;
    unsigned k;
    struct delay_law d;
};

static const struct far_row far_rows[] = {
    {"botocore standard: the 20 s cap", "aws-standard", NULL, CLS_503, 9, U(0, 20 * SEC)},
    {"botocore legacy: no cap", "aws-legacy", NULL, CLS_503, 9, U(0, 256 * SEC)},
    {"aws-sdk-go-v2: MaxBackoff, unjittered", "aws-go", NULL, CLS_503, 12, EXACT(20 * SEC)},
    {"smithy-typescript: the 20,000 ms cap", "aws-js", NULL, CLS_503, 12, MS_INT(20000)},
    {"gRPC: maxBackoff 1 s before the jitter", "grpc", NULL, CLS_503, 9, U(800 * MS, 1200 * MS)},
    {"envoy: max_interval 250 ms", "envoy", NULL, CLS_503, 12, MS_INT(250)},
    /* I: …, 3795, 5692, 8538, 12807, 19210 ms (each (long)(I·1.5)) */
    {"resilience4j: intervals truncated each step", "resilience4j-exp", NULL, CLS_503, 10,
     R4J(9605, 28815, 19210)},
    /* I reaches 43.25 s at k = 12, ≥ 60 s / 1.5, so MaxInterval from k = 13 */
    {"cenkalti v4: MaxInterval 60 s bounds I", "cenkalti", NULL, CLS_503, 14,
     U(30 * SEC, 90 * SEC + 1)},
    {"tenacity: max = infinity", "tenacity", NULL, CLS_503, 10, U(0, 512 * SEC)},
    {"go-retryablehttp: RetryWaitMax 30 s", "retryablehttp", NULL, CLS_503, 9, EXACT(30 * SEC)},
    {"urllib3: backoff_max 120 s", "urllib3", "layer.app.base=1s", CLS_CONN, 9, EXACT(120 * SEC)},
    /* a cap that is a power of two: attempt 4 = log2(16 s) still draws */
    {"aws-sdk-go-v2: a > log2(MaxBackoff) only", "aws-go", "layer.app.cap=16s", CLS_503, 4,
     U(0, 16 * SEC)},
    {"aws-sdk-go-v2: a > log2(MaxBackoff) only", "aws-go", "layer.app.cap=16s", CLS_503, 5,
     EXACT(16 * SEC)},
    {"constant: base", "constant", "layer.app.base=1s", CLS_503, 3, EXACT(1 * SEC)},
    {"linear: base·k", "linear", "layer.app.base=1s", CLS_503, 3, EXACT(3 * SEC)},
    {"exponential: base·2^(k−1)", "exponential", "layer.app.base=1s", CLS_503, 3, EXACT(4 * SEC)},
    {"AWS study full jitter: U(0, base·2^k)", "full", "layer.app.base=1s", CLS_503, 2,
     U(0, 4 * SEC)},
    {"AWS study equal jitter: e/2 + U(0, e/2), e = base·2^k", "equal", "layer.app.base=1s",
     CLS_503, 2, U(2 * SEC, 4 * SEC)},
    {"AWS study decorrelated jitter: U(base, 3·base) first", "decorrelated", "layer.app.base=1s",
     CLS_503, 1, U(1 * SEC, 3 * SEC)},
    /* then U(base, 3·s1): mean base + (3·2·base − base)/2 = 3.5·base, up to 9·base */
    {"AWS study decorrelated jitter: U(base, 3·previous)", "decorrelated", "layer.app.base=1s",
     CLS_503, 2, {1 * SEC, 9 * SEC, 3.5 * SEC, OTHER}},
};

static const char *const text = "[load]\nrate = 1/s\n[run]\nduration = 1s\n"
                                "[server]\nworkers = 1\nservice = const(1ms)\n[layer app]\n";

/* The number of χ² bins for law e: 40, or for whole milliseconds the
 * largest count up to 40 that divides the number of values. */
static int bins_of(const struct delay_law *e)
{
    if (e->shape == UNIFORM)
        return 40;
    long n = lround((e->hi - e->lo) / MS) + 1;
    int b = 40;
    while (n % b != 0)
        b--;
    return b;
}

/* Checks the delay before retry k of layer l against law e (see the
 * header): N call sequences, each drawing retries 1 to k on one state. */
static void check_law(const char *preset, const char *library, const struct layer_cfg *l,
                      enum errclass cls, unsigned k, const struct delay_law *e, gsl_rng *r)
{
    double lo = INFINITY, hi = -INFINITY, sum = 0, sq = 0, count[40] = {0};
    int nb = e->shape == UNIFORM || e->shape == UNIFORM_MS ? bins_of(e) : 0;
    bool whole_ms = e->shape == UNIFORM_MS || e->shape == WHOLE_MS;
    for (int i = 0; i < N; i++) {
        struct backoff_state st;
        backoff_state_init(&l->bp, &st);
        rs_time d = 0;
        for (unsigned j = 1; j <= k; j++)
            d = l->backoff->next_delay(&l->bp, &st, j, cls, r);
        if (whole_ms && d % RS_MS != 0)
            fail_msg("%s (%s) retry %u: %lld ns is not whole milliseconds", preset, library, k,
                     (long long)d);
        double x = (double)d;
        lo = fmin(lo, x), hi = fmax(hi, x), sum += x, sq += x * x;
        if (nb > 0) {
            double w = e->shape == UNIFORM ? e->hi - e->lo : e->hi - e->lo + MS;
            int b = (int)((x - e->lo) / w * nb);
            count[b < 0 ? 0 : b >= nb ? nb - 1 : b]++;
        }
    }
    if (lo < e->lo - 0.5 || hi > e->hi + 0.5)
        fail_msg("%s (%s) retry %u: delays in [%.6g, %.6g] s, outside [%.6g, %.6g] s", preset,
                 library, k, lo / SEC, hi / SEC, e->lo / SEC, e->hi / SEC);
    if (e->shape == EXACT_VALUE)
        return;
    double slack = 0.01 * (e->hi - e->lo);
    if ((e->shape != OTHER && lo > e->lo + slack) || hi < e->hi - (e->shape == OTHER ? 10 : 1) * slack)
        fail_msg("%s (%s) retry %u: delays in [%.6g, %.6g] s do not reach [%.6g, %.6g] s", preset,
                 library, k, lo / SEC, hi / SEC, e->lo / SEC, e->hi / SEC);
    double mean = sum / N, se = sqrt(fmax(0, sq / N - mean * mean) / N);
    if (fabs(mean - e->mean) > 5 * se + 1e-4 * e->mean)
        fail_msg("%s (%s) retry %u: mean %.6g s, the library's %.6g s (5 SE = %.3g s)", preset,
                 library, k, mean / SEC, e->mean / SEC, 5 * se / SEC);
    if (nb > 0) {
        double chi2 = 0, expect = (double)N / nb;
        for (int b = 0; b < nb; b++)
            chi2 += (count[b] - expect) * (count[b] - expect) / expect;
        if (gsl_cdf_chisq_Q(chi2, nb - 1) < 1e-4)
            fail_msg("%s (%s) retry %u: χ² %.1f on %d bins: not uniform on [%.6g, %.6g] s", preset,
                     library, k, chi2, nb, e->lo / SEC, e->hi / SEC);
    }
}

static void check_keys(const struct preset_row *w, const struct layer_cfg *l)
{
    errclass_set on;
    char bad[64], got[160];
    assert_true(errclass_parse_set(w->retry_on, &on, bad, sizeof bad));
    if (l->attempts != w->attempts)
        fail_msg("%s (%s): %u attempts, the library makes %u", w->preset, w->library, l->attempts,
                 w->attempts);
    if (l->retry_on != on)
        fail_msg("%s (%s): retries %s, the library %s", w->preset, w->library,
                 errclass_format_set(l->retry_on, got, sizeof got), w->retry_on);
    if ((l->retry_after == RA_HONOR) != w->honour_ra || l->retry_after_max != w->ra_max ||
        l->retry_after_over_max != w->ra_over)
        fail_msg("%s (%s): Retry-After %s, max %lld ns, above it %s; the library: %s, %lld ns, %s",
                 w->preset, w->library, l->retry_after == RA_HONOR ? "honoured" : "ignored",
                 (long long)l->retry_after_max, backoff_ra_over_names[l->retry_after_over_max],
                 w->honour_ra ? "honoured" : "ignored", (long long)w->ra_max,
                 backoff_ra_over_names[w->ra_over]);
}

static void check_deadline(const struct preset_row *w, const struct layer_cfg *l)
{
    if (l->deadline != w->deadline)
        fail_msg("%s (%s): deadline %lld ns, the library's %lld ns", w->preset, w->library,
                 (long long)l->deadline, (long long)w->deadline);
}

/* Loads base with layer.app.KEY = NAME (and one more override, or NULL),
 * as a user writes it. */
static void load_kind(struct scenario *sc, const char *base, const char *key, const char *name,
                      const char *extra)
{
    char set[64];
    snprintf(set, sizeof set, "layer.app.%s=%s", key, name);
    const char *sets[] = {set, extra};
    load_or_fail(sc, base, sets, extra ? 2 : 1);
}

static void every_preset_follows_its_library(void **state)
{
    (void)state;
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        const struct preset_row *w = &rows[i];
        struct scenario sc;
        load_kind(&sc, text, "backoff", w->preset, w->set);
        gsl_rng_set(r, 1000 + i);
        for (unsigned k = 1; k <= RETRIES; k++)
            check_law(w->preset, w->library, &sc.layers[0], w->cls, k, &w->d[k - 1], r);
        check_keys(w, &sc.layers[0]);
        check_deadline(w, &sc.layers[0]);
    }
    gsl_rng_free(r);
}

static void far_retries_and_generic_kinds(void **state)
{
    (void)state;
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    for (size_t i = 0; i < sizeof far_rows / sizeof far_rows[0]; i++) {
        const struct far_row *w = &far_rows[i];
        struct scenario sc;
        load_kind(&sc, text, "backoff", w->preset, w->set);
        gsl_rng_set(r, 2000 + i);
        check_law(w->preset, w->library, &sc.layers[0], w->cls, w->k, &w->d, r);
    }
    gsl_rng_free(r);
}

/* Polly computes every retry's delay (advancing DecorrelatedJitterBackoffV2's
 * state) before its DelayGenerator replaces it with a Retry-After
 * (RetryResilienceStrategy.ExecuteCore). Here ~100 requests get a
 * Retry-After of 1 s on their first failure and none on their second, so
 * each ends 1 s + d2 after it started, d2 = (f(1 + U2) − f(U1))·2 s/1.4:
 * mean 2.3167 s, standard deviation 1.046 s (both by integration), always
 * above 0. Evaluated only when not honoured, the state would still hold
 * the base and d2 would be 0. Tolerance: 5 standard errors of the mean. */
static void polly_v2_state_advances_under_retry_after(void **state)
{
    (void)state;
    const char *pv2 = "[run]\nduration = 30s\n[load]\narrival = uniform\nrate = 1000/s\n"
                       "[phase stop]\nstart = 100ms\nend = 30s\nrate = x0\n"
                       "[phase ra]\nstart = 0\nend = 500ms\noutage = error\nretry_after = 1s\n"
                       "[phase err]\nstart = 500ms\nend = 30s\noutage = error\n"
                       "[server]\nworkers = 1\nservice = const(1ms)\n"
                       "[layer app]\nbackoff = polly-v2\nattempts = 3\n";
    struct sim *s = run_text(pv2, NULL, 0);
    const struct metrics *m = sim_metrics(s);
    uint64_t n = m->requests;
    assert_true(n >= 90 && m->outcomes[OUT_EXHAUSTED] == n && m->retry_after_waits == n);
    double mean = m->lat_all.sum / (double)m->lat_all.n / SEC;
    if (m->lat_all.min <= RS_S || fabs(mean - (1 + 2.3167)) > 5 * 1.046 / sqrt((double)n))
        fail_msg("polly-v2 after a Retry-After: latency min %.4f s, mean %.4f s; Polly: > 1 s, "
                 "mean 3.3167 s", (double)m->lat_all.min / SEC, mean);
    sim_destroy(s);
}

/* A preset added to backoff.c without a row here fails, and so does one
 * without a pinned version. */
static void every_preset_has_a_row_and_a_version(void **state)
{
    (void)state;
    for (unsigned i = 0; i < backoff_nkinds; i++) {
        const struct backoff_kind *k = &backoff_kinds[i];
        if (!backoff_is_preset(k))
            continue;
        bool found = false;
        for (size_t j = 0; j < sizeof rows / sizeof rows[0]; j++)
            found |= strcmp(rows[j].preset, k->name) == 0;
        if (!found)
            fail_msg("preset %s has no row in tests/test_presets.c", k->name);
        if (k->version == NULL || k->version[0] == '\0')
            fail_msg("preset %s has no pinned version", k->name);
    }
}

/* Budgets and breakers: the defaults `budget = NAME` and `breaker = NAME`
 * bring, against the library's constants at the pinned version. Their
 * state machines are tested in test_budget.c and test_breaker.c, against
 * the same sources. */
struct budget_row {
    const char *library, *name;
    struct budget_params p; /* {max_tokens, token_ratio, percent, min_per_s, ttl,
                               min_concurrency, capacity, cost, timeout_cost, deposit,
                               deposit_on_success, k} */
};

static const struct budget_row budget_rows[] = {
    {"gRFC A6 94bed81 retryThrottling example: maxTokens 10, tokenRatio 0.1", "grpc",
     {10, 0.1, 0, 0, 0, 0, 0, 0, 0, 0, false, 0}},
    {"finagle RetryBudget.scala 65f7667: apply(10.seconds, 10, 0.2)", "ratio",
     {0, 0, 0.2, 10, 10 * RS_S, 0, 0, 0, 0, 0, false, 0}},
    {"finagle RetryBudget.scala 65f7667: apply(10.seconds, 10, 0.2)", "finagle",
     {0, 0, 0.2, 10, 10 * RS_S, 0, 0, 0, 0, 0, false, 0}},
    {"linkerd ServiceProfile retryBudget: retryRatio 0.2, minRetriesPerSecond 10, ttl 10s",
     "linkerd", {0, 0, 0.2, 10, 10 * RS_S, 0, 0, 0, 0, 0, false, 0}},
    {"envoy circuit_breaker.proto a6193bb RetryBudget: budget_percent 20, min_retry_concurrency 3",
     "envoy", {0, 0, 0.2, 0, 0, 3, 0, 0, 0, 0, false, 0}},
    {"envoy circuit_breaker.proto a6193bb Thresholds: max_retries 3", "envoy-max",
     {0, 0, 0, 0, 0, 3, 0, 0, 0, 0, false, 0}},
    {"botocore quota.py 40454ea INITIAL_CAPACITY 500; standard.py _RETRY_COST 5, _TIMEOUT_RETRY_REQUEST 10",
     "aws-standard", {0, 0, 0, 0, 0, 0, 500, 5, 10, 0, false, 0}},
    {"botocore adaptive.py 40454ea (constants in budget.c: C 0.4, beta 0.7, smoothing 0.8)",
     "aws-adaptive", {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, false, 0}},
    {"SRE book ch. 21: K = 2 over 2 minutes; retries at most 10 % of requests", "sre",
     {0, 0, 0.1, 0, 120 * RS_S, 0, 0, 0, 0, 0, false, 2}},
    {"mbrooker/simulator_example 7e5a117 AdaptiveRetryFactory(0.1, 5), should_retry costs 1",
     "bucket", {0, 0, 0, 0, 0, 0, 5, 1, 1, 0.1, false, 0}},
};

struct breaker_row {
    const char *library, *name;
    struct breaker_params p; /* {failures, open_for, probes, window_calls, window, min_calls,
                                failure_rate, slow_rate, slow_call, max_failure_ratio} */
};

static const struct breaker_row breaker_rows[] = {
    {"gobreaker 3862861: ConsecutiveFailures > 5, Timeout 60 s, MaxRequests 1", "consecutive",
     {5, 60 * RS_S, 1, 0, 0, 0, 0, 0, NEVER, 0}},
    {"gobreaker 3862861: ConsecutiveFailures > 5, Timeout 60 s, MaxRequests 1", "gobreaker",
     {5, 60 * RS_S, 1, 0, 0, 0, 0, 0, NEVER, 0}},
    {"resilience4j CircuitBreakerConfig.java 335f5eb: 50 %, 100 calls, 60 s open, 10 probes, slow 100 % at 60 s",
     "rate", {0, 60 * RS_S, 10, 100, 0, 100, 0.5, 1.0, 60 * RS_S, 0}},
    {"resilience4j CircuitBreakerConfig.java 335f5eb: 50 %, 100 calls, 60 s open, 10 probes, slow 100 % at 60 s",
     "resilience4j", {0, 60 * RS_S, 10, 100, 0, 100, 0.5, 1.0, 60 * RS_S, 0}},
    {"Hystrix HystrixCommandProperties.java da55d45: 10 s window, 20 requests, 50 %, sleep 5 s",
     "hystrix", {0, 5 * RS_S, 1, 0, 10 * RS_S, 20, 0.5, 1.0, NEVER, 0}},
    {"Polly v8 CircuitBreakerConstants.cs 38a75c4: ratio 0.1, throughput 100, sampling 30 s, break 5 s",
     "polly", {0, 5 * RS_S, 1, 0, 30 * RS_S, 100, 0.1, 1.0, NEVER, 0}},
    {"mbrooker/simulator_example 7e5a117 CircuitBreakerRetryFactory(NRetries(3), 0.1)", "brooker",
     {0, 0, 0, 0, 0, 0, 0, 0, NEVER, 0.1}},
};

static const char *const policy_text = "[load]\nrate = 1/s\n[run]\nduration = 1s\n"
                                       "[server]\nworkers = 1\nservice = const(1ms)\n"
                                       "[layer app]\nattempts = 3\nbackoff = constant\nbase = 1ms\n";

/* Field by field: the structs have padding. */
static bool budget_params_equal(const struct budget_params *a, const struct budget_params *b)
{
    return a->max_tokens == b->max_tokens && a->token_ratio == b->token_ratio &&
           a->percent == b->percent && a->min_per_s == b->min_per_s && a->ttl == b->ttl &&
           a->min_concurrency == b->min_concurrency && a->capacity == b->capacity &&
           a->cost == b->cost && a->timeout_cost == b->timeout_cost && a->deposit == b->deposit &&
           a->deposit_on_success == b->deposit_on_success && a->k == b->k;
}

static bool breaker_params_equal(const struct breaker_params *a, const struct breaker_params *b)
{
    return a->failures == b->failures && a->open_for == b->open_for && a->probes == b->probes &&
           a->window_calls == b->window_calls && a->window == b->window &&
           a->min_calls == b->min_calls && a->failure_rate == b->failure_rate &&
           a->slow_rate == b->slow_rate && a->slow_call == b->slow_call &&
           a->max_failure_ratio == b->max_failure_ratio;
}

static void every_budget_follows_its_library(void **state)
{
    (void)state;
    for (unsigned i = 0; i < budget_nkinds; i++) {
        const struct budget_kind *k = &budget_kinds[i];
        if (k->id == BUDGET_NONE)
            continue;
        const struct budget_row *w = NULL;
        for (size_t j = 0; j < sizeof budget_rows / sizeof budget_rows[0]; j++)
            if (strcmp(budget_rows[j].name, k->name) == 0)
                w = &budget_rows[j];
        if (w == NULL || k->version[0] == '\0')
            fail_msg("budget %s has no row in tests/test_presets.c or no pinned version", k->name);
        struct scenario sc;
        load_kind(&sc, policy_text, "budget", k->name, NULL);
        if (!budget_params_equal(&sc.layers[0].budget_p, &w->p))
            fail_msg("budget %s: its defaults differ from %s", k->name, w->library);
    }
}

static void every_breaker_follows_its_library(void **state)
{
    (void)state;
    for (unsigned i = 0; i < breaker_nkinds; i++) {
        const struct breaker_kind *k = &breaker_kinds[i];
        if (k->id == BREAKER_NONE)
            continue;
        const struct breaker_row *w = NULL;
        for (size_t j = 0; j < sizeof breaker_rows / sizeof breaker_rows[0]; j++)
            if (strcmp(breaker_rows[j].name, k->name) == 0)
                w = &breaker_rows[j];
        if (w == NULL || k->version[0] == '\0')
            fail_msg("breaker %s has no row in tests/test_presets.c or no pinned version", k->name);
        struct scenario sc;
        load_kind(&sc, policy_text, "breaker", k->name, NULL);
        if (!breaker_params_equal(&sc.layers[0].breaker_p, &w->p))
            fail_msg("breaker %s: its defaults differ from %s", k->name, w->library);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_preset_follows_its_library),
        cmocka_unit_test(far_retries_and_generic_kinds),
        cmocka_unit_test(polly_v2_state_advances_under_retry_after),
        cmocka_unit_test(every_preset_has_a_row_and_a_version),
        cmocka_unit_test(every_budget_follows_its_library),
        cmocka_unit_test(every_breaker_follows_its_library),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
