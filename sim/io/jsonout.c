/*
 * jsonout — summary.json from a summary table; see jsonout.h.
 */
#define _XOPEN_SOURCE 700 /* open_memstream */

#include "jsonout.h"

#include "csvread.h"
#include "output.h"

#include <json-c/json.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define JSONOUT_MAX_COLUMNS 4096
#define JSONOUT_MAX_BYTES ((size_t)256 << 20)

size_t jsonout_utf8_len(const char *s)
{
    /* RFC 3629's table: the lead bytes, the sequence's length, and the
     * range of its second byte (the others are 0x80 to 0xBF). */
    static const struct {
        unsigned char lo, hi, len, second_lo, second_hi;
    } utf8[] = {
        {0x00, 0x7F, 1, 0, 0},       {0xC2, 0xDF, 2, 0x80, 0xBF}, {0xE0, 0xE0, 3, 0xA0, 0xBF},
        {0xE1, 0xEC, 3, 0x80, 0xBF}, {0xED, 0xED, 3, 0x80, 0x9F}, {0xEE, 0xEF, 3, 0x80, 0xBF},
        {0xF0, 0xF0, 4, 0x90, 0xBF}, {0xF1, 0xF3, 4, 0x80, 0xBF}, {0xF4, 0xF4, 4, 0x80, 0x8F},
    };
    const unsigned char *p = (const unsigned char *)s;
    for (size_t i = 0; i < sizeof utf8 / sizeof utf8[0]; i++) {
        if (p[0] < utf8[i].lo || p[0] > utf8[i].hi)
            continue;
        if (utf8[i].len > 1 && (p[1] < utf8[i].second_lo || p[1] > utf8[i].second_hi))
            return 0;
        for (size_t k = 2; k < utf8[i].len; k++)
            if (p[k] < 0x80 || p[k] > 0xBF)
                return 0;
        return utf8[i].len;
    }
    return 0;
}

/* s with each byte that starts no well-formed UTF-8
 * sequence replaced by U+FFFD, in a new string; s itself (not copied) when
 * it is well-formed already. Two passes: O(length). */
static char *utf8_clean(char *s)
{
    size_t bad = 0, n = 0;
    for (size_t k; s[n] != '\0'; n += k ? k : 1)
        bad += (k = jsonout_utf8_len(s + n)) == 0;
    if (bad == 0)
        return s;
    if (n > (SIZE_MAX - 1) / 3) {
        fprintf(stderr, "retrystorm: a table of %zu bytes is too large for summary.json\n", n);
        abort();
    }
    char *out = malloc(n + 2 * bad + 1), *o = out;
    if (out == NULL) {
        fprintf(stderr, "retrystorm: out of memory building summary.json (%zu bytes)\n", n + 2 * bad + 1);
        abort();
    }
    for (size_t i = 0, k; i < n; i += k ? k : 1) {
        if ((k = jsonout_utf8_len(s + i)) == 0)
            memcpy(o, "\xEF\xBF\xBD", 3), o += 3;
        else
            memcpy(o, s + i, k), o += k;
    }
    *o = '\0';
    return out;
}

/* Whether s is a number in JSON's grammar:
 * -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?  (so never inf or nan). */
static bool is_json_number(const char *s)
{
    const char *p = s;
    if (*p == '-')
        p++;
    if (*p == '0')
        p++;
    else if (*p >= '1' && *p <= '9')
        while (*p >= '0' && *p <= '9')
            p++;
    else
        return false;
    if (*p == '.') {
        if (!(*++p >= '0' && *p <= '9'))
            return false;
        while (*p >= '0' && *p <= '9')
            p++;
    }
    if (*p == 'e' || *p == 'E') {
        p++;
        if (*p == '+' || *p == '-')
            p++;
        if (!(*p >= '0' && *p <= '9'))
            return false;
        while (*p >= '0' && *p <= '9')
            p++;
    }
    return *p == '\0';
}

/* json-c's constructors return NULL only when memory is short: abort,
 * saying so (STYLE: out of memory aborts). */
static const char *must_text(const char *s)
{
    if (s == NULL) {
        fprintf(stderr, "retrystorm: out of memory writing summary.json\n");
        abort();
    }
    return s;
}

