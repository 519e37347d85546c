/*
 * Traffic through the whole simulator: load shapes (ramp, sine), replayed
 * traces, caches and load-dependent latency, each against what theory or
 * the input says it must be.
 *
 * - ramp() and sine(): the arrivals in each 1 s bucket are Poisson with
 *   mean the integral of the rate over the bucket (thinning is exact), so
 *   the counts' chi-square against those means must be plausible
 *   (p > 1e-4); the same counts against a stepwise rate (the ramp in 10 s
 *   steps; the sine held for each second) must be refused, so the test has
 *   the power to see steps where a slope should be.
 * - a trace of rates: likewise against the piecewise-constant rates; a
 *   trace of timestamps: the same count and, bucket by 1 ms bucket, the
 *   same instants.
 * - caches: the hit ratio of a TTL cache (no capacity limit, Poisson
 *   requests, uniform keys) within 2 % of λT/(1 + λT), and of an LRU cache
 *   under Zipf(0.8) popularity within 2 % of Che's approximation, both
 *   through services; coalesce never has two misses in flight for one key
 *   (and without it there are, so the check can fail).
 * - degrade_shape = exponential: a herd's last execution takes exactly
 *   service × e^(degrade · others / workers).
 */
#define _GNU_SOURCE /* mkdtemp, M_PI */
#include "rs_theory.h"

#include <gsl/gsl_cdf.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cache.h"
#include "rs_scratch.h"

/* Offered arrivals per bucket (all buckets of 1 s unless the scenario says). */
static double offered(const struct sim *s, size_t b)
{
    return (double)sim_metrics(s)->b[b].offered;
}

/* The chi-square p-value of the counts of buckets [b0, b1) against
 * Poisson means mu(b) (variance = mean). */
static double poisson_p(const struct sim *s, size_t b0, size_t b1, double (*mu)(size_t, const void *),
                        const void *ctx)
{
    double chi = 0;
    for (size_t b = b0; b < b1; b++) {
        double m = mu(b, ctx), d = offered(s, b) - m;
        chi += d * d / m;
    }
    return gsl_cdf_chisq_Q(chi, (double)(b1 - b0));
}

/* ---- ramp ---- */

/* 100/s, then ramp(100/s, 900/s) over [20 s, 120 s), then 900/s no more
 * (the phase ends: back to 100/s). The mean of bucket [b, b+1) is the
 * integral of the rate over it. */
static double ramp_mean(size_t b, const void *ctx)
{
    (void)ctx;
    double t0 = (double)b, t1 = t0 + 1;
    if (t1 <= 20 || t0 >= 120)
        return 100;
    /* rate(t) = 100 + 8 (t − 20) on [20, 120) */
    return 100 + 8 * ((t0 + t1) / 2 - 20);
}

/* The stepwise rate of the same ramp in 10 s steps (how collapse-ramp
 * was written before ramp() existed). */
static double ramp_step_mean(size_t b, const void *ctx)
{
    (void)ctx;
    double t0 = (double)b;
    if (t0 < 20 || t0 >= 120)
        return 100;
    return 100 + 8 * 10 * floor((t0 - 20) / 10);
}

static const char ramp_text[] = "[run]\nduration = 140s\nseed = 3\n"
                                "[load]\nrate = 100/s\n"
                                "[server]\nworkers = 100000\nservice = const(1ms)\n"
                                "[phase up]\nstart = 20s\nend = 120s\nrate = ramp(100/s, 900/s)\n";

static void ramp_counts(void **state)
{
    (void)state;
    for (unsigned seed = 1; seed <= 3; seed++) {
        char set[32];
        snprintf(set, sizeof set, "run.seed=%u", seed);
        const char *sets[] = {set};
        struct scenario sc;
        load_or_fail(&sc, ramp_text, sets, 1);
        struct sim *s = run_or_fail(&sc, 0);
        double p = poisson_p(s, 0, 140, ramp_mean, NULL);
        double pstep = poisson_p(s, 20, 120, ramp_step_mean, NULL);
        print_message("ramp seed %u: chi-square p = %.3f; against 10 s steps p = %.2g\n", seed, p,
                      pstep);
        assert_true(p > 1e-4);
        assert_true(pstep < 1e-4);
        sim_destroy(s);
    }
}

