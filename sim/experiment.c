/*
 * experiment — replications, sweeps, shards, merges. See experiment.h.
 */
#define _POSIX_C_SOURCE 200809L

#include "experiment.h"

#include <errno.h>
#include <gsl/gsl_cdf.h>
#include <gsl/gsl_statistics_double.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "output.h"
#include "sim.h"

#define MAX_VALUES 10000
#define MAX_METRICS 128
#define MAX_POINTS 100000
#define MAX_JOBS 10000000

/* ---- grids ---- */

/* A number with an optional duration unit: 50ms, 2, 0.5s. The unit (if
 * any) is returned so that generated values carry it. */
static bool parse_num_unit(const char *s, double *v, char *unit, size_t usz)
{
    char *end;
    errno = 0;
    *v = strtod(s, &end);
    if (end == s || errno == ERANGE || !isfinite(*v))
        return false;
    snprintf(unit, usz, "%s", end);
    if (*unit == '\0')
        return true;
    rs_time t;
    return units_parse_duration(s, &t); /* a known unit */
}

size_t exp_expand_axis(const char *text, char *key, size_t keysz, char out[][128], size_t max,
                       char *err, size_t errsz)
{
    const char *eq = strchr(text, '=');
    if (eq == NULL || eq == text || eq[1] == '\0') {
        snprintf(err, errsz, "--grid %s: expected KEY=V1,V2,... or KEY=A..B (e.g. layer.app.attempts=1..5)", text);
        return 0;
    }
    snprintf(key, keysz, "%.*s", (int)(eq - text), text);
    const char *vals = eq + 1;
    const char *dots = strstr(vals, "..");
    size_t n = 0;
    if (dots == NULL) {
        char buf[8192];
        snprintf(buf, sizeof buf, "%s", vals);
        char *save = NULL;
        for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
            if (n == max) {
                snprintf(err, errsz, "--grid %s: more than %zu values", text, max);
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
    char a[64], b[64], ua[16], ub[16];
    snprintf(a, sizeof a, "%.*s", (int)(dots - vals), vals);
    const char *rest = dots + 2;
    const char *op = strpbrk(rest, "*+");
    snprintf(b, sizeof b, "%.*s", (int)(op ? op - rest : (long)strlen(rest)), rest);
    double lo, hi, step = 1;
    char kind = op ? *op : '+';
    if (!parse_num_unit(a, &lo, ua, sizeof ua) || !parse_num_unit(b, &hi, ub, sizeof ub) ||
        strcmp(ua, ub) != 0) {
        snprintf(err, errsz, "--grid %s: a range is A..B, A..B+STEP or A..B*FACTOR with numbers in the same unit (e.g. 1..5, 50ms..800ms*2)", text);
        return 0;
    }
    if (op && (!parse_num_unit(op + 1, &step, ub, sizeof ub) || ub[0] != '\0')) {
        snprintf(err, errsz, "--grid %s: the step after '%c' must be a plain number", text, kind);
        return 0;
    }
    if (hi < lo || (kind == '+' && !(step > 0)) || (kind == '*' && !(step > 1)) || (kind == '*' && !(lo > 0))) {
        snprintf(err, errsz, "--grid %s: the range does not end (need A <= B, a step > 0, or a factor > 1 from A > 0)", text);
        return 0;
    }
    for (double x = lo; x <= hi * (1 + 1e-12); x = kind == '*' ? x * step : x + step) {
        if (n == max) {
            snprintf(err, errsz, "--grid %s: more than %zu values", text, max);
            return 0;
        }
        snprintf(out[n++], 128, "%.12g%s", x, ua);
    }
    return n;
}

/* ---- results ---- */

void exp_result_fini(struct exp_result *r)
{
    free(r->values);
    free(r->metric);
    free(r->mean);
    free(r->sd);
    free(r->hw);
    memset(r, 0, sizeof *r);
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

struct table {
    size_t njobs, nmetrics;
    char names[MAX_METRICS][64];
    double *v; /* njobs × nmetrics, NaN for an empty cell */
    bool *done;
};

struct worker_ctx {
    const struct scenario *points;
    size_t reps;
    const size_t *jobs; /* the job indices to run here */
    size_t njobs;
    atomic_size_t next, finished;
    struct table *t;
    const int *cols; /* summary column → metric index, −1 to skip */
    size_t ncols;
    atomic_int failed;
    volatile sig_atomic_t *stop;
    char err[512];
    pthread_mutex_t lock;
};

static size_t split_csv(char *line, char **f, size_t max)
{
    size_t n = 0;
    for (char *tok = line, *next; tok && n < max; tok = next) {
        next = strchr(tok, ',');
        if (next)
            *next++ = '\0';
        f[n++] = tok;
    }
    return n;
}

/* One run's summary row, as the header and a line of values. */
static int summary_row(const struct scenario *sc, uint32_t rep, bool run,
                       volatile sig_atomic_t *stop, bool *complete, char **text, char *err,
                       size_t errsz)
{
    struct sim *s = sim_create(sc, rep, err, errsz);
    if (s == NULL)
        return -1;
    sim_set_stop(s, stop);
    if (run && sim_run(s, NULL, NULL, err, errsz) != 0) {
        sim_destroy(s);
        return -1;
    }
    if (complete)
        *complete = sim_complete(s);
    struct summary o;
    output_summarise(s, 0.0, &o);
    size_t len;
    FILE *f = open_memstream(text, &len);
    output_write_summary_csv(f, s, &o, true);
    fclose(f);
    sim_destroy(s);
    return 0;
}

static void *worker(void *arg)
{
    struct worker_ctx *w = arg;
    for (;;) {
        size_t i = atomic_fetch_add(&w->next, 1);
        if (i >= w->njobs || atomic_load(&w->failed) || (w->stop && *w->stop))
            break;
        size_t j = w->jobs[i];
        char *text = NULL, err[512];
        bool complete = true;
        if (summary_row(&w->points[j / w->reps], (uint32_t)(j % w->reps), true, w->stop, &complete,
                        &text, err, sizeof err) != 0) {
            pthread_mutex_lock(&w->lock);
            if (!atomic_load(&w->failed))
                snprintf(w->err, sizeof w->err, "job %zu: %.400s", j, err);
            atomic_store(&w->failed, 1);
            pthread_mutex_unlock(&w->lock);
            free(text);
            break;
        }
        if (!complete) { /* interrupted: this job is not recorded */
            free(text);
            break;
        }
        char *row = strchr(text, '\n') + 1;
        row[strcspn(row, "\n")] = '\0';
        char *f[256];
        size_t n = split_csv(row, f, 256);
        double *out = &w->t->v[j * w->t->nmetrics];
        for (size_t c = 0; c < n && c < w->ncols; c++)
            if (w->cols[c] >= 0)
                out[w->cols[c]] = f[c][0] ? strtod(f[c], NULL) : NAN;
        w->t->done[j] = true;
        free(text);
        atomic_fetch_add(&w->finished, 1);
    }
    return NULL;
}

/* ---- files ---- */

/* The points as written: keys and each point's values. */
struct layout {
    size_t npoints, naxes;
    char keys[EXP_MAX_AXES][128];
    char (*pv)[EXP_MAX_AXES][128];
};

static int layout_of_grid(struct layout *l, const struct grid *g)
{
    l->npoints = g->npoints;
    l->naxes = g->naxes;
    memcpy(l->keys, g->keys, sizeof l->keys);
    l->pv = calloc(g->npoints, sizeof *l->pv);
    if (l->pv == NULL)
        return -1;
    for (size_t p = 0; p < g->npoints; p++)
        for (size_t k = 0; k < g->naxes; k++)
            snprintf(l->pv[p][k], 128, "%s", grid_value(g, p, k));
    return 0;
}

static int write_experiment_csv(const char *dir, const struct layout *g, size_t reps, char *err,
                                size_t errsz)
{
    struct output_file of;
    if (output_file_open(&of, dir, "experiment.csv", err, errsz) != 0)
        return -1;
    fprintf(of.f, "field,value\nversion,%s\nreps,%zu\npoints,%zu\n", RS_VERSION, reps, g->npoints);
    for (size_t k = 0; k < g->naxes; k++)
        fprintf(of.f, "key,%s\n", g->keys[k]);
    for (size_t p = 0; p < g->npoints; p++) {
        fprintf(of.f, "point,%zu", p);
        for (size_t k = 0; k < g->naxes; k++)
            fprintf(of.f, ",%s", g->pv[p][k]);
        fputc('\n', of.f);
    }
    return output_file_commit(&of, err, errsz);
}

static int write_jobs_csv(const char *dir, const struct layout *g, size_t reps, const struct table *t,
                          char *err, size_t errsz)
{
    struct output_file of;
    if (output_file_open(&of, dir, "jobs.csv", err, errsz) != 0)
        return -1;
    fprintf(of.f, "job,point,replication");
    for (size_t k = 0; k < g->naxes; k++)
        fprintf(of.f, ",%s", g->keys[k]);
    for (size_t m = 0; m < t->nmetrics; m++)
        fprintf(of.f, ",%s", t->names[m]);
    fputc('\n', of.f);
    for (size_t j = 0; j < t->njobs; j++) {
        if (!t->done[j])
            continue;
        fprintf(of.f, "%zu,%zu,%zu", j, j / reps, j % reps);
        for (size_t k = 0; k < g->naxes; k++)
            fprintf(of.f, ",%s", g->pv[j / reps][k]);
        for (size_t m = 0; m < t->nmetrics; m++) {
            double v = t->v[j * t->nmetrics + m];
            if (isnan(v))
                fputc(',', of.f);
            else
                fprintf(of.f, ",%.17g", v);
        }
        fputc('\n', of.f);
    }
    return output_file_commit(&of, err, errsz);
}

/* Mean and 95 % half-width of point p's metric m over its replications
 * that have a value. */
static void point_stat(const struct table *t, size_t reps, size_t p, size_t m, double *mean,
                       double *sd, double *hw)
{
    double x[4096];
    size_t n = 0;
    for (size_t r = 0; r < reps && n < 4096; r++) {
        double v = t->v[(p * reps + r) * t->nmetrics + m];
        if (!isnan(v))
            x[n++] = v;
    }
    *mean = n ? gsl_stats_mean(x, 1, n) : NAN;
    *sd = n >= 2 ? gsl_stats_sd(x, 1, n) : NAN;
    *hw = n >= 2 ? gsl_cdf_tdist_Pinv(0.975, (double)(n - 1)) * *sd / sqrt((double)n) : NAN;
}

static int write_sweep_csv(const char *dir, const struct layout *g, size_t reps, const struct table *t,
                           struct exp_result *res, char *err, size_t errsz)
{
    struct output_file of;
    if (output_file_open(&of, dir, "sweep.csv", err, errsz) != 0)
        return -1;
    fprintf(of.f, "point");
    for (size_t k = 0; k < g->naxes; k++)
        fprintf(of.f, ",%s", g->keys[k]);
    fprintf(of.f, ",reps");
    for (size_t m = 0; m < t->nmetrics; m++)
        fprintf(of.f, ",%s,%s_hw", t->names[m], t->names[m]);
    fputc('\n', of.f);
    for (size_t p = 0; p < g->npoints; p++) {
        fprintf(of.f, "%zu", p);
        for (size_t k = 0; k < g->naxes; k++)
            fprintf(of.f, ",%s", g->pv[p][k]);
        fprintf(of.f, ",%zu", reps);
        for (size_t m = 0; m < t->nmetrics; m++) {
            double mean, sd, hw;
            point_stat(t, reps, p, m, &mean, &sd, &hw);
            if (res) {
                res->mean[p * t->nmetrics + m] = mean;
                res->sd[p * t->nmetrics + m] = sd;
                res->hw[p * t->nmetrics + m] = hw;
            }
            if (isnan(mean))
                fputs(",,", of.f);
            else if (isnan(hw))
                fprintf(of.f, ",%.9g,", mean);
            else
                fprintf(of.f, ",%.9g,%.9g", mean, hw);
        }
        fputc('\n', of.f);
    }
    return output_file_commit(&of, err, errsz);
}

static int fill_result(struct exp_result *r, const struct layout *g, size_t reps, const struct table *t)
{
    memset(r, 0, sizeof *r);
    r->npoints = g->npoints;
    r->reps = reps;
    r->naxes = g->naxes;
    r->nmetrics = t->nmetrics;
    for (size_t k = 0; k < g->naxes; k++)
        snprintf(r->axis_keys[k], sizeof r->axis_keys[k], "%s", g->keys[k]);
    r->values = calloc(g->npoints, sizeof *r->values);
    r->metric = calloc(t->nmetrics, sizeof *r->metric);
    r->mean = calloc(g->npoints * t->nmetrics, sizeof *r->mean);
    r->hw = calloc(g->npoints * t->nmetrics, sizeof *r->hw);
    r->sd = calloc(g->npoints * t->nmetrics, sizeof *r->sd);
    if (!r->values || !r->metric || !r->mean || !r->hw || !r->sd)
        return -1;
    for (size_t p = 0; p < g->npoints; p++)
        for (size_t k = 0; k < g->naxes; k++)
            snprintf(r->values[p][k], 128, "%s", g->pv[p][k]);
    for (size_t m = 0; m < t->nmetrics; m++)
        snprintf(r->metric[m], 64, "%s", t->names[m]);
    return 0;
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

static char *slurp(const char *path);

/* With --resume, the jobs already in dir/jobs.csv (of the same
 * experiment) are kept; without it, an unfinished sweep in dir is not
 * overwritten by accident. Returns 0, or 2 with a message. */
static int previous_jobs(const struct exp_spec *spec, const struct layout *lay, size_t reps,
                         struct table *t, char *err, size_t errsz)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/status.csv", spec->dir);
    char *status = slurp(path);
    bool unfinished = status && strstr(status, "complete,0") != NULL;
    free(status);
    if (!spec->resume) {
        if (unfinished) {
            snprintf(err, errsz, "%s holds an unfinished sweep: add --resume to finish it, or choose another -o", spec->dir);
            return 2;
        }
        return 0;
    }
    /* the same experiment? compare experiment.csv with what this one writes */
    char *mine = NULL;
    size_t len;
    FILE *mf = open_memstream(&mine, &len);
    fprintf(mf, "field,value\nversion,%s\nreps,%zu\npoints,%zu\n", RS_VERSION, reps, lay->npoints);
    for (size_t k = 0; k < lay->naxes; k++)
        fprintf(mf, "key,%s\n", lay->keys[k]);
    for (size_t p = 0; p < lay->npoints; p++) {
        fprintf(mf, "point,%zu", p);
        for (size_t k = 0; k < lay->naxes; k++)
            fprintf(mf, ",%s", lay->pv[p][k]);
        fputc('\n', mf);
    }
    fclose(mf);
    snprintf(path, sizeof path, "%s/experiment.csv", spec->dir);
    char *theirs = slurp(path);
    bool same = theirs && strcmp(mine, theirs) == 0;
    free(mine);
    free(theirs);
    if (!same) {
        snprintf(err, errsz, "--resume: %s holds no sweep of this experiment (experiment.csv differs or is missing)",
                 spec->dir);
        return 2;
    }
    snprintf(path, sizeof path, "%s/jobs.csv", spec->dir);
    char *text = slurp(path);
    if (text == NULL)
        return 0;
    size_t first = 3 + lay->naxes;
    char *save = NULL;
    char *line = strtok_r(text, "\n", &save); /* the header */
    for (line = strtok_r(NULL, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        char *f[256];
        size_t n = split_csv(line, f, 256);
        size_t j = strtoul(f[0], NULL, 10);
        if (n != first + t->nmetrics || j >= t->njobs)
            continue;
        for (size_t m = 0; m < t->nmetrics; m++)
            t->v[j * t->nmetrics + m] = f[first + m][0] ? strtod(f[first + m], NULL) : NAN;
        t->done[j] = true;
    }
    free(text);
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

int exp_run(const struct exp_spec *spec, struct scenario_diag *diag, struct exp_result *result,
            char *err, size_t errsz)
{
    struct grid g = {0};
    int rc = 0;
    struct scenario *points = NULL;
    struct table t = {0};
    size_t *jobs = NULL;
    int cols[256];
    struct layout lay = {0};
    g.npoints = 1;
    for (size_t k = 0; k < spec->ngrid; k++) {
        g.vals[k] = calloc(MAX_VALUES, 128);
        if (g.vals[k] == NULL) {
            snprintf(err, errsz, "out of memory for the grid");
            rc = 1;
            goto out;
        }
        g.naxes = k + 1;
        g.nvals[k] = exp_expand_axis(spec->grid[k], g.keys[k], sizeof g.keys[k], g.vals[k],
                                     MAX_VALUES, err, errsz);
        if (g.nvals[k] == 0) {
            rc = 2;
            goto out;
        }
        g.npoints *= g.nvals[k];
        if (g.npoints > MAX_POINTS) {
            snprintf(err, errsz, "the grid has more than %d points", MAX_POINTS);
            rc = 2;
            goto out;
        }
    }
    size_t reps = spec->reps ? spec->reps : 1;
    if (g.npoints * reps > MAX_JOBS || reps > 4096) {
        snprintf(err, errsz, "%zu points × %zu replications is more than the limit of %d jobs (and at most 4096 replications)",
                 g.npoints, reps, MAX_JOBS);
        rc = 2;
        goto out;
    }
    if (spec->shard_n && (spec->shard_k < 1 || spec->shard_k > spec->shard_n)) {
        snprintf(err, errsz, "--shard %u/%u: K must be from 1 to N", spec->shard_k, spec->shard_n);
        rc = 2;
        goto out;
    }
    /* Every point's scenario is checked before anything runs. */
    points = calloc(g.npoints, sizeof *points);
    if (points == NULL) {
        snprintf(err, errsz, "out of memory for %zu points", g.npoints);
        rc = 1;
        goto out;
    }
    for (size_t p = 0; p < g.npoints; p++) {
        const char *sets[512];
        char own[EXP_MAX_AXES][300];
        size_t n = 0;
        for (size_t i = 0; i < spec->nsets && n < 500; i++)
            sets[n++] = spec->sets[i];
        for (size_t k = 0; k < g.naxes; k++) {
            snprintf(own[k], sizeof own[k], "%.127s=%s", g.keys[k], grid_value(&g, p, k));
            sets[n++] = own[k];
        }
        if (scenario_load(&points[p], spec->scenario, sets, n, diag) != 0) {
            rc = 2;
            goto out; /* the same problem would repeat at every point */
        }
    }
    /* The metric columns: every summary column but text and wall-clock. */
    char *text = NULL;
    if (summary_row(&points[0], 0, false, NULL, NULL, &text, err, errsz) != 0) {
        rc = 1;
        goto out;
    }
    text[strcspn(text, "\n")] = '\0';
    char *hf[256];
    size_t nh = split_csv(text, hf, 256);
    for (size_t c = 0; c < nh; c++) {
        bool skip = !strcmp(hf[c], "scenario") || !strcmp(hf[c], "seed") || !strcmp(hf[c], "wall_s");
        cols[c] = skip || t.nmetrics == MAX_METRICS ? -1 : (int)t.nmetrics;
        if (cols[c] >= 0)
            snprintf(t.names[t.nmetrics++], 64, "%s", hf[c]);
    }
    free(text);
    t.njobs = g.npoints * reps;
    t.v = malloc(t.njobs * t.nmetrics * sizeof *t.v);
    t.done = calloc(t.njobs, sizeof *t.done);
    jobs = malloc(t.njobs * sizeof *jobs);
    if (!t.v || !t.done || !jobs) {
        snprintf(err, errsz, "out of memory for %zu jobs", t.njobs);
        rc = 1;
        goto out;
    }
    if (layout_of_grid(&lay, &g) != 0) {
        snprintf(err, errsz, "out of memory for the points");
        rc = 1;
        goto out;
    }
    if (output_mkdir(spec->dir, err, errsz) != 0) {
        rc = 1;
        goto out;
    }
    if ((rc = previous_jobs(spec, &lay, reps, &t, err, errsz)) != 0)
        goto out;
    size_t nmine = 0, ntotal = 0;
    for (size_t j = 0; j < t.njobs; j++)
        if (spec->shard_n == 0 || j % spec->shard_n == spec->shard_k - 1) {
            ntotal++;
            if (!t.done[j])
                jobs[nmine++] = j;
        }
    struct worker_ctx w = {.points = points, .reps = reps, .jobs = jobs, .njobs = nmine, .t = &t,
                           .cols = cols, .ncols = nh, .stop = spec->stop};
    atomic_init(&w.next, 0);
    atomic_init(&w.finished, 0);
    atomic_init(&w.failed, 0);
    pthread_mutex_init(&w.lock, NULL);
    unsigned nt = spec->threads ? spec->threads : 1;
    if (nt > nmine)
        nt = nmine ? (unsigned)nmine : 1;
    pthread_t th[256];
    if (nt > 256)
        nt = 256;
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    double t0 = (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
    for (unsigned i = 0; i < nt; i++)
        pthread_create(&th[i], NULL, worker, &w);
    if (spec->progress) {
        while (atomic_load(&w.finished) < nmine && !atomic_load(&w.failed)) {
            progress_line(atomic_load(&w.finished), nmine, t0);
            nanosleep(&(struct timespec){0, 200000000}, NULL);
        }
    }
    for (unsigned i = 0; i < nt; i++)
        pthread_join(th[i], NULL);
    if (spec->progress)
        fprintf(stderr, "\r%70s\r", "");
    pthread_mutex_destroy(&w.lock);
    if (atomic_load(&w.failed)) {
        snprintf(err, errsz, "%s", w.err);
        rc = 1;
        goto out;
    }
    size_t ndone = 0;
    for (size_t j = 0; j < t.njobs; j++)
        ndone += t.done[j];
    bool mine_done = ndone == ntotal, complete = ndone == t.njobs;
    if (write_experiment_csv(spec->dir, &lay, reps, err, errsz) != 0 ||
        write_jobs_csv(spec->dir, &lay, reps, &t, err, errsz) != 0 ||
        write_status(spec->dir, mine_done, ndone, ntotal, err, errsz) != 0) {
        rc = 1;
        goto out;
    }
    if (!mine_done) {
        snprintf(err, errsz, "interrupted: %zu of %zu jobs done and kept in %s/jobs.csv; run the same command with --resume to finish",
                 ndone, ntotal, spec->dir);
        rc = 3;
        goto out;
    }
    if (complete) {
        if (result && fill_result(result, &lay, reps, &t) != 0) {
            snprintf(err, errsz, "out of memory for the results");
            rc = 1;
            goto out;
        }
        if (write_sweep_csv(spec->dir, &lay, reps, &t, result, err, errsz) != 0)
            rc = 1;
    }
out:
    free(lay.pv);
    free(points);
    free(t.v);
    free(t.done);
    free(jobs);
    grid_fini(&g);
    return rc;
}

/* ---- merge ---- */

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = n >= 0 ? malloc((size_t)n + 1) : NULL;
    if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
        free(buf);
        buf = NULL;
    }
    if (buf)
        buf[n] = '\0';
    fclose(f);
    return buf;
}

int exp_merge(const char *const *dirs, size_t ndirs, const char *out, char *err, size_t errsz)
{
    char path[4200];
    char *meta = NULL;
    int rc = 0;
    struct layout lay = {0};
    struct table t = {0};
    size_t reps = 0;
    for (size_t d = 0; d < ndirs; d++) {
        snprintf(path, sizeof path, "%s/experiment.csv", dirs[d]);
        char *m = slurp(path);
        if (m == NULL) {
            snprintf(err, errsz, "%s: not a sweep or shard directory (no experiment.csv)", dirs[d]);
            free(meta);
            return 2;
        }
        if (meta != NULL && strcmp(meta, m) != 0) {
            snprintf(err, errsz, "%s: a shard of another experiment (its experiment.csv differs from %s's)",
                     dirs[d], dirs[0]);
            free(m);
            free(meta);
            return 2;
        }
        free(meta);
        meta = m;
    }
    /* the points from experiment.csv */
    char *save = NULL;
    for (char *line = strtok_r(meta, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        if (!strncmp(line, "reps,", 5))
            reps = strtoul(line + 5, NULL, 10);
        else if (!strncmp(line, "points,", 7)) {
            lay.npoints = strtoul(line + 7, NULL, 10);
            lay.pv = lay.npoints <= MAX_POINTS ? calloc(lay.npoints, sizeof *lay.pv) : NULL;
        } else if (!strncmp(line, "key,", 4) && lay.naxes < EXP_MAX_AXES) {
            snprintf(lay.keys[lay.naxes++], 128, "%s", line + 4);
        } else if (!strncmp(line, "point,", 6) && lay.pv != NULL) {
            char *f[EXP_MAX_AXES + 2];
            size_t n = split_csv(line, f, EXP_MAX_AXES + 2);
            size_t p = strtoul(f[1], NULL, 10);
            for (size_t k = 0; k + 2 < n && p < lay.npoints; k++)
                snprintf(lay.pv[p][k], 128, "%s", f[k + 2]);
        }
    }
    if (reps == 0 || lay.pv == NULL) {
        snprintf(err, errsz, "%s/experiment.csv: incomplete", dirs[0]);
        rc = 2;
        goto out;
    }
    t.njobs = lay.npoints * reps;
    size_t first = 3 + lay.naxes;
    for (size_t d = 0; d < ndirs && rc == 0; d++) {
        snprintf(path, sizeof path, "%s/jobs.csv", dirs[d]);
        char *text = slurp(path);
        if (text == NULL) {
            snprintf(err, errsz, "%s: no jobs.csv", dirs[d]);
            rc = 2;
            break;
        }
        char *s2 = NULL;
        char *line = strtok_r(text, "\n", &s2);
        char *hf[256];
        size_t nh = line ? split_csv(line, hf, 256) : 0;
        if (t.v == NULL) {
            t.nmetrics = nh > first ? nh - first : 0;
            for (size_t m = 0; m < t.nmetrics && m < MAX_METRICS; m++)
                snprintf(t.names[m], 64, "%s", hf[first + m]);
            t.v = malloc(t.njobs * (t.nmetrics ? t.nmetrics : 1) * sizeof *t.v);
            t.done = calloc(t.njobs, sizeof *t.done);
            if (!t.v || !t.done) {
                snprintf(err, errsz, "out of memory for %zu jobs", t.njobs);
                free(text);
                rc = 1;
                break;
            }
        }
        for (line = strtok_r(NULL, "\n", &s2); line; line = strtok_r(NULL, "\n", &s2)) {
            char *f[256];
            size_t n = split_csv(line, f, 256);
            size_t j = strtoul(f[0], NULL, 10);
            if (n != first + t.nmetrics || j >= t.njobs) {
                snprintf(err, errsz, "%s/jobs.csv: a malformed row (job %s)", dirs[d], f[0]);
                rc = 2;
                break;
            }
            if (t.done[j]) {
                snprintf(err, errsz, "job %zu appears twice (again in %s)", j, dirs[d]);
                rc = 2;
                break;
            }
            for (size_t m = 0; m < t.nmetrics; m++)
                t.v[j * t.nmetrics + m] = f[first + m][0] ? strtod(f[first + m], NULL) : NAN;
            t.done[j] = true;
        }
        free(text);
    }
    if (rc == 0) {
        size_t missing = 0;
        for (size_t j = 0; j < t.njobs; j++)
            missing += !t.done[j];
        if (missing) {
            snprintf(err, errsz, "%zu of %zu jobs are missing: merge every shard", missing, t.njobs);
            rc = 2;
        }
    }
    if (rc == 0 && (output_mkdir(out, err, errsz) != 0 ||
                    write_experiment_csv(out, &lay, reps, err, errsz) != 0 ||
                    write_jobs_csv(out, &lay, reps, &t, err, errsz) != 0 ||
                    write_sweep_csv(out, &lay, reps, &t, NULL, err, errsz) != 0))
        rc = 1;
out:
    free(lay.pv);
    free(meta);
    free(t.v);
    free(t.done);
    return rc;
}
