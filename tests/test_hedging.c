/*
 * Hedged requests and cancellation (issue 18): the analytic mean of a
 * hedged call against theory; hedging that never fires and cancellation
 * that never has anything to cancel change nothing, byte for byte; hedge_on,
 * fatal classes, distinct replicas, the extra-load cap, budgets; what a
 * cancellation does to queued and running work, to a call below and on a
 * hop it overtakes; the presets' values; the hedge and cancel built-ins'
 * claims over seeds 1..20. Conservation (every copy answered, abandoned or
 * still out; every job dropped, stopped, completed or still queued or busy)
 * is checked at the end of every run by sim_run itself.
 */
#define _POSIX_C_SOURCE 200809L /* fmemopen */

#include "rs_test.h"
#include "scenario_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define M(s) sim_metrics(s)


/* ---- theory ---- */

/* Two copies, ample workers (no queueing), exponential service of rate mu,
 * no network, the second copy d after the first unless the first answered:
 * the response is min(S1, d + S2), whose mean is (1 - e^(-mu d) / 2) / mu
 * (d = 0: 1 / (2 mu); d = infinity: 1 / mu). 200,000 requests put the
 * standard error of the mean near 0.25 % of it, so 2 % is 8 standard errors:
 * a wrong formula (e.g. e^(-mu d) instead of half of it, 18 % off at mu d =
 * 1) cannot pass, noise cannot fail. The hedged share is P(S1 > d) =
 * e^(-mu d), and a hedge wins half the races it enters (memoryless). */
static void two_copies_match_theory(void **state)
{
    (void)state;
    const char *text = "[run]\nduration = 1000s\nseed = 11\n[load]\nrate = 200/s\n"
                       "[server]\nworkers = 100000\nservice = exp(10ms)\n"
                       "[layer app]\nattempts = 2\nhedge = fixed\nretry_on = none\n";
    const char *delays[] = {"0", "5ms", "10ms", "20ms", "none"};
    const double mud[] = {0.0, 0.5, 1.0, 2.0, INFINITY};
    for (size_t i = 0; i < 5; i++) {
        char set[64];
        snprintf(set, sizeof set, "layer.app.hedge_delay=%s", delays[i]);
        const char *sets[] = {set};
        struct sim *s = run_text(text, sets, 1);
        const struct metrics *m = M(s);
        double mean = m->lat_by[OUT_OK].sum / (double)m->lat_by[OUT_OK].n / 1e9;
        double want = (1.0 - (isinf(mud[i]) ? 0.0 : exp(-mud[i])) / 2.0) * 0.010;
        double hedged = (double)m->hedges / (double)m->requests;
        double share = isinf(mud[i]) ? 0.0 : exp(-mud[i]);
        print_message("mu d = %g: mean %.4f ms (theory %.4f), hedged %.4f (theory %.4f)\n", mud[i],
                      mean * 1e3, want * 1e3, hedged, share);
        assert_true(fabs(mean - want) <= 0.02 * want);
        assert_true(fabs(hedged - share) <= 0.01);
        if (mud[i] > 0 && !isinf(mud[i]))
            assert_true(fabs((double)m->hedge_wins / (double)m->hedges - 0.5) < 0.02);
        sim_destroy(s);
    }
}

/* ---- identities ---- */

/* Everything a run measured, compared between two runs: the summary row,
 * every bucket, the attempts per layer per bucket, the latency histograms
 * and the attempts histograms of the layers and the server. */
static void assert_same_run(const struct sim *a, const struct sim *b)
{
    const struct metrics *x = M(a), *y = M(b);
    struct summary sa, sb;
    output_summarise(a, 0.0, &sa);
    output_summarise(b, 0.0, &sb);
    char *ra = rs_summary_csv(a, &sa, true), *rb = rs_summary_csv(b, &sb, true);
    assert_non_null(ra);
    assert_non_null(rb);
    assert_string_equal(ra, rb);
    free(ra);
    free(rb);
    assert_int_equal(x->nbuckets, y->nbuckets);
    assert_memory_equal(x->b, y->b, x->nbuckets * sizeof *x->b);
    assert_memory_equal(x->attempts, y->attempts, x->nbuckets * x->nlayers * sizeof *x->attempts);
    assert_memory_equal(x->lb, y->lb, x->nbuckets * x->nlayers * sizeof *x->lb);
    assert_int_equal(x->events, y->events);
    for (int o = 0; o < OUT_NOUTCOMES; o++)
        assert_memory_equal(x->lat_by[o].h->bin, y->lat_by[o].h->bin,
                            x->lat_by[o].h->n * sizeof(double));
    for (size_t l = 0; l <= x->nlayers; l++)
        assert_memory_equal(x->att[l]->bin, y->att[l]->bin, x->att[l]->n * sizeof(double));
}

/* Retries with jittered backoff, a deadline, errors, a breaker, a budget and
 * a network: every path of a plain layer's loop. */
#define BUSY_LAYER                                                                                 \
    "[run]\nduration = 60s\nseed = 5\n[load]\nrate = 400/s\n"                                      \
    "[phase spike]\nstart = 20s\nend = 25s\nrate = x3\n"                                           \
    "[server]\nworkers = 4\nqueue = 50\nservice = lognormal(8ms, 1.5)\nerror_503 = 0.05\n"       \
    "[layer app]\nattempts = 4\nbackoff = full\nbase = 20ms\ncap = 1s\ndeadline = 800ms\n"         \
    "retry_on = 503 conn\nbreaker = gobreaker\nbreaker_failures = 30\nbudget = grpc\n"                                    \
    "request_latency = exp(2ms)\nresponse_latency = exp(2ms)\nrequest_loss = 0.01\n"

