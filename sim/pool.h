/*
 * pool — a free-list pool of fixed-size objects addressed by 32-bit index.
 *
 * Objects live in chunks of 4096 that are never moved, so a pointer to an
 * object stays valid while other objects are allocated. Freed indices are
 * reused last-in first-out. Memory follows the peak number of live objects;
 * the steady state does not call malloc. alloc, free and at are O(1)
 * (amortised O(1) for alloc when a chunk is added).
 */
#ifndef RS_POOL_H
#define RS_POOL_H

#include <stddef.h>
#include <stdint.h>

#define POOL_CHUNK_BITS 12
#define POOL_CHUNK (1u << POOL_CHUNK_BITS)

struct pool {
    size_t size;        /* bytes per object */
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
uint32_t pool_alloc(struct pool *p);
void pool_free(struct pool *p, uint32_t i);

static inline void *pool_at(const struct pool *p, uint32_t i)
{
    return p->chunks[i >> POOL_CHUNK_BITS] + (size_t)(i & (POOL_CHUNK - 1)) * p->size;
}

#endif
