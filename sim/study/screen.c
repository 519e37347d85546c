/*
 * screen — the compact tables printed on screen. See screen.h.
 */
#define _POSIX_C_SOURCE 200809L

#include "screen.h"

#include "units.h"

#include "output.h" /* OUTPUT_IN_FLIGHT_NOTE */
#include "summary.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define NSHOWN 10 /* the columns below, and the sort metric when it is none of them */
#define CELL 56 /* two numbers of up to 23 characters and " ± " */

/* The columns shown, each in the one unit of its kind (unit_of; counts and
 * rates whole): the 1 s peak rather than the busiest bucket's, which with
 * a herd at fine buckets is the one bucket every variant shares. */
static const struct shown {
    const char *metric, *head;
} shown[] = {
    {"requests", "requests"},
    {"ok_share", "ok %"},
    {"in_flight_share", "in flight %"},
    {"amplification", "amplif"},
    {"lat_p50", "p50 ms"},
    {"lat_p99", "p99 ms"},
    {"peak_rate_1s", "peak 1s /s"},
    {"duplicates", "duplicates"},
};
#define NFIXED (sizeof shown / sizeof shown[0])

int screen_parse_sort(const char *text, const struct summary_cols *cols, struct screen_sort *s, char *err,
                      size_t errsz)
{
    s->dir = -1;
    const char *m = text;
    if (strncmp(text, "max:", 4) == 0 || strncmp(text, "min:", 4) == 0) {
        s->dir = text[1] == 'a' ? 1 : -1;
        m = text + 4;
    }
    if (strlen(m) >= sizeof s->metric || m[0] == '\0') {
        snprintf(err, errsz, "--sort %.80s: expected max:METRIC, min:METRIC or METRIC (e.g. max:ok_share)", text);
        return 2;
    }
    snprintf(s->metric, sizeof s->metric, "%s", m);
    return cols == NULL || summary_check_metric(cols, m, "--sort", err, errsz) ? 0 : 2;
}

/* How a kind of column is shown: its unit, the scale from the column's
 * own unit, and its decimals (-1: 4 significant digits). Shares and flags
 * (a flag's mean is a share of replications) in %, latencies in ms. */
static const struct unit_desc {
    const char *unit;
    double scale;
    int decimals;
} kind_units[OUTPUT_NKINDS] = {
    [OUTPUT_TEXT] = {"", 1, -1},    [OUTPUT_SEED] = {"", 1, -1}, [OUTPUT_COUNT] = {"", 1, -1},
    [OUTPUT_SHARE] = {" %", 100, 2}, [OUTPUT_FLAG] = {" %", 100, 2}, [OUTPUT_SECONDS] = {" ms", 1e3, 1},
    [OUTPUT_REAL] = {"", 1, -1},    [OUTPUT_WALL] = {" s", 1, 3}, [OUTPUT_VERDICT] = {"", 1, -1},
};

/* The unit of a metric from its kind; durations (a name ending in _s,
 * recovery_s) in s, and the ratios of attempts with 3 decimals. */
static const char *unit_of(const char *m, enum output_kind kind, double *scale, int *decimals)
{
    size_t n = strlen(m);
    const struct unit_desc *u = &kind_units[kind];
    *scale = u->scale, *decimals = u->decimals;
    if (kind == OUTPUT_SECONDS && n > 2 && strcmp(m + n - 2, "_s") == 0)
        return *scale = 1, *decimals = 1, " s";
    if (strcmp(m, "amplification") == 0 || strcmp(m, "attempts_mean") == 0)
        return *decimals = 3, "";
    return u->unit;
}

void screen_format(char *out, size_t size, const char *metric, enum output_kind kind, double value, double hw)
{
    double scale;
    int d;
    const char *unit = unit_of(metric, kind, &scale, &d);
    char a[40] = "-", b[40] = "";
    if (!isnan(value) && d < 0)
        snprintf(a, sizeof a, "%.4g", value * scale);
    else if (!isnan(value))
        snprintf(a, sizeof a, "%.*f", d, value * scale);
    if (!isnan(hw) && !isnan(value) && d < 0)
        snprintf(b, sizeof b, " ± %.2g", hw * scale);
    else if (!isnan(hw) && !isnan(value))
        snprintf(b, sizeof b, " ± %.*f", d, hw * scale);
    snprintf(out, size, "%s%s%s", a, isnan(value) ? "" : unit, b);
}