/* hedge = fixed with hedge_delay = none never sends a hedge: the same
 * random numbers, events and outputs as hedge = none. */
static void hedging_never_fires_is_no_hedging(void **state)
{
    (void)state;
    const char *hedged[] = {"layer.app.hedge=fixed", "layer.app.hedge_delay=none"};
    struct sim *a = run_text(BUSY_LAYER, NULL, 0), *b = run_text(BUSY_LAYER, hedged, 2);
    assert_true(M(a)->errors[CLS_503] > 1000 && M(a)->outcomes[OUT_DEADLINE] > 0 &&
                M(a)->outcomes[OUT_THROTTLED] > 0);
    assert_int_equal(M(b)->hedges, 0);
    assert_same_run(a, b);
    sim_destroy(a);
    sim_destroy(b);
}

/* More paths where hedging that never fires must be invisible: a breaker
 * that trips on deadline expiries of hung attempts (the copies out at the
 * deadline fail with class deadline, as a plain attempt does); retries over
 * three replicas, one failing (retries keep the balancer's choice: only
 * hedges avoid replicas their call reached); hedge_on on a layer that does
 * not hedge (not a gRPC token failure there). */
static void hedging_never_fires_more_paths(void **state)
{
    (void)state;
    const char *hang = "[run]\nduration = 30s\n[load]\nrate = 100/s\n"
                       "[phase outage]\nstart = 10s\nend = 20s\noutage = hang\n"
                       "[server]\nworkers = 10\nservice = exp(10ms)\n"
                       "[layer app]\nattempts = 1\ndeadline = 200ms\nretry_on = none\n"
                       "breaker = gobreaker\nbreaker_scope = shared\n";
    const char *rep = "[run]\nduration = 20s\nseed = 3\n[load]\nrate = 200/s\n"
                      "[phase bad]\nstart = 5s\nend = 15s\ntarget = server#1\noutage = error\n"
                      "[server]\nworkers = 4\nreplicas = 3\nbalancer = random\nservice = exp(5ms)\n"
                      "[layer app]\nattempts = 3\nretry_on = 503\nbackoff = constant\nbase = 10ms\n";
    const char *texts[] = {hang, rep};
    const char *hedged[] = {"layer.app.hedge=fixed", "layer.app.hedge_delay=none"};
    for (size_t i = 0; i < 2; i++) {
        struct sim *a = run_text(texts[i], NULL, 0), *b = run_text(texts[i], hedged, 2);
        assert_same_run(a, b);
        if (i == 0)
            assert_true(M(a)->outcomes[OUT_BREAKER] > 100); /* the breaker does trip */
        sim_destroy(a);
        sim_destroy(b);
    }
    const char *ho = "[run]\nduration = 20s\nseed = 3\n[load]\nrate = 200/s\n"
                     "[server]\nworkers = 4\nservice = exp(5ms)\nerror_503 = 0.3\nerror_500 = 0.3\n"
                     "[layer app]\nattempts = 3\nretry_on = 500\nbudget = grpc\nbudget_scope = shared\n";
    const char *on[] = {"layer.app.hedge_on=503"};
    struct sim *a = run_text(ho, NULL, 0), *b = run_text(ho, on, 1);
    assert_same_run(a, b);
    sim_destroy(a);
    sim_destroy(b);
}

/* cancel = on-abandon with nothing abandoned (no timeouts, no hedges, no
 * deadline, nothing lost) sends no cancellation and changes nothing; with
 * timeouts it does send them (the same scenario is not inert). */
static void cancellation_without_abandon_changes_nothing(void **state)
{
    (void)state;
    const char *text = "[run]\nduration = 60s\nseed = 3\n[load]\nrate = 700/s\n"
                       "[server]\nworkers = 8\nqueue = 20\nservice = exp(10ms)\nerror_500 = 0.1\n"
                       "cancel_running = true\n"
                       "[layer app]\nattempts = 3\nbackoff = exponential\nbase = 10ms\n"
                       "retry_on = 500 503\nrequest_latency = exp(1ms)\n";
    const char *cancel[] = {"layer.app.cancel=on-abandon"};
    struct sim *a = run_text(text, NULL, 0), *b = run_text(text, cancel, 1);
    assert_int_equal(M(b)->cancels_sent, 0);
    assert_true(M(a)->errors[CLS_503] > 100); /* the queue fills: retries happen */
    assert_same_run(a, b);
    sim_destroy(a);
    sim_destroy(b);
    const char *timed[] = {"layer.app.cancel=on-abandon", "layer.app.timeout=30ms"};
    b = run_text(text, timed, 2);
    assert_true(M(b)->cancels_sent > 0);
    sim_destroy(b);
}

/* ---- hedging semantics ---- */

/* One request a second, one worker, service 100 ms: cases are easy to time. */
#define SLOW_ONE                                                                                   \
    "[run]\nduration = 20s\n[load]\narrival = uniform\nrate = 1/s\n"                              \
    "[phase quiet]\nstart = 9500ms\nend = 20s\nrate = x0\n"

/* A 503 in hedge_on sends the next copy at once (no delay, no backoff);
 * with all copies failing the call ends exhausted after `attempts` copies;
 * a class in neither hedge_on nor retry_on ends the call at once. */
