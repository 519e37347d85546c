/*
 * summary — the one table of summary columns. See summary.h.
 */
#define _POSIX_C_SOURCE 200809L

#include "summary.h"

#include "scenario.h"

#include <float.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* ---- kinds ---- */

/* What each kind of column allows: [lo, hi] (so finite), whole numbers
 * only or not; whether it is a metric; its unit for list metrics. */
static const struct kind_desc {
    double lo, hi;
    bool whole, metric;
    const char *name, *allows;
} kinds[OUTPUT_NKINDS] = {
    [OUTPUT_TEXT] = {1, 0, false, false, "text", "text"},
    [OUTPUT_SEED] = {0, 18446744073709549568.0, true, false, "seed", "a seed (an integer from 0 to 2^64 - 1)"},
    [OUTPUT_COUNT] = {0, 9007199254740992.0, true, true, "count", "a count (an integer from 0 to 9007199254740992)"},
    [OUTPUT_SHARE] = {0, 1, false, true, "share", "a share (a number from 0 to 1)"},
    [OUTPUT_FLAG] = {0, 1, true, true, "flag", "a flag (0 or 1)"},
    [OUTPUT_SECONDS] = {0, DBL_MAX, false, true, "seconds", "seconds (a finite number >= 0)"},
    [OUTPUT_REAL] = {0, DBL_MAX, false, true, "real", "a finite number >= 0"},
    [OUTPUT_WALL] = {0, DBL_MAX, false, false, "wall", "wall-clock seconds (a finite number >= 0)"},
    [OUTPUT_VERDICT] = {0, VERDICT_N - 1, true, false, "verdict", "a verdict (stable, overloaded, recovered, metastable, undetermined)"},
};

bool output_kind_is_metric(enum output_kind k) { return kinds[k].metric; }

bool output_value_ok(enum output_kind k, double v)
{
    const struct kind_desc *d = &kinds[k];
    return v >= d->lo && v <= d->hi && (!d->whole || v == floor(v)); /* NaN: false */
}

const char *output_kind_allows(enum output_kind k) { return kinds[k].allows; }
const char *output_kind_name(enum output_kind k) { return kinds[k].name; }

int output_kind_of(const char *name)
{
    for (int k = 0; k < OUTPUT_NKINDS; k++)
        if (strcmp(kinds[k].name, name) == 0)
            return k;
    return -1;
}

void summary_format(char *out, size_t size, enum output_kind k, double v)
{
    if (isnan(v))
        snprintf(out, size, "%s", "");
    else if (k == OUTPUT_COUNT || k == OUTPUT_FLAG)
        snprintf(out, size, "%.17g", v);
    else if (k == OUTPUT_WALL)
        snprintf(out, size, "%.3f", v);
    else if (k == OUTPUT_VERDICT && v >= 0 && v < VERDICT_N)
        snprintf(out, size, "%s", verdict_names[(int)v]);
    else
        snprintf(out, size, "%.9g", v);
}

/* ---- the descriptor table ---- */

/* The parts a family is instantiated over. */
enum family { ONE, PER_ERROR, BULKHEAD, PER_SERVICE, PER_CACHE, PER_LAYER };

/* What a getter reads: the run, its summary, and the totals of the
 * service last asked for (a service's columns share one walk). */
struct src {
    const struct sim *s;
    const struct summary *o;
    long svc; /* whose totals are in row, or -1 */
    struct sim_service_row row;
};

/* A fixed column reads a field of struct summary: a count (uint64_t), an
 * int flag or a double; a double below 0 or a flag of -1 means none. */
enum field { F_U64, F_INT, F_DBL, F_GET };

struct summary_desc {
    const char *name; /* with %s for the member of a family */
    const char *unit, *meaning;
    enum output_kind kind;
    enum family family;
    enum field field;
    size_t off;
    double (*get)(struct src *x, unsigned k);
    unsigned arg; /* a fixed column's member (its outcome) */
};