/* A ramp of factors multiplies the base rate; with a sine shape on top,
 * the bound of the thinning is the product of the larger ends. */
static void ramp_of_factors_with_shape(void **state)
{
    (void)state;
    static const char text[] = "[run]\nduration = 120s\nseed = 5\n"
                               "[load]\nrate = 200/s\nshape = sine(0.5, 40s)\n"
                               "[server]\nworkers = 100000\nservice = const(1ms)\n"
                               "[phase p]\nstart = 0s\nend = 120s\nrate = ramp(x1, x3)\n";
    struct scenario sc;
    load_or_fail(&sc, text, NULL, 0);
    struct sim *s = run_or_fail(&sc, 0);
    /* rate(t) = 200 (1 + t/60) (1 + 0.5 sin(2πt/40)); means by Simpson's
     * rule over each bucket (exact enough: the error is < 1e-6 of a mean) */
    double chi = 0, total = 0, expect = 0;
    for (size_t b = 0; b < 120; b++) {
        double m = 0;
        for (int k = 0; k <= 100; k++) {
            double t = (double)b + k / 100.0, w = (k == 0 || k == 100) ? 1 : (k % 2 ? 4 : 2);
            m += w * 200 * (1 + t / 60) * (1 + 0.5 * sin(2 * M_PI * t / 40));
        }
        m /= 300;
        chi += (offered(s, b) - m) * (offered(s, b) - m) / m;
        total += offered(s, b);
        expect += m;
    }
    double p = gsl_cdf_chisq_Q(chi, 120);
    print_message("ramp(x1, x3) x sine(0.5, 40s): %.0f arrivals for %.0f expected, p = %.3f\n",
                  total, expect, p);
    assert_true(p > 1e-4);
    sim_destroy(s);
}

/* ---- sine ---- */

static double sine_mean(size_t b, const void *ctx)
{
    (void)ctx;
    /* 500 (1 + 0.8 sin(2πt/20)) integrated over [b, b+1) */
    double w = 2 * M_PI / 20;
    return 500 * (1 + 0.8 * (cos(w * (double)b) - cos(w * (double)(b + 1))) / w);
}

static double sine_step_mean(size_t b, const void *ctx)
{
    (void)ctx;
    return 500 * (1 + 0.8 * sin(2 * M_PI * (double)b / 20));
}

static void sine_counts(void **state)
{
    (void)state;
    static const char text[] = "[run]\nduration = 200s\nseed = 11\n"
                               "[load]\nrate = 500/s\nshape = sine(0.8, 20s)\n"
                               "[server]\nworkers = 100000\nservice = const(1ms)\n";
    struct scenario sc;
    load_or_fail(&sc, text, NULL, 0);
    struct sim *s = run_or_fail(&sc, 0);
    double p = poisson_p(s, 0, 200, sine_mean, NULL), pstep = poisson_p(s, 0, 200, sine_step_mean, NULL);
    print_message("sine: chi-square p = %.3f; against 1 s steps p = %.2g\n", p, pstep);
    assert_true(p > 1e-4);
    assert_true(pstep < 1e-4);
    sim_destroy(s);
}

/* ---- traces ---- */

/* Writes text into a new file in a new directory of its own. */
static void temp_file(struct scratch *scr, const char *name, const char *text)
{
    assert_int_equal(scratch_make(scr, "traffic", name), 0);
    scratch_write(scr, text, strlen(text));
}

static double rates_mean(size_t b, const void *ctx)
{
    (void)ctx;
    /* the trace below: 0 before 5 s, then 300/s, 50/s from 30.5 s, 700/s from 60 s */
    double t0 = (double)b, t1 = t0 + 1, m = 0;
    static const double at[] = {5, 30.5, 60, 1e9}, rate[] = {300, 50, 700};
    for (int i = 0; i < 3; i++) {
        double lo = fmax(t0, at[i]), hi = fmin(t1, at[i + 1]);
        if (hi > lo)
            m += rate[i] * (hi - lo);
    }
    return m;
}

