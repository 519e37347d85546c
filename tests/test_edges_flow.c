/*
 * Edges of the request flow (layer.c, load.c, sim.c): small scenarios, each
 * at a boundary or a branch a mechanical mutant (scripts/mutagen.py) moves
 * and no other test pinned — a deadline reached at the very instant, a
 * Retry-After of zero, a trace row at a phase boundary, a hedge that lost,
 * a herd's checkpoints, a live limit met exactly — with the numbers worked
 * out by hand (for SRE's random rejections, the seed's count stated).
 */
#define _POSIX_C_SOURCE 200809L /* mkdtemp, in rs_scratch.h */
#include <string.h>

#include "rs_scratch.h"
#include "rs_test.h"
#include "simctx.h" /* the request pool's object size (what --max-memory counts) */

#define M(s) sim_metrics(s)

/* Creates the run of text (replication 0) without running it. */
static struct sim *create_text(const char *text)
{
    struct scenario sc;
    load_or_fail(&sc, text, NULL, 0);
    char err[512];
    struct sim *s = trace_sim_create(&sc, 0, err, sizeof err);
    if (s == NULL)
        fail_msg("sim_create: %s", err);
    return s;
}

static void run_created(struct sim *s)
{
    char err[512];
    if (sim_run(s, NULL, NULL, err, sizeof err) != 0)
        fail_msg("sim_run: %s", err);
}

/* One request every second from 1 s to 9 s (the quiet phase from 9.5 s
 * stops arrivals), as in test_semantics.c. */
#define ONE_PER_SECOND                                                                             \
    "[run]\nduration = 30s\n[load]\narrival = uniform\nrate = 1/s\n"                               \
    "[phase quiet]\nstart = 9500ms\nend = 30s\nrate = x0\n"

/* docs/scenarios.md: with `retry_after = honor` "a Retry-After replaces the backoff
 * delay". A Retry-After of 0 is a Retry-After too: the retries go at once
 * and each counts as a Retry-After wait (2 per request, 18), where the
 * 100 ms backoff would make every request last 200 ms. */
static void retry_after_zero_replaces_the_backoff(void **state)
{
    (void)state;
    const char *text = ONE_PER_SECOND
        "[phase down]\nstart = 0\nend = 30s\noutage = error\nretry_after = 0\n"
        "[server]\nworkers = 1\nservice = const(1ms)\n"
        "[layer app]\nattempts = 3\nbackoff = constant\nbase = 100ms\nretry_after = honor\n";
    struct sim *s = run_text(text, NULL, 0);
    assert_true(M(s)->outcomes[OUT_EXHAUSTED] == 9);
    assert_true(M(s)->retry_after_waits == 18);
    assert_true(M(s)->lat_all.max == 0);
    sim_destroy(s);
}

/* A call whose propagated deadline has already come when it starts makes
 * no attempt: the outer layer's 100 ms deadline is carried down a 100 ms
 * hop, so the sidecar's call starts exactly at its deadline and ends
 * `deadline` at once; nothing reaches the server. */
static void call_starting_at_its_deadline_makes_no_attempt(void **state)
{
    (void)state;
    const char *text = ONE_PER_SECOND
        "[server]\nworkers = 1\nservice = const(1ms)\n"
        "[layer app]\nattempts = 1\ndeadline = 100ms\npropagate_deadline = true\n"
        "request_latency = const(100ms)\n"
        "[layer sidecar]\nattempts = 1\n";
    struct sim *s = run_text(text, NULL, 0);
    assert_true(M(s)->outcomes[OUT_DEADLINE] == 9);
    assert_true(M(s)->server_arrivals == 0);
    assert_true(M(s)->lat_all.min == 100 * RS_MS && M(s)->lat_all.max == 100 * RS_MS);
    sim_destroy(s);
}

/* Runs `shape` driven by a trace of rates (csv), and by [load] rate =
 * 100/s with `plain_extra` added, and checks that every 1 s bucket of the
 * 15 s run offers the same count: the same arrivals. */
static void same_arrivals(const char *csv, const char *shape, const char *plain_extra)
{
    struct scratch scr;
    assert_int_equal(scratch_make(&scr, "edges", "rates.csv"), 0);
    scratch_write(&scr, csv, strlen(csv));
    char traced[1024], plain[1024];
    snprintf(traced, sizeof traced, "[run]\nduration = 15s\nseed = 3\n[load]\ntrace = %s\n%s",
             scr.path, shape);
    snprintf(plain, sizeof plain, "[run]\nduration = 15s\nseed = 3\n[load]\nrate = 100/s\n%s%s",
             shape, plain_extra);
    struct sim *a = run_text(traced, NULL, 0), *b = run_text(plain, NULL, 0);
    scratch_remove(&scr);
    print_message("%llu requests with the trace, %llu without\n",
                  (unsigned long long)M(a)->requests, (unsigned long long)M(b)->requests);
    assert_true(M(a)->requests == M(b)->requests && M(a)->requests > 0);
    assert_true(M(a)->nbuckets == 15 && M(b)->nbuckets == 15);
    for (size_t i = 0; i < 15; i++)
        assert_true(M(a)->b[i].offered == M(b)->b[i].offered);
    sim_destroy(a);
    sim_destroy(b);
}

