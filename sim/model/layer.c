/*
 * layer — one retry loop: attempts, per-attempt timeout, overall deadline,
 * which classes to retry, Retry-After, backoff.
 *
 * A call at layer L makes up to `attempts` attempts downstream. An attempt
 * ends with an answer from below, or with the layer's own timer: the
 * per-attempt timeout, or the call's deadline if that comes first. A timeout
 * abandons the attempt: the work below carries on (and is wasted), and its
 * late answer is ignored. A failed attempt whose class is in `retry_on` is
 * retried after the backoff delay — or after the answer's Retry-After when
 * the layer honours it (above `retry_after_max` the layer gives up) — unless
 * attempts are used up (`exhausted`) or the retry could not start before
 * the deadline (`deadline`). Other failures end the call `failed` (or
 * `deadline` for the deadline class); a business error ends it `business`.
 * The call reports its last class upward. Every function is O(log pending
 * events).
 *
 * Budgets and breakers: the call's state is the one of its scope (its
 * client, its instance, or shared). Before every attempt the budget may
 * throttle it locally (aws-adaptive, sre) and the breaker may short-circuit
 * it; before every retry the budget (and the brooker breaker) may refuse
 * it. Either ends the call at once: `throttled` or `breaker`. Every result
 * is reported to both.
 *
 * Deadlines: a call's deadline is min(start + the layer's `deadline`, the
 * deadline its parent propagated); with `propagate_deadline` its attempts
 * carry it down to the layers below and to the server.
 *
 * Edges: a layer sits on one edge (client or service → service); below it
 * is the next layer of that edge, or the edge's service. A call of the
 * edge's outermost layer answers its parent directly: the request's root,
 * or the job that called the dependency.
 *
 * Bulkheads: with `concurrency = N` each attempt needs one of its
 * instance's N slots from when it is made until its answer or timeout. An
 * attempt that finds none waits in the instance's FIFO (at most
 * `concurrency_queue`, for at most `concurrency_wait` and the deadline) or
 * fails at once with class `bulkhead`. A freed slot goes straight to the
 * first waiter, whose attempt is sent through a zero-delay event.
 *
 * Re-entrancy: sending an attempt downstream can produce its answer at once
 * (a full queue rejects immediately), which may end and free the call. So a
 * send is always the last thing a function does with its call, and retries
 * always go through the event queue, even with zero delay.
 */
#include <assert.h>
#include <gsl/gsl_rng.h>

#include "simctx.h"

static struct call *call_at(const struct sim *s, uint32_t i) { return pool_at(&s->calls, i); }

/* The budget and breaker states of call c (NULL when the layer has none). */
static uint32_t scope_index(const struct sim *s, const struct call *c, enum scope sc)
{
    if (sc == SCOPE_SHARED)
        return 0;
    (void)s;
    return sc == SCOPE_CLIENT ? c->client : c->instance;
}

static struct budget_state *budget_of(struct sim *s, const struct call *c)
{
    struct layer_rt *rt = &s->lrt[c->layer];
    if (rt->budgets == NULL)
        return NULL;
    return &rt->budgets[scope_index(s, c, s->sc.layers[c->layer].budget_scope)];
}

static struct breaker_state *breaker_of(struct sim *s, const struct call *c, uint8_t **ring)
{
    struct layer_rt *rt = &s->lrt[c->layer];
    if (rt->breakers == NULL)
        return NULL;
    uint32_t i = scope_index(s, c, s->sc.layers[c->layer].breaker_scope);
    const struct layer_cfg *cfg = &s->sc.layers[c->layer];
    *ring = rt->rings ? rt->rings + (size_t)i * cfg->breaker_p.window_calls : NULL;
    return &rt->breakers[i];
}

/* Starts loading a layer's budget state bi and breaker state ki into the
 * cache (UINT32_MAX: not that one). With a state per client they are
 * spread over megabytes and miss the cache; asking for both at once
 * overlaps the misses. A breaker state is one cache line; a budget state
 * may straddle two. */
static inline void prefetch_state_lines(const struct layer_rt *rt, uint32_t bi, uint32_t ki)
{
    if (rt->budgets != NULL && bi != UINT32_MAX) {
        const struct budget_state *b = &rt->budgets[bi];
        __builtin_prefetch(b);
        __builtin_prefetch((const char *)(b + 1) - 1);
    }
    if (rt->breakers != NULL && ki != UINT32_MAX)
        __builtin_prefetch(&rt->breakers[ki]);
}

