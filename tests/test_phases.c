/*
 * phases.csv (issue 32, item 1; sim/model/phasewin.c): the run's numbers
 * before its first phase, during each phase and after the last, counted by
 * exact event time.
 *
 * The hand-checked case: uniform arrivals every 100 ms (0.1 s … 9.9 s),
 * each served in exactly 50 ms by one of 10 workers (never a queue), a 1 s
 * warm-up, and three phases given out of start order: `down` [6 s, 7 s)
 * answers every attempt with an error at once (2 attempts, no backoff),
 * `slow` [3 s, 5 s) serves in 200 ms, and `wide` [4 s, 6.5 s) changes
 * nothing but overlaps both. Each window's numbers are worked out in the
 * comment of hand_checked_windows. The storm claims run the built-in over
 * 20 seeds cut at 160 s (~0.15 s each).
 */
#include "rs_test.h"

#include <math.h>
#include <string.h>

#include "phasewin.h"

static const char hand[] = "[run]\nname = hand\nduration = 10s\nwarmup = 1s\nbucket = 1s\n"
                           "[load]\nmodel = open\nrate = 10/s\narrival = uniform\n"
                           "[server]\nworkers = 10\nservice = const(50ms)\n"
                           "[layer app]\nattempts = 2\ntimeout = 5s\nbackoff = none\n"
                           "[phase down]\nstart = 6s\nend = 7s\noutage = error\n"
                           "[phase slow]\nstart = 3s\nend = 5s\nslowdown = 4\n"
                           "[phase wide]\nstart = 4s\nend = 6500ms\nrate = x1\n";

/* The run's phases.csv through the writers' table, malloc'd; NULL when the
 * run has none. */
static char *phases_csv(const struct sim *s)
{
    struct summary o;
    output_summarise(s, 0.0, &o);
    for (size_t i = 0; i < output_nfiles(); i++) {
        const char *name = output_file_name(s, i);
        if (name == NULL || strcmp(name, "phases.csv") != 0)
            continue;
        FILE *f = tmpfile();
        assert_non_null(f);
        output_write_file(f, i, s, &o);
        long len = ftell(f);
        char *buf = malloc((size_t)len + 1);
        assert_non_null(buf);
        rewind(f);
        assert_int_equal(fread(buf, 1, (size_t)len, f), (size_t)len);
        buf[len] = '\0';
        fclose(f);
        return buf;
    }
    return NULL;
}

/*
 * baseline [1, 3): arrivals 1.0 … 2.9 (20), each ends 50 ms later, inside.
 * slow [3, 5): arrivals 3.0 … 4.9 (20: the one at its start counts); they
 *   take 200 ms, so 3.0 … 4.7 end inside (18); 4.8 ends at 5.0 exactly, out.
 *   goodput 18 / 2 s; p99 200 ms.
 * wide [4, 6.5): arrivals 4.0 … 6.4 (25); server arrivals 20 + 5 · 2 (the
 *   last five fail twice); ended: 3.8 … 4.9 slow (12, ends 4.0 … 5.1), 5.0
 *   … 5.9 fast (10), 6.0 … 6.4 exhausted at once (5): 27, 22 ok; goodput
 *   22 / 2.5 s; p99 200 ms.
 * down [6, 7): 10 arrivals, 20 attempts, 10 exhausted at latency 0.
 * after [7, 10): arrivals 7.0 … 9.9 (30), all ended inside, ok.
 * No window holds [5, 6): the rows need not cover the run.
 */
static void hand_checked_windows(void **state)
{
    (void)state;
    struct sim *s = run_text(hand, NULL, 0);
    char *csv = phases_csv(s);
    assert_non_null(csv);
    assert_string_equal(csv, "window,name,start_s,end_s,requests,server_arrivals,ended,ok,ok_share,p99_s,"
                             "amplification,goodput\n"
                             "baseline,baseline,1,3,20,20,20,20,1,0.05,1,10\n"
                             "phase,slow,3,5,20,20,18,18,1,0.2,1,9\n"
                             "phase,wide,4,6.5,25,30,27,22,0.814814815,0.2,1.2,8.8\n"
                             "phase,down,6,7,10,20,10,0,0,0,2,0\n"
                             "after,after,7,10,30,30,30,30,1,0.05,1,10\n");
    free(csv);
    sim_destroy(s);
}

/* A run with neither phase nor herd has no windows and no phases.csv. */
static void no_phase_no_file(void **state)
{
    (void)state;
    static const char text[] = "[run]\nduration = 5s\n[load]\nrate = 10/s\narrival = uniform\n"
                               "[server]\nworkers = 2\nservice = const(10ms)\n[layer app]\nattempts = 1\n";
    struct sim *s = run_text(text, NULL, 0);
    assert_int_equal(sim_phasewin(s)->n, 0);
    assert_null(phases_csv(s));
    sim_destroy(s);
}

/* A herd alone ends the baseline and starts `after` (its instant is in
 * `after`); a phase that outlasts the run is cut at the duration, leaving
 * `after` empty (no rate, no share, no p99); a phase before the warm-up's
 * end leaves the baseline empty. */
