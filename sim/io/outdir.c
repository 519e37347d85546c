/*
 * outdir — ownership of output directories, safe creation, install.
 * See outdir.h.
 */
#define _GNU_SOURCE /* renameat2 */

#include "outdir.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#define MARKER ".retrystorm"

/* Every file name retrystorm writes into an output directory. */
static const char *const our_files[] = {
    MARKER, "timeseries.csv", "summary.csv", "summary.json", "latency.csv", "attempts.csv", "layers.csv",
    "services.csv", "caches.csv", "scenario.ini", "replications.csv", "experiment.csv", "jobs.csv", "sweep.csv",
    "status.csv", "tune.csv", "labels.csv", "hysteresis.csv", "thresholds.csv",
    "map.csv", "margin.csv", "boundary.csv", "envelope.csv", "phases.csv",
    "figures.csv", /* the record of the figures plot drew (figrec.h) */
};
/* The figures of plot (see plot.h), besides one per service, one per
 * service of a comparison or a sweep and one per cache (below). */
static const char *const our_figures[] = {
    "load", "queue", "latency", "cdf", "attempts", "compare", "occ",
    "sweep_ok_share", "sweep_amplification", "sweep_lat_p99",
    "compare_cdf", "compare_attempts", "compare_summary", "hysteresis", "map",
};
/* The animated figures (plot --animate), as .gif. */
static const char *const our_animations[] = {"load.gif", "compare.gif"};

/* A service's figure: "service_" and the service's name; a service's in
 * a comparison or a sweep: "compare_service_" or "sweep_service_" and its
 * name; a cache's: "cache_" and the cache's name. A name is 1 to OUR_NAME_MAX characters of
 * [A-Za-z0-9_-] (no dot, no slash, no space). */
#define OUR_SERVICE_PREFIX "service_"
#define OUR_COMPARE_SERVICE_PREFIX "compare_service_"
#define OUR_SWEEP_SERVICE_PREFIX "sweep_service_"
#define OUR_CACHE_PREFIX "cache_"
#define OUR_NAME_MAX 47

/* Whether base (len bytes, without the extension) is prefix and a name. */
static bool is_named_figure(const char *base, size_t len, const char *prefix)
{
    size_t pre = strlen(prefix);
    if (len <= pre || len - pre > OUR_NAME_MAX || strncmp(base, prefix, pre) != 0)
        return false;
    for (size_t i = pre; i < len; i++)
        if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-", base[i]) ||
            base[i] == '\0')
            return false;
    return true;
}

/* One of our_figures, or a service's or a cache's figure, as .png or
 * .svg; or one of our_animations. */
static bool is_figure(const char *name)
{
    for (size_t i = 0; i < sizeof our_animations / sizeof *our_animations; i++)
        if (strcmp(name, our_animations[i]) == 0)
            return true;
    const char *dot = strrchr(name, '.');
    if (dot == NULL || (strcmp(dot, ".png") != 0 && strcmp(dot, ".svg") != 0))
        return false;
    for (size_t i = 0; i < sizeof our_figures / sizeof *our_figures; i++)
        if (strlen(our_figures[i]) == (size_t)(dot - name) &&
            strncmp(name, our_figures[i], (size_t)(dot - name)) == 0)
            return true;
    return is_named_figure(name, (size_t)(dot - name), OUR_SERVICE_PREFIX) ||
           is_named_figure(name, (size_t)(dot - name), OUR_COMPARE_SERVICE_PREFIX) ||
           is_named_figure(name, (size_t)(dot - name), OUR_SWEEP_SERVICE_PREFIX) ||
           is_named_figure(name, (size_t)(dot - name), OUR_CACHE_PREFIX);
}

bool outdir_figure_name(const char *name) { return is_figure(name); }

static bool is_final_name(const char *name)
{
    for (size_t i = 0; i < sizeof our_files / sizeof *our_files; i++)
        if (strcmp(name, our_files[i]) == 0)
            return true;
    return is_figure(name);
}

