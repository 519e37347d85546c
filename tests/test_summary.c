/*
 * The one table of summary columns (sim/io/summary.c), the tables of
 * results (sim/io/results.c) and the statistics helper (sim/study/stats.c):
 *
 * - a scenario's columns come in summary.csv's order: the fixed ones, then
 *   err_bulkhead and each service's columns together, each cache's, each
 *   layer's, then wall_s; each per-part column reads its own part (a
 *   service's calls are not its rejections, a layer's retries are not its
 *   attempts), checked against the model's totals on a run where every
 *   value differs;
 * - a cell is written by its kind: counts exact up to 2^53, shares and
 *   rates in 9 significant digits, wall-clock time in milliseconds, no
 *   value (NaN, an infinity) empty;
 * - peak_rate_1s, like every rate, reads the window after the warm-up;
 * - the statistics are the mean, the standard deviation and the Student-t
 *   95 % half-width of the values that are not NaN, for any number of
 *   them (5,000 here; the old helper stopped at 4,096).
 */
#define _POSIX_C_SOURCE 200809L

#include "rs_test.h"

#include <gsl/gsl_cdf.h>
#include <math.h>
#include <string.h>

#include "results.h"
#include "stats.h"
#include "summary.h"

static long col(const struct summary_cols *c, const char *name)
{
    long i = summary_cols_find(c, name);
    if (i < 0)
        fail_msg("no column %s", name);
    return i;
}

/* cascade: three services, three layers; the names and the order. */
static void columns_in_order(void **state)
{
    (void)state;
    struct scenario sc;
    load_or_fail(&sc, scenario_builtin_text("cascade"), NULL, 0);
    struct summary_cols c;
    char err[256];
    assert_int_equal(summary_cols_init(&c, &sc, err, sizeof err), 0);
    assert_string_equal(c.c[0].name, "requests");
    assert_string_equal(c.c[c.n - 1].name, "wall_s");
    long b = col(&c, "err_bulkhead");
    assert_string_equal(c.c[b - 1].name, "events");
    static const char *const after[] = {
        "edge_utilization", "edge_wasted", "edge_calls", "edge_rejected", "edge_queue_mean",
        "api_utilization", "api_wasted", "api_calls", "api_rejected", "api_queue_mean",
        "db_utilization", "db_wasted", "db_calls", "db_rejected", "db_queue_mean",
        "client_attempts", "client_retries", "client_hedges", "client_timeouts", "client_refused",
        "client_short_circuited", "edge-api_attempts"};
    for (size_t i = 0; i < sizeof after / sizeof *after; i++)
        assert_string_equal(c.c[(size_t)b + 1 + i].name, after[i]);
    assert_int_equal(c.c[col(&c, "edge_utilization")].kind, OUTPUT_SHARE);
    assert_int_equal(c.c[col(&c, "db_calls")].kind, OUTPUT_COUNT);
    assert_int_equal(c.c[col(&c, "wall_s")].kind, OUTPUT_WALL);
    summary_cols_fini(&c);
    /* without services: no err_bulkhead and no service's column */
    load_or_fail(&sc, scenario_builtin_text("storm"), NULL, 0);
    assert_int_equal(summary_cols_init(&c, &sc, err, sizeof err), 0);
    assert_true(summary_cols_find(&c, "err_bulkhead") < 0);
    assert_string_equal(c.c[col(&c, "events") + 1].name, "app_attempts");
    summary_cols_fini(&c);
}

