/*
 * verdict — the run's verdict from its windows. See verdict.h.
 */
#include "verdict.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

const char *const verdict_names[VERDICT_N] = {"stable", "overloaded", "recovered", "metastable",
                                              "undetermined"};
const char *const verdict_signal_names[VS_N] = {"goodput", "queue", "in flight", "p99"};

/* Per signal: the floor of the band's width (queue and in flight: one
 * request), the unit it is printed in, and whether more is better. */
static const struct {
    double floor, scale;
    const char *unit;
    bool up_is_good;
} sig[VS_N] = {
    [VS_GOODPUT] = {0, 1, "/s", true},
    [VS_QUEUE] = {1, 1, "", false},
    [VS_INFLIGHT] = {1, 1, "", false},
    [VS_P99] = {0, 1e3, " ms", false},
};

/* The outcomes that answer a request as the service meant to (not given
 * up on: exhausted, deadline, throttled, breaker): the baseline keeps up
 * when they come as fast as requests are offered. */
static const enum outcome answered_outcomes[] = {OUT_OK, OUT_BUSINESS, OUT_FAILED};

size_t verdict_window_buckets(const struct metrics *m, rs_time window)
{
    size_t b = (size_t)((window + m->bucket_ns - 1) / m->bucket_ns);
    return b ? b : 1;
}

/* Window w's signals into x (p99 NaN when nothing ended), and its offered
 * rate. */
static void signals(const struct metrics *m, size_t w, double *x, double *offered)
{
    double ok = 0, off = 0, q = 0, f = 0, len = 0;
    for (size_t i = w * m->win_buckets; i < (w + 1) * m->win_buckets; i++) {
        ok += (double)m->b[i].outcomes[OUT_OK];
        off += (double)m->b[i].offered;
        q += m->b[i].area_queue;
        f += m->b[i].area_inflight;
        len += metrics_bucket_len(m, i);
    }
    x[VS_GOODPUT] = ok / len;
    x[VS_QUEUE] = q / (len * 1e9);
    x[VS_INFLIGHT] = f / (len * 1e9);
    x[VS_P99] = m->win_p99[w] >= 0 ? m->win_p99[w] : NAN;
    *offered = off / len;
}

static double win_start_s(const struct metrics *m, size_t w)
{
    return units_seconds((rs_time)(w * m->win_buckets) * m->bucket_ns);
}

/* The first window wholly at or after t, and the windows wholly before t. */
static size_t first_at(const struct metrics *m, rs_time t)
{
    rs_time len = (rs_time)m->win_buckets * m->bucket_ns;
    return (size_t)((t + len - 1) / len);
}
static size_t before(const struct metrics *m, rs_time t)
{
    size_t n = (size_t)(t / ((rs_time)m->win_buckets * m->bucket_ns));
    return n < m->nwin ? n : m->nwin;
}

struct moments {
    double mean[VS_N], sd[VS_N], offered;
};

/* The mean of each signal over windows [a, b) into x (p99: of the windows
 * that have one; NaN when none has), and whether in flight grew across
 * them (the last window's above the first's). */
static bool span(const struct metrics *m, size_t a, size_t b, double *x, double *offered)
{
    double y[VS_N], off, n[VS_N] = {0}, first_f = 0;
    for (int k = 0; k < VS_N; k++)
        x[k] = 0;
    *offered = 0;
    for (size_t w = a; w < b; w++) {
        signals(m, w, y, &off);
        *offered += off;
        first_f = w == a ? y[VS_INFLIGHT] : first_f;
        for (int k = 0; k < VS_N; k++)
            if (!isnan(y[k]))
                x[k] += y[k], n[k]++;
    }
    for (int k = 0; k < VS_N; k++)
        x[k] = n[k] > 0 ? x[k] / n[k] : NAN;
    *offered /= (double)(b - a);
    return y[VS_INFLIGHT] > first_f;
}

/* Mean of each signal over windows [a, b), and the standard deviation of
 * its means over `hold` consecutive windows (the spans a recovery is
 * judged on; of single windows when the baseline is shorter than
 * hold + 2). */
static void moments(const struct metrics *m, size_t a, size_t b, size_t hold, struct moments *o)
{
    double s[VS_N] = {0}, ss[VS_N] = {0}, n[VS_N] = {0}, x[VS_N], off;
    span(m, a, b, o->mean, &o->offered);
    size_t h = b - a >= hold + 2 ? hold : 1;
    for (size_t w = a; w + h <= b; w++) {
        span(m, w, w + h, x, &off);
        for (int k = 0; k < VS_N; k++)
            if (!isnan(x[k])) {
                s[k] += x[k];
                ss[k] += x[k] * x[k];
                n[k]++;
            }
    }
    for (int k = 0; k < VS_N; k++) {
        double var = n[k] > 1 ? (ss[k] - s[k] * s[k] / n[k]) / (n[k] - 1) : 0;
        o->sd[k] = var > 0 ? sqrt(var) : 0;
    }
}

