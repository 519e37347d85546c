/*
 * plot — gnuplot figures from output directories. See plot.h.
 */
#define _POSIX_C_SOURCE 200809L

#include "plot.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "scenario.h"

extern const struct scenario_builtin plot_scripts[];

static const char *script(const char *name)
{
    for (const struct scenario_builtin *b = plot_scripts; b->name; b++)
        if (strcmp(b->name, name) == 0)
            return b->text;
    return NULL;
}

bool plot_available(void)
{
    return system("command -v gnuplot > /dev/null 2>&1") == 0;
}

static bool exists(const char *dir, const char *file)
{
    char p[4096];
    snprintf(p, sizeof p, "%s/%s", dir, file);
    return access(p, R_OK) == 0;
}

/* Appends to list (space-separated) the distinct values of column `col` of
 * DIR/file, in order of appearance; false if the file or column is absent.
 * Values are made safe for gnuplot's word(): spaces become '_'. */
static bool distinct(const char *dir, const char *file, const char *col, char *list, size_t size)
{
    char p[4096], line[65536];
    snprintf(p, sizeof p, "%s/%s", dir, file);
    FILE *f = fopen(p, "r");
    list[0] = '\0';
    if (f == NULL)
        return false;
    int idx = -1;
    if (fgets(line, sizeof line, f) != NULL) {
        line[strcspn(line, "\r\n")] = '\0';
        int i = 0;
        for (char *tok = line, *next; tok != NULL; tok = next, i++) {
            next = strchr(tok, ',');
            if (next)
                *next++ = '\0';
            if (strcmp(tok, col) == 0)
                idx = i;
        }
    }
    while (idx >= 0 && fgets(line, sizeof line, f) != NULL) {
        line[strcspn(line, "\r\n")] = '\0';
        char *tok = line;
        for (int i = 0; i < idx && tok; i++) {
            tok = strchr(tok, ',');
            if (tok)
                tok++;
        }
        if (tok == NULL)
            continue;
        size_t n = strcspn(tok, ",");
        char v[256];
        snprintf(v, sizeof v, "%.*s", (int)(n < 255 ? n : 255), tok);
        for (char *c = v; *c; c++)
            if (*c == ' ' || *c == '\'')
                *c = '_';
        /* already listed? */
        bool seen = false;
        for (char *w = list; *w && !seen;) {
            size_t wl = strcspn(w, " ");
            seen = wl == strlen(v) && strncmp(w, v, wl) == 0;
            w += wl + (w[wl] == ' ');
        }
        if (!seen && v[0] && strlen(list) + strlen(v) + 2 < size) {
            if (list[0])
                strcat(list, " ");
            strcat(list, v);
        }
    }
    fclose(f);
    return idx >= 0;
}

/* gnuplot commands shading and labelling each phase of DIR/scenario.ini. */
static void phases_of(const char *dir, char *out, size_t size, char *title, size_t tsize)
{
    char p[4096];
    snprintf(p, sizeof p, "%s/scenario.ini", dir);
    out[0] = '\0';
    struct scenario sc;
    struct scenario_diag d = {0};
    if (access(p, R_OK) != 0 || scenario_load(&sc, p, NULL, 0, &d) != 0) {
        scenario_diag_fini(&d);
        return;
    }
    scenario_diag_fini(&d);
    snprintf(title, tsize, "%s", sc.name);
    size_t used = 0;
    for (unsigned i = 0; i < sc.nphases && used < size; i++) {
        double a = units_seconds(sc.phases[i].start), b = units_seconds(sc.phases[i].end);
        if (b > units_seconds(sc.duration))
            b = units_seconds(sc.duration);
        int w = snprintf(out + used, size - used,
                         "set object %u rect from %g, graph 0 to %g, graph 1 behind fc rgb '#E8E8E8' "
                         "fs solid 1.0 noborder; set label %u '%s' at %g, graph 0.97 center "
                         "front textcolor rgb '#555555'; ",
                         i + 1, a, b, i + 1, sc.phases[i].name, (a + b) / 2);
        if (w < 0)
            break;
        used += (size_t)w;
    }
}

