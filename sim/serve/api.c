/*
 * api — serve's answers as JSON. See api.h.
 */
#define _POSIX_C_SOURCE 200809L

#include "api.h"

#include <math.h>
#include <stddef.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "jsonout.h"
#include "output.h"
#include "scenario.h"
#include "sim.h"
#include "trace.h"

/* What a page may ask of one run on a laptop on stage: a gallery scenario
 * takes under 0.3 s and 20 M events; herd at 10 ms buckets is 5,000 rows. */
const struct api_limits api_default_limits = {
    .max_wall_s = 10.0,
    .max_events = 200000000ULL,
    .max_buckets = 20000ULL,
    .max_rows = 100000ULL,
    .max_clients = 1000000ULL,
    .max_state_bytes = 512e6,
    .max_live_bytes = 512e6, /* with the state, 1 GB a run at the most */
    .cancel = NULL,
    .memory = NULL,
};

void api_json_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)s; *p != '\0'; p++) {
        size_t len = jsonout_utf8_len((const char *)p);
        if (*p == '"' || *p == '\\')
            fprintf(f, "\\%c", *p);
        else if (*p == '\n')
            fputs("\\n", f);
        else if (*p < 0x20 || *p == '<' || *p == '>' || *p == '&' || *p == 0x7f)
            fprintf(f, "\\u%04x", *p);
        else if (len == 0) /* a byte that starts no UTF-8 character (jsonout.h) */
            fputs("\\ufffd", f);
        else
            fwrite(p, 1, len, f), p += len - 1;
    }
    fputc('"', f);
}

static void json_key(FILE *f, const char *key, bool first)
{
    if (!first)
        fputc(',', f);
    api_json_string(f, key);
    fputc(':', f);
}

static void json_str_field(FILE *f, const char *key, const char *value, bool first)
{
    json_key(f, key, first);
    api_json_string(f, value);
}

static void json_uint_field(FILE *f, const char *key, unsigned long long v, bool first)
{
    json_key(f, key, first);
    fprintf(f, "%llu", v);
}

static void json_num_field(FILE *f, const char *key, double v, bool first)
{
    json_key(f, key, first);
    if (isfinite(v))
        fprintf(f, "%.9g", v);
    else
        fputs("null", f);
}

/* A duration as a --set takes it ("300ms"), or "none". */
static const char *duration_text(rs_time t, char *buf, size_t size)
{
    if (t == RS_TIME_NEVER)
        return "none";
    return units_format_duration(t, buf, size);
}

/* {"ok":false,"messages":[...]} from a load's messages or one line. */
static int fail_messages(FILE *f, int status, const struct scenario_diag *d, const char *line)
{
    fputs("{\"ok\":false,\"messages\":[", f);
    size_t n = 0;
    for (size_t i = 0; d != NULL && i < d->n; i++, n++) {
        if (n > 0)
            fputc(',', f);
        api_json_string(f, d->msg[i]);
    }
    if (line != NULL) {
        if (n > 0)
            fputc(',', f);
        api_json_string(f, line);
    }
    fputs("]}", f);
    return status;
}

static void shape_layer(FILE *f, const struct scenario *sc, const struct layer_cfg *l)
{
    char b[4][32];
    fputc('{', f);
    json_str_field(f, "name", l->name, true);
    json_str_field(f, "from",
                   l->from_service == SCENARIO_CLIENT ? "client" : sc->services[l->from_service].name,
                   false);
    json_num_field(f, "attempts", l->attempts, false);
    json_str_field(f, "timeout", duration_text(l->timeout, b[0], sizeof b[0]), false);
    json_str_field(f, "backoff", l->backoff->name, false);
    json_str_field(f, "base", duration_text(l->bp.base, b[1], sizeof b[1]), false);
    json_str_field(f, "cap", duration_text(l->bp.cap, b[2], sizeof b[2]), false);
    json_str_field(f, "budget", l->budget->name, false);
    json_str_field(f, "breaker", l->breaker->name, false);
    fputc('}', f);
}

static void shape_phase(FILE *f, const struct phase_cfg *p)
{
    char b[2][32];
    fputc('{', f);
    json_str_field(f, "name", p->name, true);
    json_str_field(f, "start", duration_text(p->start, b[0], sizeof b[0]), false);
    json_str_field(f, "end", duration_text(p->end, b[1], sizeof b[1]), false);
    json_num_field(f, "start_s", units_seconds(p->start), false);
    json_num_field(f, "end_s", units_seconds(p->end), false);
    json_num_field(f, "factor", p->has_rate && p->rate_is_factor && !p->ramp ? p->rate : NAN, false);
    fputc('}', f);
}

