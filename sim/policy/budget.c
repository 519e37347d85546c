/*
 * budget — retry budgets and client-side throttling. See budget.h; the
 * sources of each kind are in the table at the end.
 */
#include "budget.h"

#include <math.h>
#include <string.h>

#define RATIO_SLICES 10 /* Finagle keeps its ttl in 10 slices */
#define SRE_SLICES 12
#define ADAPTIVE_C 0.4
#define ADAPTIVE_BETA 0.7

static rs_time slice_of(const struct budget_params *p, unsigned n) { return p->ttl / n > 0 ? p->ttl / n : 1; }

/* Finagle: W = ⌊1000/percent⌋; reserve R = min_per_s · ttl · W. */
static double ratio_withdrawal(const struct budget_params *p) { return floor(1000.0 / p->percent); }
static double ratio_reserve(const struct budget_params *p)
{
    return p->min_per_s * units_seconds(p->ttl) * ratio_withdrawal(p);
}

/* Brooker's bucket counts in thousandths of a token, so that ten deposits
 * of 0.1 make exactly one token. */
static double milli(double x) { return units_round(x * 1000.0); }

/* ---- the kinds: each a set of operations (NULL: nothing to do) ---- */

struct budget_ops {
    size_t extra_size; /* the kind's extra state: a window (ratio, sre), the estimate (aws-adaptive) */
    void (*init)(const struct budget_params *p, struct budget_state *s);
    void (*call_start)(const struct budget_params *p, struct budget_state *s, rs_time now);
    void (*call_end)(struct budget_state *s, struct budget_call *c);
    void (*attempt_end)(struct budget_state *s, struct budget_call *c);
    bool (*admit)(const struct budget_params *p, struct budget_state *s, rs_time now, gsl_rng *r);
    bool (*allow_retry)(const struct budget_params *p, struct budget_state *s, struct budget_call *c,
                        rs_time now, enum errclass cls);
    void (*result)(const struct budget_params *p, struct budget_state *s, struct budget_call *c,
                   rs_time now, enum errclass cls, bool retried, bool failure_counts);
    double (*level)(const struct budget_params *p, struct budget_state *s, rs_time now);
};

static void tokens_at_max(const struct budget_params *p, struct budget_state *s)
{
    s->tokens = p->max_tokens;
}
static void tokens_at_capacity(const struct budget_params *p, struct budget_state *s)
{
    s->tokens = p->capacity;
}
static double level_tokens(const struct budget_params *p, struct budget_state *s, rs_time now)
{
    (void)p, (void)now;
    return s->tokens;
}

/* grpc: evaluated after the failure's decrement (grpc-go) */
static bool grpc_allow(const struct budget_params *p, struct budget_state *s, struct budget_call *c,
                       rs_time now, enum errclass cls)
{
    (void)c, (void)now, (void)cls;
    return s->tokens > p->max_tokens / 2.0;
}
static void grpc_result(const struct budget_params *p, struct budget_state *s, struct budget_call *c,
                        rs_time now, enum errclass cls, bool retried, bool failure_counts)
{
    (void)c, (void)now, (void)retried;
    if (cls == CLS_OK)
        s->tokens = fmin(p->max_tokens, s->tokens + p->token_ratio);
    else if (failure_counts)
        s->tokens = fmax(0.0, s->tokens - 1.0);
}

/* ratio: Finagle's units: a request deposits 1000, a retry withdraws ⌊1000/percent⌋ */
static void ratio_start(const struct budget_params *p, struct budget_state *s, rs_time now)
{
    window_add(s->w, now, slice_of(p, RATIO_SLICES), RATIO_SLICES, 0, 1000.0);
}
static bool ratio_allow(const struct budget_params *p, struct budget_state *s, struct budget_call *c,
                        rs_time now, enum errclass cls)
{
    (void)c, (void)cls;
    rs_time sl = slice_of(p, RATIO_SLICES);
    double w = ratio_withdrawal(p);
    double balance = ratio_reserve(p) + window_sum(s->w, now, sl, RATIO_SLICES, 0);
    if (balance < w)
        return false;
    window_add(s->w, now, sl, RATIO_SLICES, 0, -w);
    return true;
}
static double ratio_level(const struct budget_params *p, struct budget_state *s, rs_time now)
{
    /* in retries available */
    return (ratio_reserve(p) + window_sum(s->w, now, slice_of(p, RATIO_SLICES), RATIO_SLICES, 0)) /
           ratio_withdrawal(p);
}

