/*
 * labels — the names people read for variants, sweep points and keys.
 *
 * A key is written SECTION.KEY (load.rate, server.queue) or
 * SECTION.NAME.KEY (layer.app.attempts, service.db.queue). Its label is
 * its shortest unambiguous form: the fewest trailing dot-separated parts
 * of it that no other key of the scenario ends with (at a dot). The other
 * keys are every key that every section of the scenario accepts: [run],
 * [load], [herd], [server] when the scenario has it (the service named
 * server), and each phase, layer, service and cache by its name. When
 * every shorter form is taken, the label is the key as given. So a
 * single-layer scenario labels layer.app.attempts "attempts"; two layers
 * label it "app.attempts"; a layer and a service both named db label
 * layer.db.timeout "layer.db.timeout" when services accept timeout too.
 * Cost: O(sections · keys · parts) per key.
 *
 * A variant's display text: its label, or what --label named it, and the
 * backoff kind none read as "no backoff (immediate)". labels.csv (the
 * variant and its given text, one per line) carries --label from compare
 * to plot; labels_check_text says what a given text may hold.
 */
#ifndef RS_LABELS_H
#define RS_LABELS_H

#include <stddef.h>

#include "config.h"

#include <stdio.h>

#define LABELS_TEXT_MAX 80 /* bytes of a --label text */
#define LABELS_MAX 32      /* --label options of one command */
#define LABELS_NAME_MAX 511 /* bytes of a variant's name in a map */

/* The texts given to variants: at most LABELS_MAX, one per variant. */
struct labels_map {
    size_t n;
    struct {
        char variant[LABELS_NAME_MAX + 1];
        char text[LABELS_TEXT_MAX + 1];
    } e[LABELS_MAX];
};

/* The label of key (SECTION.KEY or SECTION.NAME.KEY; service.server.KEY
 * is server.KEY) in sc, into out (size bytes, cut short if smaller). */
void labels_short_key(const struct scenario *sc, const char *key, char *out, size_t size);

/* Whether text may name a variant: 1 to LABELS_TEXT_MAX bytes, none a
 * control character, a comma or a double quote (our CSVs quote nothing).
 * Returns 0, or -1 with a message naming the text and what is allowed. */
int labels_check_text(const char *text, char *err, size_t errsz);

/* A variant's text in a legend: given (non-NULL, non-empty) as is; else
 * the label with each part KEY=none of a backoff key (KEY ending in
 * backoff) read "no backoff (immediate)". */
void labels_legend(const char *label, const char *given, char *out, size_t size);

/* Takes one --label VARIANT=TEXT into m, against the variants' names
 * (names[0..n)). VARIANT names one variant: its name, or a longer form
 * of it, each '+'-separated part of it ending (at a dot) with the
 * name's part: layer.app.backoff=full names backoff=full. TEXT may
 * itself hold '=': the longest VARIANT that names a variant wins, so
 * the split is never a guess. A later label of the same variant
 * replaces an earlier one. Returns 0, or -1 with a message naming arg
 * and listing the variants (no variant, two variants, a bad TEXT, too
 * many labels). O(n · strlen(arg)²). */
int labels_take(struct labels_map *m, const char *arg, const char *const *names, size_t n, char *err,
                size_t errsz);

/* The text given to variant (NULL: none). O(m->n). */
const char *labels_find(const struct labels_map *m, const char *variant);

/* labels.csv: "variant,label", then one row per entry. */
void labels_write(FILE *f, const struct labels_map *m);

/* Parses labels.csv's text (hostile: the header, then whole lines of two
 * fields, each text checked, at most LABELS_MAX rows) into m. Returns 0,
 * or -1 with a message naming source and the line. O(strlen(text)). */
int labels_parse(const char *text, const char *source, struct labels_map *m, char *err, size_t errsz);

#endif
