/*
 * metrics — what a run measured: per-bucket flows and levels, latency
 * histograms, attempts per request and outcome counts.
 *
 * Time is cut into buckets of the scenario's `bucket` length. Flows (offered
 * requests, attempts, server arrivals, …) are counted in the bucket where
 * they happen; levels (queue length, busy workers, requests in flight) are
 * time-weighted averages over the bucket, integrated exactly because the
 * simulation calls metrics_advance before every event, and levels change
 * only inside events. Latencies go into log-spaced histograms (bin ratio
 * 1.005 from 1 ns, plus a bin for 0), so quantiles are within 0.5 %
 * relative of the exact value, in memory independent of the number of
 * requests; exact count, sum, min and max are kept beside them.
 *
 * One window for every total (docs/outputs.md's warm-up rule): the run's totals
 * cover [warmup, end of run), the buckets everything. A flow (server
 * arrivals, errors, hedges, wasted work, …) counts in the totals when its
 * event happens at or after warmup (metrics_count); a request's own
 * numbers (requests, outcomes, latencies, attempts per request) count when
 * the request arrived at or after warmup, so that each counted request is
 * whole. The two rules differ only by the attempts, at or after warmup, of
 * requests that arrived before it (requests in flight when the window
 * opens); at the end nothing differs, since a counted request's events are
 * all in the window. So in steady state server_arrivals / requests agrees
 * with the attempts histogram's mean to within (requests in flight at
 * warmup) · (attempts each) / requests, and exactly without a warm-up.
 *
 * Costs: metrics_advance O(1) plus O(bins touched) per closed bucket;
 * recording a latency O(1); everything else O(1). Memory: about
 * (100 + 8·layers) bytes per bucket and 125 KB per latency histogram.
 */
#ifndef RS_METRICS_H
#define RS_METRICS_H

#include <gsl/gsl_histogram.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "errclass.h"
#include "units.h"

#define METRICS_MAX_LEVELS 33 /* 16 layers, the service the clients call, and 16 hedged
                               * layers' hedges per request */
#define METRICS_ATT_BINS 10000 /* attempts histograms clamp above this */

enum outcome {
    OUT_OK, OUT_BUSINESS, OUT_EXHAUSTED, OUT_FAILED, OUT_DEADLINE, OUT_THROTTLED, OUT_BREAKER,
    OUT_NOUTCOMES
};
extern const char *const metrics_outcome_names[OUT_NOUTCOMES];

/* A latency histogram (nanoseconds). */
struct lat_hist {
    gsl_histogram *h;
    uint64_t n;
    double sum;
    rs_time min, max;
    size_t lo_bin, hi_bin; /* bins touched since the last reset */
};

/* The run's flows, counted by metrics_count. The first MC_NBUCKET are also
 * flows of each bucket (struct bucket's flow[], in the same order). */
enum metrics_counter {
    MC_SERVER_ARRIVALS, MC_SERVER_COMPLETIONS, MC_REJECTED, MC_WASTED, MC_DUPLICATES,
    MC_ERRORS, /* MC_ERRORS + class: failed attempts by class, over every layer */
    MC_NBUCKET = MC_ERRORS + CLS_N,
    MC_RETRY_AFTER_WAITS = MC_NBUCKET, MC_LIMITED, MC_DROPPED, MC_SIDE_EFFECTS, MC_HEDGES,
    MC_HEDGE_WINS, MC_CANCELLED, MC_CANCELLED_BEFORE_START, MC_CANCELS_SENT,
    MC_N
};

/* The flows a bucket shares with the run's totals, by name and by index. */
#define METRICS_BUCKET_FLOWS                                                                       \
    uint64_t server_arrivals, server_completions, rejected, wasted;                                \
    uint64_t duplicates; /* side effects beyond a request's first */                               \
    uint64_t errors[CLS_N] /* failed attempts by class, over every layer */

struct bucket {
    uint64_t offered;
    union {
        struct {
            METRICS_BUCKET_FLOWS;
        };
        uint64_t flow[MC_NBUCKET];
    };
    uint64_t outcomes[OUT_NOUTCOMES];
    double area_queue, area_busy, area_inflight; /* level · ns */
    double lat_p50, lat_p99;                     /* seconds; < 0: none finished */
};

