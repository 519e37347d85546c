/*
 * test_verdict — the verdict (sim/model/verdict.c) on hand-made buckets:
 * each verdict, the band (tolerance against 3σ, one-sided, the floor of
 * one request), the hold, the persistence boundary, the baseline's window
 * after warm-up and before the trigger, and runs too short to tell.
 *
 * Every case is 1 s buckets and 1 s windows; a bucket's signals are set
 * directly: offered, ok, the queue and in flight (their areas: level · 1e9
 * ns) and the window's p99.
 */
#include "rs_test.h"

#include <math.h>
#include <string.h>

#include "metrics.h"
#include "verdict.h"

#define N 200 /* seconds */

static struct metrics m;
static const struct verdict_params P = {RS_S, 5 * RS_S, 60 * RS_S, 0.1};

/* A run of n seconds whose every bucket offers and serves 100/s with a
 * queue of 2, 10 in flight and a p99 of 50 ms. */
static void fresh(size_t n)
{
    char err[128];
    unsigned att[1] = {1};
    assert_int_equal(metrics_init(&m, (rs_time)n * RS_S, RS_S, 1, att, err, sizeof err), 0);
    assert_int_equal(metrics_windows(&m, 1), 0);
    assert_int_equal(m.nwin, n);
    for (size_t i = 0; i < n; i++) {
        m.b[i].offered = 100;
        m.b[i].outcomes[OUT_OK] = 100;
        m.b[i].area_queue = 2e9;
        m.b[i].area_inflight = 10e9;
        m.win_p99[i] = 0.05;
    }
}

/* Seconds [a, b) get the queue q (and in flight 8 + q). */
static void queue(size_t a, size_t b, double q)
{
    for (size_t i = a; i < b; i++) {
        m.b[i].area_queue = q * 1e9;
        m.b[i].area_inflight = (8 + q) * 1e9;
    }
}

static struct verdict_result judge(rs_time t0, rs_time t1, const struct verdict_params *p)
{
    struct verdict_times t = {.end = (rs_time)m.nbuckets * RS_S, .complete = true, .ntriggers = t0 >= 0};
    t.trigger[0][0] = t0, t.trigger[0][1] = t1;
    struct verdict_result v;
    verdict_judge(&m, p ? p : &P, &t, &v);
    return v;
}

static void no_trigger_is_stable(void **state)
{
    (void)state;
    fresh(N);
    struct verdict_result v = judge(-1, -1, NULL);
    assert_int_equal(v.v, VERDICT_STABLE);
    assert_true(fabs(v.base[VS_GOODPUT] - 100) < 1e-9 && fabs(v.base[VS_QUEUE] - 2) < 1e-9);
    /* the band: goodput >= 100 - max(10, 0), the queue <= 2 + max(0.2, 0, 1) */
    assert_true(fabs(v.band[VS_GOODPUT] - 90) < 1e-9 && fabs(v.band[VS_QUEUE] - 3) < 1e-9);
    assert_true(fabs(v.band[VS_P99] - 0.055) < 1e-12);
    metrics_fini(&m);
}

/* Overloaded: goodput below 90 % of offered, or a queue that grows. */
static void overloaded_baselines(void **state)
{
    (void)state;
    fresh(N);
    for (size_t i = 0; i < 60; i++)
        m.b[i].outcomes[OUT_OK] = 89; /* 89 < 0.9 · 100 */
    struct verdict_result v = judge(60 * RS_S, 70 * RS_S, NULL);
    assert_int_equal(v.v, VERDICT_OVERLOADED);
    assert_non_null(strstr(v.reason, "before the trigger, requests answered (ok, business or failed) 89/s fall short of the offered 100/s"));
    for (size_t i = 0; i < 60; i++) /* failed answers keep up: injected errors are not overload */
        m.b[i].outcomes[OUT_FAILED] = 11;
    assert_int_equal(judge(60 * RS_S, 70 * RS_S, NULL).v, VERDICT_RECOVERED);
    for (size_t i = 0; i < 60; i++) /* requests given up on do not */
        m.b[i].outcomes[OUT_FAILED] = 0, m.b[i].outcomes[OUT_EXHAUSTED] = 11;
    assert_int_equal(judge(60 * RS_S, 70 * RS_S, NULL).v, VERDICT_OVERLOADED);
    for (size_t i = 0; i < 60; i++)
        m.b[i].outcomes[OUT_EXHAUSTED] = 0;
    for (size_t i = 0; i < 60; i++)
        m.b[i].outcomes[OUT_OK] = 90; /* exactly 90 %: kept up */
    assert_int_equal(judge(60 * RS_S, 70 * RS_S, NULL).v, VERDICT_RECOVERED);
    for (size_t i = 0; i < 60; i++) /* the queue grows 1 a second: first third 9.5, last 49.5 */
        queue(i, i + 1, (double)i);
    v = judge(60 * RS_S, 70 * RS_S, NULL);
    assert_int_equal(v.v, VERDICT_OVERLOADED);
    assert_non_null(strstr(v.reason, "the queue grew from 9.5 to 49.5"));
    assert_int_equal(judge(-1, -1, NULL).v, VERDICT_STABLE); /* the whole run: back to 2 after 60 s */
    queue(60, N, 60);
    v = judge(-1, -1, NULL);
    assert_int_equal(v.v, VERDICT_OVERLOADED);
    assert_non_null(strstr(v.reason, "over the run (no trigger), the queue grew"));
    metrics_fini(&m);
}

