/*
 * Retry semantics end to end: Retry-After, deadlines and their propagation,
 * drop_expired, which classes are retried, the analytic success rate of N
 * retries against independent failures, duplicate side effects and
 * idempotency keys, the network hop, presets loaded from scenarios, and the
 * effect each semantics scenario exists to show.
 */
#include "rs_test.h"

#include <gsl/gsl_statistics_double.h>
#include <math.h>
#include <string.h>


#define M(s) sim_metrics(s)

/* One request every second from 1 s to 9 s (the quiet phase from 9.5 s
 * stops arrivals), so each case is easy to follow by hand. */
#define ONE_PER_SECOND                                                                             \
    "[run]\nduration = 30s\n[load]\narrival = uniform\nrate = 1/s\n"                               \
    "[phase quiet]\nstart = 9500ms\nend = 30s\nrate = x0\n"

/* A server in outage answers 503 with Retry-After: 500 ms. A client that
 * honours it waits exactly that long between attempts: 3 attempts end
 * 1.0 s after the first, and no retry starts earlier. */
static void retry_after_is_honoured(void **state)
{
    (void)state;
    const char *text = ONE_PER_SECOND
        "[phase down]\nstart = 0\nend = 30s\noutage = error\nretry_after = 500ms\n"
        "[server]\nworkers = 1\nservice = const(1ms)\n"
        "[layer app]\nattempts = 3\nretry_after = honor\n";
    struct sim *s = run_text(text, NULL, 0);
    assert_true(M(s)->requests == 9);
    assert_true(M(s)->outcomes[OUT_EXHAUSTED] == 9);
    assert_true(M(s)->lat_all.min == 1000 * RS_MS && M(s)->lat_all.max == 1000 * RS_MS);
    assert_true(M(s)->retry_after_waits == 18);
    assert_true(M(s)->errors[CLS_503] == 27);
    sim_destroy(s);

    /* The Retry-After crosses a hop with latency: 10 ms each way adds 20 ms
     * per attempt, and the waits are still 500 ms. */
    const char *hop[] = {"layer.app.request_latency=const(10ms)", "layer.app.response_latency=const(10ms)"};
    s = run_text(text, hop, 2);
    assert_true(M(s)->retry_after_waits == 18);
    assert_true(M(s)->lat_all.min == 1060 * RS_MS && M(s)->lat_all.max == 1060 * RS_MS);
    sim_destroy(s);

    /* A Retry-After whose retry would start after the deadline is not a
     * wait: 500 ms against a 400 ms deadline ends each call at once. */
    const char *late[] = {"layer.app.deadline=400ms"};
    s = run_text(text, late, 1);
    assert_true(M(s)->outcomes[OUT_DEADLINE] == 9 && M(s)->retry_after_waits == 0);
    assert_true(M(s)->server_arrivals == 9 && M(s)->lat_all.max == 0);
    sim_destroy(s);

    /* Ignored: the retries go at once (no backoff), latency 0. */
    const char *ign[] = {"layer.app.retry_after=ignore"};
    s = run_text(text, ign, 1);
    assert_true(M(s)->lat_all.max == 0 && M(s)->retry_after_waits == 0);
    assert_true(M(s)->outcomes[OUT_EXHAUSTED] == 9);
    sim_destroy(s);

    /* Above retry_after_max: clamped to it (the default, urllib3's rule),
     * so each retry waits exactly 100 ms ... */
    const char *cap[] = {"layer.app.retry_after_max=100ms", NULL};
    s = run_text(text, cap, 1);
    assert_true(M(s)->outcomes[OUT_EXHAUSTED] == 9 && M(s)->retry_after_waits == 18);
    assert_true(M(s)->lat_all.min == 200 * RS_MS && M(s)->lat_all.max == 200 * RS_MS);
    sim_destroy(s);
    /* ... also a Retry-After exactly at the maximum (not above it) ... */
    const char *at[] = {"layer.app.retry_after_max=500ms", "layer.app.retry_after_over_max=give-up"};
    s = run_text(text, at, 2);
    assert_true(M(s)->outcomes[OUT_EXHAUSTED] == 9 && M(s)->retry_after_waits == 18);
    assert_true(M(s)->lat_all.max == 1000 * RS_MS);
    sim_destroy(s);
    /* ... or the call gives up after the first attempt ... */
    cap[1] = "layer.app.retry_after_over_max=give-up";
    s = run_text(text, cap, 2);
    assert_true(M(s)->outcomes[OUT_FAILED] == 9);
    assert_true(M(s)->server_arrivals == 9 && M(s)->retry_after_waits == 0);
    sim_destroy(s);
    /* ... or the hint is discarded and the backoff (none: 0) stands. */
    cap[1] = "layer.app.retry_after_over_max=backoff";
    s = run_text(text, cap, 2);
    assert_true(M(s)->outcomes[OUT_EXHAUSTED] == 9 && M(s)->retry_after_waits == 0);
    assert_true(M(s)->lat_all.max == 0 && M(s)->server_arrivals == 27);
    sim_destroy(s);
}

