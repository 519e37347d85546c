/*
 * output — what a run leaves behind: CSV files, the effective scenario, and
 * the human summary.
 *
 * output_summarise derives the summary row from a finished run.
 * output_write_dir writes every file to a temporary name in the directory
 * (created if missing), and renames them into place only when all are
 * written, so an interrupted or failed run never leaves a half-written file
 * that looks whole. Empty cells stand for "no value" (a latency of a bucket
 * in which nothing finished); no NaN is ever written. Costs: O(buckets +
 * histogram bins).
 */
#ifndef RS_OUTPUT_H
#define RS_OUTPUT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "outdir.h" /* struct output_file */
#include "sim.h"

struct summary {
    uint64_t requests, outcomes[OUT_NOUTCOMES], in_flight;
    double attempts_mean;
    uint64_t attempts_max;
    double amplification;
    uint64_t server_arrivals, server_completions, rejected, wasted;
    double lat_mean, lat_p50, lat_p90, lat_p99, lat_p999, lat_max; /* -1: none */
    double ok_lat_mean, ok_lat_p99;
    double goodput, peak_server_rate;
    int recovered;       /* 1, 0, or -1 where the scenario has no phase */
    double recovery_s;   /* -1: none */
    uint64_t events;
    double wall_s;
    int complete; /* 0 when the run was interrupted */
};

/* The recovery rule (README): after the last phase ends, the first window of
 * this length, starting on a bucket boundary, in which ok outcomes reach
 * this share of offered requests. */
#define OUTPUT_RECOVERY_WINDOW (10 * RS_S)
#define OUTPUT_RECOVERY_SHARE 0.9

void output_summarise(const struct sim *s, double wall_s, struct summary *out);

/* Writes timeseries.csv, summary.csv, latency.csv, attempts.csv,
 * layers.csv and scenario.ini into dir. Returns 0, or -1 with a message in err (and no
 * file of this run in place). */
int output_write_dir(const char *dir, const struct sim *s, const struct summary *sum, char *err,
                     size_t errsz);

/* The files of a run, in order, for writers other than output_write_dir
 * (serve keeps them in memory): file i's name, or NULL when this run has
 * no such file (i < output_nfiles()); and file i's contents written to f. */
size_t output_nfiles(void);
const char *output_file_name(const struct sim *s, size_t i);
void output_write_file(FILE *f, size_t i, const struct sim *s, const struct summary *sum);

/* Creates dir and its parents if absent, and marks it a retrystorm output
 * only if it created it (outdir_mkdir); -1 with a message when it cannot. */
int output_mkdir(const char *dir, char *err, size_t errsz);

/* The header line of summary.csv (no simulation needed: the columns are
 * the same for every scenario). */
void output_write_summary_header(FILE *f);

/* The kind of a summary.csv column: what it holds, and so what a reader of
 * our own files (jobs.csv for --resume and merge) accepts in it. */
enum output_kind {
    OUTPUT_TEXT,    /* the scenario's name */
    OUTPUT_SEED,    /* the seed, an integer below 2^64 */
    OUTPUT_COUNT,   /* an integer from 0 to 2^53 (exact in a double) */
    OUTPUT_SHARE,   /* a number from 0 to 1 */
    OUTPUT_FLAG,    /* 0 or 1 */
    OUTPUT_SECONDS, /* simulated time: a finite number >= 0 */
    OUTPUT_REAL,    /* a mean, ratio or rate: a finite number >= 0 */
    OUTPUT_WALL     /* wall-clock seconds: differ between equal runs */
};

/* A column of summary.csv: its name and kind. */
struct output_column {
    char name[64];
    enum output_kind kind;
};
#define OUTPUT_MAX_COLUMNS 96

/* The fixed columns of summary.csv, in order (the per-outcome and per-error
 * columns expanded; without the services' columns), into cols; returns
 * their number (at most max). Costs: O(columns). */
size_t output_summary_columns(struct output_column *cols, size_t max);

/* Whether columns of kind k are metrics, which sweeps keep and average:
 * every kind but the name, the seed and wall-clock time. */
bool output_kind_is_metric(enum output_kind k);

/* Whether v is a value a column of kind k may hold (NaN never is: an empty
 * cell is the reader's concern), and what the kind allows, as words for a
 * message ("a share (a number from 0 to 1)"). */
bool output_value_ok(enum output_kind k, double v);
const char *output_kind_allows(enum output_kind k);

/* The summary.csv row of a run, with the header line first if asked. */
#define OUTPUT_HEADER 1u   /* the header line first */
#define OUTPUT_SERVICES 2u /* a scenario with services: err_bulkhead and per-service columns
                            * before wall_s (run's summary.csv; sweeps keep the fixed columns) */
void output_write_summary_csv(FILE *f, const struct sim *s, const struct summary *sum, unsigned flags);

/* The summary.csv row of a run without header or newline (flags 0: the
 * fixed columns a sweep's job and compare record), malloc'd; NULL when
 * memory runs out. */
char *output_summary_row(const struct sim *s, const struct summary *sum);

/* The short human summary. */
void output_print_summary(FILE *f, const struct sim *s, const struct summary *sum,
                          const char *dir);

#endif
