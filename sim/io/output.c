/*
 * output — CSV writers (atomic), the effective scenario, the human summary.
 * See output.h.
 */
#define _POSIX_C_SOURCE 200809L

#include "output.h"

#include "jsonout.h"
#include "outdir.h"

#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

void output_summarise(const struct sim *s, double wall_s, struct summary *o)
{
    const struct metrics *m = sim_metrics(s);
    const struct scenario *sc = sim_scenario(s);
    memset(o, 0, sizeof *o);
    o->requests = m->requests;
    for (int i = 0; i < OUT_NOUTCOMES; i++)
        o->outcomes[i] = m->outcomes[i];
    o->in_flight = sim_in_flight(s);
    unsigned top = sim_client_layer(s);
    o->attempts_mean = m->att_n ? m->att_sum[top] / (double)m->att_n : 0.0;
    o->attempts_max = m->att_max[top];
    o->amplification = m->att_n ? m->att_sum[m->nlayers] / (double)m->att_n : 0.0;
    o->server_arrivals = m->server_arrivals;
    o->server_completions = m->server_completions;
    o->rejected = m->rejected;
    o->wasted = m->wasted;
    o->lat_mean = metrics_mean_s(&m->lat_all);
    o->lat_p50 = metrics_quantile(&m->lat_all, 0.50);
    o->lat_p90 = metrics_quantile(&m->lat_all, 0.90);
    o->lat_p99 = metrics_quantile(&m->lat_all, 0.99);
    o->lat_p999 = metrics_quantile(&m->lat_all, 0.999);
    o->lat_max = m->lat_all.n ? units_seconds(m->lat_all.max) : -1.0;
    o->ok_lat_mean = metrics_mean_s(&m->lat_by[OUT_OK]);
    o->ok_lat_p99 = metrics_quantile(&m->lat_by[OUT_OK], 0.99);
    o->goodput = (double)m->outcomes[OUT_OK] / units_seconds(sc->duration - sc->warmup);
    for (size_t i = metrics_first_bucket(m, m->warmup); i < m->nbuckets; i++) { /* in the window */
        double r = (double)m->b[i].server_arrivals / metrics_bucket_len(m, i);
        if (r > o->peak_server_rate)
            o->peak_server_rate = r;
    }
    rs_time end = sim_last_phase_end(s), start;
    o->recovered = -1;
    o->recovery_s = -1.0;
    if (end >= 0 && sim_complete(s)) { /* an interrupted run cannot say */
        o->recovered = metrics_recovery(m, end, OUTPUT_RECOVERY_WINDOW, OUTPUT_RECOVERY_SHARE,
                                        &start);
        if (o->recovered)
            o->recovery_s = units_seconds(start - end);
    }
    o->events = m->events;
    o->wall_s = wall_s;
    o->complete = sim_complete(s);
}

/* ---- atomic files ---- */

int output_file_open(struct output_file *of, const char *dir, const char *name, char *err, size_t errsz)
{
    memset(of, 0, sizeof *of);
    of->dirfd = -1;
    snprintf(of->name, sizeof of->name, "%s", name);
    snprintf(of->shown, sizeof of->shown, "%.4000s/%s", dir, name);
    of->dirfd = outdir_open_dirfd(dir);
    int fd = of->dirfd >= 0 ? outdir_tmpfile(of->dirfd, name, of->tmp, sizeof of->tmp) : -1;
    of->f = fd >= 0 ? fdopen(fd, "w") : NULL;
    if (of->f == NULL) {
        snprintf(err, errsz, "cannot write %s: %s", of->shown, strerror(errno));
        if (fd >= 0)
            close(fd);
        else
            of->tmp[0] = '\0'; /* no file of ours by that name */
        output_file_discard(of);
        return -1;
    }
    return 0;
}

/* Flushes, syncs and closes; the file stays under its temporary name. */
static int file_close(struct output_file *of, char *err, size_t errsz)
{
    int bad = ferror(of->f) | fflush(of->f) | fsync(fileno(of->f));
    if (fclose(of->f) != 0)
        bad = 1;
    of->f = NULL;
    if (bad) {
        snprintf(err, errsz, "error writing %s: %s", of->shown, strerror(errno));
        return -1;
    }
    return 0;
}

