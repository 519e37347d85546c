/*
 * phasewin — phases.csv's windows: what a run did before its first phase,
 * during each phase and after the last, so that an incident is not
 * diluted by the steady state around it.
 *
 * A run with at least one phase or herd has, in this order: `baseline`
 * [warmup, first start), one window per phase [start, end) in start order
 * (ties in file order; overlapping phases are each their own window), and
 * `after` [last end, duration). A herd is an instant: it ends the
 * baseline and starts `after` like a phase of length 0, and has no window
 * of its own. Every bound is clamped to [0, duration]: a drain's outcomes,
 * after duration, are in no window. Windows are half-open, like phases.
 *
 * Each window counts, by exact event time (never by bucket): the logical
 * requests that arrived in it, the entry service's arrivals in it, the
 * outcomes that happened in it (all, and ok), and a latency histogram of
 * those outcomes (metrics.h's, within 0.5 %). A time belongs to every
 * window that holds it: overlapping phases each count it.
 *
 * Use: phasewin_init once, phasewin_arrival / _server / _outcome at each
 * event (times never decrease), read w[] at the end, phasewin_fini.
 * Costs: per event one comparison and a loop over the windows holding the
 * time (usually one, none without phases); at each window bound O(windows).
 * Memory: one latency histogram (125 KB) per window, nothing without
 * phases or herds.
 */
#ifndef RS_PHASEWIN_H
#define RS_PHASEWIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config.h"
#include "metrics.h"
#include "units.h"

#define PHASEWIN_MAX (SCENARIO_MAX_PHASES + 2)

enum phasewin_kind { PW_BASELINE, PW_PHASE, PW_AFTER, PW_NKINDS };
extern const char *const phasewin_kind_names[PW_NKINDS];

struct phasewin_win {
    enum phasewin_kind kind;
    const char *name; /* the phase's name (in the scenario), or the kind's */
    rs_time start, end; /* [start, end), ns; start <= end */
    uint64_t requests, server_arrivals, ended, ok;
    struct lat_hist lat; /* the outcomes' latencies */
};

struct phasewin {
    size_t n; /* 0: no phase or herd, nothing counted */
    struct phasewin_win *w;
    rs_time next; /* the next bound after the windows in active[] were found */
    size_t nactive;
    uint8_t active[PHASEWIN_MAX]; /* the windows holding the current time */
};

/* Builds the windows of sc (none without phases and herds); sc must
 * outlive p (the names point into it). Returns 0, or -1 with a message
 * when memory is short. */
int phasewin_init(struct phasewin *p, const struct scenario *sc, char *err, size_t errsz);
void phasewin_fini(struct phasewin *p);

/* Finds the windows holding now and the next bound. O(windows). */
void phasewin_refresh(struct phasewin *p, rs_time now);

static inline void phasewin_at(struct phasewin *p, rs_time now)
{
    if (now >= p->next)
        phasewin_refresh(p, now);
}

/* A logical request arrived at now. */
static inline void phasewin_arrival(struct phasewin *p, rs_time now)
{
    phasewin_at(p, now);
    for (size_t k = 0; k < p->nactive; k++)
        p->w[p->active[k]].requests++;
}

/* An attempt arrived at the entry service at now. */
static inline void phasewin_server(struct phasewin *p, rs_time now)
{
    phasewin_at(p, now);
    for (size_t k = 0; k < p->nactive; k++)
        p->w[p->active[k]].server_arrivals++;
}

/* A logical request ended at now after lat, ok or not; bin: lat's, from
 * metrics_outcome. */
static inline void phasewin_outcome(struct phasewin *p, rs_time now, bool ok, rs_time lat, size_t bin)
{
    phasewin_at(p, now);
    for (size_t k = 0; k < p->nactive; k++) {
        struct phasewin_win *w = &p->w[p->active[k]];
        w->ended++;
        w->ok += ok;
        metrics_lat_add_in(&w->lat, bin, lat);
    }
}

#endif
