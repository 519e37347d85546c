/*
 * help — commands' help and the metrics' reference. See help.h.
 */
#include "help.h"

#include <string.h>

#include "scenario.h"

struct command_help {
    const char *name, *summary, *text;
};

static const struct command_help commands[] = {
    {"run", "run a scenario once (or --reps times) and write its outputs",
     "usage: retrystorm [run] [SCENARIO] [-o DIR] [--set SECTION.KEY=VALUE]... [--seed N]\n"
     "                  [--reps N [-j N] [--quiet|--progress]] [--plot] [--force] [--format text|json]\n"
     "                  [--max-memory SIZE]\n"
     "\n"
     "SCENARIO   a built-in's name (retrystorm list) or a scenario file; default: storm\n"
     "-o DIR     where the outputs go (default: out/<name>/)\n"
     "--set K=V  override or add any key, e.g. layer.app.attempts=1, phase.spike.rate=x3\n"
     "--seed N   the same as --set run.seed=N (default: the scenario's seed)\n"
     "--reps N   N replications: summary.csv holds means, sd and 95 % half-widths (default 1)\n"
     "-j N       threads for the replications (default: one per core)\n"
     "--quiet, --progress  never or always show the replications' progress (default: on a terminal)\n"
     "--plot     draw the figures with gnuplot\n"
     "--force    write into a directory that is not a retrystorm output\n"
     "--format json  print summary.json on stdout (the human summary goes to stderr)\n"
     "--max-memory SIZE  stop a run whose requests in flight hold more (default 4GB): what was done\n"
     "           is written, marked complete = 0, exit 1\n"
     "\n"
     "examples:\n"
     "  retrystorm run storm --plot\n"
     "  retrystorm run storm --set layer.app.attempts=1 -o out/no-retries\n"
     "  retrystorm run payments --reps 10\n"
     "  retrystorm run storm --format json | jq '.rows[0].lat_p99'\n"},
    {"compare", "run variants of a scenario on the same seed, side by side",
     "usage: retrystorm compare SCENARIO --vary KEY=V1,V2,... [--vary ...] [--reps N] [-j N] [-o DIR]\n"
     "                  [--set ...] [--seed N] [--plot] [--force] [--format text|json]\n"
     "                  [--sort METRIC] [--max-memory SIZE]\n"
     "\n"
     "--vary KEY=V1,V2  one variant per value (several --vary: every combination)\n"
     "--reps N          replications per variant, with 95 % half-widths (default 1)\n"
     "-j N              threads for a variant's replications (default: one per core; the\n"
     "                  results are the same bytes whatever N)\n"
     "--sort METRIC     order the table: max:METRIC, min:METRIC or METRIC (smallest first);\n"
     "                  default: the variants' order\n"
     "-o DIR            default: out/<name>-compare/\n"
     "--set, --seed, --plot, --force, --format, --max-memory as for run\n"
     "\n"
     "examples:\n"
     "  retrystorm compare jitter --vary layer.app.backoff=none,exponential,full,equal,decorrelated --plot\n"
     "  retrystorm compare herd --vary layer.app.backoff=exponential,full --reps 10\n"
     "  retrystorm compare storm --vary layer.app.attempts=1..5 --reps 5 --sort min:lat_p99\n"},
    {"sweep", "run a grid of parameter values, with replications, on every core",
     "usage: retrystorm sweep SCENARIO --grid KEY=V1,V2,...|KEY=A..B[*F|+S] [--grid ...] [--reps N]\n"
     "                  [-j N] [--shard K/N] [-o DIR] [--set ...] [--quiet|--progress] [--plot]\n"
     "                  [--resume] [--force] [--format text|json] [--sort METRIC] [--max-memory SIZE]\n"
     "\n"
     "--grid      an axis: a list, A..B (step 1), A..B*F (geometric) or A..B+S; units allowed\n"
     "--reps N    replications per point (default 1)\n"
     "-j N        threads (default: one per core)\n"
     "--shard K/N run only jobs j with j mod N = K-1 (merge them with retrystorm merge)\n"
     "--resume    finish an interrupted sweep in DIR\n"
     "--sort M    order the table by max:M, min:M or M (default max:ok_share); past 10\n"
     "            points it shows the first and last 5 (sweep.csv has them all)\n"
     "--format json  print summary.json (sweep.csv's rows) on stdout\n"
     "--max-memory SIZE  as for run (a run past it fails the sweep)\n"
     "\n"
     "examples:\n"
     "  retrystorm sweep storm --grid layer.app.attempts=1..4 --grid layer.app.timeout=100ms..800ms*2 --reps 4\n"
     "  retrystorm sweep storm --grid load.rate=600/s..1000/s+100/s --shard 1/4 -o part1\n"},
    {"merge", "merge the shard directories of a sweep",
     "usage: retrystorm merge DIR... -o OUT [--plot] [--force] [--format text|json] [--sort M]\n"
     "\n"
     "Reads every shard's jobs.csv (as hostile input) and writes OUT/sweep.csv, byte for byte\n"
     "what one machine would have written.\n"
     "\n"
     "example:\n"
     "  retrystorm merge part1 part2 part3 part4 -o sweep\n"},
    {"tune", "search a grid for the best parameters under constraints",
     "usage: retrystorm tune SCENARIO --grid ... --objective max:METRIC|min:METRIC...\n"
     "                  [--constraint 'METRIC<=VALUE'...] [--reps N] [-j N] [-o DIR]\n"
     "                  [--set ...] [--seed N] [--quiet|--progress] [--resume] [--force]\n"
     "                  [--format text|json] [--max-memory SIZE]\n"
     "\n"
     "METRIC is a column of summary.csv: retrystorm list metrics\n"
     "--objective max:M|min:M  what to optimise; more than one: the Pareto front\n"
     "--constraint 'M<=V'      a limit each recommended point clears on its 95 % interval\n"
     "--set, --seed, --reps, -j, --quiet, --progress, --resume, --force, --max-memory as for sweep\n"
     "--format json  print summary.json (tune.csv's ranked rows) on stdout\n"
     "\n"
     "examples:\n"
     "  retrystorm tune storm --grid layer.app.attempts=1..4 --objective max:ok_share --reps 5\n"
     "  retrystorm tune storm --grid layer.app.timeout=100ms..1600ms*2 --objective max:goodput \\\n"
     "      --constraint 'lat_p99<=1'\n"},
    {"plot", "draw the figures of an output directory with gnuplot",
     "usage: retrystorm plot DIR [--force] [--title TEXT] [--size WxH] [--font-scale F]\n"
     "                  [--style slide|default] [--animate]\n"
     "\n"
     "--title TEXT     the figures' title (default: the scenario's name)\n"
     "--size WxH       pixels, 320x240 to 7680x4320 (default 1200x900)\n"
     "--font-scale F   0.5 to 4 (default 1)\n"
     "--style slide    1920x1080, large type, thick lines, a colour-blind-safe palette\n"
     "--animate        also an animated GIF of the load building up\n"
     "\n"
     "examples:\n"
     "  retrystorm plot out/storm\n"
     "  retrystorm plot out/jitter-compare --style slide --animate\n"},
    {"check", "validate a scenario and report every problem at once",
     "usage: retrystorm check SCENARIO [--set ...]\n"
     "\n"
     "Exit 0 when the scenario is valid; 2 with every problem (file, line, key, value and\n"
     "what is allowed) otherwise.\n"
     "\n"
     "example:\n"
     "  retrystorm check my.ini\n"},
    {"list", "list the built-in scenarios, the library presets, the metrics or the keys",
     "usage: retrystorm list [presets|metrics|keys]\n"
     "\n"
     "examples:\n"
     "  retrystorm list\n"
     "  retrystorm list presets\n"
     "  retrystorm list metrics\n"
     "  retrystorm list keys      (every --set key and what it allows)\n"},
    {"serve", "a local web page for live demonstrations",
     "usage: retrystorm serve [--bind ADDR] [--port N] [--jobs N] [--max-seconds S] [--max-memory SIZE]\n"
     "\n"
     "--bind ADDR       IPv4 or IPv6 address (default 127.0.0.1)\n"
     "--port N          default 8080; 0 picks a free port\n"
     "--jobs N          runs at a time (default: one per core)\n"
     "--max-seconds S   wall-clock limit per run (default 10)\n"
     "--max-memory SIZE memory of all runs together (default 2GB; each reserves its state and\n"
     "                  512 MB for what is in flight, and waits while others hold it)\n"
     "\n"
     "examples:\n"
     "  retrystorm serve              then open http://127.0.0.1:8080/\n"
     "  retrystorm serve --port 0\n"},
    {"help", "help on a command, or on the metrics",
     "usage: retrystorm help [COMMAND|metrics]\n"
     "       retrystorm COMMAND --help\n"},
};
#define NCOMMANDS (sizeof commands / sizeof commands[0])

