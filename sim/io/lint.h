/*
 * lint — capacity and configuration warnings on a valid scenario, from the
 * baseline figures of capacity.h. `check` prints the table and the
 * warnings, `check --strict` turns them into errors, and `run` prints them
 * before it runs. A warning never stops a run. The rules (docs/lint.md):
 *   - utilisation per replica at least LINT_UTIL_WARN: a warning; at least
 *     LINT_UTIL_OVER: over capacity before any trigger (LINT_OVER);
 *   - an unbounded queue behind a layer that gives up (a timeout or a
 *     deadline), unless the service drops the expired work (stale work);
 *   - a layer whose worst call (capacity.h) is not shorter than the
 *     timeout or deadline of the layer that calls it: the one just above it
 *     on its edge, or any layer into the service its edge starts from;
 *   - the worst path's attempt product above LINT_MAX_AMPLIFICATION.
 * Each message is one line naming the service or layer, the numbers and
 * the rule. O(services · layers + layers²).
 */
#ifndef RS_LINT_H
#define RS_LINT_H

#include <stdio.h>

#include "capacity.h"

#define LINT_UTIL_WARN 0.9
#define LINT_UTIL_OVER 1.0
#define LINT_MAX_AMPLIFICATION 10.0

enum lint_level { LINT_WARNING, LINT_OVER };

/* Receives one message (without a level prefix or a newline). */
typedef void (*lint_emit)(void *ctx, enum lint_level level, const char *msg);

/* Calls emit for each warning of sc, whose figures c holds (capacity_estimate),
 * in a fixed order: services, then layers, then the attempt product.
 * Returns the number of warnings. */
unsigned lint_scenario(const struct scenario *sc, const struct capacity *c, lint_emit emit, void *ctx);

/* Prints the table of the services' baseline: name, requests/s, mean hold,
 * workers × replicas and utilisation per replica. */
void lint_print_table(FILE *f, const struct scenario *sc, const struct capacity *c);

#endif
