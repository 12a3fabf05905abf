/*
 * pt_stdio.c — the prefetch thread's stdio: fopen, fread, fgetc, fgets, fscanf, fseek(o),
 * ftell(o), rewind, feof, ferror, fclose in the slice of a program that reads its files
 * through FILE streams (issue 24: "stdio predicted per buffer refill, not per getc").
 *
 * No stdio call of libc is made on this thread: libc's streams get their buffers from the
 * program's malloc and take their locks, and the program's FILE objects (stdin, or a copy
 * the slice made of one) are not the thread's to touch.  A FILE * here is a pointer into
 * this file's table of streams, one per handle of pt_files.c, cast; every call first
 * checks that its argument is one by comparing addresses, and reads nothing through a
 * pointer that is not.  Any other FILE * reads as an empty stream in error.
 *
 * fread, fgets and fscanf are covered calls, one call ID each, as each of the program's is
 * one tick:
 *   - fread without a buffer is a predicted read (pt_files.c) of SIZE*N bytes; with one, a
 *     lead read (pread into it);
 *   - fgets and fscanf, and lead fgetc, parse the file's text in the stream's *text
 *     window*: 64 KiB of the file from some offset, read with pread into the arena,
 *     NUL-terminated, read again when the shadow offset leaves it or comes within 4 KiB of
 *     its end while the file has more.  Each fill counts as a lead read.
 * fgetc is not a covered call: no call ID, no prediction, no pacing.  128 M getc of a cached
 * file cost 4.1 times the program's time with it covered (the thread's call per byte and
 * the futex traffic of a window counted in bytes); the program's stdio reads a buffer per
 * refill, which the kernel's readahead serves.  A lead fgetc returns the byte, a predicted
 * one only moves the offset (EOF at the end of the file).
 * A file the program writes (pt_files.c: a mode other than "r", "rb" or the like is an open
 * for writing): fread into a buffer waits until the program makes the same call, as
 * read does (pt_files.c); fgets, fscanf and lead fgetc, which read a window of text
 * ahead of the call, fail (errno EIO, ferror 1, the offset unmoved; the stream is not
 * lost), while predicted fread and fgetc go on.
 * fscanf runs vsscanf on the window at the shadow offset with the compiler's format, which
 * ends in "%n": how far the match went, so how far the program's fscanf moves its stream.
 * When that %n is not reached (a directive failed before it), where the program's stream
 * stands is unknown: the stream is *lost*, its reads from then on return end of file and
 * predict nothing, ferror says 1, and it stays lost (fseek and rewind do not restore it).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "internal.h"

#define WINDOW (64u << 10)        /* the text window */
#define MARGIN (4u << 10)         /* refilled when less than this is left before its end */
#define LONG_FIELD 1000u          /* vsscanf's input is cut before this many nonblank bytes */
#define MAX_RUNS (WINDOW / (LONG_FIELD + 1) + 1)

/*
 * glibc's vsscanf and allocation (glibc's stdio-common/vfscanf-internal.c and
 * libio/iovsscanf.c read, and measured on 2.36 with an interposed malloc):
 *   - the string is read through a FILE on vsscanf's own stack, without lock or buffer;
 *     pushing a character back moves a pointer (the string is read-only: no backup area);
 *   - `m` (and GNU `a` before s, S or [, outside ISO C99 mode) mallocs the result;
 *   - a numeric field (%d %i %o %u %x %p %e %f %g %a) is gathered in a 1024-byte scratch
 *     buffer on the stack that grows with malloc: measured, 1023 digits allocate nothing,
 *     1024 allocate; strtol/strtod then work in that buffer;
 *   - the `I` flag (the locale's digits) may allocate; wide directives (%lc %ls %l[ %C %S)
 *     and non-ASCII bytes in the format go through mbrtowc/mbrlen, whose first use in a
 *     locale loads its converter (malloc, possibly dlopen);
 *   - `'` lets a numeric field run across the locale's thousands separator (a blank in
 *     some locales);
 *   - %s, %c and %[ store straight into the caller's memory; %[ keeps its 256-byte set in
 *     the stack buffer; %n stores a count.
 * So vsscanf allocates nothing for a format without m, a, I, ', wide or non-ASCII
 * directives, provided no numeric field reaches 1024 bytes.  Such a format makes the
 * stream lost without vsscanf being called; for the others the text vsscanf gets is cut (a
 * NUL written into the window for the call) before any LONG_FIELD bytes without a blank,
 * which every numeric field is.  A match that stops at that cut, at the window's end before
 * the file's, or at a NUL byte of the file cannot tell what the program's fscanf did (it
 * would have read on): the stream is lost then too.
 */

