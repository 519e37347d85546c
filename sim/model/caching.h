/*
 * caching — the state of a run's caches (caching.c says how they work):
 * each cache's structure (cache.h), the executions joined to each key's
 * miss in flight, the counts at the end of the warm-up, and caches.csv's
 * buckets; and the key generator that gives each request its key.
 * Internal to the model: simctx.h embeds struct cache_set in struct sim.
 * Memory is O(keys) per cache plus O(buckets · caches); the join nodes
 * live in the run's pool s->joins.
 */
#ifndef RS_CACHING_H
#define RS_CACHING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cache.h"
#include "config.h"
#include "errclass.h"

struct sim;

/* Per bucket and cache (caches.csv). */
struct cache_bucket {
    struct cache_counts n;
    uint64_t entries; /* at the bucket's last change */
    bool changed;     /* entries was set in this bucket (else it is the previous bucket's) */
};

/* A cache at run time: the structure, the executions waiting on each key's
 * miss (coalesce), and counts before the warmup ended. */
struct cache_rt {
    struct cache c;
    uint32_t *joined;     /* per key: the first waiting node in s->joins; UINT32_MAX: none */
    struct cache_counts at_warmup; /* the totals when the warmup ended */
    bool warm;
};

/* A node of a key's list of joined executions. */
struct join_node {
    uint32_t job, next;
};

struct cache_set {
    struct keygen keys;   /* draws each request's key (when there are caches) */
    struct cache_rt caches[SCENARIO_MAX_CACHES];
    struct cache_bucket *cb; /* nbuckets · ncaches */
};

int caching_init(struct sim *s, char *err, size_t errsz);
void caching_fini(struct sim *s);
/* Execution ji of a service with a cache starts and looks its request's
 * key up: a hit; a miss (j->loading is set: it loads the key); or, with
 * coalesce, joined to the miss in flight (ji is added to its list). */
enum cache_result caching_lookup(struct sim *s, uint32_t ji, const struct service_cfg *c);
/* Execution ji ended with cls: a loader fills its cache (ok) or abandons,
 * and the executions joined to it end with the same class. */
void caching_on_complete(struct sim *s, uint32_t ji, enum errclass cls);
void caching_on_expire(struct sim *s, uint32_t key, uint32_t cache);
/* Flushes and capacities of the phases active now. */
void caching_apply_phases(struct sim *s);
/* The end of the run: every bucket's entries (caches.csv). */
void caching_finish(struct sim *s);

#endif
