/*
 * serve — `retrystorm serve`: the live page for demonstrations, over HTTP
 * from GNU libmicrohttpd. See serve.h.
 *
 * One thread per connection: at most SERVE_MAX_CONNECTIONS, of which
 * SERVE_MAX_PER_ADDRESS from one address (a browser opens about 6), each
 * closed after SERVE_IDLE_TIMEOUT seconds without a byte, or when a request
 * (headers and body) is not all in SERVE_READ_DEADLINE seconds after the
 * connection opened or its previous answer was sent, however it trickles
 * (Slowloris: see "the read deadline" below). A run waits for one of
 * `jobs` slots (a semaphore: one simulation per core), and when more than
 * SERVE_MAX_WAITING runs already wait the request is answered 503 at once.
 * A run then reserves its memory (its state and the page's limit on what
 * is in flight) from --max-memory shared by all runs (api_memory), and
 * waits while the others hold it.
 * Requests are small: a body over SERVE_MAX_BODY bytes is refused (413),
 * before it is sent when its Content-Length says so, and never kept. Only
 * the page's own files and the api exist; nothing is read or written by
 * path. A request whose Host is not a local name while bound to a
 * loopback address (DNS rebinding), or whose Origin is not the page's own
 * (scheme, host and port), is refused (403). Ctrl-C stops the runs in
 * progress and the waiting ones (503), then the server; a second Ctrl-C
 * ends the process at once.
 */
#define _POSIX_C_SOURCE 200809L

#include "serve.h"

#include <arpa/inet.h>
#include <errno.h>
#include <limits.h>
#include <netinet/in.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "api.h"
#include "mhd.h"
#include "scenario.h"
#include "units.h"

#define SERVE_MAX_BODY (256u * 1024u)
#define SERVE_MAX_CONNECTIONS 64u
#define SERVE_MAX_PER_ADDRESS 16u
#define SERVE_MAX_WAITING 16
#define SERVE_MAX_SCENARIO_NAME 64
#define SERVE_MAX_SET 256
#define SERVE_IDLE_TIMEOUT 15u /* seconds a connection may send nothing */
#define SERVE_MAX_MEMORY 2e9   /* bytes all runs together may hold (--max-memory) */
#define SERVE_READ_DEADLINE 10.0 /* seconds to send a whole request, however it trickles */
#define SERVE_WATCH_TICK_NS 250000000L /* the watchdog looks 4 times a second */
#define TOO_BIG "the request is larger than 256 KiB (a scenario file is a few KiB)"

struct watched;

/* The page (web/: text files, without NUL bytes), compiled in by sim/io/embed.cmake. */
extern const struct scenario_builtin serve_assets[];

struct server {
    sem_t slots;
    atomic_int waiting;
    atomic_int answering;          /* posts taken and not yet sent back (see on_completed) */
    bool loopback;
    const char *bind;              /* as given: a local name when it is a loopback address */
    volatile sig_atomic_t stopping; /* Ctrl-C: waiting runs give up, running ones stop */
    struct api_limits lim;
    struct api_memory memory;      /* what the runs in progress reserved (api.h) */
    pthread_mutex_t watch_mu;      /* guards the list of watched connections and their members */
    struct watched *watched;       /* open connections, newest first */
    atomic_bool watch_stop;
};

/* One POST in progress: its body, as the post processor hands it over. */
struct body {
    struct server *sv;
    bool counted;                  /* in sv->answering */
    struct MHD_PostProcessor *pp;
    size_t bytes;
    bool too_big, bad;
    char scenario[SERVE_MAX_SCENARIO_NAME];
    char *text;
    size_t text_len;
    char *sets[API_MAX_SETS];
    size_t nsets;
};

static void body_free(struct body *b)
{
    if (b == NULL)
        return;
    if (b->pp != NULL)
        mhd.destroy_post_processor(b->pp);
    free(b->text);
    for (size_t i = 0; i < b->nsets; i++)
        free(b->sets[i]);
    free(b);
}

