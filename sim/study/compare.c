/*
 * compare — variants of one scenario on the same seed. See compare.h.
 */
#define _POSIX_C_SOURCE 200809L

#include "compare.h"

#include <errno.h>
#include <stdarg.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "output.h"
#include "sim.h"

struct axis {
    char key[128];
    char *values[COMPARE_MAX_VARIANTS];
    size_t n;
    char buf[8192];
};

/* Splits "KEY=V1,V2" into an axis; false when it is not one. */
static bool parse_axis(const char *text, struct axis *a)
{
    const char *eq = strchr(text, '=');
    if (eq == NULL || eq == text || eq[1] == '\0' || (size_t)(eq - text) >= sizeof a->key ||
        strlen(eq + 1) >= sizeof a->buf)
        return false;
    memcpy(a->key, text, (size_t)(eq - text));
    a->key[eq - text] = '\0';
    strcpy(a->buf, eq + 1);
    a->n = 0;
    for (char *tok = a->buf, *next; tok != NULL; tok = next) {
        next = strchr(tok, ',');
        if (next)
            *next++ = '\0';
        if (*tok == '\0' || a->n == COMPARE_MAX_VARIANTS || strlen(tok) > 380)
            return false;
        a->values[a->n++] = tok;
    }
    return a->n > 0;
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

/* The mean over rows of each column that parses as a number in every row
 * that has a value; the first row's text otherwise. */
static void write_means(FILE *f, char rows[][8192], size_t nrows)
{
    char *fields[64][MAX_COLS];
    size_t ncol = 0;
    for (size_t r = 0; r < nrows; r++)
        ncol = split(rows[r], fields[r], MAX_COLS);
    for (size_t c = 0; c < ncol; c++) {
        double sum = 0;
        size_t n = 0;
        bool numeric = true;
        for (size_t r = 0; r < nrows && numeric; r++) {
            char *end;
            if (fields[r][c][0] == '\0')
                continue;
            double v = strtod(fields[r][c], &end);
            if (*end != '\0' || !isfinite(v))
                numeric = false;
            else
                sum += v, n++;
        }
        fputc(',', f);
        if (!numeric)
            fputs(fields[0][c], f);
        else if (n > 0)
            fprintf(f, "%.9g", sum / (double)n);
    }
    fputc('\n', f);
}

/* Reports the means over the replications of a few columns. */
static void report_means(compare_report_fn report, void *user, const char *label,
                         const char *header, char rows[][8192], unsigned reps)
{
    static const char *const want[] = {"requests", "ok_share", "amplification", "lat_p50",
                                       "lat_p99", "peak_server_rate", "duplicates", "recovered",
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
        if (!parse_axis(spec->vary[k], a)) {
            snprintf(err, errsz, "--vary %.200s: expected KEY=V1,V2,... with a key of at most 127 bytes and values of at most 380 (for example --vary layer.app.backoff=none,full)",
                     spec->vary[k]);
            return 2;
        }
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
    if (spec->reps > 64) {
        snprintf(err, errsz, "compare averages at most 64 replications (--reps %u)", spec->reps);
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

/* The comparison's three combined files. */
struct combined {
    struct output_file sum, ts, reps;
    char header[8192]; /* summary.csv's header line, as the runs write it */
};

static int combined_open(struct combined *c, const char *dir, char *err, size_t errsz)
{
    c->sum.f = c->ts.f = c->reps.f = NULL;
    c->sum.dirfd = c->ts.dirfd = c->reps.dirfd = -1;
    c->sum.tmp[0] = c->ts.tmp[0] = c->reps.tmp[0] = '\0';
    return output_file_open(&c->sum, dir, "summary.csv", err, errsz) != 0 ||
                   output_file_open(&c->ts, dir, "timeseries.csv", err, errsz) != 0 ||
                   output_file_open(&c->reps, dir, "replications.csv", err, errsz) != 0
               ? -1
               : 0;
}

static int combined_close(struct combined *c, bool commit, char *err, size_t errsz)
{
    int rc = 0;
    if (commit && (output_file_commit(&c->sum, err, errsz) != 0 ||
                   output_file_commit(&c->ts, err, errsz) != 0 ||
                   output_file_commit(&c->reps, err, errsz) != 0))
        rc = -1;
    output_file_discard(&c->sum);
    output_file_discard(&c->ts);
    output_file_discard(&c->reps);
    return rc;
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
    snprintf(c->header, sizeof c->header, "%s", buf);
    fprintf(c->sum.f, "variant");
    fprintf(c->reps.f, "variant");
    for (size_t k = 0; k < spec->nvary; k++) {
        fprintf(c->sum.f, ",%s", vs->axes[k].key);
        fprintf(c->reps.f, ",%s", vs->axes[k].key);
    }
    fprintf(c->sum.f, ",%s\n", buf);
    fprintf(c->reps.f, ",replication,%s\n", buf);
    free(buf);
}

/* Appends replication 0's time series of a variant (at vdir), each line
 * prefixed; the header once (v == 0). */
static int append_timeseries(struct combined *c, const struct compare_spec *spec,
                             const struct variants *vs, size_t v, const char *vdir,
                             const char *prefix, char *err, size_t errsz)
{
    char path[8300];
    snprintf(path, sizeof path, "%s/timeseries.csv", vdir);
    char *text = slurp(path);
    if (text == NULL) {
        snprintf(err, errsz, "cannot read %s: %s", path, strerror(errno));
        return -1;
    }
    bool first = true;
    for (char *line = text, *next; line && *line; line = next) {
        next = strchr(line, '\n');
        if (next)
            *next++ = '\0';
        if (!first)
            fprintf(c->ts.f, "%s,%s\n", prefix, line);
        else if (v == 0) {
            fprintf(c->ts.f, "variant");
            for (size_t k = 0; k < spec->nvary; k++)
                fprintf(c->ts.f, ",%s", vs->axes[k].key);
            fprintf(c->ts.f, ",%s\n", line);
        }
        first = false;
    }
    free(text);
    return 0;
}

/* Runs one replication of variant v: its summary row into row (and
 * replications.csv), and for replication 0 its own directory. Returns 0,
 * 3 when stopped, or 1. */
static int run_replication(struct combined *c, const struct compare_spec *spec,
                           const struct variants *vs, size_t v, unsigned r, const char *vdir,
                           const char *prefix, char *row, size_t rowsz, char *err, size_t errsz)
{
    struct sim *s = sim_create(&vs->scs[v], r, err, errsz);
    if (s != NULL)
        sim_set_stop(s, spec->stop);
    if (s == NULL || sim_run(s, NULL, NULL, err, errsz) != 0) {
        sim_destroy(s);
        return 1;
    }
    struct summary o;
    output_summarise(s, 0.0, &o);
    char *buf = NULL;
    size_t len = 0;
    FILE *mf = open_memstream(&buf, &len);
    output_write_summary_csv(mf, s, &o, 0);
    fclose(mf);
    buf[strcspn(buf, "\n")] = '\0';
    fprintf(c->reps.f, "%s,%u,%s\n", prefix, r, buf);
    snprintf(row, rowsz, "%s", buf);
    free(buf);
    int rc = r == 0 && output_write_dir(vdir, s, &o, err, errsz) != 0 ? 1 : 0;
    if (rc == 0 && !sim_complete(s))
        rc = 3;
    sim_destroy(s);
    return rc;
}

/* Runs every replication of variant v and writes its rows. Returns 0, 3
 * when stopped (its rows written, the stopped one with complete = 0), or 1. */
static int run_variant(struct combined *c, const struct compare_spec *spec, const struct variants *vs,
                       size_t v, char rows[][8192], compare_report_fn report, void *user, char *err,
                       size_t errsz)
{
    char prefix[8192], vdir[8192];
    size_t used = 0;
    appendf(prefix, sizeof prefix, &used, "%s", vs->labels[v]);
    for (size_t k = 0; k < spec->nvary; k++)
        appendf(prefix, sizeof prefix, &used, ",%s", strchr(vs->sets[v][k], '=') + 1);
    snprintf(vdir, sizeof vdir, "%s/%s", spec->dir, vs->labels[v]);
    unsigned reps = spec->reps ? spec->reps : 1, ran = 0;
    int rc = 0;
    while (ran < reps && rc == 0) {
        rc = run_replication(c, spec, vs, v, ran, vdir, prefix, rows[ran], sizeof rows[ran], err, errsz);
        ran += rc != 1;
    }
    if (rc == 1)
        return 1;
    /* the report reads copies of the rows; write_means then splits them in place */
    if (report != NULL)
        report_means(report, user, vs->labels[v], c->header, rows, ran);
    fputs(prefix, c->sum.f);
    write_means(c->sum.f, rows, ran);
    if (append_timeseries(c, spec, vs, v, vdir, prefix, err, errsz) != 0)
        return 1;
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
    for (size_t v = 0; v < vs.n && rc == 0; v++) {
        if (spec->stop && *spec->stop)
            rc = 3;
        else
            rc = run_variant(&c, spec, &vs, v, rows, report, user, err, errsz);
    }
    if (rows != NULL && combined_close(&c, rc == 0 || rc == 3, err, errsz) != 0)
        rc = 1;
    if ((rc == 0 || rc == 3) && write_base(spec, &vs.scs[0], err, errsz) != 0)
        rc = 1;
    free(rows);
    variants_fini(&vs);
    return rc;
}
