/*
 * sim — building a run and the dispatch loop. See sim.h and simctx.h.
 */
#include "sim.h"
#include "verdict.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "simctx.h"

static int cmp_time(const void *a, const void *b)
{
    rs_time x = *(const rs_time *)a, y = *(const rs_time *)b;
    return (x > y) - (x < y);
}

/* The edges: each layer's neighbours on its edge (layers on one edge stack
 * in file order, outermost first), the clients' outermost layer, and each
 * service's outermost layer towards each dependency. O(layers²). */
static void topology_init(struct sim *s)
{
    const struct scenario *sc = &s->sc;
    for (unsigned i = 0; i < sc->nlayers; i++)
        s->layers.lrt[i].next = s->layers.lrt[i].prev = NO_LAYER;
    for (unsigned i = 0; i < sc->nlayers; i++) {
        const struct layer_cfg *a = &sc->layers[i];
        for (unsigned j = i + 1; j < sc->nlayers; j++) {
            const struct layer_cfg *b = &sc->layers[j];
            if (a->from_service == b->from_service && a->to_service == b->to_service) {
                s->layers.lrt[i].next = (uint8_t)j;
                s->layers.lrt[j].prev = (uint8_t)i;
                break;
            }
        }
    }
    s->layers.client_top = NO_LAYER;
    for (unsigned v = 0; v < sc->nservices; v++)
        for (unsigned k = 0; k < SCENARIO_MAX_CALLS; k++)
            s->services.svc[v].edge[k] = NO_LAYER;
    for (unsigned i = 0; i < sc->nlayers; i++) {
        const struct layer_cfg *l = &sc->layers[i];
        if (s->layers.lrt[i].prev != NO_LAYER)
            continue;
        if (l->from_service == SCENARIO_CLIENT) {
            s->layers.client_top = (uint8_t)i;
            continue;
        }
        const struct service_cfg *v = &sc->services[l->from_service];
        for (unsigned k = 0; k < v->ncalls; k++)
            if (v->calls[k].service == l->to_service)
                s->services.svc[l->from_service].edge[k] = (uint8_t)i;
    }
}

/* Records, for every bucket before `upto`, each layer's share of breakers
 * open and mean budget level (the state is constant between events, so the
 * value at the first event after a bucket's end is its value at that end).
 * The level is averaged over at most 4096 evenly spaced states, once a
 * call: every bucket it catches up on gets the same values (the states and
 * s->now do not change in between), so an event after a long quiet costs
 * O(layers · 4096), not that times the buckets it crosses. */
static void sample_layers(struct sim *s, size_t upto)
{
    /* The loop's events come before the horizon (ev.t / bucket < nbuckets,
     * allocated for it) and after the last sampled bucket; the end asks
     * once for nbuckets, cut at the run's end. */
    if (upto > s->m.nbuckets)
        upto = s->m.nbuckets; /* unreachable: upto is at most nbuckets (GCOVR_EXCL_LINE) */
    if (s->layers.sampled >= upto)
        return; /* unreachable: every call asks for a new bucket (GCOVR_EXCL_LINE) */
    double open[SCENARIO_MAX_LAYERS], level[SCENARIO_MAX_LAYERS];
    for (unsigned i = 0; i < s->sc.nlayers; i++) {
        const struct layer_rt *rt = &s->layers.lrt[i];
        const struct layer_cfg *l = &s->sc.layers[i];
        open[i] = rt->nbreakers ? (double)rt->n_open / rt->nbreakers : -1.0;
        level[i] = -1.0;
        if (rt->nbudgets == 0)
            continue;
        uint32_t step = rt->nbudgets > 4096 ? rt->nbudgets / 4096 : 1;
        double sum = 0, n = 0;
        for (uint32_t j = 0; j < rt->nbudgets; j += step, n++)
            sum += budget_level(l->budget, &l->budget_p, &rt->budgets[j], s->now);
        level[i] = sum / n;
    }
    for (; s->layers.sampled < upto; s->layers.sampled++)
        for (unsigned i = 0; i < s->sc.nlayers; i++) {
            struct layer_bucket *lb = &s->m.lb[s->layers.sampled * s->m.nlayers + i];
            lb->open_share = open[i];
            lb->budget_level = level[i];
        }
}