/* ".NAME.XXXXXXXXXXXX.tmp" with NAME one of ours and 12 hex digits. */
static bool is_temporary(const char *name)
{
    size_t n = strlen(name);
    if (n < 19 || name[0] != '.' || strcmp(name + n - 4, ".tmp") != 0 || name[n - 17] != '.')
        return false;
    for (size_t i = n - 16; i < n - 4; i++)
        if (!strchr("0123456789abcdef", name[i]) || name[i] == '\0')
            return false;
    char base[NAME_MAX + 1];
    snprintf(base, sizeof base, "%.*s", (int)(n - 18), name + 1);
    return is_final_name(base);
}

bool outdir_our_name(const char *name) { return is_final_name(name) || is_temporary(name); }

int outdir_join(char *out, size_t size, const char *dir, const char *name)
{
    int n = snprintf(out, size, "%s/%s", dir, name);
    if (n < 0 || (size_t)n >= size) {
        out[0] = '\0';
        return -1;
    }
    return 0;
}

int outdir_open_dirfd(const char *path)
{
    return open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
}

static bool too_long(const char *path, char *err, size_t errsz)
{
    if (strlen(path) + 32 < PATH_MAX) /* room for our work and temporary names */
        return false;
    snprintf(err, errsz, "-o %.60s...: the path is %zu bytes long; the limit is %d", path,
             strlen(path), PATH_MAX - 32);
    return true;
}

/* Whether the directory open at dfd is ours (marker and only our entries,
 * subdirectories ours in turn, `depth` levels down); sets *empty. */
static bool dir_is_ours(int dfd, int depth, bool *empty)
{
    DIR *d = fdopendir(dup(dfd));
    if (d == NULL)
        return false;
    rewinddir(d); /* a dup shares the offset of an earlier reading */
    bool ours = true, marker = false;
    *empty = true;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        *empty = false;
        marker = marker || strcmp(e->d_name, MARKER) == 0;
        struct stat st;
        if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) {
            ours = false;
        } else if (S_ISREG(st.st_mode)) {
            ours = ours && outdir_our_name(e->d_name);
        } else if (S_ISDIR(st.st_mode) && depth > 0) {
            int sub = openat(dirfd(d), e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
            bool sub_empty;
            ours = ours && sub >= 0 && dir_is_ours(sub, depth - 1, &sub_empty) && !sub_empty;
            if (sub >= 0)
                close(sub);
        } else {
            ours = false;
        }
    }
    closedir(d);
    return ours && marker;
}

int outdir_classify(const char *path, enum outdir_kind *kind, char *err, size_t errsz)
{
    struct stat st;
    if (too_long(path, err, errsz))
        return -1;
    if (lstat(path, &st) != 0) {
        if (errno == ENOENT) {
            *kind = OUTDIR_ABSENT;
            return 0;
        }
        snprintf(err, errsz, "%s: %s", path, strerror(errno));
        return -1;
    }
    if (S_ISLNK(st.st_mode)) {
        snprintf(err, errsz, "%s is a symbolic link: give the directory it points to as -o", path);
        return -1;
    }
    if (!S_ISDIR(st.st_mode)) {
        snprintf(err, errsz, "%s exists and is not a directory: choose another -o (nothing was touched)", path);
        return -1;
    }
    int dfd = outdir_open_dirfd(path);
    if (dfd < 0) {
        snprintf(err, errsz, "cannot read directory %s: %s", path, strerror(errno));
        return -1;
    }
    bool empty;
    bool ours = dir_is_ours(dfd, 1, &empty);
    close(dfd);
    *kind = empty ? OUTDIR_EMPTY : ours ? OUTDIR_OURS : OUTDIR_FOREIGN;
    return 0;
}

int outdir_check(const char *path, bool force, char *err, size_t errsz)
{
    enum outdir_kind k;
    if (outdir_classify(path, &k, err, errsz) != 0)
        return 2;
    if (k == OUTDIR_FOREIGN && !force) {
        snprintf(err, errsz, "%s holds files that are not a retrystorm output; choose another -o, "
                             "or add --force to write our files into it (other files are left as they are)",
                 path);
        return 2;
    }
    return 0;
}

