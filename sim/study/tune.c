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
#include "screen.h"
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

int tune_parse(struct tune_spec *t, const struct summary_cols *cols, const char *const *objectives,
               size_t nobjective, const char *const *constraints, size_t nconstraint, char *err, size_t errsz)
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
        if (!summary_check_metric(cols, t->oname[i], "--objective", err, errsz))
            return 2;
        t->nobjective++;
    }
    for (size_t i = 0; i < nconstraint && i < TUNE_MAX_CONSTRAINTS; i++) {
        if (!parse_constraint(constraints[i], t->cname[i], sizeof t->cname[i], &t->cdir[i], &t->cval[i])) {
            snprintf(err, errsz, "--constraint %s: expected METRIC<=VALUE or METRIC>=VALUE (e.g. lat_p99<=800ms)",
                     constraints[i]);
            return 2;
        }
        if (!summary_check_metric(cols, t->cname[i], "--constraint", err, errsz))
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

/* The pessimistic side of objective i's 95 % interval at point p, signed
 * so that more is better (the statistic ranking and the front both use). */
static double pessimistic(const struct tune_spec *t, const struct exp_result *r, const struct tune_rank *k,
                          size_t p, size_t i)
{
    double m = r->mean[p * r->nmetrics + k->oi[i]], h = r->hw[p * r->nmetrics + k->oi[i]];
    return isnan(m) ? -INFINITY : t->osign[i] * m - (isnan(h) ? 0 : h);
}

/* Whether point p breaks constraint i: no value, or the pessimistic side
 * of its 95 % interval (mean + half-width for <=, − for >=) past the limit. */
static bool breaks(const struct tune_spec *t, const struct exp_result *r, const struct tune_rank *k, size_t p,
                   size_t i)
{
    double m = r->mean[p * r->nmetrics + k->ci[i]], h = r->hw[p * r->nmetrics + k->ci[i]];
    h = isnan(h) ? 0 : h;
    return isnan(m) || (t->cdir[i] < 0 ? m + h > t->cval[i] : m - h < t->cval[i]);
}

/* Point p's feasibility (the pessimistic side of each interval must clear
 * every constraint) and score. */
static void judge(const struct tune_spec *t, const struct exp_result *r, struct tune_rank *k, size_t p)
{
    k->feasible[p] = true;
    for (size_t i = 0; i < t->nconstraint; i++)
        if (breaks(t, r, k, p, i))
            k->feasible[p] = false;
    k->score[p] = pessimistic(t, r, k, p, 0);
}

/* Whether p ranks before q: the first objective's pessimistic side, then
 * the next objectives', then grid order. */
static bool ranks_before(const struct tune_spec *t, const struct exp_result *r, const struct tune_rank *k,
                         size_t p, size_t q)
{
    for (size_t i = 0; i < t->nobjective; i++) {
        double x = pessimistic(t, r, k, p, i), y = pessimistic(t, r, k, q, i);
        if (x != y)
            return x > y;
    }
    return p < q;
}

/* Whether feasible point p is dominated on the objectives' pessimistic
 * sides (the statistic it is ranked by: the best is never dominated). */
static bool dominated(const struct tune_spec *t, const struct exp_result *r, const struct tune_rank *k,
                      size_t p)
{
    for (size_t b = 0; b < k->nf; b++) {
        size_t q = k->order[b];
        bool ge = true, gt = false;
        for (size_t i = 0; i < t->nobjective; i++) {
            double x = pessimistic(t, r, k, q, i), y = pessimistic(t, r, k, p, i);
            ge = ge && x >= y;
            gt = gt || x > y;
        }
        if (q != p && ge && gt)
            return true;
    }
    return false;
}

/* Whether metric m at points p and q is the same within their 95 %
 * intervals (they overlap; without replications, equal). */
static bool same_within(const struct exp_result *r, size_t m, size_t p, size_t q)
{
    double a = r->mean[p * r->nmetrics + m], b = r->mean[q * r->nmetrics + m];
    double ha = r->hw[p * r->nmetrics + m], hb = r->hw[q * r->nmetrics + m];
    if (isnan(a) || isnan(b))
        return isnan(a) && isnan(b);
    return fabs(a - b) <= (isnan(ha) ? 0 : ha) + (isnan(hb) ? 0 : hb);
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
    k->tied = calloc(np, sizeof *k->tied);
    if (!k->feasible || !k->pareto || !k->score || !k->order || !k->tied) {
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
    for (size_t a = 1; a < k->nf; a++) /* best first */
        for (size_t b = a; b > 0 && ranks_before(t, r, k, k->order[b], k->order[b - 1]); b--) {
            size_t x = k->order[b];
            k->order[b] = k->order[b - 1];
            k->order[b - 1] = x;
        }
    for (size_t a = 0; a < k->nf; a++)
        k->pareto[k->order[a]] = !dominated(t, r, k, k->order[a]);
    for (size_t a = 1; a < k->nf; a++)
        k->tied[k->order[a]] = same_within(r, k->oi[0], k->order[0], k->order[a]);
    return 0;
}

void tune_rank_fini(struct tune_rank *k)
{
    free(k->feasible);
    free(k->pareto);
    free(k->score);
    free(k->order);
    free(k->tied);
    memset(k, 0, sizeof *k);
}


/* tune.csv's table: rank (empty: infeasible), point and grid values, then
 * feasible, pareto, tied and score, then the sweep's columns (reps, each
 * metric's mean, sd and half-width). Returns 0, or -1 when memory is short. */
static int tune_table(const struct tune_spec *t, const struct exp_result *r, const struct tune_rank *k,
                      struct results *out)
{
    static const char *const flags[4] = {"feasible", "pareto", "tied", "score"};
    const struct results *sum = &r->sum;
    if (results_init(out, 2 + r->naxes, 4 + sum->ncols) != 0)
        return -1;
    snprintf(out->label_names[0], sizeof out->label_names[0], "rank");
    snprintf(out->label_names[1], sizeof out->label_names[0], "point");
    for (size_t j = 0; j < r->naxes; j++)
        snprintf(out->label_names[2 + j], sizeof out->label_names[0], "%s", r->axis_keys[j]);
    for (int i = 0; i < 4; i++)
        out->cols[i] = (struct results_col){"", i < 3 ? OUTPUT_FLAG : OUTPUT_REAL, i == 3};
    for (int i = 0; i < 4; i++)
        snprintf(out->cols[i].name, sizeof out->cols[i].name, "%s", flags[i]);
    memcpy(out->cols + 4, sum->cols, sum->ncols * sizeof *sum->cols);
    double *row = malloc((4 + sum->ncols) * sizeof *row);
    int rc = row == NULL ? -1 : 0;
    size_t next_infeasible = 0;
    for (size_t a = 0; a < r->npoints && rc == 0; a++) { /* by rank, then the infeasible in grid order */
        size_t p = a < k->nf ? k->order[a] : next_infeasible;
        while (a >= k->nf && k->feasible[p])
            p++;
        next_infeasible = a >= k->nf ? p + 1 : 0;
        char rank[32] = "", pt[32];
        if (a < k->nf)
            snprintf(rank, sizeof rank, "%zu", a + 1);
        snprintf(pt, sizeof pt, "%zu", p);
        const char *labels[2 + EXP_MAX_AXES] = {rank, pt};
        for (size_t j = 0; j < r->naxes; j++)
            labels[2 + j] = r->values[p][j];
        row[0] = k->feasible[p], row[1] = k->feasible[p] && k->pareto[p], row[2] = k->tied[p];
        row[3] = k->feasible[p] ? k->score[p] * t->osign[0] : NAN;
        memcpy(row + 4, &sum->v[p * sum->ncols], sum->ncols * sizeof *row);
        rc = results_add(out, labels, row);
    }
    free(row);
    return rc;
}

int tune_write_csv(const char *dir, const struct tune_spec *t, const struct exp_result *r,
                   const struct tune_rank *k, struct results *table, char *err, size_t errsz)
{
    if (tune_table(t, r, k, table) != 0) {
        snprintf(err, errsz, "out of memory for tune.csv");
        return -1;
    }
    struct output_file of;
    if (output_file_open(&of, dir, "tune.csv", err, errsz) != 0)
        return -1;
    results_write_csv(of.f, table);
    return output_file_commit(&of, err, errsz);
}

/* Point p's grid values, "key=value ..." (each key's label), into out. */
static const char *point_label(const struct exp_result *r, size_t p, char *out, size_t size)
{
    size_t used = 0;
    out[0] = '\0';
    for (size_t j = 0; j < r->naxes && used < size; j++) {
        int w = snprintf(out + used, size - used, "%s%s=%s", j ? " " : "", r->axis_labels[j], r->values[p][j]);
        used += w > 0 ? (size_t)w : 0;
    }
    return out;
}

/* The recommendation: the best point's objectives and constraints with
 * their intervals, then the metrics that say what it costs. */
static void print_best(FILE *f, const struct tune_spec *t, const struct exp_result *r, const struct tune_rank *k)
{
    static const char *const context[] = {"ok_share", "in_flight_share", "lat_p99", "amplification", "recovered", "recovery_s"};
    size_t p = k->order[0], nm = r->nmetrics;
    char label[1024], v[96], lim[64];
    fprintf(f, "  recommended: %s\n", point_label(r, p, label, sizeof label));
    for (size_t i = 0; i < t->nobjective; i++) {
        screen_format(v, sizeof v, t->oname[i], r->kind[k->oi[i]], r->mean[p * nm + k->oi[i]], r->hw[p * nm + k->oi[i]]);
        fprintf(f, "    %-16s %-24s objective (%s)\n", t->oname[i], v, t->osign[i] > 0 ? "max" : "min");
    }
    for (size_t i = 0; i < t->nconstraint; i++) {
        screen_format(v, sizeof v, t->cname[i], r->kind[k->ci[i]], r->mean[p * nm + k->ci[i]], r->hw[p * nm + k->ci[i]]);
        screen_format(lim, sizeof lim, t->cname[i], r->kind[k->ci[i]], t->cval[i], NAN);
        fprintf(f, "    %-16s %-24s constraint %s %s\n", t->cname[i], v, t->cdir[i] < 0 ? "<=" : ">=", lim);
    }
    for (size_t c = 0; c < sizeof context / sizeof *context; c++) {
        int m = metric_index(r, context[c]);
        bool shown = false;
        for (size_t i = 0; i < t->nobjective; i++)
            shown = shown || strcmp(t->oname[i], context[c]) == 0;
        for (size_t i = 0; i < t->nconstraint; i++)
            shown = shown || strcmp(t->cname[i], context[c]) == 0;
        if (m < 0 || shown || isnan(r->mean[p * nm + (size_t)m]))
            continue; /* (no recovery without phases) */
        screen_format(v, sizeof v, context[c], r->kind[m], r->mean[p * nm + (size_t)m], r->hw[p * nm + (size_t)m]);
        fprintf(f, "    %-16s %s\n", context[c], v);
    }
}

/* The points tied with the best, then the next ranks. */
/* The markers the ranked and infeasible lists use (tune_print explains
 * those it showed, under them). */
enum { MARK_TIED = 1, MARK_PARETO = 2, MARK_NONE = 4 };

static unsigned print_rest(FILE *f, const struct tune_spec *t, const struct exp_result *r, const struct tune_rank *k)
{
    unsigned marks = 0;
    size_t nm = r->nmetrics, ntied = 0;
    char label[1024], v[96];
    for (size_t a = 1; a < k->nf; a++)
        ntied += k->tied[k->order[a]];
    if (ntied > 0)
        fprintf(f, "  tied with it: %zu point%s whose %s is the same within the 95%% intervals (marked =);\n"
                   "  more replications (--reps) may tell them apart\n",
                ntied, ntied == 1 ? "" : "s", t->oname[0]);
    int w = 0;
    for (size_t a = 0; a < k->nf && a < 5; a++)
        w = (int)strlen(point_label(r, k->order[a], label, sizeof label)) > w ? (int)strlen(label) : w;
    for (size_t a = 0; a < k->nf && a < 5; a++) {
        size_t p = k->order[a];
        screen_format(v, sizeof v, t->oname[0], r->kind[k->oi[0]], r->mean[p * nm + k->oi[0]], r->hw[p * nm + k->oi[0]]);
        fprintf(f, "  %3zu%s %-*s  %s = %s%s\n", a + 1, k->tied[p] ? "=" : " ", w,
                point_label(r, p, label, sizeof label), t->oname[0], v, k->pareto[p] ? "  (Pareto)" : "");
        marks |= (k->tied[p] ? MARK_TIED : 0) | (k->pareto[p] ? MARK_PARETO : 0);
    }
    if (k->nf > 5)
        fprintf(f, "       ... %zu more feasible points in tune.csv\n", k->nf - 5);
    return marks;
}

/* The infeasible points, under each constraint they break. */
static unsigned print_infeasible(FILE *f, const struct tune_spec *t, const struct exp_result *r,
                                 const struct tune_rank *k)
{
    size_t nm = r->nmetrics;
    char label[1024], v[96], lim[64];
    unsigned marks = 0;
    if (k->nf == r->npoints)
        return 0;
    fprintf(f, "  infeasible: %zu point%s\n", r->npoints - k->nf, r->npoints - k->nf == 1 ? "" : "s");
    for (size_t i = 0; i < t->nconstraint; i++) {
        size_t n = 0, shown = 0;
        for (size_t p = 0; p < r->npoints; p++)
            n += breaks(t, r, k, p, i);
        if (n == 0)
            continue;
        screen_format(lim, sizeof lim, t->cname[i], r->kind[k->ci[i]], t->cval[i], NAN);
        fprintf(f, "    %s %s %s broken by %zu:", t->cname[i], t->cdir[i] < 0 ? "<=" : ">=", lim, n);
        for (size_t p = 0; p < r->npoints && shown < 4; p++) {
            if (!breaks(t, r, k, p, i))
                continue;
            screen_format(v, sizeof v, t->cname[i], r->kind[k->ci[i]], r->mean[p * nm + k->ci[i]], r->hw[p * nm + k->ci[i]]);
            fprintf(f, "%s %s (%s)", shown++ ? ";" : "", point_label(r, p, label, sizeof label), v);
            marks |= isnan(r->mean[p * nm + k->ci[i]]) ? MARK_NONE : 0;
        }
        fprintf(f, "%s\n", n > shown ? "; ... (tune.csv)" : "");
    }
    return marks;
}

/* One line under the lists saying what each marker shown means. */
static void print_marks(FILE *f, unsigned marks)
{
    static const struct { unsigned mark; const char *text; } says[] = {
        {MARK_TIED, "= tied with the best (the same within the 95% intervals)"},
        {MARK_PARETO, "(Pareto) no feasible point is better on every objective"},
        {MARK_NONE, "(-) no value (recovery_s where nothing recovered, say): it breaks the constraint"},
    };
    if (marks == 0)
        return;
    fprintf(f, "  marks:");
    for (size_t i = 0, n = 0; i < sizeof says / sizeof *says; i++)
        if (marks & says[i].mark)
            fprintf(f, "%s %s", n++ ? ";" : "", says[i].text);
    fputc('\n', f);
}

/* Whether axis j changes the first objective anywhere: some two points
 * that differ only in axis j whose values differ beyond their intervals. */
static bool axis_matters(const struct exp_result *r, size_t m, size_t j)
{
    for (size_t p = 0; p < r->npoints; p++)
        for (size_t q = p + 1; q < r->npoints; q++) {
            bool others_same = true;
            for (size_t i = 0; i < r->naxes && others_same; i++)
                others_same = i == j || strcmp(r->values[p][i], r->values[q][i]) == 0;
            if (others_same && strcmp(r->values[p][j], r->values[q][j]) != 0 && !same_within(r, m, p, q))
                return true;
        }
    return false;
}

/* A warning for each grid key the objective does not depend on here, with
 * the likely reason when the key is a retry setting and nothing retried. */
static void print_flat_axes(FILE *f, const struct tune_spec *t, const struct exp_result *r, const struct tune_rank *k)
{
    if (r->npoints > 2000) /* O(points² × axes) */
        return;
    int amp = metric_index(r, "amplification");
    bool never_retried = amp >= 0; /* (almost) no attempt retried anywhere */
    for (size_t p = 0; p < r->npoints && never_retried; p++)
        never_retried = r->mean[p * r->nmetrics + (size_t)amp] < 1.01;
    for (size_t j = 0; j < r->naxes; j++) {
        if (axis_matters(r, k->oi[0], j))
            continue;
        fprintf(f, "  warning: %s makes no difference to %s here (every value gives the same, within the 95%% "
                   "intervals)", r->axis_keys[j], t->oname[0]);
        const char *last = strrchr(r->axis_keys[j], '.');
        last = last ? last + 1 : r->axis_keys[j];
        static const char *const retry_keys[] = {"attempts", "backoff", "base", "cap", "jitter", "multiplier",
                                                 "retry_on", "budget", "retry_after"};
        bool retry_key = false;
        for (size_t i = 0; i < sizeof retry_keys / sizeof *retry_keys; i++)
            retry_key = retry_key || strcmp(last, retry_keys[i]) == 0;
        if (retry_key && never_retried)
            fprintf(f, ":\n    retries (almost) never happened on any point (amplification below 1.01): the scenario has "
                       "no failure\n    these settings answer, so the recommended value is only the first of equals");
        fputc('\n', f);
    }
}

void tune_print(FILE *f, const char *scenario, const char *dir, const struct tune_spec *t,
                const struct exp_result *r, const struct tune_rank *k)
{
    fprintf(f, "tune %s: %zu points × %zu replications; %zu meet every constraint (pessimistic side of the 95%% interval)\n",
            scenario, r->npoints, r->reps, k->nf);
    unsigned marks = 0;
    if (k->nf == 0)
        fprintf(f, "  no point clears the constraints: nothing is recommended\n");
    else if (!isfinite(k->score[k->order[0]]))
        fprintf(f, "  no feasible point has a value of %s (recovery_s, for one, is empty where nothing "
                   "recovered): nothing is recommended\n", t->oname[0]);
    else {
        print_best(f, t, r, k);
        marks |= print_rest(f, t, r, k);
    }
    marks |= print_infeasible(f, t, r, k);
    print_marks(f, marks);
    print_flat_axes(f, t, r, k);
    fprintf(f, "  tune.csv in %s/\n", dir);
}
