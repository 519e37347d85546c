/*
 * Edges of the policy state machines and of the metrics' histograms: the
 * boundaries that the mechanical mutants (scripts/mutagen.py) showed no
 * other test pins. Each test drives the module directly with literal
 * inputs and states the rule its numbers follow.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <malloc.h>
#include <math.h>
#include <string.h>

#include "backoff.h"
#include "breaker.h"
#include "budget.h"
#include "rs_budget.h"
#include "metrics.h"

/* ---- latency histograms (metrics.c) ---- */

/* Adds v to an emptied histogram and returns the one bin it landed in. */
static size_t bin_of(struct lat_hist *h, rs_time v)
{
    metrics_lat_reset(h);
    metrics_lat_add(h, v);
    assert_true(h->lo_bin == h->hi_bin && h->h->bin[h->lo_bin] == 1.0);
    return h->lo_bin;
}

/* The bins are [0, 1 ns), then [r^(i−1), r^i) ns with r = 1.005 (metrics.c):
 * a latency equal to an edge opens the bin above it. 1 ns is in bin 1, not
 * bin 0; and where rounding made an edge a whole number of nanoseconds
 * (bin 6243 starts at exactly 33,155,645,240,901 ns, about 9.2 hours, and
 * the estimate from the logarithm says 6242), that latency is in the bin it
 * opens. Every whole-number edge is checked. */
static void latency_edges_open_their_bins(void **state)
{
    (void)state;
    struct lat_hist h;
    assert_int_equal(metrics_lat_init(&h), 0);
    assert_int_equal(bin_of(&h, 0), 0);
    assert_int_equal(bin_of(&h, 1), 1);
    assert_int_equal(bin_of(&h, 33155645240901), 6243);
    assert_int_equal(bin_of(&h, 33155645240900), 6242);
    size_t whole = 0;
    for (size_t i = 1; i < h.h->n; i++) {
        double e = h.h->range[i];
        if (e == floor(e)) {
            whole++;
            if (bin_of(&h, (rs_time)e) != i)
                fail_msg("a latency of %.0f ns (the lower edge of bin %zu) landed in bin %zu", e, i,
                         bin_of(&h, (rs_time)e));
        }
    }
    assert_true(whole > 100);
    metrics_lat_fini(&h);
}

/* The last of the 7,823 bins, [87,250,715,613,696,336 ns, 87,686,969,191,764,816
 * ns), starts past RS_TIME_LIMIT (1,000 days) and also holds every larger
 * value: values from its lower edge up to twice its upper edge, and
 * INT64_MAX, all land in it (the estimate from the logarithm is clamped to
 * it). A quantile inside it interpolates between its two edges: with one
 * value at each end of [lo, 2^62], the median is halfway through the bin,
 * 87,468,842.4 s. */
static void latencies_past_the_top_stay_in_the_last_bin(void **state)
{
    (void)state;
    struct lat_hist h;
    assert_int_equal(metrics_lat_init(&h), 0);
    size_t last = h.h->n - 1;
    assert_int_equal(h.h->n, 7823);
    const rs_time lo = 87250715613696336, hi = 87686969191764816;
    assert_true(h.h->range[last] == (double)lo && h.h->range[last + 1] == (double)hi);
    assert_int_equal(bin_of(&h, lo - 64), last - 1); /* the spacing of doubles here is 16 */
    for (int k = 0; k <= 1000; k++)
        assert_int_equal(bin_of(&h, lo + (rs_time)k * ((2 * hi - lo) / 1000)), last);
    assert_int_equal(bin_of(&h, INT64_MAX), last);
    metrics_lat_reset(&h);
    metrics_lat_add(&h, lo);
    metrics_lat_add(&h, (rs_time)1 << 62);
    assert_true(fabs(metrics_quantile(&h, 0.5) - 87468842.402730576) < 1e-3);
    metrics_lat_fini(&h);
}

/* A quantile q is read in the first bin where the cumulative count reaches
 * q·n, interpolated linearly inside it, and lat_all (made at
 * metrics_finish) holds every counted latency, its top bin included.
 * Latencies of 1, 1,000 and 1,004 ns: bin [1, 1.005) ns, then both others
 * in [999.9897, 1004.9897) ns. q = 1/3 (q·n = 1) is reached exactly at
 * the end of the first bin: 1.005 ns; q = 0.5 (1.5) is a quarter of the
 * way through the top bin: 1,001.2397 ns. */
