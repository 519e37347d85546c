/*
 * breaker — circuit breaker state machines. See breaker.h; sources in the
 * table at the end.
 */
#include "breaker.h"

#include <string.h>

#define TIME_SLICES 10

void breaker_state_init(struct breaker_state *s, struct window *w)
{
    memset(s, 0, sizeof *s);
    s->w = w;
    if (w != NULL)
        memset(w, 0, sizeof *w);
}

bool breaker_needs_window(const struct breaker_kind *k, const struct breaker_params *p)
{
    return k->id == BREAKER_RATE && p->window_calls == 0;
}

size_t breaker_state_size(const struct breaker_kind *k, const struct breaker_params *p)
{
    return sizeof(struct breaker_state) + p->window_calls +
           (breaker_needs_window(k, p) ? sizeof(struct window) : 0);
}

static void to_open(struct breaker_state *s, const struct breaker_params *p, rs_time now)
{
    s->mode = BRK_OPEN;
    s->gen++;
    s->open_until = units_add(now, p->open_for);
}

static void to_closed(struct breaker_state *s, uint8_t *ring, const struct breaker_params *p)
{
    s->mode = BRK_CLOSED;
    s->gen++;
    s->consecutive = 0;
    /* a closed breaker starts with empty statistics (Resilience4j, Hystrix, Polly) */
    s->ring_pos = s->ring_n = s->ring_fail = s->ring_slow = 0;
    if (ring != NULL)
        memset(ring, 0, p->window_calls);
    if (s->w != NULL)
        memset(s->w, 0, sizeof *s->w);
}

bool breaker_admit(const struct breaker_kind *k, const struct breaker_params *p,
                   struct breaker_state *s, rs_time now, uint32_t *gen, bool *half_opened)
{
    *half_opened = false;
    if (k->id == BREAKER_NONE || k->id == BREAKER_BROOKER) {
        *gen = s->gen;
        return true;
    }
    if (s->mode == BRK_OPEN) {
        if (now < s->open_until)
            return false;
        s->mode = BRK_HALF_OPEN; /* lazily, on the first call after open_for */
        s->gen++;
        s->admitted = s->consecutive = 0;
        s->half_results = s->half_failures = s->half_slow = 0;
        *half_opened = true;
    }
    if (s->mode == BRK_HALF_OPEN) {
        if (s->admitted >= p->probes)
            return false; /* gobreaker ErrTooManyRequests; Resilience4j rejects beyond the permitted calls */
        s->admitted++;
    }
    *gen = s->gen;
    return true;
}

bool breaker_allow_retry(const struct breaker_kind *k, const struct breaker_params *p,
                         const struct breaker_state *s)
{
    if (k->id != BREAKER_BROOKER)
        return true;
    return !(s->calls > 0 && s->failed / s->calls > p->max_failure_ratio);
}

/* Adds a result to the closed-state window and returns whether the rates
 * now trip the breaker. */
static bool window_trips(const struct breaker_params *p, struct breaker_state *s, uint8_t *ring,
                         rs_time now, bool failed, bool slow)
{
    double calls, fails, slows;
    unsigned min_calls = p->min_calls;
    if (p->window_calls > 0) {
        if (s->ring_n == p->window_calls) { /* drop the oldest */
            uint8_t old = ring[s->ring_pos];
            s->ring_fail = (uint16_t)(s->ring_fail - (old & 1u));
            s->ring_slow = (uint16_t)(s->ring_slow - ((old >> 1) & 1u));
        } else {
            s->ring_n++;
        }
        ring[s->ring_pos] = (uint8_t)((failed ? 1u : 0u) | (slow ? 2u : 0u));
        s->ring_fail = (uint16_t)(s->ring_fail + failed);
        s->ring_slow = (uint16_t)(s->ring_slow + slow);
        s->ring_pos = (uint16_t)((s->ring_pos + 1u) % p->window_calls);
        calls = s->ring_n, fails = s->ring_fail, slows = s->ring_slow;
        if (min_calls > p->window_calls)
            min_calls = p->window_calls; /* Resilience4j: min(minimumNumberOfCalls, N) */
    } else {
        rs_time sl = p->window / TIME_SLICES > 0 ? p->window / TIME_SLICES : 1;
        window_add(s->w, now, sl, TIME_SLICES, 0, 1.0);
        if (failed)
            window_add(s->w, now, sl, TIME_SLICES, 1, 1.0);
        if (slow)
            window_add(s->w, now, sl, TIME_SLICES, 2, 1.0);
        calls = window_sum(s->w, now, sl, TIME_SLICES, 0);
        fails = window_sum(s->w, now, sl, TIME_SLICES, 1);
        slows = window_sum(s->w, now, sl, TIME_SLICES, 2);
    }
    if (calls < (double)min_calls)
        return false;
    return fails / calls >= p->failure_rate || slows / calls >= p->slow_rate;
}