/* docs/guide.md (traces): "The trace gives the base rate in place of [load]
 * rate", and (load shapes) candidates come at the rate's upper bound over
 * the current segment, "between two phase boundaries or trace rows". So a
 * trace of rows that all say 100/s is [load] rate = 100/s, arrival for
 * arrival, under a ramp (50/s to 200/s, 5 s to 10 s) whose rate replaces
 * it:
 * - a row at the ramp's start (5 s) is not yet read at the phase's
 *   boundary, and the bound there is the ramp's larger end up to the next
 *   boundary (200/s at 10 s), not its rate at that instant; reading the
 *   row changes nothing;
 * - a row inside the ramp (rows at 0 and 7 s) ends a segment as a phase
 *   boundary there does: the bound is 110/s from 5 to 7 s, then 200/s. */
static void trace_rows_are_segment_boundaries(void **state)
{
    (void)state;
    const char *shape = "[phase up]\nstart = 5s\nend = 10s\nrate = ramp(50/s, 200/s)\n"
                        "[server]\nworkers = 100000\nservice = const(1ms)\n";
    same_arrivals("t,rate\n0,100\n5,100\n", shape, "");
    same_arrivals("t,rate\n0,100\n7,100\n", shape,
                  "[phase mark]\nstart = 7s\nend = 30s\nrate = x1\n");
}

/* docs/guide.md (traces): "phases' factors, absolute rates and shape apply on
 * top" of a trace of rates, from the phase's start: a quiet phase (x0)
 * from 5 s stops the arrivals of a one-row trace at 100/s then, as it
 * stops [load] rate = 100/s, arrival for arrival. */
static void phase_factor_applies_to_a_trace(void **state)
{
    (void)state;
    same_arrivals("t,rate\n0,100\n",
                  "[phase stop]\nstart = 5s\nend = 15s\nrate = x0\n"
                  "[server]\nworkers = 100000\nservice = const(1ms)\n", "");
}

/* docs/guide.md (traces): "Errors. The whole trace is read once when the scenario
 * is loaded" -- and read again, a row at a time, by the run. A row that
 * went bad in between ends the trace and the run reports it: the file is
 * valid when loaded, then its second row is overwritten with a bad rate
 * before the run opens it. */
static void trace_that_changed_is_reported(void **state)
{
    (void)state;
    struct scratch scr;
    struct scenario sc;
    scratch_trace_changed(&scr, "edges", "t,rate\n0,10\n1,10\n2,10\n", "t,rate\n0,10\n1,x\n", &sc);
    char err[512];
    struct sim *s = trace_sim_create(&sc, 0, err, sizeof err);
    if (s == NULL)
        fail_msg("sim_create: %s", err);
    err[0] = '\0';
    assert_int_equal(sim_run(s, NULL, NULL, err, sizeof err), -1);
    print_message("%s\n", err);
    assert_non_null(strstr(err, "the trace changed during the run"));
    sim_destroy(s);
    scratch_remove(&scr);
}

/* docs/scenarios.md: in a closed loop a phase's rate factor divides think times; a
 * phase is active on [start, end). One client thinks 1 s before its first
 * request (the factor is 1 until the phase's event at 0 s), then 500 ms
 * under x2 until 2 s, then 1 s again: requests at 1, 1.501, 2.002 (its
 * think began under x2) and 3.003 s, each served in 1 ms, in a 4 s run. */
static void closed_loop_factor_divides_think_times(void **state)
{
    (void)state;
    const char *text = "[run]\nduration = 4s\n[load]\nmodel = closed\nclients = 1\n"
                       "think = const(1s)\n[phase fast]\nstart = 0\nend = 2s\nrate = x2\n"
                       "[server]\nworkers = 1\nservice = const(1ms)\n";
    struct sim *s = run_text(text, NULL, 0);
    assert_true(M(s)->requests == 4 && M(s)->outcomes[OUT_OK] == 4);
    sim_destroy(s);
}

/* What an ended run still holds in flight (sim_live_bytes, what the live
 * limit compares) is what is pending: an open loop at rate 0 schedules no
 * arrival, and a trace's row at the run's end (or after it) is not
 * scheduled. Each run here has nothing left once its requests ended. */
static void nothing_pending_after_the_last_arrival(void **state)
{
    (void)state;
    /* the quiet phase from 9.5 s cancels the arrival due at 10 s: 19
     * events, 9 arrivals, 9 completions and the phase's start */
    struct sim *s = run_text(ONE_PER_SECOND "[server]\nworkers = 1\nservice = const(1ms)\n",
                             NULL, 0);
    assert_true(M(s)->requests == 9 && sim_live_bytes(s) == 0.0);
    assert_true(M(s)->events == 19 && sim_in_flight(s) == 0);
    sim_destroy(s);

    /* timestamps at 0.5 s and at 1 s, the run's end: one request */
    struct scratch scr;
    assert_int_equal(scratch_make(&scr, "edges", "times.csv"), 0);
    const char *csv = "t\n0.5\n1\n";
    scratch_write(&scr, csv, strlen(csv));
    char text[1024];
    snprintf(text, sizeof text,
             "[run]\nduration = 1s\n[load]\ntrace = %s\n"
             "[server]\nworkers = 1\nservice = const(1ms)\n",
             scr.path);
    s = run_text(text, NULL, 0);
    scratch_remove(&scr);
    assert_true(M(s)->requests == 1 && sim_live_bytes(s) == 0.0);
    sim_destroy(s);
}