#define U(f) F_U64, offsetof(struct summary, f), NULL, 0
#define I(f) F_INT, offsetof(struct summary, f), NULL, 0
#define D(f) F_DBL, offsetof(struct summary, f), NULL, 0
#define G(fn) F_GET, 0, fn, 0
#define GA(fn, a) F_GET, 0, fn, a

static double outcome_n(struct src *x, unsigned k) { return (double)x->o->outcomes[k]; }
static double outcome_share(struct src *x, unsigned k)
{
    return (double)x->o->outcomes[k] / (x->o->requests ? (double)x->o->requests : 1.0);
}
static double in_flight_share(struct src *x, unsigned k)
{
    (void)k;
    return (double)x->o->in_flight / (x->o->requests ? (double)x->o->requests : 1.0);
}
/* A verdict's flag: 1 when the run's verdict is k. */
static double verdict_is(struct src *x, unsigned k) { return x->o->verdict == (int)k; }
static double error_n(struct src *x, unsigned k) { return (double)sim_metrics(x->s)->errors[k]; }

static const struct sim_service_row *svc_totals(struct src *x, unsigned v)
{
    if (x->svc != (long)v) {
        sim_service_totals(x->s, v, &x->row);
        x->svc = (long)v;
    }
    return &x->row;
}
static double svc_utilization(struct src *x, unsigned v)
{
    const struct sim_service_row *r = svc_totals(x, v);
    return r->workers > 0 ? r->busy / r->workers : 0.0;
}
static double svc_wasted(struct src *x, unsigned v) { return (double)svc_totals(x, v)->wasted; }
static double svc_arrivals(struct src *x, unsigned v) { return (double)svc_totals(x, v)->arrivals; }
static double svc_rejected(struct src *x, unsigned v) { return (double)svc_totals(x, v)->rejected; }
static double svc_queue(struct src *x, unsigned v) { return svc_totals(x, v)->queue_len; }
static double cache_hits(struct src *x, unsigned c) { return sim_cache_hit_ratio(x->s, c); }

/* A layer's totals, one field of them. */
#define LAYER_GETTER(fn, field_)                                                                   \
    static double fn(struct src *x, unsigned l)                                                    \
    {                                                                                              \
        struct sim_layer_totals t;                                                                 \
        sim_layer_totals(x->s, l, &t);                                                             \
        return (double)t.field_;                                                                   \
    }
LAYER_GETTER(layer_attempts, attempts)
LAYER_GETTER(layer_retries, retries)
LAYER_GETTER(layer_hedges, hedges)
LAYER_GETTER(layer_timeouts, timeouts)
LAYER_GETTER(layer_refused, refused)
LAYER_GETTER(layer_short, short_circuited)