static void quantiles_reached_exactly_and_in_the_merged_top_bin(void **state)
{
    (void)state;
    struct metrics m;
    char err[128];
    unsigned att[1] = {1};
    assert_int_equal(metrics_init(&m, RS_S, RS_S, 1, att, err, sizeof err), 0);
    metrics_outcome(&m, OUT_OK, 1, true);
    metrics_outcome(&m, OUT_OK, 1000, true);
    metrics_outcome(&m, OUT_FAILED, 1004, true);
    metrics_finish(&m, RS_S, 0, 0, 0);
    assert_true(fabs(metrics_quantile(&m.lat_all, 1.0 / 3.0) - 1.005e-9) < 1e-18);
    assert_true(fabs(metrics_quantile(&m.lat_all, 0.5) - 1001.2397010020586e-9) < 1e-15);
    metrics_fini(&m);
}

/* metrics_lat_fini and metrics_fini give back what their init took: a
 * latency histogram is two arrays of 7,823 doubles (125 KB), and with 100
 * attempts at each of two layers the second layer's and the server's
 * attempts histograms have 10,001 bins (160 KB each, the clamp); after the
 * fini the heap in use is back within 4 KiB of where it was (glibc keeps a
 * few small freed blocks in its per-thread cache, counted as in use). */
/* ASan's allocator keeps its own books (mallinfo2 sees none of it); its
 * leak checker covers that build. */
#if defined(__SANITIZE_ADDRESS__)
#define HEAP_CHECKS 0
#else
#define HEAP_CHECKS 1
#endif

static void metrics_fini_frees_what_init_took(void **state)
{
    (void)state;
    struct lat_hist h;
    size_t before = mallinfo2().uordblks;
    assert_int_equal(metrics_lat_init(&h), 0);
    assert_true(!HEAP_CHECKS || mallinfo2().uordblks > before + 120000);
    metrics_lat_fini(&h);
    assert_true(!HEAP_CHECKS || mallinfo2().uordblks < before + 4096);
    struct metrics m;
    char err[128];
    unsigned att[2] = {100, 100};
    assert_int_equal(metrics_init(&m, 10 * RS_S, RS_S, 2, att, err, sizeof err), 0);
    assert_int_equal(m.att[2]->n, 10001);
    metrics_fini(&m);
    assert_true(!HEAP_CHECKS || mallinfo2().uordblks < before + 4096);
}

/* attempts.csv gathers counts of 10,000 and more in a last `>=10000` row
 * (docs/scenarios.md): a level whose attempts can reach 10,000 (100 · 100 here) has
 * bins 0..10,000, and 10,000 itself and 12,345 both land in bin 10,000; a
 * hedges level given 10,001 bins (metrics_extra_levels, at most bins - 1,
 * more in the last) is clamped the same way, while a level of at most 100
 * keeps its exact top bin. */
static void attempts_from_10000_share_the_last_bin(void **state)
{
    (void)state;
    struct metrics m;
    char err[128];
    unsigned att[2] = {100, 100};
    assert_int_equal(metrics_init(&m, RS_S, RS_S, 2, att, err, sizeof err), 0);
    size_t bins[1] = {10001};
    assert_int_equal(metrics_extra_levels(&m, 1, 3, bins), 0);
    uint64_t n[4] = {100, 10000, 12345, 10000}; /* layer a, layer b, server, b's hedges */
    metrics_request_attempts(&m, n);
    assert_int_equal(m.att[0]->n, 101);
    assert_true(m.att[0]->bin[100] == 1.0);
    for (size_t l = 1; l <= 3; l++) {
        assert_int_equal(m.att[l]->n, 10001);
        assert_true(m.att[l]->bin[10000] == 1.0);
    }
    metrics_fini(&m);
}

/* There are at most 33 attempts levels (metrics.h): 16 layers, the
 * server, and the hedges of 16 hedged layers. With 16 layers, 16 hedges
 * levels fit exactly; a 17th is refused. */
static void sixteen_layers_hold_sixteen_hedges_levels(void **state)
{
    (void)state;
    unsigned att[16];
    size_t bins[17];
    for (int i = 0; i < 16; i++)
        att[i] = 1;
    for (int i = 0; i < 17; i++)
        bins[i] = 2;
    char err[128];
    for (size_t count = 16; count <= 17; count++) {
        struct metrics m;
        assert_int_equal(metrics_init(&m, RS_S, RS_S, 16, att, err, sizeof err), 0);
        assert_int_equal(metrics_extra_levels(&m, count, 17, bins), count == 16 ? 0 : -1);
        metrics_fini(&m);
    }
}

/* ---- backoff (backoff.c) ---- */

