/*
 * csvread — a reader of our own CSV files that treats them as hostile.
 * See csvread.h.
 */
#define _POSIX_C_SOURCE 200809L

#include "csvread.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Reads the regular file open at fd (size from fstat) into c->buf. */
static int read_all(struct csv *c, int fd, size_t maxbytes, char *err, size_t errsz)
{
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        snprintf(err, errsz, "%s: not a regular file", c->path);
        return -1;
    }
    if ((uint64_t)st.st_size > maxbytes) {
        snprintf(err, errsz, "%s: %lld bytes, more than the %zu this file may hold", c->path,
                 (long long)st.st_size, maxbytes);
        return -1;
    }
    size_t n = (size_t)st.st_size, got = 0;
    c->buf = malloc(n + 1);
    if (c->buf == NULL) {
        snprintf(err, errsz, "%s: out of memory for %zu bytes", c->path, n);
        return -1;
    }
    while (got < n) {
        ssize_t r = read(fd, c->buf + got, n - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        got += (size_t)r;
    }
    c->buf[got] = '\0';
    if (strlen(c->buf) != got) {
        snprintf(err, errsz, "%s: a NUL byte in the file", c->path);
        return -1;
    }
    return 0;
}

int csv_open(struct csv *c, const char *path, size_t maxbytes, char *err, size_t errsz)
{
    memset(c, 0, sizeof *c);
    snprintf(c->path, sizeof c->path, "%s", path);
    /* O_NONBLOCK: opening a fifo planted under our name must not hang */
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        snprintf(err, errsz, "%s: %s", path, strerror(errno));
        return errno == ENOENT ? 1 : -1;
    }
    int rc = read_all(c, fd, maxbytes, err, errsz);
    close(fd);
    if (rc != 0) {
        csv_close(c);
        return -1;
    }
    c->pos = c->buf;
    return 0;
}

size_t csv_next(struct csv *c, char **fields, size_t max, bool *more)
{
    *more = false;
    if (c->pos == NULL || *c->pos == '\0')
        return 0;
    char *line = c->pos, *nl = strchr(line, '\n');
    c->torn = nl == NULL;
    if (nl != NULL) {
        *nl = '\0';
        c->pos = nl + 1;
    } else {
        c->pos = line + strlen(line);
    }
    size_t len = strlen(line);
    if (len > 0 && line[len - 1] == '\r') /* a CRLF line end; a \r elsewhere stays, and is refused */
        line[len - 1] = '\0';
    c->line++;
    size_t n = 0;
    for (char *tok = line, *next; tok != NULL; tok = next) {
        next = strchr(tok, ',');
        if (next)
            *next++ = '\0';
        if (n == max) {
            *more = true;
            break;
        }
        fields[n++] = tok;
    }
    return n;
}

void csv_close(struct csv *c)
{
    free(c->buf);
    c->buf = c->pos = NULL;
}

bool csv_uint(const char *s, uint64_t max, uint64_t *out)
{
    if (*s < '0' || *s > '9')
        return false;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (*end != '\0' || errno == ERANGE || v > max)
        return false;
    *out = v;
    return true;
}

bool csv_double(const char *s, double *out)
{
    if (*s == '\0') {
        *out = NAN;
        return true;
    }
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (*end != '\0' || end == s || !isfinite(v))
        return false;
    *out = v;
    return true;
}
