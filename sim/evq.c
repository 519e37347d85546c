/*
 * evq — event heaps and lanes with lazy cancellation. See evq.h.
 */
#include "evq.h"

#include <stdio.h>
#include <stdlib.h>

#include "mem.h"

#define NIL UINT32_MAX

static void *grow(void *p, uint32_t *cap, size_t elem)
{
    uint32_t ncap = *cap ? *cap * 2 : 256;
    if (ncap < *cap) {
        fprintf(stderr, "retrystorm: event queue exceeds %u entries\n", *cap);
        abort();
    }
    void *np = mem_grow(p, (size_t)*cap * elem, (size_t)ncap * elem);
    if (np == NULL) {
        fprintf(stderr, "retrystorm: out of memory growing the event queue to %zu bytes\n",
                (size_t)ncap * elem);
        abort();
    }
    *cap = ncap;
    return np;
}

static inline bool before(const struct evq_event *a, const struct evq_event *b)
{
    return a->t < b->t || (a->t == b->t && a->seq < b->seq);
}

/* ---- slots ---- */

static inline bool is_cancelled(const struct evq *q, uint32_t slot)
{
    return (q->cancelled[slot >> 6] >> (slot & 63)) & 1u;
}

static uint32_t take_slot(struct evq *q, uint64_t seq)
{
    uint32_t slot;
    if (q->nfree > 0) {
        slot = q->free_slots[--q->nfree];
    } else {
        if (q->nslots == q->slot_cap) {
            uint32_t c2 = q->slot_cap, words = q->slot_cap / 64;
            q->slot_seq = grow(q->slot_seq, &q->slot_cap, sizeof *q->slot_seq);
            q->free_slots = grow(q->free_slots, &c2, sizeof *q->free_slots);
            uint32_t nwords = q->slot_cap / 64; /* slot_cap is a multiple of 256 */
            q->cancelled = mem_grow(q->cancelled, (size_t)words * sizeof *q->cancelled,
                                    (size_t)nwords * sizeof *q->cancelled);
            if (q->cancelled == NULL) {
                fprintf(stderr, "retrystorm: out of memory growing the event queue\n");
                abort();
            }
        }
        slot = q->nslots++;
    }
    q->slot_seq[slot] = seq;
    return slot;
}

static inline void release_slot(struct evq *q, uint32_t slot)
{
    q->slot_seq[slot] = 0;
    q->free_slots[q->nfree++] = slot;
}

/* Releases the slot of a cancelled event being dropped. */
static inline void drop_slot(struct evq *q, uint32_t slot)
{
    q->cancelled[slot >> 6] &= ~((uint64_t)1 << (slot & 63));
    q->ncancelled--;
    release_slot(q, slot);
}

/* ---- heaps ---- */

/* The heaps are 1-based (e[0] unused): the children of i are 2i and
 * 2i + 1, so with 32-byte entries and an aligned array a pair of siblings
 * shares one cache line. */
static void sift_up(struct evq_heap *h, uint32_t i, struct evq_event e)
{
    while (i > 1) {
        uint32_t parent = i / 2;
        if (!before(&e, &h->e[parent]))
            break;
        h->e[i] = h->e[parent];
        i = parent;
    }
    h->e[i] = e;
}

static void sift_down(struct evq_heap *h, uint32_t i, struct evq_event e)
{
    for (;;) {
        uint32_t c = 2 * i;
        if (c > h->n)
            break;
        /* The grandchildren's two lines: in flight while this level is
         * compared (a deep heap misses the cache at every level). */
        if (4 * i <= h->n) {
            __builtin_prefetch(&h->e[4 * i]);
            __builtin_prefetch(&h->e[4 * i + 2]);
        }
        if (c + 1 <= h->n && before(&h->e[c + 1], &h->e[c]))
            c++;
        if (!before(&h->e[c], &e))
            break;
        h->e[i] = h->e[c];
        i = c;
    }
    h->e[i] = e;
}

/* Removes a heap's top, whose slot the caller has dealt with. */
static void remove_top(struct evq_heap *h)
{
    h->n--;
    if (h->n > 0)
        sift_down(h, 1, h->e[h->n + 1]);
}

/* Drops cancelled events from the top of a heap, so that e[1] (if any) is
 * pending. */
