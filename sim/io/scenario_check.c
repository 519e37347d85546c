/*
 * scenario_check — the cross-field rules of a scenario, once every entry is
 * applied: the run and the load, each service, the service graph, caches,
 * phases, layers, and the trace, which is read here once, whole.
 *
 * Services: [service NAME] sections, in file order; [server] is the service
 * named `server`. Names in `calls`, a layer's `from`/`to` and a phase's
 * `target` are resolved after every entry is applied (a service may be
 * defined after its first use); the calls must form a DAG. O(services² +
 * layers · services) for the graph rules, O(phases · (services + layers +
 * caches)) for the phases, and linear in the trace's size for the trace.
 * Every problem is added to the load's messages; nothing stops at the first.
 */
#define _XOPEN_SOURCE 700 /* realpath, and POSIX 2008 */

#include "scenario_int.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "trace.h"

/* ---- cross-field rules ---- */

/* [run] drain_limit: the drained run's time series, duration + drain_limit
 * of buckets at most, within the buckets' limit (the duration's own excess
 * is told apart above). */
static void check_drain(struct apply_ctx *ac)
{
    const struct scenario *sc = ac->sc;
    char a[32], w[400];
    if (!sc->drain || sc->bucket <= 0 || sc->bucket > sc->duration || sc->duration / sc->bucket > SCENARIO_MAX_BUCKETS)
        return;
    long long nb = (long long)(units_add(sc->duration, sc->drain_limit) / sc->bucket);
    if (nb > SCENARIO_MAX_BUCKETS)
        scn_diag_add(ac->diag, "%s: [run] drain_limit = %s: (duration + drain_limit) / bucket = %lld buckets, "
                     "the limit is %lld: a shorter drain_limit or a longer bucket",
                     scn_at(ac, "drain_limit", w, sizeof w), units_format_duration(sc->drain_limit, a, sizeof a), nb,
                     SCENARIO_MAX_BUCKETS);
}

/* [run] and [load]: the run's shape and the load. */
static void check_run(struct apply_ctx *ac)
{
    struct scenario *sc = ac->sc;
    struct scenario_diag *d = ac->diag;
    char a[32], b[32], w[400];
    if (sc->warmup >= sc->duration)
        scn_diag_add(d, "%s: [run] warmup = %s: must be less than duration (%s)", scn_at(ac, "warmup", w, sizeof w),
                     units_format_duration(sc->warmup, a, sizeof a),
                     units_format_duration(sc->duration, b, sizeof b));
    if (sc->bucket > sc->duration)
        scn_diag_add(d, "%s: [run] bucket = %s: must not exceed duration (%s)", scn_at(ac, "bucket", w, sizeof w),
                     units_format_duration(sc->bucket, a, sizeof a),
                     units_format_duration(sc->duration, b, sizeof b));
    else if (sc->bucket > 0 && sc->duration / sc->bucket > SCENARIO_MAX_BUCKETS)
        scn_diag_add(d, "%s: [run] bucket = %s: duration / bucket = %lld buckets, the limit is %lld (about %lld MB of time series)",
                     scn_at(ac, "bucket", w, sizeof w), units_format_duration(sc->bucket, a, sizeof a),
                     (long long)(sc->duration / sc->bucket), SCENARIO_MAX_BUCKETS,
                     (long long)(sc->duration / sc->bucket) * 200 / 1000000);
    check_drain(ac);
    bool occ = sc->services[0].model == MODEL_OCC;
    if (sc->model == LOAD_OPEN && !occ && !scn_given(ac, S_LOAD, "rate") && sc->trace[0] == '\0')
        scn_diag_add(d, "%s: [load] rate is required when model = open (e.g. rate = 800/s)", scn_at(ac, "model", w, sizeof w));
    if (sc->model == LOAD_CLOSED && scn_given(ac, S_LOAD, "think") && !(dist_mean_ns(&sc->think) > 0))
        scn_diag_add(d, "%s: [load] think = %s: a closed loop needs think times with a mean > 0 "
                    "(a client whose request fails at once would send again at the same instant, for ever)",
                     scn_at(ac, "think", w, sizeof w), dist_format(&sc->think, a, sizeof a));
    if (sc->model == LOAD_CLOSED && !scn_given(ac, S_LOAD, "think"))
        scn_diag_add(d, "%s: [load] think is required when model = closed (e.g. think = exp(1s))", scn_at(ac, "model", w, sizeof w));
}

/* Each service's own rules, the herd's instants between them (the order
 * of the messages is the one they have always had). */
static void check_services(struct apply_ctx *ac)
{
    struct scenario *sc = ac->sc;
    struct scenario_diag *d = ac->diag;
    char a[32], b[32], w[400], sect[96];
    for (unsigned i = 0; i < sc->nservices; i++)
        if (sc->services[i].model != MODEL_OCC && !scn_service_given(ac, i, "service"))
            scn_diag_add(d, "%s: [%s] service is required (e.g. service = exp(10ms))", sc->source,
                         scn_service_section(ac, i, NULL, sect, sizeof sect));
    for (unsigned i = 0; i < sc->nherds; i++)
        if (sc->herds[i] >= sc->duration)
            scn_diag_add(d, "%s: [herd] at = %s: must be before the end of the run (%s)",
                         scn_at(ac, "at", w, sizeof w), units_format_duration(sc->herds[i], a, sizeof a),
                         units_format_duration(sc->duration, b, sizeof b));
    for (unsigned i = 0; i < sc->nservices; i++) {
        const struct service_cfg *v = &sc->services[i];
        double perr = v->p400 + v->p500 + v->p503 + v->p_business;
        if (perr > 1.0 + 1e-12)
            scn_diag_add(d, "%s: [%s] error_400 + error_500 + error_503 + business = %g: must be at most 1",
                         scn_service_at(ac, i, "business", w, sizeof w),
                         scn_service_section(ac, i, "business", sect, sizeof sect), perr);
    }
}

