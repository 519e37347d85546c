/*
 * cli — commands and options. See cli.h.
 */
#define _POSIX_C_SOURCE 200809L
#define _XOPEN_SOURCE 700

#include "cli.h"

#include <errno.h>
#include <fcntl.h>
#include <gsl/gsl_errno.h>
#include <signal.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli_envelope.h"
#include "compare.h"
#include "envelope.h"
#include "experiment.h"
#include "help.h"
#include "hysteresis.h"
#include "jsonout.h"
#include "lint.h"
#include "figrec.h"
#include "outdir.h"
#include "output.h"
#include "plot.h"
#include "screen.h"
#include "scenario.h"
#include "sim.h"
#include "trace.h"
#include "tune.h"
#ifdef RS_SERVE
#include "serve.h"
#endif

#define DEFAULT_SCENARIO "storm"

/* Set by SIGINT or SIGTERM: runs and sweeps stop at their next batch of
 * events, write what they have (marked incomplete) and exit 128 + signal.
 * The only global, and the CLI's: the library takes it as a parameter. */
static volatile sig_atomic_t stop_signal;

static void on_signal(int sig) { stop_signal = sig; }

/* Where the human summary goes: stdout, or stderr under --format json (stdout
 * then holds the JSON document only). */
static FILE *human;


static void install_handlers(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
}
#define MAX_SETS 256


static double wall_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void print_diag(const struct scenario_diag *d)
{
    for (size_t i = 0; i < d->n; i++)
        fprintf(stderr, "retrystorm: %s\n", d->msg[i]);
}

/* The progress line of a run: how far, how fast, and about how long is
 * left (from the share of simulated time still to go at the rate so far),
 * redrawn at most every 0.2 s (sim_run calls it every 1024 events).
 * user: a struct progress_clock. */
struct progress_clock {
    double t0, shown;
};

static void progress(void *user, rs_time now, rs_time duration, uint64_t events)
{
    struct progress_clock *pc = user;
    double t = wall_now(), elapsed = t - pc->t0;
    if (t - pc->shown < 0.2)
        return;
    pc->shown = t;
    if (now >= duration) { /* [run] drain: past the duration, until every request has an outcome */
        fprintf(stderr, "\r  draining: %.0f s simulated (arrivals stopped at %.0f s), %.1f M events                ",
                units_seconds(now), units_seconds(duration), (double)events / 1e6);
        fflush(stderr);
        return;
    }
    double done = (double)now / (double)duration;
    double left = done > 0 ? elapsed * (1.0 - done) / done : 0.0;
    fprintf(stderr, "\r  %5.1f%% simulated (%.0f of %.0f s), %.1f M events, %.2f M events/s, about %.0f s left  ",
            100.0 * done, units_seconds(now), units_seconds(duration), (double)events / 1e6,
            elapsed > 0 ? (double)events / elapsed / 1e6 : 0.0, left);
    fflush(stderr);
}

/* The hedging presets (hedge = NAME), after the retry presets. */
static void list_hedge_presets(void)
{
    printf("\nhedging presets (hedge = NAME):\n%-15s %-8s %-22s %-22s %-10s %s\n", "preset",
           "copies", "next copy", "hedge_on", "cancel", "source");
    for (unsigned i = 0; i < hedge_nkinds; i++) {
        const struct hedge_kind *k = &hedge_kinds[i];
        if (!hedge_is_preset(k))
            continue;
        char when[64], on[160], d[32];
        if (k->mode == HEDGE_PERCENTILE)
            snprintf(when, sizeof when, "p%g, <= %g%% extra", k->percentile, 100 * k->max_extra);
        else if (k->delay == RS_TIME_NEVER)
            snprintf(when, sizeof when, "the layer's timeout");
        else
            snprintf(when, sizeof when, "every %s", units_format_duration(k->delay, d, sizeof d));
        if (k->hedge_on == ERRCLASS_ALL_FAILURES)
            snprintf(on, sizeof on, "every failure");
        else
            errclass_format_set(k->hedge_on, on, sizeof on);
        printf("%-15s %-8u %-22s %-22s %-10s %s\n", k->name, k->attempts, when, on,
               k->cancel == CANCEL_ON_ABANDON ? "on-abandon" : "none", k->source);
    }
    printf("\nhedging modes: none fixed percentile\n");
}

/* The budgets and breakers with the upstream version each follows. */
static void list_budgets_breakers(void)
{
    printf("\nbudgets (budget = NAME; docs/budgets.md):\n");
    for (unsigned i = 0; i < budget_nkinds; i++)
        if (budget_kinds[i].version[0] != '\0')
            printf("%-15s %s\n", budget_kinds[i].name, budget_kinds[i].version);
    printf("\nbreakers (breaker = NAME; docs/breakers.md):\n");
    for (unsigned i = 0; i < breaker_nkinds; i++)
        if (breaker_kinds[i].version[0] != '\0')
            printf("%-15s %s\n", breaker_kinds[i].name, breaker_kinds[i].version);
}

static int cmd_list_presets(void)
{
    int wn = 6, ws = 8; /* columns as wide as their longest name and retry_on set */
    for (unsigned i = 0; i < backoff_nkinds; i++) {
        char set[160];
        if (!backoff_is_preset(&backoff_kinds[i]))
            continue;
        errclass_format_set(backoff_kinds[i].retry_on, set, sizeof set);
        wn = (int)strlen(backoff_kinds[i].name) > wn ? (int)strlen(backoff_kinds[i].name) : wn;
        ws = (int)strlen(set) > ws ? (int)strlen(set) : ws;
    }
    printf("%-*s %-8s %-9s %-9s %-7s %-*s %s\n", wn, "preset", "attempts", "base", "cap", "jitter", ws,
           "retry_on", "source");
    for (unsigned i = 0; i < backoff_nkinds; i++) {
        const struct backoff_kind *k = &backoff_kinds[i];
        if (!backoff_is_preset(k))
            continue;
        char base[32], cap[32], set[160];
        units_format_duration(k->defaults.base, base, sizeof base);
        if (k->defaults.cap == RS_TIME_NEVER)
            snprintf(cap, sizeof cap, "none");
        else
            units_format_duration(k->defaults.cap, cap, sizeof cap);
        errclass_format_set(k->retry_on, set, sizeof set);
        printf("%-*s %-8u %-9s %-9s %-7g %-*s %s\n", wn, k->name, k->attempts, base, cap, k->defaults.jitter,
               ws, set, k->source);
        printf("%-*s version: %s\n", wn, "", k->version);
        if (k->honor_retry_after || k->deadline != RS_TIME_NEVER) {
            char ra[32], dl[32];
            printf("%-*s honours Retry-After: %s (max %s, above it: %s); deadline %s\n", wn, "",
                   k->honor_retry_after ? "yes" : "no",
                   k->retry_after_max == RS_TIME_NEVER
                       ? "none"
                       : units_format_duration(k->retry_after_max, ra, sizeof ra),
                   backoff_ra_over_names[k->ra_over],
                   k->deadline == RS_TIME_NEVER ? "none"
                                                : units_format_duration(k->deadline, dl, sizeof dl));
        }
    }
    printf("\ngeneric kinds:");
    for (unsigned i = 0; i < backoff_nkinds; i++)
        if (!backoff_is_preset(&backoff_kinds[i]))
            printf(" %s", backoff_kinds[i].name);
    printf("\n  none: no backoff (immediate retries), not \"no jitter\"\n");
    list_hedge_presets();
    list_budgets_breakers();
    return 0;
}

static int cmd_list(int argc, char **argv)
{
    if (argc > 3) {
        fprintf(stderr, "retrystorm: list takes at most one word ('%s' is one too many; retrystorm help list)\n",
                argv[3]);
        return 2;
    }
    if (argc >= 3 && strcmp(argv[2], "presets") == 0)
        return cmd_list_presets();
    if (argc >= 3 && strcmp(argv[2], "metrics") == 0) {
        help_list_metrics(stdout);
        return 0;
    }
    if (argc >= 3 && strcmp(argv[2], "keys") == 0) {
        scenario_print_keys(stdout);
        return 0;
    }
    if (argc >= 3) {
        static const char *const what[] = {"presets", "metrics", "keys", NULL};
        const char *s = scenario_nearest(argv[2], what);
        fprintf(stderr, "retrystorm: list %s: no such list%s%s%s (retrystorm list, list presets, list metrics, list keys)\n",
                argv[2], s ? "; did you mean '" : "", s ? s : "", s ? "'?" : "");
        return 2;
    }
    int w = 0; /* the name column as wide as the longest name */
    for (const struct scenario_builtin *b = scenario_builtins; b->name; b++)
        w = (int)strlen(b->name) > w ? (int)strlen(b->name) : w;
    for (const struct scenario_builtin *b = scenario_builtins; b->name; b++) {
        /* The first comment line of a built-in says what it shows, after its name. */
        const char *t;
        size_t len = scenario_about(b->text, &t), n = strlen(b->name);
        if (len > n + 2 && strncmp(t, b->name, n) == 0 && t[n] == ':' && t[n + 1] == ' ')
            t += n + 2, len -= n + 2;
        printf("%-*s  %.*s\n", w, b->name, (int)len, t);
    }
    return 0;
}

