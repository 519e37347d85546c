/*
 * labels — the names people read for variants, sweep points and keys.
 * See labels.h for the rule; the key table is scenario_keys.c's.
 */
#include "labels.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "scenario_int.h"

/* Whether path ends with the dot-separated suffix s (all of path, or
 * after a dot). */
static bool ends_with_parts(const char *path, const char *s)
{
    size_t n = strlen(path), m = strlen(s);
    return n == m ? strcmp(path, s) == 0 : n > m && path[n - m - 1] == '.' && strcmp(path + n - m, s) == 0;
}

/* Whether a key of section kind k named name (NULL: unnamed), other than
 * self, ends with suffix s. */
static bool taken_in(enum sect_kind k, const char *name, const char *self, const char *s)
{
    enum sect_kind kk = k == S_SERVICE ? S_SERVER : k;
    char path[256];
    for (size_t i = 0; i < NKEYS; i++) {
        if (scn_keys[i].sect != kk)
            continue;
        if (name)
            snprintf(path, sizeof path, "%s.%s.%s", scn_sect_names[k], name, scn_keys[i].key);
        else
            snprintf(path, sizeof path, "%s.%s", scn_sect_names[k], scn_keys[i].key);
        if (strcmp(path, self) != 0 && ends_with_parts(path, s))
            return true;
    }
    return false;
}

/* Whether any key of sc's sections but self ends with suffix s. */
static bool taken(const struct scenario *sc, const char *self, const char *s)
{
    static const enum sect_kind unnamed[] = {S_RUN, S_LOAD, S_HERD};
    for (size_t i = 0; i < sizeof unnamed / sizeof *unnamed; i++)
        if (taken_in(unnamed[i], NULL, self, s))
            return true;
    for (unsigned i = 0; i < sc->nservices; i++) {
        bool server = strcmp(sc->services[i].name, "server") == 0;
        if (taken_in(server ? S_SERVER : S_SERVICE, server ? NULL : sc->services[i].name, self, s))
            return true;
    }
    for (unsigned i = 0; i < sc->nphases; i++)
        if (taken_in(S_PHASE, sc->phases[i].name, self, s))
            return true;
    for (unsigned i = 0; i < sc->nlayers; i++)
        if (taken_in(S_LAYER, sc->layers[i].name, self, s))
            return true;
    for (unsigned i = 0; i < sc->ncaches; i++)
        if (taken_in(S_CACHE, sc->caches[i].name, self, s))
            return true;
    return false;
}

void labels_short_key(const struct scenario *sc, const char *key, char *out, size_t size)
{
    char self[256];
    if (strncmp(key, "service.server.", 15) == 0) /* [server] is the service named server */
        snprintf(self, sizeof self, "server.%s", key + 15);
    else
        snprintf(self, sizeof self, "%s", key);
    const char *s = self + strlen(self);
    while (s > self) { /* the suffixes, shortest first */
        while (s > self && s[-1] != '.')
            s--;
        if (!taken(sc, self, s))
            break;
        if (s > self)
            s--; /* onto the dot: the next suffix has one part more */
    }
    snprintf(out, size, "%s", s);
}

int labels_check_text(const char *text, char *err, size_t errsz)
{
    size_t n = strlen(text);
    if (n == 0 || n > LABELS_TEXT_MAX) {
        snprintf(err, errsz, "the text '%.100s' has %zu bytes; a label has 1 to %d", text, n, LABELS_TEXT_MAX);
        return -1;
    }
    for (const unsigned char *p = (const unsigned char *)text; *p; p++)
        if (*p < 0x20 || *p == 0x7f || *p == ',' || *p == '"') {
            snprintf(err, errsz, "the text '%s' holds %s; a label may hold any printable character but a "
                                 "comma or a double quote", text,
                     *p == ',' ? "a comma" : *p == '"' ? "a double quote" : "a control character");
            return -1;
        }
    return 0;
}

/* Appends one part of a label (len bytes at p) to out, a backoff key
 * with the value none in words. */
static void legend_part(const char *p, size_t len, char *out, size_t size, size_t *used)
{
    static const char none[] = "backoff=none";
    size_t nl = sizeof none - 1;
    bool is_none = len >= nl && memcmp(p + len - nl, none, nl) == 0 && (len == nl || p[len - nl - 1] == '.');
    int w = is_none && len > nl ? snprintf(out + *used, size - *used, "%.*s: no backoff (immediate)",
                                           (int)(len - nl - 1), p)
            : is_none ? snprintf(out + *used, size - *used, "no backoff (immediate)")
                      : snprintf(out + *used, size - *used, "%.*s", (int)len, p);
    *used = w < 0 || (size_t)w >= size - *used ? size - 1 : *used + (size_t)w;
}

void labels_legend(const char *label, const char *given, char *out, size_t size)
{
    if (size == 0)
        return;
    if (given && given[0]) {
        snprintf(out, size, "%s", given);
        return;
    }
    size_t used = 0;
    out[0] = '\0';
    for (const char *p = label; used + 1 < size;) {
        size_t len = strcspn(p, "+ ");
        legend_part(p, len, out, size, &used);
        if (p[len] == '\0' || used + 1 >= size)
            break;
        out[used++] = p[len], out[used] = '\0';
        p += len + 1;
    }
}

