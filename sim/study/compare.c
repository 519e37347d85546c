/*
 * compare — variants of one scenario on the same seed. See compare.h.
 */
#define _POSIX_C_SOURCE 200809L

#include "compare.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "csvread.h"
#include "experiment.h"
#include "labels.h"
#include "metrics.h"
#include "output.h"
#include "results.h"
#include "sim.h"
#include "stats.h"
#include "summary.h"
#include "trace.h"

struct axis {
    char key[128];
    char label[128]; /* the key's shortest unambiguous form (labels.h) */
    char *values[COMPARE_MAX_VARIANTS];
    size_t n;
    char buf[8192];
};

/* Expands one --vary into an axis: "KEY=V1,V2", or any form --grid takes
 * (A..B, A..B*F, A..B+S, with units: experiment.h). 0, or 2 with a message. */
static int parse_axis(const char *text, struct axis *a, char *err, size_t errsz)
{
    char(*vals)[128] = malloc(COMPARE_MAX_VARIANTS * sizeof *vals);
    char why[400];
    if (vals == NULL) {
        snprintf(err, errsz, "out of memory");
        return 2;
    }
    size_t n = exp_expand_axis(text, a->key, sizeof a->key, vals, COMPARE_MAX_VARIANTS, why, sizeof why), used = 0;
    int rc = 0;
    a->n = 0;
    if (n == 0) { /* why begins "--grid TEXT: " */
        const char *m = strncmp(why, "--grid ", 7) == 0 && strstr(why, ": ") ? strstr(why, ": ") + 2 : why;
        snprintf(err, errsz, "--vary %.200s: %s", text, m);
        rc = 2;
    }
    for (size_t i = 0; i < n && rc == 0; i++) {
        size_t len = strlen(vals[i]) + 1;
        if (used + len > sizeof a->buf) {
            snprintf(err, errsz, "--vary %.200s: more values than a comparison draws", text);
            rc = 2;
            break;
        }
        memcpy(a->buf + used, vals[i], len);
        a->values[a->n++] = a->buf + used;
        used += len;
    }
    free(vals);
    return rc;
}

#define MAX_COLS 256

/* Appends to buf (of size bytes, *used of them used) without ever
 * writing past it: a text that does not fit leaves *used == size. */