/* Every per-part column reads its own part's total. */
static void part_columns_read_their_part(void **state)
{
    (void)state;
    static const char *const set[] = {"run.duration=60s", "run.warmup=10s"};
    struct sim *s = run_builtin("cascade", 3, set, 2);
    struct summary sum;
    output_summarise(s, 1.5, &sum);
    struct summary_cols c;
    char err[256];
    assert_int_equal(summary_cols_init(&c, sim_scenario(s), err, sizeof err), 0);
    double *row = malloc(c.n * sizeof *row);
    assert_non_null(row);
    summary_row(&c, s, &sum, row);
    const struct scenario *sc = sim_scenario(s);
    for (unsigned v = 0; v < sc->nservices; v++) {
        struct sim_service_row r;
        sim_service_totals(s, v, &r);
        char n[80];
        snprintf(n, sizeof n, "%s_calls", sc->services[v].name);
        assert_true(row[col(&c, n)] == (double)r.arrivals);
        snprintf(n, sizeof n, "%s_rejected", sc->services[v].name);
        assert_true(row[col(&c, n)] == (double)r.rejected);
        snprintf(n, sizeof n, "%s_wasted", sc->services[v].name);
        assert_true(row[col(&c, n)] == (double)r.wasted);
        snprintf(n, sizeof n, "%s_queue_mean", sc->services[v].name);
        assert_true(row[col(&c, n)] == r.queue_len);
        snprintf(n, sizeof n, "%s_utilization", sc->services[v].name);
        assert_true(row[col(&c, n)] == r.busy / r.workers);
    }
    for (unsigned l = 0; l < sc->nlayers; l++) {
        struct sim_layer_totals t;
        sim_layer_totals(s, l, &t);
        const uint64_t want[] = {t.attempts, t.retries, t.hedges, t.timeouts, t.refused, t.short_circuited};
        static const char *const suffix[] = {"attempts", "retries", "hedges", "timeouts", "refused",
                                             "short_circuited"};
        for (size_t k = 0; k < 6; k++) {
            char n[80];
            snprintf(n, sizeof n, "%s_%s", sc->layers[l].name, suffix[k]);
            assert_true(row[col(&c, n)] == (double)want[k]);
        }
    }
    /* the run differs in what each column reads, so a swap would show */
    assert_true(row[col(&c, "db_calls")] > row[col(&c, "db_rejected")]);
    assert_true(row[col(&c, "api-db_attempts")] > row[col(&c, "api-db_retries")]);
    assert_true(row[col(&c, "api-db_retries")] > 0);
    assert_true(row[col(&c, "db_calls")] != row[col(&c, "api_calls")]);
    assert_true(row[col(&c, "err_bulkhead")] == (double)sim_metrics(s)->errors[CLS_BULKHEAD]);
    assert_true(row[col(&c, "wall_s")] == 1.5);
    assert_true(row[col(&c, "requests")] == (double)sum.requests);
    assert_true(isnan(row[col(&c, "recovery_s")]) == (sum.recovery_s < 0));
    free(row);
    summary_cols_fini(&c);
    sim_destroy(s);
}

/* Each cell as written: by kind for a run's value, 9 digits for a statistic. */
static void cells_by_kind(void **state)
{
    (void)state;
    static const struct {
        enum output_kind kind;
        bool stat;
        double v;
        const char *want;
    } cases[] = {
        {OUTPUT_COUNT, false, 9007199254740991.0, "9007199254740991"},
        {OUTPUT_COUNT, false, 123456789012.0, "123456789012"},
        {OUTPUT_FLAG, false, 1.0, "1"},
        {OUTPUT_SHARE, false, 1.0 / 3.0, "0.333333333"},
        {OUTPUT_SECONDS, false, 0.0123456789012, "0.0123456789"},
        {OUTPUT_WALL, false, 1.23456, "1.235"},
        {OUTPUT_COUNT, true, 123456789012.0, "1.23456789e+11"},
        {OUTPUT_REAL, false, NAN, ""},
        {OUTPUT_REAL, true, INFINITY, ""},
        {OUTPUT_COUNT, false, -INFINITY, ""},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char buf[64] = "";
        FILE *f = fmemopen(buf, sizeof buf, "w");
        assert_non_null(f);
        struct results_col c = {"x", cases[i].kind, cases[i].stat};
        results_cell(f, &c, cases[i].v);
        fclose(f);
        assert_string_equal(buf, cases[i].want);
    }
}

/* A table's CSV: labels, then numbers; an empty label stays empty. */
static void table_as_csv(void **state)
{
    (void)state;
    struct results r;
    assert_int_equal(results_init(&r, 2, 2), 0);
    snprintf(r.label_names[0], sizeof r.label_names[0], "rank");
    snprintf(r.label_names[1], sizeof r.label_names[1], "layer.app.attempts");
    r.cols[0] = (struct results_col){"reps", OUTPUT_COUNT, false};
    r.cols[1] = (struct results_col){"ok_share", OUTPUT_SHARE, true};
    const char *a[] = {"1", "3"}, *b[] = {"", "1"};
    double va[] = {20, 0.5}, vb[] = {20, NAN};
    assert_int_equal(results_add(&r, a, va), 0);
    assert_int_equal(results_add(&r, b, vb), 0);
    assert_int_equal(results_find(&r, "ok_share"), 1);
    assert_int_equal(results_find(&r, "rank"), -1); /* a label, not a number column */
    char buf[256] = "";
    FILE *f = fmemopen(buf, sizeof buf, "w");
    results_write_csv(f, &r);
    fclose(f);
    assert_string_equal(buf, "rank,layer.app.attempts,reps,ok_share\n1,3,20,0.5\n,1,20,\n");
    results_fini(&r);
}