static void hedge_on_sends_the_next_copy_at_once(void **state)
{
    (void)state;
    const char *text = SLOW_ONE "[phase down]\nstart = 0\nend = 20s\noutage = error\n"
                                "[server]\nworkers = 1\nservice = const(100ms)\n"
                                "[layer app]\nattempts = 3\nhedge = fixed\nhedge_delay = 1s\n"
                                "hedge_on = 503\nretry_on = none\n";
    struct sim *s = run_text(text, NULL, 0);
    assert_int_equal(M(s)->requests, 9);
    assert_int_equal(M(s)->outcomes[OUT_EXHAUSTED], 9);
    assert_int_equal(M(s)->server_arrivals, 27);
    assert_int_equal(M(s)->hedges, 18);
    assert_true(M(s)->lat_all.max == 0); /* all three at the same instant */
    sim_destroy(s);
    const char *fatal[] = {"layer.app.hedge_on=none"};
    s = run_text(text, fatal, 1);
    assert_int_equal(M(s)->outcomes[OUT_FAILED], 9);
    assert_int_equal(M(s)->server_arrivals, 9);
    sim_destroy(s);
}

/* The hedge goes hedge_delay after the original; the first ok wins, the
 * other copy is abandoned (and, not cancelled, still served: wasted). With
 * workers = 2, service 100 ms and a 30 ms delay the original always wins
 * at 100 ms. */
static void first_answer_wins(void **state)
{
    (void)state;
    const char *text = SLOW_ONE "[server]\nworkers = 2\nservice = const(100ms)\n"
                                "[layer app]\nattempts = 2\nhedge = fixed\nhedge_delay = 30ms\n"
                                "retry_on = none\n";
    struct sim *s = run_text(text, NULL, 0);
    assert_int_equal(M(s)->outcomes[OUT_OK], 9);
    assert_int_equal(M(s)->hedges, 9);
    assert_int_equal(M(s)->hedge_wins, 0);
    assert_int_equal(M(s)->wasted, 9);
    assert_true(M(s)->lat_all.min == 100 * RS_MS && M(s)->lat_all.max == 100 * RS_MS);
    struct sim_layer_totals t;
    sim_layer_totals(s, 0, &t);
    assert_int_equal(t.abandoned, 9);
    sim_destroy(s);
    /* The same with the copy sent at the layer's timeout instead (Envoy's
     * hedge_on_per_try_timeout): the timeout does not abandon the first. */
    const char *envoy[] = {"layer.app.hedge_delay=none", "layer.app.timeout=30ms"};
    s = run_text(text, envoy, 2);
    assert_int_equal(M(s)->outcomes[OUT_OK], 9);
    assert_int_equal(M(s)->hedges, 9);
    assert_int_equal(M(s)->hedge_wins, 0);
    assert_int_equal(M(s)->errors[CLS_TIMEOUT], 0);
    assert_true(M(s)->lat_all.max == 100 * RS_MS);
    sim_destroy(s);
    /* One worker: the hedge queues behind the original, which still wins.
     * The worker the original frees takes the hedge at that instant, before
     * the cancellation arrives (no network: the same instant, and a server
     * starts its next job before it answers); a server that stops cancelled
     * work stops it there. */
    const char *one[] = {"server.workers=1", "layer.app.cancel=on-abandon",
                         "server.cancel_running=true"};
    s = run_text(text, one, 3);
    assert_int_equal(M(s)->outcomes[OUT_OK], 9);
    assert_int_equal(M(s)->wasted, 0);
    assert_int_equal(M(s)->cancelled, 9);
    assert_int_equal(M(s)->server_completions, 9);
    sim_destroy(s);
}

/* Copies of one call prefer replicas no other copy reached: with two
 * replicas picked at random and both copies sent at once, every request
 * puts exactly one copy on each replica. Without hedging the random
 * balancer does not. */
static void hedges_go_to_other_replicas(void **state)
{
    (void)state;
    const char *text = "[run]\nduration = 20s\nseed = 4\n[load]\nrate = 100/s\n"
                       "[service api]\nreplicas = 2\nbalancer = random\nworkers = 100\n"
                       "service = exp(5ms)\n"
                       "[layer app]\nfrom = client\nto = api\nattempts = 2\nhedge = fixed\n"
                       "hedge_delay = 0\nretry_on = none\n";
    struct sim *s = run_text(text, NULL, 0);
    struct sim_service_row r1, r2;
    uint64_t a1 = 0, a2 = 0;
    for (size_t b = 0; b < M(s)->nbuckets; b++) {
        assert_true(sim_service_row(s, 0, 1, b, &r1) && sim_service_row(s, 0, 2, b, &r2));
        a1 += r1.arrivals;
        a2 += r2.arrivals;
    }
    assert_int_equal(a1 + a2, M(s)->server_arrivals);
    assert_int_equal(M(s)->server_arrivals, 2 * M(s)->requests);
    assert_int_equal(a1, a2); /* one copy of each request on each */
    sim_destroy(s);
}

/* Copies of a call to a service that is not the first in the file prefer
 * that service's own replicas: api (two replicas, numbered first) calls db
 * (two replicas) through a hedged layer sending both copies at once, so
 * every call puts one copy on each of db's replicas and none on api's:
 * api runs one execution a request, taking its replicas in turn (5 and 4
 * of the 9), and each of db's replicas gets 9. */