struct pt_window {
    uint64_t off;                  /* the file offset of text[0] */
    uint32_t len;                  /* bytes in it; text[len] is 0 */
    bool to_end;                   /* the file ended there when it was read */
    bool runs_known;               /* runs[] describes text (found when fscanf needs it) */
    uint32_t nruns;
    uint32_t runs[MAX_RUNS][2];    /* [start, end) of each run of LONG_FIELD or more nonblank */
    char text[WINDOW + 1];
};

struct pt_stream {
    bool used;
    bool eof;                      /* a read hit the end of the file (or the stream is lost) */
    bool lost;                     /* its offset in the program is unknown: reads are empty */
    bool error;                    /* a lead read was refused: the program writes the file */
    unsigned serial;               /* the open of its handle (pt_files.c) */
    struct pt_window *win;         /* the text window, from the first lead text read */
};

/* Indexed by handle: one stream per open file at most. */
static struct pt_stream streams[FS_PT_FILES];
static char *bounce; /* stdin_getline's line, from the channel */

void fs_pt_stdio_reset(void)
{
    memset(streams, 0, sizeof streams); /* their windows go with the arena (pt_arena.c) */
    bounce = NULL;
}

static int handle_of(const struct pt_stream *s)
{
    return (int)(s - streams);
}

/* FP's stream, or NULL (errno EBADF) when FP is not one fopen returned and fclose has not
 * ended: the program's own FILE objects land here, and are never read. */
static struct pt_stream *stream(FILE *fp)
{
    const uintptr_t p = (uintptr_t)fp, base = (uintptr_t)streams;
    if (p < base || p - base >= sizeof streams || (p - base) % sizeof streams[0] != 0) {
        errno = EBADF;
        return NULL;
    }
    struct pt_stream *s = &streams[(p - base) / sizeof streams[0]];
    if (!s->used || fs_pt_shadow(handle_of(s), s->serial) == NULL) {
        errno = EBADF;
        return NULL;
    }
    return s;
}

static uint64_t *offset_of(const struct pt_stream *s)
{
    return fs_pt_shadow(handle_of(s), s->serial);
}

static void lose(struct pt_stream *s)
{
    s->lost = true;
    s->eof = true;
}

/* The stream a read works on: NULL when FP is none, or when it is lost (that read then
 * hits the end of the file). */
static struct pt_stream *readable(FILE *fp)
{
    struct pt_stream *s = stream(fp);
    if (s != NULL && s->lost) {
        s->eof = true;
        return NULL;
    }
    return s;
}

/* After a covered call: keep the thread within its window (pt_sched.c). */
static void paced(void)
{
    const int e = errno;
    fs_pt_pace();
    errno = e;
}

/* A lead read: N bytes at OFF into BUF, to the end of the file; -1 on an error. */
static int64_t lead_pread(int h, char *buf, uint64_t n, uint64_t off)
{
    uint64_t got = 0;
    while (got < n) {
        const long r = syscall(SYS_pread64, h, buf + got, n - got, (off_t)(off + got));
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            return -1;
        if (r == 0)
            break;
        got += (uint64_t)r;
    }
    __atomic_fetch_add(&fs_global_pt_lead_reads, 1, __ATOMIC_RELAXED);
    __atomic_fetch_add(&fs_global_pt_lead_bytes, (unsigned long)got, __ATOMIC_RELAXED);
    return (int64_t)got;
}