/* Appends data to a field; a field past its bound marks the request bad. */
static bool append(char **dst, size_t *len, size_t max, const char *data, size_t size)
{
    if (*len + size > max)
        return false;
    char *p = realloc(*dst, *len + size + 1);
    if (p == NULL)
        return false;
    memcpy(p + *len, data, size);
    *len += size;
    p[*len] = '\0';
    *dst = p;
    return true;
}

static enum MHD_Result on_field(void *cls, enum MHD_ValueKind kind, const char *key,
                                const char *filename, const char *type, const char *encoding,
                                const char *data, uint64_t off, size_t size)
{
    (void)kind, (void)filename, (void)type, (void)encoding;
    struct body *b = cls;
    if (memchr(data, '\0', size) != NULL) /* %00 would cut a field short without a word */
        return b->bad = true, MHD_YES;
    if (strcmp(key, "scenario") == 0) {
        size_t have = strlen(b->scenario);
        if (have + size >= sizeof b->scenario)
            return b->bad = true, MHD_YES;
        memcpy(b->scenario + have, data, size);
        b->scenario[have + size] = '\0';
    } else if (strcmp(key, "text") == 0) {
        if (!append(&b->text, &b->text_len, SERVE_MAX_BODY, data, size))
            b->bad = true;
    } else if (strcmp(key, "set") == 0) {
        if (off == 0) {
            if (b->nsets == API_MAX_SETS)
                return b->bad = true, MHD_YES;
            b->sets[b->nsets++] = calloc(1, 1);
        }
        size_t len = b->sets[b->nsets - 1] ? strlen(b->sets[b->nsets - 1]) : 0;
        if (b->sets[b->nsets - 1] == NULL || !append(&b->sets[b->nsets - 1], &len, SERVE_MAX_SET, data, size))
            b->bad = true;
    } else
        b->bad = true;
    return MHD_YES;
}

static double wall_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* ---- the read deadline ----
 * A thread per connection and an idle timeout let 64 connections that each
 * send a byte every 2 s hold every thread for ever. So each open
 * connection is on sv->watched, from the library's STARTED notification to
 * its CLOSED one, with a clock: it runs while a request is read (from the
 * connection's start, or from the end of the previous answer on a
 * keep-alive connection) and stops when the request is all in (an answer
 * is queued, or the body is complete). A watchdog thread looks every
 * SERVE_WATCH_TICK_NS and shuts down (shutdown(2), both ways) a connection
 * whose clock has passed SERVE_READ_DEADLINE; its thread then reads the end
 * and the library closes it. The list is changed and walked under
 * watch_mu, and libmicrohttpd 0.9.75 sends CLOSED (from
 * MHD_cleanup_connections) before it closes the descriptor (a connection's
 * thread only shuts it down, see thread_main_handle_connection): the
 * watchdog never touches a descriptor that another connection reuses.
 * Each look is O(connections), at most SERVE_MAX_CONNECTIONS. */
struct watched {
    struct watched *prev, *next;
    struct server *sv;
    int fd;
    double since; /* when the clock last started or stopped (wall_now) */
    bool reading; /* the clock runs */
};

static void on_connection(void *cls, struct MHD_Connection *c, void **ctx,
                          enum MHD_ConnectionNotificationCode code)
{
    struct server *sv = cls;
    struct watched *w = *ctx;
    if (code == MHD_CONNECTION_NOTIFY_CLOSED) {
        if (w == NULL)
            return;
        pthread_mutex_lock(&sv->watch_mu);
        if (w->prev != NULL)
            w->prev->next = w->next;
        else
            sv->watched = w->next;
        if (w->next != NULL)
            w->next->prev = w->prev;
        pthread_mutex_unlock(&sv->watch_mu);
        free(w);
        *ctx = NULL;
        return;
    }
    const union MHD_ConnectionInfo *fd = mhd.get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
    w = fd != NULL ? calloc(1, sizeof *w) : NULL;
    if (w == NULL) { /* a connection not watched is not served */
        if (fd != NULL)
            shutdown(fd->connect_fd, SHUT_RDWR);
        return;
    }
    *w = (struct watched){.sv = sv, .fd = fd->connect_fd, .since = wall_now(), .reading = true};
    pthread_mutex_lock(&sv->watch_mu);
    w->next = sv->watched;
    if (w->next != NULL)
        w->next->prev = w;
    sv->watched = w;
    pthread_mutex_unlock(&sv->watch_mu);
    *ctx = w;
}