/* Per layer and bucket: budget refusals and short-circuits (flows), and the
 * share of breakers open and the mean budget level at the bucket's end. */
struct layer_bucket {
    uint64_t refused, short_circuited, transitions; /* transitions: breakers that opened */
    double open_share, budget_level; /* < 0: the layer has none */
};

struct metrics {
    rs_time bucket_ns, duration; /* duration: where the buckets end (metrics_truncate) */
    size_t nbuckets, nlayers;
    size_t nalloc; /* buckets allocated: nbuckets until metrics_truncate */
    struct bucket *b;
    uint64_t *attempts; /* nbuckets · nlayers: attempts made by each layer */
    struct layer_bucket *lb; /* nbuckets · nlayers */

    /* level integration */
    rs_time last_t;
    size_t cur; /* the bucket holding last_t */
    rs_time cur_end; /* min(end of bucket cur, duration) */
    struct lat_hist bucket_lat;
    /* verdict windows (metrics_windows): win_buckets buckets each; the p99
     * of the requests that ended in each whole window (< 0: none) */
    size_t win_buckets, nwin;
    double *win_p99;
    struct lat_hist win_lat;
    rs_time win_since; /* from this time on, only requests that arrived at or after it count in
                        * win_p99 (the verdict's: requests that came after the trigger) */

    /* totals over requests that arrived at or after warmup */
    uint64_t requests, outcomes[OUT_NOUTCOMES];
    struct lat_hist lat_all, lat_by[OUT_NOUTCOMES]; /* lat_all: their sum, at metrics_finish */
    gsl_histogram *att[METRICS_MAX_LEVELS]; /* attempts per request: each layer, then the server */
    uint64_t att_max[METRICS_MAX_LEVELS];
    double att_sum[METRICS_MAX_LEVELS];
    uint64_t att_n;
    size_t nextra, extra_at; /* extra levels (hedges per request): n[extra_at + k] is level
                              * nlayers + 1 + k */

    /* flows over the window: events at or after warmup (metrics_count) */
    union {
        struct {
            METRICS_BUCKET_FLOWS;
            uint64_t retry_after_waits; /* retries whose delay was a Retry-After */
            uint64_t limited, dropped, side_effects;
            uint64_t hedges;     /* copies sent while another was out, or on a hedge_on failure */
            uint64_t hedge_wins; /* calls won by a copy other than the first */
            uint64_t cancelled;  /* calls ended and executions stopped by a cancellation */
            uint64_t cancelled_before_start; /* attempts dropped unstarted: on the hop, or queued */
            uint64_t cancels_sent; /* cancellations layers sent down */
        };
        uint64_t total[MC_N];
    };
    rs_time warmup; /* the window's start (0 after metrics_init: the whole run) */
    uint64_t events; /* over the whole run: what the run cost, not what it measured */
};

_Static_assert(offsetof(struct bucket, errors) + sizeof(uint64_t) * CLS_N ==
                   offsetof(struct bucket, flow) + sizeof(uint64_t) * MC_NBUCKET,
               "struct bucket: the named flows and flow[] must coincide");
_Static_assert(offsetof(struct metrics, cancels_sent) ==
                   offsetof(struct metrics, total) + sizeof(uint64_t) * (MC_N - 1),
               "struct metrics: the named totals and total[] must coincide");

/* Allocates for a run of the given length. Returns 0, or -1 with a message
 * in err when memory is short. */
int metrics_init(struct metrics *m, rs_time duration, rs_time bucket, size_t nlayers,
                 const unsigned *attempts_per_layer, char *err, size_t errsz);
void metrics_fini(struct metrics *m);
/* Records the p99 of every whole window of `buckets` buckets (the
 * verdict's windows) as the run goes. Returns 0, or -1 when memory is
 * short. O(bins touched) per closed bucket. */
int metrics_windows(struct metrics *m, size_t buckets);

/* Integrates the levels from the last call up to now (monotone), closing
 * the buckets passed on the way. */
void metrics_advance_slow(struct metrics *m, rs_time now, uint32_t queue, uint32_t busy,
                          uint64_t inflight);