/* A lead read of S refused (errno EIO): the program writes its file. */
static bool refused(struct pt_stream *s)
{
    s->error = true;
    errno = EIO;
    return false;
}

/* Makes S's window hold the file's text at OFF, with MARGIN after it or the file's end;
 * false when it cannot be read (S is lost then) or the program writes the file (an
 * error, errno EIO, S not lost). */
static bool window_at(struct pt_stream *s, uint64_t off)
{
    if (fs_pt_written(handle_of(s))) /* the text in the window may be old too */
        return refused(s);
    struct pt_window *w = s->win;
    if (w != NULL && off >= w->off && off - w->off <= w->len &&
        (w->len - (off - w->off) >= MARGIN || w->to_end))
        return true;
    if (w == NULL && (w = s->win = foresight__pt_malloc(sizeof *w)) == NULL) {
        lose(s);
        return false;
    }
    if (!fs_pt_lead_ok(handle_of(s)))
        return refused(s);
    const int64_t r = lead_pread(handle_of(s), w->text, WINDOW, off);
    if (r < 0) {
        lose(s);
        return false;
    }
    w->off = off;
    w->len = (uint32_t)r;
    w->to_end = r < WINDOW;
    w->text[r] = 0;
    w->runs_known = false;
    return true;
}

/* ---- open, close, position ---- */

/* Whether the program's fopen with MODE writes the file: anything but "r", "rb" and their
 * glibc flags (e, m, x, c, ccs=) is taken as writing; the thread only reads anyway. */
static bool mode_writes(const char *mode)
{
    if (mode == NULL || mode[0] != 'r')
        return true;
    for (const char *m = mode + 1; *m != 0 && *m != ','; m++)
        if (*m == '+' || *m == 'w' || *m == 'a')
            return true;
    return false;
}

FILE *foresight__pt_fopen(const char *path, const char *mode, unsigned site)
{
    const int h = foresight__pt_open(path, mode_writes(mode) ? O_RDWR : O_RDONLY, site);
    if (h < 0)
        return NULL;
    struct pt_stream *s = &streams[h];
    foresight__pt_free(s->win); /* a stream whose handle was closed without fclose */
    *s = (struct pt_stream){.used = true, .serial = fs_pt_serial(h)};
    return (FILE *)(void *)s;
}

int foresight__pt_fclose(FILE *fp, unsigned site)
{
    if (!fs_pt_self) {
        errno = EPERM;
        return EOF;
    }
    struct pt_stream *s = stream(fp);
    if (s == NULL)
        return EOF;
    foresight__pt_free(s->win);
    s->win = NULL;
    s->used = false;
    return foresight__pt_close(handle_of(s), site) == 0 ? 0 : EOF;
}

static int seek(FILE *fp, int64_t off, int whence, unsigned site)
{
    if (!fs_pt_self) {
        errno = EPERM;
        return -1;
    }
    struct pt_stream *s = stream(fp);
    if (s == NULL)
        return -1;
    if (s->lost) {
        errno = EIO;
        return -1;
    }
    if (foresight__pt_lseek(handle_of(s), off, whence, site) < 0)
        return -1;
    s->eof = false;
    return 0;
}

int foresight__pt_fseek(FILE *fp, long off, int whence, unsigned site)
{
    return seek(fp, off, whence, site);
}

int foresight__pt_fseeko(FILE *fp, int64_t off, int whence, unsigned site)
{
    return seek(fp, off, whence, site);
}

void foresight__pt_rewind(FILE *fp, unsigned site)
{
    const int e = errno;
    seek(fp, 0, SEEK_SET, site);
    errno = e;
}

int64_t foresight__pt_ftello(FILE *fp, unsigned site)
{
    (void)site;
    if (!fs_pt_self) {
        errno = EPERM;
        return -1;
    }
    const struct pt_stream *s = stream(fp);
    if (s == NULL)
        return -1;
    if (s->lost) {
        errno = EIO;
        return -1;
    }
    return (int64_t)*offset_of(s);
}

long foresight__pt_ftell(FILE *fp, unsigned site)
{
    const int64_t r = foresight__pt_ftello(fp, site);
    if (r > LONG_MAX) {
        errno = EOVERFLOW;
        return -1;
    }
    return (long)r;
}

