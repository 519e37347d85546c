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
 * again from the new rate, which is exact by memorylessness.
 *
 * Shapes and traces (open loop). A phase's `ramp(A, B)` moves its rate or
 * factor linearly over the phase, and `shape = sine(a, P)` multiplies the
 * rate by 1 + a·sin(2πt/P); with either, arrivals are a non-homogeneous
 * Poisson process drawn by thinning (Lewis and Shedler): candidates come at
 * the rate's upper bound over the current segment (between two phase
 * boundaries or trace rows: each ramp's larger end, times 1 + a), and each
 * is kept with probability rate(t) / bound. A trace of rates (t,rate) gives
 * the base rate row by row, in place of [load] rate; a trace of timestamps
 * gives every arrival's instant. A trace's rows come one at a time from
 * the run's arrival source (sim.h; io/trace.c reads the file): the model
 * opens nothing. Each function is O(log pending events) apart from
 * load_on_phase and the rate of a thinned arrival, O(phases).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "load.h"
#include "simctx.h"

/* Whether the run's arrivals come from a trace. */
static bool traced(const struct sim *s)
{
    return s->load.arrivals.next != NULL;
}

static rs_time interarrival(struct sim *s)
{
    if (s->sc.arrival == ARRIVAL_UNIFORM)
        return units_from_ns(1e9 / s->load.rate);
    return units_from_ns(1e9 / s->load.rate * dist_std_exponential(s->rng.s[RNG_ARRIVALS]));
}

/* A phase's rate or factor at t (a ramp's value along the phase). */
static double phase_value(const struct phase_cfg *p, rs_time t)
{
    if (!p->ramp)
        return p->rate;
    double f = (double)(t - p->start) / (double)(p->end - p->start);
    return p->rate + (p->rate_to - p->rate) * f;
}

/* The open loop's rate at t without its shape: the base (the trace's row,
 * or [load] rate, or the last active absolute phase rate) times every
 * active factor. With upto > t, an upper bound over [t, upto] instead (no
 * phase starts or ends inside it): each ramp at its larger end. */
static double rate_without_shape(const struct sim *s, rs_time t, rs_time upto)
{
    double rate = traced(s) ? s->load.trace_rate : s->sc.rate, factor = 1.0;
    for (unsigned i = 0; i < s->sc.nphases; i++) {
        const struct phase_cfg *p = &s->sc.phases[i];
        if (!(p->start <= t && t < p->end) || !p->has_rate)
            continue;
        double v = phase_value(p, t);
        if (upto > t)
            v = fmax(v, phase_value(p, units_min(upto, p->end)));
        if (p->rate_is_factor)
            factor *= v;
        else
            rate = v;
    }
    return rate * factor;
}

static double shape_at(const struct sim *s, rs_time t)
{
    if (s->sc.sine_amplitude == 0.0)
        return 1.0;
    double phase = (double)(t % s->sc.sine_period) / (double)s->sc.sine_period;
    return 1.0 + s->sc.sine_amplitude * sin(2.0 * 3.14159265358979323846 * phase);
}

/* The end of the segment that starts now: the next phase boundary or trace
 * row, or the end of the run. O(phase boundaries). */
static rs_time segment_end(const struct sim *s)
{
    rs_time end = s->sc.duration;
    for (uint32_t i = 0; i < s->nphase_times; i++)
        if (s->phase_times[i] > s->now) {
            end = s->phase_times[i];
            break;
        }
    return traced(s) && s->load.trace_next_t > s->now ? units_min(end, s->load.trace_next_t) : end;
}

/* The rate candidates arrive at over the segment that starts now: the
 * rate itself, or with thinning its upper bound. */
static double segment_rate(const struct sim *s)
{
    if (!s->load.thin)
        return rate_without_shape(s, s->now, s->now);
    return rate_without_shape(s, s->now, segment_end(s)) * (1.0 + s->sc.sine_amplitude);
}

static void schedule_arrival(struct sim *s)
{
    s->load.next_arrival = s->load.rate > 0.0
                          ? evq_push(&s->q, units_add(s->now, interarrival(s)), EV_ARRIVAL, 0, 0)
                          : EVQ_NONE;
}

