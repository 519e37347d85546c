/*
 * Random service graphs: a property test of the model's invariants.
 *
 * Each case draws a valid scenario from a seeded GSL generator: 2-5
 * services in a DAG (each may call any later one, fan-outs up to x8),
 * replicas under every balancer, service_after, drop_expired, injected
 * 503s; layers on the clients' edge and on most service edges with
 * timeouts, backoff, bulkheads (queues and waits), deadlines, hop latency
 * and loss, budgets and breakers; phases that hang, refuse, fail, slow or
 * shrink a service or one replica, or cut or slow a hop; a second set adds
 * hedged layers (every mode and two presets), cancellation and servers
 * that stop cancelled work. Every run must
 * pass sim_run's end-of-run checks (every request has one outcome or is in
 * flight; conservation per replica and per edge), and the same case run
 * twice must give the same counts. The cases are fixed by their seeds, so
 * a failure names a scenario that can be printed and replayed.
 */
#include "rs_test.h"

#include <gsl/gsl_rng.h>
#include <string.h>

#define CASES 120
#define MAX_TEXT 16384

struct gen {
    gsl_rng *r;
    char *buf;
    size_t used;
    bool hedging; /* the second set of cases: hedged layers, cancellation */
};

static void put(struct gen *g, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(struct gen *g, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(g->buf + g->used, MAX_TEXT - g->used, fmt, ap);
    va_end(ap);
    assert_true(n >= 0 && g->used + (size_t)n < MAX_TEXT);
    g->used += (size_t)n;
}

static bool chance(struct gen *g, double p) { return gsl_rng_uniform(g->r) < p; }

static const char *pick(struct gen *g, const char *const *v, size_t n)
{
    return v[gsl_rng_uniform_int(g->r, n)];
}
#define PICK(g, ...) pick(g, (const char *const[]){__VA_ARGS__}, \
                          sizeof((const char *const[]){__VA_ARGS__}) / sizeof(const char *))

static void gen_service(struct gen *g, unsigned i, unsigned n, bool edge[][5])
{
    put(g, "[service s%u]\nworkers = %s\nqueue = %s\nservice = %s\nreplicas = %s\nbalancer = %s\n", i,
        PICK(g, "1", "2", "5", "50"), PICK(g, "unbounded", "0", "5"),
        PICK(g, "exp(1ms)", "const(2ms)", "lognormal(3ms, 2)"), PICK(g, "1", "1", "2", "3"),
        PICK(g, "random", "round-robin", "least-outstanding", "p2c"));
    bool any = false;
    for (unsigned j = i + 1; j < n; j++) {
        if (!chance(g, 0.5))
            continue;
        put(g, "%s s%u%s", any ? "" : "calls =", j, PICK(g, "", "", "*2", "*3", "*8"));
        edge[i][j] = any = true;
    }
    if (any)
        put(g, "\n");
    if (chance(g, 0.3))
        put(g, "service_after = exp(0.5ms)\n");
    if (chance(g, 0.3))
        put(g, "drop_expired = true\n");
    if (chance(g, 0.3))
        put(g, "error_503 = 0.1\n");
    if (g->hedging && chance(g, 0.5))
        put(g, "cancel_running = true\n");
}

/* A hedged layer's keys (no timeout, no bulkhead: a hedged layer has
 * neither), and cancellation on any layer. */
static bool gen_hedge(struct gen *g)
{
    if (!g->hedging)
        return false;
    if (chance(g, 0.6))
        put(g, "cancel = on-abandon\n");
    if (!chance(g, 0.5))
        return false;
    put(g, "%s", PICK(g, "hedge = fixed\nhedge_delay = 2ms\n", "hedge = fixed\nhedge_delay = 0\n",
                      "hedge = percentile\nhedge_percentile = 80\nhedge_max_extra = 0.3\n",
                      "hedge = grpc-hedge\nhedge_delay = 5ms\n", "hedge = finagle-backup\n"));
    if (chance(g, 0.5))
        put(g, "hedge_on = 503 conn\n");
    return true;
}

static void gen_layer(struct gen *g, const char *name, const char *from, unsigned to)
{
    put(g, "[layer %s]\nfrom = %s\nto = s%u\nattempts = %s\nbackoff = %s\nbase = 1ms\n", name, from,
        to, PICK(g, "1", "2", "3"), PICK(g, "none", "full", "exponential"));
    bool hedged = gen_hedge(g);
    if (chance(g, 0.7) && !hedged)
        put(g, "timeout = %s\n", PICK(g, "5ms", "50ms", "1s"));
    if (chance(g, 0.3) && !hedged)
        put(g, "concurrency = %s\nconcurrency_queue = %s\n%s", PICK(g, "1", "3", "10"),
            PICK(g, "0", "2", "unbounded"), chance(g, 0.5) ? "concurrency_wait = 3ms\n" : "");
    if (chance(g, 0.3))
        put(g, "retry_on = timeout conn 503 504 bulkhead\n");
    if (chance(g, 0.2))
        put(g, "deadline = 30ms\npropagate_deadline = true\n");
    if (chance(g, 0.2))
        put(g, "request_latency = exp(1ms)\nresponse_loss = 0.05\n");
    if (chance(g, 0.2))
        put(g, "budget = aws-standard\nbudget_scope = shared\n");
    if (chance(g, 0.2))
        put(g, "breaker = gobreaker\nbreaker_scope = shared\n");
}

