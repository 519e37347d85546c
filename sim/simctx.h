/*
 * simctx — the simulation context shared by the model modules (load, layer,
 * server) and the dispatch loop in sim.c. Internal: not for users of sim.h.
 *
 * Object graph of one logical request: a `request` (the operation the user
 * wants done) owns a root `call` at layer 0; each attempt of a call at layer
 * L is a call at layer L+1, or a server `job` at the innermost layer. A
 * child names its parent by (index, generation, attempt number), so a
 * response that arrives after the parent gave up on that attempt, or after
 * the parent finished, is recognised as late and ignored. Calls and jobs
 * hold a reference on their request, which is retired (and its attempts
 * recorded) when the last one ends: memory follows what is in flight.
 */
#ifndef RS_SIMCTX_H
#define RS_SIMCTX_H

#include <stdbool.h>
#include <stdint.h>

#include "backoff.h"
#include "evq.h"
#include "metrics.h"
#include "pool.h"
#include "rng.h"
#include "scenario.h"

#define NO_PARENT UINT32_MAX

enum ev_type { EV_ARRIVAL, EV_CLIENT, EV_PHASE, EV_TIMEOUT, EV_RETRY, EV_SERVICE_DONE };

/* What an attempt came back with. Retried by every layer: timeout and 503. */
enum rs_status { ST_OK, ST_TIMEOUT, ST_503 };

enum call_state { CALL_WAITING, CALL_BACKOFF };

struct request {
    rs_time t_start;
    uint32_t client;
    uint32_t refs;     /* calls and jobs still alive */
    bool counted;      /* arrived at or after warmup */
    bool done;         /* has its outcome */
    uint64_t n[SCENARIO_MAX_LAYERS + 1]; /* attempts at each layer, then at the server */
};

struct call {
    uint32_t gen;       /* bumped when freed: names this incarnation */
    uint32_t req;
    uint32_t parent, parent_gen, parent_attempt;
    uint32_t attempts;  /* made so far; the current one's number */
    uint8_t layer, state, last;
    evq_handle timer;   /* the pending timeout or retry */
    struct backoff_state bs;
};

struct job {
    uint32_t req;
    uint32_t parent, parent_gen, parent_attempt;
};

struct sim {
    struct scenario sc;
    uint32_t replication;
    rs_time now;
    struct evq q;
    struct rng_set rng;
    struct metrics m;
    struct pool requests, calls, jobs;
    uint64_t in_flight;   /* logical requests without an outcome (all) */

    /* load */
    double rate;          /* current open-loop rate per second */
    double think_factor;  /* closed loop: think times are divided by this */
    evq_handle next_arrival;
    rs_time *phase_times; /* sorted distinct phase boundaries */
    uint32_t nphase_times;

    /* server */
    uint32_t capacity;    /* workers available now */
    uint32_t busy;
    uint32_t *queue;      /* ring buffer of job indices */
    uint32_t q_head, q_len, q_cap;
};

/* load.c */
void load_start(struct sim *s);
void load_on_arrival(struct sim *s);
void load_on_client(struct sim *s, uint32_t client);
void load_on_phase(struct sim *s);
/* A logical request ended (the root call finished); o is its outcome. */
void load_request_done(struct sim *s, uint32_t req, enum outcome o);
void load_request_unref(struct sim *s, uint32_t req);

/* layer.c */
void layer_call_start(struct sim *s, uint32_t layer, uint32_t req, uint32_t parent,
                      uint32_t parent_gen, uint32_t parent_attempt);
/* A child (call or job) answered the parent's attempt; ignored when late. */
void layer_on_response(struct sim *s, uint32_t call, uint32_t gen, uint32_t attempt,
                       enum rs_status st);
/* Whether the parent is still waiting for that attempt's answer. */
bool layer_is_waiting(const struct sim *s, uint32_t call, uint32_t gen, uint32_t attempt);
void layer_on_timeout(struct sim *s, uint32_t call, uint32_t attempt);
void layer_on_retry(struct sim *s, uint32_t call);

/* server.c */
int server_init(struct sim *s);
void server_fini(struct sim *s);
void server_arrive(struct sim *s, uint32_t req, uint32_t parent, uint32_t parent_gen,
                   uint32_t parent_attempt);
void server_on_done(struct sim *s, uint32_t job);
void server_set_capacity(struct sim *s, uint32_t capacity);

#endif