static int shell_quote(const char *s, char *out, size_t size)
{
    size_t n = 0;
    if (size < 3)
        return -1;
    out[n++] = '\'';
    for (; *s; s++) {
        if (*s == '\'') {
            if (n + 5 >= size)
                return -1;
            memcpy(out + n, "'\\''", 4);
            n += 4;
        } else {
            if (n + 2 >= size)
                return -1;
            out[n++] = *s;
        }
    }
    out[n++] = '\'';
    out[n] = '\0';
    return 0;
}

/* Runs one script for one format with the given variable definitions.
 * Returns 0, or -1 with gnuplot's first error line in err. */
static int draw_as(const char *dir, const char *script_name, const char *name, const char *term,
                   const char *vars, const char *extra, char *err, size_t errsz);

static int draw(const char *dir, const char *name, const char *term, const char *vars,
                const char *extra, char *err, size_t errsz)
{
    return draw_as(dir, name, name, term, vars, extra, err, errsz);
}

/* Runs script `script_name` for one format, writing DIR/<name>.<term>. */
static int draw_as(const char *dir, const char *script_name, const char *name, const char *term,
                   const char *vars, const char *extra, char *err, size_t errsz)
{
    char final[4096], tmp[4096], errfile[4096], q[8192], cmd[8300];
    snprintf(final, sizeof final, "%s/%s.%s", dir, name, term);
    snprintf(tmp, sizeof tmp, "%s/.%s.%s.tmp", dir, name, term);
    snprintf(errfile, sizeof errfile, "%s/.gnuplot-errors.tmp", dir);
    if (shell_quote(errfile, q, sizeof q) != 0) {
        snprintf(err, errsz, "directory name too long: %s", dir);
        return -1;
    }
    snprintf(cmd, sizeof cmd, "gnuplot 2> %s", q);
    FILE *g = popen(cmd, "w");
    if (g == NULL) {
        snprintf(err, errsz, "cannot run gnuplot: %s", strerror(errno));
        return -1;
    }
    fprintf(g, "out = '%s'\nterm = '%s'\n%s%s\n%s\n", tmp, term, vars, extra, script(script_name));
    int st = pclose(g);
    FILE *ef = fopen(errfile, "r");
    char line[512] = "";
    if (ef != NULL) {
        /* the first line that says what went wrong */
        while (fgets(line, sizeof line, ef) != NULL)
            if (strstr(line, "rror") != NULL || strstr(line, "line ") != NULL)
                break;
        fclose(ef);
    }
    unlink(errfile);
    if (st != 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
        line[strcspn(line, "\n")] = '\0';
        snprintf(err, errsz, "gnuplot failed on %s.%s: %s", name, term, line);
        unlink(tmp);
        return -1;
    }
    if (rename(tmp, final) != 0) {
        snprintf(err, errsz, "cannot rename %s: %s", tmp, strerror(errno));
        return -1;
    }
    return 0;
}

/* A sweep: ok share, amplification and p99 latency over its first one or
 * two keys (a line with error bars, or a heat map). */