static void schedule_think(struct sim *s, uint32_t client)
{
    rs_time t = dist_sample(&s->sc.think, s->rng.s[RNG_ARRIVALS]);
    if (s->load.think_factor != 1.0)
        t = units_from_ns((double)t / s->load.think_factor);
    evq_handle h = evq_push(&s->q, units_add(s->now, t), EV_CLIENT, client, 0);
    if (s->load.think != NULL)
        s->load.think[client] = h;
}

static void start_request(struct sim *s, uint32_t client)
{
    uint32_t ri = pool_alloc(&s->requests);
    struct request *r = pool_at(&s->requests, ri);
    memset(r, 0, request_size(s->sc.nlayers, s->sc.ncaches > 0, s->layers.nhedged));
    if (s->sc.ncaches > 0) /* all its attempts look the same key up */
        r->n[s->sc.nlayers + 1] = keygen_draw(&s->caching.keys, s->rng.s[RNG_KEYS]);
    r->t_start = s->now;
    r->client = client;
    r->counted = s->now >= s->sc.warmup;
    s->in_flight++;
    if (r->counted)
        s->m.requests++;
    metrics_cur(&s->m)->offered++;
    phasewin_arrival(&s->pw, s->now);
    layer_call_start(s, s->layers.client_top, ri, (struct reply_to){NO_PARENT, 0, 0}, RS_TIME_NEVER);
}

/* The next row of the trace, or the trace's end (trace_next_t never). A
 * row that went bad since the scenario was checked (the file changed)
 * ends the trace and is reported by sim_run. */
static void read_trace_row(struct sim *s)
{
    double rate = 0.0;
    int r = s->load.arrivals.next(s->load.arrivals.ctx, &s->load.trace_next_t, &rate, s->load.trace_err,
                             sizeof s->load.trace_err);
    s->load.trace_next_rate = rate;
    if (r == 1 && s->load.trace_next_t < s->sc.duration) {
        uint32_t type = s->sc.trace_format == TRACE_FORMAT_TIMES ? EV_ARRIVAL : EV_TRACE;
        evq_handle h = evq_push(&s->q, s->load.trace_next_t, type, 0, 0);
        if (type == EV_ARRIVAL)
            s->load.next_arrival = h;
        return;
    }
    s->load.trace_next_t = RS_TIME_NEVER;
    if (r != -1)
        s->load.trace_err[0] = '\0';
}

/* Whether the scenario's arrivals come from a trace: an open loop with one
 * (a closed loop's clients think instead). */
bool load_wants_arrivals(const struct sim *s)
{
    return s->sc.trace[0] != '\0' && s->sc.model == LOAD_OPEN;
}

void sim_set_arrivals(struct sim *s, struct arrival_source src)
{
    load_fini(s);
    s->load.arrivals = src;
    if (!load_wants_arrivals(s))
        load_fini(s); /* unused: closed now */
}

int load_init(struct sim *s, char *err, size_t errsz)
{
    const struct scenario *sc = &s->sc;
    if (sc->model == LOAD_CLOSED && sc->nherds > 0) {
        s->load.think = malloc(sc->clients * sizeof *s->load.think);
        if (s->load.think == NULL) {
            snprintf(err, errsz, "out of memory for %u clients' think timers", sc->clients);
            return -1;
        }
        for (uint32_t i = 0; i < sc->clients; i++)
            s->load.think[i] = EVQ_NONE;
    }
    return 0;
}

void load_free_timers(struct sim *s)
{
    free(s->load.think);
    s->load.think = NULL;
}

void load_fini(struct sim *s)
{
    if (s->load.arrivals.close != NULL)
        s->load.arrivals.close(s->load.arrivals.ctx);
    s->load.arrivals = (struct arrival_source){0};
}

/* An open loop's segment changed: candidates at its new rate, the pending
 * one drawn again (exact, by memorylessness). */
static void reschedule_open(struct sim *s)
{
    double nrate = segment_rate(s);
    if (nrate != s->load.rate) {
        s->load.rate = nrate;
        evq_cancel(&s->q, s->load.next_arrival);
        schedule_arrival(s);
    }
}

