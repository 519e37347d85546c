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
#include "scenario_int.h"

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

/* The sections an unknown section's message lists are the parser's:
 * each listed one is accepted (NAME where, and only where, it needs one),
 * and every kind of scn_sect_names is listed once. */
static void unknown_section_lists_every_section(void **state)
{
    (void)state;
    struct scenario sc;
    struct scenario_diag d = {0};
    assert_true(scenario_load_text(&sc, BASE "[nosuch]\n", "bad.ini", NULL, 0, &d) > 0);
    const char *list = strstr(d.msg[0], "allowed: ");
    assert_non_null(list);
    char items[512];
    snprintf(items, sizeof items, "%s", list + strlen("allowed: "));
    scenario_diag_fini(&d);
    unsigned n = 0;
    for (char *p = strchr(items, '['); p != NULL; p = strchr(p + 1, '[')) {
        char *end = strchr(p, ']'), head[64], text[256];
        assert_non_null(end);
        snprintf(head, sizeof head, "%.*s", (int)(end - p - 1), p + 1);
        char *sp = strchr(head, ' ');
        bool named = sp != NULL && strcmp(sp, " NAME") == 0;
        if (sp)
            *sp = '\0';
        /* the header is accepted with its name (other problems, such as a
         * phase with no start, are the section's keys', not its name's) */
        snprintf(text, sizeof text, BASE "[%s%s]\n", head, named ? " n1" : "");
        scenario_load_text(&sc, text, "ok.ini", NULL, 0, &d);
        for (size_t i = 0; i < d.n; i++)
            if (strstr(d.msg[i], "section [") != NULL)
                fail_msg("[%s%s] was refused: %s", head, named ? " n1" : "", d.msg[i]);
        scenario_diag_fini(&d);
        snprintf(text, sizeof text, BASE "[%s%s]\n", head, named ? "" : " n1");
        assert_true(scenario_load_text(&sc, text, "bad.ini", NULL, 0, &d) > 0); /* refused the other way */
        assert_non_null(strstr(d.msg[0], named ? "needs a name" : "takes no name"));
        scenario_diag_fini(&d);
        bool known = false;
        for (int k = 0; k < S_NKINDS; k++)
            known = known || (strcmp(head, scn_sect_names[k]) == 0 && scn_sect_named((enum sect_kind)k) == named);
        assert_true(known);
        n++;
    }
    assert_int_equal(n, S_NKINDS);
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
    assert_true(a.bucket == b.bucket && a.warmup == b.warmup);
    assert_memory_equal(&a.services[0], &b.services[0], sizeof a.services[0]);
    assert_true(a.clients == b.clients && a.model == b.model);
    assert_false(a.graph || b.graph);
    scenario_diag_fini(&d);
}

/* Three services, named before they are defined: db is first in the file,
 * the clients call api (to = api), api calls auth and db three times. */
#define GRAPH                                                                                      \
    "[run]\nname = g\n[load]\nrate = 100/s\n"                                                     \
    "[service db]\nservice = exp(2ms)\nreplicas = 3\nbalancer = least-outstanding\n"             \
    "[service api]\nservice = exp(5ms)\ncalls = auth, db*3\nreplicas = 2\nbalancer = p2c\n"      \
    "service_after = const(1ms)\ndedup = true\n"                                                 \
    "[service auth]\nservice = exp(1ms)\ncalls = db\n"                                          \
    "[layer app]\nto = api\nattempts = 3\ntimeout = 100ms\nretry_on = timeout bulkhead\n"        \
    "[layer api-db]\nfrom = api\nto = db\nattempts = 2\nconcurrency = 10\n"                      \
    "concurrency_queue = unbounded\nconcurrency_wait = 50ms\n"                                   \
    "[phase slow]\nstart = 10s\nend = 20s\ntarget = db#2\nslowdown = 3\n"                        \
    "[phase lossy]\nstart = 10s\nend = 20s\ntarget = api-db\nloss = 0.1\nlatency = const(5ms)\n" \
    "[phase spike]\nstart = 30s\nend = 40s\nrate = x2\n"