static json_object *must(json_object *o, const char *what)
{
    if (o == NULL) {
        fprintf(stderr, "retrystorm: out of memory building summary.json (%s)\n", what);
        abort();
    }
    return o;
}

/* Splits the next line of *pos into at most max fields (in place); returns
 * their number, or 0 at the end; *more when there were more. */
static size_t next_line(char **pos, char **fields, size_t max, bool *more)
{
    char *p = *pos, *end = strchr(p, '\n');
    if (*p == '\0')
        return 0;
    if (end != NULL)
        *end = '\0', *pos = end + 1;
    else
        *pos = p + strlen(p);
    size_t n = 0;
    *more = false;
    for (;;) {
        if (n == max) {
            *more = true;
            return n;
        }
        fields[n++] = p;
        char *c = strchr(p, ',');
        if (c == NULL)
            return n;
        *c = '\0';
        p = c + 1;
    }
}

/* Whether column `name` holds text whatever its cells look like: the
 * scenario's name, a variant's label, a grid or --vary key's values (the
 * keys have a dot; a value such as 01 or 1e5 stays as it was given). */
static bool text_column(const char *name)
{
    return strchr(name, '.') != NULL || strcmp(name, "scenario") == 0 || strcmp(name, "variant") == 0;
}

/* Whether the len bytes at p are a JSON number. */
static bool cell_is_number(const char *p, size_t len)
{
    char cell[64];
    if (len >= sizeof cell)
        return false;
    memcpy(cell, p, len);
    cell[len] = '\0';
    return is_json_number(cell);
}

/* Which columns are numbers: not text columns, and every cell of the rows
 * in text a JSON number or empty (so a column's values are all of one
 * type). One pass; text is not modified. */
static void numeric_columns(const char *text, char **head, size_t nh, bool *num)
{
    for (size_t c = 0; c < nh; c++)
        num[c] = !text_column(head[c]);
    for (const char *p = text; *p != '\0';) {
        for (size_t c = 0;; c++) {
            size_t len = strcspn(p, ",\n");
            if (c < nh && len > 0 && !cell_is_number(p, len))
                num[c] = false;
            p += len;
            if (*p != ',')
                break;
            p++;
        }
        if (*p == '\n')
            p++;
    }
}

/* The document's fields before its rows, as pretty JSON up to "rows": [. */
static void write_head(FILE *f, const struct jsonout_meta *m, char **head, size_t nh)
{
    json_object *d = must(json_object_new_object(), "header");
    json_object_object_add(d, "schema", must(json_object_new_string("retrystorm-summary"), "schema"));
    json_object_object_add(d, "version", must(json_object_new_int(JSONOUT_VERSION), "version"));
    json_object_object_add(d, "retrystorm", must(json_object_new_string(RS_VERSION), "version"));
    json_object_object_add(d, "command", must(json_object_new_string(m->command), "command"));
    json_object_object_add(d, "scenario", m->scenario ? must(json_object_new_string(m->scenario), "scenario") : NULL);
    json_object_object_add(d, "source", must(json_object_new_string(m->source), "source"));
    json_object *cols = must(json_object_new_array(), "columns");
    for (size_t c = 0; c < nh; c++)
        json_object_array_add(cols, must(json_object_new_string(head[c]), "a column"));
    json_object_object_add(d, "columns", cols);
    const char *s = must_text(json_object_to_json_string_ext(
        d, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED | JSON_C_TO_STRING_NOSLASHESCAPE));
    /* {"schema": ..., "columns": [ ... ] }: drop the closing brace, open rows */
    size_t len = strlen(s);
    while (len > 0 && (s[len - 1] == '}' || s[len - 1] == ' ' || s[len - 1] == '\n'))
        len--;
    fprintf(f, "%.*s,\n  \"rows\": [\n", (int)len, s);
    json_object_put(d);
}

/* One row as a one-line object keyed by the columns. */
static void write_row(FILE *f, char **head, char **cell, size_t nh, const bool *num, bool first)
{
    json_object *row = must(json_object_new_object(), "a row");
    for (size_t c = 0; c < nh; c++) {
        json_object *v = NULL; /* empty: null */
        if (cell[c][0] != '\0')
            v = num[c] ? must(json_object_new_double_s(strtod(cell[c], NULL), cell[c]), "a number")
                       : must(json_object_new_string(cell[c]), "a string");
        json_object_object_add(row, head[c], v);
    }
    fprintf(f, "%s    %s", first ? "" : ",\n",
            must_text(json_object_to_json_string_ext(row, JSON_C_TO_STRING_SPACED | JSON_C_TO_STRING_NOSLASHESCAPE)));
    json_object_put(row);
}

