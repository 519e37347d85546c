/*
 * scenario_keys — the table of a scenario's keys and the parsers of their
 * values.
 *
 * Each key is one const descriptor (section kind, name, type, offset of its
 * field, limits, the words a message lists as allowed): adding a key is
 * adding one row, and its type names the parser that checks and stores the
 * value. scn_find_key, scn_suggest_key and scn_list_keys walk the table,
 * O(keys); scn_apply_value parses one value, linear in its length, and
 * reports a bad one with its file, line, key and what is allowed.
 */
#define _XOPEN_SOURCE 700 /* strtok_r, and POSIX 2008 */

#include "scenario_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* ---- the key table ---- */

const char *const scn_sect_names[S_NKINDS] = {"run", "load", "server", "herd", "phase", "layer", "service", "cache"};

const char *const scn_model_names[] = {"open", "closed", NULL};
const char *const scn_arrival_names[] = {"poisson", "uniform", NULL};
const char *const scn_discipline_names[] = {"fifo", "lifo", NULL};
const char *const scn_outage_names[] = {"none", "refuse", "hang", "error", NULL};
const char *const scn_honor_names[] = {"ignore", "honor", NULL};
const char *const scn_scope_names[] = {"instance", "client", "shared", NULL};
const char *const scn_server_model_names[] = {"queue", "occ", NULL};
const char *const scn_balancer_names[] = {"random", "round-robin", "least-outstanding", "p2c", NULL};
const char *const scn_degrade_names[] = {"linear", "exponential", NULL};
/* in the order of hedge_kinds (hedge.c) */
const char *const scn_hedge_names[] = {"none", "fixed", "percentile", "grpc-hedge", "envoy-hedge",
                                       "polly-hedge", "finagle-backup", NULL};
const char *const scn_cancel_names[] = {"none", "on-abandon", NULL};

/* Keys that only a service graph uses: giving any of them sets sc->graph
 * (and scenario_write_ini then writes the graph form). */
const char *const scn_graph_keys[] = {
    "replicas", "balancer", "calls", "service_after", "from", "to", "concurrency",
    "concurrency_queue", "concurrency_wait", "target", "latency", "loss", NULL};