static const struct summary_desc table[] = {
    {"requests", "count", "logical requests that arrived after warm-up", OUTPUT_COUNT, ONE, U(requests)},
    {"ok", "count", "requests that ended ok", OUTPUT_COUNT, ONE, GA(outcome_n, OUT_OK)},
    {"business", "count", "requests that ended with a business error (never retried)", OUTPUT_COUNT, ONE, GA(outcome_n, OUT_BUSINESS)},
    {"exhausted", "count", "requests whose every attempt failed (attempts used up)", OUTPUT_COUNT, ONE, GA(outcome_n, OUT_EXHAUSTED)},
    {"failed", "count", "requests that ended with an error their layer does not retry", OUTPUT_COUNT, ONE, GA(outcome_n, OUT_FAILED)},
    {"deadline", "count", "requests whose deadline passed", OUTPUT_COUNT, ONE, GA(outcome_n, OUT_DEADLINE)},
    {"throttled", "count", "requests refused at once by a retry budget or rate limiter", OUTPUT_COUNT, ONE, GA(outcome_n, OUT_THROTTLED)},
    {"breaker", "count", "requests refused at once by an open circuit breaker", OUTPUT_COUNT, ONE, GA(outcome_n, OUT_BREAKER)},
    {"in_flight", "count", "requests with no outcome when the run ended (drained: at drain_limit)", OUTPUT_COUNT, ONE, U(in_flight)},
    {"ok_share", "fraction", "ok / requests", OUTPUT_SHARE, ONE, GA(outcome_share, OUT_OK)},
    {"business_share", "fraction", "business / requests", OUTPUT_SHARE, ONE, GA(outcome_share, OUT_BUSINESS)},
    {"exhausted_share", "fraction", "exhausted / requests", OUTPUT_SHARE, ONE, GA(outcome_share, OUT_EXHAUSTED)},
    {"failed_share", "fraction", "failed / requests", OUTPUT_SHARE, ONE, GA(outcome_share, OUT_FAILED)},
    {"deadline_share", "fraction", "deadline / requests", OUTPUT_SHARE, ONE, GA(outcome_share, OUT_DEADLINE)},
    {"throttled_share", "fraction", "throttled / requests", OUTPUT_SHARE, ONE, GA(outcome_share, OUT_THROTTLED)},
    {"breaker_share", "fraction", "breaker / requests", OUTPUT_SHARE, ONE, GA(outcome_share, OUT_BREAKER)},
    {"in_flight_share", "fraction", "in_flight / requests: with the outcomes' shares it adds up to 1", OUTPUT_SHARE, ONE, G(in_flight_share)},
    {"attempts_mean", "attempts", "attempts per request at the clients' outermost layer", OUTPUT_REAL, ONE, D(attempts_mean)},
    {"attempts_max", "attempts", "the most attempts one request made at that layer", OUTPUT_COUNT, ONE, U(attempts_max)},
    {"amplification", "ratio", "server arrivals per logical request", OUTPUT_REAL, ONE, D(amplification)},
    {"server_arrivals", "count", "attempts that reached the (first) service", OUTPUT_COUNT, ONE, U(server_arrivals)},
    {"server_completions", "count", "executions the service completed", OUTPUT_COUNT, ONE, U(server_completions)},
    {"rejected", "count", "attempts turned away by a full queue (503)", OUTPUT_COUNT, ONE, U(rejected)},
    {"limited", "count", "attempts answered by the service's rate limiter", OUTPUT_COUNT, ONE, U(limited)},
    {"dropped", "count", "queued work dropped because its caller had given up (drop_expired)", OUTPUT_COUNT, ONE, U(dropped)},
    {"wasted", "count", "completed executions nobody was waiting for any more", OUTPUT_COUNT, ONE, U(wasted)},
    {"side_effects", "count", "executions with a side effect (not idempotent)", OUTPUT_COUNT, ONE, U(side_effects)},
    {"duplicates", "count", "side effects beyond the first for one request", OUTPUT_COUNT, ONE, U(duplicates)},
    {"retry_after_waits", "count", "retries that waited for a Retry-After", OUTPUT_COUNT, ONE, U(retry_after_waits)},
    {"hedges", "count", "copies a hedged layer sent while another was out, or at once after a hedge_on failure", OUTPUT_COUNT, ONE, U(hedges)},
    {"hedge_wins", "count", "hedged calls won by a hedge (not by the first copy or a retry)", OUTPUT_COUNT, ONE, U(hedge_wins)},
    {"cancelled", "count", "calls ended and running executions stopped by a cancellation", OUTPUT_COUNT, ONE, U(cancelled)},
    {"cancelled_before_start", "count", "attempts dropped unstarted by a cancellation: overtaken on the hop, or queued", OUTPUT_COUNT, ONE, U(cancelled_before_start)},
    {"err_%s", "count", "failed attempts of each class: timeout conn 400 403 404 409 429 500 502 503 504 deadline throttled breaker", OUTPUT_COUNT, PER_ERROR, G(error_n)},
    {"lat_mean", "s", "mean latency of requests that ended", OUTPUT_SECONDS, ONE, D(lat_mean)},
    {"lat_p50", "s", "median latency of requests that ended", OUTPUT_SECONDS, ONE, D(lat_p50)},
    {"lat_p90", "s", "90th percentile latency", OUTPUT_SECONDS, ONE, D(lat_p90)},
    {"lat_p99", "s", "99th percentile latency", OUTPUT_SECONDS, ONE, D(lat_p99)},
    {"lat_p999", "s", "99.9th percentile latency", OUTPUT_SECONDS, ONE, D(lat_p999)},
    {"lat_max", "s", "the longest latency", OUTPUT_SECONDS, ONE, D(lat_max)},
    {"ok_lat_mean", "s", "mean latency of requests that ended ok", OUTPUT_SECONDS, ONE, D(ok_lat_mean)},
    {"ok_lat_p99", "s", "99th percentile latency of requests that ended ok", OUTPUT_SECONDS, ONE, D(ok_lat_p99)},
    {"goodput", "1/s", "ok requests per second after warm-up", OUTPUT_REAL, ONE, D(goodput)},
    {"peak_server_rate", "1/s", "the busiest bucket's server arrivals", OUTPUT_REAL, ONE, D(peak_server_rate)},
    {"peak_rate_1s", "1/s", "the busiest second's server arrivals: a 1 s mean over whole buckets", OUTPUT_REAL, ONE, D(peak_rate_1s)},
    {"verdict", "name", "stable, overloaded, recovered, metastable or undetermined (docs/verdicts.md)", OUTPUT_VERDICT, ONE, I(verdict)},
    {"stable", "0/1", "1 when the verdict is stable: no trigger, and the run stationary", OUTPUT_FLAG, ONE, GA(verdict_is, VERDICT_STABLE)},
    {"overloaded", "0/1", "1 when the verdict is overloaded: not stationary before any trigger", OUTPUT_FLAG, ONE, GA(verdict_is, VERDICT_OVERLOADED)},
    {"metastable", "0/1", "1 when the verdict is metastable: out of the baseline's band for verdict_persist after the trigger", OUTPUT_FLAG, ONE, GA(verdict_is, VERDICT_METASTABLE)},
    {"undetermined", "0/1", "1 when the run ended before its verdict could be told", OUTPUT_FLAG, ONE, GA(verdict_is, VERDICT_UNDETERMINED)},
    {"recovered", "0/1", "1 when the verdict is recovered, 0 when metastable or overloaded; empty without a trigger or when undetermined", OUTPUT_FLAG, ONE, I(recovered)},
    {"recovery_s", "s", "from the end of the last trigger to the start of the hold back in the baseline's band; empty unless recovered", OUTPUT_SECONDS, ONE, D(recovery_s)},
    {"complete", "0/1", "0 when the run was interrupted", OUTPUT_FLAG, ONE, I(complete)},
    {"events", "count", "events dispatched", OUTPUT_COUNT, ONE, U(events)},
    {"err_bulkhead", "count", "(services) attempts refused by a full bulkhead", OUTPUT_COUNT, BULKHEAD, GA(error_n, CLS_BULKHEAD)},
    {"%s_utilization", "fraction", "(services) workers held / workers, after warm-up", OUTPUT_SHARE, PER_SERVICE, G(svc_utilization)},
    {"%s_wasted", "count", "(services) wasted executions at that service, after warm-up", OUTPUT_COUNT, PER_SERVICE, G(svc_wasted)},
    {"%s_calls", "count", "(services) attempts that reached that service, after warm-up", OUTPUT_COUNT, PER_SERVICE, G(svc_arrivals)},
    {"%s_rejected", "count", "(services) attempts its full queues turned away, after warm-up", OUTPUT_COUNT, PER_SERVICE, G(svc_rejected)},
    {"%s_queue_mean", "jobs", "(services) the time-averaged queue length over its replicas, after warm-up", OUTPUT_REAL, PER_SERVICE, G(svc_queue)},
    {"%s_hit_ratio", "fraction", "(caches) hits / lookups, after warm-up", OUTPUT_SHARE, PER_CACHE, G(cache_hits)},
    {"%s_attempts", "count", "(each layer) attempts the layer made (as layers.csv)", OUTPUT_COUNT, PER_LAYER, G(layer_attempts)},
    {"%s_retries", "count", "(each layer) of them retries", OUTPUT_COUNT, PER_LAYER, G(layer_retries)},
    {"%s_hedges", "count", "(each layer) hedges the layer sent", OUTPUT_COUNT, PER_LAYER, G(layer_hedges)},
    {"%s_timeouts", "count", "(each layer) attempts that timed out", OUTPUT_COUNT, PER_LAYER, G(layer_timeouts)},
    {"%s_refused", "count", "(each layer) retries its budget refused", OUTPUT_COUNT, PER_LAYER, G(layer_refused)},
    {"%s_short_circuited", "count", "(each layer) attempts its breaker refused", OUTPUT_COUNT, PER_LAYER, G(layer_short)},
    {"wall_s", "s", "wall-clock time of the run (the only column that differs between equal runs)", OUTPUT_WALL, ONE, D(wall_s)},
};
#define NTABLE (sizeof table / sizeof table[0])

