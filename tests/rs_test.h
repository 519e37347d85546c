/*
 * Helpers shared by the tests that run whole scenarios: load a scenario from
 * text (failing the test with every diagnostic if it is refused) and run it.
 */
#ifndef RS_TEST_H
#define RS_TEST_H

#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "output.h"
#include "scenario.h"
#include "sim.h"
#include "trace.h"

static inline void load_or_fail(struct scenario *sc, const char *text, const char *const *sets,
                                size_t nsets)
{
    struct scenario_diag d = {0};
    int n = scenario_load_text(sc, text, "test", sets, nsets, &d);
    for (size_t i = 0; i < d.n; i++)
        print_error("%s\n", d.msg[i]);
    scenario_diag_fini(&d);
    assert_int_equal(n, 0);
}

/* Runs sc for the given replication; the caller destroys the result. */
static inline struct sim *run_or_fail(const struct scenario *sc, uint32_t rep)
{
    char err[512];
    struct sim *s = trace_sim_create(sc, rep, err, sizeof err);
    if (s == NULL)
        fail_msg("sim_create: %s", err);
    if (sim_run(s, NULL, NULL, err, sizeof err) != 0)
        fail_msg("sim_run: %s", err); /* includes the conservation check */
    return s;
}

/* Loads text with overrides and runs it (replication 0); the caller
 * destroys the result. */
static inline struct sim *run_text(const char *text, const char *const *sets, size_t nsets)
{
    struct scenario sc;
    load_or_fail(&sc, text, sets, nsets);
    return run_or_fail(&sc, 0);
}

/* Whether s is valid UTF-8, decoded the long way (a reference for
 * jsonout_utf8_len's table): each sequence's code point must need its
 * length, not be a surrogate and not pass U+10FFFF. */
/* The run's summary.csv (header and row), malloc'd; with row_only, the
 * row without the header and its newline. */
static inline char *rs_summary_csv(const struct sim *s, const struct summary *sum, bool row_only)
{
    struct summary_cols cols;
    char err[256];
    if (summary_cols_init(&cols, sim_scenario(s), err, sizeof err) != 0)
        fail_msg("%s", err);
    FILE *f = tmpfile(); /* ISO C: the tests need no POSIX feature macro */
    assert_non_null(f);
    output_write_summary_csv(f, s, sum, &cols);
    long len = ftell(f);
    assert_true(len > 0);
    char *buf = malloc((size_t)len + 1);
    assert_non_null(buf);
    rewind(f);
    assert_int_equal(fread(buf, 1, (size_t)len, f), (size_t)len);
    buf[len] = '\0';
    assert_int_equal(fclose(f), 0);
    summary_cols_fini(&cols);
    if (row_only) {
        char *nl = strchr(buf, '\n');
        memmove(buf, nl + 1, strlen(nl + 1) + 1);
        buf[strcspn(buf, "\n")] = '\0';
    }
    return buf;
}

static inline bool rs_valid_utf8(const char *s)
{
    static const unsigned long least[5] = {0, 0, 0x80, 0x800, 0x10000};
    for (const unsigned char *p = (const unsigned char *)s; *p != '\0';) {
        size_t n = *p < 0x80 ? 1 : (*p & 0xE0) == 0xC0 ? 2 : (*p & 0xF0) == 0xE0 ? 3 : (*p & 0xF8) == 0xF0 ? 4 : 0;
        if (n == 0)
            return false;
        unsigned long cp = n == 1 ? *p : *p & (0x7Fu >> n);
        for (size_t k = 1; k < n; k++) {
            if ((p[k] & 0xC0) != 0x80)
                return false;
            cp = cp << 6 | (p[k] & 0x3Fu);
        }
        if (cp < least[n] || (cp >= 0xD800 && cp <= 0xDFFF) || cp > 0x10FFFF)
            return false;
        p += n;
    }
    return true;
}

/* The claims tests: a scenario's claim must hold on at least CLAIM_NEED of
 * seeds 1..CLAIM_SEEDS on each side of its contrast (the count is printed). */
#define CLAIM_SEEDS 20
#define CLAIM_NEED 18
static inline void claim_require(const char *name, const char *side, unsigned pass)
{
    print_message("%s, %s: the claim holds on %u of %d seeds\n", name, side, pass, CLAIM_SEEDS);
    assert_true(pass >= CLAIM_NEED);
}

/* A claim that must hold on every seed (the verdicts' claims). */
static inline void claim_require_all(const char *name, const char *side, unsigned pass)
{
    print_message("%s, %s: the claim holds on %u of %d seeds\n", name, side, pass, CLAIM_SEEDS);
    assert_int_equal(pass, CLAIM_SEEDS);
}

/* Runs built-in `name` with seed `seed` and at most 7 overrides (the
 * claims tests); the caller destroys the result. */
static inline struct sim *run_builtin(const char *name, unsigned seed, const char *const *extra,
                                      size_t n)
{
    char seedset[64];
    const char *sets[8];
    snprintf(seedset, sizeof seedset, "run.seed=%u", seed);
    sets[0] = seedset;
    assert_true(n <= 7);
    for (size_t i = 0; i < n; i++)
        sets[i + 1] = extra[i];
    const char *text = scenario_builtin_text(name);
    assert_non_null(text);
    struct scenario sc;
    load_or_fail(&sc, text, sets, n + 1);
    return run_or_fail(&sc, 0);
}

/* The summary's `recovered`: 1 when the verdict is recovered, 0 when
 * metastable or overloaded, -1 without a trigger or when undetermined. */
static inline int recovered(const struct sim *s)
{
    struct summary o;
    output_summarise(s, 0.0, &o);
    return o.recovered;
}

/* The run's verdict (docs/verdicts.md). */
static inline enum verdict verdict_of(const struct sim *s)
{
    struct summary o;
    output_summarise(s, 0.0, &o);
    return o.verdict;
}

/* ok outcomes over all logical requests counted (the claims tests). */
static inline double ok_share(const struct sim *s)
{
    const struct metrics *m = sim_metrics(s);
    return (double)m->outcomes[OUT_OK] / (double)m->requests;
}

/* ok outcomes over offered requests in buckets [t0, t1). */
static inline double ok_between(const struct sim *s, size_t t0, size_t t1)
{
    const struct metrics *m = sim_metrics(s);
    uint64_t ok = 0, offered = 0;
    assert_true(t1 <= m->nbuckets);
    for (size_t b = t0; b < t1; b++) {
        ok += m->b[b].outcomes[OUT_OK];
        offered += m->b[b].offered;
    }
    assert_true(offered > 0);
    return (double)ok / (double)offered;
}

#endif
