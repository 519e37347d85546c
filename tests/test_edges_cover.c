/*
 * The lines of sim/model and sim/policy that the coverage run
 * (scripts/coverage.sh, issue 30) found no test reaching, each reached here
 * by the smallest test that pins its result: a policy driven directly with
 * literal inputs, or a small run compared with the same run done otherwise.
 */
#define _POSIX_C_SOURCE 200809L /* mkdtemp, in rs_scratch.h */
#include <gsl/gsl_rng.h>
#include <string.h>

#include "backoff.h"
#include "breaker.h"
#include "budget.h"
#include "errclass.h"
#include "metrics.h"
#include "rs_scratch.h"
#include "rs_test.h"
#include "simctx.h" /* s->prefetch, to switch the hints on in a small run */

/* backoff.c, urllib3: from the second retry on, base·2^(k−1) plus
 * U(0, jitter) seconds. With base 1 s and jitter 0.5 the third retry waits
 * 4 s plus half a second times the first uniform of the stream. */
static void urllib3_jitter_adds_a_uniform_share(void **state)
{
    (void)state;
    const struct backoff_kind *k = backoff_find("urllib3");
    assert_non_null(k);
    struct backoff_params p = k->defaults;
    p.base = RS_S;
    p.jitter = 0.5;
    struct backoff_state bs;
    backoff_state_init(&p, &bs);
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937), *twin = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 7);
    gsl_rng_set(twin, 7);
    rs_time d = k->next_delay(&p, &bs, 3, CLS_503, r);
    assert_true(d == units_from_ns(4e9 + gsl_rng_uniform(twin) * 0.5e9));
    assert_true(d > 4 * RS_S && d < 4 * RS_S + RS_S / 2);
    gsl_rng_free(r);
    gsl_rng_free(twin);
}

/* breaker.c, rate breaker with a time window: a call slower than
 * slow_call counts as slow, and the share of slow calls trips the breaker
 * on its own (failure_rate 1 cannot trip: no call fails). Of 2 calls (the
 * minimum), 1 slow is 50 %, the threshold; 2 fast ones do not trip. */
static bool two_results(rs_time second)
{
    const struct breaker_kind *k = breaker_find("rate");
    struct breaker_params p = k->defaults;
    p.window_calls = 0;
    p.window = 10 * RS_S;
    p.min_calls = 2;
    p.failure_rate = 1.0;
    p.slow_rate = 0.5;
    p.slow_call = RS_S;
    assert_true(breaker_needs_window(k, &p));
    struct window w;
    memset(&w, 0, sizeof w);
    struct breaker_state s;
    breaker_state_init(&s, &w);
    uint32_t gen;
    bool half;
    assert_true(breaker_admit(k, &p, &s, 0, &gen, &half));
    assert_false(breaker_result(k, &p, &s, NULL, RS_MS, gen, false, RS_MS));
    assert_true(breaker_admit(k, &p, &s, 2 * RS_MS, &gen, &half));
    bool opened = breaker_result(k, &p, &s, NULL, 2 * RS_S, gen, false, second);
    assert_true(opened == breaker_is_open(&s));
    return opened;
}

static void slow_calls_trip_a_time_window(void **state)
{
    (void)state;
    assert_true(two_results(2 * RS_S));
    assert_false(two_results(RS_S)); /* exactly slow_call is not slow */
}

/* breaker.c: with no breaker a result changes nothing and opens nothing. */
static void no_breaker_result_opens_nothing(void **state)
{
    (void)state;
    const struct breaker_kind *k = breaker_find("none");
    struct breaker_state s;
    breaker_state_init(&s, NULL);
    struct breaker_state before = s;
    for (int i = 0; i < 10; i++)
        assert_false(breaker_result(k, &k->defaults, &s, NULL, i * RS_S, 0, true, RS_S));
    assert_memory_equal(&s, &before, sizeof s);
}

/* budget.c: no budget, and aws-adaptive (which throttles before an attempt,
 * in budget_admit, not before a retry), allow every retry and charge
 * nothing; the level plotted without a budget is -1 (none). A bucket's
 * level is its tokens: 5 at the start with the default capacity of 5, 4
 * after a retry that costs 1. */
