/*
 * jsonout — summary.json from a summary table; see jsonout.h.
 */
#define _XOPEN_SOURCE 700 /* open_memstream */

#include "jsonout.h"

#include "csvread.h"
#include "output.h"

#include <json-c/json.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define JSONOUT_MAX_COLUMNS 4096
#define JSONOUT_MAX_BYTES ((size_t)256 << 20)

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

/* A field as a JSON value: the number with its own digits, null, or a string. */
static json_object *field_value(const char *v)
{
    if (v[0] == '\0')
        return NULL;
    if (is_json_number(v))
        return json_object_new_double_s(strtod(v, NULL), v);
    return json_object_new_string(v);
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

static json_object *document(const struct jsonout_meta *m, json_object **columns, json_object **rows)
{
    json_object *d = json_object_new_object();
    json_object_object_add(d, "schema", json_object_new_string("retrystorm-summary"));
    json_object_object_add(d, "version", json_object_new_int(JSONOUT_VERSION));
    json_object_object_add(d, "retrystorm", json_object_new_string(RS_VERSION));
    json_object_object_add(d, "command", json_object_new_string(m->command));
    json_object_object_add(d, "scenario", m->scenario ? json_object_new_string(m->scenario) : NULL);
    json_object_object_add(d, "source", json_object_new_string(m->source));
    *columns = json_object_new_array();
    *rows = json_object_new_array();
    json_object_object_add(d, "columns", *columns);
    json_object_object_add(d, "rows", *rows);
    return d;
}

/* The rows of the table in text (modified in place) into the document. */
static int fill(char *text, json_object *columns, json_object *rows, char *err, size_t errsz)
{
    char **head = malloc(2 * JSONOUT_MAX_COLUMNS * sizeof *head), **f = head + JSONOUT_MAX_COLUMNS;
    if (head == NULL) {
        snprintf(err, errsz, "out of memory");
        return -1;
    }
    int rc = 0;
    bool more;
    char *pos = text;
    size_t nh = next_line(&pos, head, JSONOUT_MAX_COLUMNS, &more);
    if (nh == 0 || more) {
        snprintf(err, errsz, nh ? "more than %d columns" : "no header line", JSONOUT_MAX_COLUMNS);
        free(head);
        return -1;
    }
    for (size_t c = 0; c < nh; c++)
        json_object_array_add(columns, json_object_new_string(head[c]));
    size_t n;
    for (unsigned line = 2; (n = next_line(&pos, f, JSONOUT_MAX_COLUMNS, &more)) > 0; line++) {
        if (n != nh || more) {
            snprintf(err, errsz, "line %u has %zu%s fields, the header %zu", line, n, more ? "+" : "", nh);
            rc = -1;
            break;
        }
        json_object *row = json_object_new_object();
        for (size_t c = 0; c < nh; c++)
            json_object_object_add(row, head[c], field_value(f[c]));
        json_object_array_add(rows, row);
    }
    free(head);
    return rc;
}

int jsonout_write(FILE *f, const char *csv, size_t len, const struct jsonout_meta *m, char *err,
                  size_t errsz)
{
    char *text = malloc(len + 1);
    if (text == NULL) {
        snprintf(err, errsz, "out of memory");
        return -1;
    }
    memcpy(text, csv, len);
    text[len] = '\0';
    json_object *columns, *rows, *d = document(m, &columns, &rows);
    int rc = fill(text, columns, rows, err, errsz);
    if (rc == 0) {
        const char *s = json_object_to_json_string_ext(
            d, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED | JSON_C_TO_STRING_NOSLASHESCAPE);
        fprintf(f, "%s\n", s);
    }
    json_object_put(d);
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

int jsonout_write_dir(const char *dir, const struct jsonout_meta *m, FILE *also, char *err,
                      size_t errsz)
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
    if (rc == 0 && also != NULL && jsonout_write(also, text, len, m, why, sizeof why) != 0)
        rc = -1;
    free(text);
    return rc;
}
