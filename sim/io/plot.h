/*
 * plot — figures from a run's or a comparison's CSV files, drawn by gnuplot
 * (an external program) with the scripts in plots/, which are compiled
 * into the binary.
 *
 * plot_dir looks at what DIR holds and draws every figure its files
 * support, each as PNG (pngcairo) and SVG: load, queue and latency over
 * time, the latency CDF and the attempts histogram of a run; the
 * comparison panels of a `compare` directory; the AWS study's two panels
 * when the comparison varies load.clients and layer.app.backoff; the
 * three panels of a sweep. A run with a services.csv (a service graph)
 * also gets one figure per service, service_NAME (at most 64 services;
 * NAME is 1 to 47 of [A-Za-z0-9_-], checked before it names a file): its
 * load, queue and workers over time, with the workers held at each of its
 * first 8 replicas; a run with a caches.csv gets one figure per cache,
 * cache_NAME (at most 8 caches, names checked the same way): its hit ratio
 * and entries, and lookups, misses, coalesced misses, expirations and
 * evictions per second. Phases (from DIR/scenario.ini) are shaded and
 * labelled on time plots.
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

/* Draws every figure DIR supports. Returns the number of files written,
 * or one of the PLOT_ codes above with a message in err. stop may be
 * NULL; when *stop becomes non-zero, plot_dir kills gnuplot's process
 * group and returns PLOT_STOPPED within about 0.1 s. */
int plot_dir(const char *dir, volatile sig_atomic_t *stop, char *err, size_t errsz);

#endif