bool breaker_result(const struct breaker_kind *k, const struct breaker_params *p,
                    struct breaker_state *s, uint8_t *ring, rs_time now, uint32_t gen,
                    bool failed, rs_time duration)
{
    if (k->id == BREAKER_NONE)
        return false;
    if (k->id == BREAKER_BROOKER) {
        s->calls += 1.0;
        s->failed += failed;
        return false;
    }
    if (gen != s->gen || s->mode == BRK_OPEN)
        return false; /* from an older generation: ignored */
    bool slow = p->slow_call < RS_TIME_NEVER && duration > p->slow_call;
    if (k->id == BREAKER_CONSECUTIVE) {
        if (s->mode == BRK_CLOSED) {
            s->consecutive = failed ? s->consecutive + 1 : 0;
            if (s->consecutive > p->failures) {
                to_open(s, p, now);
                return true;
            }
            return false;
        }
        if (failed) { /* half-open: any failure reopens */
            to_open(s, p, now);
            return true;
        }
        if (++s->consecutive >= p->probes)
            to_closed(s, ring, p);
        return false;
    }
    /* BREAKER_RATE */
    if (s->mode == BRK_CLOSED) {
        if (window_trips(p, s, ring, now, failed, slow)) {
            to_open(s, p, now);
            return true;
        }
        return false;
    }
    s->half_results++;
    s->half_failures += failed;
    s->half_slow += slow;
    unsigned need = p->probes < p->min_calls ? p->probes : p->min_calls;
    if (s->half_results < need)
        return false;
    double n = s->half_results;
    if (s->half_failures / n >= p->failure_rate || s->half_slow / n >= p->slow_rate) {
        to_open(s, p, now);
        return true;
    }
    to_closed(s, ring, p);
    return false;
}

#define S RS_S
#define NEVER RS_TIME_NEVER
/* {failures, open_for, probes, window_calls, window, min_calls, failure_rate,
 *  slow_rate, slow_call, max_failure_ratio} */
const struct breaker_kind breaker_kinds[] = {
    {"none", BREAKER_NONE, "", "", {0, 0, 0, 0, 0, 0, 0, 0, NEVER, 0}},
    {"consecutive", BREAKER_CONSECUTIVE, "sony/gobreaker gobreaker.go (ReadyToTrip: > 5 consecutive failures)", "sony/gobreaker v2 gobreaker.go 3862861",
     {5, 60 * S, 1, 0, 0, 0, 0, 0, NEVER, 0}},
    {"gobreaker", BREAKER_CONSECUTIVE, "sony/gobreaker gobreaker.go defaults", "sony/gobreaker v2 gobreaker.go 3862861",
     {5, 60 * S, 1, 0, 0, 0, 0, 0, NEVER, 0}},
    {"rate", BREAKER_RATE, "resilience4j CircuitBreakerConfig.java defaults", "resilience4j CircuitBreakerConfig.java 335f5eb",
     {0, 60 * S, 10, 100, 0, 100, 0.5, 1.0, 60 * S, 0}},
    {"resilience4j", BREAKER_RATE, "resilience4j CircuitBreakerConfig.java defaults", "resilience4j CircuitBreakerConfig.java 335f5eb",
     {0, 60 * S, 10, 100, 0, 100, 0.5, 1.0, 60 * S, 0}},
    {"hystrix", BREAKER_RATE, "Netflix/Hystrix HystrixCommandProperties.java (10 s window, 20 requests, 50 %, 5 s)", "Hystrix 1.5 HystrixCommandProperties.java da55d45, breaker b5c1d20",
     {0, 5 * S, 1, 0, 10 * S, 20, 0.5, 1.0, NEVER, 0}},
    {"polly", BREAKER_RATE, "App-vNext/Polly CircuitBreakerConstants.cs (v8: 10 %, 100 calls, 30 s, 5 s)", "Polly v8 CircuitBreakerConstants.cs 38a75c4, AdvancedCircuitBehavior.cs 13428cc",
     {0, 5 * S, 1, 0, 30 * S, 100, 0.1, 1.0, NEVER, 0}},
    {"brooker", BREAKER_BROOKER, "mbrooker/simulator_example retry_sim (10 % cumulative, retries only)", "mbrooker/simulator_example retry_strategy.py 7e5a117",
     {0, 0, 0, 0, 0, 0, 0, 0, NEVER, 0.1}},
};
const unsigned breaker_nkinds = sizeof breaker_kinds / sizeof breaker_kinds[0];

const struct breaker_kind *breaker_find(const char *name)
{
    for (unsigned i = 0; i < breaker_nkinds; i++)
        if (strcmp(breaker_kinds[i].name, name) == 0)
            return &breaker_kinds[i];
    return NULL;
}