static void service_graph_is_resolved(void **state)
{
    (void)state;
    struct scenario sc;
    struct scenario_diag d = {0};
    int n = scenario_load_text(&sc, GRAPH, "g.ini", NULL, 0, &d);
    for (size_t i = 0; i < d.n; i++)
        fprintf(stderr, "%s\n", d.msg[i]);
    assert_int_equal(n, 0);
    assert_true(sc.graph);
    assert_int_equal(sc.nservices, 3);
    assert_string_equal(sc.services[0].name, "db");
    assert_string_equal(sc.services[1].name, "api");
    assert_int_equal(sc.entry, 1);
    assert_int_equal(sc.services[0].replicas, 3);
    assert_int_equal(sc.services[0].balancer, BAL_LEAST_OUTSTANDING);
    assert_int_equal(sc.services[1].balancer, BAL_P2C);
    assert_int_equal(sc.services[1].ncalls, 2);
    assert_int_equal(sc.services[1].calls[0].service, 2);
    assert_int_equal(sc.services[1].calls[0].fanout, 1);
    assert_int_equal(sc.services[1].calls[1].service, 0);
    assert_int_equal(sc.services[1].calls[1].fanout, 3);
    assert_true(sc.services[1].has_after && !sc.services[0].has_after);
    assert_int_equal(sc.services[2].calls[0].service, 0);
    assert_int_equal(sc.layers[0].from_service, SCENARIO_CLIENT);
    assert_int_equal(sc.layers[0].to_service, 1);
    assert_true(errclass_in(sc.layers[0].retry_on, CLS_BULKHEAD));
    assert_int_equal(sc.layers[1].from_service, 1);
    assert_int_equal(sc.layers[1].to_service, 0);
    assert_int_equal(sc.layers[1].concurrency, 10);
    assert_true(sc.layers[1].concurrency_queue == -1);
    assert_true(sc.layers[1].concurrency_wait == 50 * RS_MS);
    assert_true(sc.layers[0].concurrency_wait == RS_TIME_NEVER);
    assert_int_equal(sc.phases[0].target_kind, TARGET_SERVICE);
    assert_int_equal(sc.phases[0].target_index, 0);
    assert_int_equal(sc.phases[0].target_replica, 2);
    assert_int_equal(sc.phases[1].target_kind, TARGET_LAYER);
    assert_int_equal(sc.phases[1].target_index, 1);
    assert_true(sc.phases[1].has_latency && sc.phases[1].loss == 0.1);
    assert_int_equal(sc.phases[2].target_kind, TARGET_NONE);
    scenario_diag_fini(&d);
}

/* [server] is [service server]: the same keys, the same service. */
static void server_is_service_server(void **state)
{
    (void)state;
    struct scenario a, b;
    struct scenario_diag d = {0};
    const char *set_server[] = {"server.workers=4"};
    const char *set_service[] = {"service.server.workers=4"};
    assert_int_equal(scenario_load_text(&a, BASE, "a.ini", set_server, 1, &d), 0);
    assert_int_equal(scenario_load_text(&b, BASE, "b.ini", set_service, 1, &d), 0);
    assert_int_equal(a.nservices, 1);
    assert_int_equal(b.nservices, 1);
    assert_int_equal(a.services[0].workers, 4);
    assert_memory_equal(&a.services[0], &b.services[0], sizeof a.services[0]);
    assert_false(a.graph);
    assert_false(b.graph); /* [service server] with [server]'s keys is the shorthand */
    char wa[8192] = {0}, wb[8192] = {0};
    FILE *fa = fmemopen(wa, sizeof wa - 1, "w"), *fb = fmemopen(wb, sizeof wb - 1, "w");
    assert_int_equal(scenario_write_ini(&a, fa), 0);
    assert_int_equal(scenario_write_ini(&b, fb), 0);
    fclose(fa);
    fclose(fb);
    assert_string_equal(strchr(wa, '\n'), strchr(wb, '\n')); /* all but the source line */
    const char *api = "[run]\nname = t\n[load]\nrate = 100/s\n[service api]\nservice = exp(10ms)\n";
    assert_int_equal(scenario_load_text(&b, api, "b.ini", NULL, 0, &d), 0);
    assert_true(b.graph); /* another name: written as [service api] to keep it */
    const char *text = "[run]\nname = t\n[load]\nrate = 100/s\n[service server]\nservice = exp(10ms)\n";
    assert_int_equal(scenario_load_text(&b, text, "b.ini", NULL, 0, &d), 0);
    assert_int_equal(scenario_load_text(&a, BASE, "a.ini", NULL, 0, &d), 0);
    assert_memory_equal(&a.services[0], &b.services[0], sizeof a.services[0]);
    assert_memory_equal(&a.layers[0], &b.layers[0], sizeof a.layers[0]);
    /* with neither, one service `server` with the defaults */
    const char *none = "[run]\nname = t\n[load]\nrate = 100/s\n";
    const char *svc[] = {"server.service=exp(10ms)"};
    assert_int_equal(scenario_load_text(&b, none, "b.ini", svc, 1, &d), 0);
    assert_int_equal(b.nservices, 1);
    assert_string_equal(b.services[0].name, "server");
    assert_memory_equal(&a.services[0], &b.services[0], sizeof a.services[0]);
    scenario_diag_fini(&d);
}

