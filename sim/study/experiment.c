/*
 * experiment — replications, sweeps, shards, merges. See experiment.h.
 */
#define _POSIX_C_SOURCE 200809L
#define _XOPEN_SOURCE 700 /* realpath */

#include "experiment.h"
#include "labels.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "csvread.h"
#include "outdir.h"
#include "output.h"
#include "sim.h"
#include "stats.h"
#include "summary.h"
#include "trace.h"

#define MAX_VALUES 10000
#define MAX_POINTS 100000
#define MAX_JOBS 10000000

/* ---- grids ---- */

/* A number with an optional unit: 2, 50ms, 0.5s (a duration) or 600/s,
 * 30/m (a rate). The unit (if any) is returned so that generated values
 * carry it; a unit that is neither a duration's nor a rate's is refused. */
static bool parse_num_unit(const char *s, double *v, char *unit, size_t usz)
{
    char *end;
    errno = 0;
    *v = strtod(s, &end);
    if (end == s || errno == ERANGE || !isfinite(*v) || strlen(end) >= usz)
        return false;
    snprintf(unit, usz, "%s", end);
    if (*unit == '\0')
        return true;
    rs_time t;
    double r;
    return *unit == '/' ? units_parse_rate(s, &r) : units_parse_duration(s, &t);
}

/* The values of a range A..B, A..B+S or A..B*F (vals: the text after
 * KEY=, dots: its ".."), each carrying A's unit. A, B and an additive step
 * share one unit (a plain step is in that unit too); a factor is plain.
 * Returns the count, or 0 with a message naming text in err. */
static size_t expand_range(const char *text, const char *vals, const char *dots, char out[][128], size_t max,
                           char *err, size_t errsz)
{
    char a[64], b[64], ua[16], ub[16], us[16];
    snprintf(a, sizeof a, "%.*s", (int)(dots - vals), vals);
    const char *rest = dots + 2;
    const char *op = strpbrk(rest, "*+");
    snprintf(b, sizeof b, "%.*s", (int)(op ? op - rest : (long)strlen(rest)), rest);
    double lo, hi, step = 1;
    char kind = op ? *op : '+';
    if (!parse_num_unit(a, &lo, ua, sizeof ua) || !parse_num_unit(b, &hi, ub, sizeof ub)) {
        snprintf(err, errsz, "--grid %s: a range is A..B, A..B+STEP or A..B*FACTOR with numbers in the same unit (e.g. 1..5, 50ms..800ms*2, 600/s..1000/s+100/s)", text);
        return 0;
    }
    if (strcmp(ua, ub) != 0) {
        bool rate = ua[0] == '/' || ub[0] == '/'; /* the example in the kind of unit given */
        snprintf(err, errsz, "--grid %s: A is in '%s' and B in '%s': write both in the same unit (e.g. %s)", text,
                 ua[0] ? ua : "no unit", ub[0] ? ub : "no unit", rate ? "600/s..1000/s+100/s" : "100ms..800ms*2");
        return 0;
    }
    bool step_ok = op && parse_num_unit(op + 1, &step, us, sizeof us) &&
                   (us[0] == '\0' || (kind == '+' && strcmp(us, ua) == 0));
    if (op && !step_ok) {
        if (kind == '+' && ua[0] != '\0')
            snprintf(err, errsz, "--grid %s: the step after '+' must be a plain number or in A's unit '%s'", text, ua);
        else
            snprintf(err, errsz, "--grid %s: the step after '%c' must be a plain number", text, kind);
        return 0;
    }
    if (hi < lo || (kind == '+' && !(step > 0)) || (kind == '*' && !(step > 1)) || (kind == '*' && !(lo > 0))) {
        snprintf(err, errsz, "--grid %s: the range does not end (need A <= B, a step > 0, or a factor > 1 from A > 0)", text);
        return 0;
    }
    size_t n = 0;
    for (double x = lo; x <= hi * (1 + 1e-12); x = kind == '*' ? x * step : x + step) {
        if (n == max) {
            snprintf(err, errsz, "--grid %s: more than %zu values", text, max);
            return 0;
        }
        snprintf(out[n++], 128, "%.12g%s", x, ua);
    }
    return n;
}

/* The values of a list V1,V2,... (vals: the text after KEY=). */
static size_t expand_list(const char *text, const char *vals, char out[][128], size_t max, char *err, size_t errsz)
{
    char buf[8192];
    size_t n = 0;
    snprintf(buf, sizeof buf, "%s", vals);
    char *save = NULL;
    for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        if (n == max) {
            snprintf(err, errsz, "--grid %s: more than %zu values", text, max);
            return 0;
        }
        if (strlen(tok) > 127) {
            snprintf(err, errsz, "--grid %.60s...: the value %.40s... is longer than 127 bytes", text, tok);
            return 0;
        }
        snprintf(out[n++], 128, "%s", tok);
    }
    if (n == 0 || strstr(vals, ",,") || vals[strlen(vals) - 1] == ',' || vals[0] == ',') {
        snprintf(err, errsz, "--grid %s: an empty value in the list", text);
        return 0;
    }
    return n;
}

size_t exp_expand_axis(const char *text, char *key, size_t keysz, char out[][128], size_t max,
                       char *err, size_t errsz)
{
    const char *eq = strchr(text, '=');
    if (eq == NULL || eq == text || eq[1] == '\0') {
        snprintf(err, errsz, "--grid %s: expected KEY=V1,V2,... or KEY=A..B (e.g. layer.app.attempts=1..5)", text);
        return 0;
    }
    if ((size_t)(eq - text) >= keysz) {
        snprintf(err, errsz, "--grid %.60s...: the key is longer than %zu bytes", text, keysz - 1);
        return 0;
    }
    snprintf(key, keysz, "%.*s", (int)(eq - text), text);
    const char *vals = eq + 1;
    const char *dots = strstr(vals, "..");
    return dots ? expand_range(text, vals, dots, out, max, err, errsz) : expand_list(text, vals, out, max, err, errsz);
}

/* ---- results ---- */

void exp_result_fini(struct exp_result *r)
{
    free(r->values);
    free(r->metric);
    free(r->mean);
    free(r->sd);
    free(r->hw);
    free(r->kind);
    results_fini(&r->sum);
    memset(r, 0, sizeof *r);
}

/* r's per-point arrays with one metric more, the new one's mean in v and
 * its sd and half-width NaN; into mean, sd, hw (freed on failure). */
static int widen(const struct exp_result *r, const double *v, double **mean, double **sd, double **hw)
{
    size_t n = r->nmetrics + 1;
    const double *src[3] = {r->mean, r->sd, r->hw};
    double **dst[3] = {mean, sd, hw};
    int rc = 0;
    for (int a = 0; a < 3; a++) {
        *dst[a] = malloc(r->npoints * n * sizeof **dst[a]);
        rc |= *dst[a] == NULL;
        for (size_t p = 0; p < r->npoints && *dst[a]; p++) {
            memcpy(*dst[a] + p * n, src[a] + p * r->nmetrics, r->nmetrics * sizeof **dst[a]);
            (*dst[a])[p * n + r->nmetrics] = a == 0 ? v[p] : NAN;
        }
    }
    if (rc != 0)
        free(*mean), free(*sd), free(*hw);
    return rc ? -1 : 0;
}

/* r->sum with three more columns (mean, sd, hw of the new metric). */
static int widen_sum(const struct exp_result *r, const char *name, enum output_kind kind, const double *v,
                     struct results *out)
{
    const struct results *in = &r->sum;
    if (results_init(out, in->nlabels, in->ncols + 3) != 0)
        return -1;
    memcpy(out->label_names, in->label_names, in->nlabels * sizeof *in->label_names);
    memcpy(out->cols, in->cols, in->ncols * sizeof *in->cols);
    results_stat_metric(out, in->ncols, name, kind);
    double *row = malloc((in->ncols + 3) * sizeof *row);
    int rc = row ? 0 : -1;
    for (size_t p = 0; p < in->nrows && rc == 0; p++) {
        memcpy(row, &in->v[p * in->ncols], in->ncols * sizeof *row);
        row[in->ncols] = v[p], row[in->ncols + 1] = row[in->ncols + 2] = NAN;
        rc = results_add(out, (const char *const *)&in->labels[p * in->nlabels], row);
    }
    free(row);
    if (rc != 0)
        results_fini(out);
    return rc;
}

