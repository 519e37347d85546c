/*
 * hysteresis — offered load ramped up from A to B and back down, and the
 * loads at which goodput tips on the way up and comes back on the way
 * down: the gap between them is the bistability of the scenario.
 *
 * The run is the scenario (with its --set values) whose phases are
 * replaced by: a lead at A (ramp / 10), a linear ramp up A→B (ramp), an
 * optional hold at B (hold), a linear ramp down B→A (ramp) and a tail at
 * A (ramp / 5). It is written as INI (scenario_write_ini without the
 * phases, then the generated phases) and loaded again, so every check of
 * a scenario applies to it. Only an open loop's rate is ramped
 * (--load load.rate=A..B, rates with their unit).
 *
 * Time is cut into windows of `window` (a whole number of the scenario's
 * buckets). In each window: the offered load (the ramp's mean over the
 * window, exact), the offered requests per second counted and the
 * goodput (ok outcomes per second). A window is *out of band* when
 * goodput < (1 − HYST_TOLERANCE) × offered requests. The tip is the load
 * of the first window of the up leg or the hold that begins HYST_HOLD
 * windows out of band; the return is the load of the first window after
 * the peak that begins HYST_HOLD windows in band, after a tip, on the down
 * leg: one that comes back only in the tail (at A) or never has no return
 * above A, and its gap is at least tip − A. A replication whose last
 * HYST_HOLD lead windows are out of band is out of band at A (no tip); one
 * that never tips has none: none of these is a number. The gap is
 * tip − return per replication.
 *
 * Replication r seeds every stream from (seed, r), as a sweep does; reps
 * run on `threads` threads and each result is stored at its index, so the
 * outputs are the same whatever the thread count. Costs: reps × one run of
 * (2 ramp + hold + 3/10 ramp) simulated time; memory reps × windows × 3
 * doubles.
 */
#ifndef RS_HYSTERESIS_H
#define RS_HYSTERESIS_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "scenario.h"
#include "stats.h"

#define HYST_TOLERANCE 0.1 /* out of band: goodput below 90 % of the offered requests */
#define HYST_HOLD 3        /* windows in a row that make a tip or a return */
#define HYST_DEFAULT_RAMP (1800 * RS_S) /* docs/hysteresis.md: slow enough that orbit without retries shows no gap */
#define HYST_DEFAULT_WINDOW (5 * RS_S)
#define HYST_MIN_WINDOWS 20   /* a ramp spans at least this many windows */
#define HYST_MAX_WINDOWS 1000000u /* windows of one run */

enum hyst_leg { HYST_LEAD, HYST_UP, HYST_HOLD_B, HYST_DOWN, HYST_TAIL, HYST_NLEGS };
extern const char *const hyst_leg_names[HYST_NLEGS];

struct hyst_spec {
    const char *scenario;
    const char *const *sets;
    size_t nsets;
    const char *load;        /* "KEY=A..B" */
    rs_time ramp, hold;      /* ramp 0: HYST_DEFAULT_RAMP */
    rs_time window;          /* 0: HYST_DEFAULT_WINDOW */
    unsigned reps, threads;  /* 0: 1 */
    volatile sig_atomic_t *stop;
};

/* What one replication did: out of band at A already (below); never out
 * of band on the way up (steady); tipped and came back on the way down
 * (returned), only in the tail at A (late), or not at all (stuck). */
enum hyst_state { HYST_BELOW, HYST_STEADY, HYST_RETURNED, HYST_LATE, HYST_STUCK, HYST_NSTATES };
extern const char *const hyst_state_names[HYST_NSTATES];

/* One replication's thresholds (NaN: none). */
struct hyst_rep {
    enum hyst_state state;
    double tip, ret, gap; /* per second; ret and gap only when returned */
};

struct hyst_result {
    char key[64];
    double a, b;                   /* per second */
    rs_time lead, ramp, hold, tail, window, duration;
    struct scenario *sc;           /* the generated scenario */
    size_t reps, nwin, done;
    double *load;                  /* per window: the ramp's mean (per second) */
    enum hyst_leg *leg;            /* per window */
    double *offered, *goodput;     /* reps × nwin, per second */
    struct hyst_rep *rep;          /* per replication */
    struct stats tip, ret, gap;    /* over the replications with a value */
    size_t count[HYST_NSTATES];   /* replications in each state */
};

/* Parses --load: KEY=A..B with KEY load.rate and A < B two rates (such
 * as 5/s..15/s). Returns 0, or 2 with a message naming the option, the
 * value and what is allowed. */
int hyst_parse_load(const char *text, char *key, size_t keysz, double *a, double *b, char *err, size_t errsz);

/* Checks spec, loads the scenario and builds the ramped one into r
 * (zeroed first). Returns 0, or 2 with the problems in diag or a message
 * in err. Nothing runs and nothing is written. */
int hyst_prepare(const struct hyst_spec *spec, struct hyst_result *r, struct scenario_diag *diag, char *err,
                 size_t errsz);

/* Runs the replications and finds the thresholds. Returns 0, 1 (out of
 * memory or a run failed: message) or 3 (stopped by *spec->stop: nothing
 * kept, r->done = 0). */
int hyst_run(const struct hyst_spec *spec, struct hyst_result *r, char *err, size_t errsz);

/* hysteresis.csv (rep, t, leg, load, offered, goodput, ok_ratio per
 * replication and window), thresholds.csv (per replication, then the
 * mean, hw and n rows) and scenario.ini (the ramped scenario) in dir.
 * Returns 0, or -1 with a message. */
int hyst_write(const char *dir, const struct hyst_result *r, char *err, size_t errsz);

/* The human report: the ramp, each threshold's mean ± 95 % half-width and
 * how many replications have one. */
void hyst_print(FILE *f, const char *scenario, const struct hyst_result *r);

void hyst_result_fini(struct hyst_result *r);

#endif