/* Renames the closed temporary into place and closes the directory. */
static int file_rename(struct output_file *of, char *err, size_t errsz)
{
    if (renameat(of->dirfd, of->tmp, of->dirfd, of->name) != 0) {
        snprintf(err, errsz, "cannot rename %s into place: %s", of->shown, strerror(errno));
        return -1;
    }
    of->tmp[0] = '\0';
    fsync(of->dirfd); /* the rename itself survives a power cut */
    close(of->dirfd);
    of->dirfd = -1;
    return 0;
}

int output_file_commit(struct output_file *of, char *err, size_t errsz)
{
    if (file_close(of, err, errsz) != 0 || file_rename(of, err, errsz) != 0) {
        output_file_discard(of);
        return -1;
    }
    return 0;
}

void output_file_discard(struct output_file *of)
{
    if (of->f != NULL)
        fclose(of->f);
    of->f = NULL;
    if (of->tmp[0] && of->dirfd >= 0)
        unlinkat(of->dirfd, of->tmp, 0);
    of->tmp[0] = '\0';
    if (of->dirfd >= 0)
        close(of->dirfd);
    of->dirfd = -1;
}

int output_mkdir(const char *dir, char *err, size_t errsz) { return outdir_mkdir(dir, err, errsz); }

/* A value, or an empty cell when v < 0 means "none". */
static void cell(FILE *f, double v)
{
    if (v >= 0.0)
        fprintf(f, ",%.9g", v);
    else
        fputc(',', f);
}

/* ---- the files ---- */

/* The error classes with columns: bulkhead only where services are used
 * (earlier outputs keep their columns). */
static int nclasses(const struct scenario *sc) { return sc->graph ? CLS_N : CLS_BULKHEAD; }

static void write_timeseries(FILE *f, const struct sim *s, const struct summary *sum)
{
    (void)sum;
    const struct metrics *m = sim_metrics(s);
    const struct scenario *sc = sim_scenario(s);
    fprintf(f, "t,offered,attempts");
    for (size_t l = 0; l < m->nlayers; l++)
        fprintf(f, ",attempts_%s", sc->layers[l].name);
    fprintf(f, ",server_arrivals,server_completions,rejected");
    for (int o = 0; o < OUT_NOUTCOMES; o++)
        fprintf(f, ",%s", metrics_outcome_names[o]);
    fprintf(f, ",wasted,duplicates");
    for (int e = CLS_TIMEOUT; e < nclasses(sc); e++)
        fprintf(f, ",err_%s", errclass_names[e]);
    fprintf(f, ",queue_len,busy,in_flight,lat_p50,lat_p99");
    for (size_t l = 0; l < m->nlayers; l++) {
        const char *n = sc->layers[l].name;
        if (sc->layers[l].budget->id != BUDGET_NONE)
            fprintf(f, ",refused_%s,budget_%s", n, n);
        if (sc->layers[l].breaker->id != BREAKER_NONE)
            fprintf(f, ",short_circuited_%s,opened_%s,open_share_%s", n, n, n);
    }
    fputc('\n', f);
    for (size_t i = 0; i < m->nbuckets; i++) {
        const struct bucket *b = &m->b[i];
        double len = metrics_bucket_len(m, i), ns = len * 1e9;
        const uint64_t *att = &m->attempts[i * m->nlayers];
        fprintf(f, "%.9g,%.9g,%.9g", units_seconds((rs_time)i * m->bucket_ns),
                (double)b->offered / len, (double)att[sim_client_layer(s)] / len);
        for (size_t l = 0; l < m->nlayers; l++)
            fprintf(f, ",%.9g", (double)att[l] / len);
        fprintf(f, ",%.9g,%.9g,%.9g", (double)b->server_arrivals / len,
                (double)b->server_completions / len, (double)b->rejected / len);
        for (int o = 0; o < OUT_NOUTCOMES; o++)
            fprintf(f, ",%.9g", (double)b->outcomes[o] / len);
        fprintf(f, ",%.9g,%.9g", (double)b->wasted / len, (double)b->duplicates / len);
        for (int e = CLS_TIMEOUT; e < nclasses(sc); e++)
            fprintf(f, ",%.9g", (double)b->errors[e] / len);
        fprintf(f, ",%.9g,%.9g,%.9g", b->area_queue / ns, b->area_busy / ns, b->area_inflight / ns);
        cell(f, b->lat_p50);
        cell(f, b->lat_p99);
        for (size_t l = 0; l < m->nlayers; l++) {
            const struct layer_bucket *lb = &m->lb[i * m->nlayers + l];
            if (sc->layers[l].budget->id != BUDGET_NONE) {
                fprintf(f, ",%.9g", (double)lb->refused / len);
                cell(f, lb->budget_level);
            }
            if (sc->layers[l].breaker->id != BREAKER_NONE)
                fprintf(f, ",%.9g,%.9g,%.9g", (double)lb->short_circuited / len,
                        (double)lb->transitions / len, lb->open_share);
        }
        fputc('\n', f);
    }
}