int exp_result_add_metric(struct exp_result *r, const char *name, enum output_kind kind, const double *v)
{
    double *mean, *sd, *hw;
    struct results sum;
    char(*metric)[64] = realloc(r->metric, (r->nmetrics + 1) * sizeof *metric);
    if (metric != NULL)
        r->metric = metric;
    enum output_kind *kinds = realloc(r->kind, (r->nmetrics + 1) * sizeof *kinds);
    if (kinds != NULL)
        r->kind = kinds;
    if (metric == NULL || kinds == NULL || r->sum.nrows != r->npoints)
        return -1;
    if (widen(r, v, &mean, &sd, &hw) != 0)
        return -1;
    if (widen_sum(r, name, kind, v, &sum) != 0) {
        free(mean), free(sd), free(hw);
        return -1;
    }
    free(r->mean), free(r->sd), free(r->hw);
    results_fini(&r->sum);
    r->mean = mean, r->sd = sd, r->hw = hw, r->sum = sum;
    snprintf(r->metric[r->nmetrics], 64, "%s", name);
    r->kind[r->nmetrics++] = kind;
    return 0;
}

struct grid {
    size_t naxes, npoints;
    char keys[EXP_MAX_AXES][128];
    size_t nvals[EXP_MAX_AXES];
    char (*vals[EXP_MAX_AXES])[128];
};

static void grid_fini(struct grid *g)
{
    for (size_t k = 0; k < g->naxes; k++)
        free(g->vals[k]);
}

/* The value of axis k at point p (the first axis varies slowest). */
static const char *grid_value(const struct grid *g, size_t p, size_t k)
{
    size_t stride = 1;
    for (size_t j = k + 1; j < g->naxes; j++)
        stride *= g->nvals[j];
    return g->vals[k][(p / stride) % g->nvals[k]];
}

/* ---- jobs ---- */

/* The points as written: keys and each point's values; and the metric
 * columns every job records (the scenario's summary columns that are
 * metrics, in order): what experiment.csv says and jobs.csv holds. */
struct layout {
    size_t npoints, naxes;
    char keys[EXP_MAX_AXES][128];
    char labels[EXP_MAX_AXES][128]; /* each key's shortest unambiguous form (labels.h) */
    char (*pv)[EXP_MAX_AXES][128];
    size_t nmetrics;
    char (*mnames)[64];
    enum output_kind *mkinds;
};

static void layout_fini(struct layout *l)
{
    free(l->pv);
    free(l->mnames);
    free(l->mkinds);
    l->pv = NULL, l->mnames = NULL, l->mkinds = NULL;
}

/* Room for n metric columns; false when memory is short. */
static bool layout_metrics(struct layout *l, size_t n)
{
    l->nmetrics = n;
    l->mnames = calloc(n ? n : 1, sizeof *l->mnames);
    l->mkinds = calloc(n ? n : 1, sizeof *l->mkinds);
    return l->mnames != NULL && l->mkinds != NULL;
}

/* Every job's metrics: njobs × nmetrics, NaN for no value. */
struct table {
    size_t njobs, nmetrics;
    double *v;
    bool *done;
};

struct worker_ctx {
    const struct scenario *points;
    size_t reps;
    const size_t *jobs; /* the job indices to run here */
    size_t njobs;
    atomic_size_t next, finished;
    struct table *t;
    const struct summary_cols *cols; /* point 0's: every point's are the same */
    atomic_int failed;
    volatile sig_atomic_t *stop;
    const struct layout *lay;
    FILE *log; /* jobs.csv, appended and synced as each job finishes */
    char err[512];
    pthread_mutex_t lock;
    pthread_cond_t wake; /* rows to sync, or closing */
    bool unsynced, closing;
};

static void jobs_row(FILE *f, const struct layout *g, size_t reps, const struct table *t, size_t j);

/* Records job j in jobs.csv at once (written to the file: a killed
 * process loses nothing finished) and wakes the syncer, which puts it on
 * disk; a failure to write stops the experiment. */
static void log_job(struct worker_ctx *w, size_t j)
{
    pthread_mutex_lock(&w->lock);
    jobs_row(w->log, w->lay, w->reps, w->t, j);
    if (fflush(w->log) != 0 && !atomic_load(&w->failed)) {
        snprintf(w->err, sizeof w->err, "cannot append to jobs.csv: %s", strerror(errno));
        atomic_store(&w->failed, 1);
    }
    w->unsynced = true;
    pthread_cond_signal(&w->wake);
    pthread_mutex_unlock(&w->lock);
}

/* The syncer: fdatasync of jobs.csv whenever rows were appended since the
 * last one, off the workers' path (group commit: a power cut loses only
 * the rows of the sync in progress, a few milliseconds of jobs), and once
 * more when the workers are done. */
static void *syncer(void *arg)
{
    struct worker_ctx *w = arg;
    pthread_mutex_lock(&w->lock);
    for (;;) {
        while (!w->unsynced && !w->closing)
            pthread_cond_wait(&w->wake, &w->lock);
        bool last = w->closing;
        w->unsynced = false;
        pthread_mutex_unlock(&w->lock);
        int rc = fdatasync(fileno(w->log));
        pthread_mutex_lock(&w->lock);
        if (rc != 0 && !atomic_load(&w->failed)) {
            snprintf(w->err, sizeof w->err, "cannot sync jobs.csv: %s", strerror(errno));
            atomic_store(&w->failed, 1);
        }
        if (last)
            break;
    }
    pthread_mutex_unlock(&w->lock);
    return NULL;
}

/* Puts a run's summary row (summary_row: every column) into job j's
 * metrics and marks the job done. */
static void take_row(struct table *t, const struct summary_cols *cols, size_t j, const double *row)
{
    double *out = &t->v[j * t->nmetrics];
    for (size_t c = 0, m = 0; c < cols->n; c++)
        if (output_kind_is_metric(cols->c[c].kind))
            out[m++] = row[c];
    t->done[j] = true;
}

/* Runs one job: its summary row (every column of cols) into row. */
static int job_row(const struct scenario *sc, uint32_t rep, const struct summary_cols *cols,
                   volatile sig_atomic_t *stop, bool *complete, double *row, char *err, size_t errsz)
{
    struct sim *s = trace_sim_create(sc, rep, err, errsz);
    if (s == NULL)
        return -1;
    sim_set_stop(s, stop);
    if (sim_run(s, NULL, NULL, err, errsz) != 0) {
        sim_destroy(s);
        return -1;
    }
    if (sim_limit(s) != NULL) { /* a job that outgrew memory has no result */
        snprintf(err, errsz, "the run was %s", sim_limit(s));
        sim_destroy(s);
        return -1;
    }
    *complete = sim_complete(s);
    struct summary o;
    output_summarise(s, 0.0, &o);
    summary_row(cols, s, &o, row);
    sim_destroy(s);
    return 0;
}

static void *worker(void *arg)
{
    struct worker_ctx *w = arg;
    double *row = malloc(w->cols->n * sizeof *row);
    if (row == NULL) { /* STYLE: out of memory aborts */
        fprintf(stderr, "retrystorm: out of memory for a summary row\n");
        abort();
    }
    for (;;) {
        size_t i = atomic_fetch_add(&w->next, 1);
        if (i >= w->njobs || atomic_load(&w->failed) || (w->stop && *w->stop))
            break;
        size_t j = w->jobs[i];
        char err[512];
        bool complete = true;
        if (job_row(&w->points[j / w->reps], (uint32_t)(j % w->reps), w->cols, w->stop, &complete, row,
                    err, sizeof err) != 0) {
            pthread_mutex_lock(&w->lock);
            if (!atomic_load(&w->failed))
                snprintf(w->err, sizeof w->err, "job %zu: %.400s", j, err);
            atomic_store(&w->failed, 1);
            pthread_mutex_unlock(&w->lock);
            break;
        }
        if (!complete) /* interrupted: this job is not recorded */
            break;
        take_row(w->t, w->cols, j, row);
        log_job(w, j);
        atomic_fetch_add(&w->finished, 1);
    }
    free(row);
    return NULL;
}

