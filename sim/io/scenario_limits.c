/*
 * scenario_limits — the limits on the size of a run, checked after the
 * cross-field rules: the memory of budget and breaker states, the attempts
 * one request can cause at the bottom of the service graph (the product of
 * attempts and fan-outs over its worst path), and the rows of services.csv.
 *
 * The worst path is found by a memoised walk of the calls, a DAG once the
 * rules have passed: O(services · calls · layers); the states and rows are
 * O(layers) and O(services). Each message names the key to change.
 */
#include "scenario_int.h"

#include <limits.h>
#include <stdarg.h>
#include <string.h>

/* ---- limits on the size of the run ---- */

/* The number of budget or breaker states of layer l with this scope. */
static double scope_states(const struct scenario *sc, const struct layer_cfg *l, enum scope scope)
{
    if (scope == SCOPE_SHARED)
        return 1;
    return scope == SCOPE_CLIENT || l->instances == 0 ? sc->clients : l->instances;
}

static double budget_bytes(const struct scenario *sc, const struct layer_cfg *l)
{
    if (l->budget->id == BUDGET_NONE)
        return 0;
    return scope_states(sc, l, l->budget_scope) * (double)budget_state_size(l->budget);
}

static double breaker_bytes(const struct scenario *sc, const struct layer_cfg *l)
{
    if (l->breaker->id == BREAKER_NONE)
        return 0;
    return scope_states(sc, l, l->breaker_scope) * (double)breaker_state_size(l->breaker, &l->breaker_p);
}

double scenario_state_bytes(const struct scenario *sc)
{
    double sum = 0;
    for (unsigned i = 0; i < sc->nlayers; i++)
        sum += budget_bytes(sc, &sc->layers[i]) + breaker_bytes(sc, &sc->layers[i]);
    return sum;
}

/* Appends to buf what one layer's budgets (or breakers) need: the key that
 * sets how many there are, and the bytes of each. */
static void describe_states(const struct scenario *sc, const struct layer_cfg *l, bool breaker,
                            char *buf, size_t size)
{
    enum scope scope = breaker ? l->breaker_scope : l->budget_scope;
    double bytes = breaker ? breaker_bytes(sc, l) : budget_bytes(sc, l);
    double n = scope_states(sc, l, scope);
    char count[96];
    if (scope == SCOPE_CLIENT || l->instances == 0)
        snprintf(count, sizeof count, "load.clients = %u", sc->clients);
    else
        snprintf(count, sizeof count, "layer.%s.instances = %u", l->name, l->instances);
    size_t used = strlen(buf);
    snprintf(buf + used, size - used, "%slayer.%s.%s = %s with %s_scope = %s: %s states of %.0f bytes, %.2f GB",
             used ? "; " : "", l->name, breaker ? "breaker" : "budget",
             breaker ? l->breaker->name : l->budget->name, breaker ? "breaker" : "budget",
             scn_scope_names[scope], count, bytes / n, bytes / 1e9);
}

/* Budget and breaker states of the whole run, all layers together. */
static void check_state_size(struct apply_ctx *ac)
{
    const struct scenario *sc = ac->sc;
    double total = scenario_state_bytes(sc), most = 0;
    if (total <= SCENARIO_MAX_STATE_BYTES)
        return;
    char parts[3000] = "", w[400];
    unsigned li = 0;
    bool lb = false;
    for (unsigned i = 0; i < sc->nlayers; i++)
        for (int b = 0; b < 2; b++) {
            const struct layer_cfg *l = &sc->layers[i];
            double bytes = b ? breaker_bytes(sc, l) : budget_bytes(sc, l);
            if (bytes <= 1e6)
                continue; /* shared states, or few: not what drives it */
            describe_states(sc, l, b, parts, sizeof parts);
            if (bytes > most) {
                most = bytes;
                li = i;
                lb = b;
            }
        }
    scn_diag_add(ac->diag, "%s: budget and breaker states would need %.2f GB over all layers; at most %.0f GB are allowed (%s): "
                 "use a wider budget_scope or breaker_scope (instance or shared), fewer clients or instances, or a smaller breaker_window",
                 scn_key_where(ac, S_LAYER, li, lb ? "breaker" : "budget", w, sizeof w), total / 1e9,
                 SCENARIO_MAX_STATE_BYTES / 1e9, parts);
}

