/*
 * evq — binary min-heap of events with cancellation. See evq.h.
 */
#include "evq.h"

#include <stdio.h>
#include <stdlib.h>

#include "mem.h"

#define NOPOS UINT32_MAX       /* the slot is free */
#define IN_HEAP 0x7FFFFFFFu    /* the slot's event is pending in the heap */
#define CANCELLED 0x7FFFFFFEu  /* cancelled; still in the heap until it surfaces */
#define NIL UINT32_MAX
#define IN_LANE 0x80000000u

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

/* The heaps are 1-based (e[0] unused): the children of i are 2i and
 * 2i + 1, so with 32-byte entries and an aligned array a pair of siblings
 * shares one cache line. Entries move without touching the slot map. */
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
    mem_free(q->pos, (size_t)q->slot_cap * sizeof *q->pos);
    mem_free(q->slot_seq, (size_t)q->slot_cap * sizeof *q->slot_seq);
    mem_free(q->free_slots, (size_t)q->slot_cap * sizeof *q->free_slots);
    *q = (struct evq){0};
}

static uint32_t take_slot(struct evq *q, uint64_t seq, uint32_t where)
{
    uint32_t slot;
    if (q->nfree > 0) {
        slot = q->free_slots[--q->nfree];
    } else {
        if (q->nslots == q->slot_cap) {
            uint32_t c2 = q->slot_cap, c3 = q->slot_cap;
            q->pos = grow(q->pos, &q->slot_cap, sizeof *q->pos);
            q->slot_seq = grow(q->slot_seq, &c2, sizeof *q->slot_seq);
            q->free_slots = grow(q->free_slots, &c3, sizeof *q->free_slots);
        }
        slot = q->nslots++;
    }
    q->pos[slot] = where;
    q->slot_seq[slot] = seq;
    return slot;
}

static inline void release_slot(struct evq *q, uint32_t slot)
{
    q->pos[slot] = NOPOS;
    q->free_slots[q->nfree++] = slot;
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
    struct evq_event e = {t, seq, take_slot(q, seq, IN_HEAP), type, obj, aux};
    h->n++;
    sift_up(h, h->n, e);
    return (evq_handle){e.seq, e.slot};
}

/* Removes a heap's top, whose slot the caller has dealt with. */
static void remove_top(struct evq_heap *h)
{
    h->n--;
    if (h->n > 0)
        sift_down(h, 1, h->e[h->n + 1]);
}

/* Drops cancelled events from the top of a heap, so that e[1] (if any) is
 * pending. Amortised O(log n) per cancelled event. */
static void purge(struct evq *q, struct evq_heap *h)
{
    while (h->n > 0 && q->pos[h->e[1].slot] == CANCELLED) {
        release_slot(q, h->e[1].slot);
        q->ncancelled--;
        remove_top(h);
    }
}

/* The heap whose top comes first (after purging both), or NULL when both
 * are empty. */
static struct evq_heap *first_heap(struct evq *q)
{
    purge(q, &q->near);
    purge(q, &q->far);
    if (q->far.n == 0)
        return q->near.n ? &q->near : NULL;
    if (q->near.n == 0)
        return &q->far;
    return before(&q->far.e[1], &q->near.e[1]) ? &q->far : &q->near;
}

/* ---- lanes ---- */

static void unlink_node(struct evq *q, unsigned lane, uint32_t i)
{
    struct evq_lane_node *nd = &q->nodes[i];
    if (nd->prev != NIL)
        q->nodes[nd->prev].next = nd->next;
    else
        q->lane_head[lane] = nd->next;
    if (nd->next != NIL)
        q->nodes[nd->next].prev = nd->prev;
    else
        q->lane_tail[lane] = nd->prev;
    if (q->lane_head[lane] == NIL)
        q->lane_mask &= ~(1u << lane);
    release_slot(q, nd->e.slot);
    nd->next = q->free_node;
    q->free_node = i;
}

/* The lane whose head comes before every other head and the top of heap
 * h (may be NULL), or -1. */
static int first_lane(const struct evq *q, const struct evq_heap *h)
{
    int best = -1;
    const struct evq_event *b = h ? &h->e[1] : NULL;
    for (uint32_t m = q->lane_mask; m != 0; m &= m - 1) {
        unsigned l = (unsigned)__builtin_ctz(m);
        const struct evq_event *e = &q->nodes[q->lane_head[l]].e;
        if (b == NULL || before(e, b)) {
            b = e;
            best = (int)l;
        }
    }
    return best;
}

