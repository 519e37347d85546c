/*
 * pool — chunked free-list pool. See pool.h.
 */
#include "pool.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mem.h"

static void *xgrow(void *ptr, size_t old, size_t bytes)
{
    void *np = mem_grow(ptr, old, bytes);
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
    p->bits = 12;
    while (p->bits < 31 && (size << p->bits) < MEM_HUGE)
        p->bits++;
    /* A chunk is mapped in whole huge pages, and a huge page is resident as
     * soon as one byte of it is touched: of the next few sizes, take the one
     * that wastes the smallest share of its last page (40-byte objects: 2^18
     * fill 10 MiB exactly, where 2^16 left 1.5 of 4 MiB unused). */
    unsigned best = p->bits;
    double best_waste = 1.0;
    for (unsigned b = p->bits; b < p->bits + 4 && b < 31; b++) {
        size_t bytes = size << b, mapped = (bytes + MEM_HUGE - 1) & ~(MEM_HUGE - 1);
        double waste = (double)(mapped - bytes) / (double)mapped;
        if (waste < best_waste - 1e-9) {
            best = b;
            best_waste = waste;
        }
    }
    p->bits = best;
    p->mask = (1u << p->bits) - 1;
}

void pool_fini(struct pool *p)
{
    for (uint32_t c = 0; c < p->nchunks; c++)
        mem_free(p->chunks[c], p->size << p->bits);
    mem_free(p->chunks, p->chunks_cap * sizeof *p->chunks);
    mem_free(p->free_idx, p->free_cap * sizeof *p->free_idx);
    memset(p, 0, sizeof *p);
}

/* pool_alloc when no freed index is left: a new one, and a new chunk when
 * the last is full. */
uint32_t pool_alloc_slow(struct pool *p)
{
    if (p->used == UINT32_MAX) {
        fprintf(stderr, "retrystorm: more than %u live objects in a pool\n", UINT32_MAX);
        abort();
    }
    uint32_t i = p->used++;
    if ((i >> p->bits) >= p->nchunks) {
        if (p->nchunks == p->chunks_cap) {
            size_t old = p->chunks_cap * sizeof *p->chunks;
            p->chunks_cap = p->chunks_cap ? p->chunks_cap * 2 : 16;
            p->chunks = xgrow(p->chunks, old, p->chunks_cap * sizeof *p->chunks);
        }
        p->chunks[p->nchunks] = mem_alloc(p->size << p->bits);
        if (p->chunks[p->nchunks] == NULL) {
            fprintf(stderr, "retrystorm: out of memory (asked for %zu bytes for an object pool)\n",
                    p->size << p->bits);
            abort();
        }
        p->nchunks++;
    }
    p->live++;
    return i;
}

void pool_grow_free(struct pool *p)
{
    size_t old = p->free_cap * sizeof *p->free_idx;
    p->free_cap = p->free_cap ? p->free_cap * 2 : 1024;
    p->free_idx = xgrow(p->free_idx, old, p->free_cap * sizeof *p->free_idx);
}