static void hedges_stay_on_their_service(void **state)
{
    (void)state;
    const char *text = SLOW_ONE
        "[service api]\nreplicas = 2\nbalancer = round-robin\nworkers = 10\nservice = const(1ms)\n"
        "calls = db\n"
        "[service db]\nreplicas = 2\nbalancer = random\nworkers = 10\nservice = const(10ms)\n"
        "[layer app]\nto = api\n"
        "[layer api-db]\nfrom = api\nto = db\nattempts = 2\nhedge = fixed\nhedge_delay = 0\n"
        "retry_on = none\n";
    struct sim *s = run_text(text, NULL, 0);
    assert_int_equal(M(s)->requests, 9);
    assert_int_equal(M(s)->outcomes[OUT_OK], 9);
    assert_int_equal(M(s)->hedges, 9);
    uint64_t arr[2][2] = {{0, 0}, {0, 0}};
    struct sim_service_row r;
    for (size_t b = 0; b < M(s)->nbuckets; b++)
        for (uint32_t svc = 0; svc < 2; svc++)
            for (uint32_t i = 0; i < 2; i++) {
                assert_true(sim_service_row(s, svc, i + 1, b, &r));
                arr[svc][i] += r.arrivals;
            }
    assert_int_equal(arr[0][0], 5); /* requests 1, 3, 5, 7, 9 */
    assert_int_equal(arr[0][1], 4);
    assert_int_equal(arr[1][0], 9);
    assert_int_equal(arr[1][1], 9);
    sim_destroy(s);
}

/* hedges, hedge_wins and the attempts count first copies, retries and
 * hedges apart. Two replicas taken in turn, 100 ms of work, the first
 * slowed tenfold: each request's first copy goes to the slow one, the
 * hedge 30 ms later to the other, and the hedge wins at 130 ms: 9 hedges,
 * 9 hedge wins, 2 attempts a request. With the first replica failing at
 * once (503) instead, the call has no copy out, so it retries after its
 * 50 ms backoff (the hedge timer does not fire meanwhile); the retry goes
 * to the other replica and wins at 150 ms: 2 attempts a request, no hedge,
 * no hedge win. */
static void hedge_counts_separate_copies(void **state)
{
    (void)state;
    const char *text = SLOW_ONE
        "[phase slow]\nstart = 0\nend = 20s\ntarget = api#1\nslowdown = 10\n"
        "[service api]\nreplicas = 2\nbalancer = round-robin\nworkers = 1\nservice = const(100ms)\n"
        "[layer app]\nto = api\nattempts = 2\nhedge = fixed\nhedge_delay = 30ms\n"
        "retry_on = 503\nbackoff = constant\nbase = 50ms\n";
    struct sim *s = run_text(text, NULL, 0);
    assert_int_equal(M(s)->outcomes[OUT_OK], 9);
    assert_int_equal(M(s)->hedges, 9);
    assert_int_equal(M(s)->hedge_wins, 9);
    assert_true(M(s)->att_sum[0] == 18.0 && M(s)->att_max[0] == 2);
    assert_true(M(s)->lat_all.min == 130 * RS_MS && M(s)->lat_all.max == 130 * RS_MS);
    sim_destroy(s);
    const char *fail[] = {"phase.slow.slowdown=1", "phase.slow.outage=error"};
    s = run_text(text, fail, 2);
    assert_int_equal(M(s)->outcomes[OUT_OK], 9);
    assert_int_equal(M(s)->hedges, 0);
    assert_int_equal(M(s)->hedge_wins, 0);
    assert_true(M(s)->att_sum[0] == 18.0 && M(s)->att_max[0] == 2);
    assert_true(M(s)->lat_all.min == 150 * RS_MS && M(s)->lat_all.max == 150 * RS_MS);
    sim_destroy(s);
}

/* percentile: with the cap at 2 % and the percentile at 50 (half the calls
 * would hedge), hedges stay within 2 % of first copies in every 10 s window
 * (and so over the run, give or take the window's edges); with the cap at 1
 * about half the calls hedge: the window mixes winners (faster than one
 * copy) and copies superseded (their time so far), so its median sits near
 * one copy's, not at it (measured 0.586). */
static void extra_load_cap_holds(void **state)
{
    (void)state;
    const char *text = "[run]\nduration = 100s\nseed = 9\n[load]\nrate = 200/s\n"
                       "[server]\nworkers = 1000\nservice = exp(10ms)\n"
                       "[layer app]\nattempts = 2\nhedge = percentile\nhedge_percentile = 50\n"
                       "hedge_max_extra = 0.02\nretry_on = none\n";
    struct sim *s = run_text(text, NULL, 0);
    double share = (double)M(s)->hedges / (double)M(s)->requests;
    print_message("cap 0.02: hedged %.4f\n", share);
    assert_true(share <= 0.021 && share >= 0.015);
    /* exactly: in every 10 s window of whole seconds, the hedges (server
     * arrivals beyond the first copies) are at most 2 % of first copies */
    const struct metrics *m = M(s);
    for (size_t i = 0; i + 10 <= m->nbuckets; i++) {
        uint64_t first = 0, all = 0;
        for (size_t j = i; j < i + 10; j++)
            first += m->b[j].offered, all += m->b[j].server_arrivals;
        if ((double)(all - first) > 0.02 * (double)first)
            fail_msg("seconds %zu-%zu: %llu hedges for %llu first copies, above 2 %%", i, i + 9,
                     (unsigned long long)(all - first), (unsigned long long)first);
    }
    sim_destroy(s);
    const char *free_[] = {"layer.app.hedge_max_extra=1"};
    s = run_text(text, free_, 1);
    share = (double)M(s)->hedges / (double)M(s)->requests;
    print_message("cap 1: hedged %.4f\n", share);
    assert_true(share > 0.45 && share < 0.70);
    sim_destroy(s);
}

/* gRPC A6: hedges are sent only while the throttle's tokens are above half
 * its maximum; failures take one each. A dead service (503) spends the
 * tokens on the first copies' failures, and hedges stop: far fewer copies
 * than attempts allow, where without a budget every call sends all four. */
