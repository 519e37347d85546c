/*
 * capacity — what a scenario asks of each service before any trigger: the
 * offered rate, the mean time an execution holds its worker and the
 * utilisation per replica, plus the figures the lint rules compare (each
 * layer's worst-case time, the worst path's attempt product). Pure
 * arithmetic on a validated struct scenario; nothing is simulated, drawn or
 * allocated.
 *
 * The baseline is the scenario without phases, herds or retries:
 *   - requests/s: `[load] rate` (open loop); for a closed loop
 *     clients / (mean think + the entry's response estimate); unknown (NaN)
 *     for a trace, whose rate is in its file;
 *   - visits: executions of a service per request, first attempts only:
 *     1 at the entry, plus visits(caller) × the share of its executions
 *     that call through its cache × k for every `calls = S*k`;
 *   - hold: a miss (or a service without a cache) takes mean(service) +
 *     Σ over `calls` of the callee's response estimate +
 *     mean(service_after); a callee's response estimate is the mean latency
 *     of the hops of its edge's layers, both ways, plus its own hold. A hit
 *     takes the cache's mean `hit`. No queueing, no retries, and k parallel
 *     calls cost one response (their maximum is longer): a lower bound.
 *     `degrade` is taken at its unloaded value (factor 1); limiters and
 *     injected errors are ignored;
 *   - hit ratio: for an unbounded cache, the steady state of a TTL cache
 *     under Poisson lookups whose misses take the miss's hold to fill
 *     (capacity_hit_ratio), counting only the lookups of the service
 *     itself (a cache shared with other services hits more); for a bounded
 *     one, 0 (every lookup a miss). Visits, hit ratios and a closed loop's
 *     rate depend on each other: 32 rounds from cold caches;
 *   - utilisation = requests/s × visits × hold / (workers × replicas).
 * The occ model has no workers: its services get no utilisation (NaN).
 *
 * Costs: O(services · calls · layers + layers · attempts).
 */
#ifndef RS_CAPACITY_H
#define RS_CAPACITY_H

#include <stdbool.h>

#include "config.h"

struct capacity_service {
    double visits;  /* executions per logical request (first attempts) */
    double rate;    /* executions per second; NaN when unknown */
    double hold_ns; /* mean time an execution holds its worker */
    double slots;   /* workers × replicas */
    double hit;     /* the estimated cache hit ratio; 0 without a cache */
    double util;    /* rate × hold / slots; NaN for occ or an unknown rate */
};

struct capacity {
    double request_rate; /* logical requests per second; NaN for a trace */
    double entry_ns;     /* closed loop: the response estimate used for the rate */
    struct capacity_service svc[SCENARIO_MAX_SERVICES];
    /* A layer's call at worst: attempts × timeout + the largest delays its
     * backoff can draw between them, at most its deadline; INFINITY when it
     * has neither timeout nor deadline. Retry-After hints are not counted. */
    double layer_worst_ns[SCENARIO_MAX_LAYERS];
    double backoff_ns[SCENARIO_MAX_LAYERS]; /* the largest total of its backoff delays */
    /* The path from the clients whose layers multiply attempts the most
     * (fan-outs are baseline load, not retries, and are left out). */
    double amplification;
    unsigned path[SCENARIO_MAX_SERVICES]; /* the services along it, entry first */
    unsigned npath;
};

/* Fills *c from sc, which scenario validation has accepted (its calls form
 * a DAG, its names are resolved). */
void capacity_estimate(const struct scenario *sc, struct capacity *c);

/* The steady-state hit ratio of service u's cache at `lookups` per second
 * when a miss takes miss_ns to fill it, and in *load the share of
 * executions that call through (1 − the hit ratio; without coalescing
 * every miss calls, with it one per fill). 0 (and *load 1) without a
 * cache, for a bounded cache or a rate that is not positive; 1 (and
 * *load 0) for an unbounded cache without a TTL. Otherwise, with mean TTL
 * T, popularity p_k and x_k = lookups·p_k·T, y_k = lookups·p_k·miss: a
 * key's cycle is a miss that takes `miss` (the lookups meanwhile miss as
 * well), T of hits and the wait for the next lookup, so the hit ratio is
 * Σ_k p_k·x_k / (1 + y_k + x_k). O(keys). */
double capacity_hit_ratio(const struct scenario *sc, unsigned u, double lookups, double miss_ns, double *load);

/* The product of the attempts of the layers on the edge from → to (from:
 * SCENARIO_CLIENT or a service); 1 when it has none. */
double capacity_edge_attempts(const struct scenario *sc, int from, unsigned to);

/* The largest total of the delays layer l's backoff can draw before its
 * retries 1 … attempts − 1, after a timeout, in nanoseconds: each kind's
 * formula with its uniform draw at the top of [0, 1). */
double capacity_backoff_max_ns(const struct layer_cfg *l);

#endif