static void trace_of_rates(void **state)
{
    (void)state;
    char text[4600];
    struct scratch scr;
    temp_file(&scr, "rates.csv",
                                 "# a test trace\nt,rate\n5,300\n30.5,50\n60,700\n");
    snprintf(text, sizeof text,
             "[run]\nduration = 90s\nseed = 2\n[load]\ntrace = %s\n"
             "[server]\nworkers = 100000\nservice = const(1ms)\n", scr.path);
    struct scenario sc;
    load_or_fail(&sc, text, NULL, 0);
    assert_int_equal(sc.trace_format, TRACE_FORMAT_RATES);
    struct sim *s = run_or_fail(&sc, 0);
    for (size_t b = 0; b < 5; b++)
        assert_true(offered(s, b) == 0); /* none before the first row */
    double p = poisson_p(s, 5, 90, rates_mean, NULL);
    print_message("trace of rates: chi-square p = %.3f\n", p);
    assert_true(p > 1e-4);
    sim_destroy(s);
    scratch_remove(&scr);
}

/* 3,000 timestamps at random microseconds over 3 s, with repeats: the run
 * replays exactly that many, each in its own 1 ms bucket. */
static void trace_of_timestamps(void **state)
{
    (void)state;
    enum { N = 3000, MS = 3000 };
    static unsigned per_ms[MS];
    static char csv[N * 16 + 8];
    memset(per_ms, 0, sizeof per_ms);
    size_t used = (size_t)snprintf(csv, sizeof csv, "t\n");
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 7);
    unsigned long us = 0;
    for (int i = 0; i < N; i++) {
        if (i == 0 || gsl_rng_uniform(r) > 0.1) /* one in ten repeats the last instant */
            us += 1 + gsl_rng_uniform_int(r, 1999);
        if (us >= MS * 1000UL)
            break;
        per_ms[us / 1000]++;
        used += (size_t)snprintf(csv + used, sizeof csv - used, "%lu.%06lu\n", us / 1000000,
                                 us % 1000000);
    }
    gsl_rng_free(r);
    char text[4600];
    struct scratch scr;
    temp_file(&scr, "times.csv", csv);
    snprintf(text, sizeof text,
             "[run]\nduration = 3s\nbucket = 1ms\n[load]\ntrace = %s\n"
             "[server]\nworkers = 100000\nservice = const(1us)\n", scr.path);
    struct scenario sc;
    load_or_fail(&sc, text, NULL, 0);
    assert_int_equal(sc.trace_format, TRACE_FORMAT_TIMES);
    struct sim *s = run_or_fail(&sc, 0);
    unsigned total = 0;
    for (size_t b = 0; b < MS; b++) {
        assert_int_equal((unsigned)offered(s, b), per_ms[b]);
        total += per_ms[b];
    }
    assert_int_equal(sim_metrics(s)->requests, total);
    print_message("trace of %u timestamps replayed exactly\n", total);
    sim_destroy(s);
    scratch_remove(&scr);
}

/* A trace of one row: its rate to the end of the run. (Review: the first
 * reschedule cancelled a zeroed handle that named the next arrival, and a
 * trace whose rate never changed again lost all its arrivals.) And a phase
 * at 0 s on a trace loses nothing. 10 s at 500/s: 5,000 ± 71 (1 s.d.). */
static void trace_of_one_row(void **state)
{
    (void)state;
    char text[4600];
    struct scratch scr;
    temp_file(&scr, "one.csv", "t,rate\n0,500\n");
    snprintf(text, sizeof text,
             "[run]\nduration = 10s\n[load]\ntrace = %s\n"
             "[server]\nworkers = 100000\nservice = const(1ms)\n", scr.path);
    const char *phase[] = {"phase.p.start=0s", "phase.p.end=5s", "phase.p.rate=x1"};
    for (size_t n = 0; n <= 3; n += 3) {
        struct scenario sc;
        load_or_fail(&sc, text, phase, n);
        struct sim *s = run_or_fail(&sc, 0);
        uint64_t got = sim_metrics(s)->requests;
        print_message("one row at 500/s for 10 s%s: %llu requests\n", n ? ", a phase at 0 s" : "",
                      (unsigned long long)got);
        assert_true(got > 4600 && got < 5400);
        assert_true(offered(s, 0) > 400);
        sim_destroy(s);
    }
    scratch_remove(&scr);
}

