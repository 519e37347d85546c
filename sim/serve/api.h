/*
 * api — what `retrystorm serve`'s page asks for, answered as JSON, with no
 * HTTP in sight (serve.c carries it; the tests call it directly).
 *
 * api_scenarios lists the built-in scenarios, each with its text and the
 * values of the knobs the page shows (the client layer's retry policy, the
 * phases, the load), and the kinds a backoff, budget or breaker can be.
 * api_check loads pasted text the way `check` does. api_run runs a
 * built-in or pasted scenario with overrides (`--set`s) and answers with
 * every file a run writes, kept in memory (open_memstream): nothing is read
 * or written by path (scenario_load_sealed: a trace must be a built-in
 * one). A run is refused before it starts when it is too big for a page
 * (time-series, service and cache rows, clients, state and cache memory)
 * and stopped when it passes its events, its wall time or the requests in
 * flight its memory grows with; each refusal says which limit and what to
 * change.
 *
 * Every answer is a JSON object with "ok"; a failure carries "messages",
 * the same lines `check` prints. Costs: api_scenarios loads every built-in
 * (milliseconds); api_run is one simulation plus O(buckets) of text.
 */
#ifndef RS_API_H
#define RS_API_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <pthread.h>
#include <stdio.h>

#define API_MAX_SETS 64

struct api_limits {
    double max_wall_s;        /* a run is stopped after this much wall-clock time */
    unsigned long long max_events;
    unsigned long long max_buckets; /* time-series rows the page draws */
    unsigned long long max_rows;    /* services.csv and caches.csv rows */
    unsigned long long max_clients;
    double max_state_bytes;   /* what the run allocates before its first event (sim_footprint) */
    double max_live_bytes;    /* requests, attempts, messages in flight (sim_live_bytes) */
    volatile sig_atomic_t *cancel;  /* set (by a shutdown): the run stops; NULL: none */
    struct api_memory *memory;      /* shared by concurrent runs; NULL: none */
};

/* Memory shared by the runs of a server: each run reserves what it may
 * hold (its sim_footprint and max_live_bytes) before it starts, waiting
 * while others hold too much, and gives it back when done. */
struct api_memory {
    pthread_mutex_t lock;
    double free_bytes;
};
extern const struct api_limits api_default_limits;

struct api_request {
    const char *scenario; /* a built-in's name; or NULL and text */
    const char *text;     /* pasted scenario text */
    const char *sets[API_MAX_SETS];
    size_t nsets;
};

/* Each writes one JSON object to f and returns the HTTP status it goes
 * with: 200, 400 (bad scenario or request: messages), 422 (too big for the
 * page, or stopped at a limit: messages), 503 (cancelled) or 500 (a
 * failure of ours). A run's answer also has the effective scenario's
 * knobs ("shape", as api_scenarios gives them); a check's answer has them
 * and the text's first comment line ("about", as a built-in's). */
int api_scenarios(FILE *f);
int api_check(FILE *f, const char *text);
int api_run(FILE *f, const struct api_request *rq, const struct api_limits *lim);

/* s as a JSON string literal, quotes included; every byte below 0x20, the
 * quote, the backslash, '<', '>' and '&' escaped (the text can sit in a
 * page); valid UTF-8 as it is, and each byte that starts no well-formed
 * UTF-8 sequence (jsonout_utf8_len) as \ufffd, so the answer is always
 * valid UTF-8. */
void api_json_string(FILE *f, const char *s);

#endif
