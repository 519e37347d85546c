/*
 * plotdec — min/max decimation of a CSV for drawing. See plotdec.h.
 *
 * A row is cut into fields once; a series is found by its key (the key
 * fields joined by ','), first at the series after the last one found
 * (rows that cycle through the series), then by a scan. A run's state is
 * per column: its minimum and maximum as written, where in the run each
 * came first, and the sum for the mean. The second rows of finished runs
 * wait in `pending` until a row starts a new run.
 */
#define _POSIX_C_SOURCE 200809L

#include "plotdec.h"

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct acc {
    char lo[PLOTDEC_CELL + 1], hi[PLOTDEC_CELL + 1]; /* as written; "" before a value */
    double lo_v, hi_v, sum;
    size_t lo_at, hi_at, nval; /* where in the run lo and hi came first; values seen */
};

struct series {
    char *key;
    size_t n, k;   /* rows: counted (first pass), seen (second pass) */
    char *first;   /* the run's first row */
    char tlast[PLOTDEC_CELL + 1];
    struct acc *acc; /* a column each */
};

/* What a column is: a number to decimate, the time, or a key naming the series. */
enum { COL_NUMBER, COL_T, COL_KEY };

struct plotdec {
    size_t ncols, tcol, nmeans, g;
    char *header, *mean_names; /* the header; ",NAME_mean" for each of means */
    unsigned char *kind; /* a column each: COL_NUMBER, COL_T or COL_KEY */
    size_t *keys, nkeys, *means;
    const char **fs;     /* the current row's fields */
    size_t *fl;
    char *keybuf;
    struct series *s;
    size_t ns, last;
    char *pending;
    size_t npending;
    FILE *pend; /* open_memstream on pending */
};

static void *xcalloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size);
    if (p == NULL) {
        fprintf(stderr, "retrystorm: out of memory (decimating a CSV)\n");
        abort();
    }
    return p;
}

/* Cuts line into the d->ncols fields; false when it has another count. */
static bool cut(struct plotdec *d, const char *line, size_t *n)
{
    *n = 0;
    for (const char *f = line;; f++) {
        size_t len = strcspn(f, ",");
        if (*n < d->ncols)
            d->fs[*n] = f, d->fl[*n] = len;
        ++*n;
        f += len;
        if (*f == '\0')
            return *n == d->ncols;
    }
}

/* Where column name is in d->header's fields (cut into d->fs), or SIZE_MAX. */
static size_t column_of(const struct plotdec *d, const char *name)
{
    for (size_t i = 0; i < d->ncols; i++)
        if (d->fl[i] == strlen(name) && memcmp(d->fs[i], name, d->fl[i]) == 0)
            return i;
    return SIZE_MAX;
}

/* The columns of names (NULL-terminated) into *idx and *n, marked kind k;
 * a missing one is an error, but for the means (COL_NUMBER), which leave it out. */
static bool columns(struct plotdec *d, const char *const *names, size_t **idx, size_t *n, unsigned char k,
                    char *err, size_t errsz)
{
    size_t len = 0;
    while (names[len])
        len++;
    *idx = xcalloc(len, sizeof **idx);
    *n = 0;
    for (size_t i = 0; i < len; i++) {
        size_t at = column_of(d, names[i]);
        if (at == SIZE_MAX && k != COL_NUMBER) {
            snprintf(err, errsz, "no column %s", names[i]);
            return false;
        }
        if (at != SIZE_MAX)
            (*idx)[(*n)++] = at;
        if (at != SIZE_MAX && k != COL_NUMBER)
            d->kind[at] = k;
    }
    return true;
}