static int plot_sweep(const char *dir, const char *vars, char *err, size_t errsz)
{
    char path[4200], line[8192], keys[2][128] = {"", ""}, xs[4000], ys[4000], extra[8600];
    snprintf(path, sizeof path, "%s/experiment.csv", dir);
    FILE *f = fopen(path, "r");
    size_t nk = 0;
    while (f && fgets(line, sizeof line, f))
        if (!strncmp(line, "key,", 4)) {
            line[strcspn(line, "\r\n")] = '\0';
            if (nk < 2)
                snprintf(keys[nk], sizeof keys[0], "%.127s", line + 4);
            nk++;
        }
    if (f)
        fclose(f);
    if (nk == 0 || nk > 2) {
        snprintf(err, errsz, "%s: a sweep over %zu keys; figures are drawn for one or two", dir, nk);
        return -1;
    }
    distinct(dir, "sweep.csv", keys[0], xs, sizeof xs);
    ys[0] = '\0';
    if (nk == 2)
        distinct(dir, "sweep.csv", keys[1], ys, sizeof ys);
    static const char *const metrics[] = {"ok_share", "amplification", "lat_p99"};
    static const char *const terms[] = {"png", "svg"};
    int written = 0;
    for (int i = 0; i < 3; i++) {
        char name[64];
        snprintf(name, sizeof name, "sweep_%s", metrics[i]);
        snprintf(extra, sizeof extra, "metric = '%s'\nkey1 = '%s'\nkey2 = '%s'\nxs = '%s'\nys = '%s'",
                 metrics[i], keys[0], nk == 2 ? keys[1] : "", xs, ys);
        for (int t = 0; t < 2; t++) {
            if (draw_as(dir, "sweep", name, terms[t], vars, extra, err, errsz) != 0)
                return -1;
            written++;
        }
    }
    return written;
}

int plot_dir(const char *dir, volatile sig_atomic_t *stop, char *err, size_t errsz)
{
    (void)stop; /* not yet used */
    static const char *const terms[] = {"png", "svg"};
    char phases[8192], title[256] = "", list[8192], xs[8192], vars[16384];
    phases_of(dir, phases, sizeof phases, title, sizeof title);
    if (title[0] == '\0')
        snprintf(title, sizeof title, "%s", dir);
    for (char *c = title; *c; c++)
        if (*c == '\'')
            *c = '_';
    struct {
        const char *name;
        char extra[8300];
    } figs[8];
    int n = 0;
    snprintf(vars, sizeof vars, "dir = '%s'\ntitle = '%s'\nphases = \"%s\"\n", dir, title, phases);
    if (exists(dir, "sweep.csv") && exists(dir, "experiment.csv"))
        return plot_sweep(dir, vars, err, errsz);
    if (distinct(dir, "timeseries.csv", "variant", list, sizeof list)) {
        size_t words = 1;
        for (const char *p = list; *p; p++)
            words += *p == ' ';
        if (distinct(dir, "summary.csv", "load.clients", xs, sizeof xs) &&
            distinct(dir, "summary.csv", "layer.app.backoff", list, sizeof list)) {
            /* the AWS study: figures against the number of clients */
            figs[n].name = "occ";
            snprintf(figs[n++].extra, sizeof figs[0].extra, "lines = '%s'", list);
        } else if (words <= 12) {
            figs[n].name = "compare";
            snprintf(figs[n++].extra, sizeof figs[0].extra, "variants = '%s'", list);
        } else {
            snprintf(err, errsz, "%s: %zu variants are too many lines for one figure (at most 12)",
                     dir, words);
            return -1;
        }
    } else if (exists(dir, "timeseries.csv")) {
        const char *ts[] = {"load", "queue", "latency"};
        for (int i = 0; i < 3; i++) {
            figs[n].name = ts[i];
            figs[n++].extra[0] = '\0';
        }
        if (distinct(dir, "latency.csv", "outcome", list, sizeof list) && list[0]) {
            figs[n].name = "cdf";
            snprintf(figs[n++].extra, sizeof figs[0].extra, "outcomes = '%s'", list);
        }
        if (distinct(dir, "attempts.csv", "level", list, sizeof list) && list[0]) {
            figs[n].name = "attempts";
            snprintf(figs[n++].extra, sizeof figs[0].extra, "levels = '%s'", list);
        }
    }
    if (n == 0) {
        snprintf(err, errsz, "%s holds no retrystorm output to plot (no timeseries.csv)", dir);
        return -1;
    }
    int written = 0;
    for (int i = 0; i < n; i++)
        for (int t = 0; t < 2; t++) {
            if (draw(dir, figs[i].name, terms[t], vars, figs[i].extra, err, errsz) != 0)
                return -1;
            written++;
        }
    return written;
}
