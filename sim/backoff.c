/*
 * backoff — delay formulas as a table of descriptors. See backoff.h.
 */
#include "backoff.h"

#include <math.h>
#include <string.h>

static double cap_of(const struct backoff_params *p)
{
    return p->cap < RS_TIME_LIMIT ? (double)p->cap : (double)RS_TIME_LIMIT;
}

double backoff_envelope(const struct backoff_params *p, double k)
{
    double e = (double)p->base * pow(p->multiplier, k);
    double cap = cap_of(p);
    return (e < cap) ? e : cap; /* also maps +inf and overflow to the cap */
}

static rs_time d_none(const struct backoff_params *p, struct backoff_state *s, unsigned k,
                      gsl_rng *r)
{
    (void)p, (void)s, (void)k, (void)r;
    return 0;
}

static rs_time d_constant(const struct backoff_params *p, struct backoff_state *s, unsigned k,
                          gsl_rng *r)
{
    (void)s, (void)k, (void)r;
    return p->base;
}

static rs_time d_linear(const struct backoff_params *p, struct backoff_state *s, unsigned k,
                        gsl_rng *r)
{
    (void)s, (void)r;
    double d = (double)p->base * (double)k;
    double cap = cap_of(p);
    return units_from_ns(d < cap ? d : cap);
}

static rs_time d_exponential(const struct backoff_params *p, struct backoff_state *s, unsigned k,
                             gsl_rng *r)
{
    (void)s, (void)r;
    return units_from_ns(backoff_envelope(p, (double)k - 1.0));
}

static rs_time d_full(const struct backoff_params *p, struct backoff_state *s, unsigned k,
                      gsl_rng *r)
{
    (void)s;
    return units_from_ns(gsl_rng_uniform(r) * backoff_envelope(p, (double)k));
}

static rs_time d_equal(const struct backoff_params *p, struct backoff_state *s, unsigned k,
                       gsl_rng *r)
{
    (void)s;
    double half = backoff_envelope(p, (double)k) / 2.0;
    return units_from_ns(half + gsl_rng_uniform(r) * half);
}

static rs_time d_decorrelated(const struct backoff_params *p, struct backoff_state *s, unsigned k,
                              gsl_rng *r)
{
    (void)k;
    double lo = (double)p->base;
    double hi = p->multiplier * (double)s->prev;
    double d = lo + gsl_rng_uniform(r) * (hi - lo);
    double cap = cap_of(p);
    s->prev = units_from_ns(d < cap ? d : cap);
    return s->prev;
}

const struct backoff_kind backoff_kinds[] = {
    {"none", 2.0, false, d_none},
    {"constant", 2.0, false, d_constant},
    {"linear", 2.0, false, d_linear},
    {"exponential", 2.0, false, d_exponential},
    {"full", 2.0, true, d_full},
    {"equal", 2.0, true, d_equal},
    {"decorrelated", 3.0, true, d_decorrelated},
};
const unsigned backoff_nkinds = sizeof backoff_kinds / sizeof backoff_kinds[0];

const struct backoff_kind *backoff_find(const char *name)
{
    for (unsigned i = 0; i < backoff_nkinds; i++)
        if (strcmp(backoff_kinds[i].name, name) == 0)
            return &backoff_kinds[i];
    return NULL;
}