#define MAX_VARY 8

struct opts {
    const char *scenario, *outdir;
    const char *sets[MAX_SETS + 1];
    size_t nsets;
    char seed_set[64];
    bool plot;
    const char *vary[MAX_VARY];
    size_t nvary;
    const char *label[LABELS_MAX]; /* compare --label VARIANT=TEXT */
    size_t nlabel;
    unsigned reps;
    const char *grid[EXP_MAX_AXES];
    size_t ngrid;
    unsigned threads, shard_k, shard_n;
    int progress; /* -1 quiet, 1 forced, 0 when stderr is a terminal */
    const char *objective[8], *constraint[16];
    size_t nobjective, nconstraint;
    const char *rest[EXP_MAX_SHARDS - 1]; /* extra positional arguments (merge) */
    size_t nrest;
    bool collect_rest;
    bool resume, force;
    bool strict; /* check --strict: lint warnings are errors */
    bool json; /* --format json */
    const char *sort; /* --sort */
    const char *trigger; /* tune --trigger: the margins' trigger */
    double level;        /* tune --level: the margins' level (0: 0.95) */
    struct screen_sort by;
    const char *load;            /* hysteresis --load */
    rs_time ramp, hold, window;  /* hysteresis --ramp, --hold, --window; 0: not given */
};

/* ---- options: one descriptor per option, one small taker each ---- */

static int take_outdir(struct opts *o, const char *name, const char *v)
{
    (void)name;
    o->outdir = v;
    return 0;
}

static int take_sort(struct opts *o, const char *name, const char *v)
{
    (void)name;
    char err[4600];
    if (screen_parse_sort(v, NULL, &o->by, err, sizeof err) != 0) { /* the metric: check_sort */
        fprintf(stderr, "retrystorm: %s\n", err);
        return 2;
    }
    o->sort = v;
    return 0;
}

static int take_set(struct opts *o, const char *name, const char *v)
{
    if (o->nsets == MAX_SETS) {
        fprintf(stderr, "retrystorm: too many --set options (limit is %d)\n", MAX_SETS);
        return 2;
    }
    if (strcmp(name, "--seed") == 0) { /* --seed N is --set run.seed=N */
        if (strlen(v) > 40) {
            fprintf(stderr, "retrystorm: --seed %.40s...: expected an integer from 0 to 2^64-1\n", v);
            return 2;
        }
        snprintf(o->seed_set, sizeof o->seed_set, "run.seed=%s", v);
        v = o->seed_set;
    }
    o->sets[o->nsets++] = v;
    return 0;
}

static int take_flag(struct opts *o, const char *name, const char *v)
{
    (void)v;
    if (strcmp(name, "--plot") == 0)
        o->plot = true;
    else if (strcmp(name, "--resume") == 0)
        o->resume = true;
    else if (strcmp(name, "--force") == 0)
        o->force = true;
    else if (strcmp(name, "--strict") == 0)
        o->strict = true;
    else
        o->progress = strcmp(name, "--quiet") == 0 ? -1 : 1;
    return 0;
}

/* --grid, --vary, --objective, --constraint, --label: lists with a limit each. */
static int take_list(struct opts *o, const char *name, const char *v)
{
    const char **list = o->grid;
    size_t *n = &o->ngrid, max = EXP_MAX_AXES;
    if (strcmp(name, "--vary") == 0)
        list = o->vary, n = &o->nvary, max = MAX_VARY;
    else if (strcmp(name, "--objective") == 0)
        list = o->objective, n = &o->nobjective, max = 8;
    else if (strcmp(name, "--constraint") == 0)
        list = o->constraint, n = &o->nconstraint, max = 16;
    else if (strcmp(name, "--label") == 0)
        list = o->label, n = &o->nlabel, max = LABELS_MAX;
    if (*n == max) {
        fprintf(stderr, "retrystorm: too many %s options (limit is %zu)\n", name, max);
        return 2;
    }
    list[(*n)++] = v;
    return 0;
}

static int take_threads(struct opts *o, const char *name, const char *v)
{
    (void)name;
    char *end;
    long n = strtol(v, &end, 10);
    if (*end != '\0' || n < 1 || n > 256) {
        fprintf(stderr, "retrystorm: -j %s: expected a number of threads from 1 to 256\n", v);
        return 2;
    }
    o->threads = (unsigned)n;
    return 0;
}

static int take_shard(struct opts *o, const char *name, const char *v)
{
    (void)name;
    unsigned k, n;
    char tail;
    if (sscanf(v, "%u/%u%c", &k, &n, &tail) != 2 || n < 1 || k < 1 || k > n || n > EXP_MAX_SHARDS) {
        fprintf(stderr, "retrystorm: --shard %s: expected K/N with 1 <= K <= N <= %u (merge takes at most %u shards; "
                "e.g. --shard 2/4)\n", v, EXP_MAX_SHARDS, EXP_MAX_SHARDS);
        return 2;
    }
    o->shard_k = k;
    o->shard_n = n;
    return 0;
}

/* --max-memory SIZE: what the objects in flight of each run may hold
 * (sim_set_default_live_limit, before any run starts). */
static int take_max_memory(struct opts *o, const char *name, const char *v)
{
    (void)o, (void)name;
    double bytes;
    if (!units_parse_size(v, &bytes)) {
        fprintf(stderr, "retrystorm: --max-memory %s: expected a size from 1MB to 1000GB, such as 512MB or 8GB\n", v);
        return 2;
    }
    sim_set_default_live_limit(bytes);
    return 0;
}

static int take_reps(struct opts *o, const char *name, const char *v)
{
    (void)name;
    char *end;
    long r = strtol(v, &end, 10);
    if (*end != '\0' || r < 1 || r > (long)EXP_MAX_REPS) {
        fprintf(stderr, "retrystorm: --reps %s: expected an integer from 1 to %u\n", v, EXP_MAX_REPS);
        return 2;
    }
    o->reps = (unsigned)r;
    return 0;
}

/* hysteresis --load (checked by hyst_parse_load before anything runs). */
static int take_load(struct opts *o, const char *name, const char *v)
{
    (void)name;
    char key[64], err[600];
    double a, b;
    if (hyst_parse_load(v, key, sizeof key, &a, &b, err, sizeof err) != 0) {
        fprintf(stderr, "retrystorm: %s\n", err);
        return 2;
    }
    o->load = v;
    return 0;
}

/* hysteresis --ramp, --hold, --window: durations. */
static int take_duration(struct opts *o, const char *name, const char *v)
{
    rs_time t;
    bool hold = strcmp(name, "--hold") == 0;
    if (!units_parse_duration(v, &t) || t < (hold ? 0 : 1) || t > 1000000 * RS_S) {
        fprintf(stderr, "retrystorm: %s %s: expected a duration %s and at most 1000000s, such as %s\n", name, v,
                hold ? "from 0" : "above 0", hold ? "60s" : strcmp(name, "--ramp") == 0 ? "300s" : "5s");
        return 2;
    }
    *(hold ? &o->hold : strcmp(name, "--ramp") == 0 ? &o->ramp : &o->window) = t;
    return 0;
}

/* tune --trigger KEY=A..B (checked with the margins, before anything
 * runs) and --level P. */
static int take_margin(struct opts *o, const char *name, const char *v)
{
    if (strcmp(name, "--trigger") == 0) {
        o->trigger = v;
        return 0;
    }
    char *end;
    errno = 0;
    double p = strtod(v, &end);
    if (end == v || *end != '\0' || !(p > 0 && p < 1)) {
        fprintf(stderr, "retrystorm: --level %s: expected a number strictly between 0 and 1\n", v);
        return 2;
    }
    o->level = p;
    return 0;
}

