/*
 * hedging — what a hedged layer keeps at run time besides its calls: the
 * percentile delay, the extra-load cap, and the replica a copy prefers.
 *
 * Percentile delay (hedge = percentile): the hedge_percentile of the
 * latencies of the layer's last HEDGE_WINDOW copies answered ok or
 * business, and of the copies still out when another won, with their time
 * so far (Finagle records both: successes, and backups interrupted as
 * superseded), recomputed every HEDGE_REFRESH new latencies. Failed copies
 * are not in it (Finagle: "fast failures"). Until
 * HEDGE_MIN_SAMPLES are in, no hedge is sent (as Finagle's filter, whose
 * delay starts at infinity). Recomputing sorts the window: O(W log W) every
 * HEDGE_REFRESH answers, O(log W) an answer amortised; the delay is O(1).
 *
 * On a hedged layer `timeout` is the latest the next copy waits (the
 * earlier of it and the delay above); it never abandons a copy.
 *
 * Extra-load cap (hedge_max_extra = F, percentile only): the layer counts
 * first copies (not retries) and hedges in one-second slots over the last
 * HEDGE_CAP_SLOTS seconds; a hedge goes only while hedges + 1 <= F · first
 * copies in that window; it is asked only for a copy sent while another
 * is out. O(HEDGE_CAP_SLOTS) a check.
 *
 * Distinct replicas: a copy whose balancer pick another copy of its call
 * already reached goes to the next replica no copy reached (cyclically
 * after the pick), when there is one: no extra random draw. O(replicas ·
 * copies) at worst.
 */
#include <gsl/gsl_sort_double.h>
#include <gsl/gsl_statistics_double.h>
#include <stdio.h>
#include <stdlib.h>

#include "layer.h"
#include "simctx.h"

int hedging_init(struct sim *s, char *err, size_t errsz)
{
    size_t most = 0;
    for (unsigned i = 0; i < s->sc.nlayers; i++) {
        const struct layer_cfg *l = &s->sc.layers[i];
        struct layer_rt *rt = &s->layers.lrt[i];
        rt->hedge_delay = l->hedge_mode == HEDGE_FIXED ? l->hedge_delay : RS_TIME_NEVER;
        rt->tracks = l->hedge_mode != HEDGE_NONE || l->cancel != CANCEL_NONE;
        for (unsigned k = 0; k < HEDGE_CAP_SLOTS; k++)
            rt->cap_slot[k] = -1;
        if (l->hedge_mode != HEDGE_NONE && l->attempts > most)
            most = l->attempts;
        if (l->hedge_mode != HEDGE_PERCENTILE)
            continue;
        rt->lat_ring = malloc(HEDGE_WINDOW * sizeof *rt->lat_ring);
        if (rt->lat_ring == NULL) {
            snprintf(err, errsz, "out of memory for layer %s's hedging window", l->name);
            return -1;
        }
    }
    pool_init(&s->hedges, sizeof(struct hedge_rec) + (most ? most : 1) * sizeof(struct copy));
    pool_init(&s->kids, SCENARIO_MAX_FANOUT * sizeof(struct child));
    return 0;
}

void hedging_fini(struct sim *s)
{
    for (unsigned i = 0; i < SCENARIO_MAX_LAYERS; i++) {
        free(s->layers.lrt[i].lat_ring);
        s->layers.lrt[i].lat_ring = NULL;
    }
    pool_fini(&s->hedges);
    pool_fini(&s->kids);
}

rs_time hedging_delay(const struct sim *s, uint32_t layer)
{
    /* the layer's timeout is the latest the next copy waits (Envoy's
     * hedge_on_per_try_timeout: the copy out is not abandoned) */
    return units_min(s->layers.lrt[layer].hedge_delay, s->sc.layers[layer].timeout);
}

