/*
 * envelope — the vulnerability map and the margin: how large a trigger (a
 * spike's size, an outage's length) a configuration survives.
 *
 * A *cell* is one load (and optionally one duration) of the map; along its
 * trigger range [lo, hi] the cell is bisected for the trigger at which the
 * probability of recovery crosses a level. A *probe* is one trigger value
 * of one cell: replication r of it is the scenario (after --set, the
 * cell's load and duration and the probe's trigger) seeded from (seed, r),
 * exactly as a sweep's point. Each run's verdict (summary column
 * `verdict`, verdict.h) is counted; the recovery
 * share is recovered / (recovered + metastable + overloaded), undetermined
 * and stable runs counted and reported but not in the share. A probe runs
 * its replications in batches and stops as soon as the Wilson 95 %
 * interval of its share excludes the level (decided), or at `reps` runs
 * (undecided: classified by the point estimate).
 *
 * Bisection per cell (struct env_bisect): both ends first (lo failing:
 * below the range; hi recovering: above the range), then the midpoint of
 * the bracket until it is no wider than the resolution. Every probe of
 * every cell that is due runs in one batch on the thread pool (exp_batch),
 * results stored by index, so the outputs are the same whatever -j.
 *
 * Files, in spec->dir: PROBES (map.csv or margin.csv: every probe settled,
 * rewritten after each round), boundary.csv (per cell: bracket, crossing,
 * flags; at the end) and envelope.csv (the study's identity: the effective
 * scenario's fingerprint and the options; complete 0 or 1). --resume checks
 * the identity and takes the probes already settled (hostile input, checked
 * row by row) instead of running them: the same seeds give the same
 * verdicts, so the outputs are the bytes an uninterrupted run writes. Costs: per cell, at most
 * (2 + ceil(log2((hi − lo) / resolution))) probes × reps runs.
 */
#ifndef RS_ENVELOPE_H
#define RS_ENVELOPE_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "scenario.h"
#include "verdict.h" /* enum verdict: what each run is counted as */


#define ENV_DEFAULT_REPS 20u   /* most replications per probe, at least (env_default_reps) */
#define ENV_DEFAULT_BATCH 5u   /* replications run before each early-stopping check */
#define ENV_DEFAULT_STEPS 32.0 /* default resolution: (hi − lo) / 32 */
#define ENV_MAX_STEPS 1048576.0 /* finest resolution: (hi − lo) / 2^20 */
#define ENV_MAX_CELLS 1000u
#define ENV_MAX_SETS 512 /* --set options (with tune's grid values) */
#define ENV_Z95 1.959963984540054 /* the 97.5 % normal quantile */

/* The Wilson score interval of k successes in n trials for quantile z
 * (Wilson 1927; Agresti & Coull 1998): [0, 1] when n is 0. O(1). */
void env_wilson(unsigned k, unsigned n, double z, double *lo, double *hi);

/* One probe's tally and what it says. */
struct env_probe {
    size_t cell;
    double t;          /* the trigger, in its unit (x1.5 → 1.5) */
    char text[64];     /* as --set takes it: x1.5 */
    unsigned n;        /* runs so far */
    unsigned count[VERDICT_N];
    double share, lo, hi; /* NaN when no run counts in the share */
    bool settled, decided, recovers;
};

/* Adds a run's verdict. O(1). */
void env_probe_add(struct env_probe *p, enum verdict v);
/* Updates share and interval and settles the probe when its interval
 * excludes level (decided) or it has max runs (undecided, by the point
 * estimate); returns whether it is settled. O(1). */
bool env_probe_settle(struct env_probe *p, double level, unsigned max);

/* Whether two settled probes of a cell contradict a recovery that falls
 * as the trigger grows: the one at the higher trigger has its whole
 * interval above the other's (beyond their intervals; overlapping ones do
 * not). O(1). */
bool env_contradicts(const struct env_probe *lower, const struct env_probe *higher);

