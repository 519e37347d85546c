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
 * This file holds the loading itself: the entry list and its hash index, the line reader, overrides and the entry points. The
 * key table and the value parsers are in scenario_keys.c, applying an entry
 * in scenario_apply.c, the cross-field rules in scenario_check.c, the
 * limits on the run's size in scenario_limits.c, and the effective
 * scenario's INI in scenario_ini.c, the list of messages and "did you
 * mean" in scenario_diag.c (a leaf: every other part calls it, it calls
 * none); scenario_int.h is what they share.
 */
#define _XOPEN_SOURCE 700 /* strdup, strndup, fdopen, and POSIX 2008 */

#include "scenario_int.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <ini.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* A line, its \r\n and a NUL fit in libinih's buffer. */
_Static_assert(SCENARIO_MAX_LINE + 3 <= INI_MAX_LINE, "INI_MAX_LINE is too small");

/* ---- the entry list ---- */

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
    char section[96]; /* the last section header: the section of the keys after it */
    bool skipping;    /* after a refused section header: its keys are left out */
    bool key_seen;    /* a key since the last header: a blank-led line is then a
                       * continuation of its value for libinih, not a header */
};

/* A blank as libinih's lskip and rstrip see one (isspace in the C locale). */
static bool is_blank(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
}

/* libinih reports keys, not sections; a section header is noted here as an
 * entry with an empty key, so that a section with no keys still exists
 * ([layer sidecar] alone is a layer with defaults) and a misspelt empty
 * section is still reported. */
