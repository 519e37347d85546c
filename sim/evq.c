/*
 * evq — binary min-heap of events with cancellation. See evq.h.
 */
#include "evq.h"

#include <stdio.h>
#include <stdlib.h>

#define NOPOS UINT32_MAX

static void *grow(void *p, uint32_t *cap, size_t elem)
{
    uint32_t ncap = *cap ? *cap * 2 : 256;
    if (ncap < *cap) {
        fprintf(stderr, "retrystorm: event queue exceeds %u entries\n", *cap);
        abort();
    }
    void *np = realloc(p, (size_t)ncap * elem);
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

static inline void place(struct evq *q, uint32_t i, const struct evq_event *e)
{
    q->heap[i] = *e;
    q->pos[e->slot] = i;
}

static void sift_up(struct evq *q, uint32_t i, struct evq_event e)
{
    while (i > 0) {
        uint32_t parent = (i - 1) / 2;
        if (!before(&e, &q->heap[parent]))
            break;
        place(q, i, &q->heap[parent]);
        i = parent;
    }
    place(q, i, &e);
}

static void sift_down(struct evq *q, uint32_t i, struct evq_event e)
{
    for (;;) {
        uint32_t c = 2 * i + 1;
        if (c >= q->n)
            break;
        if (c + 1 < q->n && before(&q->heap[c + 1], &q->heap[c]))
            c++;
        if (!before(&q->heap[c], &e))
            break;
        place(q, i, &q->heap[c]);
        i = c;
    }
    place(q, i, &e);
}

void evq_init(struct evq *q)
{
    *q = (struct evq){0};
    q->next_seq = 1;
}

void evq_fini(struct evq *q)
{
    free(q->heap);
    free(q->pos);
    free(q->free_slots);
    *q = (struct evq){0};
}

static uint32_t take_slot(struct evq *q)
{
    if (q->nfree > 0)
        return q->free_slots[--q->nfree];
    if (q->nslots == q->slot_cap) {
        uint32_t c2 = q->slot_cap;
        q->pos = grow(q->pos, &q->slot_cap, sizeof *q->pos);
        q->free_slots = grow(q->free_slots, &c2, sizeof *q->free_slots);
    }
    return q->nslots++;
}

evq_handle evq_push(struct evq *q, rs_time t, uint32_t type, uint32_t obj, uint32_t aux)
{
    if (q->n == q->cap)
        q->heap = grow(q->heap, &q->cap, sizeof *q->heap);
    struct evq_event e = {t, q->next_seq++, take_slot(q), type, obj, aux};
    q->n++;
    sift_up(q, q->n - 1, e);
    return (evq_handle){e.seq, e.slot};
}

static void remove_at(struct evq *q, uint32_t i)
{
    uint32_t slot = q->heap[i].slot;
    q->pos[slot] = NOPOS;
    q->free_slots[q->nfree++] = slot;
    q->n--;
    if (i == q->n)
        return;
    struct evq_event last = q->heap[q->n];
    if (i > 0 && before(&last, &q->heap[(i - 1) / 2]))
        sift_up(q, i, last);
    else
        sift_down(q, i, last);
}

bool evq_pop(struct evq *q, struct evq_event *ev)
{
    if (q->n == 0)
        return false;
    *ev = q->heap[0];
    remove_at(q, 0);
    return true;
}

bool evq_cancel(struct evq *q, evq_handle h)
{
    if (h.slot >= q->nslots)
        return false;
    uint32_t i = q->pos[h.slot];
    if (i == NOPOS || q->heap[i].seq != h.seq)
        return false;
    remove_at(q, i);
    return true;
}

bool evq_check(const struct evq *q)
{
    for (uint32_t i = 0; i < q->n; i++) {
        if (q->pos[q->heap[i].slot] != i)
            return false;
        if (i > 0 && before(&q->heap[i], &q->heap[(i - 1) / 2]))
            return false;
    }
    return true;
}
