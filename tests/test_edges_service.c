/*
 * Exact edges of the queue model (sim/model/service.c) that the mechanical
 * mutants (scripts/mutagen.py) showed no other test to pin: each case is a
 * few requests followed by hand, with literal expected numbers.
 */
#include "rs_test.h"

#include <gsl/gsl_rng.h>
#include <math.h>
#include <string.h>

#include "simctx.h"

#define M(s) sim_metrics(s)

/* One request every second from 1 s to 9 s (the quiet phase from 9.5 s
 * stops arrivals). */
#define ONE_PER_SECOND                                                                             \
    "[run]\nduration = 30s\n[load]\narrival = uniform\nrate = 1/s\n"                               \
    "[phase quiet]\nstart = 9500ms\nend = 30s\nrate = x0\n"

/* ---- the injected errors' draws, replaced ---- */

/* A stream that replays draws[0], draws[1], … cyclically: it replaces the
 * injected errors' stream (RNG_ERRORS, used by nothing else) so that a
 * test can put a draw exactly on the border between two classes, or see
 * who draws. */
static struct {
    const double *u;
    size_t n, next;
} draws;
static double next_draw(void)
{
    return draws.u[draws.next++ % draws.n];
}
static unsigned long draws_get(void *state)
{
    (void)state;
    return (unsigned long)(next_draw() * 4294967296.0);
}
static double draws_get_double(void *state)
{
    (void)state;
    return next_draw();
}
static const gsl_rng_type draws_type = {"draws", 0xffffffffUL, 0, 0, NULL, draws_get,
                                        draws_get_double};

/* Runs text with the injected errors' draws replaced by u[0 … n - 1],
 * cyclically; the caller destroys the result. */
static struct sim *run_with_draws(const char *text, const char *const *sets, size_t nsets,
                                  const double *u, size_t n)
{
    struct scenario sc;
    char err[512];
    load_or_fail(&sc, text, sets, nsets);
    struct sim *s = trace_sim_create(&sc, 0, err, sizeof err);
    if (s == NULL)
        fail_msg("sim_create: %s", err);
    const gsl_rng_type *own = s->rng.s[RNG_ERRORS]->type;
    draws.u = u;
    draws.n = n;
    draws.next = 0;
    s->rng.s[RNG_ERRORS]->type = &draws_type;
    int rc = sim_run(s, NULL, NULL, err, sizeof err);
    s->rng.s[RNG_ERRORS]->type = own;
    if (rc != 0)
        fail_msg("sim_run: %s", err);
    return s;
}

/* error_400, error_500, error_503 and business take consecutive half-open
 * slices of the uniform draw u ∈ [0, 1): [0, p400) answers 400, the next
 * p500 answers 500, and so on; the rest is ok. Each class so has exactly
 * its probability (u is a multiple of 2⁻³²), and a draw that lands exactly
 * on a slice's upper end belongs to the next one. With u = 0.5 fixed and
 * the slices below 0.5 summing to exactly 0.5, every one of the 9 requests
 * answers ok; with u one step below, the class whose slice ends at 0.5. */
static void injected_error_slices_are_half_open(void **state)
{
    (void)state;
    const char *text = ONE_PER_SECOND "[server]\nworkers = 1\nservice = const(1ms)\n";
    static const struct {
        const char *sets[2];
        enum errclass below; /* the class of a draw just under 0.5 */
    } cases[] = {
        {{"server.error_400=0.5", "server.error_503=0"}, CLS_400},
        {{"server.error_400=0.25", "server.error_500=0.25"}, CLS_500},
        {{"server.error_400=0.25", "server.error_503=0.25"}, CLS_503},
        {{"server.error_500=0.25", "server.business=0.25"}, CLS_BUSINESS},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        static const double half = 0.5, below = 0.5 - 1.0 / 4294967296.0;
        struct sim *s = run_with_draws(text, cases[i].sets, 2, &half, 1);
        assert_int_equal(M(s)->requests, 9);
        assert_int_equal(M(s)->outcomes[OUT_OK], 9);
        sim_destroy(s);
        s = run_with_draws(text, cases[i].sets, 2, &below, 1);
        if (cases[i].below == CLS_BUSINESS) /* an answer, not an error */
            assert_int_equal(M(s)->outcomes[OUT_BUSINESS], 9);
        else
            assert_int_equal(M(s)->errors[cases[i].below], 9);
        assert_int_equal(M(s)->outcomes[OUT_OK], 0);
        sim_destroy(s);
    }
}