/* attempts.csv's levels of hedges per request, one per hedged layer: at
 * most as many as the layer's attempts histogram holds. */
static int hedge_levels(struct sim *s, char *err, size_t errsz)
{
    size_t bins[SCENARIO_MAX_LAYERS];
    unsigned k = 0;
    for (unsigned l = 0; l < s->sc.nlayers && k < s->layers.nhedged; l++)
        if (s->sc.layers[l].hedge_mode != HEDGE_NONE)
            bins[k++] = s->m.att[l]->n;
    if (s->layers.nhedged > 0 &&
        metrics_extra_levels(&s->m, s->layers.nhedged, s->sc.nlayers + 1 + (s->sc.ncaches > 0), bins) != 0) {
        snprintf(err, errsz, "out of memory for the hedges' histograms");
        return -1;
    }
    return 0;
}

/* The triggers: groups of phases and herds that overlap or touch (each
 * starting no later than the group's end so far), in order. A phase that
 * starts at or before the warm-up's end (a warm-up phase from t = 0) is
 * the start-up, not a trigger: the baseline starts after it. O(k log k)
 * for k phases and herds. */
static int by_start(const void *a, const void *b)
{
    const rs_time *x = a, *y = b;
    return (x[0] > y[0]) - (x[0] < y[0]);
}

static void trigger_times(const struct scenario *sc, struct verdict_times *t)
{
    rs_time iv[SCENARIO_MAX_PHASES + SCENARIO_MAX_HERDS][2];
    size_t n = 0;
    for (unsigned i = 0; i < sc->nphases; i++) {
        const struct phase_cfg *ph = &sc->phases[i];
        if (ph->start <= sc->warmup && ph->end > t->warmup)
            t->warmup = ph->end; /* start-up */
        else if (ph->start > sc->warmup)
            iv[n][0] = ph->start, iv[n++][1] = ph->end;
    }
    for (unsigned i = 0; i < sc->nherds; i++)
        iv[n][0] = iv[n][1] = sc->herds[i], n++;
    qsort(iv, n, sizeof iv[0], by_start);
    t->ntriggers = 0;
    for (size_t i = 0; i < n; i++) {
        rs_time (*g)[2] = &t->trigger[t->ntriggers - 1];
        if (t->ntriggers > 0 && iv[i][0] <= (*g)[1]) {
            (*g)[1] = iv[i][1] > (*g)[1] ? iv[i][1] : (*g)[1];
            continue;
        }
        t->trigger[t->ntriggers][0] = iv[i][0];
        t->trigger[t->ntriggers++][1] = iv[i][1];
    }
}