rs_time evq_next_time(struct evq *q)
{
    struct evq_heap *h = first_heap(q);
    int l = first_lane(q, h);
    if (l >= 0)
        return q->nodes[q->lane_head[l]].e.t;
    return h ? h->e[1].t : RS_TIME_NEVER;
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
    nd->e = (struct evq_event){t, seq, take_slot(q, seq, IN_LANE | i), type, obj, aux};
    nd->next = NIL;
    nd->prev = q->lane_tail[lane];
    if (nd->prev != NIL)
        q->nodes[nd->prev].next = i;
    else
        q->lane_head[lane] = i;
    q->lane_tail[lane] = i;
    q->lane_last[lane] = t;
    q->lane_mask |= 1u << lane;
    if (lane >= q->nlanes)
        q->nlanes = lane + 1;
    return (evq_handle){nd->e.seq, nd->e.slot};
}

/* The lane node i belongs to (by walking to its head: only for checks). */
static int lane_of(const struct evq *q, uint32_t i)
{
    while (q->nodes[i].prev != NIL)
        i = q->nodes[i].prev;
    for (unsigned l = 0; l < q->nlanes; l++)
        if (q->lane_head[l] == i)
            return (int)l;
    return -1;
}

/* Pops the earliest event if `all` or if it comes before `limit`. */
static inline bool pop_first(struct evq *q, rs_time limit, bool all, struct evq_event *ev)
{
    struct evq_heap *h = first_heap(q);
    int l = first_lane(q, h);
    if (l >= 0) {
        uint32_t i = q->lane_head[l];
        if (!all && q->nodes[i].e.t >= limit)
            return false;
        *ev = q->nodes[i].e;
        unlink_node(q, (unsigned)l, i);
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
    if (h.slot >= q->nslots)
        return false;
    uint32_t i = q->pos[h.slot];
    if (i == NOPOS)
        return false;
    if (i & IN_LANE) {
        uint32_t node = i & ~IN_LANE;
        if (q->nodes[node].e.seq != h.seq)
            return false;
        /* find the lane from the neighbours: the node is a head or has a prev */
        struct evq_lane_node *nd = &q->nodes[node];
        unsigned lane = 0;
        if (nd->prev == NIL || nd->next == NIL) {
            for (lane = 0; lane < q->nlanes; lane++)
                if (q->lane_head[lane] == node || q->lane_tail[lane] == node)
                    break;
        }
        unlink_node(q, lane, node); /* the lane only matters at an end */
        return true;
    }
    if (i != IN_HEAP || q->slot_seq[h.slot] != h.seq)
        return false; /* cancelled already, or the slot names a later event */
    q->pos[h.slot] = CANCELLED; /* dropped when it reaches the top */
    q->ncancelled++;
    return true;
}

static bool heap_ok(const struct evq *q, const struct evq_heap *h, uint32_t *cancelled)
{
    for (uint32_t i = 1; i <= h->n; i++) {
        uint32_t slot = h->e[i].slot, p = q->pos[slot];
        if ((p != IN_HEAP && p != CANCELLED) || q->slot_seq[slot] != h->e[i].seq)
            return false;
        *cancelled += p == CANCELLED;
        if (i > 1 && before(&h->e[i], &h->e[i / 2]))
            return false;
    }
    return true;
}

bool evq_check(const struct evq *q)
{
    uint32_t cancelled = 0;
    if (!heap_ok(q, &q->near, &cancelled) || !heap_ok(q, &q->far, &cancelled) ||
        cancelled != q->ncancelled)
        return false;
    for (unsigned l = 0; l < q->nlanes; l++) { /* each lane in order, linked both ways */
        uint32_t prev = NIL;
        for (uint32_t i = q->lane_head[l]; i != NIL; prev = i, i = q->nodes[i].next) {
            if (q->nodes[i].prev != prev || q->pos[q->nodes[i].e.slot] != (IN_LANE | i))
                return false;
            if (prev != NIL && before(&q->nodes[i].e, &q->nodes[prev].e))
                return false;
        }
        if (q->lane_tail[l] != prev || (prev != NIL && lane_of(q, prev) != (int)l))
            return false;
        if (((q->lane_mask >> l) & 1u) != (q->lane_head[l] != NIL))
            return false;
    }
    return true;
}
