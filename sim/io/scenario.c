/*
 * scenario — INI scenario files into struct scenario. See scenario.h.
 *
 * Loading runs in three passes: libinih reads the file into a list of
 * (section, key, value, line) entries, through our line reader, which
 * refuses lines longer than SCENARIO_MAX_LINE rather than let them be cut
 * short; overrides replace or extend that list; then every entry is applied
 * through one table of keys (section kind, name, type, field offset,
 * limits), and the cross-field rules and the limits on the run's size run
 * last. Sections and duplicate keys are found through hash tables, so that
 * loading is linear in the size of the file however many sections it has.
 *
 * Services: [service NAME] sections, in file order; [server] is the service
 * named `server`. Names in `calls`, a layer's `from`/`to` and a phase's
 * `target` are resolved after every entry is applied (a service may be
 * defined after its first use); the calls must form a DAG, and the
 * attempts-product limit is taken over its worst path. O(services² +
 * layers · services) for the graph rules.
 */
#define _XOPEN_SOURCE 700 /* realpath, and POSIX 2008 */

#include "scenario.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <ini.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "trace.h"

/* A line, its \r\n and a NUL fit in libinih's buffer. */
_Static_assert(SCENARIO_MAX_LINE + 3 <= INI_MAX_LINE, "INI_MAX_LINE is too small");

/* ---- diagnostics ---- */

static void diag_add(struct scenario_diag *d, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Appends a message, unconditionally. */
static void diag_push(struct scenario_diag *d, const char *msg)
{
    if (d->n == d->cap) {
        size_t ncap = d->cap ? d->cap * 2 : 8;
        char **nm = realloc(d->msg, ncap * sizeof *nm);
        if (nm == NULL) {
            fprintf(stderr, "retrystorm: out of memory (%zu bytes for messages)\n", ncap * sizeof *nm);
            abort();
        }
        d->msg = nm;
        d->cap = ncap;
    }
    d->msg[d->n] = strdup(msg);
    if (d->msg[d->n] == NULL) {
        fprintf(stderr, "retrystorm: out of memory (%zu bytes for a message)\n", strlen(msg) + 1);
        abort();
    }
    d->n++;
}

/* Counts a problem that is not to be listed, when the current load has
 * listed SCENARIO_MAX_MESSAGES already: then the caller need not work out
 * its message. */
static bool diag_skip(struct scenario_diag *d)
{
    if (d->n - d->start < SCENARIO_MAX_MESSAGES)
        return false;
    d->more++;
    return true;
}

/* Adds a problem: listed while the current load has listed fewer than
 * SCENARIO_MAX_MESSAGES, else only counted (and not even formatted). */
static void diag_add(struct scenario_diag *d, const char *fmt, ...)
{
    if (diag_skip(d))
        return;
    char buf[4096];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    diag_push(d, buf);
}

/* A load's messages start here. */
static void diag_begin(struct scenario_diag *d)
{
    d->start = d->n;
    d->more = 0;
}

/* Ends a load: one line for the problems not listed; returns how many
 * problems the load found, listed or not. */
static int diag_end(struct scenario_diag *d, const char *source)
{
    size_t total = d->n - d->start + d->more;
    if (d->more > 0) {
        char buf[600];
        snprintf(buf, sizeof buf, "%s: ... and %zu more problem%s (only the first %d are listed)",
                 source, d->more, d->more == 1 ? "" : "s", SCENARIO_MAX_MESSAGES);
        diag_push(d, buf);
    }
    return total > INT_MAX ? INT_MAX : (int)total;
}

void scenario_diag_fini(struct scenario_diag *d)
{
    for (size_t i = 0; i < d->n; i++)
        free(d->msg[i]);
    free(d->msg);
    *d = (struct scenario_diag){0};
}

size_t scenario_edit_distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    if (la > 63 || lb > 63)
        return 64;
    size_t row[64];
    for (size_t j = 0; j <= lb; j++)
        row[j] = j;
    for (size_t i = 1; i <= la; i++) {
        size_t diag = row[0];
        row[0] = i;
        for (size_t j = 1; j <= lb; j++) {
            size_t up = row[j];
            size_t best = diag + (a[i - 1] != b[j - 1]);
            if (row[j] + 1 < best)
                best = row[j] + 1;
            if (row[j - 1] + 1 < best)
                best = row[j - 1] + 1;
            row[j] = best;
            diag = up;
        }
    }
    return row[lb];
}

/* ---- the entry list ---- */

struct entry {
    char section[96];
    char key[64];
    char value[256];
    const char *source; /* file name, or NULL for an override */
    int line;
    const char *set;    /* an override: its --set text (the caller's) */
};

struct entries {
    struct entry *e;
    size_t n, cap;
};

static struct entry *entries_add(struct entries *es)
{
    if (es->n == es->cap) {
        size_t ncap = es->cap ? es->cap * 2 : 32;
        struct entry *ne = realloc(es->e, ncap * sizeof *ne);
        if (ne == NULL) {
            fprintf(stderr, "retrystorm: out of memory (%zu bytes for scenario entries)\n",
                    ncap * sizeof *ne);
            abort();
        }
        es->e = ne;
        es->cap = ncap;
    }
    struct entry *e = &es->e[es->n++];
    memset(e, 0, sizeof *e);
    return e;
}

/* "FILE:LINE" or "--set TEXT", for messages. */
static const char *where(const struct entry *e, char *buf, size_t size)
{
    if (e->source == NULL)
        snprintf(buf, size, "--set %s", e->set);
    else
        snprintf(buf, size, "%s:%d", e->source, e->line);
    return buf;
}

/* Copies the n bytes at src into dst (size bytes), ending with "..." when
 * they do not fit: a section or key too long for any valid one shows
 * clipped in messages, and can never become a valid name. */
static void copy_clipped(char *dst, size_t size, const char *src, size_t n)
{
    if (n < size) {
        memcpy(dst, src, n);
        dst[n] = '\0';
        return;
    }
    memcpy(dst, src, size - 4);
    memcpy(dst + size - 4, "...", 4);
}

/* ---- equal entries in O(1) ---- */

/* An open-addressing hash table of entry indexes, keyed by an entry's
 * section (and key, with_key): the first entry of a section, or an earlier
 * entry with the same section and key, is found in O(1) expected time, so
 * that loading stays linear in the size of the file. */
struct index {
    size_t *slot; /* an entry's index + 1, or 0 when empty */
    size_t mask;  /* the capacity - 1; the capacity is a power of two, at least 2n */
    bool with_key;
};

static void index_init(struct index *ix, size_t n, bool with_key)
{
    size_t cap = 16;
    while (cap < 2 * n)
        cap *= 2;
    ix->slot = calloc(cap, sizeof *ix->slot);
    if (ix->slot == NULL) {
        fprintf(stderr, "retrystorm: out of memory (%zu bytes for an index of scenario entries)\n",
                cap * sizeof *ix->slot);
        abort();
    }
    ix->mask = cap - 1;
    ix->with_key = with_key;
}

/* FNV-1a over the section, then a separator and the key. */
static size_t entry_hash(const struct entry *e, bool with_key)
{
    uint64_t h = 14695981039346656037ULL;
    for (const char *p = e->section; *p != '\0'; p++)
        h = (h ^ (unsigned char)*p) * 1099511628211ULL;
    if (with_key) {
        h = (h ^ 0xffu) * 1099511628211ULL;
        for (const char *p = e->key; *p != '\0'; p++)
            h = (h ^ (unsigned char)*p) * 1099511628211ULL;
    }
    return (size_t)h;
}

/* The first entry offered to the index that equals entry i, or i itself
 * (then remembered) when there is none. At most n entries may be offered. */
static size_t index_first(struct index *ix, const struct entries *es, size_t i)
{
    const struct entry *e = &es->e[i];
    size_t h = entry_hash(e, ix->with_key) & ix->mask;
    for (; ix->slot[h] != 0; h = (h + 1) & ix->mask) {
        const struct entry *o = &es->e[ix->slot[h] - 1];
        if (strcmp(o->section, e->section) == 0 && (!ix->with_key || strcmp(o->key, e->key) == 0))
            return ix->slot[h] - 1;
    }
    ix->slot[h] = i + 1;
    return i;
}

/* ---- reading lines ---- */

struct reader {
    FILE *f;
    const char *s;
    int line;
    struct entries *es;
    const char *source;
    struct scenario_diag *diag;
    char section[96]; /* the last section header, for messages */
    bool skipping;    /* after a refused section header: its keys are left out */
};

/* libinih reports keys, not sections; a section header is noted here as an
 * entry with an empty key, so that a section with no keys still exists
 * ([layer sidecar] alone is a layer with defaults) and a misspelt empty
 * section is still reported. */
static void note_section_header(struct reader *r, const char *line)
{
    while (*line == ' ' || *line == '\t')
        line++;
    if (*line != '[' || r->es == NULL)
        return;
    const char *end = strchr(line, ']');
    if (end == NULL)
        return; /* libinih reports the malformed line */
    const char *start = line + 1;
    while (start < end && (*start == ' ' || *start == '\t'))
        start++;
    while (end > start && (end[-1] == ' ' || end[-1] == '\t'))
        end--;
    struct entry *e = entries_add(r->es);
    copy_clipped(e->section, sizeof e->section, start, (size_t)(end - start));
    snprintf(r->section, sizeof r->section, "%s", e->section);
    r->skipping = false;
    e->source = r->source;
    e->line = r->line;
}

static int next_char(struct reader *r)
{
    if (r->f != NULL)
        return fgetc(r->f);
    return *r->s != '\0' ? (unsigned char)*r->s++ : EOF;
}

/* The length of the first (at most) max characters of s without the
 * blanks that end them. */
static int excerpt(const char *s, int max)
{
    int n = 0;
    for (int i = 0; i < max && s[i] != '\0'; i++)
        if (s[i] != ' ' && s[i] != '\t')
            n = i + 1;
    return n;
}

/* "[section] key = 'value...': " for a message about a line (the section
 * and key when they can be told), or "section header [name...]: ". */
static void describe_line(const struct reader *r, const char *line, char *buf, size_t size)
{
    const char *p = line + strspn(line, " \t");
    size_t k = strcspn(p, "=:");
    const char *sect = r->section, *open = sect[0] ? "[" : "", *close = sect[0] ? "] " : "";
    if (*p == '[') {
        snprintf(buf, size, "section header %.*s...: ", excerpt(p, 40), p);
    } else if (p[k] == '\0') {
        snprintf(buf, size, "%s%s%s", open, sect, sect[0] ? "]: " : ""); /* no key in sight */
    } else {
        while (k > 0 && (p[k - 1] == ' ' || p[k - 1] == '\t'))
            k--;
        const char *v = p + k + strspn(p + k, " \t=:");
        snprintf(buf, size, "%s%s%s%.*s = '%.*s...': ", open, sect, close, (int)(k < 63 ? k : 63), p,
                 excerpt(v, 24), v);
    }
}

/* A line longer than SCENARIO_MAX_LINE: reported, and given to libinih
 * blank, so that no part of it is ever taken; after a section header, the
 * section's keys are left out too (they would be taken for the section
 * before it). Whole-line comments may be longer: they mean nothing. */
static void refuse_long_line(struct reader *r, char *line, size_t len)
{
    const char *p = line + strspn(line, " \t");
    if (*p == ';' || *p == '#')
        return;
    char what[200];
    describe_line(r, line, what, sizeof what);
    diag_add(r->diag, "%s:%d: %sthe line is %zu characters long; at most %d are allowed",
             r->source, r->line, what, len, SCENARIO_MAX_LINE);
    if (*p == '[')
        r->skipping = true;
    line[0] = '\0';
}

/* Reads one whole line, however long, so that line numbers stay right and
 * an over-long line is refused, never cut short. */
static char *read_line(char *buf, int size, void *stream)
{
    struct reader *r = stream;
    size_t n = 0, len = 0, keep = (size_t)size - 1;
    int c, last = 0;
    bool nul = false;
    while ((c = next_char(r)) != EOF) {
        if (n < keep)
            buf[n++] = (char)c;
        if (c == '\n')
            break;
        nul = nul || c == '\0';
        len++;
        last = c;
    }
    if (n == 0 && c == EOF)
        return NULL;
    buf[n] = '\0';
    r->line++;
    if (last == '\r')
        len--;
    if (nul) {
        diag_add(r->diag, "%s:%d: the line holds a NUL byte; a scenario file is text", r->source,
                 r->line);
        buf[0] = '\0';
    } else if (len > SCENARIO_MAX_LINE) {
        refuse_long_line(r, buf, len);
    } else if (buf[strspn(buf, " \t")] == '[') {
        note_section_header(r, buf);
    } else if (r->skipping) {
        buf[0] = '\0';
    }
    return buf;
}

struct parse_ctx {
    struct entries *es;
    struct reader *rd;
    const char *source;
};

static int on_entry(void *user, const char *section, const char *name, const char *value)
{
    struct parse_ctx *pc = user;
    if (name == NULL)
        return 1; /* a bare section header */
    struct entry *e = entries_add(pc->es);
    copy_clipped(e->section, sizeof e->section, section, strlen(section));
    copy_clipped(e->key, sizeof e->key, name, strlen(name));
    snprintf(e->value, sizeof e->value, "%s", value ? value : ""); /* SCENARIO_MAX_LINE: it fits */
    e->source = pc->source;
    e->line = pc->rd->line;
    return 1;
}

/* ---- the key table ---- */

/* [server] and [service NAME] share the S_SERVER keys; [server] is [service server]. */
enum sect_kind { S_RUN, S_LOAD, S_SERVER, S_HERD, S_PHASE, S_LAYER, S_SERVICE, S_CACHE, S_NKINDS };
static const char *const sect_names[S_NKINDS] = {"run", "load", "server", "herd", "phase", "layer", "service", "cache"};
#define SECTIONS_ALLOWED "[run] [load] [server] [service NAME] [cache NAME] [phase NAME] [layer NAME]"

enum key_type {
    T_NAME, T_DURATION, T_TIMEOUT, T_SEED, T_RATE, T_UINT, T_DIST, T_QUEUE, T_BACKOFF, T_MULT,
    T_CAP, T_PHASE_RATE, T_FACTOR, T_ENUM, T_BOOL, T_PROB, T_CLASSES, T_LIMIT_STATUS, T_DIST_NONE,
    T_REAL, T_RATE_NONE, T_INSTANCES, T_BUDGET, T_BREAKER, T_WINDOW, T_TIMES, T_CALLS, T_TARGET,
    T_SHAPE, T_PATH, T_POPULARITY, T_NAME_NONE, T_NTYPES
};

struct key_desc {
    enum sect_kind sect;
    const char *key;
    enum key_type type;
    size_t offset; /* in struct scenario, service_cfg, phase_cfg, layer_cfg or cache_cfg */
    long long lo, hi;
    const char *allowed;
    const char *const *names; /* T_ENUM: the allowed words, NULL-terminated; the field is an int-sized enum */
    size_t flag;              /* T_DIST_NONE: offset of the bool saying the value is given */
};

static const char *const model_names[] = {"open", "closed", NULL};
static const char *const arrival_names[] = {"poisson", "uniform", NULL};
static const char *const discipline_names[] = {"fifo", "lifo", NULL};
static const char *const outage_names[] = {"none", "refuse", "hang", "error", NULL};
static const char *const honor_names[] = {"ignore", "honor", NULL};
static const char *const scope_names[] = {"instance", "client", "shared", NULL};
static const char *const server_model_names[] = {"queue", "occ", NULL};
static const char *const balancer_names[] = {"random", "round-robin", "least-outstanding", "p2c", NULL};
static const char *const degrade_names[] = {"linear", "exponential", NULL};

/* Keys that only a service graph uses: giving any of them sets sc->graph
 * (and scenario_write_ini then writes the graph form). */
static const char *const graph_keys[] = {
    "replicas", "balancer", "calls", "service_after", "from", "to", "concurrency",
    "concurrency_queue", "concurrency_wait", "target", "latency", "loss", NULL};

#define RUN(f) offsetof(struct scenario, f)
#define PH(f) offsetof(struct phase_cfg, f)
#define LY(f) offsetof(struct layer_cfg, f)
#define SV(f) offsetof(struct service_cfg, f)
#define CA(f) offsetof(struct cache_cfg, f)