/* Adds the levels' areas from last_t up to `upto` (within bucket cur). */
static inline void metrics_integrate(struct metrics *m, rs_time upto, uint32_t queue, uint32_t busy,
                                     uint64_t inflight)
{
    double dt = (double)(upto - m->last_t);
    struct bucket *b = &m->b[m->cur];
    b->area_queue += dt * queue;
    b->area_busy += dt * busy;
    b->area_inflight += dt * (double)inflight;
    m->last_t = upto;
}

static inline void metrics_advance(struct metrics *m, rs_time now, uint32_t queue, uint32_t busy,
                                   uint64_t inflight)
{
    if (now < m->cur_end) /* within the current bucket: the common case, inline */
        metrics_integrate(m, now, queue, busy, inflight);
    else
        metrics_advance_slow(m, now, queue, busy, inflight);
}

/* Counts one event of flow c at the time of the last metrics_advance (the
 * event's time): in the current bucket if the flow has buckets, and in the
 * run's total if the time is at or after the warm-up's end. O(1). */
static inline void metrics_count(struct metrics *m, enum metrics_counter c)
{
    if (c < MC_NBUCKET)
        m->b[m->cur].flow[c]++;
    m->total[c] += m->last_t >= m->warmup;
}

/* The bucket holding the current time (after metrics_advance). */
static inline struct bucket *metrics_cur(struct metrics *m) { return &m->b[m->cur]; }
static inline void metrics_attempt(struct metrics *m, size_t layer)
{
    m->attempts[m->cur * m->nlayers + layer]++;
}
static inline struct layer_bucket *metrics_layer_cur(struct metrics *m, size_t layer)
{
    return &m->lb[m->cur * m->nlayers + layer];
}

/* A logical request ended with latency lat; counted says whether it arrived
 * after warmup (and so belongs in the totals). Returns lat's bin (the same
 * in every latency histogram), for metrics_lat_add_in. */
size_t metrics_outcome(struct metrics *m, enum outcome o, rs_time lat, bool counted);

/* Attempts one counted request made at each layer (n[0..nlayers-1]) and at
 * the server (n[nlayers]). */
void metrics_request_attempts(struct metrics *m, const uint64_t *n);
/* Adds count levels to the attempts histograms (at most the bins[k] - 1
 * of each, more in the last bin), read from n[at + k] of each request. */
int metrics_extra_levels(struct metrics *m, size_t count, size_t at, const size_t *bins);

/* Ends the buckets at `end` (a drained run's end, past the duration it
 * was allocated for or short of it): nbuckets becomes those up to end, the
 * last one short if end is not on a boundary; nalloc stays. Before
 * metrics_finish; end must hold the current bucket and be at most the
 * allocated length. O(1). */
void metrics_truncate(struct metrics *m, rs_time end);

/* Closes the bucket holding `end` (the run's duration, or the time an
 * interrupted run reached). */
void metrics_finish(struct metrics *m, rs_time end, uint32_t queue, uint32_t busy, uint64_t inflight);

/* Latency quantile q in [0, 1] in seconds; NaN-free: returns -1 when empty. */
double metrics_quantile(const struct lat_hist *h, double q);
static inline double metrics_mean_s(const struct lat_hist *h)
{
    return h->n ? h->sum / (double)h->n / 1e9 : -1.0;
}

/* The first bucket that starts at or after t: the first wholly in a window
 * that opens at t. */
static inline size_t metrics_first_bucket(const struct metrics *m, rs_time t)
{
    return (size_t)((t + m->bucket_ns - 1) / m->bucket_ns);
}

/* Length of bucket i in seconds (the last one may be short). */
double metrics_bucket_len(const struct metrics *m, size_t i);

/* Histogram helpers, exposed for tests. */
int metrics_lat_init(struct lat_hist *h);
void metrics_lat_add(struct lat_hist *h, rs_time v);
/* Adds v, whose bin metrics_outcome returned. O(1). */
void metrics_lat_add_in(struct lat_hist *h, size_t bin, rs_time v);
void metrics_lat_reset(struct lat_hist *h);
void metrics_lat_fini(struct lat_hist *h);

#endif
