/*
 * jsonout — summary.json from a summary table; see jsonout.h.
 */
#define _XOPEN_SOURCE 700 /* strdup */

#include "jsonout.h"

#include "outdir.h"

#include <json-c/json.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>


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

/* Which label columns are numbers: not the scenario's name or a variant's
 * label, and every row's cell a JSON number (a grid value of 0.5 or 1e5:
 * a number with the digits given; 50ms or 01: text). */
static void numeric_labels(const struct results *r, bool *num)
{
    for (size_t k = 0; k < r->nlabels; k++) {
        const char *name = r->label_names[k];
        num[k] = strcmp(name, "scenario") != 0 && strcmp(name, "variant") != 0;
        for (size_t i = 0; num[k] && i < r->nrows; i++) {
            const char *t = r->labels[i * r->nlabels + k];
            num[k] = t[0] == '\0' || is_json_number(t); /* empty: null */
        }
    }
}

/* Column c of the table: its labels, then its numbers. */
static const char *column_name(const struct results *r, size_t c)
{
    return c < r->nlabels ? r->label_names[c] : r->cols[c - r->nlabels].name;
}

/* The document's fields before its rows, as pretty JSON up to "rows": [. */
static void write_head(FILE *f, const struct jsonout_meta *m, const struct results *r)
{
    json_object *d = must(json_object_new_object(), "header");
    json_object_object_add(d, "schema", must(json_object_new_string("retrystorm-summary"), "schema"));
    json_object_object_add(d, "version", must(json_object_new_int(JSONOUT_VERSION), "version"));
    json_object_object_add(d, "retrystorm", must(json_object_new_string(RS_VERSION), "version"));
    json_object_object_add(d, "command", must(json_object_new_string(m->command), "command"));
    json_object_object_add(d, "scenario", m->scenario ? must(json_object_new_string(m->scenario), "scenario") : NULL);
    json_object_object_add(d, "source", must(json_object_new_string(m->source), "source"));
    json_object *cols = must(json_object_new_array(), "columns");
    for (size_t c = 0; c < r->nlabels + r->ncols; c++)
        json_object_array_add(cols, must(json_object_new_string(column_name(r, c)), "a column"));
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

/* A text as a JSON string, made valid UTF-8 first. */
static json_object *string_of(const char *text)
{
    char *copy = strdup(text);
    if (copy == NULL)
        must(NULL, "a string");
    char *clean = utf8_clean(copy);
    json_object *v = must(json_object_new_string(clean), "a string");
    if (clean != copy)
        free(clean);
    free(copy);
    return v;
}

/* Row i as a one-line object keyed by the columns: numbers with the CSV's
 * digits (results_cell), an empty cell null. */
static void write_row(FILE *f, const struct results *r, size_t i, const bool *num)
{
    json_object *row = must(json_object_new_object(), "a row");
    for (size_t k = 0; k < r->nlabels; k++) {
        const char *t = r->labels[i * r->nlabels + k];
        json_object_object_add(row, r->label_names[k],
                               t[0] == '\0' ? NULL
                               : num[k]      ? must(json_object_new_double_s(strtod(t, NULL), t), "a number")
                                             : string_of(t));
    }
    for (size_t c = 0; c < r->ncols; c++) {
        double v = r->v[i * r->ncols + c];
        char text[64];
        results_format(text, sizeof text, &r->cols[c], v);
        bool word = r->cols[c].kind == OUTPUT_VERDICT && !r->cols[c].stat; /* a verdict's name */
        json_object_object_add(row, r->cols[c].name,
                               text[0] == '\0' ? NULL
                               : word          ? string_of(text)
                                               : must(json_object_new_double_s(v, text), "a number"));
    }
    fprintf(f, "%s    %s", i == 0 ? "" : ",\n",
            must_text(json_object_to_json_string_ext(row, JSON_C_TO_STRING_SPACED | JSON_C_TO_STRING_NOSLASHESCAPE)));
    json_object_put(row);
}

void jsonout_write_results(FILE *f, const struct results *r, const struct jsonout_meta *m)
{
    bool *num = malloc((r->nlabels ? r->nlabels : 1) * sizeof *num);
    if (num == NULL)
        must(NULL, "the labels");
    numeric_labels(r, num);
    write_head(f, m, r);
    for (size_t i = 0; i < r->nrows; i++)
        write_row(f, r, i, num);
    fprintf(f, "%s  ]\n}\n", r->nrows ? "\n" : "");
    free(num);
}

int jsonout_write_results_dir(const char *dir, const struct results *r, const struct jsonout_meta *m,
                              char *err, size_t errsz)
{
    struct output_file of;
    if (output_file_open(&of, dir, "summary.json", err, errsz) != 0)
        return -1;
    jsonout_write_results(of.f, r, m);
    return output_file_commit(&of, err, errsz);
}