/* Starts (a request is being read) or stops (it is all in) c's clock. */
static void watch_clock(struct MHD_Connection *c, bool reading)
{
    const union MHD_ConnectionInfo *ci = mhd.get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    struct watched *w = ci != NULL ? ci->socket_context : NULL;
    if (w == NULL)
        return;
    pthread_mutex_lock(&w->sv->watch_mu);
    w->reading = reading;
    w->since = wall_now();
    pthread_mutex_unlock(&w->sv->watch_mu);
}

static void *watchdog(void *arg)
{
    struct server *sv = arg;
    while (!atomic_load(&sv->watch_stop)) {
        nanosleep(&(struct timespec){0, SERVE_WATCH_TICK_NS}, NULL);
        double now = wall_now();
        pthread_mutex_lock(&sv->watch_mu);
        for (struct watched *w = sv->watched; w != NULL; w = w->next)
            if (w->reading && now - w->since > SERVE_READ_DEADLINE) {
                shutdown(w->fd, SHUT_RDWR);
                w->reading = false;
            }
        pthread_mutex_unlock(&sv->watch_mu);
    }
    return NULL;
}

static enum MHD_Result respond(struct MHD_Connection *c, unsigned status, const char *type, void *data,
                               size_t size, enum MHD_ResponseMemoryMode mode)
{
    watch_clock(c, false); /* once an answer is queued, nothing more is read */
    struct MHD_Response *r = mhd.create_response_from_buffer(size, data, mode);
    if (r == NULL) {
        if (mode == MHD_RESPMEM_MUST_FREE)
            free(data);
        return MHD_NO;
    }
    mhd.add_response_header(r, "Content-Type", type);
    mhd.add_response_header(r, "Cache-Control", "no-store");
    mhd.add_response_header(r, "X-Content-Type-Options", "nosniff");
    mhd.add_response_header(r, "Content-Security-Policy",
                            "default-src 'self'; img-src 'self' data: blob:; object-src 'none'; "
                            "base-uri 'none'; frame-ancestors 'none'; form-action 'none'");
    enum MHD_Result ok = mhd.queue_response(c, status, r);
    mhd.destroy_response(r);
    return ok;
}

static enum MHD_Result respond_json(struct MHD_Connection *c, unsigned status, char *buf, size_t len)
{
    return respond(c, status, "application/json", buf, len, MHD_RESPMEM_MUST_FREE);
}

/* A one-line JSON failure. */
static enum MHD_Result refuse(struct MHD_Connection *c, unsigned status, const char *line)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (f == NULL)
        return MHD_NO;
    fputs("{\"ok\":false,\"messages\":[", f);
    api_json_string(f, line);
    fputs("]}", f);
    fclose(f);
    return respond_json(c, status, buf, len);
}

static const char *content_type(const char *path)
{
    static const struct { const char *ext, *type; } types[] = {
        {".html", "text/html; charset=utf-8"}, {".js", "text/javascript; charset=utf-8"},
        {".css", "text/css; charset=utf-8"},   {".svg", "image/svg+xml"},
    };
    const char *dot = strrchr(path, '.');
    for (size_t i = 0; dot != NULL && i < sizeof types / sizeof types[0]; i++)
        if (strcmp(dot, types[i].ext) == 0)
            return types[i].type;
    return "application/octet-stream";
}

static enum MHD_Result get(struct MHD_Connection *c, const char *url)
{
    if (strcmp(url, "/api/scenarios") == 0) {
        char *buf = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&buf, &len);
        if (f == NULL)
            return MHD_NO;
        int status = api_scenarios(f);
        fclose(f);
        return respond_json(c, (unsigned)status, buf, len);
    }
    const char *path = strcmp(url, "/") == 0 ? "/index.html" : url;
    for (const struct scenario_builtin *a = serve_assets; a->name != NULL; a++)
        if (strcmp(a->name, path) == 0)
            return respond(c, 200, content_type(path), (void *)a->text, strlen(a->text), MHD_RESPMEM_PERSISTENT);
    return refuse(c, 404, "no such page");
}