/* Retry-After: 0 means "retry now": a layer that honours it retries at
 * once instead of waiting its backoff (300 ms, constant). The 503s of an
 * outage carrying Retry-After 0 give 3 attempts at the same instant
 * (latency 0, 2 waits of a Retry-After per request); ignored, or taken for
 * no Retry-After, the backoff would give 600 ms. */
static void retry_after_zero_is_retry_now(void **state)
{
    (void)state;
    const char *text = ONE_PER_SECOND
        "[phase down]\nstart = 0\nend = 30s\noutage = error\nretry_after = 0\n"
        "[server]\nworkers = 1\nservice = const(1ms)\n"
        "[layer app]\nattempts = 3\nbackoff = constant\nbase = 300ms\nretry_after = honor\n";
    struct sim *s = run_text(text, NULL, 0);
    assert_true(M(s)->requests == 9 && M(s)->outcomes[OUT_EXHAUSTED] == 9);
    assert_true(M(s)->retry_after_waits == 18 && M(s)->server_arrivals == 27);
    assert_true(M(s)->lat_all.min == 0 && M(s)->lat_all.max == 0);
    sim_destroy(s);
    /* the same layer ignoring it waits its backoff: the contrast */
    const char *ign[] = {"layer.app.retry_after=ignore"};
    s = run_text(text, ign, 1);
    assert_true(M(s)->retry_after_waits == 0);
    assert_true(M(s)->lat_all.min == 600 * RS_MS && M(s)->lat_all.max == 600 * RS_MS);
    sim_destroy(s);
}

/* Against a server that never answers, a 250 ms deadline with 100 ms
 * attempts allows attempts at 0, 100 and 200 ms and ends the request at
 * exactly 250 ms; no attempt starts after it. A backoff that would start
 * the next attempt after the deadline ends the request at once. */
static void deadline_bounds_the_loop(void **state)
{
    (void)state;
    const char *text = ONE_PER_SECOND
        "[phase dead]\nstart = 0\nend = 30s\ncapacity = 0\n"
        "[server]\nworkers = 1\nservice = const(1ms)\n"
        "[layer app]\nattempts = 10\ntimeout = 100ms\ndeadline = 250ms\n";
    struct sim *s = run_text(text, NULL, 0);
    assert_true(M(s)->outcomes[OUT_DEADLINE] == 9);
    assert_true(M(s)->att_max[0] == 3 && M(s)->att_sum[0] == 27.0);
    assert_true(M(s)->lat_all.min == 250 * RS_MS && M(s)->lat_all.max == 250 * RS_MS);
    assert_true(M(s)->errors[CLS_TIMEOUT] == 18 && M(s)->errors[CLS_DEADLINE] == 9);
    sim_destroy(s);

    /* A backoff that ends exactly at the deadline ends the call at once:
     * the retry could not start before it. Against instant 503s, a 250 ms
     * wait and a 250 ms deadline give one attempt and latency 0; 249 ms
     * gives a second attempt at 249 ms, and the next would land after. */
    const char *fail_fast = ONE_PER_SECOND
        "[phase down]\nstart = 0\nend = 30s\noutage = error\n"
        "[server]\nworkers = 1\nservice = const(1ms)\n"
        "[layer app]\nattempts = 5\nbackoff = constant\nbase = 250ms\ndeadline = 250ms\n";
    s = run_text(fail_fast, NULL, 0);
    assert_true(M(s)->outcomes[OUT_DEADLINE] == 9 && M(s)->server_arrivals == 9);
    assert_true(M(s)->lat_all.max == 0);
    sim_destroy(s);
    const char *before[] = {"layer.app.base=249ms"};
    s = run_text(fail_fast, before, 1);
    assert_true(M(s)->outcomes[OUT_DEADLINE] == 9 && M(s)->server_arrivals == 18);
    assert_true(M(s)->lat_all.min == 249 * RS_MS && M(s)->lat_all.max == 249 * RS_MS);
    sim_destroy(s);

    const char *late[] = {"layer.app.backoff=constant", "layer.app.base=200ms"};
    s = run_text(text, late, 2);
    assert_true(M(s)->outcomes[OUT_DEADLINE] == 9);
    assert_true(M(s)->att_max[0] == 1);
    assert_true(M(s)->lat_all.max == 100 * RS_MS);
    sim_destroy(s);
}

