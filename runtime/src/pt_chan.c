/*
 * pt_chan.c — the channel (paper Section 4.1's send_XXX/receive_XXX): values the prefetch
 * thread needs but must not produce itself, because producing them twice would change the
 * program (rand's sequence, the bytes of standard input) or give another answer (time).
 * The computation thread makes such a call as it always did and then sends what it got
 * (the value, and the bytes it stored through its pointer arguments); the prefetch thread,
 * at the same call in its slice, a *sync point*, waits for that message instead of making
 * the call.  So the thread cannot run ahead of a sync point; it runs ahead between them.
 *
 * One producer (the program's thread making the calls: the compiler refuses a thread for
 * programs with threads of their own) and one consumer (the prefetch thread), a ring of
 * CHAN_BYTES.  The program never waits: a message that does not fit closes the channel,
 * and the thread stops when it has taken what was sent before.  A message whose site is
 * not the one the thread is at (the slice went another way than the program) stops it too.
 * Once the thread has ended (or in a forked child) sending is one relaxed load.
 *
 * A message: {site, number of parts, bytes after the header, value (16 bytes)} then per
 * part {length, bytes padded to 8}.  nparts CHAN_POISON: the program made a call whose
 * stores the channel cannot carry (a scanf conversion it does not size); the thread stops.
 */
#include <linux/futex.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"

#define CHAN_BYTES (1u << 20)
#define CHAN_POISON UINT32_MAX
#define CHAN_PARTS 64 /* the most stores one call sends (scanf's conversions) */

struct chan_header {
    uint32_t site, nparts;
    uint64_t bytes; /* after this header */
    unsigned char value[16];
};

static unsigned char *ring;                            /* CHAN_BYTES, mapped at start */
static uint64_t written __attribute__((aligned(64)));  /* the program's: bytes committed */
static uint64_t taken __attribute__((aligned(64)));    /* the thread's: bytes consumed */
static uint32_t seq __attribute__((aligned(64)));      /* futex word: bumped per message */
static int waiting;                                    /* the thread waits on seq */
static int open_;                                      /* the program sends while set */
static int overflowed;                                 /* a message did not fit */
/* The program's: messages sent, and the messages and call ID at its last wake. */
static uint64_t sent, woke_sent, woke_id;
#define WAKE_EVERY 64

unsigned long fs_global_pt_received, fs_global_pt_sync_waits;

