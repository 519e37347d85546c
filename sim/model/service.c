/*
 * service — the `queue` model of a service: each replica has `capacity`
 * workers and a queue (FIFO, or LIFO with `discipline = lifo`), bounded or
 * not, in front of them; a balancer (balancer.c) picks the replica of each
 * arriving attempt.
 *
 * An arriving attempt meets, in this order: the replica's phase outage
 * (`refuse`: connection refused at once; `error`: 503 at once, with the
 * phase's Retry-After; `hang`: accepted and never answered); its token-bucket
 * rate limiter (answers `limit_status` with `limit_retry_after`); the
 * idempotency-key store when `dedup` is on and the request carries a key
 * (in flight: 409 at once; stored: the stored answer is replayed, costing a
 * `replay` service time); then a free worker, or a place in the queue, or a
 * 503 at once when the queue is full. When a worker would start an attempt
 * whose propagated deadline has passed and `drop_expired` is on, it drops
 * it unserved.
 *
 * An execution is a small state machine that holds its worker throughout:
 * local work (`service` × the phases' slowdown × (1 + degrade · other
 * executions working)), then each dependency in `calls` in order — `DEP*k`
 * is k parallel calls that must all succeed — and then `service_after`.
 * While it waits on a dependency the worker is busy but not working. A
 * dependency call that fails ends the execution at once, answering its
 * caller with: 504 for timeout and deadline; 503 for conn, 503, bulkhead,
 * breaker and throttled; business as business; any other class as itself
 * (its other calls still out are abandoned: their answers arrive late).
 * Otherwise, at the end of an execution the answer is drawn: 400, 500, 503
 * or business with their probabilities, else ok. An execution of the entry
 * service (the one the clients call) for a non-idempotent request that
 * answers ok or business is a side effect, counted whether or not anyone
 * still waits for it; every service serves abandoned attempts, and counts
 * them as wasted.
 *
 * Arrive and done are O(log pending events) plus the balancer's pick; the
 * queue is a ring buffer that grows by doubling. services.csv's levels are
 * integrated per replica when they change: O(buckets crossed).
 */
#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mem.h"
#include "sim.h"
#include "service.h"
#include "simctx.h"

static const struct service_cfg *cfg_of(const struct sim *s, const struct replica *rp)
{
    return &s->sc.services[rp->service];
}

int service_init(struct sim *s, char *err, size_t errsz)
{
    const struct scenario *sc = &s->sc;
    uint32_t n = 0;
    for (unsigned i = 0; i < sc->nservices; i++)
        n += sc->services[i].replicas;
    s->services.reps = calloc(n, sizeof *s->services.reps);
    if (s->services.reps == NULL)
        goto oom;
    s->services.nreps = n;
    n = 0;
    for (unsigned i = 0; i < sc->nservices; i++) {
        const struct service_cfg *c = &sc->services[i];
        s->services.svc[i].first = n;
        s->services.svc[i].n = c->replicas;
        for (unsigned r = 0; r < c->replicas; r++, n++) {
            struct replica *rp = &s->services.reps[n];
            rp->q_cap = 1024;
            rp->queue = malloc(rp->q_cap * sizeof *rp->queue);
            if (rp->queue == NULL)
                goto oom;
            rp->service = (uint16_t)i;
            rp->entry = i == sc->entry;
            rp->capacity = c->workers;
            rp->slowdown = 1.0;
            rp->tokens = (double)c->limit_burst;
        }
    }
    if (sc->graph) {
        s->services.sb = mem_alloc(s->m.nalloc * s->services.nreps * sizeof *s->services.sb);
        if (s->services.sb == NULL)
            goto oom;
    }
    return 0;
oom:
    snprintf(err, errsz, "out of memory for the services' replicas and queues");
    return -1;
}

void service_fini(struct sim *s)
{
    for (uint32_t i = 0; i < s->services.nreps && s->services.reps != NULL; i++)
        free(s->services.reps[i].queue);
    free(s->services.reps);
    mem_free(s->services.sb, s->m.nalloc * s->services.nreps * sizeof *s->services.sb);
    s->services.reps = NULL;
    s->services.sb = NULL;
}

/* ---- services.csv counters and levels ---- */

static uint32_t rep_index(const struct sim *s, const struct replica *rp)
{
    return (uint32_t)(rp - s->services.reps);
}

static struct svc_bucket *sb_cur(struct sim *s, const struct replica *rp)
{
    return &s->services.sb[s->m.cur * s->services.nreps + rep_index(s, rp)];
}

static void add_area(const struct replica *rp, struct svc_bucket *sb, double dt)
{
    sb->area_queue += dt * rp->q_len;
    sb->area_busy += dt * rp->busy;
    sb->area_working += dt * rp->working;
}

