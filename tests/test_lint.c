/*
 * The capacity estimate (sim/model/capacity.c) and the lint rules
 * (sim/io/lint.c), against figures computed by hand in the comments:
 *
 * - storm: 800/s × 10 ms / 10 workers = 0.80, no utilisation warning;
 *   900/s gives 0.90 (a warning), 1000/s gives 1.00 (over capacity), 899/s
 *   nothing;
 * - a three-tier graph with fan-out, calls while held, hops and work after
 *   the calls: visits, holds and utilisations;
 * - a closed loop: clients / (think + response);
 * - an unbounded TTL cache: the hit ratio and what reaches the service
 *   behind it;
 * - each other rule, positive and negative: stale work behind an unbounded
 *   queue, an inner layer's worst call against its caller's limit (with
 *   the backoff's largest delays; stacked layers on one edge too), the
 *   attempt product over 10;
 * - the largest backoff delays of full jitter and Envoy;
 * - the estimate against the simulator over 20 seeds (a single queue, the
 *   three tiers, a TTL cache).
 * The messages are compared whole, so a changed number or rule shows.
 */
#define _POSIX_C_SOURCE 200809L

#include "rs_test.h"

#include <math.h>
#include <string.h>

#include "capacity.h"
#include "lint.h"

struct seen {
    unsigned n, over;
    char msg[16][1200];
};

static void collect(void *ctx, enum lint_level level, const char *msg)
{
    struct seen *s = ctx;
    if (s->n < 16)
        snprintf(s->msg[s->n], sizeof s->msg[0], "%s", msg);
    s->n++;
    s->over += level == LINT_OVER;
}

/* Loads text with sets, estimates and lints it. */
static void lint_text(const char *text, const char *const *sets, size_t n, struct capacity *c, struct seen *s)
{
    struct scenario sc;
    load_or_fail(&sc, text, sets, n);
    capacity_estimate(&sc, c);
    memset(s, 0, sizeof *s);
    unsigned got = lint_scenario(&sc, c, collect, s);
    assert_int_equal(got, s->n);
}

static bool has(const struct seen *s, const char *needle)
{
    for (unsigned i = 0; i < s->n && i < 16; i++)
        if (strstr(s->msg[i], needle) != NULL)
            return true;
    return false;
}

static void near(double got, double want, double tol)
{
    if (!(fabs(got - want) <= tol))
        fail_msg("got %.9g, want %.9g (± %g)", got, want, tol);
}

#define STALE_STORM "service server: unbounded queue behind layer app (timeout 200ms, deadline none): work its caller " \
                    "gave up on waits and is served (stale work); bound the queue, or drop_expired with a propagated deadline"

/* storm: 800/s × 10 ms / (10 × 1) = 0.80; its only warning is stale work. */
static void storm_is_080(void **state)
{
    (void)state;
    struct capacity c;
    struct seen s;
    lint_text(scenario_builtin_text("storm"), NULL, 0, &c, &s);
    near(c.request_rate, 800, 0);
    near(c.svc[0].visits, 1, 0);
    near(c.svc[0].hold_ns, 10e6, 1e-6);
    near(c.svc[0].slots, 10, 0);
    near(c.svc[0].util, 0.80, 1e-12);
    assert_int_equal(s.n, 1);
    assert_string_equal(s.msg[0], STALE_STORM);
    near(c.amplification, 3, 0);
}

/* 900/s: 0.90, the warning; 1000/s: 1.00, over capacity (LINT_OVER);
 * 899/s: 0.899, nothing but the stale work. */
static void storm_at_the_thresholds(void **state)
{
    (void)state;
    struct capacity c;
    struct seen s;
    const char *r900[] = {"load.rate=900/s"}, *r1000[] = {"load.rate=1000/s"}, *r899[] = {"load.rate=899/s"};
    lint_text(scenario_builtin_text("storm"), r900, 1, &c, &s);
    assert_int_equal(s.n, 2);
    assert_int_equal(s.over, 0);
    assert_string_equal(s.msg[0], "service server: utilisation 0.90 per replica (900.0/s x 10.000 ms / 10 workers x 1 "
                                  "replicas): at least 0.9: waits are long and any trigger overloads it");
    lint_text(scenario_builtin_text("storm"), r1000, 1, &c, &s);
    assert_int_equal(s.n, 2);
    assert_int_equal(s.over, 1);
    assert_string_equal(s.msg[0], "service server: utilisation 1.00 per replica (1000.0/s x 10.000 ms / 10 workers x 1 "
                                  "replicas): over capacity before any trigger");
    lint_text(scenario_builtin_text("storm"), r899, 1, &c, &s);
    assert_int_equal(s.n, 1);
    assert_string_equal(s.msg[0], STALE_STORM);
}

