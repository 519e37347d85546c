/*
 * hysteresis — the load ramped up and down, and where goodput tips and
 * returns. See hysteresis.h.
 */
#define _POSIX_C_SOURCE 200809L

#include "hysteresis.h"

#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "metrics.h"
#include "outdir.h"
#include "sim.h"
#include "trace.h"
#include "units.h"

const char *const hyst_leg_names[HYST_NLEGS] = {"lead", "up", "hold", "down", "tail"};
const char *const hyst_state_names[HYST_NSTATES] = {"below", "steady", "returned", "late", "stuck"};

/* ---- --load ---- */

/* The keys --load ramps; adding one is adding an entry (and its phases). */
static const char *const load_keys[] = {"load.rate", NULL};

int hyst_parse_load(const char *text, char *key, size_t keysz, double *a, double *b, char *err, size_t errsz)
{
    const char *eq = strchr(text, '=');
    const char *dots = eq ? strstr(eq, "..") : NULL;
    if (eq == NULL || dots == NULL) {
        snprintf(err, errsz, "--load %.200s: expected KEY=A..B, such as load.rate=5/s..15/s", text);
        return 2;
    }
    snprintf(key, keysz, "%.*s", (int)(eq - text < 63 ? eq - text : 63), text);
    bool known = false;
    for (size_t i = 0; load_keys[i]; i++)
        known = known || strcmp(key, load_keys[i]) == 0;
    if (!known || (size_t)(eq - text) >= keysz) {
        snprintf(err, errsz, "--load %.200s: the key '%s' cannot be ramped; allowed: load.rate (an open loop's rate)",
                 text, key);
        return 2;
    }
    char lo[64], hi[64];
    snprintf(lo, sizeof lo, "%.*s", (int)(dots - eq - 1 < 63 ? dots - eq - 1 : 63), eq + 1);
    snprintf(hi, sizeof hi, "%s", dots + 2);
    if (!units_parse_rate(lo, a) || !units_parse_rate(hi, b) || !(*a > 0) || *b > 1e9) {
        snprintf(err, errsz, "--load %.200s: A and B must be rates above 0 and at most 1e9/s, such as "
                 "load.rate=5/s..15/s", text);
        return 2;
    }
    if (!(*a < *b)) {
        snprintf(err, errsz, "--load %.200s: the ramp goes up from A to B: A must be below B", text);
        return 2;
    }
    return 0;
}

/* ---- the ramped scenario ---- */

/* The base scenario's phases are replaced: its text without them, then
 * the lead, up, hold and down as phases (the tail is the base rate). */
static char *ramped_text(const struct scenario *base, const struct hyst_result *r)
{
    char *text = NULL, t0[64], t1[64], t2[64], t3[64];
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (f == NULL)
        return NULL;
    struct scenario *c = malloc(sizeof *c);
    if (c == NULL) {
        fclose(f), free(text);
        return NULL;
    }
    *c = *base;
    c->nphases = 0;
    int bad = scenario_write_ini(c, f);
    free(c);
    units_format_duration(r->lead, t0, sizeof t0);
    units_format_duration(r->lead + r->ramp, t1, sizeof t1);
    units_format_duration(r->lead + r->ramp + r->hold, t2, sizeof t2);
    units_format_duration(r->lead + 2 * r->ramp + r->hold, t3, sizeof t3);
    fprintf(f, "\n[phase up]\nstart = %s\nend = %s\nrate = ramp(%.17g/s, %.17g/s)\n", t0, t1, r->a, r->b);
    if (r->hold > 0)
        fprintf(f, "\n[phase hold]\nstart = %s\nend = %s\nrate = %.17g/s\n", t1, t2, r->b);
    fprintf(f, "\n[phase down]\nstart = %s\nend = %s\nrate = ramp(%.17g/s, %.17g/s)\n", t2, t3, r->b, r->a);
    if (fclose(f) != 0 || bad) {
        free(text);
        return NULL;
    }
    return text;
}

/* What a ramp cannot be applied to; NULL when it can. */
static const char *unrampable(const struct scenario *sc)
{
    if (sc->model != LOAD_OPEN)
        return "is a closed loop (load.model = closed): load.rate does not set its load";
    if (sc->trace[0] != '\0')
        return "replays a trace (load.trace): its arrivals do not follow load.rate";
    if (sc->sine_amplitude > 0)
        return "shapes its rate (load.shape = sine): the offered load would not be the ramp's";
    return NULL;
}

