/*
 * Units: durations, rates and numbers are parsed strictly and formatted so
 * that parsing the output gives the same value back.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "units.h"

static void durations(void **state)
{
    (void)state;
    static const struct {
        const char *text;
        rs_time ns;
    } good[] = {
        {"0", 0},          {"1ns", 1},         {"5us", 5000},          {"200ms", 200 * RS_MS},
        {"1.5s", 1500 * RS_MS}, {"2m", 120 * RS_S}, {"1h", 3600 * RS_S}, {"0.5ms", 500 * RS_US},
        {"1e3ms", RS_S},
    };
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        rs_time t = -1;
        assert_true(units_parse_duration(good[i].text, &t));
        assert_true(t == good[i].ns);
    }
    static const char *bad[] = {"", "5", "-1s", "1 s", " 1s", "1sec", "ms", "nan", "infs",
                                "1e30s", "0x10s", "1.5.5s", "24001h", "-0ms", "-0"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        rs_time t;
        assert_false(units_parse_duration(bad[i], &t));
    }
}

static void rates(void **state)
{
    (void)state;
    double r;
    assert_true(units_parse_rate("800/s", &r));
    assert_true(r == 800.0);
    assert_true(units_parse_rate("60/m", &r));
    assert_true(r == 1.0);
    assert_true(units_parse_rate("2/ms", &r));
    assert_true(r == 2000.0);
    assert_false(units_parse_rate("800", &r));
    assert_false(units_parse_rate("800/", &r));
    assert_false(units_parse_rate("-1/s", &r));
    assert_false(units_parse_rate("x2", &r));
    assert_false(units_parse_rate("1/sec", &r));
}

static void format_round_trips(void **state)
{
    (void)state;
    rs_time values[] = {0, 1, 999, 1000, 200 * RS_MS, 1500 * RS_MS, 60 * RS_S, 7 * 3600 * RS_S,
                        RS_TIME_LIMIT, 123456789};
    char buf[32];
    for (size_t i = 0; i < sizeof values / sizeof values[0]; i++) {
        rs_time back = -1;
        assert_true(units_parse_duration(units_format_duration(values[i], buf, sizeof buf), &back));
        assert_true(back == values[i]);
    }
    assert_string_equal(units_format_duration(200 * RS_MS, buf, sizeof buf), "200ms");
    assert_string_equal(units_format_duration(90 * RS_S, buf, sizeof buf), "90s");
}

static void add_clamps(void **state)
{
    (void)state;
    assert_true(units_add(RS_TIME_NEVER - 5, 10) == RS_TIME_NEVER);
    assert_true(units_add(5, RS_TIME_NEVER) == RS_TIME_NEVER);
    assert_true(units_add(5, 10) == 15);
    assert_true(units_from_ns(1e300) == RS_TIME_LIMIT);
    assert_true(units_from_ns(-3.0) == 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(durations),
        cmocka_unit_test(rates),
        cmocka_unit_test(format_round_trips),
        cmocka_unit_test(add_clamps),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
