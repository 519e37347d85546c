/*
 * plot — figures from a run's or a comparison's CSV files, drawn by gnuplot
 * (an external program) with the scripts in plots/, which are compiled
 * into the binary.
 *
 * plot_dir looks at what DIR holds and draws every figure its files
 * support, each as PNG (pngcairo) and SVG: load, queue and latency over
 * time, the latency CDF and the attempts histogram of a run; the
 * comparison panels of a `compare` directory and, when its files are
 * there, its latency CDFs, attempts and summary by variant (compare_cdf,
 * compare_attempts, compare_summary); the AWS study's two panels
 * when the comparison varies load.clients and layer.app.backoff; the
 * three panels of a sweep. A run with a services.csv (a service graph)
 * also gets one figure per service, service_NAME (at most 64 services;
 * NAME is 1 to 47 of [A-Za-z0-9_-], checked before it names a file): its
 * load, queue and workers over time, with the workers held at each of its
 * first 8 replicas; a run with a caches.csv gets one figure per cache,
 * cache_NAME (at most 8 caches, names checked the same way): its hit ratio
 * and entries, and lookups, misses, coalesced misses, expirations and
 * evictions per second. A comparison of a graph gets one figure per
 * service, compare_service_NAME (its load, queue and held workers, a line
 * per variant, from each variant's directory), and a sweep of one
 * sweep_service_NAME (sweep.csv's NAME_calls, NAME_queue_mean and
 * NAME_utilization over the first key, a line per value of the second).
 * plot_dir_drawn names each file it installs (figrec.h records them).
 * Phases (from DIR/scenario.ini) are shaded and
 * labelled on time plots. A struct plot_style (plot's options) sets the
 * look of every figure (size, type, lines, palette, title; on a slide the
 * legends under the plots) or asks for only the animated GIF of the load
 * (load.gif, compare.gif), on the same axes as its PNG.
 *
 * What DIR holds is hostile: result directories are shared between people,
 * and reading one must never execute anything. So:
 * - every value read from DIR's files (keys, variant, outcome and level
 *   names, phase and scenario names) reaches gnuplot only as a string
 *   made by plot_quote, the one escaping function, in gnuplot arrays and
 *   variables that the scripts use as data (never eval, never a macro);
 * - the DIR path never enters a script: gnuplot runs with DIR as its
 *   working directory and the scripts name files by fixed relative names;
 * - every reader checks what it reads (line length, columns, value length
 *   and characters, number of distinct values; in services.csv also every
 *   number drawn, finite and not negative, the service names, replica
 *   numbers up to 1000 and at most 1,000,000 rows) and answers a malformed
 *   file with PLOT_BAD_INPUT and a message naming the file and line;
 * - gnuplot runs without a shell (fork and exec, `gnuplot -d`: no
 *   initialisation files), in its own process group, reading its script
 *   from a socket; its stderr comes back through a pipe (no file);
 * - each figure is written to a file created in DIR with
 *   O_CREAT|O_EXCL|O_NOFOLLOW under an unpredictable name
 *   (".NAME.XXXXXXXXXXXX.tmp", 12 random hex digits) and renamed into
 *   place when gnuplot succeeds and the name still holds that file; a
 *   planted symbolic link is never followed, and a planted link at the
 *   final name is replaced, not written through.
 *
 * Cost: one gnuplot process per figure and format; each CSV read once
 * per list drawn from it, O(rows × distinct values) at worst.
 */
#ifndef RS_PLOT_H
#define RS_PLOT_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>

#include "labels.h"

/* plot_dir's failures (it returns a count of files otherwise). */
enum {
    PLOT_FAILED = -1,    /* gnuplot failed, an I/O error, or nothing to draw */
    PLOT_STOPPED = -2,   /* *stop was set (by a signal): gnuplot killed, temporaries removed */
    PLOT_BAD_INPUT = -3, /* DIR is not a directory, or one of its files is malformed */
};

/* Longest value read from a file (a key, a variant or outcome name). */
#define PLOT_VALUE_MAX 1024
/* Most distinct values in one list (a sweep key's values, variants). */
#define PLOT_LIST_MAX 4096

/* Whether a gnuplot can be run. */
bool plot_available(void);

