/*
 * serve's api (sim/serve/api.c) without HTTP: a run's answer holds the
 * files the command line writes for the same scenario and seed; pasted
 * text reads no file; the page's limits refuse or stop a run with a
 * message; every answer is well-formed JSON text (escaped strings,
 * balanced brackets) and valid UTF-8, whatever bytes the request held.
 */
#define _POSIX_C_SOURCE 200809L
#include "rs_test.h"

#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "api.h"

/* What f received, as a string (open_memstream). */
struct answer {
    char *buf;
    size_t len;
    int status;
};

static FILE *answer_open(struct answer *a)
{
    a->buf = NULL, a->len = 0;
    FILE *f = open_memstream(&a->buf, &a->len);
    assert_non_null(f);
    return f;
}

/* Brackets balance outside strings, and no raw control byte sits in one. */
static void assert_json_shape(const char *s)
{
    int depth = 0;
    bool in = false;
    for (const char *p = s; *p; p++) {
        if (in) {
            assert_true((unsigned char)*p >= 0x20);
            if (*p == '\\')
                p++;
            else if (*p == '"')
                in = false;
        } else if (*p == '"')
            in = true;
        else if (*p == '{' || *p == '[')
            depth++;
        else if (*p == '}' || *p == ']')
            assert_true(--depth >= 0);
    }
    assert_false(in);
    assert_int_equal(depth, 0);
}

static void run_answer(struct answer *a, const struct api_request *rq, const struct api_limits *lim)
{
    FILE *f = answer_open(a);
    a->status = api_run(f, rq, lim);
    assert_int_equal(fclose(f), 0);
    assert_json_shape(a->buf);
}

/* summary.csv as the command line writes it, without wall_s (the last column). */
static char *cli_summary(const char *name, const char *const *sets, size_t nsets)
{
    struct scenario sc;
    struct scenario_diag d = {0};
    assert_int_equal(scenario_load(&sc, name, sets, nsets, &d), 0);
    scenario_diag_fini(&d);
    struct sim *s = run_or_fail(&sc, 0);
    struct summary sum;
    output_summarise(s, 0, &sum);
    char *buf = rs_summary_csv(s, &sum, false);
    sim_destroy(s);
    *strrchr(buf, ',') = '\0';
    return buf;
}

/* The JSON string after "key": decoded (\n, \" and \\ only: what CSVs hold). */
static char *json_field(const char *json, const char *key)
{
    char pat[64];
    snprintf(pat, sizeof pat, "\"%s\":\"", key);
    const char *p = strstr(json, pat);
    assert_non_null(p);
    p += strlen(pat);
    char *out = malloc(strlen(p) + 1), *o = out;
    for (; *p != '"'; p++) {
        if (*p == '\\') {
            p++;
            *o++ = *p == 'n' ? '\n' : *p;
        } else
            *o++ = *p;
    }
    *o = '\0';
    return out;
}

static void test_run_equals_the_command_line(void **state)
{
    (void)state;
    static const char *const sets[] = {"run.seed=7", "layer.app.attempts=2", "run.duration=120s"};
    struct api_request rq = {.scenario = "storm", .nsets = 3};
    for (size_t i = 0; i < 3; i++)
        rq.sets[i] = sets[i];
    struct answer a;
    run_answer(&a, &rq, &api_default_limits);
    assert_int_equal(a.status, 200);
    assert_non_null(strstr(a.buf, "\"ok\":true"));
    char *got = json_field(a.buf, "summary.csv"), *want = cli_summary("storm", sets, 3);
    *strrchr(got, ',') = '\0';
    assert_string_equal(got, want);
    for (const char *f = "timeseries.csv\0latency.csv\0attempts.csv\0layers.csv\0scenario.ini\0"; *f; f += strlen(f) + 1) {
        char *text = json_field(a.buf, f);
        assert_true(strlen(text) > 20);
        free(text);
    }
    free(got), free(want), free(a.buf);
}