static void appendf(char *buf, size_t size, size_t *used, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static void appendf(char *buf, size_t size, size_t *used, const char *fmt, ...)
{
    if (*used >= size)
        return;
    va_list ap;
    va_start(ap, fmt);
    int w = vsnprintf(buf + *used, size - *used, fmt, ap);
    va_end(ap);
    *used = w < 0 || (size_t)w >= size - *used ? size : *used + (size_t)w;
}

#define LABEL_MAX 200

/* The variants: each one's scenario, label and overrides. */
struct variants {
    struct axis axes[COMPARE_MAX_KEYS];
    size_t n;
    struct scenario *scs;
    char (*labels)[512];
    char (*sets)[COMPARE_MAX_KEYS][512]; /* "KEY=VALUE", key <= 127 and value <= 380 bytes */
};

static void variants_fini(struct variants *vs)
{
    free(vs->scs);
    free(vs->labels);
    free(vs->sets);
}

/* Parses the --vary axes into vs; 0, or 2 with a message. */
static int parse_axes(const struct compare_spec *spec, struct variants *vs, char *err, size_t errsz)
{
    vs->n = 1;
    if (spec->nvary == 0) {
        snprintf(err, errsz, "compare needs at least one --vary KEY=V1,V2,...");
        return 2;
    }
    for (size_t k = 0; k < spec->nvary; k++) {
        struct axis *a = &vs->axes[k];
        if (parse_axis(spec->vary[k], a, err, errsz) != 0)
            return 2;
        for (size_t j = 0; j < k; j++)
            if (strcmp(vs->axes[j].key, a->key) == 0) {
                snprintf(err, errsz, "--vary %s: the key %s is varied twice; give its values in one --vary",
                         spec->vary[k], a->key);
                return 2;
            }
        vs->n *= a->n;
        if (vs->n > COMPARE_MAX_VARIANTS) {
            snprintf(err, errsz, "too many variants (more than %d)", COMPARE_MAX_VARIANTS);
            return 2;
        }
    }
    if (spec->reps > COMPARE_MAX_REPS) {
        snprintf(err, errsz, "compare averages at most %d replications (--reps %u)", COMPARE_MAX_REPS, spec->reps);
        return 2;
    }
    return 0;
}

/* Variant v's overrides and label (the first key varies slowest); 0, or 2
 * when its label would not make a directory name. */
static int name_variant(const struct compare_spec *spec, struct variants *vs, size_t v, char *err,
                        size_t errsz)
{
    size_t rest = v, stride = vs->n, used = 0;
    char *label = vs->labels[v];
    for (size_t k = 0; k < spec->nvary; k++) {
        const struct axis *a = &vs->axes[k];
        stride /= a->n;
        const char *value = a->values[rest / stride];
        rest %= stride;
        snprintf(vs->sets[v][k], sizeof vs->sets[v][k], "%s=%s", a->key, value);
        appendf(label, LABEL_MAX + 1, &used, "%s%s=%s", k ? "+" : "", a->label, value);
    }
    if (used > LABEL_MAX) {
        snprintf(err, errsz, "variant %.60s...: its label is longer than %d bytes, too long for a directory name",
                 label, LABEL_MAX);
        return 2;
    }
    for (char *c = label; *c; c++)
        if (*c == ' ' || *c == ',' || *c == '/' || *c == '\'' || *c == '"')
            *c = '_';
    for (size_t u = 0; u < v; u++)
        if (strcmp(vs->labels[u], label) == 0) {
            snprintf(err, errsz, "two variants have the same label %s: give values that differ in more than spaces, commas, slashes or quotes",
                     label);
            return 2;
        }
    return 0;
}

/* Each axis's label: its key's shortest unambiguous form in the base
 * scenario (the --set values applied); the key itself when the base does
 * not load (its variants will say why). Returns 0, or 1 (out of memory). */
static int label_axes(const struct compare_spec *spec, struct variants *vs)
{
    struct scenario *base = malloc(sizeof *base);
    struct scenario_diag quiet = {0};
    if (base == NULL)
        return 1;
    bool ok = scenario_load(base, spec->scenario, spec->sets, spec->nsets, &quiet) == 0;
    for (size_t k = 0; k < spec->nvary; k++) {
        struct axis *a = &vs->axes[k];
        if (ok)
            labels_short_key(base, a->key, a->label, sizeof a->label);
        else
            snprintf(a->label, sizeof a->label, "%s", a->key);
    }
    scenario_diag_fini(&quiet);
    free(base);
    return 0;
}

/* Takes spec's --label options against the variants' labels into
 * spec->given. Returns 0, or 2 with a message naming the label and
 * listing the variants. */
static int take_labels(const struct compare_spec *spec, const struct variants *vs, char *err, size_t errsz)
{
    if (spec->nlabels == 0 || spec->given == NULL)
        return 0;
    const char **names = malloc(vs->n * sizeof *names);
    if (names == NULL) {
        snprintf(err, errsz, "out of memory for %zu variants", vs->n);
        return 1;
    }
    for (size_t v = 0; v < vs->n; v++)
        names[v] = vs->labels[v];
    int rc = 0;
    for (size_t i = 0; i < spec->nlabels && rc == 0; i++)
        rc = labels_take(spec->given, spec->labels[i], names, vs->n, err, errsz) != 0 ? 2 : 0;
    free(names);
    return rc;
}

/* Loads every variant's scenario; problems go to diag, each saying which
 * variant. Returns 0, 2 (bad input) or 1 (out of memory). */
static int load_variants(const struct compare_spec *spec, struct variants *vs,
                         struct scenario_diag *diag, char *err, size_t errsz)
{
    vs->scs = calloc(vs->n, sizeof *vs->scs);
    vs->labels = calloc(vs->n, sizeof *vs->labels);
    vs->sets = calloc(vs->n, sizeof *vs->sets);
    if (!vs->scs || !vs->labels || !vs->sets || label_axes(spec, vs) != 0) {
        snprintf(err, errsz, "out of memory for %zu variants", vs->n);
        return 1;
    }
    int rc = 0;
    for (size_t v = 0; v < vs->n && rc != 1; v++) {
        const char *all[MAX_COLS];
        size_t n = 0;
        if (name_variant(spec, vs, v, err, errsz) != 0)
            return 2;
        for (size_t i = 0; i < spec->nsets && n < MAX_COLS - COMPARE_MAX_KEYS; i++)
            all[n++] = spec->sets[i];
        for (size_t k = 0; k < spec->nvary; k++)
            all[n++] = vs->sets[v][k];
        size_t before = diag->n;
        if (scenario_load(&vs->scs[v], spec->scenario, all, n, diag) == 0)
            continue;
        rc = 2;
        for (size_t i = before; i < diag->n; i++) { /* say which variant */
            char *m = malloc(strlen(diag->msg[i]) + 600);
            if (m) {
                sprintf(m, "variant %s: %s", vs->labels[v], diag->msg[i]);
                free(diag->msg[i]);
                diag->msg[i] = m;
            }
        }
    }
    return rc == 0 ? take_labels(spec, vs, err, errsz) : rc;
}

/* The comparison's combined files: summary.csv, timeseries.csv,
 * replications.csv, and each variant's latency.csv and attempts.csv (its
 * replication 0) behind its variant and key columns, under the union of
 * the variants' columns (written once every variant has run). summary.csv
 * and replications.csv are written from the numbers (sum and reps). */
enum { C_SUM, C_TS, C_REPS, C_LAT, C_ATT, C_FILES };
static const char *const combined_names[C_FILES] = {"summary.csv", "timeseries.csv", "replications.csv",
                                                    "latency.csv", "attempts.csv"};
struct combined {
    struct output_file f[C_FILES];
    struct summary_cols cols; /* every variant's (the same) */
    struct results sum, reps;
};

static int combined_open(struct combined *c, const char *dir, char *err, size_t errsz)
{
    for (size_t i = 0; i < C_FILES; i++)
        c->f[i] = (struct output_file){.f = NULL, .dirfd = -1, .tmp = ""};
    for (size_t i = 0; i < C_FILES; i++)
        if (output_file_open(&c->f[i], dir, combined_names[i], err, errsz) != 0)
            return -1;
    return 0;
}

static int combined_close(struct combined *c, bool commit, char *err, size_t errsz)
{
    int rc = 0;
    if (commit) {
        results_write_csv(c->f[C_SUM].f, &c->sum);
        results_write_csv(c->f[C_REPS].f, &c->reps);
    }
    for (size_t i = 0; i < C_FILES && commit && rc == 0; i++)
        rc = output_file_commit(&c->f[i], err, errsz) != 0 ? -1 : 0;
    for (size_t i = 0; i < C_FILES; i++)
        output_file_discard(&c->f[i]);
    return rc;
}

/* The tables of summary.csv (variant, keys, reps, each metric's mean, sd
 * and half-width) and replications.csv (variant, keys, replication, each
 * metric). Returns 0, or -1 when memory is short. */
static int combined_tables(struct combined *c, const struct compare_spec *spec, const struct variants *vs)
{
    size_t nm = results_metrics(&c->cols);
    if (results_init(&c->sum, 1 + spec->nvary, 1 + 3 * nm) != 0 ||
        results_init(&c->reps, 2 + spec->nvary, nm) != 0)
        return -1;
    snprintf(c->sum.label_names[0], sizeof c->sum.label_names[0], "variant");
    snprintf(c->reps.label_names[0], sizeof c->reps.label_names[0], "variant");
    for (size_t k = 0; k < spec->nvary; k++) {
        snprintf(c->sum.label_names[1 + k], sizeof c->sum.label_names[0], "%s", vs->axes[k].key);
        snprintf(c->reps.label_names[1 + k], sizeof c->reps.label_names[0], "%s", vs->axes[k].key);
    }
    snprintf(c->reps.label_names[1 + spec->nvary], sizeof c->reps.label_names[0], "replication");
    results_stat_columns(&c->sum, 0, &c->cols);
    for (size_t i = 0, m = 0; i < c->cols.n; i++)
        if (output_kind_is_metric(c->cols.c[i].kind)) {
            snprintf(c->reps.cols[m].name, sizeof c->reps.cols[m].name, "%s", c->cols.c[i].name);
            c->reps.cols[m++].kind = c->cols.c[i].kind;
        }
    return 0;
}

/* Every variant's summary columns must be the same (a --vary value that
 * added a service, cache or layer would mix them). 0, or 2 with a message. */
static int variant_columns(const struct variants *vs, struct summary_cols *cols, char *err, size_t errsz)
{
    size_t v = 0;
    int rc = summary_cols_common(cols, vs->scs, vs->n, &v, err, errsz);
    if (rc == 1)
        snprintf(err, errsz, "variant %s has other summary columns than %s (its services, caches or "
                             "layers differ): compare variants of one shape", vs->labels[v], vs->labels[0]);
    return rc == 0 ? 0 : 2;
}

/* A variant's prefix in the combined files (its label, then its value of
 * each axis) and its own directory. */
static void variant_names(const struct compare_spec *spec, const struct variants *vs, size_t v, char *prefix,
                          size_t psize, char *vdir, size_t vsize)
{
    size_t used = 0;
    appendf(prefix, psize, &used, "%s", vs->labels[v]);
    for (size_t k = 0; k < spec->nvary; k++)
        appendf(prefix, psize, &used, ",%s", strchr(vs->sets[v][k], '=') + 1);
    snprintf(vdir, vsize, "%s/%s", spec->dir, vs->labels[v]);
}

#define MAX_FILE_COLS 4096 /* columns of a run's timeseries.csv, latency.csv or attempts.csv */

/* The columns of one combined file: every column of any variant's file,
 * in the order they first appear (variants differ: a budget adds its
 * level to timeseries.csv, a hedged layer its levels to attempts.csv). */
struct union_cols {
    char *names[MAX_FILE_COLS];
    size_t n;
};

/* Adds the header's fields (nf of them) that the union lacks. */
static int union_add(struct union_cols *u, char **f, size_t nf, char *err, size_t errsz)
{
    for (size_t i = 0; i < nf; i++) {
        size_t j = 0;
        while (j < u->n && strcmp(u->names[j], f[i]) != 0)
            j++;
        if (j < u->n)
            continue;
        if (u->n == MAX_FILE_COLS || (u->names[u->n] = strdup(f[i])) == NULL)
            return snprintf(err, errsz, "more than %d columns over the variants' files", MAX_FILE_COLS), -1;
        u->n++;
    }
    return 0;
}

/* Appends the rest of one variant's file (its header hf[0..nh) read) to
 * out, each row prefixed and its cells put under the union's columns
 * (empty where the variant has no such column). */
static void append_mapped(FILE *out, const struct union_cols *u, struct csv *c, char **hf, size_t nh,
                          const char *prefix)
{
    static _Thread_local char *f[MAX_FILE_COLS]; /* 32 KiB: off the stack */
    int where[MAX_FILE_COLS]; /* union column -> the variant's column, or -1 */
    for (size_t j = 0; j < u->n; j++) {
        where[j] = -1;
        for (size_t i = 0; i < nh; i++)
            if (strcmp(u->names[j], hf[i]) == 0)
                where[j] = (int)i;
    }
    bool more;
    for (size_t nf; (nf = csv_next(c, f, MAX_FILE_COLS, &more)) > 0;) {
        fputs(prefix, out);
        for (size_t j = 0; j < u->n; j++)
            fprintf(out, ",%s", where[j] >= 0 && (size_t)where[j] < nf ? f[where[j]] : "");
        fputc('\n', out);
    }
}

/* Opens variant v's file `name` (replication 0's, in its directory, just
 * written: read with csvread as any file is) and reads its header into
 * hf; its prefix in the combined files. Returns the header's fields, or 0
 * with a message. */
#define MAX_VARIANT_FILE ((size_t)1 << 34)
static size_t variant_file(struct csv *c, char **hf, const char *name, const struct compare_spec *spec,
                           const struct variants *vs, size_t v, char *prefix, size_t psize, char *err,
                           size_t errsz)
{
    char vdir[8192], path[8300];
    variant_names(spec, vs, v, prefix, psize, vdir, sizeof vdir);
    snprintf(path, sizeof path, "%s/%s", vdir, name);
    bool more;
    if (csv_open(c, path, MAX_VARIANT_FILE, err, errsz) != 0)
        return 0;
    size_t n = csv_next(c, hf, MAX_FILE_COLS, &more);
    if (n == 0 || more) {
        snprintf(err, errsz, "%s: %s", path, n ? "more columns than a comparison combines" : "empty");
        csv_close(c);
        return 0;
    }
    return n;
}

/* Writes one combined file from replication 0 of the first nvar variants:
 * the union of their columns (their headers first), then every variant's
 * rows under it, behind the variant and key columns. */
static int combine_file(FILE *out, const char *name, const struct compare_spec *spec,
                        const struct variants *vs, size_t nvar, char *err, size_t errsz)
{
    static _Thread_local char *hf[MAX_FILE_COLS];
    struct union_cols u = {.n = 0};
    struct csv c;
    char prefix[8192];
    int rc = 0;
    for (size_t v = 0; v < nvar && rc == 0; v++) {
        size_t nh = variant_file(&c, hf, name, spec, vs, v, prefix, sizeof prefix, err, errsz);
        rc = nh == 0 ? -1 : union_add(&u, hf, nh, err, errsz);
        if (nh > 0)
            csv_close(&c);
    }
    if (rc == 0) {
        fprintf(out, "variant");
        for (size_t k = 0; k < spec->nvary; k++)
            fprintf(out, ",%s", vs->axes[k].key);
        for (size_t j = 0; j < u.n; j++)
            fprintf(out, ",%s", u.names[j]);
        fputc('\n', out);
    }
    for (size_t v = 0; v < nvar && rc == 0; v++) {
        size_t nh = variant_file(&c, hf, name, spec, vs, v, prefix, sizeof prefix, err, errsz);
        rc = nh == 0 ? -1 : 0;
        if (nh > 0) {
            append_mapped(out, &u, &c, hf, nh, prefix);
            csv_close(&c);
        }
    }
    for (size_t j = 0; j < u.n; j++)
        free(u.names[j]);
    return rc;
}

/* The combined timeseries.csv, latency.csv and attempts.csv of the
 * variants that ran. */
static int combine_variants(struct combined *c, const struct compare_spec *spec, const struct variants *vs,
                            size_t nvar, char *err, size_t errsz)
{
    static const size_t which[] = {C_TS, C_LAT, C_ATT};
    for (size_t i = 0; i < sizeof which / sizeof *which; i++)
        if (nvar > 0 && combine_file(c->f[which[i]].f, combined_names[which[i]], spec, vs, nvar, err, errsz) != 0)
            return -1;
    return 0;
}

/* Runs one replication of variant v: its summary row (every column of
 * cols) into row, and for replication 0 its own directory. Returns 0, 3
 * when stopped, or 1. Touches nothing shared: the replications of a
 * variant run in parallel. */
static int run_replication(const struct compare_spec *spec, const struct variants *vs, size_t v, unsigned r,
                           const char *vdir, const struct summary_cols *cols, double *row, char *why,
                           size_t whysz, char *err, size_t errsz)
{
    struct sim *s = trace_sim_create(&vs->scs[v], r, err, errsz);
    if (s != NULL)
        sim_set_stop(s, spec->stop);
    if (s == NULL || sim_run(s, NULL, NULL, err, errsz) != 0) {
        sim_destroy(s);
        return 1;
    }
    if (sim_limit(s) != NULL) { /* a variant that outgrew memory has no result */
        snprintf(err, errsz, "variant %zu, replication %u: the run was %s", v + 1, r, sim_limit(s));
        sim_destroy(s);
        return 1;
    }
    struct summary o;
    output_summarise(s, 0.0, &o);
    summary_row(cols, s, &o, row);
    if (r == 0)
        snprintf(why, whysz, "%s: %s", verdict_names[o.verdict], o.verdict_reason);
    int rc = r == 0 && output_write_dir(vdir, s, &o, err, errsz) != 0 ? 1 : 0;
    if (rc == 0 && !sim_complete(s))
        rc = 3;
    sim_destroy(s);
    return rc;
}

/* The replications of one variant, shared by the threads that run them:
 * each takes the next index; results go to slot r, read after the join. */
struct rep_jobs {
    const struct compare_spec *spec;
    const struct variants *vs;
    size_t v;
    const char *vdir;
    const struct summary_cols *cols;
    unsigned reps;
    atomic_uint next;
    double *rows; /* reps × cols->n */
    int *rc;
    char (*err)[512];
    char why[400]; /* replication 0's verdict and reason */
};

static void *rep_worker(void *arg)
{
    struct rep_jobs *j = arg;
    for (unsigned r; (r = atomic_fetch_add(&j->next, 1)) < j->reps;)
        j->rc[r] = run_replication(j->spec, j->vs, j->v, r, j->vdir, j->cols, &j->rows[r * j->cols->n], j->why,
                                   sizeof j->why, j->err[r], sizeof j->err[r]);
    return NULL;
}

/* Runs the replications of a variant on up to spec->threads threads (the
 * caller's among them). Results do not depend on the number of threads:
 * each replication has its own streams and its own slot. */
static void run_replications(struct rep_jobs *j, unsigned threads)
{
    pthread_t th[COMPARE_MAX_THREADS];
    unsigned n = threads < j->reps ? threads : j->reps, started = 0;
    for (; started + 1 < n; started++)
        if (pthread_create(&th[started], NULL, rep_worker, j) != 0)
            break; /* fewer threads: the others do the work */
    rep_worker(j);
    for (unsigned i = 0; i < started; i++)
        pthread_join(th[i], NULL);
}

/* Adds the replications that ran (rows[0..ran)) to replications.csv's
 * table, and their statistics to summary.csv's. */
static void add_rows(struct combined *c, const struct compare_spec *spec, const struct variants *vs,
                     size_t v, const double *rows, unsigned ran)
{
    const char *labels[2 + COMPARE_MAX_KEYS];
    char rep[16];
    double *m = malloc((1 + 3 * c->cols.n) * sizeof *m);
    if (m == NULL) { /* STYLE: out of memory aborts */
        fprintf(stderr, "retrystorm: out of memory for a variant's summary\n");
        abort();
    }
    labels[0] = vs->labels[v];
    for (size_t k = 0; k < spec->nvary; k++)
        labels[1 + k] = strchr(vs->sets[v][k], '=') + 1;
    labels[1 + spec->nvary] = rep;
    for (unsigned r = 0; r < ran; r++) {
        snprintf(rep, sizeof rep, "%u", r);
        for (size_t i = 0, k = 0; i < c->cols.n; i++)
            if (output_kind_is_metric(c->cols.c[i].kind))
                m[k++] = rows[r * c->cols.n + i];
        if (results_add(&c->reps, labels, m) != 0)
            goto oom;
    }
    stats_row(&c->cols, rows, ran, ran, m);
    if (results_add(&c->sum, labels, m) != 0)
        goto oom;
    free(m);
    return;
oom:
    fprintf(stderr, "retrystorm: out of memory for a variant's rows\n");
    abort();
}

/* Runs every replication of variant v and records its rows, in
 * replication order whatever the threads: as one thread would have, up to
 * the first stopped replication (complete = 0), none after it. Returns 0,
 * 3 when stopped, or 1. */
static int run_variant(struct combined *c, const struct compare_spec *spec, const struct variants *vs,
                       size_t v, double *rows, compare_report_fn report, void *user, char *err,
                       size_t errsz)
{
    char prefix[8192], vdir[8192];
    variant_names(spec, vs, v, prefix, sizeof prefix, vdir, sizeof vdir);
    unsigned reps = spec->reps ? spec->reps : 1, ran = 0;
    int rcs[COMPARE_MAX_REPS];
    char(*errs)[512] = calloc(reps, sizeof *errs);
    if (errs == NULL) {
        fprintf(stderr, "retrystorm: out of memory for %u replications\n", reps);
        abort();
    }
    struct rep_jobs j = {spec, vs, v, vdir, &c->cols, reps, 0, rows, rcs, errs, ""};
    run_replications(&j, spec->threads ? spec->threads : 1);
    int rc = 0;
    for (unsigned r = 0; r < reps && rc == 0; r++) {
        if (rcs[r] == 1) {
            snprintf(err, errsz, "%s", errs[r]);
            rc = 1;
            break;
        }
        ran++;
        rc = rcs[r];
    }
    free(errs);
    if (rc == 1)
        return 1;
    add_rows(c, spec, vs, v, rows, ran);
    if (report != NULL)
        report(user, vs->labels[v], j.why);
    return rc;
}

/* The base scenario, for titles and phases. */
static int write_base(const struct compare_spec *spec, const struct scenario *sc, char *err,
                      size_t errsz)
{
    struct output_file sf;
    if (output_file_open(&sf, spec->dir, "scenario.ini", err, errsz) != 0)
        return 1;
    scenario_write_ini(sc, sf.f);
    fprintf(sf.f, "; compared over:");
    for (size_t k = 0; k < spec->nvary; k++)
        fprintf(sf.f, " %s", spec->vary[k]);
    fprintf(sf.f, "\n");
    if (output_file_commit(&sf, err, errsz) != 0)
        return 1;
    if (spec->given == NULL || spec->given->n == 0)
        return 0;
    if (output_file_open(&sf, spec->dir, "labels.csv", err, errsz) != 0) /* what --label named them */
        return 1;
    labels_write(sf.f, spec->given);
    return output_file_commit(&sf, err, errsz) != 0 ? 1 : 0;
}

int compare_run(const struct compare_spec *spec, struct scenario_diag *diag, compare_report_fn report,
                void *user, struct results *summary, char *err, size_t errsz)
{
    static struct variants vs;
    static struct combined c;
    memset(&vs, 0, sizeof vs);
    memset(&c, 0, sizeof c);
    int rc = parse_axes(spec, &vs, err, errsz);
    if (rc == 0)
        rc = load_variants(spec, &vs, diag, err, errsz);
    if (rc == 0)
        rc = variant_columns(&vs, &c.cols, err, errsz);
    if (rc != 0 || spec->dir == NULL) {
        summary_cols_fini(&c.cols);
        variants_fini(&vs);
        return rc;
    }
    double *rows = calloc((spec->reps ? spec->reps : 1) * c.cols.n, sizeof *rows);
    if (rows == NULL || combined_tables(&c, spec, &vs) != 0) {
        snprintf(err, errsz, "out of memory for the comparison's tables");
        rc = 1;
    } else if (output_mkdir(spec->dir, err, errsz) != 0 || combined_open(&c, spec->dir, err, errsz) != 0) {
        rc = 1;
    }
    bool opened = rc == 0;
    size_t nvar = 0; /* variants with a directory of their own */
    for (size_t v = 0; v < vs.n && rc == 0; v++) {
        if (spec->stop && *spec->stop) {
            rc = 3;
        } else {
            rc = run_variant(&c, spec, &vs, v, rows, report, user, err, errsz);
            nvar += rc == 0 || rc == 3;
        }
    }
    if ((rc == 0 || rc == 3) && opened && combine_variants(&c, spec, &vs, nvar, err, errsz) != 0)
        rc = 1;
    if (opened && combined_close(&c, rc == 0 || rc == 3, err, errsz) != 0)
        rc = 1;
    if ((rc == 0 || rc == 3) && write_base(spec, &vs.scs[0], err, errsz) != 0)
        rc = 1;
    if (summary != NULL && (rc == 0 || rc == 3)) { /* the caller's now */
        *summary = c.sum;
        memset(&c.sum, 0, sizeof c.sum);
    }
    results_fini(&c.sum);
    results_fini(&c.reps);
    summary_cols_fini(&c.cols);
    free(rows);
    variants_fini(&vs);
    return rc;
}