struct sim *sim_create(const struct scenario *sc, uint32_t replication, char *err, size_t errsz)
{
    struct sim *s = calloc(1, sizeof *s);
    if (s == NULL) {
        snprintf(err, errsz, "out of memory (%zu bytes for the simulation)", sizeof *s);
        return NULL;
    }
    s->sc = *sc;
    s->replication = replication;
    s->live_limit = sim_default_live_limit();
    evq_init(&s->q);
    for (unsigned l = 0; l < sc->nlayers; l++)
        if (sc->layers[l].hedge_mode != HEDGE_NONE && sc->services[0].model != MODEL_OCC)
            s->layers.hedge_slot[l] = (uint8_t)(sc->nlayers + 1 + (sc->ncaches > 0) + s->layers.nhedged++);
    pool_init(&s->requests, request_size(sc->nlayers, sc->ncaches > 0, s->layers.nhedged));
    pool_init(&s->joins, sizeof(struct join_node));
    pool_init(&s->calls, sizeof(struct call));
    pool_init(&s->jobs, sizeof(struct job));
    pool_init(&s->msgs, sizeof(struct msg));
    unsigned att[SCENARIO_MAX_LAYERS];
    for (unsigned l = 0; l < sc->nlayers; l++)
        att[l] = sc->layers[l].attempts;
    if (rng_set_init(&s->rng, sc->seed, replication) != 0) {
        snprintf(err, errsz, "out of memory for the %d random number generators", RNG_NSTREAMS);
        goto fail;
    }
    if (metrics_init(&s->m, sim_horizon(sc), sc->bucket, sc->nlayers, att, err, errsz) != 0)
        goto fail;
    s->m.warmup = sc->warmup; /* the totals' window (metrics.h) */
    if (metrics_windows(&s->m, verdict_window_buckets(&s->m, sc->verdict_window)) != 0) {
        snprintf(err, errsz, "out of memory for the verdict's windows");
        goto fail;
    }
    struct verdict_times tt = {.warmup = sc->warmup};
    trigger_times(sc, &tt);
    s->m.win_since = tt.ntriggers ? tt.trigger[tt.ntriggers - 1][1] : 0; /* after it: new requests' p99 */
    if (phasewin_init(&s->pw, &s->sc, err, errsz) != 0)
        goto fail;
    if (hedge_levels(s, err, errsz) != 0)
        goto fail;
    if (service_init(s, err, errsz) != 0)
        goto fail;
    if (layer_init(s, err, errsz) != 0 || bulkhead_init(s, err, errsz) != 0 ||
        hedging_init(s, err, errsz) != 0)
        goto fail;
    if (caching_init(s, err, errsz) != 0)
        goto fail;
    topology_init(s);
    for (unsigned i = 0; i < sc->nphases; i++)
        s->layers.hop_phases |= sc->phases[i].target_kind == TARGET_LAYER;
    if (s->layers.client_top == NO_LAYER) {
        /* unreachable: scenario_check.c refuses a run with none (GCOVR_EXCL_START) */
        snprintf(err, errsz, "no layer from the clients");
        goto fail;
        /* unreachable: end of the case above (GCOVR_EXCL_STOP) */
    }
    /* With this many clients their states, think timers and requests in
     * flight outgrow the cache, and prefetching for the next event pays;
     * below it the peek costs more than it saves (storm: 1,000 clients). */
    s->prefetch = sc->clients >= 65536;
    if (load_init(s, err, errsz) != 0)
        goto fail;
    if (sc->services[0].model == MODEL_OCC && occ_init(s) != 0) {
        snprintf(err, errsz, "out of memory for %u occ clients", sc->clients);
        goto fail;
    }
    /* Phase boundaries: every start and end inside the run, sorted, distinct. */
    s->phase_times = malloc((2 * sc->nphases + 1) * sizeof *s->phase_times);
    if (s->phase_times == NULL) {
        snprintf(err, errsz, "out of memory for phases");
        goto fail;
    }
    uint32_t n = 0;
    for (unsigned i = 0; i < sc->nphases; i++) {
        s->phase_times[n++] = sc->phases[i].start;
        if (sc->phases[i].end < sim_horizon(sc)) /* a drain sees phases end */
            s->phase_times[n++] = sc->phases[i].end;
    }
    qsort(s->phase_times, n, sizeof *s->phase_times, cmp_time);
    s->nphase_times = 0;
    for (uint32_t i = 0; i < n; i++)
        if (s->nphase_times == 0 || s->phase_times[s->nphase_times - 1] != s->phase_times[i])
            s->phase_times[s->nphase_times++] = s->phase_times[i];
    return s;
fail:
    sim_destroy(s);
    return NULL;
}

void sim_destroy(struct sim *s)
{
    if (s == NULL)
        return;
    free(s->phase_times);
    phasewin_fini(&s->pw);
    load_free_timers(s);
    occ_fini(s);
    layer_fini(s);
    load_fini(s);
    caching_fini(s);
    hedging_fini(s);
    bulkhead_fini(s);
    service_fini(s);
    metrics_fini(&s->m);
    rng_set_fini(&s->rng);
    pool_fini(&s->requests);
    pool_fini(&s->calls);
    pool_fini(&s->jobs);
    pool_fini(&s->msgs);
    pool_fini(&s->joins);
    evq_fini(&s->q);
    free(s);
}