static const struct backoff_kind *bkind(const char *name)
{
    const struct backoff_kind *k = backoff_find(name);
    assert_non_null(k);
    return k;
}

/* urllib3 adds jitter only when backoff_jitter is not 0 (retry.py:
 * `if self.backoff_jitter != 0.0`), and waits 0 before the first retry.
 * With jitter 0 (the preset's) and base 1 s: retry 1 waits 0, retry 2
 * waits 1 s · 2 = 2 s, and neither draws from the run's jitter stream,
 * which the other layers' backoffs and the budgets share. */
static void urllib3_without_jitter_draws_nothing(void **state)
{
    (void)state;
    const struct backoff_kind *k = bkind("urllib3");
    struct backoff_params p = k->defaults;
    assert_true(p.jitter == 0.0);
    p.base = RS_S;
    struct backoff_state st;
    backoff_state_init(&p, &st);
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937), *ref = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 7);
    gsl_rng_set(ref, 7);
    assert_int_equal(k->next_delay(&p, &st, 1, CLS_CONN, r), 0);
    assert_int_equal(k->next_delay(&p, &st, 2, CLS_CONN, r), 2 * RS_S);
    assert_true(gsl_rng_get(r) == gsl_rng_get(ref));
    gsl_rng_free(r);
    gsl_rng_free(ref);
}

/* aws-go (aws-sdk-go-v2 backoffDelayLegacy) returns the cap, unjittered,
 * only for attempts above log2(cap/1 s); at that attempt itself it still
 * draws U·base·2^k. With cap 16 s, attempt 4 (2^4 s = the cap) waits
 * U · 16 s: seed 1's first draw of mt19937, 0.41702199843712151, gives
 * 6,672,351,975 ns (rounded); attempt 5 waits exactly 16 s. */
static void aws_go_jitters_at_the_cap_attempt(void **state)
{
    (void)state;
    const struct backoff_kind *k = bkind("aws-go");
    struct backoff_params p = k->defaults;
    p.cap = 16 * RS_S;
    struct backoff_state st;
    backoff_state_init(&p, &st);
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 1);
    assert_int_equal(k->next_delay(&p, &st, 4, CLS_503, r), 6672351975);
    assert_int_equal(k->next_delay(&p, &st, 5, CLS_503, r), 16 * RS_S);
    gsl_rng_free(r);
}

/* aws-js waits ⌊U · min(x · 2^(k−1), cap)⌋ whole ms with x = base (100 ms),
 * or 5 · base for a 429 only. Retry 1 with seed 1's first draw, U =
 * 0.41702199843712151: after a 503, ⌊41.70⌋ = 41 ms; after a 429,
 * ⌊208.51⌋ = 208 ms. */
static void aws_js_throttling_base_only_for_429(void **state)
{
    (void)state;
    const struct backoff_kind *k = bkind("aws-js");
    struct backoff_params p = k->defaults;
    for (int throttled = 0; throttled <= 1; throttled++) {
        struct backoff_state st;
        backoff_state_init(&p, &st);
        gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
        gsl_rng_set(r, 1);
        assert_int_equal(k->next_delay(&p, &st, 1, throttled ? CLS_429 : CLS_503, r),
                         (throttled ? 208 : 41) * RS_MS);
        gsl_rng_free(r);
    }
}

/* resilience4j-exp multiplies its interval I (whole ms) once per earlier
 * attempt and stops once I has reached 1,000 days (RS_TIME_LIMIT, the
 * longest duration), before the jitter: with base 500 days, multiplier 2
 * and jitter 0.5, retry 3 has I = 1,000 days exactly, not 2,000, so its
 * delay is ⌊I/2 + U·(I + 1)⌋ ms, below the 1,000-day clamp when U < 0.5
 * (seed 1's first draw of mt19937 is 0.41702199843712151): 79,230,700,665 ms. */
static void resilience4j_interval_stops_at_the_limit(void **state)
{
    (void)state;
    const struct backoff_kind *k = bkind("resilience4j-exp");
    struct backoff_params p = k->defaults;
    p.base = RS_TIME_LIMIT / 2;
    p.multiplier = 2.0;
    p.jitter = 0.5;
    struct backoff_state st;
    backoff_state_init(&p, &st);
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 1);
    assert_int_equal(k->next_delay(&p, &st, 3, CLS_503, r), (rs_time)79230700665 * RS_MS);
    gsl_rng_free(r);
}

