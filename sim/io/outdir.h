/*
 * outdir — the one place that decides what retrystorm may create, replace
 * or delete on disk.
 *
 * The ownership rule. A directory is *ours* when it holds the marker file
 * `.retrystorm` and every entry in it is a name we write (outdir_our_name:
 * our CSV files, scenario.ini, our figures, the temporaries of those) as a
 * regular file, or a subdirectory that is itself ours (a comparison's
 * variants). Nothing else is ever replaced or removed: a directory that
 * holds anything else is *foreign*. `--force` writes our files into a
 * foreign directory, replacing only entries with our names, and leaves every
 * other entry untouched (and no marker). A command never marks a directory
 * it refused.
 *
 * Safety. Every file is created relative to a directory descriptor opened
 * with O_DIRECTORY|O_NOFOLLOW, under an unpredictable temporary name with
 * O_CREAT|O_EXCL|O_NOFOLLOW, and renamed into place: nothing planted in the
 * directory can redirect a write. Work directories come from mkdtemp. Paths
 * longer than PATH_MAX are an error, never truncated.
 *
 * Files are written the same way (struct output_file: open, write, commit
 * or discard), here, so that this module is the one owner of what may be
 * created or replaced.
 *
 * Costs: classifying or cleaning a directory reads it once (and each
 * subdirectory, one level down); every other operation is a few syscalls.
 */
#ifndef RS_OUTDIR_H
#define RS_OUTDIR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

enum outdir_kind { OUTDIR_ABSENT, OUTDIR_EMPTY, OUTDIR_OURS, OUTDIR_FOREIGN };

/* Whether `name` (one path component) is a file name retrystorm writes. */
bool outdir_our_name(const char *name);

/* Whether `name` is one of the figures plot draws (PNG, SVG or GIF). */
bool outdir_figure_name(const char *name);

/* What `path` is. Returns 0, or -1 with a message when it cannot be an
 * output directory at all: too long, a symbolic link, not a directory, or
 * unreadable. */
int outdir_classify(const char *path, enum outdir_kind *kind, char *err, size_t errsz);

/* The check every command makes before any work: 0 when `path` may receive
 * an output (absent, empty, ours, or foreign with force), 2 with a message
 * naming what to do otherwise. Touches nothing. */
int outdir_check(const char *path, bool force, char *err, size_t errsz);

/* Makes `path` ready to be written into directly (sweep, tune, merge): a
 * missing directory is created and marked, an empty one marked, an earlier
 * output of ours emptied of our files (unless `keep`, for --resume), a
 * foreign one left as it is (force). Returns 0, 2 (refused: nothing
 * touched) or 1 (I/O), with a message. */
int outdir_prepare(const char *path, bool force, bool keep, char *err, size_t errsz);

/* Creates `path` (and missing parents) if absent, and marks it ours only if
 * it created it. -1 with a message when it cannot, or when `path` exists and
 * is not a directory. */
int outdir_mkdir(const char *path, char *err, size_t errsz);

/* Creates a fresh, marked work directory beside `path` (mkdtemp of
 * "PATH.work-XXXXXX") and writes its name to work. */
int outdir_mkwork(const char *path, char *work, size_t worksz, char *err, size_t errsz);

/* Moves the finished work directory to `path`: renamed into place when
 * `path` is absent; exchanged with an earlier output of ours, which is then
 * removed (only our entries); its entries moved in one by one when `path`
 * is empty or foreign (force). `path` is classified again first: if it
 * changed during the run so that it may no longer be written, the work is
 * left where it is and the message says where. Returns 0 or 1. */
int outdir_install(const char *work, const char *path, bool force, char *err, size_t errsz);

/* Removes what is ours in `path` (our files, subdirectories that are ours,
 * the marker last) and the directory itself when nothing else is left.
 * Returns the number of entries kept because they are not ours, or -1. */
int outdir_remove_ours(const char *path);

/* Opens a temporary file in the directory fd `dirfd` for `name`: an
 * unpredictable name ".NAME.XXXXXXXXXXXX.tmp" created with
 * O_CREAT|O_EXCL|O_NOFOLLOW, read-write, written to tmp. Returns the fd,
 * or -1 with errno. */
int outdir_tmpfile(int dirfd, const char *name, char *tmp, size_t tmpsz);

/* DIR/NAME into out; -1 (out empty) when it does not fit: a path is never
 * cut short into another. */
int outdir_join(char *out, size_t size, const char *dir, const char *name);

/* Opens `path` as a directory without following a final symbolic link;
 * -1 with errno otherwise. */
int outdir_open_dirfd(const char *path);

/* A file written under an unpredictable temporary name in a directory
 * (outdir_tmpfile: O_CREAT|O_EXCL|O_NOFOLLOW relative to the directory's
 * fd) and renamed into place by commit; discard removes the temporary. */
struct output_file {
    FILE *f;
    int dirfd;
    char tmp[300], name[256], shown[4400]; /* shown: DIR/NAME, for messages */
};
int output_file_open(struct output_file *of, const char *dir, const char *name, char *err,
                     size_t errsz);
int output_file_commit(struct output_file *of, char *err, size_t errsz);
void output_file_discard(struct output_file *of);
/* commit's two halves, for a writer of several files that renames none
 * before all are written: close flushes, syncs and closes (the file stays
 * under its temporary name); rename puts it in place and closes the
 * directory. Each returns 0, or -1 with a message (then discard). */
int output_file_close(struct output_file *of, char *err, size_t errsz);
int output_file_rename(struct output_file *of, char *err, size_t errsz);

#endif
