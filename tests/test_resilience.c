/*
 * Budgets and breakers in whole runs: the fleet-level properties they
 * promise, and the storm they are meant to stop.
 */
#include "rs_test.h"

#include <stdio.h>


/* A 10 % ratio budget (reserve 10/s over a 10 s ttl) against a dead
 * server: at a constant 200 requests/s every 10 s window of the run holds
 * at most 10 % of its 2,000 requests plus the 100 in reserve, i.e. 300
 * retries; without the budget it would be 9 retries per request. The
 * windows are the budget's own slices (bucket = slice = 1 s), so the
 * bound is exact. */
static void ratio_budget_bounds_retries_in_every_window(void **state)
{
    (void)state;
    const char *text =
        "[run]\nduration = 120s\nbucket = 1s\n[load]\narrival = uniform\nrate = 200/s\n"
        "[phase dead]\nstart = 0\nend = 120s\noutage = error\n"
        "[server]\nworkers = 10\nservice = const(1ms)\n"
        "[layer app]\nattempts = 10\nbackoff = constant\nbase = 100ms\n"
        "budget = ratio\nbudget_percent = 0.1\nbudget_scope = shared\n";
    struct sim *s = run_text(text, NULL, 0);
    const struct metrics *m = sim_metrics(s);
    double worst = 0;
    for (size_t j = 9; j < m->nbuckets; j++) {
        double retries = 0, requests = 0;
        for (size_t i = j - 9; i <= j; i++) {
            retries += (double)(m->attempts[i * m->nlayers] - m->b[i].offered);
            requests += (double)m->b[i].offered;
        }
        double bound = 0.1 * requests + 100;
        if (retries > bound + 1e-9)
            fail_msg("window ending at %zu s: %.0f retries > %.0f", j + 1, retries, bound);
        if (retries / bound > worst)
            worst = retries / bound;
    }
    print_message("retries reach %.1f %% of the bound in the fullest window\n", 100 * worst);
    assert_true(worst > 0.95); /* the budget is what binds, not something else */
    struct sim_layer_totals t;
    sim_layer_totals(s, 0, &t);
    assert_true(t.refused > 0);
    sim_destroy(s);
}

/* Against a dead server a shared breaker cuts the load to its probes: one
 * every open_for (5 s) once it has tripped. */
static void breaker_cuts_load_to_probes(void **state)
{
    (void)state;
    const char *text =
        "[run]\nduration = 120s\nbucket = 1s\n[load]\nrate = 500/s\n"
        "[phase dead]\nstart = 0\nend = 120s\noutage = refuse\n"
        "[server]\nworkers = 10\nservice = const(1ms)\n"
        "[layer app]\nattempts = 3\n"
        "breaker = gobreaker\nbreaker_open_for = 5s\nbreaker_scope = shared\n";
    struct sim *s = run_text(text, NULL, 0);
    const struct metrics *m = sim_metrics(s);
    uint64_t late = 0;
    for (size_t i = 20; i < m->nbuckets; i++)
        late += m->b[i].server_arrivals;
    print_message("server arrivals in the last 100 s: %llu\n", (unsigned long long)late);
    assert_true(late >= 19 && late <= 21); /* one probe per 5 s */
    assert_true(m->outcomes[OUT_BREAKER] > 50000);
    struct sim_layer_totals t;
    sim_layer_totals(s, 0, &t);
    assert_true(t.transitions >= 20); /* it reopens after every failed probe */
    assert_true(m->lb[50 * m->nlayers].open_share == 1.0);
    uint64_t opened = 0; /* the time series counts the same transitions */
    for (size_t i = 0; i < m->nbuckets; i++)
        opened += m->lb[i * m->nlayers].transitions;
    assert_true(opened == t.transitions);
    sim_destroy(s);
    const char *none[] = {"layer.app.breaker=none"};
    s = run_text(text, none, 1);
    assert_true(sim_metrics(s)->server_arrivals > 100000);
    sim_destroy(s);
}

/* Per-client breakers: each of 1,000 clients must see six failures of its
 * own before its breaker trips, so far more load reaches the dead service
 * than with one shared breaker; instances route calls uniformly. */