/* cenkalti/backoff sets the interval to the cap once I ≥ cap/multiplier
 * (exponential.go incrementCurrentInterval), not I · multiplier, which can
 * differ from the cap by rounding: with cap 65,281,085,809,400,584 ns,
 * multiplier 2.35 and base 27,779,185,450,808,760 ns (the double nearest
 * cap/2.35), and no jitter, the first delay is the base and the second is
 * exactly the cap (base · 2.35 would be 65,281,085,809,400,592 ns). */
static void cenkalti_interval_at_cap_over_multiplier_is_the_cap(void **state)
{
    (void)state;
    const struct backoff_kind *k = bkind("cenkalti");
    struct backoff_params p = k->defaults;
    p.cap = 65281085809400584;
    p.multiplier = 2.35;
    p.base = 27779185450808760;
    p.jitter = 0.0;
    assert_true((double)p.base == (double)p.cap / p.multiplier);
    struct backoff_state st;
    backoff_state_init(&p, &st);
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 1);
    assert_int_equal(k->next_delay(&p, &st, 1, CLS_503, r), 27779185450808760);
    assert_int_equal(k->next_delay(&p, &st, 2, CLS_503, r), 65281085809400584);
    gsl_rng_free(r);
}

/* ---- budgets (budget.c) ---- */

static int retries_allowed(struct rs_bud *b, rs_time now)
{
    int n = 0;
    while (budget_allow_retry(b->k, &b->p, &b->s, &b->c, now, CLS_503))
        n++;
    return n;
}

/* A budget_ttl shorter than its 10 slices (budget_ttl = 5ns is a valid
 * duration) gives slices of 1 ns, never of 0; the window is the current
 * slice and the 9 before it (docs/budgets.md). 1,000 calls at 100 ns deposit
 * 1,000 each and a retry withdraws ⌊1000/0.2⌋ = 5,000, so at 109 ns (slices
 * 100..109) 200 retries are allowed (the reserve, 10/s · 5 ns · 5,000 =
 * 0.00025, buys none); at 110 ns slice 100 has left the window: none. */
static void ratio_budget_ttl_below_its_slices(void **state)
{
    (void)state;
    for (rs_time at = 109; at <= 110; at++) {
        struct rs_bud b = rs_bud_make("ratio");
        b.p.ttl = 5;
        rs_bud_attach(&b);
        for (int i = 0; i < 1000; i++)
            budget_call_start(b.k, &b.p, &b.s, 100);
        assert_int_equal(retries_allowed(&b, at), at == 109 ? 200 : 0);
    }
}

/* SRE throttling draws from the run's jitter stream (layer.c passes
 * RNG_JITTER, which the backoff delays also use) only when its history asks
 * for a rejection: with no history the probability is 0 and the stream is
 * left as it was, so adding the budget moves no backoff delay. */
static void sre_draws_only_to_reject(void **state)
{
    (void)state;
    struct rs_bud b = rs_bud_make("sre");
    rs_bud_attach(&b);
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937), *ref = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 7);
    gsl_rng_set(ref, 7);
    for (int i = 0; i < 5; i++) { /* each request joins the history, each is accepted */
        assert_true(budget_admit(b.k, &b.p, &b.s, RS_S, r));
        budget_result(b.k, &b.p, &b.s, &b.c, RS_S, CLS_OK, false, false);
    }
    assert_true(budget_level(b.k, &b.p, &b.s, RS_S) == 0.0);
    assert_true(gsl_rng_get(r) == gsl_rng_get(ref));
    gsl_rng_free(r);
    gsl_rng_free(ref);
}

/* aws-adaptive: exactly one token is enough to send (botocore bucket.py
 * acquire: amount <= capacity). A 429 before any rate was measured sets the
 * fill rate to its floor, 0.5 a second, and the bucket's capacity to 1
 * (docs/budgets.md); 2 s later the bucket holds 2 · 0.5 = 1 token: one
 * attempt goes, the next at the same instant is throttled. */
static void aws_adaptive_one_token_is_enough(void **state)
{
    (void)state;
    struct rs_bud b = rs_bud_make("aws-adaptive");
    rs_bud_attach(&b);
    budget_result(b.k, &b.p, &b.s, &b.c, 0, CLS_429, false, true);
    assert_true(b.s.ad->enabled && b.s.ad->fill == 0.5 && b.s.ad->cap == 1.0);
    assert_true(budget_admit(b.k, &b.p, &b.s, 2 * RS_S, NULL));
    assert_false(budget_admit(b.k, &b.p, &b.s, 2 * RS_S, NULL));
}

