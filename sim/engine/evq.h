/*
 * evq — the event queue: events ordered by (time, sequence) in a binary
 * min-heap of near events, a calendar of buckets and a heap of far events,
 * with FIFO lanes beside them.
 *
 * Every pushed event gets a rising sequence number, so events at the same
 * time fire first-in first-out and results never depend on the heaps'
 * internal order. A push returns a handle (sequence, slot); evq_cancel
 * cancels the event if it is still pending and does nothing otherwise (a
 * stale handle is harmless: it names a sequence number that no pending
 * event has). Cancelling marks the event's slot in a bitmap (small enough
 * to stay in the cache) and leaves the event where it is; it is dropped
 * when it reaches a heap's top or a lane's head (or leaves the calendar).
 * So heap entries move
 * without bookkeeping and a cancel touches neither the event nor its
 * neighbours; memory holds pending events plus cancelled ones whose time
 * has not come.
 *
 * Near heap, calendar and far heap: time is cut into buckets of 268 ms.
 * The near heap holds the events of the buckets up to the current one; a
 * calendar of 1,024 buckets (275 s) holds later events unsorted, appended
 * to chunks; the far heap holds what lies beyond. When the near heap (and
 * the lanes) hold nothing of the current bucket, the next bucket's events
 * move into the near heap, and far events that the calendar now reaches
 * move into it. A million clients thinking for a minute each thus cost an
 * append and a push into a small heap that stays in the cache, instead of
 * a pop from a million-entry heap that misses the cache at every level.
 * The order of events is exactly (time, sequence) whatever the split.
 *
 * Lanes: events that a caller schedules at non-decreasing times (each
 * layer's timeouts are now + the same duration) can go to one of a few
 * FIFO lanes, linked lists, instead of a heap: push and pop are O(1). A
 * pop takes the earliest of the heaps' tops and the lanes' heads by (time,
 * sequence), so the order of events is exactly the heap-only order; a push
 * earlier than its lane's last goes to a heap.
 *
 * Storage: arrays (mem.h: huge pages when large) that grow by doubling
 * and never shrink: the heaps of 32-byte entries (1-based, so siblings
 * share a cache line), calendar chunks of 63 events from a pool, lane
 * nodes of 40 bytes, and per slot a sequence number, a free-list entry and
 * a bit (12 bytes and a bit). Steady state does no allocation.
 *
 * Costs: push O(1) into the calendar or a lane, O(log n) into a heap
 * (O(1) on average for random times); pop O(log n) of the near heap, plus
 * each event's one move from the calendar (and from the far heap, O(log
 * n)); cancel O(1), plus the pop that drops the event later; a pop or a
 * peek also looks at the head of each non-empty lane.
 */
#ifndef RS_EVQ_H
#define RS_EVQ_H

#include <stdbool.h>
#include <stdint.h>

#include "pool.h"
#include "units.h"

struct evq_event {
    rs_time t;
    uint64_t seq;
    uint32_t slot; /* internal: the slot naming it */
    uint32_t type; /* the caller's event type */
    uint32_t obj;  /* the caller's object index */
    uint32_t aux;  /* the caller's extra word (e.g. an attempt number) */
};

/* Names a pushed event; EVQ_NONE names none. */
typedef struct {
    uint64_t seq;
    uint32_t slot;
} evq_handle;

#define EVQ_NONE ((evq_handle){0, UINT32_MAX})

#define EVQ_LANES 16

struct evq_lane_node {
    struct evq_event e;
    uint32_t next;
};

/* A binary min-heap, 1-based (e[0] unused). */
struct evq_heap {
    struct evq_event *e;
    uint32_t n, cap;
};

/* The calendar: EVQ_BUCKETS buckets of 2^EVQ_BUCKET_BITS ns (268 ms),
 * 275 s in all. */
#define EVQ_BUCKET_BITS 28
#define EVQ_BUCKETS 1024u
#define EVQ_CHUNK_EVENTS 63u

/* Bucket storage: chunks of events, linked, from a pool; all but a
 * bucket's last chunk are full. */
struct evq_chunk {
    struct evq_event e[EVQ_CHUNK_EVENTS];
    uint32_t next;
};

/* A bucket keeps its last chunk's count itself, so that an append reads
 * nothing from the chunk (which is seldom in the cache). */