static unsigned long long sat_mul(unsigned long long a, unsigned long long b)
{
    return b != 0 && a > ULLONG_MAX / b ? ULLONG_MAX : a * b;
}

/* The attempts of the layers on the edge from -> to, multiplied. */
static unsigned long long edge_attempts(const struct scenario *sc, int from, unsigned to)
{
    unsigned long long product = 1;
    for (unsigned i = 0; i < sc->nlayers; i++)
        if (sc->layers[i].from_service == from && sc->layers[i].to_service == to)
            product = sat_mul(product, sc->layers[i].attempts);
    return product;
}

/* The most attempts one call of service u can cause below it, over every
 * path of calls (1 for a service that calls none); memoised in most[]
 * (0: not yet known), with next[u] the call on the worst path or -1. The
 * calls form a DAG: O(services · calls · layers). */
static unsigned long long worst_below(const struct scenario *sc, unsigned u,
                                      unsigned long long *most, int *next)
{
    if (most[u] != 0)
        return most[u];
    unsigned long long best = 1;
    next[u] = -1;
    for (unsigned c = 0; c < sc->services[u].ncalls; c++) {
        const struct dep_cfg *dep = &sc->services[u].calls[c];
        unsigned long long x = sat_mul(sat_mul(dep->fanout, edge_attempts(sc, (int)u, dep->service)),
                                       worst_below(sc, dep->service, most, next));
        if (x > best) {
            best = x;
            next[u] = (int)c;
        }
    }
    return most[u] = best;
}

/* A path walked term by term: the product so far, the term at which it
 * passes the limit (a layer's attempts, or a service's fan-out to one of
 * its calls), and the terms written out. */
enum culprit { CULPRIT_NONE, CULPRIT_LAYER, CULPRIT_FANOUT };

struct walk {
    unsigned long long product;
    enum culprit culprit;
    unsigned index; /* the layer, or the service whose calls fan out */
    char parts[2400];
};

static void walk_term(struct walk *wk, enum culprit kind, unsigned index, unsigned long long factor,
                      const char *fmt, ...) __attribute__((format(printf, 5, 6)));

static void walk_term(struct walk *wk, enum culprit kind, unsigned index, unsigned long long factor,
                      const char *fmt, ...)
{
    size_t used = strlen(wk->parts);
    if (used > 0 && used < sizeof wk->parts)
        used += (size_t)snprintf(wk->parts + used, sizeof wk->parts - used, " x ");
    va_list ap;
    va_start(ap, fmt);
    if (used < sizeof wk->parts)
        vsnprintf(wk->parts + used, sizeof wk->parts - used, fmt, ap);
    va_end(ap);
    unsigned long long next = sat_mul(wk->product, factor);
    if (wk->product <= SCENARIO_MAX_ATTEMPTS && next > SCENARIO_MAX_ATTEMPTS) {
        wk->culprit = kind; /* the term that passes the limit */
        wk->index = index;
    }
    wk->product = next;
}

static void walk_edge(const struct scenario *sc, struct walk *wk, int from, unsigned to)
{
    for (unsigned i = 0; i < sc->nlayers; i++) {
        const struct layer_cfg *l = &sc->layers[i];
        if (l->from_service == from && l->to_service == to)
            walk_term(wk, CULPRIT_LAYER, i, l->attempts, "layer.%s.attempts = %u", l->name, l->attempts);
    }
}

/* Says which term passed the limit: a layer's attempts, or a fan-out (a
 * graph without layers is bounded as well: the application's call is one
 * attempt, and its fan-outs multiply alone). */
