/*
 * server — the `queue` model: `capacity` workers and a queue (FIFO, or LIFO
 * with `discipline = lifo`), bounded or not, in front of them.
 *
 * An arriving attempt meets, in this order: a phase outage (`refuse`:
 * connection refused at once; `error`: 503 at once, with the phase's
 * Retry-After; `hang`: accepted and never answered); the token-bucket rate
 * limiter (answers `limit_status` with `limit_retry_after`); the
 * idempotency-key store when `dedup` is on and the request carries a key
 * (in flight: 409 at once; stored: the stored answer is replayed, costing a
 * `replay` service time); then a free worker, or a place in the queue, or a
 * 503 at once when the queue is full. When a worker would start an attempt
 * whose propagated deadline has passed and `drop_expired` is on, it drops
 * it unserved. Service time is the `service` draw × the phases' slowdown ×
 * (1 + degrade · other workers busy). At the end of an execution the answer is
 * drawn: 400, 500, 503 or business with their probabilities, else ok. An
 * execution of a non-idempotent request that answers ok or business is a
 * side effect, counted whether or not anyone still waits for it; the
 * server serves abandoned attempts, and counts their service as wasted.
 * Arrive and done are O(log pending events); the queue is a ring buffer
 * that grows by doubling.
 */
#include <gsl/gsl_rng.h>
#include <stdio.h>
#include <stdlib.h>

#include "simctx.h"

int server_init(struct sim *s)
{
    s->q_cap = 1024;
    s->queue = malloc(s->q_cap * sizeof *s->queue);
    s->capacity = s->sc.workers;
    s->slowdown = 1.0;
    s->tokens = (double)s->sc.limit_burst;
    return s->queue ? 0 : -1;
}

void server_fini(struct sim *s)
{
    free(s->queue);
    s->queue = NULL;
}

static void push_queue(struct sim *s, uint32_t job)
{
    if (s->q_len == s->q_cap) {
        uint32_t ncap = s->q_cap * 2;
        uint32_t *nq = malloc((size_t)ncap * sizeof *nq);
        if (nq == NULL || ncap < s->q_cap) {
            fprintf(stderr, "retrystorm: out of memory growing the server queue to %zu bytes\n",
                    (size_t)ncap * sizeof *nq);
            abort();
        }
        for (uint32_t i = 0; i < s->q_len; i++)
            nq[i] = s->queue[(s->q_head + i) % s->q_cap];
        free(s->queue);
        s->queue = nq;
        s->q_head = 0;
        s->q_cap = ncap;
    }
    s->queue[(s->q_head + s->q_len) % s->q_cap] = job;
    s->q_len++;
}

static uint32_t pop_queue(struct sim *s)
{
    if (s->sc.discipline == DISC_LIFO)
        return s->queue[(s->q_head + --s->q_len) % s->q_cap];
    uint32_t job = s->queue[s->q_head];
    s->q_head = (s->q_head + 1) % s->q_cap;
    s->q_len--;
    return job;
}

static void answer(struct sim *s, struct reply_to to, enum errclass cls, rs_time retry_after)
{
    net_answer_up(s, s->sc.nlayers - 1, to, cls, retry_after);
}

static void job_end(struct sim *s, uint32_t ji)
{
    struct job *j = pool_at(&s->jobs, ji);
    uint32_t req = j->req;
    pool_free(&s->jobs, ji);
    load_request_unref(s, req);
}

/* Starts job ji on a free worker, or drops it if its deadline has passed.
 * Returns whether a worker was taken. */
static bool start(struct sim *s, uint32_t ji)
{
    struct job *j = pool_at(&s->jobs, ji);
    if (s->sc.drop_expired && s->now >= j->deadline_at) {
        struct reply_to to = j->parent;
        struct request *r = pool_at(&s->requests, j->req);
        if (j->kind == JOB_EXECUTE && r->key_state == KEY_IN_FLIGHT)
            r->key_state = KEY_NONE; /* never began: the key is free again */
        s->m.dropped++;
        job_end(s, ji);
        answer(s, to, CLS_DEADLINE, -1);
        return false;
    }
    s->busy++;
    double d;
    if (j->kind == JOB_REPLAY) {
        d = (double)dist_sample(&s->sc.replay, s->rng.s[RNG_SERVICE]);
    } else {
        d = (double)dist_sample(&s->sc.service, s->rng.s[RNG_SERVICE]) * s->slowdown;
        if (s->sc.degrade > 0) /* contention with the other executions in progress */
            d *= 1.0 + s->sc.degrade * (double)(s->busy - 1);
    }
    evq_push(&s->q, units_add(s->now, units_from_ns(d)), EV_SERVICE_DONE, ji, 0);
    return true;
}

/* Starts queued work while workers are free. Answers from dropped jobs can
 * re-enter the server (a retry with no delay goes through an event, so
 * not within this loop). */