static void budget_refuses_hedges(void **state)
{
    (void)state;
    const char *text = "[run]\nduration = 20s\nseed = 2\n[load]\nrate = 50/s\n"
                       "[phase down]\nstart = 0\nend = 20s\noutage = error\n"
                       "[server]\nworkers = 10\nservice = exp(10ms)\n"
                       "[layer app]\nhedge = grpc-hedge\nbudget = grpc\nbudget_scope = shared\n";
    struct sim *s = run_text(text, NULL, 0);
    double per = (double)M(s)->server_arrivals / (double)M(s)->requests;
    print_message("copies per call with grpc throttling: %.3f\n", per);
    assert_true(per < 1.1);
    sim_destroy(s);
    const char *none[] = {"layer.app.budget=none"};
    s = run_text(text, none, 1);
    assert_int_equal(M(s)->server_arrivals, 4 * M(s)->requests);
    sim_destroy(s);
}

/* ---- cancellation ---- */

/* A timeout cancels the attempt: queued, it is dropped unstarted; running,
 * it stops only where the service says cancel_running. One worker busy for
 * 100 ms with each, attempts every second, timeout 50 ms, one attempt. */
static void cancel_reaches_queued_and_running_work(void **state)
{
    (void)state;
    const char *text = SLOW_ONE "[server]\nworkers = 1\nservice = const(100ms)\n"
                                "[layer app]\nattempts = 1\ntimeout = 50ms\ncancel = on-abandon\n";
    struct sim *s = run_text(text, NULL, 0);
    assert_int_equal(M(s)->outcomes[OUT_EXHAUSTED] + M(s)->outcomes[OUT_FAILED], 9);
    assert_int_equal(M(s)->server_completions, 9); /* running: finished anyway */
    assert_int_equal(M(s)->wasted, 9);
    assert_int_equal(M(s)->cancelled, 0);
    sim_destroy(s);
    const char *stop[] = {"server.cancel_running=true"};
    s = run_text(text, stop, 1);
    assert_int_equal(M(s)->server_completions, 0);
    assert_int_equal(M(s)->cancelled, 9);
    assert_int_equal(M(s)->wasted, 0);
    sim_destroy(s);
    /* Service 1.5 s: each odd request runs past the next one's arrival,
     * which waits in the queue past its timeout and is dropped there. */
    const char *long_[] = {"server.service=const(1500ms)"};
    s = run_text(text, long_, 1);
    assert_int_equal(M(s)->cancelled_before_start, 4);
    assert_int_equal(M(s)->server_completions, 5);
    sim_destroy(s);
}

/* A cancellation crosses the hop with its latency: when it overtakes its
 * attempt the attempt is dropped on arrival. Request latency uniform 0-100
 * ms and a 1 ms timeout: a cancellation sent at 1 ms overtakes an attempt
 * whose crossing takes longer than 1 ms plus the cancellation's own, about
 * half the time (P(X1 > 1 ms + X2) for X uniform on 0-100 ms: 0.49). */
static void cancel_overtakes_on_the_hop(void **state)
{
    (void)state;
    const char *text = "[run]\nduration = 100s\nseed = 8\n[load]\nrate = 100/s\n"
                       "[server]\nworkers = 100\nservice = const(1ms)\n"
                       "[layer app]\nattempts = 1\ntimeout = 1ms\ncancel = on-abandon\n"
                       "request_latency = uniform(0, 100ms)\n";
    struct sim *s = run_text(text, NULL, 0);
    double dropped = (double)M(s)->cancelled_before_start / (double)M(s)->requests;
    print_message("overtaken on the hop: %.4f (theory 0.49)\n", dropped);
    assert_true(fabs(dropped - 0.49) < 0.02);
    /* every attempt arrived or was dropped, but those still on the hop at
     * the end (sent in its last 100 ms: about 10) */
    uint64_t seen = M(s)->cancelled_before_start + M(s)->server_arrivals;
    assert_true(seen <= M(s)->requests && seen + 30 >= M(s)->requests);
    sim_destroy(s);
}

/* A call below that is cancelled ends without answering and cancels its
 * own attempt in turn: an outer layer times out at 50 ms, the inner one
 * (also cancelling) would wait 1 s; the server stops the work. */
static void cancel_travels_down_the_layers(void **state)
{
    (void)state;
    const char *text = SLOW_ONE "[server]\nworkers = 1\nservice = const(300ms)\n"
                                "cancel_running = true\n"
                                "[layer outer]\nattempts = 1\ntimeout = 50ms\ncancel = on-abandon\n"
                                "[layer inner]\nattempts = 3\ntimeout = 1s\ncancel = on-abandon\n";
    struct sim *s = run_text(text, NULL, 0);
    assert_int_equal(M(s)->cancelled, 18); /* 9 inner calls, 9 executions */
    assert_int_equal(M(s)->server_completions, 0);
    assert_int_equal(M(s)->server_arrivals, 9); /* the inner call never retried */
    sim_destroy(s);
    /* The inner layer does not cancel: the call ends, its attempt runs on. */
    const char *keep[] = {"layer.inner.cancel=none"};
    s = run_text(text, keep, 1);
    assert_int_equal(M(s)->cancelled, 9);
    assert_int_equal(M(s)->server_completions, 9);
    assert_int_equal(M(s)->wasted, 9);
    sim_destroy(s);
}

/* Envoy's retry budget counts each hedge out as an active retry and frees
 * it when that copy ends, answered or not: with three copies a call and a
 * floor of 20 concurrent retries, hedges are never refused at 100/s (at
 * most about 1 retry is active at a time); a count that leaked one retry
 * per call would reach the floor within a second and refuse from then on. */
