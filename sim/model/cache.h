/*
 * cache — a look-aside cache of a dense key space (keys 0 .. nkeys-1), and
 * the key popularity that draws a logical request's key.
 *
 * Every key has a slot in flat arrays (no hashing): whether an entry is
 * stored, when it expires, its place in the LRU list, and how many misses
 * for it are in flight (being loaded by the service behind the cache). A
 * lookup finds a live entry (hit: it becomes the most recently used), an
 * expired one (removed and counted as an expiration, then a miss), or none
 * (miss). With `coalesce`, a miss for a key that already has a miss in
 * flight joins it instead (single flight): the caller waits for the leader's
 * result and no second load is started. A fill stores the value a miss
 * loaded, evicting the least recently used entry when the cache is at
 * capacity; a miss that ends without a value is abandoned. TTLs are given by
 * the caller (it draws their jitter); expiry is exact when the caller calls
 * cache_expire at the instant an entry expires, and lazy otherwise.
 * Every operation that changes a count adds to the `struct cache_counts`
 * it is given (the caller's current bucket; NULL: none, and never &c->total)
 * as well as to c->total.
 *
 * Costs: init O(nkeys) time and 21 bytes per key; lookup, fill, abandon and
 * expire O(1); flush O(entries); set_capacity O(evicted).
 * keygen: uniform (GSL), or Zipf by rejection-inversion (Hörmann and
 * Derflinger 1996: exact, no table; GSL has no Zipf sampler, and its alias
 * table for 10^7 keys, 160 MB in small pages, cost two TLB misses a draw,
 * 45 % of a run); init O(nkeys) (the normalising sum, for keygen_prob),
 * draw O(1) expected (at most ~1.2 uniforms on average for s <= 2).
 */
#ifndef RS_CACHE_H
#define RS_CACHE_H

#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <stdbool.h>
#include <stdint.h>

#include "units.h"

#define CACHE_MAX_KEYS 10000000u

struct cache_counts {
    uint64_t lookups, hits, misses, coalesced, evictions, expirations;
};

enum cache_result {
    CACHE_HIT,  /* a live entry */
    CACHE_MISS, /* load it, then cache_fill or cache_abandon */
    CACHE_JOIN  /* coalesce: a miss for this key is in flight; wait for its result */
};

struct cache {
    uint32_t nkeys;
    uint64_t capacity;  /* entries it may hold now (0: none); CACHE_UNBOUNDED: no limit */
    bool coalesce;
    uint64_t entries;   /* stored now (expired ones not yet noticed included) */
    uint32_t head, tail; /* most and least recently used; CACHE_NONE: empty */
    uint32_t *prev, *next;
    rs_time *expires;    /* RS_TIME_NEVER: no TTL */
    uint8_t *stored;
    uint32_t *loading;   /* misses in flight per key */
    uint32_t max_loading; /* the most misses ever in flight for one key */
    struct cache_counts total;
};
#define CACHE_NONE UINT32_MAX
#define CACHE_UNBOUNDED UINT64_MAX

/* An empty cache of nkeys keys (1 .. CACHE_MAX_KEYS) holding at most
 * capacity entries (CACHE_UNBOUNDED: no limit; 0: it stores nothing, every
 * fill is dropped). Returns 0, or -1 when out of memory. */
int cache_init(struct cache *c, uint32_t nkeys, uint64_t capacity, bool coalesce);
/* Frees the arrays; safe on a zeroed or finalised cache. */
void cache_fini(struct cache *c);

/* Looks key up at time now (counts a lookup, and a hit, miss or coalesced).
 * A miss counts the key as loading until cache_fill or cache_abandon. */
enum cache_result cache_lookup(struct cache *c, uint32_t key, rs_time now, struct cache_counts *b);
/* A miss for key loaded a value at time now: store it (replacing a stored
 * one), expiring at expires_at (RS_TIME_NEVER: never), as the most recently
 * used entry; evicts the least recently used when at capacity. */
void cache_fill(struct cache *c, uint32_t key, rs_time expires_at, struct cache_counts *b);
/* A miss for key ended without a value. */
void cache_abandon(struct cache *c, uint32_t key);
/* key's entry may expire at now: removes it (an expiration) when it is stored
 * and expires at or before now. Returns whether it did. */
bool cache_expire(struct cache *c, uint32_t key, rs_time now, struct cache_counts *b);
/* Removes every entry (not counted as evictions or expirations); misses in
 * flight stay in flight. */
void cache_flush(struct cache *c);
/* Sets the capacity (as cache_init), evicting least recently used entries
 * down to it. */
void cache_set_capacity(struct cache *c, uint64_t capacity, struct cache_counts *b);

/* Key popularity: uniform over n keys, or Zipf with exponent s > 0
 * (key k, from 0, has probability ∝ 1/(k+1)^s). */
struct keygen {
    uint32_t n;
    double hx1, hn, shortcut;  /* rejection-inversion: H(1.5) - 1, H(n + 1/2), s of the paper */
    double s;                  /* the exponent; 0: uniform */
    double norm;               /* sum of 1/(k+1)^s over the n keys (n when uniform) */
};
/* s == 0: uniform. Returns 0, or -1 when out of memory. */
int keygen_init(struct keygen *k, uint32_t n, double s);
void keygen_fini(struct keygen *k);
uint32_t keygen_draw(const struct keygen *k, gsl_rng *r);
/* The probability of key k (for tests and theory). */
double keygen_prob(const struct keygen *k, uint32_t key);

#endif