/* ---- the service graph ---- */

/* The index of the service (or layer) called name, or -1. */
static int find_named(const struct scenario *sc, enum sect_kind kind, const char *name)
{
    unsigned n = kind == S_LAYER ? sc->nlayers : kind == S_CACHE ? sc->ncaches : sc->nservices;
    for (unsigned i = 0; i < n; i++)
        if (strcmp(scn_item_name(sc, kind, i), name) == 0)
            return (int)i;
    return -1;
}

/* Which names suggest_name looks among. */
enum { SUGGEST_SERVICES = 1, SUGGEST_LAYERS = 2, SUGGEST_CACHES = 4 };

/* " (did you mean 'db'?)" for the service, layer or cache (as kinds says)
 * closest to name, or "". */
static const char *suggest_name(const struct scenario *sc, const char *name, unsigned kinds,
                                char *buf, size_t size)
{
    static const enum sect_kind kind[] = {S_SERVICE, S_LAYER, S_CACHE};
    const char *best = NULL;
    size_t bestd = 3;
    for (int k = 0; k < 3; k++)
        for (unsigned i = 0; (kinds >> k & 1) && i < (k == 0   ? sc->nservices
                                                       : k == 1 ? sc->nlayers
                                                                : sc->ncaches); i++) {
            const char *cand = scn_item_name(sc, kind[k], i);
            size_t dist = scenario_edit_distance(name, cand);
            if (dist < bestd) {
                bestd = dist;
                best = cand;
            }
        }
    buf[0] = '\0';
    if (best != NULL)
        snprintf(buf, size, " (did you mean '%s'?)", best);
    return buf;
}

/* "[SECTION] KEY = 'VALUE': no service 'NAME' (did you mean ...?); allowed: ..." */
static void no_such_service(struct apply_ctx *ac, const char *w, const char *section,
                            const char *key, const char *value, const char *name, bool client)
{
    const struct scenario *sc = ac->sc;
    char list[SCENARIO_MAX_SERVICES * SCENARIO_NAME_MAX + 16], hint[96];
    size_t used = (size_t)snprintf(list, sizeof list, "%s", client ? "client" : "");
    for (unsigned i = 0; i < sc->nservices; i++)
        used += (size_t)snprintf(list + used, sizeof list - used, "%s%s", used ? ", " : "",
                                 sc->services[i].name);
    scn_diag_add(ac->diag, "%s: [%s] %s = '%s': no service '%s'%s; allowed: %s", w, section, key, value,
                 name, suggest_name(sc, name, SUGGEST_SERVICES, hint, sizeof hint), list);
}

/* Resolves every service's calls; false after a message if one names no
 * service, or the service itself. */
static bool resolve_calls(struct apply_ctx *ac)
{
    struct scenario *sc = ac->sc;
    char w[400], sect[96];
    bool ok = true;
    for (unsigned i = 0; i < sc->nservices; i++) {
        struct service_cfg *v = &sc->services[i];
        const struct entry *e = scn_key_entry(ac, S_SERVICE, i, "calls");
        for (unsigned c = 0; c < v->ncalls && e != NULL; c++) {
            int j = find_named(sc, S_SERVICE, v->calls[c].name);
            scn_key_where(ac, S_SERVICE, i, "calls", w, sizeof w);
            scn_service_section(ac, i, "calls", sect, sizeof sect);
            if (j < 0)
                no_such_service(ac, w, sect, "calls", e->value, v->calls[c].name, false);
            else if ((unsigned)j == i)
                scn_diag_add(ac->diag, "%s: [%s] calls = '%s': a service cannot call itself", w, sect,
                             e->value);
            else
                v->calls[c].service = (unsigned)j;
            ok = ok && j >= 0 && (unsigned)j != i;
        }
    }
    return ok;
}

/* Depth-first search from service u (at depth on the stack) for a call back
 * onto the stack; then cyc holds the cycle, its first service again at its
 * end. O(services + calls). */
static bool find_cycle(const struct scenario *sc, unsigned u, unsigned char *color,
                       unsigned *stack, unsigned depth, unsigned *cyc, unsigned *ncyc)
{
    color[u] = 1;
    stack[depth] = u;
    for (unsigned c = 0; c < sc->services[u].ncalls; c++) {
        unsigned v = sc->services[u].calls[c].service;
        if (color[v] == 1) {
            unsigned k = 0;
            while (stack[k] != v)
                k++;
            *ncyc = 0;
            for (; k <= depth; k++)
                cyc[(*ncyc)++] = stack[k];
            cyc[(*ncyc)++] = v;
            return true;
        }
        if (color[v] == 0 && find_cycle(sc, v, color, stack, depth + 1, cyc, ncyc))
            return true;
    }
    color[u] = 2;
    return false;
}

