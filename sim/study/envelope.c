/*
 * envelope — bisection of the recovery boundary. See envelope.h.
 */
#define _POSIX_C_SOURCE 200809L

#include "envelope.h"

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "csvread.h"
#include "experiment.h"
#include "outdir.h"
#include "summary.h"

/* ---- the statistics of one probe ---- */

void env_wilson(unsigned k, unsigned n, double z, double *lo, double *hi)
{
    if (n == 0) {
        *lo = 0, *hi = 1;
        return;
    }
    double nn = n, p = k / nn, z2 = z * z;
    double centre = (p + z2 / (2 * nn)) / (1 + z2 / nn);
    double half = z * sqrt(p * (1 - p) / nn + z2 / (4 * nn * nn)) / (1 + z2 / nn);
    *lo = k == 0 || centre - half < 0 ? 0 : centre - half; /* exact ends: no rounding past 0 or 1 */
    *hi = k == n || centre + half > 1 ? 1 : centre + half;
}

void env_probe_add(struct env_probe *p, enum verdict v)
{
    p->count[v]++;
    p->n++;
}

/* The runs that count in the share: recovered, metastable, overloaded. */
static unsigned counted(const struct env_probe *p)
{
    return p->count[VERDICT_RECOVERED] + p->count[VERDICT_METASTABLE] + p->count[VERDICT_OVERLOADED];
}

bool env_probe_settle(struct env_probe *p, double level, unsigned max)
{
    unsigned m = counted(p);
    p->share = m ? (double)p->count[VERDICT_RECOVERED] / m : NAN;
    env_wilson(p->count[VERDICT_RECOVERED], m, ENV_Z95, &p->lo, &p->hi);
    if (m == 0)
        p->lo = p->hi = NAN;
    p->decided = m > 0 && (p->lo > level || p->hi < level);
    p->settled = p->decided || p->n >= max;
    p->recovers = m > 0 && p->share >= level;
    return p->settled;
}

/* ---- bisection ---- */

void env_bisect_init(struct env_bisect *b, double lo, double hi, double res)
{
    *b = (struct env_bisect){.lo = lo, .hi = hi, .res = res, .a = lo, .b = hi};
}

size_t env_bisect_next(const struct env_bisect *b, double t[2])
{
    size_t n = 0;
    if (b->done)
        return 0;
    if (!b->have_lo)
        t[n++] = b->lo;
    if (!b->have_hi)
        t[n++] = b->hi;
    if (n == 0)
        t[n++] = (b->a + b->b) / 2;
    return n;
}

void env_bisect_take(struct env_bisect *b, double t, bool recovers)
{
    if (t == b->lo && !b->have_lo) {
        b->have_lo = true, b->lo_rec = recovers;
    } else if (t == b->hi && !b->have_hi) {
        b->have_hi = true, b->hi_rec = recovers;
    } else if (recovers) {
        b->a = t;
    } else {
        b->b = t;
    }
    if (!b->have_lo || !b->have_hi)
        return;
    b->where = !b->lo_rec ? -1 : b->hi_rec ? 1 : 0;
    b->done = b->where != 0 || b->b - b->a <= b->res * (1 + 1e-9);
}

/* ---- the trigger's range ---- */

/* "x1.5" or "30s" or "2": the prefix (x or none), the number, the unit. */
static bool split_value(const char *s, char *prefix, size_t psz, double *v, char *unit, size_t usz)
{
    size_t np = s[0] == 'x' ? 1 : 0;
    snprintf(prefix, psz, "%.*s", (int)np, s);
    char *end;
    errno = 0;
    *v = strtod(s + np, &end);
    if (end == s + np || errno == ERANGE || !isfinite(*v) || strlen(end) >= usz)
        return false;
    snprintf(unit, usz, "%s", end);
    return strspn(unit, "abcdefghijklmnopqrstuvwxyz/%") == strlen(unit);
}

int env_parse_range(const char *option, const char *text, struct env_range *r, char *err, size_t errsz)
{
    const char *eq = strchr(text, '=');
    const char *dots = eq ? strstr(eq, "..") : NULL;
    memset(r, 0, sizeof *r);
    if (eq == NULL || eq == text || (size_t)(eq - text) >= sizeof r->key || dots == NULL) {
        snprintf(err, errsz, "%s %s: expected KEY=A..B (e.g. phase.spike.rate=x1.2..x4)", option, text);
        return 2;
    }
    snprintf(r->key, sizeof r->key, "%.*s", (int)(eq - text), text);
    char a[64], pb[8], ub[16];
    snprintf(a, sizeof a, "%.*s", (int)(dots - eq - 1), eq + 1);
    if (!split_value(a, r->prefix, sizeof r->prefix, &r->lo, r->unit, sizeof r->unit) ||
        !split_value(dots + 2, pb, sizeof pb, &r->hi, ub, sizeof ub) || strcmp(pb, r->prefix) != 0 ||
        strcmp(ub, r->unit) != 0) {
        snprintf(err, errsz, "%s %s: A and B must be numbers with the same unit (e.g. x1.2..x4, 5s..30s)", option, text);
        return 2;
    }
    if (!(r->lo < r->hi)) {
        snprintf(err, errsz, "%s %s: the range needs A < B", option, text);
        return 2;
    }
    return 0;
}