/* Call c's states, in runs large enough to prefetch at all (sim.c). */
static inline void prefetch_states(const struct sim *s, const struct call *c)
{
    if (!s->prefetch)
        return;
    const struct layer_cfg *cfg = &s->sc.layers[c->layer];
    prefetch_state_lines(&s->lrt[c->layer], scope_index(s, c, cfg->budget_scope),
                         scope_index(s, c, cfg->breaker_scope));
}

void layer_prefetch_call(const struct sim *s, uint32_t call) { prefetch_states(s, call_at(s, call)); }

/* The index of a client's state of the given scope, or UINT32_MAX when it
 * is not known before the call starts (an instance drawn at random) or not
 * worth prefetching (shared, or one instance: always in the cache). */
static uint32_t client_state_index(const struct layer_cfg *cfg, enum scope sc, uint32_t client)
{
    if (sc == SCOPE_CLIENT || (sc == SCOPE_INSTANCE && cfg->instances == 0))
        return client;
    return UINT32_MAX;
}

void layer_prefetch_client(const struct sim *s, uint32_t layer, uint32_t client)
{
    const struct layer_cfg *cfg = &s->sc.layers[layer];
    prefetch_state_lines(&s->lrt[layer], client_state_index(cfg, cfg->budget_scope, client),
                         client_state_index(cfg, cfg->breaker_scope, client));
}

/* Keeps the layer's count of breakers not closed in step with a state. */
static void track_open(struct sim *s, uint32_t layer, bool was_open, bool is_open)
{
    s->lrt[layer].n_open += (uint32_t)is_open - (uint32_t)was_open;
}

static void record_result(struct sim *s, uint32_t ci, enum errclass cls);
static void failed_attempt(struct sim *s, uint32_t ci, enum errclass cls, rs_time retry_after);

/* Ends call ci with outcome o and reports its last class upward; frees the call. */
static void finish(struct sim *s, uint32_t ci, enum outcome o)
{
    struct call *c = call_at(s, ci);
    uint32_t req = c->req, layer = c->layer;
    struct reply_to parent = c->parent;
    enum errclass cls = (enum errclass)c->last;
    struct budget_state *bs = budget_of(s, c);
    if (bs != NULL)
        budget_call_end(s->sc.layers[layer].budget, bs, &c->bc);
    service_unhang(s, ci);
    c->gen++;
    evq_cancel(&s->q, c->timer);
    pool_free(&s->calls, ci);
    if (parent.call == NO_PARENT)
        load_request_done(s, req, o);
    else if (parent.call & REPLY_JOB)
        service_on_dep_answer(s, parent, cls);
    else
        net_answer_up(s, s->lrt[layer].prev, parent, cls, -1);
    load_request_unref(s, req);
}

/* Sends call ci (c, of a layer configured by cfg) its current attempt
 * down, with its timer. */
static inline void send(struct sim *s, uint32_t ci, struct call *c, const struct layer_cfg *cfg)
{
    c->state = CALL_WAITING;
    rs_time at = units_min(units_add(s->now, cfg->timeout), c->deadline_at);
    /* a layer's timeouts are now + the same duration: a FIFO lane */
    c->attempt_start = s->now; /* after any wait for a bulkhead slot */
    if (at == RS_TIME_NEVER)
        c->timer = EVQ_NONE;
    else if (c->layer < LANE_LAYERS)
        c->timer = evq_push_lane(&s->q, c->layer, at, EV_TIMEOUT, ci, c->attempts);
    else
        c->timer = evq_push(&s->q, at, EV_TIMEOUT, ci, c->attempts);
    struct reply_to me = {ci, c->gen, c->attempts};
    net_send_down(s, c->layer, c->req, me, cfg->propagate_deadline ? c->deadline_at : RS_TIME_NEVER);
}

void layer_bulkhead_grant(struct sim *s, uint32_t ci, uint32_t att)
{
    struct call *c = call_at(s, ci);
    assert(c->state == CALL_POOL_GRANTED && c->attempts == att);
    (void)att;
    send(s, ci, c, &s->sc.layers[c->layer]);
}