/* sim.c: from 65,536 clients on, each event prefetches what the next one
 * will touch: "Only hints: nothing changes". A run that prefetches, with
 * a dependency called without a layer (db's jobs answer a job, not a
 * layer's call; the next arrival, 100 ms on, finds db's completion next),
 * gives the 9 requests their 2 + 150 ms, as without. */
static void prefetching_run_changes_nothing(void **state)
{
    (void)state;
    const char *text =
        "[run]\nduration = 2s\n[load]\narrival = uniform\nrate = 10/s\n"
        "[phase quiet]\nstart = 950ms\nend = 2s\nrate = x0\n"
        "[service api]\nworkers = 10\nservice = const(2ms)\ncalls = db\n"
        "[service db]\nworkers = 10\nservice = const(150ms)\n"
        "[layer app]\nfrom = client\nto = api\nattempts = 2\ntimeout = 1s\n";
    const char *many[] = {"load.clients=65536"};
    for (size_t n = 0; n <= 1; n++) {
        struct sim *s = run_text(text, many, n);
        assert_true(M(s)->outcomes[OUT_OK] == 9);
        assert_true(M(s)->lat_all.min == 152 * RS_MS && M(s)->lat_all.max == 152 * RS_MS);
        sim_destroy(s);
    }
}

/* docs/experiments.md: "[herd] at = 30s makes every client send a request at that
 * instant". An open loop of 10 clients whose rate is 0 throughout: the
 * herds at 1 and 2 s make exactly 10 requests each. A closed loop of 10
 * clients that think 10 s: the herd at 1 s cancels every think, 10
 * requests (done in 1 ms; their next thinks end after the run). */
static void herd_sends_one_request_per_client(void **state)
{
    (void)state;
    struct sim *s = run_text("[run]\nduration = 5s\n[load]\nclients = 10\nrate = 1/s\n"
                             "[phase none]\nstart = 0\nend = 5s\nrate = x0\n"
                             "[herd]\nat = 1s\nat = 2s\n"
                             "[server]\nworkers = 10\nservice = const(1ms)\n", NULL, 0);
    assert_true(M(s)->requests == 20 && M(s)->outcomes[OUT_OK] == 20);
    sim_destroy(s);
    s = run_text("[run]\nduration = 5s\n[load]\nmodel = closed\nclients = 10\nthink = const(10s)\n"
                 "[herd]\nat = 1s\n[server]\nworkers = 10\nservice = const(1ms)\n", NULL, 0);
    assert_true(M(s)->requests == 10 && M(s)->outcomes[OUT_OK] == 10);
    sim_destroy(s);
}

static volatile sig_atomic_t herd_stop;

/* Asks the run to stop at its first checkpoint from 1 s on. */
static void stop_from_1s(void *user, rs_time now, rs_time duration, uint64_t events)
{
    (void)user;
    (void)duration;
    (void)events;
    if (now >= RS_S)
        herd_stop = 1;
}

/* docs/scenarios.md (limits): the stop flag and the memory limit are "checked every
 * 1,024 events and every 1,024 clients of a herd", and a run stopped
 * inside a herd ends with the herd cut short. A herd of 2,000 clients at
 * 1 s, with a stop asked at the first checkpoint from 1 s on: the clients
 * 0 ... 1,022 send their requests, the checkpoint before client 1,023
 * stops the run: 1,023 requests, incomplete. */
static void herd_checkpoint_every_1024_clients(void **state)
{
    (void)state;
    struct sim *s = create_text("[run]\nduration = 5s\n[load]\nclients = 2000\nrate = 1/s\n"
                                "[phase none]\nstart = 0\nend = 5s\nrate = x0\n"
                                "[herd]\nat = 1s\n[server]\nworkers = 10\nservice = const(1ms)\n");
    herd_stop = 0;
    sim_set_stop(s, &herd_stop);
    char err[512];
    assert_int_equal(sim_run(s, stop_from_1s, NULL, err, sizeof err), 0);
    assert_false(sim_complete(s));
    assert_true(M(s)->requests == 1023);
    assert_true(sim_in_flight(s) == 1023); /* summary.csv's in_flight: none had ended */
    sim_destroy(s);
}

/* docs/scenarios.md: a phase is active on [start, end); with `target = LAYER` its
 * `latency` is added to every crossing of the hop below the layer, each
 * way. A hop phase from 2 to 4 s slows the requests at 2 and 3 s by
 * 2 x 100 ms (201 ms); the one at 4 s, when the phase has ended, and the
 * others take their 1 ms. */
