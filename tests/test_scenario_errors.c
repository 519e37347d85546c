/*
 * Bad scenario input: a table of malformed inputs, each with the exact
 * message it must produce (file and line, section, key, value, what is
 * allowed), `check`-style reporting of every problem at once, and the
 * limits on lines and on the number of problems listed.
 */
#define _POSIX_C_SOURCE 200809L

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>

#include "scenario.h"

/* A valid scenario; each case appends lines to it or overrides a key. */
#define BASE "[run]\nname = t\n[load]\nrate = 100/s\n[server]\nservice = exp(10ms)\n"

struct bad_case {
    const char *text; /* appended to BASE */
    const char *set;  /* or an override */
    const char *msg;  /* the first message, exactly */
};

#define SPACES_10 "          "
#define SPACES_100 SPACES_10 SPACES_10 SPACES_10 SPACES_10 SPACES_10 \
                   SPACES_10 SPACES_10 SPACES_10 SPACES_10 SPACES_10

static const struct bad_case cases[] = {
#include "bad_inputs.inc"
};

static void each_bad_input_has_its_message(void **state)
{
    (void)state;
    int failures = 0;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char text[2048];
        snprintf(text, sizeof text, "%s%s", BASE, cases[i].text ? cases[i].text : "");
        struct scenario sc;
        struct scenario_diag d = {0};
        const char *sets[1] = {cases[i].set};
        int n = scenario_load_text(&sc, text, "bad.ini", sets, cases[i].set ? 1 : 0, &d);
        if (n == 0 || strcmp(d.msg[0], cases[i].msg) != 0) {
            /* stderr directly: cmocka's print_error truncates long lines */
            fprintf(stderr, "case %zu (%s%s):\n  expected: %s\n  got:      %s\n", i,
                        cases[i].text ? cases[i].text : "--set ", cases[i].set ? cases[i].set : "",
                        cases[i].msg, n ? d.msg[0] : "(accepted)");
            failures++;
        }
        scenario_diag_fini(&d);
    }
    assert_int_equal(failures, 0);
}

static void base_is_valid_and_every_problem_is_reported(void **state)
{
    (void)state;
    struct scenario sc;
    struct scenario_diag d = {0};
    assert_int_equal(scenario_load_text(&sc, BASE, "ok.ini", NULL, 0, &d), 0);
    /* A section with no keys exists, with its defaults. */
    assert_int_equal(scenario_load_text(&sc, BASE "[layer app]\n[layer sidecar]\n", "ok.ini", NULL, 0, &d), 0);
    assert_int_equal(sc.nlayers, 2);
    assert_string_equal(sc.layers[1].name, "sidecar");
    assert_int_equal(sc.layers[1].attempts, 1);
    const char *text = BASE "[load]\nrat = 5/s\n[server]\nworkers = 0\n[layer app]\nbackoff = jitter\n";
    int n = scenario_load_text(&sc, text, "three.ini", NULL, 0, &d);
    assert_int_equal(n, 3);
    assert_int_equal(d.n, 3);
    scenario_diag_fini(&d);
}

static void effective_scenario_round_trips(void **state)
{
    (void)state;
    struct scenario a, b;
    struct scenario_diag d = {0};
    const char *sets[] = {"layer.app.backoff=decorrelated", "layer.app.base=5ms",
                          "phase.spike.start=10s", "phase.spike.end=20s", "phase.spike.rate=x2.5",
                          "run.bucket=250ms", "run.warmup=5s"};
    assert_int_equal(scenario_load_text(&a, BASE, "a.ini", sets, 7, &d), 0);
    char buf[8192];
    FILE *f = fmemopen(buf, sizeof buf, "w");
    assert_int_equal(scenario_write_ini(&a, f), 0);
    fclose(f);
    assert_int_equal(scenario_load_text(&b, buf, "b.ini", NULL, 0, &d), 0);
    memset(a.source, 0, sizeof a.source);
    memset(b.source, 0, sizeof b.source);
    assert_true(a.layers[0].bp.multiplier == 3.0); /* decorrelated's default */
    assert_memory_equal(&a.layers[0], &b.layers[0], sizeof a.layers[0]);
    assert_memory_equal(&a.phases[0], &b.phases[0], sizeof a.phases[0]);
    assert_true(a.rate == b.rate && a.duration == b.duration && a.seed == b.seed);
    assert_true(a.bucket == b.bucket && a.warmup == b.warmup && a.workers == b.workers);
    assert_true(a.queue == b.queue && a.clients == b.clients && a.model == b.model);
    scenario_diag_fini(&d);
}

/* A line of SCENARIO_MAX_LINE characters (line ending aside) is read whole;
 * one more is refused, never cut short; comments may be longer. */
static void line_limit_is_exact(void **state)
{
    (void)state;
    char text[1024], pad[400];
    struct scenario sc;
    struct scenario_diag d = {0};
    const char *key = "duration = 20s";
    int fill = SCENARIO_MAX_LINE - (int)strlen(key);
    memset(pad, ' ', sizeof pad);
    snprintf(text, sizeof text, BASE "[run]\n%s%.*s\n", key, fill, pad);
    assert_int_equal(scenario_load_text(&sc, text, "ok.ini", NULL, 0, &d), 0);
    assert_true(sc.duration == 20 * RS_S);
    snprintf(text, sizeof text, BASE "[run]\n%s%.*s\r\n; %.*s\n", key, fill, pad, 300, pad);
    assert_int_equal(scenario_load_text(&sc, text, "ok.ini", NULL, 0, &d), 0);
    snprintf(text, sizeof text, BASE "[run]\n%s%.*s\n", key, fill + 1, pad);
    assert_int_equal(scenario_load_text(&sc, text, "long.ini", NULL, 0, &d), 1);
    assert_string_equal(d.msg[0], "long.ini:8: [run] duration = '20s...': the line is 198 characters long; at most 197 are allowed");
    scenario_diag_fini(&d);
}

/* The first SCENARIO_MAX_MESSAGES problems are listed, then one line
 * counts the rest; the count returned is of all of them, for each load. */
static void problems_past_the_limit_are_counted(void **state)
{
    (void)state;
    char text[4096];
    size_t used = (size_t)snprintf(text, sizeof text, "%s", BASE "[run]\n");
    for (int i = 0; i < 150; i++)
        used += (size_t)snprintf(text + used, sizeof text - used, "k%d = 1\n", i);
    struct scenario sc;
    struct scenario_diag d = {0};
    for (int load = 1; load <= 2; load++) {
        assert_int_equal(scenario_load_text(&sc, text, "many.ini", NULL, 0, &d), 150);
        assert_int_equal(d.n, (size_t)load * (SCENARIO_MAX_MESSAGES + 1));
        assert_string_equal(d.msg[d.n - 1], "many.ini: ... and 50 more problems (only the first 100 are listed)");
    }
    scenario_diag_fini(&d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(each_bad_input_has_its_message),
        cmocka_unit_test(base_is_valid_and_every_problem_is_reported),
        cmocka_unit_test(effective_scenario_round_trips),
        cmocka_unit_test(line_limit_is_exact),
        cmocka_unit_test(problems_past_the_limit_are_counted),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