/* ---- the columns of summary.csv ---- */

/* What each kind of column allows: [lo, hi] (so finite), whole numbers
 * only or not; and whether it is a metric. */
static const struct kind_desc {
    double lo, hi;
    bool whole, metric;
    const char *allows;
} kinds[] = {
    [OUTPUT_TEXT] = {1, 0, false, false, "text"},
    [OUTPUT_SEED] = {0, 18446744073709549568.0, true, false, "a seed (an integer from 0 to 2^64 - 1)"},
    [OUTPUT_COUNT] = {0, 9007199254740992.0, true, true, "a count (an integer from 0 to 9007199254740992)"},
    [OUTPUT_SHARE] = {0, 1, false, true, "a share (a number from 0 to 1)"},
    [OUTPUT_FLAG] = {0, 1, true, true, "a flag (0 or 1)"},
    [OUTPUT_SECONDS] = {0, DBL_MAX, false, true, "seconds (a finite number >= 0)"},
    [OUTPUT_REAL] = {0, DBL_MAX, false, true, "a finite number >= 0"},
    [OUTPUT_WALL] = {0, DBL_MAX, false, false, "wall-clock seconds (a finite number >= 0)"},
};

bool output_kind_is_metric(enum output_kind k) { return kinds[k].metric; }

bool output_value_ok(enum output_kind k, double v)
{
    const struct kind_desc *d = &kinds[k];
    return v >= d->lo && v <= d->hi && (!d->whole || v == floor(v)); /* NaN: false */
}

const char *output_kind_allows(enum output_kind k) { return kinds[k].allows; }

/* The families a descriptor may stand for: one column, or one per outcome
 * or per error class (bulkhead only with services, as err_bulkhead). */
enum family { ONE, PER_OUTCOME, PER_ERROR };
static const struct family_desc {
    const char *const *names;
    size_t from, to;
} families[] = {
    [ONE] = {NULL, 0, 1},
    [PER_OUTCOME] = {metrics_outcome_names, 0, OUT_NOUTCOMES},
    [PER_ERROR] = {errclass_names, CLS_TIMEOUT, CLS_BULKHEAD},
};

/* The columns of summary.csv, in order, and their kinds: the one list of
 * them (output_write_summary_csv writes the cells in this order; sweeps
 * read jobs.csv by it). A family's columns are named prefix, member's name,
 * suffix; wall-clock columns come last, after the services' columns. */
static const struct column_desc {
    const char *prefix, *suffix;
    enum output_kind kind;
    enum family family;
} columns[] = {
    {"scenario", "", OUTPUT_TEXT, ONE},
    {"seed", "", OUTPUT_SEED, ONE},
    {"requests", "", OUTPUT_COUNT, ONE},
    {"", "", OUTPUT_COUNT, PER_OUTCOME},
    {"in_flight", "", OUTPUT_COUNT, ONE},
    {"", "_share", OUTPUT_SHARE, PER_OUTCOME},
    {"in_flight_share", "", OUTPUT_SHARE, ONE},
    {"attempts_mean", "", OUTPUT_REAL, ONE},
    {"attempts_max", "", OUTPUT_COUNT, ONE},
    {"amplification", "", OUTPUT_REAL, ONE},
    {"server_arrivals", "", OUTPUT_COUNT, ONE},
    {"server_completions", "", OUTPUT_COUNT, ONE},
    {"rejected", "", OUTPUT_COUNT, ONE},
    {"limited", "", OUTPUT_COUNT, ONE},
    {"dropped", "", OUTPUT_COUNT, ONE},
    {"wasted", "", OUTPUT_COUNT, ONE},
    {"side_effects", "", OUTPUT_COUNT, ONE},
    {"duplicates", "", OUTPUT_COUNT, ONE},
    {"retry_after_waits", "", OUTPUT_COUNT, ONE},
    {"hedges", "", OUTPUT_COUNT, ONE},
    {"hedge_wins", "", OUTPUT_COUNT, ONE},
    {"cancelled", "", OUTPUT_COUNT, ONE},
    {"cancelled_before_start", "", OUTPUT_COUNT, ONE},
    {"err_", "", OUTPUT_COUNT, PER_ERROR},
    {"lat_mean", "", OUTPUT_SECONDS, ONE},
    {"lat_p50", "", OUTPUT_SECONDS, ONE},
    {"lat_p90", "", OUTPUT_SECONDS, ONE},
    {"lat_p99", "", OUTPUT_SECONDS, ONE},
    {"lat_p999", "", OUTPUT_SECONDS, ONE},
    {"lat_max", "", OUTPUT_SECONDS, ONE},
    {"ok_lat_mean", "", OUTPUT_SECONDS, ONE},
    {"ok_lat_p99", "", OUTPUT_SECONDS, ONE},
    {"goodput", "", OUTPUT_REAL, ONE},
    {"peak_server_rate", "", OUTPUT_REAL, ONE},
    {"recovered", "", OUTPUT_FLAG, ONE},
    {"recovery_s", "", OUTPUT_SECONDS, ONE},
    {"complete", "", OUTPUT_FLAG, ONE},
    {"events", "", OUTPUT_COUNT, ONE},
    {"wall_s", "", OUTPUT_WALL, ONE},
};

