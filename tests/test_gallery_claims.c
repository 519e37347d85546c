/*
 * The gallery's claims (scripts/gallery.sh) over seeds 1..20, not on the one
 * seed a scenario ships with: each scenario's description line states its
 * claim, and each test here checks it on both sides of the contrast the
 * gallery draws, on the same seeds. A claim must hold on at least 18 of the
 * 20 seeds on each side (the 90 %); the tests count, print the
 * count and assert it. Every side measured 20 of 20 when written (the
 * ranges are noted at each check), and the thresholds sit well inside
 * them. Elsewhere: cascade in test_graph_claims, cache-flush and
 * cache-stampede in test_load_claims; aws-occ's orderings are means over
 * replications, in test_gallery (10 replications put every ordering at
 * least 5.8 standard deviations of such a mean apart).
 *
 * Runs keep the scenario's duration except where the gallery shortens them
 * (jitter 50 s, omission 20 s: the claim is over by then). The verdicts'
 * claims (docs/verdicts.md) must hold on every one of the 20 seeds.
 */
#include "rs_test.h"

#include <math.h>
#include <string.h>

#define SEEDS CLAIM_SEEDS


/* The server's arrivals over buckets [t0, t1). */
static double arrivals_between(const struct sim *s, size_t t0, size_t t1)
{
    const struct metrics *m = sim_metrics(s);
    uint64_t a = 0;
    assert_true(t1 <= m->nbuckets);
    for (size_t b = t0; b < t1; b++)
        a += m->b[b].server_arrivals;
    return (double)a;
}


static struct summary summary_of(const struct sim *s)
{
    struct summary o;
    output_summarise(s, 0.0, &o);
    return o;
}

/* storm: the spike at 60-70 s turns into a storm that lasts to the end;
 * without retries it is absorbed. The verdicts (docs/verdicts.md): storm
 * is metastable; with one attempt recovered 25-35 s after the spike (the
 * backlog of 10 s at 1600/s drains at 200/s); cut 5 s after the spike,
 * undetermined; offered 1100/s, more than its 1000/s, overloaded before
 * the spike. Observed over seeds 1..20: ok 19.5-19.7 % over the run with
 * retries; recovered 29-32 s after the spike without. */
static void storm_claim(void **state)
{
    (void)state;
    const char *one[] = {"layer.app.attempts=1"};
    const char *cut[] = {"run.duration=75s"};
    const char *over[] = {"run.duration=120s", "load.rate=1100/s"};
    unsigned storm = 0, calm = 0, cuts = 0, overs = 0;
    for (unsigned seed = 1; seed <= SEEDS; seed++) {
        struct sim *s = run_builtin("storm", seed, NULL, 0);
        size_t n = sim_metrics(s)->nbuckets;
        storm += summary_of(s).verdict == VERDICT_METASTABLE && recovered(s) == 0 &&
                 ok_between(s, n - 60, n) < 0.05;
        sim_destroy(s);
        s = run_builtin("storm", seed, one, 1);
        struct summary o = summary_of(s);
        calm += o.verdict == VERDICT_RECOVERED && recovered(s) == 1 && o.recovery_s >= 25 && o.recovery_s <= 35;
        sim_destroy(s);
        s = run_builtin("storm", seed, cut, 1);
        cuts += summary_of(s).verdict == VERDICT_UNDETERMINED && recovered(s) == -1;
        sim_destroy(s);
        s = run_builtin("storm", seed, over, 2);
        overs += summary_of(s).verdict == VERDICT_OVERLOADED;
        sim_destroy(s);
    }
    claim_require_all("storm", "retries: metastable", storm);
    claim_require_all("storm", "attempts = 1: recovered 25-35 s after the spike", calm);
    claim_require_all("storm", "cut 5 s after the spike: undetermined", cuts);
    claim_require_all("storm", "1100/s: overloaded before the spike", overs);
}

/* storm-budget: the AWS SDK's shared quota stops the storm; without a
 * budget it does not stop. Observed over seeds 1..20: aws-standard
 * recovered 28-33 s after the spike; none metastable. (The comment's
 * other budgets, measured for the record: grpc recovered on 20 of 20,
 * 28-33 s after; ratio, envoy and a per-client quota metastable on 20 of
 * 20; not run here, to keep the test short.) */
