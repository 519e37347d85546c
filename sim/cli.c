/*
 * cli — commands and options. See cli.h.
 */
#define _POSIX_C_SOURCE 200809L

#include "cli.h"

#include <gsl/gsl_errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "compare.h"
#include "output.h"
#include "plot.h"
#include "scenario.h"
#include "sim.h"

#define DEFAULT_SCENARIO "storm"
#define MAX_SETS 256

static const char usage[] =
    "usage: retrystorm [run] [SCENARIO] [-o DIR] [--set SECTION.KEY=VALUE]... [--seed N] [--plot]\n"
    "       retrystorm compare SCENARIO --vary KEY=V1,V2,... [--vary ...] [--reps N] [-o DIR]\n"
    "                  [--set ...] [--seed N] [--plot]\n"
    "       retrystorm plot DIR\n"
    "       retrystorm check SCENARIO\n"
    "       retrystorm list [presets]\n"
    "       retrystorm --help | --version\n"
    "\n"
    "SCENARIO is a scenario file or the name of a built-in scenario (see 'list');\n"
    "without one, the built-in '" DEFAULT_SCENARIO "' runs. Outputs go to out/<name>/ unless -o.\n"
    "--set overrides any key: --set layer.app.attempts=1 --set phase.spike.rate=x3\n";

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

static void progress(void *user, rs_time now, rs_time duration, uint64_t events)
{
    (void)user;
    fprintf(stderr, "\r  %5.1f%% simulated (%.0f of %.0f s), %llu events", 100.0 * (double)now / (double)duration,
            units_seconds(now), units_seconds(duration), (unsigned long long)events);
    fflush(stderr);
}

static int cmd_list_presets(void)
{
    printf("%-16s %-8s %-9s %-9s %-7s %-44s %s\n", "preset", "attempts", "base", "cap",
           "jitter", "retry_on", "source");
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
        printf("%-16s %-8u %-9s %-9s %-7g %-44s %s\n", k->name, k->attempts, base, cap,
               k->defaults.jitter, set, k->source);
        if (k->honor_retry_after || k->deadline != RS_TIME_NEVER) {
            char ra[32], dl[32];
            printf("%-16s honours Retry-After: %s (max %s); deadline %s\n", "",
                   k->honor_retry_after ? "yes" : "no",
                   k->retry_after_max == RS_TIME_NEVER
                       ? "none"
                       : units_format_duration(k->retry_after_max, ra, sizeof ra),
                   k->deadline == RS_TIME_NEVER ? "none"
                                                : units_format_duration(k->deadline, dl, sizeof dl));
        }
    }
    printf("\ngeneric kinds:");
    for (unsigned i = 0; i < backoff_nkinds; i++)
        if (!backoff_is_preset(&backoff_kinds[i]))
            printf(" %s", backoff_kinds[i].name);
    printf("\n");
    return 0;
}

