/*
 * trace.c — the simulator's input: a multiprocessor's data accesses in their global
 * order, in one of two formats told apart by the first 8 bytes.
 *
 * Binary (what tools write; 16 bytes an access, read at the speed of the disk):
 *     "FSCTRC1\n", then records of uint64 vaddr, uint32 size, uint16 cpu, uint8 op
 *     (0 read, 1 write, 2 barrier), uint8 0, all little-endian.
 * Text (what people write):
 *     CPU R|W ADDR [SIZE]     # a comment
 *     B                       # a barrier
 * CPU decimal, ADDR and SIZE decimal or 0x hex, SIZE 8 if left out; R, W and B in
 * either case; blank lines and everything from `#` on ignored.
 *
 * Bad input is named once, with the place it is at ("file:line" or "file: record N",
 * counted from 1) and the problem, and reading stops.
 */
#include <endian.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "cs_cli.h"

static const char MAGIC[8] = {'F', 'S', 'C', 'T', 'R', 'C', '1', '\n'};
enum { RECORD = 16, BUFSZ = 1 << 20 };

struct cs_trace {
    const char *path;
    FILE *f;
    bool binary, eof;
    unsigned cpus;
    unsigned long long pos; /* the last record's number or line */
    char *buf;
    size_t len, off; /* bytes in buf, bytes consumed */
};

/* Where the last record read came from: "t.txt:12" or "t.bin: record 7". */
static void where(const struct cs_trace *t, char *buf, size_t len)
{
    if (t->binary)
        snprintf(buf, len, "%s: record %llu", t->path, t->pos);
    else
        snprintf(buf, len, "%s:%llu", t->path, t->pos);
}