/* Three tiers, every queue bounded (no stale work):
 *   clients -[in: 2 x 100ms]-> front -[fm: 3 x 50ms, hops 0.5 + 0.5 ms]-> mid*2
 *   front -> leaf (no layer), then 1 ms of work after the calls
 *   mid -[ml: 3 x 10ms, exponential 10ms x 2]-> leaf*3
 * visits: front 1, mid 1 × 2 = 2, leaf 1 (from front) + 2 × 3 = 7.
 * hold: leaf 1 ms; mid 4 + (0 hops + 1) = 5 ms;
 *       front 2 + (1 ms hops + 5) + (0 + 1) + 1 after = 10 ms.
 * utilisation at 100/s: front 100 × 10 ms / 50 = 0.02; mid 200 × 5 ms / 8
 *   = 0.125; leaf 700 × 1 ms / 10 = 0.07.
 * ml's backoff: 10 ms before the 2nd attempt, 20 ms before the 3rd: its
 *   worst call 3 × 10 + 30 = 60 ms ≥ fm's 50 ms timeout (30 ms alone would
 *   not be); fm's worst, 3 × 50 = 150 ms ≥ in's 100 ms.
 * attempt product: 2 × 3 × 3 = 18 > 10 along clients -> front -> mid -> leaf. */
static const char tiers[] =
    "[run]\nduration = 10s\n[load]\nrate = 100/s\n"
    "[service front]\nworkers = 50\nqueue = 100\nservice = const(2ms)\ncalls = mid*2 leaf\nservice_after = const(1ms)\n"
    "[service mid]\nworkers = 8\nqueue = 100\nservice = exp(4ms)\ncalls = leaf*3\n"
    "[service leaf]\nworkers = 10\nqueue = 100\nservice = const(1ms)\n"
    "[layer in]\nfrom = client\nto = front\nattempts = 2\ntimeout = 100ms\n"
    "[layer fm]\nfrom = front\nto = mid\nattempts = 3\ntimeout = 50ms\nrequest_latency = const(0.5ms)\n"
    "response_latency = const(0.5ms)\n"
    "[layer ml]\nfrom = mid\nto = leaf\nattempts = 3\ntimeout = 10ms\nbackoff = exponential\nbase = 10ms\n"
    "multiplier = 2\n";

static void three_tiers_by_hand(void **state)
{
    (void)state;
    struct capacity c;
    struct seen s;
    lint_text(tiers, NULL, 0, &c, &s);
    near(c.svc[0].visits, 1, 0), near(c.svc[1].visits, 2, 0), near(c.svc[2].visits, 7, 0);
    near(c.svc[2].hold_ns, 1e6, 1e-6), near(c.svc[1].hold_ns, 5e6, 1e-6), near(c.svc[0].hold_ns, 10e6, 1e-6);
    near(c.svc[0].util, 0.02, 1e-12), near(c.svc[1].util, 0.125, 1e-12), near(c.svc[2].util, 0.07, 1e-12);
    near(c.backoff_ns[2], 30e6, 0.5);
    near(c.layer_worst_ns[2], 60e6, 0.5);
    near(c.amplification, 18, 0);
    assert_int_equal(s.n, 3);
    assert_string_equal(s.msg[0], "layer fm (front -> mid): 3 attempts x 50ms + 0.0 ms of backoff = 150.0 ms, not less "
                                  "than the timeout 100ms of layer in, which calls front: that caller gives up before "
                                  "these retries end");
    assert_string_equal(s.msg[1], "layer ml (mid -> leaf): 3 attempts x 10ms + 30.0 ms of backoff = 60.0 ms, not less "
                                  "than the timeout 50ms of layer fm, which calls mid: that caller gives up before these "
                                  "retries end");
    assert_string_equal(s.msg[2], "layers multiply attempts to 18 per request along clients -> front -> mid -> leaf "
                                  "(in 2 x fm 3 x ml 3), more than 10: a failure at leaf is tried 18 times");
}

/* The negatives of the layer rules: ml without backoff (30 ms < 50 ms), fm
 * at 33 ms (99 < 100), in with one attempt: 1 × 3 × 3 = 9, not over 10. */