/* Waits for a run slot, looking every 100 ms whether the server is
 * stopping. Returns 0 with the slot, 1 when stopping, -1 on a failure. */
static int take_slot(struct server *sv)
{
    for (;;) {
        if (sv->stopping)
            return 1;
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_nsec += 100000000L;
        if (ts.tv_nsec >= 1000000000L)
            ts.tv_sec++, ts.tv_nsec -= 1000000000L;
        if (sem_timedwait(&sv->slots, &ts) == 0) {
            if (!sv->stopping)
                return 0;
            sem_post(&sv->slots);
            return 1;
        }
        if (errno != ETIMEDOUT && errno != EINTR)
            return -1;
    }
}

/* Runs (or checks) what the body asks, in a slot. */
static enum MHD_Result post(struct server *sv, struct MHD_Connection *c, const char *url, struct body *b)
{
    bool run = strcmp(url, "/api/run") == 0;
    atomic_fetch_add(&sv->answering, 1);
    b->counted = true;
    if (b->too_big)
        return refuse(c, 413, TOO_BIG);
    if (b->bad)
        return refuse(c, 400, "a malformed request: fields scenario, text and set (at most 64 sets of 256 bytes)");
    if (atomic_fetch_add(&sv->waiting, 1) >= SERVE_MAX_WAITING) {
        atomic_fetch_sub(&sv->waiting, 1);
        return refuse(c, 503, "busy: 16 runs are waiting already; try again in a moment");
    }
    int got = take_slot(sv);
    atomic_fetch_sub(&sv->waiting, 1);
    if (got != 0)
        return refuse(c, 503, got > 0 ? "the server is stopping" : "no run slot (a failure of ours)");
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    int status = 500;
    double t0 = wall_now();
    if (f != NULL) {
        struct api_request rq = {.scenario = b->scenario[0] ? b->scenario : NULL, .text = b->text,
                                 .nsets = b->nsets};
        for (size_t i = 0; i < b->nsets; i++)
            rq.sets[i] = b->sets[i];
        status = run ? api_run(f, &rq, &sv->lim) : api_check(f, b->text != NULL ? b->text : "");
        fclose(f);
    }
    sem_post(&sv->slots);
    if (run) /* a name from the request is shown only if it is a built-in's: no escapes to the terminal */
        printf("run %s, %zu override%s: %d in %.2f s\n",
               !b->scenario[0]                             ? "(pasted)"
               : scenario_builtin_text(b->scenario) != NULL ? b->scenario
                                                            : "(no such built-in)",
               b->nsets, b->nsets == 1 ? "" : "s", status, wall_now() - t0);
    fflush(stdout);
    if (f == NULL)
        return MHD_NO;
    return respond_json(c, (unsigned)status, buf, len);
}

/* The host part of a Host or Origin value ("localhost:8080" -> "localhost"). */
static void host_of(const char *v, char *out, size_t size)
{
    const char *p = strstr(v, "://");
    p = p != NULL ? p + 3 : v;
    size_t n = *p == '[' ? strcspn(p, "]") + 1 : strcspn(p, ":/");
    snprintf(out, size, "%.*s", (int)(n < size ? n : size - 1), p);
}

static bool local_name(const struct server *sv, const char *h)
{
    char bracketed[80];
    snprintf(bracketed, sizeof bracketed, "[%s]", sv->bind);
    return strcasecmp(h, "localhost") == 0 || strcmp(h, "127.0.0.1") == 0 || strcmp(h, "[::1]") == 0 ||
           strcmp(h, sv->bind) == 0 || strcasecmp(h, bracketed) == 0;
}