/* The band's width around a baseline mean. */
static double width(int k, double mean, double sd, double tol)
{
    double w = fmax(tol * fabs(mean), VERDICT_Z * sd);
    return fmax(w, sig[k].floor);
}

/* Whether the baseline [a, b) is stationary; if not, why into out. The
 * requests it answers keep up with its offered load, and neither the queue
 * nor in flight (each window's scaled by the mean offered rate over its
 * own, so that a load that rises and falls, as a trace's, is not taken for
 * growth) grew from its first third to its last by more than the band's
 * width (its standard deviation from successive differences, which a
 * trend does not inflate). */
static bool stationary(const struct metrics *m, size_t a, size_t b, double tol, const struct moments *base,
                       const char *when, char *out, size_t size)
{
    double answered = 0, len = 0;
    for (size_t i = a * m->win_buckets; i < b * m->win_buckets; i++) {
        for (size_t o = 0; o < sizeof answered_outcomes / sizeof answered_outcomes[0]; o++)
            answered += (double)m->b[i].outcomes[answered_outcomes[o]];
        len += metrics_bucket_len(m, i);
    }
    answered /= len;
    if (answered < (1 - tol) * base->offered) {
        snprintf(out, size, "%s, requests answered (ok, business or failed) %.4g/s fall short of the offered %.4g/s "
                 "by more than %.0f %%", when, answered, base->offered, 100 * tol);
        return false;
    }
    size_t third = (b - a) / 3;
    const int grow[] = {VS_QUEUE, VS_INFLIGHT};
    for (size_t g = 0; g < 2; g++) {
        int k = grow[g];
        double first = 0, last = 0, d2 = 0, prev = 0, x[VS_N], off;
        for (size_t w = a; w < b; w++) {
            signals(m, w, x, &off);
            if (off > 0) /* per offered request, at the mean offered rate: a load that rises is not overload */
                x[k] *= base->offered / off;
            if (w < a + third)
                first += x[k];
            if (w >= b - third)
                last += x[k];
            if (w > a)
                d2 += (x[k] - prev) * (x[k] - prev);
            prev = x[k];
        }
        first /= (double)third;
        last /= (double)third;
        double sd = sqrt(d2 / (2.0 * (double)(b - a - 1)));
        if (last - first > width(k, first, sd, tol)) {
            snprintf(out, size, "%s, the %s grew from %.4g to %.4g (not stationary)", when,
                     verdict_signal_names[k], first, last);
            return false;
        }
    }
    return true;
}

/* Whether the hold [w, w + hold) is in the band, its means against it;
 * the signals out of it into out. In flight counts as out only while it
 * is above its band and growing (the hold's last window above its first):
 * requests still waiting out a backoff drain. */
static bool in_band(const struct metrics *m, size_t w, size_t hold, const struct verdict_result *v, char *out,
                    size_t size)
{
    double x[VS_N], off;
    bool growing = span(m, w, w + hold, x, &off);
    bool ok = true;
    size_t n = 0;
    out[0] = '\0';
    for (int k = 0; k < VS_N; k++) {
        if (isnan(x[k]) || isnan(v->band[k]))
            continue;
        bool out_of = sig[k].up_is_good ? x[k] < v->band[k] : x[k] > v->band[k];
        if (k == VS_INFLIGHT && !growing)
            out_of = false;
        if (out_of) {
            int r = snprintf(out + n, size - n, "%s%s %.4g%s (band %s %.4g%s)", ok ? "" : ", ",
                             verdict_signal_names[k], x[k] * sig[k].scale, sig[k].unit,
                             sig[k].up_is_good ? ">=" : "<=", v->band[k] * sig[k].scale, sig[k].unit);
            if (r > 0 && (size_t)r < size - n)
                n += (size_t)r;
            ok = false;
        }
    }
    return ok;
}

/* After a trigger ending at `end`: the first hold of in-band windows
 * starting within persist of its end and ending before window `limit` (the
 * next trigger's start, or the run's end). RECOVERED with its window in
 * *at; PERSISTED when no hold started within persist and the run saw it
 * (the last window out of band, and why, in *at and why); OPEN when the
 * limit came first. */
enum outcome_after { RECOVERED, PERSISTED, OPEN };