/* Recovered: the queue is 500 from the trigger until 80 s, 20 s after it
 * ended at 60 s; the hold of 5 s starts at 80 s. A hold is judged by its
 * means: one window of 7.5 at 82 s puts the holds from 78 to 82 s over the
 * band (2 + 5.5 / 5 = 3.1 > 3): 83 s; one of 7 (3.0), at the edge, does
 * not. */
static void recovered_after_the_hold(void **state)
{
    (void)state;
    fresh(N);
    queue(50, 80, 500);
    struct verdict_result v = judge(50 * RS_S, 60 * RS_S, NULL);
    assert_int_equal(v.v, VERDICT_RECOVERED);
    assert_true(fabs(v.recovery_s - 20) < 1e-9);
    queue(82, 83, 7.5);
    v = judge(50 * RS_S, 60 * RS_S, NULL);
    assert_int_equal(v.v, VERDICT_RECOVERED);
    assert_true(fabs(v.recovery_s - 23) < 1e-9);
    queue(82, 83, 7.0); /* at the band's edge: in */
    assert_true(fabs(judge(50 * RS_S, 60 * RS_S, NULL).recovery_s - 20) < 1e-9);
    /* four good seconds then one of 50, every five: every hold's mean is 11.6 */
    for (size_t i = 80; i < N; i++)
        queue(i, i + 1, i % 5 == 4 ? 50 : 2);
    v = judge(50 * RS_S, 60 * RS_S, NULL);
    assert_int_equal(v.v, VERDICT_METASTABLE);
    metrics_fini(&m);
}

/* The persistence boundary: a hold starting 59 s after the trigger's end
 * is a recovery; one starting at 60 s is metastable (still out of band
 * for verdict_persist), though the run sees it recover. */
static void persistence_boundary(void **state)
{
    (void)state;
    fresh(N);
    queue(50, 119, 500);
    struct verdict_result v = judge(50 * RS_S, 60 * RS_S, NULL);
    assert_int_equal(v.v, VERDICT_RECOVERED);
    assert_true(fabs(v.recovery_s - 59) < 1e-9);
    queue(119, 120, 500);
    v = judge(50 * RS_S, 60 * RS_S, NULL);
    assert_int_equal(v.v, VERDICT_METASTABLE);
    /* the reason: the last window out of band before persistence ran out */
    assert_non_null(strstr(v.reason, "59 s after the trigger ended at 60 s: queue 101.6 (band <= 3)"));
    assert_null(strstr(v.reason, "in flight")); /* above its band, but not growing */
    metrics_fini(&m);
}

/* In flight is out of band only while above its band and growing across
 * the hold (its last window above its first): 50 falling by 1 a second
 * from the trigger's end recovers at once; rising by 1 a second until
 * 90 s, when it falls back to 10, at 86 s (the first hold whose last
 * window, at 90 s, is below its first). */
