/*
 * Validation against queueing theory: M/M/c mean response time (Erlang C),
 * M/M/c/K blocking (and Erlang B at K = c), and Little's law on a run's own
 * numbers.
 *
 * How the tolerance is set: each check runs R = 10 independent replications
 * (replication index r gives every RNG stream a different seed) after a
 * warm-up, takes the mean of the replication estimates and its Student-t
 * 99 % confidence interval (GSL), and requires (1) that the interval
 * contains the theoretical value and (2) that the interval is narrower than
 * a stated share of it, so the test has the power to see a bias of that
 * size. Seeds are fixed, so the outcome is reproducible.
 */
#include "rs_test.h"
#include "rs_theory.h"

#include <gsl/gsl_sf_gamma.h>
#include <math.h>

#define R 10
#define check_ci(what, x, theory, width) check_ci_n(what, x, R, theory, width)

/* Blocking probability of M/M/c/K (K = c + queue places). */
static double mmck_block(unsigned c, unsigned k, double a)
{
    double p[4096], sum = 0;
    p[0] = 1;
    for (unsigned n = 1; n <= k; n++)
        p[n] = p[n - 1] * a / (n <= c ? n : c);
    for (unsigned n = 0; n <= k; n++)
        sum += p[n];
    return p[k] / sum;
}

static const char mmc_text[] =
    "[run]\nduration = 410s\nwarmup = 10s\nbucket = 10s\n"
    "[load]\nrate = 900/s\n"
    "[server]\nworkers = 10\nservice = exp(10ms)\n"
    "[layer app]\nattempts = 1\n";

static void mmc_mean_response_time(void **state)
{
    (void)state;
    struct scenario sc;
    load_or_fail(&sc, mmc_text, NULL, 0);
    double w[R];
    for (uint32_t r = 0; r < R; r++) {
        struct sim *s = run_or_fail(&sc, r);
        const struct metrics *m = sim_metrics(s);
        assert_true(m->outcomes[OUT_EXHAUSTED] == 0 && m->outcomes[OUT_FAILED] == 0);
        w[r] = metrics_mean_s(&m->lat_by[OUT_OK]);
        sim_destroy(s);
    }
    /* c = 10, λ = 900/s, 1/μ = 10 ms: a = 9, W = C(10, 9)/(cμ − λ) + 1/μ = 16.687 ms */
    double theory = erlang_c(10, 9.0) / (1000.0 - 900.0) + 0.010;
    assert_true(fabs(theory - 0.016687) < 1e-6);
    check_ci("M/M/10 W", w, theory, 0.03);
}

static void blocking(const char *name, unsigned c, unsigned queue, double rate, double max_width)
{
    char text[512], label[64];
    snprintf(text, sizeof text,
             "[run]\nduration = 110s\nwarmup = 10s\nbucket = 10s\n[load]\nrate = %g/s\n"
             "[server]\nworkers = %u\nqueue = %u\nservice = exp(10ms)\n[layer app]\nattempts = 1\n",
             rate, c, queue);
    struct scenario sc;
    load_or_fail(&sc, text, NULL, 0);
    double pb[R];
    for (uint32_t r = 0; r < R; r++) {
        struct sim *s = run_or_fail(&sc, r);
        const struct metrics *m = sim_metrics(s);
        /* Every rejected request is `exhausted` with one attempt. */
        pb[r] = (double)m->outcomes[OUT_EXHAUSTED] / (double)m->requests;
        sim_destroy(s);
    }
    snprintf(label, sizeof label, "%s c=%u K=%u a=%g", name, c, c + queue, rate / 100.0);
    check_ci(label, pb, mmck_block(c, c + queue, rate / 100.0), max_width);
}

static void mmck_blocking(void **state)
{
    (void)state;
    blocking("M/M/c/K", 5, 5, 600, 0.03); /* a = 6 on 5 servers: blocking 0.197 */
}

static void erlang_b_blocking(void **state)
{
    (void)state;
    blocking("Erlang B", 10, 0, 900, 0.03); /* queue = 0: K = c */
}

/* Little's law on the run's own numbers: the time-average number of
 * requests in flight equals the arrival rate times the mean time in system.
 * It holds on every sample path up to the edges of the run; with 200 s of
 * run and latencies of tens of ms the edge terms are ~1e-4, so 0.5 % is a
 * tolerance a wrong level integration or latency clock cannot meet. */
static void littles_law(void **state)
{
    (void)state;
    const char *text =
        "[run]\nduration = 200s\nbucket = 1s\n[load]\nrate = 900/s\n"
        "[server]\nworkers = 10\nservice = lognormal(10ms, 2)\n[layer app]\nattempts = 1\n";
    struct scenario sc;
    load_or_fail(&sc, text, NULL, 0);
    struct sim *s = run_or_fail(&sc, 0);
    const struct metrics *m = sim_metrics(s);
    double area = 0;
    for (size_t i = 0; i < m->nbuckets; i++)
        area += m->b[i].area_inflight;
    double L = area / 1e9 / 200.0;
    double lambda = (double)m->requests / 200.0;
    double W = metrics_mean_s(&m->lat_all);
    print_message("Little: L = %.5f, lambda·W = %.5f\n", L, lambda * W);
    assert_true(fabs(L - lambda * W) < 0.005 * L);
    sim_destroy(s);
}

/* Closed loop: N clients thinking exp(Z), c workers serving exp(S), i.e. the
 * machine-repairman queue M/M/c//N. With p_n ∝ N!/(N−n)! · (S/Z)^n / (n! for
 * n ≤ c, else c!·c^(n−c)), throughput X = Σ p_n·min(n, c)/S and the response
 * time R = N/X − Z (Little's law on the whole loop). */
static void closed_loop_machine_repairman(void **state)
{
    (void)state;
    const unsigned N = 50, c = 2;
    const double Z = 1.0, S = 0.030;
    double p[64], sum = 0, x = 0;
    p[0] = 1;
    for (unsigned n = 1; n <= N; n++)
        p[n] = p[n - 1] * (double)(N - n + 1) * (S / Z) / (n <= c ? n : c);
    for (unsigned n = 0; n <= N; n++)
        sum += p[n];
    for (unsigned n = 0; n <= N; n++)
        x += p[n] / sum * (n < c ? n : c) / S;
    double theory_r = N / x - Z;
    const char *text = "[run]\nduration = 1010s\nwarmup = 10s\nbucket = 10s\n"
                       "[load]\nmodel = closed\nclients = 50\nthink = exp(1s)\n"
                       "[server]\nworkers = 2\nservice = exp(30ms)\n[layer app]\nattempts = 1\n";
    struct scenario sc;
    load_or_fail(&sc, text, NULL, 0);
    double r[R];
    for (uint32_t i = 0; i < R; i++) {
        struct sim *s = run_or_fail(&sc, i);
        r[i] = metrics_mean_s(&sim_metrics(s)->lat_by[OUT_OK]);
        sim_destroy(s);
    }
    check_ci("M/M/2//50 R", r, theory_r, 0.03);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(mmc_mean_response_time),
        cmocka_unit_test(mmck_blocking),
        cmocka_unit_test(erlang_b_blocking),
        cmocka_unit_test(littles_law),
        cmocka_unit_test(closed_loop_machine_repairman),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