/* Integrates rp's queue, busy and working levels from rp->area_t to now;
 * called before any of them changes (only when services.csv is kept). */
static void rep_integrate_slow(struct sim *s, struct replica *rp)
{
    rs_time t = rp->area_t, b = s->sc.bucket;
    uint32_t i = rep_index(s, rp);
    while (t < s->now) {
        size_t k = (size_t)(t / b);
        rs_time end = (rs_time)(k + 1) * b;
        if (end > s->now)
            end = s->now;
        if (k >= s->m.nbuckets) /* t < now <= the run's end: k < nbuckets */
            break; /* unreachable: time never passes the duration (GCOVR_EXCL_LINE) */
        add_area(rp, &s->services.sb[k * s->services.nreps + i], (double)(end - t));
        if (t < s->sc.warmup) /* the part before the window, for the totals */
            add_area(rp, &rp->pre, (double)((end < s->sc.warmup ? end : s->sc.warmup) - t));
        t = end;
    }
    rp->area_t = s->now;
}

static inline void rep_integrate(struct sim *s, struct replica *rp)
{
    if (s->services.sb != NULL)
        rep_integrate_slow(s, rp);
}

void service_finish(struct sim *s)
{
    for (uint32_t i = 0; i < s->services.nreps; i++)
        rep_integrate(s, &s->services.reps[i]);
}

/* Counts one event of rp's flow in services.csv's bucket, and before
 * warmup also in rp->pre (the totals leave it out: metrics.h's window). */
#define COUNT(s, rp, field)                                                                        \
    do {                                                                                           \
        if ((s)->services.sb != NULL) {                                                            \
            sb_cur((s), (rp))->field++;                                                            \
            (rp)->pre.field += (s)->now < (s)->sc.warmup;                                          \
        }                                                                                          \
    } while (0)

/* Changes rp's queue length, busy and working workers by the deltas, and
 * the entry service's sums with them. */
static inline void rep_levels(struct sim *s, struct replica *rp, int dq, int db, int dw)
{
    rep_integrate(s, rp);
    rp->q_len = (uint32_t)((int64_t)rp->q_len + dq);
    rp->busy = (uint32_t)((int64_t)rp->busy + db);
    rp->working = (uint32_t)((int64_t)rp->working + dw);
    if (rp->entry) {
        s->services.q_len = (uint32_t)((int64_t)s->services.q_len + dq);
        s->services.busy = (uint32_t)((int64_t)s->services.busy + db);
    }
}

/* ---- the queue ---- */

/* The ring holds q_ring entries from q_head: the q_len queued jobs and
 * the cancelled ones not reached yet (they left the queue's level when
 * cancelled, and are freed when the ring reaches them). */
static void push_queue(struct sim *s, struct replica *rp, uint32_t job)
{
    if (rp->q_ring == rp->q_cap) {
        uint32_t ncap = rp->q_cap * 2;
        uint32_t *nq = malloc((size_t)ncap * sizeof *nq);
        if (nq == NULL || ncap < rp->q_cap) {
            fprintf(stderr, "retrystorm: out of memory growing a service queue to %zu bytes\n",
                    (size_t)ncap * sizeof *nq);
            abort();
        }
        for (uint32_t i = 0; i < rp->q_ring; i++)
            nq[i] = rp->queue[(rp->q_head + i) % rp->q_cap];
        free(rp->queue);
        rp->queue = nq;
        rp->q_head = 0;
        s->services.queue_growth += (double)(ncap - rp->q_cap) * sizeof *nq; /* in flight: sim_live_bytes */
        rp->q_cap = ncap;
    }
    rp->queue[(rp->q_head + rp->q_ring) % rp->q_cap] = job;
    rp->q_ring++;
    rep_levels(s, rp, +1, 0, 0);
}

/* Takes the ring's next entry (FIFO: the oldest; LIFO: the newest). */
static uint32_t take_ring(struct sim *s, struct replica *rp)
{
    uint32_t job;
    if (cfg_of(s, rp)->discipline == DISC_LIFO) {
        job = rp->queue[(rp->q_head + rp->q_ring - 1) % rp->q_cap];
    } else {
        job = rp->queue[rp->q_head];
        rp->q_head = (rp->q_head + 1) % rp->q_cap;
    }
    rp->q_ring--;
    return job;
}

static void job_end(struct sim *s, uint32_t ji);

/* The next queued job (q_len > 0), freeing the cancelled ones passed. */
static uint32_t pop_queue(struct sim *s, struct replica *rp)
{
    uint32_t job;
    while (((const struct job *)pool_at(&s->jobs, job = take_ring(s, rp)))->cancelled)
        job_end(s, job);
    rep_levels(s, rp, -1, 0, 0);
    return job;
}