#define DIST_ALLOWED "a distribution such as exp(10ms), or none"
#define PROB_ALLOWED "a probability from 0 to 1"
const struct key_desc scn_keys[] = {
    {S_RUN, "name", T_NAME, RUN(name), 0, 0, "letters, digits, '-', '_' (at most 47)", NULL, 0},
    {S_RUN, "duration", T_DURATION, RUN(duration), 1, 0, "a duration > 0 such as 300s", NULL, 0},
    {S_RUN, "warmup", T_DURATION, RUN(warmup), 0, 0, "a duration such as 10s, less than duration", NULL, 0},
    {S_RUN, "seed", T_SEED, RUN(seed), 0, 0, "an integer from 0 to 18446744073709551615", NULL, 0},
    {S_RUN, "bucket", T_DURATION, RUN(bucket), 1, 0, "a duration > 0 such as 1s or 10ms", NULL, 0},
    {S_RUN, "verdict_window", T_DURATION, RUN(verdict_window), 1, 0, "a duration > 0 such as 1s (whole buckets)", NULL, 0},
    {S_RUN, "verdict_hold", T_DURATION, RUN(verdict_hold), 1, 0, "a duration > 0 such as 5s (at least one window)", NULL, 0},
    {S_RUN, "verdict_persist", T_DURATION, RUN(verdict_persist), 1, 0, "a duration > 0 such as 60s", NULL, 0},
    {S_RUN, "verdict_tolerance", T_REAL, RUN(verdict_tolerance), 0, 1, "a number from 0 to 1", NULL, 0},
    {S_RUN, "drain", T_BOOL, RUN(drain), 0, 0, "true, false", NULL, 0},
    {S_RUN, "drain_limit", T_DURATION, RUN(drain_limit), 1, 0, "a duration > 0 such as 600s", NULL, 0},
    {S_LOAD, "model", T_ENUM, RUN(model), 0, 0, "open, closed", scn_model_names, 0},
    {S_LOAD, "arrival", T_ENUM, RUN(arrival), 0, 0, "poisson, uniform", scn_arrival_names, 0},
    {S_LOAD, "rate", T_RATE, RUN(rate), 0, 0, "a rate > 0 and at most 1e9/s, such as 800/s (units /ns /us /ms /s /m /h)", NULL, 0},
    {S_LOAD, "think", T_DIST, RUN(think), 0, 0, "a distribution such as exp(1s)", NULL, 0},
    {S_LOAD, "clients", T_UINT, RUN(clients), 1, SCENARIO_MAX_CLIENTS, "an integer from 1 to 10000000", NULL, 0},
    {S_LOAD, "idempotent", T_BOOL, RUN(idempotent), 0, 0, "true, false", NULL, 0},
    {S_LOAD, "key", T_BOOL, RUN(key), 0, 0, "true, false", NULL, 0},
    {S_LOAD, "shape", T_SHAPE, RUN(sine_amplitude), 0, 0, "none, or sine(AMPLITUDE, PERIOD) with AMPLITUDE from 0 to 1 and PERIOD a duration of at least 1ms, such as sine(0.5, 24h)", NULL, 0},
    {S_LOAD, "trace", T_PATH, RUN(trace), 0, 0, "a CSV file of t,rate rows or of t timestamps (relative to the scenario file), or none", NULL, 0},
    {S_LOAD, "keys", T_UINT, RUN(keys), 1, SCENARIO_MAX_KEYS, "an integer from 1 to 10000000", NULL, 0},
    {S_LOAD, "popularity", T_POPULARITY, RUN(zipf), 0, 0, "uniform, or zipf(S) with S from 0 (exclusive) to 10, such as zipf(0.8)", NULL, 0},
    {S_SERVER, "model", T_ENUM, SV(model), 0, 0, "queue, occ", scn_server_model_names, 0},
    {S_HERD, "at", T_TIMES, RUN(herds), 0, 0, "durations such as 30s (a list, or one per line)", NULL, 0},
    {S_SERVER, "workers", T_UINT, SV(workers), 1, 1000000, "an integer from 1 to 1000000", NULL, 0},
    {S_SERVER, "queue", T_QUEUE, SV(queue), 0, 1000000000, "an integer from 0 to 1000000000, or unbounded", NULL, 0},
    {S_SERVER, "service", T_DIST, SV(service), 0, 0, "a distribution such as exp(10ms)", NULL, 0},
    {S_SERVER, "discipline", T_ENUM, SV(discipline), 0, 0, "fifo, lifo", scn_discipline_names, 0},
    {S_SERVER, "error_400", T_PROB, SV(p400), 0, 0, PROB_ALLOWED, NULL, 0},
    {S_SERVER, "error_500", T_PROB, SV(p500), 0, 0, PROB_ALLOWED, NULL, 0},
    {S_SERVER, "error_503", T_PROB, SV(p503), 0, 0, PROB_ALLOWED, NULL, 0},
    {S_SERVER, "business", T_PROB, SV(p_business), 0, 0, PROB_ALLOWED, NULL, 0},
    {S_SERVER, "limit_rate", T_RATE_NONE, SV(limit_rate), 0, 0, "a rate such as 500/s, or none", NULL, 0},
    {S_SERVER, "limit_burst", T_UINT, SV(limit_burst), 1, 1000000000, "an integer from 1 to 1000000000", NULL, 0},
    {S_SERVER, "limit_status", T_LIMIT_STATUS, SV(limit_status), 0, 0, "429, 403, 503", NULL, 0},
    {S_SERVER, "limit_retry_after", T_CAP, SV(limit_retry_after), 0, 0, "a duration such as 1s, or none", NULL, 0},
    {S_SERVER, "degrade", T_REAL, SV(degrade), 0, 1000, "a number from 0 to 1000", NULL, 0},
    {S_SERVER, "degrade_shape", T_ENUM, SV(degrade_shape), 0, 0, "linear, exponential", scn_degrade_names, 0},
    {S_SERVER, "cache", T_NAME_NONE, SV(cache), 0, 0, "a cache's name (a [cache NAME] section), or none", NULL, 0},
    {S_SERVER, "drop_expired", T_BOOL, SV(drop_expired), 0, 0, "true, false", NULL, 0},
    {S_SERVER, "dedup", T_BOOL, SV(dedup), 0, 0, "true, false", NULL, 0},
    {S_SERVER, "cancel_running", T_BOOL, SV(cancel_running), 0, 0, "true, false", NULL, 0},
    {S_SERVER, "replay", T_DIST, SV(replay), 0, 0, "a distribution such as const(1ms)", NULL, 0},
    {S_SERVER, "replicas", T_UINT, SV(replicas), 1, SCENARIO_MAX_REPLICAS, "an integer from 1 to 1000", NULL, 0},
    {S_SERVER, "balancer", T_ENUM, SV(balancer), 0, 0, "random, round-robin, least-outstanding, p2c", scn_balancer_names, 0},
    {S_SERVER, "calls", T_CALLS, SV(calls), 1, SCENARIO_MAX_FANOUT, "service names such as db or db*3 (at most 8, k from 1 to 64), or none", NULL, 0},
    {S_SERVER, "service_after", T_DIST_NONE, SV(service_after), 0, 0, DIST_ALLOWED, NULL, SV(has_after)},
    {S_PHASE, "start", T_DURATION, PH(start), 0, 0, "a duration such as 60s", NULL, 0},
    {S_PHASE, "end", T_DURATION, PH(end), 0, 0, "a duration after start, such as 70s", NULL, 0},
    {S_PHASE, "rate", T_PHASE_RATE, PH(rate), 0, 0, "a factor such as x2, a rate such as 1600/s, or ramp(A, B) of two factors or two rates, such as ramp(40/s, 80/s)", NULL, 0},
    {S_PHASE, "capacity", T_FACTOR, PH(capacity), 0, 0, "a factor from 0 to 1000 such as 0.5 or x0.5", NULL, 0},
    {S_PHASE, "outage", T_ENUM, PH(outage), 0, 0, "none, refuse, hang, error", scn_outage_names, 0},
    {S_PHASE, "retry_after", T_CAP, PH(retry_after), 0, 0, "a duration such as 5s, or none", NULL, 0},
    {S_PHASE, "slowdown", T_REAL, PH(slowdown), 0, 1000, "a factor from 0 to 1000 on service times", NULL, 0},
    {S_PHASE, "target", T_TARGET, PH(target), 1, SCENARIO_MAX_REPLICAS, "a service, a service's replica SERVICE#i (from 1), a layer, or a cache", NULL, 0},
    {S_PHASE, "flush", T_NAME, PH(flush), 0, 0, "a cache's name: it is emptied when the phase starts", NULL, 0},
    {S_PHASE, "latency", T_DIST_NONE, PH(latency), 0, 0, DIST_ALLOWED, NULL, PH(has_latency)},
    {S_PHASE, "loss", T_PROB, PH(loss), 0, 0, PROB_ALLOWED, NULL, 0},
    {S_LAYER, "attempts", T_UINT, LY(attempts), 1, 100, "an integer from 1 to 100 (including the first attempt)", NULL, 0},
    {S_LAYER, "timeout", T_TIMEOUT, LY(timeout), 0, 0, "a duration > 0 such as 200ms, or none", NULL, 0},
    {S_LAYER, "backoff", T_BACKOFF, LY(backoff), 0, 0, "a backoff kind or a preset (see 'retrystorm list presets')", NULL, 0},
    {S_LAYER, "base", T_DURATION, LY(bp.base), 0, 0, "a duration such as 10ms", NULL, 0},
    {S_LAYER, "multiplier", T_MULT, LY(bp.multiplier), 0, 0, "a number from 1 to 1000", NULL, 0},
    {S_LAYER, "cap", T_CAP, LY(bp.cap), 0, 0, "a duration such as 20s, or none", NULL, 0},
    {S_LAYER, "jitter", T_REAL, LY(bp.jitter), 0, 1, "a number from 0 to 1", NULL, 0},
    {S_LAYER, "retry_on", T_CLASSES, LY(retry_on), 0, 0, "classes among timeout conn 400 403 404 409 429 500 502 503 504 deadline throttled breaker bulkhead, or none", NULL, 0},
    {S_LAYER, "retry_after", T_ENUM, LY(retry_after), 0, 0, "honor, ignore", scn_honor_names, 0},
    {S_LAYER, "retry_after_max", T_CAP, LY(retry_after_max), 0, 0, "a duration such as 60s, or none", NULL, 0},
    {S_LAYER, "retry_after_over_max", T_ENUM, LY(retry_after_over_max), 0, 0, "clamp, give-up, backoff", backoff_ra_over_names, 0},
    {S_LAYER, "deadline", T_CAP, LY(deadline), 0, 0, "a duration such as 2s, or none", NULL, 0},
    {S_LAYER, "propagate_deadline", T_BOOL, LY(propagate_deadline), 0, 0, "true, false", NULL, 0},
    {S_LAYER, "request_latency", T_DIST_NONE, LY(request_latency), 0, 0, DIST_ALLOWED, NULL, LY(has_request_latency)},
    {S_LAYER, "response_latency", T_DIST_NONE, LY(response_latency), 0, 0, DIST_ALLOWED, NULL, LY(has_response_latency)},
    {S_LAYER, "request_loss", T_PROB, LY(request_loss), 0, 0, PROB_ALLOWED, NULL, 0},
    {S_LAYER, "response_loss", T_PROB, LY(response_loss), 0, 0, PROB_ALLOWED, NULL, 0},
    {S_LAYER, "instances", T_INSTANCES, LY(instances), 1, 1000000, "per-client, or an integer from 1 to 1000000", NULL, 0},
    {S_LAYER, "budget", T_BUDGET, LY(budget), 0, 0, "", NULL, 0},
    {S_LAYER, "budget_scope", T_ENUM, LY(budget_scope), 0, 0, "instance, client, shared", scn_scope_names, 0},
    {S_LAYER, "budget_max_tokens", T_REAL, LY(budget_p.max_tokens), 0, 1000, "a number from 0 to 1000", NULL, 0},
    {S_LAYER, "budget_token_ratio", T_REAL, LY(budget_p.token_ratio), 0, 1000, "a number from 0 to 1000", NULL, 0},
    {S_LAYER, "budget_percent", T_PROB, LY(budget_p.percent), 0, 0, "a fraction from 0 to 1 (0.2 is 20 %)", NULL, 0},
    {S_LAYER, "budget_min_per_s", T_REAL, LY(budget_p.min_per_s), 0, 1000000, "a number from 0 to 1000000", NULL, 0},
    {S_LAYER, "budget_ttl", T_DURATION, LY(budget_p.ttl), 0, 0, "a duration such as 10s", NULL, 0},
    {S_LAYER, "budget_min_concurrency", T_REAL, LY(budget_p.min_concurrency), 0, 1000000, "a number from 0 to 1000000", NULL, 0},
    {S_LAYER, "budget_capacity", T_REAL, LY(budget_p.capacity), 0, 1000000000, "a number from 0 to 1000000000", NULL, 0},
    {S_LAYER, "budget_cost", T_REAL, LY(budget_p.cost), 0, 1000000, "a number from 0 to 1000000", NULL, 0},
    {S_LAYER, "budget_timeout_cost", T_REAL, LY(budget_p.timeout_cost), 0, 1000000, "a number from 0 to 1000000", NULL, 0},
    {S_LAYER, "budget_deposit", T_REAL, LY(budget_p.deposit), 0, 1000000, "a number from 0 to 1000000", NULL, 0},
    {S_LAYER, "budget_deposit_on_success", T_BOOL, LY(budget_p.deposit_on_success), 0, 0, "true, false", NULL, 0},
    {S_LAYER, "budget_k", T_REAL, LY(budget_p.k), 0, 1000, "a number from 0 to 1000", NULL, 0},
    {S_LAYER, "breaker", T_BREAKER, LY(breaker), 0, 0, "", NULL, 0},
    {S_LAYER, "breaker_scope", T_ENUM, LY(breaker_scope), 0, 0, "instance, client, shared", scn_scope_names, 0},
    {S_LAYER, "breaker_failures", T_UINT, LY(breaker_p.failures), 0, 1000000, "an integer from 0 to 1000000", NULL, 0},
    {S_LAYER, "breaker_open_for", T_DURATION, LY(breaker_p.open_for), 0, 0, "a duration such as 60s", NULL, 0},
    {S_LAYER, "breaker_probes", T_UINT, LY(breaker_p.probes), 1, 1000000, "an integer from 1 to 1000000", NULL, 0},
    {S_LAYER, "breaker_window", T_WINDOW, LY(breaker_p.window_calls), 1, BREAKER_MAX_WINDOW_CALLS, "a number of calls from 1 to 1000, or a duration such as 10s", NULL, 0},
    {S_LAYER, "breaker_min_calls", T_UINT, LY(breaker_p.min_calls), 0, 1000000, "an integer from 0 to 1000000", NULL, 0},
    {S_LAYER, "breaker_failure_rate", T_PROB, LY(breaker_p.failure_rate), 0, 0, PROB_ALLOWED, NULL, 0},
    {S_LAYER, "breaker_slow_rate", T_PROB, LY(breaker_p.slow_rate), 0, 0, PROB_ALLOWED, NULL, 0},
    {S_LAYER, "breaker_slow_call", T_CAP, LY(breaker_p.slow_call), 0, 0, "a duration such as 60s, or none", NULL, 0},
    {S_LAYER, "breaker_max_failure_ratio", T_PROB, LY(breaker_p.max_failure_ratio), 0, 0, PROB_ALLOWED, NULL, 0},
    {S_LAYER, "hedge", T_ENUM, LY(hedge), 0, 0, "none, fixed, percentile, grpc-hedge, envoy-hedge, polly-hedge, finagle-backup", scn_hedge_names, 0},
    {S_LAYER, "hedge_delay", T_CAP, LY(hedge_delay), 0, 0, "a duration such as 50ms, or none", NULL, 0},
    {S_LAYER, "hedge_percentile", T_REAL, LY(hedge_percentile), 1, 99, "a percentile from 1 to 99", NULL, 0},
    {S_LAYER, "hedge_max_extra", T_PROB, LY(hedge_max_extra), 0, 0, "a fraction from 0 to 1 (0.05 is 5 % extra copies)", NULL, 0},
    {S_LAYER, "hedge_on", T_CLASSES, LY(hedge_on), 0, 0, "classes among timeout conn 400 403 404 409 429 500 502 503 504 deadline throttled breaker bulkhead, or none", NULL, 0},
    {S_LAYER, "cancel", T_ENUM, LY(cancel), 0, 0, "none, on-abandon", scn_cancel_names, 0},
    {S_LAYER, "from", T_NAME, LY(from), 0, 0, "client, or a service name", NULL, 0},
    {S_LAYER, "to", T_NAME, LY(to), 0, 0, "a service name", NULL, 0},
    {S_LAYER, "concurrency", T_UINT, LY(concurrency), 0, 1000000, "an integer from 0 to 1000000 (0: no limit)", NULL, 0},
    {S_LAYER, "concurrency_queue", T_QUEUE, LY(concurrency_queue), 0, 1000000000, "an integer from 0 to 1000000000, or unbounded", NULL, 0},
    {S_LAYER, "concurrency_wait", T_CAP, LY(concurrency_wait), 0, 0, "a duration such as 100ms, or none", NULL, 0},
    {S_CACHE, "capacity", T_QUEUE, CA(capacity), 1, 1000000000, "an integer from 1 to 1000000000 (entries), or unbounded", NULL, 0},
    {S_CACHE, "ttl", T_CAP, CA(ttl), 0, 0, "a duration such as 30s, or none", NULL, 0},
    {S_CACHE, "ttl_jitter", T_PROB, CA(ttl_jitter), 0, 0, "a fraction from 0 to 1 (each TTL × U(1-F, 1+F))", NULL, 0},
    {S_CACHE, "coalesce", T_BOOL, CA(coalesce), 0, 0, "true, false", NULL, 0},
    {S_CACHE, "hit", T_DIST, CA(hit), 0, 0, "a distribution such as const(1ms)", NULL, 0},
};
_Static_assert(sizeof scn_keys / sizeof scn_keys[0] == NKEYS, "NKEYS (scenario_int.h) counts the keys");