static void storm_budget_claim(void **state)
{
    (void)state;
    const char *none[] = {"layer.app.budget=none"};
    unsigned aws = 0, storm = 0;
    for (unsigned seed = 1; seed <= SEEDS; seed++) {
        struct sim *s = run_builtin("storm-budget", seed, NULL, 0);
        struct summary o = summary_of(s);
        aws += o.recovered == 1 && o.recovery_s < 60;
        sim_destroy(s);
        s = run_builtin("storm-budget", seed, none, 1);
        storm += summary_of(s).verdict == VERDICT_METASTABLE;
        sim_destroy(s);
    }
    claim_require("storm-budget", "aws-standard: recovered", aws);
    claim_require("storm-budget", "no budget: metastable", storm);
}

/* Peak over mean of the server's arrivals per 10 ms bucket from 30.1 s
 * (after the herd's own instant) to 45 s. */
static double wave_ratio(const struct sim *s)
{
    const struct metrics *m = sim_metrics(s);
    double peak = 0, sum = 0, n = 0;
    assert_true(m->nbuckets >= 4500);
    for (size_t i = 3010; i < 4500; i++) {
        double a = (double)m->b[i].server_arrivals;
        peak = fmax(peak, a);
        sum += a;
        n++;
    }
    return peak / (sum / n);
}

/* herd: waves without jitter, spread with full jitter (from 30.1 to 45 s,
 * as in the gallery's 50 s); and the verdict over the scenario's 120 s:
 * without jitter the clients come back in waves and goodput is back to
 * its baseline more than 10 s after the outage, with full jitter within
 * 10 s. Observed over seeds 1..20: peak/mean 206-210 exponential, 16-21
 * full; recovered 17-20 s after the outage exponential, 0-10 s full. */
static void herd_claim(void **state)
{
    (void)state;
    const char *expo[] = {"layer.app.backoff=exponential"};
    const char *full[] = {"layer.app.backoff=full"};
    unsigned waves = 0, spread = 0, slow = 0, fast = 0;
    for (unsigned seed = 1; seed <= SEEDS; seed++) {
        struct sim *s = run_builtin("herd", seed, expo, 1);
        double e = wave_ratio(s);
        struct summary o = summary_of(s);
        slow += o.verdict == VERDICT_RECOVERED && o.recovery_s > 10;
        sim_destroy(s);
        s = run_builtin("herd", seed, full, 1);
        double j = wave_ratio(s);
        o = summary_of(s);
        fast += o.verdict == VERDICT_RECOVERED && o.recovery_s <= 10;
        sim_destroy(s);
        waves += e > 100;
        spread += j < 50 && j < e / 4;
    }
    claim_require("herd", "exponential: waves (peak/mean > 100)", waves);
    claim_require("herd", "full jitter: spread (peak/mean < 50)", spread);
    claim_require_all("herd", "exponential: recovered more than 10 s after the outage", slow);
    claim_require_all("herd", "full jitter: recovered within 10 s", fast);
}

/* jitter (50 s, every kind the gallery compares). Observed over seeds
 * 1..20, peak/mean per 10 ms: none 4.9-6.5, constant 59-61, exponential
 * 206-210, full 16-21, equal 25-28, decorrelated 9-11; the server's
 * arrivals during the outage (30-40 s): none 2.90-3.07 M, constant
 * 2.39-2.54 M, full 0.74-0.75 M; ok: full 99.2-99.8 %, equal 98.6-99.9 %,
 * exponential 92.7-93.8 %, decorrelated 93.4-94.2 %. */
static void jitter_claim(void **state)
{
    (void)state;
    static const char *const kinds[] = {"none",  "constant", "exponential",
                                        "full",  "equal",    "decorrelated"};
    enum { NONE, CONSTANT, EXPO, FULL, EQUAL, DECORR, NKINDS };
    unsigned pass[NKINDS] = {0};
    for (unsigned seed = 1; seed <= SEEDS; seed++) {
        double wave[NKINDS], outage[NKINDS], ok[NKINDS];
        for (size_t k = 0; k < NKINDS; k++) {
            char kb[64];
            snprintf(kb, sizeof kb, "layer.app.backoff=%s", kinds[k]);
            const char *sets[] = {"run.duration=50s", kb};
            struct sim *s = run_builtin("jitter", seed, sets, 2);
            wave[k] = wave_ratio(s);
            outage[k] = arrivals_between(s, 3000, 4000);
            ok[k] = ok_share(s);
            sim_destroy(s);
        }
        /* no and constant backoff hammer the dead service */
        pass[NONE] += outage[NONE] > 2 * outage[FULL];
        pass[CONSTANT] += outage[CONSTANT] > 2 * outage[FULL];
        /* exponential without jitter arrives in waves */
        pass[EXPO] += wave[EXPO] > 100;
        /* the jittered kinds spread the retries; full and equal get the most through */
        pass[FULL] += wave[FULL] < 50 && ok[FULL] > 0.98 && ok[FULL] > ok[EXPO];
        pass[EQUAL] += wave[EQUAL] < 50 && ok[EQUAL] > 0.98 && ok[EQUAL] > ok[DECORR];
        pass[DECORR] += wave[DECORR] < 50;
    }
    for (size_t k = 0; k < NKINDS; k++)
        claim_require("jitter", kinds[k], pass[k]);
}