/* Creates the marker in the directory open at dfd. */
static int mark(int dfd, const char *path, char *err, size_t errsz)
{
    int fd = openat(dfd, MARKER, O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0666);
    if (fd < 0) {
        snprintf(err, errsz, "cannot write in %s: %s", path, strerror(errno));
        return -1;
    }
    close(fd);
    return 0;
}

static void unlink_marker(const char *dir)
{
    int dfd = outdir_open_dirfd(dir);
    if (dfd >= 0) {
        unlinkat(dfd, MARKER, 0);
        close(dfd);
    }
}

/* mkdir -p of path's parents. */
static int make_parents(const char *path, char *err, size_t errsz)
{
    char buf[PATH_MAX];
    snprintf(buf, sizeof buf, "%s", path);
    for (char *p = buf + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        if (mkdir(buf, 0777) != 0 && errno != EEXIST) {
            snprintf(err, errsz, "cannot create directory %s: %s", buf, strerror(errno));
            return -1;
        }
        *p = '/';
    }
    return 0;
}

int outdir_mkdir(const char *path, char *err, size_t errsz)
{
    if (too_long(path, err, errsz) || make_parents(path, err, errsz) != 0)
        return -1;
    bool created = mkdir(path, 0777) == 0;
    if (!created && errno != EEXIST) {
        snprintf(err, errsz, "cannot create directory %s: %s", path, strerror(errno));
        return -1;
    }
    int dfd = outdir_open_dirfd(path);
    if (dfd < 0) {
        snprintf(err, errsz, "%s exists and is not a directory", path);
        return -1;
    }
    int rc = created ? mark(dfd, path, err, errsz) : 0;
    close(dfd);
    return rc;
}

int outdir_mkwork(const char *path, char *work, size_t worksz, char *err, size_t errsz)
{
    if (too_long(path, err, errsz) || make_parents(path, err, errsz) != 0)
        return -1;
    snprintf(work, worksz, "%s.work-XXXXXX", path);
    if (mkdtemp(work) == NULL) {
        snprintf(err, errsz, "cannot create a work directory beside %s: %s", path, strerror(errno));
        return -1;
    }
    int dfd = outdir_open_dirfd(work);
    mode_t mask = umask(0); /* mkdtemp makes 0700; an output is shared like any mkdir */
    umask(mask);
    if (dfd >= 0)
        fchmod(dfd, 0777 & ~mask);
    int rc = dfd >= 0 ? mark(dfd, work, err, errsz) : -1;
    if (dfd >= 0)
        close(dfd);
    return rc;
}

