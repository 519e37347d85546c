/*
 * jsonout — summary.json: a summary table (results.h: a run's summary.csv,
 * an experiment's summary.csv, sweep.csv or tune.csv) as a JSON document,
 * for scripts and notebooks.
 *
 * The document is made from the same numbers as the CSV, with the CSV's
 * digits (results_cell), so its names and values are the CSV's, always:
 * each row is an object keyed by the column names. The scenario and the
 * variant are strings; every other label column (the seed, the point, a
 * grid or --vary key's values) holds numbers when every row's value is a
 * JSON number (0.5, 1e5; not 50ms or 01), strings otherwise; every number
 * column holds numbers, an empty cell null. The format (schema version 2)
 * is described in docs/outputs.md, and docs/summary.schema.json is its JSON
 * Schema:
 *
 *   { "schema": "retrystorm-summary", "version": 2, "retrystorm": "0.2.0",
 *     "command": "run", "scenario": "storm", "source": "summary.csv",
 *     "columns": ["scenario", ...], "rows": [ { "scenario": "storm", ... } ] }
 *
 * Strings are built and escaped by json-c after being made valid UTF-8 (a
 * grid value from the command line may hold any bytes, and json-c passes
 * bytes over 0x7F through as they are): each byte that starts no
 * well-formed sequence becomes U+FFFD. jsonout_utf8_len is that rule, for
 * every JSON writer (serve's answers too). Costs: linear in the table.
 */
#ifndef RS_JSONOUT_H
#define RS_JSONOUT_H

#include <stddef.h>
#include <stdio.h>

#include "results.h"

#define JSONOUT_VERSION 2

struct jsonout_meta {
    const char *command;  /* run, compare, sweep, tune */
    const char *scenario; /* the scenario's [run] name; NULL (null): merge's */
    const char *source;   /* the CSV file the rows are: summary.csv, sweep.csv, tune.csv */
};

/* Writes the JSON document of the table r to f, ending with a newline. */
void jsonout_write_results(FILE *f, const struct results *r, const struct jsonout_meta *m);

/* dir/summary.json of the table r, written in place of an earlier one.
 * Returns 0 or -1 with a message. */
int jsonout_write_results_dir(const char *dir, const struct results *r, const struct jsonout_meta *m,
                              char *err, size_t errsz);

/* The length (1 to 4) of the well-formed UTF-8 sequence that s starts, as
 * RFC 3629 defines it (no overlong form, no surrogate, nothing above
 * U+10FFFF), or 0 when the byte at s starts none: a continuation byte,
 * 0xC0, 0xC1, 0xF5 to 0xFF, or a sequence cut short (by a NUL too, so s
 * may end anywhere). The NUL itself is 1. O(1). */
size_t jsonout_utf8_len(const char *s);

#endif