static void breaker_scope_matters(void **state)
{
    (void)state;
    const char *text =
        "[run]\nduration = 60s\nbucket = 1s\n[load]\nrate = 500/s\nclients = 1000\n"
        "[phase dead]\nstart = 0\nend = 60s\noutage = refuse\n"
        "[server]\nworkers = 10\nservice = const(1ms)\n"
        "[layer app]\nattempts = 1\nbreaker = gobreaker\nbreaker_open_for = 30s\n"
        "breaker_scope = client\n";
    struct sim *s = run_text(text, NULL, 0);
    uint64_t per_client = sim_metrics(s)->server_arrivals;
    struct sim_layer_totals t;
    sim_layer_totals(s, 0, &t);
    assert_true(t.breaker_states == 1000);
    sim_destroy(s);
    const char *shared[] = {"layer.app.breaker_scope=shared"};
    s = run_text(text, shared, 1);
    uint64_t one = sim_metrics(s)->server_arrivals;
    sim_layer_totals(s, 0, &t);
    uint64_t one_transitions = t.transitions;
    sim_destroy(s);
    const char *inst[] = {"layer.app.breaker_scope=instance", "layer.app.instances=4"};
    s = run_text(text, inst, 2);
    uint64_t four = sim_metrics(s)->server_arrivals;
    sim_layer_totals(s, 0, &t);
    assert_true(t.breaker_states == 4 && t.instances == 4);
    /* every instance gets calls, and its breaker opens as often as the
     * shared one: at the start, and again when its probe fails at 30 s */
    assert_true(one_transitions == 2 && t.transitions == 4 * one_transitions);
    sim_destroy(s);
    print_message("load on the dead service: per-client %llu, 4 instances %llu, shared %llu\n",
                  (unsigned long long)per_client, (unsigned long long)four,
                  (unsigned long long)one);
    /* 6 failures to trip each, then one probe per 30 s each */
    assert_true(one <= 6 + 2);
    assert_true(four >= 4 * 6 && four <= 4 * 8);
    assert_true(per_client >= 1000 * 6 - 200);
}

static struct summary storm_like(const char *name, const char *const *sets, size_t nsets)
{
    struct sim *s = run_text(scenario_builtin_text(name), sets, nsets);
    struct summary sum;
    output_summarise(s, 0, &sum);
    sim_destroy(s);
    return sum;
}

static struct summary storm_with(const char *const *sets, size_t nsets)
{
    return storm_like("storm", sets, nsets);
}

/* The storm recovers with a retry budget shared by the application's
 * clients: AWS's 500-token quota is spent on ~100 retries in the first
 * second of the spike and, as nothing succeeds, not refilled, so retries
 * stop and the service drains its queue; gRPC's token bucket does the same
 * once its tokens fall to half. Envoy's budget, relative to the number of
 * active requests, grows with the queue and does not stop the storm. */
static void storm_recovers_with_a_budget(void **state)
{
    (void)state;
    struct summary none = storm_with(NULL, 0);
    assert_int_equal(none.verdict, VERDICT_METASTABLE);
    const char *aws[] = {"layer.app.budget=aws-standard", "layer.app.budget_scope=shared"};
    struct summary a = storm_with(aws, 2);
    const char *grpc[] = {"layer.app.budget=grpc", "layer.app.budget_scope=shared"};
    struct summary g = storm_with(grpc, 2);
    const char *envoy[] = {"layer.app.budget=envoy", "layer.app.budget_scope=shared"};
    struct summary e = storm_with(envoy, 2);
    print_message("storm: recovery %.0f s (aws-standard), %.0f s (grpc); envoy recovered = %d\n",
                  a.recovery_s, g.recovery_s, e.recovered);
    assert_int_equal(a.recovered, 1);
    assert_true(a.recovery_s < 60);
    assert_int_equal(g.recovered, 1);
    assert_true(g.recovery_s < 60);
    assert_int_equal(e.recovered, 0);
    assert_int_equal(e.verdict, VERDICT_METASTABLE);
    assert_true(a.outcomes[OUT_THROTTLED] > 0);
}


/* outage-breaker: during the outage the breaker cuts the load on the dead
 * service to probes; without it the service takes every attempt. */
static void outage_breaker_scenario(void **state)
{
    (void)state;
    struct summary with = storm_like("outage-breaker", NULL, 0);
    const char *none[] = {"layer.app.breaker=none"};
    struct summary without = storm_like("outage-breaker", none, 1);
    print_message("outage-breaker: peak load %.0f/s with the breaker, %.0f/s without\n",
                  with.peak_server_rate, without.peak_server_rate);
    assert_true(with.peak_server_rate < 0.5 * without.peak_server_rate);
    assert_true(with.outcomes[OUT_BREAKER] > 10000 && without.outcomes[OUT_BREAKER] == 0);
    assert_int_equal(with.recovered, 1);
    assert_true(with.recovery_s <= 5);
}

/* breaker-scope: at the same total load, 1,000 per-client breakers let
 * thousands more attempts reach the dead service than one shared breaker. */
static void breaker_scope_scenario(void **state)
{
    (void)state;
    const char *client[] = {"load.clients=1000"};
    const char *shared[] = {"load.clients=1000", "layer.app.breaker_scope=shared"};
    struct summary c = storm_like("breaker-scope", client, 1);
    struct summary s = storm_like("breaker-scope", shared, 2);
    print_message("breaker-scope: %llu server arrivals per-client, %llu shared\n",
                  (unsigned long long)c.server_arrivals, (unsigned long long)s.server_arrivals);
    assert_true(c.server_arrivals > s.server_arrivals + 5000);
}

