/*
 * figrec — the record of the figures `plot` drew (figures.csv), and what a
 * rerun keeps of them. See figrec.h.
 */
#define _GNU_SOURCE /* fdopendir, linkat, O_NOFOLLOW */

#include "figrec.h"

#include "outdir.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* What plot.c draws from: the data of a figure. */
static const char *const data_files[] = {
    "timeseries.csv", "summary.csv",     "latency.csv",    "attempts.csv", "services.csv", "caches.csv",
    "scenario.ini",   "replications.csv", "experiment.csv", "sweep.csv",    "hysteresis.csv",
    "thresholds.csv", "map.csv",         "margin.csv",     "boundary.csv", "envelope.csv", "labels.csv",
};
#define NDATA (sizeof data_files / sizeof *data_files)
#define LABELS_FILE "labels.csv" /* the variants' names (labels.h) */
#define WALL_COLUMN "wall_s" /* the one column that differs between equal runs */
#define SUBDIRS_MAX 4096     /* most subdirectories digested (a comparison's variants) */

static void *xalloc(void *p, size_t n)
{
    if (p == NULL) {
        fprintf(stderr, "retrystorm: out of memory (%zu bytes for the figures' record)\n", n);
        abort();
    }
    return p;
}

void figrec_drawn_add(void *drawn, const char *name)
{
    struct figrec_drawn *d = drawn;
    if (d->n == d->cap) {
        d->cap = d->cap ? 2 * d->cap : 32;
        d->v = xalloc(realloc(d->v, d->cap * sizeof *d->v), d->cap * sizeof *d->v);
    }
    d->v[d->n++] = xalloc(strdup(name), strlen(name) + 1);
}

void figrec_drawn_fini(struct figrec_drawn *d)
{
    for (size_t i = 0; i < d->n; i++)
        free(d->v[i]);
    free(d->v);
    *d = (struct figrec_drawn){0};
}

/* ---- the digest of the data (64-bit FNV-1a) ---- */

#define FNV_OFFSET 0xcbf29ce484222325ULL
#define FNV_PRIME 0x100000001b3ULL

static void fnv_byte(uint64_t *h, unsigned char b) { *h = (*h ^ b) * FNV_PRIME; }

static void fnv_str(uint64_t *h, const char *s)
{
    for (; *s; s++)
        fnv_byte(h, (unsigned char)*s);
    fnv_byte(h, 0);
}

/* The bytes of f into h, but the cells of column WALL_COLUMN (named in
 * the first line) of a .csv file. O(bytes), O(1) memory. */
static void digest_file(uint64_t *h, FILE *f, bool csv)
{
    long skip = -1, field = 0;
    char name[sizeof WALL_COLUMN];
    size_t nl = 0;
    bool header = csv;
    int ch;
    while ((ch = getc(f)) != EOF) {
        if (header && (ch == ',' || ch == '\n' || ch == '\r')) {
            if (nl == strlen(WALL_COLUMN) && memcmp(name, WALL_COLUMN, nl) == 0)
                skip = field;
            field += ch == ',', nl = 0;
        } else if (header) {
            if (nl < sizeof name)
                name[nl] = (char)ch;
            nl++;
        }
        if (ch == '\n')
            header = false, field = 0;
        else if (!header && ch == ',')
            field++;
        if (header || ch == '\n' || ch == ',' || field != skip)
            fnv_byte(h, (unsigned char)ch);
    }
}

/* The data files of the directory open at dfd into h, by name. */
static void digest_files(uint64_t *h, int dfd)
{
    for (size_t i = 0; i < NDATA; i++) {
        int fd = openat(dfd, data_files[i], O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
        struct stat st;
        FILE *f = fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) ? fdopen(fd, "r") : NULL;
        if (f == NULL) {
            if (fd >= 0)
                close(fd);
            continue;
        }
        fnv_str(h, data_files[i]);
        digest_file(h, f, strcmp(strrchr(data_files[i], '.'), ".csv") == 0);
        fclose(f);
    }
}

