/*
 * tune — objectives, constraints, ranking and the Pareto front. See tune.h.
 */
#define _POSIX_C_SOURCE 200809L

#include "tune.h"

#include "scenario.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "output.h"
#include "units.h"

/* "lat_p99<=800ms" into metric, direction and value (durations in seconds). */
/* text without its spaces, into out; false when it does not fit. */
static bool squeeze(const char *text, size_t n, char *out, size_t size)
{
    size_t k = 0;
    for (size_t i = 0; i < n && text[i] != '\0'; i++) {
        if (text[i] == ' ' || text[i] == '\t')
            continue;
        if (k + 1 >= size)
            return false;
        out[k++] = text[i];
    }
    out[k] = '\0';
    return true;
}

/* METRIC<=VALUE or METRIC>=VALUE, spaces allowed anywhere ('lat_p99 <= 1 s');
 * VALUE a number or a duration (in seconds). */
static bool parse_constraint(const char *text, char *metric, size_t msz, int *dir, double *value)
{
    const char *op = strstr(text, "<=");
    *dir = -1;
    if (op == NULL) {
        op = strstr(text, ">=");
        *dir = 1;
    }
    char v[64];
    if (op == NULL || !squeeze(text, (size_t)(op - text), metric, msz) || metric[0] == '\0' ||
        !squeeze(op + 2, strlen(op + 2), v, sizeof v))
        return false;
    rs_time t;
    char *end;
    *value = strtod(v, &end);
    if (end != v && *end == '\0' && isfinite(*value))
        return true;
    if (units_parse_duration(v, &t)) {
        *value = units_seconds(t);
        return true;
    }
    return false;
}

/* The metric nearest to name: one that ends in _NAME (p99: lat_p99), or
 * at most 2 edits away; NULL if none. */
static const char *near_metric(const char *name, char names[][64], size_t n)
{
    size_t len = strlen(name), best_d = 3;
    const char *best = NULL;
    for (size_t m = 0; m < n; m++) {
        size_t l = strlen(names[m]);
        if (l > len && names[m][l - len - 1] == '_' && strcmp(names[m] + l - len, name) == 0)
            return names[m];
    }
    for (size_t m = 0; m < n; m++) {
        size_t d = scenario_edit_distance(name, names[m]);
        if (d < best_d)
            best = names[m], best_d = d;
    }
    return best;
}

/* Whether name is a metric of jobs.csv (the summary's columns); says
 * which are when it is not. */
bool tune_check_metric(const char *name, const char *option, char *err, size_t errsz)
{
    char names[128][64];
    int cols[256];
    size_t n = exp_metric_names(names, 128, cols, 256), used;
    for (size_t m = 0; m < n; m++)
        if (strcmp(names[m], name) == 0)
            return true;
    const char *near = near_metric(name, names, n);
    if (near != NULL) {
        snprintf(err, errsz, "%s %s: no such metric; did you mean '%s'? (retrystorm list metrics)", option, name,
                 near);
        return false;
    }
    int w = snprintf(err, errsz, "%s %s: no such metric; the metrics are:", option, name);
    used = w > 0 ? (size_t)w : 0;
    for (size_t m = 0; m < n && used < errsz; m++) {
        w = snprintf(err + used, errsz - used, " %s", names[m]);
        used += w > 0 ? (size_t)w : 0;
    }
    return false;
}

int tune_parse(struct tune_spec *t, const char *const *objectives, size_t nobjective,
               const char *const *constraints, size_t nconstraint, char *err, size_t errsz)
{
    memset(t, 0, sizeof *t);
    for (size_t i = 0; i < nobjective && i < TUNE_MAX_OBJECTIVES; i++) {
        const char *v = objectives[i];
        if ((strncmp(v, "max:", 4) && strncmp(v, "min:", 4)) || strlen(v + 4) >= sizeof t->oname[i]) {
            snprintf(err, errsz, "--objective %s: expected max:METRIC or min:METRIC (e.g. max:ok_share)", v);
            return 2;
        }
        t->osign[i] = v[1] == 'a' ? 1 : -1;
        snprintf(t->oname[i], sizeof t->oname[i], "%s", v + 4);
        if (!tune_check_metric(t->oname[i], "--objective", err, errsz))
            return 2;
        t->nobjective++;
    }
    for (size_t i = 0; i < nconstraint && i < TUNE_MAX_CONSTRAINTS; i++) {
        if (!parse_constraint(constraints[i], t->cname[i], sizeof t->cname[i], &t->cdir[i], &t->cval[i])) {
            snprintf(err, errsz, "--constraint %s: expected METRIC<=VALUE or METRIC>=VALUE (e.g. lat_p99<=800ms)",
                     constraints[i]);
            return 2;
        }
        if (!tune_check_metric(t->cname[i], "--constraint", err, errsz))
            return 2;
        t->nconstraint++;
    }
    return 0;
}

