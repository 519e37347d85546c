/*
 * layer — the state of the client-side layers of a run (layer.c says how a
 * call at a layer makes its attempts; bulkhead.c, hedging.c and net.c are
 * its bulkhead, its hedging and the hop below it): each layer's budget and
 * breaker states, counts, hedging window and bulkhead slots, its
 * neighbours on its edge, the clients' outermost layer, each hop's phase
 * latency and loss, and where each hedged layer counts its hedges in a
 * request. Internal to the model: simctx.h embeds struct layer_set in
 * struct sim. Memory is O(layers · states) (layer_init allocates the
 * budget and breaker states).
 */
#ifndef RS_LAYER_H
#define RS_LAYER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "breaker.h"
#include "budget.h"
#include "config.h"
#include "errclass.h"
#include "units.h"
#include "window.h"

struct sim;
struct reply_to;
struct child;
struct hedge_rec;
struct dist;

/* Percentile hedging: the window of latencies, how often the delay is
 * recomputed (every HEDGE_REFRESH new ones; none before HEDGE_MIN_SAMPLES),
 * and the extra-load cap's window of HEDGE_CAP_SLOTS one-second slots. */
#define HEDGE_WINDOW 1000
#define HEDGE_REFRESH 100
#define HEDGE_MIN_SAMPLES 100
#define HEDGE_CAP_SLOTS 10

/* A layer's counts (layers.csv), counted by layer_count. */
enum layer_counter {
    LC_ATTEMPTS, LC_RETRIES, LC_TIMEOUTS, LC_REFUSED, LC_SHORT_CIRCUITED, LC_TRANSITIONS,
    LC_BULKHEADED, LC_ABANDONED, LC_HEDGES, LC_HEDGE_WINS, LC_HEDGES_SUPPRESSED, LC_N
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
    union { /* over the whole run (the conservation check) */
        struct {
            uint64_t attempts, retries, timeouts, refused, short_circuited, transitions,
                bulkheaded;
            uint64_t abandoned; /* attempts closed without a result: hedges that lost,
                                 * attempts out when their call ended or was cancelled */
            uint64_t hedges, hedge_wins, hedges_suppressed;
        };
        uint64_t n[LC_N];
    };
    uint64_t win[LC_N];   /* the same over the window: events at or after warmup */
    uint64_t results;     /* attempts whose result was recorded (answer, timeout, bulkhead) */
    bool tracks;          /* it cancels or hedges: it keeps what its attempts became */
    /* percentile hedging: the last HEDGE_WINDOW latencies of answered copies
     * (a ring), the delay they give, and 1-s slots of first copies and
     * hedges for the extra-load cap */
    rs_time *lat_ring;
    uint32_t lat_n, lat_pos, lat_new;
    rs_time hedge_delay;
    uint64_t cap_first[HEDGE_CAP_SLOTS], cap_hedges[HEDGE_CAP_SLOTS];
    int64_t cap_slot[HEDGE_CAP_SLOTS];
    uint8_t next, prev;   /* the next layer down and up on its edge; NO_LAYER: none */
    /* bulkhead, per instance: slots taken, and the FIFO of attempts waiting */
    uint32_t *slots_used, *wait_head, *wait_tail, *wait_len;
};

_Static_assert(offsetof(struct layer_rt, hedges_suppressed) ==
                   offsetof(struct layer_rt, n) + sizeof(uint64_t) * (LC_N - 1),
               "struct layer_rt: the named counts and n[] must coincide");

struct layer_set {
    struct layer_rt lrt[SCENARIO_MAX_LAYERS];
    uint8_t client_top;   /* the clients' outermost layer */
    uint8_t hedge_slot[SCENARIO_MAX_LAYERS]; /* hedged layers: their index in request.n */
    unsigned nhedged;
    size_t sampled;       /* buckets whose layer levels are recorded (sim.c) */
    bool hop_phases;      /* some phase targets a layer's hop */
    double hop_loss[SCENARIO_MAX_LAYERS];            /* from hop phases */
    const struct dist *hop_latency[SCENARIO_MAX_LAYERS];
};