static int take_format(struct opts *o, const char *name, const char *v)
{
    (void)name;
    static const char *const formats[] = {"text", "json", NULL};
    if (strcmp(v, "text") != 0 && strcmp(v, "json") != 0) {
        const char *s = scenario_nearest(v, formats);
        fprintf(stderr, "retrystorm: --format %s: expected text or json%s%s%s\n", v,
                s ? "; did you mean '" : "", s ? s : "", s ? "'?" : "");
        return 2;
    }
    o->json = strcmp(v, "json") == 0;
    human = o->json ? stderr : stdout;
    return 0;
}

/* The commands that parse these options, as bits: an option a command
 * would ignore is refused, naming the commands that take it. */
enum { C_RUN = 1, C_COMPARE = 2, C_SWEEP = 4, C_MERGE = 8, C_TUNE = 16, C_CHECK = 32, C_HYST = 64 };
static const struct {
    const char *name;
    unsigned bit;
} commands[] = {{"run", C_RUN},     {"compare", C_COMPARE}, {"sweep", C_SWEEP},
                {"merge", C_MERGE}, {"tune", C_TUNE},       {"check", C_CHECK},
                {"hysteresis", C_HYST}};
#define C_EXPERIMENTS (C_RUN | C_COMPARE | C_SWEEP | C_TUNE)
#define C_SCENARIO (C_EXPERIMENTS | C_CHECK | C_HYST)
#define C_GRID (C_SWEEP | C_TUNE)
#define C_OUTPUT (C_EXPERIMENTS | C_MERGE)

static const struct option_desc {
    const char *name;
    bool value; /* takes the next argument */
    int (*take)(struct opts *o, const char *name, const char *v);
    unsigned cmds; /* the commands that take it */
} options[] = {
    {"-o", true, take_outdir, C_OUTPUT | C_HYST},
    {"--set", true, take_set, C_SCENARIO},
    {"--seed", true, take_set, C_SCENARIO},
    {"--plot", false, take_flag, C_RUN | C_COMPARE | C_SWEEP | C_MERGE | C_HYST},
    {"--resume", false, take_flag, C_GRID},
    {"--force", false, take_flag, C_OUTPUT | C_HYST},
    {"--strict", false, take_flag, C_CHECK},
    {"--quiet", false, take_flag, C_RUN | C_GRID},
    {"--progress", false, take_flag, C_RUN | C_GRID},
    {"--grid", true, take_list, C_GRID},
    {"--vary", true, take_list, C_COMPARE},
    {"--label", true, take_list, C_COMPARE},
    {"--objective", true, take_list, C_TUNE},
    {"--constraint", true, take_list, C_TUNE},
    {"-j", true, take_threads, C_RUN | C_COMPARE | C_GRID | C_HYST},
    {"--shard", true, take_shard, C_SWEEP},
    {"--reps", true, take_reps, C_EXPERIMENTS | C_HYST},
    {"--max-memory", true, take_max_memory, C_EXPERIMENTS | C_HYST},
    {"--format", true, take_format, C_OUTPUT},
    {"--sort", true, take_sort, C_COMPARE | C_SWEEP | C_MERGE},
    {"--load", true, take_load, C_HYST},
    {"--ramp", true, take_duration, C_HYST},
    {"--hold", true, take_duration, C_HYST},
    {"--window", true, take_duration, C_HYST},
    {"--trigger", true, take_margin, C_TUNE},
    {"--level", true, take_margin, C_TUNE},
};
#define NOPTIONS (sizeof options / sizeof *options)

/* An option another command takes: says which, and returns 2. */
static int not_for(const char *cmd, const struct option_desc *d)
{
    char which[96] = "";
    size_t used = 0;
    for (size_t c = 0; c < sizeof commands / sizeof *commands && used < sizeof which; c++)
        if (d->cmds & commands[c].bit) {
            int w = snprintf(which + used, sizeof which - used, "%s%s", used ? ", " : "", commands[c].name);
            used += w > 0 ? (size_t)w : 0;
        }
    fprintf(stderr, "retrystorm: %s does not take %s (%s do%s; retrystorm help %s)\n", cmd, d->name, which,
            strchr(which, ',') ? "" : "es", cmd);
    return 2;
}

/* An unknown option: the nearest of this command's, if any. Returns 2. */
static int unknown_option(const char *cmd, unsigned bit, const char *a)
{
    const char *names[NOPTIONS + 1];
    size_t n = 0;
    for (size_t k = 0; k < NOPTIONS; k++)
        if (options[k].cmds & bit)
            names[n++] = options[k].name;
    names[n] = NULL;
    const char *s = scenario_nearest(a, names);
    fprintf(stderr, "retrystorm: unknown option '%s'%s%s%s (retrystorm help %s)\n", a,
            s ? "; did you mean '" : "", s ? s : "", s ? "'?" : "", cmd);
    return 2;
}

/* A positional argument: the scenario, or (merge) one more directory. */
static int take_positional(struct opts *o, const char *a)
{
    if (o->scenario == NULL) {
        o->scenario = a;
    } else if (o->collect_rest && o->nrest < EXP_MAX_SHARDS - 1) {
        o->rest[o->nrest++] = a;
    } else if (o->collect_rest) {
        fprintf(stderr, "retrystorm: merge takes at most %u shard directories ('%s' is the %uth)\n", EXP_MAX_SHARDS, a,
                EXP_MAX_SHARDS + 1);
        return 2;
    } else {
        fprintf(stderr, "retrystorm: more than one scenario given ('%s' and '%s')\n", o->scenario, a);
        return 2;
    }
    return 0;
}

/* Parses the options of command cmd from argv[i..]; returns 0, or 2
 * after a message. */
static int parse_run_opts(int argc, char **argv, int i, struct opts *o, const char *cmd)
{
    unsigned bit = 0;
    for (size_t c = 0; c < sizeof commands / sizeof *commands; c++)
        if (strcmp(cmd, commands[c].name) == 0)
            bit = commands[c].bit;
    for (; i < argc; i++) {
        const char *a = argv[i];
        const struct option_desc *d = NULL;
        for (size_t k = 0; k < NOPTIONS && d == NULL; k++)
            if (strcmp(a, options[k].name) == 0)
                d = &options[k];
        int rc;
        if (d != NULL && !(d->cmds & bit))
            return not_for(cmd, d);
        if (d != NULL && d->value && i + 1 >= argc) {
            fprintf(stderr, "retrystorm: %s needs a value (retrystorm help %s)\n", a, cmd);
            return 2;
        }
        if (d != NULL)
            rc = d->take(o, a, d->value ? argv[++i] : NULL);
        else if (a[0] == '-' && a[1] != '\0')
            return unknown_option(cmd, bit, a);
        else
            rc = take_positional(o, a);
        if (rc != 0)
            return rc;
    }
    return 0;
}

/* The output directory: -o's value (trailing slashes removed) or the
 * default. A path that does not fit is an error, never truncated. */
static int out_dir(char *dir, size_t size, const char *given, const char *fallback)
{
    const char *p = given ? given : fallback;
    size_t n = strlen(p);
    while (n > 1 && p[n - 1] == '/')
        n--;
    if (n == 0 || n + 32 >= size) {
        fprintf(stderr, "retrystorm: -o %.60s%s: %s\n", p, n > 60 ? "..." : "",
                n == 0 ? "an empty path" : "the path is longer than the system's limit");
        return 2;
    }
    snprintf(dir, size, "%.*s", (int)n, p);
    const char *last = strrchr(dir, '/');
    last = last ? last + 1 : dir;
    if (strcmp(last, ".") == 0 || strcmp(last, "..") == 0 || *last == '\0') {
        fprintf(stderr, "retrystorm: -o %s: name the output directory itself, not '%s' (e.g. -o ../results)\n",
                p, *last ? last : "/");
        return 2;
    }
    return 0;
}

/* The check run, compare and merge make before any work (outdir_check,
 * and no unfinished sweep replaced without --force): prints why a
 * directory is refused. Returns 0 or 2. */
static int check_out_dir(const char *dir, bool force)
{
    char err[4600];
    int rc = outdir_check(dir, force, err, sizeof err);
    if (rc != 0)
        fprintf(stderr, "retrystorm: %s\n", err);
    else if (!force && exp_unfinished(dir)) {
        fprintf(stderr, "retrystorm: %s holds an unfinished sweep: finish it with sweep --resume, "
                        "choose another -o, or add --force to replace it\n", dir);
        rc = 2;
    }
    return rc;
}