/* The kind whose keys a section takes: [service NAME] takes [server]'s. */
static enum sect_kind key_kind(enum sect_kind k)
{
    return k == S_SERVICE ? S_SERVER : k;
}

const struct key_desc *scn_find_key(enum sect_kind k, const char *key)
{
    k = key_kind(k);
    for (size_t i = 0; i < NKEYS; i++)
        if (scn_keys[i].sect == k && strcmp(scn_keys[i].key, key) == 0)
            return &scn_keys[i];
    return NULL;
}

const char *scn_suggest_key(enum sect_kind k, const char *key)
{
    const char *best = NULL;
    size_t bestd = 3;
    k = key_kind(k);
    for (size_t i = 0; i < NKEYS; i++) {
        if (scn_keys[i].sect != k)
            continue;
        size_t d = scenario_edit_distance(key, scn_keys[i].key);
        if (d < bestd) {
            bestd = d;
            best = scn_keys[i].key;
        }
    }
    return best;
}

void scn_list_keys(enum sect_kind k, char *buf, size_t size)
{
    size_t used = 0;
    buf[0] = '\0';
    k = key_kind(k);
    for (size_t i = 0; i < NKEYS && used < size; i++) {
        if (scn_keys[i].sect != k)
            continue;
        int w = snprintf(buf + used, size - used, "%s%s", used ? ", " : "", scn_keys[i].key);
        if (w < 0)
            break;
        used += (size_t)w;
    }
}

