/*
 * units — simulated time and the textual units of scenario files.
 *
 * Simulated time is an int64_t count of nanoseconds (rs_time). Durations are
 * written with a unit (ns us ms s m h; a bare 0 is allowed), rates as a count
 * per unit of time (800/s, 48000/m). Parsers are strict: the whole string must
 * be consumed, values must be finite, and out-of-range values are refused,
 * never wrapped. Every operation is O(length of the text).
 */
#ifndef RS_UNITS_H
#define RS_UNITS_H

#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef int64_t rs_time;

#define RS_NS ((rs_time)1)
#define RS_US ((rs_time)1000)
#define RS_MS ((rs_time)1000000)
#define RS_S ((rs_time)1000000000)
/* The largest duration a scenario may state: 1000 days, far below INT64_MAX
 * so that sums of a few of them never overflow. */
#define RS_TIME_LIMIT ((rs_time)86400 * 1000 * RS_S)
#define RS_TIME_NEVER INT64_MAX

/* Parses a duration such as "200ms" or "1.5s" into *out. Returns false when
 * the text is not a non-negative finite duration up to RS_TIME_LIMIT. */
bool units_parse_duration(const char *text, rs_time *out);

/* Parses a rate such as "800/s" into events per second. Returns false when
 * the text is not a non-negative finite rate. */
bool units_parse_rate(const char *text, double *per_s);

/* Parses a finite real number, consuming the whole text. */
bool units_parse_real(const char *text, double *out);

/* A memory size: a number and MB or GB (decimal: 512MB, 1.5GB), from 1 MB
 * to 1000 GB, in bytes. */
bool units_parse_size(const char *text, double *bytes);

/* Parses a decimal integer in [lo, hi], consuming the whole text. */
bool units_parse_int(const char *text, long long lo, long long hi, long long *out);

/* Writes the duration with the largest unit that states it exactly
 * ("200ms", "1500us", "0"). Returns buf. */
char *units_format_duration(rs_time t, char *buf, size_t size);

/* Seconds as a double, for outputs. */
static inline double units_seconds(rs_time t) { return (double)t / 1e9; }

/* a + b, clamped to RS_TIME_NEVER instead of overflowing (both >= 0). */
static inline rs_time units_add(rs_time a, rs_time b)
{
    return (b > RS_TIME_NEVER - a) ? RS_TIME_NEVER : a + b;
}

static inline rs_time units_min(rs_time a, rs_time b) { return a < b ? a : b; }

/* x rounded half away from zero, as llround rounds, as a double; inline
 * and without a libm call (it runs for every sampled delay). The fraction
 * x - trunc(x) is exact in binary floating point, so the result is
 * llround's. */
static inline double units_round(double x)
{
    double r = trunc(x), f = x - r;
    return f >= 0.5 ? r + 1.0 : f <= -0.5 ? r - 1.0 : r;
}

/* Rounds a non-negative double count of nanoseconds to rs_time, half away
 * from zero, clamped to [0, RS_TIME_LIMIT]; NaN becomes 0. */
static inline rs_time units_from_ns(double ns)
{
    if (!(ns > 0.0))
        return 0;
    if (ns >= (double)RS_TIME_LIMIT)
        return RS_TIME_LIMIT;
    return (rs_time)units_round(ns);
}

#endif