static void gen_phases(struct gen *g, unsigned n, unsigned duration)
{
    unsigned np = (unsigned)gsl_rng_uniform_int(g->r, 4);
    for (unsigned p = 0; p < np; p++) {
        unsigned start = (unsigned)gsl_rng_uniform_int(g->r, duration - 1);
        put(g, "[phase p%u]\nstart = %us\nend = %us\n", p, start, start + 2);
        if (chance(g, 0.6))
            put(g, "target = s%u%s\n%s", (unsigned)gsl_rng_uniform_int(g->r, n), PICK(g, "", "#1"),
                PICK(g, "outage = hang\n", "outage = refuse\n", "outage = error\n",
                     "slowdown = 5\n", "capacity = 0.2\n"));
        else
            put(g, "target = client\n%s", PICK(g, "loss = 1\n", "latency = const(5ms)\n"));
    }
}

/* The scenario of case `seed`, into buf. */
static void generate(unsigned seed, char *buf, bool hedging)
{
    struct gen g = {gsl_rng_alloc(gsl_rng_mt19937), buf, 0, hedging};
    gsl_rng_set(g.r, seed);
    unsigned n = 2 + (unsigned)gsl_rng_uniform_int(g.r, 4), duration = 5 + 5 * (unsigned)gsl_rng_uniform_int(g.r, 3);
    bool edge[5][5] = {{false}};
    put(&g, "[run]\nname = random\nduration = %us\nseed = %u\nbucket = 1s\n[load]\nrate = %s/s\n",
        duration, seed, PICK(&g, "50", "200", "800"));
    if (chance(&g, 0.3))
        put(&g, "model = closed\nclients = %s\nthink = exp(10ms)\n", PICK(&g, "10", "100"));
    for (unsigned i = 0; i < n; i++)
        gen_service(&g, i, n, edge);
    gen_layer(&g, "client", "client", 0);
    for (unsigned i = 0; i < n; i++)
        for (unsigned j = 0; j < n; j++)
            if (edge[i][j] && chance(&g, 0.7)) {
                char name[32], from[16];
                snprintf(name, sizeof name, "s%u-s%u", i, j);
                snprintf(from, sizeof from, "s%u", i);
                gen_layer(&g, name, from, j);
            }
    gen_phases(&g, n, duration);
    gsl_rng_free(g.r);
}

static void check_cases(bool hedging)
{
    static char text[MAX_TEXT];
    for (unsigned seed = 1; seed <= CASES; seed++) {
        generate(seed, text, hedging);
        struct scenario sc;
        struct scenario_diag d = {0};
        if (scenario_load_text(&sc, text, "random", NULL, 0, &d) != 0) {
            for (size_t i = 0; i < d.n; i++)
                print_error("%s\n", d.msg[i]);
            fail_msg("case %u is not a valid scenario:\n%s", seed, text);
        }
        scenario_diag_fini(&d);
        char err[512];
        uint64_t counts[2][3];
        for (int k = 0; k < 2; k++) {
            struct sim *s = trace_sim_create(&sc, 0, err, sizeof err);
            if (s == NULL || sim_run(s, NULL, NULL, err, sizeof err) != 0)
                fail_msg("case %u: %s\n%s", seed, err, text);
            const struct metrics *m = sim_metrics(s);
            counts[k][0] = m->events;
            counts[k][1] = m->outcomes[OUT_OK];
            counts[k][2] = m->server_arrivals;
            sim_destroy(s);
        }
        if (memcmp(counts[0], counts[1], sizeof counts[0]) != 0)
            fail_msg("case %u is not deterministic\n%s", seed, text);
    }
}

static void random_graphs_keep_their_invariants(void **state)
{
    (void)state;
    check_cases(false);
}

/* The same with hedged layers and cancellation (the cases differ: other
 * draws): every copy answered, abandoned or still out, every job dropped,
 * stopped, completed, queued or busy. */
static void hedged_graphs_keep_their_invariants(void **state)
{
    (void)state;
    check_cases(true);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(random_graphs_keep_their_invariants),
                                       cmocka_unit_test(hedged_graphs_keep_their_invariants)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
