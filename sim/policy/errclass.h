/*
 * errclass — what an attempt came back with, and sets of those classes.
 *
 * CLS_OK and CLS_BUSINESS are answers (the work was done; a business error
 * such as "card declined" is never retried). The rest are failures a layer
 * may retry when its `retry_on` set names them: timeout (the layer's own
 * per-attempt timer), conn (connection refused), HTTP statuses, and
 * deadline (an overall deadline ran out, or the server dropped expired
 * work). A set is a bit mask; parsing and formatting are O(length).
 */
#ifndef RS_ERRCLASS_H
#define RS_ERRCLASS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum errclass {
    CLS_OK,
    CLS_BUSINESS,
    CLS_TIMEOUT,
    CLS_CONN,
    CLS_400,
    CLS_403,
    CLS_404,
    CLS_409,
    CLS_429,
    CLS_500,
    CLS_502,
    CLS_503,
    CLS_504,
    CLS_DEADLINE,
    CLS_THROTTLED, /* the layer's own budget refused (a layer above sees this class) */
    CLS_BREAKER,   /* the layer's own breaker short-circuited */
    CLS_BULKHEAD,  /* no slot in a layer's bulkhead or connection pool (`concurrency`) */
    CLS_N
};

typedef uint32_t errclass_set;

#define ERRCLASS_BIT(c) ((errclass_set)1u << (c))
/* The default retry_on: timeout conn 502 503 504 429. */
#define ERRCLASS_DEFAULT_RETRY                                                                     \
    (ERRCLASS_BIT(CLS_TIMEOUT) | ERRCLASS_BIT(CLS_CONN) | ERRCLASS_BIT(CLS_502) |                  \
     ERRCLASS_BIT(CLS_503) | ERRCLASS_BIT(CLS_504) | ERRCLASS_BIT(CLS_429))
/* Every failure class from below except deadline, throttled, breaker and
 * bulkhead: "retry on any exception" (a layer retries bulkhead rejections
 * only when its retry_on names them). */
#define ERRCLASS_ALL_FAILURES                                                                      \
    (((ERRCLASS_BIT(CLS_N) - 1u) & ~ERRCLASS_BIT(CLS_OK) & ~ERRCLASS_BIT(CLS_BUSINESS)) &          \
     ~ERRCLASS_BIT(CLS_DEADLINE) & ~ERRCLASS_BIT(CLS_THROTTLED) & ~ERRCLASS_BIT(CLS_BREAKER) &   \
     ~ERRCLASS_BIT(CLS_BULKHEAD))

extern const char *const errclass_names[CLS_N];

/* Parses one class name; false if unknown. */
bool errclass_parse(const char *name, enum errclass *out);

/* Parses a space- or comma-separated list ("timeout conn 503", or "none")
 * into a set of failure classes; false (and the offending word in bad) if a
 * word is not a failure class. */
bool errclass_parse_set(const char *text, errclass_set *out, char *bad, size_t bad_size);

/* Writes the set as a space-separated list, or "none". Returns buf. */
char *errclass_format_set(errclass_set s, char *buf, size_t size);

static inline bool errclass_in(errclass_set s, enum errclass c) { return (s >> c) & 1u; }

#endif