/* Propagation and drop_expired, by hand: arrivals every 100 ms from 0.1 s
 * to 1.9 s (19), a 300 ms deadline propagated to one worker with a 1 s
 * service. The worker starts the 0.1 s request; when it frees at 1.1 s the
 * queued requests of 0.2 … 0.8 s have expired (0.8 + 0.3 = 1.1) and are
 * dropped, the 0.9 s one starts; at 2.1 s the same leaves the 1.9 s one.
 * 3 served, 16 dropped. Without drop_expired all 19 are served. */
static void expired_work_is_dropped(void **state)
{
    (void)state;
    const char *text =
        "[run]\nduration = 30s\n[load]\narrival = uniform\nrate = 10/s\n"
        "[phase quiet]\nstart = 2s\nend = 30s\nrate = x0\n"
        "[server]\nworkers = 1\nservice = const(1s)\ndrop_expired = true\n"
        "[layer app]\nattempts = 1\ndeadline = 300ms\npropagate_deadline = true\n"
        "[layer sidecar]\nattempts = 1\npropagate_deadline = true\n";
    struct sim *s = run_text(text, NULL, 0);
    assert_true(M(s)->requests == 19);
    assert_true(M(s)->server_completions == 3);
    assert_true(M(s)->dropped == 16);
    assert_true(M(s)->outcomes[OUT_DEADLINE] == 19);
    sim_destroy(s);

    const char *keep[] = {"server.drop_expired=false"};
    s = run_text(text, keep, 1);
    assert_true(M(s)->server_completions == 19 && M(s)->dropped == 0);
    sim_destroy(s);

    /* The boundary: a job whose deadline is the very instant a worker
     * frees is dropped, not started (at or after the deadline, not after).
     * Two requests, at 100 and 200 ms; the first holds the one worker until
     * 1.1 s, the second's deadline: 200 ms + 900 ms = 1.1 s. */
    const char *edge[] = {"phase.quiet.start=250ms", "layer.app.deadline=900ms"};
    s = run_text(text, edge, 2);
    assert_true(M(s)->requests == 2);
    assert_true(M(s)->server_completions == 1 && M(s)->dropped == 1);
    sim_destroy(s);
    const char *after[] = {"phase.quiet.start=250ms", "layer.app.deadline=901ms"};
    s = run_text(text, after, 2);
    assert_true(M(s)->server_completions == 2 && M(s)->dropped == 0);
    sim_destroy(s);

    /* Without propagation the server never learns the deadline. */
    const char *noprop[] = {"layer.app.propagate_deadline=false"};
    s = run_text(text, noprop, 1);
    assert_true(M(s)->server_completions == 19 && M(s)->dropped == 0);
    sim_destroy(s);
}

/* A request that arrives at exactly the end of the warmup is counted:
 * arrivals at 1 s, 2 s, …, 9 s and a 3 s warmup count 3 s to 9 s. */
static void warmup_counts_from_its_end(void **state)
{
    (void)state;
    const char *text = ONE_PER_SECOND "[server]\nworkers = 1\nservice = const(1ms)\n";
    const char *warm[] = {"run.warmup=3s"};
    struct sim *s = run_text(text, warm, 1);
    assert_true(M(s)->requests == 7 && M(s)->outcomes[OUT_OK] == 7);
    /* goodput is per second of the measured part: 7 ok over 30 s − 3 s */
    struct summary sum;
    output_summarise(s, 0, &sum);
    assert_true(fabs(sum.goodput - 7.0 / 27.0) < 1e-12);
    sim_destroy(s);
}

/* A server phase holds from its start up to, not including, its end:
 * refusing on [2 s, 5 s), it refuses the arrivals at 2, 3 and 4 s and
 * serves the one at 5 s. */
static void phase_ends_at_its_end(void **state)
{
    (void)state;
    const char *text = ONE_PER_SECOND "[phase down]\nstart = 2s\nend = 5s\noutage = refuse\n"
                                      "[server]\nworkers = 1\nservice = const(1ms)\n";
    struct sim *s = run_text(text, NULL, 0);
    assert_true(M(s)->requests == 9 && M(s)->outcomes[OUT_OK] == 6 && M(s)->errors[CLS_CONN] == 3);
    sim_destroy(s);
}

/* Injected errors are drawn with their own probabilities: error_500 = 0.1
 * and error_503 = 0.3 over 20,000 requests, each share within 5 standard
 * errors (about 0.011 and 0.016). */