/* --set service.NAME.KEY creates the service, or sets its key. */
static void set_creates_a_service(void **state)
{
    (void)state;
    struct scenario sc;
    struct scenario_diag d = {0};
    const char *sets[] = {"service.db.workers=4", "service.db.service=exp(1ms)",
                          "server.calls=db*2", "layer.pool.from=server", "layer.pool.to=db",
                          "layer.app.attempts=2"};
    assert_int_equal(scenario_load_text(&sc, BASE, "s.ini", sets, 6, &d), 0);
    assert_true(sc.graph);
    assert_int_equal(sc.nservices, 2);
    assert_string_equal(sc.services[1].name, "db");
    assert_int_equal(sc.services[1].workers, 4);
    assert_int_equal(sc.services[0].calls[0].service, 1);
    assert_int_equal(sc.services[0].calls[0].fanout, 2);
    assert_int_equal(sc.entry, 0);
    assert_int_equal(sc.layers[0].from_service, 0); /* pool: the first layer given */
    assert_int_equal(sc.layers[1].from_service, SCENARIO_CLIENT);
    assert_int_equal(sc.layers[1].to_service, 0);
    scenario_diag_fini(&d);
}

/* Writing the effective scenario and loading it gives the same scenario,
 * graph included; a scenario without graph keys is written as before. */
