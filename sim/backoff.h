/*
 * backoff — the delay a layer waits before each retry.
 *
 * Each kind is a const descriptor in one table (backoff_kinds), looked up by
 * name; adding a kind is adding an entry. k is the 1-based retry index (k = 1
 * before the second attempt). With e(k) = min(cap, base·multiplier^k):
 *   none          0
 *   constant      base
 *   linear        min(cap, base·k)
 *   exponential   min(cap, base·multiplier^(k−1))
 *   full          U(0, e(k))                 AWS "Full Jitter"
 *   equal         e(k)/2 + U(0, e(k)/2)      AWS "Equal Jitter"
 *   decorrelated  s = min(cap, U(base, multiplier·s_prev)), s_0 = base
 *                                            AWS "Decorrelated Jitter"
 * The AWS formulas follow the 2015 study's companion simulator
 * (POLICIES.md §1), where the first retry uses n = 1. The default multiplier
 * is 2, and 3 for decorrelated as in the study. Arithmetic is done in double
 * and clamped to the cap and to RS_TIME_LIMIT, so huge exponents never wrap.
 * Every call is O(1) with at most one uniform draw from the jitter stream.
 */
#ifndef RS_BACKOFF_H
#define RS_BACKOFF_H

#include <gsl/gsl_rng.h>

#include "units.h"

struct backoff_params {
    rs_time base;
    double multiplier;
    rs_time cap; /* RS_TIME_NEVER: no cap */
};

/* Per-call state; backoff_state_init sets it before the first retry. */
struct backoff_state {
    rs_time prev;
};

struct backoff_kind {
    const char *name;
    double default_multiplier;
    bool random;
    rs_time (*next_delay)(const struct backoff_params *p, struct backoff_state *s, unsigned k,
                          gsl_rng *r);
};

extern const struct backoff_kind backoff_kinds[];
extern const unsigned backoff_nkinds;

/* Looks a kind up by name; NULL when there is none. O(number of kinds). */
const struct backoff_kind *backoff_find(const char *name);

static inline void backoff_state_init(const struct backoff_params *p, struct backoff_state *s)
{
    s->prev = p->base;
}

/* e(k) = min(cap, base·multiplier^k), clamped; exposed for tests. */
double backoff_envelope(const struct backoff_params *p, double k);

#endif