static void budgets_without_a_retry_charge(void **state)
{
    (void)state;
    const char *names[] = {"none", "aws-adaptive"};
    for (size_t i = 0; i < 2; i++) {
        const struct budget_kind *k = budget_find(names[i]);
        assert_non_null(k);
        struct budget_state s;
        memset(&s, 0, sizeof s);
        struct budget_call c = {0};
        for (int n = 0; n < 100; n++)
            assert_true(budget_allow_retry(k, &k->defaults, &s, &c, n * RS_MS, CLS_503));
        assert_true(s.tokens == 0 && c.last_cost == 0);
    }
    const struct budget_kind *none = budget_find("none");
    struct budget_state zero = {0};
    assert_true(budget_level(none, &none->defaults, &zero, 0) == -1.0);
    const struct budget_kind *k = budget_find("bucket");
    assert_true(k->defaults.capacity == 5 && k->defaults.cost == 1);
    struct budget_state s;
    budget_state_init(k, &k->defaults, &s, NULL);
    assert_true(budget_level(k, &k->defaults, &s, 0) == 5.0);
    struct budget_call c = {0};
    assert_true(budget_allow_retry(k, &k->defaults, &s, &c, 0, CLS_503));
    assert_true(budget_level(k, &k->defaults, &s, 0) == 4.0);
}

/* errclass.c: separators after the last name end the list. */
static void trailing_separators_end_a_class_list(void **state)
{
    (void)state;
    errclass_set a = 0, b = 0;
    char bad[32] = "";
    assert_true(errclass_parse_set("503, 429 ,\t", &a, bad, sizeof bad));
    assert_true(errclass_parse_set("503,429", &b, bad, sizeof bad));
    assert_true(a == b && errclass_in(a, CLS_503) && errclass_in(a, CLS_429));
    assert_false(errclass_in(a, CLS_500));
}

/* sim.c: destroying nothing is allowed (STYLE: destroy accepts NULL). */
static void destroy_accepts_null(void **state)
{
    (void)state;
    sim_destroy(NULL);
}

/* Runs text twice, without and with the prefetch hints, and compares. */
static void same_with_hints(const char *text, uint64_t least)
{
    struct scenario sc;
    load_or_fail(&sc, text, NULL, 0);
    struct sim *run[2];
    char err[512];
    for (int i = 0; i < 2; i++) {
        run[i] = trace_sim_create(&sc, 0, err, sizeof err);
        if (run[i] == NULL)
            fail_msg("sim_create: %s", err);
        assert_false(run[i]->prefetch); /* fewer than 65,536 clients */
        run[i]->prefetch = i == 1;
        if (sim_run(run[i], NULL, NULL, err, sizeof err) != 0)
            fail_msg("sim_run: %s", err);
    }
    const struct metrics *a = sim_metrics(run[0]), *b = sim_metrics(run[1]);
    assert_true(a->requests >= least && a->requests == b->requests);
    assert_true(a->events == b->events);
    assert_memory_equal(a->outcomes, b->outcomes, sizeof a->outcomes);
    assert_true(a->lat_all.min == b->lat_all.min && a->lat_all.max == b->lat_all.max);
    for (unsigned l = 0; l < sc.nlayers; l++) {
        assert_true(run[0]->layers.lrt[l].attempts == run[1]->layers.lrt[l].attempts);
        assert_true(run[0]->layers.lrt[l].transitions == run[1]->layers.lrt[l].transitions);
    }
    sim_destroy(run[0]);
    sim_destroy(run[1]);
}

/* sim.c, layer.c: the prefetch hints of runs of 65,536 clients or more
 * ("only hints: nothing changes"), switched on in small runs: an open loop
 * whose budget and breaker are each client's own, whose calls cross the
 * network (the messages' hints) and go on to a dependency; and a closed
 * loop (its clients' think timers) whose budget is shared (a state not
 * prefetched). Every count and latency is that of the run without hints. */
