/*
 * Fuzz target for the readers of result directories (libFuzzer):
 * experiment.csv, jobs.csv and status.csv as merge and --resume read them.
 *
 * The input is a set of files. A line "@@ NAME" starts the file NAME, one
 * of experiment.csv, jobs.csv or status.csv, optionally prefixed by
 * "shard2/"; text before the first such line is experiment.csv. A file
 * named twice gets both sections; bytes (NUL included) are written as
 * they are. "@@ resume-shard K/N" makes the --resume leg run shard K/N.
 * The files go into a fresh temporary tree: shard1 "a/" and, when any
 * section names it, shard2 "b/", each with the .retrystorm marker. Then:
 *   merge   exp_merge(a[, b]) into out/; when it succeeds, merging out/
 *           again gives 0 and the same experiment.csv, jobs.csv and
 *           sweep.csv (a round trip); exp_merge(a, a) never succeeds.
 *   resume  exp_run --resume of a small built-in sweep (2 points of
 *           layer.app.attempts × 2 replications, 1 s at 20/s, 1 thread)
 *           into a/; when it succeeds with no shard, a/ merges.
 *   rerun   exp_run without --resume into b/ (the status.csv reader).
 * The oracle: no crash, no sanitizer report; every call returns 0 or 2
 * (1 only when err says out of memory); a 2 names the file at fault or
 * says what is missing or different, and leaves the tree as it was (a
 * refused merge creates no out/; a refused run changes no file in its
 * directory). The tree is removed after each input, and a fresh one takes
 * well under 10 ms on tmpfs.
 *
 * Built with -DRS_FUZZ=ON and clang; the same function replays the saved
 * inputs in tests/fuzz-readers/ in every build (fuzz_readers_regressions).
 * `fuzz_readers_replay --scenario` prints the built-in sweep's scenario,
 * from which the corpus's valid seeds come:
 *   fuzz_readers_replay --scenario > fuzz-readers.ini
 *   retrystorm sweep fuzz-readers.ini --grid layer.app.attempts=1,2 --reps 2 -j 1 [--shard K/2]
 */
#define _XOPEN_SOURCE 700

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "experiment.h"
#include "scenario.h"

/* exp_merge without the result. */
static int rs_merge(const char *const *dirs, size_t n, const char *out, char *err, size_t errsz)
{
    struct exp_result res;
    memset(&res, 0, sizeof res);
    int rc = exp_merge(dirs, n, out, false, &res, err, errsz);
    exp_result_fini(&res);
    return rc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char scenario_text[] = "; fuzz_readers: a tiny sweep for the --resume leg\n"
                                    "[run]\n"
                                    "name = fuzzreaders\n"
                                    "duration = 1s\n"
                                    "[load]\n"
                                    "rate = 20/s\n"
                                    "clients = 10\n"
                                    "[server]\n"
                                    "workers = 2\n"
                                    "service = exp(10ms)\n"
                                    "[layer app]\n"
                                    "attempts = 2\n"
                                    "timeout = 100ms\n";
static const char *const grid_axis = "layer.app.attempts=1,2";
#define SCENARIO_NAME "fuzz-readers.ini"

/* The files an input may name: shard s (0 or 1), file f. */
static const char *const file_names[] = {"experiment.csv", "jobs.csv", "status.csv"};
#define NFILES 3

struct file_buf {
    bool present;
    char *data;
    size_t len, cap;
};

struct input {
    struct file_buf f[2][NFILES];
    unsigned shard_k, shard_n;
};

static bool verbose;          /* the replay's -v: each call's result */
static char base_dir[512];   /* where the trees are made: /dev/shm when there is one */
static char scenario_path[700]; /* scenario_dir and the file name */
static char scenario_dir[600];

static void die(const char *what, const char *detail)
{
    fprintf(stderr, "fuzz_readers: %s%s%s\n", what, detail ? ": " : "", detail ? detail : "");
    abort();
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st, (void)ftw;
    if (flag == FTW_DP || flag == FTW_D)
        chmod(path, 0700);
    if (remove(path) != 0 && errno != ENOENT)
        fprintf(stderr, "fuzz_readers: cannot remove %s: %s\n", path, strerror(errno));
    return 0;
}

static void rm_tree(const char *path)
{
    nftw(path, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

static void cleanup_scenario(void)
{
    if (scenario_dir[0])
        rm_tree(scenario_dir);
}

/* Picks the base directory and writes the scenario file, once. */
static void setup(void)
{
    if (scenario_path[0])
        return;
    struct stat st;
    const char *t = getenv("TMPDIR");
    if (stat("/dev/shm", &st) == 0 && S_ISDIR(st.st_mode) && access("/dev/shm", W_OK) == 0)
        t = "/dev/shm";
    snprintf(base_dir, sizeof base_dir, "%s", t && *t ? t : "/tmp");
    snprintf(scenario_dir, sizeof scenario_dir, "%s/fuzz-readers-scn-XXXXXX", base_dir);
    if (mkdtemp(scenario_dir) == NULL)
        die("mkdtemp", strerror(errno));
    atexit(cleanup_scenario);
    snprintf(scenario_path, sizeof scenario_path, "%s/" SCENARIO_NAME, scenario_dir);
    FILE *f = fopen(scenario_path, "w");
    if (f == NULL || fputs(scenario_text, f) < 0 || fclose(f) != 0)
        die("cannot write the scenario", scenario_path);
}

static void buf_add(struct file_buf *b, const uint8_t *p, size_t n)
{
    b->present = true;
    if (b->len + n + 1 > b->cap) {
        b->cap = (b->len + n + 1) * 2;
        b->data = realloc(b->data, b->cap);
        if (b->data == NULL)
            die("out of memory", NULL);
    }
    memcpy(b->data + b->len, p, n);
    b->len += n;
}

/* Splits the input into its files (see the header comment). */
static void parse_input(const uint8_t *data, size_t size, struct input *in)
{
    struct file_buf *cur = &in->f[0][0];
    size_t i = 0;
    cur->present = true;
    while (i < size) {
        const uint8_t *nl = memchr(data + i, '\n', size - i);
        size_t end = nl ? (size_t)(nl - data) + 1 : size; /* the line, with its newline */
        if (end - i >= 3 && memcmp(data + i, "@@ ", 3) == 0) {
            char name[64];
            size_t n = end - i - 3 - (nl != NULL);
            if (n >= sizeof name)
                n = sizeof name - 1;
            memcpy(name, data + i + 3, n);
            name[n] = '\0';
            cur = NULL; /* an unknown name: its section is dropped */
            unsigned k, nn;
            char tail;
            if (sscanf(name, "resume-shard %u/%u%c", &k, &nn, &tail) == 2 && nn >= 1 && nn <= 8 &&
                k >= 1 && k <= nn) {
                in->shard_k = k;
                in->shard_n = nn;
            }
            int s = strncmp(name, "shard2/", 7) == 0;
            for (int f = 0; f < NFILES; f++)
                if (strcmp(name + 7 * s, file_names[f]) == 0) {
                    cur = &in->f[s][f];
                    cur->present = true;
                }
        } else if (cur != NULL) {
            buf_add(cur, data + i, end - i);
        }
        i = end;
    }
}

static void write_file(const char *path, const char *data, size_t len)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0644);
    if (fd < 0 || (len && write(fd, data, len) != (ssize_t)len) || close(fd) != 0)
        die("cannot write", path);
}

/* Reads a whole file into a malloc'd buffer (*len bytes); NULL if absent. */
static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return NULL;
    char *b = NULL;
    size_t cap = 0, n = 0, r;
    do {
        if (n + 4096 > cap && (b = realloc(b, cap = cap * 2 + 4096)) == NULL)
            die("out of memory", NULL);
        n += r = fread(b + n, 1, cap - n, f);
    } while (r > 0);
    fclose(f);
    *len = n;
    return b;
}