void env_format(const struct env_range *r, double t, char *out, size_t size)
{
    snprintf(out, size, "%s%.6g%s", r->prefix, t, r->unit);
}

/* ---- verdicts from a run's summary row ---- */

/* The run's verdict: its `verdict` column (the code of enum verdict); a
 * value out of range (never written by summary_row) counts as undetermined. */
static enum verdict verdict_of(long col, const double *row)
{
    double v = row[col];
    return isnan(v) || v < 0 || v >= VERDICT_N ? VERDICT_UNDETERMINED : (enum verdict)(int)v;
}

/* ---- the study ---- */

void env_result_fini(struct env_result *r)
{
    free(r->cells);
    free(r->probes);
    memset(r, 0, sizeof *r);
}

/* A --load or --duration axis into vals (exp_expand_axis, messages naming
 * the option); no option: one value "" (the scenario's own). */
static size_t expand(const char *option, const char *text, char *key, char (*vals)[128], char *err, size_t errsz)
{
    if (text == NULL) {
        key[0] = vals[0][0] = '\0';
        return 1;
    }
    size_t n = exp_expand_axis(text, key, 128, vals, ENV_MAX_CELLS, err, errsz);
    if (n == 0 && strncmp(err, "--grid", 6) == 0) {
        char tail[512];
        snprintf(tail, sizeof tail, "%s", err + 6);
        snprintf(err, errsz, "%s%s", option, tail);
    }
    return n;
}

/* The cells: every load × every duration (the load varying slowest). */
static int make_cells(const struct env_spec *spec, struct env_result *res, char *err, size_t errsz)
{
    char(*loads)[128] = malloc(ENV_MAX_CELLS * sizeof *loads), (*durs)[128] = malloc(ENV_MAX_CELLS * sizeof *durs);
    size_t nl = loads && durs ? expand("--load", spec->load, res->load_key, loads, err, errsz) : 0;
    size_t nd = nl ? expand("--duration", spec->duration, res->duration_key, durs, err, errsz) : 0;
    int rc = loads && durs ? 0 : 1;
    if (rc == 0 && (nl == 0 || nd == 0))
        rc = 2;
    else if (rc == 0 && nl * nd > ENV_MAX_CELLS)
        rc = 2, snprintf(err, errsz, "--load × --duration: %zu cells; the limit is %u", nl * nd, ENV_MAX_CELLS);
    else if (rc == 0 && (res->cells = calloc(nl * nd, sizeof *res->cells)) == NULL)
        rc = 1;
    if (rc == 1)
        snprintf(err, errsz, "out of memory for the cells");
    if (rc != 0) {
        free(loads), free(durs);
        return rc;
    }
    res->ncells = nl * nd;
    for (size_t c = 0; c < res->ncells; c++) {
        struct env_cell *cell = &res->cells[c];
        snprintf(cell->load, sizeof cell->load, "%s", loads[c / nd]);
        snprintf(cell->duration, sizeof cell->duration, "%s", durs[c % nd]);
        char *end;
        cell->x = strtod(cell->load, &end);
        if (end == cell->load)
            cell->x = (double)(c / nd);
        cell->pa = cell->pb = -1;
        cell->crossing = NAN;
        env_bisect_init(&cell->bis, res->trig.lo, res->trig.hi, res->resolution);
    }
    free(loads), free(durs);
    return 0;
}

/* Loads the scenario of cell c at trigger text: 0, or 2 with diag. */
static int load_probe(const struct env_spec *spec, const struct env_result *res, size_t c, const char *text,
                      struct scenario *sc, struct scenario_diag *diag)
{
    const char *sets[ENV_MAX_SETS + 3];
    char own[3][320];
    size_t n = 0;
    for (size_t i = 0; i < spec->nsets; i++) /* nsets <= ENV_MAX_SETS: check_inputs */
        sets[n++] = spec->sets[i];
    const struct env_cell *cell = &res->cells[c];
    if (res->load_key[0]) {
        snprintf(own[0], sizeof own[0], "%s=%s", res->load_key, cell->load);
        sets[n++] = own[0];
    }
    if (res->duration_key[0]) {
        snprintf(own[1], sizeof own[1], "%s=%s", res->duration_key, cell->duration);
        sets[n++] = own[1];
    }
    snprintf(own[2], sizeof own[2], "%s=%s", res->trig.key, text);
    sets[n++] = own[2];
    return scenario_load(sc, spec->scenario, sets, n, diag) != 0 ? 2 : 0;
}

