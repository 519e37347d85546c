/*
 * sim — one simulation run of a scenario.
 *
 * sim_create builds the run (RNG streams for the replication, pools, event
 * queue, metrics); sim_run dispatches events in (time, sequence) order until
 * the scenario's duration (with [run] drain: arrivals stop there and the
 * run goes on until every request has an outcome, for at most
 * drain_limit more; then to the end of that bucket), then checks that every logical request that
 * started has exactly one outcome or is still in flight. Nothing here prints
 * or exits; progress goes through a callback. A run is single-threaded and
 * deterministic: the same scenario, seed and replication give the same
 * metrics. Cost per event is O(log pending events); memory follows what is
 * in flight plus the metrics' buckets.
 */
#ifndef RS_SIM_H
#define RS_SIM_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cache.h"
#include "metrics.h"
#include "config.h"

struct sim;

/* Called every SIM_PROGRESS_EVENTS events with the simulated time
 * reached: often enough that a wall-clock limit checked there holds within
 * milliseconds however slow the events, so it must be cheap (a progress
 * line throttles itself). */
#define SIM_PROGRESS_EVENTS 1024u
typedef void (*sim_progress_fn)(void *user, rs_time now, rs_time duration, uint64_t events);

/* Returns the run, or NULL with a message in err. The scenario is copied. */
struct sim *sim_create(const struct scenario *sc, uint32_t replication, char *err, size_t errsz);
void sim_destroy(struct sim *s);

/* Where an open loop's arrivals come from when the scenario has a trace
 * (sc->trace, read as sc->trace_format says): its rows, one at a time, as
 * the run reaches them. The model opens nothing: io/trace.c implements this
 * over a file or a built-in trace (trace_arrivals, trace_sim_create).
 *   next   the next row: returns 1 with its time in *t (ns) and, for a
 *          trace of rates, its rate per second in *rate; 0 at the end; -1
 *          on a bad row, with a message in err (then the trace ends there).
 *   close  frees ctx; called once, by sim_destroy. May be NULL.
 * Each call costs what the reader's row costs; the run holds one row. */
struct arrival_source {
    int (*next)(void *ctx, rs_time *t, double *rate, char *err, size_t errsz);
    void (*close)(void *ctx);
    void *ctx;
};
/* Hands the run its arrivals, before sim_run; the run owns them from then
 * on (sim_destroy closes them). Required for an open loop with a trace
 * (sim_run refuses to start without); otherwise the source is unused but
 * still closed. At most once per run. */
void sim_set_arrivals(struct sim *s, struct arrival_source src);

/* Runs to the end. Returns 0, or -1 with a message in err when an invariant
 * broke (a bug, not bad input). */
int sim_run(struct sim *s, sim_progress_fn progress, void *user, char *err, size_t errsz);

/* The memory of objects in flight (requests, calls, jobs, messages, joins,
 * hedges and events) a run may hold before it stops, incomplete, with
 * sim_limit saying so: SIM_MAX_LIVE_BYTES unless set. Checked, as the stop
 * flag is, every SIM_PROGRESS_EVENTS events. What the scenario itself allocates is bounded by check
 * (sim_footprint, SCENARIO_MAX_STATE_BYTES). */
#define SIM_MAX_LIVE_BYTES 4e9
void sim_set_live_limit(struct sim *s, double bytes);
/* The default for runs created from now on (the command line's
 * --max-memory; set before any run starts). */
void sim_set_default_live_limit(double bytes);
double sim_default_live_limit(void);
/* NULL, or why the run stopped early at a limit (a sentence, no newline). */
const char *sim_limit(const struct sim *s);
/* The bytes of objects in flight now (what the limit above compares). */
double sim_live_bytes(const struct sim *s);

/* What sim_create allocates for the scenario before the first event, by
 * part (budgets, breakers, bulkheads, caches, clients, replicas, time
 * series: see footprint.c); part may be NULL. Returns the total. */
#define SIM_FOOTPRINT_PARTS 7
double sim_footprint(const struct scenario *sc, double part[SIM_FOOTPRINT_PARTS]);
const char *sim_footprint_part_name(int i);
/* The [run] or [load] key that scales part i (NULL: a per-layer part,
 * which each layer's own keys scale: see below). */
const char *sim_footprint_part_key(int i);
/* How many budget or breaker states (or, SCOPE_INSTANCE, bulkheads) layer
 * l has with this scope: one, one per client, or one per instance. */
