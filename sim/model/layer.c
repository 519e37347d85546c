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
 * the layer honours it (one above `retry_after_max` is clamped to it, or
 * discarded, or ends the call, as `retry_after_over_max` says) — unless
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
 * Hedging (hedge = fixed | percentile, or a preset): while copies are out
 * and attempts remain, the next copy goes `hedge_delay` after the last one
 * (percentile: after the P-th percentile of the layer's recent copy
 * latencies, hedging.c), or at once when a copy fails with a class in
 * `hedge_on`. The first ok or business answer wins and the other copies
 * are abandoned. A failure in retry_on waits for the other copies; when it
 * is the last one out the loop retries it as above; a failure in neither
 * ends the call. A hedge is admitted as a retry is (budget_allow_retry and
 * the breaker), but a refusal only stops the timer's hedges while copies
 * are out (until a retry after a backoff).
 * A hedged layer has no per-attempt timeout: its timer is the next hedge
 * or the deadline. Each copy has its own record (struct copy).
 *
 * Cancellation (cancel = on-abandon): an attempt the layer abandons — its
 * timeout, a hedge that lost, the call ending with copies out, the call
 * cancelled from above — is cancelled below: net.c carries the
 * cancellation down the hop, and it reaches what the attempt became (a
 * call here, which ends without answering; a job, service.c, which also
 * cancels its own calls through cancelling layers when it ends early). A
 * copy closed without its own answer is reported to the breaker as not
 * failed (Polly v8: a cancellation is not a handled outcome) and not to the
 * budget (gRPC A6: cancelled hedges are not results); the copies out at the
 * deadline fail with class deadline.
 *
 * Re-entrancy: sending an attempt downstream can produce its answer at once
 * (a full queue rejects immediately), which may end and free the call. So a
 * send is always the last thing a function does with its call, and retries
 * always go through the event queue, even with zero delay.
 */
#include <assert.h>
#include <gsl/gsl_rng.h>
#include <stdio.h>

#include "layer.h"
#include "mem.h"
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
    struct layer_rt *rt = &s->layers.lrt[c->layer];
    if (rt->budgets == NULL)
        return NULL;
    return &rt->budgets[scope_index(s, c, s->sc.layers[c->layer].budget_scope)];
}

