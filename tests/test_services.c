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
#include "rs_theory.h"

#include <gsl/gsl_rng.h>
#include <math.h>

#include "rng.h"

#define R 10
#define check_ci(what, x, theory, width) check_ci_n(what, x, R, theory, width)

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
 * in each of R replications at the 0.1 % level (a correct balancer fails
 * one of 10 with probability 1 %, and the seeds are fixed); and the sum
 * over the replications (30 degrees of freedom) must not be too small
 * either, at the same level: counts as even as round-robin's are not
 * random. */
static void random_chi_square(void **state)
{
    (void)state;
    struct scenario sc;
    load_or_fail(&sc, lb_text, NULL, 0);
    double chi_sum = 0;
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
        chi_sum += chi;
        sim_destroy(s);
    }
    print_message("sum of chi2 %.2f, lower tail %.3f\n", chi_sum, gsl_cdf_chisq_P(chi_sum, 3 * R));
    assert_true(gsl_cdf_chisq_P(chi_sum, 3 * R) > 0.001);
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

/* p2c compares two distinct replicas. With two replicas of one worker and
 * no queue, a request every 6.67 ms and 10 ms of work, the replica that
 * served the request before last is always free, and p2c, comparing both,
 * always picks it: nothing is refused. Random picks the busy one half the
 * time; so would p2c if its two picks could be the same replica. */
static void p2c_picks_two_distinct_replicas(void **state)
{
    (void)state;
    const char *text = "[run]\nduration = 10s\n[load]\narrival = uniform\nrate = 150/s\n"
                       "[server]\nworkers = 1\nqueue = 0\nservice = const(10ms)\nreplicas = 2\n"
                       "balancer = p2c\n[layer app]\nattempts = 1\n";
    struct sim *s = run_text(text, NULL, 0);
    assert_true(sim_metrics(s)->requests > 1400 && sim_metrics(s)->rejected == 0);
    sim_destroy(s);
    const char *rnd[] = {"server.balancer=random"};
    s = run_text(text, rnd, 1);
    assert_true(sim_metrics(s)->rejected > sim_metrics(s)->requests / 4);
    sim_destroy(s);
}

/* ---- exact semantics ---- */


/* Errors of class cls over the run. */
static uint64_t errors(const struct sim *s, enum errclass cls) { return sim_metrics(s)->errors[cls]; }

/* A dependency's failure reaches the client as the mapped class: db refuses
 * (conn) -> the API answers 503; db too slow for the API's timeout -> 504;
 * a business answer passes through. No layer on api -> db: a direct call. */
static void dependency_failures_are_mapped(void **state)
{
    (void)state;
    const char *text = "[run]\nduration = 10s\n[load]\nrate = 100/s\n"
                       "[service api]\nworkers = 1000\nservice = const(1ms)\ncalls = db\n"
                       "[service db]\nworkers = 1000\nservice = const(5ms)\n"
                       "[phase down]\nstart = 0s\nend = 10s\ntarget = db\noutage = refuse\n"
                       "[layer app]\nto = api\nretry_on = none\n";
    struct sim *s = run_text(text, NULL, 0);
    assert_true(errors(s, CLS_503) > 900 && errors(s, CLS_CONN) == 0);
    assert_int_equal(sim_metrics(s)->outcomes[OUT_OK], 0);
    sim_destroy(s);
    const char *slow[] = {"phase.down.outage=none", "phase.down.slowdown=100",
                          "layer.pool.from=api", "layer.pool.to=db", "layer.pool.timeout=100ms"};
    s = run_text(text, slow, 5);
    assert_true(errors(s, CLS_504) > 900 && errors(s, CLS_TIMEOUT) > 900);
    sim_destroy(s);
    const char *business[] = {"phase.down.outage=none", "phase.down.slowdown=2",
                              "service.db.business=1"};
    s = run_text(text, business, 3);
    assert_int_equal(sim_metrics(s)->outcomes[OUT_BUSINESS], sim_metrics(s)->requests - sim_in_flight(s));
    sim_destroy(s);
}

/* service_after adds its time after the call; the worker is held, not
 * working, while the call is out: api's working level is its own 3 ms per
 * request, its busy level 3 ms + the call's 10 ms. */