/* layer.c: calls at a layer, their attempts, timeouts and retries. */
/* Returns the new call (stale at once if it ended at once). */
struct child layer_call_start(struct sim *s, uint32_t layer, uint32_t req, struct reply_to parent,
                              rs_time deadline_at);

/* A cancellation reached call ci of generation gen (EV_CANCEL). */
void layer_on_cancel(struct sim *s, uint32_t ci, uint32_t gen);
/* The replica of service svc the copy `from` of a hedged call goes to:
 * the balancer's, or for a hedge one no other copy of its call reached. */
uint32_t layer_hedge_replica(struct sim *s, uint32_t svc, struct reply_to from);
/* Replica rep swallowed the attempt `from` (outage = hang); false when its
 * caller no longer waits for it. */
bool layer_mark_hung(struct sim *s, struct reply_to from, uint32_t rep);
/* Allocates each layer's budget and breaker states; 0, or -1 with the
 * reason in err. O(states). */
int layer_init(struct sim *s, char *err, size_t errsz);
/* Frees them; accepts a run that failed half-way through sim_create. */
void layer_fini(struct sim *s);
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

/* bulkhead.c: a layer's slots for attempts in flight (`concurrency`). */
enum bulkhead_verdict { BULKHEAD_TAKEN, BULKHEAD_QUEUED, BULKHEAD_FULL };
int bulkhead_init(struct sim *s, char *err, size_t errsz);
void bulkhead_fini(struct sim *s);
/* A slot for call ci's current attempt: taken (send it), queued (it waits
 * with a timer), or full (the layer fails the attempt with `bulkhead`). */
enum bulkhead_verdict bulkhead_take(struct sim *s, uint32_t ci);
/* Call ci's waiting attempt leaves the queue (its wait timer fired). */
void bulkhead_leave_queue(struct sim *s, uint32_t ci);
/* Call ci's attempt ended and it holds a slot (c->slot; callers test it
 * inline): the slot goes to the first waiter or back to the instance. */
void bulkhead_release(struct sim *s, uint32_t ci);

/* layer.c: a bulkhead slot was handed to call's waiting attempt: send it now
 * (EV_POOL_GRANT; ignored if the attempt ended meanwhile). */
void layer_bulkhead_grant(struct sim *s, uint32_t call, uint32_t attempt);

/* hedging.c: a hedged layer's percentile delay, extra-load cap and
 * replica preference (see its header). */
int hedging_init(struct sim *s, char *err, size_t errsz);
void hedging_fini(struct sim *s);
/* The delay before the next hedge of the layer now; RS_TIME_NEVER: none. */
rs_time hedging_delay(const struct sim *s, uint32_t layer);
/* A copy answered ok or business after lat (percentile window). */
void hedging_latency(struct sim *s, uint32_t layer, rs_time lat);
/* A copy was sent: a hedge, a call's first copy, or a retry (the cap's counts). */
void hedging_count(struct sim *s, uint32_t layer, bool hedge, bool first);
/* Whether one more hedge stays within hedge_max_extra. */
bool hedging_cap_allows(struct sim *s, uint32_t layer);
/* The replica of svc a copy goes to: pick, or the next one none of the
 * call's n copies in h reached. */
uint32_t hedging_unused_replica(const struct sim *s, const struct hedge_rec *h, uint32_t n,
                                uint32_t svc, uint32_t pick);

/* net.c: the hop below layer `layer` (the layer that sent the attempt). */
void net_send_down(struct sim *s, uint32_t layer, uint32_t req, struct reply_to from,
                   rs_time deadline_at);
void net_answer_up(struct sim *s, uint32_t layer, struct reply_to to, enum errclass cls,
                   rs_time retry_after);
void net_on_deliver(struct sim *s, uint32_t msg);
void net_on_answer(struct sim *s, uint32_t msg);
/* A cancellation of what an attempt of `layer` became goes down its hop. */
void net_cancel_down(struct sim *s, uint32_t layer, uint32_t child, uint32_t child_gen);
/* Each hop's added loss and latency from the phases active now (load.c
 * calls it at each phase boundary). O(layers + phases). */
void net_apply_phases(struct sim *s);

#endif