static struct breaker_state *breaker_of(struct sim *s, const struct call *c, uint8_t **ring)
{
    struct layer_rt *rt = &s->layers.lrt[c->layer];
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
    prefetch_state_lines(&s->layers.lrt[c->layer], scope_index(s, c, cfg->budget_scope),
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
    prefetch_state_lines(&s->layers.lrt[layer], client_state_index(cfg, cfg->budget_scope, client),
                         client_state_index(cfg, cfg->breaker_scope, client));
}

/* Keeps the layer's count of breakers not closed in step with a state. */
static void track_open(struct sim *s, uint32_t layer, bool was_open, bool is_open)
{
    s->layers.lrt[layer].n_open += (uint32_t)is_open - (uint32_t)was_open;
}

static bool is_hedged(const struct layer_cfg *cfg) { return cfg->hedge_mode != HEDGE_NONE; }

static struct hedge_rec *rec_of(const struct sim *s, const struct call *c)
{
    return pool_at(&s->hedges, c->hx);
}

static struct copy *copy_of(const struct sim *s, const struct call *c, uint32_t att)
{
    return &rec_of(s, c)->copy[att - 1];
}

/* One attempt's bookkeeping for the breaker: the plain call's fields, or a copy's. */
struct att_ref {
    bool *admitted;
    uint32_t breaker_gen;
    rs_time start;
    uint32_t number;
    struct budget_call *bc;
};

static struct att_ref att_of(const struct sim *s, struct call *c, uint32_t att)
{
    if (!is_hedged(&s->sc.layers[c->layer]))
        return (struct att_ref){&c->admitted, c->breaker_gen, c->attempt_start, c->attempts, &c->bc};
    struct copy *cp = copy_of(s, c, att);
    return (struct att_ref){&cp->admitted, cp->breaker_gen, cp->start, att, &cp->bc};
}

static void record_result(struct sim *s, uint32_t ci, struct att_ref a, enum errclass cls);
static void hedged_expire(struct sim *s, uint32_t ci);
static void failed_attempt(struct sim *s, uint32_t ci, enum errclass cls, rs_time retry_after);

/* Reports to the breaker an attempt closed without its own answer (a loser,
 * or abandoned by a call that ended or was cancelled): not a failure. */
static void record_closed(struct sim *s, struct call *c, struct att_ref a)
{
    uint8_t *ring;
    const struct layer_cfg *cfg = &s->sc.layers[c->layer];
    struct budget_state *bs = budget_of(s, c);
    if (bs != NULL)
        budget_attempt_end(cfg->budget, bs, a.bc);
    struct breaker_state *br = breaker_of(s, c, &ring);
    if (br == NULL || !*a.admitted)
        return;
    bool was = breaker_is_open(br);
    if (breaker_result(cfg->breaker, &cfg->breaker_p, br, ring, s->now, a.breaker_gen, false,
                       s->now - a.start)) {
        layer_count(s, c->layer, LC_TRANSITIONS);
        metrics_layer_cur(&s->m, c->layer)->transitions++;
    }
    track_open(s, c->layer, was, breaker_is_open(br));
    *a.admitted = false;
}

/* Cancels below what an abandoned attempt became, when the layer cancels. */
static void cancel_child(struct sim *s, uint32_t layer, uint32_t *child, uint32_t gen)
{
    if (s->sc.layers[layer].cancel == CANCEL_ON_ABANDON && *child != NO_CHILD)
        net_cancel_down(s, layer, *child, gen);
    *child = NO_CHILD;
}

/* Closes copy att of hedged call c without its answer. */
static void close_copy(struct sim *s, struct call *c, uint32_t att)
{
    struct copy *cp = copy_of(s, c, att);
    if (!cp->open)
        return;
    cp->open = false;
    rec_of(s, c)->nopen--;
    layer_count(s, c->layer, LC_ABANDONED);
    service_unhang(s, &cp->hung_at);
    record_closed(s, c, att_of(s, c, att));
    cancel_child(s, c->layer, &cp->child, cp->child_gen);
}

/* Abandons whatever attempt call ci still has out: every open copy, or a
 * plain call's attempt in flight or waiting for a bulkhead slot. */
static void abandon_open(struct sim *s, uint32_t ci)
{
    struct call *c = call_at(s, ci);
    if (is_hedged(&s->sc.layers[c->layer])) {
        for (uint32_t k = 1; k <= c->attempts; k++)
            close_copy(s, c, k);
        return;
    }
    if (c->state == CALL_POOL_WAIT) {
        bulkhead_leave_queue(s, ci);
        layer_count(s, c->layer, LC_ABANDONED);
        record_closed(s, c, att_of(s, c, c->attempts));
    } else if (c->state == CALL_WAITING) {
        layer_count(s, c->layer, LC_ABANDONED);
        if (c->slot)
            bulkhead_release(s, ci);
        service_unhang(s, &c->hung_at);
        record_closed(s, c, att_of(s, c, c->attempts));
        cancel_child(s, c->layer, &c->child, c->child_gen);
    }
}

/* Frees call ci after its outcome (or its cancellation): ends its budget
 * call, cancels its timer. What it still has out was abandoned before. */
static inline void retire(struct sim *s, uint32_t ci)
{
    struct call *c = call_at(s, ci);
    struct budget_state *bs = budget_of(s, c);
    if (bs != NULL)
        budget_call_end(s->sc.layers[c->layer].budget, bs, &c->bc);
    if (is_hedged(&s->sc.layers[c->layer]))
        pool_free(&s->hedges, c->hx);
    c->gen++;
    evq_cancel(&s->q, c->timer);
    pool_free(&s->calls, ci);
}

/* The copies of hedged call c still out when another won: their time so
 * far goes into the percentile window, as Finagle records a backup
 * interrupted as superseded (a lower bound of their latency). */
static void superseded(struct sim *s, const struct call *c)
{
    for (uint32_t k = 1; k <= c->attempts; k++) {
        const struct copy *cp = copy_of(s, c, k);
        if (cp->open)
            hedging_latency(s, c->layer, s->now - cp->start);
    }
}

/* Ends call ci with outcome o and reports its last class upward; frees the call. */
static void finish(struct sim *s, uint32_t ci, enum outcome o)
{
    struct call *c = call_at(s, ci);
    uint32_t req = c->req, layer = c->layer;
    struct reply_to parent = c->parent;
    enum errclass cls = (enum errclass)c->last;
    if (is_hedged(&s->sc.layers[layer])) {
        if (o == OUT_OK || o == OUT_BUSINESS)
            superseded(s, c);
        abandon_open(s, ci); /* the copies still out lost */
    } else
        service_unhang(s, &c->hung_at);
    retire(s, ci);
    if (parent.call == NO_PARENT)
        load_request_done(s, req, o);
    else if (parent.call & REPLY_JOB)
        service_on_dep_answer(s, parent, cls);
    else
        net_answer_up(s, s->layers.lrt[layer].prev, parent, cls, -1);
    load_request_unref(s, req);
}

/* Ends call ci without an answer: it was cancelled from above, or its
 * parent job has ended. */
static void end_cancelled(struct sim *s, uint32_t ci)
{
    uint32_t req = call_at(s, ci)->req;
    metrics_count(&s->m, MC_CANCELLED);
    abandon_open(s, ci);
    retire(s, ci);
    load_request_unref(s, req);
}

/* (Re)arms hedged call c's timer: the next hedge, or the deadline. */
static void hedge_arm(struct sim *s, uint32_t ci, struct call *c, const struct layer_cfg *cfg)
{
    evq_cancel(&s->q, c->timer);
    rs_time at = c->deadline_at;
    if (c->attempts < cfg->attempts && !rec_of(s, c)->stop)
        at = units_min(at, units_add(s->now, hedging_delay(s, c->layer)));
    c->timer = at == RS_TIME_NEVER ? EVQ_NONE : evq_push(&s->q, at, EV_TIMEOUT, ci, c->attempts);
}

/* Sends call ci (c, of a layer configured by cfg) its current attempt
 * down, with its timer. */
static inline void send(struct sim *s, uint32_t ci, struct call *c, const struct layer_cfg *cfg)
{
    c->state = CALL_WAITING;
    c->attempt_start = s->now; /* after any wait for a bulkhead slot */
    c->child = NO_CHILD;
    if (is_hedged(cfg)) {
        hedge_arm(s, ci, c, cfg);
    } else {
        rs_time at = units_min(units_add(s->now, cfg->timeout), c->deadline_at);
        /* a layer's timeouts are now + the same duration: a FIFO lane */
        if (at == RS_TIME_NEVER)
            c->timer = EVQ_NONE;
        else if (c->layer < LANE_LAYERS)
            c->timer = evq_push_lane(&s->q, c->layer, at, EV_TIMEOUT, ci, c->attempts);
        else
            c->timer = evq_push(&s->q, at, EV_TIMEOUT, ci, c->attempts);
    }
    struct reply_to me = {ci, c->gen, c->attempts};
    net_send_down(s, c->layer, c->req, me, cfg->propagate_deadline ? c->deadline_at : RS_TIME_NEVER);
}

void layer_bulkhead_grant(struct sim *s, uint32_t ci, uint32_t att)
{
    struct call *c = call_at(s, ci);
    if (c->state == CALL_CANCELLED) {
        end_cancelled(s, ci);
        return;
    }
    assert(c->state == CALL_POOL_GRANTED && c->attempts == att);
    (void)att;
    send(s, ci, c, &s->sc.layers[c->layer]);
}

/* A refusal by the budget or breaker before an attempt: the call ends
 * (class cls, outcome o), unless it is a hedge with copies still out,
 * which only stops the hedging. */
static void refused(struct sim *s, uint32_t ci, struct call *c, enum errclass cls, enum outcome o)
{
    if (is_hedged(&s->sc.layers[c->layer]) && rec_of(s, c)->nopen > 0) {
        struct budget_state *bs = budget_of(s, c);
        if (bs != NULL) /* what may_repeat charged for the copy not sent */
            budget_attempt_end(s->sc.layers[c->layer].budget, bs, &c->bc);
        rec_of(s, c)->stop = true;
        layer_count(s, c->layer, LC_HEDGES_SUPPRESSED);
        hedge_arm(s, ci, c, &s->sc.layers[c->layer]);
        return;
    }
    c->last = (uint8_t)cls;
    finish(s, ci, o);
}

/* Opens copy c->attempts of a hedged call. */
static void open_copy(struct sim *s, struct call *c, bool admitted, bool hedge)
{
    struct copy *cp = copy_of(s, c, c->attempts);
    *cp = (struct copy){s->now, NO_CHILD, 0, 0, c->breaker_gen, 0, true, admitted, hedge, c->bc};
    c->bc.retry_active = false; /* the copy holds it now (may_repeat charged the call's) */
    rec_of(s, c)->nopen++;
}

/* Makes the next attempt of call ci, unless its deadline has passed. */
static void attempt(struct sim *s, uint32_t ci)
{
    struct call *c = call_at(s, ci);
    const struct layer_cfg *cfg = &s->sc.layers[c->layer];
    if (s->now >= c->deadline_at) {
        if (is_hedged(cfg)) { /* a hedge_on failure at the deadline's instant */
            hedged_expire(s, ci);
            return;
        }
        c->last = CLS_DEADLINE;
        finish(s, ci, OUT_DEADLINE);
        return;
    }
    struct budget_state *bs = budget_of(s, c);
    if (bs != NULL && !budget_admit(cfg->budget, &cfg->budget_p, bs, s->now, s->rng.s[RNG_JITTER])) {
        layer_count(s, c->layer, LC_REFUSED);
        metrics_layer_cur(&s->m, c->layer)->refused++;
        refused(s, ci, c, CLS_THROTTLED, OUT_THROTTLED);
        return;
    }
    uint8_t *ring;
    struct breaker_state *br = breaker_of(s, c, &ring);
    if (br != NULL) {
        bool was = breaker_is_open(br), half;
        bool ok = breaker_admit(cfg->breaker, &cfg->breaker_p, br, s->now, &c->breaker_gen, &half);
        track_open(s, c->layer, was, breaker_is_open(br));
        if (!ok) {
            layer_count(s, c->layer, LC_SHORT_CIRCUITED);
            metrics_layer_cur(&s->m, c->layer)->short_circuited++;
            refused(s, ci, c, CLS_BREAKER, OUT_BREAKER);
            return;
        }
    }
    struct request *r = pool_at(&s->requests, c->req);
    bool hedge = c->attempts > 0 && c->state != CALL_BACKOFF; /* not after a backoff: a hedge */
    c->attempts++;
    c->state = CALL_WAITING;
    c->admitted = br != NULL;
    c->attempt_start = s->now;
    r->n[c->layer]++;
    layer_count(s, c->layer, LC_ATTEMPTS);
    metrics_attempt(&s->m, c->layer);
    if (is_hedged(cfg)) {
        if (!hedge)
            rec_of(s, c)->stop = false; /* a retry after a backoff may hedge again */
        open_copy(s, c, br != NULL, hedge);
        hedging_count(s, c->layer, hedge, c->attempts == 1);
        if (hedge && s->layers.nhedged > 0)
            r->n[s->layers.hedge_slot[c->layer]]++;
    }
    if (cfg->concurrency > 0) {
        enum bulkhead_verdict v = bulkhead_take(s, ci);
        if (v == BULKHEAD_FULL) {
            record_result(s, ci, att_of(s, c, c->attempts), CLS_BULKHEAD);
            failed_attempt(s, ci, CLS_BULKHEAD, -1);
        }
        if (v != BULKHEAD_TAKEN)
            return;
    }
    send(s, ci, c, cfg);
}

struct child layer_call_start(struct sim *s, uint32_t layer, uint32_t req, struct reply_to parent,
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
    c->child = NO_CHILD;
    c->client = r->client;
    if (is_hedged(cfg)) {
        c->hx = pool_alloc(&s->hedges);
        rec_of(s, c)->nopen = 0;
        rec_of(s, c)->stop = false;
    }
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
    struct child me = {ci, c->gen};
    attempt(s, ci);
    return me;
}

bool layer_is_waiting(const struct sim *s, struct reply_to to)
{
    const struct call *c = call_at(s, to.call);
    if (c->gen != to.gen)
        return false;
    if (is_hedged(&s->sc.layers[c->layer]))
        return to.attempt >= 1 && to.attempt <= c->attempts && copy_of(s, c, to.attempt)->open;
    return c->state == CALL_WAITING && c->attempts == to.attempt;
}

void layer_note_child_slow(struct sim *s, uint32_t layer, struct reply_to from, struct child ch,
                           uint32_t rep1)
{
    const struct layer_cfg *cfg = &s->sc.layers[layer];
    if (!layer_is_waiting(s, from))
        return;
    struct call *c = call_at(s, from.call);
    if (!is_hedged(cfg)) {
        c->child = ch.idx;
        c->child_gen = ch.gen;
        return;
    }
    struct copy *cp = copy_of(s, c, from.attempt);
    cp->child = ch.idx;
    cp->child_gen = ch.gen;
    if (rep1 != 0)
        cp->rep = rep1;
}

bool layer_mark_hung(struct sim *s, struct reply_to from, uint32_t rep)
{
    if (!layer_is_waiting(s, from))
        return false;
    struct call *c = call_at(s, from.call);
    if (is_hedged(&s->sc.layers[c->layer]))
        copy_of(s, c, from.attempt)->hung_at = rep + 1;
    else
        c->hung_at = rep + 1;
    return true;
}

uint32_t layer_hedge_replica(struct sim *s, uint32_t svc, struct reply_to from)
{
    uint32_t pick = balancer_pick(s, svc);
    if (!layer_is_waiting(s, from) || s->services.svc[svc].n == 1)
        return pick;
    const struct call *c = call_at(s, from.call);
    if (!copy_of(s, c, from.attempt)->hedge)
        return pick; /* a first copy or a retry: the balancer's choice */
    return hedging_unused_replica(s, rec_of(s, c), c->attempts, svc, pick);
}

void layer_on_cancel(struct sim *s, uint32_t ci, uint32_t gen)
{
    struct call *c = call_at(s, ci);
    if (c->gen != gen || c->state == CALL_CANCELLED)
        return; /* it ended before the cancellation arrived */
    if (c->state == CALL_POOL_GRANTED) { /* its grant is on its way: the grant ends it */
        bulkhead_release(s, ci);
        layer_count(s, c->layer, LC_ABANDONED);
        record_closed(s, c, att_of(s, c, c->attempts));
        c->state = CALL_CANCELLED;
        return;
    }
    end_cancelled(s, ci);
}

/* Reports attempt a's result to the call's budget and breaker. */
static void record_result(struct sim *s, uint32_t ci, struct att_ref a, enum errclass cls)
{
    struct call *c = call_at(s, ci);
    const struct layer_cfg *cfg = &s->sc.layers[c->layer];
    s->layers.lrt[c->layer].results++;
    if (cls == CLS_TIMEOUT)
        layer_count(s, c->layer, LC_TIMEOUTS);
    struct budget_state *bs = budget_of(s, c);
    if (bs != NULL)
        budget_result(cfg->budget, &cfg->budget_p, bs, a.bc, s->now, cls, a.number > 1,
                      errclass_in(cfg->retry_on, cls) ||
                          (is_hedged(cfg) && errclass_in(cfg->hedge_on, cls)));
    uint8_t *ring;
    struct breaker_state *br = breaker_of(s, c, &ring);
    if (br != NULL && *a.admitted) {
        bool was = breaker_is_open(br);
        bool failed = cls != CLS_OK && cls != CLS_BUSINESS;
        if (breaker_result(cfg->breaker, &cfg->breaker_p, br, ring, s->now, a.breaker_gen, failed,
                           s->now - a.start)) {
            layer_count(s, c->layer, LC_TRANSITIONS);
            metrics_layer_cur(&s->m, c->layer)->transitions++;
        }
        track_open(s, c->layer, was, breaker_is_open(br));
        *a.admitted = false;
    }
}

/* Whether the budget and breaker let call c make another attempt after
 * class cls: a retry, or a hedge (cls CLS_OK: no failure). Counts a
 * refusal; *o is the outcome it gives. */
static inline bool may_repeat(struct sim *s, struct call *c, enum errclass cls, enum outcome *o)
{
    const struct layer_cfg *cfg = &s->sc.layers[c->layer];
    uint8_t *ring;
    struct breaker_state *br = breaker_of(s, c, &ring);
    if (br != NULL && !breaker_allow_retry(cfg->breaker, &cfg->breaker_p, br)) {
        layer_count(s, c->layer, LC_SHORT_CIRCUITED);
        metrics_layer_cur(&s->m, c->layer)->short_circuited++;
        *o = OUT_BREAKER; /* the last error stands */
        return false;
    }
    struct budget_state *bs = budget_of(s, c);
    if (bs != NULL && !budget_allow_retry(cfg->budget, &cfg->budget_p, bs, &c->bc, s->now, cls)) {
        layer_count(s, c->layer, LC_REFUSED);
        metrics_layer_cur(&s->m, c->layer)->refused++;
        *o = OUT_THROTTLED; /* the last error stands */
        return false;
    }
    return true;
}

/* An attempt (or copy) of call ci failed with cls: it is the call's last
 * class, and counted by class. */
static inline void count_failure(struct sim *s, uint32_t ci, enum errclass cls)
{
    call_at(s, ci)->last = (uint8_t)cls;
    metrics_count(&s->m, MC_ERRORS + cls);
}

/* The delay before call c's next retry, in *d: the backoff formula's, which
 * is always evaluated (a stateful formula advances, as Polly's does before
 * its DelayGenerator), replaced by a honoured Retry-After. A Retry-After
 * above retry_after_max is clamped to it, or discarded (the formula's delay
 * stands), or, with give-up, makes this return false. *honoured: the delay
 * is a Retry-After. */
static bool retry_after_delay(struct sim *s, struct call *c, const struct layer_cfg *cfg,
                              enum errclass cls, rs_time retry_after, rs_time *d, bool *honoured)
{
    *honoured = false;
    *d = cfg->backoff->next_delay(&cfg->bp, &c->bs, c->attempts, cls, s->rng.s[RNG_JITTER]);
    if (retry_after < 0 || cfg->retry_after != RA_HONOR)
        return true;
    if (retry_after > cfg->retry_after_max) {
        switch (cfg->retry_after_over_max) {
        case RA_OVER_GIVE_UP:
            return false;
        case RA_OVER_BACKOFF:
            return true;
        case RA_OVER_CLAMP:
            retry_after = cfg->retry_after_max;
            break;
        }
    }
    *d = retry_after; /* replaces the backoff */
    *honoured = true;
    return true;
}

/* The current attempt of ci failed with cls: retry after a delay, or end. */
static void failed_attempt(struct sim *s, uint32_t ci, enum errclass cls, rs_time retry_after)
{
    struct call *c = call_at(s, ci);
    const struct layer_cfg *cfg = &s->sc.layers[c->layer];
    count_failure(s, ci, cls);
    if (!errclass_in(cfg->retry_on, cls)) {
        finish(s, ci, cls == CLS_DEADLINE ? OUT_DEADLINE : OUT_FAILED);
        return;
    }
    if (c->attempts >= cfg->attempts) {
        finish(s, ci, OUT_EXHAUSTED);
        return;
    }
    enum outcome o;
    if (!may_repeat(s, c, cls, &o)) {
        finish(s, ci, o);
        return;
    }
    rs_time d;
    bool honoured;
    if (!retry_after_delay(s, c, cfg, cls, retry_after, &d, &honoured)) {
        finish(s, ci, OUT_FAILED); /* longer than the client will wait: give up */
        return;
    }
    rs_time at = units_add(s->now, d);
    if (at >= c->deadline_at) {
        c->last = CLS_DEADLINE; /* the retry could not start in time */
        finish(s, ci, OUT_DEADLINE);
        return;
    }
    if (honoured) /* a retry that waits a Retry-After */
        metrics_count(&s->m, MC_RETRY_AFTER_WAITS);
    c->state = CALL_BACKOFF;
    layer_count(s, c->layer, LC_RETRIES);
    evq_cancel(&s->q, c->timer); /* hedged: the deadline timer */
    /* constant delays keep a lane in order; others fall back to the heap */
    c->timer = c->layer < LANE_LAYERS
                   ? evq_push_lane(&s->q, LANE_LAYERS + c->layer, at, EV_RETRY, ci, c->attempts)
                   : evq_push(&s->q, at, EV_RETRY, ci, c->attempts);
}

/* Sends hedged call ci's next copy now (its timer fired, or a copy failed
 * with a class in hedge_on) when attempts remain and the budget and the
 * breaker allow, and, while other copies are out, the extra-load cap;
 * after a refusal the timer sends no more (hedge_on failures still may). */
static void hedge_next(struct sim *s, uint32_t ci, enum errclass cls, bool by_timer)
{
    struct call *c = call_at(s, ci);
    const struct layer_cfg *cfg = &s->sc.layers[c->layer];
    struct hedge_rec *h = rec_of(s, c);
    enum outcome o = OUT_EXHAUSTED;
    bool go = c->attempts < cfg->attempts && !(by_timer && h->stop);
    if (go && h->nopen > 0 && !hedging_cap_allows(s, c->layer)) {
        go = false; /* (with nothing out, the next copy adds no load beside another) */
    } else if (go) {
        go = may_repeat(s, c, cls, &o);
    }
    if (go) {
        attempt(s, ci);
        return;
    }
    if (c->attempts < cfg->attempts)
        layer_count(s, c->layer, LC_HEDGES_SUPPRESSED);
    if (h->nopen > 0) { /* the copies out may still win */
        h->stop = true;
        hedge_arm(s, ci, c, cfg);
        return;
    }
    finish(s, ci, o);
}

/* An answer cls to copy att of hedged call ci (open: checked). */
static void hedged_answer(struct sim *s, uint32_t ci, uint32_t att, enum errclass cls,
                          rs_time retry_after)
{
    struct call *c = call_at(s, ci);
    const struct layer_cfg *cfg = &s->sc.layers[c->layer];
    struct copy *cp = copy_of(s, c, att);
    cp->open = false;
    struct hedge_rec *h = rec_of(s, c);
    h->nopen--;
    service_unhang(s, &cp->hung_at);
    cp->child = NO_CHILD; /* answered: nothing to cancel */
    record_result(s, ci, att_of(s, c, att), cls);
    if (cls == CLS_OK || cls == CLS_BUSINESS) {
        hedging_latency(s, c->layer, s->now - cp->start);
        if (cp->hedge) {
            layer_count(s, c->layer, LC_HEDGE_WINS);
            metrics_count(&s->m, MC_HEDGE_WINS);
        }
        c->last = (uint8_t)cls;
        finish(s, ci, cls == CLS_OK ? OUT_OK : OUT_BUSINESS);
        return;
    }
    if (!errclass_in(cfg->hedge_on, cls) && h->nopen == 0) {
        failed_attempt(s, ci, cls, retry_after); /* the last copy out: the retry loop's */
        return;
    }
    count_failure(s, ci, cls);
    if (errclass_in(cfg->hedge_on, cls))
        hedge_next(s, ci, cls, false);
    else if (!errclass_in(cfg->retry_on, cls)) /* fatal: ends the call and its other copies */
        finish(s, ci, cls == CLS_DEADLINE ? OUT_DEADLINE : OUT_FAILED);
    /* else the copies out may still win */
}

void layer_on_answer(struct sim *s, struct reply_to to, enum errclass cls, rs_time retry_after)
{
    if (!layer_is_waiting(s, to))
        return; /* late: the attempt was abandoned or the call has ended */
    struct call *c = call_at(s, to.call);
    prefetch_states(s, c);
    if (is_hedged(&s->sc.layers[c->layer])) {
        hedged_answer(s, to.call, to.attempt, cls, retry_after);
        return;
    }
    evq_cancel(&s->q, c->timer);
    c->timer = EVQ_NONE;
    c->child = NO_CHILD;
    if (c->slot)
        bulkhead_release(s, to.call);
    record_result(s, to.call, att_of(s, c, to.attempt), cls);
    if (cls == CLS_OK || cls == CLS_BUSINESS) {
        c->last = (uint8_t)cls;
        finish(s, to.call, cls == CLS_OK ? OUT_OK : OUT_BUSINESS);
    } else {
        failed_attempt(s, to.call, cls, retry_after);
    }
}

/* Hedged call ci's deadline has passed: every copy out fails with class
 * deadline (as a plain layer's attempt does), and the call ends. */
static void hedged_expire(struct sim *s, uint32_t ci)
{
    struct call *c = call_at(s, ci);
    for (uint32_t k = 1; k <= c->attempts; k++) {
        struct copy *cp = copy_of(s, c, k);
        if (!cp->open)
            continue;
        cp->open = false;
        rec_of(s, c)->nopen--;
        service_unhang(s, &cp->hung_at);
        record_result(s, ci, att_of(s, c, k), CLS_DEADLINE);
        cancel_child(s, c->layer, &cp->child, cp->child_gen);
        count_failure(s, ci, CLS_DEADLINE);
    }
    c->last = CLS_DEADLINE; /* (also with no copy out) */
    finish(s, ci, OUT_DEADLINE);
}

/* Hedged call ci's timer: the deadline, or the next hedge. */
static void hedged_timer(struct sim *s, uint32_t ci)
{
    struct call *c = call_at(s, ci);
    c->timer = EVQ_NONE;
    if (s->now >= c->deadline_at)
        hedged_expire(s, ci);
    else
        hedge_next(s, ci, CLS_OK, true);
}

void layer_on_timeout(struct sim *s, uint32_t ci, uint32_t att)
{
    struct call *c = call_at(s, ci);
    if (is_hedged(&s->sc.layers[c->layer])) {
        hedged_timer(s, ci);
        return;
    }
    assert((c->state == CALL_WAITING || c->state == CALL_POOL_WAIT) && c->attempts == att);
    (void)att;
    c->timer = EVQ_NONE;
    enum errclass cls = s->now >= c->deadline_at ? CLS_DEADLINE : CLS_TIMEOUT;
    if (c->state == CALL_POOL_WAIT) {
        bulkhead_leave_queue(s, ci);
        if (cls == CLS_TIMEOUT) {
            cls = CLS_BULKHEAD; /* waited concurrency_wait for a slot */
            layer_count(s, c->layer, LC_BULKHEADED);
        }
    } else {
        if (c->slot)
            bulkhead_release(s, ci);
        service_unhang(s, &c->hung_at);
        cancel_child(s, c->layer, &c->child, c->child_gen);
    }
    record_result(s, ci, att_of(s, c, att), cls);
    failed_attempt(s, ci, cls, -1);
}

void layer_on_retry(struct sim *s, uint32_t ci)
{
    struct call *c = call_at(s, ci);
    assert(c->state == CALL_BACKOFF);
    c->timer = EVQ_NONE;
    attempt(s, ci);
}

/* Allocates each layer's budget and breaker states. Scenario validation
 * keeps the run's whole footprint within SCENARIO_MAX_STATE_BYTES; a
 * scenario that skipped it is refused here before anything is allocated. */
int layer_init(struct sim *s, char *err, size_t errsz)
{
    const struct scenario *sc = &s->sc;
    double need = sim_footprint(sc, NULL);
    if (need > SCENARIO_MAX_STATE_BYTES) {
        /* unreachable: scenario_limits.c refuses such a scenario at check (GCOVR_EXCL_START) */
        snprintf(err, errsz, "the run's state would need %.1f GB (limit %.0f GB)",
                 need / 1e9, SCENARIO_MAX_STATE_BYTES / 1e9);
        return -1;
        /* unreachable: end of the case above (GCOVR_EXCL_STOP) */
    }
    for (unsigned i = 0; i < sc->nlayers; i++) {
        const struct layer_cfg *l = &sc->layers[i];
        struct layer_rt *rt = &s->layers.lrt[i];
        rt->ninstances = l->instances == 0 ? sc->clients : l->instances;
        if (l->budget->id != BUDGET_NONE) {
            rt->nbudgets = sim_layer_states(sc, l, l->budget_scope);
            rt->budgets = mem_alloc((size_t)rt->nbudgets * sizeof *rt->budgets);
            if (rt->budgets == NULL)
                goto oom;
            size_t extra = budget_extra_size(l->budget);
            if (extra > 0 && (rt->budget_extra = mem_alloc((size_t)rt->nbudgets * extra)) == NULL)
                goto oom;
            for (uint32_t j = 0; j < rt->nbudgets; j++)
                budget_state_init(l->budget, &l->budget_p, &rt->budgets[j],
                                  rt->budget_extra ? rt->budget_extra + (size_t)j * extra : NULL);
        }
        if (l->breaker->id != BREAKER_NONE) {
            rt->nbreakers = sim_layer_states(sc, l, l->breaker_scope);
            rt->breakers = mem_alloc((size_t)rt->nbreakers * sizeof *rt->breakers);
            if (rt->breakers == NULL)
                goto oom;
            if (breaker_needs_window(l->breaker, &l->breaker_p) &&
                (rt->breaker_windows = mem_alloc((size_t)rt->nbreakers * sizeof *rt->breaker_windows)) == NULL)
                goto oom;
            for (uint32_t j = 0; j < rt->nbreakers; j++)
                breaker_state_init(&rt->breakers[j],
                                   rt->breaker_windows ? &rt->breaker_windows[j] : NULL);
            if (l->breaker_p.window_calls > 0) {
                rt->rings = mem_alloc((size_t)rt->nbreakers * l->breaker_p.window_calls);
                if (rt->rings == NULL)
                    goto oom;
            }
        }
    }
    return 0;
oom:
    snprintf(err, errsz, "out of memory allocating budget and breaker states");
    return -1;
}

/* Frees what layer_init allocated (every layer's states; a run that
 * failed half-way frees what it got). */
void layer_fini(struct sim *s)
{
    for (unsigned i = 0; i < SCENARIO_MAX_LAYERS; i++) {
        struct layer_rt *rt = &s->layers.lrt[i];
        mem_free(rt->budgets, (size_t)rt->nbudgets * sizeof *rt->budgets);
        mem_free(rt->breakers, (size_t)rt->nbreakers * sizeof *rt->breakers);
        mem_free(rt->rings, (size_t)rt->nbreakers * s->sc.layers[i].breaker_p.window_calls);
        if (rt->nbudgets > 0)
            mem_free(rt->budget_extra,
                     (size_t)rt->nbudgets * budget_extra_size(s->sc.layers[i].budget));
        mem_free(rt->breaker_windows, (size_t)rt->nbreakers * sizeof *rt->breaker_windows);
    }
}