static int by_name(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* The digest of what the figures of the directory open at dfd are drawn
 * from: its data files, then each subdirectory's, in name order. */
static uint64_t digest_dir(int dfd)
{
    uint64_t h = FNV_OFFSET;
    digest_files(&h, dfd);
    DIR *d = fdopendir(dup(dfd));
    char **subs = xalloc(malloc(SUBDIRS_MAX * sizeof *subs), SUBDIRS_MAX * sizeof *subs);
    size_t n = 0;
    struct dirent *e;
    if (d != NULL)
        rewinddir(d);
    while (d != NULL && n < SUBDIRS_MAX && (e = readdir(d)) != NULL) {
        struct stat st;
        if (e->d_name[0] != '.' && fstatat(dfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode))
            subs[n++] = xalloc(strdup(e->d_name), strlen(e->d_name) + 1);
    }
    if (d != NULL)
        closedir(d);
    qsort(subs, n, sizeof *subs, by_name);
    for (size_t i = 0; i < n; i++) {
        int sub = openat(dfd, subs[i], O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        fnv_byte(&h, '/');
        fnv_str(&h, subs[i]);
        if (sub >= 0)
            digest_files(&h, sub), close(sub);
        free(subs[i]);
    }
    free(subs);
    return h;
}

/* ---- the record ---- */

struct row {
    char figure[256];
    uint64_t data;
    struct plot_style st;
};
struct record {
    struct row *v;
    size_t n, cap;
};

static struct row *record_add(struct record *r)
{
    if (r->n == r->cap) {
        r->cap = r->cap ? 2 * r->cap : 32;
        r->v = xalloc(realloc(r->v, r->cap * sizeof *r->v), r->cap * sizeof *r->v);
    }
    memset(&r->v[r->n], 0, sizeof *r->v);
    return &r->v[r->n++];
}

static int by_figure(const void *a, const void *b)
{
    return strcmp(((const struct row *)a)->figure, ((const struct row *)b)->figure);
}

/* The title as written in a row: '\' and newline escaped. */
static void put_title(FILE *f, const char *t)
{
    for (; *t; t++)
        fputs(*t == '\\' ? "\\\\" : *t == '\n' ? "\\n" : (char[2]){*t, 0}, f);
}

/* put_title undone in place; false on an escape that is neither. */
static bool unescape_title(char *t)
{
    char *o = t;
    for (; *t; t++) {
        if (*t == '\\') {
            t++;
            if (*t != '\\' && *t != 'n')
                return false;
            *o++ = *t == 'n' ? '\n' : '\\';
        } else {
            *o++ = *t;
        }
    }
    *o = '\0';
    return true;
}

/* One look option of a row: "0" (or "0x0") is the default, anything else
 * goes through plot_style_option. */
static bool row_option(struct plot_style *st, const char *option, const char *v)
{
    char err[256];
    if (strcmp(v, "0") == 0 || strcmp(v, "0x0") == 0)
        return true;
    return plot_style_option(st, option, v, err, sizeof err) == 1;
}

/* Parses a row (its end cut off) into row; false when a cell is bad. */
static bool parse_row(char *line, struct row *row)
{
    char *cell[7], *end;
    for (char *p = line; *p; p++)
        if ((unsigned char)*p < 0x20 || *p == 0x7f)
            return false;
    cell[0] = line;
    for (int i = 1; i < 7; i++) { /* the title, last, may hold commas */
        char *comma = strchr(cell[i - 1], ',');
        if (comma == NULL)
            return false;
        *comma = '\0', cell[i] = comma + 1;
    }
    if (strlen(cell[0]) >= sizeof row->figure || !outdir_figure_name(cell[0]) || strlen(cell[1]) != 16 ||
        strspn(cell[1], "0123456789abcdef") != 16 || (strcmp(cell[5], "0") != 0 && strcmp(cell[5], "1") != 0))
        return false;
    snprintf(row->figure, sizeof row->figure, "%s", cell[0]);
    row->data = strtoull(cell[1], &end, 16);
    row->st.animate = cell[5][0] == '1';
    return unescape_title(cell[6]) && row_option(&row->st, "--style", cell[2]) &&
           row_option(&row->st, "--size", cell[3]) && row_option(&row->st, "--font-scale", cell[4]) &&
           (cell[6][0] == '\0' || row_option(&row->st, "--title", cell[6]));
}

#define HEADER "figure,data,style,size,font_scale,animate,title"

/* Reads the record of the directory open at dfd into r: 0 (none: r
 * empty), or -1 with the reason in why (r emptied). */
static int record_read(int dfd, struct record *r, char *why, size_t whysz)
{
    int fd = openat(dfd, FIGREC_FILE, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    struct stat st;
    FILE *f = fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) ? fdopen(fd, "r") : NULL;
    if (f == NULL) {
        if (fd >= 0)
            close(fd);
        if (fd < 0 && errno == ENOENT)
            return 0;
        snprintf(why, whysz, "not a regular file we can read");
        return -1;
    }
    char line[FIGREC_LINE + 2];
    size_t lineno = 0;
    int rc = 0;
    while (rc == 0 && fgets(line, sizeof line, f) != NULL) {
        size_t len = strlen(line);
        lineno++;
        if (len == 0 || line[len - 1] != '\n') {
            rc = -1, snprintf(why, whysz, "line %zu is longer than %d bytes or unfinished", lineno, FIGREC_LINE);
            break;
        }
        line[len - 1] = '\0';
        if (lineno == 1 && strcmp(line, HEADER) != 0)
            rc = -1, snprintf(why, whysz, "line 1 is not the header " HEADER);
        else if (lineno > 1 && r->n == FIGREC_ROWS)
            rc = -1, snprintf(why, whysz, "more than %d rows", FIGREC_ROWS);
        else if (lineno > 1 && !parse_row(line, record_add(r)))
            rc = -1, snprintf(why, whysz, "line %zu is not a figure, a digest and a look", lineno);
    }
    if (rc == 0 && ferror(f))
        rc = -1, snprintf(why, whysz, "%s", strerror(errno));
    fclose(f);
    if (rc != 0)
        r->n = 0;
    return rc;
}

/* Writes r (sorted by figure) as DIR/figures.csv. 0 or -1 with a message. */
static int record_write(const char *dir, struct record *r, char *err, size_t errsz)
{
    struct output_file of;
    if (output_file_open(&of, dir, FIGREC_FILE, err, errsz) != 0)
        return -1;
    qsort(r->v, r->n, sizeof *r->v, by_figure);
    fprintf(of.f, HEADER "\n");
    for (size_t i = 0; i < r->n; i++) {
        const struct plot_style *st = &r->v[i].st;
        fprintf(of.f, "%s,%016" PRIx64 ",%s,%ux%u,%g,%d,", r->v[i].figure, r->v[i].data,
                st->slide ? "slide" : "default", st->width, st->height, st->font_scale, st->animate ? 1 : 0);
        put_title(of.f, st->title);
        fputc('\n', of.f);
    }
    return output_file_commit(&of, err, errsz);
}

/* ---- the look as shell words ---- */

/* s as one shell word: as it is when it holds only safe characters, else
 * single-quoted (a quote as '\''). */
static void sh_word(FILE *f, const char *s)
{
    if (s[0] != '\0' && strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_./=+:-") ==
                            strlen(s)) {
        fputs(s, f);
        return;
    }
    fputc('\'', f);
    for (; *s; s++)
        fputs(*s == '\'' ? "'\\''" : (char[2]){*s, 0}, f);
    fputc('\'', f);
}

void figrec_args(const struct plot_style *st, char *out, size_t size)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = xalloc(open_memstream(&text, &len), 1);
    if (st->slide)
        fprintf(f, " --style slide");
    if (st->width)
        fprintf(f, " --size %ux%u", st->width, st->height);
    if (st->font_scale > 0)
        fprintf(f, " --font-scale %g", st->font_scale);
    if (st->animate)
        fprintf(f, " --animate");
    if (st->title[0])
        fprintf(f, " --title "), sh_word(f, st->title);
    fclose(f);
    snprintf(out, size, "%s", len ? text + 1 : "");
    free(text);
}

int figrec_record(const char *dir, const struct plot_style *st, const struct figrec_drawn *d, char *err,
                  size_t errsz)
{
    int dfd = outdir_open_dirfd(dir);
    if (dfd < 0) {
        snprintf(err, errsz, "cannot open %s: %s", dir, strerror(errno));
        return -1;
    }
    struct record old = {0}, r = {0};
    char why[256];
    record_read(dfd, &old, why, sizeof why); /* a bad record is replaced */
    uint64_t h = digest_dir(dfd);
    close(dfd);
    for (size_t i = 0; i < old.n; i++) {
        bool redrawn = false;
        for (size_t j = 0; j < d->n && !redrawn; j++)
            redrawn = strcmp(old.v[i].figure, d->v[j]) == 0;
        if (!redrawn)
            *record_add(&r) = old.v[i];
    }
    for (size_t j = 0; j < d->n; j++) {
        if (!outdir_figure_name(d->v[j]) || strlen(d->v[j]) >= sizeof r.v->figure)
            continue;
        struct row *row = record_add(&r);
        snprintf(row->figure, sizeof row->figure, "%s", d->v[j]);
        row->data = h, row->st = *st;
    }
    int rc = record_write(dir, &r, err, errsz);
    free(old.v), free(r.v);
    return rc;
}

/* ---- a rerun: what is kept ---- */

/* The end of a sentence of a note: not a newline, which a title may hold
 * (and which the redraw command then keeps, inside its quotes). */
#define SENTENCE_END "\x1e"

/* What becomes of a recorded figure when its directory is replaced. */
enum fate { KEPT, STALE, REPLACED, GONE, REMOVED };

/* Copies DIR/name (open at dfd) to work/name: for a file system without
 * hard links. 0 or -1. */
static int copy_figure(int dfd, const char *name, const char *work)
{
    char err[256], buf[65536];
    int fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    struct output_file of;
    if (fd < 0 || output_file_open(&of, work, name, err, sizeof err) != 0) {
        if (fd >= 0)
            close(fd);
        return -1;
    }
    ssize_t n;
    while ((n = read(fd, buf, sizeof buf)) > 0)
        fwrite(buf, 1, (size_t)n, of.f);
    close(fd);
    if (n < 0) {
        output_file_discard(&of);
        return -1;
    }
    return output_file_commit(&of, err, sizeof err);
}

/* The variants' names (labels.csv, from compare's or plot's --label) are
 * the user's naming, not the run's data: a rerun that gives none keeps the
 * old ones, so the figures drawn with them can be kept and their redraw
 * (whose command names no --label) draws the same legends. */
static void carry_labels(int dfd, int wfd, const char *work)
{
    struct stat st, there;
    if (fstatat(dfd, LABELS_FILE, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode) &&
        fstatat(wfd, LABELS_FILE, &there, AT_SYMLINK_NOFOLLOW) != 0 && errno == ENOENT)
        copy_figure(dfd, LABELS_FILE, work); /* a failed copy: the figures are not kept, and it is said */
}

/* Decides row's fate and, when KEPT, puts the figure into work (a second
 * link to the same file, or a copy). */
static enum fate carry_one(int dfd, int wfd, const char *work, const struct row *row, uint64_t h)
{
    struct stat st, there;
    if (fstatat(dfd, row->figure, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode))
        return GONE;
    if (row->data != h)
        return STALE;
    if (fstatat(wfd, row->figure, &there, AT_SYMLINK_NOFOLLOW) == 0 || errno != ENOENT)
        return REPLACED;
    if (linkat(dfd, row->figure, wfd, row->figure, 0) == 0 || copy_figure(dfd, row->figure, work) == 0)
        return KEPT;
    return STALE;
}

/* One sentence of the note: the figures of rows whose fate is f and whose
 * look is the one of row `first` (and every later one of that look is
 * marked done). */
static void say_group(FILE *f, const struct record *r, const enum fate *fate, bool *done, size_t first,
                      const char *shown)
{
    static const char *const what[] = {[KEPT] = "kept", [STALE] = "removed", [REPLACED] = "replaced",
                                       [REMOVED] = "removed"};
    static const char *const why[] = {[KEPT] = " from the same data",
                                      [STALE] = " from the old data",
                                      [REPLACED] = " with those --plot drew",
                                      [REMOVED] = " with the earlier output"};
    char args[FIGREC_LINE], other[FIGREC_LINE];
    figrec_args(&r->v[first].st, args, sizeof args);
    size_t n = 0;
    for (size_t i = first; i < r->n; i++)
        if (!done[i] && fate[i] == fate[first] && (figrec_args(&r->v[i].st, other, sizeof other), !strcmp(args, other)))
            n++;
    fprintf(f, "%s %zu figure%s drawn by `plot%s%s`%s (", what[fate[first]], n, n == 1 ? "" : "s", *args ? " " : "",
            args, why[fate[first]]);
    for (size_t i = first, k = 0; i < r->n; i++)
        if (!done[i] && fate[i] == fate[first] && (figrec_args(&r->v[i].st, other, sizeof other), !strcmp(args, other)))
            fprintf(f, "%s%s", k++ ? ", " : "", r->v[i].figure), done[i] = true;
    fprintf(f, ")");
    if (fate[first] != KEPT) {
        fprintf(f, "; redraw with: retrystorm plot ");
        sh_word(f, shown);
        fprintf(f, "%s%s", *args ? " " : "", args);
    }
    fputs(SENTENCE_END, f);
}

/* The note: a sentence per fate and look, kept first. NULL when there is
 * nothing to say. */
static char *say(const struct record *r, const enum fate *fate, const char *shown)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = xalloc(open_memstream(&text, &len), 1);
    bool *done = xalloc(calloc(r->n + 1, sizeof *done), (r->n + 1) * sizeof *done);
    static const enum fate order[] = {KEPT, STALE, REMOVED, REPLACED};
    for (size_t o = 0; o < sizeof order / sizeof *order; o++)
        for (size_t i = 0; i < r->n; i++)
            if (!done[i] && fate[i] == order[o])
                say_group(f, r, fate, done, i, shown);
    fclose(f);
    free(done);
    if (len == 0)
        free(text), text = NULL;
    return text;
}

