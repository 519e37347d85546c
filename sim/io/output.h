/*
 * output — what a run leaves behind: CSV files, the effective scenario, and
 * the human summary.
 *
 * output_summarise derives the summary (summary.h) from a finished run.
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
#include "summary.h"

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

/* summary.csv of a run: scenario, seed, then every column of cols (the
 * scenario's: summary_cols_init), with the header line first. */
void output_write_summary_csv(FILE *f, const struct sim *s, const struct summary *sum,
                              const struct summary_cols *cols);

/* The short human summary. */
void output_print_summary(FILE *f, const struct sim *s, const struct summary *sum,
                          const char *dir);

#endif