/* The columns of summary.csv (and of sweep.csv, tune.csv and jobs.csv,
 * which keep the metrics without scenario, seed and wall_s). */
static const struct metric_help {
    const char *name, *unit, *meaning;
} metrics[] = {
    {"scenario", "name", "the scenario's name"},
    {"seed", "integer", "the seed the run used"},
    {"reps", "count", "(--reps) the replications the means are over"},
    {"requests", "count", "logical requests that arrived after warm-up"},
    {"ok", "count", "requests that ended ok"},
    {"business", "count", "requests that ended with a business error (never retried)"},
    {"exhausted", "count", "requests whose every attempt failed (attempts used up)"},
    {"failed", "count", "requests that ended with an error their layer does not retry"},
    {"deadline", "count", "requests whose deadline passed"},
    {"throttled", "count", "requests refused at once by a retry budget or rate limiter"},
    {"breaker", "count", "requests refused at once by an open circuit breaker"},
    {"in_flight", "count", "requests with no outcome when the run ended"},
    {"ok_share", "fraction", "ok / requests (likewise business_share ... in_flight_share)"},
    {"business_share", "fraction", "business / requests"},
    {"exhausted_share", "fraction", "exhausted / requests"},
    {"failed_share", "fraction", "failed / requests"},
    {"deadline_share", "fraction", "deadline / requests"},
    {"throttled_share", "fraction", "throttled / requests"},
    {"breaker_share", "fraction", "breaker / requests"},
    {"in_flight_share", "fraction", "in_flight / requests"},
    {"attempts_mean", "attempts", "attempts per request at the clients' outermost layer"},
    {"attempts_max", "attempts", "the most attempts one request made at that layer"},
    {"amplification", "ratio", "server arrivals per logical request"},
    {"server_arrivals", "count", "attempts that reached the (first) service"},
    {"server_completions", "count", "executions the service completed"},
    {"rejected", "count", "attempts turned away by a full queue (503)"},
    {"limited", "count", "attempts answered by the service's rate limiter"},
    {"dropped", "count", "queued work dropped because its caller had given up (drop_expired)"},
    {"wasted", "count", "completed executions nobody was waiting for any more"},
    {"side_effects", "count", "executions with a side effect (not idempotent)"},
    {"duplicates", "count", "side effects beyond the first for one request"},
    {"retry_after_waits", "count", "retries that waited for a Retry-After"},
    {"hedges", "count", "copies a hedged layer sent while another was out, or at once after a hedge_on failure"},
    {"hedge_wins", "count", "hedged calls won by a hedge (not by the first copy or a retry)"},
    {"cancelled", "count", "calls ended and running executions stopped by a cancellation"},
    {"cancelled_before_start", "count", "attempts dropped unstarted by a cancellation: overtaken on the hop, or queued"},
    {"err_<class>", "count", "failed attempts of each class: timeout conn 400 403 404 409 429 500 502 503 504 "
                             "deadline throttled breaker (bulkhead with services)"},
    {"lat_mean", "s", "mean latency of requests that ended"},
    {"lat_p50", "s", "median latency of requests that ended"},
    {"lat_p90", "s", "90th percentile latency"},
    {"lat_p99", "s", "99th percentile latency"},
    {"lat_p999", "s", "99.9th percentile latency"},
    {"lat_max", "s", "the longest latency"},
    {"ok_lat_mean", "s", "mean latency of requests that ended ok"},
    {"ok_lat_p99", "s", "99th percentile latency of requests that ended ok"},
    {"goodput", "1/s", "ok requests per second after warm-up"},
    {"peak_server_rate", "1/s", "the busiest bucket's server arrivals"},
    {"peak_rate_1s", "1/s", "(compare) the busiest second's server arrivals: a 1 s mean"},
    {"recovered", "0/1", "1 when ok reached 90 % of offered in a 10 s window after the last phase; empty without phases"},
    {"recovery_s", "s", "from the end of the last phase to that window; empty when it never came"},
    {"complete", "0/1", "0 when the run was interrupted"},
    {"events", "count", "events dispatched"},
    {"wall_s", "s", "wall-clock time of the run (the only column that differs between equal runs)"},
    {"<service>_utilization", "fraction", "(services) workers held / workers, after warm-up"},
    {"<service>_wasted", "count", "(services) wasted executions at that service, after warm-up"},
    {"<cache>_hit_ratio", "fraction", "(caches) hits / lookups, after warm-up"},
    {"<metric>_hw", "as the metric", "(--reps, sweep, compare) the 95 % Student-t half-width"},
    {"<metric>_sd", "as the metric", "(--reps, sweep) the standard deviation over replications"},
};