/* Simultaneous timestamps are arrivals, not a model stuck in time: the
 * check counts the most rows at one instant, and the run's guard against
 * time standing still allows for them. 1,100,000 at one instant make
 * 2,200,000 events there (an arrival and a service completion each), past
 * the guard's 2,000,000 + 64 per client without that allowance. */
static void trace_of_a_burst(void **state)
{
    (void)state;
    enum { BURST = 1100000 };
    static char csv[BURST * 4 + 32];
    size_t used = (size_t)snprintf(csv, sizeof csv, "t\n0.5\n");
    for (int i = 0; i < BURST; i++)
        used += (size_t)snprintf(csv + used, sizeof csv - used, "1\n");
    char text[4600];
    struct scratch scr;
    temp_file(&scr, "burst.csv", csv);
    snprintf(text, sizeof text,
             "[run]\nduration = 3s\n[load]\ntrace = %s\nclients = 1\n"
             "[server]\nworkers = 100000\nservice = const(0)\n[layer app]\nattempts = 100\n"
             "timeout = 1s\n", scr.path);
    struct scenario sc;
    load_or_fail(&sc, text, NULL, 0);
    assert_int_equal(sc.trace_burst, BURST);
    struct sim *s = run_or_fail(&sc, 0);
    assert_int_equal(sim_metrics(s)->requests, BURST + 1);
    sim_destroy(s);
    scratch_remove(&scr);
}

/* ---- caches through services ---- */

/* TTL cache, no capacity limit, uniform keys: per key the requests are
 * Poisson of rate λ = rate / keys, and after each miss (filled at once: the
 * service takes no time) the next T seconds are hits: λT / (1 + λT). 200 s
 * at 1000/s after a 20 s warmup is 200,000 lookups; the ratio's standard
 * error is about 0.001 (0.15 %), so 2 % is over ten of them. */
static void ttl_hit_ratio(void **state)
{
    (void)state;
    static const char text[] = "[run]\nduration = 220s\nwarmup = 20s\nseed = 4\n"
                               "[load]\nrate = 1000/s\nkeys = 100\n"
                               "[server]\nworkers = 100000\nservice = const(0)\ncache = c\n"
                               "[cache c]\nttl = 200ms\n";
    struct scenario sc;
    load_or_fail(&sc, text, NULL, 0);
    struct sim *s = run_or_fail(&sc, 0);
    double lt = 10.0 * 0.2, want = lt / (1 + lt), got = sim_cache_hit_ratio(s, 0);
    print_message("TTL: hit ratio %.5f, λT/(1+λT) = %.5f (%+.2f%%)\n", got, want,
                  100 * (got - want) / want);
    assert_true(fabs(got - want) < 0.02 * want);
    sim_destroy(s);
}

/* LRU of 1,000 entries over 10,000 keys of Zipf(0.8) popularity: Che's
 * approximation (within 0.2 % of the cache module alone: test_cache.c). The
 * run sees 10^6 lookups after 10^5 of warmup; standard error ~0.0005. */
static void lru_hit_ratio(void **state)
{
    (void)state;
    static const char text[] = "[run]\nduration = 110s\nwarmup = 10s\nseed = 6\n"
                               "[load]\nrate = 10000/s\nkeys = 10000\npopularity = zipf(0.8)\n"
                               "[server]\nworkers = 100000\nservice = const(0)\ncache = c\n"
                               "[cache c]\ncapacity = 1000\n";
    struct scenario sc;
    load_or_fail(&sc, text, NULL, 0);
    struct sim *s = run_or_fail(&sc, 0);
    struct keygen k;
    assert_int_equal(keygen_init(&k, 10000, 0.8), 0);
    static double p[10000];
    for (uint32_t i = 0; i < 10000; i++)
        p[i] = keygen_prob(&k, i);
    keygen_fini(&k);
    double tc, want = che_hit_ratio(p, 10000, 1000, &tc), got = sim_cache_hit_ratio(s, 0);
    print_message("LRU: hit ratio %.5f, Che %.5f (%+.2f%%)\n", got, want, 100 * (got - want) / want);
    assert_true(fabs(got - want) < 0.02 * want);
    sim_destroy(s);
}