unsigned env_default_reps(double level)
{
    /* all n runs one way: the Wilson bound n / (n + z²) passes p when n > z² p / (1 − p) */
    double p = level > 0.5 ? level : 1 - level, z2 = ENV_Z95 * ENV_Z95;
    unsigned n = (unsigned)floor(z2 * p / (1 - p)) + 1;
    return n > ENV_DEFAULT_REPS ? n : ENV_DEFAULT_REPS;
}

/* Every input checked before anything runs: the options, each cell's
 * scenario at both ends of the range, the columns, the directory. */
static int check_inputs(const struct env_spec *spec, struct env_result *res, struct summary_cols *cols,
                        struct scenario_diag *diag, char *err, size_t errsz)
{
    int rc = env_parse_range("--trigger", spec->trigger, &res->trig, err, errsz);
    if (rc == 0 && spec->nsets > ENV_MAX_SETS)
        rc = 2, snprintf(err, errsz, "%zu --set options and grid values; the limit is %d", spec->nsets, ENV_MAX_SETS);
    double span = res->trig.hi - res->trig.lo;
    res->level = spec->level > 0 ? spec->level : 0.5;
    res->reps = spec->reps ? spec->reps : env_default_reps(res->level);
    res->resolution = spec->resolution > 0 ? spec->resolution : span / ENV_DEFAULT_STEPS;
    if (rc == 0 && (res->resolution < span / ENV_MAX_STEPS || !(res->resolution < span))) {
        snprintf(err, errsz, "--resolution %g: expected a step from (B - A) / %.0f to below B - A = %g", res->resolution,
                 ENV_MAX_STEPS, span);
        rc = 2;
    }
    if (rc != 0 || (rc = make_cells(spec, res, err, errsz)) != 0)
        return rc;
    struct scenario *sc = malloc(sizeof *sc);
    if (sc == NULL) {
        snprintf(err, errsz, "out of memory for a scenario");
        return 1;
    }
    char text[64];
    for (size_t c = 0; c < res->ncells && rc == 0; c++)
        for (int end = 0; end < 2 && rc == 0; end++) {
            env_format(&res->trig, end ? res->trig.hi : res->trig.lo, text, sizeof text);
            rc = load_probe(spec, res, c, text, sc, diag);
            if (rc == 0 && c == 0 && end == 0 && summary_cols_init(cols, sc, err, errsz) != 0)
                rc = 2;
            if (rc == 0 && c == 0 && end == 0 && exp_fingerprint(sc, &res->fingerprint) != 0)
                rc = 1, snprintf(err, errsz, "out of memory for the scenario's fingerprint");
        }
    free(sc);
    if (rc == 0 && summary_cols_find(cols, "verdict") < 0) {
        snprintf(err, errsz, "%s: its summary has no verdict column", spec->scenario);
        rc = 2;
    }
    return rc == 0 && spec->dir ? outdir_check(spec->dir, spec->force, err, errsz) : rc;
}

/* The probes running: each with its scenario, until it settles. */
struct active {
    size_t probe;
    struct scenario *sc;
};

struct study {
    const struct env_spec *spec;
    struct env_result *res;
    const struct summary_cols *cols;
    long vcol; /* the verdict's column in a summary row */
    struct active *act;
    size_t nact;
    unsigned *busy; /* per cell: its probes not settled */
    struct env_probe *known; /* --resume: the probes settled by an earlier run */
    size_t nknown;
};