/* Only an execution with injected errors to draw takes a draw from the
 * errors' stream: a service without them leaves the draws of the others
 * as they are. api (no injected errors) calls db (error_503 = 0.5), one
 * request a second, 9 in all; the draws alternate 0.25 (503) and 0.75
 * (ok). db's executions draw them in turn: 503, ok, 503, … — 5 of the 9
 * fail (the 1st, 3rd, … 9th), and api passes each 503 on. Were api to
 * draw after each ok, db would see 0.25 every time after the first ok. */
static void only_executions_with_errors_draw(void **state)
{
    (void)state;
    const char *text = ONE_PER_SECOND
        "[service api]\nworkers = 1\nservice = const(1ms)\ncalls = db\n"
        "[service db]\nworkers = 1\nservice = const(1ms)\nerror_503 = 0.5\n";
    static const double u[] = {0.25, 0.75};
    struct sim *s = run_with_draws(text, NULL, 0, u, 2);
    assert_int_equal(M(s)->requests, 9);
    assert_int_equal(M(s)->errors[CLS_503], 5);
    assert_int_equal(M(s)->outcomes[OUT_OK], 4);
    assert_int_equal(draws.next, 9); /* one draw per execution of db, none for api */
    sim_destroy(s);
}

/* ---- the queue ---- */

/* The queue grows past its first 1,024 places and stays FIFO. Arrivals
 * every 1 ms from 1 ms to 2 s (2,000) on one worker taking 10 ms each: the
 * k-th starts when the (k-1)-th ends, at 1 + 10(k - 1) ms, and answers at
 * 1 + 10k ms, 9k + 1 ms after it arrived; about 1,800 wait at the peak.
 * Latencies run from 10 ms to 18,001 ms and sum to 9 · 2000 · 2001 / 2 +
 * 2000 = 18,011,000 ms. */
static void the_queue_grows_and_stays_fifo(void **state)
{
    (void)state;
    const char *text = "[run]\nduration = 25s\n[load]\narrival = uniform\nrate = 1000/s\n"
                       "[phase quiet]\nstart = 2000500us\nend = 25s\nrate = x0\n"
                       "[server]\nworkers = 1\nservice = const(10ms)\n";
    struct sim *s = run_text(text, NULL, 0);
    assert_int_equal(M(s)->requests, 2000);
    assert_int_equal(M(s)->outcomes[OUT_OK], 2000);
    assert_true(M(s)->lat_all.min == 10 * RS_MS && M(s)->lat_all.max == 18001 * RS_MS);
    assert_true(M(s)->lat_all.sum == 18011000.0 * RS_MS);
    sim_destroy(s);
}

/* ---- the idempotency-key store ---- */

/* "Work dropped before it started frees the key" (docs/guide.md, Idempotency and
 * duplicates). Two keyed charges at 0.1 and 0.2 s on one worker (1 s
 * each); the inner layer gives each call 300 ms and propagates it, the
 * outer one retries `deadline` after 1 s. A starts at once; B waits. At
 * 0.4 and 0.5 s the inner calls end `deadline`; at 1.1 s A completes
 * (its key stored, ok) and B, expired, is dropped unserved, freeing its
 * key. A's retry at 1.4 s gets A's stored answer replayed (ok, no new
 * charge); B's at 1.5 s finds no key and executes: 2 charges, 3
 * completions, no 409; B's second call ends `deadline` at 1.8 s too,
 * and B is `exhausted`. */