#define DIST_ALLOWED "a distribution such as exp(10ms), or none"
#define PROB_ALLOWED "a probability from 0 to 1"
static const struct key_desc keys[] = {
    {S_RUN, "name", T_NAME, RUN(name), 0, 0, "letters, digits, '-', '_' (at most 47)", NULL, 0},
    {S_RUN, "duration", T_DURATION, RUN(duration), 1, 0, "a duration > 0 such as 300s", NULL, 0},
    {S_RUN, "warmup", T_DURATION, RUN(warmup), 0, 0, "a duration such as 10s, less than duration", NULL, 0},
    {S_RUN, "seed", T_SEED, RUN(seed), 0, 0, "an integer from 0 to 18446744073709551615", NULL, 0},
    {S_RUN, "bucket", T_DURATION, RUN(bucket), 1, 0, "a duration > 0 such as 1s or 10ms", NULL, 0},
    {S_LOAD, "model", T_ENUM, RUN(model), 0, 0, "open, closed", model_names, 0},
    {S_LOAD, "arrival", T_ENUM, RUN(arrival), 0, 0, "poisson, uniform", arrival_names, 0},
    {S_LOAD, "rate", T_RATE, RUN(rate), 0, 0, "a rate > 0 and at most 1e9/s, such as 800/s (units /ns /us /ms /s /m /h)", NULL, 0},
    {S_LOAD, "think", T_DIST, RUN(think), 0, 0, "a distribution such as exp(1s)", NULL, 0},
    {S_LOAD, "clients", T_UINT, RUN(clients), 1, SCENARIO_MAX_CLIENTS, "an integer from 1 to 10000000", NULL, 0},
    {S_LOAD, "idempotent", T_BOOL, RUN(idempotent), 0, 0, "true, false", NULL, 0},
    {S_LOAD, "key", T_BOOL, RUN(key), 0, 0, "true, false", NULL, 0},
    {S_LOAD, "shape", T_SHAPE, RUN(sine_amplitude), 0, 0, "none, or sine(AMPLITUDE, PERIOD) with AMPLITUDE from 0 to 1 and PERIOD a duration of at least 1ms, such as sine(0.5, 24h)", NULL, 0},
    {S_LOAD, "trace", T_PATH, RUN(trace), 0, 0, "a CSV file of t,rate rows or of t timestamps (relative to the scenario file), or none", NULL, 0},
    {S_LOAD, "keys", T_UINT, RUN(keys), 1, SCENARIO_MAX_KEYS, "an integer from 1 to 10000000", NULL, 0},
    {S_LOAD, "popularity", T_POPULARITY, RUN(zipf), 0, 0, "uniform, or zipf(S) with S from 0 (exclusive) to 10, such as zipf(0.8)", NULL, 0},
    {S_SERVER, "model", T_ENUM, SV(model), 0, 0, "queue, occ", server_model_names, 0},
    {S_HERD, "at", T_TIMES, RUN(herds), 0, 0, "durations such as 30s (a list, or one per line)", NULL, 0},
    {S_SERVER, "workers", T_UINT, SV(workers), 1, 1000000, "an integer from 1 to 1000000", NULL, 0},
    {S_SERVER, "queue", T_QUEUE, SV(queue), 0, 1000000000, "an integer from 0 to 1000000000, or unbounded", NULL, 0},
    {S_SERVER, "service", T_DIST, SV(service), 0, 0, "a distribution such as exp(10ms)", NULL, 0},
    {S_SERVER, "discipline", T_ENUM, SV(discipline), 0, 0, "fifo, lifo", discipline_names, 0},
    {S_SERVER, "error_400", T_PROB, SV(p400), 0, 0, PROB_ALLOWED, NULL, 0},
    {S_SERVER, "error_500", T_PROB, SV(p500), 0, 0, PROB_ALLOWED, NULL, 0},
    {S_SERVER, "error_503", T_PROB, SV(p503), 0, 0, PROB_ALLOWED, NULL, 0},
    {S_SERVER, "business", T_PROB, SV(p_business), 0, 0, PROB_ALLOWED, NULL, 0},
    {S_SERVER, "limit_rate", T_RATE_NONE, SV(limit_rate), 0, 0, "a rate such as 500/s, or none", NULL, 0},
    {S_SERVER, "limit_burst", T_UINT, SV(limit_burst), 1, 1000000000, "an integer from 1 to 1000000000", NULL, 0},
    {S_SERVER, "limit_status", T_LIMIT_STATUS, SV(limit_status), 0, 0, "429, 403, 503", NULL, 0},
    {S_SERVER, "limit_retry_after", T_CAP, SV(limit_retry_after), 0, 0, "a duration such as 1s, or none", NULL, 0},
    {S_SERVER, "degrade", T_REAL, SV(degrade), 0, 1000, "a number from 0 to 1000", NULL, 0},
    {S_SERVER, "degrade_shape", T_ENUM, SV(degrade_shape), 0, 0, "linear, exponential", degrade_names, 0},
    {S_SERVER, "cache", T_NAME_NONE, SV(cache), 0, 0, "a cache's name (a [cache NAME] section), or none", NULL, 0},
    {S_SERVER, "drop_expired", T_BOOL, SV(drop_expired), 0, 0, "true, false", NULL, 0},
    {S_SERVER, "dedup", T_BOOL, SV(dedup), 0, 0, "true, false", NULL, 0},
    {S_SERVER, "replay", T_DIST, SV(replay), 0, 0, "a distribution such as const(1ms)", NULL, 0},
    {S_SERVER, "replicas", T_UINT, SV(replicas), 1, SCENARIO_MAX_REPLICAS, "an integer from 1 to 1000", NULL, 0},
    {S_SERVER, "balancer", T_ENUM, SV(balancer), 0, 0, "random, round-robin, least-outstanding, p2c", balancer_names, 0},
    {S_SERVER, "calls", T_CALLS, SV(calls), 1, SCENARIO_MAX_FANOUT, "service names such as db or db*3 (at most 8, k from 1 to 64), or none", NULL, 0},
    {S_SERVER, "service_after", T_DIST_NONE, SV(service_after), 0, 0, DIST_ALLOWED, NULL, SV(has_after)},
    {S_PHASE, "start", T_DURATION, PH(start), 0, 0, "a duration such as 60s", NULL, 0},
    {S_PHASE, "end", T_DURATION, PH(end), 0, 0, "a duration after start, such as 70s", NULL, 0},
    {S_PHASE, "rate", T_PHASE_RATE, PH(rate), 0, 0, "a factor such as x2, a rate such as 1600/s, or ramp(A, B) of two factors or two rates, such as ramp(40/s, 80/s)", NULL, 0},
    {S_PHASE, "capacity", T_FACTOR, PH(capacity), 0, 0, "a factor from 0 to 1000 such as 0.5 or x0.5", NULL, 0},
    {S_PHASE, "outage", T_ENUM, PH(outage), 0, 0, "none, refuse, hang, error", outage_names, 0},
    {S_PHASE, "retry_after", T_CAP, PH(retry_after), 0, 0, "a duration such as 5s, or none", NULL, 0},
    {S_PHASE, "slowdown", T_REAL, PH(slowdown), 0, 1000, "a factor from 0 to 1000 on service times", NULL, 0},
    {S_PHASE, "target", T_TARGET, PH(target), 1, SCENARIO_MAX_REPLICAS, "a service, a service's replica SERVICE#i (from 1), a layer, or a cache", NULL, 0},
    {S_PHASE, "flush", T_NAME, PH(flush), 0, 0, "a cache's name: it is emptied when the phase starts", NULL, 0},
    {S_PHASE, "latency", T_DIST_NONE, PH(latency), 0, 0, DIST_ALLOWED, NULL, PH(has_latency)},
    {S_PHASE, "loss", T_PROB, PH(loss), 0, 0, PROB_ALLOWED, NULL, 0},
    {S_LAYER, "attempts", T_UINT, LY(attempts), 1, 100, "an integer from 1 to 100 (including the first attempt)", NULL, 0},
    {S_LAYER, "timeout", T_TIMEOUT, LY(timeout), 0, 0, "a duration > 0 such as 200ms, or none", NULL, 0},
    {S_LAYER, "backoff", T_BACKOFF, LY(backoff), 0, 0, "a backoff kind or a preset (see 'retrystorm list presets')", NULL, 0},
    {S_LAYER, "base", T_DURATION, LY(bp.base), 0, 0, "a duration such as 10ms", NULL, 0},
    {S_LAYER, "multiplier", T_MULT, LY(bp.multiplier), 0, 0, "a number from 1 to 1000", NULL, 0},
    {S_LAYER, "cap", T_CAP, LY(bp.cap), 0, 0, "a duration such as 20s, or none", NULL, 0},
    {S_LAYER, "jitter", T_REAL, LY(bp.jitter), 0, 1, "a number from 0 to 1", NULL, 0},
    {S_LAYER, "retry_on", T_CLASSES, LY(retry_on), 0, 0, "classes among timeout conn 400 403 404 409 429 500 502 503 504 deadline bulkhead, or none", NULL, 0},
    {S_LAYER, "retry_after", T_ENUM, LY(retry_after), 0, 0, "honor, ignore", honor_names, 0},
    {S_LAYER, "retry_after_max", T_CAP, LY(retry_after_max), 0, 0, "a duration such as 60s, or none", NULL, 0},
    {S_LAYER, "deadline", T_CAP, LY(deadline), 0, 0, "a duration such as 2s, or none", NULL, 0},
    {S_LAYER, "propagate_deadline", T_BOOL, LY(propagate_deadline), 0, 0, "true, false", NULL, 0},
    {S_LAYER, "request_latency", T_DIST_NONE, LY(request_latency), 0, 0, DIST_ALLOWED, NULL, LY(has_request_latency)},
    {S_LAYER, "response_latency", T_DIST_NONE, LY(response_latency), 0, 0, DIST_ALLOWED, NULL, LY(has_response_latency)},
    {S_LAYER, "request_loss", T_PROB, LY(request_loss), 0, 0, PROB_ALLOWED, NULL, 0},
    {S_LAYER, "response_loss", T_PROB, LY(response_loss), 0, 0, PROB_ALLOWED, NULL, 0},
    {S_LAYER, "instances", T_INSTANCES, LY(instances), 1, 1000000, "per-client, or an integer from 1 to 1000000", NULL, 0},
    {S_LAYER, "budget", T_BUDGET, LY(budget), 0, 0, "", NULL, 0},
    {S_LAYER, "budget_scope", T_ENUM, LY(budget_scope), 0, 0, "instance, client, shared", scope_names, 0},
    {S_LAYER, "budget_max_tokens", T_REAL, LY(budget_p.max_tokens), 0, 1000, "a number from 0 to 1000", NULL, 0},
    {S_LAYER, "budget_token_ratio", T_REAL, LY(budget_p.token_ratio), 0, 1000, "a number from 0 to 1000", NULL, 0},
    {S_LAYER, "budget_percent", T_PROB, LY(budget_p.percent), 0, 0, "a fraction from 0 to 1 (0.2 is 20 %)", NULL, 0},
    {S_LAYER, "budget_min_per_s", T_REAL, LY(budget_p.min_per_s), 0, 1000000, "a number from 0 to 1000000", NULL, 0},
    {S_LAYER, "budget_ttl", T_DURATION, LY(budget_p.ttl), 0, 0, "a duration such as 10s", NULL, 0},
    {S_LAYER, "budget_min_concurrency", T_REAL, LY(budget_p.min_concurrency), 0, 1000000, "a number from 0 to 1000000", NULL, 0},
    {S_LAYER, "budget_capacity", T_REAL, LY(budget_p.capacity), 0, 1000000000, "a number from 0 to 1000000000", NULL, 0},
    {S_LAYER, "budget_cost", T_REAL, LY(budget_p.cost), 0, 1000000, "a number from 0 to 1000000", NULL, 0},
    {S_LAYER, "budget_timeout_cost", T_REAL, LY(budget_p.timeout_cost), 0, 1000000, "a number from 0 to 1000000", NULL, 0},
    {S_LAYER, "budget_deposit", T_REAL, LY(budget_p.deposit), 0, 1000000, "a number from 0 to 1000000", NULL, 0},
    {S_LAYER, "budget_deposit_on_success", T_BOOL, LY(budget_p.deposit_on_success), 0, 0, "true, false", NULL, 0},
    {S_LAYER, "budget_k", T_REAL, LY(budget_p.k), 0, 1000, "a number from 0 to 1000", NULL, 0},
    {S_LAYER, "breaker", T_BREAKER, LY(breaker), 0, 0, "", NULL, 0},
    {S_LAYER, "breaker_scope", T_ENUM, LY(breaker_scope), 0, 0, "instance, client, shared", scope_names, 0},
    {S_LAYER, "breaker_failures", T_UINT, LY(breaker_p.failures), 0, 1000000, "an integer from 0 to 1000000", NULL, 0},
    {S_LAYER, "breaker_open_for", T_DURATION, LY(breaker_p.open_for), 0, 0, "a duration such as 60s", NULL, 0},
    {S_LAYER, "breaker_probes", T_UINT, LY(breaker_p.probes), 1, 1000000, "an integer from 1 to 1000000", NULL, 0},
    {S_LAYER, "breaker_window", T_WINDOW, LY(breaker_p.window_calls), 1, BREAKER_MAX_WINDOW_CALLS, "a number of calls from 1 to 1000, or a duration such as 10s", NULL, 0},
    {S_LAYER, "breaker_min_calls", T_UINT, LY(breaker_p.min_calls), 0, 1000000, "an integer from 0 to 1000000", NULL, 0},
    {S_LAYER, "breaker_failure_rate", T_PROB, LY(breaker_p.failure_rate), 0, 0, PROB_ALLOWED, NULL, 0},
    {S_LAYER, "breaker_slow_rate", T_PROB, LY(breaker_p.slow_rate), 0, 0, PROB_ALLOWED, NULL, 0},
    {S_LAYER, "breaker_slow_call", T_CAP, LY(breaker_p.slow_call), 0, 0, "a duration such as 60s, or none", NULL, 0},
    {S_LAYER, "breaker_max_failure_ratio", T_PROB, LY(breaker_p.max_failure_ratio), 0, 0, PROB_ALLOWED, NULL, 0},
    {S_LAYER, "from", T_NAME, LY(from), 0, 0, "client, or a service name", NULL, 0},
    {S_LAYER, "to", T_NAME, LY(to), 0, 0, "a service name", NULL, 0},
    {S_LAYER, "concurrency", T_UINT, LY(concurrency), 0, 1000000, "an integer from 0 to 1000000 (0: no limit)", NULL, 0},
    {S_LAYER, "concurrency_queue", T_QUEUE, LY(concurrency_queue), 0, 1000000000, "an integer from 0 to 1000000000, or unbounded", NULL, 0},
    {S_LAYER, "concurrency_wait", T_CAP, LY(concurrency_wait), 0, 0, "a duration such as 100ms, or none", NULL, 0},
    {S_CACHE, "capacity", T_QUEUE, CA(capacity), 1, 1000000000, "an integer from 1 to 1000000000 (entries), or unbounded", NULL, 0},
    {S_CACHE, "ttl", T_CAP, CA(ttl), 0, 0, "a duration such as 30s, or none", NULL, 0},
    {S_CACHE, "ttl_jitter", T_PROB, CA(ttl_jitter), 0, 0, "a fraction from 0 to 1 (each TTL × U(1-F, 1+F))", NULL, 0},
    {S_CACHE, "coalesce", T_BOOL, CA(coalesce), 0, 0, "true, false", NULL, 0},
    {S_CACHE, "hit", T_DIST, CA(hit), 0, 0, "a distribution such as const(1ms)", NULL, 0},
};
#define NKEYS (sizeof keys / sizeof keys[0])


/* ---- defaults ---- */

static void scenario_defaults(struct scenario *sc)
{
    memset(sc, 0, sizeof *sc);
    snprintf(sc->name, sizeof sc->name, "scenario");
    sc->duration = 60 * RS_S;
    sc->warmup = 0;
    sc->bucket = RS_S;
    sc->seed = 1;
    sc->model = LOAD_OPEN;
    sc->arrival = ARRIVAL_POISSON;
    sc->rate = -1.0; /* required for open loop */
    sc->clients = 1000;
    sc->idempotent = true;
    sc->trace_format = TRACE_NONE;
    sc->keys = 1;
}

static void cache_defaults(struct cache_cfg *c, const char *name);

/* Copies a name known to fit (valid_name checked it) into a name field. */
static void copy_name(char *dst, const char *src)
{
    size_t n = strlen(src);
    if (n >= SCENARIO_NAME_MAX)
        n = SCENARIO_NAME_MAX - 1;
    memcpy(dst, src, n);
    dst[n] = '\0';
}

static void service_defaults(struct service_cfg *v, const char *name)
{
    memset(v, 0, sizeof *v);
    copy_name(v->name, name);
    v->workers = 1;
    v->queue = -1;
    v->limit_burst = 1;
    v->limit_status = CLS_429;
    v->limit_retry_after = RS_TIME_NEVER;
    v->replay.kind = DIST_CONST; /* const(0): a replay costs nothing unless stated */
    v->replicas = 1;
    v->balancer = BAL_RANDOM;
    v->cache_index = -1;
}

static void cache_defaults(struct cache_cfg *c, const char *name)
{
    memset(c, 0, sizeof *c);
    copy_name(c->name, name);
    c->capacity = -1;
    c->ttl = RS_TIME_NEVER;
    c->hit.kind = DIST_CONST; /* const(0): a hit answers at once unless stated */
}

static void layer_defaults(struct layer_cfg *l, const char *name)
{
    memset(l, 0, sizeof *l);
    copy_name(l->name, name);
    l->attempts = 1;
    l->timeout = RS_TIME_NEVER;
    l->backoff = backoff_find("none");
    l->bp.base = 0;
    l->bp.multiplier = 2.0;
    l->bp.cap = RS_TIME_NEVER;
    l->retry_on = ERRCLASS_DEFAULT_RETRY;
    l->retry_after_max = RS_TIME_NEVER;
    l->deadline = RS_TIME_NEVER;
    l->instances = 1;
    l->budget = budget_find("none");
    l->breaker = breaker_find("none");
    l->breaker_p.slow_call = RS_TIME_NEVER;
    l->from_service = SCENARIO_CLIENT;
    l->concurrency_wait = RS_TIME_NEVER;
}