/* The calls must form a DAG; false after naming the first cycle found. */
static bool check_acyclic(struct apply_ctx *ac)
{
    const struct scenario *sc = ac->sc;
    unsigned char color[SCENARIO_MAX_SERVICES] = {0};
    unsigned stack[SCENARIO_MAX_SERVICES], cyc[SCENARIO_MAX_SERVICES + 1], n = 0;
    for (unsigned u = 0; u < sc->nservices; u++) {
        if (color[u] != 0 || !find_cycle(sc, u, color, stack, 0, cyc, &n))
            continue;
        char w[400], sect[96], path[SCENARIO_MAX_SERVICES * (SCENARIO_NAME_MAX + 4) + 8];
        size_t used = 0;
        path[0] = '\0';
        for (unsigned k = 0; k < n; k++)
            used += (size_t)snprintf(path + used, sizeof path - used, "%s%s", k ? " -> " : "",
                                     sc->services[cyc[k]].name);
        scn_diag_add(ac->diag, "%s: [%s] calls form a cycle: %s",
                     scn_key_where(ac, S_SERVICE, cyc[0], "calls", w, sizeof w),
                     scn_service_section(ac, cyc[0], "calls", sect, sizeof sect), path);
        return false;
    }
    return true;
}

static bool calls_service(const struct service_cfg *v, unsigned to)
{
    for (unsigned c = 0; c < v->ncalls; c++)
        if (v->calls[c].service == to)
            return true;
    return false;
}

/* Resolves layer i's from and to (filling in the defaults by name); false
 * after a message when they name no service, the same one, or an edge that
 * no service's calls make. */
static bool resolve_layer(struct apply_ctx *ac, unsigned i)
{
    struct scenario *sc = ac->sc;
    struct layer_cfg *l = &sc->layers[i];
    char w[400], sect[96];
    snprintf(sect, sizeof sect, "layer %s", l->name);
    if (l->from[0] == '\0')
        scn_copy_name(l->from, "client");
    if (l->to[0] == '\0')
        scn_copy_name(l->to, sc->services[0].name);
    int from = strcmp(l->from, "client") == 0 ? SCENARIO_CLIENT : find_named(sc, S_SERVICE, l->from);
    int to = find_named(sc, S_SERVICE, l->to);
    if (from < 0 && strcmp(l->from, "client") != 0) {
        scn_key_where(ac, S_LAYER, i, "from", w, sizeof w);
        no_such_service(ac, w, sect, "from", l->from, l->from, true);
        return false;
    }
    if (to < 0) {
        scn_key_where(ac, S_LAYER, i, "to", w, sizeof w);
        no_such_service(ac, w, sect, "to", l->to, l->to, false);
        return false;
    }
    l->from_service = from;
    l->to_service = (unsigned)to;
    scn_key_where(ac, S_LAYER, i, "to", w, sizeof w);
    if (from == to) {
        scn_diag_add(ac->diag, "%s: [%s] from = %s and to = %s: a layer sits between two different services",
                     w, sect, l->from, l->to);
        return false;
    }
    if (from != SCENARIO_CLIENT && !calls_service(&sc->services[from], (unsigned)to)) {
        scn_diag_add(ac->diag, "%s: [%s] from = %s, to = %s: service %s does not call %s; add %s to [service %s] calls",
                     w, sect, l->from, l->to, l->from, l->to, l->to, l->from);
        return false;
    }
    return true;
}

/* Every layer's edge, and the entry: the service every layer from the
 * clients goes to. False after a message when something is amiss. */
static bool resolve_layers(struct apply_ctx *ac)
{
    struct scenario *sc = ac->sc;
    char w[400];
    bool ok = true;
    for (unsigned i = 0; i < sc->nlayers; i++)
        ok = resolve_layer(ac, i) && ok;
    if (!ok || sc->nlayers == 0)
        return ok; /* no layer: the default one goes from the clients to the first service */
    int entry = -1;
    unsigned first = 0;
    for (unsigned i = 0; i < sc->nlayers; i++) {
        const struct layer_cfg *l = &sc->layers[i];
        if (l->from_service != SCENARIO_CLIENT)
            continue;
        if (entry < 0) {
            entry = (int)l->to_service;
            first = i;
        } else if (l->to_service != (unsigned)entry) {
            scn_diag_add(ac->diag, "%s: [layer %s] to = %s: every layer from the clients must go to the same service (layer %s goes to %s)",
                         scn_key_where(ac, S_LAYER, i, "to", w, sizeof w), l->name, l->to,
                         sc->layers[first].name, sc->layers[first].to);
            return false;
        }
    }
    if (entry < 0) {
        scn_diag_add(ac->diag, "%s: no layer from the clients: give one [layer NAME] from = client (the default), to the service they call",
                     sc->source);
        return false;
    }
    sc->entry = (unsigned)entry;
    return true;
}

/* Names resolved, the calls a DAG, the layers on edges that exist. */
static void check_graph(struct apply_ctx *ac)
{
    struct scenario *sc = ac->sc;
    int client = find_named(sc, S_SERVICE, "client");
    if (client >= 0) {
        char w[400];
        scn_diag_add(ac->diag, "%s: [service client]: 'client' names the clients in a layer's from; give the service another name",
                     scn_key_where(ac, S_SERVICE, (unsigned)client, "service", w, sizeof w));
        ac->graph_ok = false;
        return;
    }
    bool calls_ok = resolve_calls(ac) && check_acyclic(ac);
    bool layers_ok = calls_ok && resolve_layers(ac);
    ac->graph_ok = calls_ok && layers_ok;
}

