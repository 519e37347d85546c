/*
 * Exact edges of sim/model (caches, footprint, bulkheads, hedging, the
 * network hop, occ): small scenarios whose numbers follow by hand from a
 * documented rule, each written to kill mechanical mutants
 * (scripts/mutagen.py) that the other tests let live. Each test says which
 * rule it pins and why the numbers are what they are.
 */
#include "rs_test.h"

#include <string.h>

#define M(s) sim_metrics(s)

/* One request every second from 1 s to 9 s (the quiet phase from 9.5 s
 * stops arrivals), as in test_semantics.c. */
#define ONE_PER_SECOND                                                                             \
    "[run]\nduration = 30s\n[load]\narrival = uniform\nrate = 1/s\n"                               \
    "[phase quiet]\nstart = 9500ms\nend = 30s\nrate = x0\n"

/* One key; a miss takes 1 ms and fills an entry that lives 1.5 s. */
#define ONE_KEY_CACHE(ttl)                                                                         \
    "[load]\nkeys = 1\n[server]\nworkers = 1\nservice = const(1ms)\ncache = c\n"                   \
    "[cache c]\nttl = " ttl "\n"

/* The hit ratio counts lookups from the warm-up on (README, Caches:
 * "hits / lookups after warm-up"), a lookup at the very instant of the
 * warm-up's end included, as requests arriving at it are counted. With
 * one key and a 1.5 s TTL the lookups at 1, 3, 5, 7, 9 s miss (the entry
 * filled at t + 1 ms is gone at t + 1.501 s) and those at 2, 4, 6, 8 s hit:
 * from 2 s on, 4 hits of 8 lookups, 0.5 (from 3 s on it would be 3/7). */
static void hit_ratio_counts_from_the_warmup_instant(void **state)
{
    (void)state;
    const char *sets[] = {"run.warmup=2s"};
    struct sim *s = run_text(ONE_PER_SECOND ONE_KEY_CACHE("1500ms"), sets, 1);
    struct sim_cache_row row;
    uint64_t lookups = 0, hits = 0;
    for (size_t b = 0; sim_cache_row(s, 0, b, &row); b++) {
        lookups += row.n.lookups;
        hits += row.n.hits;
    }
    assert_true(lookups == 9 && hits == 4);
    assert_true(sim_cache_hit_ratio(s, 0) == 0.5);
    sim_destroy(s);
}

/* caches.csv's `entries` is the count at the bucket's end (README,
 * Caches, Outputs), so a bucket in which nothing happens to the cache
 * shows what the one before ended with. Without a TTL the one entry,
 * filled at 1.001 s, stays to the end: every bucket from 1 s on, the quiet
 * ones after 9.5 s included, ends with 1 entry; bucket 0 with none. */
static void quiet_buckets_keep_their_entries(void **state)
{
    (void)state;
    struct sim *s = run_text(ONE_PER_SECOND ONE_KEY_CACHE("none"), NULL, 0);
    struct sim_cache_row row;
    assert_true(sim_cache_row(s, 0, 0, &row) && row.entries == 0);
    for (size_t b = 1; b < 30; b++) {
        assert_true(sim_cache_row(s, 0, b, &row));
        assert_true(row.entries == 1);
        assert_true(row.n.lookups == (b <= 9 ? 1 : 0));
    }
    /* Past the last cache or the last bucket there is no row (30 buckets
     * of 1 s, one cache). */
    assert_false(sim_cache_row(s, 1, 0, &row));
    assert_false(sim_cache_row(s, 0, 30, &row));
    sim_destroy(s);
}

static int part_index(const char *name)
{
    for (int i = 0; i < SIM_FOOTPRINT_PARTS; i++)
        if (strcmp(sim_footprint_part_name(i), name) == 0)
            return i;
    fail_msg("no footprint part %s", name);
    return -1;
}

static double footprint_part(const char *text, const char *name)
{
    struct scenario sc;
    double part[SIM_FOOTPRINT_PARTS];
    load_or_fail(&sc, text, NULL, 0);
    sim_footprint(&sc, part);
    return part[part_index(name)];
}

/* The footprint's "clients" part is the think timers of a closed loop
 * with herds (sim_create allocates one 16-byte event handle per client
 * only then), so 100 clients with a herd: 1,600 bytes; without one: 0. */
static void footprint_counts_think_timers_only_with_herds(void **state)
{
    (void)state;
#define CLOSED "[load]\nmodel = closed\nclients = 100\nthink = exp(1s)\n[server]\nservice = exp(1ms)\n"
    assert_true(footprint_part(CLOSED, "clients") == 0.0);
    assert_true(footprint_part(CLOSED "[herd]\nat = 1s\n", "clients") == 1600.0);
#undef CLOSED
}

/* The time series have one bucket per started `bucket` of the run
 * (metrics: ceil(duration / bucket)): 10 s and 9.5 s in buckets of 1 s
 * both have 10, 1 s has 1, so the footprint's "time series" part of the
 * first two is equal and ten times the third's. */
static void footprint_counts_started_buckets(void **state)
{
    (void)state;
#define RUN_OF(d) "[run]\nduration = " d "\nbucket = 1s\n[load]\nrate = 1/s\n[server]\nservice = exp(1ms)\n"
    double ten = footprint_part(RUN_OF("10s"), "time series");
    double nine_and_a_half = footprint_part(RUN_OF("9500ms"), "time series");
    double one = footprint_part(RUN_OF("1s"), "time series");
#undef RUN_OF
    assert_true(one > 0);
    assert_true(ten == nine_and_a_half);
    assert_true(ten == 10 * one);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(hit_ratio_counts_from_the_warmup_instant),
        cmocka_unit_test(quiet_buckets_keep_their_entries),
        cmocka_unit_test(footprint_counts_think_timers_only_with_herds),
        cmocka_unit_test(footprint_counts_started_buckets),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
