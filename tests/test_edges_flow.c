/*
 * Edges of the request flow (layer.c, load.c, sim.c): small scenarios, each
 * at a boundary a mechanical mutant (scripts/mutagen.py) moves — a deadline
 * reached at the very instant, a Retry-After of zero, a phase that starts
 * exactly when another ends — with the numbers worked out by hand.
 */
#include "rs_test.h"

#define M(s) sim_metrics(s)

/* One request every second from 1 s to 9 s (the quiet phase from 9.5 s
 * stops arrivals), as in test_semantics.c. */
#define ONE_PER_SECOND                                                                             \
    "[run]\nduration = 30s\n[load]\narrival = uniform\nrate = 1/s\n"                               \
    "[phase quiet]\nstart = 9500ms\nend = 30s\nrate = x0\n"

/* README: with `retry_after = honor` "a Retry-After replaces the backoff
 * delay". A Retry-After of 0 is a Retry-After too: the retries go at once
 * and each counts as a Retry-After wait (2 per request, 18), where the
 * 100 ms backoff would make every request last 200 ms. */
static void retry_after_zero_replaces_the_backoff(void **state)
{
    (void)state;
    const char *text = ONE_PER_SECOND
        "[phase down]\nstart = 0\nend = 30s\noutage = error\nretry_after = 0\n"
        "[server]\nworkers = 1\nservice = const(1ms)\n"
        "[layer app]\nattempts = 3\nbackoff = constant\nbase = 100ms\nretry_after = honor\n";
    struct sim *s = run_text(text, NULL, 0);
    assert_true(M(s)->outcomes[OUT_EXHAUSTED] == 9);
    assert_true(M(s)->retry_after_waits == 18);
    assert_true(M(s)->lat_all.max == 0);
    sim_destroy(s);
}

/* A call whose propagated deadline has already come when it starts makes
 * no attempt: the outer layer's 100 ms deadline is carried down a 100 ms
 * hop, so the sidecar's call starts exactly at its deadline and ends
 * `deadline` at once; nothing reaches the server. */
static void call_starting_at_its_deadline_makes_no_attempt(void **state)
{
    (void)state;
    const char *text = ONE_PER_SECOND
        "[server]\nworkers = 1\nservice = const(1ms)\n"
        "[layer app]\nattempts = 1\ndeadline = 100ms\npropagate_deadline = true\n"
        "request_latency = const(100ms)\n"
        "[layer sidecar]\nattempts = 1\n";
    struct sim *s = run_text(text, NULL, 0);
    assert_true(M(s)->outcomes[OUT_DEADLINE] == 9);
    assert_true(M(s)->server_arrivals == 0);
    assert_true(M(s)->lat_all.min == 100 * RS_MS && M(s)->lat_all.max == 100 * RS_MS);
    sim_destroy(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(retry_after_zero_replaces_the_backoff),
        cmocka_unit_test(call_starting_at_its_deadline_makes_no_attempt),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