static void hop_phase_ends_at_its_end(void **state)
{
    (void)state;
    const char *text = ONE_PER_SECOND
        "[phase slow]\nstart = 2s\nend = 4s\ntarget = app\nlatency = const(100ms)\n"
        "[server]\nworkers = 1\nservice = const(1ms)\n"
        "[layer app]\nattempts = 1\n";
    struct sim *s = run_text(text, NULL, 0);
    assert_true(M(s)->outcomes[OUT_OK] == 9);
    assert_true(M(s)->lat_all.min == 1 * RS_MS && M(s)->lat_all.max == 201 * RS_MS);
    assert_true(M(s)->lat_all.sum == (double)(2 * 201 + 7 * 1) * (double)RS_MS);
    sim_destroy(s);
}

/* sim.c: each bucket records a layer's breakers not closed as they are at
 * the bucket's end, before the first event at or after it. Buckets are
 * [start, end): requests every 500 ms, ok until the outage at 1.5 s; the
 * one at exactly 2 s fails a second time in a row, which trips the breaker
 * (breaker_failures = 1), and belongs to [2 s, 3 s). So [1 s, 2 s) ends
 * closed (share 0) and [2 s, 3 s) open (1); the 5 requests from 2.5 s on
 * are short-circuited. */
static void breaker_share_sampled_at_the_bucket_end(void **state)
{
    (void)state;
    const char *text = "[run]\nduration = 30s\n[load]\narrival = uniform\nrate = 2/s\n"
        "[phase quiet]\nstart = 4750ms\nend = 30s\nrate = x0\n"
        "[phase down]\nstart = 1500ms\nend = 30s\noutage = error\n"
        "[server]\nworkers = 1\nservice = const(1ms)\n"
        "[layer app]\nattempts = 1\nretry_on = none\n"
        "breaker = consecutive\nbreaker_scope = shared\nbreaker_failures = 1\n";
    struct sim *s = run_text(text, NULL, 0);
    const struct metrics *m = M(s);
    assert_true(m->outcomes[OUT_OK] == 2 && m->outcomes[OUT_FAILED] == 2);
    assert_true(m->outcomes[OUT_BREAKER] == 5);
    assert_true(m->nlayers == 1 && m->bucket_ns == RS_S);
    assert_true(m->lb[0].open_share == 0.0 && m->lb[1].open_share == 0.0);
    assert_true(m->lb[2].open_share == 1.0 && m->lb[3].open_share == 1.0);
    assert_true(m->lb[1].transitions == 0 && m->lb[2].transitions == 1);
    sim_destroy(s);
}

/* sim.c: the phase boundaries are every start and end inside the run,
 * sorted and distinct, one event each (summary.csv's `events`). Two quiet
 * phases, [0, 5 s) and [5 s, 10 s), in a 10 s run with nothing else to do
 * (its first arrival, due at 1 s, is cancelled at 0): boundaries at 0 and
 * 5 s, 2 events. */
static void shared_phase_boundary_is_one_event(void **state)
{
    (void)state;
    struct sim *s = run_text("[run]\nduration = 10s\n[load]\narrival = uniform\nrate = 1/s\n"
                             "[phase a]\nstart = 0\nend = 5s\nrate = x0\n"
                             "[phase b]\nstart = 5s\nend = 10s\nrate = x0\n"
                             "[server]\nworkers = 1\nservice = const(1ms)\n", NULL, 0);
    assert_true(M(s)->requests == 0);
    assert_true(M(s)->events == 2);
    sim_destroy(s);
}

/* docs/experiments.md (compare): "no phase" when there is nothing to recover from --
 * summary.csv's recovered is -1 for a run without phases. */
static void no_phase_nothing_to_recover_from(void **state)
{
    (void)state;
    struct sim *s = run_text("[run]\nduration = 5s\n[load]\narrival = uniform\nrate = 1/s\n"
                             "[server]\nworkers = 1\nservice = const(1ms)\n", NULL, 0);
    assert_true(M(s)->outcomes[OUT_OK] == 4 && sim_complete(s));
    assert_int_equal(recovered(s), -1);
    sim_destroy(s);
}

/* docs/scenarios.md (limits): events at one instant are limited to 2,000,000 + 64 x
 * (clients + a trace's largest burst): a run may have exactly that many
 * after the first. A herd of 640 clients at 1 s against instant 503s,
 * retried at once through two layers (58 x 55 = 3,190 attempts a request,
 * 3,189 of them from a retry event): 640 x 3,189 = 2,040,960 events after
 * the herd's own, exactly 2,000,000 + 64 x 640. The run completes, every
 * request `exhausted`. */
