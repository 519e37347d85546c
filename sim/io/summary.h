/*
 * summary — the one table of summary columns, and a run's summary as
 * numbers.
 *
 * Every column of summary.csv is a row of one descriptor table: its name,
 * unit, kind (count, share, flag, seconds, rate or ratio, wall-clock), what
 * it means, and where its value comes from. Fixed columns read a field of
 * struct summary; families are instantiated per scenario: one column per
 * error class (err_timeout ...), per service (<service>_utilization,
 * _wasted, _calls, _rejected, _queue_mean), per cache (<cache>_hit_ratio)
 * and per layer (<layer>_attempts, _retries, _hedges, _timeouts, _refused,
 * _short_circuited). summary_cols_init instantiates the table for a
 * scenario; summary_row fills a row of doubles from a finished run (NaN: no
 * value, an empty cell). summary.csv, summary.json, jobs.csv, sweep.csv,
 * compare's and run --reps' tables, replications.csv, tune.csv, list
 * metrics, the screen table, --sort and tune's objectives all take their
 * columns from here. Every column aggregates over replications the same
 * way: mean, standard deviation and 95 % Student-t half-width of the
 * replications that have a value (a flag's mean is the share of
 * replications where it is 1). The window: every count, share, latency and
 * rate covers the run after warm-up (docs/outputs.md, "Warm-up").
 *
 * Costs: summary_cols_init O(columns); summary_row O(columns) plus what
 * each per-part getter costs (O(buckets) for a service's totals).
 */
#ifndef RS_SUMMARY_H
#define RS_SUMMARY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "sim.h"
#include "verdict.h"

/* What a run's summary holds (output_summarise fills it). */
struct summary {
    uint64_t requests, outcomes[OUT_NOUTCOMES], in_flight;
    double attempts_mean;
    uint64_t attempts_max;
    double amplification;
    uint64_t server_arrivals, server_completions, rejected, wasted;
    uint64_t limited, dropped, side_effects, duplicates, retry_after_waits;
    uint64_t hedges, hedge_wins, cancelled, cancelled_before_start;
    double lat_mean, lat_p50, lat_p90, lat_p99, lat_p999, lat_max; /* -1: none */
    double ok_lat_mean, ok_lat_p99;
    double goodput, peak_server_rate, peak_rate_1s;
    int verdict;         /* enum verdict (verdict.h) */
    char verdict_reason[320];
    int recovered;       /* 1 recovered, 0 metastable or overloaded; -1 no trigger, or undetermined */
    double recovery_s;   /* -1: none */
    uint64_t events;
    double wall_s;
    int complete; /* 0 when the run was interrupted */
};

/* The kind of a column: what it holds, and so what a reader of our own
 * files (jobs.csv for --resume and merge) accepts in it. */
enum output_kind {
    OUTPUT_TEXT,    /* the scenario's name */
    OUTPUT_SEED,    /* the seed, an integer below 2^64 */
    OUTPUT_COUNT,   /* an integer from 0 to 2^53 (exact in a double) */
    OUTPUT_SHARE,   /* a number from 0 to 1 */
    OUTPUT_FLAG,    /* 0 or 1 */
    OUTPUT_SECONDS, /* simulated time: a finite number >= 0 */
    OUTPUT_REAL,    /* a mean, ratio or rate: a finite number >= 0 */
    OUTPUT_WALL,    /* wall-clock seconds: differ between equal runs */
    OUTPUT_VERDICT, /* a run's verdict: the code of enum verdict, written as its name */
    OUTPUT_NKINDS
};

struct summary_desc; /* a row of the descriptor table (summary.c) */

/* One column of a scenario's summary. */
struct summary_col {
    char name[64];
    enum output_kind kind;
    const struct summary_desc *d;
    unsigned member; /* the outcome, class, service, cache or layer */
};

/* A scenario's columns, in summary.csv's order (wall_s last). */
struct summary_cols {
    size_t n;
    struct summary_col *c;
};

#define SUMMARY_MAX_COLUMNS 4096

/* Instantiates the table for sc. Returns 0, or -1 with a message (two
 * parts of the scenario whose names give the same column, or out of
 * memory). */
int summary_cols_init(struct summary_cols *cols, const struct scenario *sc, char *err, size_t errsz);
void summary_cols_fini(struct summary_cols *cols);
/* The index of the column named name, or -1. O(columns). */
long summary_cols_find(const struct summary_cols *cols, const char *name);
/* Whether both tables have the same columns (names and kinds) in order. */
bool summary_cols_equal(const struct summary_cols *a, const struct summary_cols *b);

/* scs[0]'s columns into cols, and whether scs[1 .. n) all have the same
 * (a grid or --vary value may not add a service, cache or layer): 0; 1
 * with the first that differs in *differs; -1 with a message. cols is
 * the caller's to free in every case. O(n × columns). */
int summary_cols_common(struct summary_cols *cols, const struct scenario *scs, size_t n, size_t *differs,
                        char *err, size_t errsz);

/* The run's value of every column into row[0..cols->n): NaN where it has
 * none (no request ended: no latency; no phase: no recovery). */
void summary_row(const struct summary_cols *cols, const struct sim *s, const struct summary *o,
                 double *row);

/* Whether columns of kind k are metrics, which experiments keep and
 * average: every kind but the name, the seed and wall-clock time. */
bool output_kind_is_metric(enum output_kind k);
/* Whether v is a value a column of kind k may hold (NaN never is), and
 * what the kind allows, as words for a message. */
bool output_value_ok(enum output_kind k, double v);
const char *output_kind_allows(enum output_kind k);
/* A kind's name in files (experiment.csv): count, share, flag, seconds,
 * real, wall; and back (-1 for a name that is none). */
const char *output_kind_name(enum output_kind k);
int output_kind_of(const char *name);

/* The value of a column of kind k as a run's summary.csv writes it: counts
 * and flags as exact integers, wall-clock time in milliseconds, the rest
 * in 9 significant digits; NaN an empty cell. Into out (64 bytes are
 * enough for any double). */
void summary_format(char *out, size_t size, enum output_kind k, double v);

/* Whether name is a metric of the scenario's summary (cols: its services',
 * caches' and layers' columns included); when not, err names the option
 * (--objective, --sort, ...), and the nearest metric or all of them. */
bool summary_check_metric(const struct summary_cols *cols, const char *name, const char *option, char *err,
                          size_t errsz);

/* list metrics: every column (families as <service>_utilization ...) with
 * its unit and meaning, and the label and statistics columns of the
 * experiments' tables. */
void summary_list(FILE *f);

#endif
