/*
 * compare — one scenario, several variants, the same seed.
 *
 * Each --vary KEY=V1,V2,... is a list of overrides; the variants are the
 * product of the lists (the first key varies slowest). Every variant runs
 * on the same seed (common random numbers: the same arrivals and service
 * times), `reps` times with replication indices 0..reps−1. The run of
 * replication 0 of each variant is written to DIR/<variant>/ like any run;
 * DIR/summary.csv holds one row per variant in the schema every
 * experiment writes (reps, then each metric's mean, sd and 95 % Student-t
 * half-width over the replications that have a value: stats.h),
 * DIR/timeseries.csv, DIR/latency.csv and DIR/attempts.csv the files of
 * replication 0 of every variant, and DIR/replications.csv every
 * replication's metrics; each row starts with the variant's label and one
 * column per varied key. A variant's label is KEY=VALUE for each varied
 * key, joined by '+', KEY the key's shortest unambiguous form (labels.h);
 * --label texts given to variants are written to DIR/labels.csv, which
 * plot reads for the legends. Every variant must have the same summary columns
 * (summary.h). The
 * replications of a variant run on spec->threads threads and are written in
 * replication order: the files are the same bytes whatever the threads.
 * Cost: variants × reps runs, and O(buckets) each for the peak.
 */
#ifndef RS_COMPARE_H
#define RS_COMPARE_H

#include <signal.h>
#include <stddef.h>
#include <stdio.h>

#include "labels.h"
#include "results.h"
#include "scenario.h"

#define COMPARE_MAX_KEYS 8
#define COMPARE_MAX_VARIANTS 4096
#define COMPARE_MAX_REPS 64
#define COMPARE_MAX_THREADS 256

struct compare_spec {
    const char *scenario;
    const char *const *sets; /* applied to every variant before its own values */
    size_t nsets;
    const char *vary[COMPARE_MAX_KEYS]; /* "KEY=V1,V2,..." */
    size_t nvary;
    unsigned reps;
    unsigned threads; /* replications of a variant run on up to this many (0: 1); results do not depend on it */
    const char *const *labels; /* --label VARIANT=TEXT (labels.h), nlabels of them */
    size_t nlabels;
    struct labels_map *given;  /* filled from labels, written to DIR/labels.csv when any */
    const char *dir;
    volatile sig_atomic_t *stop; /* set by a signal: stop after the current run (or NULL) */
};

/* Called after each variant (in variant order) with its label and its
 * first replication's verdict and reason ("metastable: still out of ..."),
 * so the caller can print progress and why. */
typedef void (*compare_report_fn)(void *user, const char *label, const char *why);

/* Runs the comparison (with spec->dir NULL, only checks every variant:
 * nothing runs or is written). Returns 0; 2 with every problem in diag (bad
 * scenario, override or --vary); 1 with a message in err (a run or a write
 * failed); 3 when stopped by spec->stop (the variants run so far are
 * written, the interrupted run's rows say complete = 0). With summary, on
 * 0 or 3 it holds summary.csv's table (results_fini frees it). */
int compare_run(const struct compare_spec *spec, struct scenario_diag *diag, compare_report_fn report,
                void *user, struct results *summary, char *err, size_t errsz);

#endif