static bool same_file(const char *a, const char *b)
{
    size_t la = 0, lb = 0;
    char *x = slurp(a, &la), *y = slurp(b, &lb);
    bool same = x && y && la == lb && memcmp(x, y, la) == 0;
    free(x);
    free(y);
    return same;
}

/* Whether directory dir holds exactly the marker and the files of buffer
 * set fb, with their contents: what a refused command must leave. */
static bool dir_as_written(const char *dir, const struct file_buf *fb)
{
    char path[1200];
    struct stat st;
    for (int f = 0; f < NFILES; f++) {
        snprintf(path, sizeof path, "%s/%s", dir, file_names[f]);
        size_t len = 0;
        char *b = slurp(path, &len);
        bool ok = fb[f].present ? b && len == fb[f].len && (len == 0 || memcmp(b, fb[f].data, len) == 0)
                                : !b;
        free(b);
        if (!ok)
            return false;
    }
    snprintf(path, sizeof path, "%s/sweep.csv", dir);
    if (lstat(path, &st) == 0)
        return false;
    snprintf(path, sizeof path, "%s/.retrystorm", dir);
    return lstat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* The oracle on one call's result. */
static void judge(const char *what, int rc, const char *err, const struct scenario_diag *d)
{
    if (verbose)
        printf("  %-15s %d %s\n", what, rc, rc ? err : "");
    if (d != NULL && d->n > 0) {
        fprintf(stderr, "%s: the built-in scenario was refused: %s\n", what, d->msg[0]);
        abort();
    }
    if (rc == 0)
        return;
    if (rc == 1 && strstr(err, "out of memory") != NULL)
        return;
    if (rc != 2) {
        fprintf(stderr, "%s returned %d (not 0 or 2): %s\n", what, rc, err);
        abort();
    }
    static const char *const why[] = {"experiment.csv", "jobs.csv", "status.csv", "missing",
                                      "another experiment", "unfinished sweep"};
    for (size_t i = 0; i < sizeof why / sizeof *why; i++)
        if (strstr(err, why[i]) != NULL)
            return;
    fprintf(stderr, "%s returned 2 with a message that names no file: %s\n", what, err);
    abort();
}

static int run_sweep(const char *dir, bool resume, unsigned k, unsigned n, char *err, size_t errsz,
                     struct scenario_diag *d)
{
    struct exp_spec spec = {.scenario = scenario_path, .ngrid = 1, .reps = 2, .threads = 1,
                            .shard_k = k, .shard_n = n, .dir = dir, .resume = resume};
    spec.grid[0] = grid_axis;
    return exp_run(&spec, d, NULL, err, errsz);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 65536)
        return 0;
    setup();
    struct input in = {0};
    parse_input(data, size, &in);
    bool two = false;
    for (int f = 0; f < NFILES; f++)
        two = two || in.f[1][f].present;

    char root[600], a[700], b[700], out[700], out2[700], path[1200], path2[1200], err[9000];
    snprintf(root, sizeof root, "%s/fuzz-readers-XXXXXX", base_dir);
    if (mkdtemp(root) == NULL)
        die("mkdtemp", strerror(errno));
    snprintf(a, sizeof a, "%s/a", root);
    snprintf(b, sizeof b, "%s/b", root);
    snprintf(out, sizeof out, "%s/out", root);
    snprintf(out2, sizeof out2, "%s/out2", root);
    for (int s = 0; s < 1 + two; s++) {
        const char *dir = s ? b : a;
        if (mkdir(dir, 0755) != 0)
            die("mkdir", dir);
        snprintf(path, sizeof path, "%s/.retrystorm", dir);
        write_file(path, "", 0);
        for (int f = 0; f < NFILES; f++)
            if (in.f[s][f].present) {
                snprintf(path, sizeof path, "%s/%s", dir, file_names[f]);
                write_file(path, in.f[s][f].data, in.f[s][f].len);
            }
    }

    /* merge, and the round trip of what it wrote */
    const char *dirs[2] = {a, b};
    struct stat st;
    int rc = rs_merge(dirs, 1 + two, out, err, sizeof err);
    judge("merge", rc, err, NULL);
    if (rc != 0 && lstat(out, &st) == 0)
        die("a refused merge created its output directory", err);
    if (rc == 0) {
        const char *again[1] = {out};
        rc = rs_merge(again, 1, out2, err, sizeof err);
        if (rc != 0)
            die("the merged directory does not merge again", err);
        static const char *const cmp[] = {"experiment.csv", "jobs.csv", "sweep.csv"};
        for (int i = 0; i < 3; i++) {
            snprintf(path, sizeof path, "%s/%s", out, cmp[i]);
            snprintf(path2, sizeof path2, "%s/%s", out2, cmp[i]);
            if (!same_file(path, path2))
                die("merging a merged directory changes it", cmp[i]);
        }
    }
    const char *twice[2] = {a, a};
    rc = rs_merge(twice, 2, out2 /* absent or ours */, err, sizeof err);
    if (rc == 0)
        die("merging a shard with itself succeeded", a);
    judge("merge a a", rc, err, NULL);

    /* --resume into a/ */
    struct scenario_diag d = {0};
    rc = run_sweep(a, true, in.shard_k, in.shard_n, err, sizeof err, &d);
    judge("sweep --resume", rc, err, &d);
    scenario_diag_fini(&d);
    if (rc == 2 && !dir_as_written(a, in.f[0]))
        die("a refused --resume changed its directory", err);
    if (rc == 0 && in.shard_n == 0) {
        snprintf(path, sizeof path, "%s/resumed", root);
        const char *resumed[1] = {a};
        if ((rc = rs_merge(resumed, 1, path, err, sizeof err)) != 0)
            die("a resumed sweep does not merge", err);
    }

    /* a sweep without --resume into b/ reads its status.csv */
    if (two) {
        struct scenario_diag d2 = {0};
        rc = run_sweep(b, false, 0, 0, err, sizeof err, &d2);
        judge("sweep", rc, err, &d2);
        scenario_diag_fini(&d2);
        if (rc == 2 && !dir_as_written(b, in.f[1]))
            die("a refused sweep changed its directory", err);
    }

    rm_tree(root);
    for (int s = 0; s < 2; s++)
        for (int f = 0; f < NFILES; f++)
            free(in.f[s][f].data);
    return 0;
}

#ifndef RS_LIBFUZZER
/* Without libFuzzer: replay the files named on the command line (with -v
 * first, print each call's result), or print the scenario of the --resume
 * leg (--scenario). */
int main(int argc, char **argv)
{
    if (argc == 2 && strcmp(argv[1], "--scenario") == 0) {
        fputs(scenario_text, stdout);
        printf("; grid: --grid %s --reps 2\n", grid_axis);
        return 0;
    }
    static uint8_t buf[65536];
    int first = 1;
    if (argc > 1 && strcmp(argv[1], "-v") == 0)
        verbose = true, first = 2;
    for (int i = first; i < argc; i++) {
        if (verbose)
            printf("%s\n", argv[i]);
        FILE *f = fopen(argv[i], "rb");
        if (f == NULL) {
            perror(argv[i]);
            return 1;
        }
        size_t n = fread(buf, 1, sizeof buf, f);
        fclose(f);
        LLVMFuzzerTestOneInput(buf, n);
    }
    printf("%d inputs replayed\n", argc - first);
    return 0;
}
#endif