/* ---- answers ---- */

bool service_is_waiting(const struct sim *s, struct reply_to to)
{
    if (!(to.call & REPLY_JOB))
        return layer_is_waiting(s, to);
    const struct job *j = pool_at(&s->jobs, to.call & ~REPLY_JOB);
    return j->gen == to.gen && j->stage == JOB_CALLS && j->step == to.attempt / FANOUT_SLOTS;
}

void service_unhang(struct sim *s, uint32_t *hung_at)
{
    if (*hung_at == 0)
        return;
    s->services.reps[*hung_at - 1].hung--;
    *hung_at = 0;
}

/* Sends an execution's answer to its parent: over the hop it came by, or
 * straight to the job that called it. */
static void answer(struct sim *s, uint8_t via, struct reply_to to, enum errclass cls,
                   rs_time retry_after)
{
    if (via == NO_LAYER)
        service_on_dep_answer(s, to, cls);
    else
        net_answer_up(s, via, to, cls, retry_after);
}

/* Job ji ends while calls of its step may still be out (it was stopped,
 * or answered early when one of them failed): those whose layer cancels
 * are cancelled (the service itself is their caller: no hop). Calls that
 * already ended are skipped by their generation. */
static void cancel_kids(struct sim *s, struct job *j)
{
    const struct child *kids = pool_at(&s->kids, j->kids);
    struct child mine[SCENARIO_MAX_FANOUT];
    uint32_t n = j->nkids;
    memcpy(mine, kids, n * sizeof *mine); /* cancelling may start calls that reuse the pool */
    pool_free(&s->kids, j->kids);
    j->kids = NO_CHILD;
    for (uint32_t k = 0; k < n; k++)
        if (mine[k].idx != NO_CHILD)
            layer_on_cancel(s, mine[k].idx, mine[k].gen);
}

static void job_end(struct sim *s, uint32_t ji)
{
    struct job *j = pool_at(&s->jobs, ji);
    uint32_t req = j->req;
    j->gen++;
    if (j->kids != NO_CHILD)
        cancel_kids(s, j);
    pool_free(&s->jobs, ji);
    load_request_unref(s, req);
}

/* ---- executions ---- */

/* The job's work ends after d; the event names its generation, so that a
 * job stopped meanwhile (and its slot reused) ignores it. */
static void push_work(struct sim *s, uint32_t ji, double d)
{
    uint32_t gen = ((const struct job *)pool_at(&s->jobs, ji))->gen;
    evq_push(&s->q, units_add(s->now, units_from_ns(d)), EV_SERVICE_DONE, ji, gen);
}

/* The factor on a service time from the other executions working:
 * 1 + degrade · others (linear), or e^(degrade · others / workers). */
static double degradation(const struct service_cfg *c, const struct replica *rp)
{
    double others = (double)(rp->working - 1);
    if (c->degrade_shape == DEGRADE_EXPONENTIAL)
        return exp(c->degrade * others / (double)c->workers);
    return 1.0 + c->degrade * others;
}

/* Execution ji (just started, working) looks its key up in its service's
 * cache: a hit does the hit's work and answers ok; a lookup that joins a
 * miss in flight waits for it without working. True when it is one of
 * those; false when it missed and runs as usual. */
static bool looked_up(struct sim *s, uint32_t ji, struct replica *rp, const struct service_cfg *c)
{
    enum cache_result r = caching_lookup(s, ji, c);
    struct job *j = pool_at(&s->jobs, ji);
    if (r == CACHE_HIT) {
        j->stage = JOB_HIT;
        push_work(s, ji, (double)dist_sample(&s->sc.caches[c->cache_index].hit,
                                             s->rng.s[RNG_SERVICE]));
        return true;
    }
    if (r == CACHE_JOIN) {
        j->stage = JOB_JOINED;
        rep_levels(s, rp, 0, 0, -1);
        return true;
    }
    return false;
}

/* A job that never began frees its request's key (dropped or cancelled). */
static void free_key(struct sim *s, const struct job *j)
{
    struct request *r = pool_at(&s->requests, j->req);
    if (j->kind == JOB_EXECUTE && cfg_of(s, &s->services.reps[j->rep])->dedup &&
        r->key_state == KEY_IN_FLIGHT)
        r->key_state = KEY_NONE; /* (only the entry keeps keys: a dependency's job leaves it) */
}

/* Starts job ji on a free worker of its replica, or drops it if its
 * deadline has passed. */