static void a_dropped_execution_frees_its_key(void **state)
{
    (void)state;
    const char *text = "[run]\nduration = 5s\n[load]\narrival = uniform\nrate = 10/s\n"
                       "idempotent = false\nkey = true\n"
                       "[phase quiet]\nstart = 250ms\nend = 5s\nrate = x0\n"
                       "[server]\nworkers = 1\nservice = const(1s)\ndrop_expired = true\n"
                       "dedup = true\n"
                       "[layer app]\nattempts = 2\nretry_on = deadline 409\nbackoff = constant\n"
                       "base = 1s\n"
                       "[layer sidecar]\ndeadline = 300ms\npropagate_deadline = true\n";
    struct sim *s = run_text(text, NULL, 0);
    assert_int_equal(M(s)->requests, 2);
    assert_int_equal(M(s)->dropped, 1);
    assert_int_equal(M(s)->errors[CLS_409], 0);
    assert_int_equal(M(s)->side_effects, 2);
    assert_int_equal(M(s)->server_completions, 3);
    assert_int_equal(M(s)->outcomes[OUT_OK], 1);
    assert_int_equal(M(s)->outcomes[OUT_EXHAUSTED], 1); /* its two attempts ended `deadline` */
    sim_destroy(s);
}

/* ---- executions ---- */

/* An execution does its local work, then each entry of `calls` in order,
 * then service_after (docs/guide.md, Service graphs): api (1 ms) calls auth
 * (2 ms), then db (3 ms), then works 4 ms more: every request answers
 * after exactly 10 ms, and api makes 2 calls for each of the 9. */
static void calls_run_in_order_then_the_work_after(void **state)
{
    (void)state;
    const char *text = ONE_PER_SECOND
        "[service api]\nworkers = 1\nservice = const(1ms)\ncalls = auth db\n"
        "service_after = const(4ms)\n"
        "[service auth]\nworkers = 1\nservice = const(2ms)\n"
        "[service db]\nworkers = 1\nservice = const(3ms)\n";
    struct sim *s = run_text(text, NULL, 0);
    struct sim_service_row api;
    assert_int_equal(M(s)->outcomes[OUT_OK], 9);
    assert_true(M(s)->lat_all.min == 10 * RS_MS && M(s)->lat_all.max == 10 * RS_MS);
    sim_service_totals(s, 0, &api);
    assert_int_equal(api.dep_calls, 18);
    sim_destroy(s);

    /* Without calls, the work after follows the local work at once: 1 ms
     * then 4 ms, 5 ms in all. */
    const char *alone[] = {"service.api.calls=none"};
    s = run_text(text, alone, 1);
    assert_int_equal(M(s)->outcomes[OUT_OK], 9);
    assert_true(M(s)->lat_all.min == 5 * RS_MS && M(s)->lat_all.max == 5 * RS_MS);
    sim_destroy(s);
}

/* ---- cancellation ---- */

/* A cancellation stops a running execution where the service says
 * cancel_running, also one waiting on a call (docs/guide.md, Hedged requests and
 * cancellation): its worker is freed at once, and, since it was waiting,
 * not working, its working level does not drop. api works 10 ms, then
 * calls db directly (500 ms); the client abandons each attempt after
 * 100 ms and cancels it, which stops api's execution: 9 requests hold
 * api's worker 100 ms each (busy 0.9 s / 30 s) and work 10 ms (0.09 s /
 * 30 s); db, not cancelled (no layer on its edge), serves all 9 for
 * nobody. Without cancel_running api's worker is held until db answers,
 * 510 ms, and api's 9 late answers are wasted. */
