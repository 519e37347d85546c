/*
 * load — where logical requests come from, and phases.
 *
 * A herd makes every client send a request at one instant (closed loop:
 * every client that is thinking).
 * Open loop: arrivals at an aggregate rate (Poisson, or evenly spaced), each
 * owned by a client drawn uniformly from `clients`. Closed loop: each client
 * thinks (a distribution, divided by the phase's rate factor), issues one
 * request, waits for its outcome and thinks again. Phase boundaries
 * recompute the rate, each replica's capacity, outage and slowdown, and each
 * hop's added latency and loss (service.c, net.c); a phase without a target
 * acts on the first service, as a single server did. Rate and capacity
 * factors multiply; an absolute rate replaces the base rate (the last active
 * one in file order wins); slowdowns multiply; the last active outage in
 * file order is a service's. A Poisson arrival pending at a boundary is drawn
 * again from the new rate, which is exact by memorylessness. Each function
 * is O(log pending events) apart from load_on_phase, O(phases).
 */
#include <gsl/gsl_randist.h>
#include <math.h>

#include <string.h>

#include "simctx.h"

static rs_time interarrival(struct sim *s)
{
    if (s->sc.arrival == ARRIVAL_UNIFORM)
        return units_from_ns(1e9 / s->rate);
    return units_from_ns(gsl_ran_exponential(s->rng.s[RNG_ARRIVALS], 1e9 / s->rate));
}

static void schedule_arrival(struct sim *s)
{
    s->next_arrival = s->rate > 0.0
                          ? evq_push(&s->q, units_add(s->now, interarrival(s)), EV_ARRIVAL, 0, 0)
                          : EVQ_NONE;
}

static void schedule_think(struct sim *s, uint32_t client)
{
    rs_time t = dist_sample(&s->sc.think, s->rng.s[RNG_ARRIVALS]);
    if (s->think_factor != 1.0)
        t = units_from_ns((double)t / s->think_factor);
    evq_handle h = evq_push(&s->q, units_add(s->now, t), EV_CLIENT, client, 0);
    if (s->think != NULL)
        s->think[client] = h;
}

static void start_request(struct sim *s, uint32_t client)
{
    uint32_t ri = pool_alloc(&s->requests);
    struct request *r = pool_at(&s->requests, ri);
    memset(r, 0, request_size(s->sc.nlayers));
    r->t_start = s->now;
    r->client = client;
    r->counted = s->now >= s->sc.warmup;
    s->in_flight++;
    if (r->counted)
        s->m.requests++;
    metrics_cur(&s->m)->offered++;
    layer_call_start(s, s->client_top, ri, (struct reply_to){NO_PARENT, 0, 0}, RS_TIME_NEVER);
}

void load_start(struct sim *s)
{
    s->rate = s->sc.rate;
    s->think_factor = 1.0;
    if (s->sc.model == LOAD_OPEN) {
        schedule_arrival(s);
    } else {
        for (uint32_t c = 0; c < s->sc.clients; c++)
            schedule_think(s, c);
    }
}

void load_on_arrival(struct sim *s)
{
    uint32_t client = (uint32_t)gsl_rng_uniform_int(s->rng.s[RNG_ROUTING], s->sc.clients);
    schedule_arrival(s);
    start_request(s, client);
}

void load_on_client(struct sim *s, uint32_t client)
{
    if (s->think != NULL)
        s->think[client] = EVQ_NONE;
    start_request(s, client);
}

/* A herd: every client sends a request now. In a closed loop only the
 * clients that are thinking can (each has at most one request out); their
 * pending think is cancelled. O(clients · log pending events). */
void load_on_herd(struct sim *s)
{
    for (uint32_t c = 0; c < s->sc.clients; c++) {
        if (s->sc.model == LOAD_CLOSED) {
            if (!evq_cancel(&s->q, s->think[c]))
                continue; /* waiting for its outcome */
            s->think[c] = EVQ_NONE;
        }
        start_request(s, c);
    }
}

/* The hop phases active now: each layer's added loss and latency. */
static void apply_hop_phases(struct sim *s)
{
    for (unsigned l = 0; l < s->sc.nlayers; l++) {
        s->hop_loss[l] = 0.0;
        s->hop_latency[l] = NULL;
    }
    for (unsigned i = 0; i < s->sc.nphases; i++) {
        const struct phase_cfg *p = &s->sc.phases[i];
        if (!(p->start <= s->now && s->now < p->end) || p->target_kind != TARGET_LAYER)
            continue;
        double *loss = &s->hop_loss[p->target_index];
        *loss = 1.0 - (1.0 - *loss) * (1.0 - p->loss);
        if (p->has_latency)
            s->hop_latency[p->target_index] = &p->latency; /* the last phase in file order */
    }
}

void load_on_phase(struct sim *s)
{
    double rate = s->sc.rate, factor = 1.0;
    for (unsigned i = 0; i < s->sc.nphases; i++) {
        const struct phase_cfg *p = &s->sc.phases[i];
        if (!(p->start <= s->now && s->now < p->end))
            continue;
        if (p->has_rate && p->rate_is_factor)
            factor *= p->rate;
        else if (p->has_rate)
            rate = p->rate;
    }
    apply_hop_phases(s);
    service_apply_phases(s);
    if (s->sc.model == LOAD_OPEN) {
        double nrate = rate * factor;
        if (nrate != s->rate) {
            s->rate = nrate;
            evq_cancel(&s->q, s->next_arrival);
            schedule_arrival(s);
        }
    } else {
        s->think_factor = factor;
    }
}

void load_request_done(struct sim *s, uint32_t ri, enum outcome o)
{
    struct request *r = pool_at(&s->requests, ri);
    r->done = true;
    s->in_flight--;
    metrics_outcome(&s->m, o, s->now - r->t_start, r->counted);
    if (s->sc.model == LOAD_CLOSED)
        schedule_think(s, r->client);
}

void load_request_unref(struct sim *s, uint32_t ri)
{
    struct request *r = pool_at(&s->requests, ri);
    if (--r->refs > 0)
        return;
    if (r->counted)
        metrics_request_attempts(&s->m, r->n);
    pool_free(&s->requests, ri);
}
