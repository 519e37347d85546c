/*
 * compare — variants of one scenario on the same seed. See compare.h.
 */
#define _POSIX_C_SOURCE 200809L

#include "compare.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <gsl/gsl_cdf.h>
#include <stdarg.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "experiment.h"
#include "metrics.h"
#include "output.h"
#include "sim.h"
#include "trace.h"

struct axis {
    char key[128];
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

/* The last component of a key: layer.app.backoff → backoff. */
static const char *short_key(const char *key)
{
    const char *dot = strrchr(key, '.');
    return dot ? dot + 1 : key;
}

/* Reads a whole file into a NUL-terminated buffer (caller frees). */
static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return NULL;
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap);
    size_t r;
    while (buf && (r = fread(buf + n, 1, cap - n - 1, f)) > 0) {
        n += r;
        if (n + 1 == cap) {
            char *nb = realloc(buf, cap * 2);
            if (nb == NULL) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = nb;
            cap *= 2;
        }
    }
    fclose(f);
    if (buf)
        buf[n] = '\0';
    return buf;
}

/* Splits a CSV line (no quoting in our files) into fields in place. */
static size_t split(char *line, char **fields, size_t max)
{
    size_t n = 0;
    for (char *tok = line, *next; tok != NULL && n < max; tok = next) {
        next = strchr(tok, ',');
        if (next)
            *next++ = '\0';
        fields[n++] = tok;
    }
    return n;
}

#define MAX_COLS 256

/* The columns of summary.csv that also get a 95 % half-width (NAME_hw, at
 * the end of each row) over the replications that have a value. */
static const char *const hw_names[] = {"ok_share", "amplification", "attempts_mean", "lat_p99",
                                       "recovery_s", "goodput", "peak_rate_1s",
                                       "server_arrivals", "lat_max"};
#define NHW (sizeof hw_names / sizeof *hw_names)

/* The column of a replication's row holding the peak of the server's
 * arrival rate averaged over PEAK_WINDOW_S (a rolling window of whole
 * buckets), appended after the run's own summary columns. */
#define PEAK_COLUMN "peak_rate_1s"
#define PEAK_WINDOW_S 1.0

/* The numeric values of column c over the rows (those with a value) into
 * x; false when one is not a number. */
static bool column_numbers(char *fields[][MAX_COLS], size_t nrows, size_t c, double *x, size_t *n)
{
    *n = 0;
    for (size_t r = 0; r < nrows; r++) {
        char *end;
        if (fields[r][c][0] == '\0')
            continue;
        double v = strtod(fields[r][c], &end);
        if (*end != '\0' || !isfinite(v))
            return false;
        x[(*n)++] = v;
    }
    return true;
}

/* The half-width of the 95 % interval of the mean of x (Student's t);
 * NAN below 2 values. */
static double half_width(const double *x, size_t n)
{
    if (n < 2)
        return NAN;
    double mean = 0, ss = 0;
    for (size_t i = 0; i < n; i++)
        mean += x[i] / (double)n;
    for (size_t i = 0; i < n; i++)
        ss += (x[i] - mean) * (x[i] - mean);
    return gsl_cdf_tdist_Pinv(0.975, (double)(n - 1)) * sqrt(ss / (double)(n - 1)) / sqrt((double)n);
}

/* The mean over rows of each column that parses as a number in every row
 * that has a value (empty when none has); the first row's text otherwise;
 * then the half-width of each column hw[k] (empty below 2 values). */
static void write_means(FILE *f, char rows[][8192], size_t nrows, const size_t *hw)
{
    char *fields[64][MAX_COLS];
    double x[64];
    size_t ncol = 0, n;
    for (size_t r = 0; r < nrows; r++)
        ncol = split(rows[r], fields[r], MAX_COLS);
    for (size_t c = 0; c < ncol; c++) {
        double sum = 0;
        bool numeric = column_numbers(fields, nrows, c, x, &n);
        for (size_t i = 0; i < n; i++)
            sum += x[i];
        fputc(',', f);
        if (!numeric)
            fputs(fields[0][c], f);
        else if (n > 0)
            fprintf(f, "%.9g", sum / (double)n);
    }
    for (size_t k = 0; k < NHW; k++) {
        double h = hw[k] < ncol && column_numbers(fields, nrows, hw[k], x, &n) ? half_width(x, n) : NAN;
        fputc(',', f);
        if (!isnan(h))
            fprintf(f, "%.9g", h);
    }
    fputc('\n', f);
}

/* The peak of the server's arrivals per second averaged over the last
 * PEAK_WINDOW_S of whole buckets (at least one): with a herd at 10 ms
 * buckets, what the figure's rolling mean shows, not the one bucket that
 * every variant shares. O(buckets). */