static void cancel_running_stops_an_execution_waiting_on_a_call(void **state)
{
    (void)state;
    const char *text = ONE_PER_SECOND
        "[service api]\nworkers = 1\nservice = const(10ms)\ncalls = db\ncancel_running = true\n"
        "[service db]\nworkers = 1\nservice = const(500ms)\n"
        "[layer app]\nto = api\ntimeout = 100ms\ncancel = on-abandon\n";
    struct sim *s = run_text(text, NULL, 0);
    struct sim_service_row api, db;
    assert_int_equal(M(s)->requests, 9);
    assert_int_equal(M(s)->outcomes[OUT_EXHAUSTED], 9);
    assert_int_equal(M(s)->cancelled, 9);
    assert_int_equal(M(s)->cancelled_before_start, 0);
    sim_service_totals(s, 0, &api);
    sim_service_totals(s, 1, &db);
    assert_true(fabs(api.busy - 0.9 / 30) < 1e-12 && fabs(api.working - 0.09 / 30) < 1e-12);
    assert_true(api.completed == 0 && api.wasted == 0);
    assert_true(db.completed == 9 && db.wasted == 9);
    sim_destroy(s);

    const char *keep[] = {"service.api.cancel_running=false"};
    s = run_text(text, keep, 1);
    assert_int_equal(M(s)->cancelled, 0);
    sim_service_totals(s, 0, &api);
    assert_true(fabs(api.busy - 9 * 0.51 / 30) < 1e-12 && fabs(api.working - 0.09 / 30) < 1e-12);
    assert_true(api.completed == 9 && api.wasted == 9);
    sim_destroy(s);
}

/* A job answered early because one of its calls failed cancels the calls
 * still out whose layer cancels; the service is their caller, so no hop
 * (docs/guide.md, Hedged requests and cancellation). api calls db*2 through the
 * layer `pool` (cancel = on-abandon, one attempt); db's two replicas are
 * taken in turn, so each request's first call runs on db#1 (500 ms) and
 * its second meets db#2's outage: 503 at once. api answers 503 and cancels
 * the first call, which stops its execution on db#1 (cancel_running):
 * `cancelled` counts 9 calls ended and 9 executions stopped; db completes
 * none. Without cancel on `pool`, db#1 completes all 9, and none is
 * wasted: `pool`'s call, left running, still waits for it. */
static void a_failed_call_cancels_its_siblings(void **state)
{
    (void)state;
    const char *text = ONE_PER_SECOND
        "[service api]\nworkers = 1\nservice = const(1ms)\ncalls = db*2\n"
        "[service db]\nreplicas = 2\nbalancer = round-robin\nworkers = 1\n"
        "service = const(500ms)\ncancel_running = true\n"
        "[phase down]\nstart = 0\nend = 30s\ntarget = db#2\noutage = error\n"
        "[layer app]\nto = api\n"
        "[layer pool]\nfrom = api\nto = db\ncancel = on-abandon\n";
    struct sim *s = run_text(text, NULL, 0);
    struct sim_service_row db;
    assert_int_equal(M(s)->requests, 9);
    assert_int_equal(M(s)->errors[CLS_503], 18); /* db#2's, and api's passing it on */
    assert_int_equal(M(s)->cancelled, 18); /* 9 calls of `pool` ended, 9 executions stopped */
    sim_service_totals(s, 1, &db);
    assert_true(db.arrivals == 18 && db.started == 9 && db.completed == 0 && db.wasted == 0);
    sim_destroy(s);

    const char *keep[] = {"layer.pool.cancel=none"};
    s = run_text(text, keep, 1);
    assert_int_equal(M(s)->cancelled, 0);
    sim_service_totals(s, 1, &db);
    assert_true(db.completed == 9 && db.wasted == 0);
    sim_destroy(s);
}

/* The same when a stopped execution has a whole fan-out out, the most a
 * `calls` entry may have (*64): the client abandons and cancels each
 * attempt after 100 ms, api (cancel_running) stops, and its 64 calls of
 * `pool` are cancelled, stopping their 64 executions on db: per request
 * 1 + 64 + 64 cancelled, 9 × 129 = 1161 in all, and db completes none. */