/* Keeps the record's rows whose figures were kept, and writes it into
 * work when any were. 0 or -1 with a message. */
static int record_kept(const char *work, struct record *r, const enum fate *fate, char *err, size_t errsz)
{
    size_t n = 0;
    for (size_t i = 0; i < r->n; i++)
        if (fate[i] == KEPT)
            r->v[n++] = r->v[i];
    r->n = n;
    return n ? record_write(work, r, err, errsz) : 0;
}

int figrec_carry(const char *dir, const char *work, const char *shown, char **note, char *err, size_t errsz)
{
    enum outdir_kind k;
    *note = NULL;
    if (outdir_classify(dir, &k, err, errsz) != 0 || k != OUTDIR_OURS)
        return 0; /* only an output of ours is replaced, and only it has a record of ours */
    int dfd = outdir_open_dirfd(dir), wfd = outdir_open_dirfd(work);
    struct record r = {0};
    char why[256];
    int rc = dfd < 0 || wfd < 0 ? -1 : 0;
    if (rc != 0)
        snprintf(err, errsz, "cannot open %s or %s: %s", dir, work, strerror(errno));
    if (rc == 0 && record_read(dfd, &r, why, sizeof why) != 0) {
        char *text = NULL;
        size_t len = 0;
        FILE *f = xalloc(open_memstream(&text, &len), 1);
        fprintf(f, "%s/%s is not a record of ours (%s): the figures it lists are not kept" SENTENCE_END, shown,
                FIGREC_FILE, why);
        fclose(f);
        *note = text;
    }
    enum fate *fate = xalloc(calloc(r.n + 1, sizeof *fate), (r.n + 1) * sizeof *fate);
    if (rc == 0 && r.n > 0)
        carry_labels(dfd, wfd, work);
    uint64_t h = rc == 0 && r.n > 0 ? digest_dir(wfd) : 0;
    for (size_t i = 0; i < r.n; i++)
        fate[i] = carry_one(dfd, wfd, work, &r.v[i], h);
    if (rc == 0 && r.n > 0) {
        *note = say(&r, fate, shown);
        rc = record_kept(work, &r, fate, err, errsz);
    }
    free(fate), free(r.v);
    if (dfd >= 0)
        close(dfd);
    if (wfd >= 0)
        close(wfd);
    return rc;
}

