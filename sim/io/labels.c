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
