/*
 * capacity — the baseline load of each service and the lint's figures.
 * See capacity.h for the formulas and what they leave out.
 *
 * The calls form a DAG (validation refuses a cycle), so holds, visits and
 * the worst path are memoised walks of it. The backoff bound runs the
 * kind's own next_delay with a generator whose every uniform draw is the
 * largest double below 1: every formula is non-decreasing in its draw, so
 * this is the supremum of each delay, and of their sum for the stateful
 * kinds (decorrelated, polly-v2, cenkalti), whose state grows with it.
 */
#include "capacity.h"

#include <float.h>
#include <math.h>
#include <string.h>

#include <gsl/gsl_rng.h>

/* ---- a generator whose every draw is the top of its range ---- */

static void top_set(void *state, unsigned long seed) { (void)state, (void)seed; }
static unsigned long top_get(void *state) { (void)state; return 0xffffffffUL; }
static double top_get_double(void *state) { (void)state; return 1.0 - DBL_EPSILON / 2.0; }

static const gsl_rng_type top_type = {"top", 0xffffffffUL, 0, 0, top_set, top_get, top_get_double};

double capacity_backoff_max_ns(const struct layer_cfg *l)
{
    gsl_rng top = {&top_type, NULL};
    struct backoff_state st;
    backoff_state_init(&l->bp, &st);
    double sum = 0;
    for (unsigned k = 1; k < l->attempts; k++)
        sum += (double)l->backoff->next_delay(&l->bp, &st, k, CLS_TIMEOUT, &top);
    return sum;
}

static double worst_call_ns(const struct layer_cfg *l, double backoff_ns)
{
    double worst = INFINITY;
    if (l->timeout != RS_TIME_NEVER)
        worst = (double)l->attempts * (double)l->timeout + backoff_ns;
    if (l->deadline != RS_TIME_NEVER && (double)l->deadline < worst)
        worst = (double)l->deadline;
    return worst;
}

/* ---- the graph ---- */

double capacity_edge_attempts(const struct scenario *sc, int from, unsigned to)
{
    double n = 1;
    for (unsigned i = 0; i < sc->nlayers; i++)
        if (sc->layers[i].from_service == from && sc->layers[i].to_service == to)
            n *= sc->layers[i].attempts;
    return n;
}

/* The mean latency of the hops of the layers on the edge, both ways. */
static double edge_hops_ns(const struct scenario *sc, int from, unsigned to)
{
    double ns = 0;
    for (unsigned i = 0; i < sc->nlayers; i++) {
        const struct layer_cfg *l = &sc->layers[i];
        if (l->from_service != from || l->to_service != to)
            continue;
        if (l->has_request_latency)
            ns += dist_mean_ns(&l->request_latency);
        if (l->has_response_latency)
            ns += dist_mean_ns(&l->response_latency);
    }
    return ns;
}

struct walk {
    const struct scenario *sc;
    double rate; /* requests per second assumed (NaN: unknown) */
    bool held[SCENARIO_MAX_SERVICES], visited[SCENARIO_MAX_SERVICES], pathed[SCENARIO_MAX_SERVICES];
    double hold[SCENARIO_MAX_SERVICES], visits[SCENARIO_MAX_SERVICES], amp[SCENARIO_MAX_SERVICES];
    double hit[SCENARIO_MAX_SERVICES];  /* this round's hit ratio */
    double load[SCENARIO_MAX_SERVICES]; /* the share of executions that call through: last round's */
    double next_load[SCENARIO_MAX_SERVICES];
    int next[SCENARIO_MAX_SERVICES]; /* the callee on the worst path; -1: none */
};

static double visits(struct walk *w, unsigned u);

double capacity_hit_ratio(const struct scenario *sc, unsigned u, double lookups, double miss_ns, double *load)
{
    const struct service_cfg *v = &sc->services[u];
    *load = 1;
    if (v->cache_index < 0)
        return 0;
    const struct cache_cfg *cf = &sc->caches[v->cache_index];
    if (cf->capacity >= 0 || !(lookups > 0))
        return 0; /* a bounded cache (LRU) or an unknown rate: every lookup a miss */
    if (cf->ttl == RS_TIME_NEVER) {
        *load = 0;
        return 1;
    }
    double norm = 0, h = 0, l = 0, t = (double)cf->ttl / 1e9, m = miss_ns / 1e9;
    for (unsigned k = 1; k <= sc->keys; k++)
        norm += sc->zipf > 0 ? pow(k, -sc->zipf) : 1;
    for (unsigned k = 1; k <= sc->keys; k++) {
        double p = (sc->zipf > 0 ? pow(k, -sc->zipf) : 1) / norm, x = lookups * p * t, y = lookups * p * m;
        h += p * x / (1 + y + x);
        l += p * (cf->coalesce ? 1 : 1 + y) / (1 + y + x);
    }
    *load = l;
    return h;
}

/* A hit does the cache's hit work; a miss, own work, then each call's
 * response (hops + the callee's hold), then the work after the calls. */
