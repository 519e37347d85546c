/*
 * Breakers as state machines, driven by scripted results, against the
 * transitions docs/breakers.md give.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "breaker.h"

struct br {
    const struct breaker_kind *k;
    struct breaker_params p;
    struct breaker_state s;
    uint8_t ring[BREAKER_MAX_WINDOW_CALLS];
    struct window w;
};

/* Points the state at its own time window (after the copy out of make). */
static void attach(struct br *b)
{
    if (breaker_needs_window(b->k, &b->p))
        breaker_state_init(&b->s, &b->w);
}

static struct br make(const char *name)
{
    struct br b;
    b.k = breaker_find(name);
    assert_non_null(b.k);
    b.p = b.k->defaults;
    breaker_state_init(&b.s, NULL);
    memset(b.ring, 0, sizeof b.ring);
    return b;
}

/* Admits a call at now and reports its result at once; returns whether it
 * was admitted. */
static bool call(struct br *b, rs_time now, bool failed, rs_time duration)
{
    uint32_t gen;
    bool half;
    if (!breaker_admit(b->k, &b->p, &b->s, now, &gen, &half))
        return false;
    breaker_result(b->k, &b->p, &b->s, b->ring, now, gen, failed, duration);
    return true;
}

/* gobreaker: the 6th consecutive failure trips it; 60 s open; then one
 * probe; its success closes, its failure reopens; results of an older
 * generation are ignored. */
static void gobreaker_machine(void **state)
{
    (void)state;
    struct br b = make("gobreaker"); attach(&b);
    for (int i = 0; i < 5; i++)
        assert_true(call(&b, 0, true, 0));
    assert_true(b.s.mode == BRK_CLOSED);
    assert_true(call(&b, 0, false, 0)); /* a success resets the count */
    for (int i = 0; i < 5; i++)
        assert_true(call(&b, 0, true, 0));
    assert_true(b.s.mode == BRK_CLOSED);
    assert_true(call(&b, 0, true, 0)); /* the 6th */
    assert_true(b.s.mode == BRK_OPEN);
    assert_false(call(&b, 59 * RS_S, false, 0));
    /* at 60 s: half-open, one probe admitted, a second call rejected */
    uint32_t gen;
    bool half;
    assert_true(breaker_admit(b.k, &b.p, &b.s, 60 * RS_S, &gen, &half));
    assert_true(half && b.s.mode == BRK_HALF_OPEN);
    assert_false(call(&b, 60 * RS_S, false, 0));
    breaker_result(b.k, &b.p, &b.s, b.ring, 61 * RS_S, gen, false, 0);
    assert_true(b.s.mode == BRK_CLOSED);
    /* a failing probe reopens */
    for (int i = 0; i < 6; i++)
        call(&b, 100 * RS_S, true, 0);
    assert_true(b.s.mode == BRK_OPEN);
    assert_true(call(&b, 160 * RS_S, true, 0));
    assert_true(b.s.mode == BRK_OPEN && b.s.open_until == 220 * RS_S);
    /* an old generation's result changes nothing */
    struct br c = make("gobreaker"); attach(&c);
    uint32_t old;
    assert_true(breaker_admit(c.k, &c.p, &c.s, 0, &old, &half));
    for (int i = 0; i < 6; i++)
        call(&c, 0, true, 0);
    assert_true(c.s.mode == BRK_OPEN);
    assert_false(breaker_result(c.k, &c.p, &c.s, c.ring, 1, old, true, 0));
    assert_true(c.s.open_until == 60 * RS_S);
}

/* Resilience4j: count window of 100 with a minimum of 100 calls; opens when
 * failures reach 50 %; half-open admits 10 and decides on their rate. */