/* The rows of the table in text (modified in place), after the head. */
static int fill(FILE *f, char *text, const struct jsonout_meta *m, char *err, size_t errsz)
{
    char **head = malloc(2 * JSONOUT_MAX_COLUMNS * sizeof *head), **cell = head + JSONOUT_MAX_COLUMNS;
    bool *num = malloc(JSONOUT_MAX_COLUMNS * sizeof *num);
    if (head == NULL || num == NULL) {
        fprintf(stderr, "retrystorm: out of memory building summary.json\n");
        abort();
    }
    int rc = 0;
    bool more, any = false;
    char *pos = text;
    size_t nh = next_line(&pos, head, JSONOUT_MAX_COLUMNS, &more), n;
    if (nh == 0 || more) {
        snprintf(err, errsz, nh ? "more than %d columns" : "no header line", JSONOUT_MAX_COLUMNS);
        rc = -1;
    }
    for (size_t a = 0; rc == 0 && a < nh; a++)
        for (size_t b = a + 1; b < nh; b++)
            if (strcmp(head[a], head[b]) == 0) {
                snprintf(err, errsz, "the column %.64s appears twice", head[a]);
                rc = -1;
                break;
            }
    if (rc == 0) {
        numeric_columns(pos, head, nh, num);
        write_head(f, m, head, nh);
    }
    for (unsigned line = 2; rc == 0 && (n = next_line(&pos, cell, JSONOUT_MAX_COLUMNS, &more)) > 0; line++) {
        if (n != nh || more) {
            snprintf(err, errsz, "line %u has %zu%s fields, the header %zu", line, n, more ? "+" : "", nh);
            rc = -1;
        } else {
            write_row(f, head, cell, nh, num, !any);
            any = true;
        }
    }
    if (rc == 0)
        fprintf(f, "%s  ]\n}\n", any ? "\n" : "");
    free(head);
    free(num);
    return rc;
}

int jsonout_write(FILE *f, const char *csv, size_t len, const struct jsonout_meta *m, char *err,
                  size_t errsz)
{
    char *text = malloc(len + 1);
    if (text == NULL) {
        fprintf(stderr, "retrystorm: out of memory building summary.json (%zu bytes)\n", len + 1);
        abort();
    }
    memcpy(text, csv, len);
    text[len] = '\0';
    char *clean = utf8_clean(text);
    int rc = fill(f, clean, m, err, errsz);
    if (clean != text)
        free(clean);
    free(text);
    return rc;
}

/* The whole of dir/source as text. */
static char *read_table(const char *dir, const char *source, size_t *len, char *err, size_t errsz)
{
    char path[4400];
    if (snprintf(path, sizeof path, "%s/%s", dir, source) >= (int)sizeof path) {
        snprintf(err, errsz, "%s/%s: path too long", dir, source);
        return NULL;
    }
    struct csv c;
    if (csv_open(&c, path, JSONOUT_MAX_BYTES, err, errsz) != 0)
        return NULL;
    *len = strlen(c.buf);
    char *text = c.buf; /* taken from c: csv_close would free it */
    c.buf = NULL;
    csv_close(&c);
    return text;
}

int jsonout_write_dir(const char *dir, const struct jsonout_meta *m, char *err, size_t errsz)
{
    size_t len;
    char *text = read_table(dir, m->source, &len, err, errsz);
    if (text == NULL)
        return -1;
    struct output_file of;
    char why[256];
    int rc = output_file_open(&of, dir, "summary.json", err, errsz);
    if (rc == 0 && jsonout_write(of.f, text, len, m, why, sizeof why) != 0) {
        snprintf(err, errsz, "%s/%s: %s", dir, m->source, why);
        output_file_discard(&of);
        rc = -1;
    } else if (rc == 0) {
        rc = output_file_commit(&of, err, errsz);
    }
    free(text);
    return rc;
}