/* Resolves phase i's target; false after a message. */
static bool resolve_target(struct apply_ctx *ac, unsigned i)
{
    struct scenario *sc = ac->sc;
    struct phase_cfg *p = &sc->phases[i];
    char w[400], name[SCENARIO_NAME_MAX + 8], hint[96];
    if (p->target[0] == '\0') {
        p->target_kind = TARGET_NONE;
        return true;
    }
    size_t n = strcspn(p->target, "#");
    snprintf(name, sizeof name, "%.*s", (int)n, p->target);
    long long rep = 0;
    if (p->target[n] == '#' && !units_parse_int(p->target + n + 1, 1, SCENARIO_MAX_REPLICAS, &rep))
        rep = 0; /* p_target checked it */
    int sv = find_named(sc, S_SERVICE, name), ly = find_named(sc, S_LAYER, name);
    int ca = find_named(sc, S_CACHE, name);
    scn_key_where(ac, S_PHASE, i, "target", w, sizeof w);
    if ((sv >= 0) + (ly >= 0) + (ca >= 0) > 1)
        scn_diag_add(ac->diag, "%s: [phase %s] target = '%s': ambiguous: more than one of the services, layers and caches is called %s; rename one",
                     w, p->name, p->target, name);
    else if (sv < 0 && ly < 0 && ca < 0)
        scn_diag_add(ac->diag, "%s: [phase %s] target = '%s': no service, layer or cache '%s'%s",
                     w, p->name, p->target, name, suggest_name(sc, name, SUGGEST_SERVICES | SUGGEST_LAYERS | SUGGEST_CACHES, hint, sizeof hint));
    else if (sv < 0 && rep > 0)
        scn_diag_add(ac->diag, "%s: [phase %s] target = '%s': %s is a %s; a replica number (#i) goes with a service",
                     w, p->name, p->target, name, ly >= 0 ? "layer" : "cache");
    else if (sv >= 0 && rep > sc->services[sv].replicas)
        scn_diag_add(ac->diag, "%s: [phase %s] target = '%s': service %s has %u replica%s",
                     w, p->name, p->target, name, sc->services[sv].replicas,
                     sc->services[sv].replicas == 1 ? "" : "s");
    else {
        p->target_kind = sv >= 0 ? TARGET_SERVICE : ly >= 0 ? TARGET_LAYER : TARGET_CACHE;
        p->target_index = (unsigned)(sv >= 0 ? sv : ly >= 0 ? ly : ca);
        p->target_replica = (unsigned)rep;
        return true;
    }
    return false;
}

/* A phase aimed at a cache takes capacity (a factor on the cache's
 * entries) and nothing else that acts on a target. */
static void check_cache_target(struct apply_ctx *ac, unsigned i)
{
    const struct phase_cfg *p = &ac->sc->phases[i];
    const struct cache_cfg *c = &ac->sc->caches[p->target_index];
    static const char *const other[] = {"outage", "slowdown", "retry_after", "latency", "loss"};
    char w[400];
    for (size_t k = 0; k < sizeof other / sizeof *other; k++)
        if (scn_phase_given(ac, i, other[k]))
            scn_diag_add(ac->diag, "%s: [phase %s] %s does not act on a cache; target = %s is a cache (it takes capacity)",
                         scn_key_where(ac, S_PHASE, i, other[k], w, sizeof w), p->name, other[k], p->target);
    if (p->has_capacity && c->capacity < 0)
        scn_diag_add(ac->diag, "%s: [phase %s] capacity acts on a cache's capacity; [cache %s] is unbounded (give it capacity = N)",
                     scn_key_where(ac, S_PHASE, i, "capacity", w, sizeof w), p->name, c->name);
}

/* Keys that act on a service need a service target (or none); latency and
 * loss act on a layer's hop and need a layer target. */
static void check_target_keys(struct apply_ctx *ac, unsigned i)
{
    const struct phase_cfg *p = &ac->sc->phases[i];
    static const char *const service_keys[] = {"capacity", "outage", "slowdown", "retry_after"};
    static const char *const hop_keys[] = {"latency", "loss"};
    char w[400];
    bool layer = p->target_kind == TARGET_LAYER;
    if (p->target_kind == TARGET_CACHE) {
        check_cache_target(ac, i);
        return;
    }
    for (size_t k = 0; k < 4 && layer; k++)
        if (scn_phase_given(ac, i, service_keys[k]))
            scn_diag_add(ac->diag, "%s: [phase %s] %s acts on a service; target = %s is a layer",
                         scn_key_where(ac, S_PHASE, i, service_keys[k], w, sizeof w), p->name,
                         service_keys[k], p->target);
    for (size_t k = 0; k < 2 && !layer; k++)
        if (scn_phase_given(ac, i, hop_keys[k]))
            scn_diag_add(ac->diag, "%s: [phase %s] %s acts on a layer's hop: it needs target = LAYER (%s%s)",
                         scn_key_where(ac, S_PHASE, i, hop_keys[k], w, sizeof w), p->name, hop_keys[k],
                         p->target[0] ? p->target : "no target is given",
                         p->target[0] ? " is a service" : "");
}

static bool resolve_flush(struct apply_ctx *ac, unsigned i);