/* ---- a command that empties its directory in place ---- */

struct figrec_held {
    struct record r;
    struct stat *st; /* each recorded figure as it was */
};

struct figrec_held *figrec_hold(const char *dir)
{
    enum outdir_kind k;
    char err[256], why[256];
    if (outdir_classify(dir, &k, err, sizeof err) != 0 || k != OUTDIR_OURS)
        return NULL;
    int dfd = outdir_open_dirfd(dir);
    struct figrec_held *h = xalloc(calloc(1, sizeof *h), sizeof *h);
    if (dfd < 0 || record_read(dfd, &h->r, why, sizeof why) != 0 || h->r.n == 0) {
        if (dfd >= 0)
            close(dfd);
        free(h->r.v), free(h);
        return NULL;
    }
    h->st = xalloc(calloc(h->r.n, sizeof *h->st), h->r.n * sizeof *h->st);
    for (size_t i = 0; i < h->r.n; i++)
        if (fstatat(dfd, h->r.v[i].figure, &h->st[i], AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(h->st[i].st_mode))
            h->st[i].st_ino = 0; /* not there: nothing to lose */
    close(dfd);
    return h;
}

char *figrec_release(struct figrec_held *h, const char *dir, const char *shown)
{
    if (h == NULL)
        return NULL;
    int dfd = outdir_open_dirfd(dir);
    enum fate *fate = xalloc(calloc(h->r.n, sizeof *fate), h->r.n * sizeof *fate);
    for (size_t i = 0; i < h->r.n; i++) {
        struct stat now;
        bool there = dfd >= 0 && fstatat(dfd, h->r.v[i].figure, &now, AT_SYMLINK_NOFOLLOW) == 0;
        bool same = there && now.st_dev == h->st[i].st_dev && now.st_ino == h->st[i].st_ino;
        fate[i] = h->st[i].st_ino == 0 || same ? GONE : there ? REPLACED : REMOVED;
    }
    char *note = say(&h->r, fate, shown);
    if (dfd >= 0)
        close(dfd);
    free(fate), free(h->st), free(h->r.v), free(h);
    return note;
}

void figrec_say(FILE *f, char *note)
{
    for (char *line = note, *end; line != NULL && *line; line = end + 1) {
        end = strstr(line, SENTENCE_END);
        fprintf(f, "retrystorm: %.*s\n", (int)(end ? end - line : (long)strlen(line)), line);
        if (end == NULL)
            break;
    }
    free(note);
}
