/*
 * scenario_apply — applying the entries of a scenario to struct scenario,
 * and where each key was set.
 *
 * scn_apply_entry takes one entry: it splits its section into kind and
 * name, creates a named section (phase, layer, service or cache) with its
 * defaults the first time it is named, looks the key up and stores its
 * value, and notes in struct apply_ctx which entry made each section and
 * set each key, so that later messages can say where (scn_key_where,
 * scn_at) and rules can ask whether a key was given. An entry costs O(keys
 * + sections of its kind), both bounded. scn_apply_kind_defaults then fills
 * in what a layer's backoff preset, budget or breaker brings for every key
 * the scenario did not write.
 */
#include "scenario_int.h"

#include <string.h>

/* ---- defaults ---- */

/* A scenario with its defaults, before any entry is applied. */
void scn_defaults(struct scenario *sc)
{
    memset(sc, 0, sizeof *sc);
    snprintf(sc->name, sizeof sc->name, "scenario");
    sc->duration = 60 * RS_S;
    sc->warmup = 0;
    sc->bucket = RS_S;
    sc->drain_limit = SCENARIO_DRAIN_LIMIT;
    sc->seed = 1;
    sc->verdict_window = RS_S;
    sc->verdict_hold = 5 * RS_S;
    sc->verdict_persist = 60 * RS_S;
    sc->verdict_tolerance = 0.1;
    sc->model = LOAD_OPEN;
    sc->arrival = ARRIVAL_POISSON;
    sc->rate = -1.0; /* required for open loop */
    sc->clients = 1000;
    sc->idempotent = true;
    sc->trace_format = TRACE_NONE;
    sc->keys = 1;
}

static void cache_defaults(struct cache_cfg *c, const char *name);

/* Copies a name known to fit (scn_valid_name checked it) into a name field. */
void scn_copy_name(char *dst, const char *src)
{
    size_t n = strlen(src);
    if (n >= SCENARIO_NAME_MAX)
        n = SCENARIO_NAME_MAX - 1;
    memcpy(dst, src, n);
    dst[n] = '\0';
}

static void service_defaults(struct service_cfg *v, const char *name)
{
    memset(v, 0, sizeof *v);
    scn_copy_name(v->name, name);
    v->workers = 1;
    v->queue = -1;
    v->limit_burst = 1;
    v->limit_status = CLS_429;
    v->limit_retry_after = RS_TIME_NEVER;
    v->replay.kind = DIST_CONST; /* const(0): a replay costs nothing unless stated */
    v->replicas = 1;
    v->balancer = BAL_RANDOM;
    v->cache_index = -1;
}

static void cache_defaults(struct cache_cfg *c, const char *name)
{
    memset(c, 0, sizeof *c);
    scn_copy_name(c->name, name);
    c->capacity = -1;
    c->ttl = RS_TIME_NEVER;
    c->hit.kind = DIST_CONST; /* const(0): a hit answers at once unless stated */
}

void scn_layer_defaults(struct layer_cfg *l, const char *name)
{
    memset(l, 0, sizeof *l);
    scn_copy_name(l->name, name);
    l->attempts = 1;
    l->timeout = RS_TIME_NEVER;
    l->backoff = backoff_find("none");
    l->bp.base = 0;
    l->bp.multiplier = 2.0;
    l->bp.cap = RS_TIME_NEVER;
    l->retry_on = ERRCLASS_DEFAULT_RETRY;
    l->retry_after_max = RS_TIME_NEVER;
    l->retry_after_over_max = RA_OVER_CLAMP; /* urllib3's rule */
    l->deadline = RS_TIME_NEVER;
    l->instances = 1;
    l->budget = budget_find("none");
    l->breaker = breaker_find("none");
    l->breaker_p.slow_call = RS_TIME_NEVER;
    l->from_service = SCENARIO_CLIENT;
    l->concurrency_wait = RS_TIME_NEVER;
    l->hedge_delay = RS_TIME_NEVER;
    l->hedge_percentile = 95.0;
    l->hedge_max_extra = 1.0;
}

/* ---- applying one entry ---- */

bool scn_valid_name(const char *s)
{
    size_t n = strlen(s);
    if (n == 0 || n >= SCENARIO_NAME_MAX)
        return false;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '-' || c == '_'))
            return false;
    }
    return true;
}

