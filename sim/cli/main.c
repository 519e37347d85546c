/* retrystorm — entry point; everything is in cli.c. */
#include "cli.h"

int main(int argc, char **argv) { return cli_main(argc, argv); }
