/*
 * scenario_ini — the effective scenario, written as INI (scenario.ini):
 * every key, defaults included, in a form scenario_load reads back to the
 * same struct scenario. One pass over the scenario, O(its sections); the
 * words of enums come from the key table's lists (scenario_keys.c).
 */
#include "scenario_int.h"

#include <stdlib.h>
#include <string.h>

/* ---- writing the effective scenario ---- */

static const char *tf(bool b) { return b ? "true" : "false"; }

static const char *time_or_none(rs_time t, char *buf, size_t size)
{
    if (t == RS_TIME_NEVER) {
        snprintf(buf, size, "none");
        return buf;
    }
    return units_format_duration(t, buf, size);
}

static void write_run_load(const struct scenario *sc, FILE *f)
{
    char a[64], b[64], c[64];
    fprintf(f, "; effective scenario, written by retrystorm %s from %s\n", RS_VERSION, sc->source);
    fprintf(f, "[run]\nname = %s\nduration = %s\nwarmup = %s\nseed = %llu\nbucket = %s\n", sc->name,
            units_format_duration(sc->duration, a, sizeof a),
            units_format_duration(sc->warmup, b, sizeof b), (unsigned long long)sc->seed,
            units_format_duration(sc->bucket, c, sizeof c));
    fprintf(f, "verdict_window = %s\n", units_format_duration(sc->verdict_window, a, sizeof a));
    fprintf(f, "verdict_hold = %s\n", units_format_duration(sc->verdict_hold, a, sizeof a));
    fprintf(f, "verdict_persist = %s\n", units_format_duration(sc->verdict_persist, a, sizeof a));
    char tol[32];
    snprintf(tol, sizeof tol, "%.15g", sc->verdict_tolerance); /* the shortest that reads back the same */
    if (strtod(tol, NULL) != sc->verdict_tolerance)
        snprintf(tol, sizeof tol, "%.17g", sc->verdict_tolerance);
    fprintf(f, "verdict_tolerance = %s\n\n", tol);
    fprintf(f, "[load]\nmodel = %s\n", scn_model_names[sc->model]);
    if (sc->model == LOAD_OPEN && sc->rate > 0)
        fprintf(f, "arrival = %s\nrate = %.17g/s\n", scn_arrival_names[sc->arrival], sc->rate);
    else if (sc->model == LOAD_OPEN && sc->trace[0] != '\0')
        fprintf(f, "arrival = %s\n", scn_arrival_names[sc->arrival]);
    else
        fprintf(f, "think = %s\n", dist_format(&sc->think, a, sizeof a));
    fprintf(f, "clients = %u\nidempotent = %s\nkey = %s\n", sc->clients, tf(sc->idempotent),
            tf(sc->key));
    /* the keys of later issues only when used: older outputs stay as they were */
    if (sc->sine_amplitude > 0)
        fprintf(f, "shape = sine(%.17g, %s)\n", sc->sine_amplitude,
                units_format_duration(sc->sine_period, a, sizeof a));
    if (sc->trace[0] != '\0')
        fprintf(f, "trace = %s\n", sc->trace);
    if (sc->ncaches > 0 && sc->zipf > 0)
        fprintf(f, "keys = %u\npopularity = zipf(%.17g)\n", sc->keys, sc->zipf);
    else if (sc->ncaches > 0)
        fprintf(f, "keys = %u\npopularity = uniform\n", sc->keys);
}

static void write_cache(const struct cache_cfg *c, FILE *f)
{
    char a[64], b[64];
    fprintf(f, "\n[cache %s]\n", c->name);
    if (c->capacity < 0)
        fprintf(f, "capacity = unbounded\n");
    else
        fprintf(f, "capacity = %lld\n", c->capacity);
    fprintf(f, "ttl = %s\nttl_jitter = %.17g\ncoalesce = %s\nhit = %s\n",
            time_or_none(c->ttl, a, sizeof a), c->ttl_jitter, tf(c->coalesce),
            dist_format(&c->hit, b, sizeof b));
}