static void envoy_budget_counts_each_hedge(void **state)
{
    (void)state;
    const char *text = "[run]\nduration = 60s\n[load]\nrate = 100/s\n"
                       "[server]\nworkers = 1000\nservice = exp(10ms)\n"
                       "[layer app]\nattempts = 3\nhedge = fixed\nhedge_delay = 5ms\nretry_on = none\n"
                       "budget = envoy\nbudget_scope = shared\nbudget_min_concurrency = 20\n";
    struct sim *s = run_text(text, NULL, 0);
    struct sim_layer_totals t;
    sim_layer_totals(s, 0, &t);
    print_message("envoy budget: %llu hedges, %llu refused\n", (unsigned long long)t.hedges,
                  (unsigned long long)t.refused);
    assert_true(t.hedges > 5000);
    assert_int_equal(t.refused, 0);
    assert_int_equal(t.hedges_suppressed, 0);
    sim_destroy(s);
    /* a floor of 0 refuses every hedge, and says so */
    const char *zero[] = {"layer.app.budget_min_concurrency=0", "layer.app.budget_percent=0"};
    s = run_text(text, zero, 2);
    sim_layer_totals(s, 0, &t);
    assert_int_equal(t.hedges, 0);
    assert_true(t.refused > 0 && t.hedges_suppressed == t.refused);
    sim_destroy(s);
}

/* A hedge the budget admits (Envoy: one more active retry) but the breaker
 * then refuses is not sent, and gives its place back: once the load stops,
 * the budget is back at its floor (1000 retries allowed, none active). A
 * leak of one place per refusal left it at 997 here. */
static void refused_hedge_frees_its_budget_place(void **state)
{
    (void)state;
    const char *text = "[run]\nduration = 12s\nseed = 5\n[load]\nrate = 200/s\n"
                       "[phase quiet]\nstart = 8s\nend = 12s\nrate = x0\n"
                       "[server]\nworkers = 20\nservice = exp(10ms)\nerror_503 = 0.3\n"
                       "[layer app]\nattempts = 3\nhedge = fixed\nhedge_delay = 5ms\n"
                       "hedge_on = 503\nretry_on = none\ndeadline = 2s\nbudget = envoy\n"
                       "budget_min_concurrency = 1000\nbreaker = consecutive\n"
                       "breaker_failures = 3\nbreaker_open_for = 50ms\n";
    struct sim *s = run_text(text, NULL, 0);
    const struct metrics *m = M(s);
    struct sim_layer_totals t;
    sim_layer_totals(s, 0, &t);
    assert_true(t.short_circuited > 0 && t.hedges_suppressed > 0); /* the case arises */
    assert_true(m->lb[(m->nbuckets - 1) * m->nlayers].budget_level == 1000.0);
    sim_destroy(s);
}

/* The extra-load cap limits copies sent beside others; the next copy after
 * a hedge_on failure with nothing else out adds no such load, and goes (a
 * cap of 1 % does not end such calls as throttled). */
static void cap_spares_copies_after_failures(void **state)
{
    (void)state;
    const char *text = "[run]\nduration = 10s\nseed = 5\n[load]\nrate = 200/s\n"
                       "[server]\nworkers = 20\nservice = exp(10ms)\nerror_503 = 0.2\n"
                       "[layer app]\nattempts = 3\nhedge = percentile\nhedge_percentile = 99\n"
                       "hedge_max_extra = 0.01\nhedge_on = 503\nretry_on = 503\n"
                       "backoff = constant\nbase = 10ms\ndeadline = 2s\n";
    struct sim *s = run_text(text, NULL, 0);
    assert_int_equal(M(s)->outcomes[OUT_THROTTLED], 0);
    assert_true(M(s)->outcomes[OUT_OK] > 0.98 * (double)M(s)->requests);
    sim_destroy(s);
}

/* A job stopped by a cancellation cancels its dependency calls (their layer
 * cancels), which cancel their attempts at db, which stops them: db serves
 * none of the 200 ms calls in full. The clients give up at 50 ms. */
static void stopped_job_cancels_its_calls(void **state)
{
    (void)state;
    const char *text = "[run]\nduration = 20s\n[load]\nrate = 100/s\n"
                       "[service api]\nworkers = 100\nservice = const(1ms)\ncalls = db\n"
                       "cancel_running = true\n"
                       "[service db]\nworkers = 100\nservice = const(200ms)\ncancel_running = true\n"
                       "[layer app]\nfrom = client\nto = api\nattempts = 1\ntimeout = 50ms\n"
                       "cancel = on-abandon\n"
                       "[layer api-db]\nfrom = api\nto = db\nattempts = 1\ncancel = on-abandon\n";
    struct sim *s = run_text(text, NULL, 0);
    struct sim_service_row db;
    sim_service_totals(s, 1, &db);
    uint64_t req = M(s)->requests;
    /* per request: the api job stopped, its db call ended, the db job stopped */
    assert_true(M(s)->cancelled >= 3 * req - 30 && M(s)->cancelled <= 3 * req);
    assert_int_equal(db.completed, 0);
    assert_int_equal(db.wasted, 0);
    sim_destroy(s);
    /* the dependency layer does not cancel: db serves every call in full,
     * for a call nobody waits for (wasted counts the innermost caller's
     * abandonment only: that call still waits, so db counts none) */
    const char *keep[] = {"layer.api-db.cancel=none"};
    s = run_text(text, keep, 1);
    sim_service_totals(s, 1, &db);
    assert_true(db.completed + 30 >= M(s)->requests);
    assert_int_equal(M(s)->outcomes[OUT_OK], 0);
    sim_destroy(s);
}

