/*
 * Experiments: grid expansion, and the coverage of the 95 % confidence
 * intervals that sweeps and replications report.
 */
#define _POSIX_C_SOURCE 200809L

#include "rs_test.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "experiment.h"

static void grids(void **state)
{
    (void)state;
    char key[128], v[64][128], err[512];
    assert_int_equal(exp_expand_axis("layer.app.attempts=1..5", key, sizeof key, v, 64, err, sizeof err), 5);
    assert_string_equal(key, "layer.app.attempts");
    assert_string_equal(v[4], "5");
    assert_int_equal(exp_expand_axis("layer.app.timeout=50ms..800ms*2", key, sizeof key, v, 64, err, sizeof err), 5);
    assert_string_equal(v[0], "50ms");
    assert_string_equal(v[4], "800ms");
    assert_int_equal(exp_expand_axis("server.error_503=0.1..0.5+0.1", key, sizeof key, v, 64, err, sizeof err), 5);
    /* sums of 0.1 overshoot: 0.1 + 0.1 + 0.1 = 0.30000000000000004 is still the 0.3 asked for */
    assert_int_equal(exp_expand_axis("server.error_503=0.1..0.3+0.1", key, sizeof key, v, 64, err, sizeof err), 3);
    assert_string_equal(v[2], "0.3");
    assert_int_equal(exp_expand_axis("server.error_503=0.1..0.9*3", key, sizeof key, v, 64, err, sizeof err), 3);
    assert_int_equal(exp_expand_axis("layer.app.backoff=none,full", key, sizeof key, v, 64, err, sizeof err), 2);
    assert_string_equal(v[1], "full");
    static const char *bad[] = {"layer.app.attempts=1..", "x=5..1", "x=1..5*1", "x=a..b", "x=",
                                "=1", "x=1,,2", "x", "x=1ms..2*2", "x=0..8*2", "x=1..5+0"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        err[0] = '\0';
        if (exp_expand_axis(bad[i], key, sizeof key, v, 64, err, sizeof err) != 0)
            fail_msg("'%s' was accepted", bad[i]);
        assert_true(strlen(err) > 10);
    }
}

/* Ranges of rates and durations: A, B and an additive step in one unit,
 * the values carrying it; mismatched units refused, naming both. */