static void test_pasted_text_reads_no_file(void **state)
{
    (void)state;
    struct api_request rq = {
        .text = "[load]\nrate = 10/s\ntrace = /etc/passwd\n[server]\nservice = exp(10ms)\n"};
    struct answer a;
    run_answer(&a, &rq, &api_default_limits);
    assert_int_equal(a.status, 400);
    assert_non_null(strstr(a.buf, "pasted:3: [load] trace = '/etc/passwd': no file is read here"));
    free(a.buf);
    /* nor through an override, nor relative to anywhere */
    struct api_request rq2 = {.scenario = "storm", .sets = {"load.trace=scenarios/trace-replay.csv"}, .nsets = 1};
    run_answer(&a, &rq2, &api_default_limits);
    assert_int_equal(a.status, 400);
    assert_non_null(strstr(a.buf, "no file is read here"));
    free(a.buf);
    /* a built-in trace is fine (its surge's marker phase moved into the 20 s) */
    struct api_request rq3 = {.scenario = "trace-replay",
                              .sets = {"run.duration=20s", "phase.surge.start=10s", "phase.surge.end=12s"},
                              .nsets = 3};
    run_answer(&a, &rq3, &api_default_limits);
    assert_int_equal(a.status, 200);
    free(a.buf);
}

static void test_bad_input_gets_checks_messages(void **state)
{
    (void)state;
    struct api_request rq = {.text = "[run]\nduration = x\n"};
    struct answer a;
    run_answer(&a, &rq, &api_default_limits);
    assert_int_equal(a.status, 400);
    assert_non_null(strstr(a.buf, "pasted:2: [run] duration = 'x': expected a duration \\u003e 0 such as 300s"));
    free(a.buf);
    struct api_request none = {.scenario = "strom"};
    run_answer(&a, &none, &api_default_limits);
    assert_int_equal(a.status, 400);
    assert_non_null(strstr(a.buf, "no built-in scenario 'strom'"));
    free(a.buf);
    FILE *f = answer_open(&a);
    assert_int_equal(api_check(f, "[layer app]\nattempts = 0\n"), 400);
    fclose(f);
    assert_non_null(strstr(a.buf, "pasted:2: [layer app] attempts = '0'"));
    free(a.buf);
    /* a good text: its knobs, and its first comment line for the page's header */
    f = answer_open(&a);
    assert_int_equal(
        api_check(f, "; my talk: a herd\n[run]\nname = talk\n[load]\nrate = 1/s\n[server]\nservice = exp(1ms)\n"),
        200);
    fclose(f);
    assert_non_null(strstr(a.buf, "\"about\":\"my talk: a herd\""));
    assert_non_null(strstr(a.buf, "\"shape\":{\"name\":\"talk\""));
    free(a.buf);
    f = answer_open(&a);
    assert_int_equal(api_check(f, "[load]\nrate = 1/s\n[server]\nservice = exp(1ms)\n"), 200);
    fclose(f);
    assert_non_null(strstr(a.buf, "\"about\":\"\""));
    free(a.buf);
}

