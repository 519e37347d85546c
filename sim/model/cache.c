/*
 * cache — a look-aside cache of a dense key space, and key popularity. See
 * cache.h for the contract.
 *
 * The LRU list is doubly linked through two arrays indexed by key: prev
 * points towards the head (more recently used), next towards the tail
 * (less recently used); both are meaningful only while stored[key] is set.
 * Every operation touches a constant number of slots, except flush (walks
 * the list once: O(entries)) and set_capacity (O(evicted)). Memory is 21
 * bytes per key, allocated once by cache_init (mem.h).
 *
 * Counting: every event is added to c->total and, unless the caller's
 * bucket b is NULL, to *b as well; b must not be &c->total.
 *
 * keygen: uniform keys cost nothing to set up; Zipf keys are drawn by
 * rejection-inversion (below) with no table, in O(1) expected time and
 * memory. keygen_prob returns the exact probability from the weights'
 * normalising sum (O(n) once, at init).
 */
#include "cache.h"

#include <assert.h>
#include <math.h>
#include <stdlib.h>

#include "mem.h"

#define COUNT(c, b, field)             \
    do {                               \
        assert((b) != &(c)->total);    \
        (c)->total.field++;            \
        if ((b) != NULL)               \
            (b)->field++;              \
    } while (0)

/* Takes key out of the LRU list (it stays marked stored). */
static void unlink_key(struct cache *c, uint32_t key)
{
    uint32_t p = c->prev[key], n = c->next[key];
    if (p != CACHE_NONE)
        c->next[p] = n;
    else
        c->head = n;
    if (n != CACHE_NONE)
        c->prev[n] = p;
    else
        c->tail = p;
}

/* Puts key at the head of the LRU list (most recently used). */
static void push_front(struct cache *c, uint32_t key)
{
    c->prev[key] = CACHE_NONE;
    c->next[key] = c->head;
    if (c->head != CACHE_NONE)
        c->prev[c->head] = key;
    else
        c->tail = key;
    c->head = key;
}

/* Removes key's stored entry (uncounted: callers count why). */
static void remove_entry(struct cache *c, uint32_t key)
{
    assert(c->stored[key] && c->entries > 0);
    unlink_key(c, key);
    c->stored[key] = 0;
    c->entries--;
}

/* Evicts the least recently used entry (counted). */
static void evict_tail(struct cache *c, struct cache_counts *b)
{
    assert(c->tail != CACHE_NONE);
    remove_entry(c, c->tail);
    COUNT(c, b, evictions);
}

int cache_init(struct cache *c, uint32_t nkeys, uint64_t capacity, bool coalesce)
{
    assert(nkeys >= 1 && nkeys <= CACHE_MAX_KEYS);
    *c = (struct cache){.nkeys = nkeys, .capacity = capacity, .coalesce = coalesce,
                        .head = CACHE_NONE, .tail = CACHE_NONE};
    size_t n = nkeys;
    c->prev = mem_alloc(n * sizeof *c->prev);
    c->next = mem_alloc(n * sizeof *c->next);
    c->expires = mem_alloc(n * sizeof *c->expires);
    c->stored = mem_alloc(n * sizeof *c->stored);
    c->loading = mem_alloc(n * sizeof *c->loading);
    if (!c->prev || !c->next || !c->expires || !c->stored || !c->loading) {
        cache_fini(c);
        return -1;
    }
    return 0;
}

void cache_fini(struct cache *c)
{
    size_t n = c->nkeys;
    mem_free(c->prev, n * sizeof *c->prev);
    mem_free(c->next, n * sizeof *c->next);
    mem_free(c->expires, n * sizeof *c->expires);
    mem_free(c->stored, n * sizeof *c->stored);
    mem_free(c->loading, n * sizeof *c->loading);
    *c = (struct cache){.head = CACHE_NONE, .tail = CACHE_NONE};
}

enum cache_result cache_lookup(struct cache *c, uint32_t key, rs_time now, struct cache_counts *b)
{
    assert(key < c->nkeys);
    COUNT(c, b, lookups);
    if (c->stored[key]) {
        if (c->expires[key] > now) {
            COUNT(c, b, hits);
            if (c->head != key) {
                unlink_key(c, key);
                push_front(c, key);
            }
            return CACHE_HIT;
        }
        remove_entry(c, key);
        COUNT(c, b, expirations);
    }
    if (c->coalesce && c->loading[key] > 0) {
        COUNT(c, b, coalesced);
        return CACHE_JOIN;
    }
    assert(c->loading[key] < UINT32_MAX);
    if (++c->loading[key] > c->max_loading)
        c->max_loading = c->loading[key];
    COUNT(c, b, misses);
    return CACHE_MISS;
}