static inline void purge_heap(struct evq *q, struct evq_heap *h)
{
    while (h->n > 0 && is_cancelled(q, h->e[1].slot)) {
        drop_slot(q, h->e[1].slot);
        remove_top(h);
    }
}

void evq_init(struct evq *q)
{
    *q = (struct evq){0};
    q->next_seq = 1;
    q->free_node = NIL;
    for (unsigned l = 0; l < EVQ_LANES; l++)
        q->lane_head[l] = q->lane_tail[l] = NIL;
}

void evq_fini(struct evq *q)
{
    mem_free(q->nodes, (size_t)q->nodes_cap * sizeof *q->nodes);
    mem_free(q->near.e, (size_t)q->near.cap * sizeof *q->near.e);
    mem_free(q->far.e, (size_t)q->far.cap * sizeof *q->far.e);
    mem_free(q->slot_seq, (size_t)q->slot_cap * sizeof *q->slot_seq);
    mem_free(q->free_slots, (size_t)q->slot_cap * sizeof *q->free_slots);
    mem_free(q->cancelled, (size_t)(q->slot_cap / 64) * sizeof *q->cancelled);
    *q = (struct evq){0};
}

evq_handle evq_push(struct evq *q, rs_time t, uint32_t type, uint32_t obj, uint32_t aux)
{
    /* Far events (a closed loop's think times, long backoffs) sit in their
     * own heap, so that the many near ones (service completions) are
     * pushed and popped in a small heap that stays in the cache. */
    struct evq_heap *h = t - q->now >= EVQ_FAR ? &q->far : &q->near;
    if (h->n + 1 >= h->cap)
        h->e = grow(h->e, &h->cap, sizeof *h->e);
    uint64_t seq = q->next_seq++;
    struct evq_event e = {t, seq, take_slot(q, seq), type, obj, aux};
    h->n++;
    sift_up(h, h->n, e);
    return (evq_handle){e.seq, e.slot};
}

/* ---- lanes ---- */

/* Unlinks lane l's head, whose slot the caller has dealt with. */
static void pop_head(struct evq *q, unsigned l)
{
    uint32_t i = q->lane_head[l];
    struct evq_lane_node *nd = &q->nodes[i];
    q->lane_head[l] = nd->next;
    if (nd->next == NIL) {
        q->lane_tail[l] = NIL;
        q->lane_mask &= ~(1u << l);
    } else {
        __builtin_prefetch(&q->nodes[nd->next]); /* the next pop looks at it */
    }
    nd->next = q->free_node;
    q->free_node = i;
}

evq_handle evq_push_lane(struct evq *q, unsigned lane, rs_time t, uint32_t type, uint32_t obj,
                         uint32_t aux)
{
    if (lane >= EVQ_LANES || (q->lane_tail[lane] != NIL && t < q->lane_last[lane]))
        return evq_push(q, t, type, obj, aux);
    uint32_t i = q->free_node;
    if (i != NIL) {
        q->free_node = q->nodes[i].next;
    } else {
        if (q->nodes_used == q->nodes_cap)
            q->nodes = grow(q->nodes, &q->nodes_cap, sizeof *q->nodes);
        i = q->nodes_used++;
    }
    struct evq_lane_node *nd = &q->nodes[i];
    uint64_t seq = q->next_seq++;
    nd->e = (struct evq_event){t, seq, take_slot(q, seq), type, obj, aux};
    nd->next = NIL;
    if (q->lane_tail[lane] != NIL)
        q->nodes[q->lane_tail[lane]].next = i;
    else
        q->lane_head[lane] = i;
    q->lane_tail[lane] = i;
    q->lane_last[lane] = t;
    q->lane_mask |= 1u << lane;
    return (evq_handle){nd->e.seq, nd->e.slot};
}

/* ---- pops ---- */

/* After dropping cancelled events from the heaps' tops and the lanes'
 * heads: the heap whose top comes first (NULL when both are empty) and the
 * lane whose head comes before it and every other head (-1 when none
 * does). */
