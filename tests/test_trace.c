/*
 * Unit tests of trace: both formats read back to the nanosecond, every kind
 * of bad row reported with its exact message and line (and the reading
 * going on after it), hostile files (fifos, directories, NUL bytes, long
 * lines, control characters) and a 10^7-row trace checked in bounded
 * memory.
 */
#define _POSIX_C_SOURCE 200809L

#include "rs_test.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "rs_scratch.h"
#include "trace.h"

static struct scratch scr;
#define dir (scr.dir)
#define path (scr.path)

static int setup(void **state)
{
    (void)state;
    return scratch_make(&scr, "trace", "t.csv");
}

static int teardown(void **state)
{
    (void)state;
    return scratch_remove(&scr);
}

static void write_bytes(const char *bytes, size_t n) { scratch_write(&scr, bytes, n); }

/* The messages trace_check reports, kept in order. */
struct msgs {
    size_t n;
    char text[16][512];
};

static void collect(void *ctx, const char *msg)
{
    struct msgs *m = ctx;
    assert_true(m->n < 16);
    snprintf(m->text[m->n++], sizeof m->text[0], "%s", msg);
}

/* Checks the whole text; fails the test when it is not opened. */
static unsigned long long check_text(const char *text, struct msgs *m, struct trace_info *info)
{
    struct trace t;
    char err[512];
    if (trace_open_text(&t, text, "mem", err, sizeof err) != 0)
        fail_msg("trace_open_text: %s", err);
    memset(m, 0, sizeof *m);
    unsigned long long bad = trace_check(&t, collect, m, info);
    assert_int_equal(bad, m->n);
    trace_close(&t);
    return bad;
}

/* The text's header must be refused with exactly want. */
static void header_refused(const char *text, const char *want)
{
    struct trace t;
    char err[512];
    assert_int_equal(trace_open_text(&t, text, "mem", err, sizeof err), -1);
    assert_string_equal(err, want);
    assert_null(t.f);
    trace_close(&t); /* harmless after a refusal */
}

static void rates_read_back(void **state)
{
    (void)state;
    const char *text = "t,rate\n0,800\n0.25,5.5\n2.0000000004,1e3\n2.0000000006,+7\n"
                       "1.5e3,0\n86400000,1000000000\n";
    write_bytes(text, strlen(text));
    struct trace t;
    char err[512];
    rs_time at;
    double rate;
    assert_int_equal(trace_open(&t, path, err, sizeof err), 0);
    assert_int_equal(t.kind, TRACE_RATES);
    assert_int_equal(t.last_t, -1);
    const rs_time want_t[] = {0, 250000000, 2000000000, 2000000001, 1500 * RS_S, RS_TIME_LIMIT};
    const double want_rate[] = {800, 5.5, 1000, 7, 0, 1e9};
    for (size_t i = 0; i < 6; i++) {
        assert_int_equal(trace_next(&t, &at, &rate, err, sizeof err), 1);
        assert_int_equal(at, want_t[i]);
        assert_true(rate == want_rate[i]);
        assert_int_equal(t.line, i + 2);
        assert_int_equal(t.last_t, want_t[i]);
    }
    assert_int_equal(trace_next(&t, &at, &rate, err, sizeof err), 0);
    assert_int_equal(trace_next(&t, &at, &rate, err, sizeof err), 0); /* still the end */
    trace_close(&t);
    trace_close(&t); /* twice is harmless */
}

static void times_read_back(void **state)
{
    (void)state;
    struct trace t;
    char err[512];
    rs_time at;
    assert_int_equal(trace_open_text(&t, "t\n0.000000001\n0.5\n0.5\n0.50000000049\n7\n", "mem", err,
                                     sizeof err),
                     0);
    assert_int_equal(t.kind, TRACE_TIMES);
    const rs_time want[] = {1, 500000000, 500000000, 500000000, 7 * RS_S}; /* equal ones allowed */
    for (size_t i = 0; i < 5; i++) {
        assert_int_equal(trace_next(&t, &at, NULL, err, sizeof err), 1);
        assert_int_equal(at, want[i]);
    }
    assert_int_equal(trace_next(&t, &at, NULL, err, sizeof err), 0);
    trace_close(&t);
}