/* envoy: concurrent calls and retries */
static void envoy_start(const struct budget_params *p, struct budget_state *s, rs_time now)
{
    (void)p, (void)now;
    s->active_calls++;
}
static void envoy_attempt_end(struct budget_state *s, struct budget_call *c)
{
    if (c->retry_active) {
        s->active_retries--;
        c->retry_active = false;
    }
}
static void envoy_end(struct budget_state *s, struct budget_call *c)
{
    s->active_calls--;
    envoy_attempt_end(s, c);
}
static bool envoy_allow(const struct budget_params *p, struct budget_state *s, struct budget_call *c,
                        rs_time now, enum errclass cls)
{
    (void)now, (void)cls;
    double allowed = fmax(floor(p->percent * s->active_calls), p->min_concurrency);
    if ((double)s->active_retries >= allowed)
        return false;
    s->active_retries++;
    c->retry_active = true;
    return true;
}
static void envoy_result(const struct budget_params *p, struct budget_state *s, struct budget_call *c,
                         rs_time now, enum errclass cls, bool retried, bool failure_counts)
{
    (void)p, (void)now, (void)cls, (void)retried, (void)failure_counts;
    envoy_attempt_end(s, c);
}
static double envoy_level(const struct budget_params *p, struct budget_state *s, rs_time now)
{
    (void)now;
    return fmax(floor(p->percent * s->active_calls), p->min_concurrency) - s->active_retries;
}

/* aws-standard: a quota of tokens */
static bool aws_allow(const struct budget_params *p, struct budget_state *s, struct budget_call *c,
                      rs_time now, enum errclass cls)
{
    (void)now;
    double cost = cls == CLS_TIMEOUT ? p->timeout_cost : p->cost;
    if (s->tokens < cost)
        return false;
    s->tokens -= cost;
    c->last_cost = cost;
    return true;
}
static void aws_result(const struct budget_params *p, struct budget_state *s, struct budget_call *c,
                       rs_time now, enum errclass cls, bool retried, bool failure_counts)
{
    (void)now, (void)failure_counts;
    if (cls == CLS_OK) /* refund the last retry, or reward a call that needed none */
        s->tokens = fmin(p->capacity, s->tokens + (retried ? c->last_cost : 1.0));
}

/* aws-adaptive: the CUBIC rate limiter, once throttled */
static void adaptive_init(const struct budget_params *p, struct budget_state *s)
{
    (void)p;
    s->ad->fill = 0.5;
    s->ad->cap = 1.0;
}
static bool adaptive_admit(const struct budget_params *p, struct budget_state *s, rs_time now,
                           gsl_rng *r)
{
    (void)p, (void)r;
    struct budget_adaptive *a = s->ad;
    if (!a->enabled)
        return true;
    s->tokens = fmin(a->cap, s->tokens + units_seconds(now - a->last_refill) * a->fill);
    a->last_refill = now;
    if (s->tokens < 1.0)
        return false;
    s->tokens -= 1.0;
    return true;
}
/* botocore adaptive.py / throttling.py, steps 1-4 (docs/budgets.md). */
static void adaptive_result(struct budget_state *bs, rs_time now, bool throttle)
{
    struct budget_adaptive *s = bs->ad;
    double t = units_seconds(now);
    s->cnt += 1.0;
    double b = floor(2.0 * t) / 2.0;
    double last = units_seconds(s->last_bucket);
    if (b > last) {
        s->measured = 0.8 * s->cnt / (b - last) + 0.2 * s->measured;
        s->cnt = 0.0;
        s->last_bucket = (rs_time)llround(b * 1e9);
    }
    double calc;
    if (throttle) {
        double r = s->enabled ? fmin(s->measured, s->fill) : s->measured;
        s->last_max = r;
        s->last_throttle = now;
        calc = ADAPTIVE_BETA * r;
        s->enabled = true;
    } else {
        double kk = cbrt(s->last_max * (1.0 - ADAPTIVE_BETA) / ADAPTIVE_C);
        double dt = t - units_seconds(s->last_throttle) - kk;
        calc = ADAPTIVE_C * dt * dt * dt + s->last_max;
    }
    double nw = fmin(calc, 2.0 * s->measured);
    s->fill = fmax(nw, 0.5);
    s->cap = fmax(nw, 1.0);
    bs->tokens = fmin(bs->tokens, s->cap);
}
static void adaptive_on_result(const struct budget_params *p, struct budget_state *s,
                               struct budget_call *c, rs_time now, enum errclass cls, bool retried,
                               bool failure_counts)
{
    (void)p, (void)c, (void)retried, (void)failure_counts;
    adaptive_result(s, now, cls == CLS_429);
}
static double adaptive_level(const struct budget_params *p, struct budget_state *s, rs_time now)
{
    (void)p, (void)now;
    return s->ad->enabled ? s->ad->fill : -1.0; /* the allowed send rate, once throttled */
}