#define KIND_NAMES_MAX 64 /* more kinds than any of the three has */
static void kind_names(enum key_type t, char *buf, size_t size);

/* Every section kind, in the order of list keys and of messages. */
static const enum sect_kind sect_order[S_NKINDS] = {S_RUN, S_LOAD, S_SERVER, S_SERVICE, S_HERD, S_PHASE, S_LAYER, S_CACHE};

bool scn_sect_named(enum sect_kind k) { return k == S_PHASE || k == S_LAYER || k == S_SERVICE || k == S_CACHE; }

void scn_sections_allowed(char *buf, size_t size)
{
    size_t used = 0;
    buf[0] = '\0';
    for (size_t o = 0; o < S_NKINDS && used < size; o++) {
        int w = snprintf(buf + used, size - used, "%s[%s%s]", used ? " " : "", scn_sect_names[sect_order[o]],
                         scn_sect_named(sect_order[o]) ? " NAME" : "");
        used += w > 0 ? (size_t)w : 0;
    }
}

void scenario_print_keys(FILE *f)
{
    /* [service NAME] takes [server]'s keys; the graph keys only there */
    for (size_t o = 0; o < S_NKINDS; o++) {
        enum sect_kind k = sect_order[o];
        bool named = scn_sect_named(k);
        for (size_t i = 0; i < NKEYS; i++) {
            if (scn_keys[i].sect != key_kind(k))
                continue;
            bool graph = false;
            for (const char *const *g = scn_graph_keys; *g != NULL; g++)
                graph = graph || strcmp(*g, scn_keys[i].key) == 0;
            if (k == S_SERVER && graph)
                continue;
            char name[64];
            snprintf(name, sizeof name, "%s.%s%s", scn_sect_names[k], named ? "NAME." : "", scn_keys[i].key);
            char kinds[512];
            const char *allowed = scn_keys[i].allowed;
            if (allowed[0] == '\0') { /* budget, breaker: the message lists the kinds */
                kind_names(scn_keys[i].type, kinds, sizeof kinds);
                allowed = kinds;
            }
            fprintf(f, "%-32s %s\n", name, allowed);
        }
    }
}

