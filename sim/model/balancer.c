/*
 * balancer — which replica of a service an attempt goes to (`balancer =`).
 *
 * random: uniform over the replicas. round-robin: the replicas in turn, one
 * cursor per service shared by every caller. least-outstanding: the replica
 * with the fewest requests outstanding (jobs queued or holding a worker,
 * and attempts it swallowed), scanning from a cursor that moves on each
 * pick so that ties are spread, not sent to the first replica. p2c: two
 * distinct replicas drawn at random, the one with fewer outstanding (the
 * first on a tie). A replica that refuses or fails
 * fast holds no jobs, so it looks least loaded to least-outstanding and p2c:
 * the sinkholing of real load balancers follows from the rule, nothing
 * special-cases it. An attempt a hung replica (outage = hang) swallowed
 * counts as outstanding there until its caller stops waiting for it (its
 * timeout, or the call's end), as a real balancer counts a request until
 * the client resets it. One replica: no draw, no scan (balancer_pick, inline). random and p2c draw from the balancer
 * stream. Costs: O(1), except least-outstanding O(replicas).
 */
#include <gsl/gsl_rng.h>

#include "service.h"
#include "simctx.h"

static uint32_t present(const struct replica *rp) { return rp->q_len + rp->busy + rp->hung; }

static uint32_t least_outstanding(struct sim *s, struct service_rt *v)
{
    uint32_t best = v->rr % v->n, best_n = UINT32_MAX;
    for (uint32_t k = 0; k < v->n; k++) {
        uint32_t i = (v->rr + k) % v->n, n = present(&s->services.reps[v->first + i]);
        if (n < best_n) {
            best = i;
            best_n = n;
        }
    }
    v->rr = (v->rr + 1) % v->n;
    return best;
}

static uint32_t power_of_two(struct sim *s, const struct service_rt *v)
{
    gsl_rng *g = s->rng.s[RNG_BALANCER];
    uint32_t a = (uint32_t)gsl_rng_uniform_int(g, v->n);
    uint32_t b = (uint32_t)gsl_rng_uniform_int(g, v->n - 1);
    if (b >= a)
        b++; /* distinct from a, uniform over the others */
    return present(&s->services.reps[v->first + b]) < present(&s->services.reps[v->first + a]) ? b : a;
}

uint32_t balancer_choose(struct sim *s, uint32_t svc)
{
    struct service_rt *v = &s->services.svc[svc];
    uint32_t i;
    switch (s->sc.services[svc].balancer) {
    case BAL_ROUND_ROBIN:
        i = v->rr;
        v->rr = (v->rr + 1) % v->n;
        break;
    case BAL_LEAST_OUTSTANDING:
        i = least_outstanding(s, v);
        break;
    case BAL_P2C:
        i = power_of_two(s, v);
        break;
    case BAL_RANDOM:
    default:
        i = (uint32_t)gsl_rng_uniform_int(s->rng.s[RNG_BALANCER], v->n);
        break;
    }
    return v->first + i;
}