/* sre: the probability from the history, then this request joins it
 * (requests include the ones rejected locally) */
static double sre_reject(const struct budget_params *p, struct budget_state *s, rs_time now)
{
    rs_time sl = slice_of(p, SRE_SLICES);
    double req = window_sum(s->w, now, sl, SRE_SLICES, 0);
    double acc = window_sum(s->w, now, sl, SRE_SLICES, 1);
    return fmax(0.0, (req - p->k * acc) / (req + 1.0));
}
static bool sre_admit(const struct budget_params *p, struct budget_state *s, rs_time now, gsl_rng *r)
{
    double reject = sre_reject(p, s, now);
    window_add(s->w, now, slice_of(p, SRE_SLICES), SRE_SLICES, 0, 1.0);
    return !(reject > 0.0 && gsl_rng_uniform(r) < reject);
}
static bool sre_allow(const struct budget_params *p, struct budget_state *s, struct budget_call *c,
                      rs_time now, enum errclass cls)
{
    (void)c, (void)cls;
    rs_time sl = slice_of(p, SRE_SLICES);
    double req = window_sum(s->w, now, sl, SRE_SLICES, 0);
    double ret = window_sum(s->w, now, sl, SRE_SLICES, 2);
    if (ret >= p->percent * req)
        return false;
    window_add(s->w, now, sl, SRE_SLICES, 2, 1.0);
    return true;
}
static void sre_result(const struct budget_params *p, struct budget_state *s, struct budget_call *c,
                       rs_time now, enum errclass cls, bool retried, bool failure_counts)
{
    (void)c, (void)retried, (void)failure_counts;
    /* accepted by the backend: anything but no answer or an overload answer */
    if (cls != CLS_TIMEOUT && cls != CLS_CONN && cls != CLS_429 && cls != CLS_503 &&
        cls != CLS_DEADLINE && cls != CLS_THROTTLED && cls != CLS_BREAKER)
        window_add(s->w, now, slice_of(p, SRE_SLICES), SRE_SLICES, 1, 1.0);
}

/* bucket: Brooker's token bucket, in thousandths of a token */
static void bucket_init(const struct budget_params *p, struct budget_state *s)
{
    s->tokens = milli(p->capacity);
}
static void bucket_start(const struct budget_params *p, struct budget_state *s, rs_time now)
{
    (void)now;
    if (!p->deposit_on_success)
        s->tokens = fmin(milli(p->capacity), s->tokens + milli(p->deposit));
}
static bool bucket_allow(const struct budget_params *p, struct budget_state *s, struct budget_call *c,
                         rs_time now, enum errclass cls)
{
    (void)c, (void)now, (void)cls;
    if (s->tokens <= 1000.0) /* more than one token */
        return false;
    s->tokens -= milli(p->cost);
    return true;
}
static void bucket_result(const struct budget_params *p, struct budget_state *s, struct budget_call *c,
                          rs_time now, enum errclass cls, bool retried, bool failure_counts)
{
    (void)c, (void)now, (void)retried, (void)failure_counts;
    if (cls == CLS_OK && p->deposit_on_success)
        s->tokens = fmin(milli(p->capacity), s->tokens + milli(p->deposit));
}
static double bucket_level(const struct budget_params *p, struct budget_state *s, rs_time now)
{
    (void)p, (void)now;
    return s->tokens / 1000.0;
}

