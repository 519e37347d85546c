/*
 * evq — the near heap, the calendar, the far heap and the lanes, with
 * lazy cancellation. See evq.h.
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

/* before() as a value computed without branches. sift_down passes e[n + 1]
 * too, one past the last entry (within the array, as remove_top has just
 * taken it out), and masks the result. */
static inline bool before_nb(const struct evq_event *a, const struct evq_event *b)
{
    return (a->t < b->t) | ((a->t == b->t) & (a->seq < b->seq));
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
        /* the smaller child, without a branch: which one it is cannot be
         * predicted, and a mispredicted branch at every level costs more
         * than the comparison */
        c += (uint32_t)((c + 1 <= h->n) & before_nb(&h->e[c + 1], &h->e[c]));
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
    for (unsigned b = 0; b < EVQ_BUCKETS; b++)
        q->ring[b].head = q->ring[b].tail = NIL;
    pool_init(&q->chunks, sizeof(struct evq_chunk));
}

void evq_fini(struct evq *q)
{
    mem_free(q->nodes, (size_t)q->nodes_cap * sizeof *q->nodes);
    mem_free(q->near.e, (size_t)q->near.cap * sizeof *q->near.e);
    mem_free(q->far.e, (size_t)q->far.cap * sizeof *q->far.e);
    mem_free(q->slot_seq, (size_t)q->slot_cap * sizeof *q->slot_seq);
    mem_free(q->free_slots, (size_t)q->slot_cap * sizeof *q->free_slots);
    mem_free(q->cancelled, (size_t)(q->slot_cap / 64) * sizeof *q->cancelled);
    pool_fini(&q->chunks);
    *q = (struct evq){0};
}

static void heap_insert(struct evq_heap *h, struct evq_event e)
{
    if (h->n + 1 >= h->cap)
        h->e = grow(h->e, &h->cap, sizeof *h->e);
    h->n++;
    sift_up(h, h->n, e);
}

/* ---- the calendar ---- */

static inline int64_t bucket_of(rs_time t) { return t >> EVQ_BUCKET_BITS; }

static void ring_append(struct evq *q, int64_t b, struct evq_event e)
{
    struct evq_bucket *bk = &q->ring[(uint64_t)b & (EVQ_BUCKETS - 1)];
    if (bk->tail == NIL || bk->tail_n == EVQ_CHUNK_EVENTS) {
        uint32_t i = pool_alloc(&q->chunks);
        ((struct evq_chunk *)pool_at(&q->chunks, i))->next = NIL;
        if (bk->tail != NIL)
            ((struct evq_chunk *)pool_at(&q->chunks, bk->tail))->next = i;
        else
            bk->head = i;
        bk->tail = i;
        bk->tail_n = 0;
    }
    ((struct evq_chunk *)pool_at(&q->chunks, bk->tail))->e[bk->tail_n++] = e;
    q->ring_n++;
}

/* Puts an event where its time belongs: the near heap (its bucket is cur
 * or earlier), the calendar, or the far heap. */
static void place(struct evq *q, struct evq_event e)
{
    int64_t b = bucket_of(e.t);
    if (b <= q->cur)
        heap_insert(&q->near, e);
    else if (b - q->cur < (int64_t)EVQ_BUCKETS)
        ring_append(q, b, e);
    else
        heap_insert(&q->far, e);
}

/* Moves bucket b's events (b = cur) into the near heap, dropping the
 * cancelled ones. */
static void migrate(struct evq *q, int64_t b)
{
    struct evq_bucket *bk = &q->ring[(uint64_t)b & (EVQ_BUCKETS - 1)];
    for (uint32_t i = bk->head; i != NIL;) {
        struct evq_chunk *c = pool_at(&q->chunks, i);
        uint32_t n = i == bk->tail ? bk->tail_n : EVQ_CHUNK_EVENTS;
        for (uint32_t k = 0; k < n; k++) {
            if (is_cancelled(q, c->e[k].slot))
                drop_slot(q, c->e[k].slot);
            else
                heap_insert(&q->near, c->e[k]);
        }
        q->ring_n -= n;
        uint32_t next = c->next;
        pool_free(&q->chunks, i);
        i = next;
    }
    bk->head = bk->tail = NIL;
}

/* The near heap and the lanes hold nothing of bucket cur before `c` (their
 * earliest event, or NULL): moves cur on to the next bucket that holds
 * events, bringing them into the near heap, and brings far events that the
 * calendar now reaches into it. Returns false when there is nothing
 * beyond (the calendar and the far heap are empty). */
static bool advance(struct evq *q, const struct evq_event *c)
{
    purge_heap(q, &q->far);
    if (q->ring_n == 0 && q->far.n == 0)
        return false;
    int64_t next = q->cur + 1;
    if (q->ring_n == 0) { /* jump over empty buckets */
        int64_t b = bucket_of(q->far.e[1].t);
        if (c != NULL && bucket_of(c->t) < b)
            b = bucket_of(c->t);
        if (b > next)
            next = b;
    }
    q->cur = next;
    while (q->far.n > 0 && bucket_of(q->far.e[1].t) - q->cur < (int64_t)EVQ_BUCKETS) {
        struct evq_event e = q->far.e[1];
        remove_top(&q->far);
        if (is_cancelled(q, e.slot))
            drop_slot(q, e.slot);
        else
            place(q, e);
    }
    migrate(q, q->cur);
    return true;
}