/* Mean, sd and half-width of the values that are not NaN, for any count. */
static void statistics_of_any_count(void **state)
{
    (void)state;
    double x[] = {1, NAN, 2, 3, 4, NAN}; /* 1..4: mean 2.5, sd sqrt(5/3) */
    struct stats s;
    stats_of(x, 6, 1, &s);
    assert_int_equal(s.n, 4);
    assert_true(s.mean == 2.5);
    assert_true(fabs(s.sd - sqrt(5.0 / 3.0)) < 1e-15);
    assert_true(fabs(s.hw - 3.182446305284263 * sqrt(5.0 / 3.0) / 2.0) < 1e-12); /* t(0.975, 3) */
    stats_of(x, 1, 1, &s); /* one value: no sd, no half-width */
    assert_true(s.mean == 1 && isnan(s.sd) && isnan(s.hw));
    stats_of(x + 1, 1, 1, &s); /* none */
    assert_true(s.n == 0 && isnan(s.mean));
    /* 5,000 values with a stride: every one counts (the last ones too) */
    enum { N = 5000 };
    double *y = malloc(2 * N * sizeof *y);
    assert_non_null(y);
    for (size_t i = 0; i < N; i++)
        y[2 * i] = i < 4096 ? 0.0 : 1.0, y[2 * i + 1] = -1.0;
    stats_of(y, N, 2, &s);
    assert_int_equal(s.n, N);
    assert_true(fabs(s.mean - 904.0 / N) < 1e-15);
    assert_true(fabs(s.hw - gsl_cdf_tdist_Pinv(0.975, N - 1) * s.sd / sqrt((double)N)) < 1e-12 * s.hw);
    free(y);
}

/* stats_row: reps, then mean, sd and hw of the metric columns only. */
static void stats_row_layout(void **state)
{
    (void)state;
    struct scenario sc;
    load_or_fail(&sc, scenario_builtin_text("storm"), NULL, 0);
    struct summary_cols c;
    char err[256];
    assert_int_equal(summary_cols_init(&c, &sc, err, sizeof err), 0);
    double *rows = calloc(2 * c.n, sizeof *rows), *out = calloc(1 + 3 * c.n, sizeof *out);
    assert_non_null(rows);
    assert_non_null(out);
    long req = col(&c, "requests");
    rows[req] = 10, rows[c.n + (size_t)req] = 20;
    rows[col(&c, "wall_s")] = 99; /* not a metric: no statistics */
    stats_row(&c, rows, 2, 2, out);
    assert_true(out[0] == 2);
    assert_true(out[1] == 15 && fabs(out[2] - sqrt(50.0)) < 1e-12);
    assert_true(fabs(out[3] - 12.706204736174705 * sqrt(50.0) / sqrt(2.0)) < 1e-9); /* t(0.975, 1) */
    struct results r;
    assert_int_equal(results_init(&r, 0, 1 + 3 * results_metrics(&c)), 0);
    assert_int_equal(results_stat_columns(&r, 0, &c), 1 + 3 * (c.n - 2)); /* not verdict, wall_s */
    assert_string_equal(r.cols[0].name, "reps");
    assert_string_equal(r.cols[1].name, "requests");
    assert_string_equal(r.cols[2].name, "requests_sd");
    assert_string_equal(r.cols[3].name, "requests_hw");
    assert_true(results_find(&r, "wall_s") < 0 && results_find(&r, "verdict") < 0);
    results_fini(&r);
    free(rows);
    free(out);
    summary_cols_fini(&c);
}

/* Both peaks read the window after the warm-up: a spike inside the
 * warm-up shows in neither, and the 1 s mean never exceeds the busiest
 * bucket (buckets of 100 ms). */
static void peaks_after_warmup(void **state)
{
    (void)state;
    static const char *const set[] = {"run.duration=120s", "run.warmup=75s", "run.bucket=100ms",
                                      "load.rate=300/s"};
    struct sim *s = run_builtin("storm", 1, set, 4); /* the spike (x2) runs from 60 to 70 s */
    struct summary o;
    output_summarise(s, 0, &o);
    assert_true(o.peak_rate_1s <= o.peak_server_rate);
    assert_true(o.peak_rate_1s < 450); /* 600/s in the spike: left out */
    assert_true(o.peak_rate_1s > 250);
    sim_destroy(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(columns_in_order),
        cmocka_unit_test(part_columns_read_their_part),
        cmocka_unit_test(cells_by_kind),
        cmocka_unit_test(table_as_csv),
        cmocka_unit_test(statistics_of_any_count),
        cmocka_unit_test(stats_row_layout),
        cmocka_unit_test(peaks_after_warmup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
