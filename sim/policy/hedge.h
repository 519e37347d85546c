/*
 * hedge — hedging policies of a layer (docs/hedging.md): when a call sends
 * another copy of its request before the first has answered, and the
 * presets of the libraries that do it. A kind is `none`, `fixed` (the next
 * copy after `hedge_delay`), `percentile` (after the P-th percentile of the
 * layer's recent copy latencies, under an extra-load cap), or a preset that
 * brings its library's values for every key the scenario does not write.
 * The kinds are a table; looking one up is O(kinds).
 */
#ifndef RS_HEDGE_H
#define RS_HEDGE_H

#include <stdbool.h>

#include "errclass.h"
#include "units.h"

enum hedge_mode { HEDGE_NONE, HEDGE_FIXED, HEDGE_PERCENTILE };
enum cancel_mode { CANCEL_NONE, CANCEL_ON_ABANDON };

/* The most copies of one hedged call (attempts on a hedged layer). */
#define HEDGE_MAX_COPIES 16

struct hedge_kind {
    const char *name;
    const char *source;    /* where the values come from (docs/hedging.md) */
    enum hedge_mode mode;
    rs_time delay;         /* fixed: RS_TIME_NEVER when the scenario must give it */
    double percentile;     /* percentile: P, and the extra-load cap F */
    double max_extra;
    /* what a preset brings besides; 0 attempts: a plain mode */
    unsigned attempts, max_attempts; /* max_attempts: the library's clamp, 0 none */
    errclass_set hedge_on, retry_on;
    enum cancel_mode cancel;
    bool needs_delay;      /* envoy-hedge: the per-try timeout (timeout) must be given */
    unsigned refuse_above; /* the library refuses more copies than this (Polly: 11); 0 none */
};

/* Indexed by the `hedge` key's value (scn_hedge_names, in this order). */
extern const struct hedge_kind hedge_kinds[];
extern const unsigned hedge_nkinds;

static inline bool hedge_is_preset(const struct hedge_kind *k) { return k->attempts > 0; }

#endif