static void held_versus_working(void **state)
{
    (void)state;
    const char *text = "[run]\nduration = 100s\n[load]\nrate = 100/s\narrival = uniform\n"
                       "[service api]\nworkers = 100\nservice = const(1ms)\ncalls = db\n"
                       "service_after = const(2ms)\n"
                       "[service db]\nworkers = 100\nservice = const(10ms)\n"
                       "[layer app]\nto = api\n";
    struct sim *s = run_text(text, NULL, 0);
    struct sim_service_row r;
    sim_service_totals(s, 0, &r);
    print_message("api busy %.4f working %.4f\n", r.busy, r.working);
    assert_true(fabs(r.working - 0.3) < 0.003 && fabs(r.busy - 1.3) < 0.013);
    assert_int_equal(r.wasted, 0); /* nobody gives up: no execution is wasted */
    sim_service_totals(s, 1, &r);
    assert_int_equal(r.wasted, 0);
    assert_true(fabs(metrics_mean_s(&sim_metrics(s)->lat_all) - 0.013) < 1e-6);
    sim_destroy(s);
}

/* A bulkhead's queue: with 1 slot, an unbounded queue and no wait limit,
 * nothing is refused and attempts are served one at a time (an M/D/1 at
 * the layer); with concurrency_wait shorter than the wait, the late ones
 * end `bulkhead`; a deadline propagated through the API drops work at the
 * database. */
static void bulkhead_queue_and_wait(void **state)
{
    (void)state;
    const char *text = "[run]\nduration = 20s\n[load]\nrate = 50/s\n"
                       "[service api]\nworkers = 1000\nservice = exp(10ms)\n"
                       "[layer app]\nto = api\nconcurrency = 1\nconcurrency_queue = unbounded\n";
    struct sim *s = run_text(text, NULL, 0);
    assert_int_equal(errors(s, CLS_BULKHEAD), 0);
    struct sim_service_row r;
    sim_service_totals(s, 0, &r);
    assert_true(r.busy <= 1.0 + 1e-9); /* never two at once */
    sim_destroy(s);
    const char *wait[] = {"layer.app.concurrency_wait=5ms", "load.rate=90/s"};
    s = run_text(text, wait, 2);
    assert_true(errors(s, CLS_BULKHEAD) > 100);
    assert_int_equal(errors(s, CLS_BULKHEAD), sim_metrics(s)->outcomes[OUT_FAILED]);
    sim_destroy(s);
}

/* A bulkhead's waiters, exactly. Requests at 100, 200 and 300 ms (uniform
 * 10/s, none after 350 ms) meet a pool of one slot with an unbounded queue
 * and no wait limit, in front of a 1 s service. A freed slot goes to the
 * longest waiter: the first holds the slot 0.1-1.1 s, the second 1.1-2.1 s
 * and the third 2.1-3.1 s, latencies 1.0, 1.9 and 2.8 s (the newest first
 * would give the second 2.9 s). */
static void bulkhead_slot_goes_to_the_longest_waiter(void **state)
{
    (void)state;
    const char *text = "[run]\nduration = 10s\n[load]\narrival = uniform\nrate = 10/s\n"
                       "[phase quiet]\nstart = 350ms\nend = 10s\nrate = x0\n"
                       "[service api]\nworkers = 10\nservice = const(1s)\n"
                       "[layer pool]\nto = api\nconcurrency = 1\nconcurrency_queue = unbounded\n";
    struct sim *s = run_text(text, NULL, 0);
    const struct metrics *m = sim_metrics(s);
    assert_int_equal(m->requests, 3);
    assert_int_equal(m->outcomes[OUT_OK], 3);
    assert_true(m->lat_all.min == 1000 * RS_MS && m->lat_all.max == 2800 * RS_MS);
    assert_true(fabs(metrics_mean_s(&m->lat_all) - 1.9) < 1e-9);
    sim_destroy(s);
}

