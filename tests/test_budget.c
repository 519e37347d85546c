/*
 * Budgets as state machines, driven by scripted results, against the
 * numbers docs/budgets.md give.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <string.h>

#include "budget.h"
#include "rs_budget.h"

static bool retry(struct rs_bud *b, rs_time now, enum errclass cls)
{
    return budget_allow_retry(b->k, &b->p, &b->s, &b->c, now, cls);
}

static void result(struct rs_bud *b, rs_time now, enum errclass cls, bool retried)
{
    budget_result(b->k, &b->p, &b->s, &b->c, now, cls, retried, cls != CLS_OK);
}

/* gRPC: 10 tokens, −1 per failure, +0.1 per success; retry only while
 * tokens > 5 (checked after the failure's decrement). */
static void grpc_threshold(void **state)
{
    (void)state;
    struct rs_bud b = rs_bud_make("grpc"); rs_bud_attach(&b);
    for (int i = 1; i <= 4; i++) {
        result(&b, 0, CLS_503, false);
        assert_true(retry(&b, 0, CLS_503)); /* 9, 8, 7, 6 > 5 */
    }
    result(&b, 0, CLS_503, false); /* 5 */
    assert_false(retry(&b, 0, CLS_503));
    result(&b, 0, CLS_OK, false); /* 5.1 */
    assert_true(retry(&b, 0, CLS_503));
    for (int i = 0; i < 100; i++)
        result(&b, 0, CLS_OK, false);
    assert_true(fabs(b.s.tokens - 10.0) < 1e-9); /* capped at max */
    for (int i = 0; i < 100; i++)
        result(&b, 0, CLS_503, false);
    assert_true(b.s.tokens == 0.0); /* floored at 0 */
}

/* Finagle: reserve 10/s × 10 s = 100 retries, plus 20 % of the calls in
 * the last 10 s; both expire after the ttl. */
static void ratio_budget(void **state)
{
    (void)state;
    struct rs_bud b = rs_bud_make("ratio"); rs_bud_attach(&b);
    int n = 0;
    while (retry(&b, RS_S, CLS_503))
        n++;
    assert_int_equal(n, 100);
    struct rs_bud c = rs_bud_make("ratio"); rs_bud_attach(&c);
    for (int i = 0; i < 1000; i++)
        budget_call_start(c.k, &c.p, &c.s, RS_S);
    n = 0;
    while (retry(&c, RS_S, CLS_503))
        n++;
    assert_int_equal(n, 300);
    /* 11 s later deposits and withdrawals have expired: the reserve again */
    n = 0;
    while (retry(&c, 12 * RS_S, CLS_503))
        n++;
    assert_int_equal(n, 100);
}

/* Envoy: active retries ≤ max(⌊20 % of active calls⌋, 3); envoy-max: 3. */
static void envoy_concurrency(void **state)
{
    (void)state;
    struct rs_bud b = rs_bud_make("envoy"); rs_bud_attach(&b);
    struct budget_call calls[40] = {0};
    for (int i = 0; i < 10; i++)
        budget_call_start(b.k, &b.p, &b.s, 0);
    int n = 0;
    for (int i = 0; i < 10; i++)
        n += budget_allow_retry(b.k, &b.p, &b.s, &calls[i], 0, CLS_503);
    assert_int_equal(n, 3); /* ⌊0.2·10⌋ = 2 < 3 */
    budget_result(b.k, &b.p, &b.s, &calls[0], 0, CLS_503, true, true); /* one retry ends */
    assert_true(budget_allow_retry(b.k, &b.p, &b.s, &calls[20], 0, CLS_503));
    for (int i = 0; i < 90; i++)
        budget_call_start(b.k, &b.p, &b.s, 0); /* 100 active: 20 allowed */
    n = 0;
    for (int i = 21; i < 40; i++)
        n += budget_allow_retry(b.k, &b.p, &b.s, &calls[i], 0, CLS_503);
    assert_int_equal(n, 17); /* 3 already active */
    struct rs_bud m = rs_bud_make("envoy-max"); rs_bud_attach(&m);
    for (int i = 0; i < 100; i++)
        budget_call_start(m.k, &m.p, &m.s, 0);
    struct budget_call mc[5] = {0};
    n = 0;
    for (int i = 0; i < 5; i++)
        n += budget_allow_retry(m.k, &m.p, &m.s, &mc[i], 0, CLS_503);
    assert_int_equal(n, 3);
}

