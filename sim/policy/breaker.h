/*
 * breaker — circuit breakers as state machines (docs/breakers.md), one
 * state per scope (client, instance or shared). The layer asks before each
 * attempt; an open breaker fails it at once (class `breaker`, which ends the
 * call). Results are reported with the generation the attempt was admitted
 * in; results from an older generation are ignored (gobreaker). Kinds:
 *   consecutive  gobreaker: trips after more than `failures` consecutive
 *                failures; open for `open_for`; then half-open admits
 *                `probes` calls and closes after that many successes; any
 *                failure reopens
 *   rate         Resilience4j (and Hystrix, Polly as presets): failure and
 *                slow-call rates over a count window of the last `window_calls`
 *                results or a time window of `window` (10 slices), evaluated
 *                once `min_calls` are in; trips when either rate reaches its
 *                threshold; half-open admits `probes` calls and decides on
 *                their rates
 *   brooker      per-client cumulative failure ratio: above `max_failure_ratio`
 *                retries stop (first attempts still go); no window, no
 *                half-open
 * Transitions from open to half-open are lazy (on the next call), as in
 * gobreaker and Resilience4j's default. Every operation is O(1).
 */
#ifndef RS_BREAKER_H
#define RS_BREAKER_H

#include <stdbool.h>
#include <stdint.h>

#include "units.h"
#include "window.h"

enum breaker_id { BREAKER_NONE, BREAKER_CONSECUTIVE, BREAKER_RATE, BREAKER_BROOKER };
enum breaker_mode { BRK_CLOSED, BRK_OPEN, BRK_HALF_OPEN };

#define BREAKER_MAX_WINDOW_CALLS 1000

struct breaker_params {
    unsigned failures;        /* consecutive: trips when consecutive failures exceed this */
    rs_time open_for;
    unsigned probes;          /* half-open calls admitted */
    unsigned window_calls;    /* rate: count window (0: time window) */
    rs_time window;           /* rate: time window */
    unsigned min_calls;
    double failure_rate, slow_rate; /* thresholds in [0, 1] */
    rs_time slow_call;
    double max_failure_ratio; /* brooker */
};

struct breaker_kind {
    const char *name;
    enum breaker_id id;
    const char *source;
    const char *version; /* the upstream release or commit it follows */
    struct breaker_params defaults;
};

extern const struct breaker_kind breaker_kinds[];
extern const unsigned breaker_nkinds;
const struct breaker_kind *breaker_find(const char *name);

/* A breaker's state: one 64-byte cache line (a million clients' states take
 * 64 MB), the fields every kind touches first. */
struct breaker_state {
    _Alignas(64) rs_time open_until;
    uint32_t gen;             /* bumped at every transition */
    uint32_t consecutive;     /* failures (closed) or successes (half-open) */
    uint32_t admitted;        /* half-open calls admitted */
    uint8_t mode;
    uint32_t half_results, half_failures, half_slow;
    union {
        struct { /* rate */
            /* count window: a ring of results (bit 0 failure, bit 1 slow);
             * at most BREAKER_MAX_WINDOW_CALLS */
            uint16_t ring_pos, ring_n, ring_fail, ring_slow;
            struct window *w; /* time window: [0] calls [1] failures [2] slow (NULL if none) */
        };
        struct { /* brooker: cumulative */
            double calls, failed;
        };
    };
};

/* The ring of a count window lives outside the state (ring may be NULL for
 * other kinds; it needs window_calls bytes), and so does a time window:
 * w is the state's window when breaker_needs_window, else NULL. */
void breaker_state_init(struct breaker_state *s, struct window *w);
bool breaker_needs_window(const struct breaker_kind *k, const struct breaker_params *p);
/* The bytes one state takes with its ring (window_calls bytes) and time
 * window, if any. */
size_t breaker_state_size(const struct breaker_kind *k, const struct breaker_params *p);

/* Before an attempt: true to let it through (its generation in *gen). A
 * transition (to half-open) is reported in *transition. */
bool breaker_admit(const struct breaker_kind *k, const struct breaker_params *p,
                   struct breaker_state *s, rs_time now, uint32_t *gen, bool *opened);

/* Before a retry (brooker only refuses). */
bool breaker_allow_retry(const struct breaker_kind *k, const struct breaker_params *p,
                         const struct breaker_state *s);

/* The result of an admitted attempt: failed, and how long it took. Returns
 * true when this result opened the breaker. */
bool breaker_result(const struct breaker_kind *k, const struct breaker_params *p,
                    struct breaker_state *s, uint8_t *ring, rs_time now, uint32_t gen,
                    bool failed, rs_time duration);

static inline bool breaker_is_open(const struct breaker_state *s) { return s->mode != BRK_CLOSED; }

#endif