/* An attempt waiting for a bulkhead slot never waits past its call's
 * deadline, even where concurrency_wait would let it (none here). The
 * deadline is app's 500 ms, propagated to the pool below it. The request
 * at 100 ms crosses app's hop during a 200 ms latency phase and reaches
 * the pool at 300 ms, deadline 600 ms; the one at 200 ms crosses at once
 * and holds the only slot until its own deadline, 700 ms (the service
 * takes 1 s). The waiter leaves the queue at 600 ms, unsent: one attempt
 * reaches the service. Waiting on to 700 ms, it would take the freed slot
 * and be sent after its deadline, a second. */
static void bulkhead_wait_ends_at_the_deadline(void **state)
{
    (void)state;
    const char *text = "[run]\nduration = 10s\n[load]\narrival = uniform\nrate = 10/s\n"
                       "[phase quiet]\nstart = 250ms\nend = 10s\nrate = x0\n"
                       "[phase slow]\nstart = 0\nend = 150ms\ntarget = app\nlatency = const(200ms)\n"
                       "[service api]\nworkers = 10\nservice = const(1s)\n"
                       "[layer app]\nto = api\ndeadline = 500ms\npropagate_deadline = true\n"
                       "[layer pool]\nto = api\nconcurrency = 1\nconcurrency_queue = unbounded\n";
    struct sim *s = run_text(text, NULL, 0);
    const struct metrics *m = sim_metrics(s);
    assert_int_equal(m->requests, 2);
    assert_int_equal(m->outcomes[OUT_DEADLINE], 2);
    assert_true(m->lat_all.min == 500 * RS_MS && m->lat_all.max == 500 * RS_MS);
    assert_int_equal(m->server_arrivals, 1);
    assert_int_equal(errors(s, CLS_BULKHEAD), 0);
    sim_destroy(s);
}

/* A hop phase: latency = const(50ms) on the client's layer adds 100 ms per
 * attempt (each way); loss = 1 is a partition: every attempt times out. */
static void hop_phases(void **state)
{
    (void)state;
    const char *text = "[run]\nduration = 10s\n[load]\nrate = 100/s\n"
                       "[service api]\nservice = const(1ms)\nworkers = 100\n"
                       "[phase slow-net]\nstart = 0s\nend = 10s\ntarget = app\nlatency = const(50ms)\n"
                       "[layer app]\nto = api\ntimeout = 1s\n";
    struct sim *s = run_text(text, NULL, 0);
    assert_true(fabs(metrics_mean_s(&sim_metrics(s)->lat_all) - 0.101) < 1e-6);
    sim_destroy(s);
    const char *cut[] = {"phase.slow-net.latency=none", "phase.slow-net.loss=1"};
    s = run_text(text, cut, 2);
    assert_int_equal(sim_metrics(s)->outcomes[OUT_OK], 0);
    assert_true(errors(s, CLS_TIMEOUT) > 800);
    sim_destroy(s);
}

/* A phase aimed at one replica changes only that replica. */
static void replica_target(void **state)
{
    (void)state;
    const char *text = "[run]\nduration = 10s\n[load]\nrate = 400/s\n"
                       "[service api]\nreplicas = 2\nbalancer = round-robin\nworkers = 100\n"
                       "service = const(1ms)\n"
                       "[phase down]\nstart = 0s\nend = 10s\ntarget = api#2\noutage = refuse\n"
                       "[layer app]\nto = api\nretry_on = none\n";
    struct sim *s = run_text(text, NULL, 0);
    struct sim_service_row a = {0}, b = {0}, r;
    for (size_t k = 0; k < sim_metrics(s)->nbuckets; k++) {
        sim_service_row(s, 0, 1, k, &r);
        a.started += r.started;
        sim_service_row(s, 0, 2, k, &r);
        b.started += r.started;
        b.arrivals += r.arrivals;
    }
    assert_true(a.started > 1900 && b.started == 0 && b.arrivals > 1900);
    assert_int_equal(errors(s, CLS_CONN), b.arrivals);
    sim_destroy(s);
}

/* An attempt that reaches a hung replica after its caller gave up (a slow
 * hop, a short timeout) is not counted as outstanding: after the hang the
 * two replicas share the load again. */