static void dispatch(struct sim *s, const struct evq_event *ev)
{
    switch ((enum ev_type)ev->type) {
    case EV_ARRIVAL:
        load_on_arrival(s);
        break;
    case EV_CLIENT:
        load_on_client(s, ev->obj);
        break;
    case EV_PHASE:
        load_on_phase(s);
        break;
    case EV_TIMEOUT:
        layer_on_timeout(s, ev->obj, ev->aux);
        break;
    case EV_RETRY:
        layer_on_retry(s, ev->obj);
        break;
    case EV_SERVICE_DONE:
        service_on_done(s, ev->obj, ev->aux);
        break;
    case EV_POOL_GRANT:
        layer_bulkhead_grant(s, ev->obj, ev->aux);
        break;
    case EV_DELIVER:
        net_on_deliver(s, ev->obj);
        break;
    case EV_ANSWER:
        net_on_answer(s, ev->obj);
        break;
    case EV_HERD:
        load_on_herd(s);
        break;
    case EV_TRACE:
        load_on_trace(s);
        break;
    case EV_CACHE_EXPIRE:
        caching_on_expire(s, ev->obj, ev->aux);
        break;
    case EV_CANCEL:
        if (ev->obj & REPLY_JOB)
            service_on_cancel(s, ev->obj & ~REPLY_JOB, ev->aux);
        else
            layer_on_cancel(s, ev->obj, ev->aux);
        break;
    case EV_OCC_READ:
    case EV_OCC_READ_RSP:
    case EV_OCC_WRITE:
    case EV_OCC_WRITE_RSP:
        occ_dispatch(s, (enum ev_type)ev->type, ev->obj, ev->aux);
        break;
    }
}

/* While an event runs, what the next one will touch first comes into the
 * cache: with a million clients their states and the objects of requests
 * in flight are spread over hundreds of megabytes, and each would
 * otherwise be a cache miss in the critical path. Only hints: nothing
 * changes. */
static inline void prefetch_object(const struct sim *s, const struct evq_event *e)
{
    switch ((enum ev_type)e->type) {
    case EV_CLIENT:
        layer_prefetch_client(s, s->layers.client_top, e->obj);
        break;
    case EV_TIMEOUT:
    case EV_RETRY:
        __builtin_prefetch(pool_at(&s->calls, e->obj));
        break;
    case EV_SERVICE_DONE:
        __builtin_prefetch(pool_at(&s->jobs, e->obj));
        break;
    case EV_DELIVER:
    case EV_ANSWER:
        __builtin_prefetch(pool_at(&s->msgs, e->obj));
        break;
    default:
        break;
    }
}

/* In stages: the record of the event after next (only asked for: reading
 * its type here stalled on a cache miss, 13 % of a deep cascade's time),
 * and for the next event, whose record was asked for one event ago, its
 * object (call, job or message, or a client's states) and what lies behind
 * it: a call's states, or a job's call and its client's states. Measured,
 * interleaved: cascade at 100,000 clients 4.7-4.95 -> 5.2-5.7 M events/s;
 * fleet of 1,000,000 unchanged within noise (2.5-2.8). */
static inline void prefetch_next(const struct sim *s)
{
    const struct evq_event *after, *next = evq_peek_hint(&s->q, &after);
    if (next == NULL)
        return;
    prefetch_object(s, next);
    if (next->type == EV_TIMEOUT || next->type == EV_RETRY) {
        layer_prefetch_call(s, next->obj);
    } else if (next->type == EV_SERVICE_DONE) {
        /* the answer goes to the call of the layer that sent the job,
         * which records it with its client's states */
        const struct job *j = pool_at(&s->jobs, next->obj);
        if (j->via != NO_LAYER) {
            __builtin_prefetch(pool_at(&s->calls, j->parent.call));
            layer_prefetch_client(s, j->via, j->client);
        }
    }
    if (after != NULL)
        __builtin_prefetch(after); /* its record only: reading it here would stall */
}

/* Walks the requests still alive at the end of the run: counts those
 * without an outcome (to check the running counters against) and records
 * the attempts of counted ones, so that the attempts histogram covers every
 * counted request. O(requests ever live at once). */
static int end_of_run_walk(struct sim *s, uint64_t *open_all, uint64_t *open_counted)
{
    *open_all = *open_counted = 0;
    uint8_t *freed = calloc(s->requests.used ? s->requests.used : 1, 1);
    if (freed == NULL)
        return -1;
    for (uint32_t i = 0; i < s->requests.nfree; i++)
        freed[s->requests.free_idx[i]] = 1;
    for (uint32_t i = 0; i < s->requests.used; i++) {
        const struct request *r = pool_at(&s->requests, i);
        if (freed[i])
            continue;
        if (r->counted)
            metrics_request_attempts(&s->m, r->n);
        if (!r->done) {
            (*open_all)++;
            if (r->counted)
                (*open_counted)++;
        }
    }
    free(freed);
    return 0;
}