/* Splits "layer app" into kind and name; false with a message if unknown. */
static bool split_section(const char *section, enum sect_kind *kind, char *name, size_t name_size)
{
    char head[96];
    snprintf(head, sizeof head, "%s", section);
    char *sp = strchr(head, ' ');
    const char *rest = "";
    if (sp != NULL) {
        *sp = '\0';
        rest = sp + 1;
        while (*rest == ' ')
            rest++;
    }
    for (int k = 0; k < S_NKINDS; k++) {
        if (strcmp(head, scn_sect_names[k]) == 0) {
            *kind = (enum sect_kind)k;
            snprintf(name, name_size, "%s", rest);
            return true;
        }
    }
    return false;
}

/* ---- where a key was set ---- */

/* Whether key of phase i was given (in the file or by --set). */
bool scn_phase_given(const struct apply_ctx *ac, unsigned i, const char *key)
{
    return ac->phase_key[i][scn_find_key(S_PHASE, key) - scn_keys] != NULL;
}

/* The entry that set key of phase, layer or service i, or NULL. */
const struct entry *scn_key_entry(const struct apply_ctx *ac, enum sect_kind k, unsigned i,
                                  const char *key)
{
    const struct key_desc *kd = scn_find_key(k, key);
    if (kd == NULL)
        return NULL;
    size_t j = (size_t)(kd - scn_keys);
    return k == S_PHASE   ? ac->phase_key[i][j]
           : k == S_LAYER ? ac->layer_key[i][j]
           : k == S_CACHE ? ac->cache_key[i][j]
                          : ac->service_key[i][j];
}

/* Where key of phase, layer or service i was set, or else its section
 * header (the file itself for the default service). */
const char *scn_key_where(const struct apply_ctx *ac, enum sect_kind k, unsigned i,
                          const char *key, char *buf, size_t size)
{
    const struct entry *e = scn_key_entry(ac, k, i, key);
    if (e == NULL)
        e = k == S_PHASE   ? ac->phase_entry[i]
            : k == S_LAYER ? ac->layer_entry[i]
            : k == S_CACHE ? ac->cache_entry[i]
                           : ac->service_entry[i];
    if (e == NULL) {
        snprintf(buf, size, "%s", ac->sc->source);
        return buf;
    }
    return scn_where(e, buf, size);
}

/* The section service i was written as, for messages: [server], or
 * [service NAME] (as written by the entry that set key, when it was). */
const char *scn_service_section(const struct apply_ctx *ac, unsigned i, const char *key,
                                char *buf, size_t size)
{
    const struct entry *e = key ? scn_key_entry(ac, S_SERVICE, i, key) : NULL;
    if (e == NULL)
        e = ac->service_entry[i];
    if (e == NULL || strcmp(e->section, "server") == 0) /* the default service is `server` */
        snprintf(buf, size, "server");
    else
        snprintf(buf, size, "service %s", ac->sc->services[i].name);
    return buf;
}

/* Whether key of service i was given (in the file or by --set). */
bool scn_service_given(const struct apply_ctx *ac, unsigned i, const char *key)
{
    return scn_key_entry(ac, S_SERVICE, i, key) != NULL;
}

/* Where key of service i was set, or the file itself if it kept its default. */
const char *scn_service_at(const struct apply_ctx *ac, unsigned i, const char *key, char *buf,
                           size_t size)
{
    const struct entry *e = scn_key_entry(ac, S_SERVICE, i, key);
    if (e == NULL) {
        snprintf(buf, size, "%s", ac->sc->source);
        return buf;
    }
    return scn_where(e, buf, size);
}

/* Whether an unnamed-section key was given at all (valid or not). */
bool scn_given(const struct apply_ctx *ac, enum sect_kind k, const char *key)
{
    for (size_t i = 0; i < NKEYS; i++)
        if (scn_keys[i].sect == k && strcmp(scn_keys[i].key, key) == 0)
            return ac->last[i] != NULL;
    return false;
}

/* Where the key was set, or the file itself if it kept its default. */
const char *scn_at(const struct apply_ctx *ac, const char *key, char *buf, size_t size)
{
    for (size_t i = 0; i < NKEYS; i++)
        if (strcmp(scn_keys[i].key, key) == 0 && scn_keys[i].sect <= S_HERD && ac->last[i] != NULL)
            return scn_where(ac->last[i], buf, size);
    snprintf(buf, size, "%s", ac->sc->source);
    return buf;
}

