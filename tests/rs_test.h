/*
 * Helpers shared by the tests that run whole scenarios: load a scenario from
 * text (failing the test with every diagnostic if it is refused) and run it.
 */
#ifndef RS_TEST_H
#define RS_TEST_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>

#include "output.h"
#include "scenario.h"
#include "sim.h"

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
    struct sim *s = sim_create(sc, rep, err, sizeof err);
    if (s == NULL)
        fail_msg("sim_create: %s", err);
    if (sim_run(s, NULL, NULL, err, sizeof err) != 0)
        fail_msg("sim_run: %s", err); /* includes the conservation check */
    return s;
}

#endif