/* The knobs of a loaded scenario, as the page shows them. */
static void shape(FILE *f, const struct scenario *sc)
{
    char b[32];
    fputc('{', f);
    json_str_field(f, "name", sc->name, true);
    json_str_field(f, "duration", duration_text(sc->duration, b, sizeof b), false);
    json_num_field(f, "duration_s", units_seconds(sc->duration), false);
    json_uint_field(f, "seed", (unsigned long long)sc->seed, false);
    json_str_field(f, "model", sc->model == LOAD_OPEN ? "open" : "closed", false);
    json_num_field(f, "rate", sc->rate, false);
    json_num_field(f, "clients", sc->clients, false);
    json_key(f, "layers", false);
    fputc('[', f);
    for (unsigned i = 0; i < sc->nlayers; i++) {
        if (i > 0)
            fputc(',', f);
        shape_layer(f, sc, &sc->layers[i]);
    }
    fputs("],\"phases\":[", f);
    for (unsigned i = 0; i < sc->nphases; i++) {
        if (i > 0)
            fputc(',', f);
        shape_phase(f, &sc->phases[i]);
    }
    fputs("]}", f);
}

/* The first comment line of a scenario's text, as a JSON string ("" if none). */
static void about(FILE *f, const char *text)
{
    const char *p;
    size_t n = scenario_about(text, &p);
    char line[512];
    snprintf(line, sizeof line, "%.*s", (int)(n < sizeof line ? n : sizeof line - 1), p);
    api_json_string(f, line);
}

/* The name of each entry of a kind table (backoff, budget, breaker), as a JSON list. */
static void json_names(FILE *f, const char *key, const void *table, size_t stride, size_t offset, unsigned n,
                       bool first)
{
    json_key(f, key, first);
    fputc('[', f);
    for (unsigned i = 0; i < n; i++) {
        if (i > 0)
            fputc(',', f);
        api_json_string(f, *(const char *const *)((const char *)table + i * stride + offset));
    }
    fputc(']', f);
}

static void kinds(FILE *f)
{
    fputs("\"kinds\":{", f);
    json_names(f, "backoff", backoff_kinds, sizeof backoff_kinds[0], offsetof(struct backoff_kind, name),
               backoff_nkinds, true);
    json_names(f, "budget", budget_kinds, sizeof budget_kinds[0], offsetof(struct budget_kind, name),
               budget_nkinds, false);
    json_names(f, "breaker", breaker_kinds, sizeof breaker_kinds[0], offsetof(struct breaker_kind, name),
               breaker_nkinds, false);
    fputc('}', f);
}

int api_scenarios(FILE *f)
{
    fputs("{\"ok\":true,\"version\":\"" RS_VERSION "\",", f);
    kinds(f);
    fputs(",\"scenarios\":[", f);
    bool first = true;
    for (const struct scenario_builtin *b = scenario_builtins; b->name != NULL; b++) {
        struct scenario sc;
        struct scenario_diag d = {0};
        int bad = scenario_load_sealed(&sc, b->text, b->name, NULL, 0, &d);
        scenario_diag_fini(&d);
        if (bad) /* every built-in loads (tests); a broken one is left out, not fatal */
            continue;
        fputs(first ? "{" : ",{", f);
        first = false;
        json_str_field(f, "name", b->name, true);
        json_key(f, "about", false);
        about(f, b->text);
        json_str_field(f, "text", b->text, false);
        json_key(f, "shape", false);
        shape(f, &sc);
        fputc('}', f);
    }
    fputs("]}", f);
    return 200;
}

int api_check(FILE *f, const char *text)
{
    struct scenario sc;
    struct scenario_diag d = {0};
    int bad = scenario_load_sealed(&sc, text, "pasted", NULL, 0, &d);
    int status = 200;
    if (bad)
        status = fail_messages(f, 400, &d, NULL);
    else {
        fputs("{\"ok\":true,\"about\":", f); /* the page's header names what was pasted */
        about(f, text);
        fputs(",\"shape\":", f);
        shape(f, &sc);
        fputc('}', f);
    }
    scenario_diag_fini(&d);
    return status;
}