static void drain(struct sim *s)
{
    while (s->busy < s->capacity && s->q_len > 0)
        start(s, pop_queue(s));
}

/* The token bucket: refills continuously at limit_rate up to limit_burst. */
static bool limiter_admits(struct sim *s)
{
    if (s->sc.limit_rate <= 0)
        return true;
    s->tokens += units_seconds(s->now - s->tokens_t) * s->sc.limit_rate;
    if (s->tokens > (double)s->sc.limit_burst)
        s->tokens = (double)s->sc.limit_burst;
    s->tokens_t = s->now;
    if (s->tokens < 1.0)
        return false;
    s->tokens -= 1.0;
    return true;
}

void server_arrive(struct sim *s, uint32_t req, struct reply_to from, rs_time deadline_at)
{
    struct request *r = pool_at(&s->requests, req);
    r->n[s->sc.nlayers]++;
    s->m.server_arrivals++;
    metrics_cur(&s->m)->server_arrivals++;
    switch (s->outage) {
    case OUTAGE_REFUSE:
        answer(s, from, CLS_CONN, -1);
        return;
    case OUTAGE_ERROR:
        answer(s, from, CLS_503,
               s->outage_retry_after == RS_TIME_NEVER ? -1 : s->outage_retry_after);
        return;
    case OUTAGE_HANG:
        return; /* accepted, never answered */
    case OUTAGE_NONE:
        break;
    }
    if (!limiter_admits(s)) {
        s->m.limited++;
        answer(s, from, s->sc.limit_status,
               s->sc.limit_retry_after == RS_TIME_NEVER ? -1 : s->sc.limit_retry_after);
        return;
    }
    enum job_kind kind = JOB_EXECUTE;
    if (s->sc.dedup && s->sc.key) {
        if (r->key_state == KEY_IN_FLIGHT) {
            answer(s, from, CLS_409, -1);
            return;
        }
        kind = r->key_state == KEY_STORED ? JOB_REPLAY : JOB_EXECUTE;
    }
    if (s->busy >= s->capacity && s->sc.queue >= 0 && s->q_len >= (uint64_t)s->sc.queue) {
        s->m.rejected++;
        metrics_cur(&s->m)->rejected++;
        answer(s, from, CLS_503, -1);
        return;
    }
    if (kind == JOB_EXECUTE && s->sc.dedup && s->sc.key)
        r->key_state = KEY_IN_FLIGHT;
    uint32_t ji = pool_alloc(&s->jobs);
    struct job *j = pool_at(&s->jobs, ji);
    j->req = req;
    j->client = r->client;
    j->kind = (uint8_t)kind;
    j->parent = from;
    j->deadline_at = deadline_at;
    r->refs++;
    if (s->busy < s->capacity)
        start(s, ji);
    else
        push_queue(s, ji);
}

/* The answer of an execution: injected errors, business errors, or ok. */
static enum errclass draw_answer(struct sim *s)
{
    const struct scenario *sc = &s->sc;
    if (sc->p400 + sc->p500 + sc->p503 + sc->p_business <= 0)
        return CLS_OK;
    double u = gsl_rng_uniform(s->rng.s[RNG_ERRORS]);
    if ((u -= sc->p400) < 0)
        return CLS_400;
    if ((u -= sc->p500) < 0)
        return CLS_500;
    if ((u -= sc->p503) < 0)
        return CLS_503;
    if ((u -= sc->p_business) < 0)
        return CLS_BUSINESS;
    return CLS_OK;
}

void server_on_done(struct sim *s, uint32_t ji)
{
    struct job *j = pool_at(&s->jobs, ji);
    struct reply_to to = j->parent;
    struct request *r = pool_at(&s->requests, j->req);
    enum errclass cls;
    s->busy--;
    s->m.server_completions++;
    metrics_cur(&s->m)->server_completions++;
    if (j->kind == JOB_REPLAY) {
        cls = (enum errclass)r->stored;
    } else {
        cls = draw_answer(s);
        if (s->sc.dedup && s->sc.key) {
            r->key_state = KEY_STORED; /* the first execution's answer, errors included */
            r->stored = (uint8_t)cls;
        }
        if (!s->sc.idempotent && (cls == CLS_OK || cls == CLS_BUSINESS)) {
            s->m.side_effects++;
            if (++r->side_effects > 1) {
                metrics_cur(&s->m)->duplicates++;
                if (r->counted)
                    s->m.duplicates++;
            }
        }
    }
    bool wanted = layer_is_waiting(s, to);
    if (!wanted) {
        s->m.wasted++;
        metrics_cur(&s->m)->wasted++;
    }
    job_end(s, ji);
    drain(s);
    if (wanted)
        answer(s, to, cls, -1);
}

void server_set_capacity(struct sim *s, uint32_t capacity)
{
    s->capacity = capacity;
    drain(s);
}