static void a_stopped_execution_cancels_its_whole_fan_out(void **state)
{
    (void)state;
    const char *text = ONE_PER_SECOND
        "[service api]\nworkers = 1\nservice = const(1ms)\ncalls = db*64\ncancel_running = true\n"
        "[service db]\nworkers = 64\nservice = const(500ms)\ncancel_running = true\n"
        "[layer app]\nto = api\ntimeout = 100ms\ncancel = on-abandon\n"
        "[layer pool]\nfrom = api\nto = db\ncancel = on-abandon\n";
    struct sim *s = run_text(text, NULL, 0);
    struct sim_service_row db;
    assert_int_equal(M(s)->requests, 9);
    assert_int_equal(M(s)->cancelled, 9 * 129);
    sim_service_totals(s, 1, &db);
    assert_true(db.started == 9 * 64 && db.completed == 0 && db.wasted == 0);
    sim_destroy(s);
}

/* ---- hedging ---- */

/* "A hedge prefers a replica no other copy of its call reached" (docs/guide.md,
 * Hedged requests and cancellation), also one that turned its copy away
 * at once. api's replica 1 answers 503 at once (outage = error) and so
 * holds no work: least-outstanding sends it every first copy from the 2nd
 * request on (replica 2 still holds the previous request's 1.5 s job).
 * The 503 sends the hedge at once (hedge_on); the balancer would pick
 * replica 1 again, but its first copy reached it, so the hedge goes to
 * replica 2 and every request ends ok after 1.5 s, with 9 503s. */
static void a_hedge_avoids_a_replica_that_turned_its_copy_away(void **state)
{
    (void)state;
    const char *text = ONE_PER_SECOND
        "[service api]\nreplicas = 2\nbalancer = least-outstanding\nworkers = 10\n"
        "service = const(1500ms)\n"
        "[phase down]\nstart = 0\nend = 30s\ntarget = api#1\noutage = error\n"
        "[layer app]\nto = api\nattempts = 2\nhedge = fixed\nhedge_delay = 10s\n"
        "hedge_on = 503\nretry_on = none\n";
    struct sim *s = run_text(text, NULL, 0);
    assert_int_equal(M(s)->requests, 9);
    assert_int_equal(M(s)->outcomes[OUT_OK], 9);
    assert_int_equal(M(s)->errors[CLS_503], 9);
    assert_true(M(s)->lat_all.min == 1500 * RS_MS && M(s)->lat_all.max == 1500 * RS_MS);
    sim_destroy(s);
}

/* ---- services.csv rows ---- */

/* sim_service_row (sim.h) answers for replica 0 (the service's total) or 1
 * … replicas of a service that exists, over a bucket the run has, and only
 * for a scenario with services; anything else is false. Here: one service
 * of 2 replicas, arrivals at 1 s and 2 s of a 3 s run in 1 s buckets (3
 * buckets), so bucket 1 holds one arrival and bucket 2 the other. */
static void service_rows_exist_only_within_bounds(void **state)
{
    (void)state;
    const char *text = "[run]\nduration = 3s\n[load]\narrival = uniform\nrate = 1/s\n"
                       "[service api]\nreplicas = 2\nbalancer = round-robin\nworkers = 1\n"
                       "service = const(1ms)\n";
    struct sim *s = run_text(text, NULL, 0);
    struct sim_service_row r;
    assert_int_equal(M(s)->nbuckets, 3);
    assert_true(sim_service_row(s, 0, 0, 1, &r));
    assert_int_equal(r.arrivals, 1);
    assert_true(sim_service_row(s, 0, 0, 2, &r)); /* the last bucket */
    assert_int_equal(r.arrivals, 1);
    assert_true(sim_service_row(s, 0, 2, 0, &r)); /* the last replica */
    assert_false(sim_service_row(s, 0, 3, 0, &r)); /* replica 3 of 2 */
    assert_false(sim_service_row(s, 0, 0, 3, &r)); /* bucket 3 of 0 … 2 */
    assert_false(sim_service_row(s, 1, 0, 0, &r)); /* service 1 of 0 … 0 */
    sim_destroy(s);

    /* A lone [server] is not a graph: no services.csv, no rows. */
    s = run_text(ONE_PER_SECOND "[server]\nworkers = 1\nservice = const(1ms)\n", NULL, 0);
    assert_false(sim_service_row(s, 0, 0, 0, &r));
    sim_destroy(s);
}

