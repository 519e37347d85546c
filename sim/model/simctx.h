/*
 * simctx — the simulation context shared by the model modules (load, layer,
 * bulkhead, net, service, balancer, caching, hedging, occ) and the dispatch
 * loop in sim.c: struct sim (the engine context plus one state struct per
 * part, each declared in its part's header: load.h, service.h, layer.h,
 * caching.h, occ.h), the objects in flight, and the few functions and
 * inline helpers that need the whole of struct sim. Internal: not for
 * users of sim.h.
 *
 * Object graph of one logical request: a `request` (the operation the user
 * wants done) owns a root `call` at the clients' outermost layer; each
 * attempt of a call at layer L travels over layer L's hop (net) and becomes
 * a call at the next layer of the same edge, or a `job` at a replica of the
 * edge's service; answers travel back over the same hop. A job that calls
 * dependencies holds its worker while it waits; each dependency call starts
 * at the outermost layer of the edge (service → dependency), or goes to the
 * dependency directly when the edge has no layers. A child names its parent
 * by (index, generation, attempt number) — a job parent by its index with
 * REPLY_JOB set, and the call's slot for the attempt number — so an answer
 * that arrives after the parent gave up on that attempt, or after the parent
 * ended, is recognised as late and ignored. Calls, jobs and messages
 * carrying an attempt downward hold a reference on their request, which is
 * retired (and its attempts recorded) when the last one ends: memory follows
 * what is in flight.
 */
#ifndef RS_SIMCTX_H
#define RS_SIMCTX_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

#include "backoff.h"
#include "breaker.h"
#include "budget.h"
#include "cache.h"
#include "caching.h"
#include "errclass.h"
#include "evq.h"
#include "layer.h"
#include "load.h"
#include "metrics.h"
#include "occ.h"
#include "phasewin.h"
#include "pool.h"
#include "rng.h"
#include "service.h"
#include "config.h"
#include "sim.h"

#define NO_PARENT UINT32_MAX
#define REPLY_JOB 0x80000000u  /* reply_to.call names a job, not a call (pools stay far
                                * below 2^31 live objects: that is > 100 GB of them) */
#define NO_LAYER UINT8_MAX     /* a job called directly by another job */
#define FANOUT_SLOTS 64        /* reply_to.attempt of a dependency call: step · 64 + slot */
/* Timeouts of layer L (L < LANE_LAYERS) go to lane L, retries to lane
 * LANE_LAYERS + L; deeper layers' timers use the heaps. */
#define LANE_LAYERS (EVQ_LANES / 2)

_Static_assert(SCENARIO_MAX_FANOUT <= FANOUT_SLOTS, "a call's slot fits in its attempt number");
_Static_assert(SCENARIO_MAX_LAYERS < NO_LAYER, "layer indices fit in uint8_t beside NO_LAYER");
_Static_assert(EVQ_LANES == 2 * LANE_LAYERS, "timeout and retry lanes, one each per layer");
_Static_assert(SCENARIO_MAX_SERVICES * SCENARIO_MAX_REPLICAS <= UINT16_MAX, "a job's replica");
_Static_assert(SCENARIO_MAX_FANOUT <= UINT8_MAX, "a job's pending count");

enum ev_type {
    EV_ARRIVAL, EV_CLIENT, EV_PHASE, EV_TIMEOUT, EV_RETRY, EV_SERVICE_DONE, EV_DELIVER, EV_ANSWER,
    EV_HERD, EV_OCC_READ, EV_OCC_READ_RSP, EV_OCC_WRITE, EV_OCC_WRITE_RSP, EV_POOL_GRANT,
    EV_TRACE, EV_CACHE_EXPIRE, EV_CANCEL
};
#define EV_NTYPES (EV_CANCEL + 1) /* the last type's + 1: tables indexed by type are this long */

/* CALL_CANCELLED: cancelled while its bulkhead grant was on its way; the
 * grant ends it. */
enum call_state { CALL_WAITING, CALL_BACKOFF, CALL_POOL_WAIT, CALL_POOL_GRANTED, CALL_CANCELLED };

/* What an attempt became below, to cancel it: a call, a job (REPLY_JOB
 * set) or a message still on the hop (CHILD_MSG set), named with its
 * generation (a message's is 0: it is found before it is freed). */
#define NO_CHILD UINT32_MAX
#define CHILD_MSG 0x40000000u
struct child {
    uint32_t idx, gen;
};

