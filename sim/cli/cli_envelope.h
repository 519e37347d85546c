/*
 * cli_envelope — the `map` and `margin` commands (envelope.h): their
 * options, the table they print and the phase diagram. Each returns the
 * exit code: 0, 1 (a run or write failed), 2 (bad input, nothing written)
 * or 128 + signal when stop was set.
 */
#ifndef RS_CLI_ENVELOPE_H
#define RS_CLI_ENVELOPE_H

#include <signal.h>

int cmd_map(int argc, char **argv, volatile sig_atomic_t *stop);
int cmd_margin(int argc, char **argv, volatile sig_atomic_t *stop);

#endif
