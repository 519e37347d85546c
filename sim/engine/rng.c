/*
 * rng — per-purpose GSL random streams. See rng.h.
 */
#include "rng.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

static uint64_t splitmix64(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

unsigned long rng_stream_seed(uint64_t seed, uint32_t replication, enum rng_stream stream)
{
    uint64_t h = splitmix64(seed);
    h = splitmix64(h ^ ((uint64_t)replication << 8) ^ (uint64_t)stream);
    /* taus2 uses 32 bits of its seed; 0 would select GSL's default seed. */
    unsigned long s = (unsigned long)(h & 0xffffffffULL);
    return s == 0 ? 1 : s;
}

int rng_set_init(struct rng_set *set, uint64_t seed, uint32_t replication)
{
    for (int i = 0; i < RNG_NSTREAMS; i++)
        set->s[i] = NULL;
    for (int i = 0; i < RNG_NSTREAMS; i++) {
        set->s[i] = gsl_rng_alloc(gsl_rng_taus2);
        if (set->s[i] == NULL) {
            rng_set_fini(set);
            return -1;
        }
        gsl_rng_set(set->s[i], rng_stream_seed(seed, replication, (enum rng_stream)i));
        /* the ziggurat (dist.c) takes 32 uniform bits from a draw */
        if (gsl_rng_min(set->s[i]) != 0 || gsl_rng_max(set->s[i]) != 0xffffffffUL) {
            fprintf(stderr, "retrystorm: internal error: %s does not draw 32 bits\n",
                    gsl_rng_name(set->s[i]));
            abort();
        }
    }
    return 0;
}

void rng_set_fini(struct rng_set *set)
{
    for (int i = 0; i < RNG_NSTREAMS; i++) {
        gsl_rng_free(set->s[i]);
        set->s[i] = NULL;
    }
}
