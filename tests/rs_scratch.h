/*
 * One scratch file in a fresh, private directory (mkdtemp), for the tests
 * that read files (csvread, trace, traffic). The includer defines
 * _POSIX_C_SOURCE 200809L (or _GNU_SOURCE) first, for mkdtemp.
 */
#ifndef RS_SCRATCH_H
#define RS_SCRATCH_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rs_test.h"

struct scratch {
    char dir[64], path[128];
};

/* Makes /tmp/rs-TAG-XXXXXX and names the file NAME in it (not created).
 * Returns 0, or -1 when the directory could not be made. */
static inline int scratch_make(struct scratch *s, const char *tag, const char *name)
{
    snprintf(s->dir, sizeof s->dir, "/tmp/rs-%s-XXXXXX", tag);
    if (mkdtemp(s->dir) == NULL)
        return -1;
    snprintf(s->path, sizeof s->path, "%s/%s", s->dir, name);
    return 0;
}

/* Removes the one name the tests make in the directory, then it. */
static inline int scratch_remove(const struct scratch *s)
{
    unlink(s->path);
    return rmdir(s->dir);
}

/* Writes n bytes as the file's whole content. */
static inline void scratch_write(const struct scratch *s, const void *bytes, size_t n)
{
    FILE *f = fopen(s->path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(bytes, 1, n, f), n);
    assert_int_equal(fclose(f), 0);
}

/* A scenario of 5 s on a rate trace (10 workers, 1 ms of work) that is
 * `good` when the scenario loads and `bad` afterwards: the file changed
 * between loading and the run (trace.c reads it again). */
static inline void scratch_trace_changed(struct scratch *s, const char *tag, const char *good,
                                         const char *bad, struct scenario *sc)
{
    assert_int_equal(scratch_make(s, tag, "rates.csv"), 0);
    scratch_write(s, good, strlen(good));
    char text[1024];
    snprintf(text, sizeof text,
             "[run]\nduration = 5s\n[load]\ntrace = %s\n"
             "[server]\nworkers = 10\nservice = const(1ms)\n",
             s->path);
    load_or_fail(sc, text, NULL, 0);
    scratch_write(s, bad, strlen(bad));
}

#endif
