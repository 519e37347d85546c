/*
 * pool — chunked free-list pool. See pool.h.
 */
#include "pool.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void *xrealloc(void *ptr, size_t bytes)
{
    void *np = realloc(ptr, bytes);
    if (np == NULL) {
        fprintf(stderr, "retrystorm: out of memory (asked for %zu bytes for an object pool)\n", bytes);
        abort();
    }
    return np;
}

void pool_init(struct pool *p, size_t size)
{
    memset(p, 0, sizeof *p);
    p->size = size;
}

void pool_fini(struct pool *p)
{
    for (uint32_t c = 0; c < p->nchunks; c++)
        free(p->chunks[c]);
    free(p->chunks);
    free(p->free_idx);
    memset(p, 0, sizeof *p);
}

uint32_t pool_alloc(struct pool *p)
{
    uint32_t i;
    if (p->nfree > 0) {
        i = p->free_idx[--p->nfree];
    } else {
        if (p->used == UINT32_MAX) {
            fprintf(stderr, "retrystorm: more than %u live objects in a pool\n", UINT32_MAX);
            abort();
        }
        i = p->used++;
        if ((i >> POOL_CHUNK_BITS) >= p->nchunks) {
            if (p->nchunks == p->chunks_cap) {
                p->chunks_cap = p->chunks_cap ? p->chunks_cap * 2 : 16;
                p->chunks = xrealloc(p->chunks, p->chunks_cap * sizeof *p->chunks);
            }
            p->chunks[p->nchunks] = calloc(POOL_CHUNK, p->size);
            if (p->chunks[p->nchunks] == NULL) {
                fprintf(stderr, "retrystorm: out of memory (asked for %zu bytes for an object pool)\n",
                        (size_t)POOL_CHUNK * p->size);
                abort();
            }
            p->nchunks++;
        }
    }
    p->live++;
    return i;
}

void pool_free(struct pool *p, uint32_t i)
{
    if (p->nfree == p->free_cap) {
        p->free_cap = p->free_cap ? p->free_cap * 2 : 1024;
        p->free_idx = xrealloc(p->free_idx, p->free_cap * sizeof *p->free_idx);
    }
    p->free_idx[p->nfree++] = i;
    p->live--;
}