static void start(struct sim *s, uint32_t ji)
{
    struct job *j = pool_at(&s->jobs, ji);
    struct replica *rp = &s->services.reps[j->rep];
    const struct service_cfg *c = cfg_of(s, rp);
    if (c->drop_expired && s->now >= j->deadline_at) {
        struct reply_to to = j->parent;
        uint8_t via = j->via;
        free_key(s, j); /* never began: the key is free again */
        metrics_count(&s->m, MC_DROPPED);
        rp->n_dropped++;
        job_end(s, ji);
        answer(s, via, to, CLS_DEADLINE, -1);
        return;
    }
    rep_levels(s, rp, 0, +1, +1);
    rp->n_started++;
    COUNT(s, rp, started);
    j->stage = JOB_LOCAL;
    if (j->kind == JOB_EXECUTE && c->cache_index >= 0 && looked_up(s, ji, rp, c))
        return;
    double d;
    if (j->kind == JOB_REPLAY) {
        d = (double)dist_sample(&c->replay, s->rng.s[RNG_SERVICE]);
    } else {
        d = (double)dist_sample(&c->service, s->rng.s[RNG_SERVICE]) * rp->slowdown;
        if (c->degrade > 0) /* contention with the other executions working */
            d *= degradation(c, rp);
    }
    push_work(s, ji, d);
}

/* Starts queued work while workers are free. Answers from dropped jobs can
 * re-enter the service (a retry with no delay goes through an event, so
 * not within this loop). */
static void drain_slow(struct sim *s, struct replica *rp)
{
    while (rp->busy < rp->capacity && rp->q_len > 0)
        start(s, pop_queue(s, rp));
}

static inline void drain(struct sim *s, struct replica *rp)
{
    if (rp->q_len > 0 && rp->busy < rp->capacity)
        drain_slow(s, rp);
}

/* The token bucket: refills continuously at limit_rate up to limit_burst. */
static bool limiter_admits(struct sim *s, struct replica *rp)
{
    const struct service_cfg *c = cfg_of(s, rp);
    if (c->limit_rate <= 0)
        return true;
    rp->tokens += units_seconds(s->now - rp->tokens_t) * c->limit_rate;
    if (rp->tokens > (double)c->limit_burst)
        rp->tokens = (double)c->limit_burst;
    rp->tokens_t = s->now;
    if (rp->tokens < 1.0)
        return false;
    rp->tokens -= 1.0;
    return true;
}

/* What turns an attempt away before it is queued (outage, limiter, key
 * store, full queue): true after answering it. *kind is the job to make. */
static bool turned_away(struct sim *s, struct replica *rp, struct request *r, uint8_t via,
                        struct reply_to from, enum job_kind *kind)
{
    const struct service_cfg *c = cfg_of(s, rp);
    switch (rp->outage) {
    case OUTAGE_REFUSE:
        answer(s, via, from, CLS_CONN, -1);
        return true;
    case OUTAGE_ERROR:
        answer(s, via, from, CLS_503,
               rp->outage_retry_after == RS_TIME_NEVER ? -1 : rp->outage_retry_after);
        return true;
    case OUTAGE_HANG: /* accepted, never answered */
        /* outstanding while the sending call waits for it (an attempt that
         * arrives after its caller gave up is not; a job's direct call has
         * no timeout to end it and is not counted: docs/guide.md) */
        if (via != NO_LAYER && layer_mark_hung(s, from, rep_index(s, rp)))
            rp->hung++;
        return true;
    case OUTAGE_NONE:
        break;
    }
    if (!limiter_admits(s, rp)) {
        metrics_count(&s->m, MC_LIMITED);
        answer(s, via, from, c->limit_status,
               c->limit_retry_after == RS_TIME_NEVER ? -1 : c->limit_retry_after);
        return true;
    }
    *kind = JOB_EXECUTE;
    if (c->dedup && s->sc.key) {
        if (r->key_state == KEY_IN_FLIGHT) {
            answer(s, via, from, CLS_409, -1);
            return true;
        }
        *kind = r->key_state == KEY_STORED ? JOB_REPLAY : JOB_EXECUTE;
    }
    if (rp->busy >= rp->capacity && c->queue >= 0 && rp->q_len >= (uint64_t)c->queue) {
        COUNT(s, rp, rejected);
        if (rp->entry)
            metrics_count(&s->m, MC_REJECTED);
        answer(s, via, from, CLS_503, -1);
        return true;
    }
    return false;
}

/* The replica an attempt goes to: a hedged layer's copy prefers one its
 * call's other copies did not reach. */