/* layers-27 and layers-64: during the outage every request makes exactly
 * 27 (64) attempts at the server; 20 of 20 seeds each. */
static void layers_claim(void **state)
{
    (void)state;
    struct {
        const char *name;
        unsigned expect;
    } cases[] = {{"layers-27", 27}, {"layers-64", 64}};
    for (size_t i = 0; i < 2; i++) {
        unsigned pass = 0;
        for (unsigned seed = 1; seed <= SEEDS; seed++) {
            struct sim *s = run_builtin(cases[i].name, seed, NULL, 0);
            const struct metrics *m = sim_metrics(s);
            size_t server = m->nlayers;
            pass += m->att_max[server] == cases[i].expect &&
                    gsl_histogram_get(m->att[server], cases[i].expect) ==
                        (double)m->outcomes[OUT_EXHAUSTED] &&
                    m->outcomes[OUT_EXHAUSTED] > 1000;
            sim_destroy(s);
        }
        claim_require(cases[i].name, "attempts at the server", pass);
    }
}

/* collapse: without backoff the spike tips the service into retries it
 * never leaves; with full jitter it recovers. Observed over seeds 1..40 (the
 * test runs 1..20):
 * without backoff metastable (ok 21-22 % over the run); with full jitter
 * recovered 26.5-28.5 s after the spike (ok 99.4 %): ok is back at once,
 * but requests that arrived just after the spike still time out and wait
 * out retries of up to 20 s, so their p99 is back in band only then. */
static void collapse_claim(void **state)
{
    (void)state;
    const char *full[] = {"layer.app.backoff=full"};
    unsigned down = 0, up = 0;
    for (unsigned seed = 1; seed <= SEEDS; seed++) {
        struct sim *s = run_builtin("collapse", seed, NULL, 0);
        size_t n = sim_metrics(s)->nbuckets;
        down += summary_of(s).verdict == VERDICT_METASTABLE && ok_between(s, n - 60, n) < 0.05;
        sim_destroy(s);
        s = run_builtin("collapse", seed, full, 1);
        struct summary o = summary_of(s);
        up += o.recovered == 1 && o.recovery_s < 35 && ok_between(s, n - 60, n) > 0.98;
        sim_destroy(s);
    }
    claim_require("collapse", "no backoff: metastable", down);
    claim_require("collapse", "full jitter: recovered", up);
}

/* omission over the gallery's first 20 s: with 15 ms timeouts the queue
 * runs away, without them it stays short. Observed over seeds 1..40, in
 * the last 5 s: with timeouts ok 0.000, 289,000-395,000 queued at the
 * peak; without, ok 99.6-100 %, at most 79 queued. (Over the whole 20 s
 * ok is 0.3-26 % with timeouts: the runaway starts at a random moment;
 * over the scenario's 60 s, 0.1-7.5 %.) */
static double mean_queue(const struct sim *s, size_t b)
{
    const struct metrics *m = sim_metrics(s);
    return m->b[b].area_queue / (double)m->bucket_ns;
}

static void omission_claim(void **state)
{
    (void)state;
    const char *timeouts[] = {"run.duration=20s"};
    const char *patient[] = {"run.duration=20s", "layer.app.timeout=none"};
    unsigned runaway = 0, stable = 0;
    for (unsigned seed = 1; seed <= SEEDS; seed++) {
        struct sim *s = run_builtin("omission", seed, timeouts, 1);
        size_t n = sim_metrics(s)->nbuckets; /* 500 ms buckets */
        runaway += ok_between(s, n - 10, n) < 0.1 && mean_queue(s, n - 1) > 10000;
        sim_destroy(s);
        s = run_builtin("omission", seed, patient, 2);
        stable += ok_between(s, n - 10, n) > 0.99 && mean_queue(s, n - 1) < 1000;
        sim_destroy(s);
    }
    claim_require("omission", "15 ms timeouts: the queue runs away", runaway);
    claim_require("omission", "no timeout: stable", stable);
}

