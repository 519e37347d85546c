/*
 * cli_envelope — map and margin. See cli_envelope.h.
 *
 * One descriptor per option (name, whether it takes a value, which of the
 * two commands take it, its taker); the study itself is envelope.c's.
 */
#define _POSIX_C_SOURCE 200809L

#include "cli_envelope.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "envelope.h"
#include "figrec.h"
#include "plot.h"
#include "scenario.h"

#define MAX_SETS 256
enum { FOR_MAP = 1, FOR_MARGIN = 2, FOR_BOTH = 3 };

struct env_opts {
    struct env_spec spec;
    const char *sets[MAX_SETS];
    char seed_set[64];
    const char *outdir;
    char dir[4096];
    bool plot;
};

/* A number option: the value, or 2 after a message naming the option,
 * the value and what is allowed. */
static int number(const char *name, const char *v, double lo, double hi, bool open, double *out)
{
    char *end;
    errno = 0;
    double x = strtod(v, &end);
    if (end == v || *end != '\0' || errno == ERANGE || !(open ? x > lo && x < hi : x >= lo && x <= hi)) {
        fprintf(stderr, "retrystorm: %s %s: expected a number %s %g %s %g\n", name, v,
                open ? "strictly between" : "from", lo, open ? "and" : "to", hi);
        return 2;
    }
    *out = x;
    return 0;
}

/* An integer option from 1 to max, or 2 after a message. */
static int integer(const char *name, const char *v, unsigned long max, unsigned *out)
{
    char *end;
    errno = 0;
    unsigned long x = strtoul(v, &end, 10);
    if (end == v || *end != '\0' || errno == ERANGE || v[0] == '-' || x < 1 || x > max) {
        fprintf(stderr, "retrystorm: %s %s: expected an integer from 1 to %lu\n", name, v, max);
        return 2;
    }
    *out = (unsigned)x;
    return 0;
}

static int take(struct env_opts *o, const char *name, const char *v)
{
    struct env_spec *s = &o->spec;
    int rc = 0;
    if (strcmp(name, "--load") == 0)
        s->load = v;
    else if (strcmp(name, "--trigger") == 0)
        s->trigger = v;
    else if (strcmp(name, "--duration") == 0)
        s->duration = v;
    else if (strcmp(name, "-o") == 0)
        o->outdir = v;
    else if (strcmp(name, "--level") == 0)
        rc = number(name, v, 0, 1, true, &s->level);
    else if (strcmp(name, "--resolution") == 0)
        rc = number(name, v, 0, INFINITY, true, &s->resolution);
    else if (strcmp(name, "--reps") == 0 || strcmp(name, "--batch") == 0 || strcmp(name, "-j") == 0)
        rc = integer(name, v, name[1] == 'j' ? 256 : 100000,
                     name[1] == 'j' ? &s->threads : name[2] == 'r' ? &s->reps : &s->batch);
    else if (s->nsets == MAX_SETS) {
        fprintf(stderr, "retrystorm: too many --set options (limit is %d)\n", MAX_SETS);
        rc = 2;
    } else if (strcmp(name, "--seed") == 0) {
        snprintf(o->seed_set, sizeof o->seed_set, "run.seed=%.40s", v);
        o->sets[s->nsets++] = o->seed_set;
    } else {
        o->sets[s->nsets++] = v;
    }
    return rc;
}

static const struct {
    const char *name;
    bool value;
    unsigned cmds;
} options[] = {
    {"--load", true, FOR_MAP},       {"--duration", true, FOR_MAP},   {"--trigger", true, FOR_BOTH},
    {"--level", true, FOR_BOTH},     {"--reps", true, FOR_BOTH},      {"--batch", true, FOR_BOTH},
    {"--resolution", true, FOR_BOTH}, {"-j", true, FOR_BOTH},         {"-o", true, FOR_BOTH},
    {"--set", true, FOR_BOTH},       {"--seed", true, FOR_BOTH},      {"--plot", false, FOR_MAP},
    {"--force", false, FOR_BOTH},    {"--resume", false, FOR_BOTH},
};
#define NOPTIONS (sizeof options / sizeof *options)