/* The timeline and windows from spec and the base scenario's bucket. */
static int timeline(const struct hyst_spec *spec, const struct scenario *base, struct hyst_result *r, char *err,
                    size_t errsz)
{
    r->ramp = spec->ramp ? spec->ramp : HYST_DEFAULT_RAMP;
    r->hold = spec->hold;
    rs_time w = spec->window ? spec->window : HYST_DEFAULT_WINDOW, bk = base->bucket;
    r->window = (w + bk - 1) / bk * bk; /* whole buckets */
    if (r->ramp / r->window < HYST_MIN_WINDOWS) {
        char a[64], b[64];
        snprintf(err, errsz, "--ramp %s: a ramp must span at least %d windows of %s (--window)",
                 units_format_duration(r->ramp, a, sizeof a), HYST_MIN_WINDOWS,
                 units_format_duration(r->window, b, sizeof b));
        return 2;
    }
    r->lead = r->ramp / 10 / r->window * r->window;
    r->tail = r->ramp / 5 / r->window * r->window;
    r->lead = r->lead < HYST_HOLD * r->window ? HYST_HOLD * r->window : r->lead;
    r->tail = r->tail < 2 * HYST_HOLD * r->window ? 2 * HYST_HOLD * r->window : r->tail;
    r->duration = r->lead + 2 * r->ramp + r->hold + r->tail;
    r->nwin = (size_t)(r->duration / r->window);
    if (r->nwin > HYST_MAX_WINDOWS) {
        snprintf(err, errsz, "--ramp and --window: %zu windows in a run; the limit is %u (a longer --window)",
                 r->nwin, HYST_MAX_WINDOWS);
        return 2;
    }
    return 0;
}

/* The ramp's rate at t (seconds from the start; per second). */
static double rate_at(const struct hyst_result *r, double t)
{
    double up = units_seconds(r->lead), top = units_seconds(r->lead + r->ramp);
    double down = units_seconds(r->lead + r->ramp + r->hold), end = units_seconds(r->lead + 2 * r->ramp + r->hold);
    if (t <= up || t >= end)
        return r->a;
    if (t < top)
        return r->a + (r->b - r->a) * (t - up) / (top - up);
    if (t <= down)
        return r->b;
    return r->b - (r->b - r->a) * (t - down) / (end - down);
}

/* Each window's leg and its mean load: the piecewise linear rate
 * integrated exactly (trapezoids between its corners). */
static void windows_fill(struct hyst_result *r)
{
    double corner[4] = {units_seconds(r->lead), units_seconds(r->lead + r->ramp),
                        units_seconds(r->lead + r->ramp + r->hold), units_seconds(r->lead + 2 * r->ramp + r->hold)};
    double w = units_seconds(r->window);
    for (size_t i = 0; i < r->nwin; i++) {
        double t0 = (double)i * w, t1 = t0 + w, x = t0, area = 0;
        for (int k = 0; k <= 4; k++) {
            double y = k < 4 ? corner[k] : t1;
            if (y > x && y <= t1)
                area += (rate_at(r, x) + rate_at(r, y)) / 2 * (y - x), x = y;
        }
        r->load[i] = area / w;
        double mid = t0 + w / 2;
        int leg = HYST_LEAD;
        while (leg < HYST_TAIL && mid >= corner[leg])
            leg++; /* lead, up, hold (empty without one), down, tail */
        r->leg[i] = (enum hyst_leg)leg;
    }
}

int hyst_prepare(const struct hyst_spec *spec, struct hyst_result *r, struct scenario_diag *diag, char *err,
                 size_t errsz)
{
    memset(r, 0, sizeof *r);
    if (hyst_parse_load(spec->load, r->key, sizeof r->key, &r->a, &r->b, err, errsz) != 0)
        return 2;
    struct scenario *base = malloc(sizeof *base);
    r->sc = malloc(sizeof *r->sc);
    if (base == NULL || r->sc == NULL) {
        free(base);
        snprintf(err, errsz, "out of memory for the scenario");
        return 2;
    }
    int rc = scenario_load(base, spec->scenario, spec->sets, spec->nsets, diag) ? 2 : 0;
    const char *why = rc == 0 ? unrampable(base) : NULL;
    if (why != NULL) {
        snprintf(err, errsz, "hysteresis %s: the scenario %s; --load ramps an open loop's load.rate", spec->scenario, why);
        rc = 2;
    }
    if (rc == 0)
        rc = timeline(spec, base, r, err, errsz);
    char *text = rc == 0 ? ramped_text(base, r) : NULL;
    if (rc == 0 && text == NULL) {
        snprintf(err, errsz, "out of memory for the ramped scenario");
        rc = 2;
    }
    char rate[64], dur[64], source[128];
    snprintf(rate, sizeof rate, "load.rate=%.17g/s", r->a);
    snprintf(dur, sizeof dur, "run.duration=%s", units_format_duration(r->duration, source, sizeof source));
    const char *const sets[] = {rate, dur};
    snprintf(source, sizeof source, "%.40s as ramped by hysteresis", base->name);
    if (rc == 0 && scenario_load_text(r->sc, text, source, sets, 2, diag) != 0)
        rc = 2;
    free(text);
    free(base);
    return rc;
}

