/*
 * occ — the optimistic-concurrency model of the 2015 AWS "Exponential
 * Backoff And Jitter" study (aws-samples/aws-arch-backoff-simulator).
 *
 * `clients` clients start at t = 0; each must update one shared item once.
 * An update is a read of the item's version and a conditional write; every
 * message takes the first layer's request_latency to the server and its
 * response_latency back (the study: |N(10 ms, 2 ms)| each way). A write
 * succeeds only if the version is still the one read (and bumps it); after
 * a failed write the client waits its backoff, then reads and writes
 * again, until it succeeds (attempts is not a limit here, as in the study).
 * Backoff follows the study's numbering: the k-th retry's exponential term
 * is min(cap, base·2^k) for `exponential` as for the jittered kinds (the
 * kind's exponent_lag says how far its formula's exponent lags), and
 * decorrelated keeps per-client state starting at base.
 *
 * Metrics: each client is a logical request ending `ok` when its write
 * succeeds, its latency the time it is done (so lat_max is the time the
 * last client finishes); every write is a server arrival (the study's
 * "calls"), a failed write counts as err_409. Each event is O(log pending
 * events); memory is O(clients).
 */
#include <stdlib.h>

#include "occ.h"
#include "simctx.h"

static rs_time hop(struct sim *s, bool up)
{
    const struct layer_cfg *l = &s->sc.layers[0];
    if (up ? !l->has_response_latency : !l->has_request_latency)
        return 0;
    return dist_sample(up ? &l->response_latency : &l->request_latency, s->rng.s[RNG_NETWORK]);
}

int occ_init(struct sim *s)
{
    s->occ.clients = calloc(s->sc.clients, sizeof *s->occ.clients);
    return s->occ.clients ? 0 : -1;
}

void occ_fini(struct sim *s)
{
    free(s->occ.clients);
    s->occ.clients = NULL;
}

void occ_start(struct sim *s)
{
    const struct layer_cfg *l = &s->sc.layers[0];
    for (uint32_t c = 0; c < s->sc.clients; c++) {
        backoff_state_init(&l->bp, &s->occ.clients[c].bs);
        s->m.requests++;
        s->in_flight++;
        metrics_cur(&s->m)->offered++;
        phasewin_arrival(&s->pw, s->now);
        evq_push(&s->q, units_add(s->now, hop(s, false)), EV_OCC_READ, c, 0);
    }
}

void occ_dispatch(struct sim *s, enum ev_type type, uint32_t c, uint32_t aux)
{
    struct occ_client *cl = &s->occ.clients[c];
    const struct layer_cfg *l = &s->sc.layers[0];
    switch (type) {
    case EV_OCC_READ: /* at the server: answer the current version */
        evq_push(&s->q, units_add(s->now, hop(s, true)), EV_OCC_READ_RSP, c,
                 (uint32_t)s->occ.version);
        break;
    case EV_OCC_READ_RSP: /* at the client: write with the version read */
        metrics_attempt(&s->m, 0);
        cl->writes++;
        evq_push(&s->q, units_add(s->now, hop(s, false)), EV_OCC_WRITE, c, aux);
        break;
    case EV_OCC_WRITE: { /* at the server: the conditional write */
        bool ok = aux == (uint32_t)s->occ.version;
        metrics_count(&s->m, MC_SERVER_ARRIVALS);
        phasewin_server(&s->pw, s->now);
        metrics_count(&s->m, MC_SERVER_COMPLETIONS);
        if (ok)
            s->occ.version++;
        evq_push(&s->q, units_add(s->now, hop(s, true)), EV_OCC_WRITE_RSP, c, ok);
        break;
    }
    case EV_OCC_WRITE_RSP: /* at the client: done, or back off and read again */
        if (aux) {
            uint64_t n[SCENARIO_MAX_LAYERS + 1] = {0};
            cl->done = true;
            s->in_flight--;
            size_t bin = metrics_outcome(&s->m, OUT_OK, s->now, true);
            phasewin_outcome(&s->pw, s->now, true, s->now, bin);
            n[0] = n[s->sc.nlayers] = cl->writes;
            metrics_request_attempts(&s->m, n);
        } else {
            metrics_count(&s->m, MC_ERRORS + CLS_409);
            cl->attempt++;
            /* the study's numbering: min(cap, base·2^k) */
            unsigned k = cl->attempt + l->backoff->exponent_lag;
            rs_time d = l->backoff->next_delay(&l->bp, &cl->bs, k, CLS_409, s->rng.s[RNG_JITTER]);
            evq_push(&s->q, units_add(units_add(s->now, d), hop(s, false)), EV_OCC_READ, c, 0);
        }
        break;
    default: /* unreachable: dispatch sends only EV_OCC_* here (GCOVR_EXCL_LINE) */
        break; /* unreachable: dispatch sends only EV_OCC_* here (GCOVR_EXCL_LINE) */
    }
}

uint64_t occ_finish(struct sim *s)
{
    uint64_t open = 0;
    for (uint32_t c = 0; c < s->sc.clients; c++) {
        if (s->occ.clients[c].done)
            continue;
        uint64_t n[SCENARIO_MAX_LAYERS + 1] = {0};
        n[0] = n[s->sc.nlayers] = s->occ.clients[c].writes;
        metrics_request_attempts(&s->m, n);
        open++;
    }
    return open;
}