/* An unknown option or one the other command takes: 2 after a message. */
static int refuse(const char *cmd, unsigned bit, const char *a)
{
    const char *names[NOPTIONS + 1];
    size_t n = 0;
    for (size_t k = 0; k < NOPTIONS; k++) {
        if (strcmp(a, options[k].name) == 0) {
            fprintf(stderr, "retrystorm: %s does not take %s (retrystorm help %s)\n", cmd, a, cmd);
            return 2;
        }
        if (options[k].cmds & bit)
            names[n++] = options[k].name;
    }
    names[n] = NULL;
    const char *s = scenario_nearest(a, names);
    fprintf(stderr, "retrystorm: unknown option '%s'%s%s%s (retrystorm help %s)\n", a, s ? "; did you mean '" : "",
            s ? s : "", s ? "'?" : "", cmd);
    return 2;
}

static int parse(int argc, char **argv, const char *cmd, unsigned bit, struct env_opts *o)
{
    for (int i = 2; i < argc; i++) {
        size_t k = 0;
        while (k < NOPTIONS && !(strcmp(argv[i], options[k].name) == 0 && (options[k].cmds & bit)))
            k++;
        int rc = 0;
        if (k == NOPTIONS && argv[i][0] == '-' && argv[i][1] != '\0')
            return refuse(cmd, bit, argv[i]);
        if (k == NOPTIONS && o->spec.scenario != NULL) {
            fprintf(stderr, "retrystorm: more than one scenario given ('%s' and '%s')\n", o->spec.scenario, argv[i]);
            return 2;
        }
        if (k == NOPTIONS)
            o->spec.scenario = argv[i];
        else if (options[k].value && i + 1 >= argc)
            rc = 2, fprintf(stderr, "retrystorm: %s needs a value (retrystorm help %s)\n", argv[i], cmd);
        else if (options[k].value)
            rc = take(o, argv[i], argv[i + 1]), i++;
        else if (strcmp(argv[i], "--plot") == 0)
            o->plot = true;
        else if (strcmp(argv[i], "--resume") == 0)
            o->spec.resume = true;
        else
            o->spec.force = true;
        if (rc != 0)
            return rc;
    }
    o->spec.sets = o->sets;
    return 0;
}

static void warn(void *user, const char *msg)
{
    (void)user;
    fprintf(stderr, "retrystorm: warning: %s\n", msg);
}

/* Runs the study; 0, or the exit code after the messages. */
static int study(struct env_opts *o, const char *cmd, const char *fallback, volatile sig_atomic_t *stop,
                 struct env_result *res)
{
    char *dir = o->dir;
    const char *given = o->outdir ? o->outdir : fallback;
    size_t n = strlen(given);
    while (n > 1 && given[n - 1] == '/')
        n--;
    if (n == 0 || n + 32 >= sizeof o->dir) {
        fprintf(stderr, "retrystorm: -o %.60s: %s\n", given, n ? "the path is too long" : "an empty path");
        return 2;
    }
    snprintf(dir, sizeof o->dir, "%.*s", (int)n, given);
    o->spec.dir = dir;
    o->spec.stop = stop;
    o->spec.warn = warn;
    if (o->spec.threads == 0) {
        long nc = sysconf(_SC_NPROCESSORS_ONLN);
        o->spec.threads = nc > 0 ? (unsigned)(nc > 256 ? 256 : nc) : 1;
    }
    struct scenario_diag d = {0};
    char err[1024] = "";
    struct figrec_held *held = figrec_hold(dir); /* figures plot drew, which the study removes */
    int rc = env_run(&o->spec, &d, res, err, sizeof err);
    figrec_say(stderr, figrec_release(held, dir, dir));
    for (size_t i = 0; i < d.n; i++)
        fprintf(stderr, "retrystorm: %s\n", d.msg[i]);
    scenario_diag_fini(&d);
    if (rc != 0 && rc != 3 && err[0])
        fprintf(stderr, "retrystorm: %s: %s\n", cmd, err);
    if (rc == 3) {
        fprintf(stderr, "retrystorm: %s: interrupted: the probes settled so far are in %s/%s; run the same command "
                        "with --resume to finish\n", cmd, dir, o->spec.probes_file);
        return 128 + (*stop ? *stop : SIGINT);
    }
    return rc;
}

static void print_probe(const char *what, const struct env_probe *p)
{
    printf("  %-22s %-10s recovery %5.3f  95 %% [%5.3f, %5.3f]  %u runs%s\n", what, p->text, p->share, p->lo, p->hi,
           p->n, p->decided ? "" : "  (undecided)");
}

static void print_runs(const struct env_result *r)
{
    printf("%zu runs, against %zu for the full grid at the same resolution (%u reps each)\n", r->runs, r->grid_runs,
           r->reps);
}