static void events_at_one_instant_up_to_the_limit(void **state)
{
    (void)state;
    const char *text =
        "[run]\nduration = 2s\n[load]\nclients = 640\nrate = 1/s\n"
        "[phase none]\nstart = 0\nend = 2s\nrate = x0\n[herd]\nat = 1s\n"
        "[phase down]\nstart = 0\nend = 2s\noutage = error\n"
        "[server]\nworkers = 1\nservice = const(1ms)\n"
        "[layer app]\nattempts = 58\n[layer sidecar]\nattempts = 55\n";
    struct sim *s = run_text(text, NULL, 0);
    assert_true(M(s)->outcomes[OUT_EXHAUSTED] == 640);
    assert_true(M(s)->server_arrivals == 640ull * 3190);
    assert_true(M(s)->events == 1 + 1 + 640ull * 3189); /* the phases' start, the herd */
    sim_destroy(s);
}

/* ... and only events at one instant count: a run of 2.1 million events,
 * no two in a row at the same instant (an arrival every 952 ns, each
 * served in 100 ns), runs to its end. */
static void events_at_distinct_instants_are_not_limited(void **state)
{
    (void)state;
    const char *text =
        "[run]\nduration = 1s\n[load]\nclients = 1\narrival = uniform\nrate = 1050000/s\n"
        "[server]\nworkers = 1\nservice = const(100ns)\n";
    struct sim *s = run_text(text, NULL, 0);
    assert_true(M(s)->events > 2000064 && sim_complete(s));
    assert_true(M(s)->outcomes[OUT_OK] == M(s)->requests);
    sim_destroy(s);
}

/* Each request in flight holds one attempt counter per layer and one for
 * the server, plus the key with caches and one per hedged layer
 * (simctx.h); the live memory the run's limit compares counts requests at
 * that size: a plain one-layer run's are request_size(1, no key, no
 * hedge) bytes, a cached one's have the key's slot too. */
static void request_objects_hold_their_counters(void **state)
{
    (void)state;
    struct sim *s = create_text(ONE_PER_SECOND "[server]\nworkers = 1\nservice = const(1ms)\n");
    assert_int_equal(s->requests.size, request_size(1, false, 0));
    assert_int_equal(s->requests.size, sizeof(struct request) + 2 * sizeof(uint64_t));
    sim_destroy(s);
    s = create_text("[run]\nduration = 5s\n[load]\nrate = 1/s\nkeys = 10\n[cache c]\nttl = 1s\n"
                    "[server]\nworkers = 1\nservice = const(1ms)\ncache = c\n");
    assert_int_equal(s->requests.size, request_size(1, true, 0));
    sim_destroy(s);
}

/* docs/hedging.md: Envoy's retry budget covers hedges, each copy one active
 * retry while it is out. A hedge that loses is closed without its answer
 * and gives its place back: each of the 9 requests hedges at 5 ms, the
 * first copy wins at 20 ms, and once the load stops the budget is at its
 * floor again, 1000 retries allowed and none active (991 if each loser
 * kept its place). */
static void losing_hedge_gives_back_its_budget_place(void **state)
{
    (void)state;
    const char *text = ONE_PER_SECOND
        "[server]\nworkers = 2\nservice = const(20ms)\n"
        "[layer app]\nattempts = 2\nhedge = fixed\nhedge_delay = 5ms\n"
        "budget = envoy\nbudget_scope = shared\nbudget_min_concurrency = 1000\n";
    struct sim *s = run_text(text, NULL, 0);
    const struct metrics *m = M(s);
    struct sim_layer_totals t;
    sim_layer_totals(s, 0, &t);
    assert_true(m->outcomes[OUT_OK] == 9 && t.hedges == 9 && t.hedge_wins == 0);
    assert_true(m->lat_all.min == 20 * RS_MS && m->lat_all.max == 20 * RS_MS);
    assert_true(m->lb[(m->nbuckets - 1) * m->nlayers].budget_level == 1000.0);
    /* attempts.csv's levels: the layer's attempts (2 a request), the
     * server's arrivals (2), then app.hedges (1 a request) */
    assert_true(m->att_sum[0] == 18.0 && m->att_sum[1] == 18.0 && m->att_sum[2] == 9.0);
    assert_true(m->att_max[2] == 1);
    sim_destroy(s);
}

/* layer.c: a copy closed without its own answer (a hedge that lost) is
 * reported to the breaker as not failed. A count-window breaker (the last
 * 8 calls, evaluated from 8 on, trips at half of them failed) sees each
 * of the first 3 requests (1-3 s, healthy) as two calls that did not fail:
 * the first copy's ok at 20 ms and the hedge sent at 5 ms that lost. From
 * 3.5 s every request fails at once (503, not retried): the 4th failure
 * (7 s) makes the window S S S S F F F F, half failed, and the breaker
 * trips; the requests at 8 and 9 s are short-circuited. (Counting the
 * losers as nothing, it would trip a request later, with 5 failures.) */