/* ---- applying one entry ---- */

static bool valid_name(const char *s)
{
    size_t n = strlen(s);
    if (n == 0 || n >= SCENARIO_NAME_MAX)
        return false;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '-' || c == '_'))
            return false;
    }
    return true;
}

/* Splits "layer app" into kind and name; false with a message if unknown. */
static bool split_section(const char *section, enum sect_kind *kind, char *name, size_t name_size)
{
    char head[96];
    snprintf(head, sizeof head, "%s", section);
    char *sp = strchr(head, ' ');
    const char *rest = "";
    if (sp != NULL) {
        *sp = '\0';
        rest = sp + 1;
        while (*rest == ' ')
            rest++;
    }
    for (int k = 0; k < S_NKINDS; k++) {
        if (strcmp(head, sect_names[k]) == 0) {
            *kind = (enum sect_kind)k;
            snprintf(name, name_size, "%s", rest);
            return true;
        }
    }
    return false;
}

/* The kind whose keys a section takes: [service NAME] takes [server]'s. */
static enum sect_kind key_kind(enum sect_kind k)
{
    return k == S_SERVICE ? S_SERVER : k;
}

static const struct key_desc *find_key(enum sect_kind k, const char *key)
{
    k = key_kind(k);
    for (size_t i = 0; i < NKEYS; i++)
        if (keys[i].sect == k && strcmp(keys[i].key, key) == 0)
            return &keys[i];
    return NULL;
}

static const char *suggest_key(enum sect_kind k, const char *key)
{
    const char *best = NULL;
    size_t bestd = 3;
    k = key_kind(k);
    for (size_t i = 0; i < NKEYS; i++) {
        if (keys[i].sect != k)
            continue;
        size_t d = scenario_edit_distance(key, keys[i].key);
        if (d < bestd) {
            bestd = d;
            best = keys[i].key;
        }
    }
    return best;
}

static void list_keys(enum sect_kind k, char *buf, size_t size)
{
    size_t used = 0;
    buf[0] = '\0';
    k = key_kind(k);
    for (size_t i = 0; i < NKEYS && used < size; i++) {
        if (keys[i].sect != k)
            continue;
        int w = snprintf(buf + used, size - used, "%s%s", used ? ", " : "", keys[i].key);
        if (w < 0)
            break;
        used += (size_t)w;
    }
}

static bool parse_enum(const char *v, const char *const *names, size_t n, int *out)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(v, names[i]) == 0) {
            *out = (int)i;
            return true;
        }
    return false;
}

/* Parses "x2" or "2" as a factor in [0, 1000]. */
static bool parse_factor(const char *v, double *out)
{
    double f;
    if (v[0] == 'x')
        v++;
    if (!units_parse_real(v, &f) || f < 0.0 || f > 1000.0)
        return false;
    *out = f;
    return true;
}

struct apply_ctx {
    struct scenario *sc;
    struct scenario_diag *diag;
    const struct entry *phase_entry[SCENARIO_MAX_PHASES];
    const struct entry *layer_entry[SCENARIO_MAX_LAYERS];
    const struct entry *service_entry[SCENARIO_MAX_SERVICES]; /* NULL: the default service */
    const struct entry *last[NKEYS]; /* the entry that set each unnamed-section key */
    const struct entry *phase_key[SCENARIO_MAX_PHASES][NKEYS];
    const struct entry *layer_key[SCENARIO_MAX_LAYERS][NKEYS];
    const struct entry *service_key[SCENARIO_MAX_SERVICES][NKEYS];
    const struct entry *cache_entry[SCENARIO_MAX_CACHES];
    const struct entry *cache_key[SCENARIO_MAX_CACHES][NKEYS];
    const char *dir; /* the scenario file's directory (traces are relative to it); NULL: text */
    bool graph_ok; /* names resolved and the calls form a DAG: paths may be walked */
};

static bool phase_given(const struct apply_ctx *ac, unsigned i, const char *key)
{
    return ac->phase_key[i][find_key(S_PHASE, key) - keys] != NULL;
}

/* The entry that set key of phase, layer or service i, or NULL. */
static const struct entry *key_entry(const struct apply_ctx *ac, enum sect_kind k, unsigned i,
                                     const char *key)
{
    const struct key_desc *kd = find_key(k, key);
    if (kd == NULL)
        return NULL;
    size_t j = (size_t)(kd - keys);
    return k == S_PHASE   ? ac->phase_key[i][j]
           : k == S_LAYER ? ac->layer_key[i][j]
           : k == S_CACHE ? ac->cache_key[i][j]
                          : ac->service_key[i][j];
}

/* Where key of phase, layer or service i was set, or else its section
 * header (the file itself for the default service). */
static const char *key_where(const struct apply_ctx *ac, enum sect_kind k, unsigned i,
                             const char *key, char *buf, size_t size)
{
    const struct entry *e = key_entry(ac, k, i, key);
    if (e == NULL)
        e = k == S_PHASE   ? ac->phase_entry[i]
            : k == S_LAYER ? ac->layer_entry[i]
            : k == S_CACHE ? ac->cache_entry[i]
                           : ac->service_entry[i];
    if (e == NULL) {
        snprintf(buf, size, "%s", ac->sc->source);
        return buf;
    }
    return where(e, buf, size);
}

/* The section service i was written as, for messages: [server], or
 * [service NAME] (as written by the entry that set key, when it was). */
static const char *service_section(const struct apply_ctx *ac, unsigned i, const char *key,
                                   char *buf, size_t size)
{
    const struct entry *e = key ? key_entry(ac, S_SERVICE, i, key) : NULL;
    if (e == NULL)
        e = ac->service_entry[i];
    if (e == NULL || strcmp(e->section, "server") == 0) /* the default service is `server` */
        snprintf(buf, size, "server");
    else
        snprintf(buf, size, "service %s", ac->sc->services[i].name);
    return buf;
}

/* Whether key of service i was given (in the file or by --set). */
static bool service_given(const struct apply_ctx *ac, unsigned i, const char *key)
{
    return key_entry(ac, S_SERVICE, i, key) != NULL;
}

/* Where key of service i was set, or the file itself if it kept its default. */
static const char *service_at(const struct apply_ctx *ac, unsigned i, const char *key, char *buf,
                              size_t size)
{
    const struct entry *e = key_entry(ac, S_SERVICE, i, key);
    if (e == NULL) {
        snprintf(buf, size, "%s", ac->sc->source);
        return buf;
    }
    return where(e, buf, size);
}

/* Whether an unnamed-section key was given at all (valid or not). */
static bool given(const struct apply_ctx *ac, enum sect_kind k, const char *key)
{
    for (size_t i = 0; i < NKEYS; i++)
        if (keys[i].sect == k && strcmp(keys[i].key, key) == 0)
            return ac->last[i] != NULL;
    return false;
}

/* Where the key was set, or the file itself if it kept its default. */
static const char *at(const struct apply_ctx *ac, const char *key, char *buf, size_t size)
{
    for (size_t i = 0; i < NKEYS; i++)
        if (strcmp(keys[i].key, key) == 0 && keys[i].sect <= S_HERD && ac->last[i] != NULL)
            return where(ac->last[i], buf, size);
    snprintf(buf, size, "%s", ac->sc->source);
    return buf;
}

static void bad(struct apply_ctx *ac, const struct entry *e, const char *allowed)
{
    char w[400];
    diag_add(ac->diag, "%s: [%s] %s = '%s': expected %s", where(e, w, sizeof w), e->section,
             e->key, e->value, allowed);
}

/* The names of the backoff kinds, budgets or breakers, for messages. */
static void kind_names(enum key_type t, char *buf, size_t size)
{
    unsigned n = t == T_BACKOFF ? backoff_nkinds : t == T_BUDGET ? budget_nkinds : breaker_nkinds;
    size_t used = 0;
    buf[0] = '\0';
    for (unsigned i = 0; i < n && used < size; i++) {
        const char *name = t == T_BACKOFF  ? backoff_kinds[i].name
                           : t == T_BUDGET ? budget_kinds[i].name
                                           : breaker_kinds[i].name;
        int w = snprintf(buf + used, size - used, "%s%s", i ? ", " : "", name);
        used += w > 0 ? (size_t)w : 0;
    }
}

/* What a value parser found: the value is stored (V_OK), is not one the
 * key allows (V_BAD: the caller says "expected <allowed>"), or was
 * reported with more detail (V_SAID). */
enum verdict { V_OK, V_BAD, V_SAID };

/* A value to parse: the key, its entry, and where it goes. */
struct value_in {
    struct apply_ctx *ac;
    const struct entry *e;
    const struct key_desc *kd;
    void *base;  /* the struct the key lives in: scenario, phase_cfg or layer_cfg */
    void *field; /* base + kd->offset */
    const char *v;
};

/* "expected <allowed> (<why>)", or with a word: "(<'word'> is not one)". */
static enum verdict bad_because(const struct value_in *in, const char *why, bool word)
{
    char allowed[400];
    if (word)
        snprintf(allowed, sizeof allowed, "%s ('%s' is not one)", in->kd->allowed, why);
    else
        snprintf(allowed, sizeof allowed, "%s (%s)", in->kd->allowed, why);
    bad(in->ac, in->e, allowed);
    return V_SAID;
}

static enum verdict p_name(const struct value_in *in)
{
    if (!valid_name(in->v))
        return V_BAD;
    copy_name(in->field, in->v);
    return V_OK;
}

static enum verdict p_duration(const struct value_in *in)
{
    rs_time t;
    if (!units_parse_duration(in->v, &t) || t < in->kd->lo)
        return V_BAD;
    *(rs_time *)in->field = t;
    return V_OK;
}

/* A duration or none (T_CAP), and not 0 (T_TIMEOUT). */
static enum verdict p_timeout(const struct value_in *in)
{
    rs_time t;
    if (strcmp(in->v, "none") == 0)
        t = RS_TIME_NEVER;
    else if (!units_parse_duration(in->v, &t) || (in->kd->type == T_TIMEOUT && t == 0))
        return V_BAD;
    *(rs_time *)in->field = t;
    return V_OK;
}

static enum verdict p_seed(const struct value_in *in)
{
    const char *v = in->v;
    char *end;
    errno = 0;
    if (v[0] == '-' || v[0] == '\0' || v[0] == ' ')
        return V_BAD;
    unsigned long long x = strtoull(v, &end, 10);
    if (*end != '\0' || errno == ERANGE)
        return V_BAD;
    *(uint64_t *)in->field = (uint64_t)x;
    return V_OK;
}

/* A rate above 0 and at most 10^9 per second; or none (T_RATE_NONE: 0). */
static enum verdict p_rate(const struct value_in *in)
{
    double r;
    if (in->kd->type == T_RATE_NONE && strcmp(in->v, "none") == 0)
        r = 0.0;
    else if (!units_parse_rate(in->v, &r) || !(r > 0.0) || r > 1e9)
        return V_BAD;
    *(double *)in->field = r;
    return V_OK;
}

/* An integer in [lo, hi]; or per-client (T_INSTANCES: 0). */
static enum verdict p_uint(const struct value_in *in)
{
    long long n;
    if (in->kd->type == T_INSTANCES && strcmp(in->v, "per-client") == 0)
        n = 0;
    else if (!units_parse_int(in->v, in->kd->lo, in->kd->hi, &n))
        return V_BAD;
    *(unsigned *)in->field = (unsigned)n;
    return V_OK;
}

/* A distribution; or none (T_DIST_NONE, with its flag). */
static enum verdict p_dist(const struct value_in *in)
{
    bool *given = in->kd->type == T_DIST_NONE ? (bool *)((char *)in->base + in->kd->flag) : NULL;
    char why[300];
    struct dist d;
    if (given && strcmp(in->v, "none") == 0) {
        *given = false;
        return V_OK;
    }
    if (!dist_parse(in->v, &d, why, sizeof why))
        return bad_because(in, why, false);
    *(struct dist *)in->field = d;
    if (given)
        *given = true;
    return V_OK;
}

static enum verdict p_enum(const struct value_in *in)
{
    int x;
    size_t n = 0;
    while (in->kd->names[n] != NULL)
        n++;
    if (!parse_enum(in->v, in->kd->names, n, &x))
        return V_BAD;
    *(int *)in->field = x; /* every enum field is int-sized */
    return V_OK;
}

static enum verdict p_bool(const struct value_in *in)
{
    if (strcmp(in->v, "true") != 0 && strcmp(in->v, "false") != 0)
        return V_BAD;
    *(bool *)in->field = strcmp(in->v, "true") == 0;
    return V_OK;
}

/* A number in [lo, hi] (T_REAL), [lo, 1] (T_PROB) or [1, 1000] (T_MULT). */
static enum verdict p_real(const struct value_in *in)
{
    double x, lo = (double)in->kd->lo, hi = (double)in->kd->hi;
    if (in->kd->type == T_PROB)
        hi = 1.0;
    else if (in->kd->type == T_MULT)
        lo = 1.0, hi = 1000.0;
    if (!units_parse_real(in->v, &x) || x < lo || x > hi)
        return V_BAD;
    *(double *)in->field = x;
    return V_OK;
}

static enum verdict p_classes(const struct value_in *in)
{
    char word[64];
    errclass_set set;
    if (!errclass_parse_set(in->v, &set, word, sizeof word))
        return bad_because(in, word, true);
    *(errclass_set *)in->field = set;
    return V_OK;
}

static enum verdict p_limit_status(const struct value_in *in)
{
    enum errclass cls;
    if (!errclass_parse(in->v, &cls) || (cls != CLS_429 && cls != CLS_403 && cls != CLS_503))
        return V_BAD;
    *(enum errclass *)in->field = cls;
    return V_OK;
}

/* A backoff kind, budget or breaker by name; the message lists them all. */
static enum verdict p_kind(const struct value_in *in)
{
    const struct backoff_kind *bo = in->kd->type == T_BACKOFF ? backoff_find(in->v) : NULL;
    const struct budget_kind *bu = in->kd->type == T_BUDGET ? budget_find(in->v) : NULL;
    const struct breaker_kind *br = in->kd->type == T_BREAKER ? breaker_find(in->v) : NULL;
    if (bo == NULL && bu == NULL && br == NULL) {
        char allowed[600];
        kind_names(in->kd->type, allowed, sizeof allowed);
        bad(in->ac, in->e, allowed);
        return V_SAID;
    }
    if (bo) /* each stored through its own type */
        *(const struct backoff_kind **)in->field = bo;
    else if (bu)
        *(const struct budget_kind **)in->field = bu;
    else
        *(const struct breaker_kind **)in->field = br;
    return V_OK;
}

/* breaker_window: a number of calls, or a duration. */
static enum verdict p_window(const struct value_in *in)
{
    struct layer_cfg *l = in->base;
    long long n;
    rs_time t;
    if (units_parse_int(in->v, in->kd->lo, in->kd->hi, &n)) {
        l->breaker_p.window_calls = (unsigned)n;
        l->breaker_p.window = 0;
    } else if (units_parse_duration(in->v, &t) && t > 0) {
        l->breaker_p.window_calls = 0;
        l->breaker_p.window = t;
    } else {
        return V_BAD;
    }
    return V_OK;
}

/* [herd] at: appends, so that several `at` lines and lists add up. */
static enum verdict p_times(const struct value_in *in)
{
    char buf[SCENARIO_MAX_LINE + 260]; /* a line, or a --set value */
    snprintf(buf, sizeof buf, "%s", in->v);
    bool any = false;
    char *save = NULL;
    for (char *tok = strtok_r(buf, " ,\t", &save); tok != NULL; tok = strtok_r(NULL, " ,\t", &save)) {
        rs_time t;
        any = true;
        if (!units_parse_duration(tok, &t))
            return V_BAD;
        if (in->ac->sc->nherds == SCENARIO_MAX_HERDS) {
            char w[400];
            diag_add(in->ac->diag, "%s: [herd] too many instants (limit is %d)", where(in->e, w, sizeof w),
                     SCENARIO_MAX_HERDS);
            return V_SAID;
        }
        in->ac->sc->herds[in->ac->sc->nherds++] = t;
    }
    return any ? V_OK : V_BAD;
}

static enum verdict p_queue(const struct value_in *in)
{
    long long n;
    if (strcmp(in->v, "unbounded") == 0)
        n = -1;
    else if (!units_parse_int(in->v, in->kd->lo, in->kd->hi, &n))
        return V_BAD;
    *(long long *)in->field = n;
    return V_OK;
}

/* One word of `calls`: DEP or DEP*k; false (and why) when it is not one. */
static bool parse_call(const struct value_in *in, char *tok, struct dep_cfg *dep, char *why,
                       size_t size)
{
    char *star = strchr(tok, '*');
    long long k = 1;
    if (star != NULL) {
        *star = '\0';
        if (!units_parse_int(star + 1, in->kd->lo, in->kd->hi, &k)) {
            snprintf(why, size, "'%s*%s': k must be an integer from %lld to %lld", tok, star + 1,
                     in->kd->lo, in->kd->hi);
            return false;
        }
    }
    if (!valid_name(tok)) {
        snprintf(why, size, "'%s' is not a service name", tok);
        return false;
    }
    memset(dep, 0, sizeof *dep);
    copy_name(dep->name, tok);
    dep->fanout = (unsigned)k;
    return true;
}