/* ---- families ---- */

static unsigned n_one(const struct scenario *sc) { return (void)sc, 1; }
static unsigned n_errors(const struct scenario *sc) { return (void)sc, CLS_BULKHEAD - CLS_TIMEOUT; }
static unsigned n_graph(const struct scenario *sc) { return sc->graph ? 1 : 0; }
static unsigned n_services(const struct scenario *sc) { return sc->graph ? sc->nservices : 0; }
static unsigned n_caches(const struct scenario *sc) { return sc->ncaches; }
static unsigned n_layers(const struct scenario *sc) { return sc->nlayers; }
static const char *nm_none(const struct scenario *sc, unsigned k) { return (void)sc, (void)k, ""; }
static const char *nm_error(const struct scenario *sc, unsigned k) { return (void)sc, errclass_names[k]; }
static const char *nm_service(const struct scenario *sc, unsigned k) { return sc->services[k].name; }
static const char *nm_cache(const struct scenario *sc, unsigned k) { return sc->caches[k].name; }
static const char *nm_layer(const struct scenario *sc, unsigned k) { return sc->layers[k].name; }

/* How a family is instantiated: its members in sc, the first member's
 * number (an error class's columns start at timeout) and each one's name,
 * for a column named by the descriptor's pattern. */
static const struct family_desc {
    unsigned (*count)(const struct scenario *sc);
    unsigned first;
    const char *(*name)(const struct scenario *sc, unsigned member);
    const char *shown; /* the member in list metrics */
} families[] = {
    [ONE] = {n_one, 0, nm_none, ""},
    [PER_ERROR] = {n_errors, CLS_TIMEOUT, nm_error, "<class>"},
    [BULKHEAD] = {n_graph, 0, nm_none, ""},
    [PER_SERVICE] = {n_services, 0, nm_service, "<service>"},
    [PER_CACHE] = {n_caches, 0, nm_cache, "<cache>"},
    [PER_LAYER] = {n_layers, 0, nm_layer, "<layer>"},
};