static void prefetch_hints_change_nothing(void **state)
{
    (void)state;
    same_with_hints(
        "[run]\nduration = 5s\n[load]\nclients = 50\narrival = poisson\nrate = 200/s\n"
        "[service api]\nworkers = 2\nservice = exp(8ms)\ncalls = db\n"
        "[service db]\nworkers = 1\nservice = exp(3ms)\n"
        "[layer app]\nfrom = client\nto = api\nattempts = 3\ntimeout = 30ms\n"
        "request_latency = const(1ms)\nresponse_latency = const(1ms)\n"
        "budget = bucket\nbudget_scope = client\nbreaker = consecutive\nbreaker_scope = client\n",
        500);
    same_with_hints(
        "[run]\nduration = 5s\n[load]\nmodel = closed\nclients = 20\nthink = exp(20ms)\n"
        "[server]\nworkers = 2\nservice = exp(5ms)\n"
        "[layer app]\nattempts = 3\ntimeout = 15ms\nbudget = bucket\nbudget_scope = shared\n",
        500);
}

/* metrics.c: the levels are integrated up to the run's end and no
 * further. Advanced to 25 s, a 10 s run's metrics hold a queue of 2 for
 * 10 s in its 10 buckets, the same as advanced to exactly 10 s. */
static void levels_stop_at_the_run_end(void **state)
{
    (void)state;
    struct metrics m[2];
    char err[128];
    unsigned att[1] = {1};
    for (int i = 0; i < 2; i++) {
        assert_int_equal(metrics_init(&m[i], 10 * RS_S, RS_S, 1, att, err, sizeof err), 0);
        metrics_advance(&m[i], i == 0 ? 10 * RS_S : 25 * RS_S, 2, 1, 3);
        assert_true(m[i].last_t == 10 * RS_S);
    }
    assert_true(m[0].nbuckets == 10 && m[1].nbuckets == 10);
    double area = 0;
    for (size_t b = 0; b < 10; b++)
        area += m[1].b[b].area_queue;
    assert_true(area == 2.0 * 10 * RS_S);
    assert_memory_equal(m[0].b, m[1].b, 10 * sizeof *m[0].b);
    metrics_fini(&m[0]);
    metrics_fini(&m[1]);
}

/* metrics.c: at most METRICS_MAX_LEVELS attempts histograms: 16 layers,
 * the service and 16 hedged layers' hedges. A 17th extra level is refused
 * and nothing is added; 16 are taken. */
static void extra_levels_have_a_limit(void **state)
{
    (void)state;
    struct metrics m;
    char err[128];
    unsigned att[16];
    size_t bins[17];
    for (size_t i = 0; i < 17; i++)
        bins[i] = 4;
    for (size_t i = 0; i < 16; i++)
        att[i] = 3;
    assert_int_equal(metrics_init(&m, 10 * RS_S, RS_S, 16, att, err, sizeof err), 0);
    assert_int_equal(metrics_extra_levels(&m, 17, 18, bins), -1);
    assert_true(m.nextra == 0 && m.att[16 + 1] == NULL);
    assert_int_equal(metrics_extra_levels(&m, 16, 18, bins), 0);
    assert_true(m.nextra == 16 && m.att[16 + 1 + 15] != NULL);
    metrics_fini(&m);
}

/* layer.c: timeouts of the layers below the first LANE_LAYERS (8) go to
 * the heaps, not to a lane, and fire all the same. A chain of 9 services
 * through 9 layers, 1 request a second for 5 s: the ninth layer's 20 ms
 * timeout ends each of its calls to the 50 ms service, once per request,
 * and no other layer times out (each waits 1 s). */