/* Makes the next attempt of call ci, unless its deadline has passed. */
static void attempt(struct sim *s, uint32_t ci)
{
    struct call *c = call_at(s, ci);
    const struct layer_cfg *cfg = &s->sc.layers[c->layer];
    if (s->now >= c->deadline_at) {
        c->last = CLS_DEADLINE;
        finish(s, ci, OUT_DEADLINE);
        return;
    }
    struct budget_state *bs = budget_of(s, c);
    if (bs != NULL && !budget_admit(cfg->budget, &cfg->budget_p, bs, s->now, s->rng.s[RNG_JITTER])) {
        s->lrt[c->layer].refused++;
        metrics_layer_cur(&s->m, c->layer)->refused++;
        c->last = CLS_THROTTLED;
        finish(s, ci, OUT_THROTTLED);
        return;
    }
    uint8_t *ring;
    struct breaker_state *br = breaker_of(s, c, &ring);
    if (br != NULL) {
        bool was = breaker_is_open(br), half;
        bool ok = breaker_admit(cfg->breaker, &cfg->breaker_p, br, s->now, &c->breaker_gen, &half);
        track_open(s, c->layer, was, breaker_is_open(br));
        if (!ok) {
            s->lrt[c->layer].short_circuited++;
            metrics_layer_cur(&s->m, c->layer)->short_circuited++;
            c->last = CLS_BREAKER;
            finish(s, ci, OUT_BREAKER);
            return;
        }
    }
    struct request *r = pool_at(&s->requests, c->req);
    c->attempts++;
    c->state = CALL_WAITING;
    c->admitted = br != NULL;
    c->attempt_start = s->now;
    r->n[c->layer]++;
    s->lrt[c->layer].attempts++;
    metrics_attempt(&s->m, c->layer);
    if (cfg->concurrency > 0) {
        enum bulkhead_verdict v = bulkhead_take(s, ci);
        if (v == BULKHEAD_FULL) {
            record_result(s, ci, CLS_BULKHEAD);
            failed_attempt(s, ci, CLS_BULKHEAD, -1);
        }
        if (v != BULKHEAD_TAKEN)
            return;
    }
    send(s, ci, c, cfg);
}

void layer_call_start(struct sim *s, uint32_t layer, uint32_t req, struct reply_to parent,
                      rs_time deadline_at)
{
    const struct layer_cfg *cfg = &s->sc.layers[layer];
    uint32_t ci = pool_alloc(&s->calls);
    struct call *c = call_at(s, ci);
    struct request *r = pool_at(&s->requests, req);
    r->refs++;
    c->req = req;
    c->parent = parent;
    c->attempts = 0;
    c->layer = (uint8_t)layer;
    c->last = CLS_OK;
    c->timer = EVQ_NONE;
    c->deadline_at = units_min(units_add(s->now, cfg->deadline), deadline_at);
    c->bc = (struct budget_call){false, 0.0};
    c->admitted = false;
    c->slot = false;
    c->hung_at = 0;
    c->client = r->client;
    if (cfg->instances == 0)
        c->instance = r->client;
    else if (cfg->instances == 1)
        c->instance = 0;
    else
        c->instance = (uint32_t)gsl_rng_uniform_int(s->rng.s[RNG_BALANCER], cfg->instances);
    prefetch_states(s, c);
    backoff_state_init(&cfg->bp, &c->bs);
    struct budget_state *bs = budget_of(s, c);
    if (bs != NULL)
        budget_call_start(cfg->budget, &cfg->budget_p, bs, s->now);
    attempt(s, ci);
}

bool layer_is_waiting(const struct sim *s, struct reply_to to)
{
    const struct call *c = call_at(s, to.call);
    return c->gen == to.gen && c->state == CALL_WAITING && c->attempts == to.attempt;
}

/* Reports the current attempt's result to the call's budget and breaker. */
static void record_result(struct sim *s, uint32_t ci, enum errclass cls)
{
    struct call *c = call_at(s, ci);
    const struct layer_cfg *cfg = &s->sc.layers[c->layer];
    s->lrt[c->layer].results++;
    if (cls == CLS_TIMEOUT)
        s->lrt[c->layer].timeouts++;
    struct budget_state *bs = budget_of(s, c);
    if (bs != NULL)
        budget_result(cfg->budget, &cfg->budget_p, bs, &c->bc, s->now, cls, c->attempts > 1,
                      errclass_in(cfg->retry_on, cls));
    uint8_t *ring;
    struct breaker_state *br = breaker_of(s, c, &ring);
    if (br != NULL && c->admitted) {
        bool was = breaker_is_open(br);
        bool failed = cls != CLS_OK && cls != CLS_BUSINESS;
        if (breaker_result(cfg->breaker, &cfg->breaker_p, br, ring, s->now, c->breaker_gen, failed,
                           s->now - c->attempt_start)) {
            s->lrt[c->layer].transitions++;
            metrics_layer_cur(&s->m, c->layer)->transitions++;
        }
        track_open(s, c->layer, was, breaker_is_open(br));
        c->admitted = false;
    }
}