static void in_flight_out_only_while_growing(void **state)
{
    (void)state;
    fresh(N);
    for (size_t i = 50; i < 60; i++) /* the trigger */
        m.b[i].area_inflight = 60e9;
    for (size_t i = 60; i < 100; i++)
        m.b[i].area_inflight = (50.0 - (double)(i - 60)) * 1e9;
    struct verdict_result v = judge(50 * RS_S, 60 * RS_S, NULL);
    assert_int_equal(v.v, VERDICT_RECOVERED);
    assert_true(v.recovery_s == 0);
    for (size_t i = 60; i < 90; i++)
        m.b[i].area_inflight = (50.0 + (double)(i - 60)) * 1e9;
    v = judge(50 * RS_S, 60 * RS_S, NULL);
    assert_int_equal(v.v, VERDICT_RECOVERED);
    assert_true(fabs(v.recovery_s - 26) < 1e-9);
    for (size_t i = 50; i < N; i++) /* flat at 50 from the trigger on: above its band, not growing */
        m.b[i].area_inflight = 50e9;
    v = judge(50 * RS_S, 60 * RS_S, NULL);
    assert_int_equal(v.v, VERDICT_RECOVERED);
    assert_true(v.recovery_s == 0);
    metrics_fini(&m);
}

/* Undetermined: the run ends before persistence and a hold can be seen
 * (here 60 s + 5 s after a trigger ending at 140 s need 204 s), a run
 * interrupted, and a baseline of fewer than 3 windows. */
static void undetermined_runs(void **state)
{
    (void)state;
    fresh(N);
    queue(130, N, 500);
    struct verdict_result v = judge(130 * RS_S, 140 * RS_S, NULL);
    assert_int_equal(v.v, VERDICT_UNDETERMINED);
    assert_non_null(strstr(v.reason, "the run ended 60 s after the trigger ended"));
    v = judge(130 * RS_S, 136 * RS_S, NULL); /* 64 s after: the last start (195 s) has its hold */
    assert_int_equal(v.v, VERDICT_METASTABLE);
    /* interrupted at 100 s, 40 s after the trigger: undetermined; at 130 s,
     * 70 s after (more than persist + hold): judged on what it saw */
    struct verdict_times t = {.end = 100 * RS_S, .complete = false, .ntriggers = 1, .trigger = {{50 * RS_S, 60 * RS_S}}};
    queue(50, N, 500);
    verdict_judge(&m, &P, &t, &v);
    assert_int_equal(v.v, VERDICT_UNDETERMINED);
    assert_non_null(strstr(v.reason, "the run was interrupted 40 s after the trigger ended"));
    t.end = 130 * RS_S;
    verdict_judge(&m, &P, &t, &v);
    assert_int_equal(v.v, VERDICT_METASTABLE);
    t.end = 55 * RS_S; /* before the trigger ended */
    verdict_judge(&m, &P, &t, &v);
    assert_non_null(strstr(v.reason, "the run was interrupted at 55 s, before the trigger ended at 60 s"));
    assert_int_equal(judge(2 * RS_S, 10 * RS_S, NULL).v, VERDICT_UNDETERMINED);
    v = judge(3 * RS_S, 10 * RS_S, NULL); /* 3 windows: a baseline; back at once */
    assert_int_equal(v.v, VERDICT_RECOVERED);
    assert_true(v.recovery_s == 0);
    metrics_fini(&m);
}

/* The band: w = max(tolerance · mean, 3σ), σ of the means over a hold (5
 * windows) in the baseline. Goodput in blocks of 10 s at 80 and 120/s
 * (mean 100) has σ of about 16: a band far below the tolerance's 90. */
static void band_width_and_sides(void **state)
{
    (void)state;
    fresh(N);
    for (size_t i = 0; i < 50; i++)
        m.b[i].offered = m.b[i].outcomes[OUT_OK] = (i / 10) % 2 ? 120 : 80;
    double s = 0, ss = 0;
    for (size_t w = 0; w + 5 <= 50; w++) {
        double x = 0;
        for (size_t i = w; i < w + 5; i++)
            x += (double)m.b[i].outcomes[OUT_OK] / 5;
        s += x, ss += x * x;
    }
    double sd = sqrt((ss - s * s / 46) / 45), lo = 96 - 3 * sd; /* the mean: 96 (3 blocks of 80, 2 of 120) */
    assert_true(sd > 15 && sd < 18);
    for (size_t i = 60; i < N; i++)
        m.b[i].outcomes[OUT_OK] = (uint64_t)ceil(lo);
    struct verdict_result v = judge(50 * RS_S, 60 * RS_S, NULL);
    assert_true(fabs(v.band[VS_GOODPUT] - lo) < 1e-9);
    assert_int_equal(v.v, VERDICT_RECOVERED);
    for (size_t i = 60; i < N; i++)
        m.b[i].outcomes[OUT_OK] = (uint64_t)floor(lo);
    assert_int_equal(judge(50 * RS_S, 60 * RS_S, NULL).v, VERDICT_METASTABLE);
    for (size_t i = 0; i < N; i++)
        m.b[i].offered = m.b[i].outcomes[OUT_OK] = 100;
    for (size_t i = 60; i < N; i++) {
        m.b[i].outcomes[OUT_OK] = 300; /* a backlog served */
        queue(i, i + 1, 0);
        m.win_p99[i] = 0.01;
    }
    assert_int_equal(judge(50 * RS_S, 60 * RS_S, NULL).v, VERDICT_RECOVERED);
    for (size_t i = 60; i < N; i++)
        m.b[i].outcomes[OUT_OK] = 89;
    assert_int_equal(judge(50 * RS_S, 60 * RS_S, NULL).v, VERDICT_METASTABLE);
    struct verdict_params loose = P;
    loose.tolerance = 0.2;
    assert_int_equal(judge(50 * RS_S, 60 * RS_S, &loose).v, VERDICT_RECOVERED);
    metrics_fini(&m);
}