/* The name of phase, layer, cache or service i. */
const char *scn_item_name(const struct scenario *sc, enum sect_kind kind, unsigned i)
{
    return kind == S_PHASE   ? sc->phases[i].name
           : kind == S_LAYER ? sc->layers[i].name
           : kind == S_CACHE ? sc->caches[i].name
                             : sc->services[i].name;
}

/* Adds phase, layer or service n (the next one) with its defaults. */
void scn_add_item(struct apply_ctx *ac, const struct entry *e, enum sect_kind kind,
                  const char *name)
{
    struct scenario *sc = ac->sc;
    if (kind == S_PHASE) {
        struct phase_cfg *p = &sc->phases[sc->nphases];
        memset(p, 0, sizeof *p);
        scn_copy_name(p->name, name);
        p->retry_after = RS_TIME_NEVER;
        p->slowdown = 1.0;
        p->flush_cache = -1;
        ac->phase_entry[sc->nphases++] = e;
    } else if (kind == S_CACHE) {
        cache_defaults(&sc->caches[sc->ncaches], name);
        ac->cache_entry[sc->ncaches++] = e;
    } else if (kind == S_LAYER) {
        scn_layer_defaults(&sc->layers[sc->nlayers], name);
        ac->layer_entry[sc->nlayers++] = e;
    } else {
        service_defaults(&sc->services[sc->nservices], name);
        ac->service_entry[sc->nservices++] = e;
    }
}

/* The index of the phase, layer or service called name, created with its
 * defaults if it is new; -1, after a message, when there are too many. */
static int find_or_add(struct apply_ctx *ac, const struct entry *e, enum sect_kind kind,
                       const char *name)
{
    struct scenario *sc = ac->sc;
    unsigned n = kind == S_PHASE   ? sc->nphases
                 : kind == S_LAYER ? sc->nlayers
                 : kind == S_CACHE ? sc->ncaches
                                   : sc->nservices;
    unsigned max = kind == S_PHASE   ? SCENARIO_MAX_PHASES
                   : kind == S_LAYER ? SCENARIO_MAX_LAYERS
                   : kind == S_CACHE ? SCENARIO_MAX_CACHES
                                     : SCENARIO_MAX_SERVICES;
    for (unsigned i = 0; i < n; i++)
        if (strcmp(scn_item_name(sc, kind, i), name) == 0)
            return (int)i;
    if (n == max) {
        char w[400];
        scn_diag_add(ac->diag, "%s: too many %ss (limit is %u)", scn_where(e, w, sizeof w),
                     scn_sect_names[kind], max);
        return -1;
    }
    scn_add_item(ac, e, kind, name);
    return (int)n;
}

static bool is_graph_key(const char *key)
{
    for (const char *const *g = scn_graph_keys; *g != NULL; g++)
        if (strcmp(*g, key) == 0)
            return true;
    return false;
}

/* Whether the entry names a key that its section (of a known kind) does not have. */
static bool key_unknown(enum sect_kind kind, const struct entry *e)
{
    return e->key[0] != '\0' && scn_find_key(kind, e->key) == NULL;
}

/* An unknown section, with a suggestion when one is close. */
static void unknown_section(struct apply_ctx *ac, const struct entry *e)
{
    char w[400], head[96], allowed[160];
    const char *best = NULL;
    scn_sections_allowed(allowed, sizeof allowed);
    size_t bestd = 3;
    snprintf(head, sizeof head, "%s", e->section);
    char *sp = strchr(head, ' ');
    if (sp)
        *sp = '\0';
    for (int k = 0; k < S_NKINDS; k++) {
        size_t d = scenario_edit_distance(head, scn_sect_names[k]);
        if (d < bestd) {
            bestd = d;
            best = scn_sect_names[k];
        }
    }
    if (best)
        scn_diag_add(ac->diag, "%s: unknown section [%s] (did you mean [%s%s]?); allowed: %s",
                     scn_where(e, w, sizeof w), e->section, best, sp ? " ..." : "", allowed);
    else
        scn_diag_add(ac->diag, "%s: unknown section [%s]; allowed: %s", scn_where(e, w, sizeof w), e->section,
                     allowed);
}

/* An unknown key, with a suggestion when one is close, and the list. */
static void unknown_key(struct apply_ctx *ac, const struct entry *e, enum sect_kind kind)
{
    char w[400], list[1400];
    const char *s = scn_suggest_key(kind, e->key);
    scn_list_keys(kind, list, sizeof list);
    if (s)
        scn_diag_add(ac->diag, "%s: [%s] unknown key '%s' (did you mean '%s'?); allowed: %s",
                     scn_where(e, w, sizeof w), e->section, e->key, s, list);
    else
        scn_diag_add(ac->diag, "%s: [%s] unknown key '%s'; allowed: %s", scn_where(e, w, sizeof w),
                     e->section, e->key, list);
}

