/*
 * Exact edges of sim/model (caches, footprint, bulkheads, hedging, the
 * network hop, occ): small scenarios whose numbers follow by hand from a
 * documented rule, each written to kill mechanical mutants
 * (scripts/mutagen.py) that the other tests let live. Each test says which
 * rule it pins and why the numbers are what they are.
 */
#include "rs_test.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "rng.h"

#define M(s) sim_metrics(s)

/* One request every second from 1 s to 9 s (the quiet phase from 9.5 s
 * stops arrivals), as in test_semantics.c. */
#define ONE_PER_SECOND                                                                             \
    "[run]\nduration = 30s\n[load]\narrival = uniform\nrate = 1/s\n"                               \
    "[phase quiet]\nstart = 9500ms\nend = 30s\nrate = x0\n"

/* One key; a miss takes 1 ms and fills an entry that lives 1.5 s. */
#define ONE_KEY_CACHE(ttl)                                                                         \
    "[load]\nkeys = 1\n[server]\nworkers = 1\nservice = const(1ms)\ncache = c\n"                   \
    "[cache c]\nttl = " ttl "\n"

/* The hit ratio counts lookups from the warm-up on (docs/guide.md, Caches:
 * "hits / lookups after warm-up"), a lookup at the very instant of the
 * warm-up's end included, as requests arriving at it are counted. With
 * one key and a 1.5 s TTL the lookups at 1, 3, 5, 7, 9 s miss (the entry
 * filled at t + 1 ms is gone at t + 1.501 s) and those at 2, 4, 6, 8 s hit:
 * from 2 s on, 4 hits of 8 lookups, 0.5 (from 3 s on it would be 3/7). */
static void hit_ratio_counts_from_the_warmup_instant(void **state)
{
    (void)state;
    const char *sets[] = {"run.warmup=2s"};
    struct sim *s = run_text(ONE_PER_SECOND ONE_KEY_CACHE("1500ms"), sets, 1);
    struct sim_cache_row row;
    uint64_t lookups = 0, hits = 0;
    for (size_t b = 0; sim_cache_row(s, 0, b, &row); b++) {
        lookups += row.n.lookups;
        hits += row.n.hits;
    }
    assert_true(lookups == 9 && hits == 4);
    assert_true(sim_cache_hit_ratio(s, 0) == 0.5);
    sim_destroy(s);
}

/* caches.csv's `entries` is the count at the bucket's end (docs/outputs.md,
 * Caches, Outputs), so a bucket in which nothing happens to the cache
 * shows what the one before ended with. Without a TTL the one entry,
 * filled at 1.001 s, stays to the end: every bucket from 1 s on, the quiet
 * ones after 9.5 s included, ends with 1 entry; bucket 0 with none. */
static void quiet_buckets_keep_their_entries(void **state)
{
    (void)state;
    struct sim *s = run_text(ONE_PER_SECOND ONE_KEY_CACHE("none"), NULL, 0);
    struct sim_cache_row row;
    assert_true(sim_cache_row(s, 0, 0, &row) && row.entries == 0);
    for (size_t b = 1; b < 30; b++) {
        assert_true(sim_cache_row(s, 0, b, &row));
        assert_true(row.entries == 1);
        assert_true(row.n.lookups == (b <= 9 ? 1 : 0));
    }
    /* Past the last cache or the last bucket there is no row (30 buckets
     * of 1 s, one cache). */
    assert_false(sim_cache_row(s, 1, 0, &row));
    assert_false(sim_cache_row(s, 0, 30, &row));
    sim_destroy(s);
}

static int part_index(const char *name)
{
    for (int i = 0; i < SIM_FOOTPRINT_PARTS; i++)
        if (strcmp(sim_footprint_part_name(i), name) == 0)
            return i;
    fail_msg("no footprint part %s", name);
    return -1;
}

static double footprint_part(const char *text, const char *name)
{
    struct scenario sc;
    double part[SIM_FOOTPRINT_PARTS];
    load_or_fail(&sc, text, NULL, 0);
    sim_footprint(&sc, part);
    return part[part_index(name)];
}

/* The footprint's "clients" part is the think timers of a closed loop
 * with herds (sim_create allocates one 16-byte event handle per client
 * only then), so 100 clients with a herd: 1,600 bytes; without one: 0. */
static void footprint_counts_think_timers_only_with_herds(void **state)
{
    (void)state;
#define CLOSED "[load]\nmodel = closed\nclients = 100\nthink = exp(1s)\n[server]\nservice = exp(1ms)\n"
    assert_true(footprint_part(CLOSED, "clients") == 0.0);
    assert_true(footprint_part(CLOSED "[herd]\nat = 1s\n", "clients") == 1600.0);
#undef CLOSED
}