static void test_limits_refuse_or_stop(void **state)
{
    (void)state;
    struct api_limits lim = api_default_limits;
    struct answer a;
    struct api_request big = {.scenario = "storm", .sets = {"run.bucket=10ms"}, .nsets = 1};
    run_answer(&a, &big, &lim);
    assert_int_equal(a.status, 422);
    assert_non_null(strstr(a.buf, "30000 time-series rows; the page draws at most 20000"));
    free(a.buf);
    /* a drain's buckets count: herd's 120 s and 600 s of drain at 10 ms */
    struct api_request drained = {.scenario = "herd", .sets = {"run.drain=true"}, .nsets = 1};
    run_answer(&a, &drained, &lim);
    assert_int_equal(a.status, 422);
    assert_non_null(strstr(a.buf, "[run] (duration + drain_limit) / bucket: 72000 time-series rows; the page draws at "
                                  "most 20000 (a larger run.bucket or a shorter run.duration or run.drain_limit)"));
    free(a.buf);
    struct api_request many = {.scenario = "herd", .sets = {"load.clients=2000000"}, .nsets = 1};
    run_answer(&a, &many, &lim);
    assert_int_equal(a.status, 422);
    assert_non_null(strstr(a.buf, "the page runs at most 1000000 clients"));
    free(a.buf);
    lim.max_events = 1000; /* checked every 2^20 events: storm passes that */
    struct api_request storm = {.scenario = "storm"};
    run_answer(&a, &storm, &lim);
    assert_int_equal(a.status, 422);
    assert_non_null(strstr(a.buf, "stopped after 1000 events"));
    free(a.buf);
    lim = api_default_limits;
    lim.max_wall_s = 0;
    run_answer(&a, &storm, &lim);
    assert_int_equal(a.status, 422);
    assert_non_null(strstr(a.buf, "wall-clock time"));
    free(a.buf);
    /* a flood that only memory would stop: the bytes in flight stop it (the review's 3.5 GB case) */
    struct api_request flood = {.text = "[load]\nrate = 10000000/s\n[server]\nworkers = 1\nservice = exp(1h)\n"
                                        "[layer app]\ntimeout = none\n"};
    run_answer(&a, &flood, &api_default_limits);
    assert_int_equal(a.status, 422);
    assert_non_null(strstr(a.buf, "more than 512 MB of requests, attempts and messages in flight"));
    free(a.buf);
    /* services.csv's rows, not only the time series */
    struct api_request rows = {.text = "[run]\nduration = 200s\nbucket = 10ms\n[load]\nrate = 1/s\n"
                                       "[service api]\nservice = exp(1ms)\nreplicas = 48\n"};
    run_answer(&a, &rows, &api_default_limits);
    assert_int_equal(a.status, 422);
    assert_non_null(strstr(a.buf, "980000 rows of services.csv and caches.csv; the page takes at most 100000"));
    free(a.buf);
    /* caches' memory counts with the state: 10^7 keys of 21 bytes (no coalescing) */
    lim = api_default_limits;
    lim.max_state_bytes = 100e6;
    struct api_request keys = {.scenario = "cache-flush", .sets = {"load.keys=10000000"}, .nsets = 1};
    run_answer(&a, &keys, &lim);
    assert_int_equal(a.status, 422);
    assert_non_null(strstr(a.buf, "the run's state (budgets, breakers, bulkheads, caches, time series) of 210 MB: the page runs at most 100 MB"));
    free(a.buf);
    /* a shutdown stops a run: 503 */
    volatile sig_atomic_t cancel = 1;
    lim = api_default_limits;
    lim.cancel = &cancel;
    run_answer(&a, &storm, &lim);
    assert_int_equal(a.status, 503);
    assert_non_null(strstr(a.buf, "the server is stopping"));
    free(a.buf);
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The wall-clock limit holds however slow the events (issue 29: checked
 * every 2^20 events, a run of per-client bulkheads on 16 layers answered
 * after 9.6-11.6 s under a 2 s limit, while its message said 2.0 s): the
 * answer comes within 1 s of the limit, building the run included, and
 * says the time it really took. */
static void test_wall_clock_limit_holds(void **state)
{
    (void)state;
    static char text[2048];
    size_t used = (size_t)snprintf(text, sizeof text, "[run]\nduration = 1h\n[load]\nclients = 1000000\nrate = 100000/s\n"
                                                      "[server]\nworkers = 1000\nservice = exp(10ms)\n");
    for (int l = 0; l < 16; l++)
        used += (size_t)snprintf(text + used, sizeof text - used,
                                 "[layer l%d]\ninstances = per-client\nconcurrency = 1\ntimeout = 1s\n", l);
    struct api_request rq = {.text = text};
    struct api_limits lim = api_default_limits;
    lim.max_wall_s = 1.0;
    struct answer a;
    double t0 = now_s();
    run_answer(&a, &rq, &lim);
    double took = now_s() - t0;
    assert_int_equal(a.status, 422);
    const char *m = strstr(a.buf, "the run was stopped after ");
    assert_non_null(m);
    double said = strtod(m + strlen("the run was stopped after "), NULL);
    assert_true(said >= 1.0 && said <= took);
    assert_true(took < 2.0);
    assert_non_null(strstr(a.buf, "s of wall-clock time (the limit is 1.0 s)"));
    free(a.buf);
    /* work inside one event: a budget level sampled for every bucket an
     * event catches up on (16 layers x 4,096 per-client budgets x 4,000
     * buckets took 2.99 s under a 0.5 s limit); now once an event */
    used = (size_t)snprintf(text, sizeof text, "[run]\nduration = 40s\nbucket = 10ms\n[load]\nclients = 4096\n"
                                               "rate = 1/s\n[server]\nservice = exp(1ms)\n");
    for (int l = 0; l < 16; l++)
        used += (size_t)snprintf(text + used, sizeof text - used,
                                 "[layer l%d]\nbudget = ratio\nbudget_scope = client\n", l);
    lim.max_wall_s = 0.5;
    t0 = now_s();
    run_answer(&a, &rq, &lim);
    took = now_s() - t0;
    if (took >= 1.5)
        fail_msg("answered %d after %.2f s under a 0.5 s limit", a.status, took);
    free(a.buf);
    /* work inside one event: sixteen herds of 10^6 clients at one instant
     * (answered after 7.3 s under a 1 s limit, holding 4.5 GB); a herd
     * passes a checkpoint every 1,024 clients */
    used = (size_t)snprintf(text, sizeof text, "[run]\nduration = 10s\n[load]\nclients = 1000000\nrate = 1/s\n"
                                               "[server]\nservice = exp(1ms)\n[herd]\nat =");
    for (int h = 0; h < 16; h++)
        used += (size_t)snprintf(text + used, sizeof text - used, " 1s");
    snprintf(text + used, sizeof text - used, "\n");
    lim.max_wall_s = 1.0;
    t0 = now_s();
    run_answer(&a, &rq, &lim);
    took = now_s() - t0;
    assert_int_equal(a.status, 422);
    if (took >= 2.0)
        fail_msg("answered after %.2f s under a 1 s limit", took);
    free(a.buf);
}

/* Concurrent runs share the server's memory: a run reserves its state and
 * the limit on what is in flight, waits while others hold it (here: for
 * the wall-clock limit), and is answered 503; what it reserved comes back. */
static void test_runs_share_memory(void **state)
{
    (void)state;
    struct api_memory mem = {.free_bytes = 400e6};
    pthread_mutex_init(&mem.lock, NULL);
    struct api_limits lim = api_default_limits;
    lim.memory = &mem;
    lim.max_wall_s = 0.2;
    struct api_request storm = {.scenario = "storm"};
    struct answer a;
    run_answer(&a, &storm, &lim); /* 512 MB in flight alone do not fit in 400 MB */
    assert_int_equal(a.status, 503);
    assert_non_null(strstr(a.buf, "busy: the runs in progress hold the server's memory"));
    free(a.buf);
    mem.free_bytes = 600e6;
    lim.max_wall_s = 10;
    run_answer(&a, &storm, &lim);
    assert_int_equal(a.status, 200);
    free(a.buf);
    assert_true(mem.free_bytes == 600e6);
    pthread_mutex_destroy(&mem.lock);
}

/* A run's answer carries the effective knobs (overrides applied) and
 * whole numbers as written: a seed past 2^53 keeps its digits. */
static void test_run_shape_is_effective(void **state)
{
    (void)state;
    struct api_request rq = {.scenario = "storm", .sets = {"run.seed=12345678901234567", "phase.spike.end=90s", "run.duration=100s"}, .nsets = 3};
    struct answer a;
    run_answer(&a, &rq, &api_default_limits);
    assert_int_equal(a.status, 200);
    assert_non_null(strstr(a.buf, "\"seed\":12345678901234567,"));
    assert_non_null(strstr(a.buf, "\"phases\":[{\"name\":\"spike\",\"start\":\"1m\",\"end\":\"90s\""));
    assert_non_null(strstr(a.buf, "\"duration_s\":100,"));
    free(a.buf);
}

static void test_scenarios_and_escaping(void **state)
{
    (void)state;
    struct answer a;
    FILE *f = answer_open(&a);
    assert_int_equal(api_scenarios(f), 200);
    fclose(f);
    assert_json_shape(a.buf);
    for (const struct scenario_builtin *b = scenario_builtins; b->name != NULL; b++) {
        char pat[80];
        snprintf(pat, sizeof pat, "{\"name\":\"%s\",\"about\"", b->name);
        assert_non_null(strstr(a.buf, pat));
    }
    assert_non_null(strstr(a.buf, "\"layers\":[{\"name\":\"app\",\"from\":\"client\",\"attempts\":3,\"timeout\":\"200ms\""));
    free(a.buf);
    f = answer_open(&a);
    api_json_string(f, "a\"b\\c\n\t\x01</script>&");
    fclose(f);
    assert_string_equal(a.buf, "\"a\\\"b\\\\c\\n\\u0009\\u0001\\u003c/script\\u003e\\u0026\"");
    free(a.buf);
}

/* An override with bytes that are not UTF-8 (a stray 0xFF, an overlong
 * NUL, a surrogate, a sequence cut short) is echoed in the message with
 * each such byte as U+FFFD: the answer parses (json-c) and is valid UTF-8,
 * and the valid characters around them (2, 3 and 4 bytes) are kept. */
static void test_answers_are_utf8(void **state)
{
    (void)state;
    struct api_request rq = {.scenario = "storm",
                             .sets = {"run.duration=\xc3\xa9\xe2\x9c\x93\xf0\x9f\x98\x80|\xff|\xc0\x80|\xed\xa0\x80|"
                                      "\xe2\x82x\xe2\x82"},
                             .nsets = 1};
    struct answer a;
    run_answer(&a, &rq, &api_default_limits);
    assert_int_equal(a.status, 400);
    assert_true(rs_valid_utf8(a.buf));
    json_object *doc = json_tokener_parse(a.buf);
    assert_non_null(doc);
    json_object *msgs = NULL;
    assert_true(json_object_object_get_ex(doc, "messages", &msgs));
    const char *msg = json_object_get_string(json_object_array_get_idx(msgs, 0));
    assert_true(rs_valid_utf8(msg));
    const char *fffd = "\xef\xbf\xbd";
    char want[200];
    snprintf(want, sizeof want, "'\xc3\xa9\xe2\x9c\x93\xf0\x9f\x98\x80|%s|%s%s|%s%s%s|%s%sx%s%s'", fffd, fffd, fffd,
             fffd, fffd, fffd, fffd, fffd, fffd, fffd);
    if (strstr(msg, want) == NULL)
        fail_msg("want %s in %s", want, msg);
    json_object_put(doc);
    free(a.buf);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_run_equals_the_command_line),
        cmocka_unit_test(test_pasted_text_reads_no_file),
        cmocka_unit_test(test_bad_input_gets_checks_messages),
        cmocka_unit_test(test_limits_refuse_or_stop),
        cmocka_unit_test(test_scenarios_and_escaping),
        cmocka_unit_test(test_run_shape_is_effective),
        cmocka_unit_test(test_wall_clock_limit_holds),
        cmocka_unit_test(test_runs_share_memory),
        cmocka_unit_test(test_answers_are_utf8),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
