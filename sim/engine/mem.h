/*
 * mem — zeroed allocations for the simulator's large, randomly accessed
 * arrays (object pools, the event queue, per-client states), backed by
 * transparent huge pages where the kernel offers them.
 *
 * A run touches its pools and queue all over; with 4 KiB pages every new
 * page costs a page fault (expensive under virtualisation) and every random
 * access a TLB entry. Blocks of 2 MiB or more are mapped directly, aligned
 * to 2 MiB and advised MADV_HUGEPAGE, which cuts faults by up to 512×;
 * smaller blocks come from calloc. Where huge pages are off (or not Linux)
 * the advice is a no-op and everything still works.
 *
 * Costs: alloc and free O(1) system calls; grow O(new size) at worst (a
 * copy), amortised O(1) per element when sizes double.
 */
#ifndef RS_MEM_H
#define RS_MEM_H

#include <stddef.h>

#define MEM_HUGE ((size_t)2 << 20)

/* bytes zeroed bytes aligned to a 64-byte cache line (to 2 MiB when
 * large), or NULL when memory is short. Free with mem_free and the same
 * size. */
void *mem_alloc(size_t bytes);
void mem_free(void *p, size_t bytes);

/* Grows p (of old bytes, possibly NULL with old 0) to bytes, keeping its
 * contents and zeroing the rest; NULL when memory is short (p is then
 * still valid). Small blocks come from realloc: aligned for any basic
 * type, not to a cache line. */
void *mem_grow(void *p, size_t old, size_t bytes);

/* Bytes mapped now by mem_alloc's large blocks, over every thread (small
 * ones come from malloc, whose own statistics count them): what tests
 * compare a run's estimated footprint with. */
size_t mem_mapped(void);

#endif