static void check_phase(struct apply_ctx *ac, unsigned i)
{
    struct scenario *sc = ac->sc;
    struct scenario_diag *d = ac->diag;
    struct phase_cfg *p = &sc->phases[i];
    char a[32], b[32], w[400], pwbuf[400];
    const char *pw = scn_where(ac->phase_entry[i], pwbuf, sizeof pwbuf);
    if (!scn_phase_given(ac, i, "start") || !scn_phase_given(ac, i, "end")) {
        scn_diag_add(d, "%s: [phase %s] needs both start and end", pw, p->name);
        return;
    }
    if (p->end <= p->start)
        scn_diag_add(d, "%s: [phase %s] end = %s: must be after start (%s)",
                     scn_key_where(ac, S_PHASE, i, "end", w, sizeof w), p->name,
                     units_format_duration(p->end, a, sizeof a),
                     units_format_duration(p->start, b, sizeof b));
    if (p->start >= sc->duration)
        scn_diag_add(d, "%s: [phase %s] start = %s: must be before the end of the run (%s)",
                     scn_key_where(ac, S_PHASE, i, "start", w, sizeof w), p->name, units_format_duration(p->start, a, sizeof a),
                     units_format_duration(sc->duration, b, sizeof b));
    bool targeted = resolve_target(ac, i);
    if (targeted)
        check_target_keys(ac, i);
    bool flush = resolve_flush(ac, i);
    if (p->target_kind == TARGET_LAYER) {
        if (!p->has_rate && !p->has_latency && !scn_phase_given(ac, i, "loss") && !flush)
            scn_diag_add(d, "%s: [phase %s] changes nothing: give rate, latency or loss", pw, p->name);
    } else if (p->target_kind == TARGET_CACHE) {
        if (!p->has_rate && !p->has_capacity && !flush)
            scn_diag_add(d, "%s: [phase %s] changes nothing: give capacity, flush or rate", pw, p->name);
    } else if (targeted && !p->has_rate && !p->has_capacity && p->outage == OUTAGE_NONE &&
               !scn_phase_given(ac, i, "slowdown") && !flush) {
        scn_diag_add(d, "%s: [phase %s] changes nothing: give rate, capacity, outage or slowdown",
                     pw, p->name);
    }
    if (p->retry_after != RS_TIME_NEVER && p->outage != OUTAGE_ERROR)
        scn_diag_add(d, "%s: [phase %s] retry_after is sent only with outage = error",
                     scn_key_where(ac, S_PHASE, i, "retry_after", w, sizeof w), p->name);
    if (p->has_rate && !p->rate_is_factor && sc->model == LOAD_CLOSED)
        scn_diag_add(d, "%s: [phase %s] rate = %g/s: a closed loop takes a factor (x2 halves think times), not an absolute rate",
                     scn_key_where(ac, S_PHASE, i, "rate", w, sizeof w), p->name, p->rate);
    if (p->has_rate && p->rate_is_factor && sc->model == LOAD_CLOSED && p->rate == 0.0)
        scn_diag_add(d, "%s: [phase %s] rate = x0: a closed loop needs a factor > 0",
                     scn_key_where(ac, S_PHASE, i, "rate", w, sizeof w), p->name);
    if (p->ramp && sc->model == LOAD_CLOSED)
        scn_diag_add(d, "%s: [phase %s] rate = ramp(...): a ramp needs model = open (a closed loop's rate follows its think times)",
                     scn_key_where(ac, S_PHASE, i, "rate", w, sizeof w), p->name);
}

/* Resolves phase i's flush; whether it names a cache. */
static bool resolve_flush(struct apply_ctx *ac, unsigned i)
{
    struct phase_cfg *p = &ac->sc->phases[i];
    char w[400], hint[96];
    if (p->flush[0] == '\0')
        return false;
    p->flush_cache = find_named(ac->sc, S_CACHE, p->flush);
    if (p->flush_cache >= 0)
        return true;
    scn_diag_add(ac->diag, "%s: [phase %s] flush = '%s': no cache '%s'%s; allowed: the name of a [cache NAME] section",
                 scn_key_where(ac, S_PHASE, i, "flush", w, sizeof w), p->name, p->flush, p->flush,
                 suggest_name(ac->sc, p->flush, SUGGEST_CACHES, hint, sizeof hint));
    return true; /* it was meant to change something: no second message */
}

/* What a hedged layer needs, and what it cannot have. */
static void check_layer_hedge(struct apply_ctx *ac, unsigned i)
{
    struct scenario_diag *d = ac->diag;
    const struct layer_cfg *l = &ac->sc->layers[i];
    char w[400];
    const char *kind = scn_hedge_names[l->hedge];
    /* the keys of the other modes are kept and unused (as base is with
     * backoff = none): switching modes with --set keeps working */
    if (l->hedge_mode == HEDGE_NONE)
        return;
    bool no_delay = l->hedge_mode == HEDGE_FIXED && hedge_kinds[l->hedge].delay == RS_TIME_NEVER &&
                    !scn_layer_given(ac, i, "hedge_delay") && l->timeout == RS_TIME_NEVER;
    if (no_delay && hedge_kinds[l->hedge].needs_delay)
        scn_diag_add(d, "%s: [layer %s] hedge = %s needs timeout: Envoy's per_try_timeout, after which the next copy goes (Envoy has no default)",
                     scn_key_where(ac, S_LAYER, i, "hedge", w, sizeof w), l->name, kind);
    else if (no_delay)
        scn_diag_add(d, "%s: [layer %s] hedge = %s needs hedge_delay or timeout: when the next copy goes (a duration such as 50ms; hedge_delay = none: only on hedge_on failures)",
                     scn_key_where(ac, S_LAYER, i, "hedge", w, sizeof w), l->name, kind);
    if (l->concurrency > 0)
        scn_diag_add(d, "%s: [layer %s] concurrency = %u: a bulkhead on a hedged layer is not modelled; allowed: 0, or hedge = none",
                     scn_key_where(ac, S_LAYER, i, "concurrency", w, sizeof w), l->name,
                     l->concurrency);
    unsigned most = hedge_kinds[l->hedge].refuse_above;
    if (most > 0 && l->attempts > most)
        scn_diag_add(d, "%s: [layer %s] attempts = %u: %s allows at most %u copies (MaxHedgedAttempts from 1 to %u); allowed: 1 to %u",
                     scn_key_where(ac, S_LAYER, i, "attempts", w, sizeof w), l->name, l->attempts,
                     kind, most, most - 1, most);
    else if (l->attempts > HEDGE_MAX_COPIES)
        scn_diag_add(d, "%s: [layer %s] attempts = %u: a hedged layer sends at most %d copies; allowed: 1 to %d",
                     scn_key_where(ac, S_LAYER, i, "attempts", w, sizeof w), l->name, l->attempts,
                     HEDGE_MAX_COPIES, HEDGE_MAX_COPIES);
}