/* A service's calls: "db cache*3", comma- or space-separated, or none. The
 * names are resolved when the whole scenario is read. */
static enum verdict p_calls(const struct value_in *in)
{
    struct service_cfg *v = in->base;
    struct dep_cfg calls[SCENARIO_MAX_CALLS];
    char buf[SCENARIO_MAX_LINE + 260], why[200];
    unsigned n = 0;
    bool none = false, any = false;
    snprintf(buf, sizeof buf, "%s", in->v);
    char *save = NULL;
    for (char *tok = strtok_r(buf, " ,\t", &save); tok != NULL; tok = strtok_r(NULL, " ,\t", &save)) {
        any = true;
        if (strcmp(tok, "none") == 0) {
            none = true;
            continue;
        }
        if (n == SCENARIO_MAX_CALLS)
            return bad_because(in, "more than 8 calls", false);
        if (!parse_call(in, tok, &calls[n], why, sizeof why))
            return bad_because(in, why, false);
        n++;
    }
    if (!any || (none && n > 0))
        return any ? bad_because(in, "none, with calls", true) : V_BAD;
    memset(v->calls, 0, sizeof v->calls);
    memcpy(v->calls, calls, n * sizeof calls[0]);
    v->ncalls = n;
    return V_OK;
}

/* A phase's target: NAME or NAME#i; resolved when the whole scenario is read. */
static enum verdict p_target(const struct value_in *in)
{
    char name[SCENARIO_NAME_MAX + 8];
    long long i;
    size_t n = strcspn(in->v, "#");
    if (n >= SCENARIO_NAME_MAX)
        return V_BAD;
    memcpy(name, in->v, n);
    name[n] = '\0';
    if (!valid_name(name))
        return V_BAD;
    if (in->v[n] == '#' && !units_parse_int(in->v + n + 1, in->kd->lo, in->kd->hi, &i))
        return bad_because(in, "a replica is numbered from 1 to 1000", false);
    struct phase_cfg *p = in->base;
    if (strlen(in->v) >= sizeof p->target)
        return V_BAD;
    snprintf(p->target, sizeof p->target, "%s", in->v);
    return V_OK;
}

/* One rate of a phase: a factor x2 (*factor set), or an absolute rate. */
static bool parse_phase_rate(const char *v, double *x, bool *factor)
{
    *factor = v[0] == 'x';
    if (*factor)
        return parse_factor(v, x);
    return units_parse_rate(v, x) && *x <= 1e9;
}

/* Splits "NAME(A, B)" into its two arguments (spaces around them
 * dropped); false when v is not that shape. */
static bool split_call2(const char *v, const char *name, char *a, char *b, size_t size)
{
    size_t n = strlen(name), len = strlen(v);
    if (strncmp(v, name, n) != 0 || v[n] != '(' || len < n + 2 || v[len - 1] != ')')
        return false;
    const char *args = v + n + 1, *comma = strchr(args, ',');
    if (comma == NULL)
        return false;
    const char *end = v + len - 1;
    while (*args == ' ')
        args++;
    const char *a_end = comma, *b_start = comma + 1;
    while (a_end > args && a_end[-1] == ' ')
        a_end--;
    while (*b_start == ' ')
        b_start++;
    while (end > b_start && end[-1] == ' ')
        end--;
    if ((size_t)(a_end - args) >= size || (size_t)(end - b_start) >= size)
        return false;
    snprintf(a, size, "%.*s", (int)(a_end - args), args);
    snprintf(b, size, "%.*s", (int)(end - b_start), b_start);
    return true;
}

/* A phase's rate: a factor x2, an absolute rate, or ramp(A, B) of two of
 * the same kind. */
static enum verdict p_phase_rate(const struct value_in *in)
{
    struct phase_cfg *p = in->base;
    char a[64], b[64];
    double x, y;
    bool fa, fb;
    p->ramp = split_call2(in->v, "ramp", a, b, sizeof a);
    if (p->ramp) {
        if (!parse_phase_rate(a, &x, &fa) || !parse_phase_rate(b, &y, &fb))
            return V_BAD;
        if (fa != fb)
            return bad_because(in, "both ends must be factors, or both rates", false);
        p->rate_to = y;
    } else if (!parse_phase_rate(in->v, &x, &fa)) {
        return V_BAD;
    }
    p->rate = x;
    p->rate_is_factor = fa;
    p->has_rate = true;
    return V_OK;
}

/* [load] shape: none, or sine(AMPLITUDE, PERIOD). */
static enum verdict p_shape(const struct value_in *in)
{
    struct scenario *sc = in->base;
    char a[64], b[64];
    double amp;
    rs_time period;
    if (strcmp(in->v, "none") == 0) {
        sc->sine_amplitude = 0.0;
        sc->sine_period = 0;
        return V_OK;
    }
    if (!split_call2(in->v, "sine", a, b, sizeof a) || !units_parse_real(a, &amp) ||
        !units_parse_duration(b, &period))
        return V_BAD;
    if (amp < 0.0 || amp > 1.0)
        return bad_because(in, "the amplitude must be from 0 to 1: a rate is never negative", false);
    if (period < RS_MS)
        return bad_because(in, "the period must be at least 1ms", false);
    sc->sine_amplitude = amp;
    sc->sine_period = period;
    return V_OK;
}

/* [load] trace: a path of printable characters, or none. */
static enum verdict p_path(const struct value_in *in)
{
    size_t n = strlen(in->v);
    if (n == 0 || n >= SCENARIO_PATH_MAX)
        return V_BAD;
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)in->v[i] < 0x20 || in->v[i] == 0x7f)
            return V_BAD;
    snprintf(in->field, SCENARIO_PATH_MAX, "%s", strcmp(in->v, "none") == 0 ? "" : in->v);
    return V_OK;
}

/* [load] popularity: uniform, or zipf(S). */
static enum verdict p_popularity(const struct value_in *in)
{
    double x;
    size_t n = strlen(in->v);
    if (strcmp(in->v, "uniform") == 0) {
        *(double *)in->field = 0.0;
        return V_OK;
    }
    if (n < 6 || strncmp(in->v, "zipf(", 5) != 0 || in->v[n - 1] != ')')
        return V_BAD;
    char num[64];
    if (n - 6 >= sizeof num)
        return V_BAD;
    snprintf(num, sizeof num, "%.*s", (int)(n - 6), in->v + 5);
    if (!units_parse_real(num, &x) || !(x > 0.0) || x > 10.0)
        return V_BAD;
    *(double *)in->field = x;
    return V_OK;
}

/* A name, or none (an empty name). */
static enum verdict p_name_none(const struct value_in *in)
{
    if (strcmp(in->v, "none") == 0) {
        ((char *)in->field)[0] = '\0';
        return V_OK;
    }
    return p_name(in);
}

static enum verdict p_factor(const struct value_in *in)
{
    struct phase_cfg *p = in->base;
    double x;
    if (!parse_factor(in->v, &x))
        return V_BAD;
    p->capacity = x;
    p->has_capacity = true;
    return V_OK;
}

/* The parser of each key type. */
static enum verdict (*const value_parsers[])(const struct value_in *) = {
    [T_NAME] = p_name,         [T_DURATION] = p_duration,   [T_TIMEOUT] = p_timeout,
    [T_CAP] = p_timeout,       [T_SEED] = p_seed,           [T_RATE] = p_rate,
    [T_RATE_NONE] = p_rate,    [T_UINT] = p_uint,           [T_INSTANCES] = p_uint,
    [T_DIST] = p_dist,         [T_DIST_NONE] = p_dist,      [T_ENUM] = p_enum,
    [T_BOOL] = p_bool,         [T_PROB] = p_real,           [T_REAL] = p_real,
    [T_MULT] = p_real,         [T_CLASSES] = p_classes,     [T_LIMIT_STATUS] = p_limit_status,
    [T_BACKOFF] = p_kind,      [T_BUDGET] = p_kind,         [T_BREAKER] = p_kind,
    [T_WINDOW] = p_window,     [T_TIMES] = p_times,         [T_QUEUE] = p_queue,
    [T_PHASE_RATE] = p_phase_rate, [T_FACTOR] = p_factor,   [T_CALLS] = p_calls,
    [T_TARGET] = p_target,     [T_SHAPE] = p_shape,         [T_PATH] = p_path,
    [T_POPULARITY] = p_popularity, [T_NAME_NONE] = p_name_none,
};
_Static_assert(sizeof value_parsers / sizeof *value_parsers == T_NTYPES,
               "a parser for every key type");

static void apply_value(struct apply_ctx *ac, const struct entry *e, const struct key_desc *kd,
                        void *base)
{
    struct value_in in = {ac, e, kd, base, (char *)base + kd->offset, e->value};
    if (value_parsers[kd->type](&in) == V_BAD)
        bad(ac, e, kd->allowed);
}

/* The name of phase, layer, cache or service i. */
static const char *item_name(const struct scenario *sc, enum sect_kind kind, unsigned i)
{
    return kind == S_PHASE   ? sc->phases[i].name
           : kind == S_LAYER ? sc->layers[i].name
           : kind == S_CACHE ? sc->caches[i].name
                             : sc->services[i].name;
}

/* Adds phase, layer or service n (the next one) with its defaults. */
static void add_item(struct apply_ctx *ac, const struct entry *e, enum sect_kind kind,
                     const char *name)
{
    struct scenario *sc = ac->sc;
    if (kind == S_PHASE) {
        struct phase_cfg *p = &sc->phases[sc->nphases];
        memset(p, 0, sizeof *p);
        copy_name(p->name, name);
        p->retry_after = RS_TIME_NEVER;
        p->slowdown = 1.0;
        p->flush_cache = -1;
        ac->phase_entry[sc->nphases++] = e;
    } else if (kind == S_CACHE) {
        cache_defaults(&sc->caches[sc->ncaches], name);
        ac->cache_entry[sc->ncaches++] = e;
    } else if (kind == S_LAYER) {
        layer_defaults(&sc->layers[sc->nlayers], name);
        ac->layer_entry[sc->nlayers++] = e;
    } else {
        service_defaults(&sc->services[sc->nservices], name);
        ac->service_entry[sc->nservices++] = e;
    }
}

/* The index of the phase, layer or service called name, created with its
 * defaults if it is new; -1, after a message, when there are too many. */
static int find_or_add(struct apply_ctx *ac, const struct entry *e, enum sect_kind kind,
                       const char *name)
{
    struct scenario *sc = ac->sc;
    unsigned n = kind == S_PHASE   ? sc->nphases
                 : kind == S_LAYER ? sc->nlayers
                 : kind == S_CACHE ? sc->ncaches
                                   : sc->nservices;
    unsigned max = kind == S_PHASE   ? SCENARIO_MAX_PHASES
                   : kind == S_LAYER ? SCENARIO_MAX_LAYERS
                   : kind == S_CACHE ? SCENARIO_MAX_CACHES
                                     : SCENARIO_MAX_SERVICES;
    for (unsigned i = 0; i < n; i++)
        if (strcmp(item_name(sc, kind, i), name) == 0)
            return (int)i;
    if (n == max) {
        char w[400];
        diag_add(ac->diag, "%s: too many %ss (limit is %u)", where(e, w, sizeof w),
                 sect_names[kind], max);
        return -1;
    }
    add_item(ac, e, kind, name);
    return (int)n;
}

static bool is_graph_key(const char *key)
{
    for (const char *const *g = graph_keys; *g != NULL; g++)
        if (strcmp(*g, key) == 0)
            return true;
    return false;
}

/* Whether the entry names a key that its section (of a known kind) does not have. */
static bool key_unknown(enum sect_kind kind, const struct entry *e)
{
    return e->key[0] != '\0' && find_key(kind, e->key) == NULL;
}

/* An unknown section, with a suggestion when one is close. */
static void unknown_section(struct apply_ctx *ac, const struct entry *e)
{
    char w[400], head[96];
    const char *best = NULL;
    size_t bestd = 3;
    snprintf(head, sizeof head, "%s", e->section);
    char *sp = strchr(head, ' ');
    if (sp)
        *sp = '\0';
    for (int k = 0; k < S_NKINDS; k++) {
        size_t d = scenario_edit_distance(head, sect_names[k]);
        if (d < bestd) {
            bestd = d;
            best = sect_names[k];
        }
    }
    if (best)
        diag_add(ac->diag, "%s: unknown section [%s] (did you mean [%s%s]?); allowed: " SECTIONS_ALLOWED,
                 where(e, w, sizeof w), e->section, best, sp ? " ..." : "");
    else
        diag_add(ac->diag, "%s: unknown section [%s]; allowed: " SECTIONS_ALLOWED,
                 where(e, w, sizeof w), e->section);
}

/* An unknown key, with a suggestion when one is close, and the list. */
static void unknown_key(struct apply_ctx *ac, const struct entry *e, enum sect_kind kind)
{
    char w[400], list[1400];
    const char *s = suggest_key(kind, e->key);
    list_keys(kind, list, sizeof list);
    if (s)
        diag_add(ac->diag, "%s: [%s] unknown key '%s' (did you mean '%s'?); allowed: %s",
                 where(e, w, sizeof w), e->section, e->key, s, list);
    else
        diag_add(ac->diag, "%s: [%s] unknown key '%s'; allowed: %s", where(e, w, sizeof w),
                 e->section, e->key, list);
}

/* The struct a key of a named section (or of [server]) goes into, noting
 * which entry set it; NULL when there are too many such sections or the
 * entry is the section header (which still creates the section). */
static void *named_base(struct apply_ctx *ac, const struct entry *e, enum sect_kind kind,
                        const char *name, const struct key_desc *kd)
{
    struct scenario *sc = ac->sc;
    int i = find_or_add(ac, e, kind, name);
    if (i < 0 || kd == NULL)
        return NULL;
    size_t j = (size_t)(kd - keys);
    if (kind == S_PHASE) {
        ac->phase_key[i][j] = e;
        return &sc->phases[i];
    }
    if (kind == S_LAYER) {
        ac->layer_key[i][j] = e;
        return &sc->layers[i];
    }
    if (kind == S_CACHE) {
        ac->cache_key[i][j] = e;
        return &sc->caches[i];
    }
    ac->service_key[i][j] = e;
    return &sc->services[i];
}

/* Applies one entry; problems with the section itself are reported only on
 * its first entry (first_in_section), not once per key. */
static void apply_entry(struct apply_ctx *ac, const struct entry *e, bool first_in_section)
{
    char w[400], name[96];
    enum sect_kind kind;
    bool known = split_section(e->section, &kind, name, sizeof name);
    bool named = known && (kind == S_PHASE || kind == S_LAYER || kind == S_SERVICE || kind == S_CACHE);
    if (!first_in_section && (!known || (named && !valid_name(name)) || (!named && name[0])))
        return;
    if ((!known || key_unknown(kind, e)) && diag_skip(ac->diag))
        return; /* only counted: no need for a suggestion */
    if (!known) {
        unknown_section(ac, e);
        return;
    }
    if (named && !valid_name(name)) {
        diag_add(ac->diag, "%s: section [%s] needs a name: [%s NAME], NAME of letters, digits, '-', '_' (at most 47)",
                 where(e, w, sizeof w), e->section, sect_names[kind]);
        return;
    }
    if (!named && name[0] != '\0') {
        diag_add(ac->diag, "%s: section [%s] takes no name; write [%s]", where(e, w, sizeof w),
                 e->section, sect_names[kind]);
        return;
    }
    const struct key_desc *kd = e->key[0] ? find_key(kind, e->key) : NULL;
    if (kd == NULL && e->key[0] != '\0') {
        unknown_key(ac, e, kind);
        return;
    }
    /* [service server] with [server]'s keys is the shorthand itself: not a graph */
    if ((kind == S_SERVICE && strcmp(name, "server") != 0) || (kd != NULL && is_graph_key(kd->key)))
        ac->sc->graph = true;
    void *base = ac->sc;
    if (named || kind == S_SERVER) {
        base = named_base(ac, e, kind == S_SERVER ? S_SERVICE : kind, named ? name : "server", kd);
        if (base == NULL)
            return;
    } else if (kd == NULL) {
        return; /* the section header of [run] or [load] */
    } else {
        ac->last[kd - keys] = e;
    }
    apply_value(ac, e, kd, base);
}

/* Whether key of layer i was written (in the file or by --set). */
static bool layer_given(const struct apply_ctx *ac, unsigned i, const char *key)
{
    return ac->layer_key[i][find_key(S_LAYER, key) - keys] != NULL;
}

/* The size of the field a key of this type writes. */
static size_t field_size(enum key_type t)
{
    switch (t) {
    case T_REAL:
    case T_PROB:
        return sizeof(double);
    case T_DURATION:
    case T_CAP:
        return sizeof(rs_time);
    case T_UINT:
        return sizeof(unsigned);
    case T_BOOL:
        return sizeof(bool);
    case T_WINDOW: /* window_calls; the duration beside it is copied with it below */
        return sizeof(unsigned);
    default:
        return 0;
    }
}

/* For every layer key whose field lies in [lo, lo + size) of layer i and
 * that the scenario did not write, takes the value from defaults (a
 * budget's or breaker's parameter block). */
