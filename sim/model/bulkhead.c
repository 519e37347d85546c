/*
 * bulkhead — a layer's cap on attempts in flight (`concurrency`): a
 * connection pool, or a bulkhead. Each instance of the layer has
 * `concurrency` slots; an attempt holds one from when it is made until its
 * answer or timeout. An attempt that finds none waits in the instance's
 * FIFO (at most `concurrency_queue` of them; for at most
 * `concurrency_wait`, and never past the call's deadline: the timer is an
 * EV_TIMEOUT that layer.c turns into class `bulkhead` or `deadline`), or is
 * refused at once (the layer fails it with class `bulkhead`). A freed slot
 * goes straight to the first waiter, whose attempt is sent through a
 * zero-delay EV_POOL_GRANT event, so that no answer re-enters the layer
 * that freed it. The wait list is doubly linked through the calls: take,
 * leave and release are O(1) plus an event push; memory is four 32-bit
 * words per instance.
 */
#include "layer.h"
#include "simctx.h"

#include <assert.h>
#include <stdio.h>

#include "mem.h"

static struct call *call_at(const struct sim *s, uint32_t i) { return pool_at(&s->calls, i); }

int bulkhead_init(struct sim *s, char *err, size_t errsz)
{
    for (unsigned i = 0; i < s->sc.nlayers; i++) {
        struct layer_rt *rt = &s->layers.lrt[i];
        if (s->sc.layers[i].concurrency == 0)
            continue;
        size_t n = rt->ninstances;
        rt->slots_used = mem_alloc(n * sizeof(uint32_t));
        rt->wait_head = mem_alloc(n * sizeof(uint32_t));
        rt->wait_tail = mem_alloc(n * sizeof(uint32_t));
        rt->wait_len = mem_alloc(n * sizeof(uint32_t));
        if (!rt->slots_used || !rt->wait_head || !rt->wait_tail || !rt->wait_len) {
            snprintf(err, errsz, "out of memory for the bulkheads of layer %s",
                     s->sc.layers[i].name);
            return -1;
        }
        for (size_t j = 0; j < n; j++)
            rt->wait_head[j] = rt->wait_tail[j] = NO_PARENT;
    }
    return 0;
}

void bulkhead_fini(struct sim *s)
{
    for (unsigned i = 0; i < s->sc.nlayers; i++) {
        struct layer_rt *rt = &s->layers.lrt[i];
        size_t n = (size_t)rt->ninstances * sizeof(uint32_t);
        mem_free(rt->slots_used, rt->slots_used ? n : 0);
        mem_free(rt->wait_head, rt->wait_head ? n : 0);
        mem_free(rt->wait_tail, rt->wait_tail ? n : 0);
        mem_free(rt->wait_len, rt->wait_len ? n : 0);
    }
}

void bulkhead_leave_queue(struct sim *s, uint32_t ci)
{
    struct call *c = call_at(s, ci);
    struct layer_rt *rt = &s->layers.lrt[c->layer];
    uint32_t in = c->instance;
    if (c->wait_prev != NO_PARENT)
        call_at(s, c->wait_prev)->wait_next = c->wait_next;
    else
        rt->wait_head[in] = c->wait_next;
    if (c->wait_next != NO_PARENT)
        call_at(s, c->wait_next)->wait_prev = c->wait_prev;
    else
        rt->wait_tail[in] = c->wait_prev;
    rt->wait_len[in]--;
    c->hung_at = 0; /* the union's other member: no attempt is out yet */
}

/* Appends call ci to its instance's wait list, with its wait timer. */
static void enqueue(struct sim *s, uint32_t ci)
{
    struct call *c = call_at(s, ci);
    const struct layer_cfg *cfg = &s->sc.layers[c->layer];
    struct layer_rt *rt = &s->layers.lrt[c->layer];
    uint32_t in = c->instance;
    c->state = CALL_POOL_WAIT;
    c->wait_next = NO_PARENT;
    c->wait_prev = rt->wait_tail[in];
    if (rt->wait_tail[in] != NO_PARENT)
        call_at(s, rt->wait_tail[in])->wait_next = ci;
    else
        rt->wait_head[in] = ci;
    rt->wait_tail[in] = ci;
    rt->wait_len[in]++;
    rs_time at = units_min(units_add(s->now, cfg->concurrency_wait), c->deadline_at);
    c->timer = at == RS_TIME_NEVER ? EVQ_NONE : evq_push(&s->q, at, EV_TIMEOUT, ci, c->attempts);
}

enum bulkhead_verdict bulkhead_take(struct sim *s, uint32_t ci)
{
    struct call *c = call_at(s, ci);
    const struct layer_cfg *cfg = &s->sc.layers[c->layer];
    struct layer_rt *rt = &s->layers.lrt[c->layer];
    uint32_t in = c->instance;
    if (rt->slots_used[in] < cfg->concurrency) {
        rt->slots_used[in]++;
        c->slot = true;
        return BULKHEAD_TAKEN;
    }
    if (cfg->concurrency_queue >= 0 && rt->wait_len[in] >= (uint64_t)cfg->concurrency_queue) {
        layer_count(s, c->layer, LC_BULKHEADED);
        return BULKHEAD_FULL;
    }
    enqueue(s, ci);
    return BULKHEAD_QUEUED;
}

void bulkhead_release(struct sim *s, uint32_t ci)
{
    struct call *c = call_at(s, ci);
    assert(c->slot);
    c->slot = false;
    struct layer_rt *rt = &s->layers.lrt[c->layer];
    uint32_t in = c->instance, wi = rt->wait_head[in];
    if (wi == NO_PARENT) {
        rt->slots_used[in]--;
        return;
    }
    bulkhead_leave_queue(s, wi);
    struct call *w = call_at(s, wi);
    w->slot = true;
    w->state = CALL_POOL_GRANTED;
    evq_cancel(&s->q, w->timer);
    w->timer = EVQ_NONE;
    evq_push(&s->q, s->now, EV_POOL_GRANT, wi, w->attempts);
}