/* The phase diagram, in the slide look; a missing gnuplot is a message. */
static int draw(const char *dir, volatile sig_atomic_t *stop)
{
    if (!plot_available()) {
        fprintf(stderr, "retrystorm: gnuplot not found: no figures drawn (install gnuplot, e.g. apt-get install gnuplot-nox)\n");
        return 0;
    }
    struct plot_style st = {.slide = true};
    char err[2048];
    int n = plot_dir_styled(dir, &st, stop, err, sizeof err);
    if (n == PLOT_STOPPED)
        return 128 + (*stop ? *stop : SIGINT);
    if (n < 0) {
        fprintf(stderr, "retrystorm: %s\n", err);
        return n == PLOT_BAD_INPUT ? 2 : 1;
    }
    printf("  %d figures (PNG and SVG) in %s/\n", n, dir);
    return 0;
}

int cmd_map(int argc, char **argv, volatile sig_atomic_t *stop)
{
    struct env_opts o = {.spec.probes_file = "map.csv"};
    int rc = parse(argc, argv, "map", FOR_MAP, &o);
    if (rc != 0)
        return rc;
    if (o.spec.scenario == NULL || o.spec.load == NULL || o.spec.trigger == NULL) {
        fprintf(stderr, "retrystorm: map needs a scenario, --load KEY=VALUES and --trigger KEY=A..B (retrystorm help map)\n");
        return 2;
    }
    struct env_result r;
    if ((rc = study(&o, "map", "out/map", stop, &r)) == 0) {
        printf("%s: where recovery falls below %g along %s (%s)\n", o.spec.scenario, r.level, r.trig.key, r.load_key);
        for (size_t c = 0; c < r.ncells; c++) {
            const struct env_cell *cell = &r.cells[c];
            printf("  %s%s%s  ", cell->load, cell->duration[0] ? " " : "", cell->duration);
            if (cell->flags & ENV_OVERLOAD)
                printf("overloaded: the load alone is too much\n");
            else if (cell->flags & ENV_BELOW)
                printf("below the range: fails at %s\n", r.probes[cell->pb].text);
            else if (cell->flags & ENV_ABOVE)
                printf("above the range: recovers at %s\n", r.probes[cell->pa].text);
            else
                printf("recovers at %s, fails at %s, crossing %s%.4g%s%s%s\n", r.probes[cell->pa].text,
                       r.probes[cell->pb].text, r.trig.prefix, cell->crossing, r.trig.unit,
                       cell->flags & ENV_UNDECIDED ? " (undecided)" : "",
                       cell->flags & ENV_NONMONOTONE ? " (not monotone)" : "");
        }
        print_runs(&r);
        printf("map.csv, boundary.csv written to %s/\n", o.spec.dir);
        if (o.plot)
            rc = draw(o.spec.dir, stop);
    }
    env_result_fini(&r);
    return rc;
}

int cmd_margin(int argc, char **argv, volatile sig_atomic_t *stop)
{
    struct env_opts o = {.spec.probes_file = "margin.csv", .spec.level = 0.95};
    int rc = parse(argc, argv, "margin", FOR_MARGIN, &o);
    if (rc != 0)
        return rc;
    if (o.spec.scenario == NULL || o.spec.trigger == NULL) {
        fprintf(stderr, "retrystorm: margin needs a scenario and --trigger KEY=A..B (retrystorm help margin)\n");
        return 2;
    }
    struct env_result r;
    if ((rc = study(&o, "margin", "out/margin", stop, &r)) == 0) {
        const struct env_cell *cell = &r.cells[0];
        if (cell->flags & ENV_OVERLOAD)
            printf("%s: no margin: overloaded before the trigger (the load alone is too much)\n", o.spec.scenario);
        else if (cell->pa >= 0)
            printf("%s: margin %s = %s (recovers with probability >= %g)\n", o.spec.scenario, r.trig.key,
                   r.probes[cell->pa].text, r.level);
        else
            printf("%s: no margin: %s already fails at recovery probability %g\n", o.spec.scenario,
                   r.probes[cell->pb].text, r.level);
        if (cell->pa >= 0)
            print_probe("largest that recovers", &r.probes[cell->pa]);
        if (cell->pb >= 0)
            print_probe("smallest that fails", &r.probes[cell->pb]);
        else if (cell->pa >= 0)
            printf("  above the range: the margin is at least %s\n", r.probes[cell->pa].text);
        print_runs(&r);
        printf("margin.csv, boundary.csv written to %s/\n", o.spec.dir);
    }
    env_result_fini(&r);
    return rc;
}
