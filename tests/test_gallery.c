/*
 * The gallery: every scenario in scenarios/ shows the phenomenon it is
 * there for, asserted in numbers, each threshold with its reason; and the
 * AWS backoff study's orderings, reproduced with the occ model.
 */
#include "rs_test.h"

#include <math.h>
#include <string.h>

static struct sim *run_named(const char *name, const char *const *sets, size_t nsets, uint32_t rep)
{
    struct scenario sc;
    const char *text = scenario_builtin_text(name);
    assert_non_null(text);
    load_or_fail(&sc, text, sets, nsets);
    return run_or_fail(&sc, rep);
}

static struct summary summary_of(const char *name, const char *const *sets, size_t nsets)
{
    struct sim *s = run_named(name, sets, nsets, 0);
    struct summary o;
    output_summarise(s, 0, &o);
    sim_destroy(s);
    return o;
}

/* Peak over mean of the server's arrivals per 10 ms bucket from 30.1 s
 * (after the herd's own instant) to 45 s: the waves of synchronised
 * retries. */
static double wave_ratio(const char *const *sets, size_t nsets)
{
    struct sim *s = run_named("herd", sets, nsets, 0);
    const struct metrics *m = sim_metrics(s);
    double peak = 0, sum = 0, n = 0;
    for (size_t i = 3010; i < 4500; i++) {
        double a = (double)m->b[i].server_arrivals;
        peak = a > peak ? a : peak;
        sum += a;
        n++;
    }
    sim_destroy(s);
    return peak / (sum / n);
}

/* herd: exponential backoff without jitter sends the 1,000 clients back in
 * waves; full jitter spreads them. A bucket of the exponential variant
 * holds hundreds of times the mean (every client at once); with jitter the
 * peak is within a few tens of the mean. */
static void herd_waves_and_jitter(void **state)
{
    (void)state;
    double expo = wave_ratio(NULL, 0);
    const char *full[] = {"layer.app.backoff=full"};
    double jit = wave_ratio(full, 1);
    print_message("herd: peak/mean of arrivals per 10 ms: exponential %.0f, full jitter %.0f\n",
                  expo, jit);
    assert_true(expo > 100);
    assert_true(jit < expo / 4);
}

/* layers-27 and layers-64: during the outage every request that started in
 * it makes exactly 27 (64) attempts at the server. */
static void layered_amplification(void **state)
{
    (void)state;
    struct {
        const char *name;
        unsigned expect;
    } cases[] = {{"layers-27", 27}, {"layers-64", 64}};
    for (size_t i = 0; i < 2; i++) {
        struct sim *s = run_named(cases[i].name, NULL, 0, 0);
        const struct metrics *m = sim_metrics(s);
        size_t server = m->nlayers;
        assert_true(m->att_max[server] == cases[i].expect);
        /* everything that ended exhausted went through all the attempts */
        assert_true(gsl_histogram_get(m->att[server], cases[i].expect) ==
                    (double)m->outcomes[OUT_EXHAUSTED]);
        assert_true(m->outcomes[OUT_EXHAUSTED] > 1000);
        sim_destroy(s);
    }
}

/* collapse: without backoff goodput never comes back after the spike; with
 * full jitter it does, within seconds. */
static void collapse_and_recovery(void **state)
{
    (void)state;
    struct summary none = summary_of("collapse", NULL, 0);
    const char *full[] = {"layer.app.backoff=full"};
    struct summary jit = summary_of("collapse", full, 1);
    print_message("collapse: ok %.2f without backoff, %.2f with full jitter\n",
                  (double)none.outcomes[OUT_OK] / (double)none.requests,
                  (double)jit.outcomes[OUT_OK] / (double)jit.requests);
    assert_int_equal(none.recovered, 0);
    assert_int_equal(jit.recovered, 1);
    assert_true(jit.recovery_s < 30);
}

/* collapse-ramp: a slow ramp to 80/s keeps the service past its timeout
 * for minutes; neither immediate retries nor backoff with jitter bring it
 * back once the load is down again. */
static void collapse_ramp_defeats_both(void **state)
{
    (void)state;
    struct summary none = summary_of("collapse-ramp", (const char *const[]){"layer.app.backoff=none"}, 1);
    struct summary full = summary_of("collapse-ramp", NULL, 0);
    assert_int_equal(none.recovered, 0);
    assert_int_equal(full.recovered, 0);
    assert_true((double)full.outcomes[OUT_OK] / (double)full.requests < 0.5);
}

/* omission: with a 15 ms timeout nearly everything times out (the queue
 * runs away); waiting clients see every request through. */
static void omission_runaway(void **state)
{
    (void)state;
    struct summary retry = summary_of("omission", NULL, 0);
    const char *wait[] = {"layer.app.timeout=none"};
    struct summary patient = summary_of("omission", wait, 1);
    double bad = (double)retry.outcomes[OUT_OK] / (double)retry.requests;
    double good = (double)patient.outcomes[OUT_OK] / (double)patient.requests;
    print_message("omission: ok %.3f with 15 ms timeouts, %.3f without\n", bad, good);
    assert_true(bad < 0.1);
    assert_true(good > 0.999);
    assert_true(retry.amplification > 3.5);
}

/* orbit: after the surge the queue stays full with retries; without retries
 * the server recovers. */