/* Conservation per edge: every attempt a layer made has its result
 * recorded, was abandoned without one (a hedge that lost, a call that ended
 * or was cancelled with it out), or is still out (waiting for its answer
 * or for a bulkhead slot) at the end. O(calls ever live at once). */
static int edge_check(const struct sim *s, char *err, size_t errsz)
{
    uint64_t out[SCENARIO_MAX_LAYERS] = {0};
    uint8_t *freed = calloc(s->calls.used ? s->calls.used : 1, 1);
    if (freed == NULL) {
        snprintf(err, errsz, "out of memory checking the edges");
        return -1;
    }
    for (uint32_t i = 0; i < s->calls.nfree; i++)
        freed[s->calls.free_idx[i]] = 1;
    for (uint32_t i = 0; i < s->calls.used; i++) {
        const struct call *c = pool_at(&s->calls, i);
        if (freed[i] || c->state == CALL_BACKOFF || c->state == CALL_CANCELLED)
            continue;
        if (s->sc.layers[c->layer].hedge_mode != HEDGE_NONE)
            out[c->layer] += ((const struct hedge_rec *)pool_at(&s->hedges, c->hx))->nopen;
        else
            out[c->layer]++;
    }
    free(freed);
    for (unsigned l = 0; l < s->sc.nlayers; l++)
        if (s->layers.lrt[l].attempts != s->layers.lrt[l].results + s->layers.lrt[l].abandoned + out[l]) {
            /* unreachable: a conservation check only a bug fails (GCOVR_EXCL_START) */
            snprintf(err, errsz,
                     "internal error: layer %s made %llu attempts, %llu with a result, %llu abandoned and %llu still out",
                     s->sc.layers[l].name, (unsigned long long)s->layers.lrt[l].attempts,
                     (unsigned long long)s->layers.lrt[l].results,
                     (unsigned long long)s->layers.lrt[l].abandoned, (unsigned long long)out[l]);
            return -1;
            /* unreachable: end of the case above (GCOVR_EXCL_STOP) */
        }
    return 0;
}

/* Whether the objects in flight outgrew the run's limit; if so, says so in
 * s->limit. */
static bool over_live_limit(struct sim *s)
{
    if (sim_live_bytes(s) <= s->live_limit)
        return false;
    snprintf(s->limit, sizeof s->limit,
             "stopped at %.3f s of simulated time: its %llu requests, attempts and messages in flight passed "
             "the limit of %.1f MB (--max-memory)",
             units_seconds(s->now), (unsigned long long)sim_live_objects(s), s->live_limit / 1e6);
    return true;
}

bool sim_checkpoint(struct sim *s)
{
    if (s->progress != NULL)
        s->progress(s->progress_user, s->now, s->sc.duration, s->m.events);
    if ((s->stop != NULL && *s->stop) || over_live_limit(s))
        s->halt = true;
    return s->halt;
}

/* The run's first events: phase boundaries, herds, the first arrivals.
 * Returns 0, or -1 with err when a trace has no arrival source (a bug of
 * the caller: sim_set_arrivals). */
static int run_start(struct sim *s, char *err, size_t errsz)
{
    if (load_wants_arrivals(s) && s->load.arrivals.next == NULL) {
        snprintf(err, errsz, "the scenario has a trace, but the run was given no arrival source "
                             "(sim_set_arrivals)");
        return -1;
    }
    for (uint32_t i = 0; i < s->nphase_times; i++)
        evq_push(&s->q, s->phase_times[i], EV_PHASE, i, 0);
    for (unsigned i = 0; i < s->sc.nherds; i++)
        evq_push(&s->q, s->sc.herds[i], EV_HERD, i, 0);
    if (s->sc.services[0].model == MODEL_OCC)
        occ_start(s);
    else
        load_start(s);
    return 0;
}

rs_time sim_horizon(const struct scenario *sc)
{
    rs_time h = sc->drain ? units_add(sc->duration, sc->drain_limit) : sc->duration;
    return h < RS_TIME_LIMIT ? h : RS_TIME_LIMIT;
}

/* The events that bring new requests: with drain none is dispatched at or
 * after the duration (the phases' ends still are). */
static const bool brings_requests[EV_NTYPES] = {
    [EV_ARRIVAL] = true, [EV_CLIENT] = true, [EV_HERD] = true, [EV_TRACE] = true};

