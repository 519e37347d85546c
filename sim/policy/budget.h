/*
 * budget — retry budgets and client-side throttling, as the libraries that
 * ship them do it (docs/budgets.md). One state per scope (client,
 * instance or shared); the layer asks before every attempt (adaptive and
 * sre may reject even first attempts locally) and before every retry, and
 * reports every result. A refused retry or attempt ends the call
 * `throttled`. Kinds (a descriptor table, like backoff):
 *   grpc          tokens start at max; −1 per failed attempt, +ratio per
 *                 success; a retry only while tokens > max/2 (A6)
 *   ratio         Finagle / Linkerd: each call deposits 1000, a retry withdraws
 *                 W = ⌊1000/percent⌋; a retry is allowed while the balance over
 *                 the last ttl (10 slices) plus a reserve of min_per_s·ttl·W
 *                 covers W
 *   envoy         concurrent retries ≤ max(⌊percent·active calls⌋, min_concurrency);
 *                 envoy-max: the plain max_retries = 3 concurrent limit
 *   aws-standard  a 500-token quota: a retry costs 5 (10 after a timeout);
 *                 success refunds the last retry's cost, or adds 1 if the
 *                 call needed no retry
 *   aws-adaptive  the CUBIC client-side rate limiter (botocore adaptive.py):
 *                 after a throttling answer (429) every attempt needs a token
 *                 from a bucket filled at the CUBIC rate; none: throttled
 *                 (aws-sdk-go-v2's FailOnNoAttemptTokens)
 *   sre           SRE book client throttling: each attempt is rejected
 *                 locally with probability max(0, (requests − k·accepts)/
 *                 (requests + 1)) over the window (ttl, 12 slices); retries
 *                 only while retries/requests < percent
 *   bucket        Brooker's token bucket: deposit per call (or per success),
 *                 a retry costs `cost` and needs more than 1 token
 * Every operation is O(1) (O(slices) when a window moves).
 */
#ifndef RS_BUDGET_H
#define RS_BUDGET_H

#include <gsl/gsl_rng.h>
#include <stdbool.h>
#include <stddef.h>

#include "errclass.h"
#include "units.h"
#include "window.h"

struct budget_params {
    double max_tokens, token_ratio;  /* grpc */
    double percent;                  /* ratio, envoy (fraction of active calls), sre (retry ratio) */
    double min_per_s;                /* ratio */
    rs_time ttl;                     /* ratio window; sre window */
    double min_concurrency;          /* envoy */
    double capacity, cost, timeout_cost; /* aws-standard; bucket (capacity, cost) */
    double deposit;                  /* bucket */
    bool deposit_on_success;         /* bucket */
    double k;                        /* sre */
};

enum budget_id { BUDGET_NONE, BUDGET_GRPC, BUDGET_RATIO, BUDGET_ENVOY, BUDGET_AWS_STANDARD,
                 BUDGET_AWS_ADAPTIVE, BUDGET_SRE, BUDGET_BUCKET };

/* What a kind does (budget.c): its extra state's size and its operations,
 * each optional. */
struct budget_ops;

/* A kind: a const descriptor in budget_kinds, looked up by name. Kinds that
 * differ only in their defaults (ratio, finagle, linkerd) share one id and
 * one set of operations. */
struct budget_kind {
    const char *name;
    enum budget_id id;
    const char *source;
    const char *version; /* the upstream release or commit it follows */
    struct budget_params defaults;
    const struct budget_ops *ops;
};

extern const struct budget_kind budget_kinds[];
extern const unsigned budget_nkinds;
const struct budget_kind *budget_find(const char *name);

/* aws-adaptive's rate estimate and token bucket fill (botocore). */
struct budget_adaptive {
    double measured, fill, cap, last_max, cnt;
    rs_time last_bucket, last_throttle, last_refill;
    bool enabled;
};

/* A budget's state: 24 bytes, so that a million clients' states take 24 MB;
 * what only some kinds keep lives outside, in the kind's extra state. */
struct budget_state {
    double tokens;              /* grpc, aws-standard (capacity), bucket, adaptive bucket */
    uint32_t active_calls, active_retries; /* envoy */
    union {
        struct window *w;       /* ratio: [0] balance; sre: [0] requests [1] accepts [2] retries */
        struct budget_adaptive *ad; /* aws-adaptive */
    };
};

/* What a call remembers for its budget. */
struct budget_call {
    bool retry_active; /* envoy: the current attempt is a counted retry */
    double last_cost;  /* aws-standard: what the last retry acquired */
};

/* The bytes of the kind's extra state, kept outside the state so that
 * states of other kinds stay small: a sliding window (ratio, sre), the
 * adaptive estimate (aws-adaptive), or 0. */
size_t budget_extra_size(const struct budget_kind *k);

/* The bytes one state of the kind takes, its extra state included. */
size_t budget_state_size(const struct budget_kind *k);

/* extra: budget_extra_size(k) bytes for the state's own use, or NULL when
 * that is 0. */
void budget_state_init(const struct budget_kind *k, const struct budget_params *p,
                       struct budget_state *s, void *extra);

/* A call starts / ends at the layer (deposits; envoy's active count). */
void budget_call_start(const struct budget_kind *k, const struct budget_params *p,
                       struct budget_state *s, rs_time now);
void budget_call_end(const struct budget_kind *k, struct budget_state *s, struct budget_call *c);
/* One attempt of a call ended without a result (a hedge that lost, or was
 * abandoned): what the budget holds for that attempt alone is released
 * (envoy: its place among the active retries). c is that attempt's own
 * record (a hedged call keeps one per copy). */
void budget_attempt_end(const struct budget_kind *k, struct budget_state *s, struct budget_call *c);

/* Before any attempt: false when throttled locally (aws-adaptive, sre). */
bool budget_admit(const struct budget_kind *k, const struct budget_params *p,
                  struct budget_state *s, rs_time now, gsl_rng *r);

/* Before a retry of a failure of class cls: false when the budget refuses;
 * when it allows, the retry is charged. */
bool budget_allow_retry(const struct budget_kind *k, const struct budget_params *p,
                        struct budget_state *s, struct budget_call *c, rs_time now,
                        enum errclass cls);

/* An attempt's result (ok, business or a failure class); retried: the call
 * has made a retry; failure_counts: the class is one this layer retries. */
void budget_result(const struct budget_kind *k, const struct budget_params *p,
                   struct budget_state *s, struct budget_call *c, rs_time now, enum errclass cls,
                   bool retried, bool failure_counts);

/* A level to plot: tokens, quota, retries available, or the reject
 * probability (sre), depending on the kind. */
double budget_level(const struct budget_kind *k, const struct budget_params *p,
                    struct budget_state *s, rs_time now);

#endif