/* A slow backend behind a cache of hot keys: many requests for one key
 * arrive while its miss is loading. With coalesce at most one miss per key
 * is ever in flight, and the rest are counted as coalesced; without it,
 * there are many at once. Every joined execution answers (the run's
 * conservation checks pass) and the hit ratio is the same order. */
static void coalesce_single_flight(void **state)
{
    (void)state;
    static const char text[] = "[run]\nduration = 60s\nseed = 8\n"
                               "[load]\nrate = 2000/s\nkeys = 1000\npopularity = zipf(1.2)\n"
                               "[service api]\nworkers = 100000\nservice = const(0)\ncache = c\ncalls = db\n"
                               "[service db]\nworkers = 50\nservice = exp(200ms)\n"
                               "[cache c]\nttl = 2s\ncoalesce = true\n";
    const char *off[] = {"cache.c.coalesce=false"};
    for (int with = 1; with >= 0; with--) {
        struct scenario sc;
        load_or_fail(&sc, text, off, with ? 0 : 1);
        struct sim *s = run_or_fail(&sc, 0);
        uint64_t coalesced = 0;
        struct sim_cache_row row;
        for (size_t b = 0; sim_cache_row(s, 0, b, &row); b++)
            coalesced += row.n.coalesced;
        print_message("coalesce = %s: most misses in flight for one key %u, %llu coalesced\n",
                      with ? "true" : "false", sim_cache_max_loading(s, 0),
                      (unsigned long long)coalesced);
        if (with) {
            assert_int_equal(sim_cache_max_loading(s, 0), 1);
            assert_true(coalesced > 1000);
        } else {
            assert_true(sim_cache_max_loading(s, 0) > 5);
            assert_int_equal(coalesced, 0);
        }
        sim_destroy(s);
    }
}

/* Phases on a cache: a capacity factor evicts the least recently used
 * down to it while the phase lasts, and a flush empties the cache at the
 * phase's start. 100 keys at 2,000/s fill the 100 entries within a
 * second, and then nothing misses. */
static void cache_phases(void **state)
{
    (void)state;
    static const char text[] = "[run]\nduration = 40s\n"
                               "[load]\nrate = 2000/s\nkeys = 100\n"
                               "[server]\nworkers = 1000\nservice = const(1ms)\ncache = c\n"
                               "[cache c]\ncapacity = 100\n"
                               "[phase half]\nstart = 10s\nend = 20s\ntarget = c\ncapacity = 0.5\n"
                               "[phase gone]\nstart = 30s\nend = 31s\nflush = c\n";
    struct scenario sc;
    load_or_fail(&sc, text, NULL, 0);
    struct sim *s = run_or_fail(&sc, 0);
    struct sim_cache_row r;
    assert_true(sim_cache_row(s, 0, 9, &r));
    assert_int_equal(r.entries, 100);
    assert_true(r.n.misses == 0);
    assert_true(sim_cache_row(s, 0, 10, &r));
    assert_true(r.n.evictions >= 50); /* 50 at the phase's start, then LRU churn */
    assert_true(sim_cache_row(s, 0, 15, &r));
    assert_int_equal(r.entries, 50);
    assert_true(r.n.hits > 800 && r.n.hits < 1200); /* half the keys are in */
    assert_true(sim_cache_row(s, 0, 21, &r));
    assert_int_equal(r.entries, 100);
    assert_true(sim_cache_row(s, 0, 29, &r));
    assert_true(r.n.misses == 0);
    assert_true(sim_cache_row(s, 0, 30, &r));
    print_message("misses in the flush's second: %llu\n", (unsigned long long)r.n.misses);
    /* the flush: every key misses once more (a few twice, within a 1 ms load) */
    assert_true(r.n.misses >= 100 && r.n.misses < 120);
    assert_int_equal(r.entries, 100);
    sim_destroy(s);
}

/* The cache's totals over the run. */
static struct cache_counts cache_totals(const struct sim *s)
{
    struct cache_counts t = {0};
    struct sim_cache_row row;
    for (size_t b = 0; sim_cache_row(s, 0, b, &row); b++) {
        t.lookups += row.n.lookups;
        t.hits += row.n.hits;
        t.misses += row.n.misses;
    }
    return t;
}