static bool parse_enum(const char *v, const char *const *names, size_t n, int *out)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(v, names[i]) == 0) {
            *out = (int)i;
            return true;
        }
    return false;
}

/* Parses "x2" or "2" as a factor in [0, 1000]. */
static bool parse_factor(const char *v, double *out)
{
    double f;
    if (v[0] == 'x')
        v++;
    if (!units_parse_real(v, &f) || f < 0.0 || f > 1000.0)
        return false;
    *out = f;
    return true;
}

/* ---- the value parsers ---- */

static void bad(struct apply_ctx *ac, const struct entry *e, const char *allowed)
{
    char w[400];
    scn_diag_add(ac->diag, "%s: [%s] %s = '%s': expected %s", scn_where(e, w, sizeof w), e->section,
                 e->key, e->value, allowed);
}

/* allowed, then "; did you mean ...?" when v is near one of the names
 * (NULL-terminated) or begins some (scenario_suggest), into out. */
static void with_suggestion(const char *allowed, const char *v, const char *const *names, char *out, size_t size)
{
    char s[400];
    if (scenario_suggest(v, names, s, sizeof s)[0] != '\0')
        snprintf(out, size, "%s; %s", allowed, s);
    else
        snprintf(out, size, "%s", allowed);
}

/* The names of the backoff kinds, budgets or breakers, for messages. */
/* The names of the backoff kinds, budgets or breakers (t), at most max of
 * them, into names, NULL-terminated (max + 1 slots). */
static void kind_list(enum key_type t, const char **names, unsigned max)
{
    unsigned n = t == T_BACKOFF ? backoff_nkinds : t == T_BUDGET ? budget_nkinds : breaker_nkinds;
    n = n < max ? n : max;
    for (unsigned i = 0; i < n; i++)
        names[i] = t == T_BACKOFF  ? backoff_kinds[i].name
                   : t == T_BUDGET ? budget_kinds[i].name
                                   : breaker_kinds[i].name;
    names[n] = NULL;
}

static void kind_names(enum key_type t, char *buf, size_t size)
{
    const char *names[KIND_NAMES_MAX + 1];
    kind_list(t, names, KIND_NAMES_MAX);
    size_t used = 0;
    buf[0] = '\0';
    for (unsigned i = 0; names[i] != NULL && used < size; i++) {
        int w = snprintf(buf + used, size - used, "%s%s", i ? ", " : "", names[i]);
        used += w > 0 ? (size_t)w : 0;
    }
}

/* What a value parser found: the value is stored (V_OK), is not one the
 * key allows (V_BAD: the caller says "expected <allowed>"), or was
 * reported with more detail (V_SAID). */
enum parsed { V_OK, V_BAD, V_SAID };

/* A value to parse: the key, its entry, and where it goes. */
struct value_in {
    struct apply_ctx *ac;
    const struct entry *e;
    const struct key_desc *kd;
    void *base;  /* the struct the key lives in: scenario, phase_cfg or layer_cfg */
    void *field; /* base + kd->offset */
    const char *v;
};

/* "expected <allowed> (<why>)", or with a word: "(<'word'> is not one)". */
static enum parsed bad_because(const struct value_in *in, const char *why, bool word)
{
    char allowed[400];
    if (word)
        snprintf(allowed, sizeof allowed, "%s ('%s' is not one)", in->kd->allowed, why);
    else
        snprintf(allowed, sizeof allowed, "%s (%s)", in->kd->allowed, why);
    bad(in->ac, in->e, allowed);
    return V_SAID;
}

static enum parsed p_name(const struct value_in *in)
{
    if (!scn_valid_name(in->v))
        return V_BAD;
    scn_copy_name(in->field, in->v);
    return V_OK;
}

static enum parsed p_duration(const struct value_in *in)
{
    rs_time t;
    if (!units_parse_duration(in->v, &t) || t < in->kd->lo)
        return V_BAD;
    *(rs_time *)in->field = t;
    return V_OK;
}