evq_handle evq_push(struct evq *q, rs_time t, uint32_t type, uint32_t obj, uint32_t aux)
{
    uint64_t seq = q->next_seq++;
    struct evq_event e = {t, seq, take_slot(q, seq), type, obj, aux};
    place(q, e);
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

/* After dropping cancelled events from the near heap's top and the lanes'
 * heads, and moving the calendar on while they hold nothing of the current
 * bucket: the lane whose head is the earliest event, or -1 when the near
 * heap's top is (or the queue is empty). */
static inline int first(struct evq *q)
{
    for (;;) {
        purge_heap(q, &q->near);
        int best = -1;
        const struct evq_event *b = q->near.n ? &q->near.e[1] : NULL;
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
        /* Events in the calendar or the far heap lie in later buckets. */
        if ((b != NULL && bucket_of(b->t) <= q->cur) || !advance(q, b))
            return best;
    }
}

rs_time evq_next_time(struct evq *q)
{
    int l = first(q);
    if (l >= 0)
        return q->nodes[q->lane_head[l]].e.t;
    return q->near.n ? q->near.e[1].t : RS_TIME_NEVER;
}

/* Pops the earliest event if `all` or if it comes before `limit`. */
static inline bool pop_first(struct evq *q, rs_time limit, bool all, struct evq_event *ev)
{
    int l = first(q);
    if (l >= 0) {
        const struct evq_event *e = &q->nodes[q->lane_head[l]].e;
        if (!all && e->t >= limit)
            return false;
        *ev = *e;
        release_slot(q, ev->slot);
        pop_head(q, (unsigned)l);
    } else {
        if (q->near.n == 0 || (!all && q->near.e[1].t >= limit))
            return false;
        *ev = q->near.e[1];
        release_slot(q, ev->slot);
        remove_top(&q->near);
    }
    return true;
}

bool evq_pop_before(struct evq *q, rs_time limit, struct evq_event *ev)
{
    return pop_first(q, limit, false, ev);
}

bool evq_pop(struct evq *q, struct evq_event *ev) { return pop_first(q, 0, true, ev); }

bool evq_cancel(struct evq *q, evq_handle h)
{
    if (h.seq == 0 || h.slot >= q->nslots || q->slot_seq[h.slot] != h.seq ||
        is_cancelled(q, h.slot))
        return false; /* none (sequence numbers start at 1: a free slot's is 0), fired,
                       * cancelled, or the slot names a later event */
    q->cancelled[h.slot >> 6] |= (uint64_t)1 << (h.slot & 63);
    q->ncancelled++;
    return true;
}

/* ---- checks ---- */

/* A held event: its slot names it; *cancelled counts the cancelled ones. */
static bool held_ok(const struct evq *q, const struct evq_event *e, uint32_t *cancelled)
{
    if (e->slot >= q->nslots || q->slot_seq[e->slot] != e->seq)
        return false;
    *cancelled += is_cancelled(q, e->slot);
    return true;
}

/* A heap in order, its buckets within [lo, hi]. */
static bool heap_ok(const struct evq *q, const struct evq_heap *h, int64_t lo, int64_t hi,
                    uint32_t *cancelled)
{
    for (uint32_t i = 1; i <= h->n; i++) {
        int64_t b = bucket_of(h->e[i].t);
        if (!held_ok(q, &h->e[i], cancelled) || b < lo || b > hi)
            return false;
        if (i > 1 && before(&h->e[i], &h->e[i / 2]))
            return false;
    }
    return true;
}

bool evq_check(const struct evq *q)
{
    uint32_t cancelled = 0, pending = 0, in_ring = 0;
    if (!heap_ok(q, &q->near, INT64_MIN, q->cur, &cancelled) ||
        !heap_ok(q, &q->far, q->cur + (int64_t)EVQ_BUCKETS, INT64_MAX, &cancelled))
        return false;
    pending += q->near.n + q->far.n;
    for (int64_t b = q->cur + 1; b < q->cur + (int64_t)EVQ_BUCKETS; b++) {
        const struct evq_bucket *bk = &q->ring[(uint64_t)b & (EVQ_BUCKETS - 1)];
        uint32_t last = NIL;
        for (uint32_t i = bk->head; i != NIL;) {
            const struct evq_chunk *c = pool_at(&q->chunks, i);
            uint32_t n = i == bk->tail ? bk->tail_n : EVQ_CHUNK_EVENTS;
            for (uint32_t k = 0; k < n; k++)
                if (!held_ok(q, &c->e[k], &cancelled) || bucket_of(c->e[k].t) != b)
                    return false;
            in_ring += n;
            last = i;
            i = c->next;
        }
        if (bk->tail != last)
            return false;
    }
    if (q->ring[(uint64_t)q->cur & (EVQ_BUCKETS - 1)].head != NIL || in_ring != q->ring_n)
        return false;
    pending += in_ring;
    for (unsigned l = 0; l < EVQ_LANES; l++) { /* each lane in order, its tail last */
        uint32_t prev = NIL;
        for (uint32_t i = q->lane_head[l]; i != NIL; prev = i, i = q->nodes[i].next) {
            const struct evq_event *e = &q->nodes[i].e;
            if (!held_ok(q, e, &cancelled) || (prev != NIL && before(e, &q->nodes[prev].e)))
                return false;
            pending++;
        }
        if (q->lane_tail[l] != prev || ((q->lane_mask >> l) & 1u) != (prev != NIL))
            return false;
    }
    /* every slot is free or holds exactly one of the events seen */
    return cancelled == q->ncancelled && pending + q->nfree == q->nslots;
}
