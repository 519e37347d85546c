/*
 * In flight, drained (issue 32, part 2): `[run] drain = true` stops the
 * arrivals at `duration` and runs on until every request has an outcome,
 * for at most `drain_limit` more, so that the shares do not depend on
 * where the run was cut; the summary's shares (outcomes and in flight) add
 * up to 1; a run left with more than 1 % in flight says so.
 *
 * The claims use the `herd` built-in, whose requests wait out a 10 s outage
 * in exponential backoff without jitter: cut at 50 s, about 7 % of its
 * requests are still waiting (ok 93 %); cut at 60 s, almost none (ok
 * 99.97 %). Drained, both cuts give every request an outcome. Each claim is
 * checked over seeds 1..20 (CLAIM_NEED of them must hold); a run of herd
 * costs ~20 ms.
 */
#include "rs_test.h"

#include <math.h>
#include <string.h>

/* herd cut at `duration`, drained or not. */
static struct sim *herd(unsigned seed, const char *duration, bool drain)
{
    char d[48];
    snprintf(d, sizeof d, "run.duration=%s", duration);
    const char *extra[] = {d, drain ? "run.drain=true" : "run.drain=false"};
    return run_builtin("herd", seed, extra, 2);
}

/* The summary's share columns, read through the one table (summary.c):
 * their sum, and the in-flight share alone. */
static double shares_sum(const struct sim *s, double *in_flight_share)
{
    struct summary o;
    struct summary_cols cols;
    char err[256];
    output_summarise(s, 0.0, &o);
    assert_int_equal(summary_cols_init(&cols, sim_scenario(s), err, sizeof err), 0);
    double *row = calloc(cols.n, sizeof *row), sum = 0;
    assert_non_null(row);
    summary_row(&cols, s, &o, row);
    const char *shares[] = {"ok_share", "business_share", "exhausted_share", "failed_share",
                            "deadline_share", "throttled_share", "breaker_share", "in_flight_share"};
    for (size_t i = 0; i < sizeof shares / sizeof shares[0]; i++) {
        long c = summary_cols_find(&cols, shares[i]);
        assert_true(c >= 0);
        sum += row[c];
    }
    *in_flight_share = row[summary_cols_find(&cols, "in_flight_share")];
    free(row);
    summary_cols_fini(&cols);
    return sum;
}

static uint64_t ended(const struct sim *s)
{
    uint64_t n = 0;
    for (int o = 0; o < OUT_NOUTCOMES; o++)
        n += sim_metrics(s)->outcomes[o];
    return n;
}

/* Drained, every request of herd cut at 50 s has an outcome, the shares
 * add up to 1, the drain ends on a bucket boundary past the duration and
 * the time series reach it; undrained, the same cut leaves > 1 % in flight
 * (the shares still add up to 1, in flight among them). */
static void drained_outcomes_add_up(void **state)
{
    (void)state;
    unsigned drained = 0, cut = 0;
    for (unsigned seed = 1; seed <= CLAIM_SEEDS; seed++) {
        double inf;
        struct sim *s = herd(seed, "50s", true);
        const struct metrics *m = sim_metrics(s);
        assert_true(fabs(shares_sum(s, &inf) - 1.0) < 1e-12);
        rs_time end = sim_end(s), b = sim_scenario(s)->bucket;
        drained += sim_in_flight(s) == 0 && ended(s) == m->requests && inf == 0.0 && end > 50 * RS_S &&
                   end % b == 0 && m->nbuckets == (size_t)(end / b) && sim_drain_left(s) == 0;
        sim_destroy(s);
        s = herd(seed, "50s", false);
        assert_true(fabs(shares_sum(s, &inf) - 1.0) < 1e-12);
        cut += inf > 0.01 && sim_end(s) == 50 * RS_S && sim_metrics(s)->nbuckets == 5000;
        sim_destroy(s);
    }
    claim_require("herd cut at 50 s, drained", "every request has an outcome", drained);
    claim_require("herd cut at 50 s, not drained", "more than 1 % in flight", cut);
}

/* The ok share of herd cut at 50 s and at 60 s: within 0.2 % of each other
 * drained, more than 1 % apart undrained. */
static void share_does_not_depend_on_the_cut(void **state)
{
    (void)state;
    unsigned same = 0, apart = 0;
    for (unsigned seed = 1; seed <= CLAIM_SEEDS; seed++) {
        double share[2][2];
        for (int drain = 0; drain < 2; drain++)
            for (int k = 0; k < 2; k++) {
                struct sim *s = herd(seed, k ? "60s" : "50s", drain);
                share[drain][k] = ok_share(s);
                sim_destroy(s);
            }
        same += fabs(share[1][0] - share[1][1]) < 0.002;
        apart += fabs(share[0][0] - share[0][1]) > 0.01;
    }
    claim_require("herd's ok share, 50 s against 60 s, drained", "within 0.2 %", same);
    claim_require("herd's ok share, 50 s against 60 s, not drained", "more than 1 % apart", apart);
}

