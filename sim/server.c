/*
 * server — the `queue` model: `capacity` workers and a FIFO queue, bounded
 * or not. An attempt that finds a free worker starts service at once;
 * otherwise it waits in the queue, or, when the queue is full, is answered
 * 503 at once. The server does not know that a caller gave up: it serves
 * abandoned attempts, and counts their service as wasted. Phases change the
 * number of workers available; running service is never interrupted, and a
 * reduced capacity takes effect as workers finish. Arrive and done are
 * O(log pending events); the queue is a ring buffer that grows by doubling.
 */
#include <stdio.h>
#include <stdlib.h>

#include "simctx.h"

int server_init(struct sim *s)
{
    s->q_cap = 1024;
    s->queue = malloc(s->q_cap * sizeof *s->queue);
    s->capacity = s->sc.workers;
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
    uint32_t job = s->queue[s->q_head];
    s->q_head = (s->q_head + 1) % s->q_cap;
    s->q_len--;
    return job;
}

static void start_service(struct sim *s, uint32_t job)
{
    s->busy++;
    rs_time d = dist_sample(&s->sc.service, s->rng.s[RNG_SERVICE]);
    evq_push(&s->q, units_add(s->now, d), EV_SERVICE_DONE, job, 0);
}

/* Starts queued work while workers are free. */
static void drain(struct sim *s)
{
    while (s->busy < s->capacity && s->q_len > 0)
        start_service(s, pop_queue(s));
}

static void job_end(struct sim *s, uint32_t ji)
{
    struct job *j = pool_at(&s->jobs, ji);
    uint32_t req = j->req;
    pool_free(&s->jobs, ji);
    load_request_unref(s, req);
}

void server_arrive(struct sim *s, uint32_t req, uint32_t parent, uint32_t parent_gen,
                   uint32_t parent_attempt)
{
    struct request *r = pool_at(&s->requests, req);
    r->n[s->sc.nlayers]++;
    s->m.server_arrivals++;
    metrics_cur(&s->m)->server_arrivals++;
    if (s->busy < s->capacity || (s->sc.queue < 0 || s->q_len < (uint64_t)s->sc.queue)) {
        uint32_t ji = pool_alloc(&s->jobs);
        struct job *j = pool_at(&s->jobs, ji);
        j->req = req;
        j->parent = parent;
        j->parent_gen = parent_gen;
        j->parent_attempt = parent_attempt;
        r->refs++;
        if (s->busy < s->capacity)
            start_service(s, ji);
        else
            push_queue(s, ji);
        return;
    }
    s->m.rejected++;
    metrics_cur(&s->m)->rejected++;
    layer_on_response(s, parent, parent_gen, parent_attempt, ST_503);
}

void server_on_done(struct sim *s, uint32_t ji)
{
    struct job *j = pool_at(&s->jobs, ji);
    uint32_t parent = j->parent, pgen = j->parent_gen, patt = j->parent_attempt;
    s->busy--;
    s->m.server_completions++;
    metrics_cur(&s->m)->server_completions++;
    bool wanted = layer_is_waiting(s, parent, pgen, patt);
    if (!wanted) {
        s->m.wasted++;
        metrics_cur(&s->m)->wasted++;
    }
    job_end(s, ji);
    drain(s);
    if (wanted)
        layer_on_response(s, parent, pgen, patt, ST_OK);
}

void server_set_capacity(struct sim *s, uint32_t capacity)
{
    s->capacity = capacity;
    drain(s);
}
