/*
 * jsonout — summary.json: a summary table (summary.csv, sweep.csv or
 * tune.csv) as a JSON document, for scripts and notebooks.
 *
 * The document is made from the CSV text the command has just written, so
 * its names and values are the CSV's, always: each row is an object keyed
 * by the CSV's column names (a table with a column twice is refused). A
 * column is typed as a whole: the scenario, the variant and every grid or
 * --vary key (a name with a dot) are strings; any other column whose cells
 * are all JSON numbers (or empty) holds numbers with the CSV's own digits
 * (no rounding on the way); an empty cell is null. The rows are written
 * one per line as they are read, so memory is one row, not the table. The format (schema version 1) is
 * described in the README, and docs/summary.schema.json is its JSON Schema:
 *
 *   { "schema": "retrystorm-summary", "version": 1, "retrystorm": "0.1.0",
 *     "command": "run", "scenario": "storm", "source": "summary.csv",
 *     "columns": ["scenario", ...], "rows": [ { "scenario": "storm", ... } ] }
 *
 * The JSON is built and escaped by json-c, from the table made valid UTF-8
 * first (a CSV read back may hold any bytes, and json-c passes bytes over
 * 0x7F through as they are): each byte that starts no well-formed sequence
 * becomes U+FFFD. jsonout_utf8_len is that rule, for every JSON writer
 * (serve's answers too). Costs: linear in the table.
 */
#ifndef RS_JSONOUT_H
#define RS_JSONOUT_H

#include <stddef.h>
#include <stdio.h>

#define JSONOUT_VERSION 1

struct jsonout_meta {
    const char *command;  /* run, compare, sweep, tune */
    const char *scenario; /* the scenario's [run] name; NULL (null): merge's */
    const char *source;   /* the CSV file the rows are: summary.csv, sweep.csv, tune.csv */
};

/* Writes the JSON document of the CSV text `csv` (a header line, then rows
 * of as many comma-separated fields; our files quote nothing) to f, ending
 * with a newline. Returns 0, or -1 with a message when the text is not
 * such a table. */
int jsonout_write(FILE *f, const char *csv, size_t len, const struct jsonout_meta *m, char *err,
                  size_t errsz);

/* dir/summary.json from dir/`m->source` (read back as any file is: hostile,
 * at most 256 MiB), written in place of an earlier one. Returns 0 or -1
 * with a message. */
int jsonout_write_dir(const char *dir, const struct jsonout_meta *m, char *err, size_t errsz);

/* The length (1 to 4) of the well-formed UTF-8 sequence that s starts, as
 * RFC 3629 defines it (no overlong form, no surrogate, nothing above
 * U+10FFFF), or 0 when the byte at s starts none: a continuation byte,
 * 0xC0, 0xC1, 0xF5 to 0xFF, or a sequence cut short (by a NUL too, so s
 * may end anywhere). The NUL itself is 1. O(1). */
size_t jsonout_utf8_len(const char *s);

#endif
