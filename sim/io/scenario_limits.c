/*
 * scenario_limits — the limits on the size of a run, checked after the
 * cross-field rules: the memory the run allocates before its first event
 * (sim_footprint: budget, breaker and bulkhead states, caches, clients,
 * replicas, time series), the attempts one request can cause over the
 * whole service graph (attempts and fan-outs multiplied along each path,
 * summed over the paths), and the rows of services.csv.
 *
 * The attempts are summed by a memoised walk of the calls, a DAG once the
 * rules have passed: O(services · calls · layers); the states and rows are
 * O(layers) and O(services). Each message names the key to change.
 */
#include "scenario_int.h"

#include "sim.h"

#include <limits.h>
#include <stdarg.h>
#include <string.h>

/* ---- limits on the size of the run ---- */

/* What one layer's budgets, breakers or bulkheads (which 0, 1, 2) need. */
static double layer_part(const struct scenario *sc, const struct layer_cfg *l, int which)
{
    return which == 0 ? sim_layer_budget_bytes(sc, l)
           : which == 1 ? sim_layer_breaker_bytes(sc, l)
                        : sim_layer_bulkhead_bytes(sc, l);
}

/* Appends to buf what one layer's budgets, breakers or bulkheads need: the
 * key that sets how many there are, and the bytes of each. */
static void describe_layer(const struct scenario *sc, const struct layer_cfg *l, int which, char *buf,
                           size_t size)
{
    enum scope scope = which == 0 ? l->budget_scope : which == 1 ? l->breaker_scope : SCOPE_INSTANCE;
    double bytes = layer_part(sc, l, which), n = sim_layer_states(sc, l, scope);
    char count[96], what[160];
    if (scope == SCOPE_CLIENT || l->instances == 0)
        snprintf(count, sizeof count, "load.clients = %u", sc->clients);
    else
        snprintf(count, sizeof count, "layer.%s.instances = %u", l->name, l->instances);
    if (which == 2)
        snprintf(what, sizeof what, "layer.%s.concurrency = %u", l->name, l->concurrency);
    else
        snprintf(what, sizeof what, "layer.%s.%s = %s with %s_scope = %s", l->name, which ? "breaker" : "budget",
                 which ? l->breaker->name : l->budget->name, which ? "breaker" : "budget", scn_scope_names[scope]);
    size_t used = strlen(buf);
    if (used < size)
        snprintf(buf + used, size - used, "%s%s: %s %s of %.0f bytes, %.2f GB", used ? "; " : "", what, count,
                 which == 2 ? "bulkheads" : "states", bytes / n, bytes / 1e9);
}

/* The run's state, every part of sim_footprint together: budget, breaker
 * and bulkhead states per layer, caches per key, clients' timers,
 * replicas and time series. The message lists each layer's part and each
 * other part over 1 MB, and points at the key of the largest. */