/* FP's stream for feof and ferror, which keep errno; NULL off the thread too. */
static const struct pt_stream *peek(FILE *fp)
{
    if (!fs_pt_self)
        return NULL;
    const int e = errno;
    const struct pt_stream *s = stream(fp);
    errno = e;
    return s;
}

int foresight__pt_feof(FILE *fp)
{
    const struct pt_stream *s = peek(fp);
    return s == NULL || s->eof;
}

int foresight__pt_ferror(FILE *fp)
{
    const struct pt_stream *s = peek(fp);
    return s == NULL || s->lost || s->error;
}

/* ---- standard input through a variable (`FILE *in = argc > 1 ? fopen(...) : stdin`) ----
 * The program's call sends what it read when its stream is stdin (foresight.h:
 * foresight_pt_stdio_*); the thread's, on stdin too, takes that from the channel (a sync
 * point, site | FORESIGHT_PT_STDIN_SITE), never reading the program's bytes. */

static size_t stdin_fread(void *buf, size_t size, size_t n, unsigned site)
{
    long r = 0;
    size_t cap = 0;
    if (buf != NULL && !__builtin_mul_overflow(size, n, &cap))
        foresight__pt_receive(site | FORESIGHT_PT_STDIN_SITE, &r, sizeof r, buf, cap);
    else
        foresight__pt_receive(site | FORESIGHT_PT_STDIN_SITE, &r, sizeof r, NULL, 0);
    return r > 0 ? (size_t)r : 0;
}

static char *stdin_fgets(char *str, int n, unsigned site)
{
    int got = 0;
    const long len = foresight__pt_receive(site | FORESIGHT_PT_STDIN_SITE, &got, sizeof got,
                                           n > 0 ? str : NULL, n > 0 ? (size_t)n : 0);
    if (!got || n <= 0)
        return NULL;
    if (len >= n) /* cut short: still a string */
        str[n - 1] = 0;
    return str;
}

/* A line of up to LINE_MAX_BYTES (longer ones cut), into *LINE grown in the arena. */
#define LINE_MAX_BYTES (1u << 20)
static long stdin_getline(char **line, size_t *cap, unsigned site)
{
    if (bounce == NULL)
        bounce = foresight__pt_malloc(LINE_MAX_BYTES);
    long r = -1;
    const long got = foresight__pt_receive(site | FORESIGHT_PT_STDIN_SITE, &r, sizeof r, bounce,
                                           bounce != NULL ? LINE_MAX_BYTES : 0);
    if (r <= 0 || got <= 0 || line == NULL || cap == NULL)
        return r <= 0 ? -1 : r;
    if (*line == NULL || *cap < (size_t)got) {
        char *grown = foresight__pt_realloc(*line, (size_t)got);
        if (grown == NULL)
            return -1;
        *line = grown;
        *cap = (size_t)got;
    }
    memcpy(*line, bounce, (size_t)got);
    (*line)[got - 1] = 0;
    return r;
}

/* ---- fread, fgetc, fgets ---- */

size_t foresight__pt_fread(void *buf, size_t size, size_t n, FILE *fp, unsigned site)
{
    if (!fs_pt_self) {
        errno = EPERM;
        return 0;
    }
    const uint64_t id = fs_pt_call(site);
    if (fp == stdin) {
        const size_t items = stdin_fread(buf, size, n, site);
        fs_pt_outcome(items > 0 || size == 0 || n == 0);
        return items;
    }
    struct pt_stream *s = readable(fp);
    size_t items = 0, want;
    if (s != NULL && size != 0 && n != 0) {
        if (__builtin_mul_overflow(size, n, &want) || want > (size_t)INT64_MAX)
            want = (size_t)INT64_MAX / size * size;
        uint64_t *off = offset_of(s);
        const int h = handle_of(s);
        int64_t got; /* -1: lost, -2: refused */
        if (buf == NULL)
            got = (int64_t)fs_pt_predict(h, *off, want, id);
        else if (fs_pt_lead_now(h, id))
            got = lead_pread(h, buf, want, *off);
        else {
            refused(s); /* the thread went astray: EIO, ferror 1, the offset unmoved */
            got = -2;
        }
        if (got >= 0) {
            *off += (uint64_t)got;
            items = (size_t)got / size;
            s->eof |= (uint64_t)got < want;
        } else if (got == -1) {
            lose(s);
        }
    }
    fs_pt_outcome(items > 0 || size == 0 || n == 0);
    paced();
    return items;
}