/* A table's column: its index (or -1) and its half-width's, and how it
 * is shown (a fixed column's way, or the sort metric's unit_of). */
struct colref {
    int v, hw;
    const char *name;
    char head[80];
    double scale;
    int decimals; /* -1: 4 significant digits */
};

struct row {
    char label[160];
    double key;        /* the sort key's value as a number (units.h), NaN: none */
    const char *ktext; /* the sort key's value as written */
    double v[NSHOWN], hw[NSHOWN];
    double share[VERDICT_N], rec_s; /* each verdict's share of the replications; recovery_s */
    size_t seq;        /* its place in the table: ties keep it */
};

static int find(const struct results *t, const char *name)
{
    return (int)results_find(t, name);
}

static int find_hw(const struct results *t, const char *name)
{
    char hw[80];
    snprintf(hw, sizeof hw, "%s_hw", name);
    return find(t, hw);
}

static int find_label(const struct results *t, const char *name)
{
    for (size_t k = 0; k < t->nlabels; k++)
        if (strcmp(t->label_names[k], name) == 0)
            return (int)k;
    return -1;
}

static double number(const struct results *t, size_t i, int c)
{
    return c >= 0 ? t->v[i * t->ncols + (size_t)c] : NAN;
}

/* The columns shown from this table, the sort metric last if it is not
 * among them. Returns their number. */
static size_t pick_columns(const struct results *t, const struct screen_sort *sort, struct colref *cols)
{
    size_t k = 0;
    bool sorted_shown = sort->metric[0] == '\0';
    for (size_t i = 0; i < NFIXED; i++) {
        const char *name = shown[i].metric;
        if (find(t, name) < 0)
            continue;
        struct colref *c = &cols[k++];
        unit_of(name, t->cols[find(t, name)].kind, &c->scale, &c->decimals);
        c->decimals = c->decimals < 0 ? 0 : c->decimals; /* counts and rates: whole */
        c->v = find(t, name), c->hw = find_hw(t, name), c->name = name;
        snprintf(c->head, sizeof c->head, "%s", shown[i].head);
        sorted_shown = sorted_shown || strcmp(name, sort->metric) == 0;
    }
    if (!sorted_shown && find(t, sort->metric) >= 0) { /* in its kind's unit, named in the head */
        struct colref *c = &cols[k++];
        const char *unit = unit_of(sort->metric, t->cols[find(t, sort->metric)].kind, &c->scale, &c->decimals);
        c->v = find(t, sort->metric), c->hw = find_hw(t, sort->metric), c->name = sort->metric;
        snprintf(c->head, sizeof c->head, "%s%s", sort->metric, unit);
    }
    return k;
}

/* The label of row i: the variant (or the text --label gave it), the
 * grid values (KEY=VALUE with the key's label), or the given label. */
static void row_label(const struct screen_spec *sp, size_t i, char *out, size_t size)
{
    const struct results *t = sp->table;
    int variant = find_label(t, "variant"), point = find_label(t, "point");
    const char *const *f = (const char *const *)&t->labels[i * t->nlabels];
    if (variant >= 0) {
        const char *given = labels_find(sp->given, f[variant]);
        snprintf(out, size, "%s", given ? given : f[variant]);
        return;
    }
    if (point < 0 || (size_t)point + 1 >= t->nlabels) {
        snprintf(out, size, "%s", sp->label ? sp->label : "");
        return;
    }
    size_t used = 0;
    out[0] = '\0';
    for (size_t c = (size_t)point + 1; c < t->nlabels && used < size; c++) {
        const char *key = strrchr(t->label_names[c], '.');
        key = sp->keys ? sp->keys[c - (size_t)point - 1] : key ? key + 1 : t->label_names[c];
        int w = snprintf(out + used, size - used, "%s%s=%s", used ? " " : "", key, f[c]);
        used += w > 0 ? (size_t)w : 0;
    }
}

