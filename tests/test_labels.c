/*
 * labels (sim/io/labels.c): the shortest unambiguous key, against literal
 * expected labels on small scenarios (one layer; two layers with the same
 * key; a layer and a phase both named db sharing retry_after; a layer and
 * a service both named db; server keys with and without services; load
 * keys beside a phase's and a server's); the text a --label may hold; and
 * the legend text of a variant (none in words, a given text as is).
 */
#include "rs_test.h"

#include "labels.h"

static const char one_layer[] = "[run]\nduration = 10s\n[load]\nrate = 100/s\n"
                                "[server]\nworkers = 2\nservice = exp(5ms)\n[layer app]\nattempts = 3\n";

static void expect(const char *text, const char *key, const char *want)
{
    struct scenario sc;
    load_or_fail(&sc, text, NULL, 0);
    char out[256];
    labels_short_key(&sc, key, out, sizeof out);
    assert_string_equal(out, want);
}

static void one_layer_keeps_the_key(void **state)
{
    (void)state;
    expect(one_layer, "layer.app.attempts", "attempts");
    expect(one_layer, "layer.app.backoff", "backoff");
    expect(one_layer, "server.queue", "queue");
    expect(one_layer, "service.server.queue", "queue"); /* [server] is the service named server */
    expect(one_layer, "load.rate", "rate");             /* no phase: only [load] has rate */
    expect(one_layer, "run.seed", "seed");
}

static void two_layers_name_the_layer(void **state)
{
    (void)state;
    static const char two[] = "[run]\nduration = 10s\n[load]\nrate = 100/s\n[server]\nworkers = 2\n"
                              "service = exp(5ms)\n[layer gw-orders]\nattempts = 3\n[layer app]\nattempts = 2\n";
    expect(two, "layer.gw-orders.attempts", "gw-orders.attempts");
    expect(two, "layer.app.backoff", "app.backoff");
    expect(two, "server.workers", "workers");
}

static void same_name_in_two_sections(void **state)
{
    (void)state;
    /* a layer and a phase both named db: both accept retry_after */
    static const char phase[] = "[run]\nduration = 10s\n[load]\nrate = 100/s\n[server]\nworkers = 2\n"
                                "service = exp(5ms)\n[phase db]\nstart = 1s\nend = 2s\noutage = error\nretry_after = 1s\n"
                                "[layer db]\nattempts = 3\n";
    expect(phase, "layer.db.retry_after", "layer.db.retry_after");
    expect(phase, "phase.db.retry_after", "phase.db.retry_after");
    expect(phase, "layer.db.attempts", "attempts");
    expect(phase, "load.rate", "load.rate"); /* phases have rate too */
    expect(phase, "phase.db.rate", "db.rate");
    /* a layer and a service both named db: they share no key, two services share all */
    static const char graph[] = "[run]\nduration = 10s\n[load]\nrate = 100/s\n"
                                "[service front]\nworkers = 4\nservice = exp(1ms)\ncalls = db\n"
                                "[service db]\nworkers = 2\nservice = exp(5ms)\n"
                                "[layer client]\nfrom = client\nto = front\n[layer db]\nfrom = front\nto = db\n";
    expect(graph, "service.db.queue", "db.queue");
    expect(graph, "layer.db.attempts", "db.attempts");
    expect(graph, "layer.client.attempts", "client.attempts");
    expect(graph, "load.model", "load.model"); /* services have model too */
    expect(graph, "service.db.model", "db.model");
    expect(graph, "load.clients", "clients");
    expect(graph, "server.queue", "server.queue"); /* no such section: the key as given */
}

static void label_texts(void **state)
{
    (void)state;
    char err[400];
    assert_int_equal(labels_check_text("Full jitter (AWS)", err, sizeof err), 0);
    assert_int_equal(labels_check_text("a=b=c", err, sizeof err), 0);
    assert_int_equal(labels_check_text("", err, sizeof err), -1);
    assert_string_equal(err, "the text '' has 0 bytes; a label has 1 to 80");
    assert_int_equal(labels_check_text("full, jittered", err, sizeof err), -1);
    assert_string_equal(err, "the text 'full, jittered' holds a comma; a label may hold any printable "
                             "character but a comma or a double quote");
    assert_int_equal(labels_check_text("a\"b", err, sizeof err), -1);
    assert_int_equal(labels_check_text("a\nb", err, sizeof err), -1);
    char long_text[LABELS_TEXT_MAX + 2];
    memset(long_text, 'x', sizeof long_text - 1);
    long_text[LABELS_TEXT_MAX + 1] = '\0';
    assert_int_equal(labels_check_text(long_text, err, sizeof err), -1);
    long_text[LABELS_TEXT_MAX] = '\0';
    assert_int_equal(labels_check_text(long_text, err, sizeof err), 0);
}