static void deep_layer_timeouts_fire(void **state)
{
    (void)state;
    const char *text =
        "[run]\nduration = 10s\n[load]\narrival = uniform\nrate = 1/s\n"
        "[phase quiet]\nstart = 5500ms\nend = 10s\nrate = x0\n"
        "[service s0]\nworkers = 10\nservice = const(1ms)\ncalls = s1\n"
        "[layer l0]\nfrom = client\nto = s0\nattempts = 1\ntimeout = 1s\n"
        "[service s1]\nworkers = 10\nservice = const(1ms)\ncalls = s2\n"
        "[layer l1]\nfrom = s0\nto = s1\nattempts = 1\ntimeout = 1s\n"
        "[service s2]\nworkers = 10\nservice = const(1ms)\ncalls = s3\n"
        "[layer l2]\nfrom = s1\nto = s2\nattempts = 1\ntimeout = 1s\n"
        "[service s3]\nworkers = 10\nservice = const(1ms)\ncalls = s4\n"
        "[layer l3]\nfrom = s2\nto = s3\nattempts = 1\ntimeout = 1s\n"
        "[service s4]\nworkers = 10\nservice = const(1ms)\ncalls = s5\n"
        "[layer l4]\nfrom = s3\nto = s4\nattempts = 1\ntimeout = 1s\n"
        "[service s5]\nworkers = 10\nservice = const(1ms)\ncalls = s6\n"
        "[layer l5]\nfrom = s4\nto = s5\nattempts = 1\ntimeout = 1s\n"
        "[service s6]\nworkers = 10\nservice = const(1ms)\ncalls = s7\n"
        "[layer l6]\nfrom = s5\nto = s6\nattempts = 1\ntimeout = 1s\n"
        "[service s7]\nworkers = 10\nservice = const(1ms)\ncalls = s8\n"
        "[layer l7]\nfrom = s6\nto = s7\nattempts = 1\ntimeout = 1s\n"
        "[service s8]\nworkers = 10\nservice = const(50ms)\n"
        "[layer l8]\nfrom = s7\nto = s8\nattempts = 1\ntimeout = 20ms\n";
    assert_true(LANE_LAYERS == 8);
    struct sim *s = run_text(text, NULL, 0);
    assert_true(sim_metrics(s)->requests == 5);
    for (unsigned l = 0; l < 9; l++) {
        assert_true(s->layers.lrt[l].attempts == 5);
        assert_true(s->layers.lrt[l].timeouts == (l == 8 ? 5 : 0));
    }
    sim_destroy(s);
}

/* load.c: the trace is checked when the scenario is loaded and opened
 * again by sim_create; a file that went bad in between is reported there
 * and no run is made. */
static void trace_gone_bad_before_the_run(void **state)
{
    (void)state;
    struct scratch scr;
    struct scenario sc;
    scratch_trace_changed(&scr, "cover", "t,rate\n0,10\n1,10\n", "when,what\n", &sc);
    char err[512] = "";
    assert_null(trace_sim_create(&sc, 0, err, sizeof err));
    assert_non_null(strstr(err, "rates.csv:1: header 'when,what'; allowed: t,rate"));
    scratch_remove(&scr);
}

/* load.c: a trace of timestamps states every arrival, so a phase (one
 * without a rate: check refuses that) changes none of them. Arrivals at
 * 0.5, 1.5, 2.5 and 3.5 s, a phase slowing the service tenfold from 1 to
 * 3 s: 4 requests, served in 10 ms outside the phase and 100 ms in it. */
static void phase_leaves_timestamps_alone(void **state)
{
    (void)state;
    struct scratch scr;
    assert_int_equal(scratch_make(&scr, "cover", "times.csv"), 0);
    const char *times = "t\n0.5\n1.5\n2.5\n3.5\n";
    scratch_write(&scr, times, strlen(times));
    char text[1024];
    snprintf(text, sizeof text,
             "[run]\nduration = 5s\n[load]\ntrace = %s\n[server]\nworkers = 10\n"
             "service = const(10ms)\n[phase slow]\nstart = 1s\nend = 3s\nslowdown = 10\n",
             scr.path);
    struct sim *s = run_text(text, NULL, 0);
    assert_true(sim_metrics(s)->requests == 4 && sim_metrics(s)->outcomes[OUT_OK] == 4);
    assert_true(sim_metrics(s)->lat_all.min == 10 * RS_MS);
    assert_true(sim_metrics(s)->lat_all.max == 100 * RS_MS);
    sim_destroy(s);
    scratch_remove(&scr);
}

/* service.c: services.csv's rows exist for each service, its replicas
 * (1-based; 0 the total) and each bucket, and only in runs with services:
 * past any of them, or in a run of one [server], there is no row, and that
 * run's service totals are all 0. A run of 2 s in buckets of 1 s (the
 * default) with api of 2 replicas, 1 request every 100 ms until 950 ms. */
