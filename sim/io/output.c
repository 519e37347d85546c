/*
 * output — CSV writers (atomic), the effective scenario, the human summary.
 * See output.h.
 */
#define _POSIX_C_SOURCE 200809L

#include "output.h"

#include "jsonout.h"
#include "outdir.h"
#include "phasewin.h"
#include "results.h"
#include "scenario.h"

#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The peak of the server's arrivals per second averaged over the last
 * PEAK_WINDOW_S of whole buckets (at least one), from bucket `first` (the
 * warm-up's) on: with a herd at 10 ms buckets, what a figure's rolling
 * mean shows, not the one bucket that every variant shares. O(buckets). */
#define PEAK_WINDOW_S 1.0
static double peak_rate_window(const struct metrics *m, size_t first)
{
    double best = -1, sum = 0, len = 0;
    size_t from = first;
    for (size_t i = first; i < m->nbuckets; i++) {
        sum += (double)m->b[i].server_arrivals;
        len += metrics_bucket_len(m, i);
        while (i > from && len - metrics_bucket_len(m, from) >= PEAK_WINDOW_S - 1e-9) {
            sum -= (double)m->b[from].server_arrivals;
            len -= metrics_bucket_len(m, from++);
        }
        if (len >= PEAK_WINDOW_S - 1e-9 && sum / len > best)
            best = sum / len;
    }
    if (best < 0) /* a run shorter than the window: its mean */
        best = len > 0 ? sum / len : 0;
    return best;
}

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
    o->limited = m->limited;
    o->dropped = m->dropped;
    o->side_effects = m->side_effects;
    o->duplicates = m->duplicates;
    o->retry_after_waits = m->retry_after_waits;
    o->hedges = m->hedges;
    o->hedge_wins = m->hedge_wins;
    o->cancelled = m->cancelled;
    o->cancelled_before_start = m->cancelled_before_start;
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
    o->peak_rate_1s = peak_rate_window(m, metrics_first_bucket(m, m->warmup));
    struct verdict_result v;
    sim_verdict(s, &v);
    o->verdict = (int)v.v;
    snprintf(o->verdict_reason, sizeof o->verdict_reason, "%s", v.reason);
    /* 1 recovered; 0 metastable, or overloaded with a trigger; empty without one, or undetermined */
    o->recovered = v.v == VERDICT_RECOVERED                                    ? 1
                   : v.triggered && (v.v == VERDICT_METASTABLE || v.v == VERDICT_OVERLOADED) ? 0
                                                                               : -1;
    o->recovery_s = v.recovery_s;
    o->events = m->events;
    o->wall_s = wall_s;
    o->complete = sim_complete(s);
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

/* ---- summary.csv and summary.json ---- */

/* The scenario's columns; a scenario that loaded has names that give
 * distinct columns (scenario_check), so a failure here is a bug. */
static void columns_of(const struct sim *s, struct summary_cols *cols)
{
    char err[256];
    if (summary_cols_init(cols, sim_scenario(s), err, sizeof err) != 0) {
        fprintf(stderr, "retrystorm: %s\n", err);
        abort();
    }
}

/* The run's summary as a one-row results table: scenario and seed, then
 * every column. */
static void run_results(const struct sim *s, const struct summary *o, const struct summary_cols *cols,
                        struct results *r)
{
    double *row = malloc(cols->n * sizeof *row);
    char seed[32];
    snprintf(seed, sizeof seed, "%llu", (unsigned long long)sim_scenario(s)->seed);
    const char *labels[2] = {sim_scenario(s)->name, seed};
    if (row == NULL || results_init(r, 2, cols->n) != 0) {
        fprintf(stderr, "retrystorm: out of memory for the summary\n");
        abort();
    }
    snprintf(r->label_names[0], sizeof r->label_names[0], "scenario");
    snprintf(r->label_names[1], sizeof r->label_names[1], "seed");
    for (size_t i = 0; i < cols->n; i++)
        r->cols[i] = (struct results_col){"", cols->c[i].kind, false};
    for (size_t i = 0; i < cols->n; i++)
        snprintf(r->cols[i].name, sizeof r->cols[i].name, "%s", cols->c[i].name);
    summary_row(cols, s, o, row);
    if (results_add(r, labels, row) != 0) {
        fprintf(stderr, "retrystorm: out of memory for the summary\n");
        abort();
    }
    free(row);
}

void output_write_summary_csv(FILE *f, const struct sim *s, const struct summary *o,
                              const struct summary_cols *cols)
{
    struct results r;
    run_results(s, o, cols, &r);
    results_write_csv(f, &r);
    results_fini(&r);
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

/* phases.csv: one row per window of phasewin.h, its end cut where the run
 * ended (interrupted); ok_share and p99_s over the outcomes in the window,
 * amplification over the arrivals in it, goodput over its length; an empty
 * cell where the window has nothing to divide by. */
static void write_phases(FILE *f, const struct sim *s, const struct summary *sum)
{
    (void)sum;
    const struct phasewin *p = sim_phasewin(s);
    rs_time reached = sim_end(s);
    fprintf(f, "window,name,start_s,end_s,requests,server_arrivals,ended,ok,ok_share,p99_s,"
               "amplification,goodput\n");
    for (size_t i = 0; i < p->n; i++) {
        const struct phasewin_win *w = &p->w[i];
        rs_time start = w->start < reached ? w->start : reached;
        rs_time end = w->end < reached ? w->end : reached;
        fprintf(f, "%s,%s,%.9g,%.9g,%llu,%llu,%llu,%llu", phasewin_kind_names[w->kind], w->name,
                units_seconds(start), units_seconds(end), (unsigned long long)w->requests,
                (unsigned long long)w->server_arrivals, (unsigned long long)w->ended,
                (unsigned long long)w->ok);
        cell(f, w->ended ? (double)w->ok / (double)w->ended : -1.0);
        cell(f, metrics_quantile(&w->lat, 0.99));
        cell(f, w->requests ? (double)w->server_arrivals / (double)w->requests : -1.0);
        cell(f, end > start ? (double)w->ok / units_seconds(end - start) : -1.0);
        fputc('\n', f);
    }
}

static void write_summary(FILE *f, const struct sim *s, const struct summary *sum)
{
    struct summary_cols cols;
    columns_of(s, &cols);
    output_write_summary_csv(f, s, sum, &cols);
    summary_cols_fini(&cols);
}

/* summary.json: the same table as summary.csv, from the numbers (jsonout). */
static void write_summary_json(FILE *f, const struct sim *s, const struct summary *sum)
{
    struct summary_cols cols;
    struct results r;
    columns_of(s, &cols);
    run_results(s, sum, &cols, &r);
    struct jsonout_meta meta = {"run", sim_scenario(s)->name, "summary.csv"};
    jsonout_write_results(f, &r, &meta);
    results_fini(&r);
    summary_cols_fini(&cols);
}

static void write_scenario(FILE *f, const struct sim *s, const struct summary *sum)
{
    (void)sum;
    scenario_write_ini(sim_scenario(s), f);
    fprintf(f, "; replication %u of seed %llu\n", sim_replication(s),
            (unsigned long long)sim_scenario(s)->seed);
}

/* Every file of a run: its name, whether this run has it (services.csv
 * only with services, caches.csv only with caches, phases.csv only with
 * phases or herds), and its writer. */
struct file_desc {
    const char *name;
    bool (*wanted)(const struct scenario *sc);
    void (*write)(FILE *f, const struct sim *s, const struct summary *sum);
};
static bool always(const struct scenario *sc) { return (void)sc, true; }
static bool has_graph(const struct scenario *sc) { return sc->graph; }
static bool has_caches(const struct scenario *sc) { return sc->ncaches > 0; }
static bool has_incident(const struct scenario *sc) { return sc->nphases > 0 || sc->nherds > 0; }
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
    {"phases.csv", has_incident, write_phases},
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
        if (output_file_close(&of[i], err, errsz) != 0)
            goto fail;
    }
    for (i = 0; i < F_N; i++)
        if (output_file_name(s, i) != NULL && output_file_rename(&of[i], err, errsz) != 0)
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

/* Where a drain ended, and a note when more than OUTPUT_IN_FLIGHT_NOTE of
 * the requests had no outcome at the end (their shares are then a matter
 * of where the run was cut). */
static void print_drain(FILE *f, const struct sim *s, const struct summary *o)
{
    const struct scenario *sc = sim_scenario(s);
    char a[32], b[32];
    if (sc->drain && sim_complete(s))
        fprintf(f, "  drained: arrivals stopped at %s, the run ended at %s\n",
                units_format_duration(sc->duration, a, sizeof a), units_format_duration(sim_end(s), b, sizeof b));
    if (sim_drain_left(s) > 0)
        fprintf(f, "  the drain reached drain_limit = %s with %llu requests still in flight\n",
                units_format_duration(sc->drain_limit, a, sizeof a), (unsigned long long)sim_drain_left(s));
    if (o->requests == 0 || (double)o->in_flight <= OUTPUT_IN_FLIGHT_NOTE * (double)o->requests)
        return;
    fprintf(f, "  note: %.2f%% of the requests were still in flight at the end, so the other shares depend on "
               "where the run stopped; %s\n", 100.0 * (double)o->in_flight / (double)o->requests,
            sc->drain ? "a longer drain_limit (or timeouts that end them) gives them outcomes"
                      : "[run] drain = true (or a longer run) gives them outcomes");
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
    print_drain(f, s, o);
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
    fprintf(f, "\n  goodput %.1f/s; peak 1s %.1f/s at the server (its busiest bucket %.1f/s); wasted work %llu of %llu served\n",
            o->goodput, o->peak_rate_1s, o->peak_server_rate, (unsigned long long)o->wasted,
            (unsigned long long)o->server_completions);
    if (sc->graph)
        print_hottest(f, s);
    for (unsigned c = 0; c < sc->ncaches; c++)
        fprintf(f, "  cache %s: hit ratio %.1f%%\n", sc->caches[c].name,
                100.0 * sim_cache_hit_ratio(s, c));
    fprintf(f, "  verdict: %s: %s\n", verdict_names[o->verdict], o->verdict_reason);
    fprintf(f, "  %llu events in %.2f s (%.2f M events/s)\n", (unsigned long long)o->events,
            o->wall_s, o->wall_s > 0 ? (double)o->events / o->wall_s / 1e6 : 0.0);
    if (dir != NULL)
        fprintf(f, "  outputs in %s/\n", dir);
}