static void losing_hedge_counts_as_not_failed(void **state)
{
    (void)state;
    const char *text = ONE_PER_SECOND
        "[phase down]\nstart = 3500ms\nend = 30s\noutage = error\n"
        "[server]\nworkers = 2\nservice = const(20ms)\n"
        "[layer app]\nattempts = 2\nhedge = fixed\nhedge_delay = 5ms\nretry_on = none\n"
        "breaker = rate\nbreaker_scope = shared\nbreaker_window = 8\nbreaker_min_calls = 8\n"
        "breaker_failure_rate = 0.5\n";
    struct sim *s = run_text(text, NULL, 0);
    struct sim_layer_totals t;
    sim_layer_totals(s, 0, &t);
    assert_true(M(s)->outcomes[OUT_OK] == 3 && t.hedges == 3);
    assert_true(M(s)->outcomes[OUT_FAILED] == 4 && M(s)->outcomes[OUT_BREAKER] == 2);
    assert_true(t.transitions == 1 && t.short_circuited == 2);
    sim_destroy(s);
}

/* docs/guide.md (hedging): the percentile is over the copies answered ok or
 * business "and the copies superseded by a winner (their time so far)" --
 * a business answer wins as an ok one does. Every answer is business here,
 * 50 ms of service behind a 1 ms hop, a request every 100 ms. Requests
 * 1-100 send no hedge (fewer than 100 latencies): 100 latencies of 51 ms,
 * so the 10th percentile is 51 ms. Requests 101-150 hedge at 51 ms, the
 * instant the first copy's answer wins: the hedge is abandoned on the hop
 * and its cancellation, on the same hop, drops it on arrival (50 dropped),
 * and its time so far, 0, joins the window. The refresh after 100 more
 * (50 answers, 50 zeros) puts the 10th percentile at 0, so requests
 * 151-200 hedge 1 ns after the first copy: those hedges reach the server.
 * 100 + 50 + 2 * 50 = 250 server arrivals. */
static void business_winner_supersedes_its_hedges(void **state)
{
    (void)state;
    const char *text =
        "[run]\nduration = 21s\n[load]\narrival = uniform\nrate = 10/s\n"
        "[phase quiet]\nstart = 20050ms\nend = 21s\nrate = x0\n"
        "[server]\nworkers = 100\nservice = const(50ms)\nbusiness = 1\n"
        "[layer app]\nattempts = 2\nhedge = percentile\nhedge_percentile = 10\n"
        "request_latency = const(1ms)\ncancel = on-abandon\n";
    struct sim *s = run_text(text, NULL, 0);
    struct sim_layer_totals t;
    sim_layer_totals(s, 0, &t);
    assert_true(M(s)->outcomes[OUT_BUSINESS] == 200 && t.hedges == 100 && t.hedge_wins == 0);
    assert_true(M(s)->cancelled_before_start == 50);
    assert_true(M(s)->server_arrivals == 250);
    sim_destroy(s);
}

/* docs/breakers.md: before every attempt, the first included, the breaker
 * may short-circuit it, and the call ends at once with outcome `breaker`;
 * on a hedged layer too, where a refusal with no copy out is not a hedge
 * held back. The copies of a hedged call are reported to the breaker as a
 * plain call's attempts are: the requests at 1 and 2 s fail at once (503,
 * not retried, no hedge yet), the second consecutive failure trips the
 * breaker (breaker_failures = 1), and the 7 requests after it end
 * `breaker` at once, without a hedge. */
static void hedged_call_short_circuited_ends(void **state)
{
    (void)state;
    const char *text = ONE_PER_SECOND
        "[phase down]\nstart = 0\nend = 30s\noutage = error\n"
        "[server]\nworkers = 2\nservice = const(20ms)\n"
        "[layer app]\nattempts = 2\nhedge = fixed\nhedge_delay = 5ms\nretry_on = none\n"
        "breaker = consecutive\nbreaker_scope = shared\nbreaker_failures = 1\n";
    struct sim *s = run_text(text, NULL, 0);
    struct sim_layer_totals t;
    sim_layer_totals(s, 0, &t);
    assert_true(M(s)->outcomes[OUT_FAILED] == 2 && M(s)->outcomes[OUT_BREAKER] == 7);
    assert_true(M(s)->lat_all.max == 0 && M(s)->server_arrivals == 2);
    assert_true(t.transitions == 1 && t.short_circuited == 7);
    assert_true(t.hedges == 0 && t.hedges_suppressed == 0);
    sim_destroy(s);
}

/* docs/budgets.md, sre: before every attempt, p = max(0, (requests -
 * k*accepts) / (requests + 1)) and the attempt is rejected locally with
 * probability p, ending `throttled` without reaching the server. Against
 * a server that accepts nothing (503), the n-th request is rejected with
 * probability (n - 1) / n: of 100 requests about 100 - H(100) = 94.8 are
 * throttled (seed 1: 93; the other 7 reach the server and end
 * `exhausted`, attempts = 1), and every request is either. */
static void sre_throttles_locally(void **state)
{
    (void)state;
    const char *text =
        "[run]\nduration = 30s\nseed = 1\n[load]\narrival = uniform\nrate = 10/s\n"
        "[phase quiet]\nstart = 10050ms\nend = 30s\nrate = x0\n"
        "[phase down]\nstart = 0\nend = 30s\noutage = error\n"
        "[server]\nworkers = 1\nservice = const(1ms)\n"
        "[layer app]\nattempts = 1\nbudget = sre\nbudget_scope = shared\n";
    struct sim *s = run_text(text, NULL, 0);
    uint64_t thr = M(s)->outcomes[OUT_THROTTLED];
    print_message("sre: %llu of 100 throttled\n", (unsigned long long)thr);
    assert_true(M(s)->requests == 100);
    assert_true(thr + M(s)->server_arrivals == 100);
    assert_true(thr == 93 && M(s)->outcomes[OUT_EXHAUSTED] == 7);
    sim_destroy(s);
}