/* A service's keys: [server]'s, and with graph the service-graph ones. */
static void write_service(const struct service_cfg *v, bool graph, FILE *f)
{
    char a[64];
    if (graph)
        fprintf(f, "\n[service %s]\n", v->name);
    else
        fprintf(f, "\n[server]\n");
    fprintf(f, "model = %s\nworkers = %u\n", scn_server_model_names[v->model], v->workers);
    if (v->queue < 0)
        fprintf(f, "queue = unbounded\n");
    else
        fprintf(f, "queue = %lld\n", v->queue);
    fprintf(f, "service = %s\ndiscipline = %s\n", dist_format(&v->service, a, sizeof a),
            scn_discipline_names[v->discipline]);
    fprintf(f, "error_400 = %.17g\nerror_500 = %.17g\nerror_503 = %.17g\nbusiness = %.17g\n",
            v->p400, v->p500, v->p503, v->p_business);
    if (v->limit_rate > 0)
        fprintf(f, "limit_rate = %.17g/s\n", v->limit_rate);
    else
        fprintf(f, "limit_rate = none\n");
    fprintf(f, "limit_burst = %u\nlimit_status = %s\nlimit_retry_after = %s\n", v->limit_burst,
            errclass_names[v->limit_status], time_or_none(v->limit_retry_after, a, sizeof a));
    fprintf(f, "degrade = %.17g\ndrop_expired = %s\ndedup = %s\nreplay = %s\n", v->degrade,
            tf(v->drop_expired), tf(v->dedup), dist_format(&v->replay, a, sizeof a));
    if (v->degrade_shape != DEGRADE_LINEAR)
        fprintf(f, "degrade_shape = %s\n", scn_degrade_names[v->degrade_shape]);
    if (v->cache_index >= 0)
        fprintf(f, "cache = %s\n", v->cache);
    if (v->cancel_running) /* written when set: earlier outputs keep their bytes */
        fprintf(f, "cancel_running = true\n");
    if (!graph)
        return;
    fprintf(f, "replicas = %u\nbalancer = %s\ncalls =", v->replicas, scn_balancer_names[v->balancer]);
    for (unsigned c = 0; c < v->ncalls; c++)
        if (v->calls[c].fanout > 1)
            fprintf(f, " %s*%u", v->calls[c].name, v->calls[c].fanout);
        else
            fprintf(f, " %s", v->calls[c].name);
    fprintf(f, "%s\nservice_after = %s\n", v->ncalls ? "" : " none",
            v->has_after ? dist_format(&v->service_after, a, sizeof a) : "none");
}

/* A phase; with graph, its target and hop keys, and only the keys its
 * target takes. */
static void write_phase(const struct phase_cfg *p, bool graph, FILE *f)
{
    char a[64], b[64];
    fprintf(f, "\n[phase %s]\nstart = %s\nend = %s\n", p->name,
            units_format_duration(p->start, a, sizeof a), units_format_duration(p->end, b, sizeof b));
    if (p->has_rate && p->ramp && p->rate_is_factor)
        fprintf(f, "rate = ramp(x%.17g, x%.17g)\n", p->rate, p->rate_to);
    else if (p->has_rate && p->ramp)
        fprintf(f, "rate = ramp(%.17g/s, %.17g/s)\n", p->rate, p->rate_to);
    else if (p->has_rate && p->rate_is_factor)
        fprintf(f, "rate = x%.17g\n", p->rate);
    else if (p->has_rate)
        fprintf(f, "rate = %.17g/s\n", p->rate);
    if (p->flush_cache >= 0)
        fprintf(f, "flush = %s\n", p->flush);
    if (graph && p->target[0] != '\0')
        fprintf(f, "target = %s\n", p->target);
    if (p->target_kind == TARGET_CACHE) {
        if (p->has_capacity)
            fprintf(f, "capacity = %.17g\n", p->capacity);
        return;
    }
    if (graph && p->target_kind == TARGET_LAYER) {
        if (p->has_latency)
            fprintf(f, "latency = %s\n", dist_format(&p->latency, a, sizeof a));
        fprintf(f, "loss = %.17g\n", p->loss);
        return;
    }
    if (p->has_capacity)
        fprintf(f, "capacity = %.17g\n", p->capacity);
    fprintf(f, "outage = %s\nretry_after = %s\nslowdown = %.17g\n", scn_outage_names[p->outage],
            time_or_none(p->retry_after, a, sizeof a), p->slowdown);
}

static void write_budget(const struct layer_cfg *l, FILE *f)
{
    char a[64];
    const struct budget_params *bp = &l->budget_p;
    fprintf(f, "budget = %s\nbudget_scope = %s\n", l->budget->name, scn_scope_names[l->budget_scope]);
    if (l->budget->id != BUDGET_NONE)
        fprintf(f,
                "budget_max_tokens = %.17g\nbudget_token_ratio = %.17g\nbudget_percent = %.17g\n"
                "budget_min_per_s = %.17g\nbudget_ttl = %s\nbudget_min_concurrency = %.17g\n"
                "budget_capacity = %.17g\nbudget_cost = %.17g\nbudget_timeout_cost = %.17g\n"
                "budget_deposit = %.17g\nbudget_deposit_on_success = %s\nbudget_k = %.17g\n",
                bp->max_tokens, bp->token_ratio, bp->percent, bp->min_per_s,
                units_format_duration(bp->ttl, a, sizeof a), bp->min_concurrency, bp->capacity,
                bp->cost, bp->timeout_cost, bp->deposit, tf(bp->deposit_on_success), bp->k);
}