/* The rows of services.csv and caches.csv a run writes. */
static unsigned long long graph_rows(const struct scenario *sc, unsigned long long buckets)
{
    unsigned long long per = sc->ncaches;
    if (sc->graph)
        for (unsigned i = 0; i < sc->nservices; i++)
            per += 1 + (sc->services[i].replicas > 1 ? sc->services[i].replicas : 0);
    return buckets * per;
}

/* Whether the run fits a page: a message naming the limit if not. */
static bool fits(const struct scenario *sc, const struct api_limits *lim, char *why, size_t size)
{
    rs_time h = sim_horizon(sc); /* with [run] drain, the drain's rows too */
    unsigned long long buckets = (unsigned long long)((h + sc->bucket - 1) / sc->bucket);
    if (buckets > lim->max_buckets)
        snprintf(why, size,
                 "[run] %s / bucket: %llu time-series rows; the page draws at most %llu "
                 "(a larger run.bucket or a shorter run.duration%s)",
                 sc->drain ? "(duration + drain_limit)" : "duration", buckets, lim->max_buckets,
                 sc->drain ? " or run.drain_limit" : "");
    else if (graph_rows(sc, buckets) > lim->max_rows)
        snprintf(why, size,
                 "services and caches: %llu rows of services.csv and caches.csv; the page takes at most %llu "
                 "(a larger run.bucket, fewer replicas or a shorter run.duration)",
                 graph_rows(sc, buckets), lim->max_rows);
    else if (sc->clients > lim->max_clients)
        snprintf(why, size, "[load] clients = %u: the page runs at most %llu clients (the command line takes more)",
                 sc->clients, lim->max_clients);
    else if (sim_footprint(sc, NULL) > lim->max_state_bytes)
        snprintf(why, size,
                 "the run's state (budgets, breakers, bulkheads, caches, time series) of %.0f MB: the page runs at most %.0f MB "
                 "(fewer clients, instances or keys, or budget_scope/breaker_scope = shared)",
                 sim_footprint(sc, NULL) / 1e6, lim->max_state_bytes / 1e6);
    else
        return true;
    return false;
}

struct watch {
    const struct api_limits *lim;
    double start, stopped_at; /* wall-clock: the run's start, and when a limit stopped it */
    volatile sig_atomic_t stop;
    enum { STOP_NONE, STOP_WALL, STOP_EVENTS, STOP_CANCEL } why; /* none: the run's own limit (sim_limit) */
};

static double wall_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* sim_run's progress callback: stops a run past its limits. */
static void watch_progress(void *user, rs_time now, rs_time duration, uint64_t events)
{
    (void)now, (void)duration;
    struct watch *w = user;
    if (w->lim->cancel != NULL && *w->lim->cancel)
        w->why = STOP_CANCEL;
    else if (wall_now() - w->start > w->lim->max_wall_s)
        w->why = STOP_WALL;
    else if (events > w->lim->max_events)
        w->why = STOP_EVENTS;
    if (w->why != STOP_NONE && !w->stop) {
        w->stopped_at = wall_now();
        w->stop = 1;
    }
}

/* Every file of the run, each as a JSON string. */
static int write_files(FILE *f, const struct sim *s, const struct summary *sum)
{
    fputs("\"files\":{", f);
    bool first = true;
    for (size_t i = 0; i < output_nfiles(); i++) {
        const char *name = output_file_name(s, i);
        if (name == NULL)
            continue;
        char *buf = NULL;
        size_t len = 0;
        FILE *m = open_memstream(&buf, &len);
        if (m == NULL)
            return -1;
        output_write_file(m, i, s, sum);
        if (fclose(m) != 0) {
            free(buf);
            return -1;
        }
        json_str_field(f, name, buf, first);
        first = false;
        free(buf);
    }
    fputc('}', f);
    return 0;
}

static int stopped(FILE *f, const struct watch *w)
{
    static const char more[] = ", the page's limit per run (a shorter run.duration, fewer clients or a lower "
                               "rate; the command line's limits are wider)";
    char line[400];
    if (w->why == STOP_CANCEL)
        return fail_messages(f, 503, NULL, "the server is stopping");
    if (w->why == STOP_WALL)
        snprintf(line, sizeof line, "the run was stopped after %.2f s of wall-clock time (the limit is %.1f s)%s",
                 w->stopped_at - w->start, w->lim->max_wall_s, more);
    else if (w->why == STOP_EVENTS)
        snprintf(line, sizeof line, "the run was stopped after %llu events%s", w->lim->max_events, more);
    else
        snprintf(line, sizeof line,
                 "the run was stopped with more than %.0f MB of requests, attempts and messages in flight%s; "
                 "a bounded queue or a timeout keeps them in check",
                 w->lim->max_live_bytes / 1e6, more);
    return fail_messages(f, 422, NULL, line);
}