static void bad(const struct cs_trace *t, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void bad(const struct cs_trace *t, const char *fmt, ...)
{
    char place[512];
    where(t, place, sizeof place);
    fprintf(stderr, CS_PROG ": error: %s: ", place);
    va_list ap;
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

/* Moves what is left to the front and fills the rest; false on a read error. */
static bool refill(struct cs_trace *t)
{
    memmove(t->buf, t->buf + t->off, t->len - t->off);
    t->len -= t->off;
    t->off = 0;
    while (!t->eof && t->len < BUFSZ) {
        size_t n = fread(t->buf + t->len, 1, BUFSZ - t->len, t->f);
        t->len += n;
        if (n == 0) {
            if (ferror(t->f)) {
                fprintf(stderr, CS_PROG ": error: %s: cannot read: %s\n", t->path,
                        strerror(errno));
                return false;
            }
            t->eof = true;
        }
    }
    return true;
}

struct cs_trace *cs_trace_open(const char *path, unsigned cpus)
{
    struct cs_trace *t = calloc(1, sizeof *t);
    char *buf = malloc(BUFSZ);
    FILE *f = fopen(path, "rb");
    if (!t || !buf || !f) {
        fprintf(stderr, CS_PROG ": error: %s: cannot read: %s\n", path,
                strerror(t && buf ? errno : ENOMEM));
        if (f)
            fclose(f);
        free(buf);
        free(t);
        return NULL;
    }
    *t = (struct cs_trace){.path = path, .f = f, .cpus = cpus, .buf = buf};
    if (!refill(t)) {
        cs_trace_close(t);
        return NULL;
    }
    if (t->len >= sizeof MAGIC && !memcmp(t->buf, MAGIC, sizeof MAGIC)) {
        t->binary = true;
        t->off = sizeof MAGIC;
    }
    return t;
}

void cs_trace_close(struct cs_trace *t)
{
    if (!t)
        return;
    fclose(t->f);
    free(t->buf);
    free(t);
}

static uint64_t le64(const unsigned char *p)
{
    uint64_t v;
    memcpy(&v, p, sizeof v);
    return le64toh(v);
}

static uint32_t le32(const unsigned char *p)
{
    uint32_t v;
    memcpy(&v, p, sizeof v);
    return le32toh(v);
}

static uint16_t le16(const unsigned char *p)
{
    uint16_t v;
    memcpy(&v, p, sizeof v);
    return le16toh(v);
}

/* Whether the access is one the simulator takes; says why not. */
static bool valid(const struct cs_trace *t, const struct cs_record *r)
{
    if (r->op == CS_BARRIER)
        return true;
    if (r->cpu >= t->cpus) {
        bad(t, "CPU %u outside 0..%u (--cpus %u)", r->cpu, t->cpus - 1, t->cpus);
        return false;
    }
    if (r->size == 0) {
        bad(t, "size 0: an access is at least one byte");
        return false;
    }
    if (r->vaddr + (r->size - 1) < r->vaddr) {
        bad(t, "%u bytes at 0x%llx wrap past the top of the address space", r->size,
            (unsigned long long)r->vaddr);
        return false;
    }
    return true;
}

static long read_binary(struct cs_trace *t, struct cs_record *out, size_t max)
{
    size_t n = 0;
    while (n < max) {
        if (t->len - t->off < RECORD) {
            if (!refill(t))
                return -1;
            if (t->len - t->off < RECORD) {
                if (t->len == t->off)
                    break;
                t->pos++;
                bad(t, "truncated: %zu of %d bytes", t->len - t->off, RECORD);
                return -1;
            }
        }
        const unsigned char *p = (const unsigned char *)t->buf + t->off;
        struct cs_record *r = &out[n];
        r->vaddr = le64(p);
        r->size = le32(p + 8);
        r->cpu = le16(p + 12);
        r->op = p[14];
        t->off += RECORD;
        t->pos++;
        if (r->op > CS_BARRIER) {
            bad(t, "operation %u (0 read, 1 write, 2 barrier)", r->op);
            return -1;
        }
        if (p[15]) {
            bad(t, "reserved byte 15 is %u, not 0", p[15]);
            return -1;
        }
        if (!valid(t, r))
            return -1;
        n++;
    }
    return (long)n;
}

/* A decimal or 0x-hex number no larger than MAX. */
static bool number(const char *s, size_t len, uint64_t max, uint64_t *v)
{
    unsigned base = 10;
    if (len > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
        base = 16;
        s += 2;
        len -= 2;
    }
    if (len == 0)
        return false;
    uint64_t x = 0;
    for (size_t i = 0; i < len; i++) {
        unsigned d;
        char ch = s[i];
        if (ch >= '0' && ch <= '9')
            d = (unsigned)(ch - '0');
        else if (base == 16 && ch >= 'a' && ch <= 'f')
            d = (unsigned)(ch - 'a' + 10);
        else if (base == 16 && ch >= 'A' && ch <= 'F')
            d = (unsigned)(ch - 'A' + 10);
        else
            return false;
        if (x > (max - d) / base)
            return false;
        x = x * base + d;
    }
    *v = x;
    return true;
}

/* Parses one text line; 1 a record, 0 nothing on it, -1 bad (said). */
static int parse_line(struct cs_trace *t, const char *p, const char *end, struct cs_record *r)
{
    size_t len[5];
    const char *tok[5];
    unsigned n = 0;
    while (n < 5 && (tok[n] = cli_token(&p, end, &len[n])))
        n++;
    if (n == 0)
        return 0;
#define TOK(i) (int)(len[i] > 40 ? 40 : len[i]), tok[i]
    if (n == 1 && len[0] == 1 && (tok[0][0] == 'B' || tok[0][0] == 'b')) {
        *r = (struct cs_record){.op = CS_BARRIER};
        return 1;
    }
    if (n == 5 || (n >= 2 && len[0] == 1 && (tok[0][0] == 'B' || tok[0][0] == 'b'))) {
        bad(t, "extra field '%.*s' (expected `CPU R|W ADDR [SIZE]` or `B`)", TOK(n - 1));
        return -1;
    }
    if (n < 3) {
        bad(t, "expected `CPU R|W ADDR [SIZE]` or `B`, not %u field%s", n, n == 1 ? "" : "s");
        return -1;
    }
    uint64_t cpu, addr, size = 8;
    if (!number(tok[0], len[0], UINT16_MAX, &cpu)) {
        bad(t, "CPU '%.*s' is not a number", TOK(0));
        return -1;
    }
    if (len[1] != 1 || !strchr("RWrw", tok[1][0])) {
        bad(t, "operation '%.*s' is not R or W", TOK(1));
        return -1;
    }
    if (!number(tok[2], len[2], UINT64_MAX, &addr)) {
        bad(t, "address '%.*s' is not a number (decimal or 0x hex)", TOK(2));
        return -1;
    }
    if (n == 4 && !number(tok[3], len[3], UINT32_MAX, &size)) {
        bad(t, "size '%.*s' is not a number of bytes below 2^32", TOK(3));
        return -1;
    }
#undef TOK
    *r = (struct cs_record){.vaddr = addr, .size = (uint32_t)size, .cpu = (uint16_t)cpu,
                            .op = (tok[1][0] == 'W' || tok[1][0] == 'w') ? CS_WRITE : CS_READ};
    return valid(t, r) ? 1 : -1;
}

static long read_text(struct cs_trace *t, struct cs_record *out, size_t max)
{
    size_t n = 0;
    while (n < max) {
        const char *line = t->buf + t->off;
        const size_t avail = t->len - t->off;
        const char *nl = memchr(line, '\n', avail), *end = nl;
        if (!nl) {
            if (!t->eof) {
                if (t->off == 0 && t->len == BUFSZ) {
                    t->pos++;
                    bad(t, "line longer than %d bytes", BUFSZ);
                    return -1;
                }
                if (!refill(t))
                    return -1;
                continue;
            }
            if (avail == 0)
                break;
            end = t->buf + t->len; /* the last line, without its newline */
        }
        t->pos++;
        int got = parse_line(t, line, end, &out[n]);
        t->off = (size_t)(end - t->buf) + (nl != NULL);
        if (got < 0)
            return -1;
        n += (size_t)got;
    }
    return (long)n;
}

long cs_trace_read(struct cs_trace *t, struct cs_record *out, size_t max)
{
    return t->binary ? read_binary(t, out, max) : read_text(t, out, max);
}