/* The one function that puts outside text into a gnuplot script: writes
 * to out a gnuplot string expression whose value is exactly the bytes of
 * s: the runs of s between single quotes, each as a single-quoted literal,
 * joined by .sprintf('%c',39). (a quote). Inside a single-quoted literal
 * everything is literal: backslashes, double quotes, '#', backquotes (no
 * command substitution inside single quotes) and '@' (no macro expansion).
 * A quote is not written as '' (which gnuplot documents) because
 * gnuplot's scanner reads '' as a quote only after another character of
 * the string: a leading quote, or two in a row, end the literal early; nor
 * as "'", because gnuplot's macro pass toggles on every quote, even inside
 * double quotes, and would then take the rest of the line as outside
 * quotes. A newline would end the command, so s must hold no control
 * character (bytes 1–31 and 127). Returns the length written (without the
 * NUL), or -1 when s holds a control character or out (of size bytes;
 * PLOT_QUOTED_SIZE(strlen(s)) always suffice) is too small. O(strlen(s)). */
int plot_quote(const char *s, char *out, size_t size);
#define PLOT_QUOTED_SIZE(len) (20 * (size_t)(len) + 3)

/* How the figures look (the options of `retrystorm plot`). All zero (or
 * plot_dir's NULL) is the default look: each figure's own size, 12-point
 * type, the scenario's name in the titles, no animation. */
#define PLOT_TITLE_MAX 200      /* bytes of a --title */
#define PLOT_WIDTH_MIN 320      /* --size bounds, in pixels */
#define PLOT_WIDTH_MAX 7680
#define PLOT_HEIGHT_MIN 240
#define PLOT_HEIGHT_MAX 4320
#define PLOT_FONT_SCALE_MIN 0.5 /* --font-scale bounds */
#define PLOT_FONT_SCALE_MAX 4.0
#define PLOT_FRAMES 60          /* frames of the animated GIF of a run */
#define PLOT_FRAMES_MIN 12      /* a comparison's: PLOT_FRAMES / variants, at least this */
struct plot_style {
    char title[PLOT_TITLE_MAX + 1]; /* "": the scenario's name; a newline breaks the line */
    unsigned width, height;         /* pixels, 0: the figure's own (slide: 1920x1080) */
    double font_scale;              /* 0: 1 (slide: 1.75) */
    bool slide;                     /* 1920x1080, large type, thick lines, high-contrast palette */
    bool animate;                   /* only the animated GIF of the load building up */
    const char *labels[LABELS_MAX]; /* --label VARIANT=TEXT (labels.h), nlabels of them; outlive the call */
    size_t nlabels;
};

/* Takes one option of `plot` into st: --title TEXT, --size WxH,
 * --font-scale F, --style slide|default (value: its argument, NULL when
 * it has none) or --animate (value unused). Returns 1 when the option took
 * value (--label VARIANT=TEXT too: kept, checked against the variants
 * when drawing), 0 when it took none, -1 when option is not one of these, and
 * PLOT_BAD_INPUT with a message in err naming the option, the value and
 * what is allowed when the value is bad or missing. O(strlen(value)). */
int plot_style_option(struct plot_style *st, const char *option, const char *value, char *err,
                      size_t errsz);

/* Draws every figure DIR supports in the look st (NULL: the default);
 * with st->animate only the animated GIFs, and PLOT_BAD_INPUT (nothing
 * written) when DIR has no load over time to animate. Returns the number
 * of files written, or one of the PLOT_ codes above with a message in err. stop may be NULL; when *stop becomes non-zero,
 * plot_dir kills gnuplot's process group and returns PLOT_STOPPED within
 * about 0.1 s. */
int plot_dir_styled(const char *dir, const struct plot_style *st, volatile sig_atomic_t *stop,
                    char *err, size_t errsz);

/* plot_dir_styled, calling drawn(user, NAME) for each file it installs
 * (NAME: the file's name in DIR, e.g. "load.png"); drawn may be NULL. */
typedef void plot_drawn_fn(void *user, const char *name);
int plot_dir_drawn(const char *dir, const struct plot_style *st, volatile sig_atomic_t *stop,
                   plot_drawn_fn *drawn, void *user, char *err, size_t errsz);

/* plot_dir_styled with the default look. */
int plot_dir(const char *dir, volatile sig_atomic_t *stop, char *err, size_t errsz);

#endif