bool fs_pt_chan_init(void)
{
    if (ring == NULL) {
        void *p = mmap(NULL, CHAN_BYTES, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (p == MAP_FAILED)
            return false;
        ring = p;
    }
    written = taken = 0;
    overflowed = 0;
    sent = woke_sent = woke_id = 0;
    __atomic_store_n(&open_, 1, __ATOMIC_RELEASE);
    return true;
}

void fs_pt_chan_close(void)
{
    __atomic_store_n(&open_, 0, __ATOMIC_RELEASE);
}

void fs_pt_chan_release(void)
{
    fs_pt_chan_close();
    if (ring != NULL) {
        munmap(ring, CHAN_BYTES);
        ring = NULL;
    }
}

static size_t padded(size_t n)
{
    return (n + 7) & ~(size_t)7;
}

/* The ring is copied in 8-byte words with relaxed atomics, not memcpy: in a program built
 * with -fsanitize=thread against this (uninstrumented) library, ThreadSanitizer would see
 * two intercepted memcpy calls but not the release and acquire on `written` and `taken`
 * that order them, and report a race on the prefetch thread (whose report, denied write(2)
 * by its filter, would then hang the program at exit).  AT is a multiple of 8. */
static void ring_put(uint64_t at, const void *p, size_t n)
{
    const unsigned char *b = p;
    uint64_t *w = (uint64_t *)(void *)ring;
    for (size_t i = 0; i < n; i += 8) {
        const size_t k = n - i < 8 ? n - i : 8;
        uint64_t v = 0;
        for (size_t j = 0; j < k; j++)
            v |= (uint64_t)b[i + j] << (8 * j);
        __atomic_store_n(&w[((at + i) % CHAN_BYTES) / 8], v, __ATOMIC_RELAXED);
    }
}

static void ring_get(uint64_t at, void *p, size_t n)
{
    unsigned char *b = p;
    const uint64_t *w = (const uint64_t *)(const void *)ring;
    for (size_t i = 0; i < n; i += 8) {
        const size_t k = n - i < 8 ? n - i : 8;
        const uint64_t v = __atomic_load_n(&w[((at + i) % CHAN_BYTES) / 8], __ATOMIC_RELAXED);
        for (size_t j = 0; j < k; j++)
            b[i + j] = (unsigned char)(v >> (8 * j));
    }
}

/* The program's side: one message of NPARTS parts (CHAN_POISON: none, and the thread
 * stops there). */
static void put(unsigned site, const void *value, size_t vlen, uint32_t nparts,
                const void *const *parts, const size_t *lens)
{
    if (!__atomic_load_n(&open_, __ATOMIC_ACQUIRE))
        return;
    struct chan_header h = {.site = site, .nparts = nparts};
    memcpy(h.value, value, vlen < sizeof h.value ? vlen : sizeof h.value);
    const uint32_t n = nparts == CHAN_POISON ? 0 : nparts;
    for (uint32_t i = 0; i < n; i++)
        h.bytes += sizeof(uint64_t) + padded(lens[i]);
    const uint64_t w = written;
    const uint64_t used = w - __atomic_load_n(&taken, __ATOMIC_ACQUIRE);
    if (sizeof h + h.bytes > CHAN_BYTES - used) {
        /* The thread lags by a megabyte of messages: it stops when it reaches the gap. */
        __atomic_store_n(&overflowed, 1, __ATOMIC_RELAXED);
        __atomic_store_n(&open_, 0, __ATOMIC_RELEASE);
    } else {
        uint64_t at = w;
        ring_put(at, &h, sizeof h);
        at += sizeof h;
        for (uint32_t i = 0; i < n; i++) {
            const uint64_t len = lens[i];
            ring_put(at, &len, sizeof len);
            ring_put(at + sizeof len, parts[i], lens[i]);
            at += sizeof len + padded(lens[i]);
        }
        __atomic_store_n(&written, at, __ATOMIC_RELEASE);
    }
    __atomic_fetch_add(&seq, 1, __ATOMIC_SEQ_CST);
    sent++;
    if (__atomic_load_n(&waiting, __ATOMIC_SEQ_CST)) {
        /* A wake is a futex call and a wakeup on another CPU (10-25 us of the program's
         * time in this VM): the first one, then at most one per WAKE_EVERY messages or I/O
         * calls.  Sync points that come that often leave the thread nothing to run ahead
         * to (the read after one follows it at once), and the thread's 10 ms timeout
         * takes what comes in between. */
        const uint64_t id = __atomic_load_n(&fs_pt_clock.id, __ATOMIC_RELAXED);
        if (woke_sent == 0 || sent - woke_sent >= WAKE_EVERY || id - woke_id >= WAKE_EVERY) {
            woke_sent = sent;
            woke_id = id;
            syscall(SYS_futex, &seq, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
        }
    }
}

void foresight__pt_send(struct foresight_pt_clock *c, unsigned site, const void *value,
                        size_t vlen, const void *part, size_t plen)
{
    if (c != &fs_pt_clock)
        return;
    const int e = errno;
    put(site, value, vlen, part != NULL, &part, &plen);
    errno = e;
}

/* The bytes a scanf conversion stored through its pointer P (0 with *BAD: one the channel
 * does not size).  SPEC points at the conversion's letter, LEN is its length modifier. */
static size_t stored(const char *len, char conv, long width, const void *p, bool *bad)
{
    const bool hh = len[0] == 'h' && len[1] == 'h', h = len[0] == 'h' && !hh;
    const bool ll = (len[0] == 'l' && len[1] == 'l') || len[0] == 'q' || len[0] == 'L';
    const bool l = len[0] == 'l' && !ll, big = len[0] == 'j' || len[0] == 'z' || len[0] == 't';
    switch (conv) {
    case 'd': case 'i': case 'u': case 'o': case 'x': case 'X':
        return hh ? sizeof(char) : h ? sizeof(short) : ll ? sizeof(long long)
               : l || big ? sizeof(long) : sizeof(int);
    case 'a': case 'A': case 'e': case 'E': case 'f': case 'F': case 'g': case 'G':
        return len[0] == 'L' ? sizeof(long double) : l ? sizeof(double) : sizeof(float);
    case 'p':
        return sizeof(void *);
    case 'c':
        if (l)
            break;
        return width > 0 ? (size_t)width : 1;
    case 's': case '[':
        if (l)
            break;
        return strlen(p) + 1;
    default:
        break;
    }
    *bad = true;
    return 0;
}

int foresight__pt_send_vfscanf(struct foresight_pt_clock *c, unsigned site, FILE *f,
                               const char *fmt, va_list ap)
{
    va_list args;
    va_copy(args, ap);
    const int r = vfscanf(f, fmt, ap);
    if (c != &fs_pt_clock || !__atomic_load_n(&open_, __ATOMIC_ACQUIRE)) {
        va_end(args);
        return r;
    }
    const int e = errno;
    const void *parts[CHAN_PARTS];
    size_t lens[CHAN_PARTS];
    uint32_t n = 0;
    bool bad = false;
    /* The first R assigning conversions stored (none at EOF).  %n (stored, not counted),
     * positional arguments, the m modifier and wide strings are not carried. */
    for (const char *s = fmt; *s != '\0' && !bad; s++) {
        if (*s != '%')
            continue;
        if (*++s == '%')
            continue;
        const bool suppressed = *s == '*';
        if (suppressed)
            s++;
        char *end;
        const long width = strtol(s, &end, 10);
        s = end;
        if (*s == '$' || *s == 'm') {
            bad = true;
            break;
        }
        const char *len = s;
        while (*s != '\0' && strchr("hlqLjzt", *s) != NULL)
            s++;
        const char conv = *s;
        if (conv == '[') { /* the set: a ']' first is a member */
            s++;
            if (*s == '^')
                s++;
            if (*s == ']')
                s++;
            while (*s != '\0' && *s != ']')
                s++;
        }
        if (conv == '\0' || conv == 'n' || *s == '\0') {
            bad = conv == 'n';
            break;
        }
        if (suppressed)
            continue;
        const void *p = va_arg(args, void *);
        if ((int)n >= r)
            continue; /* not stored: only %n further on matters */
        if (n == CHAN_PARTS) {
            bad = true;
            break;
        }
        lens[n] = stored(len, conv, width, p, &bad);
        parts[n++] = p;
    }
    va_end(args);
    put(site, &r, sizeof r, bad ? CHAN_POISON : n, parts, lens);
    errno = e;
    return r;
}

/* The thread's side: waits for the next message (issuing what it has queued first) and
 * reads its header, which must be SITE's; stops the thread when the channel closed with
 * nothing left for it. */
static void next(unsigned site, struct chan_header *h)
{
    if (!fs_pt_self)
        fs_pt_stop("a receive off the prefetch thread", EPERM);
    for (bool counted = false;;) {
        if (__atomic_load_n(&written, __ATOMIC_ACQUIRE) != taken)
            break;
        if (!__atomic_load_n(&open_, __ATOMIC_ACQUIRE) &&
            __atomic_load_n(&written, __ATOMIC_ACQUIRE) == taken) {
            if (fs_pt_is_anchored()) /* closed from the start: only this run ends */
                fs_pt_give_up("a sync point in an anchored run (the channel is closed: the "
                              "program's threads would share it)");
            fs_pt_stop(__atomic_load_n(&overflowed, __ATOMIC_RELAXED)
                           ? "lagged a megabyte of channel messages behind the program"
                           : "the channel closed",
                       0);
        }
        if (!counted) {
            counted = true;
            fs_pt_flush(-1); /* what it knows goes to the disk while it waits */
            __atomic_fetch_add(&fs_global_pt_sync_waits, 1, __ATOMIC_RELAXED);
        }
        const uint32_t v = __atomic_load_n(&seq, __ATOMIC_SEQ_CST);
        __atomic_store_n(&waiting, 1, __ATOMIC_SEQ_CST);
        if (__atomic_load_n(&written, __ATOMIC_SEQ_CST) == taken &&
            __atomic_load_n(&open_, __ATOMIC_SEQ_CST)) {
            struct timespec ts = {.tv_sec = 0, .tv_nsec = 10 * 1000 * 1000};
            syscall(SYS_futex, &seq, FUTEX_WAIT_PRIVATE, v, &ts, NULL, 0);
        }
        __atomic_store_n(&waiting, 0, __ATOMIC_RELAXED);
    }
    ring_get(taken, h, sizeof *h);
    if (h->site != site)
        fs_pt_stop("out of step with the program at a sync point (the slice went another "
                   "way)",
                   0);
    if (h->nparts == CHAN_POISON)
        fs_pt_stop("the program stored what the channel does not carry (a scanf "
                   "conversion)",
                   0);
}

/* Consumes the message H: its value into VALUE, its parts into DST[i] (at most CAP[i]
 * bytes each; NULL or i >= NDST: skipped).  Returns the bytes copied into DST[0] (-1: the
 * message has no part). */
static long consume(const struct chan_header *h, void *value, size_t vlen, void *const *dst,
                    const size_t *cap, uint32_t ndst)
{
    memcpy(value, h->value, vlen < sizeof h->value ? vlen : sizeof h->value);
    uint64_t at = taken + sizeof *h;
    long first = -1;
    for (uint32_t i = 0; i < h->nparts; i++) {
        uint64_t len;
        ring_get(at, &len, sizeof len);
        const uint64_t n = i < ndst && dst[i] != NULL ? (len < cap[i] ? len : cap[i]) : 0;
        if (n > 0)
            ring_get(at + sizeof len, dst[i], n);
        if (i == 0)
            first = (long)n;
        at += sizeof len + padded(len);
    }
    __atomic_store_n(&taken, at, __ATOMIC_RELEASE);
    __atomic_fetch_add(&fs_global_pt_received, 1, __ATOMIC_RELAXED);
    return first;
}

long foresight__pt_receive(unsigned site, void *value, size_t vlen, void *part, size_t cap)
{
    const int e = errno;
    struct chan_header h;
    next(site, &h);
    const long n = consume(&h, value, vlen, &part, &cap, 1);
    errno = e;
    return n;
}

int foresight__pt_receive_vscanf(unsigned site, va_list ap)
{
    const int e = errno;
    struct chan_header h;
    next(site, &h);
    /* The thread's arguments are its own objects of the program's types: each takes what
     * the program's got. */
    void *dst[CHAN_PARTS];
    size_t cap[CHAN_PARTS];
    uint32_t n = 0;
    for (; n < h.nparts && n < CHAN_PARTS; n++) {
        dst[n] = va_arg(ap, void *);
        cap[n] = SIZE_MAX;
    }
    int r;
    consume(&h, &r, sizeof r, dst, cap, n);
    errno = e;
    return r;
}