uint32_t sim_layer_states(const struct scenario *sc, const struct layer_cfg *l, enum scope scope);
/* One layer's share of three of the parts, for messages naming its keys. */
double sim_layer_budget_bytes(const struct scenario *sc, const struct layer_cfg *l);
double sim_layer_breaker_bytes(const struct scenario *sc, const struct layer_cfg *l);
double sim_layer_bulkhead_bytes(const struct scenario *sc, const struct layer_cfg *l);

/* A flag (set by a signal handler) that makes sim_run stop at the next
 * batch of SIM_PROGRESS_EVENTS events; the run then ends at the time reached, incomplete. */
void sim_set_stop(struct sim *s, volatile sig_atomic_t *flag);
/* Whether the run reached its full duration. */
bool sim_complete(const struct sim *s);

const struct metrics *sim_metrics(const struct sim *s);
const struct scenario *sim_scenario(const struct sim *s);
uint32_t sim_replication(const struct sim *s);

/* One layer's counts over the window, events at or after warmup (layers.csv). */
struct sim_layer_totals {
    uint64_t attempts, retries, timeouts, refused, short_circuited, transitions, bulkheaded;
    uint32_t instances, budget_states, breaker_states;
    uint64_t hedges, hedge_wins, hedges_suppressed, abandoned;
};
void sim_layer_totals(const struct sim *s, unsigned layer, struct sim_layer_totals *t);

/* One row of services.csv: replica `replica` (1-based) of service `svc`,
 * or with replica 0 the service's total, over bucket `bucket`. Levels are
 * time averages. Only for scenarios with services (scenario.graph). */
struct sim_service_row {
    uint64_t arrivals, started, completed, rejected, wasted, dep_calls;
    double queue_len, busy, working, workers;
};
bool sim_service_row(const struct sim *s, unsigned svc, unsigned replica, size_t bucket,
                     struct sim_service_row *row);
/* The same over the whole run after warmup (summary.csv). */
void sim_service_totals(const struct sim *s, unsigned svc, struct sim_service_row *row);

/* One row of caches.csv: cache `cache` over bucket `bucket` (counts, and
 * the entries at the bucket's end). Only for scenarios with caches. */
struct sim_cache_row {
    struct cache_counts n;
    uint64_t entries;
};
bool sim_cache_row(const struct sim *s, unsigned cache, size_t bucket, struct sim_cache_row *row);
/* Hits / lookups of cache `cache` after warmup (summary.csv); 0 without lookups. */
double sim_cache_hit_ratio(const struct sim *s, unsigned cache);
/* The most misses that were ever in flight for one key of the cache. */
uint32_t sim_cache_max_loading(const struct sim *s, unsigned cache);

/* How far a run of sc may go: its duration, or with [run] drain its
 * duration + drain_limit (clamped to RS_TIME_LIMIT). What the time series
 * are allocated for. O(1). */
rs_time sim_horizon(const struct scenario *sc);
/* Where the run ended: the duration; with drain, the end of the bucket in
 * which the last request got its outcome (the duration if none was left
 * then), or the horizon when the drain reached drain_limit; the time
 * reached when interrupted. The time series end there. */
rs_time sim_end(const struct sim *s);
/* With drain: the requests (counted or not) still in flight when the drain
 * reached drain_limit; 0 otherwise. */
uint64_t sim_drain_left(const struct sim *s);

/* Logical requests counted in the totals (arrived at or after warmup) that
 * had no outcome when the run ended. */
uint64_t sim_in_flight(const struct sim *s);

/* Requests, attempts, executions, messages and joins alive now: what a
 * run's memory grows with (a few hundred bytes each with their events). */
uint64_t sim_live_objects(const struct sim *s);

/* phases.csv's windows (phasewin.h): none (n = 0) without phases and herds. */
struct phasewin;
const struct phasewin *sim_phasewin(const struct sim *s);
/* The run's verdict (verdict.h): the trigger runs from the first phase's
 * start or herd to the last phase's end or herd. O(windows). */
struct verdict_result;
void sim_verdict(const struct sim *s, struct verdict_result *v);

/* The clients' outermost layer (the attempts per request users see): layer
 * 0 unless a scenario with services lists a service-to-service layer first. */
unsigned sim_client_layer(const struct sim *s);

#endif