/* ---- presets ---- */

static void presets_bring_their_values(void **state)
{
    (void)state;
    struct scenario sc;
    const char *base = "[load]\nrate = 10/s\n[server]\nservice = exp(1ms)\n[layer app]\n";
    char text[512];
    for (unsigned k = 0; k < hedge_nkinds; k++) /* the key's words name the table's rows */
        assert_string_equal(hedge_kinds[k].name, scn_hedge_names[k]);
    assert_null(scn_hedge_names[hedge_nkinds]);
    snprintf(text, sizeof text, "%shedge = grpc-hedge\n", base);
    load_or_fail(&sc, text, NULL, 0);
    const struct layer_cfg *l = &sc.layers[0];
    assert_int_equal(l->hedge_mode, HEDGE_FIXED);
    assert_true(l->hedge_delay == 500 * RS_MS && l->attempts == 4 && l->retry_on == 0);
    assert_true(l->hedge_on == (ERRCLASS_BIT(CLS_CONN) | ERRCLASS_BIT(CLS_503) |
                                ERRCLASS_BIT(CLS_500) | ERRCLASS_BIT(CLS_409)));
    assert_int_equal(l->cancel, CANCEL_ON_ABANDON);
    snprintf(text, sizeof text, "%shedge = grpc-hedge\nattempts = 9\n", base);
    load_or_fail(&sc, text, NULL, 0);
    assert_int_equal(sc.layers[0].attempts, 5); /* A6: above 5 is treated as 5 */
    snprintf(text, sizeof text, "%shedge = polly-hedge\n", base);
    load_or_fail(&sc, text, NULL, 0);
    assert_true(sc.layers[0].hedge_delay == 2 * RS_S && sc.layers[0].attempts == 2);
    assert_int_equal(sc.layers[0].hedge_on, ERRCLASS_ALL_FAILURES);
    snprintf(text, sizeof text, "%shedge = finagle-backup\nattempts = 3\n", base);
    load_or_fail(&sc, text, NULL, 0);
    l = &sc.layers[0];
    assert_int_equal(l->hedge_mode, HEDGE_PERCENTILE);
    assert_true(l->hedge_percentile == 95.0 && l->hedge_max_extra == 0.05 && l->attempts == 2);
    snprintf(text, sizeof text, "%shedge = envoy-hedge\ntimeout = 200ms\n", base);
    load_or_fail(&sc, text, NULL, 0);
    l = &sc.layers[0];
    assert_true(l->timeout == 200 * RS_MS && l->hedge_delay == RS_TIME_NEVER);
    assert_true(l->attempts == 2 && l->hedge_on == 0);
    assert_true(errclass_in(l->retry_on, CLS_503) && errclass_in(l->retry_on, CLS_CONN));
    /* a hedging preset's attempts and retry_on win over a backoff preset's */
    snprintf(text, sizeof text, "%sbackoff = envoy\nhedge = grpc-hedge\n", base);
    load_or_fail(&sc, text, NULL, 0);
    assert_true(sc.layers[0].attempts == 4 && sc.layers[0].retry_on == 0);
    /* explicit keys win over the preset's */
    snprintf(text, sizeof text, "%shedge = grpc-hedge\nhedge_delay = 20ms\ncancel = none\n", base);
    load_or_fail(&sc, text, NULL, 0);
    assert_true(sc.layers[0].hedge_delay == 20 * RS_MS && sc.layers[0].cancel == CANCEL_NONE);
}

/* Loads text into a, writes a's scenario.ini into buf and reads it back
 * into b. */
static void write_and_reload(const char *text, struct scenario *a, struct scenario *b, char *buf,
                             size_t size)
{
    load_or_fail(a, text, NULL, 0);
    FILE *f = fmemopen(buf, size, "w");
    assert_non_null(f);
    assert_int_equal(scenario_write_ini(a, f), 0);
    fclose(f);
    load_or_fail(b, buf, NULL, 0);
}

/* The effective scenario (scenario.ini, and what sweeps fingerprint)
 * reads back to the same scenario for every hedging kind and preset, with
 * cancellation, a dormant key of another mode, and cancel_running. */
static void hedged_scenarios_round_trip(void **state)
{
    (void)state;
    const char *base = "[load]\nrate = 10/s\n[server]\nservice = exp(1ms)\ncancel_running = true\n"
                       "[layer app]\ntimeout = 30ms\nbackoff = envoy\n"
                       "hedge_on = 503 409\ncancel = on-abandon\nhedge = ";
    for (unsigned k = 0; k < hedge_nkinds; k++) {
        char text[512], buf[16384];
        snprintf(text, sizeof text, "%s%s\n", base, hedge_kinds[k].name);
        struct scenario a, b;
        write_and_reload(text, &a, &b, buf, sizeof buf);
        assert_memory_equal(&a.layers[0], &b.layers[0], sizeof a.layers[0]);
        assert_memory_equal(&a.services[0], &b.services[0], sizeof a.services[0]);
        assert_non_null(strstr(buf, "cancel_running = true"));
    }
    /* a dormant key of another mode reads back too */
    char text[512], buf[16384];
    snprintf(text, sizeof text, "%sfixed\nhedge_percentile = 80\nhedge_max_extra = 0.3\n", base);
    struct scenario a, b;
    write_and_reload(text, &a, &b, buf, sizeof buf);
    assert_memory_equal(&a.layers[0], &b.layers[0], sizeof a.layers[0]);
}

/* ---- the built-ins' claims, over seeds 1..20 (at least 18 of 20 each) ---- */