static void check_layer(struct apply_ctx *ac, unsigned i)
{
    struct scenario_diag *d = ac->diag;
    struct layer_cfg *l = &ac->sc->layers[i];
    char a[32], b[32], w[400];
    scn_apply_kind_defaults(ac, i);
    if (l->bp.cap != RS_TIME_NEVER && l->bp.cap < l->bp.base)
        scn_diag_add(d, "%s: [layer %s] cap = %s: must be at least base (%s)",
                     scn_key_where(ac, S_LAYER, i, "cap", w, sizeof w), l->name,
                     units_format_duration(l->bp.cap, a, sizeof a),
                     units_format_duration(l->bp.base, b, sizeof b));
    if ((l->budget->id == BUDGET_RATIO || l->budget->id == BUDGET_SRE) && l->budget_p.ttl == 0)
        scn_diag_add(d, "%s: [layer %s] budget = %s needs budget_ttl > 0",
                     scn_key_where(ac, S_LAYER, i, "budget_ttl", w, sizeof w), l->name, l->budget->name);
    if (l->budget->id == BUDGET_GRPC && !(l->budget_p.max_tokens > 0))
        scn_diag_add(d, "%s: [layer %s] budget = grpc needs budget_max_tokens in (0, 1000]",
                     scn_key_where(ac, S_LAYER, i, "budget_max_tokens", w, sizeof w), l->name);
    if (l->budget->id == BUDGET_RATIO && !(l->budget_p.percent > 0))
        scn_diag_add(d, "%s: [layer %s] budget = %s needs budget_percent > 0",
                     scn_key_where(ac, S_LAYER, i, "budget_percent", w, sizeof w), l->name, l->budget->name);
    if (l->breaker->id == BREAKER_RATE && l->breaker_p.window_calls == 0 && l->breaker_p.window == 0)
        scn_diag_add(d, "%s: [layer %s] breaker = %s needs breaker_window (calls or a duration)",
                     scn_key_where(ac, S_LAYER, i, "breaker_window", w, sizeof w), l->name, l->breaker->name);
    if (l->breaker->id == BREAKER_CONSECUTIVE && l->breaker_p.probes == 0)
        l->breaker_p.probes = 1; /* gobreaker: MaxRequests 0 means 1 */
    if (!backoff_is_preset(l->backoff) && strcmp(l->backoff->name, "none") != 0 &&
        l->bp.base == 0 && l->attempts > 1)
        scn_diag_add(d, "%s: [layer %s] backoff = %s needs base > 0 (e.g. base = 10ms)",
                     scn_key_where(ac, S_LAYER, i, "backoff", w, sizeof w), l->name, l->backoff->name);
    if (strcmp(l->backoff->name, "resilience4j-exp") == 0 && l->bp.base < RS_MS)
        scn_diag_add(d, "%s: [layer %s] base = %s: resilience4j-exp counts whole milliseconds "
                        "(IntervalFunction refuses an interval below 1 ms); allowed: 1ms or more",
                     scn_key_where(ac, S_LAYER, i, "base", w, sizeof w), l->name,
                     units_format_duration(l->bp.base, a, sizeof a));
    static const char *const bulkhead_keys[] = {"concurrency_queue", "concurrency_wait"};
    for (size_t k = 0; k < 2 && l->concurrency == 0; k++)
        if (scn_layer_given(ac, i, bulkhead_keys[k]))
            scn_diag_add(d, "%s: [layer %s] %s needs concurrency > 0 (the bulkhead's slots)",
                         scn_key_where(ac, S_LAYER, i, bulkhead_keys[k], w, sizeof w), l->name,
                         bulkhead_keys[k]);
    check_layer_hedge(ac, i);
}

/* Rules that depend on the graph: occ for a lone service only, and
 * deduplication at the entry only. */
static void check_service_roles(struct apply_ctx *ac)
{
    const struct scenario *sc = ac->sc;
    char w[400], sect[96];
    for (unsigned i = 0; i < sc->nservices; i++) {
        const struct service_cfg *v = &sc->services[i];
        if (v->model == MODEL_OCC && (sc->nservices > 1 || v->ncalls > 0 || v->replicas > 1))
            scn_diag_add(ac->diag, "%s: [%s] model = occ: optimistic concurrency is modelled for a lone service only: one service, with no calls and replicas = 1",
                         scn_key_where(ac, S_SERVICE, i, "model", w, sizeof w),
                         scn_service_section(ac, i, "model", sect, sizeof sect));
        if (v->dedup && ac->graph_ok && i != sc->entry)
            scn_diag_add(ac->diag, "%s: [%s] dedup = true: only the service the clients call (%s) may deduplicate; the idempotency-key store is modelled per request at that service",
                         scn_key_where(ac, S_SERVICE, i, "dedup", w, sizeof w),
                         scn_service_section(ac, i, "dedup", sect, sizeof sect), sc->services[sc->entry].name);
    }
}

