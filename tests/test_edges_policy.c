/*
 * Edges of the policy state machines and of the metrics' histograms: the
 * boundaries that the mechanical mutants (scripts/mutagen.py) showed no
 * other test pins. Each test drives the module directly with literal
 * inputs and states the rule its numbers follow.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <malloc.h>
#include <math.h>
#include <string.h>

#include "backoff.h"
#include "breaker.h"
#include "budget.h"
#include "metrics.h"

/* ---- latency histograms (metrics.c) ---- */

/* Adds v to an emptied histogram and returns the one bin it landed in. */
static size_t bin_of(struct lat_hist *h, rs_time v)
{
    metrics_lat_reset(h);
    metrics_lat_add(h, v);
    assert_true(h->lo_bin == h->hi_bin && h->h->bin[h->lo_bin] == 1.0);
    return h->lo_bin;
}

/* The bins are [0, 1 ns), then [r^(i−1), r^i) ns with r = 1.005 (metrics.c):
 * a latency equal to an edge opens the bin above it. 1 ns is in bin 1, not
 * bin 0; and where rounding made an edge a whole number of nanoseconds
 * (bin 6243 starts at exactly 33,155,645,240,901 ns, about 9.2 hours, and
 * the estimate from the logarithm says 6242), that latency is in the bin it
 * opens. Every whole-number edge is checked. */
static void latency_edges_open_their_bins(void **state)
{
    (void)state;
    struct lat_hist h;
    assert_int_equal(metrics_lat_init(&h), 0);
    assert_int_equal(bin_of(&h, 0), 0);
    assert_int_equal(bin_of(&h, 1), 1);
    assert_int_equal(bin_of(&h, 33155645240901), 6243);
    assert_int_equal(bin_of(&h, 33155645240900), 6242);
    size_t whole = 0;
    for (size_t i = 1; i < h.h->n; i++) {
        double e = h.h->range[i];
        if (e == floor(e)) {
            whole++;
            if (bin_of(&h, (rs_time)e) != i)
                fail_msg("a latency of %.0f ns (the lower edge of bin %zu) landed in bin %zu", e, i,
                         bin_of(&h, (rs_time)e));
        }
    }
    assert_true(whole > 100);
    metrics_lat_fini(&h);
}

/* The last of the 7,823 bins, [87,250,715,613,696,336 ns, 87,686,969,191,764,816
 * ns), starts past RS_TIME_LIMIT (1,000 days) and also holds every larger
 * value: values from its lower edge up to twice its upper edge, and
 * INT64_MAX, all land in it (the estimate from the logarithm is clamped to
 * it). A quantile inside it interpolates between its two edges: with one
 * value at each end of [lo, 2^62], the median is halfway through the bin,
 * 87,468,842.4 s. */
static void latencies_past_the_top_stay_in_the_last_bin(void **state)
{
    (void)state;
    struct lat_hist h;
    assert_int_equal(metrics_lat_init(&h), 0);
    size_t last = h.h->n - 1;
    assert_int_equal(h.h->n, 7823);
    const rs_time lo = 87250715613696336, hi = 87686969191764816;
    assert_true(h.h->range[last] == (double)lo && h.h->range[last + 1] == (double)hi);
    assert_int_equal(bin_of(&h, lo - 64), last - 1); /* the spacing of doubles here is 16 */
    for (int k = 0; k <= 1000; k++)
        assert_int_equal(bin_of(&h, lo + (rs_time)k * ((2 * hi - lo) / 1000)), last);
    assert_int_equal(bin_of(&h, INT64_MAX), last);
    metrics_lat_reset(&h);
    metrics_lat_add(&h, lo);
    metrics_lat_add(&h, (rs_time)1 << 62);
    assert_true(fabs(metrics_quantile(&h, 0.5) - 87468842.402730576) < 1e-3);
    metrics_lat_fini(&h);
}

/* metrics_lat_fini and metrics_fini give back what their init took: a
 * latency histogram is two arrays of 7,823 doubles (125 KB); after the fini
 * the heap in use is back within 4 KiB of where it was (glibc keeps a few
 * small freed blocks in its per-thread cache, counted as in use). */
static void metrics_fini_frees_what_init_took(void **state)
{
    (void)state;
    struct lat_hist h;
    size_t before = mallinfo2().uordblks;
    assert_int_equal(metrics_lat_init(&h), 0);
    assert_true(mallinfo2().uordblks > before + 120000);
    metrics_lat_fini(&h);
    assert_true(mallinfo2().uordblks < before + 4096);
    struct metrics m;
    char err[128];
    unsigned att[2] = {3, 2};
    assert_int_equal(metrics_init(&m, 10 * RS_S, RS_S, 2, att, err, sizeof err), 0);
    metrics_fini(&m);
    assert_true(mallinfo2().uordblks < before + 4096);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(latency_edges_open_their_bins),
        cmocka_unit_test(latencies_past_the_top_stay_in_the_last_bin),
        cmocka_unit_test(metrics_fini_frees_what_init_took),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
