/*
 * summary.csv read back by column name: every count column holds the count
 * its name says, on a run where those counts are non-zero and all differ,
 * so two columns written in each other's place (limited and dropped, say)
 * fail here, not only in a byte-for-byte golden file that a re-bless would
 * hide. And the UTF-8 rule every JSON writer uses (jsonout_utf8_len)
 * against a decoding reference (rs_valid_utf8).
 */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jsonout.h"
#include "rs_test.h"

#define MAX_COLS 160

struct table {
    char *buf;
    const char *name[MAX_COLS], *value[MAX_COLS];
    size_t n;
};

/* Splits "header\nrow\n" in place into named cells (no quoting needed: the
 * scenario's name is plain). */
static void table_parse(struct table *t)
{
    char *row = strchr(t->buf, '\n');
    assert_non_null(row);
    *row++ = '\0';
    char *h = t->buf, *v = row;
    t->n = 0;
    while (h != NULL && v != NULL && t->n < MAX_COLS) {
        char *hn = strchr(h, ','), *vn = strpbrk(v, ",\n");
        if (hn)
            *hn++ = '\0';
        if (vn)
            *vn++ = '\0';
        t->name[t->n] = h, t->value[t->n] = v, t->n++;
        h = hn, v = vn && *vn ? vn : NULL;
    }
}

/* A run's summary.csv (written after `wall` seconds), parsed into t. */
static void summary_table(const struct sim *s, double wall, struct summary *sum, struct table *t)
{
    output_summarise(s, wall, sum);
    t->buf = rs_summary_csv(s, sum, false);
    table_parse(t);
}

/* File `name` of finished run s, as output_write_file writes it, in a
 * malloc'd buffer. */
static char *write_named(const struct sim *s, const char *name)
{
    struct summary sum;
    output_summarise(s, 0, &sum);
    size_t i, size;
    for (i = 0; i < output_nfiles(); i++)
        if (output_file_name(s, i) != NULL && strcmp(output_file_name(s, i), name) == 0)
            break;
    assert_true(i < output_nfiles());
    char *buf;
    FILE *f = open_memstream(&buf, &size);
    assert_non_null(f);
    output_write_file(f, i, s, &sum);
    assert_int_equal(fclose(f), 0);
    return buf;
}

static const char *cell(const struct table *t, const char *name)
{
    for (size_t i = 0; i < t->n; i++)
        if (strcmp(t->name[i], name) == 0)
            return t->value[i];
    fail_msg("summary.csv has no column %s", name);
    return NULL;
}

/* A rate limiter (limited), a bounded queue (rejected), deadlines that the
 * server drops expired work by (dropped), timeouts (wasted), Retry-After
 * (retry_after_waits, fewer than limited: some would end after the
 * deadline), non-idempotent retries (side effects, duplicates) and 500s
 * (completions that are not side effects). */
static const char *const text =
    "[run]\nduration = 60s\n[load]\nrate = 60/s\nidempotent = false\n"
    "[server]\nworkers = 2\nservice = exp(40ms)\nqueue = 5\ndrop_expired = true\nerror_500 = 0.05\n"
    "limit_rate = 45/s\nlimit_burst = 5\nlimit_status = 503\nlimit_retry_after = 300ms\n"
    "[layer app]\nattempts = 4\ntimeout = 150ms\ndeadline = 400ms\npropagate_deadline = true\n"
    "retry_after = honor\nbackoff = full\nbase = 50ms\n";