/* A duration or none (T_CAP), and not 0 (T_TIMEOUT). */
static enum parsed p_timeout(const struct value_in *in)
{
    rs_time t;
    if (strcmp(in->v, "none") == 0)
        t = RS_TIME_NEVER;
    else if (!units_parse_duration(in->v, &t) || (in->kd->type == T_TIMEOUT && t == 0))
        return V_BAD;
    *(rs_time *)in->field = t;
    return V_OK;
}

static enum parsed p_seed(const struct value_in *in)
{
    const char *v = in->v;
    char *end;
    errno = 0;
    if (v[0] == '-' || v[0] == '\0' || v[0] == ' ')
        return V_BAD;
    unsigned long long x = strtoull(v, &end, 10);
    if (*end != '\0' || errno == ERANGE)
        return V_BAD;
    *(uint64_t *)in->field = (uint64_t)x;
    return V_OK;
}

/* A rate above 0 and at most 10^9 per second; or none (T_RATE_NONE: 0). */
static enum parsed p_rate(const struct value_in *in)
{
    double r;
    if (in->kd->type == T_RATE_NONE && strcmp(in->v, "none") == 0)
        r = 0.0;
    else if (!units_parse_rate(in->v, &r) || !(r > 0.0) || r > 1e9)
        return V_BAD;
    *(double *)in->field = r;
    return V_OK;
}

/* An integer in [lo, hi]; or per-client (T_INSTANCES: 0). */
static enum parsed p_uint(const struct value_in *in)
{
    long long n;
    if (in->kd->type == T_INSTANCES && strcmp(in->v, "per-client") == 0)
        n = 0;
    else if (!units_parse_int(in->v, in->kd->lo, in->kd->hi, &n))
        return V_BAD;
    *(unsigned *)in->field = (unsigned)n;
    return V_OK;
}

/* A distribution; or none (T_DIST_NONE, with its flag). */
static enum parsed p_dist(const struct value_in *in)
{
    bool *given = in->kd->type == T_DIST_NONE ? (bool *)((char *)in->base + in->kd->flag) : NULL;
    char why[300];
    struct dist d;
    if (given && strcmp(in->v, "none") == 0) {
        *given = false;
        return V_OK;
    }
    if (!dist_parse(in->v, &d, why, sizeof why))
        return bad_because(in, why, false);
    *(struct dist *)in->field = d;
    if (given)
        *given = true;
    return V_OK;
}

static enum parsed p_enum(const struct value_in *in)
{
    int x;
    size_t n = 0;
    while (in->kd->names[n] != NULL)
        n++;
    if (!parse_enum(in->v, in->kd->names, n, &x)) {
        char allowed[1000];
        with_suggestion(in->kd->allowed, in->v, in->kd->names, allowed, sizeof allowed);
        bad(in->ac, in->e, allowed);
        return V_SAID;
    }
    *(int *)in->field = x; /* every enum field is int-sized */
    return V_OK;
}

static enum parsed p_bool(const struct value_in *in)
{
    if (strcmp(in->v, "true") != 0 && strcmp(in->v, "false") != 0)
        return V_BAD;
    *(bool *)in->field = strcmp(in->v, "true") == 0;
    return V_OK;
}

/* A number in [lo, hi] (T_REAL), [lo, 1] (T_PROB) or [1, 1000] (T_MULT). */
static enum parsed p_real(const struct value_in *in)
{
    double x, lo = (double)in->kd->lo, hi = (double)in->kd->hi;
    if (in->kd->type == T_PROB)
        hi = 1.0;
    else if (in->kd->type == T_MULT)
        lo = 1.0, hi = 1000.0;
    if (!units_parse_real(in->v, &x) || x < lo || x > hi)
        return V_BAD;
    *(double *)in->field = x;
    return V_OK;
}

static enum parsed p_classes(const struct value_in *in)
{
    char word[64];
    errclass_set set;
    if (!errclass_parse_set(in->v, &set, word, sizeof word))
        return bad_because(in, word, true);
    *(errclass_set *)in->field = set;
    return V_OK;
}

static enum parsed p_limit_status(const struct value_in *in)
{
    enum errclass cls;
    if (!errclass_parse(in->v, &cls) || (cls != CLS_429 && cls != CLS_403 && cls != CLS_503))
        return V_BAD;
    *(enum errclass *)in->field = cls;
    return V_OK;
}

/* A backoff kind, budget or breaker by name; the message lists them all. */
static enum parsed p_kind(const struct value_in *in)
{
    const struct backoff_kind *bo = in->kd->type == T_BACKOFF ? backoff_find(in->v) : NULL;
    const struct budget_kind *bu = in->kd->type == T_BUDGET ? budget_find(in->v) : NULL;
    const struct breaker_kind *br = in->kd->type == T_BREAKER ? breaker_find(in->v) : NULL;
    if (bo == NULL && bu == NULL && br == NULL) {
        char allowed[600], msg[1100];
        const char *names[KIND_NAMES_MAX + 1];
        kind_list(in->kd->type, names, KIND_NAMES_MAX);
        kind_names(in->kd->type, allowed, sizeof allowed);
        with_suggestion(allowed, in->v, names, msg, sizeof msg);
        bad(in->ac, in->e, msg);
        return V_SAID;
    }
    if (bo) /* each stored through its own type */
        *(const struct backoff_kind **)in->field = bo;
    else if (bu)
        *(const struct budget_kind **)in->field = bu;
    else
        *(const struct breaker_kind **)in->field = br;
    return V_OK;
}

/* breaker_window: a number of calls, or a duration. */
static enum parsed p_window(const struct value_in *in)
{
    struct layer_cfg *l = in->base;
    long long n;
    rs_time t;
    if (units_parse_int(in->v, in->kd->lo, in->kd->hi, &n)) {
        l->breaker_p.window_calls = (unsigned)n;
        l->breaker_p.window = 0;
    } else if (units_parse_duration(in->v, &t) && t > 0) {
        l->breaker_p.window_calls = 0;
        l->breaker_p.window = t;
    } else {
        return V_BAD;
    }
    return V_OK;
}

