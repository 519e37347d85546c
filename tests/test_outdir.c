/*
 * Unit tests of outdir (the ownership rule, safe temporaries, install) on
 * real directory trees in a fresh mkdtemp directory.
 */
#define _GNU_SOURCE

#include "rs_test.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "figrec.h"
#include "outdir.h"

static char root[64];

static void path_of(char *out, size_t size, const char *rel)
{
    snprintf(out, size, "%s/%s", root, rel);
}

static void touch(const char *rel, const char *text)
{
    char p[PATH_MAX];
    path_of(p, sizeof p, rel);
    FILE *f = fopen(p, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static void mkd(const char *rel)
{
    char p[PATH_MAX];
    path_of(p, sizeof p, rel);
    assert_int_equal(mkdir(p, 0777), 0);
}

static bool exists(const char *rel)
{
    char p[PATH_MAX];
    struct stat st;
    path_of(p, sizeof p, rel);
    return lstat(p, &st) == 0;
}

static enum outdir_kind kind_of(const char *rel)
{
    char p[PATH_MAX], err[512];
    enum outdir_kind k = OUTDIR_FOREIGN;
    path_of(p, sizeof p, rel);
    assert_int_equal(outdir_classify(p, &k, err, sizeof err), 0);
    return k;
}

static int setup(void **state)
{
    (void)state;
    snprintf(root, sizeof root, "/tmp/rs-outdir-XXXXXX");
    return mkdtemp(root) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    return system(cmd) == 0 ? 0 : -1;
}

static void names(void **state)
{
    (void)state;
    static const char *const ours[] = {".retrystorm", "summary.csv", "jobs.csv", "tune.csv",
                                       "load.png", "sweep_lat_p99.svg", ".summary.csv.0123456789ab.tmp"};
    static const char *const not_ours[] = {"notes.txt", "summary.csv~", "load.pdf", "x.png",
                                           ".summary.csv.0123456789ab", ".notes.txt.0123456789ab.tmp",
                                           ".summary.csv.0123456789AB.tmp", "..", ".tmp", "load.png.tmp"};
    for (size_t i = 0; i < sizeof ours / sizeof *ours; i++)
        assert_true(outdir_our_name(ours[i]));
    for (size_t i = 0; i < sizeof not_ours / sizeof *not_ours; i++)
        assert_false(outdir_our_name(not_ours[i]));
}

/* A service's figure is ours when the service's name could be one:
 * 1 to 47 characters of [A-Za-z0-9_-]. */
static void service_names(void **state)
{
    (void)state;
    static const char *const ours[] = {
        "service_api.png", "service_db.svg", "service_a.png", "service_-.png", "service_A-b_9.svg",
        "service_edge.png", "service_01234567890123456789012345678901234567890123456.png",
        ".service_api.png.0123456789ab.tmp", ".service_x-y_z.svg.abcdef012345.tmp"};
    static const char *const not_ours[] = {
        "service_../x.png", "service_.png", "service_a b.png", "service_api.pdf", "service_api",
        "service_api.csv", "service_a.b.png", "service_a/b.png", "service_a'b.png", "service_a\\b.svg",
        "service_012345678901234567890123456789012345678901234567.png", "services_api.png",
        "Service_api.png", "service_api.png.tmp", ".service_api.png.0123456789ab",
        ".service_../x.png.0123456789ab.tmp", ".service_.png.0123456789ab.tmp",
        ".service_api.png.0123456789AB.tmp", "service_\xc3\xa9.png", "service_a\tb.png",
        "service_api.png.png.", "service_api.png/"};
    for (size_t i = 0; i < sizeof ours / sizeof *ours; i++)
        if (!outdir_our_name(ours[i]))
            fail_msg("%s is not ours", ours[i]);
    for (size_t i = 0; i < sizeof not_ours / sizeof *not_ours; i++)
        if (outdir_our_name(not_ours[i]))
            fail_msg("%s is ours", not_ours[i]);
}

/* A cache's figure likewise: "cache_" and 1 to 47 characters of
 * [A-Za-z0-9_-]; caches.csv itself stays a data file. */
static void cache_names(void **state)
{
    (void)state;
    static const char *const ours[] = {
        "cache_objects.png", "cache_objects.svg", "cache_a.png", "cache_-.svg", "cache_A-b_9.png",
        "cache_01234567890123456789012345678901234567890123456.svg", "caches.csv",
        ".cache_objects.png.0123456789ab.tmp", ".cache_x-y_z.svg.abcdef012345.tmp"};
    static const char *const not_ours[] = {
        "cache_../x.png", "cache_.png", "cache_a b.png", "cache_objects.pdf", "cache_objects",
        "cache_objects.csv", "cache_a.b.png", "cache_a/b.png", "cache_a'b.png", "cache_a\\b.svg",
        "cache_012345678901234567890123456789012345678901234567.png", "caches_objects.png",
        "Cache_objects.png", "cache.png", "caches.png", "cache_objects.png.tmp",
        ".cache_objects.png.0123456789ab", ".cache_../x.png.0123456789ab.tmp",
        ".cache_.png.0123456789ab.tmp", ".cache_objects.png.0123456789AB.tmp", "cache_\xc3\xa9.png",
        "cache_a\tb.png", "cache_objects.png.png.", "cache_objects.png/"};
    for (size_t i = 0; i < sizeof ours / sizeof *ours; i++)
        if (!outdir_our_name(ours[i]))
            fail_msg("%s is not ours", ours[i]);
    for (size_t i = 0; i < sizeof not_ours / sizeof *not_ours; i++)
        if (outdir_our_name(not_ours[i]))
            fail_msg("%s is ours", not_ours[i]);
}

/* A comparison's figure per service, "compare_service_" and a name, and
 * the record of plot's figures (figures.csv) are ours; only figures are
 * figures (what a record may list and a rerun may keep). */
static void compare_service_names(void **state)
{
    (void)state;
    static const char *const figures[] = {"compare_service_api.png", "compare_service_db-1.svg", "load.gif",
                                          "compare.gif", "service_api.png", "compare_summary.svg",
                                          "sweep_service_db.svg"};
    static const char *const not_figures[] = {"figures.csv", "summary.csv", "compare_service_.png",
                                              "compare_service_a/b.png", "compare_service_a.b.png",
                                              "compare_service_api.gif", "queue.gif", ".retrystorm",
                                              "sweep_service_.png", "sweep_service_a b.png"};
    for (size_t i = 0; i < sizeof figures / sizeof *figures; i++)
        if (!outdir_figure_name(figures[i]) || !outdir_our_name(figures[i]))
            fail_msg("%s is not one of our figures", figures[i]);
    for (size_t i = 0; i < sizeof not_figures / sizeof *not_figures; i++)
        if (outdir_figure_name(not_figures[i]))
            fail_msg("%s is a figure", not_figures[i]);
    assert_true(outdir_our_name("figures.csv"));
    assert_true(outdir_our_name(".figures.csv.0123456789ab.tmp"));
    assert_false(outdir_our_name("compare_service_a b.png"));
}

/* The redraw command of a look: shell words, the title single-quoted with
 * a quote as '\'' (so that $(...), ; and quotes stay text). */
static void redraw_args(void **state)
{
    (void)state;
    char out[512];
    struct plot_style st = {.slide = true, .animate = true};
    figrec_args(&st, out, sizeof out);
    assert_string_equal(out, "--style slide --animate");
    st = (struct plot_style){.width = 1280, .height = 720, .font_scale = 1.5};
    snprintf(st.title, sizeof st.title, "%s", "it's $(rm -rf x); `y`");
    figrec_args(&st, out, sizeof out);
    assert_string_equal(out, "--size 1280x720 --font-scale 1.5 --title 'it'\\''s $(rm -rf x); `y`'");
    st = (struct plot_style){0};
    figrec_args(&st, out, sizeof out);
    assert_string_equal(out, "");
}

static void classify(void **state)
{
    (void)state;
    char p[PATH_MAX], err[512];
    enum outdir_kind k;
    assert_int_equal(kind_of("absent"), OUTDIR_ABSENT);
    mkd("empty");
    assert_int_equal(kind_of("empty"), OUTDIR_EMPTY);
    mkd("ours");
    touch("ours/.retrystorm", "");
    touch("ours/summary.csv", "x");
    mkd("ours/attempts=1");
    touch("ours/attempts=1/.retrystorm", "");
    touch("ours/attempts=1/timeseries.csv", "x");
    assert_int_equal(kind_of("ours"), OUTDIR_OURS);
    touch("ours/attempts=1/notes.txt", "x"); /* foreign one level down */
    assert_int_equal(kind_of("ours"), OUTDIR_FOREIGN);
    mkd("nomark");
    touch("nomark/summary.csv", "x");
    assert_int_equal(kind_of("nomark"), OUTDIR_FOREIGN);
    mkd("link");
    touch("link/.retrystorm", "");
    path_of(p, sizeof p, "link/summary.csv");
    assert_int_equal(symlink("/etc/passwd", p), 0); /* our name, but a link */
    assert_int_equal(kind_of("link"), OUTDIR_FOREIGN);
    mkd("fifo");
    touch("fifo/.retrystorm", "");
    path_of(p, sizeof p, "fifo/jobs.csv");
    assert_int_equal(mkfifo(p, 0600), 0);
    assert_int_equal(kind_of("fifo"), OUTDIR_FOREIGN);
    touch("file", "x");
    path_of(p, sizeof p, "file");
    assert_int_equal(outdir_classify(p, &k, err, sizeof err), -1);
    assert_non_null(strstr(err, "not a directory"));
    path_of(p, sizeof p, "dirlink");
    char target[PATH_MAX];
    path_of(target, sizeof target, "empty");
    assert_int_equal(symlink(target, p), 0);
    assert_int_equal(outdir_classify(p, &k, err, sizeof err), -1);
    assert_non_null(strstr(err, "symbolic link"));
    char longp[PATH_MAX + 100];
    memset(longp, 'a', sizeof longp - 1);
    longp[sizeof longp - 1] = '\0';
    assert_int_equal(outdir_classify(longp, &k, err, sizeof err), -1);
    assert_int_equal(outdir_check(longp, true, err, sizeof err), 2);
}

static void remove_ours_keeps_the_rest(void **state)
{
    (void)state;
    char p[PATH_MAX];
    mkd("mixed");
    touch("mixed/.retrystorm", "");
    touch("mixed/summary.csv", "x");
    touch("mixed/thesis.tex", "keep");
    mkd("mixed/v");
    touch("mixed/v/.retrystorm", "");
    touch("mixed/v/layers.csv", "x");
    path_of(p, sizeof p, "mixed");
    assert_int_equal(outdir_remove_ours(p), 1);
    assert_true(exists("mixed/thesis.tex"));
    assert_false(exists("mixed/summary.csv"));
    assert_false(exists("mixed/v"));
    assert_true(exists("mixed/.retrystorm")); /* kept while something foreign is there */
}

static void tmpfile_is_exclusive(void **state)
{
    (void)state;
    char p[PATH_MAX], t1[300], t2[300];
    mkd("tmp");
    path_of(p, sizeof p, "tmp");
    int dfd = outdir_open_dirfd(p);
    assert_true(dfd >= 0);
    int a = outdir_tmpfile(dfd, "jobs.csv", t1, sizeof t1);
    int b = outdir_tmpfile(dfd, "jobs.csv", t2, sizeof t2);
    assert_true(a >= 0 && b >= 0);
    assert_string_not_equal(t1, t2);
    assert_true(outdir_our_name(t1));
    /* the same name again is refused, not opened */
    assert_true(openat(dfd, t1, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0666) < 0 && errno == EEXIST);
    close(a);
    close(b);
    close(dfd);
}

/* A work directory with a summary and a variant, as a run or compare makes. */
static void make_work(char *work, size_t size, const char *dest)
{
    char p[PATH_MAX], err[512], f[PATH_MAX + 32];
    path_of(p, sizeof p, dest);
    assert_int_equal(outdir_mkwork(p, work, size, err, sizeof err), 0);
    snprintf(f, sizeof f, "%s/summary.csv", work);
    FILE *fp = fopen(f, "w");
    fputs("new", fp);
    fclose(fp);
    snprintf(f, sizeof f, "%s/v", work);
    assert_int_equal(outdir_mkdir(f, err, sizeof err), 0);
}

static void install(void **state)
{
    (void)state;
    char work[PATH_MAX], p[PATH_MAX], err[1024];
    make_work(work, sizeof work, "fresh");
    path_of(p, sizeof p, "fresh");
    assert_int_equal(outdir_install(work, p, false, err, sizeof err), 0);
    assert_int_equal(kind_of("fresh"), OUTDIR_OURS);
    assert_int_equal(access(work, F_OK), -1); /* renamed, not copied */
    make_work(work, sizeof work, "fresh"); /* again: exchanged, the earlier removed */
    assert_int_equal(outdir_install(work, p, false, err, sizeof err), 0);
    assert_int_equal(kind_of("fresh"), OUTDIR_OURS);
    assert_int_equal(access(work, F_OK), -1);
    mkd("foreign");
    touch("foreign/thesis.tex", "keep");
    touch("foreign/summary.csv", "old");
    make_work(work, sizeof work, "foreign");
    path_of(p, sizeof p, "foreign");
    assert_int_equal(outdir_install(work, p, false, err, sizeof err), 1); /* no force: left in work */
    assert_non_null(strstr(err, work));
    assert_int_equal(access(work, F_OK), 0);
    assert_int_equal(outdir_install(work, p, true, err, sizeof err), 0);
    assert_true(exists("foreign/thesis.tex") && exists("foreign/v"));
    assert_false(exists("foreign/.retrystorm"));
    assert_int_equal(kind_of("foreign"), OUTDIR_FOREIGN);
    mkd("blocked"); /* a foreign file where a variant goes: an error, nothing replaced */
    touch("blocked/v", "keep");
    make_work(work, sizeof work, "blocked");
    path_of(p, sizeof p, "blocked");
    assert_int_equal(outdir_install(work, p, true, err, sizeof err), 1);
    assert_true(exists("blocked/v"));
}

static void prepare(void **state)
{
    (void)state;
    char p[PATH_MAX], err[1024];
    mkd("prev");
    touch("prev/.retrystorm", "");
    touch("prev/sweep.csv", "old");
    path_of(p, sizeof p, "prev");
    assert_int_equal(outdir_prepare(p, false, true, err, sizeof err), 0); /* --resume keeps */
    assert_true(exists("prev/sweep.csv"));
    assert_int_equal(outdir_prepare(p, false, false, err, sizeof err), 0);
    assert_false(exists("prev/sweep.csv"));
    assert_true(exists("prev/.retrystorm"));
    mkd("other");
    touch("other/results.txt", "keep");
    path_of(p, sizeof p, "other");
    assert_int_equal(outdir_prepare(p, false, false, err, sizeof err), 2);
    assert_false(exists("other/.retrystorm")); /* refused: no marker */
    assert_int_equal(outdir_prepare(p, true, false, err, sizeof err), 0);
    assert_false(exists("other/.retrystorm"));
    assert_true(exists("other/results.txt"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(names),
        cmocka_unit_test(service_names),
        cmocka_unit_test(cache_names),
        cmocka_unit_test(compare_service_names),
        cmocka_unit_test(redraw_args),
        cmocka_unit_test_setup_teardown(classify, setup, teardown),
        cmocka_unit_test_setup_teardown(remove_ours_keeps_the_rest, setup, teardown),
        cmocka_unit_test_setup_teardown(tmpfile_is_exclusive, setup, teardown),
        cmocka_unit_test_setup_teardown(install, setup, teardown),
        cmocka_unit_test_setup_teardown(prepare, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
