/*
 * Fuzz target for the scenario parser and --set overrides (libFuzzer).
 *
 * The input is a scenario file; lines starting with "@set " are taken out
 * and applied as --set overrides. The oracle: no crash, no sanitizer
 * report, no hang; and when the scenario is accepted, its effective form
 * (scenario_write_ini) is accepted too and means the same thing, and a
 * small one (at most 2 simulated seconds and modest rates) runs to the
 * end with its outcomes adding up. Built with -DRS_FUZZ=ON and clang; the
 * same function replays the saved inputs in tests/fuzz/ in every build.
 */
#define _POSIX_C_SOURCE 200809L

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scenario.h"
#include "sim.h"
#include "trace.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 65536)
        return 0;
    char *text = malloc(size + 1);
    memcpy(text, data, size);
    text[size] = '\0';
    const char *sets[32];
    size_t nsets = 0;
    for (char *p = text; (p = strstr(p, "@set ")) != NULL && nsets < 32;) {
        char *nl = strchr(p, '\n');
        if (nl)
            *nl = '\0';
        sets[nsets++] = p + 5;
        p[0] = ';'; /* the line becomes a comment in the file */
        if (!nl)
            break;
        p = nl + 1;
    }
    struct scenario sc, again;
    struct scenario_diag d = {0};
    if (scenario_load_text(&sc, text, "fuzz", sets, nsets, &d) == 0) {
        char *ini = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&ini, &len);
        scenario_write_ini(&sc, f);
        fclose(f);
        struct scenario_diag d2 = {0};
        if (scenario_load_text(&again, ini, "effective", NULL, 0, &d2) != 0) {
            fprintf(stderr, "the effective scenario is refused: %s\n%s\n", d2.msg[0], ini);
            abort();
        }
        if (again.nlayers != sc.nlayers || again.duration != sc.duration ||
            again.nphases != sc.nphases || again.seed != sc.seed ||
            again.nservices != sc.nservices || again.entry != sc.entry || again.graph != sc.graph) {
            fprintf(stderr,
                    "the effective scenario means something else: layers %u/%u duration %lld/%lld "
                    "phases %u/%u seed %llu/%llu services %u/%u entry %u/%u graph %d/%d\n%s\n",
                    sc.nlayers, again.nlayers, (long long)sc.duration, (long long)again.duration,
                    sc.nphases, again.nphases, (unsigned long long)sc.seed,
                    (unsigned long long)again.seed, sc.nservices, again.nservices, sc.entry,
                    again.entry, (int)sc.graph, (int)again.graph, ini);
            abort();
        }
        scenario_diag_fini(&d2);
        free(ini);
        unsigned long long workers = 0; /* of every replica of every service */
        for (unsigned i = 0; i < sc.nservices; i++)
            workers += (unsigned long long)sc.services[i].workers * sc.services[i].replicas;
        /* a closed loop offers clients / think requests a second */
        bool small = sc.duration <= 2 * RS_S && sc.bucket >= RS_MS && sc.rate <= 2000 &&
                     sc.clients <= 2000 && workers <= 1000 &&
                     (sc.model != LOAD_CLOSED || sc.clients * 1e9 <= 2000 * dist_mean_ns(&sc.think));
        for (unsigned i = 0; i < sc.nphases; i++)
            small = small && (!sc.phases[i].has_rate || sc.phases[i].rate <= 10);
        if (small) {
            char err[512];
            struct sim *s = trace_sim_create(&sc, 0, err, sizeof err);
            if (s != NULL) {
                /* a run may refuse to go on when time stops advancing;
                 * any other failure is a broken invariant */
                if (sim_run(s, NULL, NULL, err, sizeof err) != 0 &&
                    strstr(err, "stopped advancing") == NULL) {
                    fprintf(stderr, "%s\n", err);
                    abort();
                }
                sim_destroy(s);
            }
        }
    }
    scenario_diag_fini(&d);
    free(text);
    return 0;
}

#ifndef RS_LIBFUZZER
/* Without libFuzzer: replay the files named on the command line. */
int main(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        FILE *f = fopen(argv[i], "rb");
        if (f == NULL) {
            perror(argv[i]);
            return 1;
        }
        static uint8_t buf[65536];
        size_t n = fread(buf, 1, sizeof buf, f);
        fclose(f);
        LLVMFuzzerTestOneInput(buf, n);
    }
    printf("%d inputs replayed\n", argc - 1);
    return 0;
}
#endif
