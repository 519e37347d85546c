/*
 * service — the state of the services of a run (service.c says how the
 * `queue` model works, balancer.c how a replica is picked): each service's
 * replicas and round-robin cursor, each replica's workers, queue, limiter,
 * phase state and run totals, services.csv's buckets, and the entry
 * service's levels for timeseries.csv. Internal to the model: simctx.h
 * embeds struct service_set in struct sim. Memory is O(replicas) plus
 * O(buckets · replicas) for graph scenarios, plus the queues' rings.
 */
#ifndef RS_SERVICE_H
#define RS_SERVICE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config.h"
#include "errclass.h"
#include "units.h"

struct sim;
struct reply_to;
struct child;

/* Per bucket and replica (services.csv; only for graph scenarios). */
struct svc_bucket {
    uint64_t arrivals, started, completed, rejected, wasted, dep_calls;
    double area_queue, area_busy, area_working; /* level · ns */
};

/* One replica of a service: its workers, queue and limiter, and the state
 * the active phases give it. */
struct replica {
    uint32_t capacity;   /* workers available now */
    uint32_t busy;       /* workers held: working, or waiting on dependencies */
    uint32_t working;    /* of those, doing local work */
    uint32_t hung;       /* attempts it swallowed that a caller still waits for */
    uint32_t *queue;     /* ring buffer of job indices */
    uint32_t q_head, q_len, q_cap; /* q_len: jobs queued (the level) */
    uint32_t q_ring;     /* entries in the ring: queued and cancelled not yet reached */
    uint16_t service;
    bool entry;          /* of the service the clients call */
    enum outage outage;
    rs_time outage_retry_after;
    double slowdown;
    double tokens;       /* rate limiter */
    rs_time tokens_t;
    rs_time area_t;      /* services.csv: levels integrated up to here */
    /* run totals, for the conservation check at the end */
    uint64_t n_arrivals, n_turned, n_jobs, n_dropped, n_started, n_completed, n_stopped;
    struct svc_bucket pre; /* services.csv's counts and areas before warmup */
};

struct service_rt {
    uint32_t first, n;   /* its replicas: reps[first .. first + n) */
    uint32_t rr;         /* round-robin cursor */
    uint8_t edge[SCENARIO_MAX_CALLS]; /* the outermost layer towards each dependency; NO_LAYER: direct */
};

struct service_set {
    struct service_rt svc[SCENARIO_MAX_SERVICES];
    struct replica *reps;
    uint32_t nreps;
    uint32_t q_len, busy; /* the entry service's, over its replicas (timeseries.csv) */
    struct svc_bucket *sb; /* nbuckets · nreps, or NULL */
    double queue_growth; /* bytes the replicas' queues grew by past their first 1024 entries */
};

int service_init(struct sim *s, char *err, size_t errsz);
void service_fini(struct sim *s);
/* An attempt arrives at service svc from `from`, delivered over layer via's
 * hop (NO_LAYER: called directly by a job). */
struct child service_arrive(struct sim *s, uint32_t svc, uint32_t req, struct reply_to from,
                            uint8_t via, rs_time deadline_at);
/* A cancellation reached job ji of generation gen (EV_CANCEL). */
void service_on_cancel(struct sim *s, uint32_t ji, uint32_t gen);
/* Job's work ended (EV_SERVICE_DONE); ignored when the job was stopped. */
void service_on_done(struct sim *s, uint32_t job, uint32_t gen);
/* A dependency call of a job answered (ignored when late). */
void service_on_dep_answer(struct sim *s, struct reply_to to, enum errclass cls);
/* Whether `to` (a call or a job) still waits for that answer. */
bool service_is_waiting(const struct sim *s, struct reply_to to);
/* A caller stopped waiting for an attempt replica *hung_at - 1 swallowed
 * (see struct call's hung_at); clears the mark. */
void service_unhang(struct sim *s, uint32_t *hung_at);
/* Applies the active phases to every replica (capacity, outage, slowdown). */
void service_apply_phases(struct sim *s);
/* Integrates every replica's levels up to now (the end of the run). */
void service_finish(struct sim *s);
/* Conservation per replica: arrivals = turned away + jobs, jobs = dropped +
 * started + queued, started = completed + busy, and services.csv's buckets
 * add up to the totals. Returns 0, or -1 with the broken rule in err. */
int service_check(const struct sim *s, char *err, size_t errsz);
/* Service.c ends a joined execution (its loader ended with cls). */
void service_complete_joined(struct sim *s, uint32_t ji, enum errclass cls);

/* balancer.c: the replica of service svc an attempt goes to, when it has
 * more than one (simctx.h's balancer_pick tests that inline). */
uint32_t balancer_choose(struct sim *s, uint32_t svc);

#endif