/* Moves a finished work directory to dir (outdir_install); 0 or 1. */
static int install(const char *work, const char *dir, bool force)
{
    char err[9000];
    if (outdir_install(work, dir, force, err, sizeof err) != 0) {
        fprintf(stderr, "retrystorm: %s\n", err);
        return 1;
    }
    return 0;
}

/* The exit code of a command stopped by a signal: 128 + the signal. */
static int interrupted_exit(void) { return 128 + (stop_signal ? stop_signal : SIGINT); }

static int plot_and_say_as(const char *dir, const char *shown);
static int plot_and_say_styled(const char *dir, const char *shown, const struct plot_style *st);

/* The end of run and compare, whose outputs are in a work directory: rc
 * 0 (done: figures if asked, then installed, whatever gnuplot does), 3
 * (interrupted: installed as it is, marked complete = 0), 4 (stopped at the
 * memory limit: installed the same, exit 1), or a failure
 * (the work removed). Returns the exit code. */
static int finish_work(const char *work, const char *dir, const struct opts *o, int rc)
{
    if (rc != 0 && rc != 3 && rc != 4) {
        outdir_remove_ours(work);
        return rc;
    }
    int prc = rc == 0 && o->plot ? plot_and_say_as(work, dir) : 0;
    char *note = NULL, err[4600];
    if (figrec_carry(dir, work, dir, &note, err, sizeof err) != 0)
        fprintf(stderr, "retrystorm: the figures drawn by plot in %s are not kept: %s\n", dir, err);
    if (install(work, dir, o->force) != 0) {
        free(note);
        return 1;
    }
    figrec_say(stderr, note);
    if (rc == 3) {
        fprintf(stderr, "retrystorm: interrupted: what was done is in %s/ (marked complete = 0)\n", dir);
        return interrupted_exit();
    }
    if (rc == 4) {
        fprintf(stderr, "retrystorm: what was done is in %s/ (marked complete = 0); a bounded queue or a timeout "
                "keeps the requests in flight in check\n", dir);
        return 1;
    }
    return prc;
}

/* Draws DIR's figures and says what happened; a missing gnuplot is a
 * message, not a failure. Returns the exit code. */
static int plot_and_say(const char *dir) { return plot_and_say_as(dir, dir); }

/* Draws the figures in dir, naming `shown` (where they will be) to the
 * user. Returns 0; 1 when gnuplot failed (its message shown); 2 when a
 * file to draw from is malformed; 128 + signal when interrupted. The
 * outputs themselves are never discarded here. */
static int plot_and_say_as(const char *dir, const char *shown)
{
    return plot_and_say_styled(dir, shown, NULL);
}

static int plot_and_say_drawn(const char *dir, const char *shown, const struct plot_style *st,
                              struct figrec_drawn *drawn);

/* plot_and_say_as in the look st (NULL: the default). */
static int plot_and_say_styled(const char *dir, const char *shown, const struct plot_style *st)
{
    return plot_and_say_drawn(dir, shown, st, NULL);
}

/* plot_and_say_styled, collecting the names of the files drawn into
 * drawn (NULL: not collected). */
static int plot_and_say_drawn(const char *dir, const char *shown, const struct plot_style *st,
                              struct figrec_drawn *drawn)
{
    if (!plot_available()) {
        fprintf(stderr, "retrystorm: gnuplot not found: no figures drawn "
                        "(install gnuplot, e.g. apt-get install gnuplot-nox)\n");
        return 0;
    }
    char err[2048];
    int n = plot_dir_drawn(dir, st, &stop_signal, drawn ? figrec_drawn_add : NULL, drawn, err, sizeof err);
    if (n == PLOT_STOPPED || stop_signal) {
        fprintf(stderr, "retrystorm: interrupted while drawing figures in %s/\n", shown);
        return interrupted_exit();
    }
    if (n < 0) {
        fprintf(stderr, "retrystorm: %s\n", err);
        return n == PLOT_BAD_INPUT ? 2 : 1;
    }
    if (st && st->animate)
        fprintf(human, "  %d animated GIF%s in %s/ (the PNGs and SVGs: plot without --animate)\n", n,
                n == 1 ? "" : "s", shown);
    else
        fprintf(human, "  %d figures (PNG and SVG) in %s/\n", n, shown);
    return 0;
}

/* plot DIR [--force] [look options]: figures are written into DIR, so DIR
 * must be ours (or empty) unless --force, as for every other output. */
static int cmd_plot(int argc, char **argv)
{
    const char *dir = NULL;
    bool force = false;
    struct plot_style st = {0};
    char err[4600];
    for (int i = 2; i < argc; i++) {
        int took = plot_style_option(&st, argv[i], i + 1 < argc ? argv[i + 1] : NULL, err, sizeof err);
        if (took == PLOT_BAD_INPUT) {
            fprintf(stderr, "retrystorm: plot: %s\n", err);
            return 2;
        }
        if (took >= 0)
            i += took;
        else if (strcmp(argv[i], "--force") == 0)
            force = true;
        else if (dir == NULL && (argv[i][0] != '-' || argv[i][1] == '\0'))
            dir = argv[i];
        else
            dir = NULL, i = argc;
    }
    if (dir == NULL) {
        fprintf(stderr, "retrystorm: plot needs one output directory (and takes --force, --title, --label, --size, "
                        "--font-scale, --style, --animate; retrystorm help plot)\n");
        return 2;
    }
    enum outdir_kind k = OUTDIR_FOREIGN;
    if (outdir_classify(dir, &k, err, sizeof err) != 0 || k == OUTDIR_ABSENT) {
        fprintf(stderr, "retrystorm: plot: %s\n", k == OUTDIR_ABSENT ? "no such directory" : err);
        return 2;
    }
    if (k == OUTDIR_FOREIGN && !force) {
        fprintf(stderr, "retrystorm: plot: %s holds files that are not a retrystorm output; add --force to "
                        "draw into it (only files named like our figures are replaced)\n", dir);
        return 2;
    }
    /* what plot draws in an output of ours is recorded, so that a rerun
     * keeps it while its data is unchanged (figrec.h) */
    struct figrec_drawn drawn = {0};
    int rc = plot_and_say_drawn(dir, dir, &st, &drawn);
    if (k == OUTDIR_OURS && drawn.n > 0 && figrec_record(dir, &st, &drawn, err, sizeof err) != 0) {
        fprintf(stderr, "retrystorm: plot: %s (a rerun into %s will not keep these figures)\n", err, dir);
        rc = rc ? rc : 1;
    }
    figrec_drawn_fini(&drawn);
    return rc;
}

/* summary.json in dir from the table the command wrote as `source`.
 * Returns 0, or 1 after a message. */
static int write_json(const char *dir, const char *command, const char *scenario, const char *source,
                      const struct results *table)
{
    struct jsonout_meta m = {command, scenario, source};
    char err[4600];
    if (jsonout_write_results_dir(dir, table, &m, err, sizeof err) != 0) {
        fprintf(stderr, "retrystorm: %s\n", err);
        return 1;
    }
    return 0;
}

/* --format json, once a command has succeeded (rc 0) and its outputs are in
 * place: dir/summary.json copied to stdout. Returns rc, or 1 after a
 * message when the file cannot be read or stdout written (a full disk, a
 * closed pipe: never a silent success). */
static int print_json(const struct opts *o, const char *dir, int rc)
{
    if (!o->json || rc != 0)
        return rc;
    char path[PATH_MAX + 64], buf[65536];
    int fd = -1;
    if (outdir_join(path, sizeof path, dir, "summary.json") != 0 ||
        (fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)) < 0) {
        fprintf(stderr, "retrystorm: cannot read %s/summary.json: %s\n", dir, strerror(errno));
        return 1;
    }
    ssize_t n;
    while ((n = read(fd, buf, sizeof buf)) > 0 && fwrite(buf, 1, (size_t)n, stdout) == (size_t)n)
        ;
    int e = errno;
    close(fd);
    if (n != 0 || fflush(stdout) != 0 || ferror(stdout)) {
        fprintf(stderr, "retrystorm: cannot write summary.json to standard output: %s\n",
                strerror(n < 0 ? e : errno));
        return 1;
    }
    return 0;
}

/* The scenario o names (with its --set values) and its summary columns,
 * for --sort, --objective and summary.json. Returns 0, or 2 after the
 * problems (the scenario does not load, or its columns clash). */