/* orbit: after the surge the queue stays full with retries; without
 * retries the server recovers. Observed over seeds 1..20 at 75 % load:
 * with retries metastable on 20; without, recovered on 20. */
static void orbit_claim(void **state)
{
    (void)state;
    const char *one[] = {"layer.app.attempts=1"};
    unsigned stuck = 0, drained = 0;
    for (unsigned seed = 1; seed <= SEEDS; seed++) {
        struct sim *s = run_builtin("orbit", seed, NULL, 0);
        stuck += summary_of(s).verdict == VERDICT_METASTABLE;
        sim_destroy(s);
        s = run_builtin("orbit", seed, one, 1);
        drained += summary_of(s).verdict == VERDICT_RECOVERED;
        sim_destroy(s);
    }
    claim_require_all("orbit", "retries: metastable", stuck);
    claim_require_all("orbit", "attempts = 1: recovered", drained);
}

/* payments: customers charged twice; the gallery compares, with full
 * jitter, a deduplicating gateway and retries on 409/503/timeouts only,
 * no key against an idempotency key. Observed over seeds 1..20: 80,099-
 * 80,537 duplicates as shipped, 80,053-80,503 with the fixes but no key,
 * none with the key. */
static void payments_claim(void **state)
{
    (void)state;
    const char *nokey[] = {"load.key=false",          "layer.client.backoff=full",
                           "layer.client.base=100ms", "layer.client.cap=2s",
                           "server.dedup=true",       "layer.client.retry_on=timeout 409 503"};
    const char *key[] = {"load.key=true",           "layer.client.backoff=full",
                         "layer.client.base=100ms", "layer.client.cap=2s",
                         "server.dedup=true",       "layer.client.retry_on=timeout 409 503"};
    unsigned shipped = 0, without = 0, with = 0;
    for (unsigned seed = 1; seed <= SEEDS; seed++) {
        struct sim *s = run_builtin("payments", seed, NULL, 0);
        shipped += sim_metrics(s)->duplicates > 10000;
        sim_destroy(s);
        s = run_builtin("payments", seed, nokey, 6);
        without += sim_metrics(s)->duplicates > 10000;
        sim_destroy(s);
        s = run_builtin("payments", seed, key, 6);
        with += sim_metrics(s)->duplicates == 0;
        sim_destroy(s);
    }
    claim_require("payments", "as shipped: charged twice", shipped);
    claim_require("payments", "fixes without a key: charged twice", without);
    claim_require("payments", "with a key: never charged twice", with);
}

/* retry-after: ignoring Retry-After multiplies the load on the API more
 * than honouring it, and gets fewer requests through. Observed over seeds
 * 1..20, server arrivals over offered requests from 30 s to 60 s: honour
 * 2.19-2.33, ignore 2.79-2.93; ok 92.6-94.3 % against 89.2-91.0 %. */
static void retry_after_claim(void **state)
{
    (void)state;
    const char *ignore[] = {"layer.app.retry_after=ignore"};
    unsigned honour_ok = 0, ignore_more = 0;
    for (unsigned seed = 1; seed <= SEEDS; seed++) {
        struct sim *s = run_builtin("retry-after", seed, NULL, 0);
        double h = arrivals_between(s, 60, 120), hok = ok_share(s); /* 500 ms buckets */
        sim_destroy(s);
        s = run_builtin("retry-after", seed, ignore, 1);
        double i = arrivals_between(s, 60, 120), iok = ok_share(s);
        sim_destroy(s);
        honour_ok += hok > iok;
        ignore_more += i > 1.1 * h;
    }
    claim_require("retry-after", "honour: more ok", honour_ok);
    claim_require("retry-after", "ignore: more load on the API", ignore_more);
}

/* ratelimit-403: the fixed 60 s wait moves the rejected part of the batch
 * (60-90 s) a minute later; 500s are never retried. Observed over seeds
 * 1..20, the server's arrivals per second: retrying 403, 124-133 in
 * 120-150 s against 28-32 in 150-180 s; without retries 28-32 in both;
 * failed requests are the 500s alone with the retries (94-130), 2,962-
 * 3,198 without. */
