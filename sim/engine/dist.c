/*
 * dist — parsing and sampling of duration distributions. See dist.h.
 */
#include "dist.h"

#include <gsl/gsl_math.h>
#include <gsl/gsl_randist.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

struct dist_desc {
    const char *name;
    int nparams;
    bool second_is_duration;
    const char *usage;
};
/* bimodal's third parameter is a probability */

static const struct dist_desc descs[] = {
    [DIST_CONST] = {"const", 1, false, "const(D)"},
    [DIST_EXP] = {"exp", 1, false, "exp(MEAN)"},
    [DIST_UNIFORM] = {"uniform", 2, true, "uniform(LO, HI)"},
    [DIST_LOGNORMAL] = {"lognormal", 2, false, "lognormal(MEAN, CV)"},
    [DIST_GAMMA] = {"gamma", 2, false, "gamma(MEAN, CV)"},
    [DIST_PARETO] = {"pareto", 2, false, "pareto(MEAN, SHAPE)"},
    [DIST_ABSNORMAL] = {"absnormal", 2, true, "absnormal(MEAN, SD)"},
    [DIST_BIMODAL] = {"bimodal", 3, true, "bimodal(FAST, SLOW, P_SLOW)"},
};
#define NDESCS (sizeof descs / sizeof descs[0])

static const char allowed[] =
    "const(D), exp(MEAN), uniform(LO, HI), lognormal(MEAN, CV), gamma(MEAN, CV), "
    "pareto(MEAN, SHAPE>1), absnormal(MEAN, SD), bimodal(FAST, SLOW, P_SLOW)";

static void trim(char *s)
{
    size_t n = strlen(s);
    while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t'))
        s[--n] = '\0';
    size_t i = 0;
    while (s[i] == ' ' || s[i] == '\t')
        i++;
    memmove(s, s + i, n - i + 1);
}

/* Fills the GSL-form parameters from a and b; false if they are out of range. */
static bool derive(struct dist *d, char *why, size_t why_size)
{
    switch (d->kind) {
    case DIST_CONST:
    case DIST_EXP:
        d->p1 = d->a;
        return true;
    case DIST_UNIFORM:
        if (d->b < d->a) {
            snprintf(why, why_size, "uniform(LO, HI) needs LO <= HI");
            return false;
        }
        d->p1 = d->a;
        d->p2 = d->b;
        return true;
    case DIST_LOGNORMAL:
    case DIST_GAMMA:
        if (!(d->b > 0.0 && d->b <= 100.0)) {
            snprintf(why, why_size, "%s: CV must be a number in (0, 100]", descs[d->kind].name);
            return false;
        }
        if (!(d->a > 0.0)) {
            snprintf(why, why_size, "%s: MEAN must be > 0", descs[d->kind].name);
            return false;
        }
        if (d->kind == DIST_LOGNORMAL) {
            double s2 = log1p(d->b * d->b);
            d->p1 = log(d->a) - s2 / 2.0; /* zeta */
            d->p2 = sqrt(s2);             /* sigma */
        } else {
            d->p1 = 1.0 / (d->b * d->b); /* shape k */
            d->p2 = d->a / d->p1;        /* scale theta */
        }
        return true;
    case DIST_ABSNORMAL:
        d->p1 = d->a;
        d->p2 = d->b;
        return true;
    case DIST_BIMODAL:
        if (!(d->c >= 0.0 && d->c <= 1.0)) {
            snprintf(why, why_size, "bimodal: P_SLOW must be a probability from 0 to 1");
            return false;
        }
        d->p1 = d->a;
        d->p2 = d->b;
        return true;
    case DIST_PARETO:
        if (!(d->b > 1.0 && d->b <= 1000.0)) {
            snprintf(why, why_size, "pareto: SHAPE must be a number in (1, 1000] (the mean is infinite at 1)");
            return false;
        }
        if (!(d->a > 0.0)) {
            snprintf(why, why_size, "pareto: MEAN must be > 0");
            return false;
        }
        d->p1 = d->b;                         /* shape */
        d->p2 = d->a * (d->b - 1.0) / d->b;   /* scale (the minimum) */
        return true;
    }
    return false;
}

