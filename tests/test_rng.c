/*
 * The random streams' seeds: every (replication, stream) pair of a run gets
 * its own seed, so replications are independent and confidence intervals
 * over them mean what they say; the same triple always gives the same seed.
 *
 * A seed that ignored the replication, or mixed it with the stream so that
 * replication r's stream s meets replication r''s stream s', would give
 * correlated replications whose outputs still look plausible: only a test
 * of the seeds themselves sees it.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <gsl/gsl_sort_ulong.h>

#include "rng.h"

#define REPS 256

/* 256 replications × 8 streams: 2,048 seeds of 32 bits, all distinct (a
 * good hash collides here with probability 2048²/2^33 ≈ 5e-4; the seeds are
 * fixed, so the check is reproducible), for several run seeds. */
static void every_replication_and_stream_has_its_own_seed(void **state)
{
    (void)state;
    static unsigned long seeds[REPS * RNG_NSTREAMS];
    const uint64_t runs[] = {1, 2, 42, 0xffffffffffffffffULL};
    for (size_t k = 0; k < sizeof runs / sizeof runs[0]; k++) {
        size_t n = 0;
        for (uint32_t r = 0; r < REPS; r++)
            for (int s = 0; s < RNG_NSTREAMS; s++)
                seeds[n++] = rng_stream_seed(runs[k], r, (enum rng_stream)s);
        gsl_sort_ulong(seeds, 1, n);
        for (size_t i = 1; i < n; i++)
            if (seeds[i] == seeds[i - 1])
                fail_msg("run seed %llu: two (replication, stream) pairs share seed %lu",
                         (unsigned long long)runs[k], seeds[i]);
    }
}

/* Pure: the same triple gives the same seed; another run seed another. */
static void seeds_repeat_and_depend_on_the_run_seed(void **state)
{
    (void)state;
    for (int s = 0; s < RNG_NSTREAMS; s++) {
        assert_true(rng_stream_seed(7, 3, (enum rng_stream)s) == rng_stream_seed(7, 3, (enum rng_stream)s));
        assert_true(rng_stream_seed(7, 3, (enum rng_stream)s) != rng_stream_seed(8, 3, (enum rng_stream)s));
    }
}

/* The generators a run uses: replications 0 to 3 draw different first
 * numbers on every stream, and a second set for the same replication draws
 * the same ones. */
static void replications_draw_differently(void **state)
{
    (void)state;
    unsigned long first[4][RNG_NSTREAMS];
    for (uint32_t r = 0; r < 4; r++) {
        struct rng_set set;
        assert_int_equal(rng_set_init(&set, 1, r), 0);
        for (int s = 0; s < RNG_NSTREAMS; s++)
            first[r][s] = gsl_rng_get(set.s[s]);
        rng_set_fini(&set);
    }
    for (uint32_t a = 0; a < 4; a++)
        for (uint32_t b = a + 1; b < 4; b++)
            for (int s = 0; s < RNG_NSTREAMS; s++)
                if (first[a][s] == first[b][s])
                    fail_msg("replications %u and %u draw the same first number on stream %d", a, b, s);
    struct rng_set again;
    assert_int_equal(rng_set_init(&again, 1, 2), 0);
    for (int s = 0; s < RNG_NSTREAMS; s++)
        assert_true(gsl_rng_get(again.s[s]) == first[2][s]);
    rng_set_fini(&again);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_replication_and_stream_has_its_own_seed),
        cmocka_unit_test(seeds_repeat_and_depend_on_the_run_seed),
        cmocka_unit_test(replications_draw_differently),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