static void ratelimit_403_claim(void **state)
{
    (void)state;
    const char *none[] = {"layer.client.retry_on=none"};
    unsigned echo = 0, flat = 0;
    for (unsigned seed = 1; seed <= SEEDS; seed++) {
        struct sim *s = run_builtin("ratelimit-403", seed, NULL, 0);
        const struct metrics *m = sim_metrics(s);
        double late = arrivals_between(s, 120, 150), after = arrivals_between(s, 150, 180);
        uint64_t failed = m->outcomes[OUT_FAILED], ok = m->outcomes[OUT_OK];
        echo += late > 3 * after && failed == m->errors[CLS_500];
        sim_destroy(s);
        s = run_builtin("ratelimit-403", seed, none, 1);
        m = sim_metrics(s);
        late = arrivals_between(s, 120, 150);
        after = arrivals_between(s, 150, 180);
        flat += late < 1.3 * after && m->outcomes[OUT_FAILED] > 10 * failed &&
                m->outcomes[OUT_OK] < ok;
        sim_destroy(s);
    }
    claim_require("ratelimit-403", "retry 403 after 60 s: the batch again a minute later", echo);
    claim_require("ratelimit-403", "no retries: no echo, more failures", flat);
}

/* outage-breaker: the breaker cuts the load on the dead service to a probe
 * every 5 s and service resumes within 5 s; without it, three times the
 * normal load. Observed over seeds 1..20, server arrivals per second in
 * 61-90 s: breaker 0.2, none 1,488-1,519; both recovered 0 s after the
 * outage. */
static void outage_breaker_claim(void **state)
{
    (void)state;
    const char *none[] = {"layer.app.breaker=none"};
    unsigned cut = 0, full = 0;
    for (unsigned seed = 1; seed <= SEEDS; seed++) {
        struct sim *s = run_builtin("outage-breaker", seed, NULL, 0);
        struct summary o = summary_of(s);
        cut += arrivals_between(s, 61, 90) / 29 < 1 && o.recovered == 1 && o.recovery_s <= 5;
        sim_destroy(s);
        s = run_builtin("outage-breaker", seed, none, 1);
        full += arrivals_between(s, 61, 90) / 29 > 1200;
        sim_destroy(s);
    }
    claim_require("outage-breaker", "gobreaker: a probe every 5 s", cut);
    claim_require("outage-breaker", "no breaker: three times the load", full);
}

/* breaker-scope with 1,000 clients (the gallery's): per-client breakers
 * let far more through to the dead service than a shared one. Observed
 * over seeds 1..20, server arrivals per second in 30-90 s: per client
 * 166-167, shared 0.2-0.3 (per client with 100 clients 18.3-18.4, with 10
 * 1.8-2.0). */
static void breaker_scope_claim(void **state)
{
    (void)state;
    const char *client[] = {"load.clients=1000", "layer.app.breaker_scope=client"};
    const char *shared[] = {"load.clients=1000", "layer.app.breaker_scope=shared"};
    unsigned leaky = 0, tight = 0;
    for (unsigned seed = 1; seed <= SEEDS; seed++) {
        struct sim *s = run_builtin("breaker-scope", seed, client, 2);
        double c = arrivals_between(s, 30, 90) / 60;
        sim_destroy(s);
        s = run_builtin("breaker-scope", seed, shared, 2);
        double sh = arrivals_between(s, 30, 90) / 60;
        sim_destroy(s);
        leaky += c > 100 && c > 50 * sh;
        tight += sh < 2;
    }
    claim_require("breaker-scope", "per-client breakers: far more load", leaky);
    claim_require("breaker-scope", "one shared breaker: a probe at a time", tight);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(storm_claim),          cmocka_unit_test(storm_budget_claim),
        cmocka_unit_test(herd_claim),           cmocka_unit_test(jitter_claim),
        cmocka_unit_test(layers_claim),         cmocka_unit_test(collapse_claim),
        cmocka_unit_test(omission_claim),       cmocka_unit_test(orbit_claim),
        cmocka_unit_test(payments_claim),       cmocka_unit_test(retry_after_claim),
        cmocka_unit_test(ratelimit_403_claim),  cmocka_unit_test(outage_breaker_claim),
        cmocka_unit_test(breaker_scope_claim),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