/* AWS standard: 500 tokens; a retry costs 5, 10 after a timeout; success
 * refunds the last retry's cost, or adds 1 when no retry was needed. */
static void aws_quota(void **state)
{
    (void)state;
    struct rs_bud b = rs_bud_make("aws-standard"); rs_bud_attach(&b);
    assert_true(retry(&b, 0, CLS_503));
    assert_true(b.s.tokens == 495);
    assert_true(retry(&b, 0, CLS_TIMEOUT));
    assert_true(b.s.tokens == 485);
    result(&b, 0, CLS_OK, true); /* refund 10 */
    assert_true(b.s.tokens == 495);
    result(&b, 0, CLS_OK, false); /* +1 */
    assert_true(b.s.tokens == 496);
    result(&b, 0, CLS_503, true); /* failures refund nothing */
    assert_true(b.s.tokens == 496);
    for (int i = 0; i < 10; i++)
        result(&b, 0, CLS_OK, false);
    assert_true(b.s.tokens == 500); /* capped */
    int n = 0;
    while (retry(&b, 0, CLS_TIMEOUT))
        n++;
    assert_int_equal(n, 50);
    assert_false(retry(&b, 0, CLS_503)); /* 0 left */
}

/* AWS adaptive: nothing is limited before the first throttle; after a 429
 * the fill rate is β·(measured rate), and the bucket holds that many
 * tokens; CUBIC brings the rate back to its pre-throttle value W after
 * K = ∛(W(1−β)/C) seconds. */
static void aws_adaptive_cubic(void **state)
{
    (void)state;
    struct rs_bud b = rs_bud_make("aws-adaptive"); rs_bud_attach(&b);
    rs_time t = 0;
    for (int i = 0; i < 100; i++, t += 100 * RS_MS) { /* 10 responses a second for 10 s */
        assert_true(budget_admit(b.k, &b.p, &b.s, t, NULL));
        result(&b, t, CLS_OK, false);
    }
    double measured = b.s.ad->measured;
    assert_true(fabs(measured - 10.0) < 0.5);
    result(&b, t, CLS_429, false);
    assert_true(b.s.ad->enabled);
    double w = measured;
    assert_true(fabs(b.s.ad->fill - 0.7 * w) < 1e-9);
    int admitted = 0;
    while (budget_admit(b.k, &b.p, &b.s, t, NULL))
        admitted++;
    assert_int_equal(admitted, (int)floor(0.7 * w)); /* the bucket's capacity */
    double k = cbrt(w * 0.3 / 0.4);
    rs_time back = t + (rs_time)llround(k * 1e9);
    result(&b, back, CLS_OK, false);
    assert_true(fabs(b.s.ad->fill - fmin(w, 2 * b.s.ad->measured)) < 1e-6);
}

/* botocore's RateClocker: responses are counted (the current one too),
 * and when one lands in a later half-second bucket the count over the
 * time since the last bucket becomes the rate, smoothed 0.8 new + 0.2 old.
 * Responses at 0.1, 0.2 and 0.6 s: at 0.6 s, 3 over 0.5 s: 0.8·6 = 4.8 a
 * second; at 1.2 s, 1 over 0.5 s: 0.8·2 + 0.2·4.8 = 2.56. */
static void aws_adaptive_measured_rate(void **state)
{
    (void)state;
    struct rs_bud b = rs_bud_make("aws-adaptive"); rs_bud_attach(&b);
    result(&b, 100 * RS_MS, CLS_OK, false);
    result(&b, 200 * RS_MS, CLS_OK, false);
    assert_true(b.s.ad->measured == 0.0);
    result(&b, 600 * RS_MS, CLS_OK, false);
    assert_true(fabs(b.s.ad->measured - 4.8) < 1e-12);
    result(&b, 1200 * RS_MS, CLS_OK, false);
    assert_true(fabs(b.s.ad->measured - 2.56) < 1e-12);
}

/* SRE client throttling: reject with max(0, (requests − 2·accepts)/(requests + 1));
 * retries only while retries < 10 % of requests. */