#define SEEDS CLAIM_SEEDS

static double p99(const struct sim *s)
{
    struct summary o;
    output_summarise(s, 0.0, &o);
    return o.lat_p99;
}

static double extra(const struct sim *s)
{
    return (double)M(s)->server_arrivals / (double)M(s)->requests - 1.0;
}

/* hedge: at 30 % a 50 ms hedge halves p99 for under 5 % extra requests
 * (the scenario's claim; the issue asks under 10 %; measured 3.5-4.0 %); at 90 % it storms and stays there (ok over the last
 * 60 s under 10 %) where no hedging does not; the percentile hedge under
 * its 5 % cap keeps the gain at 30 % and does not storm at 90 %. */
static void hedge_claim(void **state)
{
    (void)state;
    const char *none[] = {"layer.app.hedge=none"};
    const char *hi[] = {"load.rate=900/s"};
    const char *hi_none[] = {"load.rate=900/s", "layer.app.hedge=none"};
    const char *pct[] = {"layer.app.hedge=percentile"};
    const char *hi_pct[] = {"load.rate=900/s", "layer.app.hedge=percentile"};
    unsigned gain = 0, storm = 0, calm = 0, pct_gain = 0, pct_calm = 0;
    for (unsigned seed = 1; seed <= SEEDS; seed++) {
        struct sim *base = run_builtin("hedge", seed, none, 1);
        struct sim *h = run_builtin("hedge", seed, NULL, 0);
        struct sim *p = run_builtin("hedge", seed, pct, 1);
        gain += p99(h) < 0.5 * p99(base) && extra(h) < 0.05;
        pct_gain += p99(p) < 0.5 * p99(base) && extra(p) < 0.05;
        sim_destroy(base);
        sim_destroy(h);
        sim_destroy(p);
        size_t n;
        h = run_builtin("hedge", seed, hi, 1);
        n = M(h)->nbuckets;
        storm += ok_between(h, n - 60, n) < 0.10 && extra(h) > 0.9;
        sim_destroy(h);
        base = run_builtin("hedge", seed, hi_none, 2);
        calm += ok_share(base) > 0.99;
        sim_destroy(base);
        p = run_builtin("hedge", seed, hi_pct, 2);
        n = M(p)->nbuckets;
        pct_calm += ok_between(p, n - 60, n) > 0.95 && extra(p) < 0.06;
        sim_destroy(p);
    }
    claim_require("hedge", "30 %: p99 halved, under 5 % extra", gain);
    claim_require("hedge", "90 %: a storm that lasts", storm);
    claim_require("hedge", "90 % without hedging: no storm", calm);
    claim_require("hedge", "percentile, 30 %: p99 halved", pct_gain);
    claim_require("hedge", "percentile, 90 %: no storm", pct_calm);
}

/* cancel: recovers 2-3 s after the spike (seeds 1..20) with cancellation
 * that stops running work; metastable with cancel = none (storm) and when
 * only queued work is dropped. */
static void cancel_claim(void **state)
{
    (void)state;
    const char *none[] = {"layer.app.cancel=none"};
    const char *queued[] = {"server.cancel_running=false"};
    unsigned rec = 0, storm = 0, half = 0;
    for (unsigned seed = 1; seed <= SEEDS; seed++) {
        struct sim *s = run_builtin("cancel", seed, NULL, 0);
        struct summary o;
        output_summarise(s, 0.0, &o);
        rec += o.recovered == 1 && o.recovery_s < 5 && M(s)->cancelled > 0;
        sim_destroy(s);
        s = run_builtin("cancel", seed, none, 1);
        size_t n = M(s)->nbuckets;
        storm += verdict_of(s) == VERDICT_METASTABLE && ok_between(s, n - 60, n) < 0.05;
        sim_destroy(s);
        s = run_builtin("cancel", seed, queued, 1);
        half += verdict_of(s) == VERDICT_METASTABLE && M(s)->cancelled_before_start > 0;
        sim_destroy(s);
    }
    claim_require("cancel", "cancel on-abandon, running work stopped: recovered", rec);
    claim_require("cancel", "cancel = none: metastable", storm);
    claim_require("cancel", "queued work dropped only: metastable", half);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(two_copies_match_theory),
        cmocka_unit_test(hedging_never_fires_is_no_hedging),
        cmocka_unit_test(hedging_never_fires_more_paths),
        cmocka_unit_test(cancellation_without_abandon_changes_nothing),
        cmocka_unit_test(hedge_on_sends_the_next_copy_at_once),
        cmocka_unit_test(first_answer_wins),
        cmocka_unit_test(hedges_go_to_other_replicas),
        cmocka_unit_test(hedges_stay_on_their_service),
        cmocka_unit_test(hedge_counts_separate_copies),
        cmocka_unit_test(extra_load_cap_holds),
        cmocka_unit_test(budget_refuses_hedges),
        cmocka_unit_test(cancel_reaches_queued_and_running_work),
        cmocka_unit_test(cancel_overtakes_on_the_hop),
        cmocka_unit_test(cancel_travels_down_the_layers),
        cmocka_unit_test(envoy_budget_counts_each_hedge),
        cmocka_unit_test(refused_hedge_frees_its_budget_place),
        cmocka_unit_test(cap_spares_copies_after_failures),
        cmocka_unit_test(stopped_job_cancels_its_calls),
        cmocka_unit_test(presets_bring_their_values),
        cmocka_unit_test(hedged_scenarios_round_trip),
        cmocka_unit_test(hedge_claim),
        cmocka_unit_test(cancel_claim),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