/* p99 alone keeps a run out of band; a window where nothing ended has no
 * p99 and is judged on the rest (but then its goodput is 0). */
static void p99_counts(void **state)
{
    (void)state;
    fresh(N);
    for (size_t i = 60; i < N; i++)
        m.win_p99[i] = 0.056; /* above 50 ms + 10 % */
    struct verdict_result v = judge(50 * RS_S, 60 * RS_S, NULL);
    assert_int_equal(v.v, VERDICT_METASTABLE);
    assert_non_null(strstr(v.reason, "p99 56 ms (band <= 55 ms)"));
    for (size_t i = 60; i < N; i++)
        m.win_p99[i] = -1;
    assert_int_equal(judge(50 * RS_S, 60 * RS_S, NULL).v, VERDICT_RECOVERED);
    metrics_fini(&m);
}

/* The baseline is the windows wholly after warm-up and before the first
 * trigger: a bad start in the warm-up is left out. */
static void baseline_after_warmup(void **state)
{
    (void)state;
    fresh(N);
    queue(0, 20, 400);
    struct verdict_times t = {.warmup = 20 * RS_S, .end = N * RS_S, .complete = true, .ntriggers = 1,
                              .trigger = {{50 * RS_S, 60 * RS_S}}};
    struct verdict_result v;
    verdict_judge(&m, &P, &t, &v);
    assert_int_equal(v.v, VERDICT_RECOVERED);
    assert_true(fabs(v.base[VS_QUEUE] - 2) < 1e-9);
    t.warmup = 19 * RS_S + 1; /* window 19 starts before: out */
    verdict_judge(&m, &P, &t, &v);
    assert_true(fabs(v.base[VS_QUEUE] - 2) < 1e-9);
    t.warmup = 19 * RS_S; /* window 19 (a queue of 400) is in */
    verdict_judge(&m, &P, &t, &v);
    assert_true(fabs(v.base[VS_QUEUE] - (400 + 30 * 2) / 31.0) < 1e-9);
    metrics_fini(&m);
}

/* Windows of verdict_window rounded up to whole buckets: 1.5 s of 1 s
 * buckets is 2; a recovery is then to the 2 s. The queue of 500 until 81 s:
 * the first 2 s window wholly after it starts at 82 s, 22 s after the
 * trigger's end. */
static void windows_of_whole_buckets(void **state)
{
    (void)state;
    fresh(N);
    assert_int_equal(verdict_window_buckets(&m, 3 * RS_S / 2), 2);
    assert_int_equal(verdict_window_buckets(&m, RS_S), 1);
    assert_int_equal(verdict_window_buckets(&m, 1), 1);
    metrics_fini(&m);
    char err[128];
    unsigned att[1] = {1};
    assert_int_equal(metrics_init(&m, N * RS_S, RS_S, 1, att, err, sizeof err), 0);
    assert_int_equal(metrics_windows(&m, 2), 0);
    assert_int_equal(m.nwin, N / 2);
    for (size_t i = 0; i < N; i++) {
        m.b[i].offered = m.b[i].outcomes[OUT_OK] = 100;
        m.b[i].area_queue = (i >= 50 && i < 81 ? 500 : 2) * 1e9;
        m.b[i].area_inflight = 10e9;
    }
    for (size_t w = 0; w < m.nwin; w++)
        m.win_p99[w] = 0.05;
    struct verdict_params p = P;
    p.window = 3 * RS_S / 2;
    struct verdict_result v = judge(50 * RS_S, 60 * RS_S, &p);
    assert_int_equal(v.v, VERDICT_RECOVERED);
    assert_true(fabs(v.recovery_s - 22) < 1e-9);
    metrics_fini(&m);
}