/* The current attempt of ci failed with cls: retry after a delay, or end. */
static void failed_attempt(struct sim *s, uint32_t ci, enum errclass cls, rs_time retry_after)
{
    struct call *c = call_at(s, ci);
    const struct layer_cfg *cfg = &s->sc.layers[c->layer];
    c->last = (uint8_t)cls;
    s->m.errors[cls]++;
    metrics_cur(&s->m)->errors[cls]++;
    if (!errclass_in(cfg->retry_on, cls)) {
        finish(s, ci, cls == CLS_DEADLINE ? OUT_DEADLINE : OUT_FAILED);
        return;
    }
    if (c->attempts >= cfg->attempts) {
        finish(s, ci, OUT_EXHAUSTED);
        return;
    }
    uint8_t *ring;
    struct breaker_state *br = breaker_of(s, c, &ring);
    if (br != NULL && !breaker_allow_retry(cfg->breaker, &cfg->breaker_p, br)) {
        s->lrt[c->layer].short_circuited++;
        metrics_layer_cur(&s->m, c->layer)->short_circuited++;
        finish(s, ci, OUT_BREAKER); /* the last error stands */
        return;
    }
    struct budget_state *bs = budget_of(s, c);
    if (bs != NULL && !budget_allow_retry(cfg->budget, &cfg->budget_p, bs, &c->bc, s->now, cls)) {
        s->lrt[c->layer].refused++;
        metrics_layer_cur(&s->m, c->layer)->refused++;
        finish(s, ci, OUT_THROTTLED); /* the last error stands */
        return;
    }
    rs_time d;
    if (retry_after >= 0 && cfg->retry_after == RA_HONOR) {
        if (retry_after > cfg->retry_after_max) {
            finish(s, ci, OUT_FAILED); /* longer than the client will wait: give up */
            return;
        }
        d = retry_after; /* replaces the backoff */
        s->m.retry_after_waits++;
    } else {
        d = cfg->backoff->next_delay(&cfg->bp, &c->bs, c->attempts, cls, s->rng.s[RNG_JITTER]);
    }
    rs_time at = units_add(s->now, d);
    if (at >= c->deadline_at) {
        c->last = CLS_DEADLINE; /* the retry could not start in time */
        finish(s, ci, OUT_DEADLINE);
        return;
    }
    c->state = CALL_BACKOFF;
    s->lrt[c->layer].retries++;
    /* constant delays keep a lane in order; others fall back to the heap */
    c->timer = c->layer < LANE_LAYERS
                   ? evq_push_lane(&s->q, LANE_LAYERS + c->layer, at, EV_RETRY, ci, c->attempts)
                   : evq_push(&s->q, at, EV_RETRY, ci, c->attempts);
}

void layer_on_answer(struct sim *s, struct reply_to to, enum errclass cls, rs_time retry_after)
{
    if (!layer_is_waiting(s, to))
        return; /* late: the attempt was abandoned or the call has ended */
    struct call *c = call_at(s, to.call);
    prefetch_states(s, c);
    evq_cancel(&s->q, c->timer);
    c->timer = EVQ_NONE;
    if (c->slot)
        bulkhead_release(s, to.call);
    record_result(s, to.call, cls);
    if (cls == CLS_OK || cls == CLS_BUSINESS) {
        c->last = (uint8_t)cls;
        finish(s, to.call, cls == CLS_OK ? OUT_OK : OUT_BUSINESS);
    } else {
        failed_attempt(s, to.call, cls, retry_after);
    }
}

void layer_on_timeout(struct sim *s, uint32_t ci, uint32_t att)
{
    struct call *c = call_at(s, ci);
    assert((c->state == CALL_WAITING || c->state == CALL_POOL_WAIT) && c->attempts == att);
    (void)att;
    c->timer = EVQ_NONE;
    enum errclass cls = s->now >= c->deadline_at ? CLS_DEADLINE : CLS_TIMEOUT;
    if (c->state == CALL_POOL_WAIT) {
        bulkhead_leave_queue(s, ci);
        if (cls == CLS_TIMEOUT) {
            cls = CLS_BULKHEAD; /* waited concurrency_wait for a slot */
            s->lrt[c->layer].bulkheaded++;
        }
    } else {
        if (c->slot)
            bulkhead_release(s, ci);
        service_unhang(s, ci);
    }
    record_result(s, ci, cls);
    failed_attempt(s, ci, cls, -1);
}

void layer_on_retry(struct sim *s, uint32_t ci)
{
    struct call *c = call_at(s, ci);
    assert(c->state == CALL_BACKOFF);
    c->timer = EVQ_NONE;
    attempt(s, ci);
}