static uint32_t pick_replica(struct sim *s, uint32_t svc, struct reply_to from, uint8_t via)
{
    if (via != NO_LAYER && s->sc.layers[via].hedge_mode != HEDGE_NONE)
        return layer_hedge_replica(s, svc, from);
    return balancer_pick(s, svc);
}

struct child service_arrive(struct sim *s, uint32_t svc, uint32_t req, struct reply_to from,
                            uint8_t via, rs_time deadline_at)
{
    struct request *r = pool_at(&s->requests, req);
    uint32_t rep1 = pick_replica(s, svc, from, via) + 1;
    struct replica *rp = &s->services.reps[rep1 - 1];
    const struct service_cfg *c = cfg_of(s, rp);
    rp->n_arrivals++;
    COUNT(s, rp, arrivals);
    if (rp->entry) {
        r->n[s->sc.nlayers]++;
        metrics_count(&s->m, MC_SERVER_ARRIVALS);
        phasewin_server(&s->pw, s->now);
    }
    enum job_kind kind;
    if (via != NO_LAYER) /* the replica, before an answer at once can end the call */
        layer_note_child(s, via, from, (struct child){NO_CHILD, 0}, rep1);
    if (turned_away(s, rp, r, via, from, &kind)) {
        rp->n_turned++;
        return (struct child){NO_CHILD, 0};
    }
    rp->n_jobs++;
    if (kind == JOB_EXECUTE && c->dedup && s->sc.key)
        r->key_state = KEY_IN_FLIGHT;
    uint32_t ji = pool_alloc(&s->jobs);
    struct job *j = pool_at(&s->jobs, ji);
    j->req = req;
    j->client = r->client;
    j->rep = (uint16_t)(rep1 - 1);
    j->kind = (uint8_t)kind;
    j->stage = JOB_QUEUED;
    j->loading = false;
    j->cancelled = false;
    j->kids = NO_CHILD;
    j->via = via;
    j->parent = from;
    j->deadline_at = deadline_at;
    r->refs++;
    struct child me = {ji | REPLY_JOB, j->gen};
    if (via != NO_LAYER)
        layer_note_child(s, via, from, me, rep1);
    if (rp->busy < rp->capacity)
        start(s, ji);
    else
        push_queue(s, rp, ji);
    return me;
}

/* Stops running job ji (cancel_running): its worker is freed (its work's
 * event, naming the old generation, is ignored when it comes), nothing is
 * answered, and its dependency calls still out are cancelled where their
 * layer cancels (job_end). */
static void stop(struct sim *s, uint32_t ji)
{
    struct job *j = pool_at(&s->jobs, ji);
    struct replica *rp = &s->services.reps[j->rep];
    bool working = j->stage == JOB_LOCAL || j->stage == JOB_AFTER || j->stage == JOB_HIT;
    rep_levels(s, rp, 0, -1, working ? -1 : 0);
    rp->n_stopped++;
    metrics_count(&s->m, MC_CANCELLED);
    free_key(s, j); /* stopped before it committed */
    if (j->loading) { /* its key's miss: abandoned, as a failed load */
        j->loading = false;
        caching_on_complete(s, ji, CLS_503);
    }
    job_end(s, ji);
    drain(s, rp);
}

/* Cancelled job ji leaves its replica's queue unstarted; nobody waits for
 * an answer. */
static void drop_queued(struct sim *s, uint32_t ji)
{
    struct job *j = pool_at(&s->jobs, ji);
    struct replica *rp = &s->services.reps[j->rep];
    j->cancelled = true;
    free_key(s, j);
    rep_levels(s, rp, -1, 0, 0);
    rp->n_dropped++;
    metrics_count(&s->m, MC_CANCELLED_BEFORE_START);
}

void service_on_cancel(struct sim *s, uint32_t ji, uint32_t gen)
{
    struct job *j = pool_at(&s->jobs, ji);
    if (j->gen != gen)
        return; /* it ended before the cancellation arrived */
    if (j->cancelled)
        return; /* already dropped */
    if (j->stage == JOB_QUEUED) /* dropped: it leaves the queue now (the ring frees it later) */
        drop_queued(s, ji);
    else if (j->stage != JOB_JOINED && cfg_of(s, &s->services.reps[j->rep])->cancel_running)
        stop(s, ji);
}

/* The answer of an execution: injected errors, business errors, or ok. */
static enum errclass draw_answer(struct sim *s, const struct service_cfg *c)
{
    if (c->p400 + c->p500 + c->p503 + c->p_business <= 0)
        return CLS_OK;
    double u = gsl_rng_uniform(s->rng.s[RNG_ERRORS]);
    if ((u -= c->p400) < 0)
        return CLS_400;
    if ((u -= c->p500) < 0)
        return CLS_500;
    if ((u -= c->p503) < 0)
        return CLS_503;
    if ((u -= c->p_business) < 0)
        return CLS_BUSINESS;
    return CLS_OK;
}