static int load_columns(const struct opts *o, struct scenario *sc, struct summary_cols *cols)
{
    struct scenario_diag d = {0};
    int n = scenario_load(sc, o->scenario, o->sets, o->nsets, &d);
    print_diag(&d);
    scenario_diag_fini(&d);
    if (n)
        return 2;
    char err[512];
    if (summary_cols_init(cols, sc, err, sizeof err) != 0) {
        fprintf(stderr, "retrystorm: %s: %s\n", o->scenario, err);
        return 2;
    }
    return 0;
}

/* How many of the --grid or --vary keys `name` names: the key, or a
 * dot-suffix of it (attempts, app.attempts for layer.app.attempts). With
 * f, each key named is also printed there, ", "-separated. */
static size_t sort_keys_named(const struct opts *o, const char *name, FILE *f)
{
    size_t hits = 0, n = strlen(name);
    for (size_t i = 0; i < o->ngrid + o->nvary; i++) {
        const char *a = i < o->ngrid ? o->grid[i] : o->vary[i - o->ngrid], *eq = strchr(a, '=');
        size_t m = eq ? (size_t)(eq - a) : strlen(a);
        bool named = m >= n && strncmp(a + m - n, name, n) == 0 && (m == n || a[m - n - 1] == '.');
        if (named && f != NULL)
            fprintf(f, "%s%.*s", hits > 0 ? ", " : "", (int)m, a);
        hits += named;
    }
    return hits;
}

/* --sort's metric must be one of the scenario's (cols), or name one grid
 * or varied key. 0, or 2 after a message. */
static int check_sort(const struct opts *o, const struct summary_cols *cols)
{
    char err[4600];
    size_t keys = o->sort ? sort_keys_named(o, o->by.metric, NULL) : 0;
    if (o->sort == NULL || keys == 1 || summary_check_metric(cols, o->by.metric, "--sort", err, sizeof err))
        return 0;
    if (keys > 1) {
        fprintf(stderr, "retrystorm: --sort %s: names %zu of the keys varied (", o->sort, keys);
        sort_keys_named(o, o->by.metric, stderr);
        fprintf(stderr, "); give more of the key\n");
    }
    else if (o->ngrid + o->nvary > 0)
        fprintf(stderr, "retrystorm: %s; or a key of --grid or --vary (or its last parts)\n", err);
    else
        fprintf(stderr, "retrystorm: %s\n", err);
    return 2;
}

/* The scenario o names, its columns checked and --sort's metric among
 * them. Returns 0, or 2 after the problems. */
static int load_checked(const struct opts *o, struct scenario *sc)
{
    struct summary_cols cols = {0};
    int rc = load_columns(o, sc, &cols);
    if (rc == 0)
        rc = check_sort(o, &cols);
    summary_cols_fini(&cols);
    return rc;
}

/* A variant done: a progress line on a terminal (the table comes at the end). */
/* compare's variants as they finish: progress, and each one's verdict and
 * why (replication 0's), printed under the table. */
struct compare_done {
    size_t n;
    char (*line)[600];
    const struct labels_map *given; /* --label's texts, shown for their variants */
};

static void compare_row(void *user, const char *label, const char *why)
{
    struct compare_done *d = user;
    char(*more)[600] = realloc(d->line, (d->n + 1) * sizeof *d->line);
    if (more == NULL) {
        fprintf(stderr, "retrystorm: out of memory for the variants' verdicts\n");
        abort();
    }
    d->line = more;
    const char *text = labels_find(d->given, label);
    snprintf(d->line[d->n++], sizeof d->line[0], "%s  %s", text ? text : label, why);
    if (isatty(STDERR_FILENO))
        fprintf(stderr, "\r  %zu variants done, the last %-40.40s", d->n, label);
}

/* The compact table of `table` (written as `file`) on the human stream
 * (screen.h). Returns 0 or 1 after a message. */
static int print_table(const struct opts *o, const struct results *table, const char *file, const char *label,
                       const char *default_sort, size_t show, const struct labels_map *given,
                       const char (*keys)[128])
{
    struct screen_spec sp = {table, file, label, o->by, show, given, keys};
    char err[4600];
    if (o->sort == NULL && default_sort != NULL &&
        screen_parse_sort(default_sort, NULL, &sp.sort, err, sizeof err) != 0)
        sp.sort.metric[0] = '\0';
    if (screen_print(human, &sp, err, sizeof err) != 0) {
        fprintf(stderr, "retrystorm: %s\n", err);
        return 1;
    }
    return 0;
}

static unsigned default_threads(void);

static int cmd_compare(int argc, char **argv)
{
    struct opts o = {0};
    int rc = parse_run_opts(argc, argv, 2, &o, "compare");
    if (rc)
        return rc;
    if (o.scenario == NULL || o.nvary == 0) {
        fprintf(stderr, "retrystorm: compare needs a scenario and at least one --vary KEY=V1,V2,... "
                        "(retrystorm help compare)\n");
        return 2;
    }
    struct scenario sc;
    struct scenario_diag d = {0};
    if ((rc = load_checked(&o, &sc)) != 0)
        return rc;
    char dir[4096], fallback[128], work[4200], err[4600];
    snprintf(fallback, sizeof fallback, "out/%s-compare", sc.name);
    if ((rc = out_dir(dir, sizeof dir, o.outdir, fallback)) != 0 || (rc = check_out_dir(dir, o.force)) != 0)
        return rc;
    static struct labels_map given;
    struct compare_spec spec = {.scenario = o.scenario, .sets = o.sets, .nsets = o.nsets, .nvary = o.nvary,
                                .reps = o.reps ? o.reps : 1, .threads = o.threads ? o.threads : default_threads(),
                                .labels = o.label, .nlabels = o.nlabel, .given = &given, .dir = NULL,
                                .stop = &stop_signal};
    for (size_t i = 0; i < o.nvary; i++)
        spec.vary[i] = o.vary[i];
    err[0] = '\0';
    if ((rc = compare_run(&spec, &d, NULL, NULL, NULL, err, sizeof err)) != 0) { /* before anything is written */
        print_diag(&d);
        scenario_diag_fini(&d);
        if (err[0])
            fprintf(stderr, "retrystorm: %s\n", err);
        return rc;
    }
    if (outdir_mkwork(dir, work, sizeof work, err, sizeof err) != 0) {
        fprintf(stderr, "retrystorm: %s\n", err);
        return 1;
    }
    spec.dir = work;
    struct compare_done done = {.given = &given};
    fprintf(human, "retrystorm %s: %s compared on seed %llu (%u replication%s each)\n", RS_VERSION, sc.name,
           (unsigned long long)sc.seed, spec.reps, spec.reps == 1 ? "" : "s");
    struct results sum = {0};
    rc = compare_run(&spec, &d, compare_row, &done, &sum, err, sizeof err);
    if (done.n > 0 && isatty(STDERR_FILENO))
        fprintf(stderr, "\r%80s\r", "");
    print_diag(&d);
    scenario_diag_fini(&d);
    if (rc != 0 && err[0])
        fprintf(stderr, "retrystorm: %s\n", err);
    if (rc == 0)
        rc = print_table(&o, &sum, "summary.csv", NULL, NULL, 0, &given, NULL);
    if (rc == 0 && done.n > 0) {
        fprintf(human, "  why (each variant's %s):\n", spec.reps > 1 ? "first replication" : "run");
        for (size_t i = 0; i < done.n; i++)
            fprintf(human, "    %s\n", done.line[i]);
    }
    free(done.line);
    if (rc == 0)
        rc = write_json(work, "compare", sc.name, "summary.csv", &sum);
    results_fini(&sum);
    if (rc == 0)
        fprintf(human, "  outputs in %s/ (summary.csv and timeseries.csv with a variant column; one directory per variant)\n",
               dir);
    return print_json(&o, dir, finish_work(work, dir, &o, rc));
}

static unsigned default_threads(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (unsigned)n : 1;
}

static bool want_progress(const struct opts *o)
{
    return o->progress > 0 || (o->progress == 0 && isatty(STDERR_FILENO));
}

/* Runs a sweep (or the sweep behind tune or run --reps); fills res when
 * asked. An interruption is reported only when say_stop. */