static int metric_index(const struct exp_result *r, const char *name)
{
    for (size_t m = 0; m < r->nmetrics; m++)
        if (strcmp(r->metric[m], name) == 0)
            return (int)m;
    return -1;
}

/* The metric indices of the objectives and constraints in r. */
static int find_metrics(const struct tune_spec *t, const struct exp_result *r, struct tune_rank *k,
                        char *err, size_t errsz)
{
    for (size_t i = 0; i < t->nobjective + t->nconstraint; i++) {
        const char *name = i < t->nobjective ? t->oname[i] : t->cname[i - t->nobjective];
        int x = metric_index(r, name);
        if (x < 0) {
            snprintf(err, errsz, "no metric %s in the results", name);
            return -1;
        }
        if (i < t->nobjective)
            k->oi[i] = (size_t)x;
        else
            k->ci[i - t->nobjective] = (size_t)x;
    }
    return 0;
}

/* Point p's feasibility (the pessimistic side of each interval must clear
 * every constraint) and score. */
static void judge(const struct tune_spec *t, const struct exp_result *r, struct tune_rank *k, size_t p)
{
    size_t nm = r->nmetrics;
    k->feasible[p] = true;
    for (size_t i = 0; i < t->nconstraint; i++) {
        double m = r->mean[p * nm + k->ci[i]], h = r->hw[p * nm + k->ci[i]];
        if (isnan(h))
            h = 0;
        if (isnan(m) || (t->cdir[i] < 0 ? m + h > t->cval[i] : m - h < t->cval[i]))
            k->feasible[p] = false;
    }
    double m = r->mean[p * nm + k->oi[0]], h = r->hw[p * nm + k->oi[0]];
    k->score[p] = isnan(m) ? -INFINITY : t->osign[0] * m - (isnan(h) ? 0 : h);
}

/* Whether feasible point p is dominated on the objectives' means. */
static bool dominated(const struct tune_spec *t, const struct exp_result *r, const struct tune_rank *k,
                      size_t p)
{
    size_t nm = r->nmetrics;
    for (size_t b = 0; b < k->nf; b++) {
        size_t q = k->order[b];
        bool ge = true, gt = false;
        for (size_t i = 0; i < t->nobjective; i++) {
            double x = t->osign[i] * r->mean[q * nm + k->oi[i]], y = t->osign[i] * r->mean[p * nm + k->oi[i]];
            ge = ge && x >= y;
            gt = gt || x > y;
        }
        if (q != p && ge && gt)
            return true;
    }
    return false;
}

int tune_rank(const struct tune_spec *t, const struct exp_result *r, struct tune_rank *k, char *err,
              size_t errsz)
{
    size_t np = r->npoints;
    memset(k, 0, sizeof *k);
    k->feasible = calloc(np, sizeof *k->feasible);
    k->pareto = calloc(np, sizeof *k->pareto);
    k->score = calloc(np, sizeof *k->score);
    k->order = calloc(np, sizeof *k->order);
    if (!k->feasible || !k->pareto || !k->score || !k->order) {
        snprintf(err, errsz, "out of memory for %zu points", np);
        return -1;
    }
    if (find_metrics(t, r, k, err, errsz) != 0)
        return -1;
    for (size_t p = 0; p < np; p++) {
        judge(t, r, k, p);
        if (k->feasible[p])
            k->order[k->nf++] = p;
    }
    for (size_t a = 1; a < k->nf; a++) /* best first; ties keep grid order */
        for (size_t b = a; b > 0 && k->score[k->order[b]] > k->score[k->order[b - 1]]; b--) {
            size_t x = k->order[b];
            k->order[b] = k->order[b - 1];
            k->order[b - 1] = x;
        }
    for (size_t a = 0; a < k->nf; a++)
        k->pareto[k->order[a]] = !dominated(t, r, k, k->order[a]);
    return 0;
}