/* Runs a loaded scenario and answers with its files. */
static int run_loaded(FILE *f, const struct scenario *sc, const struct api_limits *lim)
{
    char err[512];
    double start = wall_now(); /* building a run counts towards its time */
    struct sim *s = trace_sim_create(sc, 0, err, sizeof err);
    if (s == NULL)
        return fail_messages(f, 422, NULL, err);
    struct watch w = {.lim = lim, .start = start};
    sim_set_stop(s, &w.stop);
    sim_set_live_limit(s, lim->max_live_bytes); /* what it holds in flight: sim_limit says when passed */
    int rc = sim_run(s, watch_progress, &w, err, sizeof err);
    int status = 200;
    if (rc != 0)
        status = fail_messages(f, 500, NULL, err);
    else if (!sim_complete(s))
        status = stopped(f, &w);
    else {
        struct summary sum;
        double wall = wall_now() - w.start;
        output_summarise(s, wall, &sum);
        fputs("{\"ok\":true,", f);
        json_num_field(f, "wall_s", wall, true);
        json_uint_field(f, "events", (unsigned long long)sum.events, false);
        json_str_field(f, "verdict", verdict_names[sum.verdict], false);
        json_str_field(f, "verdict_reason", sum.verdict_reason, false);
        json_key(f, "shape", false);
        shape(f, sc);
        fputc(',', f);
        if (write_files(f, s, &sum) != 0)
            status = 500;
        fputc('}', f);
    }
    sim_destroy(s);
    return status;
}

/* Takes need bytes of the server's memory, waiting (every 20 ms, for up to
 * the wall-clock limit of a run) while other runs hold it. Returns 0 with
 * it, 1 when the server is stopping, -1 when it stayed taken. */
static int reserve(const struct api_limits *lim, double need)
{
    if (lim->memory == NULL)
        return 0;
    double until = wall_now() + lim->max_wall_s;
    for (;;) {
        pthread_mutex_lock(&lim->memory->lock);
        bool got = lim->memory->free_bytes >= need;
        if (got)
            lim->memory->free_bytes -= need;
        pthread_mutex_unlock(&lim->memory->lock);
        if (got)
            return 0;
        if (lim->cancel != NULL && *lim->cancel)
            return 1;
        if (wall_now() > until)
            return -1;
        nanosleep(&(struct timespec){0, 20000000L}, NULL);
    }
}

static void release(const struct api_limits *lim, double need)
{
    if (lim->memory == NULL)
        return;
    pthread_mutex_lock(&lim->memory->lock);
    lim->memory->free_bytes += need;
    pthread_mutex_unlock(&lim->memory->lock);
}

int api_run(FILE *f, const struct api_request *rq, const struct api_limits *lim)
{
    const char *text = rq->text, *source = "pasted";
    if (rq->scenario != NULL) {
        char line[200];
        text = scenario_builtin_text(rq->scenario);
        source = rq->scenario;
        if (text == NULL) {
            snprintf(line, sizeof line, "no built-in scenario '%.60s' (the list on the page)", rq->scenario);
            return fail_messages(f, 400, NULL, line);
        }
    }
    if (text == NULL)
        return fail_messages(f, 400, NULL, "no scenario: a built-in's name, or a scenario's text");
    struct scenario sc;
    struct scenario_diag d = {0};
    int bad = scenario_load_sealed(&sc, text, source, rq->sets, rq->nsets, &d);
    int status;
    char why[400];
    if (bad)
        status = fail_messages(f, 400, &d, NULL);
    else if (!fits(&sc, lim, why, sizeof why))
        status = fail_messages(f, 422, NULL, why);
    else {
        double need = sim_footprint(&sc, NULL) + lim->max_live_bytes;
        int got = reserve(lim, need);
        status = got > 0 ? fail_messages(f, 503, NULL, "the server is stopping")
                 : got < 0 ? fail_messages(f, 503, NULL, "busy: the runs in progress hold the server's memory; try again in a moment")
                          : run_loaded(f, &sc, lim);
        if (got == 0)
            release(lim, need);
    }
    scenario_diag_fini(&d);
    return status;
}
