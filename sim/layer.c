/*
 * layer — one retry loop: attempts, per-attempt timeout, backoff.
 *
 * A call at layer L makes up to `attempts` attempts downstream. An attempt
 * ends with an answer (ok or 503 from below), or with the layer's own
 * timeout, which abandons it: the work below carries on (and is wasted), and
 * its late answer is ignored. After a failed attempt the layer waits the
 * backoff delay and tries again, or, with attempts used up, reports the last
 * error upward as `exhausted`. Every function is O(log pending events).
 *
 * Re-entrancy: sending an attempt downstream can produce its answer at once
 * (a full server queue rejects immediately), which may finish and free the
 * call. So a send is always the last thing a function does with its call,
 * and retries always go through the event queue, even with zero delay.
 */
#include <assert.h>

#include "simctx.h"

static struct call *call_at(const struct sim *s, uint32_t i) { return pool_at(&s->calls, i); }

static bool retriable(enum rs_status st) { return st == ST_TIMEOUT || st == ST_503; }

/* Makes the next attempt of call ci. */
static void attempt(struct sim *s, uint32_t ci)
{
    struct call *c = call_at(s, ci);
    const struct layer_cfg *cfg = &s->sc.layers[c->layer];
    struct request *r = pool_at(&s->requests, c->req);
    c->attempts++;
    c->state = CALL_WAITING;
    r->n[c->layer]++;
    metrics_attempt(&s->m, c->layer);
    c->timer = cfg->timeout == RS_TIME_NEVER
                   ? EVQ_NONE
                   : evq_push(&s->q, units_add(s->now, cfg->timeout), EV_TIMEOUT, ci, c->attempts);
    uint32_t req = c->req, gen = c->gen, att = c->attempts, below = c->layer + 1u;
    if (below == s->sc.nlayers)
        server_arrive(s, req, ci, gen, att);
    else
        layer_call_start(s, below, req, ci, gen, att);
}

void layer_call_start(struct sim *s, uint32_t layer, uint32_t req, uint32_t parent,
                      uint32_t parent_gen, uint32_t parent_attempt)
{
    uint32_t ci = pool_alloc(&s->calls);
    struct call *c = call_at(s, ci);
    struct request *r = pool_at(&s->requests, req);
    r->refs++;
    c->req = req;
    c->parent = parent;
    c->parent_gen = parent_gen;
    c->parent_attempt = parent_attempt;
    c->attempts = 0;
    c->layer = (uint8_t)layer;
    c->last = ST_OK;
    backoff_state_init(&s->sc.layers[layer].bp, &c->bs);
    attempt(s, ci);
}

/* Ends call ci with outcome o and reports upward; frees the call. */
static void finish(struct sim *s, uint32_t ci, enum outcome o)
{
    struct call *c = call_at(s, ci);
    uint32_t req = c->req, parent = c->parent, pgen = c->parent_gen, patt = c->parent_attempt;
    enum rs_status st = (o == OUT_OK) ? ST_OK : (enum rs_status)c->last;
    c->gen++;
    pool_free(&s->calls, ci);
    if (parent == NO_PARENT)
        load_request_done(s, req, o);
    else
        layer_on_response(s, parent, pgen, patt, st);
    load_request_unref(s, req);
}

bool layer_is_waiting(const struct sim *s, uint32_t ci, uint32_t gen, uint32_t att)
{
    const struct call *c = call_at(s, ci);
    return c->gen == gen && c->state == CALL_WAITING && c->attempts == att;
}

/* The current attempt of ci failed with st: retry after backoff, or finish. */
static void failed_attempt(struct sim *s, uint32_t ci, enum rs_status st)
{
    struct call *c = call_at(s, ci);
    const struct layer_cfg *cfg = &s->sc.layers[c->layer];
    c->last = (uint8_t)st;
    if (!retriable(st)) {
        finish(s, ci, OUT_FAILED);
        return;
    }
    if (c->attempts >= cfg->attempts) {
        finish(s, ci, OUT_EXHAUSTED);
        return;
    }
    rs_time d = cfg->backoff->next_delay(&cfg->bp, &c->bs, c->attempts, s->rng.s[RNG_JITTER]);
    c->state = CALL_BACKOFF;
    c->timer = evq_push(&s->q, units_add(s->now, d), EV_RETRY, ci, c->attempts);
}

void layer_on_response(struct sim *s, uint32_t ci, uint32_t gen, uint32_t att, enum rs_status st)
{
    if (!layer_is_waiting(s, ci, gen, att))
        return; /* late: the attempt was abandoned or the call has ended */
    struct call *c = call_at(s, ci);
    evq_cancel(&s->q, c->timer);
    c->timer = EVQ_NONE;
    if (st == ST_OK)
        finish(s, ci, OUT_OK);
    else
        failed_attempt(s, ci, st);
}

void layer_on_timeout(struct sim *s, uint32_t ci, uint32_t att)
{
    struct call *c = call_at(s, ci);
    assert(c->state == CALL_WAITING && c->attempts == att);
    (void)att;
    c->timer = EVQ_NONE;
    failed_attempt(s, ci, ST_TIMEOUT);
}

void layer_on_retry(struct sim *s, uint32_t ci)
{
    struct call *c = call_at(s, ci);
    assert(c->state == CALL_BACKOFF);
    c->timer = EVQ_NONE;
    attempt(s, ci);
}