static void graph_round_trips(void **state)
{
    (void)state;
    struct scenario a, b;
    struct scenario_diag d = {0};
    assert_int_equal(scenario_load_text(&a, GRAPH, "a.ini", NULL, 0, &d), 0);
    char buf[16384];
    FILE *f = fmemopen(buf, sizeof buf, "w");
    assert_int_equal(scenario_write_ini(&a, f), 0);
    fclose(f);
    int n = scenario_load_text(&b, buf, "b.ini", NULL, 0, &d);
    for (size_t i = 0; i < d.n; i++)
        fprintf(stderr, "%s\n", d.msg[i]);
    assert_int_equal(n, 0);
    assert_true(b.graph);
    assert_int_equal(a.nservices, b.nservices);
    assert_int_equal(a.nlayers, b.nlayers);
    assert_int_equal(a.nphases, b.nphases);
    assert_int_equal(a.entry, b.entry);
    for (unsigned i = 0; i < a.nservices; i++)
        assert_memory_equal(&a.services[i], &b.services[i], sizeof a.services[i]);
    for (unsigned i = 0; i < a.nlayers; i++)
        assert_memory_equal(&a.layers[i], &b.layers[i], sizeof a.layers[i]);
    for (unsigned i = 0; i < a.nphases; i++)
        assert_memory_equal(&a.phases[i], &b.phases[i], sizeof a.phases[i]);
    assert_non_null(strstr(buf, "[service api]\n"));
    assert_non_null(strstr(buf, "calls = auth db*3\n"));
    assert_non_null(strstr(buf, "calls = none\n"));

    assert_int_equal(scenario_load_text(&a, BASE, "a.ini", NULL, 0, &d), 0);
    assert_false(a.graph);
    f = fmemopen(buf, sizeof buf, "w");
    assert_int_equal(scenario_write_ini(&a, f), 0);
    fclose(f);
    assert_non_null(strstr(buf, "\n[server]\nmodel = queue\n"));
    assert_null(strstr(buf, "[service"));
    assert_null(strstr(buf, "replicas"));
    assert_null(strstr(buf, "concurrency"));
    assert_null(strstr(buf, "from ="));
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

/* Names of the longest length (47) are read whole from a section header
 * (libinih keeps 49 characters of "service NAME"), and the longest value
 * --set takes for calls is written back on a line the parser reads: the
 * effective scenario of anything accepted is accepted, and means the same. */
static void longest_names_round_trip(void **state)
{
    (void)state;
    char name[SCENARIO_NAME_MAX], text[4096], calls[400], set[420];
    memset(name, 'n', SCENARIO_NAME_MAX - 1);
    name[SCENARIO_NAME_MAX - 1] = '\0';
    size_t used = (size_t)snprintf(text, sizeof text, BASE "[layer %s]\nattempts = 2\n", name);
    for (int i = 0; i < 8; i++) {
        name[0] = (char)('a' + i);
        used += (size_t)snprintf(text + used, sizeof text - used,
                                 "[service %s]\nworkers = 1\nservice = exp(1ms)\n", name);
    }
    /* the longest calls value a line (and so a --set) holds: "calls = " and
     * 189 characters, three of the longest names and blanks between them */
    size_t n = 0;
    for (int i = 0; i < 3; i++) {
        name[0] = (char)('a' + i);
        n += (size_t)snprintf(calls + n, sizeof calls - n, "%s%s*64", i ? ", " : "", name);
    }
    int pad = SCENARIO_MAX_LINE - 8 - (int)n;
    assert_true(pad > 0);
    snprintf(set, sizeof set, "server.calls=%.*s%*s%s", 51, calls, pad, "", calls + 51); /* after a comma */
    assert_int_equal(strlen(set), strlen("server.calls=") + SCENARIO_MAX_LINE - 8);
    const char *sets[] = {set};
    struct scenario a, b;
    struct scenario_diag d = {0};
    int rc = scenario_load_text(&a, text, "a.ini", sets, 1, &d);
    for (size_t i = 0; i < d.n; i++)
        fprintf(stderr, "%s\n", d.msg[i]);
    assert_int_equal(rc, 0);
    assert_int_equal(a.nservices, 9);
    name[0] = 'h';
    assert_string_equal(a.services[8].name, name);
    assert_int_equal(a.services[0].ncalls, 3);
    char buf[16384];
    FILE *f = fmemopen(buf, sizeof buf, "w");
    assert_int_equal(scenario_write_ini(&a, f), 0);
    fclose(f);
    rc = scenario_load_text(&b, buf, "b.ini", NULL, 0, &d);
    for (size_t i = 0; i < d.n; i++)
        fprintf(stderr, "%s\n", d.msg[i]);
    assert_int_equal(rc, 0);
    assert_int_equal(b.nservices, a.nservices);
    for (unsigned i = 0; i < a.nservices; i++)
        assert_memory_equal(&a.services[i], &b.services[i], sizeof a.services[i]);
    assert_string_equal(b.layers[0].name, a.layers[0].name);
    scenario_diag_fini(&d);
}

/* The reader, which names the sections, agrees with libinih about which
 * lines are headers: after a UTF-8 byte order mark; after any blank
 * libinih skips (\v, \f) when no key came since the last header; and a
 * blank-led line after a key is a continuation of its value (libinih's
 * multi-line values: here, a key given twice), not a header. */
static void headers_as_libinih_reads_them(void **state)
{
    (void)state;
    struct scenario sc;
    struct scenario_diag d = {0};
    const char text[] = "\xEF\xBB\xBF" BASE "[layer app]\nattempts = 3\n[layer b]\n\f [layer c]\nattempts = 2\n";
    int rc = scenario_load_text(&sc, text, "bom.ini", NULL, 0, &d);
    for (size_t i = 0; i < d.n; i++)
        fprintf(stderr, "%s\n", d.msg[i]);
    assert_int_equal(rc, 0);
    assert_string_equal(sc.name, "t");
    assert_int_equal(sc.nlayers, 3);
    assert_string_equal(sc.layers[0].name, "app");
    assert_int_equal(sc.layers[0].attempts, 3);
    assert_string_equal(sc.layers[2].name, "c");
    assert_int_equal(sc.layers[2].attempts, 2);
    const char cont[] = BASE "[layer d]\nattempts = 2\n\v[layer e]\n";
    assert_int_equal(scenario_load_text(&sc, cont, "cont.ini", NULL, 0, &d), 2);
    assert_string_equal(d.msg[d.n - 2], "cont.ini:9: [layer d] attempts given twice (first at line 8)");
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
        cmocka_unit_test(unknown_section_lists_every_section),
        cmocka_unit_test(base_is_valid_and_every_problem_is_reported),
        cmocka_unit_test(effective_scenario_round_trips),
        cmocka_unit_test(service_graph_is_resolved),
        cmocka_unit_test(server_is_service_server),
        cmocka_unit_test(set_creates_a_service),
        cmocka_unit_test(graph_round_trips),
        cmocka_unit_test(line_limit_is_exact),
        cmocka_unit_test(longest_names_round_trip),
        cmocka_unit_test(headers_as_libinih_reads_them),
        cmocka_unit_test(problems_past_the_limit_are_counted),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