/* Predicted: the next byte exists or not. */
static int predicted_getc(struct pt_stream *s)
{
    uint64_t *off = offset_of(s);
    if (fs_pt_avail(handle_of(s), *off) == 0) {
        s->eof = true;
        return EOF;
    }
    ++*off;
    return 0;
}

static int lead_getc(struct pt_stream *s)
{
    uint64_t *off = offset_of(s);
    if (!window_at(s, *off))
        return EOF;
    const struct pt_window *w = s->win;
    const uint64_t at = *off - w->off;
    if (at == w->len) { /* window_at: only at the file's end */
        s->eof = true;
        return EOF;
    }
    ++*off;
    return (unsigned char)w->text[at];
}

int foresight__pt_fgetc(FILE *fp, int lead, unsigned site)
{
    /* (not a covered call) */
    if (!fs_pt_self) {
        errno = EPERM;
        return EOF;
    }
    if (fp == stdin) {
        int c = EOF;
        foresight__pt_receive(site | FORESIGHT_PT_STDIN_SITE, &c, sizeof c, NULL, 0);
        fs_pt_outcome(c != EOF);
        return c;
    }
    struct pt_stream *s = readable(fp);
    const int c = s == NULL ? EOF : lead ? lead_getc(s) : predicted_getc(s);
    fs_pt_outcome(c != EOF);
    return c;
}

/* glibc's fgets: N <= 0 reads nothing and fails; N == 1 stores "" and reads nothing. */
static char *lead_gets(struct pt_stream *s, char *str, size_t n)
{
    uint64_t *off = offset_of(s);
    size_t got = 0;
    while (got + 1 < n) {
        if (!window_at(s, *off))
            return NULL;
        const struct pt_window *w = s->win;
        const size_t at = (size_t)(*off - w->off), avail = w->len - at;
        if (avail == 0) {
            s->eof = true;
            break;
        }
        size_t take = n - 1 - got < avail ? n - 1 - got : avail;
        const char *nl = memchr(w->text + at, '\n', take);
        if (nl != NULL)
            take = (size_t)(nl - (w->text + at)) + 1;
        memcpy(str + got, w->text + at, take);
        got += take;
        *off += take;
        if (nl != NULL)
            break;
    }
    if (got == 0 && n > 1)
        return NULL;
    str[got] = 0;
    return str;
}

char *foresight__pt_fgets(char *str, int n, FILE *fp, unsigned site)
{
    if (!fs_pt_self) {
        errno = EPERM;
        return NULL;
    }
    fs_pt_call(site);
    if (fp == stdin) {
        char *r = stdin_fgets(str, n, site);
        fs_pt_outcome(r != NULL);
        return r;
    }
    struct pt_stream *s = readable(fp);
    char *r = NULL;
    if (s != NULL && n > 0)
        r = lead_gets(s, str, (size_t)n);
    fs_pt_outcome(r != NULL);
    paced();
    return r;
}

/* getline(3): the line into *LINE, grown in the thread's arena (foresight_pt_realloc:
 * *LINE is the thread's own, as the compiler checks); -1 at the end of the file. */