/* DNS rebinding and cross-site requests: see the header comment. */
static bool allowed(const struct server *sv, struct MHD_Connection *c)
{
    const char *host = mhd.lookup_connection_value(c, MHD_HEADER_KIND, "Host");
    const char *origin = mhd.lookup_connection_value(c, MHD_HEADER_KIND, "Origin");
    char h[256], o[300];
    host_of(host != NULL ? host : "", h, sizeof h);
    if (sv->loopback && !local_name(sv, h))
        return false;
    if (origin == NULL)
        return true;
    /* the page's own origin: this scheme, host and port, nothing else */
    snprintf(o, sizeof o, "http://%s", host != NULL ? host : "");
    return strcasecmp(origin, o) == 0;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url, const char *method,
                                  const char *version, const char *upload, size_t *upload_size, void **state)
{
    (void)version;
    struct server *sv = cls;
    bool is_post = strcmp(method, "POST") == 0;
    if (*state == NULL) { /* the headers are in; the body is not */
        if (!allowed(sv, c))
            return refuse(c, 403, "refused: the page is served to this machine's own browser only");
        if (!is_post)
            return strcmp(method, "GET") == 0 || strcmp(method, "HEAD") == 0
                       ? get(c, url)
                       : refuse(c, 405, "GET or POST only");
        if (strcmp(url, "/api/run") != 0 && strcmp(url, "/api/check") != 0)
            return refuse(c, 404, "no such page");
        const char *cl = mhd.lookup_connection_value(c, MHD_HEADER_KIND, "Content-Length");
        if (cl != NULL && strtoull(cl, NULL, 10) > SERVE_MAX_BODY) /* refused before it is sent */
            return refuse(c, 413, TOO_BIG);
        struct body *b = calloc(1, sizeof *b);
        if (b == NULL)
            return MHD_NO;
        b->sv = sv;
        b->pp = mhd.create_post_processor(c, 4096, on_field, b);
        if (b->pp == NULL) {
            body_free(b);
            return refuse(c, 415, "the body must be application/x-www-form-urlencoded");
        }
        *state = b;
        return MHD_YES;
    }
    struct body *b = *state;
    if (*upload_size > 0) {
        b->bytes += *upload_size;
        if (b->bytes > SERVE_MAX_BODY)
            b->too_big = true;
        else if (mhd.post_process(b->pp, upload, *upload_size) != MHD_YES)
            b->bad = true;
        *upload_size = 0;
        return MHD_YES;
    }
    /* the last field reaches on_field only when the processor is destroyed */
    if (mhd.destroy_post_processor(b->pp) != MHD_YES)
        b->bad = true;
    b->pp = NULL;
    watch_clock(c, false); /* the request is all in: its run may wait for a slot */
    return post(sv, c, url, b);
}

static void on_completed(void *cls, struct MHD_Connection *c, void **state, enum MHD_RequestTerminationCode why)
{
    (void)cls, (void)why;
    watch_clock(c, true); /* the next request on this connection has SERVE_READ_DEADLINE too */
    struct body *b = *state;
    if (b != NULL && b->counted)
        atomic_fetch_sub(&b->sv->answering, 1);
    body_free(b);
    *state = NULL;
}

struct serve_opts {
    const char *bind;
    unsigned port, jobs;
    double max_seconds, max_memory;
};

static const char serve_usage[] =
    "usage: retrystorm serve [--bind ADDR] [--port N] [--jobs N] [--max-seconds S] [--max-memory SIZE]\n"
    "  A page for live demonstrations at http://ADDR:N/ (default 127.0.0.1:8080; --port 0 picks a\n"
    "  free port). Runs built-in or pasted scenarios only, at most N at a time (default: one per\n"
    "  core), each stopped after S seconds of wall-clock time (default 10); all runs together\n"
    "  hold at most SIZE of memory (default 2GB; each reserves its state and 512 MB for what is\n"
    "  in flight). Ctrl-C stops.\n";

/* The most one run may reserve of --max-memory: the page's limits on its
 * state and on what it holds in flight. */
static double one_run_bytes(void)
{
    return api_default_limits.max_state_bytes + api_default_limits.max_live_bytes;
}