struct evq_bucket {
    uint32_t head, tail; /* chunk indices; UINT32_MAX when empty */
    uint32_t tail_n;     /* events in the tail chunk */
};

struct evq {
    struct evq_heap near; /* events of buckets up to cur */
    struct evq_heap far;  /* events beyond the calendar */
    int64_t cur;          /* the bucket (time >> EVQ_BUCKET_BITS) the near heap covers up to */
    struct evq_bucket ring[EVQ_BUCKETS]; /* events of buckets cur + 1 .. cur + EVQ_BUCKETS - 1 */
    uint32_t ring_n;      /* events in the ring */
    struct pool chunks;
    uint64_t next_seq;
    /* slots: one per event in the heaps, ring or lanes (cancelled ones included) */
    uint64_t *slot_seq;  /* slot → the sequence number of its event; 0 when free */
    uint64_t *cancelled; /* bit per slot: cancelled, dropped when it surfaces */
    uint32_t *free_slots;
    uint32_t nfree, nslots, slot_cap;
    uint32_t ncancelled;
    /* lanes: singly linked FIFO lists of nodes, with a free list through next */
    struct evq_lane_node *nodes;
    uint32_t nodes_used, nodes_cap, free_node;
    uint32_t lane_head[EVQ_LANES], lane_tail[EVQ_LANES];
    rs_time lane_last[EVQ_LANES];
    uint32_t lane_mask;  /* bit l: lane l is not empty */
};

void evq_init(struct evq *q);
void evq_fini(struct evq *q);

/* Schedules an event at time t; aborts with a message if memory runs out. */
evq_handle evq_push(struct evq *q, rs_time t, uint32_t type, uint32_t obj, uint32_t aux);

/* Schedules an event in lane `lane` (< EVQ_LANES), meant for events a
 * caller schedules at non-decreasing times; one earlier than the lane's
 * last goes to the heap. The order of events is the same as with evq_push. */
evq_handle evq_push_lane(struct evq *q, unsigned lane, rs_time t, uint32_t type, uint32_t obj,
                         uint32_t aux);

/* Removes the earliest event into *ev; false when the queue is empty. */
bool evq_pop(struct evq *q, struct evq_event *ev);

/* Removes the earliest event into *ev if it comes before `limit`; false
 * (leaving the queue as it is) when none does. One look at the lanes
 * instead of the two of evq_next_time and evq_pop. */
bool evq_pop_before(struct evq *q, rs_time limit, struct evq_event *ev);

/* A hint of the next event: the earliest of the near heap's top and the
 * lanes' heads by time, without dropping cancelled events or looking
 * further (so possibly not the next one); NULL when those are empty. In
 * *after, a hint of the one after it: the next in the same lane, or the
 * earlier of the top's children (NULL when none). For prefetching only.
 * O(lanes in use). */
static inline const struct evq_event *evq_peek_hint(const struct evq *q,
                                                    const struct evq_event **after)
{
    const struct evq_event *a = q->near.n ? &q->near.e[1] : NULL;
    uint32_t node = UINT32_MAX;
    for (uint32_t m = q->lane_mask; m != 0; m &= m - 1) {
        uint32_t h = q->lane_head[__builtin_ctz(m)];
        const struct evq_event *e = &q->nodes[h].e;
        if (a == NULL || e->t < a->t) {
            a = e;
            node = h;
        }
    }
    *after = NULL;
    if (node != UINT32_MAX) {
        if (q->nodes[node].next != UINT32_MAX)
            *after = &q->nodes[q->nodes[node].next].e;
    } else if (q->near.n >= 3) {
        *after = q->near.e[3].t < q->near.e[2].t ? &q->near.e[3] : &q->near.e[2];
    } else if (q->near.n == 2) {
        *after = &q->near.e[2];
    }
    return a;
}

/* Cancels the event h names if it is still pending; returns whether it was. */
bool evq_cancel(struct evq *q, evq_handle h);

/* The time of the earliest pending event, or RS_TIME_NEVER when none.
 * O(lanes in use), after dropping cancelled events from the heap's top. */
rs_time evq_next_time(struct evq *q);

/* Checks the heap order and the position map; O(n). For tests and the
 * self-checking build. */
bool evq_check(const struct evq *q);

#endif
