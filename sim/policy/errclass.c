/*
 * errclass — class names and sets. See errclass.h.
 */
#include "errclass.h"

#include <stdio.h>
#include <string.h>

const char *const errclass_names[CLS_N] = {
    "ok",  "business", "timeout", "conn", "400", "403", "404",
    "409", "429",      "500",     "502",  "503", "504", "deadline", "throttled", "breaker",
    "bulkhead",
};

bool errclass_parse(const char *name, enum errclass *out)
{
    for (int c = 0; c < CLS_N; c++)
        if (strcmp(name, errclass_names[c]) == 0) {
            *out = (enum errclass)c;
            return true;
        }
    return false;
}

bool errclass_parse_set(const char *text, errclass_set *out, char *bad, size_t bad_size)
{
    char word[32];
    errclass_set s = 0;
    const char *p = text;
    bool none = false, any = false;
    while (*p) {
        while (*p == ' ' || *p == ',' || *p == '\t')
            p++;
        if (!*p)
            break;
        size_t n = strcspn(p, " ,\t");
        snprintf(word, sizeof word, "%.*s", (int)(n < sizeof word - 1 ? n : sizeof word - 1), p);
        p += n;
        enum errclass c;
        if (strcmp(word, "none") == 0) {
            none = true;
        } else if (!errclass_parse(word, &c) || c == CLS_OK || c == CLS_BUSINESS) {
            snprintf(bad, bad_size, "%s", word);
            return false;
        } else {
            s |= ERRCLASS_BIT(c);
            any = true;
        }
    }
    if (none == any) { /* "none" with classes, or nothing at all */
        snprintf(bad, bad_size, "%s", none ? "none, with other classes" : "");
        return false;
    }
    *out = s;
    return true;
}

char *errclass_format_set(errclass_set s, char *buf, size_t size)
{
    size_t used = 0;
    buf[0] = '\0';
    for (int c = 0; c < CLS_N && used < size; c++) {
        if (!errclass_in(s, (enum errclass)c))
            continue;
        int w = snprintf(buf + used, size - used, "%s%s", used ? " " : "", errclass_names[c]);
        if (w < 0)
            break; /* unreachable: snprintf of two short names cannot fail (GCOVR_EXCL_LINE) */
        used += (size_t)w;
    }
    if (used == 0)
        snprintf(buf, size, "none");
    return buf;
}