/* ---- caches, load shapes and traces ---- */

/* Whether service u calls v, directly or through others; seen marks the
 * services already searched (the calls form a DAG: O(services + calls)). */
static bool reaches(const struct scenario *sc, unsigned u, unsigned v, bool *seen)
{
    for (unsigned k = 0; k < sc->services[u].ncalls; k++) {
        unsigned d = sc->services[u].calls[k].service;
        if (d == v)
            return true;
        if (!seen[d] && (seen[d] = true, reaches(sc, d, v, seen)))
            return true;
    }
    return false;
}

/* A request has one key at every service: with coalesce, a service that
 * looks a cache up below another that does would join the miss of its own
 * caller, which waits for it. Refused (once the calls are resolved). */
static void check_coalesce_paths(struct apply_ctx *ac)
{
    const struct scenario *sc = ac->sc;
    char w[400], sect[96];
    for (unsigned u = 0; u < sc->nservices && ac->graph_ok; u++)
        for (unsigned v = 0; v < sc->nservices; v++) {
            int c = sc->services[u].cache_index;
            bool seen[SCENARIO_MAX_SERVICES] = {false};
            if (c < 0 || u == v || sc->services[v].cache_index != c || !sc->caches[c].coalesce ||
                !reaches(sc, u, v, seen))
                continue;
            scn_diag_add(ac->diag, "%s: [%s] cache = %s: %s calls this service and looks %s up too; with coalesce = true a request's lookup here would join its own miss at %s and wait for itself (give them separate caches, or coalesce = false)",
                         scn_key_where(ac, S_SERVICE, v, "cache", w, sizeof w),
                         scn_service_section(ac, v, "cache", sect, sizeof sect), sc->caches[c].name,
                         sc->services[u].name, sc->caches[c].name, sc->services[u].name);
        }
}

/* Each service's cache names a [cache] section; every cache is used; the
 * requests have keys to look up. */
static void check_caches(struct apply_ctx *ac)
{
    struct scenario *sc = ac->sc;
    char w[400], sect[96], hint[96];
    bool used[SCENARIO_MAX_CACHES] = {false};
    for (unsigned i = 0; i < sc->nservices; i++) {
        struct service_cfg *v = &sc->services[i];
        v->cache_index = v->cache[0] ? find_named(sc, S_CACHE, v->cache) : -1;
        if (v->cache[0] && v->cache_index < 0)
            scn_diag_add(ac->diag, "%s: [%s] cache = '%s': no cache '%s'%s; allowed: the name of a [cache NAME] section, or none",
                         scn_key_where(ac, S_SERVICE, i, "cache", w, sizeof w),
                         scn_service_section(ac, i, "cache", sect, sizeof sect), v->cache, v->cache,
                         suggest_name(sc, v->cache, SUGGEST_CACHES, hint, sizeof hint));
        else if (v->cache_index >= 0 && v->model == MODEL_OCC)
            scn_diag_add(ac->diag, "%s: [%s] cache = %s: a cache goes with model = queue",
                         scn_key_where(ac, S_SERVICE, i, "cache", w, sizeof w),
                         scn_service_section(ac, i, "cache", sect, sizeof sect), v->cache);
        else if (v->cache_index >= 0)
            used[v->cache_index] = true;
    }
    for (unsigned c = 0; c < sc->ncaches; c++) {
        const struct cache_cfg *k = &sc->caches[c];
        if (!used[c])
            scn_diag_add(ac->diag, "%s: [cache %s] is used by no service (give one cache = %s)",
                         scn_where(ac->cache_entry[c], w, sizeof w), k->name, k->name);
        if (k->ttl_jitter > 0 && k->ttl == RS_TIME_NEVER)
            scn_diag_add(ac->diag, "%s: [cache %s] ttl_jitter = %g needs a ttl (entries without one never expire)",
                         scn_key_where(ac, S_CACHE, c, "ttl_jitter", w, sizeof w), k->name, k->ttl_jitter);
    }
    check_coalesce_paths(ac);
    if (sc->ncaches > 0 && !scn_given(ac, S_LOAD, "keys"))
        scn_diag_add(ac->diag, "%s: [load] keys is required with a cache: how many distinct keys the requests look up (e.g. keys = 10000)",
                     scn_where(ac->cache_entry[0], w, sizeof w));
}

/* Adds a bad row of a trace to the messages. */
static void trace_problem(void *ctx, const char *msg)
{
    struct scenario_diag *d = ctx;
    if (!scn_diag_skip(d))
        scn_diag_add(d, "%s", msg);
}

/* Opens the trace the scenario names: a path relative to the scenario
 * file (absolute when it exists), else a built-in trace of that name.
 * Returns 0, or -1 after a message. */
/* Whether the effective scenario.ini can hold path as a value: inih
 * takes " ;" for a comment and drops spaces at either end. */
static bool ini_safe_path(const char *path)
{
    size_t n = strlen(path);
    return n > 0 && path[0] != ' ' && path[n - 1] != ' ' && strstr(path, " ;") == NULL &&
           strstr(path, "\t;") == NULL;
}

_Static_assert(SCENARIO_VALUE_ROOM(5) == 189, "the trace's message names the room on its line");

