/*
 * lint — the capacity table and the configuration warnings. See lint.h;
 * the figures come from capacity.c, this file only compares and words them.
 */
#include "lint.h"

#include <math.h>
#include <stdarg.h>
#include <string.h>

struct out {
    lint_emit emit;
    void *ctx;
    unsigned n;
};

static void say(struct out *o, enum lint_level level, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static void say(struct out *o, enum lint_level level, const char *fmt, ...)
{
    char msg[1200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    o->emit(o->ctx, level, msg);
    o->n++;
}

static const char *dur(rs_time t, char *buf, size_t size)
{
    return t == RS_TIME_NEVER ? "none" : units_format_duration(t, buf, size);
}

/* ---- services ---- */

static void lint_utilisation(const struct scenario *sc, const struct capacity *c, struct out *o, unsigned u)
{
    const struct service_cfg *v = &sc->services[u];
    const struct capacity_service *cs = &c->svc[u];
    if (!(cs->util >= LINT_UTIL_WARN)) /* NaN (occ, a trace) is never flagged */
        return;
    char cache[SCENARIO_NAME_MAX + 64] = "";
    if (v->cache_index >= 0)
        snprintf(cache, sizeof cache, " with cache %s hitting %.0f%% of lookups", v->cache, 100 * cs->hit);
    bool over = cs->util >= LINT_UTIL_OVER;
    say(o, over ? LINT_OVER : LINT_WARNING,
        "service %s: utilisation %.2f per replica (%.1f/s x %.3f ms / %u workers x %u replicas)%s: %s", v->name,
        cs->util, cs->rate, cs->hold_ns / 1e6, v->workers, v->replicas, cache,
        over ? "over capacity before any trigger"
             : "at least 0.9: waits are long and any trigger overloads it");
}

/* Whether the work a caller on layer l gave up on still reaches v's workers:
 * l gives up (a timeout or a deadline), and v does not drop it at dequeue
 * (drop_expired with the propagated deadline, no later than the timeout)
 * and l does not cancel what it abandons (cancel = on-abandon). */
static bool leaves_stale_work(const struct layer_cfg *l, const struct service_cfg *v)
{
    if ((l->timeout == RS_TIME_NEVER && l->deadline == RS_TIME_NEVER) || l->cancel == CANCEL_ON_ABANDON)
        return false;
    bool dropped = v->drop_expired && l->propagate_deadline && l->deadline != RS_TIME_NEVER &&
                   (l->timeout == RS_TIME_NEVER || l->timeout >= l->deadline);
    return !dropped;
}

static void lint_stale(const struct scenario *sc, struct out *o, unsigned u)
{
    const struct service_cfg *v = &sc->services[u];
    if (v->model != MODEL_QUEUE || v->queue >= 0)
        return;
    for (unsigned i = 0; i < sc->nlayers; i++) {
        const struct layer_cfg *l = &sc->layers[i];
        char t[32], d[32];
        if (l->to_service == u && leaves_stale_work(l, v))
            say(o, LINT_WARNING,
                "service %s: unbounded queue behind layer %s (timeout %s, deadline %s): work its caller gave up "
                "on waits and is served (stale work); bound the queue, or drop_expired with a propagated deadline",
                v->name, l->name, dur(l->timeout, t, sizeof t), dur(l->deadline, d, sizeof d));
    }
}

/* ---- layers ---- */

/* What limits a call of layer l: its per-attempt timeout or its deadline,
 * whichever is shorter; RS_TIME_NEVER when none. */
static rs_time caller_limit(const struct layer_cfg *l, const char **what)
{
    *what = l->deadline < l->timeout ? "deadline" : "timeout";
    return units_min(l->timeout, l->deadline);
}

/* Whether layer j calls layer i: j is the layer just above i on i's edge
 * (file order, outermost first), or, when i is its edge's outermost layer,
 * any layer into the service i's edge starts from. */
static bool calls_layer(const struct scenario *sc, unsigned j, unsigned i)
{
    const struct layer_cfg *l = &sc->layers[i];
    int above = -1;
    for (unsigned k = 0; k < i; k++)
        if (sc->layers[k].from_service == l->from_service && sc->layers[k].to_service == l->to_service)
            above = (int)k;
    if (above >= 0)
        return (int)j == above;
    return l->from_service != SCENARIO_CLIENT && sc->layers[j].to_service == (unsigned)l->from_service;
}

static void lint_inner(const struct scenario *sc, const struct capacity *c, struct out *o, unsigned i)
{
    const struct layer_cfg *l = &sc->layers[i];
    if (isinf(c->layer_worst_ns[i]))
        return;
    const char *from = l->from_service == SCENARIO_CLIENT ? "clients" : sc->services[l->from_service].name;
    for (unsigned j = 0; j < sc->nlayers; j++) {
        const struct layer_cfg *up = &sc->layers[j];
        const char *what;
        rs_time limit = caller_limit(up, &what);
        if (!calls_layer(sc, j, i) || limit == RS_TIME_NEVER || c->layer_worst_ns[i] < (double)limit)
            continue;
        char t[32], d[32], lim[32], worst[64], whom[SCENARIO_NAME_MAX + 32];
        if (l->timeout != RS_TIME_NEVER && c->layer_worst_ns[i] < (double)l->deadline)
            snprintf(worst, sizeof worst, "%u attempt%s x %s + %.1f ms of backoff = %.1f ms", l->attempts,
                     l->attempts == 1 ? "" : "s", dur(l->timeout, t, sizeof t), c->backoff_ns[i] / 1e6,
                     c->layer_worst_ns[i] / 1e6);
        else
            snprintf(worst, sizeof worst, "its deadline %s", dur(l->deadline, d, sizeof d));
        if (up->to_service == l->to_service && up->from_service == l->from_service)
            snprintf(whom, sizeof whom, "just above it");
        else
            snprintf(whom, sizeof whom, "which calls %s", from);
        say(o, LINT_WARNING,
            "layer %s (%s -> %s): %s, not less than the %s %s of layer %s, %s: "
            "that caller gives up before these retries end",
            l->name, from, sc->services[l->to_service].name, worst, what, dur(limit, lim, sizeof lim), up->name,
            whom);
    }
}

/* The layers on the worst path, "name N" each, " x " between. */
static void path_parts(const struct scenario *sc, const struct capacity *c, char *parts, size_t size, char *path,
                       size_t psize)
{
    size_t used = 0, pused = (size_t)snprintf(path, psize, "clients");
    parts[0] = '\0';
    for (unsigned k = 0; k < c->npath; k++) {
        int from = k == 0 ? SCENARIO_CLIENT : (int)c->path[k - 1];
        for (unsigned i = 0; i < sc->nlayers && used < size; i++) {
            const struct layer_cfg *l = &sc->layers[i];
            if (l->from_service == from && l->to_service == c->path[k])
                used += (size_t)snprintf(parts + used, size - used, "%s%s %u", used ? " x " : "", l->name,
                                         l->attempts);
        }
        if (pused < psize)
            pused += (size_t)snprintf(path + pused, psize - pused, " -> %s", sc->services[c->path[k]].name);
    }
}

static void lint_amplification(const struct scenario *sc, const struct capacity *c, struct out *o)
{
    if (!(c->amplification > LINT_MAX_AMPLIFICATION))
        return;
    char parts[SCENARIO_MAX_LAYERS * (SCENARIO_NAME_MAX + 8)], path[SCENARIO_MAX_SERVICES * (SCENARIO_NAME_MAX + 4) + 8];
    path_parts(sc, c, parts, sizeof parts, path, sizeof path);
    say(o, LINT_WARNING,
        "layers multiply attempts to %.0f per request along %s (%s), more than %.0f: "
        "a failure at %s is tried %.0f times",
        c->amplification, path, parts, LINT_MAX_AMPLIFICATION, sc->services[c->path[c->npath - 1]].name,
        c->amplification);
}

unsigned lint_scenario(const struct scenario *sc, const struct capacity *c, lint_emit emit, void *ctx)
{
    struct out o = {emit, ctx, 0};
    for (unsigned u = 0; u < sc->nservices; u++) {
        lint_utilisation(sc, c, &o, u);
        lint_stale(sc, &o, u);
    }
    for (unsigned i = 0; i < sc->nlayers; i++)
        lint_inner(sc, c, &o, i);
    lint_amplification(sc, c, &o);
    return o.n;
}

void lint_print_table(FILE *f, const struct scenario *sc, const struct capacity *c)
{
    fprintf(f, "  %-16s %12s %10s %12s %18s %12s\n", "service", "requests/s", "cache hits", "hold ms",
            "workers x replicas", "utilisation");
    for (unsigned u = 0; u < sc->nservices; u++) {
        const struct service_cfg *v = &sc->services[u];
        const struct capacity_service *cs = &c->svc[u];
        char rate[32], util[32], slots[40], hits[16] = "-";
        if (v->cache_index >= 0)
            snprintf(hits, sizeof hits, "%.2f", cs->hit);
        if (isnan(cs->rate))
            snprintf(rate, sizeof rate, "-");
        else
            snprintf(rate, sizeof rate, "%.1f", cs->rate);
        if (isnan(cs->util))
            snprintf(util, sizeof util, "%s", v->model == MODEL_OCC ? "occ" : "-");
        else
            snprintf(util, sizeof util, "%.2f", cs->util);
        snprintf(slots, sizeof slots, "%u x %u", v->workers, v->replicas);
        fprintf(f, "  %-16s %12s %10s %12.3f %18s %12s\n", v->name, rate, hits, cs->hold_ns / 1e6, slots, util);
    }
}
