/*
 * Out of memory while building and ending a run. The test is linked with
 * `-Wl,--wrap=` for every allocator the core calls (malloc, calloc,
 * realloc, aligned_alloc and mmap from mem.c, and GSL's gsl_rng_alloc and
 * gsl_histogram_calloc from rng.c and metrics.c), so every such call in the
 * core's objects comes here first: counted while armed, and made to fail
 * when the count reaches the armed number.
 *
 * For N = 1, 2, ... sim_create is called with its Nth allocation failing,
 * until it makes fewer than N (it then succeeds). Each failure must end in
 * NULL with a message that says memory ran short, never a crash, and leave
 * nothing allocated: besides ASan's leak checker (the sanitizer build),
 * the wrappers keep their own count of blocks live (malloc family and GSL
 * objects) and mem_mapped() the large mappings, both 0 after every failure
 * and after sim_destroy. The end-of-run checks of sim_run (conservation of
 * requests and of attempts per edge) are tested the same way with only
 * calloc failing: in flight, the pools and the event queue grow through
 * realloc, aligned_alloc and mmap and abort on failure by design (an
 * out-of-memory in the middle of a run is not recoverable), and the checks
 * are the run's only callocs.
 *
 * The scenarios are chosen so that every optional part allocates: layers
 * with per-client budgets of each state shape and breakers of each,
 * bulkheads, coalescing caches, hedges by percentile, a call graph with
 * replicas, phases, a closed loop with a herd, a trace, the occ model, and
 * per-client arrays of 2 MiB and more (mem_alloc maps those). Each is
 * parsed before anything is armed. Costs: per scenario, one sim_create for
 * each of its allocations (a few dozen) and one run for each calloc of the
 * checks; 0.1 s in all.
 */
#define _GNU_SOURCE /* off_t, MAP_FAILED */

#include "rs_test.h"

#include <errno.h>
#include <gsl/gsl_histogram.h>
#include <gsl/gsl_rng.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/types.h>

#include "mem.h"

/* ---- the wrappers ---- */

enum {
    K_MALLOC = 1u << 0,
    K_CALLOC = 1u << 1,
    K_REALLOC = 1u << 2,
    K_ALIGNED = 1u << 3,
    K_MMAP = 1u << 4,
    K_GSL = 1u << 5,
    K_ALL = (1u << 6) - 1
};

static long armed_at;  /* 0: nothing fails; else the number of the call to fail */
static unsigned kinds; /* which allocators count towards armed_at */
static long calls;     /* calls counted since armed */
static long injected;  /* failures made since armed (0 or 1) */
static long live;      /* blocks allocated minus blocks freed (malloc family and GSL objects) */
static long by_kind[6]; /* failures made, by allocator (bit number of K_), over the whole test */
static const char *const kind_names[6] = {"malloc", "calloc", "realloc", "aligned_alloc", "mmap", "GSL"};

static bool fail_now(unsigned kind)
{
    if (armed_at == 0 || (kinds & kind) == 0 || ++calls != armed_at)
        return false;
    injected++;
    by_kind[__builtin_ctz(kind)]++;
    errno = ENOMEM;
    return true;
}

static void *counted(void *p)
{
    if (p != NULL)
        live++;
    return p;
}

void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t size);
void *__real_realloc(void *p, size_t n);
void *__real_aligned_alloc(size_t align, size_t n);
void __real_free(void *p);
void *__real_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off);
gsl_rng *__real_gsl_rng_alloc(const gsl_rng_type *t);
void __real_gsl_rng_free(gsl_rng *r);
gsl_histogram *__real_gsl_histogram_calloc(size_t n);
void __real_gsl_histogram_free(gsl_histogram *h);

void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t n, size_t size);
void *__wrap_realloc(void *p, size_t n);
void *__wrap_aligned_alloc(size_t align, size_t n);
void __wrap_free(void *p);
void *__wrap_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off);
gsl_rng *__wrap_gsl_rng_alloc(const gsl_rng_type *t);
void __wrap_gsl_rng_free(gsl_rng *r);
gsl_histogram *__wrap_gsl_histogram_calloc(size_t n);
void __wrap_gsl_histogram_free(gsl_histogram *h);