/* Whether name (a variant's, parts joined by '+') is named by the len
 * bytes at v: as many parts, each of v's ending (at a dot) with the
 * name's. */
static bool names_variant(const char *v, size_t len, const char *name)
{
    for (;;) {
        size_t a = 0, b = strcspn(name, "+");
        while (a < len && v[a] != '+')
            a++;
        if (a < b || memcmp(v + a - b, name, b) != 0 || (a > b && v[a - b - 1] != '.'))
            return false;
        if (name[b] == '\0' || a == len)
            return name[b] == '\0' && a == len;
        v += a + 1, len -= a + 1, name += b + 1;
    }
}

/* The variants' names after a message, as many as err holds. */
static void list_names(char *err, size_t errsz, const char *const *names, size_t n)
{
    size_t used = strlen(err);
    for (size_t i = 0; i < n && used + 1 < errsz; i++) {
        int w = snprintf(err + used, errsz - used, "%s%s", i ? ", " : "", names[i]);
        used = w < 0 ? errsz : used + (size_t)w;
    }
}

int labels_take(struct labels_map *m, const char *arg, const char *const *names, size_t n, char *err,
                size_t errsz)
{
    size_t best = 0, which = 0, count = 0; /* the longest VARIANT, its variant, how many it names */
    for (const char *eq = strchr(arg, '='); eq; eq = strchr(eq + 1, '=')) {
        size_t len = (size_t)(eq - arg), c = 0, w = 0;
        for (size_t i = 0; i < n; i++)
            if (names_variant(arg, len, names[i]))
                c++, w = i;
        if (c > 0)
            best = len, which = w, count = c;
    }
    if (count != 1) {
        snprintf(err, errsz, "--label '%.200s': %s; give VARIANT=TEXT with VARIANT one of: ", arg,
                 count ? "names more than one variant" : "names no variant");
        list_names(err, errsz, names, n);
        return -1;
    }
    char why[400];
    if (labels_check_text(arg + best + 1, why, sizeof why) != 0) {
        snprintf(err, errsz, "--label '%.200s': %s", arg, why);
        return -1;
    }
    size_t e = 0;
    while (e < m->n && strcmp(m->e[e].variant, names[which]) != 0)
        e++;
    if (e == LABELS_MAX || strlen(names[which]) > LABELS_NAME_MAX) {
        snprintf(err, errsz, "--label '%.200s': %s", arg,
                 e == LABELS_MAX ? "more than 32 variants labelled" : "the variant's name is too long to label");
        return -1;
    }
    snprintf(m->e[e].variant, sizeof m->e[e].variant, "%s", names[which]);
    snprintf(m->e[e].text, sizeof m->e[e].text, "%s", arg + best + 1);
    m->n += e == m->n;
    return 0;
}

const char *labels_find(const struct labels_map *m, const char *variant)
{
    for (size_t i = 0; m && i < m->n; i++)
        if (strcmp(m->e[i].variant, variant) == 0)
            return m->e[i].text;
    return NULL;
}

void labels_write(FILE *f, const struct labels_map *m)
{
    fprintf(f, "variant,label\n");
    for (size_t i = 0; i < m->n; i++)
        fprintf(f, "%s,%s\n", m->e[i].variant, m->e[i].text);
}

int labels_parse(const char *text, const char *source, struct labels_map *m, char *err, size_t errsz)
{
    m->n = 0;
    unsigned line = 1;
    const char *nl = strchr(text, '\n');
    if (nl == NULL || (size_t)(nl - text) != 13 || strncmp(text, "variant,label", 13) != 0) {
        snprintf(err, errsz, "%s:1: expected the header variant,label", source);
        return -1;
    }
    for (const char *p = nl + 1; *p; p = nl + 1) {
        line++;
        nl = strchr(p, '\n');
        const char *comma = memchr(p, ',', nl ? (size_t)(nl - p) : strlen(p));
        char text_[LABELS_TEXT_MAX + 2], why[400];
        size_t vlen = comma ? (size_t)(comma - p) : 0, tlen = comma && nl ? (size_t)(nl - comma - 1) : 0;
        if (nl == NULL || comma == NULL || vlen == 0 || vlen > LABELS_NAME_MAX || tlen > LABELS_TEXT_MAX ||
            m->n == LABELS_MAX) {
            snprintf(err, errsz, "%s:%u: expected VARIANT,TEXT on a whole line (at most %d rows)", source, line,
                     LABELS_MAX);
            return -1;
        }
        snprintf(text_, sizeof text_, "%.*s", (int)tlen, comma + 1);
        if (labels_check_text(text_, why, sizeof why) != 0) {
            snprintf(err, errsz, "%s:%u: %s", source, line, why);
            return -1;
        }
        snprintf(m->e[m->n].variant, sizeof m->e[0].variant, "%.*s", (int)vlen, p);
        memcpy(m->e[m->n++].text, text_, tlen + 1); /* checked: at most LABELS_TEXT_MAX bytes */
    }
    return 0;
}