static void injected_errors_have_their_probabilities(void **state)
{
    (void)state;
    const char *text = "[run]\nduration = 200s\n[load]\nrate = 100/s\n"
                       "[server]\nworkers = 10\nservice = const(1ms)\nerror_500 = 0.1\nerror_503 = 0.3\n"
                       "[layer app]\nattempts = 1\n";
    struct sim *s = run_text(text, NULL, 0);
    double n = (double)M(s)->requests;
    double p500 = (double)M(s)->errors[CLS_500] / n, p503 = (double)M(s)->errors[CLS_503] / n;
    if (fabs(p500 - 0.1) > 5 * sqrt(0.1 * 0.9 / n) || fabs(p503 - 0.3) > 5 * sqrt(0.3 * 0.7 / n))
        fail_msg("500 share %.4f (0.1), 503 share %.4f (0.3) over %.0f requests", p500, p503, n);
    sim_destroy(s);
}

/* Only classes in retry_on are retried; business errors are answers. */
static void non_retriable_classes_are_not_retried(void **state)
{
    (void)state;
    const char *text = ONE_PER_SECOND "[server]\nworkers = 4\nservice = const(1ms)\nerror_500 = 1\n"
                                      "[layer app]\nattempts = 5\nretry_on = 503\n";
    struct sim *s = run_text(text, NULL, 0);
    assert_true(M(s)->outcomes[OUT_FAILED] == 9 && M(s)->server_arrivals == 9);
    sim_destroy(s);
    const char *on500[] = {"layer.app.retry_on=500 503"};
    s = run_text(text, on500, 1);
    assert_true(M(s)->outcomes[OUT_EXHAUSTED] == 9 && M(s)->server_arrivals == 45);
    sim_destroy(s);
    const char *c400[] = {"server.error_500=0", "server.error_400=1", "layer.app.retry_on=timeout conn 429 500 502 503 504"};
    s = run_text(text, c400, 3);
    assert_true(M(s)->outcomes[OUT_FAILED] == 9 && M(s)->server_arrivals == 9);
    assert_true(M(s)->errors[CLS_400] == 9);
    sim_destroy(s);
    const char *biz[] = {"server.error_500=0", "server.business=1", "layer.app.retry_on=timeout conn 429 500 502 503 504 deadline 409 404 403 400"};
    s = run_text(text, biz, 3);
    assert_true(M(s)->outcomes[OUT_BUSINESS] == 9 && M(s)->server_arrivals == 9);
    sim_destroy(s);
}

/* Against independent failures with probability p and N retries, the
 * success share is 1 − p^(N+1) and the mean attempts (1 − p^(N+1))/(1 − p).
 * 200,000 requests; the tolerance is 5 standard errors of each estimate
 * (binomial for the share, the sample's own for the attempts), about
 * 0.1 % of the values: a retry loop that miscounts attempts or retries
 * once too often misses by far more. */
static void n_retries_against_independent_failures(void **state)
{
    (void)state;
    const double ps[] = {0.1, 0.3, 0.6};
    const unsigned attempts[] = {2, 4, 6};
    for (size_t i = 0; i < 3; i++) {
        char text[512];
        snprintf(text, sizeof text,
                 "[run]\nduration = 100s\nbucket = 10s\n[load]\nrate = 2000/s\n"
                 "[server]\nworkers = 1000\nservice = const(1ms)\nerror_503 = %g\n"
                 "[layer app]\nattempts = %u\n", ps[i], attempts[i]);
        struct sim *s = run_text(text, NULL, 0);
        const struct metrics *m = M(s);
        double n = (double)m->requests;
        double q = 1 - pow(ps[i], attempts[i]);
        double share = (double)m->outcomes[OUT_OK] / n;
        double se = sqrt(q * (1 - q) / n);
        print_message("p=%.1f N+1=%u: ok share %.5f (theory %.5f ± %.5f)\n", ps[i], attempts[i],
                      share, q, 5 * se);
        assert_true(fabs(share - q) <= 5 * se);
        /* attempts per request from the histogram of the outermost layer */
        const gsl_histogram *h = m->att[0];
        double mean = 0, var = 0;
        for (size_t k = 0; k < h->n; k++)
            mean += (double)k * h->bin[k] / n;
        for (size_t k = 0; k < h->n; k++)
            var += ((double)k - mean) * ((double)k - mean) * h->bin[k] / (n - 1);
        double expect = q / (1 - ps[i]);
        print_message("            attempts %.5f (theory %.5f ± %.5f)\n", mean, expect,
                      5 * sqrt(var / n));
        assert_true(fabs(mean - expect) <= 5 * sqrt(var / n));
        sim_destroy(s);
    }
}