static void service_rows_have_bounds(void **state)
{
    (void)state;
    struct sim *s = run_text(
        "[run]\nduration = 2s\n[load]\narrival = uniform\nrate = 10/s\n"
        "[phase quiet]\nstart = 950ms\nend = 2s\nrate = x0\n"
        "[service api]\nreplicas = 2\nworkers = 1\nservice = const(1ms)\n",
        NULL, 0);
    struct sim_service_row row;
    assert_true(sim_service_row(s, 0, 0, 0, &row) && row.arrivals == 9 && row.completed == 9);
    assert_true(sim_service_row(s, 0, 2, 1, &row) && row.arrivals == 0);
    assert_false(sim_service_row(s, 1, 0, 0, &row));  /* no second service */
    assert_false(sim_service_row(s, 0, 3, 0, &row));  /* no third replica */
    assert_false(sim_service_row(s, 0, 0, 2, &row));  /* no third bucket */
    sim_destroy(s);
    s = run_text("[run]\nduration = 2s\n[load]\nrate = 10/s\n[server]\nworkers = 1\n"
                 "service = const(1ms)\n",
                 NULL, 0);
    assert_true(sim_metrics(s)->requests > 0);
    assert_false(sim_service_row(s, 0, 0, 0, &row));
    row.arrivals = 1;
    sim_service_totals(s, 0, &row);
    struct sim_service_row zero = {0};
    assert_memory_equal(&row, &zero, sizeof row);
    sim_destroy(s);
}

/* occ.c: without request_latency or response_latency a message takes no
 * time. The 3 clients read version 0 at t = 0, then write in turn: the
 * first succeeds at once (a latency of 0), the other two fail (2 errors
 * 409), back off (full jitter, distinct instants for this seed) and then
 * succeed without another conflict. */
static void occ_messages_without_latency(void **state)
{
    (void)state;
    struct sim *s = run_text("[run]\nduration = 10s\n[load]\nclients = 3\n[server]\nmodel = occ\n"
                             "[layer app]\nbackoff = full\nbase = 5ms\ncap = 200ms\n",
                             NULL, 0);
    assert_true(sim_metrics(s)->requests == 3 && sim_metrics(s)->outcomes[OUT_OK] == 3);
    assert_true(sim_metrics(s)->lat_all.min == 0 && sim_metrics(s)->lat_all.max > 0);
    assert_true(sim_metrics(s)->errors[CLS_409] == 2);
    sim_destroy(s);
}

/* occ.c: a client not done at the end is in flight, and its writes so far
 * are its attempts record. With 10 ms each way, a 15 ms run ends before
 * any read is answered: 20 clients, all in flight, none with a write. */
static void occ_clients_not_done_at_the_end(void **state)
{
    (void)state;
    struct sim *s = run_text("[run]\nduration = 15ms\nbucket = 5ms\n[load]\nclients = 20\n"
                             "[server]\nmodel = occ\n[layer app]\nrequest_latency = const(10ms)\n"
                             "response_latency = const(10ms)\n",
                             NULL, 0);
    assert_true(sim_metrics(s)->requests == 20 && sim_metrics(s)->outcomes[OUT_OK] == 0);
    assert_true(sim_in_flight(s) == 20 && sim_metrics(s)->att_n == 20);
    assert_true(sim_metrics(s)->server_arrivals == 0);
    sim_destroy(s);
}

/* service.c: a job stopped by a cancellation while it loads its key's
 * miss abandons the load, as a failed load: nothing is filled. One key,
 * 1 request a second for 5 s; api's miss takes 20 ms, its caller gives up
 * at 5 ms and cancels the running job. Every lookup misses (no entry is
 * ever filled) and each request cancels its job: with cancel = none the
 * first load fills the entry (no TTL) and the other 4 lookups hit, and
 * are answered within the timeout (a hit takes no service time). */