/* The reader returns the rows as written: nothing before the first (which
 * need not be at 0) and the last one like any other; what they mean is the
 * caller's. */
static void first_and_last_rows(void **state)
{
    (void)state;
    struct msgs m;
    struct trace_info info;
    assert_int_equal(check_text("t,rate\n5,100\n", &m, &info), 0);
    assert_int_equal(info.kind, TRACE_RATES);
    assert_int_equal(info.rows, 1);
    assert_int_equal(info.first, 5 * RS_S);
    assert_int_equal(info.last, 5 * RS_S);
    assert_int_equal(check_text("t,rate\n0,0\n1,10\n2,0\n", &m, &info), 0);
    assert_int_equal(info.rows, 3);
    assert_int_equal(info.first, 0);
    assert_int_equal(info.last, 2 * RS_S);
    /* header only: no rows, fine */
    assert_int_equal(check_text("t,rate\n", &m, &info), 0);
    assert_int_equal(info.rows, 0);
    assert_int_equal(info.first, -1);
    assert_int_equal(info.last, -1);
    assert_int_equal(check_text("# only a header\nt", &m, &info), 0);
    assert_int_equal(info.kind, TRACE_TIMES);
    assert_int_equal(info.rows, 0);
}

/* Every kind of bad row in a rate trace, with comments and blank lines
 * counted in the line numbers and good rows between. A bad row changes
 * nothing: line 8's time (10) does not become the previous row's. */
static void rate_errors(void **state)
{
    (void)state;
    const char *text = "# a comment before the header\n"
                       "t,rate\n"                                 /* 2 */
                       "\n"                                       /* 3 */
                       "1,5\n"                                    /* 4 */
                       "12x,5\n"                                  /* 5 */
                       "# comment\n"                              /* 6 */
                       "2,-3\n"                                   /* 7 */
                       "10,nan\n"                                 /* 8 */
                       "2,1\n"                                    /* 9: good */
                       "1,2,3\n"                                  /* 10 */
                       "3\n"                                      /* 11 */
                       "2,1\n"                                    /* 12: equal */
                       "1.5,1\n"                                  /* 13: earlier */
                       "86400001,1\n"                             /* 14 */
                       "4,1e10\n"                                 /* 15 */
                       ",1\n"                                     /* 16 */
                       "-1,1\n"                                   /* 17 */
                       "3,1\n";                                   /* 18: good */
    struct msgs m;
    struct trace_info info;
    const char *want[] = {
        "mem:5: t: '12x' is not a time in seconds (a non-negative number such as 0.25)",
        "mem:7: rate: '-3' is not a rate (a number from 0 to 1e9 per second)",
        "mem:8: rate: 'nan' is not a rate (a number from 0 to 1e9 per second)",
        "mem:10: 3 fields; allowed: t,rate",
        "mem:11: 1 field; allowed: t,rate",
        "mem:12: t: 2 is not after the previous row's 2 (times must increase)",
        "mem:13: t: 1.5 is not after the previous row's 2 (times must increase)",
        "mem:14: t: '86400001' is later than 86400000 seconds (1000 days, the limit)",
        "mem:15: rate: '1e10' is not a rate (a number from 0 to 1e9 per second)",
        "mem:16: t: '' is not a time in seconds (a non-negative number such as 0.25)",
        "mem:17: t: '-1' is not a time in seconds (a non-negative number such as 0.25)",
    };
    size_t n = sizeof want / sizeof want[0];
    assert_int_equal(check_text(text, &m, &info), n);
    for (size_t i = 0; i < n; i++)
        assert_string_equal(m.text[i], want[i]);
    assert_int_equal(info.rows, 3);
    assert_int_equal(info.first, 1 * RS_S);
    assert_int_equal(info.last, 3 * RS_S);
}

