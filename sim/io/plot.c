/*
 * plot — gnuplot figures from output directories. See plot.h.
 *
 * Order of work: open DIR (a directory descriptor everything else is
 * relative to); read and check every file a figure needs, building the
 * script's data (gnuplot variables and arrays of quoted strings); then,
 * per figure and format, create the temporary, run gnuplot on the script
 * and rename the temporary into place. Nothing is written before every
 * input has been read and accepted.
 */
#define _GNU_SOURCE /* pipe2, SOCK_CLOEXEC */

#include "plot.h"

#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <poll.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "outdir.h"
#include "plotdec.h"
#include "scenario.h"

extern const struct scenario_builtin plot_scripts[];

#define LINE_BYTES ((size_t)1 << 20) /* the longest line a CSV may have */
#define INI_BYTES ((size_t)1 << 20)  /* the largest scenario.ini */
#define STDERR_KEEP 4096             /* bytes of gnuplot's stderr kept for the message */
#define POLL_MS 50                   /* how often a wait looks at *stop */
#define COMPARE_LINES 12             /* most variants one comparison figure shows */

static const char *const terms[] = {"png", "svg", "gif"}; /* gif: --animate only */

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

/* ---- the escaping function and the script buffer ---- */

static bool is_control(unsigned char c) { return c < 0x20 || c == 0x7f; }

/* Closes the literal, adds a quote, opens the next literal. */
#define QUOTE_EXPR "'.sprintf('%c',39).'"
_Static_assert(sizeof QUOTE_EXPR - 1 == 20, "PLOT_QUOTED_SIZE assumes 20 bytes per quote");

int plot_quote(const char *s, char *out, size_t size)
{
    size_t n = 0;
    if (size < 3)
        return -1;
    out[n++] = '\'';
    for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
        size_t k = *c == '\'' ? sizeof QUOTE_EXPR - 1 : 1;
        if (is_control(*c) || n + k + 2 > size || n + k + 2 > INT_MAX)
            return -1;
        if (*c == '\'')
            memcpy(out + n, QUOTE_EXPR, k);
        else
            out[n] = (char)*c;
        n += k;
    }
    out[n++] = '\'';
    out[n] = '\0';
    return (int)n;
}

/* A growing string (a script); running out of memory aborts. */
struct sbuf {
    char *p;
    size_t n, cap;
};

static void sb_reserve(struct sbuf *b, size_t more)
{
    if (b->n + more < b->cap)
        return;
    size_t cap = b->cap ? b->cap : 4096;
    while (cap <= b->n + more) {
        if (cap > SIZE_MAX / 2)
            abort();
        cap *= 2;
    }
    char *p = realloc(b->p, cap);
    if (p == NULL) {
        fprintf(stderr, "retrystorm: out of memory (%zu bytes for a gnuplot script)\n", cap);
        abort();
    }
    b->p = p;
    b->cap = cap;
}

static void sb_printf(struct sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void sb_printf(struct sbuf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int w = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (w <= 0)
        return;
    sb_reserve(b, (size_t)w);
    va_start(ap, fmt);
    vsnprintf(b->p + b->n, b->cap - b->n, fmt, ap);
    va_end(ap);
    b->n += (size_t)w;
}

/* Appends s as a gnuplot string literal; -1 (nothing appended) when s
 * holds a control character. */
static int sb_quote(struct sbuf *b, const char *s)
{
    sb_reserve(b, PLOT_QUOTED_SIZE(strlen(s)));
    int w = plot_quote(s, b->p + b->n, b->cap - b->n);
    if (w < 0) {
        b->p[b->n] = '\0';
        return -1;
    }
    b->n += (size_t)w;
    return 0;
}

/* name = 'value' on a line of its own. */
static int sb_var(struct sbuf *b, const char *name, const char *value)
{
    sb_printf(b, "%s = ", name);
    int rc = sb_quote(b, value);
    sb_printf(b, "\n");
    return rc;
}

/* ---- lists of distinct values ---- */

struct list {
    char **v;
    size_t n;
};

static void list_fini(struct list *l)
{
    for (size_t i = 0; i < l->n; i++)
        free(l->v[i]);
    free(l->v);
    *l = (struct list){0};
}

static bool list_has(const struct list *l, const char *v, size_t len)
{
    for (size_t i = l->n; i-- > 0;) /* the latest first: rows come grouped */
        if (strlen(l->v[i]) == len && memcmp(l->v[i], v, len) == 0)
            return true;
    return false;
}

static void list_add(struct list *l, const char *v, size_t len)
{
    char **grown = realloc(l->v, (l->n + 1) * sizeof *grown);
    char *copy = malloc(len + 1);
    if (grown == NULL || copy == NULL) {
        fprintf(stderr, "retrystorm: out of memory (a list of %zu values)\n", l->n + 1);
        abort();
    }
    memcpy(copy, v, len);
    copy[len] = '\0';
    l->v = grown;
    l->v[l->n++] = copy;
}

/* array name[n] = ['v1', 'v2', ...]; a one-element [''] when l is empty
 * (gnuplot has no empty arrays). */
static int sb_array(struct sbuf *b, const char *name, const struct list *l)
{
    int rc = 0;
    sb_printf(b, "array %s[%zu] = [", name, l->n ? l->n : 1);
    if (l->n == 0)
        sb_printf(b, "''");
    for (size_t i = 0; i < l->n && rc == 0; i++) {
        sb_printf(b, "%s", i ? ", " : "");
        rc = sb_quote(b, l->v[i]);
    }
    sb_printf(b, "]\n");
    return rc;
}

/* ---- the look: options, resolved into the variables every script starts with ---- */

/* "WxH" in pixels within the bounds; false otherwise. */
static bool parse_size(const char *v, unsigned *w, unsigned *h)
{
    char *end;
    if (v[0] < '0' || v[0] > '9')
        return false;
    unsigned long a = strtoul(v, &end, 10);
    if (*end != 'x' || end[1] < '0' || end[1] > '9')
        return false;
    unsigned long b = strtoul(end + 1, &end, 10);
    if (*end != '\0' || a < PLOT_WIDTH_MIN || a > PLOT_WIDTH_MAX || b < PLOT_HEIGHT_MIN ||
        b > PLOT_HEIGHT_MAX)
        return false;
    *w = (unsigned)a, *h = (unsigned)b;
    return true;
}

/* A title: at most PLOT_TITLE_MAX bytes, no control character but '\n'.
 * 0, or PLOT_BAD_INPUT with a message. */
static int check_title(const char *v, char *err, size_t errsz)
{
    if (strlen(v) > PLOT_TITLE_MAX) {
        snprintf(err, errsz, "--title: %zu bytes; a title has at most %d", strlen(v), PLOT_TITLE_MAX);
        return PLOT_BAD_INPUT;
    }
    for (const unsigned char *c = (const unsigned char *)v; *c; c++)
        if (*c != '\n' && (*c < 0x20 || *c == 0x7f)) {
            snprintf(err, errsz, "--title: a control character (byte %d); a title may hold any "
                                 "other text, and newlines to break its line", *c);
            return PLOT_BAD_INPUT;
        }
    return 0;
}

static int take_style_value(struct plot_style *st, const char *option, const char *v, char *err,
                            size_t errsz)
{
    char *end;
    if (strcmp(option, "--title") == 0) {
        if (check_title(v, err, errsz) != 0)
            return PLOT_BAD_INPUT;
        snprintf(st->title, sizeof st->title, "%s", v);
    } else if (strcmp(option, "--size") == 0) {
        if (!parse_size(v, &st->width, &st->height)) {
            snprintf(err, errsz, "--size %.40s: expected WIDTHxHEIGHT in pixels, width %d to %d and "
                                 "height %d to %d (e.g. --size 1920x1080)", v, PLOT_WIDTH_MIN,
                     PLOT_WIDTH_MAX, PLOT_HEIGHT_MIN, PLOT_HEIGHT_MAX);
            return PLOT_BAD_INPUT;
        }
    } else if (strcmp(option, "--font-scale") == 0) {
        double f = strtod(v, &end);
        if (end == v || *end != '\0' || strspn(v, "0123456789.") != strlen(v) ||
            !(f >= PLOT_FONT_SCALE_MIN && f <= PLOT_FONT_SCALE_MAX)) {
            snprintf(err, errsz, "--font-scale %.40s: expected a number from %g to %g (1: 12-point type)",
                     v, PLOT_FONT_SCALE_MIN, PLOT_FONT_SCALE_MAX);
            return PLOT_BAD_INPUT;
        }
        st->font_scale = f;
    } else if (strcmp(v, "slide") == 0 || strcmp(v, "default") == 0) { /* --style */
        st->slide = strcmp(v, "slide") == 0;
    } else {
        static const char *const styles[] = {"slide", "default", NULL};
        char s[64];
        scenario_suggest(v, styles, s, sizeof s);
        snprintf(err, errsz, "--style %.40s: expected slide (1920x1080, large type, thick lines) or default%s%s", v,
                 s[0] ? "; " : "", s);
        return PLOT_BAD_INPUT;
    }
    return 1;
}

int plot_style_option(struct plot_style *st, const char *option, const char *value, char *err,
                      size_t errsz)
{
    static const char *const valued[] = {"--title", "--size", "--font-scale", "--style"};
    if (strcmp(option, "--animate") == 0) {
        st->animate = true;
        return 0;
    }
    if (strcmp(option, "--label") == 0) { /* checked against the variants when drawing */
        if (value == NULL || st->nlabels == LABELS_MAX) {
            snprintf(err, errsz, value ? "--label: at most %d" : "--label needs a value (VARIANT=TEXT)", LABELS_MAX);
            return PLOT_BAD_INPUT;
        }
        st->labels[st->nlabels++] = value;
        return 1;
    }
    for (size_t i = 0; i < sizeof valued / sizeof *valued; i++) {
        if (strcmp(option, valued[i]) != 0)
            continue;
        if (value == NULL) {
            snprintf(err, errsz, "%s needs a value", option);
            return PLOT_BAD_INPUT;
        }
        return take_style_value(st, option, value, err, errsz);
    }
    return -1;
}

/* Slide style: Okabe-Ito in an order for contrast on a projector (black,
 * vermillion, blue, green, purple first; yellow last). */
#define SLIDE_PALETTE "#000000 #D55E00 #0072B2 #009E73 #CC79A7 #E69F00 #56B4E9 #999999 #F0E442"

/* title = the text as a gnuplot string expression, a newline as
 * sprintf('%c',10) between quoted runs; -1 when a run holds a control
 * character. */
static int sb_title(struct sbuf *b, const char *title)
{
    int rc = 0;
    bool any = false;
    sb_printf(b, "title = ");
    for (const char *p = title; rc == 0;) {
        size_t len = strcspn(p, "\n");
        if (len > 0) {
            char piece[PLOT_TITLE_MAX + 1];
            snprintf(piece, sizeof piece, "%.*s", (int)(len < PLOT_TITLE_MAX ? len : PLOT_TITLE_MAX), p);
            sb_printf(b, "%s", any ? "." : "");
            rc = sb_quote(b, piece);
            any = true;
        }
        if (p[len] == '\0')
            break;
        sb_printf(b, "%ssprintf('%%c',10)", any ? "." : "");
        any = true;
        p += len + 1;
    }
    sb_printf(b, "%s\n", any ? "" : "''");
    return rc;
}

/* The look's variables: fig_width(x) and fig_height(y) (a figure's size,
 * x and y its own), font_scale, line_scale, style_palette ('': the
 * script's own) and slide (1 for --style slide: legends under the plot,
 * not in a column beside it). */
static void put_style(struct sbuf *b, const struct plot_style *st)
{
    unsigned w = st->width, h = st->height;
    double fs = st->font_scale;
    if (st->slide && w == 0)
        w = 1920, h = 1080;
    if (fs == 0)
        fs = st->slide ? 1.75 : 1.0;
    sb_printf(b, "fig_w = %u\nfig_h = %u\nfig_width(x) = fig_w > 0 ? fig_w : x\n"
                 "fig_height(y) = fig_h > 0 ? fig_h : y\nfont_scale = %.4g\nline_scale = %g\n"
                 "style_palette = '%s'\nslide = %d\n", w, h, fs, st->slide ? 2.0 : 1.0,
              st->slide ? SLIDE_PALETTE : "", st->slide ? 1 : 0);
}

/* ---- the context and its errors ---- */

struct ctx {
    int dfd;                      /* DIR, which every name is relative to */
    const struct plot_style *style;
    int gif_frames;               /* frames of an animated GIF */
    const char *dir;              /* for messages only */
    volatile sig_atomic_t *stop;  /* NULL: never stop */
    struct sbuf vars;             /* title and phases: the start of every script */
    double bucket_s;              /* the run's bucket (1 s without a scenario) */
    char *err;
    size_t errsz;
    int written;
    plot_drawn_fn *drawn;         /* NULL: nobody asks for the names */
    void *drawn_user;
};

static bool stopped(const struct ctx *c) { return c->stop != NULL && *c->stop != 0; }

/* Replaces control characters (which a terminal would act on) with '?'. */
static void printable(char *s)
{
    for (; *s; s++)
        if (is_control((unsigned char)*s))
            *s = '?';
}

/* Formats the message into err (control characters, which may come from a
 * file or from gnuplot, made printable) and returns code. */
static int fail(struct ctx *c, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(struct ctx *c, int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->err, c->errsz, fmt, ap);
    va_end(ap);
    printable(c->err);
    return code;
}

/* ---- readers: every file of DIR is hostile ---- */

struct table {
    FILE *f;
    const char *name;
    size_t lineno, ncols; /* the line last read; the header's columns */
    char *line;           /* LINE_BYTES + 1 bytes */
};

/* Opens DIR/name for reading: 0, 1 when it does not exist, or a PLOT_ code.
 * Only a regular file is read: a FIFO would block, a device never end, and
 * a symbolic link could make us (and gnuplot, which reads the same names)
 * draw a file from outside DIR into a figure inside it. */
static int open_in(struct ctx *c, const char *name, FILE **f)
{
    int fd = openat(c->dfd, name, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY | O_NOFOLLOW);
    if (fd < 0 && errno == ELOOP)
        return fail(c, PLOT_BAD_INPUT, "%s/%s is a symbolic link: refused", c->dir, name);
    if (fd < 0)
        return errno == ENOENT ? 1 : fail(c, PLOT_FAILED, "%s/%s: %s", c->dir, name, strerror(errno));
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return fail(c, PLOT_BAD_INPUT, "%s/%s is not a regular file", c->dir, name);
    }
    *f = fdopen(fd, "r");
    if (*f == NULL) {
        close(fd);
        return fail(c, PLOT_FAILED, "%s/%s: %s", c->dir, name, strerror(errno));
    }
    return 0;
}