/* ---- runs ---- */

struct pool {
    const struct hyst_spec *spec;
    struct hyst_result *r;
    atomic_size_t next;
    atomic_int failed;
    pthread_mutex_t lock;
    char err[512];
};

/* Replication rep's windows from its buckets (counts per second). */
static void take_windows(struct hyst_result *r, size_t rep, const struct metrics *m)
{
    size_t per = (size_t)(r->window / m->bucket_ns);
    double w = units_seconds(r->window);
    for (size_t i = 0; i < r->nwin; i++) {
        uint64_t off = 0, ok = 0;
        for (size_t j = i * per; j < (i + 1) * per && j < m->nbuckets; j++)
            off += m->b[j].offered, ok += m->b[j].outcomes[OUT_OK];
        r->offered[rep * r->nwin + i] = (double)off / w;
        r->goodput[rep * r->nwin + i] = (double)ok / w;
    }
}

/* Runs replication rep: 0, 1 (failed: message) or 3 (stopped). */
static int run_one(struct pool *p, size_t rep, char *err, size_t errsz)
{
    struct sim *s = trace_sim_create(p->r->sc, (uint32_t)rep, err, errsz);
    if (s == NULL)
        return 1;
    sim_set_stop(s, p->spec->stop);
    int rc = sim_run(s, NULL, NULL, err, errsz) != 0 ? 1 : 0;
    if (rc == 0 && sim_limit(s) != NULL) {
        snprintf(err, errsz, "the run was %s", sim_limit(s));
        rc = 1;
    }
    if (rc == 0 && !sim_complete(s))
        rc = 3;
    if (rc == 0)
        take_windows(p->r, rep, sim_metrics(s));
    sim_destroy(s);
    return rc;
}

static void *worker(void *arg)
{
    struct pool *p = arg;
    for (;;) {
        size_t rep = atomic_fetch_add(&p->next, 1);
        if (rep >= p->r->reps || atomic_load(&p->failed) || (p->spec->stop && *p->spec->stop))
            break;
        char err[400] = "";
        int rc = run_one(p, rep, err, sizeof err);
        if (rc != 0) {
            pthread_mutex_lock(&p->lock);
            if (rc == 1 && atomic_load(&p->failed) != 1)
                snprintf(p->err, sizeof p->err, "replication %zu: %s", rep, err);
            if (atomic_load(&p->failed) != 1)
                atomic_store(&p->failed, rc);
            pthread_mutex_unlock(&p->lock);
            break;
        }
    }
    return NULL;
}

/* Whether windows i .. i + HYST_HOLD − 1 of rep are all out of band
 * (out) or all in band (!out); false when they run past the end. */
static bool run_of(const struct hyst_result *r, size_t rep, size_t i, bool out)
{
    if (i + HYST_HOLD > r->nwin)
        return false;
    for (size_t k = i; k < i + HYST_HOLD; k++) {
        double off = r->offered[rep * r->nwin + k], ok = r->goodput[rep * r->nwin + k];
        if ((ok < (1 - HYST_TOLERANCE) * off) != out)
            return false;
    }
    return true;
}