/* A whole number from text within [lo, hi], or false. */
static bool number(const char *s, double lo, double hi, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (s[0] == '\0' || *end != '\0' || errno != 0 || !(v >= lo && v <= hi))
        return false;
    *out = v;
    return true;
}

static int parse_opts(int argc, char **argv, struct serve_opts *o)
{
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    *o = (struct serve_opts){.bind = "127.0.0.1", .port = 8080, .jobs = cores > 0 ? (unsigned)cores : 1,
                             .max_seconds = api_default_limits.max_wall_s, .max_memory = SERVE_MAX_MEMORY};
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        double x;
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            fputs(serve_usage, stdout);
            return -1;
        }
        if (v == NULL || (strcmp(a, "--bind") && strcmp(a, "--port") && strcmp(a, "--jobs") &&
                          strcmp(a, "--max-seconds") && strcmp(a, "--max-memory"))) {
            fprintf(stderr, "retrystorm serve: %s '%s'\n%s", v == NULL && a[0] == '-' ? "a value is missing after"
                                                                               : "unknown option", a, serve_usage);
            return 2;
        }
        i++;
        if (strcmp(a, "--bind") == 0)
            o->bind = v;
        else if (strcmp(a, "--port") == 0 && number(v, 0, 65535, &x) && x == (unsigned)x)
            o->port = (unsigned)x;
        else if (strcmp(a, "--jobs") == 0 && number(v, 1, 1024, &x) && x == (unsigned)x)
            o->jobs = (unsigned)x;
        else if (strcmp(a, "--max-seconds") == 0 && number(v, 0.1, 3600, &x))
            o->max_seconds = x;
        else if (strcmp(a, "--max-memory") == 0 && units_parse_size(v, &x) && x >= one_run_bytes())
            o->max_memory = x;
        else {
            fprintf(stderr, "retrystorm serve: %s '%s': %s\n", a, v,
                    strcmp(a, "--port") == 0 ? "a port from 0 to 65535"
                    : strcmp(a, "--jobs") == 0 ? "a whole number from 1 to 1024"
                    : strcmp(a, "--max-memory") == 0 ? "a size from 1.024GB to 1000GB (what one run may reserve: "
                                                       "512 MB of state and 512 MB in flight)"
                                                     : "seconds from 0.1 to 3600");
            return 2;
        }
    }
    return 0;
}

/* The address to bind, IPv4 or IPv6, and whether it is a loopback one. */
static bool parse_bind(const char *text, unsigned port, struct sockaddr_storage *ss, bool *v6, bool *loopback)
{
    memset(ss, 0, sizeof *ss);
    struct sockaddr_in *a4 = (struct sockaddr_in *)ss;
    struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)ss;
    if (inet_pton(AF_INET, text, &a4->sin_addr) == 1) {
        a4->sin_family = AF_INET;
        a4->sin_port = htons((uint16_t)port);
        *v6 = false;
        *loopback = (ntohl(a4->sin_addr.s_addr) >> 24) == 127;
        return true;
    }
    if (inet_pton(AF_INET6, text, &a6->sin6_addr) == 1) {
        a6->sin6_family = AF_INET6;
        a6->sin6_port = htons((uint16_t)port);
        *v6 = true;
        *loopback = IN6_IS_ADDR_LOOPBACK(&a6->sin6_addr);
        return true;
    }
    return false;
}

/* Waits for Ctrl-C or SIGTERM (blocked in every thread, taken here). */
static int wait_for_stop(const sigset_t *set)
{
    int sig = 0;
    while (sigwait(set, &sig) != 0)
        ;
    return sig;
}