/* Records what an execution of the entry service did: the key store's
 * answer and side effects (none for an answer from the cache: a hit, or a
 * joined execution). */
static void record_execution(struct sim *s, struct job *j, const struct service_cfg *c,
                             enum errclass cls)
{
    struct request *r = pool_at(&s->requests, j->req);
    if (c->dedup && s->sc.key) {
        r->key_state = KEY_STORED; /* the first execution's answer, errors included */
        r->stored = (uint8_t)cls;
    }
    bool worked = j->stage != JOB_HIT && j->stage != JOB_JOINED; /* not from the cache */
    if (!s->sc.idempotent && worked && (cls == CLS_OK || cls == CLS_BUSINESS)) {
        metrics_count(&s->m, MC_SIDE_EFFECTS);
        if (++r->side_effects > 1)
            metrics_count(&s->m, MC_DUPLICATES);
    }
}

/* Ends execution ji with class cls (drawn = false: a dependency failed, so
 * nothing is drawn); frees its worker and answers its caller if it waits. */
static void complete(struct sim *s, uint32_t ji, enum errclass cls, bool drawn)
{
    struct job *j = pool_at(&s->jobs, ji);
    struct replica *rp = &s->services.reps[j->rep];
    const struct service_cfg *c = cfg_of(s, rp);
    struct reply_to to = j->parent;
    uint8_t via = j->via;
    rep_levels(s, rp, 0, -1, 0);
    rp->n_completed++;
    COUNT(s, rp, completed);
    if (rp->entry)
        metrics_count(&s->m, MC_SERVER_COMPLETIONS);
    if (j->kind == JOB_REPLAY) {
        struct request *r = pool_at(&s->requests, j->req);
        cls = (enum errclass)r->stored;
    } else {
        if (drawn)
            cls = draw_answer(s, c);
        if (rp->entry)
            record_execution(s, j, c, cls);
        if (j->loading) { /* its key's miss: fill, and end the executions joined to it */
            j->loading = false;
            caching_on_complete(s, ji, cls);
        }
    }
    job_end(s, ji);
    drain(s, rp); /* may end a fan-out sibling's job: ask who waits after it */
    if (service_is_waiting(s, to)) {
        answer(s, via, to, cls, -1);
        return;
    }
    COUNT(s, rp, wasted);
    if (rp->entry)
        metrics_count(&s->m, MC_WASTED);
}

/* Makes the fan-out calls of job ji's current step. An answer may come at
 * once and end the job, or the step: then the rest are not sent. */
static void call_step(struct sim *s, uint32_t ji)
{
    struct job *j = pool_at(&s->jobs, ji);
    const struct service_cfg *c = cfg_of(s, &s->services.reps[j->rep]);
    const struct dep_cfg *d = &c->calls[j->step];
    uint32_t gen = j->gen, step = j->step, req = j->req;
    uint8_t top = s->services.svc[s->services.reps[j->rep].service].edge[step];
    rs_time deadline_at = j->deadline_at;
    j->pending = (uint8_t)d->fanout;
    bool keep = top != NO_LAYER && s->sc.layers[top].cancel == CANCEL_ON_ABANDON;
    if (keep) { /* the calls to cancel if the job ends before they answer */
        if (j->kids == NO_CHILD)
            j->kids = pool_alloc(&s->kids);
        j->nkids = 0;
    }
    for (uint32_t k = 0; k < d->fanout; k++) {
        j = pool_at(&s->jobs, ji);
        if (j->gen != gen || j->stage != JOB_CALLS || j->step != step)
            return;
        COUNT(s, &s->services.reps[j->rep], dep_calls);
        struct reply_to me = {ji | REPLY_JOB, gen, step * FANOUT_SLOTS + k};
        if (top == NO_LAYER) {
            service_arrive(s, d->service, req, me, NO_LAYER, deadline_at);
            continue;
        }
        struct child ch = layer_call_start(s, top, req, me, deadline_at);
        j = pool_at(&s->jobs, ji);
        if (keep && j->gen == gen)
            ((struct child *)pool_at(&s->kids, j->kids))[j->nkids++] = ch;
    }
}

/* Execution ji finished its local work, or all the calls of its step: on
 * to the next step, the work after, or its answer. Only executions with
 * calls or after-work come here (service_on_done answers the rest), so
 * the job is an execution, not a replay, and never past its after-work. */
