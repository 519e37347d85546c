/*
 * cli — the command line: run, check, list, --help, --version.
 *
 * The only module that prints to the terminal or decides exit codes:
 * 0 success, 1 a failure while running or writing, 2 bad input or usage.
 */
#ifndef RS_CLI_H
#define RS_CLI_H

int cli_main(int argc, char **argv);

#endif
