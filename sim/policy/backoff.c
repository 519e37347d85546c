/*
 * backoff — delay formulas as a table of descriptors. See backoff.h.
 * Each preset's function says which library it follows; docs/presets.md
 * holds the sources.
 */
#include "backoff.h"

#include <math.h>
#include <string.h>

#define MS 1e6 /* nanoseconds per millisecond */

static double cap_of(const struct backoff_params *p)
{
    return p->cap < RS_TIME_LIMIT ? (double)p->cap : (double)RS_TIME_LIMIT;
}

static double min_cap(const struct backoff_params *p, double d)
{
    double c = cap_of(p);
    return d < c ? d : c; /* also maps +inf to the cap */
}

double backoff_envelope(const struct backoff_params *p, double k)
{
    return min_cap(p, (double)p->base * pow(p->multiplier, k));
}

void backoff_state_init(const struct backoff_params *p, struct backoff_state *s)
{
    s->prev = (double)p->base;
    s->interval = (double)p->base;
}

/* ---- generic kinds ---- */

static rs_time d_none(const struct backoff_params *p, struct backoff_state *s, unsigned k,
                      enum errclass cls, gsl_rng *r)
{
    (void)p, (void)s, (void)k, (void)cls, (void)r;
    return 0;
}

static rs_time d_constant(const struct backoff_params *p, struct backoff_state *s, unsigned k,
                          enum errclass cls, gsl_rng *r)
{
    (void)s, (void)k, (void)cls, (void)r;
    return p->base;
}

static rs_time d_linear(const struct backoff_params *p, struct backoff_state *s, unsigned k,
                        enum errclass cls, gsl_rng *r)
{
    (void)s, (void)cls, (void)r;
    return units_from_ns(min_cap(p, (double)p->base * (double)k));
}

static rs_time d_exponential(const struct backoff_params *p, struct backoff_state *s, unsigned k,
                             enum errclass cls, gsl_rng *r)
{
    (void)s, (void)cls, (void)r;
    return units_from_ns(backoff_envelope(p, (double)k - 1.0));
}

static rs_time d_full(const struct backoff_params *p, struct backoff_state *s, unsigned k,
                      enum errclass cls, gsl_rng *r)
{
    (void)s, (void)cls;
    return units_from_ns(gsl_rng_uniform(r) * backoff_envelope(p, (double)k));
}

static rs_time d_equal(const struct backoff_params *p, struct backoff_state *s, unsigned k,
                       enum errclass cls, gsl_rng *r)
{
    (void)s, (void)cls;
    double half = backoff_envelope(p, (double)k) / 2.0;
    return units_from_ns(half + gsl_rng_uniform(r) * half);
}

static rs_time d_decorrelated(const struct backoff_params *p, struct backoff_state *s, unsigned k,
                              enum errclass cls, gsl_rng *r)
{
    (void)k, (void)cls;
    double lo = (double)p->base;
    double hi = p->multiplier * s->prev;
    s->prev = (double)units_from_ns(min_cap(p, lo + gsl_rng_uniform(r) * (hi - lo)));
    return (rs_time)s->prev;
}

/* ---- presets ---- */

/* Full jitter numbered from the first retry, U[0,1)·min(base·mult^(k−1), cap):
 * botocore standard and legacy (U·min(2^(a−1), 20) s, a = k) and tenacity's
 * wait_random_exponential(multiplier=base, max=cap, exp_base=mult, min=0). */
static rs_time d_full_from_first(const struct backoff_params *p, struct backoff_state *s,
                                 unsigned k, enum errclass cls, gsl_rng *r)
{
    (void)s, (void)cls;
    return units_from_ns(gsl_rng_uniform(r) * backoff_envelope(p, (double)k - 1.0));
}

/* aws-sdk-go-v2's default ExponentialJitterBackoff (backoffDelayLegacy),
 * numbered by the attempt that failed (a = k): once a exceeds
 * log_mult(cap/base) (⌊log2 20⌋ = 4 with the defaults) the delay is exactly
 * the cap, with no jitter; before, U[0,1)·base·mult^k. So e(k) > cap ⟺
 * k > log_mult(cap/base), and retries 5, 6, … wait exactly 20 s. */