static void default_params(struct apply_ctx *ac, unsigned i, size_t lo, size_t size,
                           const void *defaults)
{
    char *layer = (char *)&ac->sc->layers[i];
    for (size_t j = 0; j < NKEYS; j++) {
        const struct key_desc *kd = &keys[j];
        if (kd->sect != S_LAYER || kd->offset < lo || kd->offset >= lo + size ||
            ac->layer_key[i][j] != NULL)
            continue;
        memcpy(layer + kd->offset, (const char *)defaults + (kd->offset - lo), field_size(kd->type));
        if (kd->type == T_WINDOW)
            ac->sc->layers[i].breaker_p.window = ((const struct breaker_params *)defaults)->window;
    }
}

/* Fills in what layer i's backoff kind or preset brings, for every key the
 * scenario did not write: explicit keys override a preset's values. */
static void apply_kind_defaults(struct apply_ctx *ac, unsigned i)
{
    struct layer_cfg *l = &ac->sc->layers[i];
    const struct backoff_kind *k = l->backoff;
    default_params(ac, i, LY(budget_p), sizeof l->budget_p, &l->budget->defaults);
    default_params(ac, i, LY(breaker_p), sizeof l->breaker_p, &l->breaker->defaults);
    if (!layer_given(ac, i, "multiplier"))
        l->bp.multiplier = k->defaults.multiplier;
    if (!backoff_is_preset(k))
        return;
    if (!layer_given(ac, i, "base"))
        l->bp.base = k->defaults.base;
    if (!layer_given(ac, i, "cap"))
        l->bp.cap = k->defaults.cap;
    if (!layer_given(ac, i, "jitter"))
        l->bp.jitter = k->defaults.jitter;
    if (!layer_given(ac, i, "attempts"))
        l->attempts = k->attempts;
    if (k->max_attempts && l->attempts > k->max_attempts)
        l->attempts = k->max_attempts; /* the library clamps silently (gRPC: 5) */
    if (!layer_given(ac, i, "retry_on"))
        l->retry_on = k->retry_on;
    if (!layer_given(ac, i, "retry_after"))
        l->retry_after = k->honor_retry_after ? RA_HONOR : RA_IGNORE;
    if (!layer_given(ac, i, "retry_after_max"))
        l->retry_after_max = k->retry_after_max;
    if (!layer_given(ac, i, "deadline"))
        l->deadline = k->deadline;
}

/* ---- cross-field rules ---- */

/* [run] and [load]: the run's shape and the load. */
static void check_run(struct apply_ctx *ac)
{
    struct scenario *sc = ac->sc;
    struct scenario_diag *d = ac->diag;
    char a[32], b[32], w[400];
    if (sc->warmup >= sc->duration)
        diag_add(d, "%s: [run] warmup = %s: must be less than duration (%s)", at(ac, "warmup", w, sizeof w),
                 units_format_duration(sc->warmup, a, sizeof a),
                 units_format_duration(sc->duration, b, sizeof b));
    if (sc->bucket > sc->duration)
        diag_add(d, "%s: [run] bucket = %s: must not exceed duration (%s)", at(ac, "bucket", w, sizeof w),
                 units_format_duration(sc->bucket, a, sizeof a),
                 units_format_duration(sc->duration, b, sizeof b));
    else if (sc->bucket > 0 && sc->duration / sc->bucket > SCENARIO_MAX_BUCKETS)
        diag_add(d, "%s: [run] bucket = %s: duration / bucket = %lld buckets, the limit is %lld (about %lld MB of time series)",
                 at(ac, "bucket", w, sizeof w), units_format_duration(sc->bucket, a, sizeof a),
                 (long long)(sc->duration / sc->bucket), SCENARIO_MAX_BUCKETS,
                 (long long)(sc->duration / sc->bucket) * 200 / 1000000);
    bool occ = sc->services[0].model == MODEL_OCC;
    if (sc->model == LOAD_OPEN && !occ && !given(ac, S_LOAD, "rate") && sc->trace[0] == '\0')
        diag_add(d, "%s: [load] rate is required when model = open (e.g. rate = 800/s)", at(ac, "model", w, sizeof w));
    if (sc->model == LOAD_CLOSED && given(ac, S_LOAD, "think") && !(dist_mean_ns(&sc->think) > 0))
        diag_add(d, "%s: [load] think = %s: a closed loop needs think times with a mean > 0 "
                    "(a client whose request fails at once would send again at the same instant, for ever)",
                 at(ac, "think", w, sizeof w), dist_format(&sc->think, a, sizeof a));
    if (sc->model == LOAD_CLOSED && !given(ac, S_LOAD, "think"))
        diag_add(d, "%s: [load] think is required when model = closed (e.g. think = exp(1s))", at(ac, "model", w, sizeof w));
}

/* Each service's own rules, the herd's instants between them (the order
 * of the messages is the one they have always had). */
static void check_services(struct apply_ctx *ac)
{
    struct scenario *sc = ac->sc;
    struct scenario_diag *d = ac->diag;
    char a[32], b[32], w[400], sect[96];
    for (unsigned i = 0; i < sc->nservices; i++)
        if (sc->services[i].model != MODEL_OCC && !service_given(ac, i, "service"))
            diag_add(d, "%s: [%s] service is required (e.g. service = exp(10ms))", sc->source,
                     service_section(ac, i, NULL, sect, sizeof sect));
    for (unsigned i = 0; i < sc->nherds; i++)
        if (sc->herds[i] >= sc->duration)
            diag_add(d, "%s: [herd] at = %s: must be before the end of the run (%s)",
                     at(ac, "at", w, sizeof w), units_format_duration(sc->herds[i], a, sizeof a),
                     units_format_duration(sc->duration, b, sizeof b));
    for (unsigned i = 0; i < sc->nservices; i++) {
        const struct service_cfg *v = &sc->services[i];
        double perr = v->p400 + v->p500 + v->p503 + v->p_business;
        if (perr > 1.0 + 1e-12)
            diag_add(d, "%s: [%s] error_400 + error_500 + error_503 + business = %g: must be at most 1",
                     service_at(ac, i, "business", w, sizeof w),
                     service_section(ac, i, "business", sect, sizeof sect), perr);
    }
}

/* ---- the service graph ---- */

/* The index of the service (or layer) called name, or -1. */
static int find_named(const struct scenario *sc, enum sect_kind kind, const char *name)
{
    unsigned n = kind == S_LAYER ? sc->nlayers : kind == S_CACHE ? sc->ncaches : sc->nservices;
    for (unsigned i = 0; i < n; i++)
        if (strcmp(item_name(sc, kind, i), name) == 0)
            return (int)i;
    return -1;
}

/* Which names suggest_name looks among. */
enum { SUGGEST_SERVICES = 1, SUGGEST_LAYERS = 2, SUGGEST_CACHES = 4 };

/* " (did you mean 'db'?)" for the service, layer or cache (as kinds says)
 * closest to name, or "". */
static const char *suggest_name(const struct scenario *sc, const char *name, unsigned kinds,
                                char *buf, size_t size)
{
    static const enum sect_kind kind[] = {S_SERVICE, S_LAYER, S_CACHE};
    const char *best = NULL;
    size_t bestd = 3;
    for (int k = 0; k < 3; k++)
        for (unsigned i = 0; (kinds >> k & 1) && i < (k == 0   ? sc->nservices
                                                       : k == 1 ? sc->nlayers
                                                                : sc->ncaches); i++) {
            const char *cand = item_name(sc, kind[k], i);
            size_t dist = scenario_edit_distance(name, cand);
            if (dist < bestd) {
                bestd = dist;
                best = cand;
            }
        }
    buf[0] = '\0';
    if (best != NULL)
        snprintf(buf, size, " (did you mean '%s'?)", best);
    return buf;
}

/* "[SECTION] KEY = 'VALUE': no service 'NAME' (did you mean ...?); allowed: ..." */
static void no_such_service(struct apply_ctx *ac, const char *w, const char *section,
                            const char *key, const char *value, const char *name, bool client)
{
    const struct scenario *sc = ac->sc;
    char list[SCENARIO_MAX_SERVICES * SCENARIO_NAME_MAX + 16], hint[96];
    size_t used = (size_t)snprintf(list, sizeof list, "%s", client ? "client" : "");
    for (unsigned i = 0; i < sc->nservices; i++)
        used += (size_t)snprintf(list + used, sizeof list - used, "%s%s", used ? ", " : "",
                                 sc->services[i].name);
    diag_add(ac->diag, "%s: [%s] %s = '%s': no service '%s'%s; allowed: %s", w, section, key, value,
             name, suggest_name(sc, name, SUGGEST_SERVICES, hint, sizeof hint), list);
}

/* Resolves every service's calls; false after a message if one names no
 * service, or the service itself. */
static bool resolve_calls(struct apply_ctx *ac)
{
    struct scenario *sc = ac->sc;
    char w[400], sect[96];
    bool ok = true;
    for (unsigned i = 0; i < sc->nservices; i++) {
        struct service_cfg *v = &sc->services[i];
        const struct entry *e = key_entry(ac, S_SERVICE, i, "calls");
        for (unsigned c = 0; c < v->ncalls && e != NULL; c++) {
            int j = find_named(sc, S_SERVICE, v->calls[c].name);
            key_where(ac, S_SERVICE, i, "calls", w, sizeof w);
            service_section(ac, i, "calls", sect, sizeof sect);
            if (j < 0)
                no_such_service(ac, w, sect, "calls", e->value, v->calls[c].name, false);
            else if ((unsigned)j == i)
                diag_add(ac->diag, "%s: [%s] calls = '%s': a service cannot call itself", w, sect,
                         e->value);
            else
                v->calls[c].service = (unsigned)j;
            ok = ok && j >= 0 && (unsigned)j != i;
        }
    }
    return ok;
}

/* Depth-first search from service u (at depth on the stack) for a call back
 * onto the stack; then cyc holds the cycle, its first service again at its
 * end. O(services + calls). */
static bool find_cycle(const struct scenario *sc, unsigned u, unsigned char *color,
                       unsigned *stack, unsigned depth, unsigned *cyc, unsigned *ncyc)
{
    color[u] = 1;
    stack[depth] = u;
    for (unsigned c = 0; c < sc->services[u].ncalls; c++) {
        unsigned v = sc->services[u].calls[c].service;
        if (color[v] == 1) {
            unsigned k = 0;
            while (stack[k] != v)
                k++;
            *ncyc = 0;
            for (; k <= depth; k++)
                cyc[(*ncyc)++] = stack[k];
            cyc[(*ncyc)++] = v;
            return true;
        }
        if (color[v] == 0 && find_cycle(sc, v, color, stack, depth + 1, cyc, ncyc))
            return true;
    }
    color[u] = 2;
    return false;
}

/* The calls must form a DAG; false after naming the first cycle found. */
static bool check_acyclic(struct apply_ctx *ac)
{
    const struct scenario *sc = ac->sc;
    unsigned char color[SCENARIO_MAX_SERVICES] = {0};
    unsigned stack[SCENARIO_MAX_SERVICES], cyc[SCENARIO_MAX_SERVICES + 1], n = 0;
    for (unsigned u = 0; u < sc->nservices; u++) {
        if (color[u] != 0 || !find_cycle(sc, u, color, stack, 0, cyc, &n))
            continue;
        char w[400], sect[96], path[SCENARIO_MAX_SERVICES * (SCENARIO_NAME_MAX + 4) + 8];
        size_t used = 0;
        path[0] = '\0';
        for (unsigned k = 0; k < n; k++)
            used += (size_t)snprintf(path + used, sizeof path - used, "%s%s", k ? " -> " : "",
                                     sc->services[cyc[k]].name);
        diag_add(ac->diag, "%s: [%s] calls form a cycle: %s",
                 key_where(ac, S_SERVICE, cyc[0], "calls", w, sizeof w),
                 service_section(ac, cyc[0], "calls", sect, sizeof sect), path);
        return false;
    }
    return true;
}

static bool calls_service(const struct service_cfg *v, unsigned to)
{
    for (unsigned c = 0; c < v->ncalls; c++)
        if (v->calls[c].service == to)
            return true;
    return false;
}

/* Resolves layer i's from and to (filling in the defaults by name); false
 * after a message when they name no service, the same one, or an edge that
 * no service's calls make. */
static bool resolve_layer(struct apply_ctx *ac, unsigned i)
{
    struct scenario *sc = ac->sc;
    struct layer_cfg *l = &sc->layers[i];
    char w[400], sect[96];
    snprintf(sect, sizeof sect, "layer %s", l->name);
    if (l->from[0] == '\0')
        copy_name(l->from, "client");
    if (l->to[0] == '\0')
        copy_name(l->to, sc->services[0].name);
    int from = strcmp(l->from, "client") == 0 ? SCENARIO_CLIENT : find_named(sc, S_SERVICE, l->from);
    int to = find_named(sc, S_SERVICE, l->to);
    if (from < 0 && strcmp(l->from, "client") != 0) {
        key_where(ac, S_LAYER, i, "from", w, sizeof w);
        no_such_service(ac, w, sect, "from", l->from, l->from, true);
        return false;
    }
    if (to < 0) {
        key_where(ac, S_LAYER, i, "to", w, sizeof w);
        no_such_service(ac, w, sect, "to", l->to, l->to, false);
        return false;
    }
    l->from_service = from;
    l->to_service = (unsigned)to;
    key_where(ac, S_LAYER, i, "to", w, sizeof w);
    if (from == to) {
        diag_add(ac->diag, "%s: [%s] from = %s and to = %s: a layer sits between two different services",
                 w, sect, l->from, l->to);
        return false;
    }
    if (from != SCENARIO_CLIENT && !calls_service(&sc->services[from], (unsigned)to)) {
        diag_add(ac->diag, "%s: [%s] from = %s, to = %s: service %s does not call %s; add %s to [service %s] calls",
                 w, sect, l->from, l->to, l->from, l->to, l->to, l->from);
        return false;
    }
    return true;
}

/* Every layer's edge, and the entry: the service every layer from the
 * clients goes to. False after a message when something is amiss. */
static bool resolve_layers(struct apply_ctx *ac)
{
    struct scenario *sc = ac->sc;
    char w[400];
    bool ok = true;
    for (unsigned i = 0; i < sc->nlayers; i++)
        ok = resolve_layer(ac, i) && ok;
    if (!ok || sc->nlayers == 0)
        return ok; /* no layer: the default one goes from the clients to the first service */
    int entry = -1;
    unsigned first = 0;
    for (unsigned i = 0; i < sc->nlayers; i++) {
        const struct layer_cfg *l = &sc->layers[i];
        if (l->from_service != SCENARIO_CLIENT)
            continue;
        if (entry < 0) {
            entry = (int)l->to_service;
            first = i;
        } else if (l->to_service != (unsigned)entry) {
            diag_add(ac->diag, "%s: [layer %s] to = %s: every layer from the clients must go to the same service (layer %s goes to %s)",
                     key_where(ac, S_LAYER, i, "to", w, sizeof w), l->name, l->to,
                     sc->layers[first].name, sc->layers[first].to);
            return false;
        }
    }
    if (entry < 0) {
        diag_add(ac->diag, "%s: no layer from the clients: give one [layer NAME] from = client (the default), to the service they call",
                 sc->source);
        return false;
    }
    sc->entry = (unsigned)entry;
    return true;
}

/* Names resolved, the calls a DAG, the layers on edges that exist. */
static void check_graph(struct apply_ctx *ac)
{
    struct scenario *sc = ac->sc;
    int client = find_named(sc, S_SERVICE, "client");
    if (client >= 0) {
        char w[400];
        diag_add(ac->diag, "%s: [service client]: 'client' names the clients in a layer's from; give the service another name",
                 key_where(ac, S_SERVICE, (unsigned)client, "service", w, sizeof w));
        ac->graph_ok = false;
        return;
    }
    bool calls_ok = resolve_calls(ac) && check_acyclic(ac);
    bool layers_ok = calls_ok && resolve_layers(ac);
    ac->graph_ok = calls_ok && layers_ok;
}

/* Resolves phase i's target; false after a message. */
static bool resolve_target(struct apply_ctx *ac, unsigned i)
{
    struct scenario *sc = ac->sc;
    struct phase_cfg *p = &sc->phases[i];
    char w[400], name[SCENARIO_NAME_MAX + 8], hint[96];
    if (p->target[0] == '\0') {
        p->target_kind = TARGET_NONE;
        return true;
    }
    size_t n = strcspn(p->target, "#");
    snprintf(name, sizeof name, "%.*s", (int)n, p->target);
    long long rep = 0;
    if (p->target[n] == '#' && !units_parse_int(p->target + n + 1, 1, SCENARIO_MAX_REPLICAS, &rep))
        rep = 0; /* p_target checked it */
    int sv = find_named(sc, S_SERVICE, name), ly = find_named(sc, S_LAYER, name);
    int ca = find_named(sc, S_CACHE, name);
    key_where(ac, S_PHASE, i, "target", w, sizeof w);
    if ((sv >= 0) + (ly >= 0) + (ca >= 0) > 1)
        diag_add(ac->diag, "%s: [phase %s] target = '%s': ambiguous: more than one of the services, layers and caches is called %s; rename one",
                 w, p->name, p->target, name);
    else if (sv < 0 && ly < 0 && ca < 0)
        diag_add(ac->diag, "%s: [phase %s] target = '%s': no service, layer or cache '%s'%s",
                 w, p->name, p->target, name, suggest_name(sc, name, SUGGEST_SERVICES | SUGGEST_LAYERS | SUGGEST_CACHES, hint, sizeof hint));
    else if (sv < 0 && rep > 0)
        diag_add(ac->diag, "%s: [phase %s] target = '%s': %s is a %s; a replica number (#i) goes with a service",
                 w, p->name, p->target, name, ly >= 0 ? "layer" : "cache");
    else if (sv >= 0 && rep > sc->services[sv].replicas)
        diag_add(ac->diag, "%s: [phase %s] target = '%s': service %s has %u replica%s",
                 w, p->name, p->target, name, sc->services[sv].replicas,
                 sc->services[sv].replicas == 1 ? "" : "s");
    else {
        p->target_kind = sv >= 0 ? TARGET_SERVICE : ly >= 0 ? TARGET_LAYER : TARGET_CACHE;
        p->target_index = (unsigned)(sv >= 0 ? sv : ly >= 0 ? ly : ca);
        p->target_replica = (unsigned)rep;
        return true;
    }
    return false;
}

