/*
 * scenario_diag — the list of messages a load fills (struct scenario_diag),
 * the "FILE:LINE" every message starts with, and "did you mean" (edit
 * distance). A leaf of the scenario reader: scenario.c and each of the
 * scenario_*.c files call it, and it calls none of them, so no part of the
 * reader calls back into the loader.
 *
 * A load lists at most SCENARIO_MAX_MESSAGES problems and counts the rest,
 * unformatted (scn_diag_skip). Adding a message costs its length; the edit
 * distance O(|a|·|b|) for names of at most 63 characters.
 */
#define _XOPEN_SOURCE 700 /* strdup */

#include "scenario_int.h"

#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* Appends a message, unconditionally. */
static void diag_push(struct scenario_diag *d, const char *msg)
{
    if (d->n == d->cap) {
        size_t ncap = d->cap ? d->cap * 2 : 8;
        char **nm = realloc(d->msg, ncap * sizeof *nm);
        if (nm == NULL) {
            fprintf(stderr, "retrystorm: out of memory (%zu bytes for messages)\n", ncap * sizeof *nm);
            abort();
        }
        d->msg = nm;
        d->cap = ncap;
    }
    d->msg[d->n] = strdup(msg);
    if (d->msg[d->n] == NULL) {
        fprintf(stderr, "retrystorm: out of memory (%zu bytes for a message)\n", strlen(msg) + 1);
        abort();
    }
    d->n++;
}

/* Counts a problem that is not to be listed, when the current load has
 * listed SCENARIO_MAX_MESSAGES already: then the caller need not work out
 * its message. */
bool scn_diag_skip(struct scenario_diag *d)
{
    if (d->n - d->start < SCENARIO_MAX_MESSAGES)
        return false;
    d->more++;
    return true;
}

/* Adds a problem: listed while the current load has listed fewer than
 * SCENARIO_MAX_MESSAGES, else only counted (and not even formatted). */
void scn_diag_add(struct scenario_diag *d, const char *fmt, ...)
{
    if (scn_diag_skip(d))
        return;
    char buf[4096];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    diag_push(d, buf);
}

/* A load's messages start here. */
void scn_diag_begin(struct scenario_diag *d)
{
    d->start = d->n;
    d->more = 0;
}

/* Ends a load: one line for the problems not listed; returns how many
 * problems the load found, listed or not. */
int scn_diag_end(struct scenario_diag *d, const char *source)
{
    size_t total = d->n - d->start + d->more;
    if (d->more > 0) {
        char buf[600];
        snprintf(buf, sizeof buf, "%s: ... and %zu more problem%s (only the first %d are listed)",
                 source, d->more, d->more == 1 ? "" : "s", SCENARIO_MAX_MESSAGES);
        diag_push(d, buf);
    }
    return total > INT_MAX ? INT_MAX : (int)total;
}

void scenario_diag_fini(struct scenario_diag *d)
{
    for (size_t i = 0; i < d->n; i++)
        free(d->msg[i]);
    free(d->msg);
    *d = (struct scenario_diag){0};
}

const char *scenario_nearest(const char *word, const char *const *names)
{
    const char *best = NULL;
    size_t best_d = 3;
    for (size_t i = 0; names[i] != NULL; i++) {
        size_t d = scenario_edit_distance(word, names[i]);
        if (d < best_d)
            best = names[i], best_d = d;
    }
    return best;
}

char *scenario_suggest(const char *word, const char *const *names, char *out, size_t size)
{
    size_t len = strlen(word), n = 0, used = 0;
    const char *first = NULL;
    out[0] = '\0';
    for (size_t i = 0; len >= 2 && names[i] != NULL; i++)
        if (strncmp(word, names[i], len) == 0 && strcmp(word, names[i]) != 0)
            first = n++ ? first : names[i];
    const char *near = scenario_nearest(word, names);
    if (n < 2) {
        const char *one = near ? near : first;
        if (one != NULL)
            snprintf(out, size, "did you mean '%s'?", one);
        return out;
    }
    for (size_t i = 0; names[i] != NULL && used < size; i++)
        if (strncmp(word, names[i], len) == 0 && strcmp(word, names[i]) != 0) {
            int w = snprintf(out + used, size - used, "%s%s", used ? ", " : "did you mean one of ", names[i]);
            used += w > 0 ? (size_t)w : 0;
        }
    if (used < size)
        snprintf(out + used, size - used, "?");
    return out;
}

size_t scenario_edit_distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    if (la > 63 || lb > 63)
        return 64;
    size_t row[64];
    for (size_t j = 0; j <= lb; j++)
        row[j] = j;
    for (size_t i = 1; i <= la; i++) {
        size_t diag = row[0];
        row[0] = i;
        for (size_t j = 1; j <= lb; j++) {
            size_t up = row[j];
            size_t best = diag + (a[i - 1] != b[j - 1]);
            if (row[j] + 1 < best)
                best = row[j] + 1;
            if (row[j - 1] + 1 < best)
                best = row[j - 1] + 1;
            row[j] = best;
            diag = up;
        }
    }
    return row[lb];
}

/* "FILE:LINE" or "--set TEXT", for messages. */
const char *scn_where(const struct entry *e, char *buf, size_t size)
{
    if (e->source == NULL)
        snprintf(buf, size, "--set %s", e->set);
    else
        snprintf(buf, size, "%s:%d", e->source, e->line);
    return buf;
}
