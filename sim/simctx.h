/*
 * simctx — the simulation context shared by the model modules (load, layer,
 * net, server) and the dispatch loop in sim.c. Internal: not for users of
 * sim.h.
 *
 * Object graph of one logical request: a `request` (the operation the user
 * wants done) owns a root `call` at layer 0; each attempt of a call at layer
 * L travels over layer L's hop (net) and becomes a call at layer L+1, or a
 * server `job` at the innermost layer; answers travel back over the same
 * hop. A child names its parent by (index, generation, attempt number), so
 * an answer that arrives after the parent gave up on that attempt, or after
 * the parent ended, is recognised as late and ignored. Calls, jobs and
 * messages carrying an attempt downward hold a reference on their request,
 * which is retired (and its attempts recorded) when the last one ends: memory
 * follows what is in flight.
 */
#ifndef RS_SIMCTX_H
#define RS_SIMCTX_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

#include "backoff.h"
#include "breaker.h"
#include "budget.h"
#include "errclass.h"
#include "evq.h"
#include "metrics.h"
#include "pool.h"
#include "rng.h"
#include "scenario.h"

#define NO_PARENT UINT32_MAX

enum ev_type {
    EV_ARRIVAL, EV_CLIENT, EV_PHASE, EV_TIMEOUT, EV_RETRY, EV_SERVICE_DONE, EV_DELIVER, EV_ANSWER,
    EV_HERD, EV_OCC_READ, EV_OCC_READ_RSP, EV_OCC_WRITE, EV_OCC_WRITE_RSP
};

/* One client of the `occ` model (the AWS backoff study). */
struct occ_client {
    uint32_t attempt; /* failed writes so far */
    uint32_t writes;
    bool done;
    struct backoff_state bs;
};

enum call_state { CALL_WAITING, CALL_BACKOFF };
enum key_state { KEY_NONE, KEY_IN_FLIGHT, KEY_STORED };
enum job_kind { JOB_EXECUTE, JOB_REPLAY };

/* Where an answer goes: the parent call and which of its attempts. */
struct reply_to {
    uint32_t call, gen, attempt;
};

struct request {
    rs_time t_start;
    uint32_t client;
    uint32_t refs;     /* calls, jobs and downward messages still alive */
    bool counted;      /* arrived at or after warmup */
    bool done;         /* has its outcome */
    uint8_t key_state; /* the server's idempotency-key store entry for it */
    uint8_t stored;    /* the stored answer's class */
    uint32_t side_effects;
    uint64_t n[]; /* attempts at each layer, then at the server: nlayers + 1 of them
                   * (the pool's object size is request_size) */
};

static inline size_t request_size(unsigned nlayers)
{
    return sizeof(struct request) + (nlayers + 1) * sizeof(uint64_t);
}

struct call {
    uint32_t gen;       /* bumped when freed: names this incarnation */
    uint32_t req;
    struct reply_to parent;
    uint32_t attempts;  /* made so far; the current one's number */
    uint8_t layer, state, last;
    bool admitted;      /* the breaker admitted the current attempt */
    uint32_t instance;  /* the copy of the layer this call runs on */
    uint32_t client;    /* its request's client (kept here: one cache miss fewer) */
    uint32_t breaker_gen;
    rs_time deadline_at; /* this call's effective deadline; RS_TIME_NEVER: none */
    rs_time attempt_start;
    evq_handle timer;   /* the pending timeout or retry */
    struct backoff_state bs;
    struct budget_call bc;
};

/* What a layer keeps at run time: budget and breaker states, one per scope
 * (client, instance or shared), and its counters. */
struct layer_rt {
    uint32_t ninstances;
    struct budget_state *budgets;
    uint32_t nbudgets;
    struct breaker_state *breakers;
    uint8_t *rings;       /* count windows, window_calls bytes per breaker */
    char *budget_extra;   /* the budget kind's extra states (budget_extra_size each) */
    struct window *breaker_windows; /* for the kinds that keep one */
    uint32_t nbreakers, n_open;
    uint64_t attempts, retries, timeouts, refused, short_circuited, transitions;
};