/* A phase that ends after the duration ends during the drain: herd cut at
 * 35 s, inside its 10 s outage, drained: the outage ends at 40 s and the
 * herd's requests, still in backoff, end ok (a phase that never ended
 * would exhaust them: ~1,000 of ~6,000 requests). */
static void phases_end_during_the_drain(void **state)
{
    (void)state;
    unsigned ok = 0;
    for (unsigned seed = 1; seed <= CLAIM_SEEDS; seed++) {
        struct sim *s = herd(seed, "35s", true);
        ok += sim_in_flight(s) == 0 && ok_share(s) > 0.99 && sim_end(s) > 40 * RS_S;
        sim_destroy(s);
    }
    claim_require("herd cut at 35 s, drained", "the outage ends at 40 s, ok > 99 %", ok);
}

/* Arrivals stop at the duration: no bucket past it offers a request, and
 * the buckets' offered requests are the run's; the outcomes recorded in
 * the drain's buckets complete the totals (no warm-up: every request
 * counts). */
static void arrivals_stop_and_the_drain_is_recorded(void **state)
{
    (void)state;
    struct sim *s = herd(3, "50s", true);
    const struct metrics *m = sim_metrics(s);
    uint64_t offered = 0, after = 0, outcomes = 0, late = 0;
    size_t first_after = (size_t)(50 * RS_S / m->bucket_ns);
    for (size_t i = 0; i < m->nbuckets; i++) {
        offered += m->b[i].offered;
        after += i >= first_after ? m->b[i].offered : 0;
        for (int o = 0; o < OUT_NOUTCOMES; o++) {
            outcomes += m->b[i].outcomes[o];
            late += i >= first_after ? m->b[i].outcomes[o] : 0;
        }
    }
    assert_int_equal(after, 0);
    assert_int_equal(offered, m->requests);
    assert_int_equal(outcomes, m->requests);
    assert_true(late > 100); /* herd's backlog: ~500 requests end in the drain */
    sim_destroy(s);
}

/* The state footprint counts the drain's buckets, which the run allocates
 * up front: herd's 120 s at 10 ms are 12,000 buckets, drained (600 s
 * more) 72,000, and the time series part grows by exactly that factor. */
static void footprint_counts_the_drain(void **state)
{
    (void)state;
    double part[2][SIM_FOOTPRINT_PARTS];
    int ts = -1;
    for (int i = 0; i < SIM_FOOTPRINT_PARTS; i++)
        if (strcmp(sim_footprint_part_name(i), "time series") == 0)
            ts = i;
    assert_true(ts >= 0);
    for (int drain = 0; drain < 2; drain++) {
        struct scenario sc;
        const char *sets[] = {drain ? "run.drain=true" : "run.drain=false"};
        load_or_fail(&sc, scenario_builtin_text("herd"), sets, 1);
        sim_footprint(&sc, part[drain]);
        assert_int_equal(sim_horizon(&sc), (drain ? 720 : 120) * RS_S);
    }
    assert_true(part[0][ts] > 0);
    assert_true(fabs(part[1][ts] / part[0][ts] - 6.0) < 1e-12);
    struct sim *s = herd(1, "60s", true);
    assert_int_equal(sim_metrics(s)->nalloc, 66000);
    sim_destroy(s);
}

static char *summary_text(const struct sim *s);

/* Every kind of event goes on in a drain but the arrivals: cancellations
 * (cancel, cut at 65 s inside its spike, where timeouts cancel queued and
 * running work) and cache expiries (cache-stampede cut at 45 s); each run
 * drains to no request in flight, its outcomes adding up. */
static void every_event_but_arrivals_in_the_drain(void **state)
{
    (void)state;
    static const struct {
        const char *name, *duration;
    } runs[] = {{"cancel", "run.duration=65s"}, {"cache-stampede", "run.duration=45s"}};
    for (size_t i = 0; i < sizeof runs / sizeof runs[0]; i++) {
        const char *extra[] = {runs[i].duration, "run.drain=true"};
        struct sim *s = run_builtin(runs[i].name, 1, extra, 2);
        assert_int_equal(sim_in_flight(s), 0);
        assert_int_equal(ended(s), sim_metrics(s)->requests);
        assert_true(sim_end(s) >= sim_scenario(s)->duration);
        sim_destroy(s);
    }
}