/* {extra state, init, call_start, call_end, attempt_end, admit, allow_retry,
 *  result, level} */
static const struct budget_ops none_ops = {0, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL};
static const struct budget_ops grpc_ops = {0,    tokens_at_max, NULL,      NULL,       NULL,
                                           NULL, grpc_allow,    grpc_result, level_tokens};
static const struct budget_ops ratio_ops = {sizeof(struct window), NULL, ratio_start, NULL, NULL,
                                            NULL, ratio_allow, NULL, ratio_level};
static const struct budget_ops envoy_ops = {0,    NULL,        envoy_start,  envoy_end, envoy_attempt_end,
                                            NULL, envoy_allow, envoy_result, envoy_level};
static const struct budget_ops aws_standard_ops = {0,    tokens_at_capacity, NULL,       NULL,        NULL,
                                                   NULL, aws_allow,          aws_result, level_tokens};
static const struct budget_ops aws_adaptive_ops = {
    sizeof(struct budget_adaptive), adaptive_init, NULL, NULL, NULL, adaptive_admit, NULL,
    adaptive_on_result, adaptive_level};
static const struct budget_ops sre_ops = {sizeof(struct window), NULL, NULL, NULL, NULL,
                                          sre_admit, sre_allow, sre_result, sre_reject};
static const struct budget_ops bucket_ops = {0,    bucket_init,  bucket_start,  NULL,        NULL,
                                             NULL, bucket_allow, bucket_result, bucket_level};

/* ---- the operations, through the kind's descriptor ---- */

size_t budget_extra_size(const struct budget_kind *k) { return k->ops->extra_size; }

size_t budget_state_size(const struct budget_kind *k)
{
    return sizeof(struct budget_state) + budget_extra_size(k);
}

void budget_state_init(const struct budget_kind *k, const struct budget_params *p,
                       struct budget_state *s, void *extra)
{
    memset(s, 0, sizeof *s);
    if (extra != NULL)
        memset(extra, 0, budget_extra_size(k));
    s->w = extra; /* w and ad share a union: the kind's extra state */
    if (k->ops->init != NULL)
        k->ops->init(p, s);
}

void budget_call_start(const struct budget_kind *k, const struct budget_params *p,
                       struct budget_state *s, rs_time now)
{
    if (k->ops->call_start != NULL)
        k->ops->call_start(p, s, now);
}

void budget_attempt_end(const struct budget_kind *k, struct budget_state *s, struct budget_call *c)
{
    if (k->ops->attempt_end != NULL)
        k->ops->attempt_end(s, c);
}

void budget_call_end(const struct budget_kind *k, struct budget_state *s, struct budget_call *c)
{
    if (k->ops->call_end != NULL)
        k->ops->call_end(s, c);
}

bool budget_admit(const struct budget_kind *k, const struct budget_params *p,
                  struct budget_state *s, rs_time now, gsl_rng *r)
{
    return k->ops->admit == NULL || k->ops->admit(p, s, now, r);
}

bool budget_allow_retry(const struct budget_kind *k, const struct budget_params *p,
                        struct budget_state *s, struct budget_call *c, rs_time now,
                        enum errclass cls)
{
    return k->ops->allow_retry == NULL || k->ops->allow_retry(p, s, c, now, cls);
}

void budget_result(const struct budget_kind *k, const struct budget_params *p,
                   struct budget_state *s, struct budget_call *c, rs_time now, enum errclass cls,
                   bool retried, bool failure_counts)
{
    /* Only an ok answer rewards: botocore's quota releases on 2xx, grpc-go's
     * throttler on err == nil, and a business error is neither. */
    if (k->ops->result != NULL)
        k->ops->result(p, s, c, now, cls, retried, failure_counts);
}

