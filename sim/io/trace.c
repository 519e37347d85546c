/*
 * trace — a file of real traffic, read one row at a time. See trace.h for
 * the format.
 *
 * A line is read byte by byte into a buffer of TRACE_MAX_LINE + 2 bytes; a
 * longer line is consumed to its newline (so the next call starts at the
 * next line) and refused. Choices the header leaves open:
 *   - A field is the exact text between commas: a space or tab anywhere in
 *     it (leading or trailing included) is refused, as are an empty field,
 *     "nan", "inf", hex floats and anything strtod would not consume
 *     whole. A leading '+' is accepted; "-0" is 0.
 *   - A blank line is an empty one (after the CR); a line of spaces is a
 *     bad row. A line starting with '#' is skipped whatever follows it (a
 *     comment may be longer than TRACE_MAX_LINE or hold any byte).
 *   - Comments and blank lines may come before the header.
 *   - A value quoted in a message is clipped to QUOTE_MAX bytes ("..."
 *     follows) and every byte outside printable ASCII is written \xHH (a
 *     backslash as \\), so a hostile file cannot reach the terminal.
 *   - The time in an order error is written from the rounded nanoseconds,
 *     as compared ("3.5", "4", "0.000000001").
 *   - A read error ends the trace: it is reported once, then next returns 0.
 * The reader only checks the rows one by one; what a row means (the last
 * rate holding to the end, nothing before the first row) is for its user.
 *
 * trace_arrivals wraps a reader as the model's arrival source (sim.h), so
 * that a run is handed its rows and opens nothing itself; a row that went
 * bad since the scenario was checked is the run's error ("the trace changed
 * during the run"), reported by sim_run with the reader's message.
 *
 * Costs: open O(1) plus the header line; next O(length of the line) with no
 * allocation; check O(size of the file) in O(1) memory.
 */
#define _POSIX_C_SOURCE 200809L

#include "trace.h"

#include "scenario.h" /* scenario_trace_text */

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define QUOTE_MAX 40
#define RATE_MAX 1e9

struct line {
    char buf[TRACE_MAX_LINE + 2]; /* up to one byte more than allowed, and the '\0' */
    size_t len;                   /* after the CR is dropped */
    bool longer;                  /* more than TRACE_MAX_LINE bytes */
    bool nul;                     /* a NUL byte among those kept */
};

/* Reads one line without its newline (and a CR just before it). Returns 1,
 * 0 at the end of the file (nothing read), or -1 on a read error. */
static int read_line(FILE *f, struct line *l)
{
    size_t n = 0;
    bool any = false;
    int c;
    l->longer = l->nul = false;
    while ((c = getc_unlocked(f)) != EOF) {
        any = true;
        if (c == '\n')
            break;
        if (n < sizeof l->buf - 1) {
            l->buf[n++] = (char)c;
            if (c == '\0')
                l->nul = true;
        } else {
            l->longer = true;
        }
    }
    if (c == EOF && ferror(f))
        return -1;
    if (!l->longer && n > 0 && l->buf[n - 1] == '\r')
        n--;
    if (n > TRACE_MAX_LINE)
        l->longer = true;
    l->buf[n] = '\0';
    l->len = n;
    return any ? 1 : 0;
}

/* Writes s for quoting in a message: at most QUOTE_MAX of its bytes,
 * printable ASCII as is, a backslash doubled, any other byte as \xHH,
 * "..." when clipped. out holds QUOTE_MAX * 4 + 4 bytes. Returns out. */
static const char *quote(const char *s, char *out)
{
    static const char hex[] = "0123456789abcdef";
    size_t o = 0, i = 0;
    for (; s[i] != '\0' && i < QUOTE_MAX; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '\\') {
            out[o++] = '\\';
            out[o++] = '\\';
        } else if (c >= 0x20 && c < 0x7f) {
            out[o++] = (char)c;
        } else {
            out[o++] = '\\';
            out[o++] = 'x';
            out[o++] = hex[c >> 4];
            out[o++] = hex[c & 15];
        }
    }
    if (s[i] != '\0')
        for (int k = 0; k < 3; k++)
            out[o++] = '.';
    out[o] = '\0';
    return out;
}

/* Writes a time in seconds exactly, without trailing zeros ("4", "0.25").
 * out holds 32 bytes. Returns out. */
static const char *seconds(rs_time ns, char *out)
{
    long long s = (long long)(ns / RS_S), frac = (long long)(ns % RS_S);
    int n = snprintf(out, 32, "%lld.%09lld", s, frac);
    while (n > 0 && out[n - 1] == '0')
        out[--n] = '\0';
    if (n > 0 && out[n - 1] == '.')
        out[--n] = '\0';
    return out;
}

/* Parses a whole field as a finite plain decimal number (digits, '.', an
 * exponent, a sign); no space, no hex, no "inf" or "nan". */
static bool parse_number(const char *s, double *out)
{
    if (s[0] == '\0')
        return false;
    for (const char *p = s; *p != '\0'; p++)
        if (!((*p >= '0' && *p <= '9') || *p == '.' || *p == 'e' || *p == 'E' || *p == '+' ||
              *p == '-'))
            return false;
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (end == s || *end != '\0' || errno == ERANGE || !isfinite(v))
        return false;
    *out = v;
    return true;
}