/* Each budget's last retry is the one its balance exactly pays for
 * (docs/budgets.md), from a fresh state at 1 s:
 * - grpc (10 tokens): retries while tokens > 10/2; after 4 counted
 *   failures (6 tokens) yes, after 5 (5 tokens) no;
 * - aws-standard (500, cost 5): 100 retries, the last from 5 tokens;
 * - bucket (5 tokens, cost 1): retries while more than one token: 4;
 * - envoy (20 % of 0 active, at least 3): 3 retries;
 * - ratio with no reserve (min_per_s 0): 5 calls deposit 5,000, exactly
 *   one withdrawal of ⌊1000/0.2⌋: 1 retry;
 * - sre (10 %): 10 requests in the window allow retries while retries are
 *   below 1: 1 retry. */
static void budgets_pay_their_last_retry_exactly(void **state)
{
    (void)state;
    for (int failures = 4; failures <= 5; failures++) {
        struct rs_bud b = rs_bud_make("grpc");
        rs_bud_attach(&b);
        for (int i = 0; i < failures; i++)
            budget_result(b.k, &b.p, &b.s, &b.c, RS_S, CLS_503, false, true);
        assert_true(budget_allow_retry(b.k, &b.p, &b.s, &b.c, RS_S, CLS_503) == (failures == 4));
    }
    struct rs_bud b = rs_bud_make("aws-standard");
    rs_bud_attach(&b);
    assert_int_equal(retries_allowed(&b, RS_S), 100);
    b = rs_bud_make("bucket");
    rs_bud_attach(&b);
    assert_int_equal(retries_allowed(&b, RS_S), 4);
    b = rs_bud_make("envoy");
    rs_bud_attach(&b);
    assert_int_equal(retries_allowed(&b, RS_S), 3);
    b = rs_bud_make("ratio");
    b.p.min_per_s = 0;
    rs_bud_attach(&b);
    for (int i = 0; i < 5; i++)
        budget_call_start(b.k, &b.p, &b.s, RS_S);
    assert_int_equal(retries_allowed(&b, RS_S), 1);
    b = rs_bud_make("sre");
    rs_bud_attach(&b);
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 1);
    for (int i = 0; i < 10; i++) /* each joins the history, admitted or not */
        (void)budget_admit(b.k, &b.p, &b.s, RS_S, r);
    assert_int_equal(retries_allowed(&b, RS_S), 1);
    gsl_rng_free(r);
}

/* sre counts an accept for every class but timeout, conn, 429, 503,
 * deadline, throttled and breaker (docs/budgets.md; a bulkhead rejection
 * counts as accepted, as noted there). After one request and its result
 * at 1 s the rejection probability is (1 − 2·accepts)/(1 + 1): 0 when the
 * class was accepted, 0.5 when not. */
static void sre_accepts_every_class_but_overload(void **state)
{
    (void)state;
    const errclass_set refused = ERRCLASS_BIT(CLS_TIMEOUT) | ERRCLASS_BIT(CLS_CONN) |
                                 ERRCLASS_BIT(CLS_429) | ERRCLASS_BIT(CLS_503) |
                                 ERRCLASS_BIT(CLS_DEADLINE) | ERRCLASS_BIT(CLS_THROTTLED) |
                                 ERRCLASS_BIT(CLS_BREAKER);
    for (int c = 0; c < CLS_N; c++) {
        struct rs_bud b = rs_bud_make("sre");
        rs_bud_attach(&b);
        assert_true(budget_admit(b.k, &b.p, &b.s, RS_S, NULL)); /* no history: no draw */
        budget_result(b.k, &b.p, &b.s, &b.c, RS_S, (enum errclass)c, false, true);
        double want = errclass_in(refused, (enum errclass)c) ? 0.5 : 0.0;
        if (budget_level(b.k, &b.p, &b.s, RS_S) != want)
            fail_msg("class %s: level %g, not %g", errclass_names[c],
                     budget_level(b.k, &b.p, &b.s, RS_S), want);
    }
}

/* envoy (docs/budgets.md): allowed = max(⌊0.2 · active calls⌋, 3), and a
 * granted retry counts until its attempt's result. With 20 calls started,
 * 4 retries go; when one of them gets its result one more goes; after 10
 * calls end (active 10: max(2, 3) = 3) and the 4 retries' results, 3 go. */