static void late_attempts_to_a_hung_replica(void **state)
{
    (void)state;
    const char *text = "[run]\nduration = 30s\n[load]\nrate = 200/s\n"
                       "[phase hang]\nstart = 5s\nend = 10s\ntarget = db#1\noutage = hang\n"
                       "[service api]\nworkers = 1000\nservice = const(0.5ms)\ncalls = db\n"
                       "[service db]\nreplicas = 2\nbalancer = least-outstanding\nworkers = 50\n"
                       "service = exp(1ms)\n"
                       "[layer client]\nto = api\ntimeout = 2s\n"
                       "[layer api-db]\nfrom = api\nto = db\nattempts = 3\ntimeout = 10ms\n"
                       "request_latency = const(50ms)\n";
    struct sim *s = run_text(text, NULL, 0);
    struct sim_service_row r;
    double n[2] = {0, 0};
    for (size_t b = 12; b < 30; b++)
        for (unsigned i = 0; i < 2; i++) {
            assert_true(sim_service_row(s, 1, i + 1, b, &r));
            n[i] += (double)r.arrivals;
        }
    print_message("after the hang: db#1 %.0f, db#2 %.0f arrivals\n", n[0], n[1]);
    assert_true(n[0] > 0.4 * (n[0] + n[1]));
    sim_destroy(s);
}

/* The attempts per request users see are the clients' layer's, whatever
 * the order of the layers in the file. */
static void client_attempts_whatever_the_order(void **state)
{
    (void)state;
    const char *head = "[run]\nduration = 10s\n[load]\nrate = 100/s\n"
                       "[service api]\nworkers = 100\nservice = const(1ms)\ncalls = db*4\n"
                       "[service db]\nworkers = 100\nservice = exp(1ms)\nerror_503 = 0.3\n";
    const char *client = "[layer client]\nto = api\nattempts = 2\ntimeout = 1s\n";
    const char *inner = "[layer api-db]\nfrom = api\nto = db\nattempts = 5\nretry_on = 503\n";
    char a[1024], b[1024];
    snprintf(a, sizeof a, "%s%s%s", head, client, inner);
    snprintf(b, sizeof b, "%s%s%s", head, inner, client);
    struct summary oa, ob;
    struct sim *s = run_text(a, NULL, 0);
    output_summarise(s, 0, &oa);
    sim_destroy(s);
    s = run_text(b, NULL, 0);
    output_summarise(s, 0, &ob);
    sim_destroy(s);
    print_message("attempts per request: %.4f and %.4f\n", oa.attempts_mean, ob.attempts_mean);
    assert_true(oa.attempts_mean < 1.1 && oa.attempts_mean == ob.attempts_mean);
    assert_int_equal(oa.attempts_max, ob.attempts_max);
}

/* A deadline crosses services: the clients' 30 ms deadline, propagated,
 * rides with the API's call to the database, whose drop_expired then drops
 * the queries that wait past it (every caller has given up by then: the
 * requests end `deadline`); without propagation the database serves them
 * all. */
static void deadline_crosses_services(void **state)
{
    (void)state;
    const char *text = "[run]\nduration = 20s\n[load]\nrate = 150/s\n"
                       "[service api]\nworkers = 1000\nservice = const(1ms)\ncalls = db\n"
                       "[service db]\nworkers = 1\nqueue = unbounded\nservice = exp(6ms)\n"
                       "drop_expired = true\n"
                       "[layer app]\nto = api\ndeadline = 30ms\npropagate_deadline = true\n"
                       "retry_on = none\n"
                       "[layer pool]\nfrom = api\nto = db\npropagate_deadline = true\n";
    struct sim *s = run_text(text, NULL, 0);
    uint64_t dropped = sim_metrics(s)->dropped;
    uint64_t late = sim_metrics(s)->outcomes[OUT_DEADLINE];
    print_message("propagated: %llu dropped at the database, %llu requests past the deadline\n",
                  (unsigned long long)dropped, (unsigned long long)late);
    assert_true(dropped > 100 && late >= dropped / 2);
    sim_destroy(s);
    const char *off[] = {"layer.app.propagate_deadline=false"};
    s = run_text(text, off, 1);
    assert_int_equal(sim_metrics(s)->dropped, 0);
    sim_destroy(s);
}

/* A hung replica counts the attempts it swallowed as outstanding until
 * their callers time out: least-outstanding steers away from it, while a
 * replica that fails fast draws the traffic (the sinkhole). */