static void sre_throttling(void **state)
{
    (void)state;
    struct rs_bud b = rs_bud_make("sre"); rs_bud_attach(&b);
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    for (int i = 0; i < 100; i++) {
        /* the history never asks for a rejection here: requests ≤ 2·accepts + 1 */
        assert_true(budget_admit(b.k, &b.p, &b.s, 0, r));
        result(&b, 0, CLS_OK, false); /* all accepted */
    }
    assert_true(budget_level(b.k, &b.p, &b.s, 0) == 0.0);
    int n = 0;
    while (retry(&b, 0, CLS_503))
        n++;
    assert_int_equal(n, 10);
    /* now the backend accepts nothing: 1000 more requests */
    int rejected = 0;
    for (int i = 0; i < 1000; i++) {
        rejected += !budget_admit(b.k, &b.p, &b.s, RS_S, r);
        result(&b, RS_S, CLS_503, false);
    }
    double p = (1100.0 - 2 * 100.0) / 1101.0;
    assert_true(fabs(budget_level(b.k, &b.p, &b.s, RS_S) - p) < 1e-9);
    assert_true(rejected > 300 && rejected < 900); /* rising from 0 to 0.82 */
    /* after the 2-minute window everything is forgotten */
    assert_true(budget_level(b.k, &b.p, &b.s, 200 * RS_S) == 0.0);
    gsl_rng_free(r);
}

/* Brooker's bucket: 5 tokens, a retry costs 1 and needs more than 1;
 * each call deposits 0.1. */
static void brooker_bucket(void **state)
{
    (void)state;
    struct rs_bud b = rs_bud_make("bucket"); rs_bud_attach(&b);
    int n = 0;
    while (retry(&b, 0, CLS_503))
        n++;
    assert_int_equal(n, 4);
    for (int i = 0; i < 10; i++)
        budget_call_start(b.k, &b.p, &b.s, 0);
    assert_true(retry(&b, 0, CLS_503));
    assert_false(retry(&b, 0, CLS_503));
    b.p.deposit_on_success = true;
    for (int i = 0; i < 10; i++)
        budget_call_start(b.k, &b.p, &b.s, 0); /* no deposit per call now */
    assert_false(retry(&b, 0, CLS_503));
    for (int i = 0; i < 10; i++)
        result(&b, 0, CLS_OK, false);
    assert_true(retry(&b, 0, CLS_503));
}

/* Only an ok answer rewards a budget: botocore's quota releases on 2xx
 * (quota.py release_retry_quota), grpc-go's throttler on err == nil
 * (stream.go finish), Brooker's bucket on success. A business error (a
 * 4xx the application meant) is neither. */
static void business_answers_do_not_reward(void **state)
{
    (void)state;
    struct rs_bud g = rs_bud_make("grpc"); rs_bud_attach(&g);
    result(&g, 0, CLS_503, false); /* 9 */
    /* not a retryable status either, so it costs no token (A6) */
    budget_result(g.k, &g.p, &g.s, &g.c, 0, CLS_BUSINESS, false, false);
    assert_true(g.s.tokens == 9.0);
    result(&g, 0, CLS_OK, false);
    assert_true(fabs(g.s.tokens - 9.1) < 1e-12);

    struct rs_bud a = rs_bud_make("aws-standard"); rs_bud_attach(&a);
    assert_true(retry(&a, 0, CLS_503)); /* 495 */
    result(&a, 0, CLS_BUSINESS, true);
    assert_true(a.s.tokens == 495);
    result(&a, 0, CLS_OK, true); /* the 5 refunded */
    assert_true(a.s.tokens == 500);

    struct rs_bud k = rs_bud_make("bucket"); rs_bud_attach(&k);
    k.p.deposit_on_success = true;
    while (retry(&k, 0, CLS_503))
        ;
    double left = k.s.tokens;
    for (int i = 0; i < 100; i++)
        result(&k, 0, CLS_BUSINESS, false);
    assert_true(k.s.tokens == left);
    result(&k, 0, CLS_OK, false);
    assert_true(k.s.tokens > left);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(grpc_threshold),   cmocka_unit_test(ratio_budget),
        cmocka_unit_test(envoy_concurrency), cmocka_unit_test(aws_quota),
        cmocka_unit_test(aws_adaptive_cubic), cmocka_unit_test(aws_adaptive_measured_rate),
        cmocka_unit_test(sre_throttling),
        cmocka_unit_test(brooker_bucket), cmocka_unit_test(business_answers_do_not_reward),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
