/*
 * tune — a recommendation from a finished sweep: objectives and
 * constraints over its metrics.
 *
 * tune_parse checks every --objective (max:METRIC, min:METRIC) and
 * --constraint (METRIC<=VALUE, METRIC>=VALUE; durations in seconds) before
 * anything runs, metric names included. tune_rank marks a point feasible
 * when the pessimistic side of each constraint's 95 % interval clears it
 * (mean + half-width for <=, mean − half-width for >=), scores it by the
 * first objective's pessimistic side, orders the feasible points best first
 * (then by the next objectives', then grid order), marks the Pareto front
 * of the objectives' pessimistic sides (the ranking's statistic: the best
 * is on it), and the points whose first objective is the best's within
 * their 95 % intervals (tied). tune_write_csv and tune_print report it;
 * tune_print also shows the metrics that justify the recommendation, why
 * each infeasible point failed, and a grid key the objective does not
 * depend on. Costs:
 * O(points² × objectives) for the front, O(points × constraints) else.
 */
#ifndef RS_TUNE_H
#define RS_TUNE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "experiment.h"
#include "summary.h"

#define TUNE_MAX_OBJECTIVES 8
#define TUNE_MAX_CONSTRAINTS 16

struct tune_spec {
    char oname[TUNE_MAX_OBJECTIVES][64];
    int osign[TUNE_MAX_OBJECTIVES]; /* +1 max, −1 min */
    size_t nobjective;
    char cname[TUNE_MAX_CONSTRAINTS][64];
    int cdir[TUNE_MAX_CONSTRAINTS]; /* −1 <=, +1 >= */
    double cval[TUNE_MAX_CONSTRAINTS];
    size_t nconstraint;
};

struct tune_rank {
    size_t oi[TUNE_MAX_OBJECTIVES], ci[TUNE_MAX_CONSTRAINTS]; /* metric indices */
    bool *feasible, *pareto; /* per point */
    bool *tied;              /* per point: its first objective within the best's 95 % interval */
    double *score;           /* per point, signed so that more is better */
    size_t *order, nf;       /* the nf feasible points, best first */
};

/* Parses and checks the objectives and constraints. Returns 0, or 2 with a
 * message in err naming the option and what is allowed (the metrics). */
int tune_parse(struct tune_spec *t, const struct summary_cols *cols, const char *const *objectives,
               size_t nobjective, const char *const *constraints, size_t nconstraint, char *err, size_t errsz);


/* Ranks the points of r. Returns 0, or -1 (out of memory, or a metric
 * missing from r, with a message). */
int tune_rank(const struct tune_spec *t, const struct exp_result *r, struct tune_rank *k, char *err,
              size_t errsz);
void tune_rank_fini(struct tune_rank *k);

/* tune.csv in dir: the feasible points by rank, then the others in grid
 * order, each with every column of the sweep's summary; its table into
 * table (results_fini frees it) for summary.json. Returns 0, or -1 with a
 * message. */
int tune_write_csv(const char *dir, const struct tune_spec *t, const struct exp_result *r,
                   const struct tune_rank *k, struct results *table, char *err, size_t errsz);

/* The human report: the best five feasible points, or that none is. */
void tune_print(FILE *f, const char *scenario, const char *dir, const struct tune_spec *t,
                const struct exp_result *r, const struct tune_rank *k);

#endif