static int open_trace(struct apply_ctx *ac, struct trace *t)
{
    struct scenario *sc = ac->sc;
    char path[SCENARIO_PATH_MAX], err[600], w[400], real[PATH_MAX];
    const char *text = scenario_trace_text(sc->trace), *why = NULL;
    int n = sc->trace[0] != '/' && ac->dir != NULL
                ? snprintf(path, sizeof path, "%s/%s", ac->dir, sc->trace)
                : snprintf(path, sizeof path, "%s", sc->trace);
    /* a built-in scenario's trace is the built-in one, whatever the current directory holds */
    sc->trace_builtin = text != NULL && (ac->dir == NULL || access(path, F_OK) != 0);
    if (sc->trace_builtin)
        return trace_open_text(t, text, sc->trace, err, sizeof err) == 0 ? 0 : -1;
    bool opened = false;
    if (ac->sealed)
        why = "no file is read here: only a built-in trace (trace-replay)";
    else if (n < 0 || (size_t)n >= sizeof path)
        why = "the path beside the scenario file is longer than 1023 characters";
    else if (trace_open(t, path, err, sizeof err) != 0)
        why = err;
    else if ((opened = true, realpath(path, real) == NULL) || strlen(real) >= SCENARIO_PATH_MAX)
        why = "its absolute path is longer than 1023 characters";
    else if (!ini_safe_path(real))
        why = "its absolute path has a space before ';' or at an end, which scenario.ini cannot hold";
    else if (strlen(real) > SCENARIO_VALUE_ROOM(strlen("trace")))
        why = "its absolute path is longer than 189 characters, which a line of scenario.ini cannot hold";
    if (why != NULL) {
        if (opened)
            trace_close(t);
        scn_diag_add(ac->diag, "%s: [load] trace = '%s': %s", scn_at(ac, "trace", w, sizeof w), sc->trace, why);
        return -1;
    }
    snprintf(sc->trace, sizeof sc->trace, "%s", real); /* the run opens the file checked */
    return 0;
}

/* Reads the whole trace once: every bad row is reported, and its format
 * decides which other load keys may go with it. */
static void check_trace(struct apply_ctx *ac)
{
    struct scenario *sc = ac->sc;
    struct trace t;
    struct trace_info info;
    char w[400];
    if (open_trace(ac, &t) != 0)
        return;
    trace_check(&t, trace_problem, ac->diag, &info);
    trace_close(&t);
    sc->trace_format = info.kind == TRACE_RATES ? TRACE_FORMAT_RATES : TRACE_FORMAT_TIMES;
    sc->trace_burst = info.max_equal; /* simultaneous arrivals: not a model stuck in time */
    if (info.rows == 0)
        scn_diag_add(ac->diag, "%s: [load] trace = '%s': the trace has no rows", scn_at(ac, "trace", w, sizeof w), sc->trace);
    if (sc->trace_format != TRACE_FORMAT_TIMES)
        return;
    if (sc->sine_amplitude > 0)
        scn_diag_add(ac->diag, "%s: [load] shape: a trace of timestamps is replayed as it is; a shape goes with a trace of rates (t,rate)",
                     scn_at(ac, "shape", w, sizeof w));
    for (unsigned i = 0; i < sc->nphases; i++)
        if (sc->phases[i].has_rate)
            scn_diag_add(ac->diag, "%s: [phase %s] rate: a trace of timestamps is replayed as it is; a phase's rate goes with a trace of rates (t,rate)",
                         scn_key_where(ac, S_PHASE, i, "rate", w, sizeof w), sc->phases[i].name);
}

/* shape and trace shape an open loop's arrivals. */
static void check_load_shape(struct apply_ctx *ac)
{
    struct scenario *sc = ac->sc;
    char w[400];
    static const char *const open_only[] = {"shape", "trace"};
    for (size_t k = 0; k < 2; k++)
        if (sc->model == LOAD_CLOSED && scn_given(ac, S_LOAD, open_only[k]))
            scn_diag_add(ac->diag, "%s: [load] %s needs model = open (a closed loop's rate follows its think times)",
                         scn_at(ac, open_only[k], w, sizeof w), open_only[k]);
    bool ramp = false;
    for (unsigned i = 0; i < sc->nphases; i++)
        ramp |= sc->phases[i].ramp;
    if (sc->model == LOAD_OPEN && sc->arrival == ARRIVAL_UNIFORM &&
        (ramp || sc->sine_amplitude > 0 || sc->trace[0] != '\0'))
        scn_diag_add(ac->diag, "%s: [load] arrival = uniform: evenly spaced arrivals go with a rate that changes in steps; ramp(), shape and trace draw Poisson arrivals (arrival = poisson)",
                     scn_at(ac, "arrival", w, sizeof w));
    if (sc->trace[0] == '\0' || sc->model != LOAD_OPEN)
        return;
    if (scn_given(ac, S_LOAD, "rate"))
        scn_diag_add(ac->diag, "%s: [load] rate and trace: give one (the trace states the rate)",
                     scn_at(ac, "rate", w, sizeof w));
    check_trace(ac);
}

void scn_check_all(struct apply_ctx *ac)
{
    check_run(ac);
    check_services(ac);
    check_graph(ac);
    check_caches(ac);
    check_load_shape(ac);
    for (unsigned i = 0; i < ac->sc->nphases; i++)
        check_phase(ac, i);
    for (unsigned i = 0; i < ac->sc->nlayers; i++)
        check_layer(ac, i);
    check_service_roles(ac);
}
