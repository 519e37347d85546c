/*
 * config — what a run is given: the scenario as plain data (struct
 * scenario and its parts, one *_cfg per section), with the limits and
 * enumerations they use.
 *
 * The model reads it and nothing else of the input: the loader that fills
 * it from INI text, checks every key and reports problems lives above, in
 * io (scenario.h), and writes the struct in one place. The struct holds no
 * pointer that it owns (the kind pointers name const descriptor tables), so
 * it may be copied with memcpy; a run copies it once (sim_create).
 * Declarations only: no code, no cost.
 */
#ifndef RS_CONFIG_H
#define RS_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "backoff.h"
#include "breaker.h"
#include "hedge.h"
#include "budget.h"
#include "dist.h"
#include "errclass.h"
#include "units.h"

#define SCENARIO_MAX_LAYERS 16
#define SCENARIO_MAX_SERVICES 16
#define SCENARIO_MAX_CALLS 8              /* dependencies one service calls */
#define SCENARIO_MAX_FANOUT 64            /* parallel calls of one dependency (DEP*k) */
#define SCENARIO_MAX_REPLICAS 1000
#define SCENARIO_MAX_SERVICE_ROWS 1000000LL /* services.csv: buckets x (services + replicas); plot reads as many */
#define SCENARIO_CLIENT (-1)              /* a layer's `from`: the clients */
#define SCENARIO_MAX_PHASES 64
#define SCENARIO_MAX_HERDS 64
#define SCENARIO_NAME_MAX 48
#define SCENARIO_MAX_CLIENTS 10000000LL
#define SCENARIO_MAX_BUCKETS 1000000LL
#define SCENARIO_MAX_STATE_BYTES 4e9      /* what a run allocates before its first event (sim_footprint) */
#define SCENARIO_MAX_ATTEMPTS 1000000ULL  /* per request: attempts and fan-outs multiplied along the worst path */
#define SCENARIO_MAX_CACHES 8
#define SCENARIO_MAX_KEYS 10000000u       /* keys of the request key space (caches) */
#define SCENARIO_PATH_MAX 1024            /* a trace's path */

enum load_model { LOAD_OPEN, LOAD_CLOSED };
enum arrival_kind { ARRIVAL_POISSON, ARRIVAL_UNIFORM };
enum discipline { DISC_FIFO, DISC_LIFO };
enum outage { OUTAGE_NONE, OUTAGE_REFUSE, OUTAGE_HANG, OUTAGE_ERROR };
enum retry_after_mode { RA_IGNORE, RA_HONOR };
enum scope { SCOPE_INSTANCE, SCOPE_CLIENT, SCOPE_SHARED };
enum server_model { MODEL_QUEUE, MODEL_OCC };
enum balancer { BAL_RANDOM, BAL_ROUND_ROBIN, BAL_LEAST_OUTSTANDING, BAL_P2C };
enum target_kind { TARGET_NONE, TARGET_SERVICE, TARGET_LAYER, TARGET_CACHE };
enum degrade_shape { DEGRADE_LINEAR, DEGRADE_EXPONENTIAL };
enum trace_format { TRACE_NONE = -1, TRACE_FORMAT_RATES = 0, TRACE_FORMAT_TIMES = 1 }; /* = trace.h's kinds */

struct phase_cfg {
    char name[SCENARIO_NAME_MAX];
    rs_time start, end;
    bool has_rate, rate_is_factor;
    double rate; /* a factor, or an absolute rate per second; with ramp, at start */
    bool ramp;       /* rate = ramp(A, B): linear from rate at start to rate_to at end */
    double rate_to;
    char flush[SCENARIO_NAME_MAX]; /* flush = CACHE: emptied when the phase starts */
    int flush_cache;               /* resolved; -1: none */
    bool has_capacity;
    double capacity; /* a factor on the server's workers */
    enum outage outage;
    rs_time retry_after; /* with outage = error; RS_TIME_NEVER: none */
    double slowdown;     /* service time factor; 1 when not given */
    /* what the phase acts on: `target = SERVICE | SERVICE#i | LAYER | CACHE`; none: the
     * first service (capacity, outage, slowdown) */
    char target[SCENARIO_NAME_MAX + 8];
    enum target_kind target_kind; /* resolved by validation */
    unsigned target_index;        /* the service or layer */
    unsigned target_replica;      /* 1-based; 0: every replica */
    /* a hop phase (target = LAYER): added latency and loss on each crossing, each way */
    bool has_latency;
    struct dist latency;
    double loss;
};

/* One dependency of a service: `calls = DEP DEP*k`. */
struct dep_cfg {
    char name[SCENARIO_NAME_MAX];
    unsigned service; /* resolved by validation */
    unsigned fanout;  /* parallel calls, all of which must succeed */
};

/* A service ([service NAME], or [server] for one named `server`): every
 * replica has its own workers, queue and limiter. */
struct service_cfg {
    char name[SCENARIO_NAME_MAX];
    enum server_model model;
    unsigned workers;
    long long queue; /* -1: unbounded */
    struct dist service;
    enum discipline discipline;
    double p400, p500, p503, p_business; /* injected answers, drawn per execution */
    double limit_rate;        /* token bucket per second; 0: no limiter */
    unsigned limit_burst;
    enum errclass limit_status;
    rs_time limit_retry_after; /* RS_TIME_NEVER: none */
    double degrade;           /* see degrade_shape */
    enum degrade_shape degrade_shape; /* linear: service × (1 + degrade·(others working));
                                       * exponential: service × e^(degrade·others working / workers) */
    char cache[SCENARIO_NAME_MAX]; /* cache = NAME: looked up by every execution; "": none */
    int cache_index;               /* resolved; -1: none */
    bool drop_expired;
    bool dedup;
    bool cancel_running; /* a cancellation stops a running execution (else only queued ones) */
    struct dist replay;       /* cost of replaying a stored answer */
    unsigned replicas;
    enum balancer balancer;
    unsigned ncalls;          /* called in order, while holding the worker */
    struct dep_cfg calls[SCENARIO_MAX_CALLS];
    bool has_after;
    struct dist service_after; /* work after the calls */
};

