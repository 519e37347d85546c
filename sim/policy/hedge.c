/*
 * hedge — the table of hedging kinds and presets (hedge.h). Each preset's
 * values and the reading taken where its source is ambiguous are in
 * docs/hedging.md.
 */
#include "hedge.h"

#define B(c) ERRCLASS_BIT(CLS_##c)

/* The plain modes: the scenario gives every value (defaults in scenario_apply.c). */
#define MODE(n, m, what) {.name = n, .source = what, .mode = m, .delay = RS_TIME_NEVER}
/* What a fixed-delay preset leaves of the percentile keys: their defaults. */
#define NO_PERCENTILE .percentile = 95.0, .max_extra = 1.0

const struct hedge_kind hedge_kinds[] = {
    MODE("none", HEDGE_NONE, "no hedging: copies only after failures (retries)"),
    MODE("fixed", HEDGE_FIXED, "the next copy hedge_delay after the last one"),
    MODE("percentile", HEDGE_PERCENTILE,
         "the next copy after the hedge_percentile of recent copy latencies"),
    /* gRFC A6 hedgingPolicy example: maxAttempts 4, hedgingDelay 0.5s,
     * nonFatalStatusCodes UNAVAILABLE INTERNAL ABORTED; values above 5 are
     * treated as 5; a method with a hedging policy has no retry policy */
    {.name = "grpc-hedge",
     .source = "gRFC A6 (grpc/proposal A6-client-retries.md, hedgingPolicy example)",
     .mode = HEDGE_FIXED, .delay = 500 * RS_MS, NO_PERCENTILE, .attempts = 4, .max_attempts = 5,
     .hedge_on = B(CONN) | B(503) | B(500) | B(409), .retry_on = 0, .cancel = CANCEL_ON_ABANDON},
    /* Envoy route HedgePolicy hedge_on_per_try_timeout: the copy goes at the
     * per-try timeout (the layer's timeout, which must be given: Envoy has
     * no default) without resetting the first; num_retries 1; errors are
     * retried as by the 5xx policy (reset: conn) */
    {.name = "envoy-hedge",
     .source = "Envoy route_components.proto HedgePolicy; router.cc onSoftPerTryTimeout",
     .mode = HEDGE_FIXED, .delay = RS_TIME_NEVER, NO_PERCENTILE, .attempts = 2,
     .retry_on = B(TIMEOUT) | B(CONN) | B(500) | B(502) | B(503) | B(504),
     .cancel = CANCEL_ON_ABANDON, .needs_delay = true},
    /* Polly v8 HedgingStrategyOptions: Delay 2 s, MaxHedgedAttempts 1 (2
     * copies); MaxHedgedAttempts above 10 (11 copies) fails validation;
     * every handled failure sends the next copy at once */
    {.name = "polly-hedge", .source = "Polly v8 HedgingStrategyOptions, HedgingConstants.cs",
     .mode = HEDGE_FIXED, .delay = 2 * RS_S, NO_PERCENTILE, .attempts = 2,
     .hedge_on = ERRCLASS_ALL_FAILURES,
     .cancel = CANCEL_ON_ABANDON, .refuse_above = 11},
    /* Finagle BackupRequestFilter with maxExtraLoad 0.05: one backup after
     * the 95th percentile of recent latencies, at most 5 % extra; ThriftMux
     * interrupts the loser (sendInterrupts) */
    {.name = "finagle-backup",
     .source = "Finagle BackupRequestFilter.scala; MethodBuilder idempotent(0.05)",
     .mode = HEDGE_PERCENTILE, .delay = RS_TIME_NEVER, .percentile = 95.0, .max_extra = 0.05,
     .attempts = 2, .max_attempts = 2, .cancel = CANCEL_ON_ABANDON},
};

const unsigned hedge_nkinds = sizeof hedge_kinds / sizeof hedge_kinds[0];