/* docs/breakers.md, brooker: "retry allowed: calls = 0 or failures/calls
 * <= max_failure_ratio"; a refused retry ends the call `breaker`. Against
 * a server in outage every attempt fails, so after the first request's
 * first attempt the ratio is 1: no request is retried, each ends `breaker`
 * after one attempt. */
static void brooker_stops_retries(void **state)
{
    (void)state;
    const char *text = ONE_PER_SECOND
        "[phase down]\nstart = 0\nend = 30s\noutage = error\n"
        "[server]\nworkers = 1\nservice = const(1ms)\n"
        "[layer app]\nattempts = 3\nbreaker = brooker\nbreaker_scope = shared\n";
    struct sim *s = run_text(text, NULL, 0);
    struct sim_layer_totals t;
    sim_layer_totals(s, 0, &t);
    assert_true(M(s)->outcomes[OUT_BREAKER] == 9 && M(s)->server_arrivals == 9);
    assert_true(t.short_circuited == 9 && t.retries == 0);
    sim_destroy(s);
}

/* docs/guide.md (hedging): "the next copy after a hedge_on failure with nothing
 * else out is not capped" -- even with the cap at 1 % (which allows no
 * hedge beside another copy here). Each request's first copy fails 503
 * (hedge_on) at once, its second goes at once and fails too, and with the
 * attempts used up the call ends `exhausted`: 9 hedges, 18 arrivals, no
 * hedge held back (none could be sent: attempts were used up). */
static void hedge_on_failure_with_nothing_out_is_not_capped(void **state)
{
    (void)state;
    const char *text = ONE_PER_SECOND
        "[phase down]\nstart = 0\nend = 30s\noutage = error\n"
        "[server]\nworkers = 1\nservice = const(1ms)\n"
        "[layer app]\nattempts = 2\nhedge = percentile\nhedge_max_extra = 0.01\n"
        "hedge_on = 503\nretry_on = none\n";
    struct sim *s = run_text(text, NULL, 0);
    struct sim_layer_totals t;
    sim_layer_totals(s, 0, &t);
    assert_true(M(s)->outcomes[OUT_EXHAUSTED] == 9 && M(s)->server_arrivals == 18);
    assert_true(t.hedges == 9 && t.hedges_suppressed == 0);
    assert_true(M(s)->lat_all.max == 0);
    sim_destroy(s);
}

/* docs/guide.md (hedging): "a failure in retry_on waits for the other copies,
 * and when it was the last one out the layer retries it after its backoff
 * as a plain layer would". With no hedge delay (copies only on hedge_on
 * failures, and there are none), each request's 503 is the last copy out:
 * retried after 100 ms, twice, then `exhausted` at 200 ms. */
static void last_copy_out_failing_is_retried(void **state)
{
    (void)state;
    const char *text = ONE_PER_SECOND
        "[phase down]\nstart = 0\nend = 30s\noutage = error\n"
        "[server]\nworkers = 1\nservice = const(1ms)\n"
        "[layer app]\nattempts = 3\nhedge = fixed\nhedge_delay = none\n"
        "backoff = constant\nbase = 100ms\n";
    struct sim *s = run_text(text, NULL, 0);
    struct sim_layer_totals t;
    sim_layer_totals(s, 0, &t);
    assert_true(M(s)->outcomes[OUT_EXHAUSTED] == 9 && M(s)->server_arrivals == 27);
    assert_true(t.retries == 18 && t.hedges == 0);
    assert_true(M(s)->lat_all.min == 200 * RS_MS && M(s)->lat_all.max == 200 * RS_MS);
    sim_destroy(s);
}

/* docs/guide.md (hedging): "any other failure ends the call with its class" --
 * with copies still out. The first copy is served (100 ms); the hedge at
 * 5 ms finds the rate limiter empty and gets 429, in neither hedge_on nor
 * retry_on: the call ends `failed` at 5 ms, the first copy abandoned. */
static void fatal_copy_ends_the_call_failed(void **state)
{
    (void)state;
    const char *text = ONE_PER_SECOND
        "[server]\nworkers = 1\nservice = const(100ms)\nlimit_rate = 2/s\n"
        "[layer app]\nattempts = 2\nhedge = fixed\nhedge_delay = 5ms\nretry_on = none\n";
    struct sim *s = run_text(text, NULL, 0);
    struct sim_layer_totals t;
    sim_layer_totals(s, 0, &t);
    assert_true(M(s)->outcomes[OUT_FAILED] == 9 && M(s)->errors[CLS_429] == 9);
    assert_true(M(s)->lat_all.min == 5 * RS_MS && M(s)->lat_all.max == 5 * RS_MS);
    assert_true(t.hedges == 9 && t.abandoned == 9);
    sim_destroy(s);
}