bool dist_parse(const char *text, struct dist *d, char *why, size_t why_size)
{
    char buf[256];
    if (strlen(text) >= sizeof buf) {
        snprintf(why, why_size, "too long; expected one of %s", allowed);
        return false;
    }
    strcpy(buf, text);
    trim(buf);
    char *open = strchr(buf, '(');
    size_t len = strlen(buf);
    if (open == NULL || len == 0 || buf[len - 1] != ')') {
        snprintf(why, why_size, "expected one of %s", allowed);
        return false;
    }
    *open = '\0';
    buf[len - 1] = '\0';
    trim(buf);
    size_t k;
    for (k = 0; k < NDESCS; k++)
        if (strcmp(buf, descs[k].name) == 0)
            break;
    if (k == NDESCS) {
        snprintf(why, why_size, "unknown distribution '%s'; expected one of %s", buf, allowed);
        return false;
    }
    const struct dist_desc *dd = &descs[k];
    char *args = open + 1;
    char *comma = strchr(args, ',');
    char *comma2 = comma ? strchr(comma + 1, ',') : NULL;
    int n = comma ? (comma2 ? 3 : 2) : 1;
    if (comma2 != NULL && strchr(comma2 + 1, ',') != NULL)
        n = 4;
    if (n != dd->nparams) {
        snprintf(why, why_size, "%s takes %d parameter%s: %s", dd->name, dd->nparams,
                 dd->nparams == 1 ? "" : "s", dd->usage);
        return false;
    }
    if (comma)
        *comma = '\0';
    if (comma2)
        *comma2 = '\0';
    trim(args);
    rs_time first;
    if (!units_parse_duration(args, &first)) {
        snprintf(why, why_size, "%s: '%s' is not a duration (e.g. 10ms); usage %s", dd->name, args,
                 dd->usage);
        return false;
    }
    memset(d, 0, sizeof *d);
    d->kind = (enum dist_kind)k;
    d->a = (double)first;
    if (n == 3) {
        char *third = comma2 + 1;
        trim(third);
        if (!units_parse_real(third, &d->c)) {
            snprintf(why, why_size, "%s: '%s' is not a number; usage %s", dd->name, third, dd->usage);
            return false;
        }
    }
    if (n >= 2) {
        char *second = comma + 1;
        trim(second);
        if (dd->second_is_duration) {
            rs_time t;
            if (!units_parse_duration(second, &t)) {
                snprintf(why, why_size, "%s: '%s' is not a duration; usage %s", dd->name, second,
                         dd->usage);
                return false;
            }
            d->b = (double)t;
        } else if (!units_parse_real(second, &d->b)) {
            snprintf(why, why_size, "%s: '%s' is not a number; usage %s", dd->name, second, dd->usage);
            return false;
        }
    }
    return derive(d, why, why_size);
}

char *dist_format(const struct dist *d, char *buf, size_t size)
{
    char a[32], b[32];
    units_format_duration((rs_time)d->a, a, sizeof a);
    const struct dist_desc *dd = &descs[d->kind];
    if (dd->nparams == 1)
        snprintf(buf, size, "%s(%s)", dd->name, a);
    else if (dd->nparams == 3)
        snprintf(buf, size, "%s(%s, %s, %.17g)", dd->name, a,
                 units_format_duration((rs_time)d->b, b, sizeof b), d->c);
    else if (dd->second_is_duration)
        snprintf(buf, size, "%s(%s, %s)", dd->name, a, units_format_duration((rs_time)d->b, b, sizeof b));
    else
        snprintf(buf, size, "%s(%s, %.17g)", dd->name, a, d->b);
    return buf;
}

double dist_mean_ns(const struct dist *d)
{
    double m = d->a, s = d->b;
    switch (d->kind) {
    case DIST_UNIFORM:
        return (d->a + d->b) / 2.0;
    case DIST_BIMODAL:
        return (1.0 - d->c) * d->a + d->c * d->b;
    case DIST_ABSNORMAL: /* the folded normal's mean */
        if (s == 0)
            return m;
        return s * sqrt(2.0 / M_PI) * exp(-m * m / (2 * s * s)) + m * erf(m / (s * M_SQRT2));
    default:
        return d->a;
    }
}