int outdir_tmpfile(int dfd, const char *name, char *tmp, size_t tmpsz)
{
    for (int tries = 0; tries < 100; tries++) {
        unsigned char r[6];
        if (getrandom(r, sizeof r, 0) != (ssize_t)sizeof r)
            return -1;
        snprintf(tmp, tmpsz, ".%s.%02x%02x%02x%02x%02x%02x.tmp", name, r[0], r[1], r[2], r[3], r[4],
                 r[5]);
        int fd = openat(dfd, tmp, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
        if (fd >= 0 || errno != EEXIST)
            return fd;
    }
    return -1;
}

/* Removes our entries of the directory open at dfd; returns how many
 * entries were kept (not ours), or -1. The marker goes last, and only when
 * nothing foreign is left. */
static int remove_ours_at(int dfd, int depth)
{
    DIR *d = fdopendir(dup(dfd));
    if (d == NULL)
        return -1;
    rewinddir(d);
    int kept = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        const char *n = e->d_name;
        struct stat st;
        if (!strcmp(n, ".") || !strcmp(n, "..") || !strcmp(n, MARKER))
            continue;
        if (fstatat(dfd, n, &st, AT_SYMLINK_NOFOLLOW) != 0) {
            kept++;
        } else if (S_ISREG(st.st_mode) && outdir_our_name(n)) {
            kept += unlinkat(dfd, n, 0) != 0;
        } else if (S_ISDIR(st.st_mode) && depth > 0) {
            int sub = openat(dfd, n, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
            bool empty, ours = sub >= 0 && dir_is_ours(sub, depth - 1, &empty);
            int left = ours ? remove_ours_at(sub, depth - 1) : 1;
            if (sub >= 0)
                close(sub);
            kept += left != 0 || unlinkat(dfd, n, AT_REMOVEDIR) != 0;
        } else {
            kept++;
        }
    }
    closedir(d);
    if (kept == 0)
        unlinkat(dfd, MARKER, 0);
    return kept;
}

int outdir_remove_ours(const char *path)
{
    int dfd = outdir_open_dirfd(path);
    if (dfd < 0)
        return -1;
    int kept = remove_ours_at(dfd, 1);
    close(dfd);
    if (kept == 0)
        rmdir(path);
    return kept;
}

int outdir_prepare(const char *path, bool force, bool keep, char *err, size_t errsz)
{
    enum outdir_kind k;
    int rc = outdir_check(path, force, err, errsz);
    if (rc != 0 || outdir_classify(path, &k, err, errsz) != 0)
        return rc ? rc : 2;
    if (k == OUTDIR_ABSENT)
        return outdir_mkdir(path, err, errsz) == 0 ? 0 : 1;
    /* from here on, the directory is the one open at dfd, classified again
     * through it: one swapped in meanwhile is never emptied or marked */
    int dfd = outdir_open_dirfd(path);
    if (dfd < 0) {
        snprintf(err, errsz, "cannot open %s: %s", path, strerror(errno));
        return 1;
    }
    bool empty, ours = dir_is_ours(dfd, 1, &empty);
    if (!empty && !ours) {
        close(dfd);
        if (force)
            return 0; /* our files are written among the others, unmarked */
        snprintf(err, errsz, "%s changed meanwhile and holds files that are not a retrystorm output", path);
        return 2;
    }
    if (ours && !keep)
        remove_ours_at(dfd, 1);
    rc = mark(dfd, path, err, errsz);
    close(dfd);
    return rc == 0 ? 0 : 1;
}

/* Replaces the directory `dname` in dparent, an output of ours (checked
 * through its own fd, `depth` levels down), by `wname` in wparent with one
 * atomic exchange; then removes the earlier output, now at wname, only if it
 * is the very directory that was checked, and only its entries that are
 * ours. Returns 0, or -1 with errno. */
static int swap_out_ours(int wparent, const char *wname, int dparent, const char *dname, int depth)
{
    int fd = openat(dparent, dname, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    struct stat before, after;
    bool empty, ours = fd >= 0 && fstat(fd, &before) == 0 && dir_is_ours(fd, depth, &empty);
    if (fd >= 0)
        close(fd);
    if (!ours) {
        errno = EEXIST;
        return -1;
    }
    if (renameat2(wparent, wname, dparent, dname, RENAME_EXCHANGE) != 0)
        return -1;
    fd = openat(wparent, wname, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd >= 0 && fstat(fd, &after) == 0 && after.st_dev == before.st_dev &&
        after.st_ino == before.st_ino && remove_ours_at(fd, depth) == 0)
        unlinkat(wparent, wname, AT_REMOVEDIR);
    if (fd >= 0)
        close(fd);
    return 0;
}

/* Whether entry `name` of wfd may go into dfd: the name is free there; or
 * a file replaces a file or link (only with replace: --force); or a
 * directory replaces an output of ours. */
static bool may_move(int wfd, int dfd, const char *name, bool replace)
{
    struct stat st, there;
    if (fstatat(wfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0)
        return false;
    if (fstatat(dfd, name, &there, AT_SYMLINK_NOFOLLOW) != 0)
        return errno == ENOENT;
    if (S_ISREG(st.st_mode))
        return replace && (S_ISREG(there.st_mode) || S_ISLNK(there.st_mode));
    int sub = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    bool empty, ours = sub >= 0 && dir_is_ours(sub, 0, &empty);
    if (sub >= 0)
        close(sub);
    return S_ISDIR(st.st_mode) && ours;
}

/* Moves entry `name` of wfd into dfd (may_move said it may). */
static int move_entry(int wfd, int dfd, const char *name, bool replace)
{
    struct stat st;
    if (fstatat(wfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0)
        return -1;
    if (renameat2(wfd, name, dfd, name, RENAME_NOREPLACE) == 0)
        return 0;
    if (errno != EEXIST)
        return -1;
    if (S_ISDIR(st.st_mode))
        return swap_out_ours(wfd, name, dfd, name, 0);
    return replace ? renameat(wfd, name, dfd, name) : -1;
}

/* The names in the directory open at fd but its marker, into a NULL-ended
 * array (the caller frees it and each name); NULL when out of memory. */
static char **list_names(int fd)
{
    DIR *d = fdopendir(dup(fd));
    size_t n = 0, cap = 16;
    char **names = malloc(cap * sizeof *names);
    if (d == NULL || names == NULL) {
        if (d)
            closedir(d);
        free(names);
        return NULL;
    }
    rewinddir(d);
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..") || !strcmp(e->d_name, MARKER))
            continue;
        char **more = n + 2 > cap ? realloc(names, (cap *= 2) * sizeof *names) : names;
        if (more == NULL)
            break;
        names = more;
        names[n++] = strdup(e->d_name);
    }
    names[n] = NULL;
    closedir(d);
    return names;
}

/* Moves every entry of work into path (empty, or foreign with --force):
 * first checks that every one may go, so that nothing is moved when one
 * may not; the marker goes too only when path was empty. */
static int move_in(const char *work, const char *path, bool was_empty, char *err, size_t errsz)
{
    int wfd = outdir_open_dirfd(work), dfd = outdir_open_dirfd(path), rc = 0;
    char **names = wfd >= 0 && dfd >= 0 ? list_names(wfd) : NULL;
    if (names == NULL) {
        snprintf(err, errsz, "cannot read %s or %s: %s", work, path, strerror(errno));
        rc = -1;
    }
    for (size_t i = 0; rc == 0 && names[i]; i++)
        if (!may_move(wfd, dfd, names[i], !was_empty)) {
            snprintf(err, errsz, "cannot put %s into %s: an entry that is not ours is in the way", names[i], path);
            rc = -1;
        }
    for (size_t i = 0; rc == 0 && names[i]; i++)
        if (move_entry(wfd, dfd, names[i], !was_empty) != 0) {
            snprintf(err, errsz, "cannot move %s into %s: %s (the rest is left in the work directory)",
                     names[i], path, strerror(errno));
            rc = -1;
        }
    if (rc == 0 && was_empty && renameat2(wfd, MARKER, dfd, MARKER, RENAME_NOREPLACE) != 0 && errno != EEXIST)
        rc = -1, snprintf(err, errsz, "cannot mark %s: %s", path, strerror(errno));
    for (size_t i = 0; names && names[i]; i++)
        free(names[i]);
    free(names);
    if (wfd >= 0)
        close(wfd);
    if (dfd >= 0)
        close(dfd);
    if (rc == 0 && (unlink_marker(work), rmdir(work) != 0))
        rc = -1, snprintf(err, errsz, "cannot remove the work directory %s: %s", work, strerror(errno));
    return rc;
}

/* Exchanges work with an earlier output of ours at path, which is then
 * removed (our entries only, and only if it is the directory checked). */
static int exchange(const char *work, const char *path, char *err, size_t errsz)
{
    if (swap_out_ours(AT_FDCWD, work, AT_FDCWD, path, 1) == 0) {
        if (access(work, F_OK) == 0)
            fprintf(stderr, "retrystorm: the earlier output of %s is left in %s: it holds entries that are not ours\n",
                    path, work);
        return 0;
    }
    if (errno != EINVAL && errno != ENOSYS) {
        snprintf(err, errsz, "cannot replace %s: %s", path, strerror(errno));
        return -1;
    }
    /* a file system without exchange: the earlier output onto a fresh empty
     * directory of ours (rename replaces an empty one), the work into its place */
    char old[PATH_MAX + 16];
    snprintf(old, sizeof old, "%s.old-XXXXXX", path);
    if (mkdtemp(old) == NULL || rename(path, old) != 0 ||
        renameat2(AT_FDCWD, work, AT_FDCWD, path, RENAME_NOREPLACE) != 0) {
        snprintf(err, errsz, "cannot replace %s: %s", path, strerror(errno));
        return -1;
    }
    if (outdir_remove_ours(old) != 0)
        fprintf(stderr, "retrystorm: the earlier output of %s is left in %s: it holds entries that are not ours\n",
                path, old);
    return 0;
}

int outdir_install(const char *work, const char *path, bool force, char *err, size_t errsz)
{
    enum outdir_kind k;
    int rc = -1;
    if (outdir_classify(path, &k, err, errsz) != 0)
        k = OUTDIR_FOREIGN, force = false;
    if (k == OUTDIR_ABSENT) {
        rc = renameat2(AT_FDCWD, work, AT_FDCWD, path, RENAME_NOREPLACE);
        if (rc != 0)
            snprintf(err, errsz, "cannot rename %s to %s: %s", work, path, strerror(errno));
    } else if (k == OUTDIR_OURS) {
        rc = exchange(work, path, err, errsz);
    } else if (k == OUTDIR_EMPTY || force) {
        rc = move_in(work, path, k == OUTDIR_EMPTY, err, errsz);
    } else {
        snprintf(err, errsz, "%s changed during the run and may no longer be written", path);
    }
    if (rc == 0)
        return 0;
    size_t n = strlen(err);
    snprintf(err + n, errsz - n, "; the outputs are left in %s", work);
    return 1;
}

/* ---- atomic files (struct output_file) ---- */

int output_file_open(struct output_file *of, const char *dir, const char *name, char *err, size_t errsz)
{
    memset(of, 0, sizeof *of);
    of->dirfd = -1;
    snprintf(of->name, sizeof of->name, "%s", name);
    snprintf(of->shown, sizeof of->shown, "%.4000s/%s", dir, name);
    of->dirfd = outdir_open_dirfd(dir);
    int fd = of->dirfd >= 0 ? outdir_tmpfile(of->dirfd, name, of->tmp, sizeof of->tmp) : -1;
    of->f = fd >= 0 ? fdopen(fd, "w") : NULL;
    if (of->f == NULL) {
        snprintf(err, errsz, "cannot write %s: %s", of->shown, strerror(errno));
        if (fd >= 0)
            close(fd);
        else
            of->tmp[0] = '\0'; /* no file of ours by that name */
        output_file_discard(of);
        return -1;
    }
    return 0;
}

/* Flushes, syncs and closes; the file stays under its temporary name. */
int output_file_close(struct output_file *of, char *err, size_t errsz)
{
    int bad = ferror(of->f) | fflush(of->f) | fsync(fileno(of->f));
    if (fclose(of->f) != 0)
        bad = 1;
    of->f = NULL;
    if (bad) {
        snprintf(err, errsz, "error writing %s: %s", of->shown, strerror(errno));
        return -1;
    }
    return 0;
}

/* Renames the closed temporary into place and closes the directory. */
int output_file_rename(struct output_file *of, char *err, size_t errsz)
{
    if (renameat(of->dirfd, of->tmp, of->dirfd, of->name) != 0) {
        snprintf(err, errsz, "cannot rename %s into place: %s", of->shown, strerror(errno));
        return -1;
    }
    of->tmp[0] = '\0';
    fsync(of->dirfd); /* the rename itself survives a power cut */
    close(of->dirfd);
    of->dirfd = -1;
    return 0;
}

int output_file_commit(struct output_file *of, char *err, size_t errsz)
{
    if (output_file_close(of, err, errsz) != 0 || output_file_rename(of, err, errsz) != 0) {
        output_file_discard(of);
        return -1;
    }
    return 0;
}

void output_file_discard(struct output_file *of)
{
    if (of->f != NULL)
        fclose(of->f);
    of->f = NULL;
    if (of->tmp[0] && of->dirfd >= 0)
        unlinkat(of->dirfd, of->tmp, 0);
    of->tmp[0] = '\0';
    if (of->dirfd >= 0)
        close(of->dirfd);
    of->dirfd = -1;
}