/* Duplicates by hand: one charge a second, service 300 ms, timeout 100 ms,
 * three attempts at once: the client gives up on each attempt but the
 * server completes all three — three side effects, two duplicates, per
 * request. Idempotent requests have none; a keyed request against a
 * deduplicating server is executed once (the retries meet 409). */
static void duplicates_are_counted_exactly(void **state)
{
    (void)state;
    const char *text = ONE_PER_SECOND
        "[load]\nidempotent = false\n"
        "[server]\nworkers = 10\nservice = const(300ms)\n"
        "[layer app]\nattempts = 3\ntimeout = 100ms\n";
    /* ONE_PER_SECOND has a [load] section already; this adds keys to it. */
    struct sim *s = run_text(text, NULL, 0);
    assert_true(M(s)->requests == 9);
    assert_true(M(s)->side_effects == 27 && M(s)->duplicates == 18);
    assert_true(M(s)->outcomes[OUT_EXHAUSTED] == 9);
    sim_destroy(s);

    const char *idem[] = {"load.idempotent=true"};
    s = run_text(text, idem, 1);
    assert_true(M(s)->side_effects == 0 && M(s)->duplicates == 0);
    sim_destroy(s);

    const char *keyed[] = {"load.key=true", "server.dedup=true",
                           "layer.app.retry_on=timeout 409"};
    s = run_text(text, keyed, 3);
    assert_true(M(s)->side_effects == 9 && M(s)->duplicates == 0);
    assert_true(M(s)->errors[CLS_409] == 18); /* both retries met the charge in flight */
    sim_destroy(s);

    /* Keyed, with a patient client: the retry after the charge completed
     * gets the stored answer replayed, and succeeds without a new charge. */
    const char *replay[] = {"load.key=true", "server.dedup=true", "layer.app.retry_on=timeout 409",
                            "layer.app.backoff=constant", "layer.app.base=250ms"};
    s = run_text(text, replay, 5);
    assert_true(M(s)->side_effects == 9 && M(s)->duplicates == 0);
    assert_true(M(s)->outcomes[OUT_OK] == 9);
    sim_destroy(s);
}

/* Which answers are side effects: with idempotent = false, an execution
 * that answers ok or business did the thing (business: the order was
 * refused after it was recorded), one that answers an injected error did
 * not. Nine requests, one attempt each, on a lone server: 9 side effects
 * for business, 0 for 500 or 503. Side effects are modelled at the entry
 * service: a business answer passed through from a dependency is one
 * there (9), and the dependency's own executions are not counted (not 18). */
static void side_effects_are_ok_and_business_answers(void **state)
{
    (void)state;
    const char *text = ONE_PER_SECOND "[load]\nidempotent = false\n"
                                      "[server]\nworkers = 1\nservice = const(1ms)\n";
    const char *biz[] = {"server.business=1"};
    struct sim *s = run_text(text, biz, 1);
    assert_true(M(s)->outcomes[OUT_BUSINESS] == 9);
    assert_true(M(s)->side_effects == 9 && M(s)->duplicates == 0);
    sim_destroy(s);
    const char *e500[] = {"server.error_500=1"}, *e503[] = {"server.error_503=1"};
    s = run_text(text, e500, 1);
    assert_true(M(s)->errors[CLS_500] == 9 && M(s)->side_effects == 0);
    sim_destroy(s);
    s = run_text(text, e503, 1);
    assert_true(M(s)->errors[CLS_503] == 9 && M(s)->side_effects == 0);
    sim_destroy(s);

    const char *graph = ONE_PER_SECOND "[load]\nidempotent = false\n"
                                       "[service api]\nworkers = 1\nservice = const(1ms)\ncalls = db\n"
                                       "[service db]\nworkers = 1\nservice = const(1ms)\nbusiness = 1\n";
    s = run_text(graph, NULL, 0);
    assert_true(M(s)->outcomes[OUT_BUSINESS] == 9);
    assert_true(M(s)->side_effects == 9 && M(s)->duplicates == 0);
    sim_destroy(s);
}

/* A stored answer is replayed for the `replay` service time. One charge a
 * second (300 ms), attempts time out after 100 ms and retry after 250 ms:
 * the retry at 350 ms finds the charge stored (done at 300 ms) and gets it
 * replayed, ok at 350 ms with the default const(0), at 400 ms with a
 * 50 ms replay (not the 300 ms of a new execution: 650 ms). */