static void orbit_metastable(void **state)
{
    (void)state;
    struct summary with = summary_of("orbit", NULL, 0);
    const char *one[] = {"layer.app.attempts=1"};
    struct summary without = summary_of("orbit", one, 1);
    assert_int_equal(with.recovered, 0);
    assert_int_equal(without.recovered, 1);
}

/* The AWS study (mean over 10 replications, |N(10 ms, 2 ms)| messages,
 * base 5 ms, cap 2 s), for N = 50 and 100: plain exponential is the
 * slowest by far; full jitter makes fewer than half the calls of plain
 * exponential at N = 100; equal jitter takes longer than full jitter; no
 * backoff finishes fastest but makes the most calls. */
static void aws_study_orderings(void **state)
{
    (void)state;
    static const char *const kinds[] = {"none", "exponential", "equal", "full", "decorrelated"};
    enum { NONE, EXPO, EQUAL, FULL, DECORR };
    const unsigned ns[] = {50, 100};
    for (size_t i = 0; i < 2; i++) {
        double calls[5] = {0}, done[5] = {0};
        for (size_t k = 0; k < 5; k++) {
            char kb[64], cl[64];
            snprintf(kb, sizeof kb, "layer.app.backoff=%s", kinds[k]);
            snprintf(cl, sizeof cl, "load.clients=%u", ns[i]);
            const char *sets[] = {kb, cl};
            for (uint32_t r = 0; r < 10; r++) {
                struct sim *s = run_named("aws-occ", sets, 2, r);
                const struct metrics *m = sim_metrics(s);
                assert_true(m->outcomes[OUT_OK] == ns[i]); /* everyone finished */
                calls[k] += (double)m->server_arrivals / 10;
                done[k] += units_seconds(m->lat_all.max) / 10;
                sim_destroy(s);
            }
        }
        print_message("N=%u calls: none %.0f expo %.0f equal %.0f full %.0f decorr %.0f\n", ns[i],
                      calls[NONE], calls[EXPO], calls[EQUAL], calls[FULL], calls[DECORR]);
        print_message("N=%u done (s): none %.2f expo %.2f equal %.2f full %.2f decorr %.2f\n",
                      ns[i], done[NONE], done[EXPO], done[EQUAL], done[FULL], done[DECORR]);
        for (size_t k = 0; k < 5; k++) {
            if (k != EXPO)
                assert_true(done[EXPO] > 3 * done[k]); /* slowest by far */
            if (k != NONE) {
                assert_true(done[NONE] < done[k]);   /* fastest... */
                assert_true(calls[NONE] > calls[k]); /* ...but the most calls */
            }
        }
        assert_true(done[EQUAL] > done[FULL]);
        if (ns[i] == 100)
            assert_true(calls[FULL] < calls[EXPO] / 2);
    }
}

/* The study's numbering, by hand: two clients, 10 ms each way. Both read
 * (back at 20 ms) and write (back at 40 ms); one wins, the other waits
 * its first backoff, reads and writes again: done at 80 ms + the wait.
 * `exponential` waits min(cap, base·2^k) with k = 1, 200 ms for a 100 ms
 * base (done at 280 ms), where `constant` waits the base (180 ms). */
static void occ_exponential_uses_the_study_numbering(void **state)
{
    (void)state;
    const char *kinds[] = {"exponential", "constant"};
    const rs_time done[] = {280 * RS_MS, 180 * RS_MS};
    for (int i = 0; i < 2; i++) {
        char kb[64];
        snprintf(kb, sizeof kb, "layer.app.backoff=%s", kinds[i]);
        const char *sets[] = {kb, "load.clients=2", "layer.app.base=100ms",
                              "layer.app.request_latency=const(10ms)",
                              "layer.app.response_latency=const(10ms)"};
        struct sim *s = run_named("aws-occ", sets, 5, 0);
        const struct metrics *m = sim_metrics(s);
        assert_true(m->outcomes[OUT_OK] == 2 && m->server_arrivals == 3 && m->errors[CLS_409] == 1);
        if (m->lat_all.max != done[i])
            fail_msg("%s: the loser done at %.3f s, the study's numbering %.3f s", kinds[i],
                     units_seconds(m->lat_all.max), units_seconds(done[i]));
        sim_destroy(s);
    }
}

/* The scenarios of the semantics and budget issues are in test_semantics
 * and test_resilience; here: every built-in loads and runs. */
static void every_builtin_runs(void **state)
{
    (void)state;
    for (const struct scenario_builtin *b = scenario_builtins; b->name; b++) {
        const char *shorter[] = {"run.duration=20s"};
        struct scenario sc;
        load_or_fail(&sc, b->text, NULL, 0);
        bool cut = sc.duration > 20 * RS_S && sc.nphases == 0 && sc.nherds == 0;
        struct sim *s = run_named(b->name, shorter, cut ? 1 : 0, 0);
        sim_destroy(s);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(herd_waves_and_jitter),  cmocka_unit_test(layered_amplification),
        cmocka_unit_test(collapse_and_recovery),  cmocka_unit_test(collapse_ramp_defeats_both),
        cmocka_unit_test(omission_runaway),
        cmocka_unit_test(orbit_metastable),       cmocka_unit_test(aws_study_orderings),
        cmocka_unit_test(occ_exponential_uses_the_study_numbering),
        cmocka_unit_test(every_builtin_runs),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
