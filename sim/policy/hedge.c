/*
 * hedge — the table of hedging kinds and presets (hedge.h). Each preset's
 * values and the reading taken where its source is ambiguous are in
 * docs/hedging.md.
 */
#include "hedge.h"

#define B(c) ERRCLASS_BIT(CLS_##c)

const struct hedge_kind hedge_kinds[] = {
    {"none", "no hedging: copies only after failures (retries)", HEDGE_NONE, RS_TIME_NEVER, 95.0,
     1.0, 0, 0, 0, 0, CANCEL_NONE, false},
    {"fixed", "the next copy hedge_delay after the last one", HEDGE_FIXED, RS_TIME_NEVER, 95.0, 1.0,
     0, 0, 0, 0, CANCEL_NONE, false},
    {"percentile", "the next copy after the hedge_percentile of recent copy latencies",
     HEDGE_PERCENTILE, RS_TIME_NEVER, 95.0, 1.0, 0, 0, 0, 0, CANCEL_NONE, false},
    /* gRFC A6 hedgingPolicy example: maxAttempts 4, hedgingDelay 0.5s,
     * nonFatalStatusCodes UNAVAILABLE INTERNAL ABORTED; at most 5 copies;
     * a hedging method has no retry policy */
    {"grpc-hedge", "gRFC A6 (grpc/proposal A6-client-retries.md, hedgingPolicy example)",
     HEDGE_FIXED, 500 * RS_MS, 95.0, 1.0, 4, 5, B(CONN) | B(503) | B(500) | B(409), 0,
     CANCEL_ON_ABANDON, false},
    /* Envoy route HedgePolicy hedge_on_per_try_timeout: the copy goes at the
     * per-try timeout (hedge_delay, required); num_retries 1; retriable
     * errors are retried as by the 5xx policy */
    {"envoy-hedge", "Envoy route_components.proto HedgePolicy, router.cc onSoftPerTryTimeout",
     HEDGE_FIXED, RS_TIME_NEVER, 95.0, 1.0, 2, 0, 0,
     B(TIMEOUT) | B(CONN) | B(500) | B(502) | B(503) | B(504), CANCEL_ON_ABANDON, true},
    /* Polly v8 HedgingStrategyOptions: Delay 2 s, MaxHedgedAttempts 1 (2
     * copies; at most 10 hedged, 11 copies); every failure sends the next */
    {"polly-hedge", "Polly v8 HedgingStrategyOptions, HedgingConstants.cs", HEDGE_FIXED, 2 * RS_S,
     95.0, 1.0, 2, 11, ERRCLASS_ALL_FAILURES, 0, CANCEL_ON_ABANDON, false},
    /* Finagle BackupRequestFilter with maxExtraLoad 0.05: one backup after
     * p95 of recent latencies, at most 5 % extra load; ThriftMux interrupts */
    {"finagle-backup", "Finagle BackupRequestFilter.scala, MethodBuilder idempotent(0.05)",
     HEDGE_PERCENTILE, RS_TIME_NEVER, 95.0, 0.05, 2, 2, 0, 0, CANCEL_ON_ABANDON, false},
};

const unsigned hedge_nkinds = sizeof hedge_kinds / sizeof hedge_kinds[0];