/* exp_batch's shared state: the next run to take, and the first failure. */
struct batch_ctx {
    const struct scenario *const *scs;
    const uint32_t *reps;
    size_t n;
    const struct summary_cols *cols;
    volatile sig_atomic_t *stop;
    double *rows;
    atomic_size_t next;
    atomic_int failed; /* 1 a run failed, 3 stopped */
    pthread_mutex_t lock;
    char err[512];
};

static void *batch_worker(void *arg)
{
    struct batch_ctx *b = arg;
    for (;;) {
        size_t i = atomic_fetch_add(&b->next, 1);
        if (i >= b->n || atomic_load(&b->failed))
            break;
        if (b->stop && *b->stop) {
            atomic_store(&b->failed, 3);
            break;
        }
        char err[512];
        bool complete = true;
        double *row = &b->rows[i * b->cols->n];
        if (job_row(b->scs[i], b->reps[i], b->cols, b->stop, &complete, row, err, sizeof err) != 0 ||
            !complete) {
            for (size_t c = 0; c < b->cols->n; c++)
                row[c] = NAN;
            pthread_mutex_lock(&b->lock);
            if (!atomic_load(&b->failed) && complete)
                snprintf(b->err, sizeof b->err, "%.480s", err);
            atomic_store(&b->failed, complete ? 1 : 3);
            pthread_mutex_unlock(&b->lock);
            break;
        }
    }
    return NULL;
}

int exp_batch(const struct scenario *const *scs, const uint32_t *reps, size_t n,
              const struct summary_cols *cols, unsigned threads, volatile sig_atomic_t *stop,
              double *rows, char *err, size_t errsz)
{
    struct batch_ctx b = {.scs = scs, .reps = reps, .n = n, .cols = cols, .stop = stop, .rows = rows};
    for (size_t i = 0; i < n * cols->n; i++)
        rows[i] = NAN;
    atomic_init(&b.next, 0);
    atomic_init(&b.failed, 0);
    pthread_mutex_init(&b.lock, NULL);
    unsigned nt = threads ? threads : 1, started = 0;
    if (nt > n)
        nt = n ? (unsigned)n : 1;
    if (nt > 256)
        nt = 256;
    pthread_t th[256];
    for (unsigned i = 0; i < nt; i++)
        started += pthread_create(&th[started], NULL, batch_worker, &b) == 0;
    if (started == 0)
        batch_worker(&b); /* no thread could start: run them here */
    for (unsigned i = 0; i < started; i++)
        pthread_join(th[i], NULL);
    pthread_mutex_destroy(&b.lock);
    int rc = atomic_load(&b.failed);
    if (rc == 1)
        snprintf(err, errsz, "%s", b.err);
    else if (rc == 3)
        snprintf(err, errsz, "interrupted");
    return rc;
}

/* ---- files ---- */

static int layout_of_grid(struct layout *l, const struct grid *g, const struct summary_cols *cols,
                          const struct scenario *point0)
{
    l->npoints = g->npoints;
    l->naxes = g->naxes;
    memcpy(l->keys, g->keys, sizeof l->keys);
    for (size_t k = 0; k < g->naxes; k++)
        labels_short_key(point0, g->keys[k], l->labels[k], sizeof l->labels[k]);
    l->pv = calloc(g->npoints, sizeof *l->pv);
    if (l->pv == NULL || !layout_metrics(l, results_metrics(cols)))
        return -1;
    for (size_t p = 0; p < g->npoints; p++)
        for (size_t k = 0; k < g->naxes; k++)
            snprintf(l->pv[p][k], 128, "%s", grid_value(g, p, k));
    for (size_t c = 0, m = 0; c < cols->n; c++)
        if (output_kind_is_metric(cols->c[c].kind)) {
            snprintf(l->mnames[m], sizeof l->mnames[m], "%s", cols->c[c].name);
            l->mkinds[m++] = cols->c[c].kind;
        }
    return 0;
}

/* FNV-1a, 64 bits: a fingerprint, not a defence against forgery. */
static uint64_t fnv1a(uint64_t h, const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)s[i]) * 0x100000001b3ULL;
    return h;
}
#define FNV_START 0xcbf29ce484222325ULL

/* The fingerprint of an experiment: of point 0's effective scenario (the
 * scenario file after every --set and point 0's grid values, as
 * scenario.ini writes it, comments left out: the same experiment run from
 * another path or working directory has the same fingerprint), and of the
 * grid (its keys and every point's values). */
struct fingerprint {
    uint64_t scenario, grid;
};

int exp_fingerprint(const struct scenario *sc, uint64_t *fp)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (f == NULL)
        return -1;
    scenario_write_ini(sc, f);
    fclose(f);
    *fp = FNV_START; /* every line but comments (they name the file it came from) */
    for (const char *line = text, *nl; *line; line = nl + (*nl != '\0')) {
        nl = line + strcspn(line, "\n");
        if (*line != ';' && *line != '#')
            *fp = fnv1a(*fp, line, (size_t)(nl - line) + 1);
    }
    free(text);
    return 0;
}

static int fingerprint_of(const struct scenario *point0, const struct layout *l,
                          struct fingerprint *fp)
{
    if (exp_fingerprint(point0, &fp->scenario) != 0)
        return -1;
    fp->grid = FNV_START;
    for (size_t k = 0; k < l->naxes; k++)
        fp->grid = fnv1a(fp->grid, l->keys[k], strlen(l->keys[k]) + 1);
    for (size_t p = 0; p < l->npoints; p++)
        for (size_t k = 0; k < l->naxes; k++)
            fp->grid = fnv1a(fp->grid, l->pv[p][k], strlen(l->pv[p][k]) + 1);
    return 0;
}

/* The format of experiment.csv and jobs.csv: 2 records the metric
 * columns (column,NAME,KIND lines), which format 1 did not. */
#define EXP_FORMAT 2

/* experiment.csv: what --resume and merge check. */
static void write_meta(FILE *f, const struct layout *g, size_t reps, const struct fingerprint *fp)
{
    fprintf(f, "field,value\nversion,%s\nformat,%d\nscenario,%016llx\ngrid,%016llx\nreps,%zu\npoints,%zu\n",
            RS_VERSION, EXP_FORMAT, (unsigned long long)fp->scenario, (unsigned long long)fp->grid, reps,
            g->npoints);

    for (size_t k = 0; k < g->naxes; k++)
        fprintf(f, "key,%s,%s\n", g->keys[k], g->labels[k]);
    for (size_t p = 0; p < g->npoints; p++) {
        fprintf(f, "point,%zu", p);
        for (size_t k = 0; k < g->naxes; k++)
            fprintf(f, ",%s", g->pv[p][k]);
        fputc('\n', f);
    }
    for (size_t m = 0; m < g->nmetrics; m++)
        fprintf(f, "column,%s,%s\n", g->mnames[m], output_kind_name(g->mkinds[m]));
}

static int write_experiment_csv(const char *dir, const struct layout *g, size_t reps,
                                const struct fingerprint *fp, char *err, size_t errsz)
{
    struct output_file of;
    if (output_file_open(&of, dir, "experiment.csv", err, errsz) != 0)
        return -1;
    write_meta(of.f, g, reps, fp);
    return output_file_commit(&of, err, errsz);
}

static void jobs_header(FILE *f, const struct layout *g)
{
    fprintf(f, "job,point,replication");
    for (size_t k = 0; k < g->naxes; k++)
        fprintf(f, ",%s", g->keys[k]);
    for (size_t m = 0; m < g->nmetrics; m++)
        fprintf(f, ",%s", g->mnames[m]);
    fputc('\n', f);
}

static void jobs_row(FILE *f, const struct layout *g, size_t reps, const struct table *t, size_t j)
{
    fprintf(f, "%zu,%zu,%zu", j, j / reps, j % reps);
    for (size_t k = 0; k < g->naxes; k++)
        fprintf(f, ",%s", g->pv[j / reps][k]);
    for (size_t m = 0; m < t->nmetrics; m++) {
        double v = t->v[j * t->nmetrics + m];
        if (isnan(v))
            fputc(',', f);
        else
            fprintf(f, ",%.17g", v);
    }
    fputc('\n', f);
}

/* Writes jobs.csv with every job done, in job order (the same whatever
 * the threads or the order in which they finished). With log, the file is
 * also kept open to append each job as it finishes (jobs_log): the very
 * file written and renamed into place, never opened again by name. */