static void stopped_load_fills_nothing(void **state)
{
    (void)state;
    const char *text = "[run]\nduration = 10s\n[load]\narrival = uniform\nrate = 1/s\nkeys = 1\n"
                       "[phase quiet]\nstart = 5500ms\nend = 10s\nrate = x0\n"
                       "[service api]\nworkers = 10\nservice = const(20ms)\ncache = c\n"
                       "cancel_running = true\n[cache c]\nttl = none\n"
                       "[layer app]\nfrom = client\nto = api\nattempts = 1\ntimeout = 5ms\n"
                       "cancel = on-abandon\n";
    const char *keep[] = {"layer.app.cancel=none"};
    for (size_t n = 0; n <= 1; n++) {
        struct sim *s = run_text(text, keep, n);
        struct sim_cache_row row;
        uint64_t lookups = 0, hits = 0;
        for (size_t b = 0; sim_cache_row(s, 0, b, &row); b++) {
            lookups += row.n.lookups;
            hits += row.n.hits;
        }
        assert_true(sim_metrics(s)->requests == 5 && lookups == 5);
        assert_true(hits == (n == 0 ? 0 : 4));
        assert_true(sim_metrics(s)->outcomes[OUT_OK] == (n == 0 ? 0 : 4)); /* hits are quick */
        sim_destroy(s);
    }
}

/* layer.c: an attempt closed without its own answer (here abandoned when
 * its caller gave up) is reported to the breaker as not failed, but with
 * its duration, so it may be slow, and slow ones can open a rate breaker.
 * One request at 1 s; api calls db twice at once through api-db (a rate
 * breaker over the last 2 calls, both needed, opening when all are slow);
 * the client gives up at 50 ms and both db calls, out for 49 ms, are
 * abandoned: slow beyond 10 ms, the second opens the breaker (1
 * transition); beyond 100 ms neither is slow and it stays closed. */
static void abandoned_slow_attempts_open_a_rate_breaker(void **state)
{
    (void)state;
    const char *text =
        "[run]\nduration = 3s\n[load]\narrival = uniform\nrate = 1/s\n"
        "[phase quiet]\nstart = 1500ms\nend = 3s\nrate = x0\n"
        "[service api]\nworkers = 10\nservice = const(1ms)\ncalls = db*2\ncancel_running = true\n"
        "[service db]\nworkers = 10\nservice = const(1s)\n"
        "[layer app]\nfrom = client\nto = api\nattempts = 1\ntimeout = 50ms\ncancel = on-abandon\n"
        "[layer api-db]\nfrom = api\nto = db\nattempts = 1\ncancel = on-abandon\nbreaker = rate\n"
        "breaker_scope = shared\nbreaker_window = 2\nbreaker_min_calls = 2\n"
        "breaker_slow_call = 10ms\nbreaker_slow_rate = 1\n";
    const char *slower[] = {"layer.api-db.breaker_slow_call=100ms"};
    for (size_t n = 0; n <= 1; n++) {
        struct sim *s = run_text(text, slower, n);
        assert_true(sim_metrics(s)->requests == 1);
        assert_true(s->layers.lrt[1].attempts == 2 && s->layers.lrt[1].abandoned == 2);
        assert_true(s->layers.lrt[1].transitions == (n == 0 ? 1 : 0));
        sim_destroy(s);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(urllib3_jitter_adds_a_uniform_share),
        cmocka_unit_test(slow_calls_trip_a_time_window),
        cmocka_unit_test(no_breaker_result_opens_nothing),
        cmocka_unit_test(budgets_without_a_retry_charge),
        cmocka_unit_test(trailing_separators_end_a_class_list),
        cmocka_unit_test(destroy_accepts_null),
        cmocka_unit_test(prefetch_hints_change_nothing),
        cmocka_unit_test(levels_stop_at_the_run_end),
        cmocka_unit_test(extra_levels_have_a_limit),
        cmocka_unit_test(deep_layer_timeouts_fire),
        cmocka_unit_test(trace_gone_bad_before_the_run),
        cmocka_unit_test(phase_leaves_timestamps_alone),
        cmocka_unit_test(service_rows_have_bounds),
        cmocka_unit_test(occ_messages_without_latency),
        cmocka_unit_test(occ_clients_not_done_at_the_end),
        cmocka_unit_test(stopped_load_fills_nothing),
        cmocka_unit_test(abandoned_slow_attempts_open_a_rate_breaker),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