/* A miss fills the cache only when its execution answers ok. One key,
 * nine requests a second apart: answering ok, the first misses and fills,
 * the other eight hit. Answering business, or 503, or 500, nothing is
 * filled and all nine miss (and a 503 or 500 is not retried: one attempt). */
static void cache_fills_only_on_ok(void **state)
{
    (void)state;
    static const char text[] = "[run]\nduration = 30s\n"
                               "[load]\narrival = uniform\nrate = 1/s\nkeys = 1\n"
                               "[phase quiet]\nstart = 9500ms\nend = 30s\nrate = x0\n"
                               "[server]\nworkers = 1\nservice = const(1ms)\ncache = c\n"
                               "[cache c]\n";
    struct sim *s = run_text(text, NULL, 0);
    struct cache_counts t = cache_totals(s);
    assert_true(sim_metrics(s)->outcomes[OUT_OK] == 9);
    assert_true(t.lookups == 9 && t.misses == 1 && t.hits == 8);
    sim_destroy(s);
    const char *answers[] = {"server.business=1", "server.error_503=1", "server.error_500=1"};
    for (size_t i = 0; i < 3; i++) {
        s = run_text(text, &answers[i], 1);
        t = cache_totals(s);
        if (!(sim_metrics(s)->outcomes[OUT_OK] == 0 && t.lookups == 9 && t.misses == 9 && t.hits == 0))
            fail_msg("%s: %llu lookups, %llu misses, %llu hits", answers[i],
                     (unsigned long long)t.lookups, (unsigned long long)t.misses,
                     (unsigned long long)t.hits);
        sim_destroy(s);
    }
}

/* A hit does the cache's `hit` work and answers ok, drawing no injected
 * error. One key, nine requests a second apart, service 1 ms, hit 5 ms:
 * the first misses (1 ms), eight hit (5 ms each), 41 ms in all. With
 * business = 0.5 over 200 requests, every miss before the first ok
 * answers business and fills nothing; after it, only hits, all ok: so
 * business = misses − 1 exactly, whatever the draws. */
static void hits_take_their_time_and_draw_nothing(void **state)
{
    (void)state;
    static const char text[] = "[run]\nduration = 300s\n"
                               "[load]\narrival = uniform\nrate = 1/s\nkeys = 1\n"
                               "[phase quiet]\nstart = 9500ms\nend = 300s\nrate = x0\n"
                               "[server]\nworkers = 1\nservice = const(1ms)\ncache = c\n"
                               "[cache c]\nhit = const(5ms)\n";
    struct sim *s = run_text(text, NULL, 0);
    const struct metrics *m = sim_metrics(s);
    assert_true(m->outcomes[OUT_OK] == 9);
    assert_true(m->lat_all.min == RS_MS && m->lat_all.max == 5 * RS_MS);
    assert_true(fabs(m->lat_all.sum - 41e6) < 1);
    sim_destroy(s);
    const char *biz[] = {"server.business=0.5", "phase.quiet.start=200500ms"};
    s = run_text(text, biz, 2);
    m = sim_metrics(s);
    struct cache_counts t = cache_totals(s);
    print_message("business = 0.5: %llu misses, %llu business of %llu\n",
                  (unsigned long long)t.misses, (unsigned long long)m->outcomes[OUT_BUSINESS],
                  (unsigned long long)m->requests);
    assert_true(m->requests == 200 && t.misses >= 1);
    assert_true(m->outcomes[OUT_BUSINESS] == t.misses - 1);
    assert_true(m->outcomes[OUT_OK] == 200 - (t.misses - 1));
    sim_destroy(s);
}

/* <cache>_hit_ratio is hits / lookups of requests after the warm-up,
 * counted from its instant on. The same nine requests (1 s … 9 s), one
 * key: the 1 s one misses, the others hit. A warm-up of 1 s still counts
 * the miss (8 of 9); one of 2 s leaves it out (8 of 8). */
