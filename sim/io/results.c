/*
 * results — a table of results in memory. See results.h.
 */
#define _POSIX_C_SOURCE 200809L

#include "results.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int results_init(struct results *r, size_t nlabels, size_t ncols)
{
    memset(r, 0, sizeof *r);
    r->nlabels = nlabels;
    r->ncols = ncols;
    r->label_names = calloc(nlabels ? nlabels : 1, sizeof *r->label_names);
    r->cols = calloc(ncols ? ncols : 1, sizeof *r->cols);
    if (r->label_names == NULL || r->cols == NULL) {
        results_fini(r);
        return -1;
    }
    return 0;
}

void results_fini(struct results *r)
{
    for (size_t i = 0; r->labels != NULL && i < r->nrows * r->nlabels; i++)
        free(r->labels[i]);
    free(r->labels);
    free(r->v);
    free(r->label_names);
    free(r->cols);
    memset(r, 0, sizeof *r);
}

int results_add(struct results *r, const char *const *labels, const double *v)
{
    if (r->nrows == r->cap) {
        size_t cap = r->cap ? 2 * r->cap : 16;
        char **l = realloc(r->labels, cap * (r->nlabels ? r->nlabels : 1) * sizeof *l);
        if (l == NULL)
            return -1;
        r->labels = l;
        double *nv = realloc(r->v, cap * (r->ncols ? r->ncols : 1) * sizeof *nv);
        if (nv == NULL)
            return -1;
        r->v = nv;
        r->cap = cap;
    }
    for (size_t k = 0; k < r->nlabels; k++)
        if ((r->labels[r->nrows * r->nlabels + k] = strdup(labels[k])) == NULL) {
            while (k-- > 0)
                free(r->labels[r->nrows * r->nlabels + k]);
            return -1;
        }
    memcpy(&r->v[r->nrows * r->ncols], v, r->ncols * sizeof *v);
    r->nrows++;
    return 0;
}

size_t results_metrics(const struct summary_cols *cols)
{
    size_t n = 0;
    for (size_t i = 0; i < cols->n; i++)
        n += output_kind_is_metric(cols->c[i].kind);
    return n;
}

size_t results_stat_metric(struct results *r, size_t at, const char *name, enum output_kind kind)
{
    static const char *const suffix[3] = {"", "_sd", "_hw"};
    for (int s = 0; s < 3; s++) {
        struct results_col *c = &r->cols[at++];
        snprintf(c->name, sizeof c->name, "%s%s", name, suffix[s]);
        c->kind = s == 0 ? kind : OUTPUT_REAL;
        c->stat = true;
    }
    return at;
}

size_t results_stat_columns(struct results *r, size_t at, const struct summary_cols *cols)
{
    r->cols[at++] = (struct results_col){"reps", OUTPUT_COUNT, false};
    for (size_t i = 0; i < cols->n; i++)
        if (output_kind_is_metric(cols->c[i].kind))
            at = results_stat_metric(r, at, cols->c[i].name, cols->c[i].kind);
    return at;
}

void results_format(char *out, size_t size, const struct results_col *c, double v)
{
    if (!isfinite(v)) /* no value (NaN), or an unbounded score: an empty cell */
        snprintf(out, size, "%s", "");
    else if (c->stat)
        snprintf(out, size, "%.9g", v);
    else
        summary_format(out, size, c->kind, v);
}

long results_find(const struct results *r, const char *name)
{
    for (size_t i = 0; i < r->ncols; i++)
        if (strcmp(r->cols[i].name, name) == 0)
            return (long)i;
    return -1;
}

void results_cell(FILE *f, const struct results_col *c, double v)
{
    char text[64];
    results_format(text, sizeof text, c, v);
    fputs(text, f);
}

void results_write_csv(FILE *f, const struct results *r)
{
    for (size_t k = 0; k < r->nlabels; k++)
        fprintf(f, "%s%s", k ? "," : "", r->label_names[k]);
    for (size_t c = 0; c < r->ncols; c++)
        fprintf(f, "%s%s", c || r->nlabels ? "," : "", r->cols[c].name);
    fputc('\n', f);
    for (size_t i = 0; i < r->nrows; i++) {
        for (size_t k = 0; k < r->nlabels; k++)
            fprintf(f, "%s%s", k ? "," : "", r->labels[i * r->nlabels + k]);
        for (size_t c = 0; c < r->ncols; c++) {
            if (c || r->nlabels)
                fputc(',', f);
            results_cell(f, &r->cols[c], r->v[i * r->ncols + c]);
        }
        fputc('\n', f);
    }
}