/* A phase aimed at a cache takes capacity (a factor on the cache's
 * entries) and nothing else that acts on a target. */
static void check_cache_target(struct apply_ctx *ac, unsigned i)
{
    const struct phase_cfg *p = &ac->sc->phases[i];
    const struct cache_cfg *c = &ac->sc->caches[p->target_index];
    static const char *const other[] = {"outage", "slowdown", "retry_after", "latency", "loss"};
    char w[400];
    for (size_t k = 0; k < sizeof other / sizeof *other; k++)
        if (phase_given(ac, i, other[k]))
            diag_add(ac->diag, "%s: [phase %s] %s does not act on a cache; target = %s is a cache (it takes capacity)",
                     key_where(ac, S_PHASE, i, other[k], w, sizeof w), p->name, other[k], p->target);
    if (p->has_capacity && c->capacity < 0)
        diag_add(ac->diag, "%s: [phase %s] capacity acts on a cache's capacity; [cache %s] is unbounded (give it capacity = N)",
                 key_where(ac, S_PHASE, i, "capacity", w, sizeof w), p->name, c->name);
}

/* Keys that act on a service need a service target (or none); latency and
 * loss act on a layer's hop and need a layer target. */
static void check_target_keys(struct apply_ctx *ac, unsigned i)
{
    const struct phase_cfg *p = &ac->sc->phases[i];
    static const char *const service_keys[] = {"capacity", "outage", "slowdown", "retry_after"};
    static const char *const hop_keys[] = {"latency", "loss"};
    char w[400];
    bool layer = p->target_kind == TARGET_LAYER;
    if (p->target_kind == TARGET_CACHE) {
        check_cache_target(ac, i);
        return;
    }
    for (size_t k = 0; k < 4 && layer; k++)
        if (phase_given(ac, i, service_keys[k]))
            diag_add(ac->diag, "%s: [phase %s] %s acts on a service; target = %s is a layer",
                     key_where(ac, S_PHASE, i, service_keys[k], w, sizeof w), p->name,
                     service_keys[k], p->target);
    for (size_t k = 0; k < 2 && !layer; k++)
        if (phase_given(ac, i, hop_keys[k]))
            diag_add(ac->diag, "%s: [phase %s] %s acts on a layer's hop: it needs target = LAYER (%s%s)",
                     key_where(ac, S_PHASE, i, hop_keys[k], w, sizeof w), p->name, hop_keys[k],
                     p->target[0] ? p->target : "no target is given",
                     p->target[0] ? " is a service" : "");
}

static bool resolve_flush(struct apply_ctx *ac, unsigned i);

static void check_phase(struct apply_ctx *ac, unsigned i)
{
    struct scenario *sc = ac->sc;
    struct scenario_diag *d = ac->diag;
    struct phase_cfg *p = &sc->phases[i];
    char a[32], b[32], w[400], pwbuf[400];
    const char *pw = where(ac->phase_entry[i], pwbuf, sizeof pwbuf);
    if (!phase_given(ac, i, "start") || !phase_given(ac, i, "end")) {
        diag_add(d, "%s: [phase %s] needs both start and end", pw, p->name);
        return;
    }
    if (p->end <= p->start)
        diag_add(d, "%s: [phase %s] end = %s: must be after start (%s)",
                 key_where(ac, S_PHASE, i, "end", w, sizeof w), p->name,
                 units_format_duration(p->end, a, sizeof a),
                 units_format_duration(p->start, b, sizeof b));
    if (p->start >= sc->duration)
        diag_add(d, "%s: [phase %s] start = %s: must be before the end of the run (%s)",
                 key_where(ac, S_PHASE, i, "start", w, sizeof w), p->name, units_format_duration(p->start, a, sizeof a),
                 units_format_duration(sc->duration, b, sizeof b));
    bool targeted = resolve_target(ac, i);
    if (targeted)
        check_target_keys(ac, i);
    bool flush = resolve_flush(ac, i);
    if (p->target_kind == TARGET_LAYER) {
        if (!p->has_rate && !p->has_latency && !phase_given(ac, i, "loss") && !flush)
            diag_add(d, "%s: [phase %s] changes nothing: give rate, latency or loss", pw, p->name);
    } else if (p->target_kind == TARGET_CACHE) {
        if (!p->has_rate && !p->has_capacity && !flush)
            diag_add(d, "%s: [phase %s] changes nothing: give capacity, flush or rate", pw, p->name);
    } else if (targeted && !p->has_rate && !p->has_capacity && p->outage == OUTAGE_NONE &&
               !phase_given(ac, i, "slowdown") && !flush) {
        diag_add(d, "%s: [phase %s] changes nothing: give rate, capacity, outage or slowdown",
                 pw, p->name);
    }
    if (p->retry_after != RS_TIME_NEVER && p->outage != OUTAGE_ERROR)
        diag_add(d, "%s: [phase %s] retry_after is sent only with outage = error",
                 key_where(ac, S_PHASE, i, "retry_after", w, sizeof w), p->name);
    if (p->has_rate && !p->rate_is_factor && sc->model == LOAD_CLOSED)
        diag_add(d, "%s: [phase %s] rate = %g/s: a closed loop takes a factor (x2 halves think times), not an absolute rate",
                 key_where(ac, S_PHASE, i, "rate", w, sizeof w), p->name, p->rate);
    if (p->has_rate && p->rate_is_factor && sc->model == LOAD_CLOSED && p->rate == 0.0)
        diag_add(d, "%s: [phase %s] rate = x0: a closed loop needs a factor > 0",
                 key_where(ac, S_PHASE, i, "rate", w, sizeof w), p->name);
    if (p->ramp && sc->model == LOAD_CLOSED)
        diag_add(d, "%s: [phase %s] rate = ramp(...): a ramp needs model = open (a closed loop's rate follows its think times)",
                 key_where(ac, S_PHASE, i, "rate", w, sizeof w), p->name);
}

/* Resolves phase i's flush; whether it names a cache. */
static bool resolve_flush(struct apply_ctx *ac, unsigned i)
{
    struct phase_cfg *p = &ac->sc->phases[i];
    char w[400], hint[96];
    if (p->flush[0] == '\0')
        return false;
    p->flush_cache = find_named(ac->sc, S_CACHE, p->flush);
    if (p->flush_cache >= 0)
        return true;
    diag_add(ac->diag, "%s: [phase %s] flush = '%s': no cache '%s'%s; allowed: the name of a [cache NAME] section",
             key_where(ac, S_PHASE, i, "flush", w, sizeof w), p->name, p->flush, p->flush,
             suggest_name(ac->sc, p->flush, SUGGEST_CACHES, hint, sizeof hint));
    return true; /* it was meant to change something: no second message */
}

static void check_layer(struct apply_ctx *ac, unsigned i)
{
    struct scenario_diag *d = ac->diag;
    struct layer_cfg *l = &ac->sc->layers[i];
    char a[32], b[32], w[400];
    apply_kind_defaults(ac, i);
    if (l->bp.cap != RS_TIME_NEVER && l->bp.cap < l->bp.base)
        diag_add(d, "%s: [layer %s] cap = %s: must be at least base (%s)",
                 key_where(ac, S_LAYER, i, "cap", w, sizeof w), l->name,
                 units_format_duration(l->bp.cap, a, sizeof a),
                 units_format_duration(l->bp.base, b, sizeof b));
    if ((l->budget->id == BUDGET_RATIO || l->budget->id == BUDGET_SRE) && l->budget_p.ttl == 0)
        diag_add(d, "%s: [layer %s] budget = %s needs budget_ttl > 0",
                 key_where(ac, S_LAYER, i, "budget_ttl", w, sizeof w), l->name, l->budget->name);
    if (l->budget->id == BUDGET_GRPC && !(l->budget_p.max_tokens > 0))
        diag_add(d, "%s: [layer %s] budget = grpc needs budget_max_tokens in (0, 1000]",
                 key_where(ac, S_LAYER, i, "budget_max_tokens", w, sizeof w), l->name);
    if (l->budget->id == BUDGET_RATIO && !(l->budget_p.percent > 0))
        diag_add(d, "%s: [layer %s] budget = %s needs budget_percent > 0",
                 key_where(ac, S_LAYER, i, "budget_percent", w, sizeof w), l->name, l->budget->name);
    if (l->breaker->id == BREAKER_RATE && l->breaker_p.window_calls == 0 && l->breaker_p.window == 0)
        diag_add(d, "%s: [layer %s] breaker = %s needs breaker_window (calls or a duration)",
                 key_where(ac, S_LAYER, i, "breaker_window", w, sizeof w), l->name, l->breaker->name);
    if (l->breaker->id == BREAKER_CONSECUTIVE && l->breaker_p.probes == 0)
        l->breaker_p.probes = 1; /* gobreaker: MaxRequests 0 means 1 */
    if (!backoff_is_preset(l->backoff) && strcmp(l->backoff->name, "none") != 0 &&
        l->bp.base == 0 && l->attempts > 1)
        diag_add(d, "%s: [layer %s] backoff = %s needs base > 0 (e.g. base = 10ms)",
                 key_where(ac, S_LAYER, i, "backoff", w, sizeof w), l->name, l->backoff->name);
    static const char *const bulkhead_keys[] = {"concurrency_queue", "concurrency_wait"};
    for (size_t k = 0; k < 2 && l->concurrency == 0; k++)
        if (layer_given(ac, i, bulkhead_keys[k]))
            diag_add(d, "%s: [layer %s] %s needs concurrency > 0 (the bulkhead's slots)",
                     key_where(ac, S_LAYER, i, bulkhead_keys[k], w, sizeof w), l->name,
                     bulkhead_keys[k]);
}

/* Rules that depend on the graph: occ for a lone service only, and
 * deduplication at the entry only. */
static void check_service_roles(struct apply_ctx *ac)
{
    const struct scenario *sc = ac->sc;
    char w[400], sect[96];
    for (unsigned i = 0; i < sc->nservices; i++) {
        const struct service_cfg *v = &sc->services[i];
        if (v->model == MODEL_OCC && (sc->nservices > 1 || v->ncalls > 0 || v->replicas > 1))
            diag_add(ac->diag, "%s: [%s] model = occ: optimistic concurrency is modelled for a lone service only: one service, with no calls and replicas = 1",
                     key_where(ac, S_SERVICE, i, "model", w, sizeof w),
                     service_section(ac, i, "model", sect, sizeof sect));
        if (v->dedup && ac->graph_ok && i != sc->entry)
            diag_add(ac->diag, "%s: [%s] dedup = true: only the service the clients call (%s) may deduplicate; the idempotency-key store is modelled per request at that service",
                     key_where(ac, S_SERVICE, i, "dedup", w, sizeof w),
                     service_section(ac, i, "dedup", sect, sizeof sect), sc->services[sc->entry].name);
    }
}

/* ---- caches, load shapes and traces ---- */

/* Whether service u calls v, directly or through others; seen marks the
 * services already searched (the calls form a DAG: O(services + calls)). */
static bool reaches(const struct scenario *sc, unsigned u, unsigned v, bool *seen)
{
    for (unsigned k = 0; k < sc->services[u].ncalls; k++) {
        unsigned d = sc->services[u].calls[k].service;
        if (d == v)
            return true;
        if (!seen[d] && (seen[d] = true, reaches(sc, d, v, seen)))
            return true;
    }
    return false;
}

/* A request has one key at every service: with coalesce, a service that
 * looks a cache up below another that does would join the miss of its own
 * caller, which waits for it. Refused (once the calls are resolved). */
static void check_coalesce_paths(struct apply_ctx *ac)
{
    const struct scenario *sc = ac->sc;
    char w[400], sect[96];
    for (unsigned u = 0; u < sc->nservices && ac->graph_ok; u++)
        for (unsigned v = 0; v < sc->nservices; v++) {
            int c = sc->services[u].cache_index;
            bool seen[SCENARIO_MAX_SERVICES] = {false};
            if (c < 0 || u == v || sc->services[v].cache_index != c || !sc->caches[c].coalesce ||
                !reaches(sc, u, v, seen))
                continue;
            diag_add(ac->diag, "%s: [%s] cache = %s: %s calls this service and looks %s up too; with coalesce = true a request's lookup here would join its own miss at %s and wait for itself (give them separate caches, or coalesce = false)",
                     key_where(ac, S_SERVICE, v, "cache", w, sizeof w),
                     service_section(ac, v, "cache", sect, sizeof sect), sc->caches[c].name,
                     sc->services[u].name, sc->caches[c].name, sc->services[u].name);
        }
}

/* Each service's cache names a [cache] section; every cache is used; the
 * requests have keys to look up. */
static void check_caches(struct apply_ctx *ac)
{
    struct scenario *sc = ac->sc;
    char w[400], sect[96], hint[96];
    bool used[SCENARIO_MAX_CACHES] = {false};
    for (unsigned i = 0; i < sc->nservices; i++) {
        struct service_cfg *v = &sc->services[i];
        v->cache_index = v->cache[0] ? find_named(sc, S_CACHE, v->cache) : -1;
        if (v->cache[0] && v->cache_index < 0)
            diag_add(ac->diag, "%s: [%s] cache = '%s': no cache '%s'%s; allowed: the name of a [cache NAME] section, or none",
                     key_where(ac, S_SERVICE, i, "cache", w, sizeof w),
                     service_section(ac, i, "cache", sect, sizeof sect), v->cache, v->cache,
                     suggest_name(sc, v->cache, SUGGEST_CACHES, hint, sizeof hint));
        else if (v->cache_index >= 0 && v->model == MODEL_OCC)
            diag_add(ac->diag, "%s: [%s] cache = %s: a cache goes with model = queue",
                     key_where(ac, S_SERVICE, i, "cache", w, sizeof w),
                     service_section(ac, i, "cache", sect, sizeof sect), v->cache);
        else if (v->cache_index >= 0)
            used[v->cache_index] = true;
    }
    for (unsigned c = 0; c < sc->ncaches; c++) {
        const struct cache_cfg *k = &sc->caches[c];
        if (!used[c])
            diag_add(ac->diag, "%s: [cache %s] is used by no service (give one cache = %s)",
                     where(ac->cache_entry[c], w, sizeof w), k->name, k->name);
        if (k->ttl_jitter > 0 && k->ttl == RS_TIME_NEVER)
            diag_add(ac->diag, "%s: [cache %s] ttl_jitter = %g needs a ttl (entries without one never expire)",
                     key_where(ac, S_CACHE, c, "ttl_jitter", w, sizeof w), k->name, k->ttl_jitter);
    }
    check_coalesce_paths(ac);
    if (sc->ncaches > 0 && !given(ac, S_LOAD, "keys"))
        diag_add(ac->diag, "%s: [load] keys is required with a cache: how many distinct keys the requests look up (e.g. keys = 10000)",
                 where(ac->cache_entry[0], w, sizeof w));
}

/* Adds a bad row of a trace to the messages. */
static void trace_problem(void *ctx, const char *msg)
{
    struct scenario_diag *d = ctx;
    if (!diag_skip(d))
        diag_add(d, "%s", msg);
}

/* Opens the trace the scenario names: a path relative to the scenario
 * file (absolute when it exists), else a built-in trace of that name.
 * Returns 0, or -1 after a message. */
/* Whether the effective scenario.ini can hold path as a value: inih
 * takes " ;" for a comment and drops spaces at either end. */
static bool ini_safe_path(const char *path)
{
    size_t n = strlen(path);
    return n > 0 && path[0] != ' ' && path[n - 1] != ' ' && strstr(path, " ;") == NULL &&
           strstr(path, "\t;") == NULL;
}