size_t output_summary_columns(struct output_column *cols, size_t max)
{
    size_t n = 0;
    for (size_t i = 0; i < sizeof columns / sizeof *columns; i++) {
        const struct column_desc *c = &columns[i];
        const struct family_desc *fam = &families[c->family];
        for (size_t k = fam->from; k < fam->to && n < max; k++, n++) {
            snprintf(cols[n].name, sizeof cols[n].name, "%s%s%s", c->prefix,
                     fam->names ? fam->names[k] : "", c->suffix);
            cols[n].kind = c->kind;
        }
    }
    return n;
}

/* The header's columns: every one but wall-clock time's (the first
 * without a comma before it), or only wall-clock time's. */
static void header_columns(FILE *f, bool wall)
{
    struct output_column c[OUTPUT_MAX_COLUMNS];
    size_t n = output_summary_columns(c, OUTPUT_MAX_COLUMNS), shown = 0;
    for (size_t i = 0; i < n; i++)
        if ((c[i].kind == OUTPUT_WALL) == wall)
            fprintf(f, "%s%s", wall || shown++ ? "," : "", c[i].name);
}

void output_write_summary_header(FILE *f)
{
    header_columns(f, false);
    header_columns(f, true);
    fputc('\n', f);
}

/* run's summary.csv of a scenario with services: err_bulkhead, then each
 * service's utilization (workers held / workers) and wasted executions,
 * after warmup; with caches, each cache's hit ratio after warmup. */
static void services_header(FILE *f, const struct scenario *sc)
{
    if (sc->graph) {
        fprintf(f, ",err_bulkhead");
        for (unsigned v = 0; v < sc->nservices; v++)
            fprintf(f, ",%s_utilization,%s_wasted", sc->services[v].name, sc->services[v].name);
    }
    for (unsigned c = 0; c < sc->ncaches; c++)
        fprintf(f, ",%s_hit_ratio", sc->caches[c].name);
}

static void services_cells(FILE *f, const struct sim *s)
{
    const struct scenario *sc = sim_scenario(s);
    if (sc->graph) {
        fprintf(f, ",%llu", (unsigned long long)sim_metrics(s)->errors[CLS_BULKHEAD]);
        for (unsigned v = 0; v < sc->nservices; v++) {
            struct sim_service_row r;
            sim_service_totals(s, v, &r);
            fprintf(f, ",%.9g,%llu", r.workers > 0 ? r.busy / r.workers : 0.0,
                    (unsigned long long)r.wasted);
        }
    }
    for (unsigned c = 0; c < sc->ncaches; c++)
        fprintf(f, ",%.9g", sim_cache_hit_ratio(s, c));
}