/* One replication's tip and return (hysteresis.h). */
static void thresholds(const struct hyst_result *r, size_t rep, struct hyst_rep *t)
{
    *t = (struct hyst_rep){.state = HYST_STEADY, .tip = NAN, .ret = NAN, .gap = NAN};
    size_t first = 0, i;
    while (first < r->nwin && r->leg[first] == HYST_LEAD)
        first++;
    if (first >= HYST_HOLD && run_of(r, rep, first - HYST_HOLD, true)) {
        t->state = HYST_BELOW;
        return;
    }
    for (i = first; i < r->nwin && r->leg[i] <= HYST_HOLD_B && isnan(t->tip); i++)
        if (run_of(r, rep, i, true))
            t->tip = r->load[i];
    if (isnan(t->tip))
        return;
    t->state = HYST_STUCK;
    size_t from = i + HYST_HOLD - 1; /* after the windows that made the tip, and the peak */
    while (from < r->nwin && r->leg[from] <= HYST_HOLD_B)
        from++;
    for (i = from; i < r->nwin && t->state == HYST_STUCK; i++)
        if (run_of(r, rep, i, false))
            t->state = r->leg[i] == HYST_TAIL ? HYST_LATE : HYST_RETURNED, t->ret = r->load[i];
    if (t->state == HYST_RETURNED)
        t->gap = t->tip - t->ret;
    else
        t->ret = NAN;
}

/* The thresholds of every replication done, and their statistics. */
static void summarise(struct hyst_result *r)
{
    double *x = malloc(3 * r->reps * sizeof *x);
    if (x == NULL) { /* STYLE: out of memory aborts */
        fprintf(stderr, "retrystorm: out of memory for %zu thresholds\n", 3 * r->reps);
        abort();
    }
    for (size_t k = 0; k < r->done; k++) {
        thresholds(r, k, &r->rep[k]);
        x[3 * k] = r->rep[k].tip, x[3 * k + 1] = r->rep[k].ret, x[3 * k + 2] = r->rep[k].gap;
        r->count[r->rep[k].state]++;
    }
    stats_of(x, r->done, 3, &r->tip);
    stats_of(x + 1, r->done, 3, &r->ret);
    stats_of(x + 2, r->done, 3, &r->gap);
    free(x);
}

int hyst_run(const struct hyst_spec *spec, struct hyst_result *r, char *err, size_t errsz)
{
    r->reps = spec->reps ? spec->reps : 1;
    r->load = calloc(r->nwin, sizeof *r->load);
    r->leg = calloc(r->nwin, sizeof *r->leg);
    r->offered = calloc(r->reps * r->nwin, sizeof *r->offered);
    r->goodput = calloc(r->reps * r->nwin, sizeof *r->goodput);
    r->rep = calloc(r->reps, sizeof *r->rep);
    if (!r->load || !r->leg || !r->offered || !r->goodput || !r->rep) {
        snprintf(err, errsz, "out of memory for %zu replications of %zu windows", r->reps, r->nwin);
        return 1;
    }
    windows_fill(r);
    struct pool p = {.spec = spec, .r = r};
    atomic_init(&p.next, 0);
    atomic_init(&p.failed, 0);
    pthread_mutex_init(&p.lock, NULL);
    unsigned nt = spec->threads ? spec->threads : 1, started = 0;
    nt = nt > r->reps ? (unsigned)r->reps : nt > 256 ? 256 : nt;
    pthread_t th[256];
    for (unsigned i = 0; i < nt; i++)
        started += pthread_create(&th[started], NULL, worker, &p) == 0;
    if (started == 0)
        worker(&p);
    for (unsigned i = 0; i < started; i++)
        pthread_join(th[i], NULL);
    pthread_mutex_destroy(&p.lock);
    int failed = atomic_load(&p.failed);
    if (failed == 1) {
        snprintf(err, errsz, "%s", p.err);
        return 1;
    }
    r->done = failed == 0 && !(spec->stop && *spec->stop) ? r->reps : 0;
    if (r->done == 0)
        return 3;
    summarise(r);
    return 0;
}

/* ---- outputs ---- */

/* A number, or an empty cell for NaN. */
static void cell(FILE *f, const char *sep, double x)
{
    if (isnan(x))
        fprintf(f, "%s", sep);
    else
        fprintf(f, "%s%.6g", sep, x);
}

static void write_windows(FILE *f, const struct hyst_result *r)
{
    fprintf(f, "rep,t,leg,load,offered,goodput,ok_ratio\n");
    for (size_t k = 0; k < r->done; k++)
        for (size_t i = 0; i < r->nwin; i++) {
            double off = r->offered[k * r->nwin + i], ok = r->goodput[k * r->nwin + i];
            fprintf(f, "%zu,%.6g,%s,%.6g,%.6g,%.6g", k, (double)i * units_seconds(r->window),
                    hyst_leg_names[r->leg[i]], r->load[i], off, ok);
            cell(f, ",", off > 0 ? ok / off : NAN);
            fputc('\n', f);
        }
}