static enum outcome_after scan(const struct metrics *m, const struct verdict_params *p, rs_time end, size_t limit,
                               size_t hold, const struct verdict_result *v, size_t *at, char *why, size_t size)
{
    size_t first = first_at(m, end), last = first_at(m, end + p->persist); /* first start too late */
    char w_why[200];
    *at = first;
    why[0] = '\0';
    for (size_t w = first; w < last && w + hold <= limit; w++) {
        if (in_band(m, w, hold, v, w_why, sizeof w_why)) {
            *at = w;
            return RECOVERED;
        }
        *at = w;
        snprintf(why, size, "%s", w_why);
    }
    return last + hold - 1 <= limit ? PERSISTED : OPEN;
}

/* The triggers in order, each against the baseline's band: one that does
 * not recover before the next starts (and persisted) makes the run
 * metastable; one that has not had persist before the next starts is
 * judged with it, from the next one's end. */
static void judge_after(const struct metrics *m, const struct verdict_params *p, const struct verdict_times *t,
                        size_t hold, struct verdict_result *v)
{
    double hold_s = units_seconds((rs_time)(hold * m->win_buckets) * m->bucket_ns);
    char why[200];
    size_t at;
    for (size_t g = 0; g < t->ntriggers; g++) {
        bool last = g + 1 == t->ntriggers;
        rs_time end = t->trigger[g][1];
        size_t limit = last ? m->nwin : before(m, t->trigger[g + 1][0]);
        enum outcome_after r = scan(m, p, end, limit, hold, v, &at, why, sizeof why);
        double after = win_start_s(m, at) - units_seconds(end);
        if (r == PERSISTED) {
            v->v = VERDICT_METASTABLE;
            snprintf(v->reason, sizeof v->reason, "still out of the baseline's band %.4g s after the trigger ended at %.4g s: %s",
                     after, units_seconds(end), why);
            return;
        }
        if (r == RECOVERED && last) {
            v->v = VERDICT_RECOVERED;
            v->recovery_s = after;
            snprintf(v->reason, sizeof v->reason,
                     "every signal back in the baseline's band from %.4g s, %.4g s after the trigger ended, "
                     "over %.4g s", win_start_s(m, at), after, hold_s);
            return;
        }
    }
    rs_time end = t->trigger[t->ntriggers - 1][1];
    v->v = VERDICT_UNDETERMINED;
    if (t->end < end)
        snprintf(v->reason, sizeof v->reason, "the run %s at %.4g s, before the trigger ended at %.4g s",
                 t->complete ? "ended" : "was interrupted", units_seconds(t->end), units_seconds(end));
    else
        snprintf(v->reason, sizeof v->reason,
                 "the run %s %.4g s after the trigger ended, before recovery or %.4g s of persistence "
                 "(and a %.4g s hold) could be seen",
                 t->complete ? "ended" : "was interrupted", units_seconds(t->end - end), units_seconds(p->persist),
                 hold_s);
}

void verdict_judge(const struct metrics *whole, const struct verdict_params *p, const struct verdict_times *t,
                   struct verdict_result *v)
{
    struct metrics cut = *whole; /* only the windows wholly before t->end (a drain's are after it) */
    const struct metrics *m = &cut;
    cut.nwin = before(whole, t->end);
    memset(v, 0, sizeof *v);
    v->recovery_s = -1;
    for (int k = 0; k < VS_N; k++)
        v->base[k] = v->band[k] = NAN;
    bool trig = v->triggered = t->ntriggers > 0;
    size_t a = first_at(m, t->warmup);
    size_t b = trig ? before(m, t->trigger[0][0]) : m->nwin;
    if (m->win_p99 == NULL || b < a + VERDICT_MIN_BASELINE) {
        v->v = VERDICT_UNDETERMINED;
        snprintf(v->reason, sizeof v->reason,
                 "fewer than %d whole %.4g s windows between the warm-up and the %s: no baseline",
                 VERDICT_MIN_BASELINE, units_seconds((rs_time)m->win_buckets * m->bucket_ns),
                 trig ? "first trigger" : "end");
        return;
    }
    size_t hold = verdict_window_buckets(m, p->hold);
    hold = (hold + m->win_buckets - 1) / m->win_buckets; /* in windows, at least one */
    struct moments base;
    moments(m, a, b, hold, &base);
    for (int k = 0; k < VS_N; k++) {
        v->base[k] = base.mean[k];
        double w = width(k, base.mean[k], base.sd[k], p->tolerance);
        v->band[k] = sig[k].up_is_good ? base.mean[k] - w : base.mean[k] + w;
    }
    if (!stationary(m, a, b, p->tolerance, &base, trig ? "before the trigger" : "over the run (no trigger)",
                    v->reason, sizeof v->reason)) {
        v->v = VERDICT_OVERLOADED;
        return;
    }
    if (!trig) {
        v->v = VERDICT_STABLE;
        snprintf(v->reason, sizeof v->reason, "no trigger; requests answered keep up with the offered %.4g/s, "
                 "queue and in flight stationary", base.offered);
        return;
    }
    judge_after(m, p, t, hold, v);
}