static void hit_ratio_after_warmup(void **state)
{
    (void)state;
    static const char text[] = "[run]\nduration = 30s\n"
                               "[load]\narrival = uniform\nrate = 1/s\nkeys = 1\n"
                               "[phase quiet]\nstart = 9500ms\nend = 30s\nrate = x0\n"
                               "[server]\nworkers = 1\nservice = const(1ms)\ncache = c\n"
                               "[cache c]\n";
    const char *w1[] = {"run.warmup=1s"}, *w2[] = {"run.warmup=2s"};
    struct sim *s = run_text(text, NULL, 0);
    assert_true(fabs(sim_cache_hit_ratio(s, 0) - 8.0 / 9.0) < 1e-12);
    sim_destroy(s);
    s = run_text(text, w1, 1);
    assert_true(fabs(sim_cache_hit_ratio(s, 0) - 8.0 / 9.0) < 1e-12);
    sim_destroy(s);
    s = run_text(text, w2, 1);
    assert_true(sim_cache_hit_ratio(s, 0) == 1.0);
    sim_destroy(s);
}

/* Answers from the cache do no work: with idempotent = false, only
 * executions that missed are side effects. One key, no TTL, arrivals
 * every 10 ms: the first request misses (and fills the cache 1 ms later),
 * every later one hits. (With Poisson arrivals a second request may come
 * within that 1 ms and miss too: 1 in 10 seeds.) */
static void hits_are_not_side_effects(void **state)
{
    (void)state;
    static const char text[] = "[run]\nduration = 10s\n"
                               "[load]\nrate = 100/s\narrival = uniform\nkeys = 1\nidempotent = false\n"
                               "[server]\nworkers = 100\nservice = const(1ms)\ncache = c\n"
                               "[cache c]\n";
    struct scenario sc;
    load_or_fail(&sc, text, NULL, 0);
    struct sim *s = run_or_fail(&sc, 0);
    assert_true(sim_metrics(s)->requests > 500);
    assert_int_equal(sim_metrics(s)->side_effects, 1);
    sim_destroy(s);
}

/* ---- load-dependent latency ---- */

/* A herd of 10 at t = 0 on 10 workers, 100 ms each: the k-th to start (k
 * from 0) works beside k others, so the last takes 100 ms × e^(2 · 9/10)
 * exponential, or 100 ms × (1 + 2 · 9) linear: the longest latency. */
static void exponential_degradation(void **state)
{
    (void)state;
    static const char text[] = "[run]\nduration = 10s\n"
                               "[load]\nmodel = closed\nthink = const(1h)\nclients = 10\n"
                               "[herd]\nat = 0s\n"
                               "[server]\nworkers = 10\nservice = const(100ms)\ndegrade = 2\n"
                               "degrade_shape = exponential\n";
    const char *linear[] = {"server.degrade_shape=linear"};
    const double want[] = {0.1 * exp(1.8), 0.1 * 19};
    for (int i = 0; i < 2; i++) {
        struct scenario sc;
        load_or_fail(&sc, text, linear, (size_t)i);
        struct sim *s = run_or_fail(&sc, 0);
        struct summary o;
        output_summarise(s, 0.0, &o);
        print_message("%s: longest %.6f s, expected %.6f s\n", i ? "linear" : "exponential",
                      o.lat_max, want[i]);
        assert_true(fabs(o.lat_max - want[i]) < 1e-6 * want[i] + 2e-9);
        sim_destroy(s);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(ramp_counts),
        cmocka_unit_test(ramp_of_factors_with_shape),
        cmocka_unit_test(sine_counts),
        cmocka_unit_test(trace_of_rates),
        cmocka_unit_test(trace_of_timestamps),
        cmocka_unit_test(trace_of_one_row),
        cmocka_unit_test(trace_of_a_burst),
        cmocka_unit_test(hits_are_not_side_effects),
        cmocka_unit_test(cache_fills_only_on_ok),
        cmocka_unit_test(hit_ratio_after_warmup),
        cmocka_unit_test(hits_take_their_time_and_draw_nothing),
        cmocka_unit_test(cache_phases),
        cmocka_unit_test(ttl_hit_ratio),
        cmocka_unit_test(lru_hit_ratio),
        cmocka_unit_test(coalesce_single_flight),
        cmocka_unit_test(exponential_degradation),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