void output_write_summary_csv(FILE *f, const struct sim *s, const struct summary *o, unsigned flags)
{
    const struct scenario *sc = sim_scenario(s);
    const struct metrics *m = sim_metrics(s);
    double n = o->requests ? (double)o->requests : 1.0;
    bool services = (flags & OUTPUT_SERVICES) && (sc->graph || sc->ncaches > 0);
    if (flags & OUTPUT_HEADER) {
        header_columns(f, false);
        if (services)
            services_header(f, sc);
        header_columns(f, true);
        fputc('\n', f);
    }

    fprintf(f, "%s,%llu,%llu", sc->name, (unsigned long long)sc->seed,
            (unsigned long long)o->requests);
    for (int i = 0; i < OUT_NOUTCOMES; i++)
        fprintf(f, ",%llu", (unsigned long long)o->outcomes[i]);
    fprintf(f, ",%llu", (unsigned long long)o->in_flight);
    for (int i = 0; i < OUT_NOUTCOMES; i++)
        fprintf(f, ",%.9g", (double)o->outcomes[i] / n);
    fprintf(f, ",%.9g,%.9g,%llu,%.9g,%llu,%llu,%llu,%llu,%llu,%llu,%llu,%llu,%llu,%llu,%llu,%llu,%llu",
            (double)o->in_flight / n, o->attempts_mean, (unsigned long long)o->attempts_max,
            o->amplification, (unsigned long long)o->server_arrivals,
            (unsigned long long)o->server_completions, (unsigned long long)o->rejected,
            (unsigned long long)m->limited, (unsigned long long)m->dropped,
            (unsigned long long)o->wasted, (unsigned long long)m->side_effects,
            (unsigned long long)m->duplicates, (unsigned long long)m->retry_after_waits,
            (unsigned long long)m->hedges, (unsigned long long)m->hedge_wins,
            (unsigned long long)m->cancelled, (unsigned long long)m->cancelled_before_start);
    for (int e = CLS_TIMEOUT; e < CLS_BULKHEAD; e++)
        fprintf(f, ",%llu", (unsigned long long)m->errors[e]);
    cell(f, o->lat_mean);
    cell(f, o->lat_p50);
    cell(f, o->lat_p90);
    cell(f, o->lat_p99);
    cell(f, o->lat_p999);
    cell(f, o->lat_max);
    cell(f, o->ok_lat_mean);
    cell(f, o->ok_lat_p99);
    fprintf(f, ",%.9g,%.9g,", o->goodput, o->peak_server_rate);
    if (o->recovered >= 0)
        fprintf(f, "%d", o->recovered);
    cell(f, o->recovery_s);
    fprintf(f, ",%d,%llu", o->complete, (unsigned long long)o->events);
    if (services)
        services_cells(f, s);
    fprintf(f, ",%.3f\n", o->wall_s);
}

char *output_summary_row(const struct sim *s, const struct summary *sum)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (f == NULL)
        return NULL;
    output_write_summary_csv(f, s, sum, 0);
    if (fclose(f) != 0) {
        free(text);
        return NULL;
    }
    text[strcspn(text, "\n")] = '\0';
    return text;
}

static void write_latency(FILE *f, const struct sim *s, const struct summary *sum)
{
    (void)sum;
    const struct metrics *m = sim_metrics(s);
    fprintf(f, "outcome,quantile,latency_s\n");
    for (int o = -1; o < OUT_NOUTCOMES; o++) {
        const struct lat_hist *h = o < 0 ? &m->lat_all : &m->lat_by[o];
        const char *name = o < 0 ? "all" : metrics_outcome_names[o];
        if (h->n == 0)
            continue;
        for (int i = 0; i <= 100; i++)
            fprintf(f, "%s,%.2f,%.9g\n", name, i / 100.0, metrics_quantile(h, i / 100.0));
        fprintf(f, "%s,0.999,%.9g\n%s,0.9999,%.9g\n", name, metrics_quantile(h, 0.999), name,
                metrics_quantile(h, 0.9999));
    }
}

static void write_attempts(FILE *f, const struct sim *s, const struct summary *sum)
{
    (void)sum;
    const struct metrics *m = sim_metrics(s);
    const struct scenario *sc = sim_scenario(s);
    fprintf(f, "level,attempts,requests,share\n");
    unsigned hedged = 0;
    for (size_t l = 0; l <= m->nlayers + m->nextra; l++) {
        const gsl_histogram *h = m->att[l];
        char name[SCENARIO_NAME_MAX + 8];
        if (l < m->nlayers) {
            snprintf(name, sizeof name, "%s", sc->layers[l].name);
        } else if (l == m->nlayers) {
            snprintf(name, sizeof name, "server");
        } else { /* the k-th hedged layer's hedges per request */
            while (sc->layers[hedged].hedge_mode == HEDGE_NONE)
                hedged++;
            snprintf(name, sizeof name, "%s.hedges", sc->layers[hedged++].name);
        }
        for (size_t i = 0; i < h->n; i++) {
            if (h->bin[i] == 0.0)
                continue;
            fprintf(f, "%s,%s%zu,%.0f,%.9g\n", name, i + 1 == h->n && i >= METRICS_ATT_BINS ? ">=" : "",
                    i, h->bin[i], m->att_n ? h->bin[i] / (double)m->att_n : 0.0);
        }
    }
}