/* A descriptor's pattern with its "%s" (if any) replaced by member into
 * out; false when it does not fit. */
static bool expand(char *out, size_t size, const char *pattern, const char *member)
{
    const char *at = strstr(pattern, "%s");
    int n = at ? snprintf(out, size, "%.*s%s%s", (int)(at - pattern), pattern, member, at + 2)
               : snprintf(out, size, "%s", pattern);
    return n >= 0 && (size_t)n < size;
}

static int add_col(struct summary_cols *c, const struct summary_desc *d, const char *member_name,
                   unsigned member, char *err, size_t errsz)
{
    struct summary_col *col = &c->c[c->n];
    if (!expand(col->name, sizeof col->name, d->name, member_name)) {
        snprintf(err, errsz, "the column '%.40s...' is longer than 63 bytes: shorten the name '%s'",
                 col->name, member_name);
        return -1;
    }
    for (size_t i = 0; i < c->n; i++)
        if (strcmp(c->c[i].name, col->name) == 0) {
            snprintf(err, errsz, "two columns of summary.csv would be named '%s': rename the service, "
                                 "cache or layer '%s'", col->name, member_name);
            return -1;
        }
    col->kind = d->kind;
    col->d = d;
    col->member = d->family == ONE || d->family == BULKHEAD ? d->arg : member;
    c->n++;
    return 0;
}

