/*
 * Event queue: order, FIFO ties and cancellation, against a trivially
 * correct reference (an unsorted array searched linearly for the minimum)
 * on random schedules of pushes (to the heap and to lanes), pops (of the
 * earliest event, or of the earliest before a limit) and cancels.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <gsl/gsl_rng.h>
#include <stdlib.h>

#include "evq.h"

struct ref_ev {
    rs_time t;
    uint64_t seq;
    uint32_t obj;
    evq_handle h;
    int live;
};

static void ties_fire_in_push_order(void **state)
{
    (void)state;
    struct evq q;
    evq_init(&q);
    for (uint32_t i = 0; i < 1000; i++)
        evq_push(&q, 5 - (rs_time)(i % 3), 0, i, 0); /* three distinct times */
    struct evq_event ev;
    uint32_t last[3] = {0, 0, 0};
    int seen[3] = {0, 0, 0};
    rs_time prev = -1;
    while (evq_pop(&q, &ev)) {
        assert_true(ev.t >= prev);
        prev = ev.t;
        int k = (int)(5 - ev.t);
        if (seen[k])
            assert_true(ev.obj > last[k]); /* same time: pushed earlier fires first */
        seen[k] = 1;
        last[k] = ev.obj;
    }
    evq_fini(&q);
}

static void cancel_is_exact(void **state)
{
    (void)state;
    struct evq q;
    evq_init(&q);
    evq_handle a = evq_push(&q, 10, 0, 1, 0);
    evq_handle b = evq_push(&q, 20, 0, 2, 0);
    assert_true(evq_cancel(&q, a));
    assert_false(evq_cancel(&q, a)); /* twice: no effect */
    assert_false(evq_cancel(&q, EVQ_NONE));
    evq_handle c = evq_push(&q, 5, 0, 3, 0); /* reuses a's slot */
    assert_false(evq_cancel(&q, a));         /* a stale handle does not cancel c */
    struct evq_event ev;
    assert_true(evq_pop(&q, &ev));
    assert_int_equal(ev.obj, 3);
    assert_false(evq_cancel(&q, c)); /* already fired */
    assert_true(evq_pop(&q, &ev));
    assert_int_equal(ev.obj, 2);
    assert_false(evq_cancel(&q, b));
    assert_false(evq_pop(&q, &ev));
    evq_fini(&q);
}

static void schedules(bool wide)
{
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    for (unsigned long seed = 1; seed <= 20; seed++) {
        gsl_rng_set(r, seed);
        struct evq q;
        evq_init(&q);
        size_t cap = 20000, n = 0;
        struct ref_ev *ref = calloc(cap, sizeof *ref);
        uint64_t seq = 0;
        rs_time now = 0;
        for (int step = 0; step < 20000; step++) {
            double u = gsl_rng_uniform(r);
            if (u < 0.5 && n < cap) {
                /* Small time range: many ties. Half the pushes go to lanes:
                 * lane l holds now + 10·l (non-decreasing, as timeouts are),
                 * and now and then an earlier time that must fall back to
                 * the heap. */
                rs_time t = now + (rs_time)gsl_rng_uniform_int(r, 50);
                if (wide && gsl_rng_uniform(r) < 0.4) /* far ahead: deep in the heap */
                    t = now + (rs_time)(gsl_rng_uniform(r) * 1000e9);
                evq_handle h;
                if (gsl_rng_uniform(r) < 0.5) {
                    unsigned lane = (unsigned)gsl_rng_uniform_int(r, 3);
                    t = now + 10 * (rs_time)lane - (gsl_rng_uniform(r) < 0.05 ? 5 : 0);
                    h = evq_push_lane(&q, lane, t, 0, (uint32_t)n, 0);
                } else {
                    h = evq_push(&q, t, 0, (uint32_t)n, 0);
                }
                ref[n] = (struct ref_ev){t, seq++, (uint32_t)n, h, 1};
                n++;
            } else if (u < 0.7 && n > 0) {
                size_t i = gsl_rng_uniform_int(r, n);
                assert_int_equal(evq_cancel(&q, ref[i].h), ref[i].live);
                ref[i].live = 0;
            } else {
                /* Reference: the live event of least (t, seq). */
                size_t best = SIZE_MAX;
                for (size_t i = 0; i < n; i++)
                    if (ref[i].live && (best == SIZE_MAX || ref[i].t < ref[best].t ||
                                        (ref[i].t == ref[best].t && ref[i].seq < ref[best].seq)))
                        best = i;
                struct evq_event ev;
                bool got, expect = best != SIZE_MAX;
                if (gsl_rng_uniform(r) < 0.3) { /* only an event before a limit */
                    rs_time limit = now + (rs_time)gsl_rng_uniform_int(r, 60);
                    got = evq_pop_before(&q, limit, &ev);
                    expect = expect && ref[best].t < limit;
                } else {
                    got = evq_pop(&q, &ev);
                }
                assert_int_equal(got, expect);
                if (got) {
                    assert_int_equal(ev.obj, ref[best].obj);
                    assert_true(ev.t == ref[best].t);
                    ref[best].live = 0;
                    now = ev.t;
                }
            }
            if (step % (wide ? 13 : 97) == 0)
                assert_true(evq_check(&q));
        }
        free(ref);
        evq_fini(&q);
    }
    gsl_rng_free(r);
}