static void next_stage(struct sim *s, uint32_t ji)
{
    struct job *j = pool_at(&s->jobs, ji);
    struct replica *rp = &s->services.reps[j->rep];
    const struct service_cfg *c = cfg_of(s, rp);
    if (j->stage == JOB_LOCAL && c->ncalls > 0) {
        j->stage = JOB_CALLS;
        j->step = 0;
        call_step(s, ji);
    } else if (j->stage == JOB_CALLS && j->step + 1u < c->ncalls) {
        j->step++;
        call_step(s, ji);
    } else if (c->has_after) {
        j->stage = JOB_AFTER;
        rep_levels(s, rp, 0, 0, +1);
        push_work(s, ji, (double)dist_sample(&c->service_after, s->rng.s[RNG_SERVICE]) * rp->slowdown);
    } else {
        complete(s, ji, CLS_OK, true);
    }
}

void service_on_done(struct sim *s, uint32_t ji, uint32_t gen)
{
    struct job *j = pool_at(&s->jobs, ji);
    if (j->gen != gen)
        return; /* stopped by a cancellation */
    struct replica *rp = &s->services.reps[j->rep];
    const struct service_cfg *c = cfg_of(s, rp);
    rep_levels(s, rp, 0, 0, -1);
    if (j->stage == JOB_LOCAL && (c->ncalls > 0 || c->has_after) && j->kind == JOB_EXECUTE)
        next_stage(s, ji);
    else /* a lone service's path: one test; a hit answers ok, nothing drawn */
        complete(s, ji, CLS_OK, j->stage != JOB_HIT);
}

void service_complete_joined(struct sim *s, uint32_t ji, enum errclass cls)
{
    complete(s, ji, cls, false);
}

/* What an execution answers when a dependency call ended with cls. */
static enum errclass failed_dep_class(enum errclass cls)
{
    switch (cls) {
    case CLS_TIMEOUT:
    case CLS_DEADLINE:
        return CLS_504;
    case CLS_CONN:
    case CLS_503:
    case CLS_BULKHEAD:
    case CLS_BREAKER:
    case CLS_THROTTLED:
        return CLS_503;
    default:
        return cls;
    }
}

void service_on_dep_answer(struct sim *s, struct reply_to to, enum errclass cls)
{
    if (!service_is_waiting(s, to))
        return; /* late: the execution ended, or moved on */
    uint32_t ji = to.call & ~REPLY_JOB;
    struct job *j = pool_at(&s->jobs, ji);
    j->pending--; /* every call answers its job once at most (finish, complete, turned away) */
    if (cls != CLS_OK) {
        complete(s, ji, failed_dep_class(cls), false);
        return;
    }
    if (j->pending == 0)
        next_stage(s, ji);
}

/* ---- phases ---- */

static void set_capacity(struct sim *s, struct replica *rp, uint32_t capacity)
{
    rp->capacity = capacity;
    drain(s, rp);
}

/* Whether phase p acts on replica i of service svc (0-based). */
static bool phase_hits(const struct phase_cfg *p, uint32_t svc, uint32_t i)
{
    if (p->target_kind == TARGET_NONE)
        return svc == 0;
    return p->target_kind == TARGET_SERVICE && p->target_index == svc &&
           (p->target_replica == 0 || p->target_replica == i + 1);
}

void service_apply_phases(struct sim *s)
{
    for (uint32_t svc = 0; svc < s->sc.nservices; svc++) {
        for (uint32_t i = 0; i < s->services.svc[svc].n; i++) {
            struct replica *rp = &s->services.reps[s->services.svc[svc].first + i];
            double cap = 1.0, slowdown = 1.0;
            enum outage outage = OUTAGE_NONE;
            rs_time outage_ra = RS_TIME_NEVER;
            for (unsigned k = 0; k < s->sc.nphases; k++) {
                const struct phase_cfg *p = &s->sc.phases[k];
                if (!(p->start <= s->now && s->now < p->end) || !phase_hits(p, svc, i))
                    continue;
                if (p->has_capacity)
                    cap *= p->capacity;
                slowdown *= p->slowdown;
                if (p->outage != OUTAGE_NONE) {
                    outage = p->outage;
                    outage_ra = p->retry_after;
                }
            }
            rp->outage = outage;
            rp->outage_retry_after = outage_ra;
            rp->slowdown = slowdown;
            set_capacity(s, rp, (uint32_t)lround((double)s->sc.services[svc].workers * cap));
        }
    }
}

/* ---- services.csv rows ---- */

static void add_bucket(struct sim_service_row *row, const struct svc_bucket *b)
{
    row->arrivals += b->arrivals;
    row->started += b->started;
    row->completed += b->completed;
    row->rejected += b->rejected;
    row->wasted += b->wasted;
    row->dep_calls += b->dep_calls;
    row->queue_len += b->area_queue;
    row->busy += b->area_busy;
    row->working += b->area_working;
}

