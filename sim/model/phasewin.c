/*
 * phasewin — the windows of phases.csv. See phasewin.h.
 */
#include "phasewin.h"

#include <stdio.h>
#include <stdlib.h>

const char *const phasewin_kind_names[PW_NKINDS] = {"baseline", "phase", "after"};

static rs_time clamp(rs_time t, rs_time lo, rs_time hi) { return t < lo ? lo : t > hi ? hi : t; }

/* The phases' order in start order, ties in file order (insertion sort:
 * stable, and at most SCENARIO_MAX_PHASES of them). */
static void by_start(const struct scenario *sc, unsigned *order)
{
    for (unsigned i = 0; i < sc->nphases; i++) {
        unsigned j = i;
        while (j > 0 && sc->phases[order[j - 1]].start > sc->phases[i].start) {
            order[j] = order[j - 1];
            j--;
        }
        order[j] = i;
    }
}

/* The first start and the last end over phases and herds. */
static void incident_bounds(const struct scenario *sc, rs_time *first, rs_time *last)
{
    *first = RS_TIME_NEVER;
    *last = 0;
    for (unsigned i = 0; i < sc->nphases; i++) {
        *first = sc->phases[i].start < *first ? sc->phases[i].start : *first;
        *last = sc->phases[i].end > *last ? sc->phases[i].end : *last;
    }
    for (unsigned i = 0; i < sc->nherds; i++) {
        *first = sc->herds[i] < *first ? sc->herds[i] : *first;
        *last = sc->herds[i] > *last ? sc->herds[i] : *last;
    }
}

static void window(struct phasewin_win *w, enum phasewin_kind kind, const char *name, rs_time start,
                   rs_time end, rs_time duration)
{
    w->kind = kind;
    w->name = name;
    w->start = clamp(start, 0, duration);
    w->end = clamp(end, w->start, duration);
}

int phasewin_init(struct phasewin *p, const struct scenario *sc, char *err, size_t errsz)
{
    *p = (struct phasewin){.next = RS_TIME_NEVER};
    if (sc->nphases == 0 && sc->nherds == 0)
        return 0;
    p->w = calloc(sc->nphases + 2, sizeof *p->w);
    if (p->w == NULL)
        goto oom;
    p->n = sc->nphases + 2;
    rs_time first, last, d = sc->duration;
    incident_bounds(sc, &first, &last);
    unsigned order[SCENARIO_MAX_PHASES];
    by_start(sc, order);
    window(&p->w[0], PW_BASELINE, "baseline", sc->warmup, first < sc->warmup ? sc->warmup : first, d);
    for (unsigned i = 0; i < sc->nphases; i++) {
        const struct phase_cfg *ph = &sc->phases[order[i]];
        window(&p->w[1 + i], PW_PHASE, ph->name, ph->start, ph->end, d);
    }
    window(&p->w[p->n - 1], PW_AFTER, "after", last, d, d);
    for (size_t i = 0; i < p->n; i++)
        if (metrics_lat_init(&p->w[i].lat) != 0)
            goto oom;
    p->next = 0;
    return 0;
oom:
    snprintf(err, errsz, "out of memory for phases.csv's %u windows (125 KB each)", sc->nphases + 2);
    phasewin_fini(p);
    return -1;
}

void phasewin_fini(struct phasewin *p)
{
    for (size_t i = 0; p->w != NULL && i < p->n; i++)
        metrics_lat_fini(&p->w[i].lat);
    free(p->w);
    *p = (struct phasewin){.next = RS_TIME_NEVER};
}

void phasewin_refresh(struct phasewin *p, rs_time now)
{
    p->nactive = 0;
    p->next = RS_TIME_NEVER;
    for (size_t i = 0; i < p->n; i++) {
        const struct phasewin_win *w = &p->w[i];
        if (w->start <= now && now < w->end)
            p->active[p->nactive++] = (uint8_t)i;
        if (w->start > now && w->start < p->next)
            p->next = w->start;
        if (w->end > now && w->end < p->next)
            p->next = w->end;
    }
}