static int open_trace(struct apply_ctx *ac, struct trace *t)
{
    struct scenario *sc = ac->sc;
    char path[SCENARIO_PATH_MAX], err[600], w[400], real[PATH_MAX];
    const char *text = scenario_trace_text(sc->trace), *why = NULL;
    int n = sc->trace[0] != '/' && ac->dir != NULL
                ? snprintf(path, sizeof path, "%s/%s", ac->dir, sc->trace)
                : snprintf(path, sizeof path, "%s", sc->trace);
    /* a built-in scenario's trace is the built-in one, whatever the current directory holds */
    sc->trace_builtin = text != NULL && (ac->dir == NULL || access(path, F_OK) != 0);
    if (sc->trace_builtin)
        return trace_open_text(t, text, sc->trace, err, sizeof err) == 0 ? 0 : -1;
    bool opened = false;
    if (n < 0 || (size_t)n >= sizeof path)
        why = "the path beside the scenario file is longer than 1023 characters";
    else if (trace_open(t, path, err, sizeof err) != 0)
        why = err;
    else if ((opened = true, realpath(path, real) == NULL) || strlen(real) >= SCENARIO_PATH_MAX)
        why = "its absolute path is longer than 1023 characters";
    else if (!ini_safe_path(real))
        why = "its absolute path has a space before ';' or at an end, which scenario.ini cannot hold";
    if (why != NULL) {
        if (opened)
            trace_close(t);
        diag_add(ac->diag, "%s: [load] trace = '%s': %s", at(ac, "trace", w, sizeof w), sc->trace, why);
        return -1;
    }
    snprintf(sc->trace, sizeof sc->trace, "%s", real); /* the run opens the file checked */
    return 0;
}

/* Reads the whole trace once: every bad row is reported, and its format
 * decides which other load keys may go with it. */
static void check_trace(struct apply_ctx *ac)
{
    struct scenario *sc = ac->sc;
    struct trace t;
    struct trace_info info;
    char w[400];
    if (open_trace(ac, &t) != 0)
        return;
    trace_check(&t, trace_problem, ac->diag, &info);
    trace_close(&t);
    sc->trace_format = info.kind == TRACE_RATES ? TRACE_FORMAT_RATES : TRACE_FORMAT_TIMES;
    sc->trace_burst = info.max_equal; /* simultaneous arrivals: not a model stuck in time */
    if (info.rows == 0)
        diag_add(ac->diag, "%s: [load] trace = '%s': the trace has no rows", at(ac, "trace", w, sizeof w), sc->trace);
    if (sc->trace_format != TRACE_FORMAT_TIMES)
        return;
    if (sc->sine_amplitude > 0)
        diag_add(ac->diag, "%s: [load] shape: a trace of timestamps is replayed as it is; a shape goes with a trace of rates (t,rate)",
                 at(ac, "shape", w, sizeof w));
    for (unsigned i = 0; i < sc->nphases; i++)
        if (sc->phases[i].has_rate)
            diag_add(ac->diag, "%s: [phase %s] rate: a trace of timestamps is replayed as it is; a phase's rate goes with a trace of rates (t,rate)",
                     key_where(ac, S_PHASE, i, "rate", w, sizeof w), sc->phases[i].name);
}

/* shape and trace shape an open loop's arrivals. */
static void check_load_shape(struct apply_ctx *ac)
{
    struct scenario *sc = ac->sc;
    char w[400];
    static const char *const open_only[] = {"shape", "trace"};
    for (size_t k = 0; k < 2; k++)
        if (sc->model == LOAD_CLOSED && given(ac, S_LOAD, open_only[k]))
            diag_add(ac->diag, "%s: [load] %s needs model = open (a closed loop's rate follows its think times)",
                     at(ac, open_only[k], w, sizeof w), open_only[k]);
    bool ramp = false;
    for (unsigned i = 0; i < sc->nphases; i++)
        ramp |= sc->phases[i].ramp;
    if (sc->model == LOAD_OPEN && sc->arrival == ARRIVAL_UNIFORM &&
        (ramp || sc->sine_amplitude > 0 || sc->trace[0] != '\0'))
        diag_add(ac->diag, "%s: [load] arrival = uniform: evenly spaced arrivals go with a rate that changes in steps; ramp(), shape and trace draw Poisson arrivals (arrival = poisson)",
                 at(ac, "arrival", w, sizeof w));
    if (sc->trace[0] == '\0' || sc->model != LOAD_OPEN)
        return;
    if (given(ac, S_LOAD, "rate"))
        diag_add(ac->diag, "%s: [load] rate and trace: give one (the trace states the rate)",
                 at(ac, "rate", w, sizeof w));
    check_trace(ac);
}

static void check_all(struct apply_ctx *ac)
{
    check_run(ac);
    check_services(ac);
    check_graph(ac);
    check_caches(ac);
    check_load_shape(ac);
    for (unsigned i = 0; i < ac->sc->nphases; i++)
        check_phase(ac, i);
    for (unsigned i = 0; i < ac->sc->nlayers; i++)
        check_layer(ac, i);
    check_service_roles(ac);
}

/* ---- limits on the size of the run ---- */

/* The number of budget or breaker states of layer l with this scope. */
static double scope_states(const struct scenario *sc, const struct layer_cfg *l, enum scope scope)
{
    if (scope == SCOPE_SHARED)
        return 1;
    return scope == SCOPE_CLIENT || l->instances == 0 ? sc->clients : l->instances;
}

static double budget_bytes(const struct scenario *sc, const struct layer_cfg *l)
{
    if (l->budget->id == BUDGET_NONE)
        return 0;
    return scope_states(sc, l, l->budget_scope) * (double)budget_state_size(l->budget);
}

static double breaker_bytes(const struct scenario *sc, const struct layer_cfg *l)
{
    if (l->breaker->id == BREAKER_NONE)
        return 0;
    return scope_states(sc, l, l->breaker_scope) * (double)breaker_state_size(l->breaker, &l->breaker_p);
}

double scenario_state_bytes(const struct scenario *sc)
{
    double sum = 0;
    for (unsigned i = 0; i < sc->nlayers; i++)
        sum += budget_bytes(sc, &sc->layers[i]) + breaker_bytes(sc, &sc->layers[i]);
    return sum;
}

/* Appends to buf what one layer's budgets (or breakers) need: the key that
 * sets how many there are, and the bytes of each. */
static void describe_states(const struct scenario *sc, const struct layer_cfg *l, bool breaker,
                            char *buf, size_t size)
{
    enum scope scope = breaker ? l->breaker_scope : l->budget_scope;
    double bytes = breaker ? breaker_bytes(sc, l) : budget_bytes(sc, l);
    double n = scope_states(sc, l, scope);
    char count[96];
    if (scope == SCOPE_CLIENT || l->instances == 0)
        snprintf(count, sizeof count, "load.clients = %u", sc->clients);
    else
        snprintf(count, sizeof count, "layer.%s.instances = %u", l->name, l->instances);
    size_t used = strlen(buf);
    snprintf(buf + used, size - used, "%slayer.%s.%s = %s with %s_scope = %s: %s states of %.0f bytes, %.2f GB",
             used ? "; " : "", l->name, breaker ? "breaker" : "budget",
             breaker ? l->breaker->name : l->budget->name, breaker ? "breaker" : "budget",
             scope_names[scope], count, bytes / n, bytes / 1e9);
}

/* Budget and breaker states of the whole run, all layers together. */
static void check_state_size(struct apply_ctx *ac)
{
    const struct scenario *sc = ac->sc;
    double total = scenario_state_bytes(sc), most = 0;
    if (total <= SCENARIO_MAX_STATE_BYTES)
        return;
    char parts[3000] = "", w[400];
    unsigned li = 0;
    bool lb = false;
    for (unsigned i = 0; i < sc->nlayers; i++)
        for (int b = 0; b < 2; b++) {
            const struct layer_cfg *l = &sc->layers[i];
            double bytes = b ? breaker_bytes(sc, l) : budget_bytes(sc, l);
            if (bytes <= 1e6)
                continue; /* shared states, or few: not what drives it */
            describe_states(sc, l, b, parts, sizeof parts);
            if (bytes > most) {
                most = bytes;
                li = i;
                lb = b;
            }
        }
    diag_add(ac->diag, "%s: budget and breaker states would need %.2f GB over all layers; at most %.0f GB are allowed (%s): "
             "use a wider budget_scope or breaker_scope (instance or shared), fewer clients or instances, or a smaller breaker_window",
             key_where(ac, S_LAYER, li, lb ? "breaker" : "budget", w, sizeof w), total / 1e9,
             SCENARIO_MAX_STATE_BYTES / 1e9, parts);
}

static unsigned long long sat_mul(unsigned long long a, unsigned long long b)
{
    return b != 0 && a > ULLONG_MAX / b ? ULLONG_MAX : a * b;
}

/* The attempts of the layers on the edge from -> to, multiplied. */
static unsigned long long edge_attempts(const struct scenario *sc, int from, unsigned to)
{
    unsigned long long product = 1;
    for (unsigned i = 0; i < sc->nlayers; i++)
        if (sc->layers[i].from_service == from && sc->layers[i].to_service == to)
            product = sat_mul(product, sc->layers[i].attempts);
    return product;
}

/* The most attempts one call of service u can cause below it, over every
 * path of calls (1 for a service that calls none); memoised in most[]
 * (0: not yet known), with next[u] the call on the worst path or -1. The
 * calls form a DAG: O(services · calls · layers). */
static unsigned long long worst_below(const struct scenario *sc, unsigned u,
                                      unsigned long long *most, int *next)
{
    if (most[u] != 0)
        return most[u];
    unsigned long long best = 1;
    next[u] = -1;
    for (unsigned c = 0; c < sc->services[u].ncalls; c++) {
        const struct dep_cfg *dep = &sc->services[u].calls[c];
        unsigned long long x = sat_mul(sat_mul(dep->fanout, edge_attempts(sc, (int)u, dep->service)),
                                       worst_below(sc, dep->service, most, next));
        if (x > best) {
            best = x;
            next[u] = (int)c;
        }
    }
    return most[u] = best;
}

/* A path walked term by term: the product so far, the layer at which it
 * passes the limit, and the terms written out. */
struct walk {
    unsigned long long product;
    int culprit;
    char parts[2400];
};

