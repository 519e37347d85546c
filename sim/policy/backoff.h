/*
 * backoff — the delay a layer waits before each retry: the generic kinds
 * and the presets of real retry libraries.
 *
 * Each kind is a const descriptor in one table (backoff_kinds), looked up by
 * name; adding a kind or a preset is adding an entry. A preset also brings
 * its library's defaults (attempts, retried classes, Retry-After handling,
 * overall deadline, parameters); keys written in the scenario override
 * them. k is the 1-based retry index (k = 1 before the second attempt); cls
 * is the class of the failure being retried. With
 * e(k) = min(cap, base·multiplier^k):
 *   none          0
 *   constant      base
 *   linear        min(cap, base·k)
 *   exponential   min(cap, base·multiplier^(k−1))
 *   full          U(0, e(k))                 AWS "Full Jitter"
 *   equal         e(k)/2 + U(0, e(k)/2)      AWS "Equal Jitter"
 *   decorrelated  s = min(cap, U(base, multiplier·s_prev)), s_0 = base
 * The AWS formulas follow the 2015 study's companion simulator
 * (docs/presets.md), where the first retry uses n = 1. The presets' formulas
 * are documented at their functions in backoff.c and in docs/presets.md, each
 * with its source. Arithmetic is done in double and clamped to the cap and
 * to RS_TIME_LIMIT, so huge exponents never wrap. Every call is O(1) with
 * at most one uniform draw from the jitter stream (resilience4j-exp: O(k),
 * as the library truncates its interval to whole milliseconds each step).
 */
#ifndef RS_BACKOFF_H
#define RS_BACKOFF_H

#include <gsl/gsl_rng.h>

#include "errclass.h"
#include "units.h"

struct backoff_params {
    rs_time base;
    double multiplier;
    rs_time cap;   /* RS_TIME_NEVER: no cap */
    double jitter; /* the kind's randomisation factor (see each preset) */
};

/* Per-call state; backoff_state_init sets it before the first retry. */
struct backoff_state {
    double prev;     /* decorrelated: the last delay; polly-v2: f(t) of the last retry */
    double interval; /* cenkalti: the current interval I */
};

/* What a layer does with a honoured Retry-After above its retry_after_max:
 * wait the maximum (urllib3), end the call `failed`, or discard the hint and
 * wait the backoff formula's delay (Envoy's rate-limited back-off). */
enum retry_after_over { RA_OVER_CLAMP, RA_OVER_GIVE_UP, RA_OVER_BACKOFF };
extern const char *const backoff_ra_over_names[]; /* by value, NULL-ended */

struct backoff_kind {
    const char *name;
    const char *source;  /* where the formula and defaults come from */
    const char *version; /* the upstream release or commit they follow */
    rs_time (*next_delay)(const struct backoff_params *p, struct backoff_state *s, unsigned k,
                          enum errclass cls, gsl_rng *r);
    struct backoff_params defaults;
    /* What a preset brings besides its parameters; 0 attempts: a plain kind. */
    unsigned attempts;
    errclass_set retry_on;
    bool honor_retry_after;
    rs_time retry_after_max;
    enum retry_after_over ra_over;
    rs_time deadline;     /* RS_TIME_NEVER: none */
    unsigned max_attempts; /* the library's own clamp, 0 for none (gRPC: 5) */
    /* How far the formula's exponent lags the retry's number: 1 for
     * exponential (base·multiplier^(k−1)), 0 for the others. A model that
     * numbers retries as the AWS study does (base·2^k at the k-th, occ)
     * passes k + exponent_lag. */
    unsigned exponent_lag;
};

extern const struct backoff_kind backoff_kinds[];
extern const unsigned backoff_nkinds;

/* Looks a kind up by name; NULL when there is none. O(number of kinds). */
const struct backoff_kind *backoff_find(const char *name);

static inline bool backoff_is_preset(const struct backoff_kind *k) { return k->attempts > 0; }

void backoff_state_init(const struct backoff_params *p, struct backoff_state *s);

/* e(k) = min(cap, base·multiplier^k), clamped; exposed for tests. */
double backoff_envelope(const struct backoff_params *p, double k);

#endif