static void grids_with_units(void **state)
{
    (void)state;
    char key[128], v[64][128], err[512];
    assert_int_equal(exp_expand_axis("load.rate=600/s..1000/s+100/s", key, sizeof key, v, 64, err, sizeof err), 5);
    assert_string_equal(key, "load.rate");
    assert_string_equal(v[0], "600/s");
    assert_string_equal(v[1], "700/s");
    assert_string_equal(v[4], "1000/s");
    assert_int_equal(exp_expand_axis("load.rate=600/s..1000/s+100", key, sizeof key, v, 64, err, sizeof err), 5);
    assert_string_equal(v[3], "900/s");
    assert_int_equal(exp_expand_axis("load.rate=30/m..120/m*2", key, sizeof key, v, 64, err, sizeof err), 3);
    assert_string_equal(v[2], "120/m");
    assert_int_equal(exp_expand_axis("load.rate=5/s..7/s", key, sizeof key, v, 64, err, sizeof err), 3);
    assert_string_equal(v[2], "7/s");
    assert_int_equal(exp_expand_axis("layer.app.timeout=100ms..300ms+100ms", key, sizeof key, v, 64, err, sizeof err), 3);
    assert_string_equal(v[1], "200ms");
    assert_int_equal(exp_expand_axis("run.duration=1s..2s+0.5s", key, sizeof key, v, 64, err, sizeof err), 3);
    assert_string_equal(v[1], "1.5s");
    static const struct {
        const char *text, *msg;
    } bad[] = {
        {"load.rate=600/s..1/ms", "--grid load.rate=600/s..1/ms: A is in '/s' and B in '/ms': write both in the same unit (e.g. 600/s..1000/s+100/s)"},
        {"load.rate=600/s..1000", "--grid load.rate=600/s..1000: A is in '/s' and B in 'no unit': write both in the same unit (e.g. 600/s..1000/s+100/s)"},
        {"load.rate=600/s..1000/s+100/m", "--grid load.rate=600/s..1000/s+100/m: the step after '+' must be a plain number or in A's unit '/s'"},
        {"load.rate=600/s..1000/s*2/s", "--grid load.rate=600/s..1000/s*2/s: the step after '*' must be a plain number"},
        {"load.rate=600/x..1000/x", "--grid load.rate=600/x..1000/x: a range is A..B, A..B+STEP or A..B*FACTOR with numbers in the same unit (e.g. 1..5, 50ms..800ms*2, 600/s..1000/s+100/s)"},
        {"layer.app.timeout=1s..2ms", "--grid layer.app.timeout=1s..2ms: A is in 's' and B in 'ms': write both in the same unit (e.g. 100ms..800ms*2)"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        err[0] = '\0';
        if (exp_expand_axis(bad[i].text, key, sizeof key, v, 64, err, sizeof err) != 0)
            fail_msg("'%s' was accepted", bad[i].text);
        assert_string_equal(err, bad[i].msg);
    }
}

/* M/M/1 at ρ = 0.5 (λ = 50/s, 1/μ = 10 ms): W = 1/(μ − λ) = 20 ms. 200
 * independent experiments (seeds 1..200) of 5 replications of 40 s each;
 * the 95 % Student-t interval of the mean response time should cover
 * 20 ms in about 95 % of them. With 200 experiments the count's standard
 * deviation is √(200·0.05·0.95) ≈ 3.1, so we accept 176..200 covered
 * (−3.9 sd: a correct interval fails this less than once in 10,000),
 * while an interval of half the right width covers only about 75 %. */
static void intervals_cover_the_truth(void **state)
{
    (void)state;
    char dir[] = "/tmp/rs-exp-XXXXXX";
    assert_non_null(mkdtemp(dir));
    /* the scenario in a private directory too: runs of this test at once
     * (mutation runs) must not share a file */
    char sdir[] = "/tmp/rs-mm1-XXXXXX", ini[64];
    assert_non_null(mkdtemp(sdir));
    snprintf(ini, sizeof ini, "%s/rs-mm1.ini", sdir);
    FILE *f = fopen(ini, "w");
    fputs("[run]\nduration = 42s\nwarmup = 2s\nbucket = 42s\n[load]\nrate = 50/s\n"
          "[server]\nworkers = 1\nservice = exp(10ms)\n", f);
    fclose(f);
    int covered = 0, total = 200;
    for (int e = 1; e <= total; e++) {
        char seed[64];
        snprintf(seed, sizeof seed, "run.seed=%d", e);
        const char *sets[] = {seed};
        struct exp_spec spec = {.scenario = ini, .sets = sets, .nsets = 1, .reps = 5,
                                .threads = 2, .dir = dir};
        struct scenario_diag d = {0};
        struct exp_result r;
        char err[512];
        assert_int_equal(exp_run(&spec, &d, &r, err, sizeof err), 0);
        size_t m;
        for (m = 0; m < r.nmetrics; m++)
            if (strcmp(r.metric[m], "ok_lat_mean") == 0)
                break;
        assert_true(m < r.nmetrics);
        if (fabs(r.mean[m] - 0.020) <= r.hw[m])
            covered++;
        exp_result_fini(&r);
        scenario_diag_fini(&d);
    }
    print_message("95%% intervals covering W = 20 ms: %d of %d\n", covered, total);
    assert_true(covered >= 176);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s %s", dir, sdir);
    assert_int_equal(system(cmd), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(grids),
        cmocka_unit_test(grids_with_units),
        cmocka_unit_test(intervals_cover_the_truth),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