/* The instant of the duration: uniform arrivals every 500 ms, each served
 * in exactly 500 ms. The arrival at 10 s, the duration, is the drain's: it
 * is not dispatched, so drained and undrained runs have the same requests;
 * the one that arrived at 9.5 s ends at exactly 10 s, in bucket [10 s,
 * 11 s), where the drained run ends. */
static void the_duration_instant(void **state)
{
    (void)state;
    static const char text[] = "[run]\nname = instant\nduration = 10s\n"
                               "[load]\nrate = 2/s\narrival = uniform\n[server]\nworkers = 4\nservice = const(500ms)\n"
                               "[layer app]\nattempts = 1\n";
    const char *drain[] = {"run.drain=true"};
    struct sim *a = run_text(text, NULL, 0), *b = run_text(text, drain, 1);
    const struct metrics *m = sim_metrics(b);
    assert_int_equal(sim_metrics(a)->requests, 19); /* 0.5 s, 1 s, ..., 9.5 s */
    assert_int_equal(m->requests, 19);
    assert_int_equal(sim_in_flight(a), 1);
    assert_int_equal(sim_in_flight(b), 0);
    assert_int_equal(sim_end(b), 11 * RS_S);
    assert_int_equal(m->nbuckets, 11);
    assert_int_equal(m->b[10].outcomes[OUT_OK], 1);
    assert_int_equal(m->b[10].offered, 0);
    sim_destroy(a);
    sim_destroy(b);
}

/* A drained run stopped in its drain (the stop flag, set once the
 * progress callback sees the duration passed) is incomplete: it ends at
 * the end of the bucket it reached, its time series hold every outcome
 * recorded, and it says nothing of a drain reaching its limit. */
static volatile sig_atomic_t stop_flag;
static void stop_in_drain(void *user, rs_time now, rs_time duration, uint64_t events)
{
    (void)user, (void)events;
    if (now >= duration)
        stop_flag = 1;
}

static void interrupted_in_the_drain(void **state)
{
    (void)state;
    const char *sets[] = {"run.seed=1", "run.duration=35s", "run.drain=true"};
    struct scenario sc;
    char err[512];
    load_or_fail(&sc, scenario_builtin_text("herd"), sets, 3);
    struct sim *s = sim_create(&sc, 0, err, sizeof err);
    assert_non_null(s);
    stop_flag = 0;
    sim_set_stop(s, &stop_flag);
    assert_int_equal(sim_run(s, stop_in_drain, NULL, err, sizeof err), 0);
    const struct metrics *m = sim_metrics(s);
    rs_time end = sim_end(s);
    assert_false(sim_complete(s));
    assert_true(sim_in_flight(s) > 0);
    assert_int_equal(sim_drain_left(s), 0);
    assert_true(end > 35 * RS_S && end < sim_horizon(&sc) && end % sc.bucket == 0);
    assert_true(m->last_t < end && m->last_t >= end - sc.bucket); /* the bucket it reached */
    assert_int_equal(m->nbuckets, (size_t)(end / sc.bucket));
    uint64_t outcomes = 0, total = 0;
    for (size_t i = 0; i < m->nbuckets; i++)
        for (int o = 0; o < OUT_NOUTCOMES; o++)
            outcomes += m->b[i].outcomes[o];
    for (int o = 0; o < OUT_NOUTCOMES; o++)
        total += m->outcomes[o];
    assert_int_equal(outcomes, total);
    char *txt = summary_text(s);
    assert_null(strstr(txt, "drained:"));
    assert_null(strstr(txt, "the drain reached"));
    free(txt);
    sim_destroy(s);
}

static char *summary_text(const struct sim *s)
{
    struct summary o;
    output_summarise(s, 0.0, &o);
    FILE *f = tmpfile();
    assert_non_null(f);
    output_print_summary(f, s, &o, NULL);
    long len = ftell(f);
    char *buf = calloc((size_t)len + 1, 1);
    assert_non_null(buf);
    rewind(f);
    assert_int_equal(fread(buf, 1, (size_t)len, f), (size_t)len);
    fclose(f);
    return buf;
}

/* A hung outage to the end with no timeout never ends: the drain stops at
 * drain_limit, on its bound exactly, and says how many requests it left. */