static int write_jobs(const char *dir, const struct layout *g, size_t reps, const struct table *t,
                      FILE **log, char *err, size_t errsz)
{
    struct output_file of;
    if (output_file_open(&of, dir, "jobs.csv", err, errsz) != 0)
        return -1;
    jobs_header(of.f, g);
    for (size_t j = 0; j < t->njobs; j++)
        if (t->done[j])
            jobs_row(of.f, g, reps, t, j);
    int fd = -1;
    if (log != NULL && (fflush(of.f) != 0 || (fd = dup(fileno(of.f))) < 0)) {
        snprintf(err, errsz, "cannot keep %s open: %s", of.shown, strerror(errno));
        output_file_discard(&of);
        return -1;
    }
    if (output_file_commit(&of, err, errsz) != 0) {
        if (fd >= 0)
            close(fd);
        return -1;
    }
    if (log != NULL && (*log = fdopen(fd, "a")) == NULL) {
        snprintf(err, errsz, "cannot append to %s/jobs.csv: %s", dir, strerror(errno));
        close(fd);
        return -1;
    }
    return 0;
}

static int write_jobs_csv(const char *dir, const struct layout *g, size_t reps, const struct table *t,
                          char *err, size_t errsz)
{
    return write_jobs(dir, g, reps, t, NULL, err, errsz);
}

/* ---- reading experiment.csv and jobs.csv back (hostile input) ---- */

#define MAX_META_BYTES ((size_t)256 << 20)
#define MAX_JOBS_BYTES ((size_t)4 << 30)

static bool meta_field(char **f, size_t n, bool more, const char *name, uint64_t max, uint64_t *v)
{
    return n == 2 && !more && strcmp(f[0], name) == 0 && csv_uint(f[1], max, v);
}

/* One "key,K" or "point,P,V..." line of experiment.csv into l; the
 * points come in order, *next being the one expected. */
static bool meta_point(struct layout *l, char **f, size_t n, bool more, size_t *next)
{
    uint64_t p;
    if (n == 3 && !more && strcmp(f[0], "column") == 0) { /* after the points */
        int k = output_kind_of(f[2]);
        if (*next != l->npoints || l->nmetrics == SUMMARY_MAX_COLUMNS || k < 0 ||
            !output_kind_is_metric((enum output_kind)k) || strlen(f[1]) == 0 || strlen(f[1]) > 63 ||
            strspn(f[1], "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-") != strlen(f[1]))
            return false;
        size_t len = strlen(f[1]);
        if (strcmp(f[1], "reps") == 0 || (len > 3 && (strcmp(f[1] + len - 3, "_sd") == 0 ||
                                                      strcmp(f[1] + len - 3, "_hw") == 0)))
            return false; /* the names of the statistics' columns */
        for (size_t m = 0; m < l->nmetrics; m++)
            if (strcmp(l->mnames[m], f[1]) == 0)
                return false; /* a column twice */
        snprintf(l->mnames[l->nmetrics], 64, "%s", f[1]);
        l->mkinds[l->nmetrics++] = (enum output_kind)k;
        return true;
    }
    if ((n == 2 || n == 3) && !more && strcmp(f[0], "key") == 0 && l->pv == NULL) { /* key,K[,LABEL] */
        const char *label = n == 3 ? f[2] : f[1];
        if (l->naxes == EXP_MAX_AXES || strlen(f[1]) == 0 || strlen(f[1]) > 127 || strlen(label) == 0 ||
            strlen(label) > 127)
            return false;
        snprintf(l->labels[l->naxes], 128, "%s", label);
        snprintf(l->keys[l->naxes++], 128, "%s", f[1]);
        return true;
    }
    if (strcmp(f[0], "point") != 0 || more || n != 2 + l->naxes || !csv_uint(f[1], MAX_POINTS, &p))
        return false;
    if (l->pv == NULL && (l->pv = calloc(l->npoints, sizeof *l->pv)) == NULL)
        return false;
    if (p != (*next)++ || p >= l->npoints)
        return false;
    for (size_t k = 0; k < l->naxes; k++) {
        if (strlen(f[2 + k]) > 127)
            return false;
        snprintf(l->pv[p][k], 128, "%s", f[2 + k]);
    }
    return true;
}

/* experiment.csv's first lines: "field,value", the version (this one's)
 * and the format (EXP_FORMAT). Returns 0; 2 with a message for another
 * version or format; 1 for anything else (the caller's generic message). */
static int meta_head(struct csv *c, const char *path, char *err, size_t errsz)
{
    char *f[2];
    bool more;
    uint64_t format = 0;
    size_t n = csv_next(c, f, 2, &more);
    if (n != 2 || more || strcmp(f[0], "field") != 0 || strcmp(f[1], "value") != 0 ||
        csv_next(c, f, 2, &more) != 2 || strcmp(f[0], "version") != 0)
        return 1;
    if (strcmp(f[1], RS_VERSION) != 0) {
        snprintf(err, errsz, "%s:%u: written by retrystorm %.40s; this is %s", path, c->line, f[1], RS_VERSION);
        return 2;
    }
    n = csv_next(c, f, 2, &more);
    if (!meta_field(f, n, more, "format", 1000, &format)) {
        snprintf(err, errsz, "%s:%u: written in format 1, which does not record its columns; this retrystorm "
                             "reads format %d: run the sweep again into a new directory (without --resume)",
                 path, c->line, EXP_FORMAT);
        return 2;
    }
    if (format != EXP_FORMAT) {
        snprintf(err, errsz, "%s:%u: format %llu; this retrystorm reads format %d", path, c->line,
                 (unsigned long long)format, EXP_FORMAT);
        return 2;
    }
    return 0;
}

/* Parses experiment.csv into l, reps and fp; 0, or 2 with a message
 * naming the file and line. */
static int read_meta(const char *path, struct layout *l, size_t *reps, struct fingerprint *fp,
                     char *err, size_t errsz)
{
    struct csv c;
    if (csv_open(&c, path, MAX_META_BYTES, err, errsz) != 0)
        return 2;
    char *f[EXP_MAX_AXES + 3];
    bool more;
    uint64_t r = 0, np = 0, sfp = 0, gfp = 0;
    int head = meta_head(&c, path, err, errsz);
    if (head == 2) {
        csv_close(&c);
        return 2;
    }
    bool ok = head == 0 && layout_metrics(l, SUMMARY_MAX_COLUMNS);
    l->nmetrics = 0;
    for (int i = 0; ok && i < 4; i++) {
        static const char *const names[] = {"scenario", "grid", "reps", "points"};
        uint64_t *dst[] = {&sfp, &gfp, &r, &np};
        size_t n = csv_next(&c, f, 2, &more);
        if (i < 2) /* fingerprints in hexadecimal */
            ok = n == 2 && !more && !strcmp(f[0], names[i]) && strlen(f[1]) == 16 &&
                 strspn(f[1], "0123456789abcdef") == 16 && sscanf(f[1], "%llx", (unsigned long long *)dst[i]) == 1;
        else
            ok = meta_field(f, n, more, names[i], i == 2 ? EXP_MAX_REPS : MAX_POINTS, dst[i]) && *dst[i] > 0;
    }
    l->npoints = (size_t)np;
    size_t next = 0, n;
    while (ok && (n = csv_next(&c, f, EXP_MAX_AXES + 2, &more)) > 0)
        ok = !c.torn && meta_point(l, f, n, more, &next);
    if (ok && (next != l->npoints || np * r > MAX_JOBS || l->nmetrics == 0)) /* every point and a column, not too many jobs */
        ok = false, c.line++;
    if (!ok) {
        snprintf(err, errsz, "%s:%u: not an experiment.csv of retrystorm %s (a missing, malformed or out-of-range field)",
                 path, c.line, RS_VERSION);
        layout_fini(l);
    }
    *reps = (size_t)r;
    fp->scenario = sfp;
    fp->grid = gfp;
    csv_close(&c);
    return ok ? 0 : 2;
}
/* The statistics of point p's metric m over its replications that have
 * a value. */
static void point_stat(const struct table *t, size_t reps, size_t p, size_t m, struct stats *st)
{
    stats_of(&t->v[p * reps * t->nmetrics + m], reps, t->nmetrics, st);
}

/* The experiment's summary (sweep.csv): point and grid values, then reps
 * and each metric's mean, sd and half-width; and the result's arrays. */