static int run_sweep(const struct opts *o, const char *dir, struct exp_result *res, bool say_stop,
                     const double *given0)
{
    struct exp_spec spec = {o->scenario, o->sets, o->nsets, {0}, o->ngrid,
                            o->reps ? o->reps : 1, o->threads ? o->threads : default_threads(),
                            o->shard_k, o->shard_n, dir, want_progress(o), &stop_signal, o->resume,
                            o->force, given0};
    for (size_t i = 0; i < o->ngrid; i++)
        spec.grid[i] = o->grid[i];
    struct scenario_diag d = {0};
    char err[1024] = "";
    struct figrec_held *held = figrec_hold(dir); /* figures plot drew, which the sweep removes */
    int rc = exp_run(&spec, &d, res, err, sizeof err);
    figrec_say(stderr, figrec_release(held, dir, dir));
    print_diag(&d);
    scenario_diag_fini(&d);
    if (rc != 0 && err[0] && (rc != 3 || say_stop))
        fprintf(stderr, "retrystorm: %s\n", err);
    return rc;
}

static int cmd_sweep(int argc, char **argv)
{
    struct opts o = {0};
    int rc = parse_run_opts(argc, argv, 2, &o, "sweep");
    if (rc)
        return rc;
    if (o.scenario == NULL || o.ngrid == 0) {
        fprintf(stderr, "retrystorm: sweep needs a scenario and at least one --grid KEY=VALUES (retrystorm help sweep)\n");
        return 2;
    }
    if (o.json && o.shard_n) {
        fprintf(stderr, "retrystorm: --format json with --shard: a shard has no summary (merge the shards, "
                        "then merge --format json)\n");
        return 2;
    }
    struct scenario sc;
    if ((rc = load_checked(&o, &sc)) != 0)
        return rc;
    char dir[4096], fallback[64];
    if (o.shard_n)
        snprintf(fallback, sizeof fallback, "out/sweep-shard-%u-of-%u", o.shard_k, o.shard_n);
    else
        snprintf(fallback, sizeof fallback, "out/sweep");
    if ((rc = out_dir(dir, sizeof dir, o.outdir, fallback)) != 0)
        return rc;
    struct exp_result res;
    memset(&res, 0, sizeof res);
    rc = run_sweep(&o, dir, &res, true, NULL);
    if (rc == 3) {
        exp_result_fini(&res);
        return interrupted_exit();
    }
    if (rc == 0 && !o.shard_n)
        rc = print_table(&o, &res.sum, "sweep.csv", NULL, "max:ok_share", 10, NULL, (const char(*)[128])res.axis_labels);
    if (rc == 0 && !o.shard_n)
        rc = write_json(dir, "sweep", sc.name, "sweep.csv", &res.sum);
    exp_result_fini(&res);
    if (rc == 0)
        fprintf(human, "%s: %s written to %s/\n", o.scenario,
               o.shard_n ? "this shard's jobs.csv (merge the shards for sweep.csv)" : "sweep.csv and summary.json",
               dir);
    return print_json(&o, dir, rc == 0 && o.plot && !o.shard_n ? plot_and_say(dir) : rc);
}

static int cmd_merge(int argc, char **argv)
{
    struct opts o = {0};
    o.collect_rest = true;
    int rc = parse_run_opts(argc, argv, 2, &o, "merge");
    if (rc)
        return rc;
    const char *dirs[65];
    size_t n = 0;
    if (o.scenario)
        dirs[n++] = o.scenario;
    for (size_t i = 0; i < o.nrest; i++)
        dirs[n++] = o.rest[i];
    if (n == 0 || o.outdir == NULL) {
        fprintf(stderr, "retrystorm: merge needs shard directories and -o OUT (retrystorm help merge)\n");
        return 2;
    }
    char err[9000], out[4096];
    struct summary_cols cols = {0};
    if (o.sort != NULL) { /* the metric: one the first shard's experiment.csv records */
        if ((rc = exp_columns(dirs[0], &cols, err, sizeof err)) != 0)
            fprintf(stderr, "retrystorm: %s\n", err);
        else
            rc = check_sort(&o, &cols);
        summary_cols_fini(&cols);
        if (rc != 0)
            return rc;
    }
    if ((rc = out_dir(out, sizeof out, o.outdir, NULL)) != 0 || (rc = check_out_dir(out, o.force)) != 0)
        return rc;
    struct exp_result res;
    memset(&res, 0, sizeof res);
    struct figrec_held *held = figrec_hold(out);
    rc = exp_merge(dirs, n, out, o.force, &res, err, sizeof err);
    figrec_say(stderr, figrec_release(held, out, out));
    if (rc != 0) {
        exp_result_fini(&res);
        fprintf(stderr, "retrystorm: %s\n", err);
        return rc;
    }
    rc = print_table(&o, &res.sum, "sweep.csv", NULL, "max:ok_share", 10, NULL, (const char(*)[128])res.axis_labels) != 0 ||
         write_json(out, "merge", NULL, "sweep.csv", &res.sum) != 0;
    exp_result_fini(&res);
    if (rc != 0)
        return 1;
    fprintf(human, "merged %zu shard%s into %s/sweep.csv and summary.json\n", n, n == 1 ? "" : "s", out);
    return print_json(&o, out, o.plot ? plot_and_say(out) : 0);
}

/* The names tune --trigger adds to the metrics. */
static const char *const margin_metrics[2] = {"margin", "margin_fails"};

/* tune --trigger, checked before anything runs: its range, and its key
 * at both ends of it on the scenario. 0, or 2 after a message. */
static int check_trigger(const struct opts *o)
{
    struct env_range range;
    char err[512], text[64], set[300];
    if (env_parse_range("--trigger", o->trigger, &range, err, sizeof err) != 0) {
        fprintf(stderr, "retrystorm: tune: %s\n", err);
        return 2;
    }
    const char *sets[MAX_SETS + 1];
    memcpy(sets, o->sets, o->nsets * sizeof *sets);
    sets[o->nsets] = set;
    struct scenario *sc = malloc(sizeof *sc);
    int rc = sc ? 0 : 1;
    for (int end = 0; end < 2 && rc == 0; end++) {
        env_format(&range, end ? range.hi : range.lo, text, sizeof text);
        snprintf(set, sizeof set, "%s=%s", range.key, text);
        struct scenario_diag d = {0};
        rc = scenario_load(sc, o->scenario, sets, o->nsets + 1, &d) != 0 ? 2 : 0;
        print_diag(&d);
        scenario_diag_fini(&d);
    }
    free(sc);
    if (rc == 1)
        fprintf(stderr, "retrystorm: out of memory for a scenario\n");
    return rc;
}

/* With --trigger, margin and margin_fails become metrics tune may name
 * (appended to cols); an objective or constraint naming them without it
 * is refused. Returns 0, or 2 after a message. */
static int margin_columns(const struct opts *o, struct summary_cols *cols)
{
    for (size_t i = 0; o->trigger == NULL && i < o->nobjective + o->nconstraint; i++) {
        const char *x = i < o->nobjective ? o->objective[i] : o->constraint[i - o->nobjective];
        const char *name = strchr(x, ':') && i < o->nobjective ? strchr(x, ':') + 1 : x;
        if (strncmp(name, "margin", 6) == 0) {
            fprintf(stderr, "retrystorm: %s: the margin needs --trigger KEY=A..B (the trigger whose margin "
                            "to widen, e.g. phase.spike.rate=x1..x4)\n", x);
            return 2;
        }
    }
    if (o->trigger == NULL)
        return 0;
    int rc = check_trigger(o);
    if (rc != 0)
        return rc;
    struct summary_col *c = realloc(cols->c, (cols->n + 2) * sizeof *c);
    if (c == NULL) {
        fprintf(stderr, "retrystorm: out of memory for the columns\n");
        return 1;
    }
    cols->c = c;
    for (int i = 0; i < 2; i++) {
        c[cols->n] = (struct summary_col){.kind = OUTPUT_REAL};
        snprintf(c[cols->n++].name, sizeof c->name, "%s", margin_metrics[i]);
    }
    return 0;
}

/* tune --trigger: each point's margin (envelope.h) as the metrics margin
 * and margin_fails of r. Returns 0, or an exit code after a message. */
static int add_margins(const struct opts *o, struct exp_result *r)
{
    struct env_spec base = {.scenario = o->scenario, .sets = o->sets, .nsets = o->nsets, .trigger = o->trigger,
                            .level = o->level > 0 ? o->level : 0.95,
                            .threads = o->threads ? o->threads : default_threads(), .stop = &stop_signal};
    double *v = malloc(2 * (r->npoints ? r->npoints : 1) * sizeof *v);
    struct scenario_diag d = {0};
    char err[1024] = "";
    int rc = v ? env_margins(&base, r, v, v + r->npoints, &d, err, sizeof err) : 1;
    print_diag(&d);
    scenario_diag_fini(&d);
    if (rc == 0 && (exp_result_add_metric(r, margin_metrics[0], OUTPUT_REAL, v) != 0 ||
                    exp_result_add_metric(r, margin_metrics[1], OUTPUT_REAL, v + r->npoints) != 0))
        rc = 1, snprintf(err, sizeof err, "out of memory for the margins");
    if (rc != 0 && rc != 3)
        fprintf(stderr, "retrystorm: tune --trigger: %s\n", v ? err : "out of memory for the margins");
    free(v);
    return rc;
}

