/*
 * figrec — the record of the figures `plot` drew in an output directory,
 * so that a rerun into the same -o keeps them or says what it removed.
 *
 * The record is DIR/figures.csv (one of our names, outdir.h): a header,
 * then one row per figure that `retrystorm plot` drew, sorted by name:
 *
 *   figure,data,style,size,font_scale,animate,title
 *   load.png,9c1d52e07f3b11a4,slide,0x0,0,1,
 *
 * `data` is a digest (64-bit FNV-1a, hex) of what the figures are drawn
 * from: the files plot reads (figrec.c lists them) in DIR and in each of
 * its subdirectories (a comparison's variants), in name order, with the
 * column wall_s left out (the wall-clock time, the one value that differs
 * between equal runs). The look is plot's options as struct plot_style
 * holds them; the title (last, so it may hold commas) with '\' and
 * newline written as "\\" and "\n". Figures that `run --plot` or
 * `compare --plot` draw are not recorded: a rerun draws them again.
 *
 * figrec_carry, called before a finished run's work directory replaces an
 * earlier output of ours, links each recorded figure into the work
 * directory when the new data's digest equals the recorded one and the
 * work has no figure of that name (it drew its own), records it there,
 * and writes a note naming the figures it keeps and, per look, those it
 * leaves to be removed with the command that draws them again. Nothing
 * else is touched: the earlier output is removed by outdir_install under
 * the ownership rule.
 *
 * Everything read back is hostile: the record's rows are checked (figure
 * names ours, digests 16 hex digits, the look through plot_style_option,
 * at most FIGREC_ROWS rows of at most FIGREC_LINE bytes); a record that
 * fails a check is treated as absent and the note says so. The redraw
 * command is built from the checked look, the title single-quoted for a
 * shell, never copied from the file.
 *
 * Costs: a digest reads every data file once (O(bytes)); a record is
 * read and written whole, O(rows × log rows).
 */
#ifndef RS_FIGREC_H
#define RS_FIGREC_H

#include <stddef.h>
#include <stdio.h>

#include "plot.h"

#define FIGREC_FILE "figures.csv"
#define FIGREC_ROWS 4096 /* most rows of a record */
#define FIGREC_LINE 1024 /* longest row, bytes */

/* The names of the figures one `plot` drew (the plot_dir_drawn callback's
 * user data): each name is copied. */
struct figrec_drawn {
    char **v;
    size_t n, cap;
};
void figrec_drawn_add(void *drawn, const char *name);
void figrec_drawn_fini(struct figrec_drawn *d);

/* The options of `plot` that draw in the look st, as shell words (the
 * title single-quoted), into out: "" for the default look. */
void figrec_args(const struct plot_style *st, char *out, size_t size);

/* Records in DIR/figures.csv that the figures in d were drawn in the look
 * st from DIR's present data (each replaces its earlier row; other rows
 * are kept). 0, or -1 with a message. */
int figrec_record(const char *dir, const struct plot_style *st, const struct figrec_drawn *d, char *err,
                  size_t errsz);

/* Before `work` replaces `dir` (an output of ours; anything else: nothing
 * to do): keeps in work the figures recorded in dir whose data is
 * unchanged and whose names work does not hold, and records them there.
 * `note` (malloc'd, the caller frees; NULL when there is nothing to say)
 * says what was kept and what will be removed, and how to redraw it,
 * naming dir as `shown`. Returns 0, or -1 with a message (nothing kept). */
int figrec_carry(const char *dir, const char *work, const char *shown, char **note, char *err,
                 size_t errsz);

/* Commands that empty their directory in place and write into it (sweep,
 * tune, merge, hysteresis, map, margin: outdir_prepare) cannot keep a
 * figure, but say which went. figrec_hold, before such a command, notes
 * the figures recorded in dir (an output of ours) as they are: NULL when
 * there are none. figrec_release, after it (whatever its outcome), frees
 * h and returns a note (malloc'd; NULL: nothing to say) naming, per look,
 * the recorded figures that are gone ("removed ... with the earlier
 * output") or were drawn again by the command's --plot ("replaced"),
 * each with the plot command that redraws them. h may be NULL. */
struct figrec_held;
struct figrec_held *figrec_hold(const char *dir);
char *figrec_release(struct figrec_held *h, const char *dir, const char *shown);

/* Prints each sentence of note (figrec_carry's or figrec_release's) to f
 * as a message ("retrystorm: SENTENCE" and a newline; a title's newline
 * is kept inside the redraw command's quotes), and frees it. note may be
 * NULL. */
void figrec_say(FILE *f, char *note);

#endif