static void least_outstanding_and_hung_replicas(void **state)
{
    (void)state;
    const char *text = "[run]\nduration = 20s\n[load]\nrate = 1000/s\n"
                       "[service api]\nreplicas = 4\nbalancer = least-outstanding\nworkers = 4\n"
                       "queue = unbounded\nservice = exp(10ms)\n"
                       "[phase bad]\nstart = 0s\nend = 20s\ntarget = api#1\noutage = hang\n"
                       "[layer app]\nto = api\nattempts = 3\ntimeout = 200ms\n";
    const char *fast[] = {"phase.bad.outage=error"};
    for (int k = 0; k < 2; k++) {
        struct sim *s = run_text(text, fast, (size_t)k);
        double n[4], total = 0;
        replica_arrivals(s, 4, n);
        for (unsigned i = 0; i < 4; i++)
            total += n[i];
        print_message("%s: replica 1 gets %.3f of the attempts\n", k ? "fails fast" : "hung",
                      n[0] / total);
        assert_true(k ? n[0] / total > 0.8 : n[0] / total < 0.05);
        sim_destroy(s);
    }
}

/* Arrivals at each of the n replicas of service svc over the run. */
static void service_replica_arrivals(const struct sim *s, unsigned svc, unsigned n, uint64_t *out)
{
    for (unsigned i = 0; i < n; i++) {
        out[i] = 0;
        for (size_t b = 0; b < sim_metrics(s)->nbuckets; b++) {
            struct sim_service_row row;
            assert_true(sim_service_row(s, svc, i + 1, b, &row));
            out[i] += row.arrivals;
        }
    }
}

/* Seven requests, one a second (each served in 1 ms, so every replica is
 * idle when the next comes: every pick is a tie at 0 outstanding). The
 * least-outstanding scan starts at a cursor that moves on at each pick, so
 * the ties rotate: replicas 1, 2, 3, 1, 2, 3, 1, i.e. 3, 2, 2 arrivals. A
 * scan from the first replica every time sends all 7 to replica 1. */
static void least_outstanding_ties_rotate(void **state)
{
    (void)state;
    const char *text = "[run]\nduration = 10s\n[load]\narrival = uniform\nrate = 1/s\n"
                       "[phase quiet]\nstart = 7500ms\nend = 10s\nrate = x0\n"
                       "[server]\nworkers = 1\nservice = const(1ms)\nreplicas = 3\n"
                       "balancer = least-outstanding\n";
    struct sim *s = run_text(text, NULL, 0);
    uint64_t n[3];
    service_replica_arrivals(s, 0, 3, n);
    assert_true(sim_metrics(s)->requests == 7 && sim_metrics(s)->outcomes[OUT_OK] == 7);
    assert_true(n[0] == 3 && n[1] == 2 && n[2] == 2);
    sim_destroy(s);
}

/* Round-robin's cursor is the service's, shared by every caller. The entry
 * service a calls b and then db; b calls db too, so each request makes two
 * picks of db's 3 replicas, b's first. Four requests, one a second: picks
 * 1 2 3 1 2 3 1 2, i.e. 3, 3, 2 arrivals. A cursor per caller would give
 * 4, 2, 2 (each caller 1 2 3 1); a balancer that does not turn, 8, 0, 0. */
static void round_robin_cursor_is_shared(void **state)
{
    (void)state;
    const char *text = "[run]\nduration = 10s\n[load]\narrival = uniform\nrate = 1/s\n"
                       "[phase quiet]\nstart = 4500ms\nend = 10s\nrate = x0\n"
                       "[service a]\nworkers = 1\nservice = const(1ms)\ncalls = b db\n"
                       "[service b]\nworkers = 1\nservice = const(1ms)\ncalls = db\n"
                       "[service db]\nworkers = 1\nservice = const(1ms)\nreplicas = 3\n"
                       "balancer = round-robin\n";
    struct sim *s = run_text(text, NULL, 0);
    uint64_t n[3];
    service_replica_arrivals(s, 2, 3, n);
    assert_true(sim_metrics(s)->requests == 4 && sim_metrics(s)->outcomes[OUT_OK] == 4);
    assert_true(n[0] == 3 && n[1] == 3 && n[2] == 2);
    sim_destroy(s);
}