static int fill_result(struct exp_result *r, const struct layout *g, size_t reps, const struct table *t)
{
    memset(r, 0, sizeof *r);
    r->npoints = g->npoints;
    r->reps = reps;
    r->naxes = g->naxes;
    r->nmetrics = t->nmetrics;
    for (size_t k = 0; k < g->naxes; k++) {
        snprintf(r->axis_keys[k], sizeof r->axis_keys[k], "%s", g->keys[k]);
        snprintf(r->axis_labels[k], sizeof r->axis_labels[k], "%s", g->labels[k]);
    }
    size_t nv = g->npoints * t->nmetrics, ncols = 1 + 3 * t->nmetrics;
    r->values = calloc(g->npoints, sizeof *r->values);
    r->metric = calloc(t->nmetrics, sizeof *r->metric);
    r->kind = calloc(t->nmetrics, sizeof *r->kind);
    r->mean = calloc(nv, sizeof *r->mean);
    r->hw = calloc(nv, sizeof *r->hw);
    r->sd = calloc(nv, sizeof *r->sd);
    double *row = malloc(ncols * sizeof *row);
    if (!r->values || !r->metric || !r->kind || !r->mean || !r->hw || !r->sd || !row ||
        results_init(&r->sum, 1 + g->naxes, ncols) != 0) {
        free(row);
        return -1;
    }
    snprintf(r->sum.label_names[0], sizeof r->sum.label_names[0], "point");
    for (size_t k = 0; k < g->naxes; k++)
        snprintf(r->sum.label_names[1 + k], sizeof r->sum.label_names[0], "%s", g->keys[k]);
    r->sum.cols[0] = (struct results_col){"reps", OUTPUT_COUNT, false};
    for (size_t m = 0; m < t->nmetrics; m++) {
        snprintf(r->metric[m], 64, "%s", g->mnames[m]);
        r->kind[m] = g->mkinds[m];
        results_stat_metric(&r->sum, 1 + 3 * m, g->mnames[m], g->mkinds[m]);
    }
    int rc = 0;
    for (size_t p = 0; p < g->npoints && rc == 0; p++) {
        char idx[32];
        const char *labels[1 + EXP_MAX_AXES];
        snprintf(idx, sizeof idx, "%zu", p);
        labels[0] = idx;
        for (size_t k = 0; k < g->naxes; k++)
            snprintf(r->values[p][k], 128, "%s", g->pv[p][k]), labels[1 + k] = g->pv[p][k];
        row[0] = (double)reps;
        for (size_t m = 0; m < t->nmetrics; m++) {
            struct stats st;
            point_stat(t, reps, p, m, &st);
            r->mean[p * t->nmetrics + m] = row[1 + 3 * m] = st.mean;
            r->sd[p * t->nmetrics + m] = row[2 + 3 * m] = st.sd;
            r->hw[p * t->nmetrics + m] = row[3 + 3 * m] = st.hw;
        }
        rc = results_add(&r->sum, labels, row);
    }
    free(row);
    return rc;
}

static int write_sweep_csv(const char *dir, const struct exp_result *res, char *err, size_t errsz)
{
    struct output_file of;
    if (output_file_open(&of, dir, "sweep.csv", err, errsz) != 0)
        return -1;
    results_write_csv(of.f, &res->sum);
    return output_file_commit(&of, err, errsz);
}

static int write_status(const char *dir, bool complete, size_t done, size_t total, char *err,
                        size_t errsz)
{
    struct output_file of;
    if (output_file_open(&of, dir, "status.csv", err, errsz) != 0)
        return -1;
    fprintf(of.f, "field,value\ncomplete,%d\njobs_done,%zu\njobs_total,%zu\n", complete, done, total);
    return output_file_commit(&of, err, errsz);
}

/* A cell of a file for a message: at most 40 bytes, anything but a
 * printable ASCII character shown as '?'. */
static const char *shown_cell(const char *v, char *buf, size_t bufsz)
{
    size_t n = 0;
    for (; v[n] != '\0' && n + 4 < bufsz && n < 40; n++)
        buf[n] = v[n] > ' ' && v[n] < 127 ? v[n] : '?';
    snprintf(buf + n, bufsz - n, "%s", v[n] != '\0' ? "..." : "");
    return buf;
}

/* Job j's metric cells (f[0..nmetrics)) into t: each empty (no value) or a
 * value its column's kind allows (output_value_ok). Returns true, or false
 * with a message naming the file, line, column, value and what is allowed. */
static bool take_values(struct table *t, const struct layout *lay, size_t j, char **f, const char *path,
                        unsigned line, char *err, size_t errsz)
{
    for (size_t m = 0; m < t->nmetrics; m++) {
        double *v = &t->v[j * t->nmetrics + m];
        if (csv_double(f[m], v) && (isnan(*v) || output_value_ok(lay->mkinds[m], *v)))
            continue;
        char shown[48];
        snprintf(err, errsz, "%s:%u: '%s' in column %s is not %s", path, line,
                 shown_cell(f[m], shown, sizeof shown), lay->mnames[m], output_kind_allows(lay->mkinds[m]));
        return false;
    }
    return true;
}

/* Reads jobs.csv (hostile): its header must be the one this experiment
 * writes; every row must name a job of the grid with its point,
 * replication and values, and in every metric a value its kind allows
 * (take_values). Rows fill t (a job twice is an error). A last line cut
 * short by a crash is ignored. Returns 0, 1 when there is no jobs.csv, or
 * 2 with a message naming file and line. */
static int read_jobs(const char *path, const struct layout *lay, size_t reps, struct table *t,
                     char *err, size_t errsz)
{
    struct csv c;
    int rc = csv_open(&c, path, MAX_JOBS_BYTES, err, errsz);
    if (rc != 0)
        return rc > 0 ? 1 : 2;
    size_t first = 3 + lay->naxes, want = first + t->nmetrics;
    char **f = malloc((want + 1) * sizeof *f), *hdr = NULL;
    size_t hlen = 0;
    FILE *hf = open_memstream(&hdr, &hlen);
    if (hf != NULL) {
        jobs_header(hf, lay);
        fclose(hf);
    }
    bool more, ok = f != NULL && hdr != NULL, said = false;
    char *line0 = c.pos;
    size_t n = ok ? csv_next(&c, f, want, &more) : 0;
    ok = ok && n > 0 && strncmp(line0, "job", 3) == 0;
    if (ok) { /* compare the header as written: csv_next has split it */
        for (size_t i = 0, at = 0; ok && i < n; i++) {
            size_t l = strlen(f[i]);
            ok = strncmp(hdr + at, f[i], l) == 0 && hdr[at + l] == (i + 1 < n ? ',' : '\n');
            at += l + 1;
        }
        ok = ok && n == want && !more;
    }
    while (ok && (n = csv_next(&c, f, want, &more)) > 0) {
        if (c.torn)
            break; /* a row cut short by a crash: that job runs again */
        uint64_t j = 0, pt, rp;
        ok = n == want && !more && csv_uint(f[0], t->njobs - 1, &j) && csv_uint(f[1], UINT64_MAX, &pt) &&
             csv_uint(f[2], UINT64_MAX, &rp) && pt == j / reps && rp == j % reps && !t->done[j];
        for (size_t k = 0; ok && k < lay->naxes; k++)
            ok = strcmp(f[3 + k], lay->pv[j / reps][k]) == 0;
        if (ok && !take_values(t, lay, (size_t)j, f + first, path, c.line, err, errsz))
            ok = false, said = true;
        if (ok)
            t->done[j] = true;
    }
    if (!ok && !said)
        snprintf(err, errsz, "%s:%u: %s", path, c.line,
                 c.line <= 1 ? "not the jobs.csv header of this experiment (its columns differ from experiment.csv's)"
                             : "a malformed row (job out of range or twice, wrong point, replication, "
                               "key value or field count)");
    free(f);
    free(hdr);
    csv_close(&c);
    return ok ? 0 : 2;
}

/* The first field of experiment.csv in which two experiments differ, as
 * words for a message; NULL when they are the same. */
