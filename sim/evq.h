/*
 * evq — the event queue: a binary min-heap ordered by (time, sequence).
 *
 * Every pushed event gets a rising sequence number, so events at the same
 * time fire first-in first-out and results never depend on the heap's
 * internal order. A push returns a handle; evq_cancel removes the event in
 * O(log n) if it is still pending and does nothing otherwise (a stale handle
 * is harmless: it names a sequence number that no pending event has).
 *
 * Storage is two arrays that grow by doubling and never shrink: the heap of
 * 32-byte entries and a slot → heap-position map. Steady state does no
 * allocation; memory follows the peak number of pending events.
 *
 * Costs: push O(log n), pop O(log n), cancel O(log n), peek O(1).
 */
#ifndef RS_EVQ_H
#define RS_EVQ_H

#include <stdbool.h>
#include <stdint.h>

#include "units.h"

struct evq_event {
    rs_time t;
    uint64_t seq;
    uint32_t slot; /* internal: index in the position map */
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

struct evq {
    struct evq_event *heap;
    uint32_t n, cap;
    uint32_t *pos;       /* slot → heap index, or UINT32_MAX when free */
    uint32_t *free_slots;
    uint32_t nfree, nslots, slot_cap;
    uint64_t next_seq;
};

void evq_init(struct evq *q);
void evq_fini(struct evq *q);

/* Schedules an event at time t; aborts with a message if memory runs out. */
evq_handle evq_push(struct evq *q, rs_time t, uint32_t type, uint32_t obj, uint32_t aux);

/* Removes the earliest event into *ev; false when the queue is empty. */
bool evq_pop(struct evq *q, struct evq_event *ev);

/* Cancels the event h names if it is still pending; returns whether it was. */
bool evq_cancel(struct evq *q, evq_handle h);

static inline uint32_t evq_size(const struct evq *q) { return q->n; }

/* The time of the earliest pending event, or RS_TIME_NEVER when none. O(1). */
static inline rs_time evq_next_time(const struct evq *q)
{
    return q->n ? q->heap[0].t : RS_TIME_NEVER;
}

/* Checks the heap order and the position map; O(n). For tests and the
 * self-checking build. */
bool evq_check(const struct evq *q);

#endif
