/*
 * occ — the state of the optimistic-concurrency model (server model = occ;
 * occ.c says what it simulates): its clients and the shared item's
 * version. Internal to the model: simctx.h embeds struct occ_rt in struct
 * sim. Memory is O(clients), allocated by occ_init and freed by occ_fini.
 */
#ifndef RS_OCC_H
#define RS_OCC_H

#include <stdbool.h>
#include <stdint.h>

#include "backoff.h"

struct sim;

/* One client of the `occ` model (the AWS backoff study). */
struct occ_client {
    uint32_t attempt; /* failed writes so far */
    uint32_t writes;
    bool done;
    struct backoff_state bs;
};

struct occ_rt {
    struct occ_client *clients; /* sc.clients of them; NULL unless the model is occ */
    uint64_t version;           /* the shared item's version */
};

/* Allocates the clients; 0, or -1 when out of memory. */
int occ_init(struct sim *s);
/* Frees the clients (NULL: nothing). */
void occ_fini(struct sim *s);
/* Every client reads the item at t = 0. */
void occ_start(struct sim *s);
/* Clients not done at the end (and their writes recorded in the attempts). */
uint64_t occ_finish(struct sim *s);

#endif