static void write_breaker(const struct layer_cfg *l, FILE *f)
{
    char a[64], b[64];
    const struct breaker_params *kp = &l->breaker_p;
    fprintf(f, "breaker = %s\nbreaker_scope = %s\n", l->breaker->name,
            scn_scope_names[l->breaker_scope]);
    if (l->breaker->id == BREAKER_NONE)
        return;
    fprintf(f, "breaker_failures = %u\nbreaker_open_for = %s\nbreaker_probes = %u\n",
            kp->failures, units_format_duration(kp->open_for, a, sizeof a), kp->probes);
    if (kp->window_calls > 0)
        fprintf(f, "breaker_window = %u\n", kp->window_calls);
    else if (kp->window > 0)
        fprintf(f, "breaker_window = %s\n", units_format_duration(kp->window, a, sizeof a));
    fprintf(f,
            "breaker_min_calls = %u\nbreaker_failure_rate = %.17g\nbreaker_slow_rate = %.17g\n"
            "breaker_slow_call = %s\nbreaker_max_failure_ratio = %.17g\n",
            kp->min_calls, kp->failure_rate, kp->slow_rate,
            time_or_none(kp->slow_call, b, sizeof b), kp->max_failure_ratio);
}

/* A layer's hedging and cancellation keys: all of them when any differs
 * from its default (the other modes' values included, so the file reads
 * back to the same scenario), none otherwise (earlier outputs keep their
 * bytes). */
static void write_hedge(const struct layer_cfg *l, FILE *f)
{
    char a[64], set[256];
    if (l->hedge == 0 && l->hedge_delay == RS_TIME_NEVER && l->hedge_percentile == 95.0 &&
        l->hedge_max_extra == 1.0 && l->hedge_on == 0 && l->cancel == CANCEL_NONE)
        return;
    fprintf(f, "hedge = %s\nhedge_delay = %s\nhedge_percentile = %.17g\nhedge_max_extra = %.17g\n",
            scn_hedge_names[l->hedge], time_or_none(l->hedge_delay, a, sizeof a),
            l->hedge_percentile, l->hedge_max_extra);
    fprintf(f, "hedge_on = %s\ncancel = %s\n", errclass_format_set(l->hedge_on, set, sizeof set),
            scn_cancel_names[l->cancel]);
}

/* A layer; with graph, its edge and bulkhead too. */
static void write_layer(const struct layer_cfg *l, bool graph, FILE *f)
{
    char a[64], b[64], set[256];
    fprintf(f, "\n[layer %s]\nattempts = %u\ntimeout = %s\nbackoff = %s\nbase = %s\n", l->name,
            l->attempts, time_or_none(l->timeout, a, sizeof a), l->backoff->name,
            units_format_duration(l->bp.base, b, sizeof b));
    fprintf(f, "multiplier = %.17g\ncap = %s\njitter = %.17g\n", l->bp.multiplier,
            time_or_none(l->bp.cap, a, sizeof a), l->bp.jitter);
    fprintf(f, "retry_on = %s\nretry_after = %s\nretry_after_max = %s\nretry_after_over_max = %s\n",
            errclass_format_set(l->retry_on, set, sizeof set), scn_honor_names[l->retry_after],
            time_or_none(l->retry_after_max, a, sizeof a),
            backoff_ra_over_names[l->retry_after_over_max]);
    fprintf(f, "deadline = %s\npropagate_deadline = %s\n", time_or_none(l->deadline, a, sizeof a),
            tf(l->propagate_deadline));
    fprintf(f, "request_latency = %s\n",
            l->has_request_latency ? dist_format(&l->request_latency, a, sizeof a) : "none");
    fprintf(f, "response_latency = %s\n",
            l->has_response_latency ? dist_format(&l->response_latency, a, sizeof a) : "none");
    fprintf(f, "request_loss = %.17g\nresponse_loss = %.17g\n", l->request_loss, l->response_loss);
    if (l->instances == 0)
        fprintf(f, "instances = per-client\n");
    else
        fprintf(f, "instances = %u\n", l->instances);
    write_budget(l, f);
    write_breaker(l, f);
    write_hedge(l, f);
    if (!graph)
        return;
    fprintf(f, "from = %s\nto = %s\nconcurrency = %u\n", l->from, l->to, l->concurrency);
    if (l->concurrency == 0)
        return; /* the queue and the wait go with a bulkhead only */
    if (l->concurrency_queue < 0)
        fprintf(f, "concurrency_queue = unbounded\n");
    else
        fprintf(f, "concurrency_queue = %lld\n", l->concurrency_queue);
    fprintf(f, "concurrency_wait = %s\n", time_or_none(l->concurrency_wait, a, sizeof a));
}

int scenario_write_ini(const struct scenario *sc, FILE *f)
{
    char a[64];
    write_run_load(sc, f);
    for (unsigned i = 0; i < (sc->graph ? sc->nservices : 1); i++)
        write_service(&sc->services[i], sc->graph, f);
    for (unsigned i = 0; i < sc->ncaches; i++)
        write_cache(&sc->caches[i], f);
    if (sc->nherds > 0) {
        fprintf(f, "\n[herd]\n");
        for (unsigned i = 0; i < sc->nherds; i++)
            fprintf(f, "at = %s\n", units_format_duration(sc->herds[i], a, sizeof a));
    }
    for (unsigned i = 0; i < sc->nphases; i++)
        write_phase(&sc->phases[i], sc->graph, f);
    for (unsigned i = 0; i < sc->nlayers; i++)
        write_layer(&sc->layers[i], sc->graph, f);
    return ferror(f) ? -1 : 0;
}