struct plotdec *plotdec_new(const char *header, const char *const *keys, const char *const *means,
                            char *err, size_t errsz)
{
    static const char *const t[] = {"t", NULL};
    struct plotdec *d = xcalloc(1, sizeof *d);
    size_t n, *tcol = NULL, nt;
    d->header = strdup(header);
    d->ncols = 1;
    for (const char *p = header; *p; p++)
        d->ncols += *p == ',';
    d->fs = xcalloc(d->ncols, sizeof *d->fs);
    d->fl = xcalloc(d->ncols, sizeof *d->fl);
    d->kind = xcalloc(d->ncols, 1);
    d->keybuf = xcalloc(strlen(header) + 1, 1);
    d->pend = open_memstream(&d->pending, &d->npending);
    if (d->header == NULL || d->pend == NULL)
        abort();
    cut(d, d->header, &n);
    bool ok = columns(d, t, &tcol, &nt, COL_T, err, errsz) && columns(d, keys, &d->keys, &d->nkeys, COL_KEY, err, errsz) &&
              columns(d, means, &d->means, &d->nmeans, COL_NUMBER, err, errsz);
    d->tcol = tcol ? tcol[0] : 0;
    free(tcol);
    /* the columns before t name the series too (a comparison's axes, whose
     * values need not be numbers) */
    size_t *keys_all = xcalloc(d->nkeys + d->tcol + 1, sizeof *keys_all), nk = d->nkeys;
    if (d->nkeys > 0)
        memcpy(keys_all, d->keys, d->nkeys * sizeof *keys_all);
    for (size_t i = 0; ok && i < d->tcol; i++)
        if (d->kind[i] == COL_NUMBER) {
            d->kind[i] = COL_KEY;
            keys_all[nk++] = i;
        }
    free(d->keys);
    d->keys = keys_all;
    d->nkeys = nk;
    d->mean_names = xcalloc(strlen(header) + 6 * d->nmeans + 1, 1);
    for (size_t i = 0, len = 0; ok && i < d->nmeans; i++)
        len += (size_t)sprintf(d->mean_names + len, ",%.*s_mean", (int)d->fl[d->means[i]], d->fs[d->means[i]]);
    if (!ok) {
        plotdec_free(d);
        return NULL;
    }
    return d;
}

void plotdec_free(struct plotdec *d)
{
    if (d == NULL)
        return;
    for (size_t i = 0; i < d->ns; i++)
        free(d->s[i].key), free(d->s[i].first), free(d->s[i].acc);
    fclose(d->pend);
    free(d->pending), free(d->s), free(d->header), free(d->mean_names), free(d->fs), free(d->fl), free(d->kind);
    free(d->keys), free(d->means), free(d->keybuf);
    free(d);
}

/* The current row's series (added when new, in the first pass only). */
static struct series *find(struct plotdec *d, bool add)
{
    size_t len = 0;
    for (size_t i = 0; i < d->nkeys; i++) {
        memcpy(d->keybuf + len, d->fs[d->keys[i]], d->fl[d->keys[i]]);
        len += d->fl[d->keys[i]];
        d->keybuf[len++] = ',';
    }
    d->keybuf[len] = '\0';
    for (size_t j = 0; j < d->ns; j++) {
        size_t i = (d->last + j) % d->ns; /* the last one found, then the one after it, ... */
        if (strcmp(d->s[i].key, d->keybuf) == 0)
            return &d->s[d->last = i];
    }
    if (!add)
        return NULL;
    struct series *grown = realloc(d->s, (d->ns + 1) * sizeof *grown);
    if (grown == NULL)
        abort();
    d->s = grown;
    d->s[d->ns] = (struct series){.key = strdup(d->keybuf), .acc = xcalloc(d->ncols, sizeof(struct acc))};
    d->last = d->ns;
    return &d->s[d->ns++];
}

static int row_columns(struct plotdec *d, const char *line, char *err, size_t errsz)
{
    size_t n;
    if (cut(d, line, &n))
        return 0;
    snprintf(err, errsz, "%zu columns, but the header has %zu", n, d->ncols);
    return -1;
}

int plotdec_count(struct plotdec *d, const char *line, char *err, size_t errsz)
{
    if (row_columns(d, line, err, errsz) != 0)
        return -1;
    find(d, true)->n++;
    return 0;
}

size_t plotdec_plan(struct plotdec *d, size_t groups)
{
    size_t most = 0;
    for (size_t i = 0; i < d->ns; i++)
        most = d->s[i].n > most ? d->s[i].n : most;
    d->g = most > 2 * groups ? (most + groups - 1) / groups : 1;
    return d->g;
}