/* [herd] at: appends, so that several `at` lines and lists add up. */
static enum parsed p_times(const struct value_in *in)
{
    char buf[SCENARIO_MAX_LINE + 260]; /* a line, or a --set value */
    snprintf(buf, sizeof buf, "%s", in->v);
    bool any = false;
    char *save = NULL;
    for (char *tok = strtok_r(buf, " ,\t", &save); tok != NULL; tok = strtok_r(NULL, " ,\t", &save)) {
        rs_time t;
        any = true;
        if (!units_parse_duration(tok, &t))
            return V_BAD;
        if (in->ac->sc->nherds == SCENARIO_MAX_HERDS) {
            char w[400];
            scn_diag_add(in->ac->diag, "%s: [herd] too many instants (limit is %d)", scn_where(in->e, w, sizeof w),
                         SCENARIO_MAX_HERDS);
            return V_SAID;
        }
        in->ac->sc->herds[in->ac->sc->nherds++] = t;
    }
    return any ? V_OK : V_BAD;
}

static enum parsed p_queue(const struct value_in *in)
{
    long long n;
    if (strcmp(in->v, "unbounded") == 0)
        n = -1;
    else if (!units_parse_int(in->v, in->kd->lo, in->kd->hi, &n))
        return V_BAD;
    *(long long *)in->field = n;
    return V_OK;
}

/* One word of `calls`: DEP or DEP*k; false (and why) when it is not one. */
static bool parse_call(const struct value_in *in, char *tok, struct dep_cfg *dep, char *why,
                       size_t size)
{
    char *star = strchr(tok, '*');
    long long k = 1;
    if (star != NULL) {
        *star = '\0';
        if (!units_parse_int(star + 1, in->kd->lo, in->kd->hi, &k)) {
            snprintf(why, size, "'%s*%s': k must be an integer from %lld to %lld", tok, star + 1,
                     in->kd->lo, in->kd->hi);
            return false;
        }
    }
    if (!scn_valid_name(tok)) {
        snprintf(why, size, "'%s' is not a service name", tok);
        return false;
    }
    memset(dep, 0, sizeof *dep);
    scn_copy_name(dep->name, tok);
    dep->fanout = (unsigned)k;
    return true;
}

/* A service's calls: "db cache*3", comma- or space-separated, or none. The
 * names are resolved when the whole scenario is read. */
static enum parsed p_calls(const struct value_in *in)
{
    struct service_cfg *v = in->base;
    struct dep_cfg calls[SCENARIO_MAX_CALLS];
    char buf[SCENARIO_MAX_LINE + 260], why[200];
    unsigned n = 0;
    bool none = false, any = false;
    snprintf(buf, sizeof buf, "%s", in->v);
    char *save = NULL;
    for (char *tok = strtok_r(buf, " ,\t", &save); tok != NULL; tok = strtok_r(NULL, " ,\t", &save)) {
        any = true;
        if (strcmp(tok, "none") == 0) {
            none = true;
            continue;
        }
        if (n == SCENARIO_MAX_CALLS)
            return bad_because(in, "more than 8 calls", false);
        if (!parse_call(in, tok, &calls[n], why, sizeof why))
            return bad_because(in, why, false);
        n++;
    }
    if (!any || (none && n > 0))
        return any ? bad_because(in, "none, with calls", true) : V_BAD;
    memset(v->calls, 0, sizeof v->calls);
    memcpy(v->calls, calls, n * sizeof calls[0]);
    v->ncalls = n;
    return V_OK;
}

/* A phase's target: NAME or NAME#i; resolved when the whole scenario is read. */
static enum parsed p_target(const struct value_in *in)
{
    char name[SCENARIO_NAME_MAX + 8];
    long long i;
    size_t n = strcspn(in->v, "#");
    if (n >= SCENARIO_NAME_MAX)
        return V_BAD;
    memcpy(name, in->v, n);
    name[n] = '\0';
    if (!scn_valid_name(name))
        return V_BAD;
    if (in->v[n] == '#' && !units_parse_int(in->v + n + 1, in->kd->lo, in->kd->hi, &i))
        return bad_because(in, "a replica is numbered from 1 to 1000", false);
    struct phase_cfg *p = in->base;
    if (strlen(in->v) >= sizeof p->target)
        return V_BAD;
    snprintf(p->target, sizeof p->target, "%s", in->v);
    return V_OK;
}

/* One rate of a phase: a factor x2 (*factor set), or an absolute rate. */
static bool parse_phase_rate(const char *v, double *x, bool *factor)
{
    *factor = v[0] == 'x';
    if (*factor)
        return parse_factor(v, x);
    return units_parse_rate(v, x) && *x <= 1e9;
}

/* Splits "NAME(A, B)" into its two arguments (spaces around them
 * dropped); false when v is not that shape. */
static bool split_call2(const char *v, const char *name, char *a, char *b, size_t size)
{
    size_t n = strlen(name), len = strlen(v);
    if (strncmp(v, name, n) != 0 || v[n] != '(' || len < n + 2 || v[len - 1] != ')')
        return false;
    const char *args = v + n + 1, *comma = strchr(args, ',');
    if (comma == NULL)
        return false;
    const char *end = v + len - 1;
    while (*args == ' ')
        args++;
    const char *a_end = comma, *b_start = comma + 1;
    while (a_end > args && a_end[-1] == ' ')
        a_end--;
    while (*b_start == ' ')
        b_start++;
    while (end > b_start && end[-1] == ' ')
        end--;
    if ((size_t)(a_end - args) >= size || (size_t)(end - b_start) >= size)
        return false;
    snprintf(a, size, "%.*s", (int)(a_end - args), args);
    snprintf(b, size, "%.*s", (int)(end - b_start), b_start);
    return true;
}