static double hold_ns(struct walk *w, unsigned u)
{
    if (w->held[u])
        return w->hold[u];
    const struct service_cfg *v = &w->sc->services[u];
    double ns = dist_mean_ns(&v->service);
    for (unsigned c = 0; c < v->ncalls; c++)
        ns += edge_hops_ns(w->sc, (int)u, v->calls[c].service) + hold_ns(w, v->calls[c].service);
    if (v->has_after)
        ns += dist_mean_ns(&v->service_after);
    double h = w->hit[u] = capacity_hit_ratio(w->sc, u, w->rate * visits(w, u), ns, &w->next_load[u]);
    if (h > 0)
        ns = h * dist_mean_ns(&w->sc->caches[v->cache_index].hit) + (1 - h) * ns;
    w->held[u] = true;
    return w->hold[u] = ns;
}

/* 1 at the entry, plus visits(caller) × the share of its executions that
 * call through its cache (the last round's) × k for every call of u. */
static double visits(struct walk *w, unsigned u)
{
    if (w->visited[u])
        return w->visits[u];
    const struct scenario *sc = w->sc;
    double n = u == sc->entry ? 1 : 0;
    for (unsigned s = 0; s < sc->nservices; s++)
        for (unsigned c = 0; c < sc->services[s].ncalls; c++)
            if (sc->services[s].calls[c].service == u)
                n += visits(w, s) * w->load[s] * sc->services[s].calls[c].fanout;
    w->visited[u] = true;
    return w->visits[u] = n;
}

/* The largest product of layers' attempts from u down; the first largest
 * call is remembered in next[u]. */
static double amplification(struct walk *w, unsigned u)
{
    if (w->pathed[u])
        return w->amp[u];
    const struct service_cfg *v = &w->sc->services[u];
    double most = 1;
    w->next[u] = -1;
    for (unsigned c = 0; c < v->ncalls; c++) {
        unsigned to = v->calls[c].service;
        double x = capacity_edge_attempts(w->sc, (int)u, to) * amplification(w, to);
        if (x > most) {
            most = x;
            w->next[u] = (int)to;
        }
    }
    w->pathed[u] = true;
    return w->amp[u] = most;
}

/* Requests per second at baseline (capacity.h), and the hit ratios. The
 * visits below a cache depend on its hit ratio, which depends on the rate
 * of its lookups and on how long a miss takes to fill it; a closed loop's
 * rate depends on its response. With caches or a closed loop the estimate
 * starts from cold caches (every execution calls through) and is
 * repeated a fixed number of times, each round using the last round's
 * shares. */
static double request_rate(const struct scenario *sc, struct walk *w, double *entry_ns)
{
    bool occ = sc->services[sc->entry].model == MODEL_OCC, closed = sc->model == LOAD_CLOSED && !occ;
    w->rate = occ || sc->trace[0] != '\0' ? NAN : closed ? 0 : sc->rate;
    unsigned rounds = sc->ncaches ? 32 : closed ? 2 : 1;
    for (unsigned u = 0; u < SCENARIO_MAX_SERVICES; u++)
        w->load[u] = 1;
    for (unsigned r = 0; r < rounds; r++) {
        memset(w->held, 0, sizeof w->held);
        memset(w->visited, 0, sizeof w->visited);
        *entry_ns = edge_hops_ns(sc, SCENARIO_CLIENT, sc->entry) + hold_ns(w, sc->entry);
        for (unsigned u = 0; u < sc->nservices; u++)
            hold_ns(w, u); /* every hit ratio of this round */
        if (r + 1 == rounds)
            break;
        memcpy(w->load, w->next_load, sizeof w->load);
        if (closed)
            w->rate = sc->clients / ((dist_mean_ns(&sc->think) + *entry_ns) / 1e9);
    }
    return w->rate;
}

void capacity_estimate(const struct scenario *sc, struct capacity *c)
{
    struct walk w;
    memset(&w, 0, sizeof w);
    memset(c, 0, sizeof *c);
    w.sc = sc;
    c->request_rate = request_rate(sc, &w, &c->entry_ns);
    for (unsigned u = 0; u < sc->nservices; u++) {
        const struct service_cfg *v = &sc->services[u];
        struct capacity_service *cs = &c->svc[u];
        cs->visits = visits(&w, u);
        cs->hold_ns = hold_ns(&w, u);
        cs->hit = w.hit[u];
        cs->rate = c->request_rate * cs->visits;
        cs->slots = (double)v->workers * v->replicas;
        cs->util = v->model == MODEL_OCC ? NAN : cs->rate * cs->hold_ns / 1e9 / cs->slots;
    }
    for (unsigned i = 0; i < sc->nlayers; i++) {
        c->backoff_ns[i] = capacity_backoff_max_ns(&sc->layers[i]);
        c->layer_worst_ns[i] = worst_call_ns(&sc->layers[i], c->backoff_ns[i]);
    }
    c->amplification = capacity_edge_attempts(sc, SCENARIO_CLIENT, sc->entry) * amplification(&w, sc->entry);
    for (int u = (int)sc->entry; u >= 0 && c->npath < SCENARIO_MAX_SERVICES; u = w.next[u])
        c->path[c->npath++] = (unsigned)u;
}