/* Where a run that stops now ends, at most at cap: the duration, or past
 * it the end of the bucket holding now (the bucket of its last events). */
static rs_time end_after(const struct sim *s, rs_time cap)
{
    if (s->now < s->sc.duration)
        return s->sc.duration;
    rs_time end = (s->now / s->sc.bucket + 1) * s->sc.bucket;
    return end < cap ? end : cap;
}

/* With drain, when no request is in flight and none can start (the next
 * event is at or after the duration): where the run ends, the end of the
 * bucket holding the last outcome, or the duration if that came before.
 * Otherwise `until` unchanged. O(1) amortised. */
static rs_time drain_until(struct sim *s, rs_time until)
{
    if (!s->sc.drain || until != sim_horizon(&s->sc) || s->in_flight != 0 ||
        evq_next_time(&s->q) < s->sc.duration)
        return until;
    return end_after(s, until);
}

int sim_run(struct sim *s, sim_progress_fn progress, void *user, char *err, size_t errsz)
{
    struct evq_event ev;
    if (run_start(s, err, errsz) != 0)
        return -1;
    rs_time until = sim_horizon(&s->sc); /* events before it are dispatched */
    s->progress = progress;
    s->progress_user = user;
    /* more than a herd of every client causes at one instant */
    /* (and more than a trace's most simultaneous arrivals cause) */
    uint64_t same_instant = 0,
             same_limit = 2000000ULL + 64ULL * s->sc.clients + 64ULL * s->sc.trace_burst;
    for (;;) {
        until = drain_until(s, until);
        if (s->halt || ((s->m.events & (SIM_PROGRESS_EVENTS - 1)) == 0 && sim_checkpoint(s))) {
            s->interrupted = s->cut || evq_next_time(&s->q) < until;
            if (!s->interrupted)
                s->limit[0] = '\0'; /* it had nothing left to do */
            break;
        }
        if (!evq_pop_before(&s->q, until, &ev))
            break;
        if (ev.t >= s->sc.duration && brings_requests[ev.type])
            continue; /* a drain: arrivals stopped at the duration */
        /* Simulated time must advance: a model that keeps making events at
         * one instant (a closed loop whose think times are nearly always 0,
         * say) would otherwise never end. */
        if (ev.t != s->now) {
            same_instant = 0;
        } else if (++same_instant > same_limit) {
            snprintf(err, errsz,
                     "simulated time stopped advancing at %.9g s: %llu events at the same instant "
                     "(think times nearly always 0, or immediate retries without backoff through many layers?)",
                     units_seconds(ev.t), (unsigned long long)same_instant);
            return -1;
        }
        if (ev.t >= (rs_time)(s->layers.sampled + 1) * s->sc.bucket)
            sample_layers(s, (size_t)(ev.t / s->sc.bucket));
        metrics_advance(&s->m, ev.t, s->services.q_len, s->services.busy, s->in_flight);
        s->now = ev.t;
        if (s->prefetch)
            prefetch_next(s);
        dispatch(s, &ev);
        s->m.events++;
#ifdef RS_SELFCHECK
        if ((s->m.events & 1023) == 0 && !evq_check(&s->q)) {
            snprintf(err, errsz, "internal error: event queue order broken at t=%lld ns",
                     (long long)s->now);
            return -1;
        }
#endif
    }
    if (s->load.trace_err[0] != '\0') { /* the file changed after the scenario was checked */
        snprintf(err, errsz, "the trace changed during the run: %s", s->load.trace_err);
        return -1;
    }
    s->end = s->interrupted ? end_after(s, sim_horizon(&s->sc)) : until;
    if (!s->interrupted)
        s->now = s->end;
    if (s->sc.drain && !s->interrupted && until == sim_horizon(&s->sc))
        s->drain_left = s->in_flight; /* the drain reached its limit */
    metrics_truncate(&s->m, s->end);
    sample_layers(s, s->m.nbuckets);
    service_finish(s);
    if (s->sc.ncaches > 0)
        caching_finish(s);
    metrics_finish(&s->m, s->now, s->services.q_len, s->services.busy, s->in_flight);
    /* Conservation: every request that started has one outcome or is in
     * flight, checked against an independent count of live requests. */
    uint64_t open_all, open_counted, done = 0;
    if (end_of_run_walk(s, &open_all, &open_counted) != 0) {
        snprintf(err, errsz, "out of memory checking the outcomes");
        return -1;
    }
    if (s->sc.services[0].model == MODEL_OCC)
        open_all = open_counted = occ_finish(s);
    for (int o = 0; o < OUT_NOUTCOMES; o++)
        done += s->m.outcomes[o];
    if (open_all != s->in_flight || done + open_counted != s->m.requests ||
        s->m.att_n != s->m.requests) {
        /* unreachable: a self-check of conservation that only a bug can fail (GCOVR_EXCL_START) */
        snprintf(err, errsz,
                 "internal error: outcomes do not add up: %llu requests, %llu ended, %llu in flight "
                 "(running count %llu of %llu), %llu attempt records",
                 (unsigned long long)s->m.requests, (unsigned long long)done,
                 (unsigned long long)open_counted, (unsigned long long)s->in_flight,
                 (unsigned long long)open_all, (unsigned long long)s->m.att_n);
        return -1;
        /* unreachable: end of the case above (GCOVR_EXCL_STOP) */
    }
    if (s->sc.services[0].model == MODEL_OCC)
        return 0; /* its clients keep their own counts */
    return service_check(s, err, errsz) != 0 ? -1 : edge_check(s, err, errsz);
}

