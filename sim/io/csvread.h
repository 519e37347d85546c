/*
 * csvread — the one reader of the files retrystorm wrote and reads back
 * (experiment.csv, jobs.csv and status.csv, for --resume and merge; the
 * variants' time series, latencies and attempts compare combines).
 *
 * Every such file is hostile input: it may have been edited, truncated by a
 * crash, or crafted. The reader opens only a regular file (never a fifo or a
 * device: no hang), refuses one larger than the caller's limit, and splits
 * lines into comma-separated fields (our files quote nothing) with their
 * line numbers, so that every error can name the file and line. Field
 * parsers accept a whole field or nothing. A last line without its newline
 * (a write cut short by a crash) is reported as torn, not as a row.
 * Costs: one read of the file; O(1) per field.
 */
#ifndef RS_CSVREAD_H
#define RS_CSVREAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct csv {
    char *buf;        /* the whole file, NUL-terminated */
    char *pos;        /* the next line */
    unsigned line;    /* the number of the line last returned (1-based) */
    bool torn;        /* the last line returned had no newline */
    char path[4200];  /* for messages */
};

/* Reads `path` into c. Returns 0; 1 when it does not exist (err says so);
 * -1 when it is not a readable regular file or is larger than maxbytes,
 * with a message in err. */
int csv_open(struct csv *c, const char *path, size_t maxbytes, char *err, size_t errsz);

/* The next line's fields: returns their number (at most max; *more is set
 * when the line had more), or 0 at the end of the file. The fields point
 * into the buffer and live until csv_close. */
size_t csv_next(struct csv *c, char **fields, size_t max, bool *more);

void csv_close(struct csv *c);

/* A whole field as an unsigned integer no greater than max. */
bool csv_uint(const char *s, uint64_t max, uint64_t *out);

/* A whole field as a finite number; an empty field is NaN ("no value"). */
bool csv_double(const char *s, double *out);

#endif
