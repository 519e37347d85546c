/*
 * Service graphs against theory: an API holding its worker while it calls an
 * M/M/4 database (local work + Erlang C sojourn), fan-out of k calls to an
 * idle exponential backend (H_k · mean), a bulkhead without a queue in front
 * of an infinite-server service (Erlang B), and the balancers (round-robin
 * exact, random's counts by a chi-square test, p2c's shorter longest queue).
 *
 * Tolerances as in test_queueing.c: R independent replications, the mean's
 * Student-t 99 % interval must contain the theoretical value and be
 * narrower than the stated share of it (2 % here), so that the test could
 * see a bias of that size.
 */
#include "rs_test.h"

#include <gsl/gsl_cdf.h>
#include <gsl/gsl_statistics_double.h>
#include <math.h>

#define R 10

static double erlang_c(unsigned c, double a)
{
    double sum = 0, term = 1;
    for (unsigned k = 0; k < c; k++) {
        sum += term;
        term *= a / (k + 1);
    }
    double top = term * c / (c - a);
    return top / (sum + top);
}

/* Erlang B by the stable recursion B(0) = 1, B(k) = a·B(k−1)/(k + a·B(k−1)). */
static double erlang_b(unsigned c, double a)
{
    double b = 1.0;
    for (unsigned k = 1; k <= c; k++)
        b = a * b / (k + a * b);
    return b;
}

static void check_ci(const char *what, const double *x, double theory, double max_rel_width)
{
    double mean = gsl_stats_mean(x, 1, R);
    double sd = gsl_stats_sd_m(x, 1, R, mean);
    double half = gsl_cdf_tdist_Pinv(1 - 0.005, R - 1) * sd / sqrt(R);
    print_message("%s: simulated %.6g ± %.3g (99%% CI), theory %.6g, error %.3f%%\n", what, mean,
                  half, theory, 100 * (mean - theory) / theory);
    if (fabs(mean - theory) > half)
        fail_msg("%s: theory %.6g outside the 99%% interval %.6g ± %.3g", what, theory, mean, half);
    if (half > max_rel_width * theory)
        fail_msg("%s: interval ± %.3g is wider than %.1f%% of %.6g: the test has no power", what,
                 half, 100 * max_rel_width, theory);
}

/* Mean latency of ok requests over R replications of text. */
static void mean_ok_latency(const char *text, double *w)
{
    struct scenario sc;
    load_or_fail(&sc, text, NULL, 0);
    for (uint32_t r = 0; r < R; r++) {
        struct sim *s = run_or_fail(&sc, r);
        const struct metrics *m = sim_metrics(s);
        assert_true(m->outcomes[OUT_OK] == m->requests - sim_in_flight(s));
        w[r] = metrics_mean_s(&m->lat_by[OUT_OK]);
        sim_destroy(s);
    }
}

/* The API does 2 ms of its own work, then calls the database and waits for
 * it holding its worker (it has plenty). The database is M/M/4 at
 * ρ = 0.8: W = C(4, 3.2)/(4μ − λ) + 1/μ, so the response is 2 ms + W. */
static void api_calls_mm4_database(void **state)
{
    (void)state;
    const char *text = "[run]\nduration = 410s\nwarmup = 10s\nbucket = 10s\n"
                       "[load]\nrate = 320/s\n"
                       "[service api]\nworkers = 100000\nservice = const(2ms)\ncalls = db\n"
                       "[service db]\nworkers = 4\nservice = exp(10ms)\n"
                       "[layer app]\nfrom = client\nto = api\n"
                       "[layer pool]\nfrom = api\nto = db\n";
    double w[R];
    mean_ok_latency(text, w);
    double theory = 0.002 + erlang_c(4, 3.2) / (400.0 - 320.0) + 0.010;
    check_ci("api + M/M/4 db", w, theory, 0.02);
}

/* k parallel calls to an idle exponential backend: the response is the
 * maximum of k exponentials, whose mean is H_k · mean. */
static void fanout_harmonic(void **state)
{
    (void)state;
    const char *text = "[run]\nduration = 210s\nwarmup = 10s\nbucket = 10s\n"
                       "[load]\nrate = 200/s\n"
                       "[service api]\nworkers = 100000\nservice = const(0)\ncalls = backend*5\n"
                       "[service backend]\nworkers = 100000\nservice = exp(10ms)\n"
                       "[layer app]\nto = api\n";
    double w[R];
    mean_ok_latency(text, w);
    double h5 = 1.0 + 1.0 / 2 + 1.0 / 3 + 1.0 / 4 + 1.0 / 5;
    check_ci("fan-out of 5: H_5 · 10 ms", w, h5 * 0.010, 0.02);
}

/* A bulkhead of c slots with no queue in front of a service with unlimited
 * workers: an attempt holds its slot for an exponential service time, so
 * the slots are an M/M/c/c loss system and the share of attempts refused
 * with `bulkhead` is Erlang B(c, λ/μ). */
