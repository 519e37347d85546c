/*
 * footprint — the memory a run will allocate before its first event,
 * counted from the scenario alone, part by part. See sim.h.
 *
 * One table of parts, each a function of the scenario that mirrors an
 * allocation of sim_create and the modules it calls: budget and breaker
 * states (sim.c), bulkheads (bulkhead.c), caches (cache.c, caching.c),
 * the clients' timers (sim.c, occ.c), replicas and their queues
 * (service.c) and every time series' buckets (metrics.c, service.c,
 * caching.c). A new per-instance, per-client, per-key or per-bucket
 * array belongs here too: test_model compares this estimate with what
 * sim_create really allocates. Objects in flight (requests, calls, jobs,
 * messages, events) grow with the load, not the scenario: they are
 * bounded at run time (sim_live_bytes).
 */
#include "sim.h"

#include "simctx.h"

uint32_t sim_layer_states(const struct scenario *sc, const struct layer_cfg *l, enum scope scope)
{
    if (scope == SCOPE_SHARED)
        return 1;
    return scope == SCOPE_CLIENT || l->instances == 0 ? sc->clients : l->instances;
}

double sim_layer_budget_bytes(const struct scenario *sc, const struct layer_cfg *l)
{
    if (l->budget->id == BUDGET_NONE)
        return 0;
    return sim_layer_states(sc, l, l->budget_scope) * (double)budget_state_size(l->budget);
}

double sim_layer_breaker_bytes(const struct scenario *sc, const struct layer_cfg *l)
{
    if (l->breaker->id == BREAKER_NONE)
        return 0;
    return sim_layer_states(sc, l, l->breaker_scope) * (double)breaker_state_size(l->breaker, &l->breaker_p);
}

/* A bulkhead per instance: slots in use, and the head, tail and length of
 * its waiting list (bulkhead_init). */
double sim_layer_bulkhead_bytes(const struct scenario *sc, const struct layer_cfg *l)
{
    if (l->concurrency == 0)
        return 0;
    return sim_layer_states(sc, l, SCOPE_INSTANCE) * 4.0 * sizeof(uint32_t);
}

/* One of the per-layer parts over every layer. */
static double over_layers(const struct scenario *sc,
                          double (*part)(const struct scenario *sc, const struct layer_cfg *l))
{
    double sum = 0;
    for (unsigned i = 0; i < sc->nlayers; i++)
        sum += part(sc, &sc->layers[i]);
    return sum;
}

static double part_budgets(const struct scenario *sc) { return over_layers(sc, sim_layer_budget_bytes); }
static double part_breakers(const struct scenario *sc) { return over_layers(sc, sim_layer_breaker_bytes); }
static double part_bulkheads(const struct scenario *sc) { return over_layers(sc, sim_layer_bulkhead_bytes); }

/* Per key of each cache: its list links, expiry, stored mark and misses in
 * flight (cache_init), and with coalescing the first waiter (caching_init). */
static double part_caches(const struct scenario *sc)
{
    const struct cache *c = NULL;
    const struct cache_rt *rt = NULL;
    double per_key = sizeof *c->prev + sizeof *c->next + sizeof *c->expires + sizeof *c->stored +
                     sizeof *c->loading, sum = 0;
    for (unsigned i = 0; i < sc->ncaches; i++)
        sum += (double)sc->keys * (per_key + (sc->caches[i].coalesce ? sizeof *rt->joined : 0));
    return sum;
}

/* Per client: the think timers of a closed loop with herds, or the occ
 * model's clients. */
static double part_clients(const struct scenario *sc)
{
    const struct sim *s = NULL;
    double sum = 0;
    if (sc->model == LOAD_CLOSED && sc->nherds > 0)
        sum += (double)sc->clients * sizeof *s->load.think;
    if (sc->nservices > 0 && sc->services[0].model == MODEL_OCC)
        sum += (double)sc->clients * sizeof *s->occ.clients;
    return sum;
}

/* Every replica, with its first queue (it grows with the load). */
static double part_replicas(const struct scenario *sc)
{
    const struct sim *s = NULL;
    double reps = 0;
    for (unsigned i = 0; i < sc->nservices; i++)
        reps += sc->services[i].replicas;
    return reps * (sizeof *s->services.reps + 1024.0 * sizeof *s->services.reps->queue);
}

/* A bucket of each time series: the run's, each layer's attempts and
 * states, each replica's (graphs) and each cache's. */
static double part_buckets(const struct scenario *sc)
{
    const struct sim *s = NULL;
    if (sc->bucket <= 0)
        return 0; /* unreachable: the parser refuses run.bucket < 1 ns (GCOVR_EXCL_LINE) */
    double nb = (double)((sim_horizon(sc) + sc->bucket - 1) / sc->bucket), reps = 0; /* a drain's too */
    for (unsigned i = 0; i < sc->nservices; i++)
        reps += sc->services[i].replicas;
    double per = (double)sizeof *s->m.b + sc->nlayers * (double)(sizeof *s->m.attempts + sizeof *s->m.lb) +
                 sc->ncaches * (double)sizeof *s->caching.cb + (sc->graph ? reps * (double)sizeof *s->services.sb : 0);
    return nb * per;
}

/* Each part, and the key that scales it (NULL: each layer's own). */
static const struct {
    const char *name, *key;
    double (*bytes)(const struct scenario *sc);
} parts[SIM_FOOTPRINT_PARTS] = {
    {"budgets", NULL, part_budgets},      {"breakers", NULL, part_breakers}, {"bulkheads", NULL, part_bulkheads},
    {"caches", "keys", part_caches},      {"clients", "clients", part_clients},
    {"replicas", "replicas", part_replicas}, {"time series", "bucket", part_buckets},
};

double sim_footprint(const struct scenario *sc, double part[SIM_FOOTPRINT_PARTS])
{
    double total = 0;
    for (int i = 0; i < SIM_FOOTPRINT_PARTS; i++) {
        double b = parts[i].bytes(sc);
        if (part != NULL)
            part[i] = b;
        total += b;
    }
    return total;
}

const char *sim_footprint_part_name(int i) { return parts[i].name; }
const char *sim_footprint_part_key(int i) { return parts[i].key; }

/* Each live object of every pool, each pending event with its slot, and
 * the replicas' queues as they grew. */
double sim_live_bytes(const struct sim *s)
{
    const struct pool *pools[] = {&s->requests, &s->calls, &s->jobs, &s->msgs, &s->joins, &s->hedges, &s->kids};
    double sum = 0;
    for (size_t i = 0; i < sizeof pools / sizeof pools[0]; i++)
        sum += (double)pools[i]->live * (double)pools[i]->size;
    double events = (double)s->q.nslots - s->q.nfree;
    return sum + events * (sizeof(struct evq_event) + sizeof *s->q.slot_seq + sizeof *s->q.free_slots) +
           s->services.queue_growth;
}