static void report_attempts(struct apply_ctx *ac, const struct walk *wk, const char *path, unsigned hops)
{
    const struct scenario *sc = ac->sc;
    char w[400];
    if (wk->culprit == CULPRIT_FANOUT) {
        scn_key_where(ac, S_SERVICE, wk->index, "calls", w, sizeof w);
        scn_diag_add(ac->diag, "%s: [service %s] calls: a request could make %llu attempts, the product of the layers' attempts and the fan-outs on the path %s (%s); "
                     "at most %llu are allowed: lower a fan-out or some layer's attempts",
                     w, sc->services[wk->index].name, wk->product, path, wk->parts, SCENARIO_MAX_ATTEMPTS);
        return;
    }
    const struct layer_cfg *l = &sc->layers[wk->index];
    scn_key_where(ac, S_LAYER, wk->index, "attempts", w, sizeof w);
    if (hops == 0)
        scn_diag_add(ac->diag, "%s: [layer %s] attempts = %u: a request could make %llu attempts, the product of every layer's attempts (%s); "
                     "at most %llu are allowed: lower some layer's attempts",
                     w, l->name, l->attempts, wk->product, wk->parts, SCENARIO_MAX_ATTEMPTS);
    else
        scn_diag_add(ac->diag, "%s: [layer %s] attempts = %u: a request could make %llu attempts, the product of the layers' attempts and the fan-outs on the path %s (%s); "
                     "at most %llu are allowed: lower some layer's attempts or a fan-out",
                     w, l->name, l->attempts, wk->product, path, wk->parts, SCENARIO_MAX_ATTEMPTS);
}

/* Attempts per request: every layer retries every attempt of the layer
 * above, and a service calls a dependency fan-out times for each of its
 * executions, so they multiply along a path from the clients; the worst
 * path is bounded, whether or not it has layers. */
static void check_attempts(struct apply_ctx *ac)
{
    const struct scenario *sc = ac->sc;
    if (!ac->graph_ok)
        return;
    unsigned long long most[SCENARIO_MAX_SERVICES] = {0};
    int next[SCENARIO_MAX_SERVICES];
    char path[SCENARIO_MAX_SERVICES * (SCENARIO_NAME_MAX + 4) + 16];
    struct walk wk = {.product = 1, .culprit = CULPRIT_NONE};
    unsigned u = sc->entry, hops = 0;
    worst_below(sc, u, most, next);
    walk_edge(sc, &wk, SCENARIO_CLIENT, u);
    size_t used = (size_t)snprintf(path, sizeof path, "clients -> %s", sc->services[u].name);
    for (; next[u] >= 0; hops++) {
        const struct dep_cfg *dep = &sc->services[u].calls[next[u]];
        if (dep->fanout > 1)
            walk_term(&wk, CULPRIT_FANOUT, u, dep->fanout, "service.%s.calls = %s*%u", sc->services[u].name,
                      dep->name, dep->fanout);
        walk_edge(sc, &wk, (int)u, dep->service);
        u = dep->service;
        used += (size_t)snprintf(path + used, sizeof path - used, " -> %s", sc->services[u].name);
    }
    if (wk.product > SCENARIO_MAX_ATTEMPTS)
        report_attempts(ac, &wk, path, hops);
}

/* services.csv has a row per bucket for every service and every replica. */
static void check_rows(struct apply_ctx *ac)
{
    const struct scenario *sc = ac->sc;
    if (!sc->graph || sc->bucket <= 0 || sc->duration / sc->bucket > SCENARIO_MAX_BUCKETS)
        return; /* the buckets' own limit is told apart */
    long long nb = (long long)(sc->duration / sc->bucket + (sc->duration % sc->bucket != 0)), reps = 0;
    for (unsigned i = 0; i < sc->nservices; i++)
        reps += sc->services[i].replicas;
    long long rows = nb * ((long long)sc->nservices + reps);
    if (rows <= SCENARIO_MAX_SERVICE_ROWS)
        return;
    char w[400], a[32];
    scn_diag_add(ac->diag, "%s: [run] bucket = %s: services.csv would have %lld rows (%lld buckets x (%u services + %lld replicas)); "
                 "at most %lld are allowed: a longer bucket, a shorter run or fewer replicas",
                 scn_at(ac, "bucket", w, sizeof w), units_format_duration(sc->bucket, a, sizeof a), rows, nb,
                 sc->nservices, reps, SCENARIO_MAX_SERVICE_ROWS);
}

void scn_check_limits(struct apply_ctx *ac)
{
    check_state_size(ac);
    check_attempts(ac);
    check_rows(ac);
}
