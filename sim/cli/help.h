/*
 * help — what `retrystorm help [TOPIC]`, `CMD --help` and `list metrics`
 * print, and did-you-mean for commands and options.
 *
 * One descriptor per command (synopsis, options with defaults, examples),
 * one per metric (the columns of summary.csv, sweep.csv and tune, with
 * unit and meaning). Everything is constant text; printing is O(text).
 */
#ifndef RS_HELP_H
#define RS_HELP_H

#include <stdio.h>

/* Whether name is a command (run, compare, ..., help). */
int help_is_command(const char *name);

/* Prints the help of topic (a command, or "metrics"); NULL: the overview
 * and the list of topics. Returns 0, or 2 after a message on stderr (with
 * a suggestion) when there is no such topic. */
int help_print(FILE *f, const char *topic);

/* The command nearest to word (at most 2 edits), or NULL. */
const char *help_suggest_command(const char *word);

/* Every metric: name, unit and meaning, one per line. */
void help_list_metrics(FILE *f);

#endif