static inline int first(struct evq *q, struct evq_heap **hp)
{
    purge_heap(q, &q->near);
    purge_heap(q, &q->far);
    struct evq_heap *h;
    if (q->far.n == 0)
        h = q->near.n ? &q->near : NULL;
    else if (q->near.n == 0)
        h = &q->far;
    else
        h = before(&q->far.e[1], &q->near.e[1]) ? &q->far : &q->near;
    *hp = h;
    int best = -1;
    const struct evq_event *b = h ? &h->e[1] : NULL;
    for (uint32_t m = q->lane_mask; m != 0; m &= m - 1) {
        unsigned l = (unsigned)__builtin_ctz(m);
        const struct evq_event *e = &q->nodes[q->lane_head[l]].e;
        while (is_cancelled(q, e->slot)) { /* drop cancelled heads */
            drop_slot(q, e->slot);
            pop_head(q, l);
            if (q->lane_head[l] == NIL)
                break;
            e = &q->nodes[q->lane_head[l]].e;
        }
        if (q->lane_head[l] != NIL && (b == NULL || before(e, b))) {
            b = e;
            best = (int)l;
        }
    }
    return best;
}

rs_time evq_next_time(struct evq *q)
{
    struct evq_heap *h;
    int l = first(q, &h);
    if (l >= 0)
        return q->nodes[q->lane_head[l]].e.t;
    return h ? h->e[1].t : RS_TIME_NEVER;
}

/* Pops the earliest event if `all` or if it comes before `limit`. */
static inline bool pop_first(struct evq *q, rs_time limit, bool all, struct evq_event *ev)
{
    struct evq_heap *h;
    int l = first(q, &h);
    if (l >= 0) {
        const struct evq_event *e = &q->nodes[q->lane_head[l]].e;
        if (!all && e->t >= limit)
            return false;
        *ev = *e;
        release_slot(q, ev->slot);
        pop_head(q, (unsigned)l);
    } else {
        if (h == NULL || (!all && h->e[1].t >= limit))
            return false;
        *ev = h->e[1];
        release_slot(q, ev->slot);
        remove_top(h);
    }
    q->now = ev->t;
    return true;
}

bool evq_pop_before(struct evq *q, rs_time limit, struct evq_event *ev)
{
    return pop_first(q, limit, false, ev);
}

bool evq_pop(struct evq *q, struct evq_event *ev) { return pop_first(q, 0, true, ev); }

bool evq_cancel(struct evq *q, evq_handle h)
{
    if (h.slot >= q->nslots || q->slot_seq[h.slot] != h.seq || is_cancelled(q, h.slot))
        return false; /* fired, cancelled, or the slot names a later event */
    q->cancelled[h.slot >> 6] |= (uint64_t)1 << (h.slot & 63);
    q->ncancelled++;
    return true;
}

/* ---- checks ---- */

static bool heap_ok(const struct evq *q, const struct evq_heap *h, uint32_t *cancelled)
{
    for (uint32_t i = 1; i <= h->n; i++) {
        uint32_t slot = h->e[i].slot;
        if (slot >= q->nslots || q->slot_seq[slot] != h->e[i].seq)
            return false;
        *cancelled += is_cancelled(q, slot);
        if (i > 1 && before(&h->e[i], &h->e[i / 2]))
            return false;
    }
    return true;
}

bool evq_check(const struct evq *q)
{
    uint32_t cancelled = 0, pending = 0;
    if (!heap_ok(q, &q->near, &cancelled) || !heap_ok(q, &q->far, &cancelled))
        return false;
    pending += q->near.n + q->far.n;
    for (unsigned l = 0; l < EVQ_LANES; l++) { /* each lane in order, its tail last */
        uint32_t prev = NIL;
        for (uint32_t i = q->lane_head[l]; i != NIL; prev = i, i = q->nodes[i].next) {
            const struct evq_event *e = &q->nodes[i].e;
            if (e->slot >= q->nslots || q->slot_seq[e->slot] != e->seq)
                return false;
            if (prev != NIL && before(e, &q->nodes[prev].e))
                return false;
            cancelled += is_cancelled(q, e->slot);
            pending++;
        }
        if (q->lane_tail[l] != prev || ((q->lane_mask >> l) & 1u) != (prev != NIL))
            return false;
    }
    /* every slot is free or holds exactly one of the events seen */
    return cancelled == q->ncancelled && pending + q->nfree == q->nslots;
}