/* The windows' p99 (metrics_outcome): before win_since every request that
 * ends counts; from it on, only those that arrived at or after it. At
 * 20 s, a request of 20 s and 49 of 1 ms: the top 1 % of 50 is the 20 s
 * one. At 30 s, one of 20 s (arrived at 10.5 s, before win_since = 25 s),
 * 49 of 1 ms and one of 5.5 s (arrived at 25 s exactly): the p99 is the
 * 5.5 s one's, which it would not be if the old request counted. */
static void p99_after_the_trigger_counts_new_requests(void **state)
{
    (void)state;
    char err[128];
    unsigned att[1] = {1};
    assert_int_equal(metrics_init(&m, 40 * RS_S, RS_S, 1, att, err, sizeof err), 0);
    assert_int_equal(metrics_windows(&m, 1), 0);
    m.win_since = 25 * RS_S;
    metrics_advance(&m, 20 * RS_S + RS_S / 2, 0, 0, 0);
    metrics_outcome(&m, OUT_OK, 20 * RS_S, true); /* arrived at 0.5 s */
    for (int i = 0; i < 49; i++)
        metrics_outcome(&m, OUT_OK, RS_MS, true);
    metrics_advance(&m, 30 * RS_S + RS_S / 2, 0, 0, 0);
    metrics_outcome(&m, OUT_OK, 20 * RS_S, true); /* arrived at 10.5 s */
    for (int i = 0; i < 49; i++)
        metrics_outcome(&m, OUT_OK, RS_MS, true);
    metrics_outcome(&m, OUT_OK, 5 * RS_S + RS_S / 2, true); /* arrived at 25 s exactly: counts */
    metrics_finish(&m, 40 * RS_S, 0, 0, 0);
    assert_true(m.win_p99[20] > 1.0);
    assert_true(m.win_p99[30] > 0.001 && m.win_p99[30] < 5.6);
    assert_true(fabs(m.win_p99[30] - 5.5) < 0.05);
    assert_true(m.win_p99[31] < 0);                 /* nothing ended */
    metrics_fini(&m);
}

/* Two triggers, judged in order: the first recovers before the second
 * (recovery_s from the second's end); the first persisting past
 * verdict_persist before the second starts makes the run metastable though
 * the second recovers; the first still out when the second starts, sooner
 * than persist, is judged with it. */
static void triggers_in_order(void **state)
{
    (void)state;
    fresh(N);
    struct verdict_times t = {.end = N * RS_S, .complete = true, .ntriggers = 2,
                              .trigger = {{30 * RS_S, 40 * RS_S}, {120 * RS_S, 125 * RS_S}}};
    struct verdict_result v;
    queue(30, 50, 500);   /* the first: back at 50 s */
    queue(120, 135, 500); /* the second: back at 135 s */
    verdict_judge(&m, &P, &t, &v);
    assert_int_equal(v.v, VERDICT_RECOVERED);
    assert_true(fabs(v.recovery_s - 10) < 1e-9);
    queue(30, 120, 500); /* the first never comes back before the second: 80 s out */
    verdict_judge(&m, &P, &t, &v);
    assert_int_equal(v.v, VERDICT_METASTABLE);
    assert_non_null(strstr(v.reason, "after the trigger ended at 40 s"));
    t.trigger[1][0] = 90 * RS_S, t.trigger[1][1] = 95 * RS_S; /* 50 s after the first: judged with it */
    metrics_fini(&m);
    fresh(N);
    queue(30, 110, 500);
    verdict_judge(&m, &P, &t, &v);
    assert_int_equal(v.v, VERDICT_RECOVERED);
    assert_true(fabs(v.recovery_s - 15) < 1e-9);
    metrics_fini(&m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(no_trigger_is_stable),
        cmocka_unit_test(overloaded_baselines),
        cmocka_unit_test(recovered_after_the_hold),
        cmocka_unit_test(persistence_boundary),
        cmocka_unit_test(in_flight_out_only_while_growing),
        cmocka_unit_test(undetermined_runs),
        cmocka_unit_test(band_width_and_sides),
        cmocka_unit_test(p99_counts),
        cmocka_unit_test(baseline_after_warmup),
        cmocka_unit_test(windows_of_whole_buckets),
        cmocka_unit_test(triggers_in_order),
        cmocka_unit_test(p99_after_the_trigger_counts_new_requests),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