static void bulkhead_erlang_b(void **state)
{
    (void)state;
    const char *text = "[run]\nduration = 210s\nwarmup = 10s\nbucket = 10s\n"
                       "[load]\nrate = 800/s\n"
                       "[service api]\nworkers = 100000\nservice = exp(10ms)\n"
                       "[layer app]\nto = api\nconcurrency = 10\n";
    struct scenario sc;
    load_or_fail(&sc, text, NULL, 0);
    double pb[R];
    for (uint32_t r = 0; r < R; r++) {
        struct sim *s = run_or_fail(&sc, r);
        const struct metrics *m = sim_metrics(s);
        pb[r] = (double)m->outcomes[OUT_FAILED] / (double)m->requests;
        assert_true(m->errors[CLS_BULKHEAD] >= m->outcomes[OUT_FAILED]);
        sim_destroy(s);
    }
    check_ci("bulkhead c=10 a=8: Erlang B", pb, erlang_b(10, 8.0), 0.02);
}

/* Arrivals at each replica of api over the run. */
static void replica_arrivals(const struct sim *s, unsigned n, double *out)
{
    for (unsigned i = 0; i < n; i++) {
        out[i] = 0;
        for (size_t b = 0; b < sim_metrics(s)->nbuckets; b++) {
            struct sim_service_row row;
            assert_true(sim_service_row(s, 0, i + 1, b, &row));
            out[i] += (double)row.arrivals;
        }
    }
}

static const char lb_text[] = "[run]\nduration = 100s\nbucket = 1s\n"
                              "[load]\nrate = 3000/s\n"
                              "[service api]\nreplicas = 4\nworkers = 8\nqueue = unbounded\n"
                              "service = exp(10ms)\n"
                              "[layer app]\nto = api\n";

static void round_robin_exact(void **state)
{
    (void)state;
    const char *set[] = {"service.api.balancer=round-robin"};
    struct scenario sc;
    load_or_fail(&sc, lb_text, set, 1);
    struct sim *s = run_or_fail(&sc, 0);
    double n[4];
    replica_arrivals(s, 4, n);
    for (unsigned i = 1; i < 4; i++)
        assert_true(fabs(n[i] - n[0]) <= 1.0);
    sim_destroy(s);
}

/* Random's counts: a chi-square test of uniformity (3 degrees of freedom)
 * in each of R replications at the 0.1 % level; a correct balancer fails
 * one of 10 with probability 1 %, and the seeds are fixed. */
static void random_chi_square(void **state)
{
    (void)state;
    struct scenario sc;
    load_or_fail(&sc, lb_text, NULL, 0);
    for (uint32_t r = 0; r < R; r++) {
        struct sim *s = run_or_fail(&sc, r);
        double n[4], total = 0, chi = 0;
        replica_arrivals(s, 4, n);
        for (unsigned i = 0; i < 4; i++)
            total += n[i];
        for (unsigned i = 0; i < 4; i++)
            chi += (n[i] - total / 4) * (n[i] - total / 4) / (total / 4);
        double p = gsl_cdf_chisq_Q(chi, 3);
        print_message("random balancer rep %u: chi2 %.2f, p %.3f\n", r, chi, p);
        assert_true(p > 0.001);
        sim_destroy(s);
    }
}

/* The mean over buckets of the longest replica queue (time-averaged). */
static double longest_queue(const char *balancer, uint32_t rep)
{
    char set[64];
    snprintf(set, sizeof set, "service.api.balancer=%s", balancer);
    const char *sets[] = {set};
    struct scenario sc;
    load_or_fail(&sc, lb_text, sets, 1);
    struct sim *s = run_or_fail(&sc, rep);
    double sum = 0;
    size_t nb = sim_metrics(s)->nbuckets;
    for (size_t b = 0; b < nb; b++) {
        double worst = 0;
        for (unsigned i = 1; i <= 4; i++) {
            struct sim_service_row row;
            assert_true(sim_service_row(s, 0, i, b, &row));
            if (row.queue_len > worst)
                worst = row.queue_len;
        }
        sum += worst;
    }
    sim_destroy(s);
    return sum / (double)nb;
}

/* At 94 % load, p2c keeps the longest replica queue far shorter than
 * random does, in every replication. */
static void p2c_shortens_longest_queue(void **state)
{
    (void)state;
    for (uint32_t r = 0; r < 5; r++) {
        double rnd = longest_queue("random", r), p2c = longest_queue("p2c", r);
        print_message("longest replica queue: random %.2f, p2c %.2f\n", rnd, p2c);
        assert_true(p2c < 0.5 * rnd);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(api_calls_mm4_database),
        cmocka_unit_test(fanout_harmonic),
        cmocka_unit_test(bulkhead_erlang_b),
        cmocka_unit_test(round_robin_exact),
        cmocka_unit_test(random_chi_square),
        cmocka_unit_test(p2c_shortens_longest_queue),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