static rs_time d_aws_go(const struct backoff_params *p, struct backoff_state *s, unsigned k,
                        enum errclass cls, gsl_rng *r)
{
    (void)s, (void)cls;
    double e = (double)p->base * pow(p->multiplier, (double)k);
    if (e > cap_of(p))
        return units_from_ns(cap_of(p));
    return units_from_ns(gsl_rng_uniform(r) * e);
}

/* AWS JS v3: floor(U·min(x·2^(k−1), cap)) whole milliseconds, x = base, or
 * 5·base (500 ms) for throttling errors (429). */
static rs_time d_aws_js(const struct backoff_params *p, struct backoff_state *s, unsigned k,
                        enum errclass cls, gsl_rng *r)
{
    (void)s;
    double x = (double)p->base * (cls == CLS_429 ? 5.0 : 1.0);
    double e = min_cap(p, x * pow(p->multiplier, (double)k - 1.0));
    return units_from_ns(floor(gsl_rng_uniform(r) * e / MS) * MS);
}

/* gRPC retry policy (A6 after 2024-08): min(initial·mult^(n−1), max)·U(1−j, 1+j), j = 0.2. */
static rs_time d_grpc(const struct backoff_params *p, struct backoff_state *s, unsigned k,
                      enum errclass cls, gsl_rng *r)
{
    (void)s, (void)cls;
    double u = 1.0 - p->jitter + 2.0 * p->jitter * gsl_rng_uniform(r);
    return units_from_ns(backoff_envelope(p, (double)k - 1.0) * u);
}

/* Envoy: I_k = min(base·2^(k−1), cap) (the doubling-until-max/2 rule gives
 * the same sequence); delay = rand() mod I_k, whole milliseconds. */
static rs_time d_envoy(const struct backoff_params *p, struct backoff_state *s, unsigned k,
                       enum errclass cls, gsl_rng *r)
{
    (void)s, (void)cls;
    double i_ms = floor(backoff_envelope(p, (double)k - 1.0) / MS);
    return units_from_ns(floor(gsl_rng_uniform(r) * i_ms) * MS);
}

/* Polly v8 DecorrelatedJitterBackoffV2: t = (k−1) + U[0,1);
 * f(t) = 2^t·tanh(√(4t)); delay = (f(t) − f_prev)·base/1.4; f_prev ← f(t),
 * starting at 0; MaxDelay (cap) last. The delays telescope to
 * f(t)·base/1.4, so their medians are about base·1, 2, 4, … */
static rs_time d_polly_v2(const struct backoff_params *p, struct backoff_state *s, unsigned k,
                          enum errclass cls, gsl_rng *r)
{
    (void)cls;
    if (k == 1)
        s->prev = 0.0;
    double t = (double)(k - 1) + gsl_rng_uniform(r);
    double f = pow(2.0, t) * tanh(sqrt(4.0 * t));
    double d = (f - s->prev) * (double)p->base / 1.4;
    s->prev = f;
    return units_from_ns(min_cap(p, isfinite(d) ? d : (double)RS_TIME_LIMIT));
}

/* Resilience4j ofExponentialRandomBackoff (IntervalFunction.java 3e088d1),
 * in whole milliseconds as the library computes: I_1 = base,
 * I_(a+1) = (long)(I_a·mult); delay = (long)(I − fI + U·(2fI + 1)) ms,
 * f = jitter; then min(delay, cap). O(k), k ≤ 100. */
static rs_time d_resilience4j_exp(const struct backoff_params *p, struct backoff_state *s,
                                  unsigned k, enum errclass cls, gsl_rng *r)
{
    (void)s, (void)cls;
    double i = floor((double)p->base / MS);
    for (unsigned a = 1; a < k && i < (double)RS_TIME_LIMIT / MS; a++)
        i = floor(i * p->multiplier);
    double f = p->jitter;
    double d = floor(i - f * i + gsl_rng_uniform(r) * (2.0 * f * i + 1.0));
    return units_from_ns(min_cap(p, d * MS));
}

/* cenkalti/backoff v4: next = I − fI + U·(2fI + 1 ns); then
 * I ← (I ≥ cap/mult) ? cap : I·mult. The cap bounds I, not the jittered value. */