static void three_tiers_negatives(void **state)
{
    (void)state;
    struct capacity c;
    struct seen s;
    const char *sets[] = {"layer.ml.backoff=none", "layer.fm.timeout=33ms", "layer.in.attempts=1"};
    lint_text(tiers, sets, 3, &c, &s);
    near(c.layer_worst_ns[2], 30e6, 0);
    near(c.amplification, 9, 0);
    assert_int_equal(s.n, 0);
    const char *deadline[] = {"layer.in.deadline=150ms", "layer.in.timeout=none", "layer.ml.backoff=none",
                              "layer.in.attempts=1"}; /* fm's 150 ms against in's 150 ms deadline */
    lint_text(tiers, deadline, 4, &c, &s);
    assert_int_equal(s.n, 1);
    assert_true(has(&s, "layer fm (front -> mid): 3 attempts x 50ms + 0.0 ms of backoff = 150.0 ms, not less than "
                        "the deadline 150ms of layer in"));
    const char *longer[] = {"layer.in.deadline=151ms", "layer.in.timeout=none", "layer.ml.backoff=none",
                            "layer.in.attempts=1"};
    lint_text(tiers, longer, 4, &c, &s);
    assert_int_equal(s.n, 0);
}

/* The amplification rule's message names the path's layers, even for one
 * edge with several: storm with attempts = 11 is 11 > 10; 10 is not. */
static void attempt_product_threshold(void **state)
{
    (void)state;
    struct capacity c;
    struct seen s;
    const char *a11[] = {"layer.app.attempts=11"}, *a10[] = {"layer.app.attempts=10"};
    lint_text(scenario_builtin_text("storm"), a11, 1, &c, &s);
    assert_true(has(&s, "layers multiply attempts to 11 per request along clients -> server (app 11), more than 10: "
                        "a failure at server is tried 11 times"));
    lint_text(scenario_builtin_text("storm"), a10, 1, &c, &s);
    assert_false(has(&s, "layers multiply"));
    lint_text(scenario_builtin_text("layers-27"), NULL, 0, &c, &s);
    assert_true(has(&s, "to 27 per request along clients -> server (app 3 x sidecar 3 x gateway 3)"));
}

/* Stacked layers on one edge: each is called by the one just above it.
 * layers-27: sidecar 3 x 2 s = 6 s >= app's 5 s; gateway 3 x 1 s = 3 s >=
 * sidecar's 2 s; app, the outermost of the clients' edge, has no caller.
 * With the gateway's timeout at 666 ms, 1998 ms < 2 s: no warning. */
static void stacked_layers(void **state)
{
    (void)state;
    struct capacity c;
    struct seen s;
    lint_text(scenario_builtin_text("layers-27"), NULL, 0, &c, &s);
    assert_true(has(&s, "layer sidecar (clients -> server): 3 attempts x 2s + 0.0 ms of backoff = 6000.0 ms, not less "
                        "than the timeout 5s of layer app, just above it: that caller gives up before these retries end"));
    assert_true(has(&s, "layer gateway (clients -> server): 3 attempts x 1s + 0.0 ms of backoff = 3000.0 ms, not less "
                        "than the timeout 2s of layer sidecar, just above it"));
    assert_false(has(&s, "layer app (clients"));
    const char *shorter[] = {"layer.gateway.timeout=666ms"};
    lint_text(scenario_builtin_text("layers-27"), shorter, 1, &c, &s);
    assert_false(has(&s, "layer gateway (clients"));
    assert_true(has(&s, "layer sidecar (clients"));
}

/* A closed loop: 100 clients, think exp(480ms), 20 ms of work on 5
 * workers: 100 / (0.48 + 0.02) s = 200/s; 200 × 0.02 / 5 = 0.80. */
static void closed_loop(void **state)
{
    (void)state;
    static const char text[] = "[run]\nduration = 10s\n[load]\nmodel = closed\nclients = 100\nthink = exp(480ms)\n"
                               "[server]\nworkers = 5\nqueue = 50\nservice = const(20ms)\n";
    struct capacity c;
    struct seen s;
    lint_text(text, NULL, 0, &c, &s);
    near(c.request_rate, 200, 1e-9);
    near(c.svc[0].util, 0.80, 1e-12);
    assert_int_equal(s.n, 0);
    const char *more[] = {"load.clients=125"}; /* 250/s: 1.00 */
    lint_text(text, more, 1, &c, &s);
    near(c.svc[0].util, 1.0, 1e-12);
    assert_int_equal(s.over, 1);
}