int serve_main(int argc, char **argv)
{
    struct serve_opts o;
    int rc = parse_opts(argc, argv, &o);
    if (rc != 0)
        return rc < 0 ? 0 : rc;
    struct server sv = {.lim = api_default_limits, .bind = o.bind};
    sv.lim.max_wall_s = o.max_seconds;
    sv.lim.cancel = &sv.stopping;
    sv.memory.free_bytes = o.max_memory;
    sv.lim.memory = &sv.memory;
    struct sockaddr_storage ss;
    bool v6;
    if (!parse_bind(o.bind, o.port, &ss, &v6, &sv.loopback)) {
        fprintf(stderr, "retrystorm serve: --bind '%s': an IPv4 or IPv6 address, such as 127.0.0.1 or ::1\n",
                o.bind);
        return 2;
    }
    char err[512];
    if (mhd_load(err, sizeof err) != 0) {
        fprintf(stderr, "retrystorm serve: %s\n", err);
        return 1;
    }
    sem_init(&sv.slots, 0, o.jobs);
    pthread_mutex_init(&sv.memory.lock, NULL);
    atomic_init(&sv.waiting, 0);
    atomic_init(&sv.answering, 0);
    atomic_init(&sv.watch_stop, false);
    pthread_mutex_init(&sv.watch_mu, NULL);
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &set, NULL); /* the server's threads inherit it */
    signal(SIGPIPE, SIG_IGN);
    unsigned flags = MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ERROR_LOG |
                     (v6 ? MHD_USE_IPv6 : 0);
    struct MHD_Daemon *d = mhd.start_daemon(
        flags, (uint16_t)o.port, NULL, NULL, on_request, &sv, MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&ss,
        MHD_OPTION_NOTIFY_COMPLETED, on_completed, NULL, MHD_OPTION_NOTIFY_CONNECTION, on_connection, &sv,
        MHD_OPTION_CONNECTION_LIMIT, SERVE_MAX_CONNECTIONS, MHD_OPTION_PER_IP_CONNECTION_LIMIT,
        SERVE_MAX_PER_ADDRESS, MHD_OPTION_CONNECTION_TIMEOUT, SERVE_IDLE_TIMEOUT, MHD_OPTION_END);
    pthread_t dog;
    int no_dog = d != NULL ? pthread_create(&dog, NULL, watchdog, &sv) : 0;
    if (d == NULL || no_dog != 0) {
        if (d == NULL)
            fprintf(stderr, "retrystorm serve: cannot listen on %s port %u (in use? try --port 0 for a free one)\n",
                    o.bind, o.port);
        else {
            fprintf(stderr, "retrystorm serve: cannot start the watchdog thread: %s\n", strerror(no_dog));
            mhd.stop_daemon(d);
        }
        pthread_mutex_destroy(&sv.watch_mu);
        pthread_mutex_destroy(&sv.memory.lock);
        sem_destroy(&sv.slots);
        return 1;
    }
    const union MHD_DaemonInfo *info = mhd.get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT);
    unsigned port = info != NULL ? info->port : o.port;
    printf("retrystorm serve: http://%s%s%s:%u/  (%u run%s at a time, %g s each at most; Ctrl-C stops)\n",
           v6 ? "[" : "", o.bind, v6 ? "]" : "", port, o.jobs, o.jobs == 1 ? "" : "s", sv.lim.max_wall_s);
    if (!sv.loopback)
        printf("retrystorm serve: bound to %s: anyone who reaches it can run simulations on this machine\n",
               o.bind);
    fflush(stdout);
    int sig = wait_for_stop(&set);
    /* a second Ctrl-C ends the process at once */
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    pthread_sigmask(SIG_UNBLOCK, &set, NULL);
    printf("retrystorm serve: stopping (runs in progress stop too)\n");
    fflush(stdout);
    sv.stopping = 1;
    /* runs see it within about 0.1 s: let their 503s go out (for at most 3 s) */
    for (int i = 0; i < 300 && atomic_load(&sv.answering) > 0; i++)
        nanosleep(&(struct timespec){0, 10000000L}, NULL);
    atomic_store(&sv.watch_stop, true);
    pthread_join(dog, NULL);
    mhd.stop_daemon(d);
    pthread_mutex_destroy(&sv.watch_mu);
    pthread_mutex_destroy(&sv.memory.lock);
    sem_destroy(&sv.slots);
    printf("retrystorm serve: stopped (%s)\n", sig == SIGINT ? "interrupt" : "terminated");
    return 0;
}