static void write_thresholds(FILE *f, const struct hyst_result *r)
{
    fprintf(f, "rep,tip,return,gap,state\n");
    for (size_t k = 0; k < r->done; k++) {
        fprintf(f, "%zu", k);
        cell(f, ",", r->rep[k].tip), cell(f, ",", r->rep[k].ret), cell(f, ",", r->rep[k].gap);
        fprintf(f, ",%s\n", hyst_state_names[r->rep[k].state]);
    }
    const struct stats *s[3] = {&r->tip, &r->ret, &r->gap};
    fprintf(f, "mean");
    for (int j = 0; j < 3; j++)
        cell(f, ",", s[j]->mean);
    fprintf(f, ",\nhw");
    for (int j = 0; j < 3; j++)
        cell(f, ",", s[j]->hw);
    fprintf(f, ",\nn,%zu,%zu,%zu,\n", s[0]->n, s[1]->n, s[2]->n);
}

int hyst_write(const char *dir, const struct hyst_result *r, char *err, size_t errsz)
{
    static const char *const names[] = {"hysteresis.csv", "thresholds.csv", "scenario.ini"};
    for (int k = 0; k < 3; k++) {
        struct output_file of;
        if (output_file_open(&of, dir, names[k], err, errsz) != 0)
            return -1;
        if (k == 0)
            write_windows(of.f, r);
        else if (k == 1)
            write_thresholds(of.f, r);
        else
            scenario_write_ini(r->sc, of.f);
        if (output_file_commit(&of, err, errsz) != 0)
            return -1;
    }
    return 0;
}

/* "12.3/s ± 0.4 (20 of 20)", or what happened instead. */
static void say(FILE *f, const char *what, const struct stats *s, size_t n, size_t of, const char *none)
{
    fprintf(f, "  %-7s", what);
    if (s->n == 0)
        fprintf(f, "none: %s\n", none);
    else if (isnan(s->hw))
        fprintf(f, "%.4g/s (%zu of %zu replications)\n", s->mean, n, of);
    else
        fprintf(f, "%.4g/s ± %.2g (95 %%; %zu of %zu replications)\n", s->mean, s->hw, n, of);
}

void hyst_print(FILE *f, const char *scenario, const struct hyst_result *r)
{
    char ramp[64], hold[64], win[64], never[200], atleast[160];
    const size_t *c = r->count;
    fprintf(f, "%s: %s ramped %.4g/s → %.4g/s over %s, held %s, and back; windows of %s, %zu replication%s\n",
            scenario, r->key, r->a, r->b, units_format_duration(r->ramp, ramp, sizeof ramp),
            units_format_duration(r->hold, hold, sizeof hold), units_format_duration(r->window, win, sizeof win),
            r->done, r->done == 1 ? "" : "s");
    if (c[HYST_BELOW] > 0)
        fprintf(f, "  out of band already at A = %.4g/s in %zu replication%s: lower A\n", r->a, c[HYST_BELOW],
                c[HYST_BELOW] == 1 ? "" : "s");
    snprintf(never, sizeof never, "goodput did not come back within 10 %% of the offered load above A = %.4g/s "
             "(%zu only in the tail at A, %zu never)", r->a, c[HYST_LATE], c[HYST_STUCK]);
    snprintf(atleast, sizeof atleast, "no return above A: the gap is at least tip - A = %.4g/s", r->tip.mean - r->a);
    say(f, "tip", &r->tip, r->tip.n, r->done, "goodput never fell below 90 % of the offered load on the way up");
    say(f, "return", &r->ret, r->ret.n, r->done, r->tip.n ? never : "nothing to return from");
    say(f, "gap", &r->gap, r->gap.n, r->done, r->tip.n ? atleast : "needs a tip and a return");
    if (r->ret.n > 0 && c[HYST_LATE] + c[HYST_STUCK] > 0)
        fprintf(f, "  not in the means: %zu replication%s came back only in the tail at A, %zu never\n",
                c[HYST_LATE], c[HYST_LATE] == 1 ? "" : "s", c[HYST_STUCK]);
}

void hyst_result_fini(struct hyst_result *r)
{
    free(r->sc), free(r->load), free(r->leg), free(r->offered), free(r->goodput), free(r->rep);
    memset(r, 0, sizeof *r);
}