void plotdec_header(const struct plotdec *d, FILE *out)
{
    fprintf(out, "%s%s\n", d->header, d->mean_names);
}

/* Adds the current row (the k-th of its run) to the run's state. -1 with a
 * message when a cell is not a number. */
static int take(struct plotdec *d, struct series *s, size_t k, char *err, size_t errsz)
{
    for (size_t i = 0; i < d->ncols; i++) {
        const char *f = d->fs[i];
        size_t len = d->fl[i];
        char buf[PLOTDEC_CELL + 1], *end;
        if (d->kind[i] == COL_KEY || (len == 0 && d->kind[i] == COL_NUMBER))
            continue;
        double x = NAN;
        if (len <= PLOTDEC_CELL) {
            memcpy(buf, f, len);
            buf[len] = '\0';
            x = strtod(buf, &end);
        }
        if (len == 0 || len > PLOTDEC_CELL || *end != '\0' || !isfinite(x)) {
            snprintf(err, errsz, "'%.*s' in column %zu is not a number", (int)(len < 40 ? len : 40), f, i + 1);
            return -1;
        }
        struct acc *a = &s->acc[i];
        if (d->kind[i] == COL_T) {
            memcpy(s->tlast, buf, len + 1);
            continue;
        }
        if (a->nval == 0 || x < a->lo_v)
            memcpy(a->lo, buf, len + 1), a->lo_v = x, a->lo_at = k;
        if (a->nval == 0 || x > a->hi_v)
            memcpy(a->hi, buf, len + 1), a->hi_v = x, a->hi_at = k;
        a->sum += x;
        a->nval++;
    }
    return 0;
}

/* One row of a finished run: second 0, the run's first (its first t, the
 * extreme that came first); 1, its second. */
static void put_row(struct plotdec *d, const struct series *s, int second, FILE *out)
{
    size_t n;
    cut(d, s->first, &n); /* the run's first row: its t and key cells */
    for (size_t i = 0; i < d->ncols; i++) {
        const struct acc *a = &s->acc[i];
        bool lo_first = a->lo_at <= a->hi_at;
        fputs(i ? "," : "", out);
        if (d->kind[i] == COL_T && second)
            fputs(s->tlast, out);
        else if (d->kind[i] != COL_NUMBER)
            fprintf(out, "%.*s", (int)d->fl[i], d->fs[i]);
        else
            fputs(lo_first != (second != 0) ? a->lo : a->hi, out);
    }
    for (size_t i = 0; i < d->nmeans; i++) {
        const struct acc *a = &s->acc[d->means[i]];
        if (a->nval > 0)
            fprintf(out, ",%.9g", a->sum / (double)a->nval);
        else
            fputs(",", out);
    }
    fputc('\n', out);
}

static void flush_pending(struct plotdec *d, FILE *out)
{
    fflush(d->pend);
    if (d->npending == 0)
        return;
    fwrite(d->pending, 1, d->npending, out);
    rewind(d->pend); /* the stream starts over; its size follows the position */
    fflush(d->pend);
}

int plotdec_row(struct plotdec *d, const char *line, FILE *out, char *err, size_t errsz)
{
    if (row_columns(d, line, err, errsz) != 0)
        return -1;
    struct series *s = find(d, false);
    if (s == NULL || s->k == s->n) {
        snprintf(err, errsz, "a row the first reading did not have (the file changed?)");
        return -1;
    }
    size_t k = s->k++ % d->g;
    if (k == 0) { /* a new run */
        flush_pending(d, out);
        free(s->first);
        s->first = strdup(line);
        memset(s->acc, 0, d->ncols * sizeof *s->acc);
        if (s->first == NULL)
            abort();
    }
    if (take(d, s, k, err, errsz) != 0)
        return -1;
    if (k == d->g - 1 || s->k == s->n) { /* the run ends */
        put_row(d, s, 0, out);
        if (k > 0)
            put_row(d, s, 1, d->pend);
    }
    return 0;
}

void plotdec_finish(struct plotdec *d, FILE *out) { flush_pending(d, out); }
