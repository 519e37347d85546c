/*
 * plot: the escaping function against hostile values (checked against the
 * real gnuplot when there is one: it prints each value back verbatim and
 * runs nothing), the readers against malformed files (PLOT_BAD_INPUT
 * naming the file and line, nothing drawn), and plot_dir's handling of
 * gnuplot: its stderr in the message, and a stop that kills it promptly.
 * The last two use a fake gnuplot (a shell script first in PATH).
 */
#define _POSIX_C_SOURCE 200809L

#include "rs_test.h"

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "plot.h"
#include "plotdec.h"

/* ---- helpers ---- */

static char *mktempdir(void)
{
    char *t = strdup("/tmp/rs-test-plot-XXXXXX");
    assert_non_null(t);
    assert_non_null(mkdtemp(t));
    return t;
}

static void rmtree(const char *dir)
{
    char cmd[512];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir); /* our own mkdtemp name: no quote in it */
    assert_int_equal(system(cmd), 0);
}

static void put(const char *dir, const char *name, const char *text)
{
    char p[512];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    FILE *f = fopen(p, "w");
    assert_non_null(f);
    fputs(text, f);
    assert_int_equal(fclose(f), 0);
}

static bool present(const char *dir, const char *name)
{
    char p[512];
    struct stat st;
    snprintf(p, sizeof p, "%s/%s", dir, name);
    return lstat(p, &st) == 0;
}

/* How many entries of dir have a name ending in ".tmp". */
static int temporaries(const char *dir)
{
    DIR *d = opendir(dir);
    assert_non_null(d);
    int n = 0;
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        size_t len = strlen(e->d_name);
        n += len > 4 && strcmp(e->d_name + len - 4, ".tmp") == 0;
    }
    closedir(d);
    return n;
}

static bool have_gnuplot(void) { return system("command -v gnuplot > /dev/null 2>&1") == 0; }

/* Values chosen to break out of a gnuplot string or to run something. */
static const char *const hostile[] = {
    "plain",
    "",
    "it's",
    "''",
    "'",
    "'''x''",
    "a''''b",
    "'@title",
    "''.system(\"touch pwned6\").''",
    "x'.system(\"touch pwned1\").'",
    "x' . system('touch pwned2') . '",
    "back\\slash\\",
    "\\'; system(\"touch pwned3\"); '",
    "`touch pwned4`",
    "\"`touch pwned5`\"",
    "@macro",
    "@@x @y",
    "#not a comment; print 'x'",
    "sprintf(\"%s\") %d %%",
    "\\U+0041 \\101 \\n",
    "caf\xc3\xa9 \xff",
};

/* ---- plot_quote ---- */

#define Q "'.sprintf('%c',39).'" /* how plot_quote writes a quote */

static void quote_exact(void **state)
{
    (void)state;
    static const struct {
        const char *in, *out;
    } cases[] = {
        {"abc", "'abc'"},
        {"", "''"},
        {"it's", "'it" Q "s'"},
        {"'", "'" Q "'"},
        {"''", "'" Q Q "'"},
        {"a\\b\\", "'a\\b\\'"},
        {"x'.system(\"touch X\").'", "'x" Q ".system(\"touch X\")." Q "'"},
        {"`id`", "'`id`'"},
        {"@m", "'@m'"},
        {"\"'\"", "'\"" Q "\"'"},
    };
    char out[256];
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        int n = plot_quote(cases[i].in, out, sizeof out);
        assert_string_equal(out, cases[i].out);
        assert_int_equal(n, (int)strlen(cases[i].out));
    }
}

