/*
 * units — parsing and formatting of durations, rates and numbers. See units.h.
 */
#include "units.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct unit {
    const char *name;
    double ns;
};

static const struct unit time_units[] = {
    {"ns", 1.0}, {"us", 1e3}, {"ms", 1e6}, {"s", 1e9}, {"m", 60e9}, {"h", 3600e9},
};

static const struct unit *find_unit(const char *name)
{
    for (size_t i = 0; i < sizeof time_units / sizeof time_units[0]; i++)
        if (strcmp(time_units[i].name, name) == 0)
            return &time_units[i];
    return NULL;
}

/* Reads a leading finite number; *rest points after it. */
static bool leading_number(const char *text, double *out, const char **rest)
{
    char *end;
    if (text[0] == '\0' || text[0] == ' ' || text[0] == '\t')
        return false;
    errno = 0;
    double v = strtod(text, &end);
    if (end == text || errno == ERANGE || !isfinite(v))
        return false;
    /* strtod accepts hex floats and "inf"; we want plain decimals only. */
    for (const char *p = text; p < end; p++)
        if (*p == 'x' || *p == 'X' || *p == 'n' || *p == 'N' || *p == 'i' || *p == 'I')
            return false;
    *out = v;
    *rest = end;
    return true;
}

bool units_parse_real(const char *text, double *out)
{
    const char *rest;
    return leading_number(text, out, &rest) && *rest == '\0';
}

bool units_parse_int(const char *text, long long lo, long long hi, long long *out)
{
    char *end;
    if (text[0] == '\0' || text[0] == ' ')
        return false;
    errno = 0;
    long long v = strtoll(text, &end, 10);
    if (*end != '\0' || errno == ERANGE || v < lo || v > hi)
        return false;
    *out = v;
    return true;
}


bool units_parse_duration(const char *text, rs_time *out)
{
    double v;
    const char *rest;
    if (text[0] == '-' || !leading_number(text, &v, &rest) || v < 0.0)
        return false; /* no sign at all: "-0ms" is not a duration either */
    if (*rest == '\0') {
        if (v != 0.0)
            return false; /* a unit is required for anything but 0 */
        *out = 0;
        return true;
    }
    const struct unit *u = find_unit(rest);
    if (u == NULL)
        return false;
    double ns = v * u->ns;
    if (ns > (double)RS_TIME_LIMIT)
        return false;
    *out = (rs_time)llround(ns);
    return true;
}

bool units_parse_rate(const char *text, double *per_s)
{
    double v;
    const char *rest;
    if (!leading_number(text, &v, &rest) || v < 0.0 || rest[0] != '/')
        return false;
    const struct unit *u = find_unit(rest + 1);
    if (u == NULL)
        return false;
    double r = v * 1e9 / u->ns;
    if (!isfinite(r))
        return false;
    *per_s = r;
    return true;
}

char *units_format_duration(rs_time t, char *buf, size_t size)
{
    static const struct {
        const char *name;
        rs_time ns;
    } order[] = {{"h", 3600 * RS_S}, {"m", 60 * RS_S}, {"s", RS_S},
                 {"ms", RS_MS},      {"us", RS_US},    {"ns", RS_NS}};
    if (t == 0) {
        snprintf(buf, size, "0");
        return buf;
    }
    for (size_t i = 0; i < sizeof order / sizeof order[0]; i++) {
        if (t % order[i].ns == 0) {
            snprintf(buf, size, "%lld%s", (long long)(t / order[i].ns), order[i].name);
            return buf;
        }
    }
    return buf; /* unreachable: every t is a multiple of 1 ns */
}

bool units_parse_size(const char *text, double *bytes)
{
    static const struct { const char *unit; double bytes; } units[] = {{"MB", 1e6}, {"GB", 1e9}};
    char *end;
    errno = 0;
    double x = strtod(text, &end), scale = 0;
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++)
        if (strcmp(end, units[i].unit) == 0)
            scale = units[i].bytes;
    if (end == text || errno != 0 || scale == 0 || !(x * scale >= 1e6 && x * scale <= 1e12))
        return false;
    *bytes = x * scale;
    return true;
}