/* layers.csv; with services, each layer's edge (from, to) and its
 * bulkhead rejections follow. */
static void write_layers(FILE *f, const struct sim *s, const struct summary *sum)
{
    (void)sum;
    const struct scenario *sc = sim_scenario(s);
    fprintf(f, "layer,instances,attempts,retries,hedges,hedge_wins,hedges_suppressed,abandoned,"
               "timeouts,refused,short_circuited,transitions,budget,budget_states,breaker,"
               "breaker_states,hedge,cancel%s\n",
            sc->graph ? ",from,to,bulkhead" : "");
    for (unsigned l = 0; l < sc->nlayers; l++) {
        const struct layer_cfg *c = &sc->layers[l];
        struct sim_layer_totals t;
        sim_layer_totals(s, l, &t);
        fprintf(f, "%s,%u,%llu,%llu,%llu,%llu,%llu,%llu,", c->name, t.instances,
                (unsigned long long)t.attempts, (unsigned long long)t.retries,
                (unsigned long long)t.hedges, (unsigned long long)t.hedge_wins,
                (unsigned long long)t.hedges_suppressed, (unsigned long long)t.abandoned);
        fprintf(f, "%llu,%llu,%llu,%llu,%s,%u,%s,%u,%s,%s", (unsigned long long)t.timeouts,
                (unsigned long long)t.refused, (unsigned long long)t.short_circuited,
                (unsigned long long)t.transitions, c->budget->name, t.budget_states,
                c->breaker->name, t.breaker_states, hedge_kinds[c->hedge].name,
                c->cancel == CANCEL_ON_ABANDON ? "on-abandon" : "none");
        if (sc->graph)
            fprintf(f, ",%s,%s,%llu",
                    c->from_service == SCENARIO_CLIENT ? "client" : sc->services[c->from_service].name,
                    sc->services[c->to_service].name, (unsigned long long)t.bulkheaded);
        fputc('\n', f);
    }
}

static void service_row(FILE *f, const struct sim *s, size_t b, unsigned v, unsigned r)
{
    struct sim_service_row w;
    if (!sim_service_row(s, v, r, b, &w))
        return;
    double len = metrics_bucket_len(sim_metrics(s), b);
    fprintf(f, "%.9g,%s,%u,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g\n",
            units_seconds((rs_time)b * sim_metrics(s)->bucket_ns), sim_scenario(s)->services[v].name,
            r, (double)w.arrivals / len, (double)w.started / len, (double)w.completed / len,
            (double)w.rejected / len, w.queue_len, w.busy, w.working,
            w.workers > 0 ? w.busy / w.workers : 0.0, (double)w.wasted / len,
            (double)w.dep_calls / len);
}

/* services.csv: per bucket, service and replica (0: the service's total),
 * flows per second and time-averaged levels. */
static void write_services(FILE *f, const struct sim *s, const struct summary *sum)
{
    (void)sum;
    const struct scenario *sc = sim_scenario(s);
    fprintf(f, "t,service,replica,arrivals,started,completed,rejected,queue_len,busy,working,"
               "utilization,wasted,dep_calls\n");
    for (size_t b = 0; b < sim_metrics(s)->nbuckets; b++)
        for (unsigned v = 0; v < sc->nservices; v++)
            for (unsigned r = 0; r <= (sc->services[v].replicas > 1 ? sc->services[v].replicas : 0); r++)
                service_row(f, s, b, v, r);
}

/* caches.csv: per bucket and cache, flows per second and the entries at
 * the bucket's end. */
