/*
 * load — the state of where logical requests come from (load.c says how):
 * the current open-loop rate or closed-loop think factor, the pending
 * arrival, thinning, a trace's next row, and the clients' think timers of
 * a closed loop with herds. Internal to the model: simctx.h embeds struct
 * load_rt in struct sim. Memory is O(clients) with herds, else O(1).
 */
#ifndef RS_LOAD_H
#define RS_LOAD_H

#include <stdbool.h>
#include <stdint.h>

#include "evq.h"
#include "metrics.h"
#include "sim.h"

struct load_rt {
    double rate;          /* current open-loop rate per second */
    double think_factor;  /* closed loop: think times are divided by this */
    evq_handle next_arrival;
    bool thin;            /* a ramp or a shape: arrivals by thinning; rate is their bound */
    struct arrival_source arrivals; /* the trace's rows (sim_set_arrivals); next NULL: none */
    double trace_rate;    /* a trace of rates: the current row's */
    rs_time trace_next_t; /* the next row's time; RS_TIME_NEVER: no more */
    double trace_next_rate;
    char trace_err[600];  /* a row that went bad during the run (sim_run reports it) */
    evq_handle *think;    /* closed loop with herds: each client's pending think */
};

void load_start(struct sim *s);
void load_on_arrival(struct sim *s);
void load_on_client(struct sim *s, uint32_t client);
void load_on_phase(struct sim *s);
/* A logical request ended (the root call finished); o is its outcome. */
void load_request_done(struct sim *s, uint32_t req, enum outcome o);
void load_request_unref(struct sim *s, uint32_t req);

void load_on_herd(struct sim *s);
/* A trace of rates reached its next row (EV_TRACE). */
void load_on_trace(struct sim *s);
/* Whether the run must be handed an arrival source (sim_set_arrivals). */
bool load_wants_arrivals(const struct sim *s);
/* Allocates the think timers of a closed loop with herds (O(clients));
 * 0, or -1 with the reason in err. */
int load_init(struct sim *s, char *err, size_t errsz);
/* Frees them (the run's end; load_fini only closes the arrival source,
 * which sim_set_arrivals also does). */
void load_free_timers(struct sim *s);
/* Closes the run's arrival source, if any. */
void load_fini(struct sim *s);

#endif
