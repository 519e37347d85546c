/*
 * net — the hop below each layer: latency and loss, for attempts going down
 * and answers coming up, set on the layer that sends (`request_latency`,
 * `request_loss`, `response_latency`, `response_loss`).
 *
 * A lost attempt never arrives and a lost answer never returns: to the
 * sender both look exactly like a slow answer (its timeout fires, or it
 * waits for ever). A hop with no latency delivers at once, without an
 * event, so scenarios without a network behave exactly as before. A hop
 * with latency carries the attempt or answer in a pooled message and an
 * event; an attempt in transit holds a reference on its request. Each
 * function is O(log pending events), with at most two draws from the
 * network stream.
 */
#include <gsl/gsl_rng.h>

#include "simctx.h"

static bool lost(struct sim *s, double p)
{
    return p > 0.0 && gsl_rng_uniform(s->rng.s[RNG_NETWORK]) < p;
}

static void deliver(struct sim *s, uint32_t below, uint32_t req, struct reply_to from,
                    rs_time deadline_at)
{
    if (below == s->sc.nlayers)
        server_arrive(s, req, from, deadline_at);
    else
        layer_call_start(s, below, req, from, deadline_at);
}

void net_send_down(struct sim *s, uint32_t layer, uint32_t req, struct reply_to from,
                   rs_time deadline_at)
{
    const struct layer_cfg *l = &s->sc.layers[layer];
    if (lost(s, l->request_loss))
        return;
    if (!l->has_request_latency) {
        deliver(s, layer + 1, req, from, deadline_at);
        return;
    }
    rs_time d = dist_sample(&l->request_latency, s->rng.s[RNG_NETWORK]);
    uint32_t mi = pool_alloc(&s->msgs);
    struct msg *m = pool_at(&s->msgs, mi);
    m->req = req;
    m->layer = (uint8_t)(layer + 1);
    m->to = from;
    m->deadline_at = deadline_at;
    ((struct request *)pool_at(&s->requests, req))->refs++;
    evq_push(&s->q, units_add(s->now, d), EV_DELIVER, mi, 0);
}

void net_on_deliver(struct sim *s, uint32_t mi)
{
    struct msg *m = pool_at(&s->msgs, mi);
    uint32_t req = m->req, below = m->layer;
    struct reply_to from = m->to;
    rs_time deadline_at = m->deadline_at;
    pool_free(&s->msgs, mi);
    deliver(s, below, req, from, deadline_at);
    load_request_unref(s, req); /* the call or job below holds its own reference now */
}

void net_answer_up(struct sim *s, uint32_t layer, struct reply_to to, enum errclass cls,
                   rs_time retry_after)
{
    const struct layer_cfg *l = &s->sc.layers[layer];
    if (lost(s, l->response_loss))
        return;
    if (!l->has_response_latency) {
        layer_on_answer(s, to, cls, retry_after);
        return;
    }
    rs_time d = dist_sample(&l->response_latency, s->rng.s[RNG_NETWORK]);
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