static const char *meta_differs(const struct layout *a, size_t ra, const struct fingerprint *fa,
                                const struct layout *b, size_t rb, const struct fingerprint *fb)
{
    if (fa->scenario != fb->scenario)
        return "the scenario differs (another scenario file, or other --set values)";
    if (a->naxes != b->naxes || fa->grid != fb->grid || a->npoints != b->npoints)
        return "the grid differs (other --grid keys or values)";
    for (size_t k = 0; k < a->naxes; k++)
        if (strcmp(a->keys[k], b->keys[k]) != 0)
            return "the grid differs (other --grid keys or values)";
    for (size_t p = 0; p < a->npoints; p++)
        for (size_t k = 0; k < a->naxes; k++)
            if (strcmp(a->pv[p][k], b->pv[p][k]) != 0)
                return "the grid differs (other --grid keys or values)";
    if (ra != rb)
        return "the number of replications differs (another --reps)";
    if (a->nmetrics != b->nmetrics)
        return "the columns differ (another version's summary, or other services, caches or layers)";
    for (size_t m = 0; m < a->nmetrics; m++)
        if (strcmp(a->mnames[m], b->mnames[m]) != 0 || a->mkinds[m] != b->mkinds[m])
            return "the columns differ (another version's summary, or other services, caches or layers)";
    return NULL;
}

bool exp_unfinished(const char *dir)
{
    char path[PATH_MAX + 64], err[256], *f[3];
    bool more, found = false;
    struct csv c;
    if (outdir_join(path, sizeof path, dir, "status.csv") != 0 || csv_open(&c, path, 1 << 16, err, sizeof err) != 0)
        return false;
    size_t n;
    while ((n = csv_next(&c, f, 2, &more)) > 0)
        found = found || (n == 2 && !strcmp(f[0], "complete") && !strcmp(f[1], "0"));
    csv_close(&c);
    return found;
}

/* Before anything is written: without --resume, an unfinished sweep in
 * dir is not overwritten by accident; with it, dir must hold this very
 * experiment (the same fingerprint). Returns 0, or 2 with a message. */
static int check_previous(const struct exp_spec *spec, const struct layout *lay, size_t reps,
                          const struct fingerprint *fp, char *err, size_t errsz)
{
    int rc = outdir_check(spec->dir, spec->force, err, errsz);
    if (rc != 0)
        return rc;
    if (!spec->resume) {
        if (!exp_unfinished(spec->dir))
            return 0;
        snprintf(err, errsz, "%s holds an unfinished sweep: add --resume to finish it, or choose another -o", spec->dir);
        return 2;
    }
    char path[PATH_MAX + 64];
    outdir_join(path, sizeof path, spec->dir, "experiment.csv"); /* dir: at most OUTDIR_PATH_MAX */
    struct layout theirs = {0};
    size_t rt;
    struct fingerprint ft;
    if (read_meta(path, &theirs, &rt, &ft, err, errsz) != 0) {
        size_t n = strlen(err);
        snprintf(err + n, errsz - n, "; --resume finds no sweep to resume in %s", spec->dir);
        return 2;
    }
    const char *why = meta_differs(lay, reps, fp, &theirs, rt, &ft);
    layout_fini(&theirs);
    if (why != NULL) {
        snprintf(err, errsz, "--resume: %s holds another experiment: %s", spec->dir, why);
        return 2;
    }
    return 0;
}

static void progress_line(size_t done, size_t total, double t0)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    double el = (double)ts.tv_sec + (double)ts.tv_nsec / 1e9 - t0;
    double rate = el > 0 ? (double)done / el : 0;
    fprintf(stderr, "\r  %zu/%zu jobs, %.1f jobs/s, %.0f s left   ", done, total, rate,
            rate > 0 ? (double)(total - done) / rate : 0.0);
    fflush(stderr);
}

/* Expands every --grid axis into g; 0, or 2 with a message. */
static int build_grid(const struct exp_spec *spec, struct grid *g, char *err, size_t errsz)
{
    g->npoints = 1;
    for (size_t k = 0; k < spec->ngrid; k++) {
        g->vals[k] = calloc(MAX_VALUES, 128);
        if (g->vals[k] == NULL) {
            snprintf(err, errsz, "out of memory for the grid");
            return 1;
        }
        g->naxes = k + 1;
        g->nvals[k] = exp_expand_axis(spec->grid[k], g->keys[k], sizeof g->keys[k], g->vals[k],
                                      MAX_VALUES, err, errsz);
        if (g->nvals[k] == 0)
            return 2;
        for (size_t j = 0; j < k; j++)
            if (strcmp(g->keys[j], g->keys[k]) == 0) {
                snprintf(err, errsz, "--grid %s: the key %s is on the grid twice; give its values in one --grid",
                         spec->grid[k], g->keys[k]);
                return 2;
            }
        g->npoints *= g->nvals[k];
        if (g->npoints > MAX_POINTS) {
            snprintf(err, errsz, "the grid has more than %d points", MAX_POINTS);
            return 2;
        }
    }
    size_t reps = spec->reps ? spec->reps : 1;
    if (g->npoints * reps > MAX_JOBS || reps > EXP_MAX_REPS) {
        snprintf(err, errsz, "%zu points × %zu replications is more than the limit of %d jobs (and at most %u replications)",
                 g->npoints, reps, MAX_JOBS, EXP_MAX_REPS);
        return 2;
    }
    if (spec->shard_n && (spec->shard_k < 1 || spec->shard_k > spec->shard_n)) {
        snprintf(err, errsz, "--shard %u/%u: K must be from 1 to N", spec->shard_k, spec->shard_n);
        return 2;
    }
    return 0;
}

/* Loads and checks every point's scenario before anything runs; 0, or 2
 * with the problems in diag. */
static int load_points(const struct exp_spec *spec, const struct grid *g, struct scenario *points,
                       struct scenario_diag *diag)
{
    for (size_t p = 0; p < g->npoints; p++) {
        const char *sets[512];
        char own[EXP_MAX_AXES][300];
        size_t n = 0;
        for (size_t i = 0; i < spec->nsets && n < 500; i++)
            sets[n++] = spec->sets[i];
        for (size_t k = 0; k < g->naxes; k++) {
            snprintf(own[k], sizeof own[k], "%.127s=%s", g->keys[k], grid_value(g, p, k));
            sets[n++] = own[k];
        }
        if (scenario_load(&points[p], spec->scenario, sets, n, diag) != 0)
            return 2; /* the same problem would repeat at every point */
    }
    return 0;
}

/* Point 0's summary columns into cols; every other point must have the
 * same (a grid that added a service, cache or layer would mix columns).
 * Returns 0, or 2 with a message. */
static int point_columns(const struct grid *g, const struct scenario *points, struct summary_cols *cols,
                         char *err, size_t errsz)
{
    size_t p = 0;
    int rc = summary_cols_common(cols, points, g->npoints, &p, err, errsz);
    if (rc == 1)
        snprintf(err, errsz, "point %zu of the grid has other summary columns than point 0 (a grid "
                             "value changes the scenario's services, caches or layers): sweep each "
                             "shape on its own", p);
    return rc == 0 ? 0 : 2;
}

/* Runs jobs[0..njobs) on the spec's threads, each recorded in log as it
 * finishes. Returns 0, or 1 with a message (a run or a write failed). */