/* An unbounded TTL cache: 1000 lookups/s over 100 uniform keys, TTL 1 s,
 * a miss takes 1 + 10 = 11 ms to fill: per key x = 1000 × 0.01 × 1 = 10
 * and y = 1000 × 0.01 × 0.011 = 0.11, so the hit ratio is 10/11.11; the
 * service behind it sees the misses, 1000 × 1.11/11.11 per second; the
 * cached service holds 10/11.11 × 0.1 ms + 1.11/11.11 × 11 ms. A bounded
 * cache counts every lookup a miss: db at 1000 × 10 ms / 4 = 2.50, over
 * capacity. */
static void ttl_cache(void **state)
{
    (void)state;
    static const char text[] =
        "[run]\nduration = 10s\n[load]\nrate = 1000/s\nkeys = 100\n"
        "[cache c]\nttl = 1s\nttl_jitter = 0\nhit = const(0.1ms)\n"
        "[service api]\nworkers = 100\nqueue = 100\nservice = const(1ms)\ncache = c\ncalls = db\n"
        "[service db]\nworkers = 4\nqueue = 100\nservice = const(10ms)\n";
    struct capacity c;
    struct seen s;
    lint_text(text, NULL, 0, &c, &s);
    near(c.svc[0].hit, 10 / 11.11, 1e-12);
    near(c.svc[1].rate, 1000 * 1.11 / 11.11, 1e-9);
    near(c.svc[0].hold_ns, (10 / 11.11 * 0.1 + 1.11 / 11.11 * 11) * 1e6, 1e-3);
    assert_int_equal(s.n, 0);
    /* cache-stampede coalesces: one load per fill. 1000/s over 500 keys,
     * TTL 30 s, a miss 1 + 10 ms: x = 2 × 30 = 60, y = 2 × 0.011 = 0.022;
     * db sees 1000 / 61.022 per second, hits are 60/61.022. */
    lint_text(scenario_builtin_text("cache-stampede"), NULL, 0, &c, &s);
    near(c.svc[1].rate, 1000 / 61.022, 1e-9);
    near(c.svc[0].hit, 60 / 61.022, 1e-12);
    const char *bounded[] = {"cache.c.capacity=50"};
    lint_text(text, bounded, 1, &c, &s);
    near(c.svc[0].hit, 0, 0);
    near(c.svc[1].util, 2.5, 1e-12);
    assert_int_equal(s.over, 1);
    assert_true(has(&s, "service db: utilisation 2.50 per replica (1000.0/s x 10.000 ms / 4 workers x 1 replicas): "
                        "over capacity before any trigger"));
}

/* Stale work: storm warns; a bounded queue, cancel = on-abandon, or
 * drop_expired with a propagated deadline no later than the timeout do
 * not; a deadline later than the timeout still leaves the timed-out work. */
static void stale_work(void **state)
{
    (void)state;
    struct capacity c;
    struct seen s;
    const char *bounded[] = {"server.queue=100"}, *cancel[] = {"layer.app.cancel=on-abandon"},
               *dropped[] = {"server.drop_expired=true", "layer.app.propagate_deadline=true",
                             "layer.app.deadline=200ms"},
               *later[] = {"server.drop_expired=true", "layer.app.propagate_deadline=true", "layer.app.deadline=1s"},
               *none[] = {"layer.app.timeout=none"};
    lint_text(scenario_builtin_text("storm"), bounded, 1, &c, &s);
    assert_int_equal(s.n, 0);
    lint_text(scenario_builtin_text("storm"), cancel, 1, &c, &s);
    assert_int_equal(s.n, 0);
    lint_text(scenario_builtin_text("storm"), dropped, 3, &c, &s);
    assert_int_equal(s.n, 0);
    lint_text(scenario_builtin_text("storm"), none, 1, &c, &s);
    assert_int_equal(s.n, 0);
    lint_text(scenario_builtin_text("storm"), later, 3, &c, &s);
    assert_int_equal(s.n, 1);
    assert_true(has(&s, "service server: unbounded queue behind layer app (timeout 200ms, deadline 1s)"));
}

/* The largest delays: full jitter U·min(cap, base·2^k) with base 10 ms:
 * 20 + 40 + 80 = 140 ms before attempts 2 to 4; Envoy floor(U·I_k) whole
 * ms with I_k = 25·2^(k−1): 24 + 49 + 99 = 172 ms. */
static void backoff_maxima(void **state)
{
    (void)state;
    struct scenario sc;
    const char *full[] = {"layer.app.backoff=full", "layer.app.base=10ms", "layer.app.cap=10s",
                          "layer.app.attempts=4"};
    load_or_fail(&sc, scenario_builtin_text("storm"), full, 4);
    near(capacity_backoff_max_ns(&sc.layers[0]), 140e6, 0.5);
    const char *envoy[] = {"layer.app.backoff=envoy", "layer.app.base=25ms", "layer.app.cap=10s",
                           "layer.app.attempts=4"};
    load_or_fail(&sc, scenario_builtin_text("storm"), envoy, 4);
    near(capacity_backoff_max_ns(&sc.layers[0]), 172e6, 0.5);
}

