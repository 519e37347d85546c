/*
 * mem — huge-page-advised allocations. See mem.h.
 */
#define _DEFAULT_SOURCE /* MAP_ANONYMOUS, madvise */
#include "mem.h"

#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

static atomic_size_t mapped; /* bytes of the large blocks mapped now */

size_t mem_mapped(void) { return atomic_load_explicit(&mapped, memory_order_relaxed); }

static size_t round_huge(size_t bytes) { return (bytes + MEM_HUGE - 1) & ~(MEM_HUGE - 1); }

void *mem_alloc(size_t bytes)
{
    if (bytes < MEM_HUGE) { /* whole cache lines, so that states of 64 bytes sit in one */
        size_t len = (bytes + 63) & ~(size_t)63;
        void *p = aligned_alloc(64, len ? len : 64);
        if (p != NULL)
            memset(p, 0, len ? len : 64);
        return p;
    }
    size_t len = round_huge(bytes);
    if (len < bytes)
        return NULL;
    /* Map one huge page more, then trim to a 2 MiB-aligned range. */
    char *raw = mmap(NULL, len + MEM_HUGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (raw == MAP_FAILED)
        return NULL;
    uintptr_t a = ((uintptr_t)raw + MEM_HUGE - 1) & ~(uintptr_t)(MEM_HUGE - 1);
    char *p = (char *)a;
    if (p > raw)
        munmap(raw, (size_t)(p - raw));
    size_t tail = (size_t)(raw + len + MEM_HUGE - (p + len));
    if (tail > 0)
        munmap(p + len, tail);
#ifdef MADV_HUGEPAGE
    madvise(p, len, MADV_HUGEPAGE); /* advice only: failure leaves small pages */
#endif
    atomic_fetch_add_explicit(&mapped, len, memory_order_relaxed);
    return p; /* anonymous mappings are zero */
}

void mem_free(void *p, size_t bytes)
{
    if (p == NULL)
        return;
    if (bytes < MEM_HUGE) {
        free(p);
    } else {
        munmap(p, round_huge(bytes));
        atomic_fetch_sub_explicit(&mapped, round_huge(bytes), memory_order_relaxed);
    }
}

void *mem_grow(void *p, size_t old, size_t bytes)
{
    if (bytes <= old)
        return p;
    if (bytes < MEM_HUGE) { /* both small */
        char *np = realloc(p, bytes);
        if (np != NULL)
            memset(np + old, 0, bytes - old);
        return np;
    }
    if (old >= MEM_HUGE && round_huge(bytes) == round_huge(old))
        return p; /* the mapping already covers it, and is zero beyond old */
    char *np = mem_alloc(bytes);
    if (np == NULL)
        return NULL;
    if (old > 0)
        memcpy(np, p, old);
    mem_free(p, old);
    return np;
}