/* Instantiates table[from, to), a run of descriptors of one family:
 * member by member, each member's columns together. */
static int add_group(struct summary_cols *c, const struct scenario *sc, size_t from, size_t to,
                     char *err, size_t errsz)
{
    const struct family_desc *fam = &families[table[from].family];
    for (unsigned k = 0; k < fam->count(sc); k++)
        for (size_t i = from; i < to; i++)
            if (add_col(c, &table[i], fam->name(sc, fam->first + k), fam->first + k, err, errsz) != 0)
                return -1;
    return 0;
}

static size_t upper_bound(const struct scenario *sc)
{
    size_t n = 0;
    for (size_t i = 0; i < NTABLE; i++)
        n += families[table[i].family].count(sc);
    return n;
}

int summary_cols_init(struct summary_cols *cols, const struct scenario *sc, char *err, size_t errsz)
{
    cols->n = 0;
    cols->c = calloc(upper_bound(sc), sizeof *cols->c);
    if (cols->c == NULL) {
        snprintf(err, errsz, "out of memory for the summary's columns");
        return -1;
    }
    for (size_t i = 0, j; i < NTABLE; i = j) {
        for (j = i + 1; j < NTABLE && table[i].family != ONE && table[j].family == table[i].family; j++)
            ;
        if (add_group(cols, sc, i, j, err, errsz) != 0) {
            summary_cols_fini(cols);
            return -1;
        }
    }
    return 0;
}

void summary_cols_fini(struct summary_cols *cols)
{
    free(cols->c);
    cols->c = NULL;
    cols->n = 0;
}

long summary_cols_find(const struct summary_cols *cols, const char *name)
{
    for (size_t i = 0; i < cols->n; i++)
        if (strcmp(cols->c[i].name, name) == 0)
            return (long)i;
    return -1;
}

bool summary_cols_equal(const struct summary_cols *a, const struct summary_cols *b)
{
    if (a->n != b->n)
        return false;
    for (size_t i = 0; i < a->n; i++)
        if (strcmp(a->c[i].name, b->c[i].name) != 0 || a->c[i].kind != b->c[i].kind)
            return false;
    return true;
}

int summary_cols_common(struct summary_cols *cols, const struct scenario *scs, size_t n, size_t *differs,
                        char *err, size_t errsz)
{
    if (summary_cols_init(cols, &scs[0], err, errsz) != 0)
        return -1;
    for (size_t i = 1; i < n; i++) {
        struct summary_cols other;
        if (summary_cols_init(&other, &scs[i], err, errsz) != 0)
            return -1;
        bool same = summary_cols_equal(cols, &other);
        summary_cols_fini(&other);
        if (!same) {
            *differs = i;
            return 1;
        }
    }
    return 0;
}

/* A fixed column's field of o; a double below 0 or an int of -1: none. */
static double field(const struct summary_desc *d, const struct summary *o)
{
    const char *p = (const char *)o + d->off;
    if (d->field == F_U64)
        return (double)*(const uint64_t *)(const void *)p;
    if (d->field == F_INT) {
        int v = *(const int *)(const void *)p;
        return v < 0 ? NAN : (double)v;
    }
    double v = *(const double *)(const void *)p;
    return v < 0 ? NAN : v;
}

void summary_row(const struct summary_cols *cols, const struct sim *s, const struct summary *o,
                 double *row)
{
    struct src x = {s, o, -1, {0}};
    for (size_t i = 0; i < cols->n; i++) {
        const struct summary_col *c = &cols->c[i];
        row[i] = c->d->field == F_GET ? c->d->get(&x, c->member) : field(c->d, o);
    }
}

/* ---- checking a metric's name ---- */

/* The metric nearest to name: one that ends in _NAME (p99: lat_p99), or
 * at most 2 edits away; NULL if none. */
