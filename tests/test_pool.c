/*
 * The object pool: indices handed out once until freed, reused last-in
 * first-out, new objects zeroed, freed ones keeping their bytes, pointers
 * stable across chunks, and the live count (what serve's object limit
 * reads) exact through fresh allocations, reuse and frees.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "pool.h"

struct obj {
    uint64_t gen, payload;
};

static void indices_live_count_and_reuse(void **state)
{
    (void)state;
    struct pool p;
    pool_init(&p, sizeof(struct obj));
    enum { N = 300000 }; /* 2^17 objects of 16 bytes a chunk: three chunks */
    static uint32_t idx[N];
    static struct obj *ptr[N];
    for (uint32_t i = 0; i < N; i++) {
        idx[i] = pool_alloc(&p);
        ptr[i] = pool_at(&p, idx[i]);
        assert_true(ptr[i]->gen == 0 && ptr[i]->payload == 0); /* new: zero */
        ptr[i]->gen = i + 1;
        assert_int_equal(p.live, i + 1);
    }
    assert_true(p.nchunks >= 3);
    for (uint32_t i = 0; i < N; i++) /* distinct, and pointers did not move */
        assert_true(pool_at(&p, idx[i]) == ptr[i] && ptr[i]->gen == i + 1);
    pool_free(&p, idx[7]);
    pool_free(&p, idx[9]);
    assert_int_equal(p.live, N - 2);
    uint32_t a = pool_alloc(&p), b = pool_alloc(&p);
    assert_true(a == idx[9] && b == idx[7]); /* last freed, first reused */
    assert_true(((struct obj *)pool_at(&p, a))->gen == 10); /* keeps its bytes */
    assert_int_equal(p.live, N);
    uint32_t c = pool_alloc(&p); /* fresh again */
    assert_true(c != a && c != b && ((struct obj *)pool_at(&p, c))->gen == 0);
    assert_int_equal(p.live, N + 1);
    pool_fini(&p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(indices_live_count_and_reuse),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