static void legends(void **state)
{
    (void)state;
    char out[256];
    labels_legend("backoff=none", NULL, out, sizeof out);
    assert_string_equal(out, "no backoff (immediate)");
    labels_legend("backoff=none", "", out, sizeof out);
    assert_string_equal(out, "no backoff (immediate)");
    labels_legend("app.backoff=none+attempts=3", NULL, out, sizeof out);
    assert_string_equal(out, "app: no backoff (immediate)+attempts=3");
    labels_legend("attempts=3 backoff=none", NULL, out, sizeof out);
    assert_string_equal(out, "attempts=3 no backoff (immediate)");
    labels_legend("backoff=full", NULL, out, sizeof out);
    assert_string_equal(out, "backoff=full");
    labels_legend("xbackoff=none", NULL, out, sizeof out); /* not a backoff key */
    assert_string_equal(out, "xbackoff=none");
    labels_legend("backoff=none", "Immediate retries", out, sizeof out);
    assert_string_equal(out, "Immediate retries");
    labels_legend("backoff=none", NULL, out, 6); /* cut short, terminated */
    assert_string_equal(out, "no ba");
}

static void take_labels(void **state)
{
    (void)state;
    static const char *const names[] = {"backoff=none", "backoff=full", "app.backoff=full+attempts=3"};
    struct labels_map m = {0};
    char err[1000];
    assert_int_equal(labels_take(&m, "backoff=full=Full jitter", names, 3, err, sizeof err), 0);
    assert_string_equal(labels_find(&m, "backoff=full"), "Full jitter");
    /* the full key names it too, and a later label replaces the earlier */
    assert_int_equal(labels_take(&m, "layer.app.backoff=full=Full=jittered", names, 3, err, sizeof err), 0);
    assert_int_equal(m.n, 1);
    assert_string_equal(labels_find(&m, "backoff=full"), "Full=jittered");
    assert_int_equal(labels_take(&m, "pp.backoff=full+attempts=3=three", names, 3, err, sizeof err), -1);
    assert_int_equal(labels_take(&m, "layer.app.backoff=full+layer.app.attempts=3=three", names, 3, err,
                                 sizeof err), 0);
    assert_string_equal(labels_find(&m, "app.backoff=full+attempts=3"), "three");
    assert_null(labels_find(&m, "backoff=none"));
    assert_int_equal(labels_take(&m, "backoff=fulll=Full", names, 3, err, sizeof err), -1);
    assert_string_equal(err, "--label 'backoff=fulll=Full': names no variant; give VARIANT=TEXT with VARIANT one "
                             "of: backoff=none, backoff=full, app.backoff=full+attempts=3");
    assert_int_equal(labels_take(&m, "backoff=none=a,b", names, 3, err, sizeof err), -1);
    assert_string_equal(err, "--label 'backoff=none=a,b': the text 'a,b' holds a comma; a label may hold any "
                             "printable character but a comma or a double quote");
    assert_int_equal(labels_take(&m, "backoff=none", names, 3, err, sizeof err), -1); /* no text */
    /* values holding '=': the longest VARIANT wins, whatever comes first */
    static const char *const eq[] = {"k=a", "k=a=b"};
    struct labels_map e = {0};
    assert_int_equal(labels_take(&e, "k=a=b=T", eq, 2, err, sizeof err), 0);
    assert_int_equal(e.n, 1);
    assert_string_equal(labels_find(&e, "k=a=b"), "T");
    assert_null(labels_find(&e, "k=a"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(one_layer_keeps_the_key),
        cmocka_unit_test(two_layers_name_the_layer),
        cmocka_unit_test(same_name_in_two_sections),
        cmocka_unit_test(label_texts),
        cmocka_unit_test(legends),
        cmocka_unit_test(take_labels),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