static int cmd_list(int argc, char **argv)
{
    if (argc >= 3 && strcmp(argv[2], "presets") == 0)
        return cmd_list_presets();
    if (argc >= 3) {
        fprintf(stderr, "retrystorm: list what? 'retrystorm list' or 'retrystorm list presets'\n");
        return 2;
    }
    for (const struct scenario_builtin *b = scenario_builtins; b->name; b++) {
        /* The first comment line of a built-in says what it shows. */
        const char *t = b->text;
        while (*t == ';' || *t == '#' || *t == ' ')
            t++;
        const char *nl = strchr(t, '\n');
        printf("%-12s %.*s\n", b->name, nl ? (int)(nl - t) : (int)strlen(t), t);
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
    unsigned reps;
};

/* Parses run options from argv[i..]; returns 0, or 2 after a message. */
static int parse_run_opts(int argc, char **argv, int i, struct opts *o)
{
    for (; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "-o") == 0 || strcmp(a, "--set") == 0 || strcmp(a, "--seed") == 0) {
            if (i + 1 >= argc) {
                fprintf(stderr, "retrystorm: %s needs a value\n%s", a, usage);
                return 2;
            }
            const char *v = argv[++i];
            if (strcmp(a, "-o") == 0) {
                o->outdir = v;
            } else if (o->nsets == MAX_SETS) {
                fprintf(stderr, "retrystorm: too many --set options (limit is %d)\n", MAX_SETS);
                return 2;
            } else if (strcmp(a, "--set") == 0) {
                o->sets[o->nsets++] = v;
            } else {
                snprintf(o->seed_set, sizeof o->seed_set, "run.seed=%.50s", v);
                o->sets[o->nsets++] = o->seed_set;
            }
        } else if (strcmp(a, "--plot") == 0) {
            o->plot = true;
        } else if (strcmp(a, "--vary") == 0 || strcmp(a, "--reps") == 0) {
            if (i + 1 >= argc) {
                fprintf(stderr, "retrystorm: %s needs a value\n%s", a, usage);
                return 2;
            }
            const char *v = argv[++i];
            if (strcmp(a, "--reps") == 0) {
                char *end;
                long r = strtol(v, &end, 10);
                if (*end != '\0' || r < 1 || r > 100000) {
                    fprintf(stderr, "retrystorm: --reps %s: expected an integer from 1 to 100000\n", v);
                    return 2;
                }
                o->reps = (unsigned)r;
            } else if (o->nvary == MAX_VARY) {
                fprintf(stderr, "retrystorm: too many --vary options (limit is %d)\n", MAX_VARY);
                return 2;
            } else {
                o->vary[o->nvary++] = v;
            }
        } else if (a[0] == '-' && a[1] != '\0') {
            fprintf(stderr, "retrystorm: unknown option '%s'\n%s", a, usage);
            return 2;
        } else if (o->scenario == NULL) {
            o->scenario = a;
        } else {
            fprintf(stderr, "retrystorm: more than one scenario given ('%s' and '%s')\n",
                    o->scenario, a);
            return 2;
        }
    }
    return 0;
}

/* Draws DIR's figures and says what happened; a missing gnuplot is a
 * message, not a failure. Returns the exit code. */
static int plot_and_say(const char *dir)
{
    if (!plot_available()) {
        fprintf(stderr, "retrystorm: gnuplot not found: no figures drawn "
                        "(install gnuplot, e.g. apt-get install gnuplot-nox)\n");
        return 0;
    }
    char err[1024];
    int n = plot_dir(dir, err, sizeof err);
    if (n < 0) {
        fprintf(stderr, "retrystorm: %s\n", err);
        return 1;
    }
    printf("  %d figures (PNG and SVG) in %s/\n", n, dir);
    return 0;
}

static int cmd_plot(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "retrystorm: plot needs one output directory\n%s", usage);
        return 2;
    }
    return plot_and_say(argv[2]);
}

static void compare_row(void *user, const char *label, const char *const *names,
                        const double *v, size_t n)
{
    (void)names, (void)n;
    bool *first = user;
    if (*first) {
        printf("  %-34s %9s %7s %7s %9s %9s %9s %10s %9s\n", "variant", "requests", "ok", "amplif",
               "p50 ms", "p99 ms", "peak/s", "duplicates", "recovered");
        *first = false;
    }
    char rec[32];
    if (isnan(v[7]))
        snprintf(rec, sizeof rec, "-");
    else if (isnan(v[8]))
        snprintf(rec, sizeof rec, "%s", v[7] > 0 ? "some" : "no");
    else
        snprintf(rec, sizeof rec, "%s %.0fs", v[7] >= 1 ? "yes" : "some", v[8]);
    printf("  %-34.34s %9.0f %6.1f%% %7.3f %9.1f %9.1f %9.0f %10.0f %9s\n", label, v[0], 100 * v[1],
           v[2], 1e3 * v[3], 1e3 * v[4], v[5], v[6], rec);
}