/* The percentile of the window, by GSL's interpolation between order statistics. */
static void refresh(struct sim *s, uint32_t layer)
{
    struct layer_rt *rt = &s->layers.lrt[layer];
    double sorted[HEDGE_WINDOW];
    for (uint32_t i = 0; i < rt->lat_n; i++)
        sorted[i] = (double)rt->lat_ring[i];
    gsl_sort(sorted, 1, rt->lat_n);
    double p = s->sc.layers[layer].hedge_percentile / 100.0;
    double q = gsl_stats_quantile_from_sorted_data(sorted, 1, rt->lat_n, p);
    rt->hedge_delay = q < 1.0 ? 1 : (rs_time)q; /* at least 1 ns: after the copy, not with it */
}

void hedging_latency(struct sim *s, uint32_t layer, rs_time lat)
{
    struct layer_rt *rt = &s->layers.lrt[layer];
    if (rt->lat_ring == NULL)
        return;
    rt->lat_ring[rt->lat_pos] = lat;
    rt->lat_pos = (rt->lat_pos + 1) % HEDGE_WINDOW;
    if (rt->lat_n < HEDGE_WINDOW)
        rt->lat_n++;
    if (++rt->lat_new >= HEDGE_REFRESH && rt->lat_n >= HEDGE_MIN_SAMPLES) {
        rt->lat_new = 0;
        refresh(s, layer);
    }
}

/* The cap's slot for now, cleared when it last held an older second. */
static uint32_t cap_slot(struct layer_rt *rt, rs_time now)
{
    int64_t sec = now / RS_S;
    uint32_t k = (uint32_t)(sec % HEDGE_CAP_SLOTS);
    if (rt->cap_slot[k] != sec) {
        rt->cap_slot[k] = sec;
        rt->cap_first[k] = rt->cap_hedges[k] = 0;
    }
    return k;
}

void hedging_count(struct sim *s, uint32_t layer, bool hedge, bool first)
{
    struct layer_rt *rt = &s->layers.lrt[layer];
    if (hedge) {
        layer_count(s, layer, LC_HEDGES);
        metrics_count(&s->m, MC_HEDGES);
    }
    if (s->sc.layers[layer].hedge_mode != HEDGE_PERCENTILE)
        return;
    uint32_t k = cap_slot(rt, s->now);
    if (hedge)
        rt->cap_hedges[k]++;
    else if (first)
        rt->cap_first[k]++;
}

bool hedging_cap_allows(struct sim *s, uint32_t layer)
{
    const struct layer_cfg *l = &s->sc.layers[layer];
    if (l->hedge_mode != HEDGE_PERCENTILE)
        return true;
    struct layer_rt *rt = &s->layers.lrt[layer];
    int64_t sec = s->now / RS_S;
    uint64_t first = 0, hedges = 0;
    for (unsigned k = 0; k < HEDGE_CAP_SLOTS; k++) {
        if (rt->cap_slot[k] > sec - HEDGE_CAP_SLOTS) {
            first += rt->cap_first[k];
            hedges += rt->cap_hedges[k];
        }
    }
    return (double)(hedges + 1) <= l->hedge_max_extra * (double)first;
}

/* Whether a copy of the call (copies 1..n in h) reached replica rep. */
static bool reached(const struct hedge_rec *h, uint32_t n, uint32_t rep)
{
    for (uint32_t k = 0; k < n; k++)
        if (h->copy[k].rep == rep + 1)
            return true;
    return false;
}

uint32_t hedging_unused_replica(const struct sim *s, const struct hedge_rec *h, uint32_t n,
                                uint32_t svc, uint32_t pick)
{
    if (!reached(h, n, pick))
        return pick;
    uint32_t first = s->services.svc[svc].first, count = s->services.svc[svc].n;
    for (uint32_t i = 1; i < count; i++) {
        uint32_t r = first + (pick - first + i) % count;
        if (!reached(h, n, r))
            return r;
    }
    return pick; /* every replica has had a copy */
}