/* A look-aside cache ([cache NAME]) in front of the services that name it. */
struct cache_cfg {
    char name[SCENARIO_NAME_MAX];
    long long capacity;  /* entries (LRU eviction); -1: unbounded */
    rs_time ttl;         /* RS_TIME_NEVER: none */
    double ttl_jitter;   /* each entry's TTL × U(1 - F, 1 + F) */
    bool coalesce;       /* single flight: one miss in flight per key */
    struct dist hit;     /* how long a hit takes */
};

struct layer_cfg {
    char name[SCENARIO_NAME_MAX];
    unsigned attempts;      /* including the first */
    rs_time timeout;        /* per attempt; RS_TIME_NEVER: none */
    const struct backoff_kind *backoff;
    struct backoff_params bp;
    errclass_set retry_on;
    enum retry_after_mode retry_after;
    rs_time retry_after_max; /* RS_TIME_NEVER: no limit */
    enum retry_after_over retry_after_over_max; /* a Retry-After above it */
    rs_time deadline;        /* for the whole retry loop; RS_TIME_NEVER: none */
    bool propagate_deadline;
    /* the hop below this layer: latency (when has_*) and loss, each way */
    bool has_request_latency, has_response_latency;
    struct dist request_latency, response_latency;
    double request_loss, response_loss;
    /* copies of this layer; calls are routed to one (0: one per client) */
    unsigned instances;
    const struct budget_kind *budget;
    struct budget_params budget_p;
    enum scope budget_scope;
    const struct breaker_kind *breaker;
    struct breaker_params breaker_p;
    enum scope breaker_scope;
    /* the edge it sits on: `from = client | SERVICE`, `to = SERVICE`; empty: the
     * clients and the first service */
    char from[SCENARIO_NAME_MAX], to[SCENARIO_NAME_MAX];
    int from_service;   /* resolved: SCENARIO_CLIENT or a service index */
    unsigned to_service;
    /* bulkhead / connection pool per instance: attempts in flight */
    unsigned concurrency;       /* 0: no limit */
    long long concurrency_queue; /* waiting attempts; -1: unbounded */
    rs_time concurrency_wait;   /* RS_TIME_NEVER: wait as long as it takes */
    /* hedging (hedge.h): `hedge` names a kind or preset (an index into
     * hedge_kinds); hedge_mode is what it resolves to */
    unsigned hedge;
    enum hedge_mode hedge_mode;
    rs_time hedge_delay;        /* fixed; RS_TIME_NEVER: none */
    double hedge_percentile;    /* percentile: 0 < P < 100 */
    double hedge_max_extra;     /* percentile: hedges at most this fraction of first copies */
    errclass_set hedge_on;      /* failures that send the next copy at once */
    enum cancel_mode cancel;    /* on-abandon: abandoned attempts are cancelled below */
};

struct scenario {
    char name[SCENARIO_NAME_MAX];
    char source[256]; /* the file (or built-in) it came from */
    rs_time duration, warmup, bucket;
    uint64_t seed;
    /* the verdict (verdict.h): [run] verdict_window, verdict_hold, verdict_persist,
     * verdict_tolerance */
    rs_time verdict_window, verdict_hold, verdict_persist;
    double verdict_tolerance;

    enum load_model model;
    enum arrival_kind arrival;
    double rate; /* open loop, per second */
    struct dist think; /* closed loop */
    unsigned clients;
    bool idempotent;   /* false: every execution is a side effect */
    bool key;          /* requests carry an idempotency key */
    /* shape = sine(AMPLITUDE, PERIOD): the rate × (1 + amplitude · sin(2πt / period)) */
    double sine_amplitude; /* 0: no shape */
    rs_time sine_period;
    /* trace = FILE: arrivals replayed from a file (trace.h) */
    char trace[SCENARIO_PATH_MAX]; /* as resolved: a path, or a built-in trace's name; "": none */
    bool trace_builtin;
    enum trace_format trace_format;  /* found by reading it */
    unsigned long long trace_burst;  /* the most rows of a trace at one instant */
    /* every logical request's key (caches): keys = N, popularity = uniform | zipf(S) */
    unsigned keys;
    double zipf;       /* 0: uniform */

    unsigned ncaches;
    struct cache_cfg caches[SCENARIO_MAX_CACHES];

    unsigned nservices;
    struct service_cfg services[SCENARIO_MAX_SERVICES];
    unsigned entry;  /* the service the clients call (resolved) */
    bool graph;      /* services, edges, bulkheads or targets used: the
                      * outputs that describe them are written */

    unsigned nphases;
    struct phase_cfg phases[SCENARIO_MAX_PHASES];
    unsigned nlayers;
    struct layer_cfg layers[SCENARIO_MAX_LAYERS];
    unsigned nherds;
    rs_time herds[SCENARIO_MAX_HERDS]; /* every client sends a request at these instants */
};

#endif