/* One copy of a hedged call (hedge.h): what a plain call keeps for its one
 * attempt in flight, per copy. */
struct copy {
    rs_time start;       /* when it was sent */
    uint32_t child, child_gen; /* what it became below (cancel); NO_CHILD: nothing yet */
    uint32_t hung_at;    /* as struct call's */
    uint32_t breaker_gen;
    uint32_t rep;        /* 1 + the replica it reached; 0: none yet */
    bool open;           /* sent, not answered, not abandoned */
    bool admitted;       /* the breaker admitted it */
    bool hedge;          /* sent as a hedge (not first, not a retry after a backoff) */
    struct budget_call bc; /* what the budget holds for this copy (envoy: a retry's place) */
};

/* A hedged call's copies, by attempt number (copy[k - 1] is attempt k). */
struct hedge_rec {
    uint32_t nopen;
    bool stop;           /* no more hedges by the timer (the cap, budget or breaker refused
                          * one) until a retry after a backoff */
    struct copy copy[];
};
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
    uint64_t n[]; /* attempts at each layer, then at the entry service: nlayers + 1 of them;
                   * with caches one more slot, the request's key (request_key); then the
                   * hedges at each hedged layer (sim.hedge_slot; the pool's object size is
                   * request_size) */
};

static inline size_t request_size(unsigned nlayers, bool keyed, unsigned nhedged)
{
    return sizeof(struct request) + (nlayers + 1 + keyed + nhedged) * sizeof(uint64_t);
}

struct call {
    uint32_t gen;       /* bumped when freed: names this incarnation */
    uint32_t req;
    struct reply_to parent;
    uint32_t attempts;  /* made so far; the current one's number */
    uint8_t layer, state, last;
    bool admitted;      /* the breaker admitted the current attempt */
    bool slot;          /* the current attempt holds a bulkhead slot (plain bools: a
                         * bit-field's read-modify-write stalled on the new call) */
    union {             /* never both: one is before an attempt is sent, one after */
        struct {
            uint32_t wait_prev, wait_next; /* in its bulkhead's wait list (CALL_POOL_WAIT) */
        };
        uint32_t hung_at; /* 1 + the replica that swallowed the current attempt (outage =
                           * hang), which counts it as outstanding until the call stops
                           * waiting; 0: none */
    };
    uint32_t instance;  /* the copy of the layer this call runs on */
    uint32_t client;    /* its request's client (kept here: one cache miss fewer) */
    uint32_t breaker_gen;
    rs_time deadline_at; /* this call's effective deadline; RS_TIME_NEVER: none */
    rs_time attempt_start;
    evq_handle timer;   /* the pending timeout or retry (hedged: the next hedge or the deadline) */
    uint32_t child, child_gen; /* layers with cancel: what the current attempt became below */
    uint32_t hx;        /* hedged layers: its copies (s->hedges) */
    struct backoff_state bs;
    struct budget_call bc;
};

/* JOB_HIT: a cache hit's work; JOB_JOINED: waiting for another execution's
 * miss of the same key (coalesce), the worker held but not working. */
enum job_stage { JOB_QUEUED, JOB_LOCAL, JOB_CALLS, JOB_AFTER, JOB_HIT, JOB_JOINED };

struct job {
    uint32_t req;
    uint32_t gen;        /* bumped when freed: names this incarnation */
    uint16_t rep;        /* its replica (index into s->services.reps) */
    uint8_t kind;
    uint8_t stage;       /* enum job_stage */
    uint8_t step;        /* the dependency being called (JOB_CALLS) */
    uint8_t via;         /* the layer whose hop delivered it; NO_LAYER: a job called it */
    uint8_t pending;     /* calls of this step still out (each answers at most once) */
    bool loading;        /* its cache missed: it loads the key (cache_fill or abandon at the end) */
    bool cancelled;      /* cancelled while queued: left the queue, freed when the ring reaches it */
    uint8_t nkids;       /* calls of this step in kids */
    uint32_t kids;       /* the step's calls through a cancelling layer (s->kids); NO_CHILD: none */
    struct reply_to parent;
    uint32_t client;     /* its request's client (for prefetching its states) */
    rs_time deadline_at; /* propagated from above; RS_TIME_NEVER: none */
};