/* The time series have one bucket per started `bucket` of the run
 * (metrics: ceil(duration / bucket)): 10 s and 9.5 s in buckets of 1 s
 * both have 10, 1 s has 1, so the footprint's "time series" part of the
 * first two is equal and ten times the third's. */
static void footprint_counts_started_buckets(void **state)
{
    (void)state;
#define RUN_OF(d) "[run]\nduration = " d "\nbucket = 1s\n[load]\nrate = 1/s\n[server]\nservice = exp(1ms)\n"
    double ten = footprint_part(RUN_OF("10s"), "time series");
    double nine_and_a_half = footprint_part(RUN_OF("9500ms"), "time series");
    double one = footprint_part(RUN_OF("1s"), "time series");
#undef RUN_OF
    assert_true(one > 0);
    assert_true(ten == nine_and_a_half);
    assert_true(ten == 10 * one);
}

/* An entry's expiry is an event only when it falls inside the run: one at
 * or after the end could never be handled, and is not queued, so it holds
 * none of the in-flight memory the run's limit counts (sim_live_bytes).
 * One request at 1 s fills the entry at 1.001 s; a TTL of 999 ms ends it
 * exactly at the 2 s end, one of 1 s after it: the same bytes in flight at
 * the end (the next arrival's event, at 2 s, in both). */
static void expiry_at_the_end_is_not_queued(void **state)
{
    (void)state;
    const char *text = "[run]\nduration = 2s\n[load]\narrival = uniform\nrate = 1/s\nkeys = 1\n"
                       "[server]\nworkers = 1\nservice = const(1ms)\ncache = c\n[cache c]\nttl = 1s\n";
    struct sim *after = run_text(text, NULL, 0);
    const char *at_end[] = {"cache.c.ttl=999ms"};
    struct sim *at = run_text(text, at_end, 1);
    assert_true(M(at)->requests == 1 && M(after)->requests == 1);
    assert_true(sim_live_bytes(at) == sim_live_bytes(after));
    sim_destroy(at);
    sim_destroy(after);
}

/* ---- the network hop (net.c) ---- */

/* One request, at 1 s (uniform arrivals at 1/s; the next would be at the
 * end). */
#define ONE_REQUEST "[run]\nduration = 2s\nseed = 1\n[load]\narrival = uniform\nrate = 1/s\n"

/* The first draws of a seed's network stream (replication 0), which draws
 * the hop's losses and latencies in the order the run needs them. */
static void network_draws(unsigned seed, double *u, int n)
{
    struct rng_set set;
    assert_int_equal(rng_set_init(&set, seed, 0), 0);
    for (int i = 0; i < n; i++)
        u[i] = gsl_rng_uniform(set.s[RNG_NETWORK]);
    rng_set_fini(&set);
}

/* An attempt is lost with probability request_loss: lost when the draw u
 * is below it (u takes the values k / 2^32, so u < p has probability p
 * exactly for such p). A hop without loss draws nothing for it: its
 * latencies are the stream's draws in turn. With request_loss set to the
 * stream's first draw u0 the one attempt is not lost, and its latency
 * uniform(0, 100ms) comes from the second draw; without loss, from the
 * first. */
static void loss_draws_below_the_probability(void **state)
{
    (void)state;
    double u[2];
    network_draws(1, u, 2);
    const char *text = ONE_REQUEST "[server]\nworkers = 1\nservice = const(0)\n"
                                   "[layer app]\nattempts = 1\nrequest_latency = uniform(0, 100ms)\n";
    struct sim *s = run_text(text, NULL, 0);
    assert_true(M(s)->outcomes[OUT_OK] == 1);
    assert_true(M(s)->lat_all.max == units_from_ns(1e8 * u[0]));
    sim_destroy(s);

    char loss[64];
    snprintf(loss, sizeof loss, "layer.app.request_loss=%.17g", u[0]);
    const char *sets[] = {loss};
    s = run_text(text, sets, 1);
    assert_true(M(s)->outcomes[OUT_OK] == 1);
    assert_true(M(s)->lat_all.max == units_from_ns(1e8 * u[1]));
    sim_destroy(s);
}

/* A cancellation crosses the hop with the request latency; one that
 * arrives no later than its attempt drops it on arrival (docs/guide.md,
 * Cancellation: "One that overtakes its attempt on the hop drops it on
 * arrival"; arriving together counts), one that arrives later reaches
 * the job. The hop takes 10 ms; a phase adds 45 or 50 ms to crossings
 * that start before 1.01 s. The attempt leaves at 1 s and the 50 ms
 * timeout sends the cancellation at 1.05 s, which arrives at 1.06 s:
 * - +50 ms: the attempt arrives at 1.06 s too, and is dropped unstarted;
 * - +45 ms: it arrives at 1.055 s and starts; the cancellation stops it
 *   at 1.06 s (cancel_running), so it never completes. */