static int table_open(struct ctx *c, struct table *r, const char *name)
{
    *r = (struct table){.name = name};
    int rc = open_in(c, name, &r->f);
    if (rc != 0)
        return rc;
    r->line = malloc(LINE_BYTES + 1);
    if (r->line == NULL) {
        fprintf(stderr, "retrystorm: out of memory (%zu bytes for a line)\n", LINE_BYTES + 1);
        abort();
    }
    return 0;
}

static void table_close(struct table *r)
{
    if (r->f != NULL)
        fclose(r->f);
    free(r->line);
}

/* A message naming DIR/FILE:LINE; returns PLOT_BAD_INPUT. */
static int bad(struct ctx *c, const struct table *r, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int bad(struct ctx *c, const struct table *r, const char *fmt, ...)
{
    char what[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    return fail(c, PLOT_BAD_INPUT, "%s/%s:%zu: %s", c->dir, r->name, r->lineno, what);
}

/* Reads the next line into r->line without its end ("\n" or "\r\n").
 * Returns 1, 0 at the end of the file, or a PLOT_ code. */
static int table_next(struct ctx *c, struct table *r)
{
    size_t n = 0;
    int ch;
    while ((ch = getc_unlocked(r->f)) != EOF && ch != '\n') {
        if (n == LINE_BYTES) {
            r->lineno++;
            return bad(c, r, "a line longer than %zu bytes", LINE_BYTES);
        }
        r->line[n++] = (char)ch;
    }
    if (ferror(r->f))
        return fail(c, PLOT_FAILED, "%s/%s: %s", c->dir, r->name, strerror(errno));
    if (ch == EOF && n == 0)
        return 0;
    r->lineno++;
    if (n > 0 && r->line[n - 1] == '\r')
        n--;
    r->line[n] = '\0';
    if (strlen(r->line) != n)
        return bad(c, r, "a NUL byte");
    return 1;
}

static size_t count_fields(const char *line)
{
    size_t n = 1;
    for (; *line; line++)
        n += *line == ',';
    return n;
}

/* The idx-th (from 0) comma-separated field of line; false when the line
 * has fewer fields, and then *start and *len are an empty field (callers
 * that checked the row's width already may ignore the result). */
static bool field(const char *line, size_t idx, const char **start, size_t *len)
{
    *start = "";
    *len = 0;
    for (size_t i = 0; i < idx; i++) {
        line = strchr(line, ',');
        if (line == NULL)
            return false;
        line++;
    }
    *start = line;
    *len = strcspn(line, ",");
    return true;
}

/* Where column col is in the header line; false when it is not there. */
static bool column_index(const char *header, const char *col, size_t *idx)
{
    size_t n = count_fields(header), len = strlen(col), flen;
    const char *f;
    for (size_t i = 0; i < n; i++)
        if (field(header, i, &f, &flen) && flen == len && memcmp(f, col, len) == 0) {
            *idx = i;
            return true;
        }
    return false;
}

/* A value checked: not too long, no control character. 0 or PLOT_BAD_INPUT. */
static int check_value(struct ctx *c, const struct table *r, const char *col, const char *v, size_t len)
{
    if (len > PLOT_VALUE_MAX)
        return bad(c, r, "a value of %zu bytes in column %s (at most %d)", len, col, PLOT_VALUE_MAX);
    for (size_t i = 0; i < len; i++)
        if (is_control((unsigned char)v[i]))
            return bad(c, r, "a control character (byte %d) in column %s", v[i], col);
    return 0;
}

/* Adds the value of column idx (named col) of the current row to l. */
static int take_value(struct ctx *c, const struct table *r, const char *col, size_t idx, struct list *l)
{
    const char *v;
    size_t len;
    if (r->line[0] == '\0')
        return 0; /* a blank line */
    if (!field(r->line, idx, &v, &len))
        return bad(c, r, "%zu columns, but the header has %zu (column %s is number %zu)",
                   count_fields(r->line), r->ncols, col, idx + 1);
    int rc = check_value(c, r, col, v, len);
    if (rc != 0 || len == 0 || list_has(l, v, len))
        return rc;
    if (l->n == PLOT_LIST_MAX)
        return bad(c, r, "more than %d distinct values in column %s", PLOT_LIST_MAX, col);
    list_add(l, v, len);
    return 0;
}

/* Reads into l the distinct non-empty values of column col of DIR/name, in
 * order of appearance. Returns 0; 1 when the file, or the column, is
 * absent; or a PLOT_ code. O(rows × distinct values) at worst. */
static int column_values(struct ctx *c, const char *name, const char *col, struct list *l)
{
    struct table r;
    int rc = table_open(c, &r, name);
    size_t idx = 0;
    if (rc == 0) {
        rc = table_next(c, &r); /* the header; an empty file has no columns */
        if (rc == 1)
            r.ncols = count_fields(r.line);
        rc = rc == 1 ? (column_index(r.line, col, &idx) ? 0 : 1) : rc == 0 ? 1 : rc;
    }
    while (rc == 0 && (rc = table_next(c, &r)) == 1)
        rc = take_value(c, &r, col, idx, l);
    table_close(&r);
    return rc;
}

/* Whether DIR holds an entry `name` (of any type: the reader refuses what
 * is not a regular file, with a message). */
static bool exists(struct ctx *c, const char *name)
{
    struct stat st;
    return fstatat(c->dfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0;
}

/* Reads DIR/name whole into *text (NUL-terminated; the caller frees).
 * Returns 0, 1 when it does not exist, or a PLOT_ code. */
static int read_small(struct ctx *c, const char *name, char **text)
{
    FILE *f = NULL;
    int rc = open_in(c, name, &f);
    if (rc != 0)
        return rc;
    char *t = malloc(INI_BYTES + 1);
    if (t == NULL)
        abort();
    size_t n = fread(t, 1, INI_BYTES + 1, f);
    if (ferror(f))
        rc = fail(c, PLOT_FAILED, "%s/%s: %s", c->dir, name, strerror(errno));
    else if (n > INI_BYTES)
        rc = fail(c, PLOT_BAD_INPUT, "%s/%s: larger than %zu bytes", c->dir, name, INI_BYTES);
    else if (memchr(t, '\0', n) != NULL)
        rc = fail(c, PLOT_BAD_INPUT, "%s/%s: a NUL byte", c->dir, name);
    fclose(f);
    if (rc != 0) {
        free(t);
        return rc;
    }
    t[n] = '\0';
    *text = t;
    return 0;
}

/* The phases of sc as gnuplot arrays (phase_from, phase_to in seconds,
 * clipped to the run; phase_name) and their count nphases; sc NULL: none. */
static int put_phases(struct sbuf *b, const struct scenario *sc)
{
    unsigned n = sc ? sc->nphases : 0;
    struct sbuf from = {0}, to = {0};
    struct list names = {0};
    for (unsigned i = 0; i < n; i++) {
        double a = units_seconds(sc->phases[i].start), e = units_seconds(sc->phases[i].end);
        double end = units_seconds(sc->duration);
        sb_printf(&from, "%s%.9g", i ? ", " : "", a);
        sb_printf(&to, "%s%.9g", i ? ", " : "", e < end ? e : end);
        list_add(&names, sc->phases[i].name, strlen(sc->phases[i].name));
    }
    sb_printf(b, "nphases = %u\narray phase_from[%u] = [%s]\narray phase_to[%u] = [%s]\n", n,
              n ? n : 1, n ? from.p : "0", n ? n : 1, n ? to.p : "0");
    int rc = sb_array(b, "phase_name", &names);
    free(from.p);
    free(to.p);
    list_fini(&names);
    return rc;
}

/* The last component of path (trailing slashes ignored), truncated to size. */
static void last_component(const char *path, char *out, size_t size)
{
    size_t end = strlen(path);
    while (end > 1 && path[end - 1] == '/')
        end--;
    size_t start = end;
    while (start > 0 && path[start - 1] != '/')
        start--;
    size_t n = end - start < size - 1 ? end - start : size - 1;
    memcpy(out, path + start, n);
    out[n] = '\0';
}

#define SMOOTH_S 1.0     /* the rolling window of fine-bucket series, s */
#define SMOOTH_MAX 1000  /* the most buckets in one window */

/* The rolling mean, in gnuplot, for the scripts that smooth a series:
 * `using (roll(i, column('t'), x)):(rs_mean)` takes series i's next
 * bucket (at t, value x), returns t and leaves the mean of the last
 * smooth_n buckets in rs_mean (a trailing window: on a slide nothing
 * rises before it happens, as a centred one would show; gnuplot
 * evaluates a using spec's columns in order); another i, or a t not after
 * the last, starts a new window. smooth_n 1 gives x itself, exactly. */
#define ROLL                                                                                      \
    "array ring[smooth_n]\n"                                                                      \
    "rs_i = -1; rs_t = 0; rs_n = 0; rs_sum = 0; rs_pos = 0; rs_mean = 0\n"                        \
    "roll(i, t, x) = (i != rs_i || t <= rs_t ? (rs_n = 0, rs_sum = 0, rs_pos = 0) : 0, "           \
    "rs_i = i, rs_t = t, "                                                                        \
    "rs_n < smooth_n ? (rs_n = rs_n + 1) : (rs_sum = rs_sum - ring[rs_pos + 1]), "               \
    "ring[rs_pos + 1] = x, rs_sum = rs_sum + x, rs_pos = (rs_pos + 1) % smooth_n, "               \
    "rs_mean = rs_sum > 0 ? rs_sum / rs_n : 0, t)\n"

/* bucket_s (the run's bucket, s), dec (g, the buckets of a decimated
 * run; 1: not decimated) and the rolling window of per-second series at
 * fine buckets: smooth_n rows, about SMOOTH_S (1: rows half of it apart
 * or more are drawn as they are), smooth_s seconds; and ROLL. A decimated
 * series has two rows a run, each with the run's means: a row every g / 2
 * buckets. */
static void put_smoothing(struct sbuf *b, double bucket, size_t g)
{
    double row = g > 1 ? bucket * (double)g / 2 : bucket;
    long n = 1;
    if (row > 0 && row < SMOOTH_S / 2)
        n = lround(SMOOTH_S / row);
    if (n > SMOOTH_MAX)
        n = SMOOTH_MAX;
    sb_printf(b, "bucket_s = %.9g\ndec = %zu\nsmooth_n = %ld\nsmooth_s = %.9g\n%s", bucket, g, n,
              (double)n * row, ROLL);
}

/* The variables every script starts with: title (the scenario's name, or
 * DIR's last component), the look, the smoothing and the phases, from
 * DIR/scenario.ini when there is one. 0 or a PLOT_ code. */
static int common_vars(struct ctx *c)
{
    char *text = NULL, title[256];
    int rc = read_small(c, "scenario.ini", &text);
    if (rc < 0)
        return rc;
    struct scenario *sc = NULL;
    if (rc == 0) {
        char source[PATH_MAX + 16];
        snprintf(source, sizeof source, "%s/scenario.ini", c->dir);
        struct scenario_diag d = {0};
        sc = calloc(1, sizeof *sc);
        if (sc == NULL)
            abort();
        if (scenario_load_text(sc, text, source, NULL, 0, &d) != 0)
            rc = fail(c, PLOT_BAD_INPUT, "%s", d.n ? d.msg[0] : source);
        scenario_diag_fini(&d);
        free(text);
    }
    if (rc >= 0) {
        if (sc != NULL)
            snprintf(title, sizeof title, "%s", sc->name);
        else
            last_component(c->dir, title, sizeof title);
        printable(title);
        put_style(&c->vars, c->style);
        c->bucket_s = sc ? units_seconds(sc->bucket) : 1.0;
        sb_printf(&c->vars, "title_given = %d\n", c->style->title[0] != '\0'); /* --title: the whole title */
        rc = (c->style->title[0] ? sb_title(&c->vars, c->style->title) : sb_var(&c->vars, "title", title)) == 0 &&
                     put_phases(&c->vars, sc) == 0
                 ? 0
                 : fail(c, PLOT_BAD_INPUT, "%s/scenario.ini: a control character in a name", c->dir);
    }
    free(sc);
    return rc;
}

/* The keys of a sweep (the lines "key,NAME" or "key,NAME,LABEL" of
 * DIR/experiment.csv): the first two in keys, how many in *nk. 0 or a
 * PLOT_ code. */
static int sweep_keys(struct ctx *c, char keys[2][PLOT_VALUE_MAX + 1], size_t *nk)
{
    struct table r;
    int rc = table_open(c, &r, "experiment.csv");
    *nk = 0;
    if (rc == 1)
        rc = fail(c, PLOT_BAD_INPUT, "%s/experiment.csv: missing", c->dir);
    while (rc == 0 && (rc = table_next(c, &r)) == 1) {
        rc = 0;
        if (strncmp(r.line, "key,", 4) != 0)
            continue;
        size_t len = strcspn(r.line + 4, ","); /* the key, before its label */
        r.line[4 + len] = '\0';
        if (len == 0)
            rc = bad(c, &r, "an empty key");
        else if ((rc = check_value(c, &r, "2", r.line + 4, len)) == 0 && (*nk)++ < 2)
            memcpy(keys[*nk - 1], r.line + 4, len + 1);
    }
    table_close(&r);
    return rc;
}

/* ---- services.csv: one figure per service ---- */

#define SERVICES_MAX 64                /* most services drawn */
#define SERVICE_ROWS_MAX ((int)SCENARIO_MAX_SERVICE_ROWS) /* most rows of services.csv: what a run may write */
#define SERVICE_COLS_MAX 64            /* most columns of its header */
#define SERVICE_NAME_MAX 47            /* a service's name: 1 to 47 of NAME_CHARS */
#define NAME_CHARS "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-"
#define REPLICA_MAX 1000               /* the highest replica number read */
#define REPLICA_LINES 8                /* most replicas drawn in one figure */

/* The services of services.csv, in order of appearance. */
struct services {
    struct list names;
    unsigned replicas[SERVICES_MAX]; /* each one's highest replica number (0: one replica) */
    bool total[SERVICES_MAX];        /* whether it has rows of replica 0 */
};

/* The columns read: t and the numbers the script draws, then service and replica. */
static const char *const svc_numbers[] = {"t",         "arrivals", "completed", "rejected", "wasted",
                                          "queue_len", "busy",     "working",   "utilization"};
#define SVC_NUMBERS (sizeof svc_numbers / sizeof *svc_numbers)
struct svc_cols {
    size_t num[SVC_NUMBERS], service, replica;
};

/* Every field of the current line: not too long, no control character,
 * no double quote (gnuplot would read a quoted field across commas).
 * Linear in the line's length. */
static int check_fields(struct ctx *c, const struct table *r)
{
    const char *f = r->line;
    for (size_t i = 1;; i++) {
        size_t len = strcspn(f, ",");
        char col[32];
        snprintf(col, sizeof col, "%zu", i);
        int rc = check_value(c, r, col, f, len);
        if (rc == 0 && memchr(f, '"', len) != NULL)
            rc = bad(c, r, "a double quote in column %zu", i);
        if (rc != 0 || f[len] == '\0')
            return rc;
        f += len + 1;
    }
}

/* Where column col is in the header (the current line): 0, or
 * PLOT_BAD_INPUT when it is missing or there twice. */
static int one_column(struct ctx *c, const struct table *r, const char *col, size_t *idx)
{
    size_t n = 0, len = strlen(col), flen;
    const char *f;
    for (size_t i = 0; i < r->ncols; i++)
        if (field(r->line, i, &f, &flen) && flen == len && memcmp(f, col, len) == 0)
            *idx = i, n++;
    if (n == 0)
        return bad(c, r, "no column %s", col);
    return n == 1 ? 0 : bad(c, r, "column %s appears %zu times", col, n);
}

/* Opens DIR/name (services.csv or caches.csv) and reads and checks its
 * header: at most SERVICE_COLS_MAX columns, starting with t. 0, 1 when
 * there is no such file, or a PLOT_ code. */
static int figure_header(struct ctx *c, struct table *r, const char *name)
{
    int rc = table_open(c, r, name);
    if (rc != 0)
        return rc;
    if ((rc = table_next(c, r)) != 1)
        return rc == 0 ? fail(c, PLOT_BAD_INPUT, "%s/%s: empty (no header)", c->dir, name) : rc;
    r->ncols = count_fields(r->line);
    if (r->ncols > SERVICE_COLS_MAX)
        return bad(c, r, "%zu columns (at most %d)", r->ncols, SERVICE_COLS_MAX);
    if ((rc = check_fields(c, r)) != 0)
        return rc;
    if (strncmp(r->line, "t,", 2) != 0)
        return bad(c, r, "the header does not start with column t");
    return 0;
}

/* Reads and checks services.csv's header: 0, 1 when there is no
 * services.csv, or a PLOT_ code. */
static int services_header(struct ctx *c, struct table *r, struct svc_cols *k)
{
    int rc = figure_header(c, r, "services.csv");
    if (rc != 0)
        return rc;
    for (size_t i = 0; i < SVC_NUMBERS && rc == 0; i++)
        rc = one_column(c, r, svc_numbers[i], &k->num[i]);
    if (rc == 0)
        rc = one_column(c, r, "service", &k->service);
    return rc == 0 ? one_column(c, r, "replica", &k->replica) : rc;
}

/* A number as retrystorm writes it (digits, sign, point, exponent; finite,
 * not negative) in column idx (named col) of the current row; 0 or
 * PLOT_BAD_INPUT. NaN, inf and hexadecimal are refused. */
static int check_number(struct ctx *c, const struct table *r, const char *col, size_t idx, double *x)
{
    const char *v;
    size_t len;
    char buf[64], *end;
    field(r->line, idx, &v, &len);
    if (len == 0)
        return bad(c, r, "an empty value in column %s", col);
    if (len >= sizeof buf || strspn(v, "0123456789.eE+-") < len)
        return bad(c, r, "'%.*s' in column %s is not a number", (int)(len < 40 ? len : 40), v, col);
    memcpy(buf, v, len);
    buf[len] = '\0';
    *x = strtod(buf, &end);
    if (*end != '\0' || end == buf)
        return bad(c, r, "'%s' in column %s is not a number", buf, col);
    if (!isfinite(*x) || *x < 0)
        return bad(c, r, "'%s' in column %s is not a finite number of at least 0", buf, col);
    return 0;
}

/* Whether the len bytes at v may name a figure (service_NAME, cache_NAME):
 * 1 to SERVICE_NAME_MAX of NAME_CHARS (no dot, slash, quote or space). */
static bool name_ok(const char *v, size_t len)
{
    return len > 0 && len <= SERVICE_NAME_MAX && strspn(v, NAME_CHARS) >= len;
}

/* Checks the service's name (it goes into a file name and the figure)
 * and its replica number, and records them in sv. */
static int take_service(struct ctx *c, const struct table *r, const struct svc_cols *k, double rep,
                        struct services *sv)
{
    const char *v;
    size_t len, i;
    field(r->line, k->service, &v, &len);
    if (!name_ok(v, len))
        return bad(c, r, "the service name '%.*s' is not 1 to %d letters, digits, '_' or '-'",
                   (int)(len < 64 ? len : 64), v, SERVICE_NAME_MAX);
    if (rep != floor(rep) || rep > REPLICA_MAX)
        return bad(c, r, "replica %.9g is not a whole number from 0 to %d", rep, REPLICA_MAX);
    for (i = 0; i < sv->names.n; i++)
        if (strlen(sv->names.v[i]) == len && memcmp(sv->names.v[i], v, len) == 0)
            break;
    if (i == SERVICES_MAX)
        return bad(c, r, "more than %d services", SERVICES_MAX);
    if (i == sv->names.n)
        list_add(&sv->names, v, len);
    if ((unsigned)rep > sv->replicas[i])
        sv->replicas[i] = (unsigned)rep;
    sv->total[i] = sv->total[i] || rep == 0;
    return 0;
}

/* Checks one row of services.csv and records its service in sv. */
static int services_row(struct ctx *c, const struct table *r, const struct svc_cols *k,
                        struct services *sv)
{
    double x, rep;
    if (r->lineno > SERVICE_ROWS_MAX + 1)
        return bad(c, r, "more than %d rows", SERVICE_ROWS_MAX);
    if (count_fields(r->line) != r->ncols)
        return bad(c, r, "%zu columns, but the header has %zu", count_fields(r->line), r->ncols);
    int rc = check_fields(c, r);
    for (size_t i = 0; i < SVC_NUMBERS && rc == 0; i++)
        rc = check_number(c, r, svc_numbers[i], k->num[i], &x);
    if (rc == 0)
        rc = check_number(c, r, "replica", k->replica, &rep);
    return rc == 0 ? take_service(c, r, k, rep, sv) : rc;
}

/* Reads DIR/services.csv into sv, checking every row. Returns 0; 1 when
 * there is no services.csv; or a PLOT_ code. O(rows × services). */
static int read_services(struct ctx *c, struct services *sv)
{
    struct table r;
    struct svc_cols k;
    int rc = services_header(c, &r, &k);
    while (rc == 0 && (rc = table_next(c, &r)) == 1)
        rc = services_row(c, &r, &k, sv);
    for (size_t i = 0; i < sv->names.n && rc == 0; i++)
        if (!sv->total[i])
            rc = fail(c, PLOT_BAD_INPUT, "%s/services.csv: service %s has no rows of replica 0 (its total)",
                      c->dir, sv->names.v[i]);
    table_close(&r);
    return rc;
}

/* ---- caches.csv: one figure per cache ---- */

/* Every cache is named by a service and a service names at most one, so
 * caches.csv (a row per bucket and cache) has no more rows than
 * services.csv has in a graph, or than there are buckets when the one
 * service is `server` (no graph, no services.csv): what a run may write. */
#define CACHE_ROWS_MAX SERVICE_ROWS_MAX
_Static_assert(SCENARIO_MAX_BUCKETS <= SCENARIO_MAX_SERVICE_ROWS, "caches.csv of [server]'s cache");
#define CACHES_MAX SCENARIO_MAX_CACHES /* most caches drawn */

/* The caches of caches.csv in the order of their rows in each bucket; the
 * rows come a bucket at a time, a row per cache (the script picks a
 * cache's rows as every n-th). */
struct caches {
    struct list names;
    size_t rows;   /* data rows read */
    bool complete; /* the first bucket's caches all seen (a name came again) */
};

/* The columns read: t and the numbers the script draws, then cache. */
static const char *const cache_numbers[] = {"t",        "lookups", "hits",      "misses",
                                            "coalesced", "entries", "evictions", "expirations"};
#define CACHE_NUMBERS (sizeof cache_numbers / sizeof *cache_numbers)
struct cache_cols {
    size_t num[CACHE_NUMBERS], cache;
};

/* Reads and checks caches.csv's header: 0, 1 when there is no caches.csv,
 * or a PLOT_ code. */
static int caches_header(struct ctx *c, struct table *r, struct cache_cols *k)
{
    int rc = figure_header(c, r, "caches.csv");
    for (size_t i = 0; i < CACHE_NUMBERS && rc == 0; i++)
        rc = one_column(c, r, cache_numbers[i], &k->num[i]);
    return rc == 0 ? one_column(c, r, "cache", &k->cache) : rc;
}

/* Checks the cache's name (it goes into a file name and the figure) and
 * its place in the bucket's rows, and records it in cs. */
static int take_cache(struct ctx *c, const struct table *r, const struct cache_cols *k, struct caches *cs)
{
    const char *v;
    size_t len;
    field(r->line, k->cache, &v, &len);
    if (!name_ok(v, len))
        return bad(c, r, "the cache name '%.*s' is not 1 to %d letters, digits, '_' or '-'",
                   (int)(len < 64 ? len : 64), v, SERVICE_NAME_MAX);
    size_t row = cs->rows++;
    if (!cs->complete && !list_has(&cs->names, v, len)) {
        if (cs->names.n == CACHES_MAX)
            return bad(c, r, "more than %d caches", CACHES_MAX);
        list_add(&cs->names, v, len);
        return 0;
    }
    cs->complete = true;
    const char *want = cs->names.v[row % cs->names.n];
    if (strlen(want) != len || memcmp(want, v, len) != 0)
        return bad(c, r, "cache '%.*s' where '%s' was expected (a row per cache in every bucket, "
                         "in the same order)", (int)len, v, want);
    return 0;
}

/* Checks one row of caches.csv and records its cache in cs. */
static int caches_row(struct ctx *c, const struct table *r, const struct cache_cols *k, struct caches *cs)
{
    double x;
    if (r->lineno > CACHE_ROWS_MAX + 1)
        return bad(c, r, "more than %d rows", CACHE_ROWS_MAX);
    if (count_fields(r->line) != r->ncols)
        return bad(c, r, "%zu columns, but the header has %zu", count_fields(r->line), r->ncols);
    int rc = check_fields(c, r);
    for (size_t i = 0; i < CACHE_NUMBERS && rc == 0; i++)
        rc = check_number(c, r, cache_numbers[i], k->num[i], &x);
    return rc == 0 ? take_cache(c, r, k, cs) : rc;
}

/* Reads DIR/caches.csv into cs, checking every row. Returns 0; 1 when
 * there is no caches.csv; or a PLOT_ code. O(rows × caches). */
static int read_caches(struct ctx *c, struct caches *cs)
{
    struct table r;
    struct cache_cols k;
    int rc = caches_header(c, &r, &k);
    while (rc == 0 && (rc = table_next(c, &r)) == 1)
        rc = caches_row(c, &r, &k, cs);
    if (rc == 0 && cs->names.n > 0 && cs->rows % cs->names.n != 0)
        rc = fail(c, PLOT_BAD_INPUT, "%s/caches.csv: %zu rows are not a row per cache (%zu) in every bucket",
                  c->dir, cs->rows, cs->names.n);
    table_close(&r);
    return rc;
}

/* ---- what gnuplot reads of a long series: decimated rows (plotdec.h) ---- */

/* The second pass over r (its header read): the decimated rows as the
 * datablock $var. 0 or a PLOT_ code. */
static int put_block(struct ctx *c, struct table *r, struct plotdec *d, struct sbuf *b, const char *var)
{
    char why[256], *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    if (out == NULL)
        abort();
    rewind(r->f);
    r->lineno = 0;
    int rc = table_next(c, r); /* the header again */
    plotdec_header(d, out);
    while (rc == 1 && (rc = table_next(c, r)) == 1)
        rc = r->line[0] == '\0' || plotdec_row(d, r->line, out, why, sizeof why) == 0 ? 1 : bad(c, r, "%s", why);
    plotdec_finish(d, out);
    fclose(out);
    if (rc == 0) /* no line of it is EOD: each holds a comma or t's number */
        sb_printf(b, "$%s << EOD\n%sEOD\n", var, text);
    free(text);
    return rc;
}

/* What the scripts read of DIR/name, as the gnuplot variable var: the
 * file's name, or the datablock $var of its rows decimated (plotdec.h)
 * when a series (the rows sharing the keys' values) has more than
 * 2 x PLOTDEC_GROUPS rows, *g rows a run (1: not decimated). 0 or a PLOT_
 * code (no t column, a row of another width, a cell not a number). */
static int put_data(struct ctx *c, struct sbuf *b, const char *name, const char *var,
                    const char *const *keys, const char *const *means, size_t *g)
{
    struct table r;
    struct plotdec *d = NULL;
    char why[256], block[32];
    *g = 1;
    int rc = table_open(c, &r, name);
    if (rc == 0 && (rc = table_next(c, &r)) == 1) {
        d = plotdec_new(r.line, keys, means, why, sizeof why);
        rc = d != NULL ? 0 : bad(c, &r, "%s", why);
    }
    while (rc == 0 && (rc = table_next(c, &r)) == 1)
        rc = r.line[0] == '\0' || plotdec_count(d, r.line, why, sizeof why) == 0 ? 0 : bad(c, &r, "%s", why);
    if (rc == 0 && d != NULL && (*g = plotdec_plan(d, PLOTDEC_GROUPS)) > 1)
        rc = put_block(c, &r, d, b, var);
    snprintf(block, sizeof block, "$%s", var);
    if (rc >= 0)
        sb_var(b, var, *g > 1 ? block : name);
    plotdec_free(d);
    table_close(&r);
    return rc < 0 ? rc : 0;
}

/* A run's or a comparison's timeseries.csv as ts_data, with the smoothing
 * that goes with it (the per-second series' means for the rolling means). */
static int put_timeseries(struct ctx *c, struct sbuf *b, const char *const *keys)
{
    static const char *const means[] = {"offered", "server_arrivals", "ok", NULL};
    size_t g;
    int rc = put_data(c, b, "timeseries.csv", "ts_data", keys, means, &g);
    put_smoothing(b, c->bucket_s, g);
    return rc;
}

/* ---- running gnuplot ---- */

struct proc {
    pid_t pid;
    int in, err; /* the script goes to in; stderr and stdout come from err; -1: closed */
};

/* In the child: its own process group, DIR as working directory, the
 * script on stdin, stdout and stderr to the pipe, the figure's temporary
 * as fd 3 (the script writes to /dev/fd/3). Never returns. */
static _Noreturn void child(int dfd, int in, int errfd, int outfd)
{
    static char arg0[] = "gnuplot", arg1[] = "-d"; /* -d: no initialisation files */
    static const char msg[] = "cannot execute gnuplot\n";
    char *const argv[] = {arg0, arg1, NULL};
    sigset_t none;
    struct sigaction dfl = {.sa_handler = SIG_DFL};
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL); /* gnuplot must die of the TERM we send */
    sigaction(SIGTERM, &dfl, NULL);
    sigaction(SIGINT, &dfl, NULL);
    sigaction(SIGPIPE, &dfl, NULL);
    setpgid(0, 0);
    if (fchdir(dfd) == 0 && dup2(in, 0) == 0 && dup2(errfd, 1) == 1 && dup2(errfd, 2) == 2 &&
        dup2(outfd, 3) == 3 && fcntl(3, F_SETFD, 0) == 0)
        execvp(arg0, argv);
    ssize_t ignored = write(errfd, msg, sizeof msg - 1);
    (void)ignored;
    _exit(127);
}

static int spawn(struct ctx *c, int outfd, struct proc *p)
{
    int sv[2], ep[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
        return fail(c, PLOT_FAILED, "cannot run gnuplot: %s", strerror(errno));
    if (pipe2(ep, O_CLOEXEC) != 0) {
        close(sv[0]), close(sv[1]);
        return fail(c, PLOT_FAILED, "cannot run gnuplot: %s", strerror(errno));
    }
    pid_t pid = fork();
    if (pid == 0)
        child(c->dfd, sv[1], ep[1], outfd);
    close(sv[1]), close(ep[1]);
    if (pid < 0) {
        close(sv[0]), close(ep[0]);
        return fail(c, PLOT_FAILED, "cannot run gnuplot: %s", strerror(errno));
    }
    setpgid(pid, pid); /* also here, so that the group exists before any kill */
    *p = (struct proc){pid, sv[0], ep[0]};
    fcntl(p->in, F_SETFL, O_NONBLOCK);
    fcntl(p->err, F_SETFL, O_NONBLOCK);
    return 0;
}

static void nap(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* Stops gnuplot's whole process group (TERM, then KILL after 200 ms) and
 * reaps it. */
static void kill_group(pid_t pid)
{
    kill(-pid, SIGTERM);
    for (int i = 0; i < 20; i++) {
        if (waitpid(pid, NULL, WNOHANG) == pid)
            return;
        nap(10);
    }
    kill(-pid, SIGKILL);
    while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
        ;
}

/* Sends what is left of the script; false when done (all sent, or
 * gnuplot no longer reads). */
static bool feed(int fd, const struct sbuf *s, size_t *sent)
{
    while (*sent < s->n) {
        ssize_t n = send(fd, s->p + *sent, s->n - *sent, MSG_NOSIGNAL);
        if (n <= 0)
            return n < 0 && (errno == EAGAIN || errno == EINTR);
        *sent += (size_t)n;
    }
    return false;
}

/* Reads what gnuplot said, keeping the first size - 1 bytes in keep;
 * false at the end of the stream. */
static bool drain(int fd, char *keep, size_t size, size_t *kept)
{
    char buf[4096];
    for (;;) {
        ssize_t n = read(fd, buf, sizeof buf);
        if (n <= 0)
            return n < 0 && (errno == EAGAIN || errno == EINTR);
        size_t take = (size_t)n < size - 1 - *kept ? (size_t)n : size - 1 - *kept;
        memcpy(keep + *kept, buf, take);
        *kept += take;
        keep[*kept] = '\0';
    }
}

static void close_fd(int *fd)
{
    if (*fd >= 0)
        close(*fd);
    *fd = -1;
}

/* Feeds the script to gnuplot and collects its output until it exits,
 * looking at *stop every POLL_MS. Returns 0 with its wait status in *st,
 * or PLOT_STOPPED (gnuplot's group killed). */
static int converse(struct ctx *c, struct proc *p, const struct sbuf *s, char *keep, size_t size,
                    int *st)
{
    size_t sent = 0, kept = 0;
    keep[0] = '\0';
    for (;;) {
        if (stopped(c)) {
            kill_group(p->pid);
            return PLOT_STOPPED;
        }
        struct pollfd fds[2];
        nfds_t n = 0;
        if (p->err >= 0)
            fds[n++] = (struct pollfd){.fd = p->err, .events = POLLIN};
        if (p->in >= 0)
            fds[n++] = (struct pollfd){.fd = p->in, .events = POLLOUT};
        if (poll(n ? fds : NULL, n, n ? POLL_MS : 10) < 0 && errno != EINTR)
            nap(10);
        if (p->err >= 0 && !drain(p->err, keep, size, &kept))
            close_fd(&p->err);
        if (p->in >= 0 && !feed(p->in, s, &sent))
            close_fd(&p->in); /* gnuplot sees the end of its input */
        pid_t w = waitpid(p->pid, st, WNOHANG);
        if (w == p->pid)
            break;
        if (w < 0 && errno == ECHILD)
            return fail(c, PLOT_FAILED, "gnuplot's exit status was lost (SIGCHLD ignored?)");
    }
    if (p->err >= 0)
        drain(p->err, keep, size, &kept);
    return 0;
}

/* Runs gnuplot on script s with outfd as its fd 3. Returns 0 with its
 * wait status in *st and what it said in keep, or a PLOT_ code. */
static int run_gnuplot(struct ctx *c, int outfd, const struct sbuf *s, char *keep, size_t size,
                       int *st)
{
    struct proc p = {.pid = -1, .in = -1, .err = -1};
    int rc = spawn(c, outfd, &p);
    if (rc != 0)
        return rc;
    rc = converse(c, &p, s, keep, size, st);
    close_fd(&p.in);
    close_fd(&p.err);
    return rc;
}

/* The first meaningful lines of what gnuplot said, for a message: blank
 * lines, its echo of the failing command ("gnuplot> ...") and the caret
 * under it are left out, as is the "line N:" prefix (the line of its
 * input, not of a file of ours); the first line that is not a warning
 * comes first. Control characters become '?'. */
static void summarise(char *said, char *out, size_t size)
{
    const char *lines[8];
    size_t n = 0, lead = 0;
    char *save = NULL;
    for (char *l = strtok_r(said, "\n", &save); l != NULL && n < 8; l = strtok_r(NULL, "\n", &save)) {
        l += strspn(l, " \t\r");
        if (*l == '\0' || l[strspn(l, "^ \t\r")] == '\0' || strncmp(l, "gnuplot>", 8) == 0)
            continue;
        unsigned long num;
        int skip = 0;
        if (sscanf(l, "line %lu: %n", &num, &skip) == 1 && skip > 0)
            l += skip;
        printable(l);
        if (n == lead && strncmp(l, "warning:", 8) == 0)
            lead++;
        lines[n++] = l;
    }
    size_t used = 0, first = lead < n ? lead : 0;
    out[0] = '\0';
    for (size_t k = 0; k < n; k++) {
        size_t i = k == 0 ? first : (k <= first ? k - 1 : k); /* first, then the others in order */
        int w = snprintf(out + used, size - used, "%s%s", k ? "; " : "", lines[i]);
        if (w < 0 || (size_t)w >= size - used)
            break;
        used += (size_t)w;
    }
}

static int gnuplot_failed(struct ctx *c, const char *fig, int st, char *said)
{
    char why[768];
    summarise(said, why, sizeof why);
    if (WIFSIGNALED(st))
        return fail(c, PLOT_FAILED, "gnuplot failed on %s: killed by signal %d%s%s", fig,
                    WTERMSIG(st), why[0] ? ": " : "", why);
    if (why[0] == '\0')
        return fail(c, PLOT_FAILED, "gnuplot failed on %s: it exited with status %d and said nothing",
                    fig, WEXITSTATUS(st));
    return fail(c, PLOT_FAILED, "gnuplot failed on %s: %s", fig, why);
}

/* ---- figures: created safely, renamed into place ---- */


/* Whether DIR/tmp is still the file open as fd: what "ours" means here. */
static bool still_ours(struct ctx *c, const char *tmp, int fd, struct stat *st)
{
    struct stat at;
    return fstat(fd, st) == 0 && fstatat(c->dfd, tmp, &at, AT_SYMLINK_NOFOLLOW) == 0 &&
           S_ISREG(at.st_mode) && at.st_dev == st->st_dev && at.st_ino == st->st_ino;
}

/* Renames DIR/tmp (open as fd) to DIR/final once it holds a figure. */
static int install(struct ctx *c, int fd, const char *tmp, const char *final)
{
    struct stat st;
    if (!still_ours(c, tmp, fd, &st))
        return fail(c, PLOT_FAILED, "%s/%s was replaced while gnuplot drew %s: nothing installed",
                    c->dir, tmp, final);
    if (st.st_size == 0)
        return fail(c, PLOT_FAILED, "gnuplot failed on %s: it wrote nothing", final);
    if (renameat(c->dfd, tmp, c->dfd, final) != 0)
        return fail(c, PLOT_FAILED, "cannot rename %s/%s to %s: %s", c->dir, tmp, final,
                    strerror(errno));
    return 0;
}

/* Runs script `script_name` for one format, writing DIR/<name>.<term>;
 * extra holds the script's own variables. 0 or a PLOT_ code. */
static int draw(struct ctx *c, const char *script_name, const char *name, const char *term,
                const struct sbuf *extra)
{
    char final[128], tmp[160], said[STDERR_KEEP];
    snprintf(final, sizeof final, "%s.%s", name, term);
    int fd = outdir_tmpfile(c->dfd, final, tmp, sizeof tmp);
    if (fd < 0)
        return fail(c, PLOT_FAILED, "cannot create a temporary for %s in %s: %s", final, c->dir,
                    strerror(errno));
    struct sbuf s = {0};
    sb_var(&s, "out", "/dev/fd/3");
    sb_var(&s, "term", term);
    sb_printf(&s, "frames = %d\n", strcmp(term, "gif") == 0 ? c->gif_frames : 1);
    sb_printf(&s, "%s%s%s\n", c->vars.p, extra->p ? extra->p : "", script(script_name));
    int st = 0, rc = run_gnuplot(c, fd, &s, said, sizeof said, &st);
    free(s.p);
    if (rc == 0 && !(WIFEXITED(st) && WEXITSTATUS(st) == 0))
        rc = gnuplot_failed(c, final, st, said);
    if (rc == 0)
        rc = install(c, fd, tmp, final);
    struct stat ours;
    if (rc != 0 && still_ours(c, tmp, fd, &ours))
        unlinkat(c->dfd, tmp, 0);
    close(fd);
    if (rc == PLOT_STOPPED)
        fail(c, rc, "interrupted while drawing %s/%s", c->dir, final);
    c->written += rc == 0;
    if (rc == 0 && c->drawn != NULL)
        c->drawn(c->drawn_user, final);
    return rc;
}

/* The figures that animate: a run's and a comparison's load. */
static bool animated(const char *name)
{
    return strcmp(name, "load") == 0 || strcmp(name, "compare") == 0;
}

/* One figure: its PNG and SVG; or, with --animate, only the animated GIF
 * of an animated figure and nothing of the others (the PNGs are drawn by
 * a plot without --animate: one pass each, never both). */
static int draw_both(struct ctx *c, const char *script_name, const char *name, const struct sbuf *extra)
{
    int rc = 0;
    bool animate = c->style->animate;
    if (animate && !animated(name))
        return 0;
    for (size_t t = animate ? 2u : 0u; t < (animate ? 3u : 2u) && rc == 0; t++)
        rc = stopped(c) ? fail(c, PLOT_STOPPED, "interrupted before drawing %s/%s.%s", c->dir, name,
                               terms[t])
                        : draw(c, script_name, name, terms[t], extra);
    return rc;
}

/* ---- what each kind of directory draws ---- */

/* One figure per service of sv (service_NAME, plots/service.gp): its load,
 * queue and workers from its total rows, and the workers held at each of
 * its first REPLICA_LINES replicas. */
static int plot_services(struct ctx *c, const struct services *sv, const struct sbuf *data)
{
    int rc = 0;
    for (size_t i = 0; i < sv->names.n && rc == 0; i++) {
        struct sbuf extra = {0};
        char name[64], png[72];
        snprintf(name, sizeof name, "service_%s", sv->names.v[i]);
        snprintf(png, sizeof png, "%s.png", name);
        assert(outdir_our_name(png)); /* the name was checked as it was read */
        unsigned nrep = sv->replicas[i] < REPLICA_LINES ? sv->replicas[i] : REPLICA_LINES;
        sb_printf(&extra, "%s", data->p ? data->p : "");
        int q = sb_var(&extra, "service", sv->names.v[i]);
        sb_printf(&extra, "replicas = %u\nnrep = %u\n", sv->replicas[i], nrep);
        rc = q == 0 ? draw_both(c, "service", name, &extra) : PLOT_FAILED;
        free(extra.p);
    }
    return rc;
}

static void services_fini(struct services *sv) { list_fini(&sv->names); }

/* One figure per cache of cs (cache_NAME, plots/cache.gp): its hit ratio
 * and entries, and its lookups, misses, coalesced misses, expirations and
 * evictions per second. */
static int plot_caches(struct ctx *c, const struct caches *cs, const struct sbuf *data)
{
    int rc = 0;
    for (size_t i = 0; i < cs->names.n && rc == 0; i++) {
        struct sbuf extra = {0};
        char name[64], png[72];
        snprintf(name, sizeof name, "cache_%s", cs->names.v[i]);
        snprintf(png, sizeof png, "%s.png", name);
        assert(outdir_our_name(png)); /* the name was checked as it was read */
        sb_printf(&extra, "%s", data->p ? data->p : "");
        int q = sb_var(&extra, "cache", cs->names.v[i]);
        sb_printf(&extra, "ncaches = %zu\nslot = %zu\n", cs->names.n, i);
        rc = q == 0 ? draw_both(c, "cache", name, &extra) : PLOT_FAILED;
        free(extra.p);
    }
    return rc;
}

/* What a run's figures over time read (plotdec.h): timeseries.csv as
 * ts_data into ts; services.csv as svc_data into svc and caches.csv as
 * cache_data into cache, when there are services and caches. */
static int run_data(struct ctx *c, const struct services *sv, const struct caches *cs, struct sbuf *ts,
                    struct sbuf *svc, struct sbuf *cache)
{
    static const char *const none[] = {NULL}, *const svc_keys[] = {"service", "replica", NULL},
                             *const svc_means[] = {"utilization", "busy", NULL},
                             *const cache_keys[] = {"cache", NULL}, *const cache_means[] = {"hits", "lookups", NULL};
    size_t g;
    int rc = put_timeseries(c, ts, none);
    if (rc == 0 && sv->names.n > 0)
        rc = put_data(c, svc, "services.csv", "svc_data", svc_keys, svc_means, &g);
    if (rc == 0 && cs->names.n > 0)
        rc = put_data(c, cache, "caches.csv", "cache_data", cache_keys, cache_means, &g);
    return rc;
}

/* A run: load, queue and latency over time; the latency CDF and the
 * attempts histogram when their files have rows; a figure per service
 * when there is a services.csv, and per cache when there is a caches.csv. */
static int plot_run(struct ctx *c)
{
    struct list outcomes = {0}, levels = {0}, none_list = {0}; /* none_list: variants [''], a run's */
    struct services sv = {0};
    struct caches cs = {0};
    struct sbuf ts = {0}, svc = {0}, cache = {0}, cdf = {0}, att = {0};
    int rc = column_values(c, "latency.csv", "outcome", &outcomes);
    if (rc >= 0)
        rc = column_values(c, "attempts.csv", "level", &levels);
    if (rc >= 0)
        rc = read_services(c, &sv);
    if (rc >= 0)
        rc = read_caches(c, &cs);
    if (rc >= 0)
        rc = sb_array(&cdf, "outcomes", &outcomes) | sb_array(&att, "levels", &levels) |
             sb_array(&cdf, "variants", &none_list) | sb_array(&att, "variants", &none_list) |
             sb_array(&cdf, "legends", &none_list) | sb_array(&att, "legends", &none_list);
    if (rc == 0)
        rc = run_data(c, &sv, &cs, &ts, &svc, &cache);
    static const char *const over_time[] = {"load", "queue", "latency"};
    for (size_t i = 0; i < 3 && rc == 0; i++)
        rc = draw_both(c, over_time[i], over_time[i], &ts);
    if (rc == 0 && outcomes.n > 0)
        rc = draw_both(c, "cdf", "cdf", &cdf);
    if (rc == 0 && levels.n > 0)
        rc = draw_both(c, "attempts", "attempts", &att);
    if (rc == 0)
        rc = plot_services(c, &sv, &svc);
    if (rc == 0)
        rc = plot_caches(c, &cs, &cache);
    list_fini(&outcomes), list_fini(&levels), services_fini(&sv), list_fini(&cs.names);
    free(ts.p), free(svc.p), free(cache.p), free(cdf.p), free(att.p);
    return rc;
}

/* Whether DIR/name has a column col (every value of which is then
 * checked): 0, 1 when it has not (or there is no such file), or a PLOT_
 * code. */
static int has_column(struct ctx *c, const char *name, const char *col)
{
    struct list l = {0};
    int rc = column_values(c, name, col, &l);
    list_fini(&l);
    return rc;
}

/* What the rest of a comparison's set is drawn from, each part when its
 * files are there (a comparison written before they were has none): 0
 * when present, 1 when absent. */
struct compare_set {
    int lat, att, hw;   /* latency.csv and attempts.csv by variant, summary.csv's _hw columns */
    struct list levels; /* attempts.csv's levels, the outermost first */
    size_t reps;        /* replications (replications.csv) */
};

/* Reads and checks what the set is drawn from, before anything is drawn.
 * 0 or a PLOT_ code. */
static int compare_set_read(struct ctx *c, struct compare_set *set)
{
    struct list reps = {0};
    int rc;
    *set = (struct compare_set){.lat = 1, .att = 1, .hw = 1};
    if ((rc = set->lat = has_column(c, "latency.csv", "variant")) < 0 ||
        (rc = set->att = has_column(c, "attempts.csv", "variant")) < 0 ||
        (rc = set->hw = has_column(c, "summary.csv", "amplification_hw")) < 0)
        return rc;
    if (set->att == 0 && (rc = column_values(c, "attempts.csv", "level", &set->levels)) < 0)
        return rc;
    if (set->hw == 0)
        rc = column_values(c, "replications.csv", "replication", &reps);
    set->reps = reps.n;
    list_fini(&reps);
    return rc < 0 ? rc : 0;
}

/* Keeps plot's --label texts with compare's in DIR/labels.csv, so a later
 * drawing (the GIF after the PNGs, the redraw a rerun names) and the record
 * of the figures (figrec's digest reads labels.csv) see the same legends. */
static int keep_labels(struct ctx *c, const struct labels_map *m)
{
    struct output_file of;
    char err[PATH_MAX + 256];
    if (output_file_open(&of, c->dir, "labels.csv", err, sizeof err) != 0)
        return fail(c, PLOT_FAILED, "%s", err);
    labels_write(of.f, m);
    return output_file_commit(&of, err, sizeof err) != 0 ? fail(c, PLOT_FAILED, "%s", err) : 0;
}

/* legends = each variant's text in a legend (labels.h): what labels.csv
 * (compare --label, an earlier plot --label) and then plot's --label gave
 * it, or its label with the backoff none in words; plot's --label texts
 * are kept in labels.csv. 0 or a PLOT_ code (a malformed labels.csv, a
 * --label that names no variant). */
static int put_legends(struct ctx *c, struct sbuf *b, const struct list *variants)
{
    struct labels_map *m = calloc(1, sizeof *m);
    struct list legends = {0};
    char *text = NULL, why[1200], source[PATH_MAX + 16];
    if (m == NULL)
        abort();
    int rc = read_small(c, "labels.csv", &text);
    snprintf(source, sizeof source, "%s/labels.csv", c->dir);
    if (rc == 0 && labels_parse(text, source, m, why, sizeof why) != 0)
        rc = fail(c, PLOT_BAD_INPUT, "%s", why);
    rc = rc == 1 ? 0 : rc;
    for (size_t i = 0; i < c->style->nlabels && rc == 0; i++)
        if (labels_take(m, c->style->labels[i], (const char *const *)variants->v, variants->n, why, sizeof why) != 0)
            rc = fail(c, PLOT_BAD_INPUT, "%s", why);
    if (rc == 0 && c->style->nlabels > 0)
        rc = keep_labels(c, m);
    for (size_t i = 0; i < variants->n && rc == 0; i++) {
        char legend[PLOT_VALUE_MAX + 64];
        labels_legend(variants->v[i], labels_find(m, variants->v[i]), legend, sizeof legend);
        list_add(&legends, legend, strlen(legend));
    }
    if (rc == 0 && sb_array(b, "legends", &legends) != 0)
        rc = fail(c, PLOT_BAD_INPUT, "%s: a control character in a variant's label", c->dir);
    list_fini(&legends);
    free(text);
    free(m);
    return rc;
}

/* The rest of a comparison's set: compare_cdf (latency CDFs by variant),
 * compare_attempts (attempts per request by variant, at the outermost
 * level) and compare_summary (four metrics by variant, with 95 % error
 * bars over replications). */
static int compare_set_draw(struct ctx *c, const struct compare_set *set, const struct list *variants)
{
    struct sbuf vars = {0}, cdf = {0}, att = {0};
    int rc = sb_array(&vars, "variants", variants) == 0 ? put_legends(c, &vars, variants) : PLOT_FAILED;
    if (rc == 0 && set->lat == 0) {
        sb_printf(&cdf, "%sarray outcomes[1] = ['all']\n", vars.p);
        rc = draw_both(c, "cdf", "compare_cdf", &cdf);
    }
    if (rc == 0 && set->att == 0 && set->levels.n > 0) {
        sb_printf(&att, "%s", vars.p);
        rc = sb_array(&att, "levels", &set->levels) == 0 ? draw_both(c, "attempts", "compare_attempts", &att)
                                                          : PLOT_FAILED;
    }
    if (rc == 0 && set->hw == 0) {
        sb_printf(&vars, "summary = 1\nreps = %zu\nmetric = ''\nkey1 = ''\nkey2 = ''\n", set->reps);
        sb_printf(&vars, "array xs[1] = ['']\narray ys[1] = ['']\nnys = 0\n");
        rc = draw_both(c, "sweep", "compare_summary", &vars);
    }
    free(vars.p), free(cdf.p), free(att.p);
    return rc;
}

/* ---- a comparison of a service graph: a figure per service ---- */

/* Variant name's directory (compare names it by the variant), opened
 * without following a link: -1 when there is none or name is not one
 * plain component. */
static int variant_dir(struct ctx *c, const char *name)
{
    if (strchr(name, '/') != NULL || strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
        return -1;
    return openat(c->dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
}

/* Variant i's services.csv, read through sub (a ctx on its directory):
 * checked (read_services), its services added to names, and its rows
 * (decimated when long) as the datablock $svc_I in b. 0, 1 when the
 * variant has no services.csv, or a PLOT_ code. */
static int variant_services(struct ctx *sub, size_t i, struct list *names, struct sbuf *b)
{
    static const char *const keys[] = {"service", "replica", NULL}, *const means[] = {NULL};
    struct services sv = {0};
    struct table r;
    struct plotdec *d = NULL;
    char why[256], var[32];
    int rc = read_services(sub, &sv);
    for (size_t k = 0; rc == 0 && k < sv.names.n; k++)
        if (!list_has(names, sv.names.v[k], strlen(sv.names.v[k])))
            list_add(names, sv.names.v[k], strlen(sv.names.v[k]));
    if (rc == 0 && (rc = table_open(sub, &r, "services.csv")) == 0) {
        if ((rc = table_next(sub, &r)) == 1)
            rc = (d = plotdec_new(r.line, keys, means, why, sizeof why)) != NULL ? 0 : bad(sub, &r, "%s", why);
        while (rc == 0 && (rc = table_next(sub, &r)) == 1)
            rc = r.line[0] == '\0' || plotdec_count(d, r.line, why, sizeof why) == 0 ? 0 : bad(sub, &r, "%s", why);
        snprintf(var, sizeof var, "svc_%zu", i + 1);
        if (rc == 0 && d != NULL && (plotdec_plan(d, PLOTDEC_GROUPS), 1))
            rc = put_block(sub, &r, d, b, var);
        plotdec_free(d);
        table_close(&r);
    }
    list_fini(&sv.names);
    return rc;
}

/* Every variant's services (in its directory) as $svc_1 ... into b, and
 * the services of any of them into names; when one variant has none (not
 * a graph, or a comparison written before variants had directories),
 * names is left empty. 0 or a PLOT_ code. */
static int comparison_services(struct ctx *c, const struct list *variants, struct list *names, struct sbuf *b)
{
    int rc = 0;
    for (size_t i = 0; i < variants->n && rc == 0; i++) {
        char shown[PATH_MAX + PLOT_VALUE_MAX + 2];
        struct ctx sub = *c;
        snprintf(shown, sizeof shown, "%s/%s", c->dir, variants->v[i]);
        sub.dfd = variant_dir(c, variants->v[i]), sub.dir = shown;
        rc = sub.dfd >= 0 ? variant_services(&sub, i, names, b) : 1;
        if (sub.dfd >= 0)
            close(sub.dfd);
    }
    if (rc == 1) /* a variant without services.csv: no figures per service */
        list_fini(names), *names = (struct list){0}, rc = 0;
    return rc;
}

/* A comparison of a service graph: one figure per service,
 * compare_service_NAME (plots/compare_service.gp), its load, queue and
 * held workers over time, a line per variant. */
static int compare_services_draw(struct ctx *c, const struct list *variants)
{
    struct list names = {0};
    struct sbuf data = {0};
    int rc = comparison_services(c, variants, &names, &data);
    if (rc == 0 && sb_array(&data, "variants", variants) != 0)
        rc = PLOT_FAILED;
    if (rc == 0)
        rc = put_legends(c, &data, variants);
    for (size_t i = 0; i < names.n && rc == 0; i++) {
        struct sbuf extra = {0};
        char name[64], png[72];
        snprintf(name, sizeof name, "compare_service_%s", names.v[i]);
        snprintf(png, sizeof png, "%s.png", name);
        assert(outdir_our_name(png)); /* the name was checked as it was read */
        sb_printf(&extra, "%s", data.p);
        rc = sb_var(&extra, "service", names.v[i]) == 0 ? draw_both(c, "compare_service", name, &extra)
                                                       : PLOT_FAILED;
        free(extra.p);
    }
    list_fini(&names);
    free(data.p);
    return rc;
}

/* A comparison: one line per variant, or the AWS study's panels when it
 * varies load.clients and layer.app.backoff. */
static int plot_comparison(struct ctx *c, const struct list *variants)
{
    struct list clients = {0}, strategies = {0};
    struct compare_set set = {0};
    struct sbuf extra = {0};
    int rc = column_values(c, "summary.csv", "load.clients", &clients);
    if (rc == 0)
        rc = column_values(c, "summary.csv", "layer.app.backoff", &strategies);
    if (rc == 0) {
        int hw = has_column(c, "summary.csv", "lat_max_hw"); /* none before they were written */
        sb_printf(&extra, "hw = %d\n", hw == 0);
        rc = hw < 0                                        ? hw
             : sb_array(&extra, "strategies", &strategies) == 0 ? draw_both(c, "occ", "occ", &extra)
                                                                : PLOT_FAILED;
    } else if (rc == 1 && variants->n == 0) {
        rc = fail(c, PLOT_FAILED, "%s/timeseries.csv has no rows to plot", c->dir);
    } else if (rc == 1 && variants->n > COMPARE_LINES) {
        rc = fail(c, PLOT_FAILED, "%s: %zu variants are too many lines for one figure (at most %d)",
                  c->dir, variants->n, COMPARE_LINES);
    } else if (rc == 1 && (rc = compare_set_read(c, &set)) == 0) {
        /* every frame reads every variant's rows: fewer frames for more variants */
        c->gif_frames = PLOT_FRAMES / (int)variants->n > PLOT_FRAMES_MIN ? PLOT_FRAMES / (int)variants->n
                                                                         : PLOT_FRAMES_MIN;
        static const char *const keys[] = {"variant", NULL};
        rc = sb_array(&extra, "variants", variants) == 0 ? put_legends(c, &extra, variants) : PLOT_FAILED;
        if (rc == 0)
            rc = put_timeseries(c, &extra, keys);
        if (rc == 0)
            rc = draw_both(c, "compare", "compare", &extra);
        if (rc == 0)
            rc = compare_set_draw(c, &set, variants);
        if (rc == 0)
            rc = compare_services_draw(c, variants);
    }
    list_fini(&clients), list_fini(&strategies), list_fini(&set.levels);
    free(extra.p);
    return rc;
}

/* The values of a sweep's key, from its column in sweep.csv. */
static int key_values(struct ctx *c, const char *key, struct list *l)
{
    int rc = column_values(c, "sweep.csv", key, l);
    if (rc == 1)
        rc = fail(c, PLOT_BAD_INPUT, "%s/sweep.csv:1: no column %s (a key of experiment.csv)", c->dir, key);
    return rc;
}

/* The services of a sweep of a graph: each NAME (1 to SERVICE_NAME_MAX
 * of NAME_CHARS) with the columns NAME_calls, NAME_queue_mean and
 * NAME_utilization in sweep.csv's header, in the header's order, at most
 * SERVICES_MAX. 0 or a PLOT_ code. */
static int sweep_services(struct ctx *c, struct list *names)
{
    static const char suffix[] = "_utilization";
    struct table r;
    int rc = table_open(c, &r, "sweep.csv");
    if (rc == 0 && (rc = table_next(c, &r)) == 1)
        rc = 0, r.ncols = count_fields(r.line);
    for (size_t i = 0; rc == 0 && i < r.ncols && names->n < SERVICES_MAX; i++) {
        const char *f;
        size_t len, idx, n = strlen(suffix);
        char col[SERVICE_NAME_MAX + 16];
        if (!field(r.line, i, &f, &len) || len <= n || memcmp(f + len - n, suffix, n) != 0 || !name_ok(f, len - n))
            continue;
        snprintf(col, sizeof col, "%.*s_calls", (int)(len - n), f);
        bool calls = column_index(r.line, col, &idx);
        snprintf(col, sizeof col, "%.*s_queue_mean", (int)(len - n), f);
        if (calls && column_index(r.line, col, &idx))
            list_add(names, f, len - n);
    }
    table_close(&r);
    return rc == 1 ? 0 : rc;
}

/* A sweep of a service graph: one figure per service, sweep_service_NAME
 * (plots/sweep_service.gp), the attempts that reached it, its queue and
 * its workers held over the first key, a line per value of the second. */
static int sweep_services_draw(struct ctx *c, char keys[2][PLOT_VALUE_MAX + 1], size_t nk,
                               const struct list *xs, const struct list *ys)
{
    struct list names = {0};
    int rc = sweep_services(c, &names);
    for (size_t i = 0; i < names.n && rc == 0; i++) {
        struct sbuf extra = {0};
        char name[64], png[72];
        snprintf(name, sizeof name, "sweep_service_%s", names.v[i]);
        snprintf(png, sizeof png, "%s.png", name);
        assert(outdir_our_name(png)); /* the name was checked as it was read */
        int q = sb_var(&extra, "service", names.v[i]) | sb_var(&extra, "key1", keys[0]) |
                sb_var(&extra, "key2", nk == 2 ? keys[1] : "") | sb_array(&extra, "xs", xs) | sb_array(&extra, "ys", ys);
        sb_printf(&extra, "nys = %zu\n", ys->n);
        rc = q == 0 ? draw_both(c, "sweep_service", name, &extra) : PLOT_FAILED;
        free(extra.p);
    }
    list_fini(&names);
    return rc;
}

/* A sweep: ok share, amplification and p99 latency over its first one or
 * two keys (a line with error bars, or a heat map). */
static int plot_sweep(struct ctx *c)
{
    char keys[2][PLOT_VALUE_MAX + 1] = {"", ""};
    size_t nk = 0;
    struct list xs = {0}, ys = {0};
    int rc = sweep_keys(c, keys, &nk);
    if (rc == 0 && (nk == 0 || nk > 2))
        rc = fail(c, PLOT_FAILED, "%s: a sweep over %zu keys; figures are drawn for one or two", c->dir, nk);
    if (rc == 0)
        rc = key_values(c, keys[0], &xs);
    if (rc == 0 && nk == 2)
        rc = key_values(c, keys[1], &ys);
    static const char *const metrics[] = {"ok_share", "amplification", "lat_p99"};
    for (size_t i = 0; i < 3 && rc == 0; i++) {
        struct sbuf extra = {0};
        char name[64];
        snprintf(name, sizeof name, "sweep_%s", metrics[i]);
        int q = sb_var(&extra, "metric", metrics[i]) | sb_var(&extra, "key1", keys[0]) |
                sb_var(&extra, "key2", nk == 2 ? keys[1] : "") | sb_array(&extra, "xs", &xs) |
                sb_array(&extra, "ys", &ys);
        sb_printf(&extra, "nys = %zu\nsummary = 0\nreps = 0\narray variants[1] = ['']\narray legends[1] = ['']\n", ys.n);
        rc = q == 0 ? draw_both(c, "sweep", name, &extra) : PLOT_FAILED;
        free(extra.p);
    }
    if (rc == 0)
        rc = sweep_services_draw(c, keys, nk, &xs, &ys);
    list_fini(&xs), list_fini(&ys);
    return rc;
}

/* A hysteresis loop: the data are read by gnuplot as numbers, and its leg
 * and row labels only compared with fixed strings. */
static int plot_hysteresis(struct ctx *c)
{
    struct sbuf none = {0};
    int rc = draw_both(c, "hysteresis", "hysteresis", &none);
    free(none.p);
    return rc;
}

/* The value of field NAME in DIR/envelope.csv ("NAME,VALUE" lines),
 * checked as every value read; "" when absent. 0 or a PLOT_ code. */
static int envelope_field(struct ctx *c, const char *name, char out[PLOT_VALUE_MAX + 1])
{
    struct table r;
    size_t nl = strlen(name);
    int rc = table_open(c, &r, "envelope.csv");
    out[0] = '\0';
    if (rc == 1)
        rc = fail(c, PLOT_BAD_INPUT, "%s/envelope.csv: missing", c->dir);
    while (rc == 0 && (rc = table_next(c, &r)) == 1) {
        rc = 0;
        if (strncmp(r.line, name, nl) != 0 || r.line[nl] != ',')
            continue;
        size_t len = strlen(r.line + nl + 1);
        if ((rc = check_value(c, &r, "2", r.line + nl + 1, len)) == 0)
            memcpy(out, r.line + nl + 1, len + 1);
    }
    table_close(&r);
    return rc;
}

/* A map or a margin (map.csv or margin.csv, boundary.csv): the phase
 * diagram, load across and trigger up (plots/map.gp). */
static int plot_map(struct ctx *c)
{
    char xkey[PLOT_VALUE_MAX + 1], ykey[PLOT_VALUE_MAX + 1], level[PLOT_VALUE_MAX + 1], name[PLOT_VALUE_MAX + 1];
    int rc = envelope_field(c, "load_key", xkey);
    if (rc == 0)
        rc = envelope_field(c, "scenario", name);
    if (rc == 0)
        rc = envelope_field(c, "trigger_key", ykey);
    if (rc == 0)
        rc = envelope_field(c, "level", level);
    char *end;
    double lv = rc == 0 ? strtod(level, &end) : 0;
    if (rc == 0 && (end == level || *end != '\0' || !(lv > 0 && lv < 1)))
        rc = fail(c, PLOT_BAD_INPUT, "%s/envelope.csv: level %.40s is not a probability", c->dir, level);
    struct sbuf extra = {0};
    struct list durs = {0}; /* one boundary line per duration (none: one line) */
    if (rc == 0 && (rc = column_values(c, "boundary.csv", "duration", &durs)) == 1)
        rc = fail(c, PLOT_BAD_INPUT, "%s/boundary.csv:1: no column duration", c->dir);
    if (rc == 0) {
        int q = sb_var(&extra, "xkey", xkey[0] ? xkey : "load") | sb_var(&extra, "ykey", ykey) |
                sb_array(&extra, "durs", &durs);
        sb_printf(&extra, "ndurs = %zu\n", durs.n);
        if (!c->style->title[0] && name[0]) /* the scenario's name, not the directory's */
            q |= sb_var(&extra, "title", name);
        sb_printf(&extra, "level = %.6g\n", lv);
        rc = q == 0 ? draw_both(c, "map", "map", &extra) : PLOT_FAILED;
    }
    list_fini(&durs);
    free(extra.p);
    return rc;
}

/* Chooses what DIR's files support. */
static int dispatch(struct ctx *c)
{
    if (c->style->nlabels > 0 && (!exists(c, "timeseries.csv") || exists(c, "sweep.csv") ||
                                  has_column(c, "timeseries.csv", "variant") != 0)) /* nothing to name */
        return fail(c, PLOT_BAD_INPUT, "--label '%.200s': %s is not a comparison; only compare's variants take labels",
                    c->style->labels[0], c->dir);
    if (exists(c, "hysteresis.csv") && exists(c, "thresholds.csv"))
        return plot_hysteresis(c);
    if (exists(c, "sweep.csv") && exists(c, "experiment.csv"))
        return plot_sweep(c);
    if (exists(c, "map.csv") && exists(c, "boundary.csv") && exists(c, "envelope.csv"))
        return plot_map(c);
    struct list variants = {0};
    int rc = column_values(c, "timeseries.csv", "variant", &variants);
    if (rc == 0)
        rc = plot_comparison(c, &variants);
    else if (rc == 1 && exists(c, "timeseries.csv"))
        rc = plot_run(c);
    else if (rc == 1)
        rc = fail(c, PLOT_FAILED, "%s holds no retrystorm output to plot (no timeseries.csv)", c->dir);
    list_fini(&variants);
    return rc;
}

int plot_dir(const char *dir, volatile sig_atomic_t *stop, char *err, size_t errsz)
{
    return plot_dir_styled(dir, NULL, stop, err, errsz);
}

int plot_dir_styled(const char *dir, const struct plot_style *st, volatile sig_atomic_t *stop,
                    char *err, size_t errsz)
{
    return plot_dir_drawn(dir, st, stop, NULL, NULL, err, errsz);
}

int plot_dir_drawn(const char *dir, const struct plot_style *st, volatile sig_atomic_t *stop,
                   plot_drawn_fn *drawn, void *user, char *err, size_t errsz)
{
    static const struct plot_style plain = {0};
    struct ctx c = {.dir = dir, .style = st ? st : &plain, .gif_frames = PLOT_FRAMES, .stop = stop,
                    .err = err, .errsz = errsz, .drawn = drawn, .drawn_user = user};
    err[0] = '\0';
    if (stopped(&c))
        return fail(&c, PLOT_STOPPED, "interrupted before drawing the figures of %s", dir);
    c.dfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC); /* the directory checked */
    if (c.dfd < 0)
        return fail(&c, errno == ENOENT || errno == ENOTDIR || errno == ELOOP ? PLOT_BAD_INPUT : PLOT_FAILED,
                    "%s: %s", dir, strerror(errno));
    int rc = common_vars(&c);
    if (rc == 0)
        rc = dispatch(&c);
    if (rc == 0 && c.style->animate && c.written == 0)
        rc = fail(&c, PLOT_BAD_INPUT, "--animate: %s has no load over time to animate (a run's "
                  "load.gif or a comparison's compare.gif); plot it without --animate", dir);
    close(c.dfd);
    free(c.vars.p);
    return rc < 0 ? rc : c.written;
}