static int cmd_tune(int argc, char **argv)
{
    struct opts o = {0};
    int rc = parse_run_opts(argc, argv, 2, &o, "tune");
    if (rc)
        return rc;
    if (o.scenario == NULL || o.ngrid == 0 || o.nobjective == 0) {
        fprintf(stderr, "retrystorm: tune needs a scenario, --grid and --objective max:METRIC or min:METRIC "
                        "(retrystorm help tune)\n");
        return 2;
    }
    if (o.shard_n) {
        fprintf(stderr, "retrystorm: tune runs the whole grid: --shard is for sweep\n");
        return 2;
    }
    char dir[4096], err[4600];
    struct tune_spec t;
    if ((rc = out_dir(dir, sizeof dir, o.outdir, "out/tune")) != 0)
        return rc;
    struct scenario sc;
    struct summary_cols cols = {0};
    if ((rc = load_columns(&o, &sc, &cols)) != 0)
        return rc;
    err[0] = '\0';
    rc = margin_columns(&o, &cols);
    if (rc == 0)
        rc = tune_parse(&t, &cols, o.objective, o.nobjective, o.constraint, o.nconstraint, err, sizeof err);
    summary_cols_fini(&cols);
    if (rc != 0) {
        if (err[0]) /* margin_columns said what was wrong */
            fprintf(stderr, "retrystorm: %s\n", err); /* before anything runs */
        return 2;
    }
    struct exp_result r;
    memset(&r, 0, sizeof r);
    rc = run_sweep(&o, dir, &r, true, NULL);
    if (rc != 0) {
        exp_result_fini(&r); /* filled on a stop: the jobs done, not ranked */
        return rc == 3 ? interrupted_exit() : rc;
    }
    if (o.trigger != NULL && (rc = add_margins(&o, &r)) != 0) {
        exp_result_fini(&r);
        return rc == 3 ? interrupted_exit() : rc;
    }
    struct tune_rank k;
    if (tune_rank(&t, &r, &k, err, sizeof err) == 0) {
        struct results table = {0};
        if (tune_write_csv(dir, &t, &r, &k, &table, err, sizeof err) != 0) {
            fprintf(stderr, "retrystorm: %s\n", err);
            rc = 1;
        } else {
            rc = write_json(dir, "tune", sc.name, "tune.csv", &table);
        }
        results_fini(&table);
        tune_print(human, o.scenario, dir, &t, &r, &k);
    } else {
        fprintf(stderr, "retrystorm: %s\n", err);
        rc = 1;
    }
    tune_rank_fini(&k);
    exp_result_fini(&r);
    return print_json(&o, dir, rc);
}

/* Where lint messages go, and whether --strict makes every one an error. */
struct lint_out {
    FILE *f;
    bool strict;
};

static void lint_print(void *ctx, enum lint_level level, const char *msg)
{
    const struct lint_out *out = ctx;
    fprintf(out->f, "%s: %s\n", out->strict || level == LINT_OVER ? "error" : "warning", msg);
}

static int cmd_check(int argc, char **argv)
{
    struct opts o = {0};
    int rc = parse_run_opts(argc, argv, 2, &o, "check");
    if (rc)
        return rc;
    if (o.scenario == NULL) {
        fprintf(stderr, "retrystorm: check needs a scenario (retrystorm help check)\n");
        return 2;
    }
    struct scenario sc;
    struct scenario_diag d = {0};
    int n = scenario_load(&sc, o.scenario, o.sets, o.nsets, &d);
    print_diag(&d);
    scenario_diag_fini(&d);
    if (n) {
        fprintf(stderr, "retrystorm: %s: %d problem%s\n", o.scenario, n, n == 1 ? "" : "s");
        return 2;
    }
    printf("%s: ok (%s, %u layer%s, %u phase%s; %.1f MB of state before the first request, at most %.0f GB)\n",
           o.scenario, sc.name, sc.nlayers, sc.nlayers == 1 ? "" : "s", sc.nphases, sc.nphases == 1 ? "" : "s",
           sim_footprint(&sc, NULL) / 1e6, SCENARIO_MAX_STATE_BYTES / 1e9);
    struct capacity cap;
    capacity_estimate(&sc, &cap);
    lint_print_table(stdout, &sc, &cap);
    struct lint_out out = {o.strict ? stderr : stdout, o.strict};
    unsigned w = lint_scenario(&sc, &cap, lint_print, &out);
    if (w && o.strict) {
        fprintf(stderr, "retrystorm: %s: %u lint warning%s, errors under --strict\n", o.scenario, w,
                w == 1 ? "" : "s");
        return 2;
    }
    return 0;
}

/* run --reps N into the work directory: every replication's metrics in
 * replications.csv, and summary.csv rewritten with the mean, standard
 * deviation and 95 % half-width of every metric over the replications
 * (exp_replicate, exp_reps_table). Interrupted, both hold the replications
 * done, marked complete = 0, and it returns 3. */
static int replicate(const struct opts *o, const char *dir, const char *name, const double *row0)
{
    struct exp_spec spec = {o->scenario, o->sets, o->nsets, {0}, 0, o->reps,
                            o->threads ? o->threads : default_threads(), 0, 0, dir, want_progress(o),
                            &stop_signal, false, false, row0};
    struct scenario_diag d = {0};
    struct exp_result res;
    struct results table = {0};
    char err[4600] = "";
    memset(&res, 0, sizeof res);
    int rc = exp_replicate(&spec, dir, &d, &res, err, sizeof err);
    print_diag(&d);
    scenario_diag_fini(&d);
    if (rc != 0 && rc != 3 && err[0])
        fprintf(stderr, "retrystorm: %s\n", err);
    if (rc != 0 && !(rc == 3 && res.metric != NULL)) {
        exp_result_fini(&res);
        return rc;
    }
    int wrc = exp_reps_table(&res, name, rc == 0, &table) != 0 ? 1 : 0;
    struct output_file of;
    if (wrc == 0 && output_file_open(&of, dir, "summary.csv", err, sizeof err) == 0) {
        results_write_csv(of.f, &table);
        wrc = output_file_commit(&of, err, sizeof err) != 0;
    } else {
        wrc = 1;
    }
    if (wrc != 0)
        fprintf(stderr, "retrystorm: %s\n", err[0] ? err : "out of memory for the summary");
    if (wrc == 0)
        wrc = write_json(dir, "run", name, "summary.csv", &table);
    if (wrc == 0 && rc == 0) {
        fprintf(human, "  over %zu replications (mean ± 95%% half-width):\n", res.done);
        wrc = print_table(o, &table, "summary.csv", name, NULL, 0, NULL, NULL);
        fprintf(human, "  summary.csv holds the means, sd and half-widths; replications.csv each replication\n");
    }
    results_fini(&table);
    exp_result_fini(&res);
    return wrc ? wrc : rc;
}

/* A simulation into the work directory: its files, and the summary on
 * stdout; with row0, its summary row (summary_row: every column) in
 * *row0 (malloc'd; the caller frees it). Returns 0, 1 (failed), 3
 * (interrupted: written, complete = 0) or 4 (stopped at the memory limit:
 * written, complete = 0, said). */
static int simulate(const struct scenario *sc, const char *work, const char *dir, double **row0)
{
    char err[4600];
    double t0 = wall_now();
    struct sim *s = trace_sim_create(sc, 0, err, sizeof err);
    if (s == NULL) {
        fprintf(stderr, "retrystorm: %s\n", err);
        return 1;
    }
    sim_set_stop(s, &stop_signal);
    bool tty = isatty(STDERR_FILENO);
    struct progress_clock pc = {t0, t0};
    int rc = sim_run(s, tty ? progress : NULL, &pc, err, sizeof err);
    if (tty)
        fprintf(stderr, "\r%100s\r", "");
    struct summary sum;
    if (rc == 0) {
        output_summarise(s, wall_now() - t0, &sum);
        rc = output_write_dir(work, s, &sum, err, sizeof err);
    }
    if (rc != 0)
        fprintf(stderr, "retrystorm: %s\n", err);
    else
        output_print_summary(human, s, &sum, dir);
    struct summary_cols cols;
    if (rc == 0 && row0 != NULL && summary_cols_init(&cols, sc, err, sizeof err) == 0) {
        sum.wall_s = 0; /* as a sweep's job records it */
        if ((*row0 = malloc(cols.n * sizeof **row0)) != NULL) /* NULL: the sweep runs it again */
            summary_row(&cols, s, &sum, *row0);
        summary_cols_fini(&cols);
    }
    bool complete = sim_complete(s);
    if (rc == 0 && sim_limit(s) != NULL) {
        fprintf(stderr, "retrystorm: the run was %s\n", sim_limit(s));
        rc = 4;
    }
    sim_destroy(s);
    return rc == 4 ? 4 : rc != 0 ? 1 : complete ? 0 : 3;
}