static double peak_rate_window(const struct metrics *m)
{
    double best = -1, sum = 0, len = 0;
    size_t from = 0;
    for (size_t i = 0; i < m->nbuckets; i++) {
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

/* Reports the means over the replications of a few columns. */
static void report_means(compare_report_fn report, void *user, const char *label,
                         const char *header, char rows[][8192], unsigned reps)
{
    static const char *const want[] = {"requests", "ok_share", "amplification", "lat_p50",
                                       "lat_p99", PEAK_COLUMN, "duplicates", "recovered",
                                       "recovery_s"};
    enum { NW = sizeof want / sizeof want[0] };
    char hdr[8192], tmp[8192], *hf[MAX_COLS], *rf[MAX_COLS];
    double means[NW];
    snprintf(hdr, sizeof hdr, "%s", header);
    size_t nh = split(hdr, hf, MAX_COLS);
    for (size_t w = 0; w < NW; w++) {
        double sum = 0;
        size_t cnt = 0;
        for (size_t col = 0; col < nh; col++) {
            if (strcmp(hf[col], want[w]) != 0)
                continue;
            for (unsigned r = 0; r < reps; r++) {
                memcpy(tmp, rows[r], sizeof tmp);
                size_t nr = split(tmp, rf, MAX_COLS);
                if (col < nr && rf[col][0]) {
                    sum += strtod(rf[col], NULL);
                    cnt++;
                }
            }
        }
        means[w] = cnt ? sum / (double)cnt : NAN;
    }
    report(user, label, want, means, NW);
}

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
        appendf(label, LABEL_MAX + 1, &used, "%s%s=%s", k ? "+" : "", short_key(a->key), value);
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

/* Loads every variant's scenario; problems go to diag, each saying which
 * variant. Returns 0, 2 (bad input) or 1 (out of memory). */
static int load_variants(const struct compare_spec *spec, struct variants *vs,
                         struct scenario_diag *diag, char *err, size_t errsz)
{
    vs->scs = calloc(vs->n, sizeof *vs->scs);
    vs->labels = calloc(vs->n, sizeof *vs->labels);
    vs->sets = calloc(vs->n, sizeof *vs->sets);
    if (!vs->scs || !vs->labels || !vs->sets) {
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
    return rc;
}

/* The comparison's combined files: summary.csv, timeseries.csv,
 * replications.csv, and each variant's latency.csv and attempts.csv (its
 * replication 0) behind its variant and key columns, under the union of
 * the variants' columns (written once every variant has run). */
enum { C_SUM, C_TS, C_REPS, C_LAT, C_ATT, C_FILES };
static const char *const combined_names[C_FILES] = {"summary.csv", "timeseries.csv", "replications.csv",
                                                    "latency.csv", "attempts.csv"};
struct combined {
    struct output_file f[C_FILES];
    char header[8192]; /* a replication's row's header: the run's summary, then PEAK_COLUMN */
    size_t hw[NHW];    /* where hw_names are in it (MAX_COLS: absent) */
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
    for (size_t i = 0; i < C_FILES && commit && rc == 0; i++)
        rc = output_file_commit(&c->f[i], err, errsz) != 0 ? -1 : 0;
    for (size_t i = 0; i < C_FILES; i++)
        output_file_discard(&c->f[i]);
    return rc;
}

/* Where each of hw_names is in c->header. */
static void find_hw(struct combined *c)
{
    char hdr[8192], *hf[MAX_COLS];
    snprintf(hdr, sizeof hdr, "%s", c->header);
    size_t nh = split(hdr, hf, MAX_COLS);
    for (size_t k = 0; k < NHW; k++) {
        c->hw[k] = MAX_COLS;
        for (size_t i = 0; i < nh; i++)
            if (strcmp(hf[i], hw_names[k]) == 0)
                c->hw[k] = i;
    }
}

/* The header lines of summary.csv and replications.csv, once. */
static void combined_headers(struct combined *c, const struct compare_spec *spec,
                             const struct variants *vs)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *mf = open_memstream(&buf, &len);
    if (mf == NULL)
        return;
    output_write_summary_header(mf);
    fclose(mf);
    buf[strcspn(buf, "\n")] = '\0';
    snprintf(c->header, sizeof c->header, "%s,%s", buf, PEAK_COLUMN);
    find_hw(c);
    fprintf(c->f[C_SUM].f, "variant");
    fprintf(c->f[C_REPS].f, "variant");
    for (size_t k = 0; k < spec->nvary; k++) {
        fprintf(c->f[C_SUM].f, ",%s", vs->axes[k].key);
        fprintf(c->f[C_REPS].f, ",%s", vs->axes[k].key);
    }
    fprintf(c->f[C_SUM].f, ",%s", c->header);
    for (size_t k = 0; k < NHW; k++)
        fprintf(c->f[C_SUM].f, ",%s_hw", hw_names[k]);
    fprintf(c->f[C_SUM].f, "\n");
    fprintf(c->f[C_REPS].f, ",replication,%s\n", c->header);
    free(buf);
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

static int union_add(struct union_cols *u, const char *header, char *err, size_t errsz)
{
    char *copy = strdup(header), *f[MAX_FILE_COLS];
    if (copy == NULL)
        return snprintf(err, errsz, "out of memory for a header"), -1;
    size_t nf = split(copy, f, MAX_FILE_COLS);
    for (size_t i = 0; i < nf; i++) {
        size_t j = 0;
        while (j < u->n && strcmp(u->names[j], f[i]) != 0)
            j++;
        if (j < u->n)
            continue;
        if (u->n == MAX_FILE_COLS || (u->names[u->n] = strdup(f[i])) == NULL) {
            free(copy);
            return snprintf(err, errsz, "more than %d columns over the variants' files", MAX_FILE_COLS), -1;
        }
        u->n++;
    }
    free(copy);
    return 0;
}

/* Appends one variant's file to out, each row prefixed and its cells put
 * under the union's columns (empty where the variant has no such column). */
static void append_mapped(FILE *out, const struct union_cols *u, char *text, const char *prefix)
{
    char *next = strchr(text, '\n'), *f[MAX_FILE_COLS];
    if (next == NULL)
        return;
    *next++ = '\0';
    size_t nh = split(text, f, MAX_FILE_COLS);
    int where[MAX_FILE_COLS]; /* union column -> the variant's column, or -1 */
    for (size_t j = 0; j < u->n; j++) {
        where[j] = -1;
        for (size_t i = 0; i < nh; i++)
            if (strcmp(u->names[j], f[i]) == 0)
                where[j] = (int)i;
    }
    for (char *line = next; line != NULL && *line != '\0'; line = next) {
        next = strchr(line, '\n');
        if (next)
            *next++ = '\0';
        size_t nf = split(line, f, MAX_FILE_COLS);
        fputs(prefix, out);
        for (size_t j = 0; j < u->n; j++)
            fprintf(out, ",%s", where[j] >= 0 && (size_t)where[j] < nf ? f[where[j]] : "");
        fputc('\n', out);
    }
}

/* Variant v's file `name` (replication 0's, in its directory), read whole,
 * and its prefix in the combined files; NULL with a message. */
static char *variant_file(const char *name, const struct compare_spec *spec, const struct variants *vs, size_t v,
                          char *prefix, size_t psize, char *err, size_t errsz)
{
    char vdir[8192], path[8300];
    variant_names(spec, vs, v, prefix, psize, vdir, sizeof vdir);
    snprintf(path, sizeof path, "%s/%s", vdir, name);
    char *text = slurp(path);
    if (text == NULL)
        snprintf(err, errsz, "cannot read %s: %s", path, strerror(errno));
    return text;
}

/* Writes one combined file from replication 0 of the first nvar variants:
 * the union of their columns (their headers first), then every variant's
 * rows under it, behind the variant and key columns. */
static int combine_file(FILE *out, const char *name, const struct compare_spec *spec,
                        const struct variants *vs, size_t nvar, char *err, size_t errsz)
{
    struct union_cols u = {.n = 0};
    char prefix[8192], *text;
    int rc = 0;
    for (size_t v = 0; v < nvar && rc == 0; v++) {
        rc = (text = variant_file(name, spec, vs, v, prefix, sizeof prefix, err, errsz)) == NULL ? -1 : 0;
        if (text != NULL) {
            text[strcspn(text, "\n")] = '\0';
            rc = union_add(&u, text, err, errsz);
        }
        free(text);
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
        rc = (text = variant_file(name, spec, vs, v, prefix, sizeof prefix, err, errsz)) == NULL ? -1 : 0;
        if (text != NULL)
            append_mapped(out, &u, text, prefix);
        free(text);
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

/* Runs one replication of variant v: its summary row into row, its line
 * of replications.csv into *line (malloc'd), and for replication 0 its own
 * directory. Returns 0, 3 when stopped, or 1. Touches nothing shared: the
 * replications of a variant run in parallel. */
static int run_replication(const struct compare_spec *spec, const struct variants *vs, size_t v, unsigned r,
                           const char *vdir, const char *prefix, char *row, size_t rowsz, char **line,
                           char *err, size_t errsz)
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
    char *buf = output_summary_row(s, &o);
    if (buf == NULL) {
        fprintf(stderr, "retrystorm: out of memory for a summary row\n");
        abort();
    }
    double peak = peak_rate_window(sim_metrics(s));
    size_t n = strlen(prefix) + strlen(buf) + 64;
    if ((*line = malloc(n)) == NULL) {
        fprintf(stderr, "retrystorm: out of memory for a summary row (%zu bytes)\n", n);
        abort();
    }
    snprintf(*line, n, "%s,%u,%s,%.9g\n", prefix, r, buf, peak);
    snprintf(row, rowsz, "%s,%.9g", buf, peak);
    free(buf);
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
    const char *vdir, *prefix;
    unsigned reps;
    atomic_uint next;
    char (*rows)[8192];
    char **lines;
    int *rc;
    char (*err)[512];
};

static void *rep_worker(void *arg)
{
    struct rep_jobs *j = arg;
    for (unsigned r; (r = atomic_fetch_add(&j->next, 1)) < j->reps;)
        j->rc[r] = run_replication(j->spec, j->vs, j->v, r, j->vdir, j->prefix, j->rows[r], sizeof j->rows[r],
                                   &j->lines[r], j->err[r], sizeof j->err[r]);
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

/* Runs every replication of variant v and writes its rows, in replication
 * order whatever the threads: as one thread would have, up to the first
 * stopped replication (complete = 0), none after it. Returns 0, 3 when
 * stopped, or 1. */
static int run_variant(struct combined *c, const struct compare_spec *spec, const struct variants *vs,
                       size_t v, char rows[][8192], compare_report_fn report, void *user, char *err,
                       size_t errsz)
{
    char prefix[8192], vdir[8192];
    variant_names(spec, vs, v, prefix, sizeof prefix, vdir, sizeof vdir);
    unsigned reps = spec->reps ? spec->reps : 1, ran = 0;
    char *lines[COMPARE_MAX_REPS] = {0};
    int rcs[COMPARE_MAX_REPS];
    char(*errs)[512] = calloc(reps, sizeof *errs);
    if (errs == NULL) {
        fprintf(stderr, "retrystorm: out of memory for %u replications\n", reps);
        abort();
    }
    struct rep_jobs j = {spec, vs, v, vdir, prefix, reps, 0, rows, lines, rcs, errs};
    run_replications(&j, spec->threads ? spec->threads : 1);
    int rc = 0;
    for (unsigned r = 0; r < reps && rc == 0; r++) {
        if (rcs[r] == 1) {
            snprintf(err, errsz, "%s", errs[r]);
            rc = 1;
            break;
        }
        fputs(lines[r], c->f[C_REPS].f);
        ran++;
        rc = rcs[r];
    }
    for (unsigned r = 0; r < reps; r++)
        free(lines[r]);
    free(errs);
    if (rc == 1)
        return 1;
    /* the report reads copies of the rows; write_means then splits them in place */
    if (report != NULL)
        report_means(report, user, vs->labels[v], c->header, rows, ran);
    fputs(prefix, c->f[C_SUM].f);
    write_means(c->f[C_SUM].f, rows, ran, c->hw);
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
    return output_file_commit(&sf, err, errsz) != 0 ? 1 : 0;
}

int compare_run(const struct compare_spec *spec, struct scenario_diag *diag, compare_report_fn report,
                void *user, char *err, size_t errsz)
{
    static struct variants vs;
    static struct combined c;
    memset(&vs, 0, sizeof vs);
    int rc = parse_axes(spec, &vs, err, errsz);
    if (rc == 0)
        rc = load_variants(spec, &vs, diag, err, errsz);
    if (rc != 0 || spec->dir == NULL) {
        variants_fini(&vs);
        return rc;
    }
    char (*rows)[8192] = calloc(spec->reps ? spec->reps : 1, sizeof *rows);
    if (rows == NULL || output_mkdir(spec->dir, err, errsz) != 0 || combined_open(&c, spec->dir, err, errsz) != 0)
        rc = 1;
    else
        combined_headers(&c, spec, &vs);
    size_t nvar = 0; /* variants with a directory of their own */
    for (size_t v = 0; v < vs.n && rc == 0; v++) {
        if (spec->stop && *spec->stop) {
            rc = 3;
        } else {
            rc = run_variant(&c, spec, &vs, v, rows, report, user, err, errsz);
            nvar += rc == 0 || rc == 3;
        }
    }
    if ((rc == 0 || rc == 3) && rows != NULL && combine_variants(&c, spec, &vs, nvar, err, errsz) != 0)
        rc = 1;
    if (rows != NULL && combined_close(&c, rc == 0 || rc == 3, err, errsz) != 0)
        rc = 1;
    if ((rc == 0 || rc == 3) && write_base(spec, &vs.scs[0], err, errsz) != 0)
        rc = 1;
    free(rows);
    variants_fini(&vs);
    return rc;
}