static void envoy_releases_at_results_and_call_ends(void **state)
{
    (void)state;
    struct rs_bud b = rs_bud_make("envoy");
    rs_bud_attach(&b);
    for (int i = 0; i < 20; i++)
        budget_call_start(b.k, &b.p, &b.s, RS_S);
    struct budget_call c[5];
    memset(c, 0, sizeof c);
    for (int i = 0; i < 4; i++)
        assert_true(budget_allow_retry(b.k, &b.p, &b.s, &c[i], RS_S, CLS_503));
    assert_false(budget_allow_retry(b.k, &b.p, &b.s, &c[4], RS_S, CLS_503));
    budget_attempt_end(b.k, &b.s, &c[0]);
    assert_true(budget_allow_retry(b.k, &b.p, &b.s, &c[0], RS_S, CLS_503));
    assert_false(budget_allow_retry(b.k, &b.p, &b.s, &c[4], RS_S, CLS_503));
    struct budget_call plain;
    memset(&plain, 0, sizeof plain);
    for (int i = 0; i < 10; i++)
        budget_call_end(b.k, &b.s, &plain);
    for (int i = 0; i < 4; i++)
        budget_attempt_end(b.k, &b.s, &c[i]);
    assert_int_equal(retries_allowed(&b, RS_S), 3);
}

/* budget_state_init starts the kind's extra state afresh, whatever the
 * memory held: a ratio budget whose window holds 1,000 deposits, inited
 * again, has only its reserve, 10/s · 10 s · 5,000 = 500,000: 100 retries
 * of 5,000 (not the 300 the old deposits would add up to). */
static void budget_init_clears_its_window(void **state)
{
    (void)state;
    struct rs_bud b = rs_bud_make("ratio");
    rs_bud_attach(&b);
    for (int i = 0; i < 1000; i++)
        budget_call_start(b.k, &b.p, &b.s, RS_S);
    rs_bud_attach(&b);
    assert_int_equal(retries_allowed(&b, RS_S), 100);
}

/* ---- breakers (breaker.c) ---- */

/* A time window shorter than its 10 slices (breaker_window = 5ns) has
 * slices of 1 ns: hystrix's 20 failures within one nanosecond trip it, and
 * 20 spread one per 10 ns never fill the window's 10 ns. */
static void breaker_window_below_its_slices(void **state)
{
    (void)state;
    const struct breaker_kind *k = breaker_find("hystrix");
    assert_non_null(k);
    struct breaker_params p = k->defaults;
    p.window = 5;
    uint8_t ring[1];
    for (int spread = 0; spread <= 1; spread++) {
        struct breaker_state s;
        struct window w;
        assert_true(breaker_needs_window(k, &p));
        breaker_state_init(&s, &w);
        for (int i = 0; i < 20; i++) {
            rs_time now = 1000 + (spread ? 10 * i : 0);
            uint32_t gen;
            bool half;
            assert_true(breaker_admit(k, &p, &s, now, &gen, &half));
            breaker_result(k, &p, &s, ring, now, gen, true, 0);
        }
        assert_true(s.mode == (spread ? BRK_CLOSED : BRK_OPEN));
    }
}

/* Half-open reopens when slow/results ≥ slow_rate (docs/breakers.md), so
 * at resilience4j's slow rate of 1 all 10 probes slower than 60 s reopen it,
 * though every one succeeded; 9 slow of 10 close it. */
static void half_open_slow_rate_reached_reopens(void **state)
{
    (void)state;
    const struct breaker_kind *k = breaker_find("resilience4j");
    assert_non_null(k);
    struct breaker_params p = k->defaults;
    uint8_t ring[BREAKER_MAX_WINDOW_CALLS] = {0};
    for (int slow = 9; slow <= 10; slow++) {
        struct breaker_state s;
        breaker_state_init(&s, NULL);
        uint32_t gen;
        bool half;
        for (int i = 0; i < 100; i++) { /* 100 failures trip it at 0 */
            assert_true(breaker_admit(k, &p, &s, 0, &gen, &half));
            breaker_result(k, &p, &s, ring, 0, gen, true, 0);
        }
        assert_true(s.mode == BRK_OPEN);
        for (int i = 0; i < 10; i++) { /* at 60 s: 10 probes, all successes */
            assert_true(breaker_admit(k, &p, &s, 60 * RS_S, &gen, &half));
            breaker_result(k, &p, &s, ring, 60 * RS_S, gen, false, i < slow ? 61 * RS_S : 0);
        }
        assert_true(s.mode == (slow == 10 ? BRK_OPEN : BRK_CLOSED));
    }
}

/* Feeds one result to a breaker that admits it; returns whether it opened. */
static bool feed(const struct breaker_kind *k, const struct breaker_params *p,
                 struct breaker_state *s, uint8_t *ring, rs_time now, bool failed, rs_time dur)
{
    uint32_t gen;
    bool half;
    assert_true(breaker_admit(k, p, s, now, &gen, &half));
    return breaker_result(k, p, s, ring, now, gen, failed, dur);
}