static void quote_refuses(void **state)
{
    (void)state;
    char out[256];
    static const char *const bad[] = {"a\nb", "\n", "a\rb", "tab\t", "\x7f", "\x1b[31mred",
                                      "x'\nsystem(\"touch pwned\")\n'"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        assert_int_equal(plot_quote(bad[i], out, sizeof out), -1);
    /* sizes: PLOT_QUOTED_SIZE always suffices; one byte less for all quotes fails */
    assert_int_equal(plot_quote("''", out, PLOT_QUOTED_SIZE(2)), 42);
    assert_int_equal(plot_quote("''", out, PLOT_QUOTED_SIZE(2) - 1), -1);
    assert_int_equal(plot_quote("ab", out, 5), 4);
    assert_int_equal(plot_quote("ab", out, 4), -1);
    assert_int_equal(plot_quote("", out, 2), -1);
}

static void quote_long(void **state)
{
    (void)state;
    size_t n = 100000;
    char *s = malloc(n + 1), *out = malloc(PLOT_QUOTED_SIZE(n));
    assert_non_null(s);
    assert_non_null(out);
    for (size_t i = 0; i < n; i++)
        s[i] = "'`@\\x"[i % 5];
    s[n] = '\0';
    int w = plot_quote(s, out, PLOT_QUOTED_SIZE(n));
    assert_int_equal(w, (int)(n + 19 * (n / 5) + 2)); /* each quote 20 bytes, plus the two around */
    assert_int_equal(plot_quote(s, out, (size_t)w), -1); /* no room for the NUL */
    free(s);
    free(out);
}

/* gnuplot, given `x = <quoted>` and `print x`, prints exactly the value
 * and runs nothing (no pwned* file appears in its working directory). */
static void quote_gnuplot(void **state)
{
    (void)state;
    if (!have_gnuplot())
        skip();
    char *dir = mktempdir(), path[512], line[4096];
    snprintf(path, sizeof path, "%s/t.gp", dir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    size_t n = sizeof hostile / sizeof *hostile;
    fprintf(f, "title = 'system(\"touch pwned7\")'\n"); /* what @title would run */
    for (size_t i = 0; i < n; i++) {
        char q[2048];
        assert_true(plot_quote(hostile[i], q, sizeof q) > 0);
        fprintf(f, "x = %s\nprint '<' . x . '>'\narray a[1] = [%s]\nprint '<' . a[1] . '>'\n", q, q);
    }
    assert_int_equal(fclose(f), 0);
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "cd '%s' && gnuplot -d t.gp 2> out.txt", dir);
    assert_int_equal(system(cmd), 0);
    snprintf(path, sizeof path, "%s/out.txt", dir);
    f = fopen(path, "r");
    assert_non_null(f);
    for (size_t i = 0; i < 2 * n; i++) {
        char want[600];
        snprintf(want, sizeof want, "<%s>\n", hostile[i / 2]);
        assert_non_null(fgets(line, sizeof line, f));
        assert_string_equal(line, want);
    }
    assert_null(fgets(line, sizeof line, f));
    fclose(f);
    for (int k = 1; k <= 7; k++) {
        char name[16];
        snprintf(name, sizeof name, "pwned%d", k);
        assert_false(present(dir, name));
    }
    rmtree(dir);
    free(dir);
}

/* ---- the look: plot's options ---- */

/* Every option's value at and past its bounds: taken (1), refused
 * (PLOT_BAD_INPUT, the message naming the option and the value), and
 * what is not a look option left alone (-1). */
static void style_options(void **state)
{
    (void)state;
    static const struct {
        const char *opt, *value;
        int want;
        unsigned w, h;
    } cases[] = {
        {"--size", "320x240", 1, 320, 240},        {"--size", "7680x4320", 1, 7680, 4320},
        {"--size", "1920x1080", 1, 1920, 1080},    {"--size", "319x240", PLOT_BAD_INPUT, 0, 0},
        {"--size", "320x239", PLOT_BAD_INPUT, 0, 0}, {"--size", "7681x1080", PLOT_BAD_INPUT, 0, 0},
        {"--size", "1920x4321", PLOT_BAD_INPUT, 0, 0}, {"--size", "1920X1080", PLOT_BAD_INPUT, 0, 0},
        {"--size", "1920x1080x", PLOT_BAD_INPUT, 0, 0}, {"--size", "+1920x1080", PLOT_BAD_INPUT, 0, 0},
        {"--size", " 1920x1080", PLOT_BAD_INPUT, 0, 0}, {"--size", "1920x-1080", PLOT_BAD_INPUT, 0, 0},
        {"--size", "99999999999999999999999x1080", PLOT_BAD_INPUT, 0, 0},
        {"--size", "", PLOT_BAD_INPUT, 0, 0},      {"--size", NULL, PLOT_BAD_INPUT, 0, 0},
        {"--font-scale", "0.5", 1, 0, 0},          {"--font-scale", "4", 1, 0, 0},
        {"--font-scale", "0.49", PLOT_BAD_INPUT, 0, 0}, {"--font-scale", "4.01", PLOT_BAD_INPUT, 0, 0},
        {"--font-scale", "nan", PLOT_BAD_INPUT, 0, 0}, {"--font-scale", "inf", PLOT_BAD_INPUT, 0, 0},
        {"--font-scale", "2x", PLOT_BAD_INPUT, 0, 0},
        {"--font-scale", "0x1p1", PLOT_BAD_INPUT, 0, 0}, {"--font-scale", "1e0", PLOT_BAD_INPUT, 0, 0}, {"--font-scale", "", PLOT_BAD_INPUT, 0, 0},
        {"--style", "slide", 1, 0, 0},             {"--style", "default", 1, 0, 0},
        {"--style", "Slide", PLOT_BAD_INPUT, 0, 0}, {"--style", NULL, PLOT_BAD_INPUT, 0, 0},
        {"--title", "it's \"a\" \\ `x` @t\nline 2", 1, 0, 0}, {"--title", "", 1, 0, 0},
        {"--title", "a\tb", PLOT_BAD_INPUT, 0, 0}, {"--title", "a\rb", PLOT_BAD_INPUT, 0, 0},
        {"--title", "\x1b[31m", PLOT_BAD_INPUT, 0, 0},
        {"--animate", NULL, 0, 0, 0},              {"--force", NULL, -1, 0, 0},
        {"--plot", "x", -1, 0, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        struct plot_style st = {0};
        char err[512] = "";
        int got = plot_style_option(&st, cases[i].opt, cases[i].value, err, sizeof err);
        assert_int_equal(got, cases[i].want);
        if (got == PLOT_BAD_INPUT) {
            assert_non_null(strstr(err, cases[i].opt));
            if (cases[i].value != NULL && strcmp(cases[i].opt, "--title") != 0)
                assert_non_null(strstr(err, cases[i].value));
        }
        if (strcmp(cases[i].opt, "--size") == 0) {
            assert_int_equal(st.width, cases[i].w);
            assert_int_equal(st.height, cases[i].h);
        }
    }
    char title[PLOT_TITLE_MAX + 2], err[512];
    struct plot_style st = {0};
    memset(title, 'a', sizeof title - 1);
    title[PLOT_TITLE_MAX] = '\0';
    assert_int_equal(plot_style_option(&st, "--title", title, err, sizeof err), 1);
    title[PLOT_TITLE_MAX] = 'a', title[PLOT_TITLE_MAX + 1] = '\0';
    assert_int_equal(plot_style_option(&st, "--title", title, err, sizeof err), PLOT_BAD_INPUT);
}

/* ---- readers: malformed files ---- */

/* plot_dir on dir gives want, with a message holding `says`; nothing is
 * drawn and no temporary is left. */
static void refused(const char *dir, int want, const char *says)
{
    char err[1024] = "";
    int n = plot_dir(dir, NULL, err, sizeof err);
    if (n != want || strstr(err, says) == NULL)
        fail_msg("plot_dir returned %d (want %d): \"%s\" (want \"%s\")", n, want, err, says);
    for (const char *e = err; *e; e++) /* nothing a terminal would act on */
        assert_false((unsigned char)*e < 0x20 || *e == 0x7f);
    assert_false(present(dir, "load.png"));
    assert_false(present(dir, "compare.png"));
    assert_false(present(dir, "sweep_ok_share.png"));
    assert_int_equal(temporaries(dir), 0);
}

static const char ts_header[] = "t,offered,server_arrivals,ok,queue_len,in_flight,busy,lat_p50,lat_p99\n";

static void malformed_run(void **state)
{
    (void)state;
    char *d = mktempdir();
    put(d, "timeseries.csv", ts_header);
    put(d, "latency.csv", "outcome,latency_s,quantile\nok,0.1,0.5\nex\x01it,0.2,0.5\n");
    refused(d, PLOT_BAD_INPUT, "/latency.csv:3: a control character (byte 1) in column outcome");
    put(d, "latency.csv", "quantile,latency_s,outcome\n0.5,0.1\n");
    refused(d, PLOT_BAD_INPUT, "/latency.csv:2: 2 columns, but the header has 3");
    char *big = malloc(3000);
    assert_non_null(big);
    snprintf(big, 3000, "outcome,latency_s,quantile\n%02000d,0.1,0.5\n", 0);
    put(d, "latency.csv", big);
    refused(d, PLOT_BAD_INPUT, "/latency.csv:2: a value of 2000 bytes in column outcome (at most 1024)");
    free(big);
    put(d, "latency.csv", "outcome,latency_s,quantile\nok,0.1,0.5\n");
    size_t n = (2u << 20) + 100;
    char *line = malloc(n + 64);
    assert_non_null(line);
    int h = snprintf(line, 64, "level,attempts,share\n");
    memset(line + h, 'a', n);
    line[(size_t)h + n] = '\0';
    put(d, "attempts.csv", line);
    refused(d, PLOT_BAD_INPUT, "/attempts.csv:2: a line longer than 1048576 bytes");
    free(line);
    char p[512];
    snprintf(p, sizeof p, "%s/attempts.csv", d);
    FILE *f = fopen(p, "w");
    assert_non_null(f);
    fputs("level,attempts,share\napp,1,0.5\nse", f);
    fputc('\0', f);
    fputs("rver,1,0.5\n", f);
    fclose(f);
    refused(d, PLOT_BAD_INPUT, "/attempts.csv:3: a NUL byte");
    unlink(p);
    assert_int_equal(mkfifo(p, 0600), 0);
    refused(d, PLOT_BAD_INPUT, "/attempts.csv is not a regular file");
    unlink(p);
    assert_int_equal(symlink("/etc/passwd", p), 0); /* gnuplot would draw it into the directory */
    refused(d, PLOT_BAD_INPUT, "/attempts.csv is a symbolic link: refused");
    unlink(p);
    put(d, "scenario.ini", "[run]\nname = x\nduration = forever\n");
    refused(d, PLOT_BAD_INPUT, "/scenario.ini:3");
    put(d, "scenario.ini", "[run]\nname = x\nduration = 1\x1b]0;owned\x07s\n");
    refused(d, PLOT_BAD_INPUT, "/scenario.ini:3");
    rmtree(d);
    free(d);
}

static void malformed_comparison(void **state)
{
    (void)state;
    char *d = mktempdir();
    size_t cap = 5000 * 16 + 64, used = 0;
    char *text = malloc(cap);
    assert_non_null(text);
    used += (size_t)snprintf(text, cap, "variant,t,ok\n");
    for (int i = 0; i < 5000; i++)
        used += (size_t)snprintf(text + used, cap - used, "v%d,0,1\n", i);
    put(d, "timeseries.csv", text);
    free(text);
    refused(d, PLOT_BAD_INPUT, "/timeseries.csv:4098: more than 4096 distinct values in column variant");
    put(d, "timeseries.csv", "variant,t,ok\n");
    refused(d, PLOT_FAILED, "has no rows to plot");
    put(d, "timeseries.csv", "variant,t,ok\na,0,1\nb,0,1\nc,0,1\nd,0,1\ne,0,1\nf,0,1\ng,0,1\n"
                             "h,0,1\ni,0,1\nj,0,1\nk,0,1\nl,0,1\nm,0,1\n");
    refused(d, PLOT_FAILED, "13 variants are too many lines for one figure");
    /* the rest of a comparison's set is read before anything is drawn */
    put(d, "timeseries.csv", "variant,t,ok\na,0,1\n");
    put(d, "latency.csv", "variant,outcome,quantile,latency_s\na,all,0,1\nx\x1b]0;t\x07,all,1,2\n");
    refused(d, PLOT_BAD_INPUT, "/latency.csv:3: a control character (byte 27) in column variant");
    put(d, "latency.csv", "variant,outcome,quantile,latency_s\na,all,0,1\n");
    put(d, "attempts.csv", "variant,level,attempts,share\na,app,1,1\na,ap\tp,1,1\n");
    refused(d, PLOT_BAD_INPUT, "/attempts.csv:3: a control character (byte 9) in column level");
    put(d, "attempts.csv", "variant,level,attempts,share\na,app,1,1\n");
    put(d, "summary.csv", "variant,amplification,amplification_hw\na,1,\n");
    put(d, "replications.csv", "variant,replication\na,0\na,1\n1\n");
    refused(d, PLOT_BAD_INPUT, "/replications.csv:4: 1 columns, but the header has 2");
    rmtree(d);
    free(d);
}

static void malformed_sweep(void **state)
{
    (void)state;
    char *d = mktempdir();
    put(d, "sweep.csv", "point,layer.app.attempts,ok_share\n0,1,0.5\n");
    put(d, "experiment.csv", "field,value\nkey,layer.app.attempts\nkey,a\x1b[2Jb\n");
    refused(d, PLOT_BAD_INPUT, "/experiment.csv:3: a control character (byte 27)");
    put(d, "experiment.csv", "field,value\nkey,\n");
    refused(d, PLOT_BAD_INPUT, "/experiment.csv:2: an empty key");
    put(d, "experiment.csv", "field,value\nkey,layer.app.timeout\n");
    refused(d, PLOT_BAD_INPUT, "/sweep.csv:1: no column layer.app.timeout (a key of experiment.csv)");
    put(d, "experiment.csv", "field,value\nkey,a\nkey,b\nkey,c\n");
    refused(d, PLOT_FAILED, "a sweep over 3 keys");
    rmtree(d);
    free(d);
}

/* ---- services.csv (service graphs) ---- */

static const char svc_header[] =
    "t,service,replica,arrivals,started,completed,rejected,queue_len,busy,working,utilization,wasted,"
    "dep_calls\n";

/* A services.csv of the header, a good row of service ok, then `rows`;
 * plot_dir refuses it with `says`, drawing no service's figure either. */
static void svc_refused(const char *d, const char *rows, const char *says)
{
    char text[8192];
    snprintf(text, sizeof text, "%s0,ok,0,1,1,1,0,0,1,1,0.1,0,0\n%s", svc_header, rows);
    put(d, "services.csv", text);
    refused(d, PLOT_BAD_INPUT, says);
    assert_false(present(d, "service_ok.png"));
}

static void malformed_services(void **state)
{
    (void)state;
    char *d = mktempdir();
    put(d, "timeseries.csv", ts_header);
    svc_refused(d, "0,a'b,0,1,1,1,0,0,1,1,0.1,0,0\n",
                "/services.csv:3: the service name 'a'b' is not 1 to 47 letters, digits, '_' or '-'");
    svc_refused(d, "0,../x,0,1,1,1,0,0,1,1,0.1,0,0\n", "/services.csv:3: the service name '../x' is not");
    svc_refused(d, "0,a b,0,1,1,1,0,0,1,1,0.1,0,0\n", "/services.csv:3: the service name 'a b' is not");
    svc_refused(d, "0,,0,1,1,1,0,0,1,1,0.1,0,0\n", "/services.csv:3: the service name '' is not");
    svc_refused(d, "0,a.png,0,1,1,1,0,0,1,1,0.1,0,0\n", "/services.csv:3: the service name 'a.png' is not");
    svc_refused(d, "0,abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuv,0,1,1,1,0,0,1,1,0.1,0,0\n",
                "/services.csv:3: the service name 'abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuv' is not");
    svc_refused(d, "0,x\x1b]0;t\x07,0,1,1,1,0,0,1,1,0.1,0,0\n", "/services.csv:3: a control character (byte 27)");
    svc_refused(d, "1,ok,0,1,1,1,0,0,NaN,1,0.1,0,0\n", "/services.csv:3: 'NaN' in column busy is not a number");
    svc_refused(d, "1,ok,0,1,1,1,0,0,1,1,nan,0,0\n", "/services.csv:3: 'nan' in column utilization is not a number");
    svc_refused(d, "1,ok,0,inf,1,1,0,0,1,1,0.1,0,0\n", "/services.csv:3: 'inf' in column arrivals is not a number");
    svc_refused(d, "1,ok,0,1e999,1,1,0,0,1,1,0.1,0,0\n",
                "/services.csv:3: '1e999' in column arrivals is not a finite number of at least 0");
    svc_refused(d, "1,ok,0,1,1,-1,0,0,1,1,0.1,0,0\n", "/services.csv:3: '-1' in column completed is not a finite");
    svc_refused(d, "1,ok,0,1,1,1,0x1,0,1,1,0.1,0,0\n", "/services.csv:3: '0x1' in column rejected is not a number");
    svc_refused(d, "1,ok,0,1,1,1,0,1-2,1,1,0.1,0,0\n", "/services.csv:3: '1-2' in column queue_len is not a number");
    svc_refused(d, "1,ok,0,1,1,1,0,0,1,,0.1,0,0\n", "/services.csv:3: an empty value in column working");
    svc_refused(d, "x,ok,0,1,1,1,0,0,1,1,0.1,0,0\n", "/services.csv:3: 'x' in column t is not a number");
    svc_refused(d, "1,ok,1.5,1,1,1,0,0,1,1,0.1,0,0\n", "/services.csv:3: replica 1.5 is not a whole number from 0 to 1000");
    svc_refused(d, "1,ok,1001,1,1,1,0,0,1,1,0.1,0,0\n", "/services.csv:3: replica 1001 is not a whole number");
    /* 1000 is the highest replica read: its row passes, the next one not */
    svc_refused(d, "1,ok,1000,1,1,1,0,0,1,1,0.1,0,0\n1,ok,1001,1,1,1,0,0,1,1,0.1,0,0\n",
                "/services.csv:4: replica 1001 is not a whole number");
    svc_refused(d, "1,ok,0,1,1,1,0,0,1,1,0.1,0\n", "/services.csv:3: 12 columns, but the header has 13");
    svc_refused(d, "1,ok,0,1,1,1,0,0,1,1,0.1,0,\"a,b\"\n", "/services.csv:3: 14 columns, but the header has 13");
    svc_refused(d, "1,ok,0,1,1,1,0,0,1,1,0.1,0,\"0\"\n", "/services.csv:3: a double quote in column 13");
    svc_refused(d, "1,lone,2,1,1,1,0,0,1,1,0.1,0,0\n",
                "/services.csv: service lone has no rows of replica 0 (its total)");
    char *many = malloc(65 * 64);
    assert_non_null(many);
    many[0] = '\0';
    for (int i = 0; i < 64; i++) /* with ok: 65 services */
        snprintf(many + strlen(many), 64, "0,s%d,0,1,1,1,0,0,1,1,0.1,0,0\n", i);
    svc_refused(d, many, "/services.csv:66: more than 64 services");
    free(many);
    put(d, "services.csv", "t,service,replica,arrivals,completed,rejected,queue_len,working,utilization,wasted\n");
    refused(d, PLOT_BAD_INPUT, "/services.csv:1: no column busy");
    put(d, "services.csv", "t,service,replica,arrivals,completed,rejected,queue_len,busy,working,utilization,"
                           "wasted,busy\n");
    refused(d, PLOT_BAD_INPUT, "/services.csv:1: column busy appears 2 times");
    put(d, "services.csv", "service,t,replica,arrivals,completed,rejected,queue_len,busy,working,utilization,wasted\n");
    refused(d, PLOT_BAD_INPUT, "/services.csv:1: the header does not start with column t");
    put(d, "services.csv", "");
    refused(d, PLOT_BAD_INPUT, "/services.csv: empty (no header)");
    char p[512];
    snprintf(p, sizeof p, "%s/services.csv", d);
    unlink(p);
    assert_int_equal(symlink("/etc/passwd", p), 0);
    refused(d, PLOT_BAD_INPUT, "/services.csv is a symbolic link: refused");
    unlink(p);
    rmtree(d);
    free(d);
}

/* More than 1,000,000 rows are refused at the first row too many. */
static void services_rows_bounded(void **state)
{
    (void)state;
    char *d = mktempdir(), p[512];
    put(d, "timeseries.csv", ts_header);
    snprintf(p, sizeof p, "%s/services.csv", d);
    FILE *f = fopen(p, "w");
    assert_non_null(f);
    fputs(svc_header, f);
    for (int i = 0; i < 1000001; i++)
        fputs("0,a,0,0,0,0,0,0,0,0,0,0,0\n", f);
    assert_int_equal(fclose(f), 0);
    refused(d, PLOT_BAD_INPUT, "/services.csv:1000002: more than 1000000 rows");
    assert_false(present(d, "service_a.png"));
    rmtree(d);
    free(d);
}

/* The real gnuplot draws one figure per service, names at the edges of
 * what is allowed included, and a service of 11 replicas. */
static void services_drawn(void **state)
{
    (void)state;
    if (!have_gnuplot())
        skip();
    char *d = mktempdir(), err[1024], text[16384];
    put(d, "timeseries.csv", "t,offered,server_arrivals,ok,queue_len,in_flight,busy,lat_p50,lat_p99\n"
                             "0,1,1,1,0,1,1,0.1,0.2\n1,2,2,2,1,2,2,0.1,0.3\n");
    size_t n = (size_t)snprintf(text, sizeof text, "%s", svc_header);
    for (int t = 0; t < 3; t++) {
        n += (size_t)snprintf(text + n, sizeof text - n, "%d,-,0,5,5,4,1,0.5,2,1,0.5,0,0\n", t);
        for (int r = 0; r <= 11; r++)
            n += (size_t)snprintf(text + n, sizeof text - n, "%d,Api_v-2,%d,%d,3,3,0,0,1.5,1e-3,0.75,0,1\n",
                                  t, r, t + r);
    }
    put(d, "services.csv", text);
    int got = plot_dir(d, NULL, err, sizeof err);
    if (got != 10) /* load, queue, latency and two services, PNG and SVG */
        fail_msg("plot_dir returned %d: %s", got, err);
    assert_true(present(d, "service_-.png"));
    assert_true(present(d, "service_-.svg"));
    assert_true(present(d, "service_Api_v-2.png"));
    assert_true(present(d, "service_Api_v-2.svg"));
    assert_int_equal(temporaries(d), 0);
    rmtree(d);
    free(d);
}

/* ---- caches.csv (caches) ---- */

static const char cache_header[] = "t,cache,lookups,hits,misses,coalesced,entries,evictions,expirations\n";

/* A caches.csv of the header, a good row of cache ok, then `rows`;
 * plot_dir refuses it with `says`, drawing no cache's figure either. */
static void cache_refused(const char *d, const char *rows, const char *says)
{
    char text[8192];
    snprintf(text, sizeof text, "%s0,ok,10,9,1,0,5,0,0\n%s", cache_header, rows);
    put(d, "caches.csv", text);
    refused(d, PLOT_BAD_INPUT, says);
    assert_false(present(d, "cache_ok.png"));
}

static void malformed_caches(void **state)
{
    (void)state;
    char *d = mktempdir();
    put(d, "timeseries.csv", ts_header);
    cache_refused(d, "0,a'b,10,9,1,0,5,0,0\n",
                  "/caches.csv:3: the cache name 'a'b' is not 1 to 47 letters, digits, '_' or '-'");
    cache_refused(d, "0,x'.system('touch pwned8').',10,9,1,0,5,0,0\n",
                  "/caches.csv:3: the cache name 'x'.system('touch pwned8').'' is not");
    cache_refused(d, "0,../x,10,9,1,0,5,0,0\n", "/caches.csv:3: the cache name '../x' is not");
    cache_refused(d, "0,a b,10,9,1,0,5,0,0\n", "/caches.csv:3: the cache name 'a b' is not");
    cache_refused(d, "0,,10,9,1,0,5,0,0\n", "/caches.csv:3: the cache name '' is not");
    cache_refused(d, "0,a.png,10,9,1,0,5,0,0\n", "/caches.csv:3: the cache name 'a.png' is not");
    cache_refused(d, "0,abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuv,10,9,1,0,5,0,0\n",
                  "/caches.csv:3: the cache name 'abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuv' is not");
    cache_refused(d, "0,x\x1b]0;t\x07,10,9,1,0,5,0,0\n", "/caches.csv:3: a control character (byte 27)");
    cache_refused(d, "1,ok,NaN,9,1,0,5,0,0\n", "/caches.csv:3: 'NaN' in column lookups is not a number");
    cache_refused(d, "1,ok,10,nan,1,0,5,0,0\n", "/caches.csv:3: 'nan' in column hits is not a number");
    cache_refused(d, "1,ok,10,9,inf,0,5,0,0\n", "/caches.csv:3: 'inf' in column misses is not a number");
    cache_refused(d, "1,ok,10,9,1,1e999,5,0,0\n",
                  "/caches.csv:3: '1e999' in column coalesced is not a finite number of at least 0");
    cache_refused(d, "1,ok,10,9,1,0,-5,0,0\n", "/caches.csv:3: '-5' in column entries is not a finite");
    cache_refused(d, "1,ok,10,9,1,0,5,0x1,0\n", "/caches.csv:3: '0x1' in column evictions is not a number");
    cache_refused(d, "1,ok,10,9,1,0,5,0,\n", "/caches.csv:3: an empty value in column expirations");
    cache_refused(d, "x,ok,10,9,1,0,5,0,0\n", "/caches.csv:3: 'x' in column t is not a number");
    cache_refused(d, "1,ok,10,9,1,0,5,0\n", "/caches.csv:3: 8 columns, but the header has 9");
    cache_refused(d, "1,ok,10,9,1,0,5,0,\"a,b\"\n", "/caches.csv:3: 10 columns, but the header has 9");
    cache_refused(d, "1,ok,10,9,1,0,5,0,\"0\"\n", "/caches.csv:3: a double quote in column 9");
    /* rows a bucket at a time, a row per cache, in the same order */
    cache_refused(d, "0,b,1,1,0,0,1,0,0\n1,b,1,1,0,0,1,0,0\n1,ok,1,1,0,0,1,0,0\n",
                  "/caches.csv:4: cache 'b' where 'ok' was expected");
    cache_refused(d, "0,b,1,1,0,0,1,0,0\n1,ok,1,1,0,0,1,0,0\n2,ok,1,1,0,0,1,0,0\n",
                  "/caches.csv:5: cache 'ok' where 'b' was expected");
    cache_refused(d, "0,b,1,1,0,0,1,0,0\n1,ok,1,1,0,0,1,0,0\n1,c,1,1,0,0,1,0,0\n",
                  "/caches.csv:5: cache 'c' where 'b' was expected");
    cache_refused(d, "0,b,1,1,0,0,1,0,0\n1,ok,1,1,0,0,1,0,0\n",
                  "/caches.csv: 3 rows are not a row per cache (2) in every bucket");
    char many[1024] = "";
    for (int i = 0; i < 8; i++) /* with ok: 9 caches */
        snprintf(many + strlen(many), sizeof many - strlen(many), "0,c%d,1,1,0,0,1,0,0\n", i);
    cache_refused(d, many, "/caches.csv:10: more than 8 caches");
    put(d, "caches.csv", "t,cache,lookups,hits,misses,coalesced,entries,evictions\n");
    refused(d, PLOT_BAD_INPUT, "/caches.csv:1: no column expirations");
    put(d, "caches.csv", "t,cache,lookups,hits,misses,coalesced,entries,evictions,expirations,hits\n");
    refused(d, PLOT_BAD_INPUT, "/caches.csv:1: column hits appears 2 times");
    put(d, "caches.csv", "cache,t,lookups,hits,misses,coalesced,entries,evictions,expirations\n");
    refused(d, PLOT_BAD_INPUT, "/caches.csv:1: the header does not start with column t");
    put(d, "caches.csv", "");
    refused(d, PLOT_BAD_INPUT, "/caches.csv: empty (no header)");
    char p[512];
    snprintf(p, sizeof p, "%s/caches.csv", d);
    unlink(p);
    assert_int_equal(symlink("/etc/passwd", p), 0);
    refused(d, PLOT_BAD_INPUT, "/caches.csv is a symbolic link: refused");
    unlink(p);
    assert_int_equal(mkfifo(p, 0600), 0);
    refused(d, PLOT_BAD_INPUT, "/caches.csv is not a regular file");
    unlink(p);
    assert_false(present(d, "pwned8"));
    rmtree(d);
    free(d);
}

/* More than 1,000,000 rows are refused at the first row too many. */
static void caches_rows_bounded(void **state)
{
    (void)state;
    char *d = mktempdir(), p[512];
    put(d, "timeseries.csv", ts_header);
    snprintf(p, sizeof p, "%s/caches.csv", d);
    FILE *f = fopen(p, "w");
    assert_non_null(f);
    fputs(cache_header, f);
    for (int i = 0; i < 1000001; i++)
        fputs("0,a,0,0,0,0,0,0,0\n", f);
    assert_int_equal(fclose(f), 0);
    refused(d, PLOT_BAD_INPUT, "/caches.csv:1000002: more than 1000000 rows");
    assert_false(present(d, "cache_a.png"));
    rmtree(d);
    free(d);
}

/* The real gnuplot draws one figure per cache, names at the edges of what
 * is allowed included, buckets without lookups (a gap in the hit ratio,
 * never a NaN drawn or written) among them. */
static void caches_drawn(void **state)
{
    (void)state;
    if (!have_gnuplot())
        skip();
    static const char *const longest = "Objects_012345678901234567890123456789012345678";
    char *d = mktempdir(), err[1024], text[16384], p[512];
    put(d, "timeseries.csv", "t,offered,server_arrivals,ok,queue_len,in_flight,busy,lat_p50,lat_p99\n"
                             "0,1,1,1,0,1,1,0.1,0.2\n1,2,2,2,1,2,2,0.1,0.3\n");
    size_t n = (size_t)snprintf(text, sizeof text, "%s", cache_header);
    for (int t = 0; t < 6; t++) {
        int look = t == 2 || t == 3 ? 0 : 100; /* no lookups in buckets 2 and 3 */
        n += (size_t)snprintf(text + n, sizeof text - n, "%d,-,%d,%d,%d,0,%d,0,1.5\n", t, look,
                              look / 2, look - look / 2, 10 * t);
        n += (size_t)snprintf(text + n, sizeof text - n, "%d,%s,200,%d,%d,3,1e3,2,0\n", t, longest,
                              20 * t, 200 - 20 * t);
    }
    put(d, "caches.csv", text);
    int got = plot_dir(d, NULL, err, sizeof err);
    if (got != 10) /* load, queue, latency and two caches, PNG and SVG */
        fail_msg("plot_dir returned %d: %s", got, err);
    assert_true(present(d, "cache_-.png"));
    assert_true(present(d, "cache_-.svg"));
    char fig[64];
    snprintf(fig, sizeof fig, "cache_%s.png", longest);
    assert_true(present(d, fig));
    snprintf(fig, sizeof fig, "cache_%s.svg", longest);
    assert_true(present(d, fig));
    snprintf(p, sizeof p, "%s/cache_-.svg", d);
    FILE *f = fopen(p, "r");
    assert_non_null(f);
    char *svg = malloc(1 << 22);
    assert_non_null(svg);
    size_t len = fread(svg, 1, (1 << 22) - 1, f);
    svg[len] = '\0';
    fclose(f);
    assert_true(len < (1 << 22) - 1);
    assert_non_null(strstr(svg, "<svg"));
    assert_null(strstr(svg, "NaN"));
    free(svg);
    assert_int_equal(temporaries(d), 0);
    rmtree(d);
    free(d);
}

static void not_a_directory(void **state)
{
    (void)state;
    char err[512];
    assert_int_equal(plot_dir("/nonexistent/retrystorm", NULL, err, sizeof err), PLOT_BAD_INPUT);
    assert_non_null(strstr(err, "/nonexistent/retrystorm: "));
    char *d = mktempdir();
    refused(d, PLOT_FAILED, "holds no retrystorm output to plot (no timeseries.csv)");
    volatile sig_atomic_t stop = SIGINT;
    put(d, "timeseries.csv", ts_header);
    assert_int_equal(plot_dir(d, &stop, err, sizeof err), PLOT_STOPPED);
    rmtree(d);
    free(d);
}

/* ---- gnuplot's stderr, and stopping it ---- */

/* Puts a fake gnuplot (script body given) first in PATH; returns its
 * directory. */
static char *fake_gnuplot(const char *body)
{
    char *bin = mktempdir(), p[512], path[8192];
    snprintf(p, sizeof p, "#!/bin/sh\n%s\n", body);
    put(bin, "gnuplot", p);
    snprintf(p, sizeof p, "%s/gnuplot", bin);
    assert_int_equal(chmod(p, 0755), 0);
    snprintf(path, sizeof path, "%s:%s", bin, getenv("PATH"));
    assert_int_equal(setenv("PATH", path, 1), 0);
    return bin;
}

static void unfake(char *bin)
{
    const char *path = getenv("PATH");
    assert_int_equal(setenv("PATH", path + strlen(bin) + 1, 1), 0);
    rmtree(bin);
    free(bin);
}

static void stderr_shown(void **state)
{
    (void)state;
    char *bin = fake_gnuplot("cat > /dev/null\n"
                             "printf '\\ngnuplot> plot x\\n          ^\\n         line 0: warning: minor\\n"
                             "         line 0: all points y value undefined!\\n' >&2\nexit 1");
    char *d = mktempdir();
    put(d, "timeseries.csv", ts_header);
    refused(d, PLOT_FAILED, "gnuplot failed on load.png: all points y value undefined!; warning: minor");
    unfake(bin);
    bin = fake_gnuplot("cat > /dev/null\nkill -SEGV $$");
    refused(d, PLOT_FAILED, "gnuplot failed on load.png: killed by signal 11");
    unfake(bin);
    bin = fake_gnuplot("cat > /dev/null\nexit 3");
    refused(d, PLOT_FAILED, "gnuplot failed on load.png: it exited with status 3 and said nothing");
    unfake(bin);
    rmtree(d);
    free(d);
}

static volatile sig_atomic_t stop_flag;
static void on_alarm(int sig) { stop_flag = sig; }

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* A stop while gnuplot runs kills its process group within a second and
 * leaves no temporary. */
static void stops_promptly(void **state)
{
    (void)state;
    char *d = mktempdir(), pidfile[512], err[512];
    snprintf(pidfile, sizeof pidfile, "%s/gnuplot.pid", d);
    assert_int_equal(setenv("RS_FAKE_PID", pidfile, 1), 0);
    char *bin = fake_gnuplot("echo $$ > \"$RS_FAKE_PID\"\nexec sleep 20");
    put(d, "timeseries.csv", ts_header);
    struct sigaction sa = {.sa_handler = on_alarm};
    sigaction(SIGALRM, &sa, NULL);
    struct itimerval it = {.it_value = {0, 300000}};
    stop_flag = 0;
    setitimer(ITIMER_REAL, &it, NULL);
    double t0 = now();
    int n = plot_dir(d, &stop_flag, err, sizeof err);
    double took = now() - t0;
    assert_int_equal(n, PLOT_STOPPED);
    assert_non_null(strstr(err, "interrupted while drawing"));
    if (took > 1.0)
        fail_msg("plot_dir took %.2f s to stop", took);
    FILE *f = fopen(pidfile, "r");
    assert_non_null(f);
    long pid = 0;
    assert_int_equal(fscanf(f, "%ld", &pid), 1);
    fclose(f);
    assert_int_equal(kill((pid_t)pid, 0), -1); /* gone, and reaped */
    assert_int_equal(errno, ESRCH);
    unlink(pidfile);
    assert_int_equal(temporaries(d), 0);
    assert_false(present(d, "load.png"));
    unfake(bin);
    rmtree(d);
    free(d);
}

/* ---- a hostile sweep drawn by the real gnuplot ---- */

static void hostile_sweep(void **state)
{
    (void)state;
    if (!have_gnuplot())
        skip();
    char *d = mktempdir(), err[1024], text[2048];
    const char *k1 = "x'.system(\"touch pwned\").'", *k2 = "y`touch pwned2`@k";
    snprintf(text, sizeof text, "field,value\nkey,%s\nkey,%s\n", k1, k2);
    put(d, "experiment.csv", text);
    snprintf(text, sizeof text,
             "point,%s,%s,ok_share,ok_share_hw,amplification,amplification_hw,lat_p99,lat_p99_hw\n"
             "0,a'b,`touch pwned3`,0.5,0.1,1,0,0.2,0.01\n1,a'b,@x,0.6,0.1,1.2,0,0.3,0.01\n"
             "2,c\\,`touch pwned3`,0.7,0.1,1.4,0,0.4,0.01\n3,c\\,@x,0.8,0.1,1.6,0,0.5,0.01\n",
             k1, k2);
    put(d, "sweep.csv", text);
    int n = plot_dir(d, NULL, err, sizeof err);
    if (n != 6)
        fail_msg("plot_dir returned %d: %s", n, err);
    assert_true(present(d, "sweep_lat_p99.svg"));
    assert_false(present(d, "pwned"));
    assert_false(present(d, "pwned2"));
    assert_false(present(d, "pwned3"));
    assert_int_equal(temporaries(d), 0);
    rmtree(d);
    free(d);
}

/* ---- decimation for drawing (plotdec.h) ---- */

/* 10^5 buckets of a flat series with a spike of one bucket and a dip of
 * another, decimated: at most 2 x PLOTDEC_GROUPS rows, the spike's and the
 * dip's values among them, the first and the last t kept, t in order, the
 * mean column the series' mean; twice the same bytes. */
static char *decimated(size_t *rows)
{
    static const char *const keys[] = {NULL}, *const means[] = {"x", NULL};
    char err[256] = "", line[64], *text = NULL;
    size_t len = 0;
    struct plotdec *d = plotdec_new("t,x,y", keys, means, err, sizeof err);
    assert_non_null(d);
    for (int pass = 0; pass < 2; pass++) {
        FILE *out = pass ? open_memstream(&text, &len) : NULL;
        if (pass) {
            assert_int_equal(plotdec_plan(d, PLOTDEC_GROUPS), 49); /* ceil(10^5 / 2048) */
            plotdec_header(d, out);
        }
        for (int i = 0; i < 100000; i++) {
            snprintf(line, sizeof line, "%g,%d,%s", i * 0.001, i == 77777 ? 999 : i == 31313 ? 0 : 5,
                     i % 2 ? "" : "1");
            assert_int_equal(pass ? plotdec_row(d, line, out, err, sizeof err) : plotdec_count(d, line, err, sizeof err), 0);
        }
        if (pass)
            plotdec_finish(d, out), fclose(out);
    }
    plotdec_free(d);
    *rows = 0;
    for (const char *p = text; *p; p++)
        *rows += *p == '\n';
    return text;
}

static void decimation(void **state)
{
    (void)state;
    size_t rows, rows2;
    char *text = decimated(&rows), *again = decimated(&rows2);
    assert_string_equal(text, again);
    assert_true(rows - 1 <= 2 * PLOTDEC_GROUPS && rows - 1 >= PLOTDEC_GROUPS);
    assert_true(strncmp(text, "t,x,y,x_mean\n0,5,1,", 19) == 0);
    assert_non_null(strstr(text, ",999,1,")); /* the spike, between t 77.77 and 77.811 */
    assert_non_null(strstr(text, ",0,1,")); /* the dip */
    assert_non_null(strstr(text, "\n99.999,5,1,"));
    double last = -1, t, x, mean;
    int seen = 0;
    for (char *l = strchr(text, '\n') + 1; *l; l = strchr(l, '\n') + 1) {
        assert_int_equal(sscanf(l, "%lf,%lf,", &t, &x), 2);
        assert_true(t > last);
        if (x == 999)
            assert_true(t >= 77.77 - 1e-9 && t <= 77.811 + 1e-9), seen++;
        mean = atof(strrchr(l, ',') + 1);
        assert_true(mean > 4.9 && mean < 25.5);
        last = t;
    }
    assert_int_equal(seen, 1);
    assert_true(last > 99.998);
    free(text), free(again);
}

/* A plotted run's timeseries.csv of 10^5 buckets: gnuplot gets (in
 * datablocks, counted by a fake) at most 2 x PLOTDEC_GROUPS rows of it,
 * and the file is left whole (and not named in the script for gnuplot to
 * read). */
static void plot_data_bounded(void **state)
{
    (void)state;
    char *d = mktempdir(), cmd[1024];
    snprintf(cmd, sizeof cmd, "awk 'BEGIN { print \"%.*s\"; for (i = 0; i < 100000; i++) "
                              "printf \"%%g,1,%%d,1,0,1,1,0.1,0.2\\n\", i / 1000, i == 500 ? 7777 : 1 }' > %s/timeseries.csv",
             (int)strlen(ts_header) - 1, ts_header, d);
    assert_int_equal(system(cmd), 0);
    char *bin = fake_gnuplot("cat >> \"$0.in\"; echo x >&3");
    char err[1024] = "";
    int n = plot_dir(d, NULL, err, sizeof err);
    if (n != 6)
        fail_msg("plot_dir returned %d: %s", n, err);
    snprintf(cmd, sizeof cmd, "awk '/^\\$ts_data << EOD$/ { n = 0; on = 1; next } /^EOD$/ { if (n > m) m = n; on = 0 } "
                              "on { n++ } /\\047timeseries\\.csv\\047/ { whole = 1 } END { exit !(m > 1000 && m <= %d && !whole) }' %s/gnuplot.in",
             2 * PLOTDEC_GROUPS + 1, bin);
    assert_int_equal(system(cmd), 0);
    snprintf(cmd, sizeof cmd, "grep -q ',7777,' %s/gnuplot.in && [ $(wc -l < %s/timeseries.csv) = 100001 ]", bin, d);
    assert_int_equal(system(cmd), 0);
    unfake(bin);
    rmtree(d);
    free(d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(quote_exact),          cmocka_unit_test(quote_refuses),
        cmocka_unit_test(quote_long),           cmocka_unit_test(quote_gnuplot),
        cmocka_unit_test(malformed_run),        cmocka_unit_test(malformed_comparison),
        cmocka_unit_test(malformed_sweep),      cmocka_unit_test(not_a_directory),
        cmocka_unit_test(stderr_shown),         cmocka_unit_test(stops_promptly),
        cmocka_unit_test(hostile_sweep),        cmocka_unit_test(malformed_services),
        cmocka_unit_test(services_rows_bounded), cmocka_unit_test(services_drawn),
        cmocka_unit_test(malformed_caches),     cmocka_unit_test(caches_rows_bounded),
        cmocka_unit_test(caches_drawn),         cmocka_unit_test(style_options),
        cmocka_unit_test(decimation),           cmocka_unit_test(plot_data_bounded),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
