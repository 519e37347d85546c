/*
 * scenario — a scenario file (INI, read by libinih) into a plain config struct.
 *
 * Sections: [run] [load] [server] [phase NAME]... [layer NAME]... (layers in
 * the order they first appear, outermost first). Overrides given as
 * "section.key=value" (layer.app.timeout=300ms) are applied after the file,
 * replacing a key or adding it. Every value is checked for type, unit and
 * range, then cross-field rules are checked; every problem is reported at
 * once in a diagnostic list, each message naming the source and line, the
 * section, key and value, and what is allowed. Loading is O(size of the
 * file + number of overrides · number of keys); nothing is allocated in the
 * result, which is a flat struct that may be copied.
 */
#ifndef RS_SCENARIO_H
#define RS_SCENARIO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "config.h" /* struct scenario: the model's input, which loading fills */

#define SCENARIO_MAX_LINE 197             /* characters, without the line ending; comments excepted */
/* The longest value a key of klen characters may have: scenario.ini (the
 * effective scenario) writes it as "key = value" on one line. */
#define SCENARIO_VALUE_ROOM(klen) ((size_t)SCENARIO_MAX_LINE - (size_t)(klen) - 3)
#define SCENARIO_MAX_MESSAGES 100         /* listed one by one; the rest are counted */

/* A list of messages; each is one line without a trailing newline. Zero it
 * before first use. A load lists at most SCENARIO_MAX_MESSAGES problems and
 * then one line "... and N more problems"; start and more are its own. */
struct scenario_diag {
    char **msg;
    size_t n, cap;
    size_t start, more; /* where the current load's messages begin; how many it left out */
};

void scenario_diag_fini(struct scenario_diag *d);

struct scenario_builtin {
    const char *name;
    const char *text;
};
/* The built-in scenarios, ended by a {NULL, NULL} entry (generated from scenarios/). */
extern const struct scenario_builtin scenario_builtins[];
const char *scenario_builtin_text(const char *name);
/* The first comment line of a scenario's text (what a built-in shows),
 * without its "; ": its start in *start and its length; 0 when the text
 * does not begin with a comment. */
size_t scenario_about(const char *text, const char **start);
/* The built-in traces (scenarios/NAME.csv), the same way; and one by name. */
extern const struct scenario_builtin scenario_traces[];
const char *scenario_trace_text(const char *name);

/* Loads the scenario at path (the name of a built-in, which always means
 * the built-in; or a file: a file named like a built-in is named by a path
 * such as ./herd), applies the overrides and validates. Returns 0 on success, or
 * the number of problems (all of them, listed or not), appended to diag. */
int scenario_load(struct scenario *sc, const char *path, const char *const *sets, size_t nsets,
                  struct scenario_diag *diag);

/* The same from text already in memory; source names it in messages. */
int scenario_load_text(struct scenario *sc, const char *text, const char *source,
                       const char *const *sets, size_t nsets, struct scenario_diag *diag);

/* The same for untrusted text (serve's page): no file is read, so a trace
 * must be a built-in one; anything else is refused with a message. */
int scenario_load_sealed(struct scenario *sc, const char *text, const char *source,
                         const char *const *sets, size_t nsets, struct scenario_diag *diag);


/* Writes the effective scenario as INI (every key, defaults included), so that
 * loading the output gives the same scenario. Returns 0 or -1 on a write error. */
int scenario_write_ini(const struct scenario *sc, FILE *f);

/* The Levenshtein distance between a and b (for "did you mean"); O(|a|·|b|). */
size_t scenario_edit_distance(const char *a, const char *b);

/* The name of the NULL-terminated list nearest to word, if at most 2 edits
 * away (the first of equals); NULL otherwise. For every "did you mean". */
const char *scenario_nearest(const char *word, const char *const *names);

/* The "did you mean" of word among the NULL-terminated names, into out
 * (empty when there is none): "did you mean one of A, B, ...?" when word
 * (2 or more characters) begins several names, else "did you mean 'N'?"
 * for the nearest (scenario_nearest) or the one name it begins. Returns
 * out. O(names · |word| · |name|). */
char *scenario_suggest(const char *word, const char *const *names, char *out, size_t size);

/* Prints every scenario key, one per line: its --set name (section.key, or
 * section.NAME.key for a named section) and what it allows. O(keys). */
void scenario_print_keys(FILE *f);

#endif