/* A service's levels over the run (summary.csv's <service>_utilization)
 * average over the measured time, a last bucket shorter than the others
 * counted at its own length: a 2.5 s run in 1 s buckets (the third 0.5 s
 * long), arrivals at 1 s and 2 s held the one worker 200 ms each, so busy
 * averages 0.4 s / 2.5 s = 0.16 (not 0.4 s / 2 s, nor over 3 s). */
static void service_totals_over_a_short_last_bucket(void **state)
{
    (void)state;
    const char *text = "[run]\nduration = 2500ms\n[load]\narrival = uniform\nrate = 1/s\n"
                       "[service api]\nworkers = 1\nservice = const(200ms)\n";
    struct sim *s = run_text(text, NULL, 0);
    struct sim_service_row r;
    assert_int_equal(M(s)->nbuckets, 3);
    sim_service_totals(s, 0, &r);
    assert_int_equal(r.completed, 2);
    assert_true(fabs(r.busy - 0.16) < 1e-12 && fabs(r.working - 0.16) < 1e-12);
    assert_true(r.queue_len == 0 && r.workers == 1);
    sim_destroy(s);
}

/* ---- the conservation check ---- */

/* service_check names the replica whose counts do not add up, from 1 as
 * scenarios number them (`target = api#2`). A clean run passes; then one
 * arrival too many on api's second replica (and, separately, one start
 * too many on its first) is reported for that replica. */
static void conservation_names_the_broken_replica(void **state)
{
    (void)state;
    const char *text = "[run]\nduration = 3s\n[load]\narrival = uniform\nrate = 1/s\n"
                       "[service api]\nreplicas = 2\nbalancer = round-robin\nworkers = 1\n"
                       "service = const(1ms)\n";
    struct sim *s = run_text(text, NULL, 0);
    char err[256];
    assert_int_equal(service_check(s, err, sizeof err), 0);
    s->services.reps[1].n_arrivals++;
    assert_int_equal(service_check(s, err, sizeof err), -1);
    assert_string_equal(err, "internal error: service api replica 2: arrivals != turned away + jobs");
    s->services.reps[1].n_arrivals--;
    s->services.reps[0].n_started++;
    s->services.reps[0].n_completed++; /* started = completed + stopped + busy still holds */
    assert_int_equal(service_check(s, err, sizeof err), -1);
    assert_string_equal(err, "internal error: service api replica 1: jobs != dropped + started + queued");
    sim_destroy(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(injected_error_slices_are_half_open),
        cmocka_unit_test(only_executions_with_errors_draw),
        cmocka_unit_test(calls_run_in_order_then_the_work_after),
        cmocka_unit_test(cancel_running_stops_an_execution_waiting_on_a_call),
        cmocka_unit_test(a_failed_call_cancels_its_siblings),
        cmocka_unit_test(a_stopped_execution_cancels_its_whole_fan_out),
        cmocka_unit_test(a_hedge_avoids_a_replica_that_turned_its_copy_away),
        cmocka_unit_test(service_rows_exist_only_within_bounds),
        cmocka_unit_test(service_totals_over_a_short_last_bucket),
        cmocka_unit_test(the_queue_grows_and_stays_fifo),
        cmocka_unit_test(a_dropped_execution_frees_its_key),
        cmocka_unit_test(conservation_names_the_broken_replica),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