int help_is_command(const char *name)
{
    for (size_t i = 0; i < NCOMMANDS; i++)
        if (strcmp(name, commands[i].name) == 0)
            return 1;
    return 0;
}

const char *help_suggest_command(const char *word)
{
    const char *names[NCOMMANDS + 1];
    for (size_t i = 0; i < NCOMMANDS; i++)
        names[i] = commands[i].name;
    names[NCOMMANDS] = NULL;
    return scenario_nearest(word, names);
}

void help_list_metrics(FILE *f)
{
    fprintf(f, "%-24s %-14s %s\n", "metric", "unit", "meaning");
    for (size_t i = 0; i < sizeof metrics / sizeof metrics[0]; i++)
        fprintf(f, "%-24s %-14s %s\n", metrics[i].name, metrics[i].unit, metrics[i].meaning);
}

int help_print(FILE *f, const char *topic)
{
    if (topic == NULL) {
        fputs("usage: retrystorm COMMAND [ARGS]   (without a command: run)\n\ncommands:\n", f);
        for (size_t i = 0; i < NCOMMANDS; i++)
            fprintf(f, "  %-9s %s\n", commands[i].name, commands[i].summary);
        fputs("\nretrystorm help COMMAND, or COMMAND --help, for its options and examples;\n"
              "retrystorm help metrics for the columns of summary.csv; retrystorm --version.\n",
              f);
        return 0;
    }
    if (strcmp(topic, "metrics") == 0) {
        help_list_metrics(f);
        return 0;
    }
    for (size_t i = 0; i < NCOMMANDS; i++)
        if (strcmp(topic, commands[i].name) == 0) {
            fprintf(f, "retrystorm %s: %s\n\n%s", commands[i].name, commands[i].summary, commands[i].text);
            return 0;
        }
    const char *s = help_suggest_command(topic);
    fprintf(stderr, "retrystorm: help: no topic '%s'%s%s%s (topics: the commands, and metrics)\n", topic,
            s ? "; did you mean '" : "", s ? s : "", s ? "'?" : "");
    return 2;
}