/* occ has no workers and a trace no rate in its scenario: no utilisation,
 * no utilisation warning. */
static void occ_and_trace(void **state)
{
    (void)state;
    struct capacity c;
    struct seen s;
    lint_text(scenario_builtin_text("aws-occ"), NULL, 0, &c, &s);
    assert_true(isnan(c.svc[0].util));
    assert_int_equal(s.n, 0);
    lint_text(scenario_builtin_text("trace-replay"), NULL, 0, &c, &s);
    assert_true(isnan(c.svc[0].util));
    assert_false(has(&s, "utilisation"));
}

/* The estimate against the simulator, seeds 1 … 20 (claim_require: 18
 * of 20). At baseline the estimate is the simulated utilisation without
 * queueing: storm's single service (800/s, exp(10ms), 10 workers, 20 s)
 * within 0.03 of 0.80; the three tiers (10 s) each at least the estimate
 * − 0.01 and at most 1.3 × it + 0.01 (front's two parallel calls to mid
 * wait for the longer, which the estimate leaves out: about 0.025 against
 * 0.02); the database behind the TTL cache (20 s, after a 2 s warm-up)
 * within 0.03 of its estimate (0.250; its own queueing lengthens the
 * misses), and the cache's hit ratio within 0.01. */
static const char cached[] =
    "[run]\nduration = 20s\nwarmup = 2s\n[load]\nrate = 1000/s\nkeys = 100\n"
    "[cache c]\nttl = 1s\nttl_jitter = 0\nhit = const(0.1ms)\n"
    "[service api]\nworkers = 100\nqueue = 100\nservice = const(1ms)\ncache = c\ncalls = db\n"
    "[service db]\nworkers = 4\nqueue = 100\nservice = const(10ms)\n";

static double simulated_util(const struct sim *s, unsigned u)
{
    struct sim_service_row r;
    sim_service_totals(s, u, &r);
    return r.busy / r.workers;
}

static void estimate_against_the_simulator(void **state)
{
    (void)state;
    static const char storm[] = "[run]\nduration = 20s\n[load]\nrate = 800/s\nclients = 1000\n"
                                "[service server]\nworkers = 10\nqueue = unbounded\nservice = exp(10ms)\n[layer app]\nto = server\n";
    const char *const texts[] = {storm, tiers, cached};
    const char *const names[] = {"storm's baseline", "three tiers", "a TTL cache"};
    for (size_t t = 0; t < 3; t++) {
        struct capacity c;
        struct seen w;
        lint_text(texts[t], NULL, 0, &c, &w);
        unsigned pass = 0;
        for (unsigned seed = 1; seed <= CLAIM_SEEDS; seed++) {
            char set[32];
            snprintf(set, sizeof set, "run.seed=%u", seed);
            const char *sets[] = {set};
            struct sim *s = run_text(texts[t], sets, 1);
            bool ok = true;
            for (unsigned u = 0; u < (t == 1 ? 3u : t == 2 ? 2u : 1u); u++) {
                double sim = simulated_util(s, u), est = c.svc[u].util;
                if (seed == 1)
                    print_message("%s: service %u simulated %.4f, estimated %.4f\n", names[t], u, sim, est);
                if (t == 1)
                    ok = ok && sim >= est - 0.01 && sim <= 1.3 * est + 0.01;
                else if (t == 0 || u == 1)
                    ok = ok && fabs(sim - est) <= 0.03;
            }
            if (t == 2)
                ok = ok && fabs(sim_cache_hit_ratio(s, 0) - c.svc[0].hit) <= 0.01;
            pass += ok;
            sim_destroy(s);
        }
        claim_require(names[t], "estimate", pass);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(storm_is_080),          cmocka_unit_test(storm_at_the_thresholds),
        cmocka_unit_test(three_tiers_by_hand),   cmocka_unit_test(three_tiers_negatives),
        cmocka_unit_test(attempt_product_threshold), cmocka_unit_test(closed_loop),
        cmocka_unit_test(ttl_cache),             cmocka_unit_test(stale_work),
        cmocka_unit_test(backoff_maxima),        cmocka_unit_test(occ_and_trace),
        cmocka_unit_test(stacked_layers),        cmocka_unit_test(estimate_against_the_simulator),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