static int cmd_run(int argc, char **argv, int first)
{
    struct opts o = {0};
    int rc = parse_run_opts(argc, argv, first, &o, "run");
    if (rc)
        return rc;
    if (o.scenario == NULL)
        o.scenario = DEFAULT_SCENARIO;
    struct scenario sc;
    if ((rc = load_checked(&o, &sc)) != 0)
        return rc;
    if (o.progress >= 0) { /* the lint's warnings, never a reason to stop */
        struct capacity cap;
        struct lint_out out = {stderr, false};
        capacity_estimate(&sc, &cap);
        lint_scenario(&sc, &cap, lint_print, &out);
    }
    char dir[4096], fallback[128], work[4200], err[4600];
    snprintf(fallback, sizeof fallback, "out/%s", sc.name);
    if ((rc = out_dir(dir, sizeof dir, o.outdir, fallback)) != 0 || (rc = check_out_dir(dir, o.force)) != 0)
        return rc;
    /* Everything is written into a fresh work directory beside it first. */
    if (outdir_mkwork(dir, work, sizeof work, err, sizeof err) != 0) {
        fprintf(stderr, "retrystorm: %s\n", err);
        return 1;
    }
    double *row0 = NULL; /* replication 0's row: the sweep does not run it again */
    rc = simulate(&sc, work, dir, o.reps > 1 ? &row0 : NULL);
    if (rc == 0 && o.reps > 1)
        rc = replicate(&o, work, sc.name, row0);
    free(row0);
    return print_json(&o, dir, finish_work(work, dir, &o, rc));
}

/* hysteresis SCENARIO --load KEY=A..B: everything checked (hyst_prepare)
 * before the directory is touched; the outputs written into a work
 * directory and installed, as run's. */
static int cmd_hysteresis(int argc, char **argv)
{
    struct opts o = {0};
    int rc = parse_run_opts(argc, argv, 2, &o, "hysteresis");
    if (rc)
        return rc;
    if (o.scenario == NULL || o.load == NULL) {
        fprintf(stderr, "retrystorm: hysteresis needs a scenario and --load load.rate=A..B, such as "
                        "--load load.rate=5/s..15/s (retrystorm help hysteresis)\n");
        return 2;
    }
    struct hyst_spec spec = {o.scenario, o.sets, o.nsets, o.load, o.ramp, o.hold, o.window,
                             o.reps ? o.reps : 1, o.threads ? o.threads : default_threads(), &stop_signal};
    struct hyst_result r;
    struct scenario_diag d = {0};
    char err[4600] = "", dir[4096], fallback[128], work[4200];
    rc = hyst_prepare(&spec, &r, &d, err, sizeof err);
    print_diag(&d);
    scenario_diag_fini(&d);
    if (rc == 0) {
        snprintf(fallback, sizeof fallback, "out/%s-hysteresis", r.sc->name);
        if ((rc = out_dir(dir, sizeof dir, o.outdir, fallback)) == 0)
            rc = check_out_dir(dir, o.force);
    } else if (err[0]) {
        fprintf(stderr, "retrystorm: %s\n", err);
    }
    if (rc == 0 && outdir_mkwork(dir, work, sizeof work, err, sizeof err) != 0) {
        fprintf(stderr, "retrystorm: %s\n", err);
        rc = 1;
    }
    if (rc != 0) {
        hyst_result_fini(&r);
        return rc;
    }
    if ((rc = hyst_run(&spec, &r, err, sizeof err)) == 0 && hyst_write(work, &r, err, sizeof err) != 0)
        rc = 1;
    if (rc == 1)
        fprintf(stderr, "retrystorm: %s\n", err);
    if (rc == 0) {
        hyst_print(human, o.scenario, &r);
        fprintf(human, "  hysteresis.csv (every window), thresholds.csv and scenario.ini in %s/\n", dir);
    }
    hyst_result_fini(&r);
    if (rc == 3) { /* nothing is kept of an interrupted ramp */
        outdir_remove_ours(work);
        fprintf(stderr, "retrystorm: interrupted: nothing written\n");
        return interrupted_exit();
    }
    return finish_work(work, dir, &o, rc);
}

/* serve: the live page (sim/serve/), when this binary was built with it. */
static int cmd_serve(int argc, char **argv)
{
#ifdef RS_SERVE
    return serve_main(argc, argv);
#else
    (void)argc, (void)argv;
    fprintf(stderr, "retrystorm: serve: this binary was built without it (cmake -DRS_SERVE=ON, with "
                    "libmicrohttpd and npm)\n");
    return 2;
#endif
}

/* Whether argv[from..] holds the flag a or b (NULL: only a), not as an
 * option's value. */
static bool has_flag(int argc, char **argv, int from, const char *a, const char *b)
{
    for (int i = from; i < argc; i++) {
        if (strcmp(argv[i], a) == 0 || (b != NULL && strcmp(argv[i], b) == 0))
            return true;
        for (size_t k = 0; k < NOPTIONS; k++)
            if (options[k].value && strcmp(argv[i], options[k].name) == 0) {
                i++; /* its value (argv[argc] is NULL: stop here) */
                break;
            }
    }
    return false;
}

/* A first word that is neither a command, a file nor a built-in but is
 * near a command: a typo, not a scenario. */
static int unknown_command(const char *word)
{
    const char *s = help_suggest_command(word);
    if (word[0] == '-' || s == NULL || access(word, F_OK) == 0 || scenario_builtin_text(word) != NULL)
        return 0;
    fprintf(stderr, "retrystorm: unknown command '%s'; did you mean '%s'? (retrystorm help)\n", word, s);
    return 2;
}

int cli_main(int argc, char **argv)
{
    gsl_set_error_handler_off();
    install_handlers();
    human = stdout;
    if (argc >= 2) {
        const char *c = argv[1];
        if (strcmp(c, "--help") == 0 || strcmp(c, "-h") == 0) {
            return help_print(stdout, NULL);
        }
        if (strcmp(c, "help") == 0)
            return help_print(stdout, argc >= 3 ? argv[2] : NULL);
        if (help_is_command(c) && has_flag(argc, argv, 2, "--help", "-h"))
            return help_print(stdout, c);
        if (!help_is_command(c) && has_flag(argc, argv, 1, "--help", "-h"))
            return help_print(stdout, "run");
        if (has_flag(argc, argv, 1, "--version", NULL)) { /* anywhere, as --help */
            printf("retrystorm %s\n", RS_VERSION);
            return 0;
        }
        if (!help_is_command(c) && unknown_command(c))
            return 2;
        if (strcmp(c, "list") == 0)
            return cmd_list(argc, argv);
        if (strcmp(c, "check") == 0)
            return cmd_check(argc, argv);
        if (strcmp(c, "run") == 0)
            return cmd_run(argc, argv, 2);
        if (strcmp(c, "plot") == 0)
            return cmd_plot(argc, argv);
        if (strcmp(c, "compare") == 0)
            return cmd_compare(argc, argv);
        if (strcmp(c, "sweep") == 0)
            return cmd_sweep(argc, argv);
        if (strcmp(c, "merge") == 0)
            return cmd_merge(argc, argv);
        if (strcmp(c, "tune") == 0)
            return cmd_tune(argc, argv);
        if (strcmp(c, "hysteresis") == 0)
            return cmd_hysteresis(argc, argv);
        if (strcmp(c, "serve") == 0)
            return cmd_serve(argc, argv);
        if (strcmp(c, "map") == 0)
            return cmd_map(argc, argv, &stop_signal);
        if (strcmp(c, "margin") == 0)
            return cmd_margin(argc, argv, &stop_signal);
    }
    return cmd_run(argc, argv, 1);
}