/* The label column of grid or varied key name (the key, or a dot-suffix
 * of it such as attempts for layer.app.attempts, naming one key only);
 * -1 when none or several. */
static int key_column(const struct results *t, const char *name)
{
    int found = -1;
    size_t n = strlen(name);
    for (size_t k = 0; k < t->nlabels; k++) {
        const char *c = t->label_names[k];
        size_t m = strlen(c);
        if (strchr(c, '.') == NULL || m < n || strcmp(c + m - n, name) != 0 || (m > n && c[m - n - 1] != '.'))
            continue;
        if (found >= 0)
            return -1;
        found = (int)k;
    }
    return found;
}

/* A key's value as a number: a duration in s, a rate per s, a size in
 * bytes or a plain number; unbounded and none as +infinity; NaN else. */
static double key_number(const char *text)
{
    rs_time d;
    double x;
    if (units_parse_duration(text, &d))
        return units_seconds(d);
    if (units_parse_rate(text, &x) || units_parse_real(text, &x) || units_parse_size(text, &x))
        return x;
    return strcmp(text, "unbounded") == 0 || strcmp(text, "none") == 0 ? INFINITY : NAN;
}

static _Thread_local const struct screen_sort *sort_by; /* qsort has no context argument */
static _Thread_local size_t sort_col;