static void random_schedules_match_reference(void **state)
{
    (void)state;
    schedules(false);
}

/* The same with times spread up to 1000 s ahead: far events sink deep
 * into the heap while lane heads and near events come and go. */
static void wide_schedules_match_reference(void **state)
{
    (void)state;
    schedules(true);
}

/* Time that moves through the calendar: delays at every scale from a
 * microsecond to an hour (so events land in the near heap, in calendar
 * buckets and beyond the calendar), lanes whose heads lie in later buckets
 * than the near heap's, pops as often as pushes (so time runs on for
 * hours, through empty stretches the calendar jumps over), cancels, and
 * exact ties; every step against the reference. */
static void calendar_schedules_match_reference(void **state)
{
    (void)state;
    static const double scale[] = {1e3, 1e7, 3e8, 1e9, 6e10, 3e11, 3.6e12};
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    for (unsigned long seed = 1; seed <= 10; seed++) {
        gsl_rng_set(r, seed);
        struct evq q;
        evq_init(&q);
        size_t cap = 40000, n = 0, nlive = 0;
        struct ref_ev *ref = calloc(cap, sizeof *ref);
        size_t *live = calloc(cap, sizeof *live); /* indices of live refs */
        uint64_t seq = 0;
        rs_time now = 0, last = 0;
        for (int step = 0; step < 40000; step++) {
            double u = gsl_rng_uniform(r);
            if (u < 0.45 && n < cap) {
                double sc = scale[gsl_rng_uniform_int(r, sizeof scale / sizeof scale[0])];
                rs_time t = now + (rs_time)(gsl_rng_uniform(r) * sc);
                if (gsl_rng_uniform(r) < 0.1)
                    t = last; /* a tie with an earlier push */
                if (t < now)
                    t = now;
                last = t;
                evq_handle h;
                if (gsl_rng_uniform(r) < 0.3) { /* lanes of timeouts 0.2 s, 2 s and 500 s long */
                    static const double lane_delay[] = {2e8, 2e9, 5e11};
                    unsigned lane = (unsigned)gsl_rng_uniform_int(r, 3);
                    t = now + (rs_time)lane_delay[lane];
                    h = evq_push_lane(&q, lane, t, 0, (uint32_t)n, 0);
                } else {
                    h = evq_push(&q, t, 0, (uint32_t)n, 0);
                }
                ref[n] = (struct ref_ev){t, seq++, (uint32_t)n, h, 1};
                live[nlive++] = n++;
            } else if (u < 0.55 && nlive > 0) {
                size_t k = gsl_rng_uniform_int(r, nlive), i = live[k];
                assert_true(evq_cancel(&q, ref[i].h));
                assert_false(evq_cancel(&q, ref[i].h));
                ref[i].live = 0;
                live[k] = live[--nlive];
            } else {
                size_t best = SIZE_MAX, bk = 0;
                for (size_t k = 0; k < nlive; k++) {
                    size_t i = live[k];
                    if (best == SIZE_MAX || ref[i].t < ref[best].t ||
                        (ref[i].t == ref[best].t && ref[i].seq < ref[best].seq)) {
                        best = i;
                        bk = k;
                    }
                }
                assert_true(evq_next_time(&q) == (best == SIZE_MAX ? RS_TIME_NEVER : ref[best].t));
                struct evq_event ev;
                bool got = evq_pop(&q, &ev);
                assert_int_equal(got, best != SIZE_MAX);
                if (got) {
                    assert_int_equal(ev.obj, ref[best].obj);
                    assert_false(evq_cancel(&q, ref[best].h)); /* fired: no effect */
                    ref[best].live = 0;
                    live[bk] = live[--nlive];
                    now = ev.t;
                }
            }
            if (step % 7 == 0)
                assert_true(evq_check(&q));
        }
        assert_true(now > (rs_time)3600e9); /* time did run through the calendar */
        free(live);
        free(ref);
        evq_fini(&q);
    }
    gsl_rng_free(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(ties_fire_in_push_order),
        cmocka_unit_test(cancel_is_exact),
        cmocka_unit_test(random_schedules_match_reference),
        cmocka_unit_test(wide_schedules_match_reference),
        cmocka_unit_test(calendar_schedules_match_reference),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