static void check_state_size(struct apply_ctx *ac)
{
    const struct scenario *sc = ac->sc;
    double part[SIM_FOOTPRINT_PARTS], total = sim_footprint(sc, part), most = 0;
    if (total <= SCENARIO_MAX_STATE_BYTES)
        return;
    char parts[3000] = "", w[400];
    const char *key = "clients";
    int li = -1, lw = 0;
    for (unsigned i = 0; i < sc->nlayers; i++)
        for (int which = 0; which < 3; which++) {
            double bytes = layer_part(sc, &sc->layers[i], which);
            if (bytes <= 1e6)
                continue; /* shared states, or few: not what drives it */
            describe_layer(sc, &sc->layers[i], which, parts, sizeof parts);
            if (bytes > most)
                most = bytes, li = (int)i, lw = which;
        }
    for (int p = 0; p < SIM_FOOTPRINT_PARTS; p++) {
        if (sim_footprint_part_key(p) == NULL || part[p] <= 1e6)
            continue; /* a layer's part is told with the layer's keys, above */
        size_t used = strlen(parts);
        if (used < sizeof parts)
            snprintf(parts + used, sizeof parts - used, "%s%s: %.2f GB", used ? "; " : "", sim_footprint_part_name(p),
                     part[p] / 1e9);
        if (part[p] > most)
            most = part[p], li = -1, key = sim_footprint_part_key(p);
    }
    if (li >= 0)
        scn_key_where(ac, S_LAYER, (unsigned)li, lw == 0 ? "budget" : lw == 1 ? "breaker" : "concurrency", w, sizeof w);
    else
        scn_at(ac, key, w, sizeof w);
    scn_diag_add(ac->diag, "%s: the run's state would need %.2f GB before its first request; at most %.0f GB are allowed (%s): "
                 "use a wider budget_scope or breaker_scope (instance or shared), fewer clients, instances or keys, "
                 "a smaller breaker_window, or a longer bucket",
                 w, total / 1e9, SCENARIO_MAX_STATE_BYTES / 1e9, parts);
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

static unsigned long long sat_add(unsigned long long a, unsigned long long b)
{
    return a > ULLONG_MAX - b ? ULLONG_MAX : a + b;
}

/* What one execution of service u causes below it, memoised in known[]
 * (0: not yet): all[u], every attempt of every call on every path (each
 * attempt executes the service it reaches once more), and next[u], the
 * call that makes most of them (-1: none), which the message follows. The
 * calls form a DAG once the rules have passed: O(services · calls · layers). */
struct below {
    unsigned long long all[SCENARIO_MAX_SERVICES];
    int next[SCENARIO_MAX_SERVICES];
    bool known[SCENARIO_MAX_SERVICES];
};

static void walk_below(const struct scenario *sc, unsigned u, struct below *b)
{
    if (b->known[u])
        return;
    unsigned long long all = 0, most = 0;
    b->next[u] = -1;
    for (unsigned c = 0; c < sc->services[u].ncalls; c++) {
        const struct dep_cfg *dep = &sc->services[u].calls[c];
        walk_below(sc, dep->service, b);
        unsigned long long calls = sat_mul(dep->fanout, edge_attempts(sc, (int)u, dep->service));
        unsigned long long x = sat_mul(calls, sat_add(1, b->all[dep->service]));
        all = sat_add(all, x);
        if (x > most) {
            most = x;
            b->next[u] = (int)c;
        }
    }
    b->all[u] = all;
    b->known[u] = true;
}

/* A count as text: past what 64 bits hold, only a bound. */
static const char *count_text(unsigned long long n, char *buf, size_t size)
{
    if (n == ULLONG_MAX)
        snprintf(buf, size, "more than 10^19");
    else
        snprintf(buf, size, "%llu", n);
    return buf;
}

/* A path walked term by term: the product so far, the term at which it
 * passes the limit (a layer's attempts, or a service's fan-out to one of
 * its calls), and the terms written out. */
enum culprit { CULPRIT_NONE, CULPRIT_LAYER, CULPRIT_FANOUT };

struct walk {
    unsigned long long product, most; /* the product so far; the largest factor */
    enum culprit culprit, largest;    /* the term that passed the limit; the largest's kind */
    unsigned index, largest_index;    /* the layer, or the service whose calls fan out */
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
        wk->culprit = kind; /* the term that passes the limit: more than 1, what to lower */
        wk->index = index;
    }
    if (factor > wk->most) {
        wk->most = factor;
        wk->largest = kind;
        wk->largest_index = index;
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

/* Says how many attempts a request could make and which term to lower:
 * the one at which the worst path passes the limit, or (a wide graph whose
 * paths each stay under it) the largest on that path. A graph without
 * layers is bounded as well: the application's call is one attempt. */
static void report_attempts(struct apply_ctx *ac, const struct walk *wk, unsigned long long total,
                            const char *path, unsigned hops)
{
    const struct scenario *sc = ac->sc;
    enum culprit kind = wk->culprit != CULPRIT_NONE ? wk->culprit : wk->largest;
    unsigned index = wk->culprit != CULPRIT_NONE ? wk->index : wk->largest_index;
    char w[400], what[200];
    if (kind == CULPRIT_FANOUT) {
        scn_key_where(ac, S_SERVICE, index, "calls", w, sizeof w);
        snprintf(what, sizeof what, "[service %s] calls", sc->services[index].name);
    } else {
        scn_key_where(ac, S_LAYER, index, "attempts", w, sizeof w);
        snprintf(what, sizeof what, "[layer %s] attempts = %u", sc->layers[index].name, sc->layers[index].attempts);
    }
    char n[32], p[32];
    count_text(total, n, sizeof n);
    if (hops == 0)
        scn_diag_add(ac->diag, "%s: %s: a request could make %s attempts, the product of every layer's attempts (%s); "
                     "at most %llu are allowed: lower some layer's attempts",
                     w, what, n, wk->parts, SCENARIO_MAX_ATTEMPTS);
    else
        scn_diag_add(ac->diag, "%s: %s: a request could make %s attempts over the service graph, most of them down the path %s, "
                     "which multiplies to %s (%s); at most %llu are allowed: lower %s",
                     w, what, n, path, count_text(wk->product, p, sizeof p), wk->parts, SCENARIO_MAX_ATTEMPTS,
                     kind == CULPRIT_FANOUT ? "a fan-out or some layer's attempts" : "some layer's attempts or a fan-out");
}

/* Attempts per request: every layer retries every attempt of the layer
 * above, a service calls a dependency fan-out times for each of its
 * executions, and each attempt executes the service it reaches: summed
 * over every path of the graph from the clients, whether or not it has
 * layers, they are bounded. The message walks the worst path. */
static void check_attempts(struct apply_ctx *ac)
{
    const struct scenario *sc = ac->sc;
    if (!ac->graph_ok)
        return;
    struct below b = {.known = {false}};
    char path[SCENARIO_MAX_SERVICES * (SCENARIO_NAME_MAX + 4) + 16];
    struct walk wk = {.product = 1, .most = 1, .culprit = CULPRIT_NONE, .largest = CULPRIT_NONE};
    unsigned u = sc->entry, hops = 0;
    walk_below(sc, u, &b);
    unsigned long long first = edge_attempts(sc, SCENARIO_CLIENT, u),
                       total = sat_mul(first, sat_add(1, b.all[u]));
    if (total <= SCENARIO_MAX_ATTEMPTS)
        return;
    walk_edge(sc, &wk, SCENARIO_CLIENT, u);
    size_t used = (size_t)snprintf(path, sizeof path, "clients -> %s", sc->services[u].name);
    for (; b.next[u] >= 0; hops++) {
        const struct dep_cfg *dep = &sc->services[u].calls[b.next[u]];
        if (dep->fanout > 1)
            walk_term(&wk, CULPRIT_FANOUT, u, dep->fanout, "service.%s.calls = %s*%u", sc->services[u].name,
                      dep->name, dep->fanout);
        walk_edge(sc, &wk, (int)u, dep->service);
        u = dep->service;
        used += (size_t)snprintf(path + used, sizeof path - used, " -> %s", sc->services[u].name);
    }
    if (wk.culprit == CULPRIT_NONE && wk.largest == CULPRIT_NONE) { /* a path of ones: the widest fan-out */
        wk.largest = CULPRIT_FANOUT;
        wk.largest_index = sc->entry;
    }
    report_attempts(ac, &wk, total, path, hops);
}

/* services.csv has a row per bucket for every service and every replica. */
static void check_rows(struct apply_ctx *ac)
{
    const struct scenario *sc = ac->sc;
    rs_time h = sim_horizon(sc); /* a drained run's rows too */
    if (!sc->graph || sc->bucket <= 0 || h / sc->bucket > SCENARIO_MAX_BUCKETS)
        return; /* the buckets' own limit is told apart */
    long long nb = (long long)(h / sc->bucket + (h % sc->bucket != 0)), reps = 0;
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
    /* too many rows of services.csv says what to change more precisely
     * than the time series' memory it also costs */
    size_t problems = ac->diag->n + ac->diag->more;
    check_rows(ac);
    if (ac->diag->n + ac->diag->more == problems)
        check_state_size(ac);
    check_attempts(ac);
}