/* ---- the exponential: Marsaglia and Tsang's ziggurat ----
 *
 * G. Marsaglia, W. W. Tsang, "The Ziggurat Method for Generating Random
 * Variables", J. Stat. Softw. 5(8), 2000: 256 layers of equal area v under
 * e^-x, the lowest reaching r = 7.697117470131487 and holding the tail.
 * One 32-bit draw gives the layer (its top 8 bits) and a 24-bit uniform u
 * within it; x = u·w[i] lies in the layer's rectangle [0, x_i), and is
 * taken at once when it lies under the layer above (u < k[i], 98.9 % of
 * draws). Otherwise, in the wedge, x is taken with probability exactly
 * (e^-x - f[i]) / (f[i-1] - f[i]) by a second uniform; in the base layer
 * (i = 0) it is r plus an exponential (memoryless), drawn the same way.
 * Exact in distribution up to the 24-bit grid of u (2^-24 of the layer's
 * width: at most 0.52 ns for a mean of 1 ms). The tables, as the paper builds them
 * with m = 2^24, are filled once when the program starts; test_dist
 * checks them against the curve and the draws against e^-x. */
#define ZIG_R 7.697117470131487
#define ZIG_V 3.949659822581572e-3
static struct {
    uint32_t k[256]; /* u < k[i]: under the layer above */
    double w[256];   /* x = u · w[i] */
    double f[256];   /* e^-x_i, the layer's lower edge (f[0] = 1, the top) */
} zig;

__attribute__((constructor)) static void zig_tables(void)
{
    const double m = 16777216.0; /* 2^24 */
    double de = ZIG_R, te = de, q = ZIG_V / exp(-de);
    zig.k[0] = (uint32_t)((de / q) * m);
    zig.k[1] = 0;
    zig.w[0] = q / m;
    zig.w[255] = de / m;
    zig.f[0] = 1.0;
    zig.f[255] = exp(-de);
    for (int i = 254; i >= 1; i--) {
        de = -log(ZIG_V / de + exp(-de));
        zig.k[i + 1] = (uint32_t)((de / te) * m);
        te = de;
        zig.f[i] = exp(-de);
        zig.w[i] = de / m;
    }
}

double dist_std_exponential(gsl_rng *r)
{
    double base = 0.0;
    for (;;) {
        uint32_t j = (uint32_t)gsl_rng_get(r), u = j & 0xFFFFFFu;
        unsigned i = j >> 24;
        double x = u * zig.w[i];
        if (u < zig.k[i])
            return base + x;
        if (i == 0)
            base += ZIG_R; /* the tail: r + Exp(1) */
        else if (zig.f[i] + gsl_rng_uniform(r) * (zig.f[i - 1] - zig.f[i]) < exp(-x))
            return base + x;
    }
}

void dist_ziggurat_tables(uint32_t *k, double *w, double *f)
{
    memcpy(k, zig.k, sizeof zig.k);
    memcpy(w, zig.w, sizeof zig.w);
    memcpy(f, zig.f, sizeof zig.f);
}

rs_time dist_sample(const struct dist *d, gsl_rng *r)
{
    double ns = 0.0;
    switch (d->kind) {
    case DIST_CONST:
        return (rs_time)d->p1;
    case DIST_EXP:
        ns = d->p1 * dist_std_exponential(r);
        break;
    case DIST_UNIFORM:
        ns = gsl_ran_flat(r, d->p1, d->p2);
        break;
    case DIST_LOGNORMAL:
        ns = gsl_ran_lognormal(r, d->p1, d->p2);
        break;
    case DIST_GAMMA:
        ns = gsl_ran_gamma(r, d->p1, d->p2);
        break;
    case DIST_PARETO:
        ns = gsl_ran_pareto(r, d->p1, d->p2);
        break;
    case DIST_ABSNORMAL:
        ns = fabs(d->p1 + gsl_ran_gaussian(r, d->p2));
        break;
    case DIST_BIMODAL:
        return gsl_rng_uniform(r) < d->c ? (rs_time)d->p2 : (rs_time)d->p1;
    }
    return units_from_ns(ns);
}

struct dist dist_scaled(const struct dist *d, double f)
{
    struct dist s = *d;
    char why[256];
    s.a = d->a * f;
    if (d->kind == DIST_UNIFORM || d->kind == DIST_ABSNORMAL || d->kind == DIST_BIMODAL)
        s.b = d->b * f;
    (void)derive(&s, why, sizeof why);
    return s;
}