static void herd_and_clamped_bounds(void **state)
{
    (void)state;
    static const char base[] = "[run]\nduration = 10s\nwarmup = 2s\n[load]\nrate = 10/s\narrival = uniform\n"
                               "[server]\nworkers = 10\nservice = const(50ms)\n[layer app]\nattempts = 1\n";
    char text[sizeof base + 128];
    snprintf(text, sizeof text, "%s[herd]\nat = 5s\n", base);
    struct sim *s = run_text(text, NULL, 0);
    const struct phasewin *p = sim_phasewin(s);
    assert_int_equal(p->n, 2);
    assert_int_equal(p->w[0].start, 2 * RS_S);
    assert_int_equal(p->w[0].end, 5 * RS_S);
    assert_int_equal(p->w[0].requests, 30); /* 2.0 … 4.9 */
    assert_int_equal(p->w[1].start, 5 * RS_S);
    assert_int_equal(p->w[1].end, 10 * RS_S);
    assert_int_equal(p->w[1].requests, 50 + sim_scenario(s)->clients); /* 5.0 … 9.9, and the herd */
    sim_destroy(s);

    snprintf(text, sizeof text, "%s[phase late]\nstart = 1s\nend = 20s\nrate = x1\n", base);
    s = run_text(text, NULL, 0);
    char *csv = phases_csv(s);
    assert_non_null(csv);
    assert_string_equal(csv, "window,name,start_s,end_s,requests,server_arrivals,ended,ok,ok_share,p99_s,"
                             "amplification,goodput\n"
                             "baseline,baseline,2,2,0,0,0,0,,,,\n"
                             "phase,late,1,10,90,90,90,90,1,0.05,1,10\n"
                             "after,after,10,10,0,0,0,0,,,,\n");
    free(csv);
    sim_destroy(s);
}

/* With a drain, `after` still ends at the duration: arrivals every 100 ms
 * served in 500 ms; those of 9.5 s … 9.9 s end in the drain, in no window
 * (but in the summary), so `after` [3, 10) has 70 arrivals (3.0 … 9.9) and
 * 70 outcomes (of 2.5 … 9.4). */
static void drain_is_not_after(void **state)
{
    (void)state;
    static const char text[] = "[run]\nduration = 10s\ndrain = true\n[load]\nrate = 10/s\narrival = uniform\n"
                               "[server]\nworkers = 10\nservice = const(500ms)\n[layer app]\nattempts = 1\n"
                               "[phase p]\nstart = 2s\nend = 3s\nrate = x1\n";
    struct sim *s = run_text(text, NULL, 0);
    const struct phasewin_win *a = &sim_phasewin(s)->w[2];
    assert_true(sim_end(s) > 10 * RS_S);
    assert_int_equal(sim_in_flight(s), 0);
    assert_int_equal(a->end, 10 * RS_S);
    assert_int_equal(a->requests, 70);
    assert_int_equal(a->ended, 70);
    assert_int_equal(sim_metrics(s)->outcomes[OUT_OK], 99);
    sim_destroy(s);
}

/* The spike's own window tells what summary.csv dilutes: in storm, the
 * spike's ok share is far below the baseline's (< 0.2 of it) and below a
 * quarter of the run's; with three attempts the window after the spike
 * stays down (ok share < 5 %, amplification > 2.5: metastable), with one it
 * recovers (ok share > 50 % over the 90 s after it, amplification 1). */
static void storm_spike_and_after(void **state)
{
    (void)state;
    const char *const sides[2] = {"layer.app.attempts=3", "layer.app.attempts=1"};
    for (int k = 0; k < 2; k++) {
        unsigned pass = 0;
        for (unsigned seed = 1; seed <= CLAIM_SEEDS; seed++) {
            const char *extra[] = {"run.duration=160s", sides[k]};
            struct sim *s = run_builtin("storm", seed, extra, 2);
            const struct phasewin *p = sim_phasewin(s);
            assert_int_equal(p->n, 3);
            const struct phasewin_win *b = &p->w[0], *sp = &p->w[1], *a = &p->w[2];
            assert_string_equal(sp->name, "spike");
            double ok_b = (double)b->ok / (double)b->ended, ok_s = (double)sp->ok / (double)sp->ended;
            double ok_a = (double)a->ok / (double)a->ended;
            double amp_a = (double)a->server_arrivals / (double)a->requests;
            double ok_run = (double)sim_metrics(s)->outcomes[OUT_OK] / (double)sim_metrics(s)->requests;
            bool after_ok = k == 0 ? ok_a < 0.05 && amp_a > 2.5 : ok_a > 0.5 && amp_a == 1.0;
            pass += ok_s < 0.2 * ok_b && ok_s < 0.25 * ok_run && after_ok;
            sim_destroy(s);
        }
        claim_require_all("storm phases.csv", sides[k], pass);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(hand_checked_windows),
        cmocka_unit_test(no_phase_no_file),
        cmocka_unit_test(herd_and_clamped_bounds),
        cmocka_unit_test(drain_is_not_after),
        cmocka_unit_test(storm_spike_and_after),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
