/*
 * window — a sliding window of time slices holding a few sums (requests,
 * failures, …), as Finagle, Hystrix, Polly and the SRE book keep them: the
 * window is `n` slices of `slice` each; a slice older than the window is
 * cleared when time reaches it. Embedded in budget and breaker states; all
 * operations are O(n) at worst (when many slices expired at once), O(1)
 * usually. Header-only.
 */
#ifndef RS_WINDOW_H
#define RS_WINDOW_H

#include <string.h>

#include "units.h"

#define WINDOW_MAX_SLICES 12
#define WINDOW_SUMS 3

struct window {
    int64_t cur; /* index (time / slice) of the newest slice */
    double v[WINDOW_MAX_SLICES][WINDOW_SUMS];
};

/* Moves the window to now, clearing the slices that fell out of it. */
static inline void window_advance(struct window *w, rs_time now, rs_time slice, unsigned n)
{
    int64_t idx = now / slice;
    if (idx <= w->cur)
        return;
    if (idx - w->cur >= (int64_t)n) {
        memset(w->v, 0, sizeof w->v);
    } else {
        for (int64_t i = w->cur + 1; i <= idx; i++)
            memset(w->v[i % n], 0, sizeof w->v[0]);
    }
    w->cur = idx;
}

static inline void window_add(struct window *w, rs_time now, rs_time slice, unsigned n,
                              unsigned which, double x)
{
    window_advance(w, now, slice, n);
    w->v[w->cur % n][which] += x;
}

static inline double window_sum(struct window *w, rs_time now, rs_time slice, unsigned n,
                                unsigned which)
{
    window_advance(w, now, slice, n);
    double s = 0;
    for (unsigned i = 0; i < n; i++)
        s += w->v[i][which];
    return s;
}

#endif
