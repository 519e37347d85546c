/*
 * verdict — what became of a run: stable, overloaded, recovered,
 * metastable or undetermined, with the signal that decided it.
 *
 * The run is cut into windows of `verdict_window` (whole buckets, from
 * t = 0; a last partial window, and any after the run's end — a drain's —
 * are left out). Each window has four signals:
 * goodput (ok outcomes per second), the queue (time-averaged, summed over
 * every service and replica), requests in flight (time-averaged) and the
 * p99 latency of the requests that ended in it (after the trigger: of
 * those that arrived after it ended, so that the trigger's own victims do
 * not count against the recovery). A *trigger* is a group of phases and
 * herds that overlap or touch; a phase that starts when the run starts (or
 * within the warm-up) shapes the start-up and is not one. The *baseline*
 * is the windows wholly after warm-up and the start-up phases, and before
 * the first trigger (the whole run after warm-up when there is none).
 * Triggers are judged in order: one that has not recovered when the next
 * starts is judged with it, unless it already persisted (metastable).
 *
 *   overloaded    the baseline is not stationary: the requests it answers
 *                 (ok, business or failed: not given up on) fall short of
 *                 (1 − tolerance) × its offered rate, or its queue or in
 *                 flight grew (the mean of its last third exceeds that of
 *                 its first third by more than the band's width);
 *   stable        no trigger, and not overloaded;
 *   recovered     after the last trigger ended, the means of every signal over
 *                 a hold of `verdict_hold` are back in the baseline's
 *                 band, for a hold starting within `verdict_persist` of
 *                 the trigger's end; recovery_s is from the trigger's end
 *                 to the start of the first such hold;
 *   metastable    the baseline was stationary, and no such hold starts
 *                 within `verdict_persist` after the trigger ended;
 *   undetermined  the run ended (or was interrupted) before either could
 *                 be told, or its baseline has fewer than 3 windows.
 *
 * The band, per signal, from the baseline's mean μ and the standard
 * deviation σ of its means over a hold (every run of `verdict_hold`
 * consecutive windows in the baseline; of single windows when the
 * baseline is shorter than hold + 2 windows): goodput
 * ≥ μ − w, queue, in flight and p99 ≤ μ + w, with w = max(tolerance · μ,
 * 3σ) (and at least one request for the queue and in flight). One-sided: a
 * system is never out of band for serving more or waiting less than in
 * its baseline. In flight counts as out only while it also grows across
 * the hold (requests waiting out a backoff drain). A window in which
 * nothing ended has no p99.
 *
 * Costs: O(windows) time, O(1) memory beyond the metrics.
 */
#ifndef RS_VERDICT_H
#define RS_VERDICT_H

#include <stdbool.h>
#include <stddef.h>

#include "metrics.h"
#include "units.h"

enum verdict { VERDICT_STABLE, VERDICT_OVERLOADED, VERDICT_RECOVERED, VERDICT_METASTABLE,
               VERDICT_UNDETERMINED, VERDICT_N };
extern const char *const verdict_names[VERDICT_N];

#define VERDICT_MIN_BASELINE 3 /* windows */
#define VERDICT_Z 3.0          /* the band's width in baseline standard deviations */
#define VERDICT_MAX_TRIGGERS 128 /* phases and herds */

/* The signals a window has (and a band bounds). */
enum verdict_signal { VS_GOODPUT, VS_QUEUE, VS_INFLIGHT, VS_P99, VS_N };
extern const char *const verdict_signal_names[VS_N];

struct verdict_params {
    rs_time window, hold, persist; /* [run] verdict_window, verdict_hold, verdict_persist */
    double tolerance;              /* [run] verdict_tolerance */
};

/* What the run's times are: the baseline from `warmup` (the warm-up's end,
 * or the end of start-up phases) to the first trigger's start; the
 * triggers (groups of touching phases and herds), in order; end: how far
 * the run got; complete: whether it reached its duration. */
struct verdict_times {
    rs_time warmup, end;
    bool complete;
    size_t ntriggers;                                          /* 0: none */
    rs_time trigger[VERDICT_MAX_TRIGGERS][2];                  /* [start, end], in order */
};

struct verdict_result {
    enum verdict v;
    double recovery_s; /* recovered: from the trigger's end to the hold; else -1 */
    double base[VS_N], band[VS_N]; /* the baseline's means, and each band's bound */
    bool triggered;                /* the run had a trigger (recovered means something) */
    char reason[320];              /* why, in words, with the numbers */
};

/* The buckets per window for a window length (at least one). */
size_t verdict_window_buckets(const struct metrics *m, rs_time window);

/* Judges the run in m (whose window p99s metrics_windows recorded). */
void verdict_judge(const struct metrics *m, const struct verdict_params *p, const struct verdict_times *t,
                   struct verdict_result *out);

#endif
