/*
 * experiment — replications, sweeps, shards, merges and tuning.
 *
 * An experiment is a grid of points (the product of --grid axes, the first
 * varying slowest) × `reps` replications; job j is point j / reps,
 * replication j % reps (replication r seeds every stream from (seed, r)).
 * Jobs run on `threads` threads; each simulation stays single-threaded and
 * every result is stored at its job's index, so the outputs are identical
 * whatever the thread count. `--shard K/N` runs only the jobs with
 * j mod N = K − 1. A run directory holds:
 *   experiment.csv  the grid (keys, points, reps): what merge checks
 *   experiment.csv  also the metric columns (column,NAME,KIND: the
 *                   scenario's summary columns, services', caches' and
 *                   layers' included; format 2)
 *   jobs.csv        one row per job run here: every metric, exact
 *   sweep.csv       one row per point: reps, then the mean, sd and 95 %
 *                   Student-t half-width of each metric (stats.h; only
 *                   when every job is here)
 * `merge` reads shard directories' jobs.csv and writes the same sweep.csv,
 * byte for byte, that one machine would have. exp_batch runs any list of
 * (scenario, replication) runs on the same kind of pool, seeded the same
 * way, without files (envelope.c's probes). Wall-clock times are left
 * out so that the outputs depend only on the scenario and the seed.
 * Costs: jobs × one run; memory: jobs × metrics doubles.
 */
#ifndef RS_EXPERIMENT_H
#define RS_EXPERIMENT_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "output.h"
#include "results.h"
#include "scenario.h"

#define EXP_MAX_AXES 8
#define EXP_MAX_REPS 100000u /* --reps */
#define EXP_MAX_SHARDS 65u /* shard directories merge takes (and so --shard K/N at most) */

struct exp_spec {
    const char *scenario;
    const char *const *sets;
    size_t nsets;
    const char *grid[EXP_MAX_AXES]; /* "KEY=V1,V2", "KEY=1..5", "KEY=50ms..800ms*2" */
    size_t ngrid;
    unsigned reps;
    unsigned threads;
    unsigned shard_k, shard_n; /* 0/0: everything */
    const char *dir;
    bool progress;
    volatile sig_atomic_t *stop; /* set by a signal: stop after the jobs running */
    bool resume;                 /* keep the jobs already in dir/jobs.csv */
    bool force;                  /* write into a foreign directory (outdir.h) */
    const double *given0;        /* job 0's summary row (summary_row: every column), already run
                                  * by the caller on the same scenario: taken, not run again
                                  * (run --reps) */
};

/* A finished experiment, in memory. */
struct exp_result {
    size_t npoints, reps, naxes, nmetrics;
    char axis_keys[EXP_MAX_AXES][128];
    char axis_labels[EXP_MAX_AXES][128]; /* each key's shortest unambiguous form (labels.h) */
    char (*values)[EXP_MAX_AXES][128]; /* per point */
    char (*metric)[64];                /* metric names */
    enum output_kind *kind;            /* metric kinds */
    double *mean, *sd, *hw;            /* npoints × nmetrics; sd, hw NaN when reps < 2 */
    size_t done;                       /* jobs done (fewer than npoints × reps when interrupted) */
    struct results sum;                /* sweep.csv: point, keys, reps, each metric's mean, sd, hw */
};

void exp_result_fini(struct exp_result *r);

/* Appends a metric computed after the runs (tune's margin) to a finished
 * result: its value per point in v (sd and half-width NaN: no spread over
 * replications), in mean/sd/hw and as three more columns of sum. Returns
 * 0, or -1 when memory is short (r unchanged). O(points × metrics). */
int exp_result_add_metric(struct exp_result *r, const char *name, enum output_kind kind, const double *v);

/* Expands one grid axis ("KEY=V1,V2", "KEY=A..B" integer step 1,
 * "KEY=A..B*F" geometric with factor F > 1, "KEY=A..B+S" arithmetic; A and B
 * may carry a unit, such as 50ms..800ms*2). Returns the number of values
 * written to out (each up to 127 chars), or 0 with a message in err. */
