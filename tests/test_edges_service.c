/*
 * Exact edges of the queue model (sim/model/service.c) that the mechanical
 * mutants (scripts/mutagen.py) showed no other test to pin: each case is a
 * few requests followed by hand, with literal expected numbers.
 */
#include "rs_test.h"

#include <gsl/gsl_rng.h>
#include <math.h>
#include <string.h>

#include "simctx.h"

#define M(s) sim_metrics(s)

/* One request every second from 1 s to 9 s (the quiet phase from 9.5 s
 * stops arrivals). */
#define ONE_PER_SECOND                                                                             \
    "[run]\nduration = 30s\n[load]\narrival = uniform\nrate = 1/s\n"                               \
    "[phase quiet]\nstart = 9500ms\nend = 30s\nrate = x0\n"

/* ---- the injected errors' draw, with the draw fixed ---- */

/* A stream whose every uniform draw is fixed_u: it replaces the injected
 * errors' stream (RNG_ERRORS, used by nothing else) so that a test can put
 * the draw exactly on the border between two classes. */
static double fixed_u;
static unsigned long fixed_get(void *state)
{
    (void)state;
    return (unsigned long)(fixed_u * 4294967296.0);
}
static double fixed_get_double(void *state)
{
    (void)state;
    return fixed_u;
}
static const gsl_rng_type fixed_type = {"fixed", 0xffffffffUL, 0, 0, NULL, fixed_get,
                                        fixed_get_double};

/* Runs text with the injected errors' draw fixed at u; the caller
 * destroys the result. */
static struct sim *run_with_draw(const char *text, const char *const *sets, size_t nsets, double u)
{
    struct scenario sc;
    char err[512];
    load_or_fail(&sc, text, sets, nsets);
    struct sim *s = sim_create(&sc, 0, err, sizeof err);
    if (s == NULL)
        fail_msg("sim_create: %s", err);
    const gsl_rng_type *own = s->rng.s[RNG_ERRORS]->type;
    fixed_u = u;
    s->rng.s[RNG_ERRORS]->type = &fixed_type;
    int rc = sim_run(s, NULL, NULL, err, sizeof err);
    s->rng.s[RNG_ERRORS]->type = own;
    if (rc != 0)
        fail_msg("sim_run: %s", err);
    return s;
}

/* error_400, error_500, error_503 and business take consecutive half-open
 * slices of the uniform draw u ∈ [0, 1): [0, p400) answers 400, the next
 * p500 answers 500, and so on; the rest is ok. Each class so has exactly
 * its probability (u is a multiple of 2⁻³²), and a draw that lands exactly
 * on a slice's upper end belongs to the next one. With u = 0.5 fixed and
 * the slices below 0.5 summing to exactly 0.5, every one of the 9 requests
 * answers ok; with u one step below, the class whose slice ends at 0.5. */
static void injected_error_slices_are_half_open(void **state)
{
    (void)state;
    const char *text = ONE_PER_SECOND "[server]\nworkers = 1\nservice = const(1ms)\n";
    static const struct {
        const char *sets[2];
        enum errclass below; /* the class of a draw just under 0.5 */
    } cases[] = {
        {{"server.error_400=0.5", "server.error_503=0"}, CLS_400},
        {{"server.error_400=0.25", "server.error_500=0.25"}, CLS_500},
        {{"server.error_400=0.25", "server.error_503=0.25"}, CLS_503},
        {{"server.error_500=0.25", "server.business=0.25"}, CLS_BUSINESS},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        struct sim *s = run_with_draw(text, cases[i].sets, 2, 0.5);
        assert_int_equal(M(s)->requests, 9);
        assert_int_equal(M(s)->outcomes[OUT_OK], 9);
        sim_destroy(s);
        s = run_with_draw(text, cases[i].sets, 2, 0.5 - 1.0 / 4294967296.0);
        if (cases[i].below == CLS_BUSINESS) /* an answer, not an error */
            assert_int_equal(M(s)->outcomes[OUT_BUSINESS], 9);
        else
            assert_int_equal(M(s)->errors[cases[i].below], 9);
        assert_int_equal(M(s)->outcomes[OUT_OK], 0);
        sim_destroy(s);
    }
}

/* ---- services.csv rows ---- */

/* sim_service_row (sim.h) answers for replica 0 (the service's total) or 1
 * … replicas of a service that exists, over a bucket the run has, and only
 * for a scenario with services; anything else is false. Here: one service
 * of 2 replicas, arrivals at 1 s and 2 s of a 3 s run in 1 s buckets (3
 * buckets), so bucket 1 holds one arrival and bucket 2 the other. */
static void service_rows_exist_only_within_bounds(void **state)
{
    (void)state;
    const char *text = "[run]\nduration = 3s\n[load]\narrival = uniform\nrate = 1/s\n"
                       "[service api]\nreplicas = 2\nbalancer = round-robin\nworkers = 1\n"
                       "service = const(1ms)\n";
    struct sim *s = run_text(text, NULL, 0);
    struct sim_service_row r;
    assert_int_equal(M(s)->nbuckets, 3);
    assert_true(sim_service_row(s, 0, 0, 1, &r));
    assert_int_equal(r.arrivals, 1);
    assert_true(sim_service_row(s, 0, 0, 2, &r)); /* the last bucket */
    assert_int_equal(r.arrivals, 1);
    assert_true(sim_service_row(s, 0, 2, 0, &r)); /* the last replica */
    assert_false(sim_service_row(s, 0, 3, 0, &r)); /* replica 3 of 2 */
    assert_false(sim_service_row(s, 0, 0, 3, &r)); /* bucket 3 of 0 … 2 */
    assert_false(sim_service_row(s, 1, 0, 0, &r)); /* service 1 of 0 … 0 */
    sim_destroy(s);

    /* A lone [server] is not a graph: no services.csv, no rows. */
    s = run_text(ONE_PER_SECOND "[server]\nworkers = 1\nservice = const(1ms)\n", NULL, 0);
    assert_false(sim_service_row(s, 0, 0, 0, &r));
    sim_destroy(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(injected_error_slices_are_half_open),
        cmocka_unit_test(service_rows_exist_only_within_bounds),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