static void summary_columns_by_name(void **state)
{
    (void)state;
    struct sim *s = run_text(text, NULL, 0);
    const struct metrics *m = sim_metrics(s);
    struct summary sum;
    struct table t;
    summary_table(s, 0, &sum, &t);
    struct {
        const char *name;
        uint64_t want;
        bool distinct; /* non-zero, and unlike every other such column */
    } cols[] = {
        {"requests", sum.requests, false},
        {"server_arrivals", sum.server_arrivals, true},
        {"server_completions", sum.server_completions, true},
        {"rejected", sum.rejected, true},
        {"limited", m->limited, true},
        {"dropped", m->dropped, true},
        {"wasted", sum.wasted, true},
        {"side_effects", m->side_effects, true},
        {"duplicates", m->duplicates, true},
        {"retry_after_waits", m->retry_after_waits, true},
        {"attempts_max", sum.attempts_max, false},
        {"hedges", m->hedges, false},
        {"cancelled", m->cancelled, false},
        {"events", sum.events, false},
        {"err_timeout", m->errors[CLS_TIMEOUT], true},
        {"err_503", m->errors[CLS_503], true},
        {"err_deadline", m->errors[CLS_DEADLINE], false},
    };
    size_t nc = sizeof cols / sizeof cols[0];
    for (size_t i = 0; i < nc; i++) {
        char want[32];
        snprintf(want, sizeof want, "%llu", (unsigned long long)cols[i].want);
        if (strcmp(cell(&t, cols[i].name), want) != 0)
            fail_msg("summary.csv %s = %s, the run counted %s", cols[i].name,
                     cell(&t, cols[i].name), want);
        for (size_t j = 0; j < i && cols[i].distinct; j++)
            if (cols[j].distinct && cols[j].want == cols[i].want)
                fail_msg("the scenario cannot tell %s from %s (both %s)", cols[i].name,
                         cols[j].name, want);
        if (cols[i].distinct && cols[i].want == 0)
            fail_msg("the scenario leaves %s at 0: it cannot tell a swapped column", cols[i].name);
    }
    for (int o = 0; o < OUT_NOUTCOMES; o++) {
        char want[32];
        snprintf(want, sizeof want, "%llu", (unsigned long long)sum.outcomes[o]);
        assert_string_equal(cell(&t, metrics_outcome_names[o]), want);
    }
    free(t.buf);
    sim_destroy(s);
}

/* The table of summary.csv's columns (summary_cols_init) is the header
 * after scenario and seed, name for name, and every cell is empty or a
 * value the column's kind allows (a kind that --resume and merge would
 * refuse in a genuine jobs.csv would fail here). */
static void summary_cells_fit_their_kinds(void **state)
{
    (void)state;
    struct sim *s = run_text(text, NULL, 0);
    struct summary sum;
    struct table t;
    summary_table(s, 1.25, &sum, &t);
    struct summary_cols cols;
    char err[256];
    assert_int_equal(summary_cols_init(&cols, sim_scenario(s), err, sizeof err), 0);
    size_t n = cols.n, metrics = 0;
    assert_int_equal(t.n, n + 2);
    assert_string_equal(t.name[0], "scenario");
    assert_string_equal(t.name[1], "seed");
    for (size_t i = 0; i < n; i++) {
        assert_string_equal(t.name[2 + i], cols.c[i].name);
        metrics += output_kind_is_metric(cols.c[i].kind);
        if (t.value[2 + i][0] == '\0')
            continue;
        char *end = "";
        double v = strtod(t.value[2 + i], &end);
        for (int k = 0; cols.c[i].kind == OUTPUT_VERDICT && k < VERDICT_N; k++) /* written as its name */
            if (strcmp(t.value[2 + i], verdict_names[k]) == 0)
                v = k, end = "";
        if (*end != '\0' || !output_value_ok(cols.c[i].kind, v))
            fail_msg("summary.csv's %s = %s is not %s", cols.c[i].name, t.value[2 + i],
                     output_kind_allows(cols.c[i].kind));
    }
    assert_int_equal(metrics, n - 2); /* all but verdict and wall_s */
    summary_cols_fini(&cols);
    free(t.buf);
    sim_destroy(s);
}

/* layers.csv by name: 70 % of answers fail, so AWS's retry quota runs dry
 * and refuses retries, and now and then 21 failures in a row open a
 * breaker that cuts calls short: both non-zero and different; each column holds its own count, as
 * the per-bucket counts (kept apart, for timeseries.csv) add up to. */
