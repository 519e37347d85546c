/*
 * help — commands' help and the metrics' reference. See help.h.
 */
#include "help.h"

#include "summary.h"

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
     "--quiet, --progress  never or always show the replications' progress (default: on a terminal);\n"
     "                 --quiet also hides the lint's warnings (retrystorm help check)\n"
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
     "                  [--sort METRIC|KEY] [--label VARIANT=TEXT] [--max-memory SIZE]\n"
     "\n"
     "--vary KEY=V1,V2  one variant per value (several --vary: every combination); a variant's\n"
     "                  label is KEY=VALUE by the key's shortest unambiguous form (attempts=3,\n"
     "                  or app.attempts=3 with two layers), joined by '+'\n"
     "--reps N          replications per variant, with 95 % half-widths (default 1)\n"
     "-j N              threads for a variant's replications (default: one per core; the\n"
     "                  results are the same bytes whatever N)\n"
     "--sort METRIC     order the table: max:METRIC, min:METRIC or METRIC (smallest first), or\n"
     "                  by a varied KEY (its last parts will do) with its units; default: the\n"
     "                  variants' order\n"
     "--label V=TEXT    name variant V (its label, or a longer form of its keys) TEXT in the\n"
     "                  table and the figures (labels.csv); TEXT may hold '=' but no comma\n"
     "-o DIR            default: out/<name>-compare/\n"
     "--set, --seed, --plot, --force, --format, --max-memory as for run\n"
     "\n"
     "examples:\n"
     "  retrystorm compare jitter --vary layer.app.backoff=none,exponential,full,equal,decorrelated --plot\n"
     "  retrystorm compare herd --vary layer.app.backoff=exponential,full --reps 10\n"
     "  retrystorm compare storm --vary layer.app.attempts=1..5 --reps 5 --sort min:lat_p99\n"
     "  retrystorm compare jitter --vary layer.app.backoff=none,full --label 'backoff=full=Full jitter' --plot\n"},
    {"sweep", "run a grid of parameter values, with replications, on every core",
     "usage: retrystorm sweep SCENARIO --grid KEY=V1,V2,...|KEY=A..B[*F|+S] [--grid ...] [--reps N]\n"
     "                  [-j N] [--shard K/N] [-o DIR] [--set ...] [--quiet|--progress] [--plot]\n"
     "                  [--resume] [--force] [--format text|json] [--sort METRIC|KEY] [--max-memory SIZE]\n"
     "\n"
     "--grid      an axis: a list, A..B (step 1), A..B*F (geometric) or A..B+S; units allowed\n"
     "--reps N    replications per point (default 1)\n"
     "-j N        threads (default: one per core)\n"
     "--shard K/N run only jobs j with j mod N = K-1 (merge them with retrystorm merge)\n"
     "--resume    finish an interrupted sweep in DIR\n"
     "--sort M    order the table by max:M, min:M or M (default max:ok_share), M a metric or\n"
     "            a grid key (queue, server.queue: its values with their units); past 10\n"
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
     "examples:\n"
     "  retrystorm sweep storm --grid layer.app.attempts=1..4 --shard 1/2 -o shard1\n"
     "  retrystorm sweep storm --grid layer.app.attempts=1..4 --shard 2/2 -o shard2\n"
     "  retrystorm merge shard1 shard2 -o sweep\n"},
    {"tune", "search a grid for the best parameters under constraints",
     "usage: retrystorm tune SCENARIO --grid ... --objective max:METRIC|min:METRIC...\n"
     "                  [--constraint 'METRIC<=VALUE'...] [--reps N] [-j N] [-o DIR]\n"
     "                  [--set ...] [--seed N] [--quiet|--progress] [--resume] [--force]\n"
     "                  [--format text|json] [--max-memory SIZE] [--trigger KEY=A..B [--level P]]\n"
     "\n"
     "METRIC is a column of summary.csv: retrystorm list metrics\n"
     "--trigger KEY=A..B       also each point's margin (as retrystorm margin): the metrics margin\n"
     "                         (largest trigger recovering with probability >= P) and margin_fails\n"
     "--level P                the margin's recovery probability, in (0, 1) (default 0.95)\n"
     "--objective max:M|min:M  what to optimise; more than one: the Pareto front\n"
     "--constraint 'M<=V'      a limit each recommended point clears on its 95 % interval\n"
     "--set, --seed, --reps, -j, --quiet, --progress, --resume, --force, --max-memory as for sweep\n"
     "--format json  print summary.json (tune.csv's ranked rows) on stdout\n"
     "\n"
     "examples:\n"
     "  retrystorm tune storm --grid layer.app.attempts=1..4 --objective max:ok_share --reps 5\n"
     "  retrystorm tune storm --grid layer.app.timeout=100ms..1600ms*2 --objective max:goodput \\\n"
     "      --constraint 'lat_p99<=1'\n"
     "  retrystorm tune storm --grid layer.app.attempts=1..3 --objective max:margin \\\n"
     "      --trigger phase.spike.rate=x1..x4 --constraint 'lat_p99<=1'\n"},
    {"hysteresis", "ramp the load up and back down: where goodput tips, where it returns",
     "usage: retrystorm hysteresis SCENARIO --load load.rate=A..B [--ramp DURATION] [--hold DURATION]\n"
     "                  [--window DURATION] [--reps N] [-j N] [-o DIR] [--set ...] [--seed N]\n"
     "                  [--plot] [--force] [--max-memory SIZE]\n"
     "\n"
     "The scenario's phases are replaced by a lead at A (ramp/10), a linear ramp A->B, a hold\n"
     "at B, a ramp B->A and a tail at A (ramp/5). In windows, a window is out of band when\n"
     "goodput (ok/s) < 90 % of the offered requests/s. tip: the load of the first window of\n"
     "the way up that begins 3 windows out of band; return: the load of the first window after\n"
     "the peak that begins 3 in band; gap = tip - return (the bistability).\n"
     "--load K=A..B  the load ramped: load.rate (an open loop), A < B rates, e.g. 5/s..15/s\n"
     "--ramp D       each ramp's duration (default 300s: slow against timeouts of seconds)\n"
     "--hold D       time held at B (default 0)\n"
     "--window D     the measuring window, whole buckets (default 5s); a ramp spans >= 20\n"
     "--reps N       replications, seeded (seed, r) as sweep's (default 1); -j N threads\n"
     "-o DIR         default: out/<name>-hysteresis/ (hysteresis.csv, thresholds.csv,\n"
     "               scenario.ini; --plot: hysteresis.png/svg, the loop)\n"
     "--set, --seed, --plot, --force, --max-memory as for run\n"
     "\n"
     "examples:\n"
     "  retrystorm hysteresis orbit --load load.rate=2/s..14/s --reps 20 --plot\n"
     "  retrystorm hysteresis collapse --load load.rate=200/s..800/s --ramp 120s --reps 20\n"},
    {"map", "the vulnerability map: where recovery gives way, load by load, by bisection",
     "usage: retrystorm map SCENARIO --load KEY=VALUES --trigger KEY=A..B [--duration KEY=VALUES]\n"
     "                  [--reps N] [--batch N] [--level P] [--resolution R] [-j N] [-o DIR]\n"
     "                  [--set ...] [--seed N] [--plot] [--force] [--resume]\n"
     "\n"
     "For each load (and duration), bisects the trigger range for the size at which the share of\n"
     "runs that recover crosses P. Each probe runs batches of replications and stops once the\n"
     "Wilson 95 % interval of its share excludes P (or at N runs: undecided).\n"
     "--load KEY=VALUES      the loads, as --grid takes them (600/s,700/s,800/s)\n"
     "--trigger KEY=A..B     the trigger's range, A < B, one unit (phase.spike.rate=x1.2..x4)\n"
     "--duration KEY=VALUES  a second axis of cells (phase.spike.end=65s,70s); default: none\n"
     "--reps N               most replications per probe (default: the fewest that can decide\n"
     "                       a probe at P, at least 20: 20 at 0.5, 73 at margin's 0.95)\n"
     "--batch N              replications between early-stopping checks (default 5)\n"
     "--level P              the recovery probability of the boundary, in (0, 1) (default 0.5)\n"
     "--resolution R         stop bisecting at this width, in the trigger's unit (default (B-A)/32)\n"
     "-j N                   threads (default: one per core; the same bytes whatever N)\n"
     "-o DIR                 default: out/map/ (map.csv, boundary.csv, envelope.csv, map.png)\n"
     "--plot                 the phase diagram (load x trigger, coloured by recovery share)\n"
     "--resume               finish an interrupted map in DIR: the probes it settled are reused\n"
     "\n"
     "examples:\n"
     "  retrystorm map storm --load load.rate=600/s,700/s,800/s --trigger phase.spike.rate=x1.2..x4 --reps 5 --plot\n"},
    {"margin", "the largest trigger a configuration survives with recovery probability >= P",
     "usage: retrystorm margin SCENARIO --trigger KEY=A..B [--level P] [--reps N] [--batch N]\n"
     "                  [--resolution R] [-j N] [-o DIR] [--set ...] [--seed N] [--force] [--resume]\n"
     "\n"
     "The same bisection as map on the scenario's own load, at --level (default 0.95): prints\n"
     "the largest probe that recovered with share >= P and the smallest that did not, each with\n"
     "its Wilson 95 % interval. Writes margin.csv (the probes) and boundary.csv.\n"
     "-o DIR  default: out/margin/; other options as for map\n"
     "\n"
     "example:\n"
     "  retrystorm margin storm-budget --trigger phase.spike.rate=x1..x4 --reps 20\n"},
    {"plot", "draw the figures of an output directory with gnuplot",
     "usage: retrystorm plot DIR [--force] [--title TEXT] [--label VARIANT=TEXT] [--size WxH]\n"
     "                  [--font-scale F] [--style slide|default] [--animate]\n"
     "\n"
     "--title TEXT     the figures' whole title; a service's figure adds its name (default:\n"
     "                  the scenario's name and what the figure shows)\n"
     "--label V=TEXT   a comparison's variant V drawn as TEXT in the legends (after\n"
     "                  compare --label's, kept in labels.csv)\n"
     "--size WxH       pixels, 320x240 to 7680x4320 (default 1200x900)\n"
     "--font-scale F   0.5 to 4 (default 1)\n"
     "--style slide    1920x1080, large type, thick lines, a colour-blind-safe palette\n"
     "--animate        only the animated GIF of the load building up (load.gif or\n"
     "                 compare.gif), on the same axes as its PNG; no PNG or SVG\n"
     "\n"
     "examples:\n"
     "  retrystorm plot out/storm\n"
     "  retrystorm plot out/jitter-compare --style slide\n"
     "  retrystorm plot out/jitter-compare --style slide --animate\n"},
    {"check", "validate a scenario and report every problem at once",
     "usage: retrystorm check SCENARIO [--set ...] [--strict]\n"
     "\n"
     "Exit 0 when the scenario is valid; 2 with every problem (file, line, key, value and\n"
     "what is allowed) otherwise. A valid scenario's services are listed with their\n"
     "baseline load (requests/s, cache hit ratio, mean hold, workers x replicas,\n"
     "utilisation per replica), then the lint's warnings: utilisation >= 0.9, over\n"
     "capacity (>= 1, printed as error:), stale work behind an unbounded queue, an inner\n"
     "layer outlasting its caller's timeout, more than 10 attempts per request along a\n"
     "path (docs/lint.md). run prints the same warnings to stderr (not with --quiet).\n"
     "\n"
     "--strict         every warning is an error: exit 2\n"
     "\n"
     "examples:\n"
     "  retrystorm check my.ini\n"
     "  retrystorm check cascade --strict\n"
     "  # exits: 2 (its lint warnings are errors under --strict)\n"},
    {"list", "list the built-in scenarios, the library presets, the metrics or the keys",
     "usage: retrystorm list [presets|metrics|keys]\n"
     "\n"
     "examples:\n"
     "  retrystorm list\n"
     "  retrystorm list presets\n"
     "  retrystorm list metrics\n"
     "  retrystorm list keys      # every --set key and what it allows\n"},
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
     "  retrystorm serve              # then open http://127.0.0.1:8080/\n"
     "  retrystorm serve --port 0\n"},
    {"help", "help on a command, or on the metrics",
     "usage: retrystorm help [COMMAND|metrics]\n"
     "       retrystorm COMMAND --help\n"},
};
#define NCOMMANDS (sizeof commands / sizeof commands[0])

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

/* The columns of summary.csv and every experiment's table: the one
 * descriptor table (summary.h). */
void help_list_metrics(FILE *f) { summary_list(f); }

int help_print(FILE *f, const char *topic)
{
    if (topic == NULL) {
        fputs("usage: retrystorm COMMAND [ARGS]   (without a command: run)\n\ncommands:\n", f);
        for (size_t i = 0; i < NCOMMANDS; i++)
            fprintf(f, "  %-10s %s\n", commands[i].name, commands[i].summary);
        fputs("\nretrystorm help COMMAND, or COMMAND --help, for its options and examples;\n"
              "retrystorm help metrics for the columns of summary.csv; retrystorm --version.\n",
              f);
        return 0;
    }
    if (strcmp(topic, "--help") == 0 || strcmp(topic, "-h") == 0)
        topic = "help"; /* help --help: help's own help, as COMMAND --help */
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