static void write_caches(FILE *f, const struct sim *s, const struct summary *sum)
{
    (void)sum;
    const struct scenario *sc = sim_scenario(s);
    fprintf(f, "t,cache,lookups,hits,misses,coalesced,entries,evictions,expirations\n");
    for (size_t b = 0; b < sim_metrics(s)->nbuckets; b++) {
        double len = metrics_bucket_len(sim_metrics(s), b);
        for (unsigned c = 0; c < sc->ncaches; c++) {
            struct sim_cache_row w;
            if (!sim_cache_row(s, c, b, &w))
                continue;
            fprintf(f, "%.9g,%s,%.9g,%.9g,%.9g,%.9g,%llu,%.9g,%.9g\n",
                    units_seconds((rs_time)b * sim_metrics(s)->bucket_ns), sc->caches[c].name,
                    (double)w.n.lookups / len, (double)w.n.hits / len, (double)w.n.misses / len,
                    (double)w.n.coalesced / len, (unsigned long long)w.entries,
                    (double)w.n.evictions / len, (double)w.n.expirations / len);
        }
    }
}

static void write_summary(FILE *f, const struct sim *s, const struct summary *sum)
{
    output_write_summary_csv(f, s, sum, OUTPUT_HEADER | OUTPUT_SERVICES);
}

/* summary.json: summary.csv's text as JSON (jsonout). */
static void write_summary_json(FILE *f, const struct sim *s, const struct summary *sum)
{
    char *buf = NULL, err[128];
    size_t len = 0;
    FILE *m = open_memstream(&buf, &len);
    if (m != NULL)
        write_summary(m, s, sum);
    if (m == NULL || fclose(m) != 0) { /* STYLE: out of memory aborts */
        fprintf(stderr, "retrystorm: out of memory writing summary.json (%zu bytes)\n", len);
        abort();
    }
    struct jsonout_meta meta = {"run", sim_scenario(s)->name, "summary.csv"};
    if (jsonout_write(f, buf, len, &meta, err, sizeof err) != 0) { /* our own table: a bug */
        fprintf(stderr, "retrystorm: summary.json: %s\n", err);
        abort();
    }
    free(buf);
}

static void write_scenario(FILE *f, const struct sim *s, const struct summary *sum)
{
    (void)sum;
    scenario_write_ini(sim_scenario(s), f);
    fprintf(f, "; replication %u of seed %llu\n", sim_replication(s),
            (unsigned long long)sim_scenario(s)->seed);
}

/* Every file of a run: its name, whether this run has it (services.csv
 * only with services, caches.csv only with caches), and its writer. */
struct file_desc {
    const char *name;
    bool (*wanted)(const struct scenario *sc);
    void (*write)(FILE *f, const struct sim *s, const struct summary *sum);
};
static bool always(const struct scenario *sc) { return (void)sc, true; }
static bool has_graph(const struct scenario *sc) { return sc->graph; }
static bool has_caches(const struct scenario *sc) { return sc->ncaches > 0; }
static const struct file_desc files[] = {
    {"timeseries.csv", always, write_timeseries},
    {"summary.csv", always, write_summary},
    {"summary.json", always, write_summary_json},
    {"latency.csv", always, write_latency},
    {"attempts.csv", always, write_attempts},
    {"layers.csv", always, write_layers},
    {"scenario.ini", always, write_scenario},
    {"services.csv", has_graph, write_services},
    {"caches.csv", has_caches, write_caches},
};
#define F_N (sizeof files / sizeof files[0])

const char *output_file_name(const struct sim *s, size_t i)
{
    return i < F_N && files[i].wanted(sim_scenario(s)) ? files[i].name : NULL;
}

size_t output_nfiles(void) { return F_N; }

void output_write_file(FILE *f, size_t i, const struct sim *s, const struct summary *sum)
{
    files[i].write(f, s, sum);
}

int output_write_dir(const char *dir, const struct sim *s, const struct summary *sum, char *err,
                     size_t errsz)
{
    size_t i;
    struct output_file of[F_N];
    for (i = 0; i < F_N; i++)
        of[i].f = NULL, of[i].dirfd = -1, of[i].tmp[0] = '\0';
    if (output_mkdir(dir, err, errsz) != 0)
        return -1;
    for (i = 0; i < F_N; i++) {
        if (output_file_name(s, i) == NULL)
            continue;
        if (output_file_open(&of[i], dir, files[i].name, err, errsz) != 0)
            goto fail;
        files[i].write(of[i].f, s, sum);
        if (file_close(&of[i], err, errsz) != 0)
            goto fail;
    }
    for (i = 0; i < F_N; i++)
        if (output_file_name(s, i) != NULL && file_rename(&of[i], err, errsz) != 0)
            goto fail;
    return 0;
fail:
    for (i = 0; i < F_N; i++)
        output_file_discard(&of[i]);
    return -1;
}