static void replay_takes_its_service_time(void **state)
{
    (void)state;
    const char *text = ONE_PER_SECOND
        "[load]\nidempotent = false\nkey = true\n"
        "[server]\nworkers = 10\nservice = const(300ms)\ndedup = true\n"
        "[layer app]\nattempts = 3\ntimeout = 100ms\nretry_on = timeout 409\n"
        "backoff = constant\nbase = 250ms\n";
    struct sim *s = run_text(text, NULL, 0);
    assert_true(M(s)->outcomes[OUT_OK] == 9 && M(s)->side_effects == 9);
    assert_true(M(s)->lat_all.min == 350 * RS_MS && M(s)->lat_all.max == 350 * RS_MS);
    sim_destroy(s);
    const char *slow[] = {"server.replay=const(50ms)"};
    s = run_text(text, slow, 1);
    assert_true(M(s)->outcomes[OUT_OK] == 9 && M(s)->side_effects == 9);
    assert_true(M(s)->lat_all.min == 400 * RS_MS && M(s)->lat_all.max == 400 * RS_MS);
    sim_destroy(s);
}

/* The hop: latencies add to the answer's latency exactly; a lost attempt
 * or answer looks like a timeout. */
static void network_latency_and_loss(void **state)
{
    (void)state;
    const char *text = ONE_PER_SECOND
        "[server]\nworkers = 4\nservice = const(5ms)\n"
        "[layer app]\nattempts = 2\ntimeout = 100ms\n"
        "request_latency = const(10ms)\nresponse_latency = const(20ms)\n";
    struct sim *s = run_text(text, NULL, 0);
    assert_true(M(s)->outcomes[OUT_OK] == 9);
    assert_true(M(s)->lat_all.min == 35 * RS_MS && M(s)->lat_all.max == 35 * RS_MS);
    sim_destroy(s);
    const char *lost_req[] = {"layer.app.request_loss=1"};
    s = run_text(text, lost_req, 1);
    assert_true(M(s)->server_arrivals == 0 && M(s)->outcomes[OUT_EXHAUSTED] == 9);
    assert_true(M(s)->errors[CLS_TIMEOUT] == 18);
    sim_destroy(s);
    const char *lost_resp[] = {"layer.app.response_loss=1"};
    s = run_text(text, lost_resp, 1);
    assert_true(M(s)->server_completions == 18 && M(s)->outcomes[OUT_EXHAUSTED] == 9);
    assert_true(M(s)->errors[CLS_TIMEOUT] == 18);
    sim_destroy(s);
}

/* Outages: refuse answers conn at once, hang never answers. */
static void outage_modes(void **state)
{
    (void)state;
    const char *text = ONE_PER_SECOND "[phase down]\nstart = 0\nend = 30s\noutage = refuse\n"
                                      "[server]\nworkers = 4\nservice = const(5ms)\n"
                                      "[layer app]\nattempts = 2\ntimeout = 100ms\n";
    struct sim *s = run_text(text, NULL, 0);
    assert_true(M(s)->errors[CLS_CONN] == 18 && M(s)->lat_all.max == 0);
    sim_destroy(s);
    const char *hang[] = {"phase.down.outage=hang"};
    s = run_text(text, hang, 1);
    assert_true(M(s)->errors[CLS_TIMEOUT] == 18 && M(s)->lat_all.max == 200 * RS_MS);
    assert_true(M(s)->server_completions == 0);
    sim_destroy(s);
}


/* LIFO serves the newest waiting attempt first: one worker, 1 s each,
 * arrivals at 0.1, 0.2, 0.3 s. FIFO ends them at 1.1, 2.1, 3.1 s
 * (latencies 1.0, 1.9, 2.8 s); LIFO serves 0.3 before 0.2 (1.8 and 2.9 s). */
static void lifo_serves_newest_first(void **state)
{
    (void)state;
    const char *text = "[run]\nduration = 10s\n[load]\narrival = uniform\nrate = 10/s\n"
                       "[phase quiet]\nstart = 350ms\nend = 10s\nrate = x0\n"
                       "[server]\nworkers = 1\nservice = const(1s)\n";
    struct sim *s = run_text(text, NULL, 0);
    assert_true(M(s)->lat_all.max == 2800 * RS_MS);
    assert_true(fabs(M(s)->lat_all.sum - 5.7e9) < 1);
    sim_destroy(s);
    const char *lifo[] = {"server.discipline=lifo"};
    s = run_text(text, lifo, 1);
    assert_true(M(s)->lat_all.max == 2900 * RS_MS);
    assert_true(fabs(M(s)->lat_all.sum - 5.7e9) < 1);
    sim_destroy(s);
}

/* Degradation: with degrade = 1, an execution that starts while k other
 * workers are busy takes (1 + k) times its service time. Arrivals at 0.5
 * and 1.0 ms on two workers: the first runs alone (10 ms), the second
 * beside it (20 ms). Without degradation both take 10 ms. */
