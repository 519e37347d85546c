/*
 * caching — the caches of a run: each [cache NAME] is one cache.c structure
 * shared by every replica of every service that names it (a look-aside
 * cache such as memcached), keyed by the request's key (load.c draws it
 * from `keys` and `popularity`; every attempt of a request has the same).
 *
 * An execution of a service with a cache looks its key up when it starts
 * (holding its worker): a hit does the cache's `hit` work and answers ok;
 * a miss runs the service's work and calls as usual and, when it answers
 * ok, fills the cache with an entry whose TTL is `ttl` × U(1 - F, 1 + F)
 * (F = ttl_jitter); any other answer leaves the cache as it was. With
 * `coalesce`, a miss for a key whose miss is in flight joins it (single
 * flight): the execution holds its worker without working and, when the
 * loading execution ends, answers what it answered. Entries expire exactly
 * (an event at each entry's expiry); a phase's `flush` empties a cache when
 * the phase starts, and a phase aimed at a cache scales its capacity
 * (evicting least recently used entries down to it).
 *
 * Costs: init O(keys) per cache (the key table; O(keys) once for Zipf's
 * normalising sum); lookup, fill and expiry O(1) plus O(log pending events) for the
 * expiry event; a loader's end O(joined executions); phases O(phases ·
 * caches) plus O(entries) per flush.
 */
#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "mem.h"
#include "sim.h"
#include "caching.h"
#include "simctx.h"

#define NO_JOIN UINT32_MAX

int caching_init(struct sim *s, char *err, size_t errsz)
{
    const struct scenario *sc = &s->sc;
    if (sc->ncaches == 0)
        return 0;
    if (keygen_init(&s->caching.keys, sc->keys, sc->zipf) != 0)
        goto oom; /* unreachable: keygen_init always returns 0 (GCOVR_EXCL_LINE) */
    for (unsigned i = 0; i < sc->ncaches; i++) {
        const struct cache_cfg *cf = &sc->caches[i];
        struct cache_rt *rt = &s->caching.caches[i];
        uint64_t cap = cf->capacity < 0 ? CACHE_UNBOUNDED : (uint64_t)cf->capacity;
        if (cache_init(&rt->c, sc->keys, cap, cf->coalesce) != 0)
            goto oom;
        if (cf->coalesce) {
            rt->joined = malloc((size_t)sc->keys * sizeof *rt->joined);
            if (rt->joined == NULL)
                goto oom;
            for (uint32_t k = 0; k < sc->keys; k++)
                rt->joined[k] = NO_JOIN;
        }
    }
    s->caching.cb = mem_alloc(s->m.nalloc * sc->ncaches * sizeof *s->caching.cb);
    if (s->caching.cb == NULL)
        goto oom;
    return 0;
oom:
    snprintf(err, errsz, "out of memory for the caches of %u keys", sc->keys);
    return -1;
}

void caching_fini(struct sim *s)
{
    for (unsigned i = 0; i < SCENARIO_MAX_CACHES; i++) {
        cache_fini(&s->caching.caches[i].c);
        free(s->caching.caches[i].joined);
        s->caching.caches[i].joined = NULL;
    }
    keygen_fini(&s->caching.keys);
    mem_free(s->caching.cb, s->m.nalloc * s->sc.ncaches * sizeof *s->caching.cb);
    s->caching.cb = NULL;
}

/* The current bucket's counts of cache i. */
static struct cache_bucket *cb_cur(struct sim *s, unsigned i)
{
    return &s->caching.cb[s->m.cur * s->sc.ncaches + i];
}

/* Notes cache i's entries in the current bucket (after a change). */
static void note_entries(struct sim *s, unsigned i)
{
    struct cache_bucket *b = cb_cur(s, i);
    b->entries = s->caching.caches[i].c.entries;
    b->changed = true;
}

/* The totals when the warmup ends, for the hit ratio after it. */
static void note_warmup(struct sim *s, struct cache_rt *rt)
{
    if (!rt->warm && s->now >= s->sc.warmup) {
        rt->at_warmup = rt->c.total;
        rt->warm = true;
    }
}

enum cache_result caching_lookup(struct sim *s, uint32_t ji, const struct service_cfg *c)
{
    unsigned i = (unsigned)c->cache_index;
    struct cache_rt *rt = &s->caching.caches[i];
    struct job *j = pool_at(&s->jobs, ji);
    uint32_t key = request_key(s, pool_at(&s->requests, j->req));
    note_warmup(s, rt);
    enum cache_result r = cache_lookup(&rt->c, key, s->now, &cb_cur(s, i)->n);
    if (r == CACHE_MISS) {
        j->loading = true;
    } else if (r == CACHE_JOIN) {
        uint32_t n = pool_alloc(&s->joins);
        struct join_node *node = pool_at(&s->joins, n);
        node->job = ji;
        node->next = rt->joined[key];
        rt->joined[key] = n;
    }
    note_entries(s, i); /* an expired entry may have gone */
    return r;
}