/* sim.h: a stopped run "ends at the time reached, incomplete" -- unless
 * nothing was left to do before its end. Three requests one second apart
 * in a 1 s run: the first arrival is due at 1 s, the run's end, so the
 * run has no event inside it; stopped at its first checkpoint it is still
 * complete, with no limit named. Three seconds long, it is incomplete. */
static void stop_with_nothing_left_is_complete(void **state)
{
    (void)state;
    static volatile sig_atomic_t stop = 1;
    const char *text = "[run]\nduration = 1s\n[load]\narrival = uniform\nrate = 1/s\n"
                       "[server]\nworkers = 1\nservice = const(1ms)\n";
    struct sim *s = create_text(text);
    sim_set_stop(s, &stop);
    run_created(s);
    assert_true(sim_complete(s));
    assert_null(sim_limit(s));
    assert_true(M(s)->requests == 0);
    sim_destroy(s);

    s = create_text("[run]\nduration = 3s\n[load]\narrival = uniform\nrate = 1/s\n"
                    "[server]\nworkers = 1\nservice = const(1ms)\n");
    sim_set_stop(s, &stop);
    run_created(s);
    assert_false(sim_complete(s));
    assert_true(M(s)->requests == 0);
    sim_destroy(s);
}

/* docs/scenarios.md (limits): the memory in flight is limited by --max-memory, "checked every
 * 1,024 events", and a run stops when its objects "passed the limit". A
 * limit equal to what is in flight at the first checkpoint (the first
 * arrival's event and the quiet phase's, before any runs) lets the run go
 * on, to its 3 requests of 2.5 s each, although it soon holds more (two
 * requests at once from 2 s), since its 7 events never reach the next
 * checkpoint; one byte less stops it at the first, incomplete, with the
 * limit named. The bytes are measured on a run stopped at that checkpoint. */
static void live_limit_reached_but_not_passed(void **state)
{
    (void)state;
    static volatile sig_atomic_t stop = 1;
    const char *text = "[run]\nduration = 10s\n[load]\narrival = uniform\nrate = 1/s\n"
                       "[phase quiet]\nstart = 3500ms\nend = 10s\nrate = x0\n"
                       "[server]\nworkers = 3\nservice = const(2500ms)\n";
    struct sim *s = create_text(text);
    sim_set_stop(s, &stop);
    run_created(s);
    double bytes = sim_live_bytes(s);
    assert_true(bytes > 0);
    sim_destroy(s);

    s = create_text(text);
    sim_set_live_limit(s, bytes);
    run_created(s);
    assert_true(sim_complete(s) && sim_limit(s) == NULL);
    assert_true(M(s)->requests == 3 && M(s)->outcomes[OUT_OK] == 3 && M(s)->events == 7);
    sim_destroy(s);

    s = create_text(text);
    sim_set_live_limit(s, bytes - 1);
    run_created(s);
    assert_false(sim_complete(s));
    assert_non_null(sim_limit(s));
    assert_true(M(s)->requests == 0);
    sim_destroy(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(retry_after_zero_replaces_the_backoff),
        cmocka_unit_test(call_starting_at_its_deadline_makes_no_attempt),
        cmocka_unit_test(trace_rows_are_segment_boundaries),
        cmocka_unit_test(phase_factor_applies_to_a_trace),
        cmocka_unit_test(losing_hedge_gives_back_its_budget_place),
        cmocka_unit_test(losing_hedge_counts_as_not_failed),
        cmocka_unit_test(business_winner_supersedes_its_hedges),
        cmocka_unit_test(hedged_call_short_circuited_ends),
        cmocka_unit_test(sre_throttles_locally),
        cmocka_unit_test(brooker_stops_retries),
        cmocka_unit_test(hedge_on_failure_with_nothing_out_is_not_capped),
        cmocka_unit_test(last_copy_out_failing_is_retried),
        cmocka_unit_test(fatal_copy_ends_the_call_failed),
        cmocka_unit_test(trace_that_changed_is_reported),
        cmocka_unit_test(closed_loop_factor_divides_think_times),
        cmocka_unit_test(nothing_pending_after_the_last_arrival),
        cmocka_unit_test(prefetching_run_changes_nothing),
        cmocka_unit_test(herd_sends_one_request_per_client),
        cmocka_unit_test(herd_checkpoint_every_1024_clients),
        cmocka_unit_test(hop_phase_ends_at_its_end),
        cmocka_unit_test(breaker_share_sampled_at_the_bucket_end),
        cmocka_unit_test(shared_phase_boundary_is_one_event),
        cmocka_unit_test(no_phase_nothing_to_recover_from),
        cmocka_unit_test(events_at_one_instant_up_to_the_limit),
        cmocka_unit_test(events_at_distinct_instants_are_not_limited),
        cmocka_unit_test(request_objects_hold_their_counters),
        cmocka_unit_test(stop_with_nothing_left_is_complete),
        cmocka_unit_test(live_limit_reached_but_not_passed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