size_t exp_expand_axis(const char *text, char *key, size_t keysz, char out[][128], size_t max,
                       char *err, size_t errsz);

/* Runs the experiment into spec->dir. Everything is checked before the
 * directory is touched: the grid, every point's scenario, the directory
 * (outdir_check), and with --resume the fingerprint in experiment.csv
 * (the scenario after --set, and the grid). experiment.csv and jobs.csv are
 * written before the first job, and each job is appended to jobs.csv and
 * synced as it finishes, so a crash loses only the jobs in progress.
 * Returns 0; 2 for bad input (messages in diag or err); 1 for a failure
 * while running or writing; 3 when stopped by spec->stop (status.csv says
 * complete = 0, and --resume finishes the rest). With a result, also fills
 * it when every job ran here, or on a stop with the jobs done so far. */
int exp_run(const struct exp_spec *spec, struct scenario_diag *diag, struct exp_result *result,
            char *err, size_t errsz);

/* A batch of independent runs (envelope.h's probes): run i is scs[i]
 * with replication reps[i] (seeded from (its seed, reps[i]) as a sweep's
 * job is). Runs them on `threads` threads (0: 1) and writes run i's
 * summary row (summary_row: every column of cols, which every scenario
 * must have) at rows[i × cols->n]: the same whatever the threads. Nothing
 * is written to disk. Returns 0; 1 with a message when a run failed; 3
 * when stopped by *stop (rows of the runs not done are NaN). Costs: n runs. */
int exp_batch(const struct scenario *const *scs, const uint32_t *reps, size_t n,
              const struct summary_cols *cols, unsigned threads, volatile sig_atomic_t *stop,
              double *rows, char *err, size_t errsz);

/* The fingerprint of an effective scenario, as experiment.csv records it:
 * FNV-1a (64 bits) of scenario_write_ini's lines, comments left out (the
 * same scenario from another path has the same). Returns 0, or -1 when
 * memory is short. O(scenario). */
int exp_fingerprint(const struct scenario *sc, uint64_t *fp);

/* Whether dir holds an unfinished sweep (its status.csv says complete,0),
 * which only `sweep --resume` may continue (or --force replace). */
bool exp_unfinished(const char *dir);

/* Merges shard directories into out. Every shard's files are read as
 * hostile input and checked (csvread.h) before out is touched (with
 * outdir_prepare: force as for sweep), and fills res with the merged
 * result (exp_result_fini frees it, whatever the outcome). Returns 0, or 2 (malformed,
 * inconsistent or incomplete shards, naming file and line, or out refused)
 * / 1 (I/O) with a message in err. */
int exp_merge(const char *const *dirs, size_t ndirs, const char *out, bool force, struct exp_result *res,
              char *err, size_t errsz);

/* The metric columns dir/experiment.csv records (a sweep or shard
 * directory, read as hostile input), into cols (summary_cols_fini frees
 * them; their descriptors are NULL: names and kinds only). Returns 0, or
 * 2 / 1 with a message. */
int exp_columns(const char *dir, struct summary_cols *cols, char *err, size_t errsz);

/* run --reps: the replications of spec's scenario (no grid; replication 0
 * may be spec->given0) run in DIR/.replications, whose jobs.csv becomes
 * DIR/replications.csv; the result in res. Returns as exp_run. */
int exp_replicate(const struct exp_spec *spec, const char *dir, struct scenario_diag *diag,
                  struct exp_result *res, char *err, size_t errsz);

/* run --reps' summary.csv: the scenario, then reps (those done) and each
 * metric's mean, sd and half-width (complete's: 0 when not complete).
 * Returns 0, or -1 when memory is short (out: results_fini). */
int exp_reps_table(const struct exp_result *res, const char *scenario, bool complete, struct results *out);

#endif