/* A phase's rate: a factor x2, an absolute rate, or ramp(A, B) of two of
 * the same kind. */
static enum parsed p_phase_rate(const struct value_in *in)
{
    struct phase_cfg *p = in->base;
    char a[64], b[64];
    double x, y;
    bool fa, fb;
    p->ramp = split_call2(in->v, "ramp", a, b, sizeof a);
    if (p->ramp) {
        if (!parse_phase_rate(a, &x, &fa) || !parse_phase_rate(b, &y, &fb))
            return V_BAD;
        if (fa != fb)
            return bad_because(in, "both ends must be factors, or both rates", false);
        p->rate_to = y;
    } else if (!parse_phase_rate(in->v, &x, &fa)) {
        return V_BAD;
    }
    p->rate = x;
    p->rate_is_factor = fa;
    p->has_rate = true;
    return V_OK;
}

/* [load] shape: none, or sine(AMPLITUDE, PERIOD). */
static enum parsed p_shape(const struct value_in *in)
{
    struct scenario *sc = in->base;
    char a[64], b[64];
    double amp;
    rs_time period;
    if (strcmp(in->v, "none") == 0) {
        sc->sine_amplitude = 0.0;
        sc->sine_period = 0;
        return V_OK;
    }
    if (!split_call2(in->v, "sine", a, b, sizeof a) || !units_parse_real(a, &amp) ||
        !units_parse_duration(b, &period))
        return V_BAD;
    if (amp < 0.0 || amp > 1.0)
        return bad_because(in, "the amplitude must be from 0 to 1: a rate is never negative", false);
    if (period < RS_MS)
        return bad_because(in, "the period must be at least 1ms", false);
    sc->sine_amplitude = amp;
    sc->sine_period = period;
    return V_OK;
}

/* [load] trace: a path of printable characters, or none. */
static enum parsed p_path(const struct value_in *in)
{
    size_t n = strlen(in->v);
    if (n == 0 || n >= SCENARIO_PATH_MAX)
        return V_BAD;
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)in->v[i] < 0x20 || in->v[i] == 0x7f)
            return V_BAD;
    snprintf(in->field, SCENARIO_PATH_MAX, "%s", strcmp(in->v, "none") == 0 ? "" : in->v);
    return V_OK;
}

/* [load] popularity: uniform, or zipf(S). */
static enum parsed p_popularity(const struct value_in *in)
{
    double x;
    size_t n = strlen(in->v);
    if (strcmp(in->v, "uniform") == 0) {
        *(double *)in->field = 0.0;
        return V_OK;
    }
    if (n < 6 || strncmp(in->v, "zipf(", 5) != 0 || in->v[n - 1] != ')')
        return V_BAD;
    char num[64];
    if (n - 6 >= sizeof num)
        return V_BAD;
    snprintf(num, sizeof num, "%.*s", (int)(n - 6), in->v + 5);
    if (!units_parse_real(num, &x) || !(x > 0.0) || x > 10.0)
        return V_BAD;
    *(double *)in->field = x;
    return V_OK;
}

/* A name, or none (an empty name). */
static enum parsed p_name_none(const struct value_in *in)
{
    if (strcmp(in->v, "none") == 0) {
        ((char *)in->field)[0] = '\0';
        return V_OK;
    }
    return p_name(in);
}

static enum parsed p_factor(const struct value_in *in)
{
    struct phase_cfg *p = in->base;
    double x;
    if (!parse_factor(in->v, &x))
        return V_BAD;
    p->capacity = x;
    p->has_capacity = true;
    return V_OK;
}

/* The parser of each key type. */
static enum parsed (*const value_parsers[])(const struct value_in *) = {
    [T_NAME] = p_name,         [T_DURATION] = p_duration,   [T_TIMEOUT] = p_timeout,
    [T_CAP] = p_timeout,       [T_SEED] = p_seed,           [T_RATE] = p_rate,
    [T_RATE_NONE] = p_rate,    [T_UINT] = p_uint,           [T_INSTANCES] = p_uint,
    [T_DIST] = p_dist,         [T_DIST_NONE] = p_dist,      [T_ENUM] = p_enum,
    [T_BOOL] = p_bool,         [T_PROB] = p_real,           [T_REAL] = p_real,
    [T_MULT] = p_real,         [T_CLASSES] = p_classes,     [T_LIMIT_STATUS] = p_limit_status,
    [T_BACKOFF] = p_kind,      [T_BUDGET] = p_kind,         [T_BREAKER] = p_kind,
    [T_WINDOW] = p_window,     [T_TIMES] = p_times,         [T_QUEUE] = p_queue,
    [T_PHASE_RATE] = p_phase_rate, [T_FACTOR] = p_factor,   [T_CALLS] = p_calls,
    [T_TARGET] = p_target,     [T_SHAPE] = p_shape,         [T_PATH] = p_path,
    [T_POPULARITY] = p_popularity, [T_NAME_NONE] = p_name_none,
};
_Static_assert(sizeof value_parsers / sizeof *value_parsers == T_NTYPES,
               "a parser for every key type");

void scn_apply_value(struct apply_ctx *ac, const struct entry *e, const struct key_desc *kd,
                     void *base)
{
    struct value_in in = {ac, e, kd, base, (char *)base + kd->offset, e->value};
    if (value_parsers[kd->type](&in) == V_BAD)
        bad(ac, e, kd->allowed);
}