static int cmd_compare(int argc, char **argv)
{
    struct opts o = {0};
    int rc = parse_run_opts(argc, argv, 2, &o);
    if (rc)
        return rc;
    if (o.scenario == NULL || o.nvary == 0) {
        fprintf(stderr, "retrystorm: compare needs a scenario and at least one --vary KEY=V1,V2,...\n%s",
                usage);
        return 2;
    }
    struct scenario sc;
    struct scenario_diag d = {0};
    if (scenario_load(&sc, o.scenario, o.sets, o.nsets, &d) != 0) {
        print_diag(&d);
        scenario_diag_fini(&d);
        return 2;
    }
    char dir[4096], err[1024];
    if (o.outdir)
        snprintf(dir, sizeof dir, "%s", o.outdir);
    else
        snprintf(dir, sizeof dir, "out/%s-compare", sc.name);
    struct compare_spec spec = {o.scenario, o.sets, o.nsets, {0}, o.nvary, o.reps ? o.reps : 1, dir};
    for (size_t i = 0; i < o.nvary; i++)
        spec.vary[i] = o.vary[i];
    bool first = true;
    err[0] = '\0';
    printf("retrystorm %s: %s compared on seed %llu (%u replication%s each)\n", RS_VERSION, sc.name,
           (unsigned long long)sc.seed, spec.reps, spec.reps == 1 ? "" : "s");
    rc = compare_run(&spec, &d, compare_row, &first, err, sizeof err);
    print_diag(&d);
    scenario_diag_fini(&d);
    if (rc != 0) {
        if (err[0])
            fprintf(stderr, "retrystorm: %s\n", err);
        return rc;
    }
    printf("  outputs in %s/ (summary.csv and timeseries.csv with a variant column; one directory per variant)\n",
           dir);
    return o.plot ? plot_and_say(dir) : 0;
}

static int cmd_check(int argc, char **argv)
{
    struct opts o = {0};
    int rc = parse_run_opts(argc, argv, 2, &o);
    if (rc)
        return rc;
    if (o.scenario == NULL) {
        fprintf(stderr, "retrystorm: check needs a scenario\n%s", usage);
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
    printf("%s: ok (%s, %u layer%s, %u phase%s)\n", o.scenario, sc.name, sc.nlayers,
           sc.nlayers == 1 ? "" : "s", sc.nphases, sc.nphases == 1 ? "" : "s");
    return 0;
}

static int cmd_run(int argc, char **argv, int first)
{
    struct opts o = {0};
    int rc = parse_run_opts(argc, argv, first, &o);
    if (rc)
        return rc;
    if (o.scenario == NULL)
        o.scenario = DEFAULT_SCENARIO;
    struct scenario sc;
    struct scenario_diag d = {0};
    int n = scenario_load(&sc, o.scenario, o.sets, o.nsets, &d);
    print_diag(&d);
    scenario_diag_fini(&d);
    if (n)
        return 2;
    char dir[4096], err[1024];
    if (o.outdir)
        snprintf(dir, sizeof dir, "%s", o.outdir);
    else
        snprintf(dir, sizeof dir, "out/%s", sc.name);

    double t0 = wall_now();
    struct sim *s = sim_create(&sc, 0, err, sizeof err);
    if (s == NULL) {
        fprintf(stderr, "retrystorm: %s\n", err);
        return 1;
    }
    bool tty = isatty(STDERR_FILENO);
    rc = sim_run(s, tty ? progress : NULL, NULL, err, sizeof err);
    if (tty)
        fprintf(stderr, "\r%60s\r", "");
    if (rc != 0) {
        fprintf(stderr, "retrystorm: %s\n", err);
        sim_destroy(s);
        return 1;
    }
    struct summary sum;
    output_summarise(s, wall_now() - t0, &sum);
    if (output_write_dir(dir, s, &sum, err, sizeof err) != 0) {
        fprintf(stderr, "retrystorm: %s\n", err);
        sim_destroy(s);
        return 1;
    }
    output_print_summary(stdout, s, &sum, dir);
    sim_destroy(s);
    return o.plot ? plot_and_say(dir) : 0;
}

int cli_main(int argc, char **argv)
{
    gsl_set_error_handler_off();
    if (argc >= 2) {
        const char *c = argv[1];
        if (strcmp(c, "--help") == 0 || strcmp(c, "-h") == 0 || strcmp(c, "help") == 0) {
            fputs(usage, stdout);
            return 0;
        }
        if (strcmp(c, "--version") == 0) {
            printf("retrystorm %s\n", RS_VERSION);
            return 0;
        }
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
    }
    return cmd_run(argc, argv, 1);
}