static void pct(FILE *f, const char *label, uint64_t n, uint64_t total)
{
    fprintf(f, "  %-10s %10llu  %6.2f%%\n", label, (unsigned long long)n,
            total ? 100.0 * (double)n / (double)total : 0.0);
}

static void ms(FILE *f, const char *label, double s)
{
    if (s < 0)
        fprintf(f, " %s -", label);
    else
        fprintf(f, " %s %.1f ms", label, s * 1e3);
}

/* The service whose workers were held the most (after warmup). */
static void print_hottest(FILE *f, const struct sim *s)
{
    const struct scenario *sc = sim_scenario(s);
    double best = -1.0;
    unsigned hot = 0;
    struct sim_service_row r, hr = {0};
    for (unsigned v = 0; v < sc->nservices; v++) {
        sim_service_totals(s, v, &r);
        double u = r.workers > 0 ? r.busy / r.workers : 0.0;
        if (u > best) {
            best = u;
            hot = v;
            hr = r;
        }
    }
    fprintf(f, "  hottest service: %s, workers %.0f%% held (%.0f%% working), %llu wasted executions\n",
            sc->services[hot].name, 100.0 * best,
            hr.workers > 0 ? 100.0 * hr.working / hr.workers : 0.0, (unsigned long long)hr.wasted);
}

void output_print_summary(FILE *f, const struct sim *s, const struct summary *o, const char *dir)
{
    const struct scenario *sc = sim_scenario(s);
    char d[32], w[32];
    fprintf(f, "retrystorm %s: %s (seed %llu), %s simulated", RS_VERSION, sc->name,
            (unsigned long long)sc->seed, units_format_duration(sc->duration, d, sizeof d));
    if (sc->warmup > 0)
        fprintf(f, ", statistics after %s warm-up", units_format_duration(sc->warmup, w, sizeof w));
    fprintf(f, "\n  requests   %10llu\n", (unsigned long long)o->requests);
    for (int i = 0; i < OUT_NOUTCOMES; i++)
        if (i == OUT_OK || i == OUT_EXHAUSTED || i == OUT_FAILED || o->outcomes[i] > 0)
            pct(f, metrics_outcome_names[i], o->outcomes[i], o->requests);
    pct(f, "in flight", o->in_flight, o->requests);
    const struct metrics *m = sim_metrics(s);
    if (m->side_effects > 0)
        fprintf(f, "  side effects %llu, of which duplicates %llu (requests charged more than once)\n",
                (unsigned long long)m->side_effects, (unsigned long long)m->duplicates);
    if (m->retry_after_waits > 0)
        fprintf(f, "  retries that waited for Retry-After: %llu\n",
                (unsigned long long)m->retry_after_waits);
    fprintf(f, "  attempts per request: mean %.3f, max %llu; server arrivals per request %.3f\n",
            o->attempts_mean, (unsigned long long)o->attempts_max, o->amplification);
    fprintf(f, "  latency:");
    ms(f, "p50", o->lat_p50);
    ms(f, "p90", o->lat_p90);
    ms(f, "p99", o->lat_p99);
    ms(f, "p99.9", o->lat_p999);
    ms(f, "max", o->lat_max);
    fprintf(f, "\n  goodput %.1f/s; peak server load %.1f/s; wasted work %llu of %llu served\n",
            o->goodput, o->peak_server_rate, (unsigned long long)o->wasted,
            (unsigned long long)o->server_completions);
    if (sc->graph)
        print_hottest(f, s);
    for (unsigned c = 0; c < sc->ncaches; c++)
        fprintf(f, "  cache %s: hit ratio %.1f%%\n", sc->caches[c].name,
                100.0 * sim_cache_hit_ratio(s, c));
    if (o->recovered == 1)
        fprintf(f, "  recovered %.0f s after the last phase ended\n", o->recovery_s);
    else if (o->recovered == 0)
        fprintf(f, "  did NOT recover after the last phase ended (no 10 s window with ok >= 90%% of offered)\n");
    fprintf(f, "  %llu events in %.2f s (%.2f M events/s)\n", (unsigned long long)o->events,
            o->wall_s, o->wall_s > 0 ? (double)o->events / o->wall_s / 1e6 : 0.0);
    if (dir != NULL)
        fprintf(f, "  outputs in %s/\n", dir);
}