static int run_jobs(const struct exp_spec *spec, struct worker_ctx *w, char *err, size_t errsz)
{
    atomic_init(&w->next, 0);
    atomic_init(&w->finished, 0);
    atomic_init(&w->failed, 0);
    pthread_mutex_init(&w->lock, NULL);
    pthread_cond_init(&w->wake, NULL);
    pthread_t sync_th;
    bool sync_started = pthread_create(&sync_th, NULL, syncer, w) == 0;
    unsigned nt = spec->threads ? spec->threads : 1, started = 0;
    if (nt > w->njobs)
        nt = w->njobs ? (unsigned)w->njobs : 1;
    if (nt > 256)
        nt = 256;
    pthread_t th[256];
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    double t0 = (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
    for (unsigned i = 0; i < nt; i++)
        started += pthread_create(&th[started], NULL, worker, w) == 0;
    if (started == 0)
        worker(w); /* no thread could start: run them here */
    while (spec->progress && atomic_load(&w->finished) < w->njobs && !atomic_load(&w->failed) &&
           !(spec->stop && *spec->stop)) {
        progress_line(atomic_load(&w->finished), w->njobs, t0);
        nanosleep(&(struct timespec){0, 200000000}, NULL);
    }
    for (unsigned i = 0; i < started; i++)
        pthread_join(th[i], NULL);
    pthread_mutex_lock(&w->lock);
    w->closing = true;
    pthread_cond_signal(&w->wake);
    pthread_mutex_unlock(&w->lock);
    if (sync_started)
        pthread_join(sync_th, NULL);
    else if (fdatasync(fileno(w->log)) != 0 && !atomic_load(&w->failed))
        snprintf(w->err, sizeof w->err, "cannot sync jobs.csv: %s", strerror(errno)), atomic_store(&w->failed, 1);
    pthread_cond_destroy(&w->wake);
    if (spec->progress)
        fprintf(stderr, "\r%70s\r", "");
    pthread_mutex_destroy(&w->lock);
    if (atomic_load(&w->failed)) {
        snprintf(err, errsz, "%s", w->err);
        return 1;
    }
    return 0;
}

/* Whether job j belongs to this shard (every job without --shard). */
static bool in_shard(const struct exp_spec *spec, size_t j)
{
    return spec->shard_n == 0 || j % spec->shard_n == spec->shard_k - 1;
}

/* The jobs done of this shard; in *all, the jobs done in all (a shard's
 * jobs.csv may hold others', which count for sweep.csv, not for the shard). */
static size_t count_done(const struct exp_spec *spec, const struct table *t, size_t *all)
{
    size_t mine = 0;
    *all = 0;
    for (size_t j = 0; j < t->njobs; j++) {
        *all += t->done[j];
        mine += t->done[j] && in_shard(spec, j);
    }
    return mine;
}

/* The files before any job runs: the fingerprint, status complete = 0 and
 * jobs.csv with the jobs already done, opened for appending. */
static int start_files(const struct exp_spec *spec, const struct layout *lay, size_t reps,
                       const struct fingerprint *fp, const struct table *t, size_t ntotal,
                       FILE **log, char *err, size_t errsz)
{
    size_t all, ndone = count_done(spec, t, &all);
    if (write_experiment_csv(spec->dir, lay, reps, fp, err, errsz) != 0 ||
        write_status(spec->dir, false, ndone, ntotal, err, errsz) != 0 ||
        write_jobs(spec->dir, lay, reps, t, log, err, errsz) != 0)
        return 1;
    return 0;
}

/* The files after the jobs: jobs.csv in job order, the status, and
 * sweep.csv when every job is here. Returns 0, 3 (interrupted) or 1. */
static int finish_files(const struct exp_spec *spec, const struct layout *lay, size_t reps,
                        const struct table *t, size_t ntotal, struct exp_result *result, char *err,
                        size_t errsz)
{
    size_t all, ndone = count_done(spec, t, &all);
    bool mine_done = ndone == ntotal, complete = all == t->njobs;
    if (write_jobs_csv(spec->dir, lay, reps, t, err, errsz) != 0 ||
        write_status(spec->dir, mine_done, ndone, ntotal, err, errsz) != 0)
        return 1;
    struct exp_result local, *res = result ? result : &local;
    bool fill = result ? !mine_done || complete : mine_done && complete;
    if (fill && fill_result(res, lay, reps, t) != 0) {
        if (res == &local)
            exp_result_fini(&local);
        snprintf(err, errsz, "out of memory for the results");
        return 1;
    }
    res->done = ndone;
    int rc = 0;
    if (!mine_done) {
        snprintf(err, errsz, "interrupted: %zu of %zu jobs done and kept in %s/jobs.csv; run the same command with --resume to finish",
                 ndone, ntotal, spec->dir);
        rc = 3;
    } else if (complete && write_sweep_csv(spec->dir, res, err, errsz) != 0) {
        rc = 1;
    }
    if (fill && res == &local)
        exp_result_fini(&local);
    return rc;
}

/* The jobs of this shard that are not done yet, into jobs; their count,
 * and in *ntotal the number of this shard's jobs. */
static size_t jobs_to_run(const struct exp_spec *spec, const struct table *t, size_t *jobs,
                          size_t *ntotal)
{
    size_t nmine = 0;
    *ntotal = 0;
    for (size_t j = 0; j < t->njobs; j++)
        if (in_shard(spec, j)) {
            (*ntotal)++;
            if (!t->done[j])
                jobs[nmine++] = j;
        }
    return nmine;
}

/* Allocates the table of njobs × nmetrics, every value NaN (no value)
 * until its job is done. */
static int table_init(struct table *t, size_t njobs, size_t nmetrics)
{
    t->nmetrics = nmetrics;
    t->njobs = njobs;
    t->v = malloc((njobs * t->nmetrics > 0 ? njobs * t->nmetrics : 1) * sizeof *t->v);
    t->done = calloc(njobs ? njobs : 1, sizeof *t->done);
    if (!t->v || !t->done)
        return -1;
    for (size_t i = 0; i < njobs * t->nmetrics; i++)
        t->v[i] = NAN;
    return 0;
}

int exp_run(const struct exp_spec *spec, struct scenario_diag *diag, struct exp_result *result,
            char *err, size_t errsz)
{
    struct grid g = {0};
    struct scenario *points = NULL;
    struct table t = {0};
    struct layout lay = {0};
    struct summary_cols cols = {0};
    struct fingerprint fp;
    size_t *jobs = NULL, reps = spec->reps ? spec->reps : 1, ntotal;
    FILE *log = NULL;
    int rc = build_grid(spec, &g, err, errsz);
    if (rc != 0)
        goto out;
    points = calloc(g.npoints, sizeof *points);
    jobs = malloc(g.npoints * reps * sizeof *jobs);
    if (!points || !jobs) {
        snprintf(err, errsz, "out of memory for %zu jobs", g.npoints * reps);
        rc = 1;
        goto out;
    }
    if ((rc = load_points(spec, &g, points, diag)) != 0 ||
        (rc = point_columns(&g, points, &cols, err, errsz)) != 0)
        goto out;
    if (table_init(&t, g.npoints * reps, results_metrics(&cols)) != 0 || layout_of_grid(&lay, &g, &cols, &points[0]) != 0) {
        snprintf(err, errsz, "out of memory for %zu jobs", g.npoints * reps);
        rc = 1;
        goto out;
    }
    if (fingerprint_of(&points[0], &lay, &fp) != 0) {
        snprintf(err, errsz, "out of memory for the fingerprint");
        rc = 1;
        goto out;
    }
    if ((rc = check_previous(spec, &lay, reps, &fp, err, errsz)) != 0 ||
        (rc = outdir_prepare(spec->dir, spec->force, spec->resume, err, errsz)) != 0)
        goto out;
    char path[PATH_MAX + 64];
    outdir_join(path, sizeof path, spec->dir, "jobs.csv");
    if (spec->resume && (rc = read_jobs(path, &lay, reps, &t, err, errsz)) == 2)
        goto out;
    if (spec->given0 != NULL && !t.done[0] && in_shard(spec, 0))
        take_row(&t, &cols, 0, spec->given0);
    size_t nmine = jobs_to_run(spec, &t, jobs, &ntotal);
    if ((rc = start_files(spec, &lay, reps, &fp, &t, ntotal, &log, err, errsz)) != 0)
        goto out;
    struct worker_ctx w = {.points = points, .reps = reps, .jobs = jobs, .njobs = nmine, .t = &t,
                           .cols = &cols, .stop = spec->stop, .lay = &lay, .log = log};
    if ((rc = run_jobs(spec, &w, err, errsz)) == 0)
        rc = finish_files(spec, &lay, reps, &t, ntotal, result, err, errsz);
out:
    if (log)
        fclose(log);
    layout_fini(&lay);
    summary_cols_fini(&cols);
    free(points);
    free(t.v);
    free(t.done);
    free(jobs);
    grid_fini(&g);
    return rc;
}

/* ---- merge ---- */

/* Reads and checks every shard's experiment.csv: the first one's layout
 * into lay; the others must describe the same experiment. */
static int merge_meta(const char *const *dirs, size_t ndirs, struct layout *lay, size_t *reps,
                      struct fingerprint *fp, char *err, size_t errsz)
{
    char path[PATH_MAX + 64];
    for (size_t d = 0; d < ndirs; d++) {
        struct layout l = {0};
        size_t r;
        struct fingerprint f;
        if (outdir_join(path, sizeof path, dirs[d], "experiment.csv") != 0) {
            snprintf(err, errsz, "%.60s...: a path longer than the system's limit", dirs[d]);
            return 2;
        }
        if (read_meta(path, &l, &r, &f, err, errsz) != 0)
            return 2;
        const char *why = d ? meta_differs(lay, *reps, fp, &l, r, &f) : NULL;
        if (d == 0) {
            *lay = l, *reps = r, *fp = f;
            continue;
        }
        layout_fini(&l);
        if (why != NULL) {
            snprintf(err, errsz, "%s: a shard of another experiment than %s: %s", dirs[d], dirs[0], why);
            return 2;
        }
    }
    return 0;
}

/* Before the table is allocated: the shards' jobs.csv files must be large
 * enough to hold every job of the experiment (a row has at least one byte
 * per field), so that a crafted experiment.csv cannot make merge allocate
 * gigabytes for jobs that are not there. Returns 0, or 2 with a message. */
static int jobs_can_fit(const char *const *dirs, size_t ndirs, const struct layout *lay, size_t reps,
                        char *err, size_t errsz)
{
    char path[PATH_MAX + 64];
    uint64_t bytes = 0, row = 3 + lay->naxes + lay->nmetrics;
    for (size_t d = 0; d < ndirs; d++) {
        struct stat st;
        outdir_join(path, sizeof path, dirs[d], "jobs.csv");
        if (stat(path, &st) == 0 && S_ISREG(st.st_mode))
            bytes += (uint64_t)st.st_size;
    }
    uint64_t njobs = (uint64_t)lay->npoints * reps;
    if (njobs <= bytes / row)
        return 0;
    snprintf(err, errsz, "%llu jobs of at least %llu bytes each cannot be in the shards' jobs.csv files (%llu bytes in all): jobs are missing, merge every shard",
             (unsigned long long)njobs, (unsigned long long)row, (unsigned long long)bytes);
    return 2;
}

/* merge -o must not be one of the shards or hold one: preparing it would
 * remove the shard's files. Returns 0, or 2 with a message. */
static int out_holds_no_input(const char *const *dirs, size_t ndirs, const char *out, char *err,
                              size_t errsz)
{
    char ro[PATH_MAX], ri[PATH_MAX];
    if (realpath(out, ro) == NULL)
        return 0; /* out does not exist yet */
    size_t n = strlen(ro);
    for (size_t d = 0; d < ndirs; d++)
        if (realpath(dirs[d], ri) != NULL && strncmp(ri, ro, n) == 0 &&
            (ri[n] == '\0' || ri[n] == '/' || n == 1)) {
            snprintf(err, errsz, "-o %s holds the shard %s: merge into another directory", out, dirs[d]);
            return 2;
        }
    return 0;
}

int exp_merge(const char *const *dirs, size_t ndirs, const char *out, bool force, struct exp_result *res,
              char *err, size_t errsz)
{
    char path[PATH_MAX + 64];
    size_t reps = 0;
    struct layout lay = {0};
    struct table t = {0};
    struct fingerprint fp;
    int rc = merge_meta(dirs, ndirs, &lay, &reps, &fp, err, errsz);
    if (rc == 0)
        rc = jobs_can_fit(dirs, ndirs, &lay, reps, err, errsz);
    if (rc == 0 && table_init(&t, lay.npoints * reps, lay.nmetrics) != 0) {
        snprintf(err, errsz, "out of memory for %zu jobs", lay.npoints * reps);
        rc = 1;
    }
    for (size_t d = 0; d < ndirs && rc == 0; d++) {
        outdir_join(path, sizeof path, dirs[d], "jobs.csv"); /* fits: experiment.csv did */
        if ((rc = read_jobs(path, &lay, reps, &t, err, errsz)) == 1)
            rc = 2; /* err says there is no jobs.csv */
    }
    if (rc == 0) {
        size_t missing = 0;
        for (size_t j = 0; j < t.njobs; j++)
            missing += !t.done[j];
        if (missing) {
            snprintf(err, errsz, "%zu of %zu jobs are missing: merge every shard (a job twice is an error)",
                     missing, t.njobs);
            rc = 2;
        }
    }
    if (rc == 0)
        rc = out_holds_no_input(dirs, ndirs, out, err, errsz);
    if (rc == 0)
        rc = outdir_prepare(out, force, false, err, errsz);
    if (rc == 0 && fill_result(res, &lay, reps, &t) != 0) {
        snprintf(err, errsz, "out of memory for the results");
        rc = 1;
    }
    if (rc == 0) {
        res->done = t.njobs;
        if (write_experiment_csv(out, &lay, reps, &fp, err, errsz) != 0 ||
            write_jobs_csv(out, &lay, reps, &t, err, errsz) != 0 ||
            write_status(out, true, t.njobs, t.njobs, err, errsz) != 0 ||
            write_sweep_csv(out, res, err, errsz) != 0)
            rc = 1;
    }
    layout_fini(&lay);
    free(t.v);
    free(t.done);
    return rc;
}

/* ---- run --reps and the columns of a sweep directory ---- */

int exp_columns(const char *dir, struct summary_cols *cols, char *err, size_t errsz)
{
    char path[PATH_MAX + 64];
    struct layout l = {0};
    size_t reps;
    struct fingerprint fp;
    if (outdir_join(path, sizeof path, dir, "experiment.csv") != 0) {
        snprintf(err, errsz, "%.60s...: a path longer than the system's limit", dir);
        return 2;
    }
    if (read_meta(path, &l, &reps, &fp, err, errsz) != 0)
        return 2;
    cols->n = l.nmetrics;
    cols->c = calloc(l.nmetrics ? l.nmetrics : 1, sizeof *cols->c);
    for (size_t m = 0; cols->c != NULL && m < l.nmetrics; m++) {
        snprintf(cols->c[m].name, sizeof cols->c[m].name, "%s", l.mnames[m]);
        cols->c[m].kind = l.mkinds[m];
    }
    layout_fini(&l);
    if (cols->c == NULL) {
        snprintf(err, errsz, "out of memory for the columns");
        return 1;
    }
    return 0;
}

int exp_reps_table(const struct exp_result *res, const char *scenario, bool complete, struct results *out)
{
    const struct results *sum = &res->sum;
    if (results_init(out, 1, sum->ncols) != 0)
        return -1;
    snprintf(out->label_names[0], sizeof out->label_names[0], "scenario");
    memcpy(out->cols, sum->cols, sum->ncols * sizeof *sum->cols);
    double *row = malloc((sum->ncols ? sum->ncols : 1) * sizeof *row);
    if (row == NULL || sum->nrows == 0) {
        free(row);
        return -1;
    }
    memcpy(row, sum->v, sum->ncols * sizeof *row);
    row[0] = (double)res->done; /* reps: the replications done */
    long c = results_find(sum, "complete");
    if (!complete && c >= 0) /* an interrupted set of replications is not complete */
        row[c] = 0, row[c + 1] = row[c + 2] = NAN;
    int rc = results_add(out, &scenario, row);
    free(row);
    return rc;
}

int exp_replicate(const struct exp_spec *spec, const char *dir, struct scenario_diag *diag,
                  struct exp_result *res, char *err, size_t errsz)
{
    char tmp[PATH_MAX + 64], from[PATH_MAX + 64], to[PATH_MAX + 64];
    if (outdir_join(tmp, sizeof tmp, dir, ".replications") != 0 ||
        outdir_join(from, sizeof from, tmp, "jobs.csv") != 0 ||
        outdir_join(to, sizeof to, dir, "replications.csv") != 0) {
        snprintf(err, errsz, "%s: the path is too long", dir);
        return 1;
    }
    struct exp_spec r = *spec;
    r.ngrid = 0;
    r.shard_n = r.shard_k = 0;
    r.resume = r.force = false;
    r.dir = tmp;
    int rc = exp_run(&r, diag, res, err, errsz);
    if (rc != 0 && !(rc == 3 && res->metric != NULL)) {
        outdir_remove_ours(tmp);
        return rc;
    }
    if (rename(from, to) != 0) {
        snprintf(err, errsz, "cannot rename %s: %s", from, strerror(errno));
        outdir_remove_ours(tmp);
        return 1;
    }
    outdir_remove_ours(tmp);
    return rc;
}