double budget_level(const struct budget_kind *k, const struct budget_params *p,
                    struct budget_state *s, rs_time now)
{
    return k->ops->level != NULL ? k->ops->level(p, s, now) : -1.0;
}

#define S RS_S
/* {max_tokens, token_ratio, percent, min_per_s, ttl, min_concurrency,
 *  capacity, cost, timeout_cost, deposit, deposit_on_success, k} */
const struct budget_kind budget_kinds[] = {
    {"none", BUDGET_NONE, "", "", {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, false, 0}, &none_ops},
    {"grpc", BUDGET_GRPC, "grpc/proposal A6 retryThrottling; grpc-go clientconn.go (no default: the A6 example 10 / 0.1)", "gRFC A6 94bed81; grpc-go stream.go e26457d",
     {10, 0.1, 0, 0, 0, 0, 0, 0, 0, 0, false, 0}, &grpc_ops},
    {"ratio", BUDGET_RATIO, "twitter/finagle RetryBudget.scala (20 % + 10/s over 10 s)", "finagle RetryBudget.scala 65f7667",
     {0, 0, 0.2, 10, 10 * S, 0, 0, 0, 0, 0, false, 0}, &ratio_ops},
    {"finagle", BUDGET_RATIO, "twitter/finagle RetryBudget.scala defaults", "finagle RetryBudget.scala 65f7667",
     {0, 0, 0.2, 10, 10 * S, 0, 0, 0, 0, 0, false, 0}, &ratio_ops},
    {"linkerd", BUDGET_RATIO, "linkerd.io ServiceProfile retryBudget defaults (2.10-2.15)", "linkerd ServiceProfile docs 2.10-2.15 (not re-read)",
     {0, 0, 0.2, 10, 10 * S, 0, 0, 0, 0, 0, false, 0}, &ratio_ops},
    {"envoy", BUDGET_ENVOY, "envoy circuit_breaker.proto RetryBudget (20 %, min 3)", "envoy circuit_breaker.proto a6193bb, resource_manager_impl.h edf2bb2",
     {0, 0, 0.2, 0, 0, 3, 0, 0, 0, 0, false, 0}, &envoy_ops},
    {"envoy-max", BUDGET_ENVOY, "envoy circuit_breaker.proto thresholds max_retries = 3", "envoy circuit_breaker.proto a6193bb",
     {0, 0, 0.0, 0, 0, 3, 0, 0, 0, 0, false, 0}, &envoy_ops},
    {"aws-standard", BUDGET_AWS_STANDARD, "boto/botocore retries/quota.py, standard.py (500, 5, 10)", "botocore retries/quota.py 40454ea, standard.py 0719e79",
     {0, 0, 0, 0, 0, 0, 500, 5, 10, 0, false, 0}, &aws_standard_ops},
    {"aws-adaptive", BUDGET_AWS_ADAPTIVE, "boto/botocore retries/adaptive.py, throttling.py, bucket.py", "botocore retries/adaptive.py, throttling.py, bucket.py 40454ea",
     {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, false, 0}, &aws_adaptive_ops},
    {"sre", BUDGET_SRE, "Google SRE book, Handling Overload (K = 2 over 2 min; 10 % retries)", "Site Reliability Engineering (2016), ch. 21 (secondary copies)",
     {0, 0, 0.1, 0, 120 * S, 0, 0, 0, 0, 0, false, 2}, &sre_ops},
    {"bucket", BUDGET_BUCKET, "mbrooker/simulator_example retry_sim (0.1 per call, 5 tokens, cost 1)", "mbrooker/simulator_example retry_strategy.py 7e5a117",
     {0, 0, 0, 0, 0, 0, 5, 1, 1, 0.1, false, 0}, &bucket_ops},
};
const unsigned budget_nkinds = sizeof budget_kinds / sizeof budget_kinds[0];

const struct budget_kind *budget_find(const char *name)
{
    for (unsigned i = 0; i < budget_nkinds; i++)
        if (strcmp(budget_kinds[i].name, name) == 0)
            return &budget_kinds[i];
    return NULL;
}