/* The bisection of one cell over [lo, hi] to resolution res. */
struct env_bisect {
    double lo, hi, res;
    double a, b;     /* bracket: a recovered, b did not */
    bool have_lo, lo_rec, have_hi, hi_rec;
    bool done;
    int where;       /* 0 inside, -1 below the range, +1 above */
};
void env_bisect_init(struct env_bisect *b, double lo, double hi, double res);
/* The triggers to probe next into t (at most 2); 0 when done. */
size_t env_bisect_next(const struct env_bisect *b, double t[2]);
/* What the probe at t said (t one of those env_bisect_next gave). */
void env_bisect_take(struct env_bisect *b, double t, bool recovers);

/* The trigger option "KEY=A..B" (A, B numbers, both with the same prefix
 * x or none and the same unit suffix: x1.2..x4, 5s..30s). Returns 0, or 2
 * with a message naming the option. */
struct env_range {
    char key[128], prefix[8], unit[16];
    double lo, hi;
};
int env_parse_range(const char *option, const char *text, struct env_range *r, char *err, size_t errsz);
/* The value t as the scenario takes it (prefix, %.6g, unit). */
void env_format(const struct env_range *r, double t, char *out, size_t size);

/* The default --reps at a level: 20, or the fewest runs whose Wilson 95 %
 * interval can exclude the level when all go one way (73 at 0.95), so that
 * a probe can be decided. */
unsigned env_default_reps(double level);

enum env_flag { ENV_BELOW = 1, ENV_ABOVE = 2, ENV_NONMONOTONE = 4, ENV_OVERLOAD = 8, ENV_UNDECIDED = 16 };

struct env_cell {
    char load[128], duration[128];
    double x;                 /* the load as a number (600/s → 600) */
    struct env_bisect bis;
    long pa, pb;              /* the bracketing probes (−1: none) */
    double crossing;          /* NaN when not inside the range */
    unsigned flags;
};

struct env_spec {
    const char *scenario;
    const char *const *sets;
    size_t nsets;
    const char *load;     /* --load KEY=VALUES, or NULL (the scenario's: margin) */
    const char *duration; /* --duration KEY=VALUES, or NULL */
    const char *trigger;  /* --trigger KEY=A..B */
    double level;         /* 0: 0.5 */
    unsigned reps, batch; /* 0: the defaults */
    double resolution;    /* 0: (hi − lo) / 32 */
    unsigned threads;
    const char *dir;         /* NULL: nothing written (tune's margins) */
    const char *probes_file; /* "map.csv" or "margin.csv" */
    bool force;
    bool resume; /* reuse the probes an earlier, interrupted run settled in dir */
    volatile sig_atomic_t *stop;
    void (*warn)(void *user, const char *msg); /* undetermined runs, non-monotone cells */
    void *user;
};

struct env_result {
    struct env_range trig;
    char load_key[128], duration_key[128];
    double level, resolution;
    unsigned reps;
    size_t ncells, nprobes, cap;
    struct env_cell *cells;
    struct env_probe *probes;
    size_t runs, grid_runs; /* runs used; the full grid's at the same resolution and reps */
    uint64_t fingerprint;   /* the effective scenario's (exp_fingerprint): --resume checks it */
};
void env_result_fini(struct env_result *r);

/* Runs the study into spec->dir (outdir rules as sweep: checked before
 * anything runs; no files without a dir). Returns 0; 2 for bad input (diag or err); 1 for a run or
 * write failure; 3 when stopped. */
int env_run(const struct env_spec *spec, struct scenario_diag *diag, struct env_result *res, char *err,
            size_t errsz);

/* tune --objective max:margin: the margin of each of r's points (the
 * scenario after base's --set and the point's grid values; base->load,
 * duration and dir are ignored): margin[p] the largest trigger that
 * recovered at the level (the range's top when above it; NaN when even
 * its bottom fails), fails[p] the smallest that did not (NaN above the
 * range). Returns as env_run (2 with the point in err). Costs: each
 * point's margin study. */
struct exp_result;
int env_margins(const struct env_spec *base, const struct exp_result *r, double *margin, double *fails,
                struct scenario_diag *diag, char *err, size_t errsz);

#endif