/* Sums replicas [lo, hi) of service svc over buckets [b0, b1); levels are
 * left as areas (level · ns). */
static void sum_rows(const struct sim *s, unsigned svc, unsigned lo, unsigned hi, size_t b0,
                     size_t b1, struct sim_service_row *row)
{
    *row = (struct sim_service_row){0};
    for (size_t b = b0; b < b1; b++)
        for (unsigned i = lo; i < hi; i++)
            add_bucket(row, &s->services.sb[b * s->services.nreps + s->services.svc[svc].first + i]);
    row->workers = (double)s->sc.services[svc].workers * (hi - lo);
}

static void areas_to_levels(struct sim_service_row *row, double ns)
{
    row->queue_len /= ns;
    row->busy /= ns;
    row->working /= ns;
}

bool sim_service_row(const struct sim *s, unsigned svc, unsigned replica, size_t bucket,
                     struct sim_service_row *row)
{
    if (s->services.sb == NULL || svc >= s->sc.nservices || replica > s->services.svc[svc].n ||
        bucket >= s->m.nbuckets)
        return false;
    unsigned lo = replica == 0 ? 0 : replica - 1, hi = replica == 0 ? s->services.svc[svc].n : replica;
    sum_rows(s, svc, lo, hi, bucket, bucket + 1, row);
    areas_to_levels(row, metrics_bucket_len(&s->m, bucket) * 1e9);
    return true;
}

/* The window [warmup, end): every bucket, less what came before warmup
 * (exactly: the counts and areas before it are kept apart, so a warm-up
 * inside a bucket is not rounded to the bucket). */
void sim_service_totals(const struct sim *s, unsigned svc, struct sim_service_row *row)
{
    *row = (struct sim_service_row){0};
    if (s->services.sb == NULL || s->m.nbuckets == 0)
        return;
    sum_rows(s, svc, 0, s->services.svc[svc].n, 0, s->m.nbuckets, row);
    struct sim_service_row pre = {0};
    for (unsigned i = 0; i < s->services.svc[svc].n; i++)
        add_bucket(&pre, &s->services.reps[s->services.svc[svc].first + i].pre);
    row->arrivals -= pre.arrivals;
    row->started -= pre.started;
    row->completed -= pre.completed;
    row->rejected -= pre.rejected;
    row->wasted -= pre.wasted;
    row->dep_calls -= pre.dep_calls;
    row->queue_len -= pre.queue_len;
    row->busy -= pre.busy;
    row->working -= pre.working;
    double ns = 0;
    for (size_t b = 0; b < s->m.nbuckets; b++)
        ns += metrics_bucket_len(&s->m, b) * 1e9;
    ns -= (double)s->sc.warmup;
    areas_to_levels(row, ns > 0 ? ns : 1.0);
}

/* ---- conservation ---- */

/* services.csv's buckets of replica i add up to its run totals. */
static bool buckets_add_up(const struct sim *s, uint32_t i)
{
    uint64_t a = 0, st = 0, c = 0;
    for (size_t b = 0; b < s->m.nbuckets; b++) {
        const struct svc_bucket *sb = &s->services.sb[b * s->services.nreps + i];
        a += sb->arrivals;
        st += sb->started;
        c += sb->completed;
    }
    const struct replica *rp = &s->services.reps[i];
    return a == rp->n_arrivals && st == rp->n_started && c == rp->n_completed;
}

int service_check(const struct sim *s, char *err, size_t errsz)
{
    for (uint32_t i = 0; i < s->services.nreps; i++) {
        const struct replica *rp = &s->services.reps[i];
        const char *broken = NULL;
        /* unreachable: a self-check of conservation that only a bug can fail (GCOVR_EXCL_START) */
        if (rp->n_arrivals != rp->n_turned + rp->n_jobs)
            broken = "arrivals != turned away + jobs";
        else if (rp->n_jobs != rp->n_dropped + rp->n_started + rp->q_len)
            broken = "jobs != dropped + started + queued";
        else if (rp->n_started != rp->n_completed + rp->n_stopped + rp->busy)
            broken = "started != completed + stopped + busy";
        else if (s->services.sb != NULL && !buckets_add_up(s, i))
            broken = "services.csv's buckets do not add up to the run's totals";
        if (broken != NULL) {
            snprintf(err, errsz, "internal error: service %s replica %u: %s",
                     s->sc.services[rp->service].name, i - s->services.svc[rp->service].first + 1, broken);
            return -1;
        }
        /* unreachable: end of the case above (GCOVR_EXCL_STOP) */
    }
    return 0;
}
