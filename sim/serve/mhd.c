/*
 * mhd — libmicrohttpd through dlopen. See mhd.h.
 */
#define _POSIX_C_SOURCE 200809L
#include "mhd.h"

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#ifndef RS_MHD_SONAME
#error "RS_MHD_SONAME: the build names the library's soname (CMakeLists.txt)"
#endif
#ifndef RS_MHD_PACKAGE
#define RS_MHD_PACKAGE "libmicrohttpd"
#endif

struct mhd_api mhd;

_Static_assert(sizeof(void *) == sizeof mhd.start_daemon, "dlsym gives functions as void *");

/* Each member of struct mhd_api and the symbol that fills it. */
#define MHD_FN(member) {"MHD_" #member, offsetof(struct mhd_api, member)}
static const struct {
    const char *symbol;
    size_t offset;
} fns[] = {
    MHD_FN(start_daemon),
    MHD_FN(stop_daemon),
    MHD_FN(get_daemon_info),
    MHD_FN(lookup_connection_value),
    MHD_FN(get_connection_info),
    MHD_FN(create_response_from_buffer),
    MHD_FN(add_response_header),
    MHD_FN(queue_response),
    MHD_FN(destroy_response),
    MHD_FN(create_post_processor),
    MHD_FN(post_process),
    MHD_FN(destroy_post_processor),
    MHD_FN(get_version),
};

/* The oldest libmicrohttpd serve's read deadline was checked against:
 * there a connection's socket is closed only after its CLOSED
 * notification (MHD_cleanup_connections), so the watchdog, which shuts
 * sockets down under the lock that notification takes, never reaches a
 * descriptor reused by another connection. */
#define MHD_OLDEST (0u << 24 | 9u << 16 | 75u << 8) /* 0.9.75, as version_number reads it */

/* "A.B.C" as 0xAABBCC00, or 0 when it is not one. */
static unsigned version_number(const char *v)
{
    unsigned a, b, c;
    if (v == NULL || sscanf(v, "%u.%u.%u", &a, &b, &c) != 3 || a > 255 || b > 255 || c > 255)
        return 0;
    return a << 24 | b << 16 | c << 8;
}

int mhd_load(char *err, size_t errsz)
{
    static void *lib;
    if (lib != NULL)
        return 0;
    void *h = dlopen(RS_MHD_SONAME, RTLD_NOW | RTLD_LOCAL);
    if (h == NULL) {
        snprintf(err, errsz, "cannot load %s (apt install %s): %s", RS_MHD_SONAME, RS_MHD_PACKAGE,
                 dlerror());
        return -1;
    }
    struct mhd_api api;
    for (size_t i = 0; i < sizeof fns / sizeof fns[0]; i++) {
        void *sym = dlsym(h, fns[i].symbol);
        if (sym == NULL) {
            snprintf(err, errsz, "%s has no %s: not the libmicrohttpd this binary was built with",
                     RS_MHD_SONAME, fns[i].symbol);
            dlclose(h);
            return -1;
        }
        /* a function's address, as POSIX has dlsym return it */
        memcpy((char *)&api + fns[i].offset, &sym, sizeof sym);
    }
    const char *v = api.get_version();
    if (version_number(v) < MHD_OLDEST) {
        snprintf(err, errsz, "%s is version %.20s; serve needs 0.9.75 or later", RS_MHD_SONAME, v ? v : "(none)");
        dlclose(h);
        return -1;
    }
    mhd = api;
    lib = h;
    return 0;
}