static rs_time d_cenkalti(const struct backoff_params *p, struct backoff_state *s, unsigned k,
                          enum errclass cls, gsl_rng *r)
{
    (void)k, (void)cls;
    double i = s->interval, f = p->jitter;
    double d = i - f * i + gsl_rng_uniform(r) * (2.0 * f * i + 1.0);
    s->interval = (i >= cap_of(p) / p->multiplier) ? cap_of(p) : i * p->multiplier;
    return units_from_ns(d);
}

/* urllib3 Retry: 0 for the first retry, then min(cap, base·2^(k−1) + U(0, jitter·1 s)). */
static rs_time d_urllib3(const struct backoff_params *p, struct backoff_state *s, unsigned k,
                         enum errclass cls, gsl_rng *r)
{
    (void)s, (void)cls;
    if (k <= 1)
        return 0;
    double d = (double)p->base * pow(p->multiplier, (double)k - 1.0);
    if (p->jitter > 0)
        d += gsl_rng_uniform(r) * p->jitter * 1e9;
    return units_from_ns(min_cap(p, d));
}

#define S RS_S
#define NEVER RS_TIME_NEVER
#define CLAMP RA_OVER_CLAMP
#define B(c) ERRCLASS_BIT(CLS_##c)
#define AWS_RETRY (B(TIMEOUT) | B(CONN) | B(429) | B(500) | B(502) | B(503) | B(504))
#define HTTP5XX (B(CONN) | B(500) | B(502) | B(503) | B(504))
#define GENERIC(name, f, mult, src, lag) \
    {name, src, "", f, {0, mult, NEVER, 0}, 0, 0, false, NEVER, CLAMP, NEVER, 0, lag}
#define BLOG "AWS Architecture Blog 2015, aws-samples/aws-arch-backoff-simulator"

const char *const backoff_ra_over_names[] = {"clamp", "give-up", "backoff", NULL};

/* name, source, version, formula, {base, multiplier, cap, jitter}, attempts,
 * retry_on, honour Retry-After, its max, above the max, deadline, attempts
 * clamp, exponent lag. docs/presets.md has each version's files and what was compared;
 * tests/test_presets.c holds every preset to its library's formula. */
