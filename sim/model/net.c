/*
 * net — the hop below each layer: latency and loss, for attempts going down
 * and answers coming up, set on the layer that sends (`request_latency`,
 * `request_loss`, `response_latency`, `response_loss`).
 *
 * A hop phase (`target = LAYER`) adds its `latency` to each crossing and
 * its `loss` (1: a partition) to the layer's own, each way.
 *
 * A lost attempt never arrives and a lost answer never returns: to the
 * sender both look exactly like a slow answer (its timeout fires, or it
 * waits for ever). A hop with no latency delivers at once, without an
 * event, so scenarios without a network behave exactly as before. A hop
 * with latency carries the attempt or answer in a pooled message and an
 * event; an attempt in transit holds a reference on its request. Each
 * function is O(log pending events), with at most two draws from the
 * network stream.
 *
 * Cancellations (a layer with cancel = on-abandon) cross the hop as
 * attempts do, with the request direction's latency and loss. One that
 * overtakes its attempt on the hop drops it on arrival; one that arrives
 * later reaches the call or job the attempt became (EV_CANCEL, by index
 * and generation: nothing happens when that ended first).
 */
#include <gsl/gsl_rng.h>

#include "layer.h"
#include "simctx.h"

static bool lost(struct sim *s, double p)
{
    return p > 0.0 && gsl_rng_uniform(s->rng.s[RNG_NETWORK]) < p;
}

/* The attempt sent by `layer` arrives below it: at the next layer of its
 * edge, or at the edge's service. Returns what it became. */
static struct child deliver(struct sim *s, uint32_t layer, uint32_t req, struct reply_to from,
                            rs_time deadline_at)
{
    uint8_t below = s->layers.lrt[layer].next;
    if (below == NO_LAYER)
        return service_arrive(s, s->sc.layers[layer].to_service, req, from, (uint8_t)layer,
                              deadline_at);
    struct child ch = layer_call_start(s, below, req, from, deadline_at);
    layer_note_child(s, layer, from, ch, 0);
    return ch;
}

/* The layer's loss each way, with the active hop phases' (the layer's own
 * value untouched when no phase adds any, so no rounding creeps in). */
static inline double loss_of(const struct sim *s, uint32_t layer, double own)
{
    if (!s->layers.hop_phases)
        return own;
    double extra = s->layers.hop_loss[layer];
    return extra > 0.0 ? 1.0 - (1.0 - own) * (1.0 - extra) : own;
}

/* The hop's delay one way, or -1 when it has none (delivered at once). */
static inline rs_time delay_of(struct sim *s, uint32_t layer, bool has, const struct dist *own)
{
    const struct dist *extra = s->layers.hop_phases ? s->layers.hop_latency[layer] : NULL;
    if (!has && extra == NULL)
        return -1;
    rs_time d = has ? dist_sample(own, s->rng.s[RNG_NETWORK]) : 0;
    if (extra != NULL)
        d = units_add(d, dist_sample(extra, s->rng.s[RNG_NETWORK]));
    return d;
}

void net_send_down(struct sim *s, uint32_t layer, uint32_t req, struct reply_to from,
                   rs_time deadline_at)
{
    const struct layer_cfg *l = &s->sc.layers[layer];
    if (lost(s, loss_of(s, layer, l->request_loss)))
        return;
    rs_time d = delay_of(s, layer, l->has_request_latency, &l->request_latency);
    if (d < 0) {
        deliver(s, layer, req, from, deadline_at);
        return;
    }
    uint32_t mi = pool_alloc(&s->msgs);
    struct msg *m = pool_at(&s->msgs, mi);
    m->req = req;
    m->layer = (uint8_t)layer;
    m->to = from;
    m->deadline_at = deadline_at;
    m->cancel_at = RS_TIME_NEVER;
    ((struct request *)pool_at(&s->requests, req))->refs++;
    evq_push(&s->q, units_add(s->now, d), EV_DELIVER, mi, 0);
    layer_note_child(s, layer, from, (struct child){mi | CHILD_MSG, 0}, 0);
}

void net_on_deliver(struct sim *s, uint32_t mi)
{
    struct msg *m = pool_at(&s->msgs, mi);
    uint32_t req = m->req, layer = m->layer;
    struct reply_to from = m->to;
    rs_time deadline_at = m->deadline_at, cancel_at = m->cancel_at;
    pool_free(&s->msgs, mi);
    if (cancel_at <= s->now) { /* its cancellation overtook it: dropped on arrival */
        metrics_count(&s->m, MC_CANCELLED_BEFORE_START);
    } else {
        struct child ch = deliver(s, layer, req, from, deadline_at);
        if (cancel_at != RS_TIME_NEVER && ch.idx != NO_CHILD)
            evq_push(&s->q, cancel_at, EV_CANCEL, ch.idx, ch.gen);
    }
    load_request_unref(s, req); /* the call or job below holds its own reference now */
}

void net_cancel_down(struct sim *s, uint32_t layer, uint32_t child, uint32_t child_gen)
{
    const struct layer_cfg *l = &s->sc.layers[layer];
    metrics_count(&s->m, MC_CANCELS_SENT);
    if (lost(s, loss_of(s, layer, l->request_loss)))
        return;
    rs_time d = delay_of(s, layer, l->has_request_latency, &l->request_latency);
    rs_time at = units_add(s->now, d < 0 ? 0 : d);
    if (child & CHILD_MSG) /* the attempt is still on the hop: whichever arrives first */
        ((struct msg *)pool_at(&s->msgs, child & ~CHILD_MSG))->cancel_at = at;
    else /* an event even without delay: the canceller is mid-step */
        evq_push(&s->q, at, EV_CANCEL, child, child_gen);
}

void net_answer_up(struct sim *s, uint32_t layer, struct reply_to to, enum errclass cls,
                   rs_time retry_after)
{
    const struct layer_cfg *l = &s->sc.layers[layer];
    if (lost(s, loss_of(s, layer, l->response_loss)))
        return;
    rs_time d = delay_of(s, layer, l->has_response_latency, &l->response_latency);
    if (d < 0) {
        layer_on_answer(s, to, cls, retry_after);
        return;
    }
    uint32_t mi = pool_alloc(&s->msgs);
    struct msg *m = pool_at(&s->msgs, mi);
    m->to = to;
    m->cls = (uint8_t)cls;
    m->retry_after = retry_after;
    evq_push(&s->q, units_add(s->now, d), EV_ANSWER, mi, 0);
}

void net_on_answer(struct sim *s, uint32_t mi)
{
    struct msg *m = pool_at(&s->msgs, mi);
    struct reply_to to = m->to;
    enum errclass cls = (enum errclass)m->cls;
    rs_time ra = m->retry_after;
    pool_free(&s->msgs, mi);
    layer_on_answer(s, to, cls, ra);
}

/* The hop phases active now: each layer's added loss and latency. */
void net_apply_phases(struct sim *s)
{
    for (unsigned l = 0; l < s->sc.nlayers; l++) {
        s->layers.hop_loss[l] = 0.0;
        s->layers.hop_latency[l] = NULL;
    }
    for (unsigned i = 0; i < s->sc.nphases; i++) {
        const struct phase_cfg *p = &s->sc.phases[i];
        if (!(p->start <= s->now && s->now < p->end) || p->target_kind != TARGET_LAYER)
            continue;
        double *loss = &s->layers.hop_loss[p->target_index];
        *loss = 1.0 - (1.0 - *loss) * (1.0 - p->loss);
        if (p->has_latency)
            s->layers.hop_latency[p->target_index] = &p->latency; /* the last phase in file order */
    }
}