static void note_section_header(struct reader *r, const char *line)
{
    while (is_blank(*line)) /* libinih's rule: isspace */
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
    scn_diag_add(r->diag, "%s:%d: %sthe line is %zu characters long; at most %d are allowed",
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
    if (r->line == 1 && n >= 3 && memcmp(buf, "\xEF\xBB\xBF", 3) == 0) {
        memmove(buf, buf + 3, n - 2); /* a UTF-8 byte order mark, as libinih skips it */
        n -= 3;
        len -= 3;
    }
    if (nul) {
        scn_diag_add(r->diag, "%s:%d: the line holds a NUL byte; a scenario file is text", r->source,
                     r->line);
        buf[0] = '\0';
    } else if (len > SCENARIO_MAX_LINE) {
        refuse_long_line(r, buf, len);
    } else {
        size_t lead = strspn(buf, " \t\n\v\f\r");
        bool continued = lead > 0 && r->key_seen && buf[lead] != '\0' && buf[lead] != ';' &&
                         buf[lead] != '#'; /* libinih's multi-line values */
        if (buf[lead] == '[' && !continued) {
            note_section_header(r, buf);
            r->key_seen = false;
        } else if (r->skipping) {
            buf[0] = '\0';
        } else if (!continued && strpbrk(buf + lead, "=:") != NULL && buf[lead] != ';' &&
                   buf[lead] != '#') {
            r->key_seen = true;
        }
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
    /* libinih keeps 49 characters of a section's name ("service " and a
     * name of 47 is longer): the whole name is the reader's */
    (void)section;
    /* written back (scenario.ini) as "key = value": what that line could
     * not hold is refused here, as for --set */
    size_t klen = strlen(name), vlen = value ? strlen(value) : 0;
    if (vlen > SCENARIO_VALUE_ROOM(klen)) {
        scn_diag_add(pc->rd->diag,
                     "%s:%d: [%s] %s = '%.24s...': the value is %zu characters long; at most %zu are "
                     "allowed for %s (the effective scenario writes it as 'key = value', and a line "
                     "holds %d characters)",
                     pc->source, pc->rd->line, pc->rd->section, name, value ? value : "", vlen,
                     SCENARIO_VALUE_ROOM(klen), name, SCENARIO_MAX_LINE);
        return 1;
    }
    struct entry *e = entries_add(pc->es);
    copy_clipped(e->section, sizeof e->section, pc->rd->section, strlen(pc->rd->section));
    copy_clipped(e->key, sizeof e->key, name, strlen(name));
    snprintf(e->value, sizeof e->value, "%s", value ? value : ""); /* SCENARIO_MAX_LINE: it fits */
    e->source = pc->source;
    e->line = pc->rd->line;
    return 1;
}

/* ---- entry points ---- */

size_t scenario_about(const char *text, const char **start)
{
    if (text[0] != ';' && text[0] != '#') {
        *start = text;
        return 0;
    }
    const char *p = text;
    while (*p == ';' || *p == '#' || *p == ' ')
        p++;
    *start = p;
    return strcspn(p, "\n");
}

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
        scn_diag_add(diag, "--set %s: expected SECTION.KEY=VALUE, e.g. --set layer.app.timeout=300ms", text);
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
            scn_diag_add(diag, "--set %s: the %s is %zu characters long; at most %zu are allowed", text,
                         lim[i].part, lim[i].len, lim[i].size - 1);
            return false;
        }
    if (klen == 0) {
        scn_diag_add(diag, "--set %s: expected SECTION.KEY=VALUE, e.g. --set layer.app.timeout=300ms", text);
        return false;
    }
    /* what a file's line could not hold, the effective scenario could not */
    if (vlen > SCENARIO_VALUE_ROOM(klen)) {
        scn_diag_add(diag,
                     "--set %s: the value is %zu characters long; at most %zu are allowed for %.*s "
                     "(a scenario line, 'key = value', holds %d characters)",
                     text, vlen, SCENARIO_VALUE_ROOM(klen), (int)klen, lastdot + 1, SCENARIO_MAX_LINE);
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
        scn_diag_add(diag, "%s:%d: not an INI line: expected [section] or key = value", source, rc);
    else if (rc < 0)
        scn_diag_add(diag, "%s: could not be parsed (out of memory)", source);
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
            scn_diag_add(diag, "%s:%d: [%s] %s given twice (first at line %d)", source, es->e[i].line,
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
        scn_apply_entry(ac, &es->e[i], index_first(&ix, es, i) == i);
    free(ix.slot);
}

static int load_common(struct scenario *sc, struct reader *rd, const char *source, const char *dir,
                       bool sealed, const char *const *sets, size_t nsets, struct scenario_diag *diag)
{
    struct entries es = {0};
    scn_defaults(sc);
    snprintf(sc->source, sizeof sc->source, "%s", source);
    parse_lines(rd, &es, source, diag);
    check_duplicates(&es, source, diag);
    apply_overrides(&es, sets, nsets, diag);
    struct apply_ctx ac;
    memset(&ac, 0, sizeof ac);
    ac.sc = sc;
    ac.diag = diag;
    ac.dir = dir;
    ac.sealed = sealed;
    apply_all(&ac, &es);
    if (sc->nservices == 0) /* neither [server] nor [service NAME]: one service, `server` */
        scn_add_item(&ac, NULL, S_SERVICE, "server");
    scn_check_all(&ac);
    scn_check_limits(&ac);
    if (sc->nlayers == 0) {
        /* No layer: the application calls the first service once, with no timeout. */
        scn_layer_defaults(&sc->layers[0], "client");
        scn_copy_name(sc->layers[0].from, "client");
        scn_copy_name(sc->layers[0].to, sc->services[0].name);
        sc->nlayers = 1;
    }
    free(es.e);
    return scn_diag_end(diag, source);
}

int scenario_load_text(struct scenario *sc, const char *text, const char *source,
                       const char *const *sets, size_t nsets, struct scenario_diag *diag)
{
    struct reader rd = {.s = text, .source = source};
    scn_diag_begin(diag);
    return load_common(sc, &rd, source, NULL, false, sets, nsets, diag);
}

int scenario_load_sealed(struct scenario *sc, const char *text, const char *source,
                         const char *const *sets, size_t nsets, struct scenario_diag *diag)
{
    struct reader rd = {.s = text, .source = source};
    scn_diag_begin(diag);
    return load_common(sc, &rd, source, NULL, true, sets, nsets, diag);
}

/* The built-in scenario nearest to name (at most 2 edits), or NULL. */
static const char *nearest_builtin(const char *name)
{
    const char *best = NULL;
    size_t best_d = 3;
    if (strlen(name) > SCENARIO_NAME_MAX)
        return NULL;
    for (const struct scenario_builtin *b = scenario_builtins; b->name != NULL; b++) {
        size_t d = scenario_edit_distance(name, b->name);
        if (d < best_d)
            best = b->name, best_d = d;
    }
    return best;
}

int scenario_load(struct scenario *sc, const char *path, const char *const *sets, size_t nsets,
                  struct scenario_diag *diag)
{
    /* A built-in's name always means the built-in, whatever the current
     * directory holds (an output directory `herd`, say); a file of that
     * name is named by a path: ./herd */
    const char *builtin = scenario_builtin_text(path);
    if (builtin != NULL)
        return scenario_load_text(sc, builtin, path, sets, nsets, diag);
    /* O_NONBLOCK: a fifo given as the scenario is refused below, not waited on */
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    FILE *f = NULL;
    if (fd >= 0 && (fcntl(fd, F_SETFL, 0) != 0 || (f = fdopen(fd, "r")) == NULL))
        close(fd);
    if (f == NULL) {
        int err = errno;
        const char *near = nearest_builtin(path);
        scn_diag_begin(diag);
        if (near != NULL)
            scn_diag_add(diag, "%s: cannot open: %s; did you mean the built-in '%s'? (retrystorm list)", path,
                         strerror(err), near);
        else
            scn_diag_add(diag, "%s: cannot open: %s (a scenario file, or a built-in: see 'retrystorm list')",
                         path, strerror(err));
        scn_defaults(sc);
        return scn_diag_end(diag, path);
    }
    scn_diag_begin(diag);
    struct stat st;
    if (fstat(fileno(f), &st) == 0 && !S_ISREG(st.st_mode)) {
        scn_diag_add(diag, "%s: not a regular file (a scenario file, or a built-in: see 'retrystorm list')",
                     path);
        fclose(f);
        scn_defaults(sc);
        return scn_diag_end(diag, path);
    }
    struct reader rd = {.f = f, .source = path};
    const char *slash = strrchr(path, '/');
    char *dir = slash == NULL ? strdup(".") : strndup(path, (size_t)(slash == path ? 1 : slash - path));
    if (dir == NULL) {
        fprintf(stderr, "retrystorm: out of memory\n");
        abort();
    }
    int n = load_common(sc, &rd, path, dir, false, sets, nsets, diag);
    free(dir);
    fclose(f);
    return n;
}