/* A fill's TTL: ttl × U(1 - F, 1 + F); RS_TIME_NEVER without one. */
static rs_time draw_ttl(struct sim *s, const struct cache_cfg *cf)
{
    if (cf->ttl == RS_TIME_NEVER)
        return RS_TIME_NEVER;
    if (cf->ttl_jitter == 0.0)
        return cf->ttl;
    double u = gsl_rng_uniform(s->rng.s[RNG_KEYS]);
    return units_from_ns((double)cf->ttl * (1.0 - cf->ttl_jitter + 2.0 * cf->ttl_jitter * u));
}

void caching_on_complete(struct sim *s, uint32_t ji, enum errclass cls)
{
    const struct job *j = pool_at(&s->jobs, ji);
    const struct service_cfg *c = &s->sc.services[s->services.reps[j->rep].service];
    unsigned i = (unsigned)c->cache_index;
    struct cache_rt *rt = &s->caching.caches[i];
    uint32_t key = request_key(s, pool_at(&s->requests, j->req));
    if (cls == CLS_OK) {
        rs_time ttl = draw_ttl(s, &s->sc.caches[i]);
        rs_time at = units_add(s->now, ttl);
        cache_fill(&rt->c, key, at, &cb_cur(s, i)->n);
        if (at < sim_horizon(&s->sc)) /* past it the run has ended */
            evq_push(&s->q, at, EV_CACHE_EXPIRE, key, i);
        note_entries(s, i);
    } else {
        cache_abandon(&rt->c, key);
    }
    if (rt->joined == NULL)
        return;
    /* the joined executions answer what the loader answered (in the
     * order they joined: the list is newest first, so reverse it) */
    uint32_t n = rt->joined[key], prev = NO_JOIN;
    rt->joined[key] = NO_JOIN;
    while (n != NO_JOIN) {
        struct join_node *node = pool_at(&s->joins, n);
        uint32_t next = node->next;
        node->next = prev;
        prev = n;
        n = next;
    }
    for (n = prev; n != NO_JOIN;) {
        struct join_node *node = pool_at(&s->joins, n);
        uint32_t job = node->job, next = node->next;
        pool_free(&s->joins, n);
        service_complete_joined(s, job, cls);
        n = next;
    }
}

void caching_on_expire(struct sim *s, uint32_t key, uint32_t i)
{
    struct cache_rt *rt = &s->caching.caches[i];
    note_warmup(s, rt);
    if (cache_expire(&rt->c, key, s->now, &cb_cur(s, i)->n))
        note_entries(s, i);
}

void caching_apply_phases(struct sim *s)
{
    const struct scenario *sc = &s->sc;
    for (unsigned i = 0; i < sc->ncaches; i++) {
        struct cache_rt *rt = &s->caching.caches[i];
        double factor = 1.0;
        bool flush = false;
        for (unsigned k = 0; k < sc->nphases; k++) {
            const struct phase_cfg *p = &sc->phases[k];
            flush |= p->start == s->now && p->flush_cache == (int)i;
            if (p->start <= s->now && s->now < p->end && p->target_kind == TARGET_CACHE &&
                p->target_index == i && p->has_capacity)
                factor *= p->capacity;
        }
        if (flush)
            cache_flush(&rt->c);
        if (sc->caches[i].capacity >= 0) {
            double cap = round((double)sc->caches[i].capacity * factor);
            cache_set_capacity(&rt->c, (uint64_t)cap, &cb_cur(s, i)->n);
        }
        note_entries(s, i);
    }
}

/* ---- caches.csv and summary.csv ---- */

void caching_finish(struct sim *s)
{
    /* a bucket without a change ends with the entries the one before ended with */
    size_t n = s->sc.ncaches;
    for (size_t b = 1; b < s->m.nbuckets; b++)
        for (size_t i = 0; i < n; i++)
            if (!s->caching.cb[b * n + i].changed)
                s->caching.cb[b * n + i].entries = s->caching.cb[(b - 1) * n + i].entries;
}

bool sim_cache_row(const struct sim *s, unsigned cache, size_t bucket, struct sim_cache_row *row)
{
    const struct scenario *sc = &s->sc;
    if (cache >= sc->ncaches || bucket >= s->m.nbuckets)
        return false;
    const struct cache_bucket *b = &s->caching.cb[bucket * sc->ncaches + cache];
    row->n = b->n;
    row->entries = b->entries;
    return true;
}

double sim_cache_hit_ratio(const struct sim *s, unsigned cache)
{
    const struct cache_rt *rt = &s->caching.caches[cache];
    struct cache_counts base = rt->warm ? rt->at_warmup : rt->c.total;
    uint64_t lookups = rt->c.total.lookups - base.lookups;
    return lookups ? (double)(rt->c.total.hits - base.hits) / (double)lookups : 0.0;
}

uint32_t sim_cache_max_loading(const struct sim *s, unsigned cache)
{
    return s->caching.caches[cache].c.max_loading;
}