void cache_fill(struct cache *c, uint32_t key, rs_time expires_at, struct cache_counts *b)
{
    assert(key < c->nkeys && c->loading[key] > 0);
    c->loading[key]--;
    if (c->stored[key]) {
        unlink_key(c, key);
    } else {
        assert(c->entries <= c->capacity);
        if (c->capacity == 0)
            return; /* a cache of no entries stores nothing */
        if (c->entries == c->capacity)
            evict_tail(c, b);
        c->stored[key] = 1;
        c->entries++;
    }
    c->expires[key] = expires_at;
    push_front(c, key);
}

void cache_abandon(struct cache *c, uint32_t key)
{
    assert(key < c->nkeys && c->loading[key] > 0);
    c->loading[key]--;
}

bool cache_expire(struct cache *c, uint32_t key, rs_time now, struct cache_counts *b)
{
    assert(key < c->nkeys);
    if (!c->stored[key] || c->expires[key] > now)
        return false;
    remove_entry(c, key);
    COUNT(c, b, expirations);
    return true;
}

void cache_flush(struct cache *c)
{
    for (uint32_t k = c->head; k != CACHE_NONE; k = c->next[k])
        c->stored[k] = 0;
    c->head = c->tail = CACHE_NONE;
    c->entries = 0;
}

void cache_set_capacity(struct cache *c, uint64_t capacity, struct cache_counts *b)
{
    c->capacity = capacity;
    while (c->entries > capacity)
        evict_tail(c, b);
}

/* Rejection-inversion for Zipf (Hörmann and Derflinger, ACM TOMACS 6(3),
 * 1996, with H shifted by one so that it holds for every s > 0, as Apache
 * Commons RNG does): the hat h(x) = x^-s has the integral
 * H(x) = (x^(1-s) - 1) / (1 - s) (log x when s = 1) and its inverse; a
 * uniform u over (H(1.5) - 1, H(n + 1/2)] maps to x = H^-1(u), rounded to
 * the key k, accepted when u >= H(k + 1/2) - h(k); keys 1..n here are
 * 0..n-1 outside. */
static double log1p_over(double x) /* log(1 + x) / x, continuous at 0 */
{
    return fabs(x) > 1e-8 ? log1p(x) / x : 1 - x * (0.5 - x * (1.0 / 3 - 0.25 * x));
}

static double expm1_over(double x) /* (e^x - 1) / x, continuous at 0 */
{
    return fabs(x) > 1e-8 ? expm1(x) / x : 1 + x * 0.5 * (1 + x / 3 * (1 + 0.25 * x));
}

static double zipf_H(double x, double s)
{
    double lx = log(x);
    return expm1_over((1 - s) * lx) * lx;
}

static double zipf_h(double x, double s) { return exp(-s * log(x)); }

static double zipf_H_inv(double y, double s)
{
    double t = y * (1 - s);
    if (t < -1)
        t = -1; /* rounding */
    return exp(log1p_over(t) * y);
}

int keygen_init(struct keygen *k, uint32_t n, double s)
{
    assert(n >= 1 && s >= 0 && isfinite(s));
    *k = (struct keygen){.n = n, .s = s, .norm = n};
    if (s == 0)
        return 0;
    double sum = 0;
    for (uint32_t i = n; i-- > 0;) /* smallest first, for an accurate sum */
        sum += pow((double)i + 1.0, -s);
    k->norm = sum;
    k->hx1 = zipf_H(1.5, s) - 1;
    k->hn = zipf_H((double)n + 0.5, s);
    k->shortcut = 2 - zipf_H_inv(zipf_H(2.5, s) - zipf_h(2, s), s);
    return 0;
}

void keygen_fini(struct keygen *k)
{
    *k = (struct keygen){0};
}

uint32_t keygen_draw(const struct keygen *k, gsl_rng *r)
{
    if (k->s == 0)
        return (uint32_t)gsl_rng_uniform_int(r, k->n);
    for (;;) {
        double u = k->hn + gsl_rng_uniform(r) * (k->hx1 - k->hn); /* in (hx1, hn] */
        double x = zipf_H_inv(u, k->s);
        double kf = floor(x + 0.5);
        uint32_t key = kf < 1 ? 1 : kf > (double)k->n ? k->n : (uint32_t)kf;
        /* the shortcut (Theorem 2 of the paper) spares most evaluations of H */
        if ((double)key - x <= k->shortcut || u >= zipf_H(key + 0.5, k->s) - zipf_h(key, k->s))
            return key - 1;
    }
}

double keygen_prob(const struct keygen *k, uint32_t key)
{
    assert(key < k->n);
    if (k->s == 0)
        return 1.0 / k->n;
    return pow((double)key + 1.0, -k->s) / k->norm;
}