static void time_errors(void **state)
{
    (void)state;
    const char *text = "t\n"           /* 1 */
                       "1\n"           /* 2 */
                       "1,5\n"         /* 3 */
                       "0.5\n"         /* 4 */
                       "1\n"           /* 5: equal, fine */
                       "0.999999999\n" /* 6 */
                       "0x1p3\n"       /* 7 */
                       "inf\n"         /* 8 */
                       "1e999\n"       /* 9 */
                       " 2\n"          /* 10 */
                       "2 \n"          /* 11 */
                       "2 5\n"         /* 12 */
                       "   \n"         /* 13 */
                       "2\n";          /* 14 */
    struct msgs m;
    struct trace_info info;
    const char *want[] = {
        "mem:3: 2 fields; allowed: t",
        "mem:4: t: 0.5 is before the previous row's 1 (times must not decrease)",
        "mem:6: t: 0.999999999 is before the previous row's 1 (times must not decrease)",
        "mem:7: t: '0x1p3' is not a time in seconds (a non-negative number such as 0.25)",
        "mem:8: t: 'inf' is not a time in seconds (a non-negative number such as 0.25)",
        "mem:9: t: '1e999' is not a time in seconds (a non-negative number such as 0.25)",
        "mem:10: t: ' 2' is not a time in seconds (a non-negative number such as 0.25)",
        "mem:11: t: '2 ' is not a time in seconds (a non-negative number such as 0.25)",
        "mem:12: t: '2 5' is not a time in seconds (a non-negative number such as 0.25)",
        "mem:13: t: '   ' is not a time in seconds (a non-negative number such as 0.25)",
    };
    size_t n = sizeof want / sizeof want[0];
    assert_int_equal(check_text(text, &m, &info), n);
    for (size_t i = 0; i < n; i++)
        assert_string_equal(m.text[i], want[i]);
    assert_int_equal(info.kind, TRACE_TIMES);
    assert_int_equal(info.rows, 3);
    assert_int_equal(info.last, 2 * RS_S);
}

/* trace_next itself: -1 with the message, then the next line. */
static void next_after_a_bad_row(void **state)
{
    (void)state;
    struct trace t;
    char err[512];
    rs_time at = -5;
    double rate = -5;
    assert_int_equal(trace_open_text(&t, "t,rate\n1,1\nbad\n2,3\n", "mem", err, sizeof err), 0);
    assert_int_equal(trace_next(&t, &at, &rate, err, sizeof err), 1);
    assert_int_equal(trace_next(&t, &at, &rate, err, sizeof err), -1);
    assert_string_equal(err, "mem:3: 1 field; allowed: t,rate");
    assert_int_equal(t.last_t, RS_S);
    assert_int_equal(trace_next(&t, &at, &rate, err, sizeof err), 1);
    assert_int_equal(at, 2 * RS_S);
    assert_true(rate == 3.0);
    assert_int_equal(t.line, 4);
    trace_close(&t);
}

static void long_lines(void **state)
{
    (void)state;
    /* a 200-character row is fine (with or without a CR after it); one of
     * 201 is refused, and so is one of 100 000, whose rest is skipped */
    char row[TRACE_MAX_LINE + 1];
    memset(row, '0', TRACE_MAX_LINE);
    row[TRACE_MAX_LINE - 1] = '1';
    row[TRACE_MAX_LINE] = '\0';
    size_t cap = 200000, n = 0;
    char *text = malloc(cap);
    assert_non_null(text);
    n += (size_t)snprintf(text + n, cap - n, "t\n%s\n%s\r\n0%s\n", row, row, row); /* 2, 3, 4 */
    memset(text + n, '9', 100000); /* 5 */
    n += 100000;
    n += (size_t)snprintf(text + n, cap - n, "\n2\n");                             /* 6 */
    struct msgs m;
    struct trace_info info;
    assert_int_equal(check_text(text, &m, &info), 2);
    assert_string_equal(m.text[0], "mem:4: longer than 200 characters");
    assert_string_equal(m.text[1], "mem:5: longer than 200 characters");
    assert_int_equal(info.rows, 3);
    assert_int_equal(info.first, RS_S);
    assert_int_equal(info.last, 2 * RS_S);
    /* a long comment is skipped like any other */
    memset(text, '#', 5000);
    snprintf(text + 5000, cap - 5000, "\nt,rate\n1,1\n");
    assert_int_equal(check_text(text, &m, &info), 0);
    assert_int_equal(info.rows, 1);
    free(text);
}