/* An attempt or an answer crossing a hop with latency. */
struct msg {
    uint32_t req;        /* downward only */
    uint8_t layer;       /* downward: the layer that sent it (unused upward) */
    uint8_t cls;         /* upward: the answer */
    struct reply_to to;
    rs_time deadline_at; /* downward */
    rs_time retry_after; /* upward; -1: none */
    rs_time cancel_at;   /* downward: when its cancellation arrives; RS_TIME_NEVER: none */
};

/* The run: the engine context (scenario, clock, event queue, random
 * streams, metrics, the pools of objects in flight, the phase boundaries,
 * and what stops a run), then one state struct per part of the model,
 * each declared in that part's header and owned by its .c files. */
struct sim {
    struct scenario sc;
    uint32_t replication;
    rs_time now;
    struct evq q;
    struct rng_set rng;
    struct metrics m;
    struct pool requests, calls, jobs, msgs;
    struct pool hedges;   /* hedge_rec, for calls of hedged layers */
    struct pool kids;     /* a job's calls of its step, SCENARIO_MAX_FANOUT struct child each */
    struct pool joins;    /* join_node (caching.h) */
    uint64_t in_flight;   /* logical requests without an outcome (all) */
    rs_time *phase_times; /* sorted distinct phase boundaries */
    struct phasewin pw;   /* phases.csv's windows (phasewin.h) */
    uint32_t nphase_times;

    struct load_rt load;          /* load.h */
    struct cache_set caching;     /* caching.h */
    struct service_set services;  /* service.h */
    struct layer_set layers;      /* layer.h */
    struct occ_rt occ;            /* occ.h */

    bool prefetch;        /* state too large for the cache: prefetch for the next event */
    volatile sig_atomic_t *stop; /* set by a signal: end the run early */
    bool interrupted;
    double live_limit;   /* bytes of objects in flight (sim_set_live_limit) */
    sim_progress_fn progress; /* sim_run's callback and its argument, for sim_checkpoint */
    void *progress_user;
    bool halt;           /* a checkpoint asked the run to stop */
    bool cut;            /* an event stopped at a checkpoint before its work was done */
    char limit[200];     /* why the run stopped at a limit, or "" */
    rs_time end;         /* where the run ended: sim_end */
    uint64_t drain_left; /* requests in flight when a drain reached drain_limit */
};

/* Counts one event of layer's count c now: over the run, and over the window
 * if now is at or after the warm-up's end (metrics_count's rule). O(1). */
static inline void layer_count(struct sim *s, uint32_t layer, enum layer_counter c)
{
    struct layer_rt *rt = &s->layers.lrt[layer];
    rt->n[c]++;
    rt->win[c] += s->now >= s->sc.warmup;
}

/* layer.c: the attempt `from` sent by `layer` became ch (a call, a job, a
 * message on the hop; NO_CHILD: turned away) at replica rep1 - 1 (0: not a
 * replica); only layers that cancel or hedge keep it (one test inline for
 * the others). */
void layer_note_child_slow(struct sim *s, uint32_t layer, struct reply_to from, struct child ch,
                           uint32_t rep1);
static inline void layer_note_child(struct sim *s, uint32_t layer, struct reply_to from,
                                    struct child ch, uint32_t rep1)
{
    if (s->layers.lrt[layer].tracks)
        layer_note_child_slow(s, layer, from, ch, rep1);
}

/* The key of request r (only with caches). */
static inline uint32_t request_key(const struct sim *s, const struct request *r)
{
    return (uint32_t)r->n[s->sc.nlayers + 1];
}

/* occ.c: the occ model's events (EV_OCC_*; the rest is in occ.h). */
void occ_dispatch(struct sim *s, enum ev_type type, uint32_t client, uint32_t aux);

/* sim.c: where a run may stop (every SIM_PROGRESS_EVENTS events, and
 * inside an event whose work grows with the scenario, such as a herd):
 * reports progress, then says whether the stop flag is set or the objects
 * in flight passed the limit (then s->halt is set and the run ends, at the
 * time reached, incomplete). */
bool sim_checkpoint(struct sim *s);

/* balancer.c: the replica of service svc an attempt goes to (service.h's
 * balancer_choose when it has more than one). */
static inline uint32_t balancer_pick(struct sim *s, uint32_t svc)
{
    return s->services.svc[svc].n == 1 ? s->services.svc[svc].first : balancer_choose(s, svc);
}

#endif