long foresight__pt_getline(char **line, size_t *cap, FILE *fp, unsigned site)
{
    if (!fs_pt_self) {
        errno = EPERM;
        return -1;
    }
    fs_pt_call(site);
    if (fp == stdin) {
        const long r = stdin_getline(line, cap, site);
        fs_pt_outcome(r >= 0);
        return r;
    }
    struct pt_stream *s = readable(fp);
    long r = -1;
    if (s != NULL && line != NULL && cap != NULL) {
        if (*line == NULL)
            *cap = 0;
        uint64_t *off = offset_of(s);
        size_t got = 0;
        for (bool done = false; !done;) {
            if (!window_at(s, *off)) {
                got = 0;
                break;
            }
            const struct pt_window *w = s->win;
            const size_t at = (size_t)(*off - w->off), avail = w->len - at;
            if (avail == 0) {
                s->eof = true;
                break;
            }
            const char *nl = memchr(w->text + at, '\n', avail);
            const size_t take = nl != NULL ? (size_t)(nl - (w->text + at)) + 1 : avail;
            if (got + take + 1 > *cap) {
                size_t want = *cap < 120 ? 120 : *cap;
                while (want < got + take + 1)
                    want *= 2;
                char *grown = foresight__pt_realloc(*line, want);
                if (grown == NULL) {
                    got = 0;
                    break;
                }
                *line = grown;
                *cap = want;
            }
            memcpy(*line + got, w->text + at, take);
            got += take;
            *off += take;
            done = nl != NULL;
        }
        if (got > 0) {
            (*line)[got] = 0;
            r = (long)got;
        }
    }
    fs_pt_outcome(r >= 0);
    paced();
    return r;
}

/* ---- fscanf ---- */

struct format_facts {
    bool allocates;  /* vsscanf might allocate (or load a converter) for it */
    bool exact_end;  /* its last reading directive reads no byte past its match (%c, a
                      * literal): matching up to the file's end does not reach end of file */
};

static bool blank(unsigned char c)
{
    return c == ' ' || (c >= '\t' && c <= '\r');
}

static bool digit(unsigned char c)
{
    return c >= '0' && c <= '9';
}

static struct format_facts format_facts(const char *fmt)
{
    struct format_facts ff = {false, false};
    const unsigned char *p = (const unsigned char *)fmt;
    while (*p != 0) {
        if (*p >= 0x80)
            ff.allocates = true;
        if (*p != '%' || p[1] == '%') { /* an ordinary character, blank or %% */
            ff.exact_end = !blank(*p);
            p += *p == '%' ? 2 : 1;
            continue;
        }
        p++;
        const unsigned char *q = p;
        while (digit(*q))
            q++;
        if (*q == '$') /* a positional argument */
            p = q + 1;
        for (; *p == '*' || *p == '\'' || *p == 'I'; p++)
            ff.allocates |= *p != '*';
        while (digit(*p))
            p++;
        bool wide = false;
        for (;; p++) {
            if (*p == 'h' || *p == 'j' || *p == 'z' || *p == 't' || *p == 'q' || *p == 'L')
                continue;
            if (*p == 'l') {
                wide = true;
                continue;
            }
            if (*p == 'm' || (*p == 'a' && (p[1] == 's' || p[1] == 'S' || p[1] == '['))) {
                ff.allocates = true;
                continue;
            }
            break;
        }
        const unsigned char conv = *p;
        if (conv == 0)
            break;
        p++;
        if (conv == 'C' || conv == 'S' || (wide && (conv == 'c' || conv == 's' || conv == '[')))
            ff.allocates = true;
        if (conv == '[') { /* the set: a leading ']' is a member */
            p += *p == '^';
            p += *p == ']';
            while (*p != 0 && *p != ']') /* bytes of a table: no multibyte character */
                p++;
            p += *p == ']';
        }
        if (conv != 'n')
            ff.exact_end = conv == 'c';
    }
    return ff;
}

/* The runs of LONG_FIELD or more nonblank bytes in W's text (a NUL ends one too). */
static void find_runs(struct pt_window *w)
{
    uint32_t n = 0, start = 0;
    for (uint32_t i = 0; i <= w->len; i++) {
        if (i < w->len && !blank((unsigned char)w->text[i]) && w->text[i] != 0)
            continue;
        if (i - start >= LONG_FIELD && n < MAX_RUNS) {
            w->runs[n][0] = start;
            w->runs[n][1] = i;
            n++;
        }
        start = i + 1;
    }
    w->nruns = n;
    w->runs_known = true;
}