static void cancellation_meets_its_attempt_on_the_hop(void **state)
{
    (void)state;
#define HOP_CANCEL(extra)                                                                          \
    ONE_REQUEST "[phase slow]\ntarget = app\nstart = 0\nend = 1010ms\nlatency = const(" extra ")\n" \
                "[server]\nworkers = 1\nservice = const(100ms)\ncancel_running = true\n"           \
                "[layer app]\nattempts = 1\ntimeout = 50ms\ncancel = on-abandon\n"                 \
                "request_latency = const(10ms)\n"
    struct sim *s = run_text(HOP_CANCEL("50ms"), NULL, 0);
    assert_true(M(s)->cancelled_before_start == 1 && M(s)->server_arrivals == 0);
    sim_destroy(s);
    s = run_text(HOP_CANCEL("45ms"), NULL, 0);
    assert_true(M(s)->cancelled_before_start == 0 && M(s)->server_arrivals == 1);
    assert_true(M(s)->cancelled == 1 && M(s)->server_completions == 0);
    sim_destroy(s);
#undef HOP_CANCEL
}

/* A hop whose latency is const(0) is still a crossing: what crosses it
 * arrives after what was already due at that instant. Two workers,
 * service 100 ms, a hedge 100 ms after the first copy, cancelling: at
 * 1.1 s the hedge timer fires first (it was set before the job's end),
 * then the first copy's answer wins and the hedge is cancelled.
 * - request_latency = const(0): the hedge is still on the hop when the
 *   answer comes; its cancellation, also taking 0, arrives with it, and
 *   it is dropped unstarted (1 arrival at the server);
 * - with response_latency = const(0) as well, the answer crosses after
 *   the hedge has arrived and started: 2 arrivals, the hedge stopped. */
static void zero_latency_hops_are_crossings(void **state)
{
    (void)state;
    const char *text = ONE_REQUEST "[server]\nworkers = 2\nservice = const(100ms)\ncancel_running = true\n"
                                   "[layer app]\nattempts = 2\nhedge = fixed\nhedge_delay = 100ms\n"
                                   "cancel = on-abandon\nrequest_latency = const(0)\n";
    struct sim *s = run_text(text, NULL, 0);
    assert_true(M(s)->outcomes[OUT_OK] == 1 && M(s)->hedges == 1);
    assert_true(M(s)->server_arrivals == 1 && M(s)->cancelled_before_start == 1);
    sim_destroy(s);
    const char *both[] = {"layer.app.response_latency=const(0)"};
    s = run_text(text, both, 1);
    assert_true(M(s)->outcomes[OUT_OK] == 1 && M(s)->hedges == 1);
    assert_true(M(s)->server_arrivals == 2 && M(s)->cancelled == 1);
    assert_true(M(s)->server_completions == 1);
    sim_destroy(s);
}

/* A hop phase's loss combines with the layer's own as 1 - (1 - own)(1 -
 * extra); while no phase adds any, the own value is used untouched (net.c:
 * "so no rounding creeps in"): the probability asked for is the one
 * applied, to the last bit. Here request_loss is the smallest double above
 * the first draw u0 (0.46) of seed 3's network stream, which 1 - (1 - own)
 * would round back to u0 itself: the attempt (drawing u0 < own) is lost
 * and its call never answers, though a phase on the hop (inactive at 1 s)
 * makes hop phases count. */
static void own_loss_is_used_untouched(void **state)
{
    (void)state;
    double u[1];
    network_draws(3, u, 1);
    volatile double own = nextafter(u[0], 1.0), one = 1.0;
    assert_true(one - (one - own) == u[0]); /* the rounding the rule avoids */
    char loss[64];
    snprintf(loss, sizeof loss, "layer.app.request_loss=%.17g", own);
    const char *sets[] = {"run.seed=3", loss};
    struct sim *s = run_text(ONE_REQUEST "[phase lossy]\ntarget = app\nstart = 1500ms\nend = 2s\nloss = 0.5\n"
                                         "[server]\nworkers = 1\nservice = const(0)\n[layer app]\nattempts = 1\n",
                             sets, 2);
    assert_true(M(s)->outcomes[OUT_OK] == 0 && M(s)->server_arrivals == 0);
    sim_destroy(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(hit_ratio_counts_from_the_warmup_instant),
        cmocka_unit_test(quiet_buckets_keep_their_entries),
        cmocka_unit_test(expiry_at_the_end_is_not_queued),
        cmocka_unit_test(footprint_counts_think_timers_only_with_herds),
        cmocka_unit_test(footprint_counts_started_buckets),
        cmocka_unit_test(loss_draws_below_the_probability),
        cmocka_unit_test(cancellation_meets_its_attempt_on_the_hop),
        cmocka_unit_test(zero_latency_hops_are_crossings),
        cmocka_unit_test(own_loss_is_used_untouched),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