static void layers_columns_by_name(void **state)
{
    (void)state;
    const char *layered = "[run]\nduration = 60s\n[load]\nrate = 200/s\n"
                          "[server]\nworkers = 4\nservice = exp(5ms)\nerror_503 = 0.7\n"
                          "[layer app]\nattempts = 3\nbackoff = constant\nbase = 10ms\n"
                          "budget = aws-standard\nbreaker = gobreaker\nbreaker_failures = 20\n"
                          "breaker_open_for = 5s\n";
    struct sim *s = run_text(layered, NULL, 0);
    const struct metrics *m = sim_metrics(s);
    uint64_t refused = 0, cut = 0, opened = 0;
    for (size_t i = 0; i < m->nbuckets; i++) {
        refused += m->lb[i].refused;
        cut += m->lb[i].short_circuited;
        opened += m->lb[i].transitions;
    }
    assert_true(refused > 0 && cut > 0 && refused != cut && opened > 0);
    struct table t = {.buf = write_named(s, "layers.csv")};
    table_parse(&t);
    char want[32];
    snprintf(want, sizeof want, "%llu", (unsigned long long)refused);
    assert_string_equal(cell(&t, "refused"), want);
    snprintf(want, sizeof want, "%llu", (unsigned long long)cut);
    assert_string_equal(cell(&t, "short_circuited"), want);
    free(t.buf);
    sim_destroy(s);
}

/* services.csv has, every bucket, a row for each service's total
 * (replica 0) and, for a service of several replicas, one per replica:
 * api's 3 replicas and db's one give 4 + 1 rows a bucket, 5 buckets. */
static void services_rows_per_replica(void **state)
{
    (void)state;
    const char *graph = "[run]\nduration = 5s\nbucket = 1s\n[load]\nrate = 50/s\n"
                        "[service api]\nworkers = 4\nservice = exp(2ms)\nreplicas = 3\ncalls = db\n"
                        "[service db]\nworkers = 4\nservice = exp(2ms)\n"
                        "[layer app]\nfrom = client\nto = api\n";
    struct sim *s = run_text(graph, NULL, 0);
    char *buf = write_named(s, "services.csv");
    unsigned api[4] = {0}, db[4] = {0}, rows = 0;
    for (char *line = strchr(buf, '\n'); line != NULL && line[1] != '\0'; line = strchr(line + 1, '\n')) {
        char name[16];
        unsigned rep;
        double t;
        assert_int_equal(sscanf(line + 1, "%lf,%15[^,],%u,", &t, name, &rep), 3);
        assert_true(rep < 4);
        if (strcmp(name, "api") == 0)
            api[rep]++;
        else if (strcmp(name, "db") == 0)
            db[rep]++;
        rows++;
    }
    for (unsigned r = 0; r < 4; r++)
        if (api[r] != 5 || db[r] != (r == 0 ? 5u : 0u))
            fail_msg("replica %u: %u rows of api, %u of db (5 buckets)", r, api[r], db[r]);
    assert_int_equal(rows, 25);
    free(buf);
    sim_destroy(s);
}

/* jsonout_utf8_len against the reference: for every lead and second byte,
 * and third and fourth bytes from each range that matters, the length is
 * the shortest prefix that is valid UTF-8, or 0 when none of up to 4 is. */
static void utf8_rule_is_rfc3629(void **state)
{
    (void)state;
    static const unsigned char tails[] = {0x00, 0x41, 0x7F, 0x80, 0x8F, 0x90, 0x9F, 0xA0, 0xBF, 0xC0, 0xF4, 0xFF};
    size_t nt = sizeof tails;
    for (unsigned b0 = 1; b0 < 256; b0++)
        for (unsigned b1 = 0; b1 < 256; b1++)
            for (size_t t = 0; t < nt * nt; t++) {
                char seq[5] = {(char)b0, (char)b1, (char)tails[t / nt], (char)tails[t % nt], '\0'};
                size_t want = 0;
                for (size_t k = 1; k <= 4 && want == 0; k++) {
                    char head[5] = {0};
                    memcpy(head, seq, k);
                    if (strlen(head) == k && rs_valid_utf8(head))
                        want = k;
                }
                if (jsonout_utf8_len(seq) != want)
                    fail_msg("%02x %02x %02x %02x: %zu, want %zu", b0, b1, tails[t / nt], tails[t % nt],
                             jsonout_utf8_len(seq), want);
            }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(summary_columns_by_name),
        cmocka_unit_test(summary_cells_fit_their_kinds),
        cmocka_unit_test(layers_columns_by_name),
        cmocka_unit_test(services_rows_per_replica),
        cmocka_unit_test(utf8_rule_is_rfc3629),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