/* The struct a key of a named section (or of [server]) goes into, noting
 * which entry set it; NULL when there are too many such sections or the
 * entry is the section header (which still creates the section). */
static void *named_base(struct apply_ctx *ac, const struct entry *e, enum sect_kind kind,
                        const char *name, const struct key_desc *kd)
{
    struct scenario *sc = ac->sc;
    int i = find_or_add(ac, e, kind, name);
    if (i < 0 || kd == NULL)
        return NULL;
    size_t j = (size_t)(kd - scn_keys);
    if (kind == S_PHASE) {
        ac->phase_key[i][j] = e;
        return &sc->phases[i];
    }
    if (kind == S_LAYER) {
        ac->layer_key[i][j] = e;
        return &sc->layers[i];
    }
    if (kind == S_CACHE) {
        ac->cache_key[i][j] = e;
        return &sc->caches[i];
    }
    ac->service_key[i][j] = e;
    return &sc->services[i];
}

/* Applies one entry; problems with the section itself are reported only on
 * its first entry (first_in_section), not once per key. */
void scn_apply_entry(struct apply_ctx *ac, const struct entry *e, bool first_in_section)
{
    char w[400], name[96];
    enum sect_kind kind;
    bool known = split_section(e->section, &kind, name, sizeof name);
    bool named = known && scn_sect_named(kind);
    if (!first_in_section && (!known || (named && !scn_valid_name(name)) || (!named && name[0])))
        return;
    if ((!known || key_unknown(kind, e)) && scn_diag_skip(ac->diag))
        return; /* only counted: no need for a suggestion */
    if (!known) {
        unknown_section(ac, e);
        return;
    }
    if (named && !scn_valid_name(name)) {
        scn_diag_add(ac->diag, "%s: section [%s] needs a name: [%s NAME], NAME of letters, digits, '-', '_' (at most 47)",
                     scn_where(e, w, sizeof w), e->section, scn_sect_names[kind]);
        return;
    }
    if (!named && name[0] != '\0') {
        scn_diag_add(ac->diag, "%s: section [%s] takes no name; write [%s]", scn_where(e, w, sizeof w),
                     e->section, scn_sect_names[kind]);
        return;
    }
    const struct key_desc *kd = e->key[0] ? scn_find_key(kind, e->key) : NULL;
    if (kd == NULL && e->key[0] != '\0') {
        unknown_key(ac, e, kind);
        return;
    }
    /* [service server] with [server]'s keys is the shorthand itself: not a graph */
    if ((kind == S_SERVICE && strcmp(name, "server") != 0) || (kd != NULL && is_graph_key(kd->key)))
        ac->sc->graph = true;
    void *base = ac->sc;
    if (named || kind == S_SERVER) {
        base = named_base(ac, e, kind == S_SERVER ? S_SERVICE : kind, named ? name : "server", kd);
        if (base == NULL)
            return;
    } else if (kd == NULL) {
        return; /* the section header of [run] or [load] */
    } else {
        ac->last[kd - scn_keys] = e;
    }
    scn_apply_value(ac, e, kd, base);
}

/* Whether key of layer i was written (in the file or by --set). */
bool scn_layer_given(const struct apply_ctx *ac, unsigned i, const char *key)
{
    return ac->layer_key[i][scn_find_key(S_LAYER, key) - scn_keys] != NULL;
}

/* The size of the field a key of this type writes. */
static size_t field_size(enum key_type t)
{
    switch (t) {
    case T_REAL:
    case T_PROB:
        return sizeof(double);
    case T_DURATION:
    case T_CAP:
        return sizeof(rs_time);
    case T_UINT:
        return sizeof(unsigned);
    case T_BOOL:
        return sizeof(bool);
    case T_WINDOW: /* window_calls; the duration beside it is copied with it below */
        return sizeof(unsigned);
    default:
        return 0;
    }
}

/* For every layer key whose field lies in [lo, lo + size) of layer i and
 * that the scenario did not write, takes the value from defaults (a
 * budget's or breaker's parameter block). */
