/*
 * pool — a free-list pool of fixed-size objects addressed by 32-bit index.
 *
 * Objects live in chunks that are never moved, so a pointer to an object
 * stays valid while other objects are allocated. A chunk holds a power of
 * two of objects, at least 4096 and enough to fill 2 MiB, so that chunks
 * are backed by huge pages (see mem.h); of the next four powers, the one
 * whose chunk fills its last huge page best. Freed indices are
 * reused last-in first-out. Memory follows the peak number of live objects;
 * the steady state does not call malloc. alloc, free and at are O(1)
 * (amortised O(1) for alloc when a chunk is added).
 */
#ifndef RS_POOL_H
#define RS_POOL_H

#include <stddef.h>
#include <stdint.h>

struct pool {
    size_t size;        /* bytes per object */
    unsigned bits;      /* log2 of the objects per chunk */
    uint32_t mask;      /* objects per chunk - 1 */
    char **chunks;
    uint32_t nchunks, chunks_cap;
    uint32_t *free_idx;
    uint32_t nfree, free_cap;
    uint32_t used;      /* indices ever handed out */
    uint32_t live;
};

void pool_init(struct pool *p, size_t size);
void pool_fini(struct pool *p);

/* A free object's index. A new object's bytes are zero; a reused one keeps
 * the bytes it had when freed (so a generation counter in it survives).
 * Aborts with a message when memory runs out. */
uint32_t pool_alloc_slow(struct pool *p);
static inline uint32_t pool_alloc(struct pool *p)
{
    if (p->nfree == 0)
        return pool_alloc_slow(p);
    p->live++;
    return p->free_idx[--p->nfree];
}

/* Inline, as alloc's reuse path: they run several times an event. */
void pool_grow_free(struct pool *p);
static inline void pool_free(struct pool *p, uint32_t i)
{
    if (p->nfree == p->free_cap)
        pool_grow_free(p);
    p->free_idx[p->nfree++] = i;
    p->live--;
}

static inline void *pool_at(const struct pool *p, uint32_t i)
{
    return p->chunks[i >> p->bits] + (size_t)(i & p->mask) * p->size;
}

#endif