static void degradation_slows_concurrent_work(void **state)
{
    (void)state;
    const char *text = "[run]\nduration = 1s\n[load]\narrival = uniform\nrate = 2/ms\n"
                       "[phase quiet]\nstart = 1200us\nend = 1s\nrate = x0\n"
                       "[server]\nworkers = 2\nservice = const(10ms)\ndegrade = 1\n";
    struct sim *s = run_text(text, NULL, 0);
    assert_true(M(s)->requests == 2);
    assert_true(M(s)->lat_all.min == 10 * RS_MS && M(s)->lat_all.max == 20 * RS_MS);
    sim_destroy(s);
    const char *flat[] = {"server.degrade=0"};
    s = run_text(text, flat, 1);
    assert_true(M(s)->lat_all.min == 10 * RS_MS && M(s)->lat_all.max == 10 * RS_MS);
    sim_destroy(s);
}

/* The token bucket: 10/s with a burst of 1 against 20 arrivals a second
 * admits every other one. */
static void rate_limiter_admits_its_rate(void **state)
{
    (void)state;
    const char *text = "[run]\nduration = 10s\n[load]\narrival = uniform\nrate = 20/s\n"
                       "[server]\nworkers = 4\nservice = const(1ms)\nlimit_rate = 10/s\n"
                       "limit_burst = 1\nlimit_status = 403\n"
                       "[layer app]\nattempts = 1\n";
    struct sim *s = run_text(text, NULL, 0);
    uint64_t n = M(s)->requests;
    assert_true(M(s)->limited == n / 2 || M(s)->limited == n / 2 + 1);
    assert_true(M(s)->errors[CLS_403] == M(s)->limited);
    assert_true(M(s)->outcomes[OUT_FAILED] == M(s)->limited); /* 403 is not retried by default */
    sim_destroy(s);
}

/* Presets bring their library's defaults; written keys override them. */
static void presets_from_scenarios(void **state)
{
    (void)state;
    const char *base = "[load]\nrate = 1/s\n[server]\nservice = exp(1ms)\n";
    struct {
        const char *sets[2];
        unsigned attempts;
        errclass_set retry_on;
        rs_time base, cap;
    } cases[] = {
        {{"layer.a.backoff=aws-standard", "layer.a.attempts=7"}, 7, ERRCLASS_DEFAULT_RETRY | ERRCLASS_BIT(CLS_500), RS_S, 20 * RS_S},
        {{"layer.a.backoff=grpc", "layer.a.attempts=9"}, 5, ERRCLASS_BIT(CLS_CONN) | ERRCLASS_BIT(CLS_503), 100 * RS_MS, RS_S},
        {{"layer.a.backoff=envoy", "layer.a.base=50ms"}, 2, ERRCLASS_BIT(CLS_TIMEOUT) | ERRCLASS_BIT(CLS_CONN) | ERRCLASS_BIT(CLS_500) | ERRCLASS_BIT(CLS_502) | ERRCLASS_BIT(CLS_503) | ERRCLASS_BIT(CLS_504), 50 * RS_MS, 250 * RS_MS},
        {{"layer.a.backoff=urllib3", "layer.a.retry_on=503"}, 4, ERRCLASS_BIT(CLS_503), 0, 120 * RS_S},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct scenario sc;
        size_t n = cases[i].sets[1] ? 2 : 1;
        load_or_fail(&sc, base, cases[i].sets, n);
        const struct layer_cfg *l = &sc.layers[0];
        if (l->attempts != cases[i].attempts || l->retry_on != cases[i].retry_on ||
            l->bp.base != cases[i].base || l->bp.cap != cases[i].cap)
            fail_msg("case %zu (%s): attempts %u retry_on %#x base %lld cap %lld", i,
                     cases[i].sets[0], l->attempts, l->retry_on, (long long)l->bp.base,
                     (long long)l->bp.cap);
    }
    struct scenario sc;
    const char *cen[] = {"layer.a.backoff=cenkalti"};
    load_or_fail(&sc, base, cen, 1);
    assert_true(sc.layers[0].deadline == 15 * 60 * RS_S); /* MaxElapsedTime */
    const char *ra[] = {"layer.a.backoff=urllib3"};
    load_or_fail(&sc, base, ra, 1);
    assert_true(sc.layers[0].retry_after == RA_HONOR && sc.layers[0].retry_after_max == 21600 * RS_S);
}

static struct summary summarise(const char *name, const char *const *sets, size_t nsets)
{
    struct sim *s = run_text(scenario_builtin_text(name), sets, nsets);
    struct summary sum;
    output_summarise(s, 0, &sum);
    sim_destroy(s);
    return sum;
}

