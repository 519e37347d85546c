/*
 * A retry budget driven by hand in the tests (test_budget.c,
 * test_edges_policy.c): a kind with its defaults, its state, one call, and
 * room for any kind's extra state. rs_bud_make copies the defaults (change
 * b.p after it); rs_bud_attach, after the copy, points the state at its
 * own extra state.
 */
#ifndef RS_TEST_BUDGET_H
#define RS_TEST_BUDGET_H

#include <string.h>

#include "budget.h"

struct rs_bud {
    const struct budget_kind *k;
    struct budget_params p;
    struct budget_state s;
    struct budget_call c;
    union {
        struct window w;
        struct budget_adaptive a;
    } x; /* the kind's extra state */
};

static inline struct rs_bud rs_bud_make(const char *name)
{
    struct rs_bud b;
    memset(&b, 0, sizeof b);
    b.k = budget_find(name);
    assert_non_null(b.k);
    b.p = b.k->defaults;
    return b;
}

static inline void rs_bud_attach(struct rs_bud *b)
{
    assert_true(budget_extra_size(b->k) <= sizeof b->x);
    budget_state_init(b->k, &b->p, &b->s, budget_extra_size(b->k) ? &b->x : NULL);
}

#endif
