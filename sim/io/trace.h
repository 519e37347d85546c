/*
 * trace — a file of real traffic, read one row at a time (it may hold 10^7
 * rows: it is never loaded whole).
 *
 * Two formats, told apart by the header line:
 *   t,rate   per-interval rates: from each row's t (seconds) until the next
 *            row's, arrivals are Poisson at `rate` per second; the last row's
 *            rate holds to the end of the run; before the first row, none.
 *            Times strictly increase.
 *   t        arrival timestamps (seconds): one logical request at each, in
 *            order. Times never decrease (equal ones are simultaneous).
 * Times are non-negative decimal numbers of seconds (12, 0.25, 1.5e3) up to
 * RS_TIME_LIMIT, rounded to the nanosecond; rates are non-negative finite
 * numbers up to 1e9 per second. Blank lines and lines starting with '#' are
 * skipped (but counted in line numbers); a CR before the newline is
 * ignored; anything else (more or fewer fields, junk, a line longer than
 * TRACE_MAX_LINE characters, a NUL byte) is an error naming the file, the
 * line and what is allowed. Only a regular file is opened (never a fifo or
 * a device: no hang).
 * A run reads its trace through the model's arrival source (sim.h), which
 * trace_arrivals makes from a reader here: the model opens no file.
 * Costs: open O(1); next O(length of the line); check O(size of the file)
 * in O(1) memory.
 */
#ifndef RS_TRACE_H
#define RS_TRACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "config.h"
#include "sim.h"
#include "units.h"

#define TRACE_MAX_LINE 200

enum trace_kind { TRACE_RATES, TRACE_TIMES };

struct trace {
    FILE *f;
    enum trace_kind kind;
    unsigned long long line; /* of the row last read */
    rs_time last_t;          /* the previous row's time; -1: none yet */
    char name[4200];         /* for messages: the path, or the built-in's name */
};

/* Opens the trace at path and reads its header. Returns 0, or -1 with a
 * message in err naming the path and what is wrong. */
int trace_open(struct trace *t, const char *path, char *err, size_t errsz);
/* The same over text in memory (a built-in trace); name is for messages. */
int trace_open_text(struct trace *t, const char *text, const char *name, char *err, size_t errsz);
/* The next row: returns 1 with its time in *at (ns) and, for TRACE_RATES,
 * its rate per second in *rate; 0 at the end; -1 on a bad row, with
 * "NAME:LINE: ..." in err (the reader is then at the next line). */
int trace_next(struct trace *t, rs_time *at, double *rate, char *err, size_t errsz);
void trace_close(struct trace *t);

/* What a whole trace holds (trace_check). */
struct trace_info {
    enum trace_kind kind;
    unsigned long long rows;
    rs_time first, last; /* times of the first and last rows; -1 when no rows */
    unsigned long long max_equal; /* the most rows at one time (simultaneous arrivals) */
};
/* Reads the whole trace (already opened, from its first row) and calls
 * report(ctx, message) for every bad row, in order ("NAME:LINE: ...").
 * Returns the number of bad rows; fills *info. Closes nothing. */
unsigned long long trace_check(struct trace *t, void (*report)(void *ctx, const char *msg),
                               void *ctx, struct trace_info *info);

/* The arrival source of sc's trace for a run (sim_set_arrivals): when sc
 * is an open loop with a trace, the file (or the built-in trace) opened
 * again and read one row at a time as the run reaches it; the source owns
 * the reader and closes it. Returns 0 with *src filled (zeroed when sc
 * needs none), or -1 with a message in err naming the trace (it may have
 * changed since the scenario was checked). O(1) plus the header line. */
int trace_arrivals(const struct scenario *sc, struct arrival_source *src, char *err,
                   size_t errsz);
/* sim_create with the scenario's arrivals handed in (trace_arrivals): how
 * every command makes a run. Returns the run, or NULL with err. */
struct sim *trace_sim_create(const struct scenario *sc, uint32_t replication, char *err,
                             size_t errsz);

#endif
