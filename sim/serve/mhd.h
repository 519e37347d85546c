/*
 * mhd — GNU libmicrohttpd, loaded by `retrystorm serve` when it starts
 * (dlopen of RS_MHD_SONAME, the soname the build found) instead of with
 * every command: linked, it brought GnuTLS and eight more libraries into
 * every process, about 10 ms of start-up each (perf stat -r 10 retrystorm
 * --version: 13.6 ms of CPU linked, 3.8 ms not). serve.c calls the library
 * through the table below, whose members have the library's own types.
 * Loading is O(functions), once.
 */
#ifndef RS_MHD_H
#define RS_MHD_H

#include <microhttpd.h>
#include <stddef.h>

struct mhd_api {
    __typeof__(MHD_start_daemon) *start_daemon;
    __typeof__(MHD_stop_daemon) *stop_daemon;
    __typeof__(MHD_get_daemon_info) *get_daemon_info;
    __typeof__(MHD_lookup_connection_value) *lookup_connection_value;
    __typeof__(MHD_get_connection_info) *get_connection_info;
    __typeof__(MHD_create_response_from_buffer) *create_response_from_buffer;
    __typeof__(MHD_add_response_header) *add_response_header;
    __typeof__(MHD_queue_response) *queue_response;
    __typeof__(MHD_destroy_response) *destroy_response;
    __typeof__(MHD_create_post_processor) *create_post_processor;
    __typeof__(MHD_post_process) *post_process;
    __typeof__(MHD_destroy_post_processor) *destroy_post_processor;
    __typeof__(MHD_get_version) *get_version;
};

/* The library's functions, once mhd_load has returned 0. */
extern struct mhd_api mhd;

/* Loads the library and every function above (again: a no-op). Returns 0,
 * or -1 with what is missing and how to install it in err. */
int mhd_load(char *err, size_t errsz);

#endif
