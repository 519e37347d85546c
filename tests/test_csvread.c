/*
 * Unit tests of csvread: the reader of our own files treats them as
 * hostile (fifos, size limits, NUL bytes, torn last lines, whole-field
 * numbers).
 */
#define _POSIX_C_SOURCE 200809L

#include "rs_test.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "csvread.h"
#include "rs_scratch.h"

static struct scratch scr;
#define dir (scr.dir)
#define path (scr.path)

static int setup(void **state)
{
    (void)state;
    return scratch_make(&scr, "csv", "f.csv");
}

static int teardown(void **state)
{
    (void)state;
    return scratch_remove(&scr);
}

static void write_bytes(const char *bytes, size_t n) { scratch_write(&scr, bytes, n); }

static void lines_and_fields(void **state)
{
    (void)state;
    const char *text = "a,b,c\r\n1,,3\nx,y,z,w\ntorn,row";
    write_bytes(text, strlen(text));
    struct csv c;
    char err[256], *f[3];
    bool more;
    assert_int_equal(csv_open(&c, path, 1000, err, sizeof err), 0);
    assert_int_equal(csv_next(&c, f, 3, &more), 3);
    assert_string_equal(f[2], "c"); /* \r dropped */
    assert_false(more);
    assert_int_equal(csv_next(&c, f, 3, &more), 3);
    assert_string_equal(f[1], "");
    assert_int_equal(csv_next(&c, f, 3, &more), 3);
    assert_true(more); /* a fourth field */
    assert_int_equal(c.line, 3);
    assert_false(c.torn);
    assert_int_equal(csv_next(&c, f, 3, &more), 2);
    assert_true(c.torn); /* no newline at the end */
    assert_int_equal(csv_next(&c, f, 3, &more), 0);
    csv_close(&c);
}

static void refuses_hostile_files(void **state)
{
    (void)state;
    struct csv c;
    char err[256];
    write_bytes("a,b\0c\n", 6);
    assert_int_equal(csv_open(&c, path, 1000, err, sizeof err), -1);
    assert_non_null(strstr(err, "NUL"));
    write_bytes("0123456789", 10);
    assert_int_equal(csv_open(&c, path, 9, err, sizeof err), -1);
    assert_non_null(strstr(err, "more than"));
    assert_int_equal(csv_open(&c, path, 10, err, sizeof err), 0); /* exactly the limit: read */
    csv_close(&c);
    unlink(path);
    assert_int_equal(csv_open(&c, path, 9, err, sizeof err), 1); /* absent */
    assert_int_equal(mkfifo(path, 0600), 0); /* a fifo: refused at once, no hang */
    assert_int_equal(csv_open(&c, path, 1000, err, sizeof err), -1);
    assert_non_null(strstr(err, "not a regular file"));
}

static void numbers(void **state)
{
    (void)state;
    uint64_t u;
    double d;
    assert_true(csv_uint("42", 100, &u) && u == 42);
    assert_false(csv_uint("101", 100, &u));
    assert_false(csv_uint("-1", 100, &u));
    assert_false(csv_uint("+1", 100, &u));
    assert_false(csv_uint(" 1", 100, &u));
    assert_false(csv_uint("1x", 100, &u));
    assert_false(csv_uint("", 100, &u));
    assert_false(csv_uint("18446744073709551616", UINT64_MAX, &u));
    assert_true(csv_uint("18446744073709551615", UINT64_MAX, &u) && u == UINT64_MAX);
    assert_true(csv_double("", &d) && isnan(d));
    assert_true(csv_double("-1.5e3", &d) && d == -1500.0);
    assert_false(csv_double("nan", &d));
    assert_false(csv_double("inf", &d));
    assert_false(csv_double("1e999", &d));
    assert_false(csv_double("1,5", &d));
    assert_false(csv_double("0x", &d));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(lines_and_fields, setup, teardown),
        cmocka_unit_test_setup_teardown(refuses_hostile_files, setup, teardown),
        cmocka_unit_test(numbers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