/* Parses the t field; returns 0, or -1 with the message in err. */
static int parse_time(const struct trace *t, const char *s, rs_time *at, char *err, size_t errsz)
{
    char q[QUOTE_MAX * 4 + 4];
    double v;
    if (!parse_number(s, &v) || v < 0) {
        snprintf(err, errsz,
                 "%s:%llu: t: '%s' is not a time in seconds (a non-negative number such as 0.25)",
                 t->name, t->line, quote(s, q));
        return -1;
    }
    if (v * 1e9 > (double)RS_TIME_LIMIT) {
        snprintf(err, errsz, "%s:%llu: t: '%s' is later than %lld seconds (1000 days, the limit)",
                 t->name, t->line, quote(s, q), (long long)(RS_TIME_LIMIT / RS_S));
        return -1;
    }
    *at = units_from_ns(v * 1e9);
    return 0;
}

/* Parses the rate field; returns 0, or -1 with the message in err. */
static int parse_rate(const struct trace *t, const char *s, double *rate, char *err, size_t errsz)
{
    char q[QUOTE_MAX * 4 + 4];
    double v;
    if (!parse_number(s, &v) || v < 0 || v > RATE_MAX) {
        snprintf(err, errsz, "%s:%llu: rate: '%s' is not a rate (a number from 0 to 1e9 per second)",
                 t->name, t->line, quote(s, q));
        return -1;
    }
    *rate = v + 0.0; /* -0 becomes 0 */
    return 0;
}

/* Refuses a time before (or, for rates, equal to) the previous row's. */
static int check_order(const struct trace *t, rs_time at, char *err, size_t errsz)
{
    char now[32], before[32];
    if (t->last_t < 0)
        return 0;
    if (t->kind == TRACE_RATES && at <= t->last_t) {
        snprintf(err, errsz, "%s:%llu: t: %s is not after the previous row's %s (times must increase)",
                 t->name, t->line, seconds(at, now), seconds(t->last_t, before));
        return -1;
    }
    if (t->kind == TRACE_TIMES && at < t->last_t) {
        snprintf(err, errsz, "%s:%llu: t: %s is before the previous row's %s (times must not decrease)",
                 t->name, t->line, seconds(at, now), seconds(t->last_t, before));
        return -1;
    }
    return 0;
}

/* Checks one row (a line that is neither blank nor a comment, within the
 * length and without NUL) and, if good, makes it the previous row. */
static int parse_row(struct trace *t, char *s, rs_time *at, double *rate, char *err, size_t errsz)
{
    size_t fields = 1;
    for (const char *p = s; *p != '\0'; p++)
        fields += *p == ',';
    size_t want = t->kind == TRACE_RATES ? 2 : 1;
    if (fields != want) {
        snprintf(err, errsz, "%s:%llu: %zu field%s; allowed: %s", t->name, t->line, fields,
                 fields == 1 ? "" : "s", t->kind == TRACE_RATES ? "t,rate" : "t");
        return -1;
    }
    char *comma = strchr(s, ',');
    if (comma != NULL)
        *comma = '\0';
    rs_time when;
    double r = 0.0;
    if (parse_time(t, s, &when, err, errsz) != 0)
        return -1;
    if (comma != NULL && parse_rate(t, comma + 1, &r, err, errsz) != 0)
        return -1;
    if (check_order(t, when, err, errsz) != 0)
        return -1;
    t->last_t = when;
    *at = when;
    if (t->kind == TRACE_RATES && rate != NULL)
        *rate = r;
    return 1;
}

/* Reads lines to the next one that is neither blank nor a comment. Returns
 * 1 with it in l, 0 at the end, -1 on a read error (message in err). */
static int next_line(struct trace *t, struct line *l, char *err, size_t errsz)
{
    for (;;) {
        if (t->f == NULL)
            return 0;
        int r = read_line(t->f, l);
        if (r == 0)
            return 0;
        t->line++;
        if (r < 0) {
            snprintf(err, errsz, "%s:%llu: read error: %s", t->name, t->line, strerror(errno));
            trace_close(t); /* the end: later calls return 0 */
            return -1;
        }
        if ((l->len == 0 && !l->longer) || l->buf[0] == '#')
            continue;
        return 1;
    }
}

int trace_next(struct trace *t, rs_time *at, double *rate, char *err, size_t errsz)
{
    struct line l;
    int r = next_line(t, &l, err, errsz);
    if (r <= 0)
        return r;
    if (l.longer) {
        snprintf(err, errsz, "%s:%llu: longer than %d characters", t->name, t->line,
                 TRACE_MAX_LINE);
        return -1;
    }
    if (l.nul) {
        snprintf(err, errsz, "%s:%llu: a NUL byte in the line", t->name, t->line);
        return -1;
    }
    return parse_row(t, l.buf, at, rate, err, errsz);
}

/* Reads the header (the first line neither blank nor a comment); closes
 * the file when it is missing or wrong. */