static void say(const struct study *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void say(const struct study *s, const char *fmt, ...)
{
    char msg[600];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (s->spec->warn)
        s->spec->warn(s->spec->user, msg);
}

static void settled(struct study *s, struct env_probe *p);

/* A new probe of cell c at t, made active (or, with --resume, settled at
 * once from an earlier run's verdicts). 0, 1 (memory) or 2 (diag). */
static int open_probe(struct study *s, size_t c, double t, struct scenario_diag *diag)
{
    struct env_result *r = s->res;
    if (r->nprobes == r->cap) {
        size_t cap = r->cap ? 2 * r->cap : 64;
        struct env_probe *p = realloc(r->probes, cap * sizeof *p);
        if (p == NULL)
            return 1;
        r->probes = p, r->cap = cap;
    }
    struct env_probe *p = &r->probes[r->nprobes];
    *p = (struct env_probe){.cell = c, .t = t, .share = NAN, .lo = NAN, .hi = NAN};
    env_format(&r->trig, t, p->text, sizeof p->text);
    for (size_t i = 0; i < s->nknown; i++) {
        const struct env_probe *k = &s->known[i];
        if (k->cell != c || strcmp(k->text, p->text) != 0)
            continue;
        memcpy(p->count, k->count, sizeof p->count), p->n = k->n;
        if (env_probe_settle(p, r->level, r->reps)) { /* as it was: the same seeds gave these verdicts */
            r->nprobes++;
            s->busy[c]++;
            settled(s, p);
            return 0;
        }
        memset(p->count, 0, sizeof p->count), p->n = 0; /* not settled under these rules: run again */
    }
    struct scenario *sc = malloc(sizeof *sc);
    if (sc == NULL)
        return 1;
    int rc = load_probe(s->spec, r, c, p->text, sc, diag);
    if (rc != 0) {
        free(sc);
        return rc;
    }
    s->act[s->nact++] = (struct active){r->nprobes++, sc};
    s->busy[c]++;
    return 0;
}

/* Opens the next probes of every cell that waits for none. */
static int open_probes(struct study *s, struct scenario_diag *diag)
{
    for (size_t c = 0; c < s->res->ncells; c++) {
        double t[2];
        size_t n; /* probes taken from an earlier run settle at once: the cell may go on */
        while ((n = s->busy[c] ? 0 : env_bisect_next(&s->res->cells[c].bis, t)) > 0)
            for (size_t i = 0; i < n; i++) {
                int rc = open_probe(s, c, t[i], diag);
                if (rc != 0)
                    return rc;
            }
    }
    return 0;
}

bool env_contradicts(const struct env_probe *lower, const struct env_probe *higher)
{
    return !isnan(lower->hi) && !isnan(higher->lo) && higher->lo > lower->hi;
}

/* Checks a settled probe against its cell's other settled probes. */
static void check_monotone(struct study *s, const struct env_probe *p)
{
    struct env_cell *cell = &s->res->cells[p->cell];
    for (size_t i = 0; i < s->res->nprobes; i++) {
        const struct env_probe *q = &s->res->probes[i];
        if (q == p || q->cell != p->cell || !q->settled)
            continue;
        const struct env_probe *low = q->t < p->t ? q : p, *high = q->t < p->t ? p : q;
        if (env_contradicts(low, high)) {
            cell->flags |= ENV_NONMONOTONE;
            say(s, "not monotone at %s%s%s: recovery %.3g [%.3g, %.3g] at %s, above %.3g [%.3g, %.3g] at %s",
                s->res->load_key, s->res->load_key[0] ? "=" : "", cell->load, high->share, high->lo, high->hi,
                high->text, low->share, low->lo, low->hi, low->text);
        }
    }
}

/* A probe that settled: warnings, monotonicity, its cell's bisection. */
static void settled(struct study *s, struct env_probe *p)
{
    struct env_cell *cell = &s->res->cells[p->cell];
    if (p->count[VERDICT_UNDETERMINED] > 0)
        say(s, "%s=%s%s%s%s%s: %u of %u runs undetermined (too short after the trigger: lengthen run.duration)",
            s->res->trig.key, p->text, s->res->load_key[0] ? " at " : "", s->res->load_key,
            s->res->load_key[0] ? "=" : "", s->res->load_key[0] ? cell->load : "",
            p->count[VERDICT_UNDETERMINED], p->n);
    if (p->t == s->res->trig.lo && p->count[VERDICT_OVERLOADED] > 0 && p->count[VERDICT_OVERLOADED] == counted(p))
        cell->flags |= ENV_OVERLOAD; /* the load alone is too much */
    check_monotone(s, p);
    env_bisect_take(&cell->bis, p->t, p->recovers);
    if (cell->flags & ENV_OVERLOAD)
        cell->bis.done = true;
    s->busy[p->cell]--;
}

/* One round: the next batch of every active probe on the pool, tallied;
 * the probes that settle leave. Returns exp_batch's code. */
static int run_round(struct study *s, char *err, size_t errsz)
{
    const struct env_spec *spec = s->spec;
    unsigned batch = spec->batch ? spec->batch : ENV_DEFAULT_BATCH;
    size_t njobs = 0, cap = s->nact * batch, ncol = s->cols->n;
    const struct scenario **scs = malloc(cap * sizeof *scs);
    uint32_t *reps = malloc(cap * sizeof *reps);
    size_t *owner = malloc(cap * sizeof *owner);
    double *rows = malloc(cap * ncol * sizeof *rows);
    int rc = scs && reps && owner && rows ? 0 : 1;
    for (size_t a = 0; a < s->nact && rc == 0; a++) {
        const struct env_probe *p = &s->res->probes[s->act[a].probe];
        for (unsigned k = 0; k < batch && p->n + k < s->res->reps; k++)
            scs[njobs] = s->act[a].sc, reps[njobs] = p->n + k, owner[njobs++] = a;
    }
    if (rc == 0)
        rc = exp_batch(scs, reps, njobs, s->cols, spec->threads, spec->stop, rows, err, errsz);
    else
        snprintf(err, errsz, "out of memory for a batch of %zu runs", cap);
    for (size_t j = 0; j < njobs && rc == 0; j++)
        env_probe_add(&s->res->probes[s->act[owner[j]].probe], verdict_of(s->vcol, &rows[j * ncol]));
    s->res->runs += rc == 0 ? njobs : 0;
    size_t kept = 0;
    for (size_t a = 0; a < s->nact; a++) {
        struct env_probe *p = &s->res->probes[s->act[a].probe];
        if (rc == 0 && env_probe_settle(p, s->res->level, s->res->reps)) {
            settled(s, p);
            free(s->act[a].sc);
        } else {
            s->act[kept++] = s->act[a];
        }
    }
    s->nact = kept;
    free(scs), free(reps), free(owner), free(rows);
    return rc;
}

/* The bracket and crossing of every cell, from its settled probes. */
static void conclude(struct env_result *r)
{
    r->runs = 0; /* every probe's, an earlier run's (--resume) included */
    for (size_t i = 0; i < r->nprobes; i++)
        r->runs += r->probes[i].n;
    for (size_t c = 0; c < r->ncells; c++) {
        struct env_cell *cell = &r->cells[c];
        const struct env_bisect *b = &cell->bis;
        cell->flags |= b->where < 0 ? ENV_BELOW : b->where > 0 ? ENV_ABOVE : 0;
        for (size_t i = 0; i < r->nprobes; i++) {
            const struct env_probe *p = &r->probes[i];
            if (p->cell != c || !p->settled)
                continue;
            if (p->recovers && (b->where > 0 ? p->t == b->hi : b->where == 0 && p->t == b->a))
                cell->pa = (long)i;
            if (!p->recovers && (b->where < 0 ? p->t == b->lo : b->where == 0 && p->t == b->b))
                cell->pb = (long)i;
        }
        if (cell->flags & ENV_OVERLOAD)
            cell->pa = cell->pb = -1, cell->flags &= ~(unsigned)ENV_BELOW;
        if (cell->pa < 0 || cell->pb < 0)
            continue;
        const struct env_probe *pa = &r->probes[cell->pa], *pb = &r->probes[cell->pb];
        if (!pa->decided || !pb->decided)
            cell->flags |= ENV_UNDECIDED;
        if (isnan(pa->share) || isnan(pb->share)) { /* a probe no run of which could be judged: no crossing */
            cell->crossing = NAN;
            continue;
        }
        double f = pa->share > pb->share ? (pa->share - r->level) / (pa->share - pb->share) : 0.5;
        f = f < 0 ? 0 : f > 1 ? 1 : f;
        cell->crossing = pa->t + f * (pb->t - pa->t);
    }
}

/* Runs at the same resolution and reps on the full grid. */
static size_t grid_runs(const struct env_result *r)
{
    double steps = ceil((r->trig.hi - r->trig.lo) / r->resolution - 1e-9);
    return r->ncells * ((size_t)steps + 1) * r->reps;
}

/* ---- files ---- */

static void cell_fmt(FILE *f, double v)
{
    if (isnan(v))
        fputc(',', f);
    else
        fprintf(f, ",%.6g", v);
}

static int by_cell_then_trigger(const void *x, const void *y)
{
    const struct env_probe *a = x, *b = y;
    if (a->cell != b->cell)
        return a->cell < b->cell ? -1 : 1;
    return (a->t > b->t) - (a->t < b->t);
}

/* Every probe, by cell and trigger. */
static void write_probes(FILE *f, const struct env_result *r, const struct env_probe *sorted, size_t nsorted)
{
    fprintf(f, "cell,load,duration,trigger,load_value,trigger_value,runs");
    for (int v = 0; v < VERDICT_N; v++)
        fprintf(f, ",%s", verdict_names[v]);
    fprintf(f, ",share,share_lo,share_hi,decided,recovers\n");
    for (size_t i = 0; i < nsorted; i++) {
        const struct env_probe *p = &sorted[i];
        const struct env_cell *c = &r->cells[p->cell];
        fprintf(f, "%zu,%s,%s,%s,%.6g,%.6g,%u", p->cell, c->load, c->duration, p->text, c->x, p->t, p->n);
        for (int v = 0; v < VERDICT_N; v++)
            fprintf(f, ",%u", p->count[v]);
        cell_fmt(f, p->share), cell_fmt(f, p->lo), cell_fmt(f, p->hi);
        fprintf(f, ",%d,%d\n", p->decided, p->recovers);
    }
}

static const struct {
    unsigned flag;
    const char *name;
} flag_names[] = {{ENV_BELOW, "below-range"},      {ENV_ABOVE, "above-range"}, {ENV_NONMONOTONE, "non-monotone"},
                  {ENV_OVERLOAD, "overloaded"},     {ENV_UNDECIDED, "undecided"}};

/* Per cell: the bracket, the crossing and the flags. */
static void write_boundary(FILE *f, const struct env_result *r)
{
    fprintf(f, "cell,load,duration,load_value,recovered_at,failed_at,recovered_value,failed_value,crossing,"
               "probes,runs,flags\n");
    for (size_t c = 0; c < r->ncells; c++) {
        const struct env_cell *cell = &r->cells[c];
        const struct env_probe *pa = cell->pa >= 0 ? &r->probes[cell->pa] : NULL;
        const struct env_probe *pb = cell->pb >= 0 ? &r->probes[cell->pb] : NULL;
        size_t np = 0, runs = 0;
        for (size_t i = 0; i < r->nprobes; i++)
            if (r->probes[i].cell == c)
                np++, runs += r->probes[i].n;
        fprintf(f, "%zu,%s,%s,%.6g,%s,%s", c, cell->load, cell->duration, cell->x, pa ? pa->text : "",
                pb ? pb->text : "");
        cell_fmt(f, pa ? pa->t : NAN), cell_fmt(f, pb ? pb->t : NAN), cell_fmt(f, cell->crossing);
        fprintf(f, ",%zu,%zu,", np, runs);
        for (size_t k = 0, w = 0; k < sizeof flag_names / sizeof *flag_names; k++)
            if (cell->flags & flag_names[k].flag)
                fprintf(f, "%s%s", w++ ? ";" : "", flag_names[k].name);
        fputc('\n', f);
    }
}

/* What identifies the study: envelope.csv's first lines, which --resume
 * requires unchanged (the effective scenario's fingerprint, exp_fingerprint,
 * and every option that changes a probe or the bisection). plot reads the
 * keys and the level. */
static void write_identity(FILE *f, const struct env_spec *spec, const struct env_result *r)
{
    fprintf(f, "field,value\nversion,%s\nformat,1\nscenario,%s\nfingerprint,%016llx\nload,%s\nduration,%s\n"
               "trigger,%s\nload_key,%s\nduration_key,%s\ntrigger_key,%s\nlevel,%.6g\nreps,%u\nbatch,%u\n"
               "resolution,%.6g\n",
            RS_VERSION, spec->scenario, (unsigned long long)r->fingerprint, spec->load ? spec->load : "",
            spec->duration ? spec->duration : "", spec->trigger, r->load_key, r->duration_key, r->trig.key, r->level,
            r->reps, spec->batch ? spec->batch : ENV_DEFAULT_BATCH, r->resolution);
}

/* The probes settled so far (every one when complete), and envelope.csv;
 * boundary.csv when complete. Each file renamed into place on its own: a
 * crash leaves the previous round's or this round's, both consistent. */
static int write_files(const struct env_spec *spec, const struct env_result *r, bool complete, char *err,
                       size_t errsz)
{
    struct env_probe *sorted = malloc((r->nprobes ? r->nprobes : 1) * sizeof *sorted);
    if (sorted == NULL) {
        snprintf(err, errsz, "out of memory for %zu probes", r->nprobes);
        return 1;
    }
    size_t n = 0;
    for (size_t i = 0; i < r->nprobes; i++)
        if (r->probes[i].settled)
            sorted[n++] = r->probes[i];
    qsort(sorted, n, sizeof *sorted, by_cell_then_trigger);
    struct output_file of;
    int rc = output_file_open(&of, spec->dir, spec->probes_file, err, errsz) != 0;
    if (rc == 0)
        write_probes(of.f, r, sorted, n), rc = output_file_commit(&of, err, errsz) != 0;
    free(sorted);
    if (rc == 0 && complete && (rc = output_file_open(&of, spec->dir, "boundary.csv", err, errsz) != 0) == 0)
        write_boundary(of.f, r), rc = output_file_commit(&of, err, errsz) != 0;
    if (rc == 0 && (rc = output_file_open(&of, spec->dir, "envelope.csv", err, errsz) != 0) == 0) {
        write_identity(of.f, spec, r);
        fprintf(of.f, "complete,%d\nruns,%zu\ngrid_runs,%zu\n", complete, r->runs, r->grid_runs);
        rc = output_file_commit(&of, err, errsz) != 0;
    }
    return rc;
}

/* ---- --resume: the probes of an earlier, unfinished run ---- */

#define ENV_MAX_META_BYTES ((size_t)1 << 16)
#define ENV_MAX_PROBES_BYTES ((size_t)1 << 28)

/* DIR/envelope.csv must begin with this study's identity. 0, or 2 with
 * the first line that differs. */
static int check_identity(const struct env_spec *spec, const struct env_result *r, char *err, size_t errsz)
{
    char *want = NULL, path[PATH_MAX + 64];
    size_t len = 0;
    FILE *f = open_memstream(&want, &len);
    if (f == NULL) {
        snprintf(err, errsz, "out of memory for the identity");
        return 1;
    }
    write_identity(f, spec, r);
    fclose(f);
    struct csv c = {0};
    outdir_join(path, sizeof path, spec->dir, "envelope.csv");
    int rc = csv_open(&c, path, ENV_MAX_META_BYTES, err, errsz);
    if (rc == 1) { /* nothing to resume: a fresh start */
        free(want);
        return 0;
    }
    rc = rc != 0 ? 2 : 0;
    bool opened = rc == 0;
    unsigned line = 1;
    for (const char *a = want, *b = rc == 0 ? c.buf : ""; rc == 0 && *a; line++) {
        size_t na = strcspn(a, "\n"), nb = strcspn(b, "\n");
        if (na != nb || strncmp(a, b, na) != 0 || b[nb] != '\n') {
            snprintf(err, errsz, "%s:%u: written for another study (%.*s; this one has %.*s): run without --resume "
                                 "into a new directory", path, line, (int)(nb > 120 ? 120 : nb), b, (int)na, a);
            rc = 2;
        }
        a += na + 1, b += nb + (b[nb] != '\0');
    }
    if (opened)
        csv_close(&c);
    free(want);
    return rc;
}

/* One row of the probes file into p, checked against this study. */
static bool take_row(const struct env_result *r, char **f, struct env_probe *p)
{
    uint64_t cell, runs, k, sum = 0;
    if (!csv_uint(f[0], r->ncells - 1, &cell) || strcmp(f[1], r->cells[cell].load) != 0 ||
        strcmp(f[2], r->cells[cell].duration) != 0 || strlen(f[3]) >= sizeof p->text || f[3][0] == '\0' ||
        !csv_uint(f[6], r->reps, &runs))
        return false;
    *p = (struct env_probe){.cell = cell, .n = (unsigned)runs};
    snprintf(p->text, sizeof p->text, "%s", f[3]);
    for (int v = 0; v < VERDICT_N; v++) {
        if (!csv_uint(f[7 + v], r->reps, &k))
            return false;
        p->count[v] = (unsigned)k, sum += k;
    }
    return sum == runs;
}

/* The settled probes of DIR's probes file into *known. 0, or 2 naming
 * the file and line. */
static int read_known(const struct env_spec *spec, const struct env_result *r, struct env_probe **known,
                      size_t *nknown, char *err, size_t errsz)
{
    char path[PATH_MAX + 64], *f[18];
    bool more;
    struct csv c;
    outdir_join(path, sizeof path, spec->dir, spec->probes_file);
    int rc = csv_open(&c, path, ENV_MAX_PROBES_BYTES, err, errsz);
    if (rc == 1)
        return 0; /* no probe settled yet */
    if (rc != 0)
        return 2;
    size_t cap = 0;
    for (size_t n = csv_next(&c, f, 18, &more); rc == 0 && (n = csv_next(&c, f, 18, &more)) > 0;) {
        if (*nknown == cap) {
            struct env_probe *k = realloc(*known, (cap = cap ? 2 * cap : 64) * sizeof *k);
            if (k == NULL) {
                rc = 1, snprintf(err, errsz, "out of memory for %s", path);
                break;
            }
            *known = k;
        }
        if (n != 17 || more || c.torn || !take_row(r, f, &(*known)[*nknown]))
            rc = 2, snprintf(err, errsz, "%s:%u: not a probe of this study", path, c.line);
        for (size_t i = 0; rc == 0 && i < *nknown; i++)
            if ((*known)[i].cell == (*known)[*nknown].cell && strcmp((*known)[i].text, (*known)[*nknown].text) == 0)
                rc = 2, snprintf(err, errsz, "%s:%u: the probe %s twice", path, c.line, (*known)[i].text);
        *nknown += rc == 0;
    }
    csv_close(&c);
    return rc;
}

/* ---- the run ---- */

/* Every cell's bisection, round by round; after each round the probes
 * settled so far are on disk (--resume takes them). */
static int bisect_all(struct study *s, struct scenario_diag *diag, char *err, size_t errsz)
{
    int rc = 0;
    for (;;) {
        if ((rc = open_probes(s, diag)) == 1)
            snprintf(err, errsz, "out of memory for the probes");
        if (rc != 0 || s->nact == 0)
            break;
        if ((rc = run_round(s, err, errsz)) == 0 && s->spec->dir)
            rc = write_files(s->spec, s->res, false, err, errsz);
        if (rc != 0)
            break;
    }
    for (size_t a = 0; a < s->nact; a++)
        free(s->act[a].sc);
    return rc;
}

/* The directory: checked, then with --resume the earlier run's identity and
 * probes; prepared (our files kept with --resume). */
static int take_dir(const struct env_spec *spec, struct study *s, char *err, size_t errsz)
{
    int rc = 0;
    if (spec->dir == NULL)
        return 0;
    if (spec->resume && (rc = check_identity(spec, s->res, err, errsz)) == 0)
        rc = read_known(spec, s->res, &s->known, &s->nknown, err, errsz);
    if (rc == 0)
        rc = outdir_prepare(spec->dir, spec->force, spec->resume, err, errsz);
    if (rc == 0 && !spec->resume) /* the identity on disk before the first run: --resume knows the study */
        rc = write_files(spec, s->res, false, err, errsz);
    return rc;
}

int env_run(const struct env_spec *spec, struct scenario_diag *diag, struct env_result *res, char *err,
            size_t errsz)
{
    struct summary_cols cols = {0};
    memset(res, 0, sizeof *res);
    int rc = check_inputs(spec, res, &cols, diag, err, errsz);
    struct study s = {.spec = spec, .res = res, .cols = &cols,
                      .vcol = summary_cols_find(&cols, "verdict")};
    if (rc == 0) {
        res->grid_runs = grid_runs(res);
        s.act = calloc(2 * res->ncells, sizeof *s.act);
        s.busy = calloc(res->ncells, sizeof *s.busy);
        if (s.act == NULL || s.busy == NULL)
            rc = 1, snprintf(err, errsz, "out of memory for %zu cells", res->ncells);
    }
    if (rc == 0)
        rc = take_dir(spec, &s, err, errsz);
    if (rc == 0)
        rc = bisect_all(&s, diag, err, errsz);
    if (rc == 0) {
        conclude(res);
        rc = spec->dir ? write_files(spec, res, true, err, errsz) : 0;
    }
    free(s.act);
    free(s.busy);
    free(s.known);
    summary_cols_fini(&cols);
    return rc;
}

/* ---- tune's margins ---- */

int env_margins(const struct env_spec *base, const struct exp_result *r, double *margin, double *fails,
                struct scenario_diag *diag, char *err, size_t errsz)
{
    const char **sets = malloc((base->nsets + EXP_MAX_AXES) * sizeof *sets);
    char(*own)[300] = malloc(EXP_MAX_AXES * sizeof *own);
    int rc = sets && own ? 0 : 1;
    if (rc != 0)
        snprintf(err, errsz, "out of memory for the margins");
    for (size_t p = 0; p < r->npoints && rc == 0; p++) {
        struct env_spec spec = *base;
        memcpy(sets, base->sets, base->nsets * sizeof *sets);
        for (size_t k = 0; k < r->naxes; k++) {
            snprintf(own[k], sizeof own[k], "%.127s=%.127s", r->axis_keys[k], r->values[p][k]);
            sets[base->nsets + k] = own[k];
        }
        spec.sets = sets, spec.nsets = base->nsets + r->naxes;
        spec.load = spec.duration = spec.dir = NULL;
        struct env_result res;
        rc = env_run(&spec, diag, &res, err, errsz);
        const struct env_cell *c = rc == 0 ? &res.cells[0] : NULL;
        margin[p] = c && c->pa >= 0 ? res.probes[c->pa].t : NAN;
        fails[p] = c && c->pb >= 0 ? res.probes[c->pb].t : NAN;
        env_result_fini(&res);
    }
    free(sets), free(own);
    return rc;
}