static void crlf_and_torn_last_line(void **state)
{
    (void)state;
    struct msgs m;
    struct trace_info info;
    assert_int_equal(check_text("# made on Windows\r\nt,rate\r\n0,1\r\n\r\n1,2\r\n", &m, &info), 0);
    assert_int_equal(info.rows, 2);
    assert_int_equal(check_text("t\r\n1\r\n2", &m, &info), 0); /* no final newline */
    assert_int_equal(info.rows, 2);
    assert_int_equal(info.last, 2 * RS_S);
    assert_int_equal(check_text("t,rate\n1,2\r", &m, &info), 0);
    assert_int_equal(info.rows, 1);
    /* a CR anywhere else is a byte of the field, shown escaped */
    assert_int_equal(check_text("t,rate\n1\r,2\n", &m, &info), 1);
    assert_string_equal(m.text[0],
                        "mem:2: t: '1\\x0d' is not a time in seconds (a non-negative number such as 0.25)");
}

/* Files, not text: the NUL byte fmemopen cannot carry. */
static void nul_byte(void **state)
{
    (void)state;
    write_bytes("t,rate\n1,1\n2\0,1\n3,1\n", 20);
    struct trace t;
    char err[512];
    struct msgs m = {0};
    struct trace_info info;
    assert_int_equal(trace_open(&t, path, err, sizeof err), 0);
    assert_int_equal(trace_check(&t, collect, &m, &info), 1);
    char want[256];
    snprintf(want, sizeof want, "%s:3: a NUL byte in the line", path);
    assert_string_equal(m.text[0], want);
    assert_int_equal(info.rows, 2);
    trace_close(&t);
    write_bytes("t\0\n1\n", 5);
    assert_int_equal(trace_open(&t, path, err, sizeof err), -1);
    snprintf(want, sizeof want,
             "%s:1: a NUL byte in the header; allowed: t,rate (rates) or t (timestamps)", path);
    assert_string_equal(err, want);
}

static void headers(void **state)
{
    (void)state;
    header_refused("", "mem: no header line; allowed: t,rate (rates) or t (timestamps)");
    header_refused("# nothing\n\n", "mem: no header line; allowed: t,rate (rates) or t (timestamps)");
    header_refused("time,rate\n1,1\n",
                   "mem:1: header 'time,rate'; allowed: t,rate (rates) or t (timestamps)");
    header_refused("\n#\nt, rate\n", "mem:3: header 't, rate'; allowed: t,rate (rates) or t (timestamps)");
    header_refused("T\n", "mem:1: header 'T'; allowed: t,rate (rates) or t (timestamps)");
    header_refused("t,rate,x\n", "mem:1: header 't,rate,x'; allowed: t,rate (rates) or t (timestamps)");
    header_refused("1,5\n", "mem:1: header '1,5'; allowed: t,rate (rates) or t (timestamps)");
    header_refused("\xef\xbb\xbft\n",
                   "mem:1: header '\\xef\\xbb\\xbft'; allowed: t,rate (rates) or t (timestamps)");
    /* the file form: an empty file has no header */
    write_bytes("", 0);
    struct trace t;
    char err[512], want[256];
    assert_int_equal(trace_open(&t, path, err, sizeof err), -1);
    snprintf(want, sizeof want, "%s: no header line; allowed: t,rate (rates) or t (timestamps)", path);
    assert_string_equal(err, want);
}

/* What a hostile file writes into a message is clipped and escaped. */
static void hostile_values(void **state)
{
    (void)state;
    struct msgs m;
    struct trace_info info;
    assert_int_equal(check_text("t,rate\n1,\x1b[2J\x07\\x\n"
                                "1234567890123456789012345678901234567890xyz,1\n",
                                &m, &info),
                     2);
    assert_string_equal(m.text[0], "mem:2: rate: '\\x1b[2J\\x07\\\\x' is not a rate "
                                   "(a number from 0 to 1e9 per second)");
    assert_string_equal(m.text[1], "mem:3: t: '1234567890123456789012345678901234567890...' "
                                   "is not a time in seconds (a non-negative number such as 0.25)");
    for (size_t i = 0; i < m.n; i++)
        for (const char *p = m.text[i]; *p; p++)
            assert_true(*p >= 0x20 && *p < 0x7f);
    header_refused("\x1b]0;pwned\x07\n",
                   "mem:1: header '\\x1b]0;pwned\\x07'; allowed: t,rate (rates) or t (timestamps)");
}