static double share(const struct summary *s, enum outcome o)
{
    return (double)s->outcomes[o] / (double)s->requests;
}

/* payments: without keys the slow gateway charges thousands twice and
 * never recovers; with keys, dedup, a deadline and jittered backoff there
 * are no duplicates and the load stays near the offered rate. */
static void payments_double_charges_and_their_fix(void **state)
{
    (void)state;
    struct sim *bad = run_text(scenario_builtin_text("payments"), NULL, 0);
    struct sim *good = run_text(scenario_builtin_text("payments-safe"), NULL, 0);
    struct summary b, g;
    output_summarise(bad, 0, &b);
    output_summarise(good, 0, &g);
    print_message("payments: duplicates %llu vs %llu; amplification %.2f vs %.2f; ok %.3f vs %.3f\n",
                  (unsigned long long)M(bad)->duplicates, (unsigned long long)M(good)->duplicates,
                  b.amplification, g.amplification, share(&b, OUT_OK), share(&g, OUT_OK));
    assert_true(M(bad)->duplicates > 10000);
    assert_true(M(good)->duplicates == 0);
    assert_true(g.amplification < 0.5 * b.amplification);
    assert_true(share(&g, OUT_OK) > share(&b, OUT_OK) + 0.5);
    assert_int_equal(b.recovered, 0);
    assert_int_equal(g.recovered, 1);
    sim_destroy(bad);
    sim_destroy(good);
}

/* retry-after: honouring clients send fewer attempts, lower the peak on
 * the API, and get more requests through than clients that ignore it. */
static void retry_after_scenario(void **state)
{
    (void)state;
    struct summary h = summarise("retry-after", NULL, 0);
    const char *ign[] = {"layer.app.retry_after=ignore"};
    struct summary i = summarise("retry-after", ign, 1);
    print_message("retry-after: amplification %.3f vs %.3f, peak %.0f vs %.0f, ok %.3f vs %.3f\n",
                  h.amplification, i.amplification, h.peak_server_rate, i.peak_server_rate,
                  share(&h, OUT_OK), share(&i, OUT_OK));
    assert_true(h.amplification < i.amplification - 0.1);
    assert_true(h.peak_server_rate < 0.9 * i.peak_server_rate);
    assert_true(share(&h, OUT_OK) > share(&i, OUT_OK));
}

/* ratelimit-403: retrying the 403 after a minute gets most of the burst
 * through; 500s are never retried (each one fails the request). */
static void ratelimit_403_scenario(void **state)
{
    (void)state;
    struct sim *s = run_text(scenario_builtin_text("ratelimit-403"), NULL, 0);
    const struct metrics *m = M(s);
    assert_true(m->errors[CLS_500] == m->outcomes[OUT_FAILED]);
    assert_true(m->errors[CLS_403] > 1000);
    struct summary with;
    output_summarise(s, 0, &with);
    sim_destroy(s);
    const char *none[] = {"layer.client.retry_on=none"};
    struct summary without = summarise("ratelimit-403", none, 1);
    print_message("ratelimit-403: ok %.3f with the 60 s retry, %.3f without\n", share(&with, OUT_OK),
                  share(&without, OUT_OK));
    assert_true(share(&with, OUT_OK) > share(&without, OUT_OK) + 0.05);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(retry_after_is_honoured),
        cmocka_unit_test(retry_after_zero_is_retry_now),
        cmocka_unit_test(deadline_bounds_the_loop),
        cmocka_unit_test(expired_work_is_dropped),
        cmocka_unit_test(non_retriable_classes_are_not_retried),
        cmocka_unit_test(warmup_counts_from_its_end),
        cmocka_unit_test(phase_ends_at_its_end),
        cmocka_unit_test(injected_errors_have_their_probabilities),
        cmocka_unit_test(n_retries_against_independent_failures),
        cmocka_unit_test(duplicates_are_counted_exactly),
        cmocka_unit_test(side_effects_are_ok_and_business_answers),
        cmocka_unit_test(replay_takes_its_service_time),
        cmocka_unit_test(network_latency_and_loss),
        cmocka_unit_test(outage_modes),
        cmocka_unit_test(lifo_serves_newest_first),
        cmocka_unit_test(degradation_slows_concurrent_work),
        cmocka_unit_test(rate_limiter_admits_its_rate),
        cmocka_unit_test(presets_from_scenarios),
        cmocka_unit_test(payments_double_charges_and_their_fix),
        cmocka_unit_test(retry_after_scenario),
        cmocka_unit_test(ratelimit_403_scenario),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