/* Closed trips at failures/calls ≥ failure_rate, or slow/calls ≥ slow_rate
 * (docs/breakers.md): resilience4j's defaults (a window of 100 calls, 100
 * of them needed, 50 %, slow rate 100 % above 60 s) open on 50 failures
 * among 100 but not on 49; and on 100 successes all slower than 60 s but
 * not on 99 of them. */
static void closed_rates_reached_trip(void **state)
{
    (void)state;
    const struct breaker_kind *k = breaker_find("resilience4j");
    assert_non_null(k);
    struct breaker_params p = k->defaults;
    uint8_t ring[BREAKER_MAX_WINDOW_CALLS];
    for (int slow = 0; slow <= 1; slow++)
        for (int bad = slow ? 99 : 49; bad <= (slow ? 100 : 50); bad++) {
            struct breaker_state s;
            breaker_state_init(&s, NULL);
            memset(ring, 0, sizeof ring);
            bool opened = false;
            for (int i = 0; i < 100; i++) {
                bool hit = i < bad; /* the first `bad` calls fail, or are slow */
                opened = feed(k, &p, &s, ring, 0, !slow && hit, slow && hit ? 61 * RS_S : 0);
            }
            bool reached = bad == (slow ? 100 : 50);
            assert_true(opened == reached && (s.mode == BRK_OPEN) == reached);
        }
}

/* Closing clears the window (docs/breakers.md: CLOSED (window cleared)):
 * hystrix opens on 20 failures at 0 s (20 calls, 100 % ≥ 50 %), half-opens
 * at 5 s and closes on its one probe's success; a failure at 6 s is then
 * 1 call of the 20 needed, though the 20 failures of 0 s are still within
 * its 10 s window, and the breaker stays closed. */
static void closing_clears_the_time_window(void **state)
{
    (void)state;
    const struct breaker_kind *k = breaker_find("hystrix");
    assert_non_null(k);
    struct breaker_params p = k->defaults;
    struct breaker_state s;
    struct window w;
    assert_true(breaker_needs_window(k, &p));
    breaker_state_init(&s, &w);
    bool opened = false;
    for (int i = 0; i < 20; i++)
        opened = feed(k, &p, &s, NULL, 0, true, 0);
    assert_true(opened && s.mode == BRK_OPEN);
    assert_false(feed(k, &p, &s, NULL, 5 * RS_S, false, 0));
    assert_true(s.mode == BRK_CLOSED);
    assert_false(feed(k, &p, &s, NULL, 6 * RS_S, true, 0));
    assert_true(s.mode == BRK_CLOSED);
}

/* breaker_state_init starts its time window afresh, whatever the memory
 * held: after 19 failures at 0 s, a hystrix breaker inited again on the
 * same window has seen 1 call after one more failure, not the 20 that
 * would trip it. */
static void breaker_init_clears_its_window(void **state)
{
    (void)state;
    const struct breaker_kind *k = breaker_find("hystrix");
    assert_non_null(k);
    struct breaker_params p = k->defaults;
    struct breaker_state s;
    struct window w;
    memset(&w, 0, sizeof w);
    breaker_state_init(&s, &w);
    for (int i = 0; i < 19; i++)
        assert_false(feed(k, &p, &s, NULL, 0, true, 0));
    breaker_state_init(&s, &w);
    assert_false(feed(k, &p, &s, NULL, 0, true, 0));
    assert_true(s.mode == BRK_CLOSED);
}

/* Half-open reopens when failures/results ≥ failure_rate (docs/breakers.md):
 * resilience4j's 10 probes with 5 failures (50 %) reopen it, with 4 close
 * it. A call is slow when its duration is greater than breaker_slow_call
 * (60 s): 100 successes of exactly 60 s leave the closed breaker closed,
 * where 100 of 61 s open it (slow rate 100 %). */
static void half_open_failure_rate_reached_and_exactly_slow_calls(void **state)
{
    (void)state;
    const struct breaker_kind *k = breaker_find("resilience4j");
    assert_non_null(k);
    struct breaker_params p = k->defaults;
    uint8_t ring[BREAKER_MAX_WINDOW_CALLS];
    for (int bad = 4; bad <= 5; bad++) {
        struct breaker_state s;
        breaker_state_init(&s, NULL);
        memset(ring, 0, sizeof ring);
        for (int i = 0; i < 100; i++)
            feed(k, &p, &s, ring, 0, true, 0);
        assert_true(s.mode == BRK_OPEN);
        for (int i = 0; i < 10; i++)
            feed(k, &p, &s, ring, 60 * RS_S, i < bad, 0);
        assert_true(s.mode == (bad == 5 ? BRK_OPEN : BRK_CLOSED));
    }
    for (rs_time d = 60; d <= 61; d++) {
        struct breaker_state s;
        breaker_state_init(&s, NULL);
        memset(ring, 0, sizeof ring);
        for (int i = 0; i < 100; i++)
            feed(k, &p, &s, ring, 0, false, d * RS_S);
        assert_true(s.mode == (d == 61 ? BRK_OPEN : BRK_CLOSED));
    }
}