void tune_rank_fini(struct tune_rank *k)
{
    free(k->feasible);
    free(k->pareto);
    free(k->score);
    free(k->order);
    memset(k, 0, sizeof *k);
}

/* One row of tune.csv: point p at rank `rank` (0: infeasible, no rank). */
static void csv_row(FILE *f, const struct tune_spec *t, const struct exp_result *r,
                    const struct tune_rank *k, size_t rank, size_t p)
{
    size_t nm = r->nmetrics;
    if (rank)
        fprintf(f, "%zu,%zu", rank, p);
    else
        fprintf(f, ",%zu", p);
    for (size_t j = 0; j < r->naxes; j++)
        fprintf(f, ",%s", r->values[p][j]);
    fprintf(f, ",%d,%d,", k->feasible[p], k->feasible[p] && k->pareto[p]);
    if (k->feasible[p])
        fprintf(f, "%.9g", k->score[p] * t->osign[0]);
    for (size_t i = 0; i < t->nobjective + t->nconstraint; i++) {
        size_t m = i < t->nobjective ? k->oi[i] : k->ci[i - t->nobjective];
        double h = r->hw[p * nm + m];
        fprintf(f, ",%.9g,", r->mean[p * nm + m]);
        if (!isnan(h))
            fprintf(f, "%.9g", h);
    }
    fputc('\n', f);
}

int tune_write_csv(const char *dir, const struct tune_spec *t, const struct exp_result *r,
                   const struct tune_rank *k, char *err, size_t errsz)
{
    struct output_file of;
    if (output_file_open(&of, dir, "tune.csv", err, errsz) != 0)
        return -1;
    fprintf(of.f, "rank,point");
    for (size_t j = 0; j < r->naxes; j++)
        fprintf(of.f, ",%s", r->axis_keys[j]);
    fprintf(of.f, ",feasible,pareto,score");
    for (size_t i = 0; i < t->nobjective; i++)
        fprintf(of.f, ",%s,%s_hw", t->oname[i], t->oname[i]);
    for (size_t i = 0; i < t->nconstraint; i++)
        fprintf(of.f, ",%s,%s_hw", t->cname[i], t->cname[i]);
    fputc('\n', of.f);
    for (size_t a = 0; a < k->nf; a++)
        csv_row(of.f, t, r, k, a + 1, k->order[a]);
    for (size_t p = 0; p < r->npoints; p++) /* the infeasible ones after, in grid order */
        if (!k->feasible[p])
            csv_row(of.f, t, r, k, 0, p);
    return output_file_commit(&of, err, errsz);
}

void tune_print(FILE *f, const char *scenario, const char *dir, const struct tune_spec *t,
                const struct exp_result *r, const struct tune_rank *k)
{
    size_t nm = r->nmetrics;
    fprintf(f, "tune %s: %zu points × %zu replications; %zu meet every constraint (pessimistic side of the 95%% interval)\n",
            scenario, r->npoints, r->reps, k->nf);
    for (size_t a = 0; a < k->nf && a < 5; a++) {
        size_t p = k->order[a];
        fprintf(f, "  %s ", a == 0 ? "best:" : "      ");
        for (size_t j = 0; j < r->naxes; j++)
            fprintf(f, " %s=%s", r->axis_keys[j], r->values[p][j]);
        double h = r->hw[p * nm + k->oi[0]];
        fprintf(f, "   %s = %.4g ± %.2g%s\n", t->oname[0], r->mean[p * nm + k->oi[0]], isnan(h) ? 0.0 : h,
                k->pareto[p] ? "  (Pareto)" : "");
    }
    if (k->nf == 0)
        fprintf(f, "  no point clears the constraints: nothing is recommended\n");
    fprintf(f, "  tune.csv in %s/\n", dir);
}