static void drain_limit_stops_a_hang(void **state)
{
    (void)state;
    static const char text[] = "[run]\nname = hang\nduration = 10s\ndrain = true\ndrain_limit = 20s\n"
                               "[load]\nrate = 100/s\n[server]\nworkers = 4\nservice = exp(10ms)\n"
                               "[phase stuck]\nstart = 5s\nend = 1000s\noutage = hang\n"
                               "[layer app]\nattempts = 3\ntimeout = none\n";
    struct sim *s = run_text(text, NULL, 0);
    assert_true(sim_complete(s));
    assert_int_equal(sim_end(s), 30 * RS_S);
    assert_int_equal(sim_metrics(s)->nbuckets, 30);
    uint64_t left = sim_drain_left(s);
    assert_true(left > 400); /* ~100/s hung from 5 s to 10 s */
    assert_int_equal(left, sim_in_flight(s)); /* no warm-up: every request counts */
    char *txt = summary_text(s), want[200];
    snprintf(want, sizeof want, "the drain reached drain_limit = 20s with %llu requests still in flight\n",
             (unsigned long long)left);
    assert_non_null(strstr(txt, want));
    assert_non_null(strstr(txt, "a longer drain_limit (or timeouts that end them) gives them outcomes"));
    free(txt);
    sim_destroy(s);
}

/* The summary's note: above 1 % in flight (herd cut at 50 s: ~7 %) it says
 * so and suggests drain; at 0.03 % (cut at 60 s) it does not. */
static void more_than_one_percent_in_flight_says_so(void **state)
{
    (void)state;
    struct sim *s = herd(21, "50s", false);
    char *txt = summary_text(s);
    assert_non_null(strstr(txt, "of the requests were still in flight at the end"));
    assert_non_null(strstr(txt, "[run] drain = true (or a longer run) gives them outcomes"));
    free(txt);
    sim_destroy(s);
    s = herd(21, "60s", false);
    double inf;
    shares_sum(s, &inf);
    assert_true(inf > 0 && inf < 0.01);
    txt = summary_text(s);
    assert_null(strstr(txt, "still in flight"));
    free(txt);
    sim_destroy(s);
}

/* With nothing in flight at the duration (the arrivals stop at 8 s), a
 * drained run ends at the duration and equals the undrained run: the
 * same summary and time series. And a drained run is deterministic. */
static void nothing_left_changes_nothing(void **state)
{
    (void)state;
    static const char text[] = "[run]\nname = quiet\nduration = 10s\nbucket = 100ms\n"
                               "[load]\nrate = 200/s\n[server]\nworkers = 4\nservice = exp(10ms)\n"
                               "[phase stop]\nstart = 8s\nend = 10s\nrate = x0\n"
                               "[layer app]\nattempts = 3\ntimeout = 50ms\nbackoff = full\nbase = 10ms\n";
    const char *drain[] = {"run.drain=true"};
    struct sim *a = run_text(text, NULL, 0), *b = run_text(text, drain, 1);
    assert_int_equal(sim_end(b), 10 * RS_S);
    struct summary sa, sb;
    output_summarise(a, 0.0, &sa);
    output_summarise(b, 0.0, &sb);
    char *x = rs_summary_csv(a, &sa, true), *y = rs_summary_csv(b, &sb, true);
    assert_string_equal(x, y);
    free(x), free(y);
    assert_int_equal(sim_metrics(a)->nbuckets, sim_metrics(b)->nbuckets);
    assert_memory_equal(sim_metrics(a)->b, sim_metrics(b)->b, sim_metrics(a)->nbuckets * sizeof(struct bucket));
    sim_destroy(a);
    sim_destroy(b);
    /* same seed, same bytes: herd drained twice */
    a = herd(5, "50s", true), b = herd(5, "50s", true);
    output_summarise(a, 0.0, &sa);
    output_summarise(b, 0.0, &sb);
    x = rs_summary_csv(a, &sa, true), y = rs_summary_csv(b, &sb, true);
    assert_string_equal(x, y);
    free(x), free(y);
    assert_int_equal(sim_metrics(a)->nbuckets, sim_metrics(b)->nbuckets);
    assert_memory_equal(sim_metrics(a)->b, sim_metrics(b)->b, sim_metrics(a)->nbuckets * sizeof(struct bucket));
    sim_destroy(a);
    sim_destroy(b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(drained_outcomes_add_up),
        cmocka_unit_test(share_does_not_depend_on_the_cut),
        cmocka_unit_test(phases_end_during_the_drain),
        cmocka_unit_test(arrivals_stop_and_the_drain_is_recorded),
        cmocka_unit_test(footprint_counts_the_drain),
        cmocka_unit_test(the_duration_instant),
        cmocka_unit_test(every_event_but_arrivals_in_the_drain),
        cmocka_unit_test(interrupted_in_the_drain),
        cmocka_unit_test(drain_limit_stops_a_hang),
        cmocka_unit_test(more_than_one_percent_in_flight_says_so),
        cmocka_unit_test(nothing_left_changes_nothing),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