/* brooker allows retries unless failures/calls > 10 % (docs/breakers.md):
 * 1 failure in 10 calls (exactly 10 %) still allows them, 2 in 10 do not. */
static void brooker_allows_retries_at_its_ratio(void **state)
{
    (void)state;
    const struct breaker_kind *k = breaker_find("brooker");
    assert_non_null(k);
    struct breaker_params p = k->defaults;
    for (int bad = 1; bad <= 2; bad++) {
        struct breaker_state s;
        breaker_state_init(&s, NULL);
        for (int i = 0; i < 10; i++)
            feed(k, &p, &s, NULL, 0, i < bad, 0);
        assert_true(breaker_allow_retry(k, &p, &s) == (bad == 1));
    }
}

/* gobreaker's consecutive breaker (docs/breakers.md): it opens on more
 * than 5 consecutive failures (5 leave it closed, the 6th opens it) for
 * 60 s; the first attempt at exactly 60 s is admitted as its one probe and
 * a second at the same instant is short-circuited; the probe's success
 * (1 of probes = 1) closes it. */
static void consecutive_breaker_edges(void **state)
{
    (void)state;
    const struct breaker_kind *k = breaker_find("gobreaker");
    assert_non_null(k);
    struct breaker_params p = k->defaults;
    struct breaker_state s;
    breaker_state_init(&s, NULL);
    for (int i = 0; i < 5; i++)
        assert_false(feed(k, &p, &s, NULL, 0, true, 0));
    assert_true(s.mode == BRK_CLOSED);
    assert_true(feed(k, &p, &s, NULL, 0, true, 0));
    assert_true(s.mode == BRK_OPEN);
    uint32_t gen, gen2;
    bool half;
    assert_false(breaker_admit(k, &p, &s, 60 * RS_S - 1, &gen, &half));
    assert_true(breaker_admit(k, &p, &s, 60 * RS_S, &gen, &half) && half);
    assert_false(breaker_admit(k, &p, &s, 60 * RS_S, &gen2, &half));
    assert_false(breaker_result(k, &p, &s, NULL, 60 * RS_S, gen, false, 0));
    assert_true(s.mode == BRK_CLOSED);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(latency_edges_open_their_bins),
        cmocka_unit_test(latencies_past_the_top_stay_in_the_last_bin),
        cmocka_unit_test(quantiles_reached_exactly_and_in_the_merged_top_bin),
        cmocka_unit_test(metrics_fini_frees_what_init_took),
        cmocka_unit_test(attempts_from_10000_share_the_last_bin),
        cmocka_unit_test(sixteen_layers_hold_sixteen_hedges_levels),
        cmocka_unit_test(urllib3_without_jitter_draws_nothing),
        cmocka_unit_test(aws_go_jitters_at_the_cap_attempt),
        cmocka_unit_test(aws_js_throttling_base_only_for_429),
        cmocka_unit_test(resilience4j_interval_stops_at_the_limit),
        cmocka_unit_test(cenkalti_interval_at_cap_over_multiplier_is_the_cap),
        cmocka_unit_test(ratio_budget_ttl_below_its_slices),
        cmocka_unit_test(aws_adaptive_one_token_is_enough),
        cmocka_unit_test(sre_draws_only_to_reject),
        cmocka_unit_test(budgets_pay_their_last_retry_exactly),
        cmocka_unit_test(sre_accepts_every_class_but_overload),
        cmocka_unit_test(envoy_releases_at_results_and_call_ends),
        cmocka_unit_test(budget_init_clears_its_window),
        cmocka_unit_test(breaker_init_clears_its_window),
        cmocka_unit_test(breaker_window_below_its_slices),
        cmocka_unit_test(half_open_slow_rate_reached_reopens),
        cmocka_unit_test(closed_rates_reached_trip),
        cmocka_unit_test(closing_clears_the_time_window),
        cmocka_unit_test(half_open_failure_rate_reached_and_exactly_slow_calls),
        cmocka_unit_test(brooker_allows_retries_at_its_ratio),
        cmocka_unit_test(consecutive_breaker_edges),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