static void walk_term(struct walk *wk, unsigned long long factor, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void walk_term(struct walk *wk, unsigned long long factor, const char *fmt, ...)
{
    size_t used = strlen(wk->parts);
    if (used > 0 && used < sizeof wk->parts)
        used += (size_t)snprintf(wk->parts + used, sizeof wk->parts - used, " x ");
    va_list ap;
    va_start(ap, fmt);
    if (used < sizeof wk->parts)
        vsnprintf(wk->parts + used, sizeof wk->parts - used, fmt, ap);
    va_end(ap);
    wk->product = sat_mul(wk->product, factor);
}

static void walk_edge(const struct scenario *sc, struct walk *wk, int from, unsigned to)
{
    for (unsigned i = 0; i < sc->nlayers; i++) {
        const struct layer_cfg *l = &sc->layers[i];
        if (l->from_service != from || l->to_service != to)
            continue;
        if (wk->product <= SCENARIO_MAX_ATTEMPTS)
            wk->culprit = (int)i; /* the layer whose attempts pass the limit */
        walk_term(wk, l->attempts, "layer.%s.attempts = %u", l->name, l->attempts);
    }
}

/* Attempts per request: every layer retries every attempt of the layer
 * above, and a service calls a dependency fan-out times for each of its
 * executions, so they multiply along a path from the clients; the worst
 * path is bounded. */
static void check_attempts(struct apply_ctx *ac)
{
    const struct scenario *sc = ac->sc;
    if (!ac->graph_ok)
        return;
    unsigned long long most[SCENARIO_MAX_SERVICES] = {0};
    int next[SCENARIO_MAX_SERVICES];
    char path[SCENARIO_MAX_SERVICES * (SCENARIO_NAME_MAX + 4) + 16], w[400];
    struct walk wk = {.product = 1, .culprit = -1};
    unsigned u = sc->entry, hops = 0;
    worst_below(sc, u, most, next);
    walk_edge(sc, &wk, SCENARIO_CLIENT, u);
    size_t used = (size_t)snprintf(path, sizeof path, "clients -> %s", sc->services[u].name);
    for (; next[u] >= 0; hops++) {
        const struct dep_cfg *dep = &sc->services[u].calls[next[u]];
        if (dep->fanout > 1)
            walk_term(&wk, dep->fanout, "service.%s.calls = %s*%u", sc->services[u].name, dep->name,
                      dep->fanout);
        walk_edge(sc, &wk, (int)u, dep->service);
        u = dep->service;
        used += (size_t)snprintf(path + used, sizeof path - used, " -> %s", sc->services[u].name);
    }
    if (wk.product <= SCENARIO_MAX_ATTEMPTS || wk.culprit < 0)
        return;
    const struct layer_cfg *l = &sc->layers[wk.culprit];
    key_where(ac, S_LAYER, (unsigned)wk.culprit, "attempts", w, sizeof w);
    if (hops == 0)
        diag_add(ac->diag, "%s: [layer %s] attempts = %u: a request could make %llu attempts, the product of every layer's attempts (%s); "
                 "at most %llu are allowed: lower some layer's attempts",
                 w, l->name, l->attempts, wk.product, wk.parts, SCENARIO_MAX_ATTEMPTS);
    else
        diag_add(ac->diag, "%s: [layer %s] attempts = %u: a request could make %llu attempts, the product of the layers' attempts and the fan-outs on the path %s (%s); "
                 "at most %llu are allowed: lower some layer's attempts or a fan-out",
                 w, l->name, l->attempts, wk.product, path, wk.parts, SCENARIO_MAX_ATTEMPTS);
}

/* services.csv has a row per bucket for every service and every replica. */
static void check_rows(struct apply_ctx *ac)
{
    const struct scenario *sc = ac->sc;
    if (!sc->graph || sc->bucket <= 0 || sc->duration / sc->bucket > SCENARIO_MAX_BUCKETS)
        return; /* the buckets' own limit is told apart */
    long long nb = (long long)(sc->duration / sc->bucket + (sc->duration % sc->bucket != 0)), reps = 0;
    for (unsigned i = 0; i < sc->nservices; i++)
        reps += sc->services[i].replicas;
    long long rows = nb * ((long long)sc->nservices + reps);
    if (rows <= SCENARIO_MAX_SERVICE_ROWS)
        return;
    char w[400], a[32];
    diag_add(ac->diag, "%s: [run] bucket = %s: services.csv would have %lld rows (%lld buckets x (%u services + %lld replicas)); "
             "at most %lld are allowed: a longer bucket, a shorter run or fewer replicas",
             at(ac, "bucket", w, sizeof w), units_format_duration(sc->bucket, a, sizeof a), rows, nb,
             sc->nservices, reps, SCENARIO_MAX_SERVICE_ROWS);
}

static void check_limits(struct apply_ctx *ac)
{
    check_state_size(ac);
    check_attempts(ac);
    check_rows(ac);
}

/* ---- entry points ---- */

/* The built-in trace called name (with or without its .csv), or NULL. */
const char *scenario_trace_text(const char *name)
{
    size_t n = strlen(name);
    if (n > 4 && strcmp(name + n - 4, ".csv") == 0)
        n -= 4;
    for (const struct scenario_builtin *b = scenario_traces; b->name != NULL; b++)
        if (strlen(b->name) == n && strncmp(b->name, name, n) == 0)
            return b->text;
    return NULL;
}

const char *scenario_builtin_text(const char *name)
{
    for (const struct scenario_builtin *b = scenario_builtins; b->name != NULL; b++)
        if (strcmp(b->name, name) == 0)
            return b->text;
    return NULL;
}

/* Turns "layer.app.timeout=300ms" into an entry; false with a message if
 * malformed or too long (nothing is cut short). text must outlive the load. */
static bool parse_override(const char *text, struct entry *e, struct scenario_diag *diag)
{
    e->set = text;
    const char *eq = strchr(text, '=');
    const char *dot = strchr(text, '.');
    if (eq == NULL || dot == NULL || dot > eq) {
        diag_add(diag, "--set %s: expected SECTION.KEY=VALUE, e.g. --set layer.app.timeout=300ms", text);
        return false;
    }
    const char *lastdot = dot;
    for (const char *p = dot; p < eq; p++)
        if (*p == '.')
            lastdot = p;
    size_t slen = (size_t)(lastdot - text), klen = (size_t)(eq - lastdot - 1), vlen = strlen(eq + 1);
    const struct { const char *part; size_t len, size; } lim[] = {
        {"section", slen, sizeof e->section}, {"key", klen, sizeof e->key}, {"value", vlen, sizeof e->value}};
    for (size_t i = 0; i < sizeof lim / sizeof lim[0]; i++)
        if (lim[i].len >= lim[i].size) {
            diag_add(diag, "--set %s: the %s is %zu characters long; at most %zu are allowed", text,
                     lim[i].part, lim[i].len, lim[i].size - 1);
            return false;
        }
    if (klen == 0) {
        diag_add(diag, "--set %s: expected SECTION.KEY=VALUE, e.g. --set layer.app.timeout=300ms", text);
        return false;
    }
    memcpy(e->section, text, slen);
    e->section[slen] = '\0';
    char *sd = strchr(e->section, '.');
    if (sd)
        *sd = ' '; /* "layer.app" names the section [layer app] */
    memcpy(e->key, lastdot + 1, klen);
    e->key[klen] = '\0';
    memcpy(e->value, eq + 1, vlen + 1);
    e->source = NULL;
    return true;
}

/* libinih reads the lines into entries. */
static void parse_lines(struct reader *rd, struct entries *es, const char *source,
                        struct scenario_diag *diag)
{
    struct parse_ctx pc = {es, rd, source};
    rd->es = es;
    rd->diag = diag;
    int rc = ini_parse_stream(read_line, rd, on_entry, &pc);
    if (rc > 0)
        diag_add(diag, "%s:%d: not an INI line: expected [section] or key = value", source, rc);
    else if (rc < 0)
        diag_add(diag, "%s: could not be parsed (out of memory)", source);
}

/* Duplicate keys in the file are mistakes ([herd] at excepted: they add up). */
static void check_duplicates(const struct entries *es, const char *source, struct scenario_diag *diag)
{
    struct index ix;
    index_init(&ix, es->n, true);
    for (size_t i = 0; i < es->n; i++) {
        if (es->e[i].key[0] == '\0' || strcmp(es->e[i].section, "herd") == 0)
            continue;
        size_t j = index_first(&ix, es, i);
        if (j != i)
            diag_add(diag, "%s:%d: [%s] %s given twice (first at line %d)", source, es->e[i].line,
                     es->e[i].section, es->e[i].key, es->e[j].line);
    }
    free(ix.slot);
}

/* Overrides replace a key in place (so the layer order stays the file's),
 * or are added. O(overrides · entries). */
static void apply_overrides(struct entries *es, const char *const *sets, size_t nsets,
                            struct scenario_diag *diag)
{
    for (size_t i = 0; i < nsets; i++) {
        struct entry tmp;
        memset(&tmp, 0, sizeof tmp);
        if (!parse_override(sets[i], &tmp, diag))
            continue;
        size_t j;
        for (j = 0; j < es->n; j++)
            if (strcmp(es->e[j].section, tmp.section) == 0 && strcmp(es->e[j].key, tmp.key) == 0)
                break;
        if (j < es->n)
            es->e[j] = tmp;
        else
            *entries_add(es) = tmp;
    }
}

/* Applies every entry; a section's own problems are reported at its first. */
static void apply_all(struct apply_ctx *ac, const struct entries *es)
{
    struct index ix;
    index_init(&ix, es->n, false);
    for (size_t i = 0; i < es->n; i++)
        apply_entry(ac, &es->e[i], index_first(&ix, es, i) == i);
    free(ix.slot);
}

static int load_common(struct scenario *sc, struct reader *rd, const char *source, const char *dir,
                       const char *const *sets, size_t nsets, struct scenario_diag *diag)
{
    struct entries es = {0};
    scenario_defaults(sc);
    snprintf(sc->source, sizeof sc->source, "%s", source);
    parse_lines(rd, &es, source, diag);
    check_duplicates(&es, source, diag);
    apply_overrides(&es, sets, nsets, diag);
    struct apply_ctx ac;
    memset(&ac, 0, sizeof ac);
    ac.sc = sc;
    ac.diag = diag;
    ac.dir = dir;
    apply_all(&ac, &es);
    if (sc->nservices == 0) /* neither [server] nor [service NAME]: one service, `server` */
        add_item(&ac, NULL, S_SERVICE, "server");
    check_all(&ac);
    check_limits(&ac);
    if (sc->nlayers == 0) {
        /* No layer: the application calls the first service once, with no timeout. */
        layer_defaults(&sc->layers[0], "client");
        copy_name(sc->layers[0].from, "client");
        copy_name(sc->layers[0].to, sc->services[0].name);
        sc->nlayers = 1;
    }
    free(es.e);
    return diag_end(diag, source);
}

int scenario_load_text(struct scenario *sc, const char *text, const char *source,
                       const char *const *sets, size_t nsets, struct scenario_diag *diag)
{
    struct reader rd = {.s = text, .source = source};
    diag_begin(diag);
    return load_common(sc, &rd, source, NULL, sets, nsets, diag);
}

int scenario_load(struct scenario *sc, const char *path, const char *const *sets, size_t nsets,
                  struct scenario_diag *diag)
{
    /* O_NONBLOCK: a fifo given as the scenario is refused below, not waited on */
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    FILE *f = NULL;
    if (fd >= 0 && (fcntl(fd, F_SETFL, 0) != 0 || (f = fdopen(fd, "r")) == NULL))
        close(fd);
    if (f == NULL) {
        const char *text = scenario_builtin_text(path);
        if (text != NULL)
            return scenario_load_text(sc, text, path, sets, nsets, diag);
        diag_begin(diag);
        diag_add(diag, "%s: cannot open: %s (a scenario file, or a built-in: see 'retrystorm list')",
                 path, strerror(errno));
        scenario_defaults(sc);
        return diag_end(diag, path);
    }
    diag_begin(diag);
    struct stat st;
    if (fstat(fileno(f), &st) == 0 && !S_ISREG(st.st_mode)) {
        diag_add(diag, "%s: not a regular file (a scenario file, or a built-in: see 'retrystorm list')",
                 path);
        fclose(f);
        scenario_defaults(sc);
        return diag_end(diag, path);
    }
    struct reader rd = {.f = f, .source = path};
    const char *slash = strrchr(path, '/');
    char *dir = slash == NULL ? strdup(".") : strndup(path, (size_t)(slash == path ? 1 : slash - path));
    if (dir == NULL) {
        fprintf(stderr, "retrystorm: out of memory\n");
        abort();
    }
    int n = load_common(sc, &rd, path, dir, sets, nsets, diag);
    free(dir);
    fclose(f);
    return n;
}

/* ---- writing the effective scenario ---- */

static const char *tf(bool b) { return b ? "true" : "false"; }

static const char *time_or_none(rs_time t, char *buf, size_t size)
{
    if (t == RS_TIME_NEVER) {
        snprintf(buf, size, "none");
        return buf;
    }
    return units_format_duration(t, buf, size);
}

static void write_run_load(const struct scenario *sc, FILE *f)
{
    char a[64], b[64], c[64];
    fprintf(f, "; effective scenario, written by retrystorm %s from %s\n", RS_VERSION, sc->source);
    fprintf(f, "[run]\nname = %s\nduration = %s\nwarmup = %s\nseed = %llu\nbucket = %s\n\n", sc->name,
            units_format_duration(sc->duration, a, sizeof a),
            units_format_duration(sc->warmup, b, sizeof b), (unsigned long long)sc->seed,
            units_format_duration(sc->bucket, c, sizeof c));
    fprintf(f, "[load]\nmodel = %s\n", model_names[sc->model]);
    if (sc->model == LOAD_OPEN && sc->rate > 0)
        fprintf(f, "arrival = %s\nrate = %.17g/s\n", arrival_names[sc->arrival], sc->rate);
    else if (sc->model == LOAD_OPEN && sc->trace[0] != '\0')
        fprintf(f, "arrival = %s\n", arrival_names[sc->arrival]);
    else
        fprintf(f, "think = %s\n", dist_format(&sc->think, a, sizeof a));
    fprintf(f, "clients = %u\nidempotent = %s\nkey = %s\n", sc->clients, tf(sc->idempotent),
            tf(sc->key));
    /* the keys of later issues only when used: older outputs stay as they were */
    if (sc->sine_amplitude > 0)
        fprintf(f, "shape = sine(%.17g, %s)\n", sc->sine_amplitude,
                units_format_duration(sc->sine_period, a, sizeof a));
    if (sc->trace[0] != '\0')
        fprintf(f, "trace = %s\n", sc->trace);
    if (sc->ncaches > 0 && sc->zipf > 0)
        fprintf(f, "keys = %u\npopularity = zipf(%.17g)\n", sc->keys, sc->zipf);
    else if (sc->ncaches > 0)
        fprintf(f, "keys = %u\npopularity = uniform\n", sc->keys);
}

static void write_cache(const struct cache_cfg *c, FILE *f)
{
    char a[64], b[64];
    fprintf(f, "\n[cache %s]\n", c->name);
    if (c->capacity < 0)
        fprintf(f, "capacity = unbounded\n");
    else
        fprintf(f, "capacity = %lld\n", c->capacity);
    fprintf(f, "ttl = %s\nttl_jitter = %.17g\ncoalesce = %s\nhit = %s\n",
            time_or_none(c->ttl, a, sizeof a), c->ttl_jitter, tf(c->coalesce),
            dist_format(&c->hit, b, sizeof b));
}

/* A service's keys: [server]'s, and with graph the service-graph ones. */
static void write_service(const struct service_cfg *v, bool graph, FILE *f)
{
    char a[64];
    if (graph)
        fprintf(f, "\n[service %s]\n", v->name);
    else
        fprintf(f, "\n[server]\n");
    fprintf(f, "model = %s\nworkers = %u\n", server_model_names[v->model], v->workers);
    if (v->queue < 0)
        fprintf(f, "queue = unbounded\n");
    else
        fprintf(f, "queue = %lld\n", v->queue);
    fprintf(f, "service = %s\ndiscipline = %s\n", dist_format(&v->service, a, sizeof a),
            discipline_names[v->discipline]);
    fprintf(f, "error_400 = %.17g\nerror_500 = %.17g\nerror_503 = %.17g\nbusiness = %.17g\n",
            v->p400, v->p500, v->p503, v->p_business);
    if (v->limit_rate > 0)
        fprintf(f, "limit_rate = %.17g/s\n", v->limit_rate);
    else
        fprintf(f, "limit_rate = none\n");
    fprintf(f, "limit_burst = %u\nlimit_status = %s\nlimit_retry_after = %s\n", v->limit_burst,
            errclass_names[v->limit_status], time_or_none(v->limit_retry_after, a, sizeof a));
    fprintf(f, "degrade = %.17g\ndrop_expired = %s\ndedup = %s\nreplay = %s\n", v->degrade,
            tf(v->drop_expired), tf(v->dedup), dist_format(&v->replay, a, sizeof a));
    if (v->degrade_shape != DEGRADE_LINEAR)
        fprintf(f, "degrade_shape = %s\n", degrade_names[v->degrade_shape]);
    if (v->cache_index >= 0)
        fprintf(f, "cache = %s\n", v->cache);
    if (!graph)
        return;
    fprintf(f, "replicas = %u\nbalancer = %s\ncalls =", v->replicas, balancer_names[v->balancer]);
    for (unsigned c = 0; c < v->ncalls; c++)
        if (v->calls[c].fanout > 1)
            fprintf(f, " %s*%u", v->calls[c].name, v->calls[c].fanout);
        else
            fprintf(f, " %s", v->calls[c].name);
    fprintf(f, "%s\nservice_after = %s\n", v->ncalls ? "" : " none",
            v->has_after ? dist_format(&v->service_after, a, sizeof a) : "none");
}

/* A phase; with graph, its target and hop keys, and only the keys its
 * target takes. */
static void write_phase(const struct phase_cfg *p, bool graph, FILE *f)
{
    char a[64], b[64];
    fprintf(f, "\n[phase %s]\nstart = %s\nend = %s\n", p->name,
            units_format_duration(p->start, a, sizeof a), units_format_duration(p->end, b, sizeof b));
    if (p->has_rate && p->ramp && p->rate_is_factor)
        fprintf(f, "rate = ramp(x%.17g, x%.17g)\n", p->rate, p->rate_to);
    else if (p->has_rate && p->ramp)
        fprintf(f, "rate = ramp(%.17g/s, %.17g/s)\n", p->rate, p->rate_to);
    else if (p->has_rate && p->rate_is_factor)
        fprintf(f, "rate = x%.17g\n", p->rate);
    else if (p->has_rate)
        fprintf(f, "rate = %.17g/s\n", p->rate);
    if (p->flush_cache >= 0)
        fprintf(f, "flush = %s\n", p->flush);
    if (graph && p->target[0] != '\0')
        fprintf(f, "target = %s\n", p->target);
    if (p->target_kind == TARGET_CACHE) {
        if (p->has_capacity)
            fprintf(f, "capacity = %.17g\n", p->capacity);
        return;
    }
    if (graph && p->target_kind == TARGET_LAYER) {
        if (p->has_latency)
            fprintf(f, "latency = %s\n", dist_format(&p->latency, a, sizeof a));
        fprintf(f, "loss = %.17g\n", p->loss);
        return;
    }
    if (p->has_capacity)
        fprintf(f, "capacity = %.17g\n", p->capacity);
    fprintf(f, "outage = %s\nretry_after = %s\nslowdown = %.17g\n", outage_names[p->outage],
            time_or_none(p->retry_after, a, sizeof a), p->slowdown);
}

static void write_budget(const struct layer_cfg *l, FILE *f)
{
    char a[64];
    const struct budget_params *bp = &l->budget_p;
    fprintf(f, "budget = %s\nbudget_scope = %s\n", l->budget->name, scope_names[l->budget_scope]);
    if (l->budget->id != BUDGET_NONE)
        fprintf(f,
                "budget_max_tokens = %.17g\nbudget_token_ratio = %.17g\nbudget_percent = %.17g\n"
                "budget_min_per_s = %.17g\nbudget_ttl = %s\nbudget_min_concurrency = %.17g\n"
                "budget_capacity = %.17g\nbudget_cost = %.17g\nbudget_timeout_cost = %.17g\n"
                "budget_deposit = %.17g\nbudget_deposit_on_success = %s\nbudget_k = %.17g\n",
                bp->max_tokens, bp->token_ratio, bp->percent, bp->min_per_s,
                units_format_duration(bp->ttl, a, sizeof a), bp->min_concurrency, bp->capacity,
                bp->cost, bp->timeout_cost, bp->deposit, tf(bp->deposit_on_success), bp->k);
}

static void write_breaker(const struct layer_cfg *l, FILE *f)
{
    char a[64], b[64];
    const struct breaker_params *kp = &l->breaker_p;
    fprintf(f, "breaker = %s\nbreaker_scope = %s\n", l->breaker->name,
            scope_names[l->breaker_scope]);
    if (l->breaker->id == BREAKER_NONE)
        return;
    fprintf(f, "breaker_failures = %u\nbreaker_open_for = %s\nbreaker_probes = %u\n",
            kp->failures, units_format_duration(kp->open_for, a, sizeof a), kp->probes);
    if (kp->window_calls > 0)
        fprintf(f, "breaker_window = %u\n", kp->window_calls);
    else if (kp->window > 0)
        fprintf(f, "breaker_window = %s\n", units_format_duration(kp->window, a, sizeof a));
    fprintf(f,
            "breaker_min_calls = %u\nbreaker_failure_rate = %.17g\nbreaker_slow_rate = %.17g\n"
            "breaker_slow_call = %s\nbreaker_max_failure_ratio = %.17g\n",
            kp->min_calls, kp->failure_rate, kp->slow_rate,
            time_or_none(kp->slow_call, b, sizeof b), kp->max_failure_ratio);
}

/* A layer; with graph, its edge and bulkhead too. */
static void write_layer(const struct layer_cfg *l, bool graph, FILE *f)
{
    char a[64], b[64], set[256];
    fprintf(f, "\n[layer %s]\nattempts = %u\ntimeout = %s\nbackoff = %s\nbase = %s\n", l->name,
            l->attempts, time_or_none(l->timeout, a, sizeof a), l->backoff->name,
            units_format_duration(l->bp.base, b, sizeof b));
    fprintf(f, "multiplier = %.17g\ncap = %s\njitter = %.17g\n", l->bp.multiplier,
            time_or_none(l->bp.cap, a, sizeof a), l->bp.jitter);
    fprintf(f, "retry_on = %s\nretry_after = %s\nretry_after_max = %s\n",
            errclass_format_set(l->retry_on, set, sizeof set), honor_names[l->retry_after],
            time_or_none(l->retry_after_max, a, sizeof a));
    fprintf(f, "deadline = %s\npropagate_deadline = %s\n", time_or_none(l->deadline, a, sizeof a),
            tf(l->propagate_deadline));
    fprintf(f, "request_latency = %s\n",
            l->has_request_latency ? dist_format(&l->request_latency, a, sizeof a) : "none");
    fprintf(f, "response_latency = %s\n",
            l->has_response_latency ? dist_format(&l->response_latency, a, sizeof a) : "none");
    fprintf(f, "request_loss = %.17g\nresponse_loss = %.17g\n", l->request_loss, l->response_loss);
    if (l->instances == 0)
        fprintf(f, "instances = per-client\n");
    else
        fprintf(f, "instances = %u\n", l->instances);
    write_budget(l, f);
    write_breaker(l, f);
    if (!graph)
        return;
    fprintf(f, "from = %s\nto = %s\nconcurrency = %u\n", l->from, l->to, l->concurrency);
    if (l->concurrency == 0)
        return; /* the queue and the wait go with a bulkhead only */
    if (l->concurrency_queue < 0)
        fprintf(f, "concurrency_queue = unbounded\n");
    else
        fprintf(f, "concurrency_queue = %lld\n", l->concurrency_queue);
    fprintf(f, "concurrency_wait = %s\n", time_or_none(l->concurrency_wait, a, sizeof a));
}

int scenario_write_ini(const struct scenario *sc, FILE *f)
{
    char a[64];
    write_run_load(sc, f);
    for (unsigned i = 0; i < (sc->graph ? sc->nservices : 1); i++)
        write_service(&sc->services[i], sc->graph, f);
    for (unsigned i = 0; i < sc->ncaches; i++)
        write_cache(&sc->caches[i], f);
    if (sc->nherds > 0) {
        fprintf(f, "\n[herd]\n");
        for (unsigned i = 0; i < sc->nherds; i++)
            fprintf(f, "at = %s\n", units_format_duration(sc->herds[i], a, sizeof a));
    }
    for (unsigned i = 0; i < sc->nphases; i++)
        write_phase(&sc->phases[i], sc->graph, f);
    for (unsigned i = 0; i < sc->nlayers; i++)
        write_layer(&sc->layers[i], sc->graph, f);
    return ferror(f) ? -1 : 0;
}