static void default_params(struct apply_ctx *ac, unsigned i, size_t lo, size_t size,
                           const void *defaults)
{
    char *layer = (char *)&ac->sc->layers[i];
    for (size_t j = 0; j < NKEYS; j++) {
        const struct key_desc *kd = &scn_keys[j];
        if (kd->sect != S_LAYER || kd->offset < lo || kd->offset >= lo + size ||
            ac->layer_key[i][j] != NULL)
            continue;
        memcpy(layer + kd->offset, (const char *)defaults + (kd->offset - lo), field_size(kd->type));
        if (kd->type == T_WINDOW)
            ac->sc->layers[i].breaker_p.window = ((const struct breaker_params *)defaults)->window;
    }
}

/* Fills in what layer i's hedging kind or preset brings (hedge.h), for
 * every key the scenario did not write. A hedging preset's retry_on wins
 * over a backoff preset's: it says what the library retries when it
 * hedges (nothing, for gRPC, Polly and Finagle). */
static void apply_hedge_defaults(struct apply_ctx *ac, unsigned i)
{
    struct layer_cfg *l = &ac->sc->layers[i];
    const struct hedge_kind *h = &hedge_kinds[l->hedge];
    l->hedge_mode = h->mode;
    if (!hedge_is_preset(h))
        return;
    if (!scn_layer_given(ac, i, "hedge_delay") && h->delay != RS_TIME_NEVER)
        l->hedge_delay = h->delay;
    if (!scn_layer_given(ac, i, "hedge_percentile"))
        l->hedge_percentile = h->percentile;
    if (!scn_layer_given(ac, i, "hedge_max_extra"))
        l->hedge_max_extra = h->max_extra;
    if (!scn_layer_given(ac, i, "attempts"))
        l->attempts = h->attempts;
    if (h->max_attempts && l->attempts > h->max_attempts)
        l->attempts = h->max_attempts; /* the library clamps silently (gRPC: 5) */
    if (!scn_layer_given(ac, i, "hedge_on"))
        l->hedge_on = h->hedge_on;
    if (!scn_layer_given(ac, i, "retry_on"))
        l->retry_on = h->retry_on;
    if (!scn_layer_given(ac, i, "cancel"))
        l->cancel = h->cancel;
}

static void apply_backoff_preset(struct apply_ctx *ac, unsigned i);

/* Fills in what layer i's backoff kind or preset, budget, breaker and
 * hedging kind bring, for every key the scenario did not write: explicit
 * keys override a preset's values. */
void scn_apply_kind_defaults(struct apply_ctx *ac, unsigned i)
{
    struct layer_cfg *l = &ac->sc->layers[i];
    const struct backoff_kind *k = l->backoff;
    default_params(ac, i, LY(budget_p), sizeof l->budget_p, &l->budget->defaults);
    default_params(ac, i, LY(breaker_p), sizeof l->breaker_p, &l->breaker->defaults);
    if (!scn_layer_given(ac, i, "multiplier"))
        l->bp.multiplier = k->defaults.multiplier;
    if (backoff_is_preset(k))
        apply_backoff_preset(ac, i);
    apply_hedge_defaults(ac, i); /* after: its attempts and retry_on win */
}

/* What layer i's backoff preset brings, for every key not written. */
static void apply_backoff_preset(struct apply_ctx *ac, unsigned i)
{
    struct layer_cfg *l = &ac->sc->layers[i];
    const struct backoff_kind *k = l->backoff;
    if (!scn_layer_given(ac, i, "base"))
        l->bp.base = k->defaults.base;
    if (!scn_layer_given(ac, i, "cap"))
        l->bp.cap = k->defaults.cap;
    if (!scn_layer_given(ac, i, "jitter"))
        l->bp.jitter = k->defaults.jitter;
    if (!scn_layer_given(ac, i, "attempts"))
        l->attempts = k->attempts;
    if (k->max_attempts && l->attempts > k->max_attempts)
        l->attempts = k->max_attempts; /* the library clamps silently (gRPC: 5) */
    if (!scn_layer_given(ac, i, "retry_on"))
        l->retry_on = k->retry_on;
    if (!scn_layer_given(ac, i, "retry_after"))
        l->retry_after = k->honor_retry_after ? RA_HONOR : RA_IGNORE;
    if (!scn_layer_given(ac, i, "retry_after_max"))
        l->retry_after_max = k->retry_after_max;
    if (!scn_layer_given(ac, i, "retry_after_over_max"))
        l->retry_after_over_max = k->ra_over;
    if (!scn_layer_given(ac, i, "deadline"))
        l->deadline = k->deadline;
}