/* p2c on a tie keeps the first of its two draws. Twenty requests, one a
 * second, to two idle replicas: every pick is a tie, so each goes to the
 * first draw, a = uniform_int(2) of the balancer stream (the second draw,
 * uniform_int(1), is the other replica). The test replays the stream
 * (seed 1, replication 0) and expects those replicas exactly; keeping the
 * second on a tie would send each request to the other one. */
static void p2c_keeps_the_first_on_a_tie(void **state)
{
    (void)state;
    const char *text = "[run]\nduration = 30s\n[load]\narrival = uniform\nrate = 1/s\n"
                       "[phase quiet]\nstart = 20500ms\nend = 30s\nrate = x0\n"
                       "[server]\nworkers = 1\nservice = const(1ms)\nreplicas = 2\nbalancer = p2c\n";
    struct rng_set set;
    assert_int_equal(rng_set_init(&set, 1, 0), 0);
    uint64_t want[2] = {0, 0};
    for (int k = 0; k < 20; k++) {
        unsigned long a = gsl_rng_uniform_int(set.s[RNG_BALANCER], 2);
        (void)gsl_rng_uniform_int(set.s[RNG_BALANCER], 1);
        want[a]++;
    }
    rng_set_fini(&set);
    print_message("p2c on ties: replica 1 gets %llu of 20\n", (unsigned long long)want[0]);
    assert_true(want[0] != want[1]); /* else the other choice could not be told apart */
    struct sim *s = run_text(text, NULL, 0);
    uint64_t n[2];
    service_replica_arrivals(s, 0, 2, n);
    assert_true(sim_metrics(s)->requests == 20);
    assert_true(n[0] == want[0] && n[1] == want[1]);
    sim_destroy(s);
}

/* summary.csv's <service>_utilization (workers held / workers) and
 * <service>_wasted count after the warm-up. Nine requests, one a second
 * from 1 s, each holding one of api's 2 workers for 500 ms; the client
 * gives up after 100 ms, so every execution is wasted. Over the 10 s run:
 * 4.5 worker-seconds held of 20, 0.225, and 9 wasted. After a 5 s warm-up
 * (buckets of 1 s): the requests of 5 … 9 s, 2.5 of 10, 0.25, and 5. */
static void service_columns_after_warmup(void **state)
{
    (void)state;
    const char *text = "[run]\nduration = 10s\n[load]\narrival = uniform\nrate = 1/s\n"
                       "[service api]\nworkers = 2\nservice = const(500ms)\n"
                       "[layer app]\nto = api\ntimeout = 100ms\n";
    const char *warm[] = {"run.warmup=5s"};
    for (int w = 0; w < 2; w++) {
        struct sim *s = run_text(text, warm, (size_t)w);
        struct sim_service_row r;
        sim_service_totals(s, 0, &r);
        double util = r.busy / r.workers;
        print_message("warm-up %s: utilization %.6f, wasted %llu\n", w ? "5 s" : "none", util,
                      (unsigned long long)r.wasted);
        assert_true(fabs(util - (w ? 0.25 : 0.225)) < 1e-9);
        assert_true(r.wasted == (w ? 5u : 9u));
        sim_destroy(s);
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
        cmocka_unit_test(p2c_picks_two_distinct_replicas),
        cmocka_unit_test(dependency_failures_are_mapped),
        cmocka_unit_test(held_versus_working),
        cmocka_unit_test(bulkhead_queue_and_wait),
        cmocka_unit_test(bulkhead_slot_goes_to_the_longest_waiter),
        cmocka_unit_test(bulkhead_wait_ends_at_the_deadline),
        cmocka_unit_test(hop_phases),
        cmocka_unit_test(replica_target),
        cmocka_unit_test(least_outstanding_and_hung_replicas),
        cmocka_unit_test(deadline_crosses_services),
        cmocka_unit_test(late_attempts_to_a_hung_replica),
        cmocka_unit_test(client_attempts_whatever_the_order),
        cmocka_unit_test(least_outstanding_ties_rotate),
        cmocka_unit_test(round_robin_cursor_is_shared),
        cmocka_unit_test(p2c_keeps_the_first_on_a_tie),
        cmocka_unit_test(service_columns_after_warmup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