static void refuses_fifos_and_directories(void **state)
{
    (void)state;
    struct trace t;
    char err[512], want[256];
    assert_int_equal(trace_open(&t, dir, err, sizeof err), -1);
    snprintf(want, sizeof want, "%s: not a regular file", dir);
    assert_string_equal(err, want);
    assert_int_equal(trace_open(&t, path, err, sizeof err), -1); /* absent */
    snprintf(want, sizeof want, "%s: %s", path, strerror(ENOENT));
    assert_string_equal(err, want);
    assert_int_equal(mkfifo(path, 0600), 0); /* refused at once, no hang */
    assert_int_equal(trace_open(&t, path, err, sizeof err), -1);
    snprintf(want, sizeof want, "%s: not a regular file", path);
    assert_string_equal(err, want);
    assert_null(t.f);
}

#define BIG_ROWS 10000000u

/* Writes BIG_ROWS timestamps, row i at i/10^4 s ("999.9999"), through a
 * small buffer; returns the size of the file. */
static size_t write_big(void)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    char buf[1 << 16];
    size_t n = 0, total = 0;
    memcpy(buf, "t\n", 2);
    n = 2;
    for (unsigned i = 0; i < BIG_ROWS; i++) {
        if (n > sizeof buf - 32) {
            assert_int_equal(fwrite(buf, 1, n, f), n);
            total += n;
            n = 0;
        }
        unsigned s = i / 10000, frac = i % 10000;
        char digits[12];
        int k = 0;
        do {
            digits[k++] = (char)('0' + s % 10);
            s /= 10;
        } while (s > 0);
        while (k > 0)
            buf[n++] = digits[--k];
        buf[n++] = '.';
        buf[n++] = (char)('0' + frac / 1000);
        buf[n++] = (char)('0' + frac / 100 % 10);
        buf[n++] = (char)('0' + frac / 10 % 10);
        buf[n++] = (char)('0' + frac % 10);
        buf[n++] = '\n';
    }
    assert_int_equal(fwrite(buf, 1, n, f), n);
    total += n;
    assert_int_equal(fclose(f), 0);
    return total;
}

static long max_rss_kb(void)
{
    struct rusage ru;
    assert_int_equal(getrusage(RUSAGE_SELF, &ru), 0);
    return ru.ru_maxrss;
}

/* 10^7 rows streamed: the peak memory grows by far less than the file. */
static void ten_million_rows(void **state)
{
    (void)state;
    size_t bytes = write_big();
    long before = max_rss_kb();
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    struct trace t;
    char err[512];
    struct msgs m = {0};
    struct trace_info info;
    assert_int_equal(trace_open(&t, path, err, sizeof err), 0);
    assert_int_equal(trace_check(&t, collect, &m, &info), 0);
    trace_close(&t);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    long grew = max_rss_kb() - before;
    print_message("%u rows, %zu bytes checked in %.2f s; peak memory grew by %ld KB\n", BIG_ROWS,
                  bytes, (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9,
                  grew);
    assert_int_equal(info.kind, TRACE_TIMES);
    assert_int_equal(info.rows, BIG_ROWS);
    assert_int_equal(info.first, 0);
    assert_int_equal(info.last, (rs_time)(BIG_ROWS - 1) * 100000);
    assert_true(bytes > 64u << 20);
    assert_true(grew < 4096); /* KB: the file is over 64 MB */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(rates_read_back, setup, teardown),
        cmocka_unit_test(times_read_back),
        cmocka_unit_test(first_and_last_rows),
        cmocka_unit_test(rate_errors),
        cmocka_unit_test(time_errors),
        cmocka_unit_test(next_after_a_bad_row),
        cmocka_unit_test(long_lines),
        cmocka_unit_test(crlf_and_torn_last_line),
        cmocka_unit_test_setup_teardown(nul_byte, setup, teardown),
        cmocka_unit_test_setup_teardown(headers, setup, teardown),
        cmocka_unit_test(hostile_values),
        cmocka_unit_test_setup_teardown(refuses_fifos_and_directories, setup, teardown),
        cmocka_unit_test_setup_teardown(ten_million_rows, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