const struct backoff_kind backoff_kinds[] = {
    GENERIC("none", d_none, 2.0, "", 0),
    GENERIC("constant", d_constant, 2.0, "", 0),
    GENERIC("linear", d_linear, 2.0, "", 0),
    GENERIC("exponential", d_exponential, 2.0, "", 1),
    GENERIC("full", d_full, 2.0, BLOG, 0),
    GENERIC("equal", d_equal, 2.0, BLOG, 0),
    GENERIC("decorrelated", d_decorrelated, 3.0, BLOG, 0),

    {"aws-standard", "boto/botocore botocore/retries/standard.py (standard mode)",
     "botocore 0719e79, standard mode 2.0", d_full_from_first, {1 * S, 2.0, 20 * S, 0}, 3,
     AWS_RETRY, false, NEVER, CLAMP, NEVER, 0, 0},
    {"aws-legacy", "boto/botocore botocore/data/_retry.json, retryhandler.py (legacy mode)",
     "botocore _retry.json 6403a35, retryhandler.py 0992565", d_full_from_first,
     {1 * S, 2.0, NEVER, 0}, 5, AWS_RETRY, false, NEVER, CLAMP, NEVER, 0, 0},
    {"aws-go", "aws/aws-sdk-go-v2 aws/retry/jitter_backoff.go (backoffDelayLegacy), standard.go",
     "aws-sdk-go-v2 aws v1.16.13 (backoffDelayLegacy, still the default path); standard.go 1489ddb", d_aws_go,
     {1 * S, 2.0, 20 * S, 0}, 3, AWS_RETRY, false, NEVER, CLAMP, NEVER, 0, 0},
    {"aws-js", "smithy-lang/smithy-typescript util-retry DefaultRetryBackoffStrategy.ts",
     "smithy-typescript util-retry cffd868 (standard mode)", d_aws_js,
     {100 * RS_MS, 2.0, 20 * S, 0}, 3, AWS_RETRY, false, NEVER, CLAMP, NEVER, 0, 0},
    {"grpc", "grpc/proposal A6-client-retries.md (no defaults: the A6 example policy)",
     "gRFC A6 dc9fd4f (PR #452, ±20 %); grpc-go 67bee55 (PR #7869); cited, not read", d_grpc, {100 * RS_MS, 2.0, 1 * S, 0.2},
     4, B(CONN) | B(503), false, NEVER, CLAMP, NEVER, 5, 0},
    {"envoy", "envoyproxy/envoy source/common/common/backoff_strategy.cc; route retry_on 5xx",
     "envoy retry_state_impl.cc e78906c, router.cc 001b1c0, route_components.proto 3304863", d_envoy,
     {25 * RS_MS, 2.0, 250 * RS_MS, 0}, 2, HTTP5XX | B(TIMEOUT), false, NEVER, RA_OVER_BACKOFF,
     15 * S, 0, 0}, /* the route timeout: 15 s over all tries */
    {"istio", "istio/istio pilot/pkg/networking/core/route/retry/retry.go (503 excluded)",
     "istio retry.go 7adf609 (1.24 and later)", d_envoy, {25 * RS_MS, 2.0, 250 * RS_MS, 0}, 3,
     B(CONN), false, NEVER, RA_OVER_BACKOFF, NEVER, 0, 0},
    {"polly", "App-vNext/Polly src/Polly.Core/Retry/RetryConstants.cs (v8 defaults)",
     "Polly v8 RetryConstants.cs 243b044", d_constant, {2 * S, 2.0, NEVER, 0}, 4,
     ERRCLASS_ALL_FAILURES, false, NEVER, CLAMP, NEVER, 0, 0},
    {"polly-v2", "App-vNext/Polly RetryHelper.cs DecorrelatedJitterBackoffV2; dotnet/extensions HttpRetryStrategyOptions",
     "Polly v8 RetryHelper.cs 156a9bb; dotnet/extensions f497c4c", d_polly_v2,
     {2 * S, 2.0, NEVER, 0}, 4, AWS_RETRY, true, NEVER, CLAMP, NEVER, 0, 0},
    {"resilience4j", "resilience4j/resilience4j resilience4j-retry RetryConfig.java (defaults)",
     "resilience4j RetryConfig.java 19c02ce", d_constant, {500 * RS_MS, 2.0, NEVER, 0}, 3,
     ERRCLASS_ALL_FAILURES, false, NEVER, CLAMP, NEVER, 0, 0},
    {"resilience4j-exp", "resilience4j/resilience4j resilience4j-core IntervalFunction.java",
     "resilience4j IntervalFunction.java 3e088d1", d_resilience4j_exp,
     {500 * RS_MS, 1.5, NEVER, 0.5}, 3, ERRCLASS_ALL_FAILURES, false, NEVER, CLAMP, NEVER, 0, 0},
    {"cenkalti", "cenkalti/backoff v4 exponential.go", "cenkalti/backoff v4.2.1",
     d_cenkalti, {500 * RS_MS, 1.5, 60 * S, 0.5}, 100, ERRCLASS_ALL_FAILURES, false, NEVER,
     CLAMP, 15 * 60 * S, 0, 0},
    {"tenacity", "jd/tenacity tenacity/wait.py wait_random_exponential",
     "tenacity wait.py 299c057 (PR #176: exponent attempt - 1; after 5.0.4)", d_full_from_first,
     {1 * S, 2.0, NEVER, 0}, 100, ERRCLASS_ALL_FAILURES, false, NEVER, CLAMP, NEVER, 0, 0},
    {"retryablehttp", "hashicorp/go-retryablehttp client.go DefaultBackoff",
     "go-retryablehttp v0.7.6 (429, Retry-After dates)", d_exponential,
     {1 * S, 2.0, 30 * S, 0}, 5, AWS_RETRY, true, NEVER, CLAMP, NEVER, 0, 0},
    {"urllib3", "urllib3/urllib3 src/urllib3/util/retry.py (a pool's default Retry.DEFAULT = Retry(3))",
     "urllib3 2.6.3 (retry.py 00f30f0)", d_urllib3, {0, 2.0, 120 * S, 0}, 4,
     B(CONN) | B(TIMEOUT), true, 21600 * S, CLAMP, NEVER, 0, 0},
};
const unsigned backoff_nkinds = sizeof backoff_kinds / sizeof backoff_kinds[0];

const struct backoff_kind *backoff_find(const char *name)
{
    for (unsigned i = 0; i < backoff_nkinds; i++)
        if (strcmp(backoff_kinds[i].name, name) == 0)
            return &backoff_kinds[i];
    return NULL;
}