/* Where vsscanf's text from AT must end so that no field in it reaches LONG_FIELD bytes. */
static uint32_t cut_at(struct pt_window *w, uint32_t at)
{
    if (!w->runs_known)
        find_runs(w);
    for (uint32_t i = 0; i < w->nruns; i++) {
        const uint32_t a = w->runs[i][0] > at ? w->runs[i][0] : at, e = w->runs[i][1];
        if (e > a && e - a >= LONG_FIELD)
            return a + LONG_FIELD - 1;
    }
    return w->len;
}

static int lead_scanf(struct pt_stream *s, int *consumed, const char *fmt, va_list ap)
{
    const struct format_facts ff = fmt != NULL ? format_facts(fmt) : (struct format_facts){0};
    if (fmt == NULL || consumed == NULL || ff.allocates) {
        lose(s);
        return EOF;
    }
    uint64_t *off = offset_of(s);
    if (!window_at(s, *off))
        return EOF;
    struct pt_window *w = s->win;
    const uint32_t at = (uint32_t)(*off - w->off), cut = cut_at(w, at);
    const char kept = w->text[cut];
    w->text[cut] = 0;
    const int r = vsscanf(w->text + at, fmt, ap);
    w->text[cut] = kept;
    const int n = *consumed;
    if (n < 0) {
        /* An input failure before any conversion that read all the file's text: fscanf
         * at the end of the file, which consumed the rest (blanks) and returned EOF. */
        if (r == EOF && cut == w->len && w->to_end &&
            memchr(w->text + at, 0, w->len - at) == NULL) {
            *off = w->off + w->len;
            s->eof = true;
            return EOF;
        }
        lose(s);
        return r;
    }
    const uint32_t end = at + (uint32_t)n;
    const bool file_end = w->to_end && end == w->len;
    if ((uint32_t)n > cut - at || ((end == cut || w->text[end] == 0) && !file_end)) {
        lose(s); /* stopped at the cut, the window's end or a NUL of the file */
        *consumed = -1;
        return r;
    }
    *off += (uint64_t)n;
    /* The program's fscanf, matching up to the file's end, looked for one more byte unless
     * its last directive was %c or a literal (or a field that filled its width: taken as
     * having looked, a rare case). */
    if (file_end && !ff.exact_end)
        s->eof = true;
    return r;
}

int foresight__pt_vsscanf(const char *str, const char *fmt, va_list ap)
{
    if (!fs_pt_self) {
        errno = EPERM;
        return EOF;
    }
    /* As for fscanf's window: a format vsscanf could allocate for, or a field of
     * LONG_FIELD nonblank bytes or more, and the thread does not parse it (EOF, EINVAL:
     * its values then differ from the program's, a misprediction at worst). */
    if (str == NULL || fmt == NULL || format_facts(fmt).allocates) {
        errno = EINVAL;
        return EOF;
    }
    size_t run = 0;
    for (const char *c = str; *c != 0; c++)
        if ((run = blank((unsigned char)*c) ? 0 : run + 1) >= LONG_FIELD) {
            errno = EINVAL;
            return EOF;
        }
    return vsscanf(str, fmt, ap);
}

int foresight__pt_vfscanf(FILE *fp, unsigned site, int *consumed, const char *fmt, va_list ap)
{
    if (consumed != NULL)
        *consumed = -1;
    if (!fs_pt_self) {
        errno = EPERM;
        return EOF;
    }
    fs_pt_call(site);
    if (fp == stdin) {
        va_list aq;
        va_copy(aq, ap);
        const int r = foresight__pt_receive_vscanf(site | FORESIGHT_PT_STDIN_SITE, aq);
        va_end(aq);
        fs_pt_outcome(r != EOF);
        return r;
    }
    struct pt_stream *s = readable(fp);
    int r = EOF;
    if (s != NULL)
        r = lead_scanf(s, consumed, fmt, ap);
    fs_pt_outcome(r != EOF); /* 0 may have consumed text (`%*[^\n]`): not a failure */
    paced();
    return r;
}