static const char *near_metric(const char *name, const struct summary_cols *cols)
{
    size_t len = strlen(name), best_d = 3;
    const char *best = NULL;
    for (size_t m = 0; m < cols->n; m++) {
        const char *c = cols->c[m].name;
        size_t l = strlen(c);
        if (output_kind_is_metric(cols->c[m].kind) && l > len && c[l - len - 1] == '_' &&
            strcmp(c + l - len, name) == 0)
            return c;
    }
    for (size_t m = 0; m < cols->n; m++) {
        size_t d = scenario_edit_distance(name, cols->c[m].name);
        if (output_kind_is_metric(cols->c[m].kind) && d < best_d)
            best = cols->c[m].name, best_d = d;
    }
    return best;
}

/* Whether name is a metric of the scenario's summary (cols); says which
 * are when it is not. */
bool summary_check_metric(const struct summary_cols *cols, const char *name, const char *option, char *err,
                       size_t errsz)
{
    long i = summary_cols_find(cols, name);
    if (i >= 0 && output_kind_is_metric(cols->c[i].kind))
        return true;
    const char *near = near_metric(name, cols);
    if (near != NULL) {
        snprintf(err, errsz, "%s %s: no such metric; did you mean '%s'? (retrystorm list metrics)", option, name,
                 near);
        return false;
    }
    int w = snprintf(err, errsz, "%s %s: no such metric; the metrics are:", option, name);
    size_t used = w > 0 ? (size_t)w : 0;
    for (size_t m = 0; m < cols->n && used < errsz; m++) {
        if (!output_kind_is_metric(cols->c[m].kind))
            continue;
        w = snprintf(err + used, errsz - used, " %s", cols->c[m].name);
        used += w > 0 ? (size_t)w : 0;
    }
    return false;
}

/* ---- list metrics ---- */

/* The columns of the experiments' tables that are not metrics. */
static const struct {
    const char *name, *unit, *meaning;
} labels[] = {
    {"scenario", "name", "(run, run --reps) the scenario's name"},
    {"seed", "integer", "(run) the seed the run used"},
    {"variant", "name", "(compare) the variant's label"},
    {"point", "index", "(sweep, merge, tune) the grid point, from 0"},
    {"<key>", "as the key", "(sweep, compare, tune) the value of each --grid or --vary key"},
    {"replication", "index", "(compare's and run --reps' replications.csv, jobs.csv) the replication, from 0"},
    {"job", "index", "(jobs.csv) the job: point × reps + replication"},
    {"rank", "index", "(tune) the feasible points' order, best first; empty for an infeasible point"},
    {"feasible", "0/1", "(tune) every constraint's pessimistic side clears it"},
    {"pareto", "0/1", "(tune) on the Pareto front of the objectives"},
    {"tied", "0/1", "(tune) its first objective within the best's 95 % interval"},
    {"score", "as the metric", "(tune) the first objective's pessimistic side, signed so that more is better"},
    {"margin", "as the trigger", "(tune --trigger) the largest trigger that recovers with probability >= --level"},
    {"margin_fails", "as the trigger", "(tune --trigger) the smallest trigger probed that does not"},
    {"reps", "count", "(run --reps, sweep, compare, tune) the replications the statistics are over"},
    {"<metric>_sd", "as the metric", "(run --reps, sweep, compare, tune) the standard deviation over replications"},
    {"<metric>_hw", "as the metric", "(run --reps, sweep, compare, tune) the 95 % Student-t half-width"},
};

void summary_list(FILE *f)
{
    fprintf(f, "%-24s %-14s %s\n", "metric", "unit", "meaning");
    for (size_t i = 0; i < NTABLE; i++) {
        char name[64];
        expand(name, sizeof name, table[i].name, families[table[i].family].shown);
        fprintf(f, "%-24s %-14s %s\n", name, table[i].unit, table[i].meaning);
    }
    for (size_t i = 0; i < sizeof labels / sizeof labels[0]; i++)
        fprintf(f, "%-24s %-14s %s\n", labels[i].name, labels[i].unit, labels[i].meaning);
}