/* A trace of rates reached its next row. */
void load_on_trace(struct sim *s)
{
    s->load.trace_rate = s->load.trace_next_rate;
    read_trace_row(s);
    reschedule_open(s);
}

void load_start(struct sim *s)
{
    s->load.next_arrival = EVQ_NONE; /* a zeroed handle would name slot 0 (review: a trace lost
                                 * its arrivals when the first reschedule cancelled it) */
    s->load.rate = s->sc.rate;
    s->load.think_factor = 1.0;
    for (unsigned i = 0; i < s->sc.nphases; i++)
        s->load.thin |= s->sc.phases[i].ramp;
    s->load.thin |= s->sc.sine_amplitude > 0.0;
    if (traced(s)) {
        s->load.rate = 0.0; /* none before the first row */
        read_trace_row(s);
    } else if (s->sc.model == LOAD_OPEN) {
        if (s->load.thin)
            s->load.rate = segment_rate(s);
        schedule_arrival(s);
    } else {
        for (uint32_t c = 0; c < s->sc.clients; c++)
            schedule_think(s, c);
    }
}

void load_on_arrival(struct sim *s)
{
    if (traced(s) && s->sc.trace_format == TRACE_FORMAT_TIMES) {
        read_trace_row(s);
    } else {
        schedule_arrival(s);
        /* thinning: a candidate is kept with probability rate(now) / bound */
        if (s->load.thin && gsl_rng_uniform(s->rng.s[RNG_ARRIVALS]) * s->load.rate >=
                           rate_without_shape(s, s->now, s->now) * shape_at(s, s->now))
            return;
    }
    uint32_t client = (uint32_t)gsl_rng_uniform_int(s->rng.s[RNG_ROUTING], s->sc.clients);
    start_request(s, client);
}

void load_on_client(struct sim *s, uint32_t client)
{
    if (s->load.think != NULL)
        s->load.think[client] = EVQ_NONE;
    start_request(s, client);
}

/* A herd: every client sends a request now. In a closed loop only the
 * clients that are thinking can (each has at most one request out); their
 * pending think is cancelled. O(clients · log pending events), in one
 * event: so every SIM_PROGRESS_EVENTS clients it passes a checkpoint (the
 * run's limits on memory and wall-clock time hold inside it too), and a
 * run stopped there ends with the herd cut short. */
void load_on_herd(struct sim *s)
{
    for (uint32_t c = 0; c < s->sc.clients; c++) {
        if ((c & (SIM_PROGRESS_EVENTS - 1)) == SIM_PROGRESS_EVENTS - 1 && sim_checkpoint(s)) {
            s->cut = true;
            return;
        }
        if (s->sc.model == LOAD_CLOSED) {
            if (!evq_cancel(&s->q, s->load.think[c]))
                continue; /* waiting for its outcome */
            s->load.think[c] = EVQ_NONE;
        }
        start_request(s, c);
    }
}

void load_on_phase(struct sim *s)
{
    double factor = 1.0;
    for (unsigned i = 0; i < s->sc.nphases; i++) {
        const struct phase_cfg *p = &s->sc.phases[i];
        if (p->start <= s->now && s->now < p->end && p->has_rate && p->rate_is_factor)
            factor *= p->rate;
    }
    net_apply_phases(s);
    service_apply_phases(s);
    caching_apply_phases(s);
    if (traced(s) && s->sc.trace_format == TRACE_FORMAT_TIMES)
        return; /* the trace states every arrival */
    if (s->sc.model == LOAD_OPEN)
        reschedule_open(s);
    else
        s->load.think_factor = factor;
}

void load_request_done(struct sim *s, uint32_t ri, enum outcome o)
{
    struct request *r = pool_at(&s->requests, ri);
    r->done = true;
    s->in_flight--;
    size_t bin = metrics_outcome(&s->m, o, s->now - r->t_start, r->counted);
    phasewin_outcome(&s->pw, s->now, o == OUT_OK, s->now - r->t_start, bin);
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
