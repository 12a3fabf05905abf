/*
 * trace.c — reads the simulator's text traces, a format others can write:
 *
 *     CLIENT OP BLOCK [THINK_US]      # a comment
 *
 * one request per line; CLIENT a non-negative integer, OP one of R (demand read), W
 * (write), P (the compiler's prefetch hint for BLOCK), B (barrier: BLOCK is ignored),
 * BLOCK a non-negative integer (a block number), THINK_US the client's compute time
 * before this request in microseconds (a non-negative decimal, default 0).  Blank lines
 * and everything from `#` on are ignored.  Lines give each client's program order.
 * Several files are several applications: their clients are numbered in turn (file 1's
 * clients first) and each file's barriers are its own.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sim.h"

static int bad(const char *path, unsigned long line, const char *why, const char *tok,
               size_t len)
{
    if (tok)
        fprintf(stderr, "%s:%lu: %s: '%.*s'\n", path, line, why, (int)(len > 60 ? 60 : len),
                tok);
    else
        fprintf(stderr, "%s:%lu: %s\n", path, line, why);
    return 2;
}

static bool integer(const char *s, size_t len, uint64_t *v)
{
    if (len == 0 || len > 20)
        return false;
    uint64_t x = 0;
    for (size_t i = 0; i < len; i++) {
        if (s[i] < '0' || s[i] > '9')
            return false;
        unsigned d = (unsigned)(s[i] - '0');
        if (x > (UINT64_MAX - d) / 10)
            return false;
        x = x * 10 + d;
    }
    *v = x;
    return true;
}

static bool think(const char *s, size_t len, uint64_t *ns)
{
    char buf[64];
    if (len == 0 || len >= sizeof buf || s[0] == '-' || s[0] == '+' || memchr(s, 0, len))
        return false;
    memcpy(buf, s, len);
    buf[len] = 0;
    char *end;
    errno = 0;
    double us = strtod(buf, &end);
    if (*end || errno || !isfinite(us) || us < 0 || us > 1e12)
        return false;
    *ns = (uint64_t)llround(us * 1000.0);
    return true;
}

static int add(struct client_trace *c, struct request r)
{
    if (c->n == c->cap) {
        size_t cap = c->cap ? 2 * c->cap : 1024;
        struct request *q = realloc(c->req, cap * sizeof *q);
        if (!q)
            return ENOMEM;
        c->req = q;
        c->cap = cap;
    }
    c->req[c->n++] = r;
    return 0;
}

static int read_file(struct trace *t, const char *path, unsigned file, unsigned base,
                     unsigned *used)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "%s: cannot read: %s\n", path, strerror(errno));
        return 2;
    }
    char *buf = NULL;
    size_t len = 0, cap = 0;
    for (;;) {
        if (cap - len < 1 << 20) {
            cap = cap ? 2 * cap : 1 << 22;
            char *b = realloc(buf, cap);
            if (!b) {
                free(buf);
                fclose(f);
                fprintf(stderr, "%s: out of memory\n", path);
                return 2;
            }
            buf = b;
        }
        size_t n = fread(buf + len, 1, cap - len, f);
        len += n;
        if (n == 0)
            break;
    }
    int err = ferror(f);
    fclose(f);
    if (err) {
        free(buf);
        fprintf(stderr, "%s: read error\n", path);
        return 2;
    }
    int rc = 0;
    unsigned long line = 0;
    *used = 0;
    for (const char *p = buf, *end = buf + len; p < end && !rc;) {
        const char *eol = memchr(p, '\n', (size_t)(end - p));
        if (!eol)
            eol = end;
        line++;
        const char *q = p;
        p = eol + 1;
        size_t n[5];
        const char *tok[5];
        unsigned count = 0;
        while (count < 5 && (tok[count] = cli_token(&q, eol, &n[count])) != NULL)
            count++;
        if (count == 0)
            continue;
        if (count < 3) {
            rc = bad(path, line, "expected CLIENT OP BLOCK [THINK_US]", NULL, 0);
            break;
        }
        if (count > 4) {
            rc = bad(path, line, "too many fields (CLIENT OP BLOCK [THINK_US])", tok[4], n[4]);
            break;
        }
        uint64_t client, block, ns = 0;
        if (!integer(tok[0], n[0], &client)) {
            rc = bad(path, line, "CLIENT must be a non-negative integer", tok[0], n[0]);
            break;
        }
        if (client >= IOCACHE_MAX_CLIENTS || base + client >= IOCACHE_MAX_CLIENTS) {
            rc = bad(path, line, "too many clients (at most 256 over all traces)", tok[0], n[0]);
            break;
        }
        struct request r = {0};
        if (n[1] != 1 || !memchr("RWPB", tok[1][0], 4)) {
            rc = bad(path, line, "OP must be R, W, P or B", tok[1], n[1]);
            break;
        }
        r.op = tok[1][0] == 'R' ? OP_READ : tok[1][0] == 'W' ? OP_WRITE
             : tok[1][0] == 'P' ? OP_PREFETCH : OP_BARRIER;
        if (!integer(tok[2], n[2], &block)) {
            rc = bad(path, line, "BLOCK must be a non-negative integer", tok[2], n[2]);
            break;
        }
        if (count == 4 && !think(tok[3], n[3], &ns)) {
            rc = bad(path, line, "THINK_US must be a non-negative number of microseconds",
                     tok[3], n[3]);
            break;
        }
        r.block = r.op == OP_BARRIER ? 0 : block;
        r.think_ns = ns;
        struct client_trace *c = &t->client[base + client];
        if (ns > (UINT64_MAX >> 2) - c->think_total) {   /* simulated time must not wrap */
            rc = bad(path, line, "the client's think times add up to too long", tok[3], n[3]);
            break;
        }
        c->think_total += ns;
        c->present = true;
        c->file = file;
        c->file_client = (unsigned)client;
        if (t->lines == t->order_cap) {
            size_t cap = t->order_cap ? 2 * t->order_cap : 4096;
            uint8_t *o = realloc(t->order, cap);
            if (!o) {
                rc = bad(path, line, "out of memory", NULL, 0);
                break;
            }
            t->order = o;
            t->order_cap = cap;
        }
        t->order[t->lines++] = (uint8_t)(base + client);
        if (add(c, r)) {
            rc = bad(path, line, "out of memory", NULL, 0);
            break;
        }
        if (r.op != OP_BARRIER)
            t->requests++;
        if (client + 1 > *used)
            *used = (unsigned)client + 1;
    }
    free(buf);
    return rc;
}

int trace_read(struct trace *t, char *const *paths, unsigned npaths)
{
    memset(t, 0, sizeof *t);
    t->files = npaths;
    unsigned base = 0;
    for (unsigned i = 0; i < npaths; i++) {
        unsigned used;
        int rc = read_file(t, paths[i], i, base, &used);
        if (rc) {
            trace_free(t);
            return rc;
        }
        if (used == 0) {
            fprintf(stderr, "%s: no requests\n", paths[i]);
            trace_free(t);
            return 2;
        }
        base += used;
    }
    t->clients = base;
    return 0;
}

void trace_free(struct trace *t)
{
    for (unsigned i = 0; i < IOCACHE_MAX_CLIENTS; i++)
        free(t->client[i].req);
    free(t->order);
    memset(t, 0, sizeof *t);
}