struct job {
    uint32_t req;
    uint32_t client;     /* its request's client (for prefetching its states) */
    uint8_t kind;
    struct reply_to parent;
    rs_time deadline_at; /* propagated from above; RS_TIME_NEVER: none */
};

/* An attempt or an answer crossing a hop with latency. */
struct msg {
    uint32_t req;        /* downward only */
    uint8_t layer;       /* downward: the layer it goes to; upward: the parent's layer */
    uint8_t cls;         /* upward: the answer */
    struct reply_to to;
    rs_time deadline_at; /* downward */
    rs_time retry_after; /* upward; -1: none */
};

struct sim {
    struct scenario sc;
    uint32_t replication;
    rs_time now;
    struct evq q;
    struct rng_set rng;
    struct metrics m;
    struct pool requests, calls, jobs, msgs;
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
    enum outage outage;   /* the active phase's outage mode */
    rs_time outage_retry_after;
    double slowdown;      /* the active phases' product */
    double tokens;        /* rate limiter */
    rs_time tokens_t;

    struct layer_rt lrt[SCENARIO_MAX_LAYERS];
    size_t sampled;       /* buckets whose layer levels are recorded */

    bool prefetch;        /* state too large for the cache: prefetch for the next event */
    volatile sig_atomic_t *stop; /* set by a signal: end the run early */
    bool interrupted;
    evq_handle *think;    /* closed loop with herds: each client's pending think */
    struct occ_client *occ; /* the occ model's clients */
    uint64_t occ_version;
};

/* load.c */
void load_start(struct sim *s);
void load_on_arrival(struct sim *s);
void load_on_client(struct sim *s, uint32_t client);
void load_on_phase(struct sim *s);
/* A logical request ended (the root call finished); o is its outcome. */
void load_request_done(struct sim *s, uint32_t req, enum outcome o);
void load_request_unref(struct sim *s, uint32_t req);

void load_on_herd(struct sim *s);

/* occ.c: the optimistic-concurrency model (server model = occ) */
int occ_init(struct sim *s);
void occ_start(struct sim *s);
void occ_dispatch(struct sim *s, enum ev_type type, uint32_t client, uint32_t aux);
/* Clients not done at the end (and their writes recorded in the attempts). */
uint64_t occ_finish(struct sim *s);

/* layer.c */
void layer_call_start(struct sim *s, uint32_t layer, uint32_t req, struct reply_to parent,
                      rs_time deadline_at);
/* A child (call or job) answered the parent's attempt; ignored when late.
 * retry_after < 0: none. */
void layer_on_answer(struct sim *s, struct reply_to to, enum errclass cls, rs_time retry_after);
/* Whether the parent is still waiting for that attempt's answer. */
bool layer_is_waiting(const struct sim *s, struct reply_to to);
void layer_on_timeout(struct sim *s, uint32_t call, uint32_t attempt);
void layer_on_retry(struct sim *s, uint32_t call);
/* Starts loading into the cache the states a new call of `client` at the
 * layer will touch (a hint; nothing changes). */
void layer_prefetch_client(const struct sim *s, uint32_t layer, uint32_t client);
/* The same for the budget and breaker states of call `call` (a hint). */
void layer_prefetch_call(const struct sim *s, uint32_t call);

/* net.c: the hop below layer `layer` (the layer that sent the attempt). */
void net_send_down(struct sim *s, uint32_t layer, uint32_t req, struct reply_to from,
                   rs_time deadline_at);
void net_answer_up(struct sim *s, uint32_t layer, struct reply_to to, enum errclass cls,
                   rs_time retry_after);
void net_on_deliver(struct sim *s, uint32_t msg);
void net_on_answer(struct sim *s, uint32_t msg);

/* server.c */
int server_init(struct sim *s);
void server_fini(struct sim *s);
void server_arrive(struct sim *s, uint32_t req, struct reply_to from, rs_time deadline_at);
void server_on_done(struct sim *s, uint32_t job);
void server_set_capacity(struct sim *s, uint32_t capacity);

#endif