/* One request a second from 1 s to 9 s (none after 9.5 s), each answered
 * at once by the server's draw: the breaker cases below are followed by
 * hand. */
#define NINE_REQUESTS                                                                              \
    "[run]\nduration = 30s\n[load]\narrival = uniform\nrate = 1/s\n"                               \
    "[phase quiet]\nstart = 9500ms\nend = 30s\nrate = x0\n"

/* Which classes a breaker counts as failures (docs/breakers.md): every
 * class but ok and business, for every kind; a 400 (a bad request) is one,
 * as the doc says of Hystrix. Nine requests of one attempt each, every one
 * answered 400 or business:
 *  - consecutive: the 6th consecutive 400 trips it (failures 5), open for
 *    60 s: 6 failed, 3 short-circuited;
 *  - rate over a count window of 4 (so at least 4 calls): the 4th 400
 *    trips it, open 60 s: 4 failed, 5 short-circuited;
 *  - hystrix and polly, min_calls 4 (their time windows hold all nine):
 *    the 4th trips, open 5 s until 9.001 s, so the request at 9 s is still
 *    short-circuited: 4 failed, 5 short-circuited;
 * and business answers never trip any of them: 9 business. */
static void breakers_count_every_class_but_ok_and_business(void **state)
{
    (void)state;
    static const struct {
        const char *kind, *extra;
        uint64_t failed, broken;
    } cases[] = {
        {"consecutive", "", 6, 3},
        {"gobreaker", "", 6, 3},
        {"rate", "breaker_window = 4\n", 4, 5},
        {"resilience4j", "breaker_window = 4\n", 4, 5},
        {"hystrix", "breaker_min_calls = 4\n", 4, 5},
        {"polly", "breaker_min_calls = 4\n", 4, 5},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        for (int business = 0; business <= 1; business++) {
            char text[1024];
            snprintf(text, sizeof text,
                     NINE_REQUESTS "[server]\nworkers = 1\nservice = const(1ms)\n%s = 1\n"
                                   "[layer app]\nbreaker = %s\n%s",
                     business ? "business" : "error_400", cases[i].kind, cases[i].extra);
            struct sim *s = run_text(text, NULL, 0);
            const struct metrics *m = sim_metrics(s);
            print_message("%s, %s: failed %llu, breaker %llu, business %llu\n", cases[i].kind,
                          business ? "business" : "400", (unsigned long long)m->outcomes[OUT_FAILED],
                          (unsigned long long)m->outcomes[OUT_BREAKER],
                          (unsigned long long)m->outcomes[OUT_BUSINESS]);
            assert_int_equal(m->requests, 9);
            if (business) {
                assert_int_equal(m->outcomes[OUT_BUSINESS], 9);
                assert_int_equal(m->outcomes[OUT_BREAKER], 0);
            } else {
                assert_int_equal(m->outcomes[OUT_FAILED], cases[i].failed);
                assert_int_equal(m->outcomes[OUT_BREAKER], cases[i].broken);
            }
            sim_destroy(s);
        }
    }
}

/* brooker counts business answers as successes too. Five business answers
 * (1-5 s), then 503s at once (an outage from 5.5 s), with one retry of a
 * 503 and breaker_max_failure_ratio 0.2: at 6 s the 503 makes 1 failure
 * in 6 results (0.17, not above 0.2), so the retry goes, fails (2 in 7)
 * and the request ends exhausted; from 7 s a 503 makes the ratio 3/8 and
 * more, and the retry is refused: outcome breaker. Had business answers
 * been failures, the request at 6 s would be refused too (6 in 6). */
static void brooker_counts_business_as_success(void **state)
{
    (void)state;
    const char *text = NINE_REQUESTS
        "[phase down]\nstart = 5500ms\nend = 30s\noutage = error\n"
        "[server]\nworkers = 1\nservice = const(1ms)\nbusiness = 1\n"
        "[layer app]\nattempts = 2\nretry_on = 503\nbreaker = brooker\n"
        "breaker_max_failure_ratio = 0.2\n";
    struct sim *s = run_text(text, NULL, 0);
    const struct metrics *m = sim_metrics(s);
    assert_int_equal(m->outcomes[OUT_BUSINESS], 5);
    assert_int_equal(m->outcomes[OUT_EXHAUSTED], 1);
    assert_int_equal(m->outcomes[OUT_BREAKER], 3);
    assert_int_equal(m->server_arrivals, 10); /* 5 + 2 + 3 */
    sim_destroy(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(ratio_budget_bounds_retries_in_every_window),
        cmocka_unit_test(breaker_cuts_load_to_probes),
        cmocka_unit_test(breaker_scope_matters),
        cmocka_unit_test(storm_recovers_with_a_budget),
        cmocka_unit_test(outage_breaker_scenario),
        cmocka_unit_test(breaker_scope_scenario),
        cmocka_unit_test(breakers_count_every_class_but_ok_and_business),
        cmocka_unit_test(brooker_counts_business_as_success),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