const struct metrics *sim_metrics(const struct sim *s) { return &s->m; }
void sim_set_stop(struct sim *s, volatile sig_atomic_t *flag) { s->stop = flag; }
void sim_set_live_limit(struct sim *s, double bytes) { s->live_limit = bytes; }
const char *sim_limit(const struct sim *s) { return s->limit[0] != '\0' ? s->limit : NULL; }

static double default_live_limit = SIM_MAX_LIVE_BYTES;
void sim_set_default_live_limit(double bytes) { default_live_limit = bytes; }
double sim_default_live_limit(void) { return default_live_limit; }
bool sim_complete(const struct sim *s) { return !s->interrupted; }
rs_time sim_end(const struct sim *s) { return s->end; }
uint64_t sim_drain_left(const struct sim *s) { return s->drain_left; }
const struct scenario *sim_scenario(const struct sim *s) { return &s->sc; }
uint32_t sim_replication(const struct sim *s) { return s->replication; }

void sim_layer_totals(const struct sim *s, unsigned layer, struct sim_layer_totals *t)
{
    const struct layer_rt *rt = &s->layers.lrt[layer];
    const uint64_t *w = rt->win; /* the window's counts: metrics.h */
    *t = (struct sim_layer_totals){w[LC_ATTEMPTS],   w[LC_RETRIES],         w[LC_TIMEOUTS],
                                   w[LC_REFUSED],    w[LC_SHORT_CIRCUITED], w[LC_TRANSITIONS],
                                   w[LC_BULKHEADED], rt->ninstances,        rt->nbudgets,
                                   rt->nbreakers,    w[LC_HEDGES],          w[LC_HEDGE_WINS],
                                   w[LC_HEDGES_SUPPRESSED], w[LC_ABANDONED]};
}

uint64_t sim_in_flight(const struct sim *s)
{
    uint64_t done = 0;
    for (int o = 0; o < OUT_NOUTCOMES; o++)
        done += s->m.outcomes[o];
    return s->m.requests - done;
}

uint64_t sim_live_objects(const struct sim *s)
{
    return (uint64_t)s->requests.live + s->calls.live + s->jobs.live + s->msgs.live + s->joins.live;
}

void sim_verdict(const struct sim *s, struct verdict_result *v)
{
    const struct scenario *sc = &s->sc;
    /* a drain's buckets, after duration, have no arrivals: not the run's */
    struct verdict_times t = {.warmup = sc->warmup, .end = s->now < sc->duration ? s->now : sc->duration,
                              .complete = sim_complete(s)};
    trigger_times(sc, &t);
    struct verdict_params p = {sc->verdict_window, sc->verdict_hold, sc->verdict_persist, sc->verdict_tolerance};
    verdict_judge(&s->m, &p, &t, v);
}

const struct phasewin *sim_phasewin(const struct sim *s) { return &s->pw; }

unsigned sim_client_layer(const struct sim *s) { return s->layers.client_top; }