static int read_header(struct trace *t, char *err, size_t errsz)
{
    struct line l;
    int r = next_line(t, &l, err, errsz);
    if (r < 0)
        return -1;
    if (r == 0) {
        snprintf(err, errsz, "%s: no header line; allowed: t,rate (rates) or t (timestamps)",
                 t->name);
        trace_close(t);
        return -1;
    }
    if (!l.longer && !l.nul && strcmp(l.buf, "t,rate") == 0) {
        t->kind = TRACE_RATES;
        return 0;
    }
    if (!l.longer && !l.nul && strcmp(l.buf, "t") == 0) {
        t->kind = TRACE_TIMES;
        return 0;
    }
    char q[QUOTE_MAX * 4 + 4];
    if (l.nul)
        snprintf(err, errsz, "%s:%llu: a NUL byte in the header; allowed: t,rate (rates) or t (timestamps)",
                 t->name, t->line);
    else
        snprintf(err, errsz, "%s:%llu: header '%s'; allowed: t,rate (rates) or t (timestamps)",
                 t->name, t->line, quote(l.buf, q));
    trace_close(t);
    return -1;
}

static void reset(struct trace *t, const char *name)
{
    memset(t, 0, sizeof *t);
    t->last_t = -1;
    snprintf(t->name, sizeof t->name, "%s", name);
}

int trace_open(struct trace *t, const char *path, char *err, size_t errsz)
{
    reset(t, path);
    /* O_NONBLOCK: opening a fifo planted under the name must not hang (it
     * has no effect on the regular file we then insist on) */
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        snprintf(err, errsz, "%s: %s", t->name, strerror(errno));
        return -1;
    }
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        snprintf(err, errsz, "%s: not a regular file", t->name);
        close(fd);
        return -1;
    }
    t->f = fdopen(fd, "r");
    if (t->f == NULL) {
        snprintf(err, errsz, "%s: %s", t->name, strerror(errno));
        close(fd);
        return -1;
    }
    return read_header(t, err, errsz);
}

int trace_open_text(struct trace *t, const char *text, const char *name, char *err, size_t errsz)
{
    reset(t, name);
    size_t n = strlen(text);
    if (n == 0) { /* fmemopen may refuse a size of 0 */
        snprintf(err, errsz, "%s: no header line; allowed: t,rate (rates) or t (timestamps)",
                 t->name);
        return -1;
    }
    /* Mode "r" never writes: the cast only meets fmemopen's prototype. The
     * text must outlive the trace (a built-in's is static). */
    t->f = fmemopen((void *)text, n, "r");
    if (t->f == NULL) {
        snprintf(err, errsz, "%s: %s", t->name, strerror(errno));
        return -1;
    }
    return read_header(t, err, errsz);
}

void trace_close(struct trace *t)
{
    if (t->f != NULL)
        fclose(t->f);
    t->f = NULL;
}

unsigned long long trace_check(struct trace *t, void (*report)(void *ctx, const char *msg),
                               void *ctx, struct trace_info *info)
{
    char err[sizeof t->name + 512];
    unsigned long long bad = 0;
    rs_time at;
    double rate;
    int r;
    unsigned long long run = 0;
    info->kind = t->kind;
    info->rows = 0;
    info->max_equal = 0;
    info->first = info->last = -1;
    while ((r = trace_next(t, &at, &rate, err, sizeof err)) != 0) {
        if (r < 0) {
            bad++;
            if (report != NULL)
                report(ctx, err);
            continue;
        }
        run = info->rows > 0 && at == info->last ? run + 1 : 1;
        if (run > info->max_equal)
            info->max_equal = run;
        if (info->rows++ == 0)
            info->first = at;
        info->last = at;
    }
    return bad;
}

static int source_next(void *ctx, rs_time *at, double *rate, char *err, size_t errsz)
{
    return trace_next(ctx, at, rate, err, errsz);
}

static void source_close(void *ctx)
{
    trace_close(ctx);
    free(ctx);
}

int trace_arrivals(const struct scenario *sc, struct arrival_source *src, char *err,
                   size_t errsz)
{
    *src = (struct arrival_source){0};
    if (sc->trace[0] == '\0' || sc->model != LOAD_OPEN)
        return 0;
    struct trace *t = malloc(sizeof *t);
    if (t == NULL) {
        snprintf(err, errsz, "out of memory for the trace reader");
        return -1;
    }
    int r = sc->trace_builtin
                ? trace_open_text(t, scenario_trace_text(sc->trace), sc->trace, err, errsz)
                : trace_open(t, sc->trace, err, errsz);
    if (r != 0) {
        free(t);
        return -1;
    }
    *src = (struct arrival_source){source_next, source_close, t};
    return 0;
}

struct sim *trace_sim_create(const struct scenario *sc, uint32_t replication, char *err,
                             size_t errsz)
{
    struct sim *s = sim_create(sc, replication, err, errsz);
    if (s == NULL)
        return NULL;
    struct arrival_source src;
    if (trace_arrivals(sc, &src, err, errsz) != 0) {
        sim_destroy(s);
        return NULL;
    }
    sim_set_arrivals(s, src);
    return s;
}