static void resilience4j_machine(void **state)
{
    (void)state;
    struct br b = make("resilience4j"); attach(&b);
    for (int i = 0; i < 99; i++)
        call(&b, 0, i < 60, 0); /* 60 % failing, but fewer than 100 calls */
    assert_true(b.s.mode == BRK_CLOSED);
    call(&b, 0, false, 0); /* the 100th: 60/100 ≥ 50 % */
    assert_true(b.s.mode == BRK_OPEN);
    assert_false(call(&b, 59 * RS_S, false, 0));
    for (int i = 0; i < 10; i++) { /* half-open: 10 probes, 4 failing */
        uint32_t gen;
        bool half;
        assert_true(breaker_admit(b.k, &b.p, &b.s, 60 * RS_S, &gen, &half));
        breaker_result(b.k, &b.p, &b.s, b.ring, 60 * RS_S, gen, i < 4, 0);
    }
    assert_true(b.s.mode == BRK_CLOSED);
    /* closed again with empty statistics: 99 calls, every one failing,
     * stay below the minimum of 100 */
    for (int i = 0; i < 99; i++)
        call(&b, 61 * RS_S, true, 0);
    assert_true(b.s.mode == BRK_CLOSED);
    /* a fresh window: 49 failures in 100 keep it closed */
    struct br c = make("resilience4j"); attach(&c);
    for (int i = 0; i < 100; i++)
        call(&c, 0, i % 100 < 49, 0);
    assert_true(c.s.mode == BRK_CLOSED);
    /* the window slides: one more failure in place of a success → 50 % */
    call(&c, 0, true, 0); /* drops the oldest (a failure): still 49 */
    assert_true(c.s.mode == BRK_CLOSED);
    for (int i = 0; i < 60 && c.s.mode == BRK_CLOSED; i++)
        call(&c, 0, true, 0);
    assert_true(c.s.mode == BRK_OPEN);
    /* half-open with 5 of 10 failing: reopens */
    for (int i = 0; i < 10; i++) {
        uint32_t gen;
        bool half;
        assert_true(breaker_admit(c.k, &c.p, &c.s, 61 * RS_S, &gen, &half));
        breaker_result(c.k, &c.p, &c.s, c.ring, 61 * RS_S, gen, i < 5, 0);
    }
    assert_true(c.s.mode == BRK_OPEN);
    /* slow calls: 100 successes slower than 60 s trip it (slow rate 100 %);
     * a call of exactly 60 s is not slower than the threshold */
    struct br d = make("resilience4j"); attach(&d);
    for (int i = 0; i < 100; i++)
        call(&d, 0, false, 60 * RS_S);
    assert_true(d.s.mode == BRK_CLOSED);
    d = make("resilience4j"); attach(&d);
    for (int i = 0; i < 100; i++)
        call(&d, 0, false, 60 * RS_S + 1);
    assert_true(d.s.mode == BRK_OPEN);
}

/* Hystrix: 20 requests in the 10 s window and 50 % errors; 5 s open; one
 * probe. Polly v8: 10 % of at least 100 calls over 30 s. */
static void hystrix_and_polly(void **state)
{
    (void)state;
    struct br h = make("hystrix"); attach(&h);
    for (int i = 0; i < 19; i++)
        call(&h, i * RS_MS, true, 0);
    assert_true(h.s.mode == BRK_CLOSED); /* below the request volume */
    call(&h, 20 * RS_MS, true, 0);
    assert_true(h.s.mode == BRK_OPEN);
    assert_false(call(&h, 5 * RS_S, false, 0));
    assert_true(call(&h, 5 * RS_S + 20 * RS_MS, false, 0)); /* the probe */
    assert_true(h.s.mode == BRK_CLOSED);
    /* failures older than the window do not count */
    struct br o = make("hystrix"); attach(&o);
    for (int i = 0; i < 15; i++)
        call(&o, 0, true, 0);
    for (int i = 0; i < 15; i++)
        call(&o, 11 * RS_S, true, 0);
    assert_true(o.s.mode == BRK_CLOSED);
    struct br p = make("polly"); attach(&p);
    for (int i = 0; i < 100; i++)
        call(&p, i * 10 * RS_MS, i < 9, 0);
    assert_true(p.s.mode == BRK_CLOSED); /* 9 % */
    call(&p, RS_S, true, 0); /* 10 of 101 */
    assert_true(p.s.mode == BRK_CLOSED); /* 9.9 % */
    call(&p, RS_S, true, 0); /* 11 of 102 */
    assert_true(p.s.mode == BRK_OPEN);
}

/* Brooker: retries stop once cumulative failures exceed 10 % of calls. */
static void brooker_ratio(void **state)
{
    (void)state;
    struct br b = make("brooker"); attach(&b);
    for (int i = 0; i < 100; i++)
        assert_true(call(&b, 0, i < 10, 0)); /* first tries always go */
    assert_true(breaker_allow_retry(b.k, &b.p, &b.s)); /* exactly 10 % */
    call(&b, 0, true, 0);
    assert_false(breaker_allow_retry(b.k, &b.p, &b.s)); /* 11/101 */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(gobreaker_machine),
        cmocka_unit_test(resilience4j_machine),
        cmocka_unit_test(hystrix_and_polly),
        cmocka_unit_test(brooker_ratio),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