/* Rows with a value first, by value in the sort's direction; ties as read. */
static int by_metric(const void *a, const void *b)
{
    const struct row *x = a, *y = b;
    double u = x->v[sort_col], w = y->v[sort_col];
    if (isnan(u) != isnan(w))
        return isnan(u) - isnan(w);
    if (!isnan(u) && u != w)
        return u < w ? sort_by->dir : -sort_by->dir;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Rows by a key's value in the sort's direction: numbers first (with
 * their units), then the others by text; ties as read. */
static int by_key(const void *a, const void *b)
{
    const struct row *x = a, *y = b;
    if (isnan(x->key) != isnan(y->key))
        return isnan(x->key) - isnan(y->key);
    int c = !isnan(x->key) ? (x->key > y->key) - (x->key < y->key) : strcmp(x->ktext, y->ktext);
    if (c != 0)
        return sort_by->dir > 0 ? -c : c;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* A number in its column's decimals (the sort metric's: 4 significant digits). */
static void format_value(char *out, size_t size, const struct colref *c, double x)
{
    if (c->decimals >= 0)
        snprintf(out, size, "%.*f", c->decimals, x);
    else
        snprintf(out, size, "%.4g", x);
}

/* One cell: the value (and ± half-width) in its column's unit. */
static void cell(const struct colref *c, double v, double hw, char *out)
{
    double scale = c->scale;
    char a[24], b[24];
    if (isnan(v)) {
        snprintf(out, CELL, "-");
        return;
    }
    format_value(a, sizeof a, c, v * scale);
    if (isnan(hw)) {
        snprintf(out, CELL, "%s", a);
        return;
    }
    format_value(b, sizeof b, c, hw * scale);
    snprintf(out, CELL, "%s ± %s", a, b);
}

/* The verdict: one name when every replication had it (recovered with
 * its time), else each verdict's share, the largest first. */
static void verdict_cell(const struct row *r, char *out)
{
    int order[VERDICT_N], n = 0;
    for (int k = 0; k < VERDICT_N; k++)
        if (r->share[k] > 0.0005)
            order[n++] = k;
    for (int i = 1; i < n; i++) /* a handful: insertion sort by share */
        for (int j = i; j > 0 && r->share[order[j]] > r->share[order[j - 1]]; j--) {
            int t = order[j];
            order[j] = order[j - 1], order[j - 1] = t;
        }
    if (n == 0) {
        snprintf(out, CELL, "-");
        return;
    }
    size_t used = 0;
    for (int i = 0; i < n && used < CELL; i++) {
        int k = order[i], w;
        if (n == 1)
            w = snprintf(out, CELL, "%s", verdict_names[k]);
        else
            w = snprintf(out + used, CELL - used, "%s%s %.0f %%", i ? ", " : "", verdict_names[k], 100 * r->share[k]);
        used += w > 0 ? (size_t)w : 0;
        if (k == VERDICT_RECOVERED && !isnan(r->rec_s) && used < CELL)
            used += (size_t)snprintf(out + used, CELL - used, " %.0f s", r->rec_s);
    }
}

/* The rows of the table: returns their number, or -1 with a message. */
static long read_rows(const struct results *t, const struct screen_spec *s, struct colref *cols, size_t *ncols,
                      struct row **rows, int *has_rec, char *err, size_t errsz)
{
    *ncols = pick_columns(t, &s->sort, cols);
    static const char *const flag[VERDICT_N] = {"stable", "overloaded", NULL, "metastable", "undetermined"};
    int fc[VERDICT_N], rec_s = find(t, "recovery_s");
    for (int k = 0; k < VERDICT_N; k++)
        fc[k] = flag[k] ? find(t, flag[k]) : -1;
    *has_rec = fc[VERDICT_METASTABLE] >= 0;
    *rows = calloc(t->nrows ? t->nrows : 1, sizeof **rows);
    if (*rows == NULL) {
        snprintf(err, errsz, "out of memory");
        return -1;
    }
    for (size_t i = 0; i < t->nrows; i++) {
        struct row *r = &(*rows)[i];
        r->seq = i;
        row_label(s, i, r->label, sizeof r->label);
        for (size_t c = 0; c < *ncols; c++)
            r->v[c] = number(t, i, cols[c].v), r->hw[c] = number(t, i, cols[c].hw);
        double rest = 1;
        for (int k = 0; k < VERDICT_N; k++)
            if (fc[k] >= 0 && !isnan(number(t, i, fc[k])))
                rest -= r->share[k] = number(t, i, fc[k]);
        r->share[VERDICT_RECOVERED] = *has_rec ? fmax(rest, 0) : 0; /* the verdicts' shares sum to 1 */
        r->rec_s = number(t, i, rec_s);
    }
    return (long)t->nrows;
}

/* The columns text takes on a terminal: its UTF-8 characters (± is two bytes). */
static int display_width(const char *text)
{
    int w = 0;
    for (const unsigned char *p = (const unsigned char *)text; *p; p++)
        w += (*p & 0xC0) != 0x80;
    return w;
}

/* text right-aligned in w columns, after two spaces. */
static void right(FILE *f, const char *text, int w)
{
    fprintf(f, "  %*s%s", w - display_width(text) > 0 ? w - display_width(text) : 0, "", text);
}

static void print_row(FILE *f, const struct row *r, const struct colref *cols, size_t ncols, int has_rec,
                      const int *w, int lw)
{
    char c[CELL];
    fprintf(f, "  %-*s", lw, r->label);
    for (size_t i = 0; i < ncols; i++) {
        cell(&cols[i], r->v[i], r->hw[i], c);
        right(f, c, w[i]);
    }
    if (has_rec) {
        verdict_cell(r, c);
        right(f, c, w[ncols]);
    }
    fputc('\n', f);
}

/* Column widths: the widest of the header and the cells printed. */
static int widths(const struct row *rows, size_t n, const size_t *idx, size_t nidx, const struct colref *cols,
                  size_t ncols, int has_rec, int *w)
{
    char c[CELL];
    int lw = 7;
    for (size_t i = 0; i < ncols; i++)
        w[i] = display_width(cols[i].head);
    w[ncols] = 9;
    for (size_t j = 0; j < nidx; j++) {
        const struct row *r = &rows[idx[j]];
        lw = display_width(r->label) > lw ? display_width(r->label) : lw;
        for (size_t i = 0; i < ncols; i++) {
            cell(&cols[i], r->v[i], r->hw[i], c);
            w[i] = display_width(c) > w[i] ? display_width(c) : w[i];
        }
        if (has_rec) {
            verdict_cell(r, c);
            w[ncols] = display_width(c) > w[ncols] ? display_width(c) : w[ncols];
        }
    }
    (void)n;
    return lw > 60 ? 60 : lw;
}

/* Under the table, when a row shown had more than OUTPUT_IN_FLIGHT_NOTE of
 * its requests in flight at the end: its shares depend on where its runs
 * stopped. */
static void in_flight_note(FILE *f, const struct row *rows, const size_t *idx, size_t nidx,
                           const struct colref *cols, size_t ncols)
{
    for (size_t c = 0; c < ncols; c++) {
        if (strcmp(cols[c].name, "in_flight_share") != 0)
            continue;
        size_t n = 0;
        for (size_t j = 0; j < nidx; j++)
            n += rows[idx[j]].v[c] > OUTPUT_IN_FLIGHT_NOTE; /* NaN: false */
        if (n > 0)
            fprintf(f, "  note: %zu row%s above %.0f %% in flight at the end: %s shares depend on where the runs "
                       "stopped; --set run.drain=true gives every request an outcome\n",
                    n, n == 1 ? "" : "s", 100 * OUTPUT_IN_FLIGHT_NOTE, n == 1 ? "its" : "their");
    }
}

int screen_print(FILE *f, const struct screen_spec *s, char *err, size_t errsz)
{
    struct colref cols[NSHOWN];
    struct row *rows = NULL;
    size_t ncols = 0;
    int has_rec = 0;
    long n = read_rows(s->table, s, cols, &ncols, &rows, &has_rec, err, errsz);
    if (n < 0) {
        free(rows);
        return -1;
    }
    bool sorted = false;
    for (size_t c = 0; c < ncols && s->sort.metric[0]; c++)
        if (strcmp(cols[c].name, s->sort.metric) == 0) {
            sort_by = &s->sort, sort_col = c, sorted = true;
            qsort(rows, (size_t)n, sizeof *rows, by_metric);
        }
    const struct results *t = s->table;
    int kc = s->sort.metric[0] && !sorted && find(t, s->sort.metric) < 0 ? key_column(t, s->sort.metric) : -1;
    for (long i = 0; kc >= 0 && i < n; i++) { /* a grid or varied key */
        rows[i].ktext = t->labels[rows[i].seq * t->nlabels + (size_t)kc];
        rows[i].key = key_number(rows[i].ktext);
    }
    if (kc >= 0) {
        sort_by = &s->sort;
        qsort(rows, (size_t)n, sizeof *rows, by_key);
    }
    /* the rows shown: all, or the first and last show/2 */
    size_t nn = (size_t)n, half = s->show / 2, nidx = 0;
    size_t *idx = malloc((nn ? nn : 1) * sizeof *idx);
    if (idx == NULL) {
        free(rows);
        snprintf(err, errsz, "out of memory");
        return -1;
    }
    bool cut = s->show > 0 && nn > s->show;
    for (size_t i = 0; i < nn; i++)
        if (!cut || i < half || i >= nn - half)
            idx[nidx++] = i;
    int w[NSHOWN + 1];
    int lw = widths(rows, nn, idx, nidx, cols, ncols, has_rec, w);
    fprintf(f, "  %-*s", lw, "");
    for (size_t i = 0; i < ncols; i++)
        right(f, cols[i].head, w[i]);
    if (has_rec)
        right(f, "verdict", w[ncols]);
    fputc('\n', f);
    for (size_t j = 0; j < nidx; j++) {
        if (cut && j == half)
            fprintf(f, "  ... %zu more (all in %s)\n", nn - 2 * half, s->file);
        print_row(f, &rows[idx[j]], cols, ncols, has_rec, w, lw);
    }
    in_flight_note(f, rows, idx, nidx, cols, ncols);
    free(idx);
    free(rows);
    return 0;
}
