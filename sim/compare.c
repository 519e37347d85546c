/*
 * compare — variants of one scenario on the same seed. See compare.h.
 */
#define _POSIX_C_SOURCE 200809L

#include "compare.h"

#include <errno.h>
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

/* Splits "KEY=V1,V2" into an axis; false with a message in diag. */
static bool parse_axis(const char *text, struct axis *a, struct scenario_diag *diag)
{
    const char *eq = strchr(text, '=');
    (void)diag;
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

/* Each variant's label names its directory: it must fit a file name and
 * differ from every other label (two values can map to one label). */
static int check_labels(char (*labels)[512], size_t n, char *err, size_t errsz)
{
    for (size_t v = 0; v < n; v++) {
        if (strlen(labels[v]) > 200) {
            snprintf(err, errsz, "variant %.60s...: its label is longer than 200 bytes, too long for a directory name",
                     labels[v]);
            return 2;
        }
        for (size_t u = 0; u < v; u++)
            if (strcmp(labels[u], labels[v]) == 0) {
                snprintf(err, errsz, "two variants have the same label %s: give values that differ in more than spaces, commas, slashes or quotes",
                         labels[v]);
                return 2;
            }
    }
    return 0;
}

int compare_run(const struct compare_spec *spec, struct scenario_diag *diag, compare_report_fn report,
                void *user, char *err, size_t errsz)
{
    static struct axis axes[COMPARE_MAX_KEYS];
    size_t nvariants = 1;
    if (spec->nvary == 0) {
        snprintf(err, errsz, "compare needs at least one --vary KEY=V1,V2,...");
        return 2;
    }
    for (size_t k = 0; k < spec->nvary; k++) {
        if (!parse_axis(spec->vary[k], &axes[k], diag)) {
            snprintf(err, errsz, "--vary %.200s: expected KEY=V1,V2,... with a key of at most 127 bytes and values of at most 380 (for example --vary layer.app.backoff=none,full)",
                     spec->vary[k]);
            return 2;
        }
        for (size_t j = 0; j < k; j++)
            if (strcmp(axes[j].key, axes[k].key) == 0) {
                snprintf(err, errsz, "--vary %s: the key %s is varied twice; give its values in one --vary",
                         spec->vary[k], axes[k].key);
                return 2;
            }
        nvariants *= axes[k].n;
        if (nvariants > COMPARE_MAX_VARIANTS) {
            snprintf(err, errsz, "too many variants (more than %d)", COMPARE_MAX_VARIANTS);
            return 2;
        }
    }
    unsigned reps = spec->reps ? spec->reps : 1;
    if (reps > 64) {
        snprintf(err, errsz, "compare averages at most 64 replications (--reps %u)", reps);
        return 2;
    }
    /* Check every variant's scenario before running any. */
    struct scenario *scs = calloc(nvariants, sizeof *scs);
    char (*labels)[512] = calloc(nvariants, sizeof *labels);
    char (*sets)[COMPARE_MAX_KEYS][512] = calloc(nvariants, sizeof *sets);
    char (*rows)[8192] = calloc(reps, sizeof *rows);
    if (!scs || !labels || !sets || !rows) {
        snprintf(err, errsz, "out of memory for %zu variants", nvariants);
        free(scs), free(labels), free(sets), free(rows);
        return 1;
    }
    int rc = 0;
    static char header[8192];
    for (size_t v = 0; v < nvariants; v++) {
        const char *all[MAX_COLS];
        size_t n = 0, rest = v, used = 0;
        for (size_t i = 0; i < spec->nsets && n < MAX_COLS - COMPARE_MAX_KEYS; i++)
            all[n++] = spec->sets[i];
        size_t stride = nvariants;
        for (size_t k = 0; k < spec->nvary; k++) {
            stride /= axes[k].n;
            size_t idx = rest / stride;
            rest %= stride;
            snprintf(sets[v][k], sizeof sets[v][k], "%.120s=%.380s", axes[k].key, axes[k].values[idx]);
            all[n++] = sets[v][k];
            int w = snprintf(labels[v] + used, sizeof labels[v] - used, "%s%s=%s", k ? "+" : "",
                             short_key(axes[k].key), axes[k].values[idx]);
            used += w > 0 ? (size_t)w : 0;
        }
        for (char *c = labels[v]; *c; c++)
            if (*c == ' ' || *c == ',' || *c == '/' || *c == '\'' || *c == '"')
                *c = '_';
        size_t before = diag->n;
        if (scenario_load(&scs[v], spec->scenario, all, n, diag) != 0) {
            for (size_t i = before; i < diag->n; i++) { /* say which variant */
                char *m = malloc(strlen(diag->msg[i]) + 600);
                if (m) {
                    sprintf(m, "variant %s: %s", labels[v], diag->msg[i]);
                    free(diag->msg[i]);
                    diag->msg[i] = m;
                }
            }
            rc = 2;
        }
    }
    if (rc == 0)
        rc = check_labels(labels, nvariants, err, errsz);
    if (rc != 0 || spec->dir == NULL)
        goto done;
    if (output_mkdir(spec->dir, err, errsz) != 0) {
        rc = 1;
        goto done;
    }
    struct output_file sum = {0}, ts = {0}, reps_f = {0};
    if (output_file_open(&sum, spec->dir, "summary.csv", err, errsz) != 0 ||
        output_file_open(&ts, spec->dir, "timeseries.csv", err, errsz) != 0 ||
        output_file_open(&reps_f, spec->dir, "replications.csv", err, errsz) != 0) {
        rc = 1;
        goto close;
    }
    bool stopped = false;
    for (size_t v = 0; v < nvariants && rc == 0 && !stopped && !(spec->stop && *spec->stop); v++) {
        char prefix[2048];
        size_t used = (size_t)snprintf(prefix, sizeof prefix, "%s", labels[v]);
        for (size_t k = 0; k < spec->nvary; k++)
            used += (size_t)snprintf(prefix + used, sizeof prefix - used, ",%s",
                                     strchr(sets[v][k], '=') + 1);
        char vdir[4096];
        snprintf(vdir, sizeof vdir, "%.3000s/%s", spec->dir, labels[v]);
        unsigned ran = 0;
        for (unsigned r = 0; r < reps && !stopped; r++, ran++) {
            struct sim *s = sim_create(&scs[v], r, err, errsz);
            if (s != NULL)
                sim_set_stop(s, spec->stop);
            if (s == NULL || sim_run(s, NULL, NULL, err, errsz) != 0) {
                sim_destroy(s);
                rc = 1;
                break;
            }
            stopped = !sim_complete(s);
            struct summary o;
            output_summarise(s, 0.0, &o);
            char *buf = NULL;
            size_t len = 0;
            FILE *mf = open_memstream(&buf, &len);
            output_write_summary_csv(mf, s, &o, v == 0 && r == 0);
            fclose(mf);
            char *row = buf;
            if (v == 0 && r == 0) { /* the header line, once, for every file */
                char *nl = strchr(buf, '\n');
                *nl = '\0';
                snprintf(header, sizeof header, "%s", buf);
                fprintf(sum.f, "variant");
                fprintf(reps_f.f, "variant");
                for (size_t k = 0; k < spec->nvary; k++) {
                    fprintf(sum.f, ",%s", axes[k].key);
                    fprintf(reps_f.f, ",%s", axes[k].key);
                }
                fprintf(sum.f, ",%s\n", buf);
                fprintf(reps_f.f, ",replication,%s\n", buf);
                row = nl + 1;
            }
            row[strcspn(row, "\n")] = '\0';
            fprintf(reps_f.f, "%s,%u,%s\n", prefix, r, row);
            snprintf(rows[r], sizeof rows[r], "%s", row);
            if (r == 0) {
                struct summary o0 = o;
                if (output_write_dir(vdir, s, &o0, err, errsz) != 0) {
                    free(buf);
                    sim_destroy(s);
                    rc = 1;
                    break;
                }
            }
            free(buf);
            sim_destroy(s);
        }
        if (rc != 0)
            break;
        /* the report reads copies of the rows; write_means then splits them in place */
        if (report != NULL)
            report_means(report, user, labels[v], header, rows, ran);
        fputs(prefix, sum.f);
        write_means(sum.f, rows, ran);
        /* replication 0's time series, prefixed */
        char path[8192];
        snprintf(path, sizeof path, "%s/timeseries.csv", vdir);
        char *text = slurp(path);
        if (text == NULL) {
            snprintf(err, errsz, "cannot read %s: %s", path, strerror(errno));
            rc = 1;
            break;
        }
        char *line = text, *next;
        bool first = true;
        for (; line && *line; line = next) {
            next = strchr(line, '\n');
            if (next)
                *next++ = '\0';
            if (first) {
                if (v == 0) {
                    fprintf(ts.f, "variant");
                    for (size_t k = 0; k < spec->nvary; k++)
                        fprintf(ts.f, ",%s", axes[k].key);
                    fprintf(ts.f, ",%s\n", line);
                }
                first = false;
                continue;
            }
            fprintf(ts.f, "%s,%s\n", prefix, line);
        }
        free(text);
    }
close:
    if (rc == 0 && (output_file_commit(&sum, err, errsz) != 0 ||
                    output_file_commit(&ts, err, errsz) != 0 ||
                    output_file_commit(&reps_f, err, errsz) != 0))
        rc = 1;
    if (rc != 0) {
        output_file_discard(&sum);
        output_file_discard(&ts);
        output_file_discard(&reps_f);
    }
    if (rc == 0) { /* the base scenario, for titles and phases */
        struct output_file sf;
        if (output_file_open(&sf, spec->dir, "scenario.ini", err, errsz) == 0) {
            scenario_write_ini(&scs[0], sf.f);
            fprintf(sf.f, "; compared over:");
            for (size_t k = 0; k < spec->nvary; k++)
                fprintf(sf.f, " %s", spec->vary[k]);
            fprintf(sf.f, "\n");
            if (output_file_commit(&sf, err, errsz) != 0)
                rc = 1;
        } else {
            rc = 1;
        }
    }
    if (rc == 0 && (stopped || (spec->stop && *spec->stop)))
        rc = 3;
done:
    free(scs);
    free(labels);
    free(sets);
    free(rows);
    return rc;
}