void *__wrap_malloc(size_t n) { return fail_now(K_MALLOC) ? NULL : counted(__real_malloc(n)); }
void *__wrap_calloc(size_t n, size_t size)
{
    return fail_now(K_CALLOC) ? NULL : counted(__real_calloc(n, size));
}
void *__wrap_realloc(void *p, size_t n)
{
    if (fail_now(K_REALLOC))
        return NULL; /* p stays valid, as realloc leaves it */
    void *np = __real_realloc(p, n);
    if (p == NULL)
        counted(np);
    return np;
}
void *__wrap_aligned_alloc(size_t align, size_t n)
{
    return fail_now(K_ALIGNED) ? NULL : counted(__real_aligned_alloc(align, n));
}
void __wrap_free(void *p)
{
    if (p != NULL)
        live--;
    __real_free(p);
}
void *__wrap_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
    return fail_now(K_MMAP) ? MAP_FAILED : __real_mmap(addr, len, prot, flags, fd, off);
}
gsl_rng *__wrap_gsl_rng_alloc(const gsl_rng_type *t)
{
    return fail_now(K_GSL) ? NULL : counted(__real_gsl_rng_alloc(t));
}
void __wrap_gsl_rng_free(gsl_rng *r)
{
    if (r != NULL)
        live--;
    __real_gsl_rng_free(r);
}
gsl_histogram *__wrap_gsl_histogram_calloc(size_t n)
{
    return fail_now(K_GSL) ? NULL : counted(__real_gsl_histogram_calloc(n));
}
void __wrap_gsl_histogram_free(gsl_histogram *h)
{
    if (h != NULL)
        live--;
    __real_gsl_histogram_free(h);
}

static void arm(long n, unsigned which)
{
    armed_at = n;
    kinds = which;
    calls = 0;
    injected = 0;
}

/* Disarms; returns the failures made since arm (0 or 1). */
static long disarm(void)
{
    armed_at = 0;
    return injected;
}

/* ---- the checks ---- */

/* The distinct messages seen, printed once per test: which paths failed. */
#define MAX_MSGS 64
static char msgs[MAX_MSGS][160];
static unsigned nmsgs;

static void note_message(const char *what, const char *err)
{
    if (strstr(err, "out of memory") == NULL)
        fail_msg("%s: the error does not say memory ran short: \"%s\"", what, err);
    for (unsigned i = 0; i < nmsgs; i++)
        if (strcmp(msgs[i], err) == 0)
            return;
    assert_true(nmsgs < MAX_MSGS);
    snprintf(msgs[nmsgs++], sizeof msgs[0], "%s", err);
}

static void print_messages(void)
{
    print_message("  by allocator:");
    for (unsigned k = 0; k < 6; k++)
        print_message(" %s %ld", kind_names[k], by_kind[k]);
    print_message("\n");
    memset(by_kind, 0, sizeof by_kind);
    for (unsigned i = 0; i < nmsgs; i++)
        print_message("  \"%s\"\n", msgs[i]);
    nmsgs = 0;
}

/* Nothing the run allocated is left. */
static void assert_nothing_live(const char *what, long n)
{
    if (live != 0 || mem_mapped() != 0)
        fail_msg("%s, allocation %ld failed: %ld blocks and %zu mapped bytes left behind", what, n,
                 live, mem_mapped());
}

#define MAX_ALLOCS 10000 /* far more than any scenario here makes */

/* Fails each of sim_create's allocations in turn; returns how many it makes. */
static long create_fails_cleanly(const struct scenario *sc, const char *what)
{
    for (long n = 1; n < MAX_ALLOCS; n++) {
        char err[512] = "";
        live = 0;
        arm(n, K_ALL);
        struct sim *s = trace_sim_create(sc, 0, err, sizeof err);
        long hit = disarm();
        if (hit == 0) { /* it made fewer than n: done */
            if (s == NULL)
                fail_msg("%s: sim_create failed with nothing injected: %s", what, err);
            sim_destroy(s);
            assert_nothing_live(what, 0);
            return n - 1;
        }
        if (s != NULL)
            fail_msg("%s: allocation %ld of sim_create failed, yet it returned a simulation", what, n);
        note_message(what, err);
        assert_nothing_live(what, n);
    }
    fail_msg("%s: sim_create made more than %d allocations", what, MAX_ALLOCS);
    return -1;
}

/* Fails each calloc of sim_run (its end-of-run checks) in turn; returns
 * how many it makes. */
static long run_checks_fail_cleanly(const struct scenario *sc, const char *what)
{
    for (long n = 1; n < MAX_ALLOCS; n++) {
        char err[512] = "";
        live = 0;
        struct sim *s = trace_sim_create(sc, 0, err, sizeof err);
        if (s == NULL)
            fail_msg("%s: sim_create: %s", what, err);
        arm(n, K_CALLOC);
        int r = sim_run(s, NULL, NULL, err, sizeof err);
        long hit = disarm();
        sim_destroy(s);
        assert_nothing_live(what, n);
        if (hit == 0) {
            if (r != 0)
                fail_msg("%s: sim_run failed with nothing injected: %s", what, err);
            return n - 1;
        }
        if (r == 0)
            fail_msg("%s: calloc %ld of sim_run failed, yet the run succeeded", what, n);
        note_message(what, err);
    }
    fail_msg("%s: sim_run made more than %d callocs", what, MAX_ALLOCS);
    return -1;
}

/* ---- the scenarios ---- */

struct case_ {
    const char *what, *text;
    long run_callocs; /* the end-of-run checks: the requests', and the edges' unless occ */
};

