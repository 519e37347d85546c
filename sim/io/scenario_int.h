/*
 * scenario_int.h — what the files of the scenario loader share; internal to
 * sim/io/scenario*.c, not for other modules (scenario.h is the interface).
 *
 * scenario.c loads: entries, the line reader, overrides and the entry
 * points; scenario_diag.c holds the messages (a leaf every part calls). scenario_keys.c holds the key table and the value parsers,
 * scenario_apply.c applies entries to the struct and answers where a key
 * was set, scenario_check.c checks the cross-field rules and the service
 * graph, scenario_limits.c bounds the size of the run, and scenario_ini.c
 * writes the effective scenario. Functions shared between them carry the
 * scn_ prefix; what one file uses alone stays static there.
 */
#ifndef RS_SCENARIO_INT_H
#define RS_SCENARIO_INT_H

#include "scenario.h"

struct apply_ctx;

/* ---- messages (scenario_diag.c) ---- */

/* Adds a problem: listed while the current load has listed fewer than
 * SCENARIO_MAX_MESSAGES, else only counted. */
void scn_diag_add(struct scenario_diag *d, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Counts a problem not to be listed, when the load has listed its fill;
 * true then, and the caller need not work out its message. */
bool scn_diag_skip(struct scenario_diag *d);
/* A load's messages start here. */
void scn_diag_begin(struct scenario_diag *d);
/* Ends a load: one line for the problems not listed; returns how many
 * problems the load found, listed or not. */
int scn_diag_end(struct scenario_diag *d, const char *source);

/* ---- entries (scenario.c) ---- */

/* One key = value line of the file, a section header (empty key), or an
 * override. */
struct entry {
    char section[96];
    char key[64];
    char value[256];
    const char *source; /* file name, or NULL for an override */
    int line;
    const char *set;    /* an override: its --set text (the caller's) */
};

/* "FILE:LINE" or "--set TEXT", for messages; returns buf (scenario_diag.c). */
const char *scn_where(const struct entry *e, char *buf, size_t size);

/* ---- the key table (scenario_keys.c) ---- */

/* [server] and [service NAME] share the S_SERVER keys; [server] is [service server]. */
enum sect_kind { S_RUN, S_LOAD, S_SERVER, S_HERD, S_PHASE, S_LAYER, S_SERVICE, S_CACHE, S_NKINDS };

enum key_type {
    T_NAME, T_DURATION, T_TIMEOUT, T_SEED, T_RATE, T_UINT, T_DIST, T_QUEUE, T_BACKOFF, T_MULT,
    T_CAP, T_PHASE_RATE, T_FACTOR, T_ENUM, T_BOOL, T_PROB, T_CLASSES, T_LIMIT_STATUS, T_DIST_NONE,
    T_REAL, T_RATE_NONE, T_INSTANCES, T_BUDGET, T_BREAKER, T_WINDOW, T_TIMES, T_CALLS, T_TARGET,
    T_SHAPE, T_PATH, T_POPULARITY, T_NAME_NONE, T_NTYPES
};

struct key_desc {
    enum sect_kind sect;
    const char *key;
    enum key_type type;
    size_t offset; /* in struct scenario, service_cfg, phase_cfg, layer_cfg or cache_cfg */
    long long lo, hi;
    const char *allowed;
    const char *const *names; /* T_ENUM: the allowed words, NULL-terminated; the field is an int-sized enum */
    size_t flag;              /* T_DIST_NONE: offset of the bool saying the value is given */
};

/* The number of keys in scn_keys (checked where the table is defined). */
#define NKEYS 117

extern const struct key_desc scn_keys[NKEYS];
extern const char *const scn_sect_names[S_NKINDS];
/* The words of each enum key, NULL-terminated, in the order of its enum. */
extern const char *const scn_model_names[];
extern const char *const scn_arrival_names[];
extern const char *const scn_discipline_names[];
extern const char *const scn_outage_names[];
extern const char *const scn_honor_names[];
extern const char *const scn_scope_names[];
extern const char *const scn_server_model_names[];
extern const char *const scn_balancer_names[];
extern const char *const scn_degrade_names[];
extern const char *const scn_hedge_names[];
extern const char *const scn_cancel_names[];
/* Keys that only a service graph uses, NULL-terminated. */
extern const char *const scn_graph_keys[];

/* Offsets of fields, for the key table and the defaults of layers. */
#define RUN(f) offsetof(struct scenario, f)
#define PH(f) offsetof(struct phase_cfg, f)
#define LY(f) offsetof(struct layer_cfg, f)
#define SV(f) offsetof(struct service_cfg, f)
#define CA(f) offsetof(struct cache_cfg, f)

void scn_apply_value(struct apply_ctx *ac, const struct entry *e, const struct key_desc *kd,
                     void *base);
const struct key_desc *scn_find_key(enum sect_kind k, const char *key);
void scn_list_keys(enum sect_kind k, char *buf, size_t size);
const char *scn_suggest_key(enum sect_kind k, const char *key);
/* Whether sections of kind k take a name ([layer NAME]); O(1). */
bool scn_sect_named(enum sect_kind k);
/* Every section the parser knows, for messages, from scn_sect_names and
 * scn_sect_named: "[run] [load] ... [cache NAME]", into buf. O(kinds). */
void scn_sections_allowed(char *buf, size_t size);

/* ---- applying entries (scenario_apply.c) ---- */

/* A load in progress: the scenario, its messages, and which entry made
 * each section and set each key (NULL: not given), for messages. */
struct apply_ctx {
    struct scenario *sc;
    struct scenario_diag *diag;
    const struct entry *phase_entry[SCENARIO_MAX_PHASES];
    const struct entry *layer_entry[SCENARIO_MAX_LAYERS];
    const struct entry *service_entry[SCENARIO_MAX_SERVICES]; /* NULL: the default service */
    const struct entry *last[NKEYS]; /* the entry that set each unnamed-section key */
    const struct entry *phase_key[SCENARIO_MAX_PHASES][NKEYS];
    const struct entry *layer_key[SCENARIO_MAX_LAYERS][NKEYS];
    const struct entry *service_key[SCENARIO_MAX_SERVICES][NKEYS];
    const struct entry *cache_entry[SCENARIO_MAX_CACHES];
    const struct entry *cache_key[SCENARIO_MAX_CACHES][NKEYS];
    const char *dir; /* the scenario file's directory (traces are relative to it); NULL: text */
    bool sealed;     /* untrusted text (serve): no file is read; a trace must be a built-in one */
    bool graph_ok; /* names resolved and the calls form a DAG: paths may be walked */
};

void scn_add_item(struct apply_ctx *ac, const struct entry *e, enum sect_kind kind,
                  const char *name);
void scn_apply_entry(struct apply_ctx *ac, const struct entry *e, bool first_in_section);
void scn_apply_kind_defaults(struct apply_ctx *ac, unsigned i);
const char *scn_at(const struct apply_ctx *ac, const char *key, char *buf, size_t size);
void scn_copy_name(char *dst, const char *src);
bool scn_given(const struct apply_ctx *ac, enum sect_kind k, const char *key);
const char *scn_item_name(const struct scenario *sc, enum sect_kind kind, unsigned i);
const struct entry *scn_key_entry(const struct apply_ctx *ac, enum sect_kind k, unsigned i,
                                  const char *key);
const char *scn_key_where(const struct apply_ctx *ac, enum sect_kind k, unsigned i,
                          const char *key, char *buf, size_t size);
void scn_layer_defaults(struct layer_cfg *l, const char *name);
bool scn_layer_given(const struct apply_ctx *ac, unsigned i, const char *key);
bool scn_phase_given(const struct apply_ctx *ac, unsigned i, const char *key);
void scn_defaults(struct scenario *sc);
const char *scn_service_at(const struct apply_ctx *ac, unsigned i, const char *key, char *buf,
                           size_t size);
bool scn_service_given(const struct apply_ctx *ac, unsigned i, const char *key);
const char *scn_service_section(const struct apply_ctx *ac, unsigned i, const char *key,
                                char *buf, size_t size);
bool scn_valid_name(const char *s);

/* ---- cross-field rules and limits (scenario_check.c, scenario_limits.c) ---- */

void scn_check_all(struct apply_ctx *ac);
void scn_check_limits(struct apply_ctx *ac);

#endif