static const struct case_ cases[] = {
    {"graph", /* budgets and breakers of each state shape, a bulkhead, a cache, hedges, replicas */
     "[run]\nduration = 2s\nseed = 3\nbucket = 250ms\n"
     "[load]\nrate = 100/s\nclients = 20\nkeys = 40\npopularity = zipf(1)\n"
     "[phase slow]\nstart = 500ms\nend = 1s\ntarget = db\nslowdown = 3\n"
     "[phase flush]\nstart = 1s\nend = 1500ms\nflush = items\n"
     "[cache items]\ncapacity = 20\nttl = 500ms\ncoalesce = true\n"
     "[cache pages]\ncapacity = unbounded\nttl = 1s\n"
     "[service api]\nreplicas = 2\nworkers = 8\nservice = exp(1ms)\ncache = items\ncalls = db\n"
     "[service db]\nreplicas = 3\nworkers = 2\nservice = exp(5ms)\ncache = pages\n"
     "[layer client]\nfrom = client\nto = api\nattempts = 3\ntimeout = 100ms\n"
     "budget = ratio\nbudget_scope = client\nbreaker = rate\nbreaker_scope = client\n"
     "breaker_window = 10\nconcurrency = 4\n"
     "[layer pool]\nfrom = api\nto = db\nattempts = 2\ntimeout = 50ms\n"
     "hedge = percentile\nhedge_percentile = 90\nretry_on = none\n"
     "budget = aws-adaptive\nbudget_scope = client\nbreaker = hystrix\nbreaker_scope = client\n",
     2},
    {"closed loop", /* think timers, a herd, phases, a budget without extra state */
     "[run]\nduration = 2s\nseed = 21\nbucket = 100ms\n"
     "[load]\nmodel = closed\nclients = 50\nthink = exp(100ms)\n"
     "[herd]\nat = 1s\n"
     "[phase outage]\nstart = 1s\nend = 1200ms\noutage = refuse\n"
     "[phase later]\nstart = 1500ms\nend = 3s\nslowdown = 2\n"
     "[server]\nworkers = 5\nservice = exp(2ms)\nqueue = 50\n"
     "[layer app]\nattempts = 4\ntimeout = 200ms\nconcurrency = 3\nbackoff = exponential\nbase = 10ms\ncap = 100ms\n"
     "budget = aws-standard\nbudget_scope = client\nbreaker = gobreaker\nbreaker_scope = shared\n"
     "[layer sidecar]\nattempts = 2\ntimeout = 100ms\nhedge = fixed\nhedge_delay = 20ms\n"
     "retry_on = none\n",
     2},
    {"trace", /* the trace reader of an open loop */
     "[run]\nduration = 2s\nseed = 1\nbucket = 1s\n"
     "[load]\ntrace = trace-replay.csv\nclients = 100\n"
     "[server]\nworkers = 10\nqueue = unbounded\nservice = exp(10ms)\n"
     "[layer app]\nattempts = 3\ntimeout = 200ms\nbackoff = none\n",
     2},
    {"occ", /* the occ model's client states */
     "[run]\nduration = 10s\nseed = 2015\nbucket = 1s\n"
     "[load]\nclients = 20\n"
     "[server]\nmodel = occ\n"
     "[layer app]\nbackoff = full\nbase = 5ms\ncap = 200ms\n"
     "request_latency = absnormal(10ms, 2ms)\nresponse_latency = absnormal(10ms, 2ms)\n",
     1},
    {"large", /* a bulkhead's per-client arrays of 2 MiB and more: mem_alloc's mappings */
     "[run]\nduration = 1s\nseed = 5\nbucket = 1s\n"
     "[load]\nrate = 20/s\nclients = 540000\n"
     "[server]\nworkers = 4\nservice = exp(1ms)\n"
     "[layer app]\nattempts = 2\ntimeout = 100ms\nconcurrency = 1\ninstances = per-client\n",
     2},
};

static void create_fails_cleanly_at_every_allocation(void **state)
{
    (void)state;
    long total = 0;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct scenario sc;
        load_or_fail(&sc, cases[i].text, NULL, 0);
        long n = create_fails_cleanly(&sc, cases[i].what);
        print_message("%s: sim_create makes %ld allocations; each failed in turn gave an error\n",
                      cases[i].what, n);
        assert_true(n > 0); /* the wrappers reach the core */
        total += n;
    }
    print_message("%ld injected failures in all, with these messages:\n", total);
    print_messages();
}

static void run_checks_fail_cleanly_at_every_calloc(void **state)
{
    (void)state;
    long total = 0;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct scenario sc;
        load_or_fail(&sc, cases[i].text, NULL, 0);
        long n = run_checks_fail_cleanly(&sc, cases[i].what);
        print_message("%s: sim_run makes %ld callocs; each failed in turn gave an error\n",
                      cases[i].what, n);
        assert_int_equal(n, cases[i].run_callocs);
        total += n;
    }
    print_message("%ld injected failures in all, with these messages:\n", total);
    print_messages();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(create_fails_cleanly_at_every_allocation),
        cmocka_unit_test(run_checks_fail_cleanly_at_every_calloc),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
