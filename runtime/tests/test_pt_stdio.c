/* The prefetch thread's stdio (pt_stdio.c).  The program computes, with libc's stdio on
 * the same files, what each call must return; the thread makes the calls and compares:
 *   fscanf     three formats in turn over a 370 KB text file (several text windows): each
 *              call returns what fscanf returns, stores the same values, leaves the same
 *              ftell and feof, up to EOF at the end; again after a seek back; a file
 *              without a final newline and %c at the end give fscanf's feof
 *   lost       a format failing in the middle (%n not reached) makes the stream lost:
 *              ferror 1, reads empty, ftell/fseek -1; so do %ms (never run: it would
 *              malloc), a 2000-digit field (cut before glibc's 1024-byte buffer would
 *              grow), a NUL byte of the file and a match running past the text window
 *              before the file's end; a 900-digit field still parses
 *   fgets      lines and pieces of lines (n = 64, 7) equal fgets's, with its ftell
 *   getline    lines of 0 to 200,000 bytes (across text windows), the last without a
 *              newline, equal getline's (length, bytes, ftell), the line grown in the arena
 *   fgetc      not a covered call: no call ID, no prediction; lead: the file's bytes;
 *              predicted over a 16 KiB file: 16384 times 0, then EOF
 *   fread      predicted (whole items, partial item at the end) and lead (the bytes)
 *   written    a stream fopen'd "r+" (the program writes its file): lead fread reads at
 *              the program's call (made: the program ticks first); lead fgetc, fgets and
 *              fscanf fail with EIO, ferror 1, the offset unmoved, the stream not lost;
 *              predicted fread and fgetc go on; a later "rb" of the same file too; "re"
 *              is a read-only mode
 *   foreign    a FILE * fopen did not return (the real stdout, a PROT_NONE page, one byte
 *              into a stream, a closed stream) reads as an empty stream in error and is
 *              never read through (stdin's FILE is unchanged, the page never faults; a
 *              read of stdin takes the program's bytes from the channel: the corpus's
 *              stdin_variable)
 *   call IDs   fread, fgets, fscanf advance the call ID by one each, whatever they
 *              return; fgetc, fopen, fclose, fseek, ftell, rewind, feof, ferror do not
 * The program ticks every call first (all at one site), so the thread never waits and every
 * prediction expires: the expired count is the number of predictions. */
#include <errno.h>
#include <pthread.h>
#include <sys/mman.h>

#include "check.h"
#include "internal.h"

#define SITE 7
#define LINES 12000
#define PRED_LEN 16384
#define PRE_TICKS 2000000u
#define BLANKS_AT (56u << 10)

/* Formats of the fscanf sequence, in turn: each reads one line of the text file. */
#define F0 "%d %d name%d %lf"
#define F1 "%d%*d %63s %f"
#define F2 " %c%c%63[^\n]"

static char txt[4096], pred[4096], lost1[4096], digits[4096], nul[4096], tail[4096],
    chars[4096], blanks[4096], wfile[4096];
static int run_done, go;
static const char *failed_phase; /* the first failed check of the thread, or NULL */
static int failed_at;
static void *guard;              /* a PROT_NONE page */
static FILE stdin_before;        /* stdin's FILE before the thread ran */

struct scan {
    int r, a, b, c;
    double d;
    float f;
    char s[64];
    long pos;
    int eof;
};
static struct scan want_scan[LINES + 2];
static int nscan;

struct gets_result {
    uint64_t hash;
    long pos;
    int null;
};
static struct gets_result want_gets[3 * LINES];
static int ngets;

static uint64_t want_bytes_hash, want_bytes;
static unsigned char pred_data[PRED_LEN];
static struct scan want_digits, want_tail[5], want_chars[4];

static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        h = (h ^ ((const unsigned char *)p)[i]) * 1099511628211u;
    return h;
}

static void write_file(char *out, const char *name, const void *data, size_t len)
{
    snprintf(out, 4096, "%s/%s", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", name);
    FILE *f = fopen(out, "w");
    CHECK(f != NULL);
    CHECK_EQ(fwrite(data, 1, len, f), len);
    CHECK_EQ(fclose(f), 0);
}

/* ---- the program's side: libc's stdio ---- */

static void real_scan(FILE *f, int k, struct scan *o)
{
    memset(o, 0, sizeof *o);
    char c1 = 0, c2 = 0;
    switch (k % 3) {
    case 0: o->r = fscanf(f, F0, &o->a, &o->b, &o->c, &o->d); break;
    case 1: o->r = fscanf(f, F1, &o->a, o->s, &o->f); break;
    default:
        o->r = fscanf(f, F2, &c1, &c2, o->s);
        o->a = c1;
        o->b = c2;
    }
    o->pos = ftell(f);
    o->eof = feof(f);
}

static int gets_size(int k)
{
    return k % 3 == 2 ? 7 : 64;
}

/* getline: a file of lines of these lengths (the last without its newline). */
static const size_t line_lengths[] = {0, 1, 100, 70000, 200000, 5, 65535, 3};
#define NLL (sizeof line_lengths / sizeof line_lengths[0])
static char long_txt[4096];
static struct {
    long r;
    uint64_t hash;
    long pos;
} want_lines[NLL + 1];

static void expect_getline(void)
{
    size_t total = 0;
    for (size_t i = 0; i < NLL; i++)
        total += line_lengths[i] + 1;
    char *data = malloc(total);
    CHECK(data != NULL);
    size_t at = 0;
    for (size_t i = 0; i < NLL; i++) {
        for (size_t j = 0; j < line_lengths[i]; j++)
            data[at++] = (char)('a' + (i * 7 + j) % 26);
        if (i + 1 < NLL)
            data[at++] = '\n';
    }
    write_file(long_txt, "pt_stdio_long.txt", data, at);
    free(data);
    FILE *f = fopen(long_txt, "r");
    CHECK(f != NULL);
    char *line = NULL;
    size_t cap = 0;
    for (size_t i = 0; i <= NLL; i++) {
        want_lines[i].r = (long)getline(&line, &cap, f);
        want_lines[i].hash = want_lines[i].r > 0 ? fnv(14695981039346656037u, line,
                                                        (size_t)want_lines[i].r + 1) : 0;
        want_lines[i].pos = ftell(f);
    }
    CHECK_EQ(want_lines[NLL].r, -1);
    free(line);
    fclose(f);
}

static void expect(void)
{
    expect_getline();
    /* The text file: numbers and names, a line each. */
    static char text[LINES * 40];
    size_t len = 0;
    for (int i = 0; i < LINES; i++)
        len += (size_t)snprintf(text + len, sizeof text - len, "%d %d name%d %.3f\n", i,
                                i * 7 - 5000, i, i / 8.0);
    write_file(txt, "pt_stdio.txt", text, len);
    FILE *f = fopen(txt, "r");
    CHECK(f != NULL);
    do
        real_scan(f, nscan, &want_scan[nscan]);
    while (want_scan[nscan++].r != EOF && nscan < LINES + 2);
    CHECK_EQ(want_scan[nscan - 1].r, EOF);
    rewind(f);
    char line[64];
    for (;;) {
        struct gets_result *g = &want_gets[ngets];
        memset(line, 'x', sizeof line);
        const char *r = fgets(line, gets_size(ngets), f);
        g->null = r == NULL;
        g->hash = r ? fnv(14695981039346656037u, line, strlen(line) + 1) : 0;
        g->pos = ftell(f);
        ngets++;
        if (r == NULL || ngets == 3 * LINES)
            break;
    }
    CHECK(want_gets[ngets - 1].null);
    rewind(f);
    want_bytes_hash = 14695981039346656037u;
    for (int c; (c = fgetc(f)) != EOF; want_bytes++) {
        unsigned char b = (unsigned char)c;
        want_bytes_hash = fnv(want_bytes_hash, &b, 1);
    }
    fclose(f);

    /* 16 KiB to predict (FORESIGHT_PT_FILES=*_match.dat makes it prefetchable). */
    for (size_t i = 0; i < PRED_LEN; i++)
        pred_data[i] = (unsigned char)(i * 131 + 7);
    write_file(pred, "pt_stdio_match.dat", pred_data, PRED_LEN);
    write_file(wfile, "pt_stdio_w_match.dat", pred_data, PRED_LEN);

    write_file(lost1, "pt_stdio_lost.txt", "1 2 x 4\nhello\n", 14);
    static char big[3200];
    memset(big, '7', 900);
    memcpy(big + 900, " 5\n", 3);
    memset(big + 903, '8', 2000);
    big[2903] = '\n';
    write_file(digits, "pt_stdio_digits.txt", big, 2904);
    f = fopen(digits, "r");
    memset(&want_digits, 0, sizeof want_digits);
    want_digits.r = fscanf(f, "%lf %d", &want_digits.d, &want_digits.a);
    want_digits.pos = ftell(f);
    fclose(f);
    write_file(nul, "pt_stdio_nul.txt", "12\0 34\n", 7);
    /* 56 KiB of lines, 10 KiB of blanks, a number: a match over the blanks from 56 KiB runs
     * past a text window read at 0. */
    static char blank_text[BLANKS_AT + 10240 + 3];
    for (size_t i = 0; i < BLANKS_AT; i++)
        blank_text[i] = i % 64 == 63 ? '\n' : 'a';
    memset(blank_text + BLANKS_AT, ' ', 10240);
    memcpy(blank_text + BLANKS_AT + 10240, "42\n", 3);
    write_file(blanks, "pt_stdio_blanks.txt", blank_text, sizeof blank_text);

    write_file(tail, "pt_stdio_tail.txt", "1 2 3", 5); /* no final newline */
    f = fopen(tail, "r");
    for (int k = 0; k < 5; k++) {
        struct scan *o = &want_tail[k];
        memset(o, 0, sizeof *o);
        o->r = fscanf(f, "%d", &o->a);
        o->pos = ftell(f);
        o->eof = feof(f);
    }
    fclose(f);
    write_file(chars, "pt_stdio_chars.txt", "ab", 2);
    f = fopen(chars, "r");
    for (int k = 0; k < 4; k++) {
        struct scan *o = &want_chars[k];
        memset(o, 0, sizeof *o);
        char c = 0;
        o->r = fscanf(f, "%c", &c);
        o->a = c;
        o->pos = ftell(f);
        o->eof = feof(f);
    }
    fclose(f);
}

/* ---- the thread's side ---- */

static void fail(const char *phase, int at)
{
    if (failed_phase == NULL) {
        failed_phase = phase;
        failed_at = at;
    }
}

#define EXPECT(cond, phase, at)                                                           \
    do {                                                                                  \
        if (!(cond))                                                                      \
            fail(phase " (line " CHECK_STR(__LINE__) "): " #cond, (int)(at));             \
    } while (0)
#define CHECK_STR(x) CHECK_STR2(x)
#define CHECK_STR2(x) #x

static unsigned long calls(void)
{
    return get(&fs_global_pt_calls);
}

static void pt_scan(FILE *f, int k, struct scan *o)
{
    memset(o, 0, sizeof *o);
    int n = 0;
    char c1 = 0, c2 = 0;
    const unsigned long before = calls();
    switch (k % 3) {
    case 0: o->r = foresight_pt_fscanf(f, SITE, &n, F0 "%n", &o->a, &o->b, &o->c, &o->d, &n); break;
    case 1: o->r = foresight_pt_fscanf(f, SITE, &n, F1 "%n", &o->a, o->s, &o->f, &n); break;
    default:
        o->r = foresight_pt_fscanf(f, SITE, &n, F2 "%n", &c1, &c2, o->s, &n);
        o->a = c1;
        o->b = c2;
    }
    EXPECT(calls() == before + 1, "fscanf: one call ID", k);
    o->pos = foresight_pt_ftell(f, SITE);
    o->eof = foresight_pt_feof(f);
    EXPECT(calls() == before + 1, "ftell, feof: no call ID", k);
}

static void run_fscanf(void)
{
    FILE *f = foresight_pt_fopen(txt, "r", SITE);
    EXPECT(f != NULL, "fopen", 0);
    struct scan got;
    for (int k = 0; k < nscan; k++) {
        pt_scan(f, k, &got);
        EXPECT(memcmp(&got, &want_scan[k], sizeof got) == 0, "fscanf", k);
    }
    EXPECT(!foresight_pt_ferror(f), "fscanf: no error at the end", 0);
    /* Back out of the window: the same values again. */
    EXPECT(foresight_pt_fseek(f, want_scan[99].pos, SEEK_SET, SITE) == 0, "fseek", 99);
    EXPECT(!foresight_pt_feof(f), "fseek clears end of file", 99);
    for (int k = 100; k < 110; k++) {
        pt_scan(f, k, &got);
        EXPECT(memcmp(&got, &want_scan[k], sizeof got) == 0, "fscanf after fseek", k);
    }
    EXPECT(foresight_pt_fclose(f, SITE) == 0, "fclose", 0);

    f = foresight_pt_fopen(tail, "r", SITE);
    for (int k = 0; k < 5; k++) {
        memset(&got, 0, sizeof got);
        int n;
        got.r = foresight_pt_fscanf(f, SITE, &n, "%d%n", &got.a, &n);
        got.pos = foresight_pt_ftell(f, SITE);
        got.eof = foresight_pt_feof(f);
        EXPECT(memcmp(&got, &want_tail[k], sizeof got) == 0, "fscanf to the end", k);
    }
    foresight_pt_fclose(f, SITE);
    f = foresight_pt_fopen(chars, "r", SITE);
    for (int k = 0; k < 4; k++) {
        memset(&got, 0, sizeof got);
        int n;
        char c = 0;
        got.r = foresight_pt_fscanf(f, SITE, &n, "%c%n", &c, &n);
        got.a = c;
        got.pos = foresight_pt_ftell(f, SITE);
        got.eof = foresight_pt_feof(f);
        EXPECT(memcmp(&got, &want_chars[k], sizeof got) == 0, "fscanf %c to the end", k);
    }
    foresight_pt_fclose(f, SITE);
}

/* A lost stream (case WHICH): every read empty (one call ID each still), no position. */
static void expect_lost(FILE *f, int which)
{
    char buf[16];
    int n;
    const unsigned long before = calls();
    EXPECT(foresight_pt_ferror(f) == 1, "lost: ferror", which);
    EXPECT(foresight_pt_feof(f) == 1, "lost: feof", which);
    EXPECT(foresight_pt_fgetc(f, 1, SITE) == EOF, "lost: fgetc", which);
    EXPECT(foresight_pt_fgetc(f, 0, SITE) == EOF, "lost: predicted fgetc", which);
    EXPECT(foresight_pt_fgets(buf, sizeof buf, f, SITE) == NULL, "lost: fgets", which);
    EXPECT(foresight_pt_fread(buf, 1, 4, f, SITE) == 0, "lost: fread", which);
    EXPECT(foresight_pt_fscanf(f, SITE, &n, "%d%n", &n, &n) == EOF && n == -1, "lost: fscanf",
           which);
    EXPECT(calls() == before + 3, "lost: call IDs", which);
    errno = 0;
    EXPECT(foresight_pt_ftell(f, SITE) == -1 && errno == EIO, "lost: ftell", which);
    EXPECT(foresight_pt_fseek(f, 0, SEEK_SET, SITE) == -1, "lost: fseek", which);
    EXPECT(foresight_pt_ferror(f) == 1, "lost: still", which);
    EXPECT(foresight_pt_fclose(f, SITE) == 0, "lost: fclose", which);
}

static void run_lost(void)
{
    int a = 0, b = 0, c = 0, n = 0;
    FILE *f = foresight_pt_fopen(lost1, "r", SITE);
    EXPECT(foresight_pt_fscanf(f, SITE, &n, "%d %d %d%n", &a, &b, &c, &n) == 2, "mid", 0);
    EXPECT(a == 1 && b == 2 && n == -1, "mid: values", 0);
    expect_lost(f, 1);

    f = foresight_pt_fopen(lost1, "r", SITE);
    char *p = NULL;
    EXPECT(foresight_pt_fscanf(f, SITE, &n, "%ms%n", &p, &n) == EOF && p == NULL && n == -1,
           "%ms", 0);
    expect_lost(f, 2);

    f = foresight_pt_fopen(digits, "r", SITE);
    struct scan got;
    memset(&got, 0, sizeof got);
    got.r = foresight_pt_fscanf(f, SITE, &n, "%lf %d%n", &got.d, &got.a, &n);
    got.pos = foresight_pt_ftell(f, SITE);
    EXPECT(memcmp(&got, &want_digits, sizeof got) == 0, "900 digits", 0);
    EXPECT(foresight_pt_fscanf(f, SITE, &n, "%d%n", &a, &n) == 1 && n == -1, "2000 digits", 0);
    expect_lost(f, 3);

    f = foresight_pt_fopen(nul, "r", SITE);
    foresight_pt_fscanf(f, SITE, &n, "%d%n", &a, &n);
    expect_lost(f, 4);

    /* Matches that reach the end of the text window before the file's: a match (n set)
     * and an input failure (EOF, which is no end of file there). */
    for (int which = 5; which <= 6; which++) {
        f = foresight_pt_fopen(blanks, "r", SITE);
        EXPECT(foresight_pt_fgetc(f, 1, SITE) == 'a', "blanks: the window at 0", which);
        EXPECT(foresight_pt_fseek(f, BLANKS_AT, SEEK_SET, SITE) == 0, "blanks: fseek", which);
        if (which == 5)
            EXPECT(foresight_pt_fscanf(f, SITE, &n, "%*[ ]%n", &n) == 0 && n == -1,
                   "blanks: a match to the window's end", which);
        else
            EXPECT(foresight_pt_fscanf(f, SITE, &n, " %d%n", &a, &n) == EOF,
                   "blanks: an input failure at the window's end", which);
        expect_lost(f, which);
    }
}

static void run_fgets(void)
{
    FILE *f = foresight_pt_fopen(txt, "r", SITE);
    char line[64];
    for (int k = 0; k < ngets; k++) {
        memset(line, 'x', sizeof line);
        const unsigned long before = calls();
        const char *r = foresight_pt_fgets(line, gets_size(k), f, SITE);
        EXPECT(calls() == before + 1, "fgets: one call ID", k);
        struct gets_result g = {r ? fnv(14695981039346656037u, line, strlen(line) + 1) : 0,
                                foresight_pt_ftell(f, SITE), r == NULL};
        EXPECT(g.null == want_gets[k].null && g.hash == want_gets[k].hash &&
                   g.pos == want_gets[k].pos,
               "fgets", k);
    }
    EXPECT(foresight_pt_feof(f), "fgets: end of file", 0);
    foresight_pt_fclose(f, SITE);
}

static void run_getline(void)
{
    FILE *f = foresight_pt_fopen(long_txt, "r", SITE);
    char *line = NULL;
    size_t cap = 0;
    for (size_t i = 0; i <= NLL; i++) {
        const unsigned long before = calls();
        const long r = foresight_pt_getline(&line, &cap, f, SITE);
        EXPECT(calls() == before + 1, "getline: one call ID", (int)i);
        const uint64_t h = r > 0 ? fnv(14695981039346656037u, line, (size_t)r + 1) : 0;
        EXPECT(r == want_lines[i].r && h == want_lines[i].hash &&
                   foresight_pt_ftell(f, SITE) == want_lines[i].pos,
               "getline", (int)i);
        EXPECT(line == NULL || fs_pt_memory_where(line) == FS_PT_ARENA, "getline: arena", (int)i);
    }
    foresight_pt_free(line);
    foresight_pt_fclose(f, SITE);
}

static void run_fgetc(void)
{
    FILE *f = foresight_pt_fopen(txt, "r", SITE);
    uint64_t h = 14695981039346656037u, n = 0;
    const unsigned long before = calls();
    for (int c; (c = foresight_pt_fgetc(f, 1, SITE)) != EOF; n++) {
        unsigned char b = (unsigned char)c;
        h = fnv(h, &b, 1);
    }
    EXPECT(n == want_bytes && h == want_bytes_hash, "lead fgetc", (long)n);
    EXPECT(calls() == before, "lead fgetc: no call ID", 0);
    EXPECT(foresight_pt_feof(f) && !foresight_pt_ferror(f), "lead fgetc: end", 0);
    foresight_pt_fclose(f, SITE);

    f = foresight_pt_fopen(pred, "r", SITE);
    const unsigned long expired = get(&fs_global_pt_expired), pred_calls = calls();
    int zeros = 0;
    for (int i = 0; i < PRED_LEN; i++)
        zeros += foresight_pt_fgetc(f, 0, SITE) == 0;
    EXPECT(zeros == PRED_LEN, "predicted fgetc", zeros);
    EXPECT(!foresight_pt_feof(f), "predicted fgetc: not yet at the end", 0);
    EXPECT(foresight_pt_fgetc(f, 0, SITE) == EOF && foresight_pt_feof(f), "predicted EOF", 0);
    EXPECT(foresight_pt_ftell(f, SITE) == PRED_LEN, "predicted fgetc: offset", 0);
    foresight_pt_fclose(f, SITE); /* nothing to flush */
    EXPECT(calls() == pred_calls, "predicted fgetc: no call ID", 0);
    EXPECT(get(&fs_global_pt_expired) == expired, "predicted fgetc: no prediction",
           (long)(get(&fs_global_pt_expired) - expired));
}

static void run_fread(void)
{
    FILE *f = foresight_pt_fopen(pred, "r", SITE);
    const unsigned long expired = get(&fs_global_pt_expired), before = calls();
    unsigned char buf[32];
    EXPECT(foresight_pt_fread(NULL, 100, 50, f, SITE) == 50, "predicted fread", 0);
    EXPECT(foresight_pt_ftell(f, SITE) == 5000, "predicted fread: offset", 0);
    memset(buf, 0, sizeof buf);
    EXPECT(foresight_pt_fread(buf, 3, 5, f, SITE) == 5, "lead fread", 0);
    EXPECT(memcmp(buf, pred_data + 5000, 15) == 0 && buf[15] == 0, "lead fread: bytes", 0);
    EXPECT(foresight_pt_ftello(f, SITE) == 5015, "lead fread: offset", 0);
    EXPECT(foresight_pt_fseek(f, 16000, SEEK_SET, SITE) == 0, "fseek", 0);
    EXPECT(foresight_pt_fread(NULL, 100, 50, f, SITE) == 3, "predicted fread: whole items", 0);
    EXPECT(foresight_pt_ftell(f, SITE) == PRED_LEN && foresight_pt_feof(f), "to the end", 0);
    EXPECT(foresight_pt_fseeko(f, -4, SEEK_END, SITE) == 0 && !foresight_pt_feof(f), "fseeko", 0);
    memset(buf, 0, sizeof buf);
    EXPECT(foresight_pt_fread(buf, 7, 2, f, SITE) == 0, "lead fread: a part item", 0);
    EXPECT(memcmp(buf, pred_data + PRED_LEN - 4, 4) == 0, "lead fread: its bytes", 0);
    EXPECT(foresight_pt_ftell(f, SITE) == PRED_LEN && foresight_pt_feof(f), "lead: end", 0);
    foresight_pt_rewind(f, SITE);
    EXPECT(foresight_pt_ftell(f, SITE) == 0 && !foresight_pt_feof(f), "rewind", 0);
    EXPECT(foresight_pt_fread(NULL, 0, 5, f, SITE) == 0, "fread of size 0", 0);
    EXPECT(calls() == before + 5, "fread: call IDs", 0);
    foresight_pt_fclose(f, SITE);
    EXPECT(get(&fs_global_pt_expired) - expired == 2, "fread: two predictions", 0);
}

static void run_foreign(void)
{
    FILE *f = foresight_pt_fopen(pred, "r", SITE);
    FILE *closed = foresight_pt_fopen(txt, "r", SITE);
    foresight_pt_fclose(closed, SITE);
    FILE *const foreign[] = {stdout, guard, (FILE *)(void *)((char *)f + 1), closed, NULL};
    for (int i = 0; i < 5; i++) {
        FILE *x = foreign[i];
        char buf[16] = "untouched";
        int n = 0;
        const unsigned long before = calls();
        EXPECT(foresight_pt_fgetc(x, 1, SITE) == EOF, "foreign fgetc", i);
        EXPECT(foresight_pt_fgetc(x, 0, SITE) == EOF, "foreign predicted fgetc", i);
        EXPECT(foresight_pt_fread(buf, 1, 4, x, SITE) == 0, "foreign fread", i);
        EXPECT(foresight_pt_fread(NULL, 1, 4, x, SITE) == 0, "foreign predicted fread", i);
        EXPECT(foresight_pt_fgets(buf, sizeof buf, x, SITE) == NULL, "foreign fgets", i);
        EXPECT(foresight_pt_fscanf(x, SITE, &n, "%d%n", &n, &n) == EOF && n == -1,
               "foreign fscanf", i);
        EXPECT(strcmp(buf, "untouched") == 0, "foreign: nothing read", i);
        EXPECT(calls() == before + 4, "foreign: one call ID each (fgetc none)", i);
        errno = 0;
        EXPECT(foresight_pt_fseek(x, 0, SEEK_SET, SITE) == -1 && errno == EBADF, "fseek", i);
        EXPECT(foresight_pt_ftell(x, SITE) == -1 && foresight_pt_ftello(x, SITE) == -1, "ftell",
               i);
        foresight_pt_rewind(x, SITE);
        EXPECT(foresight_pt_feof(x) == 1 && foresight_pt_ferror(x) == 1, "foreign feof", i);
        EXPECT(foresight_pt_fclose(x, SITE) == EOF, "foreign fclose", i);
        EXPECT(calls() == before + 4, "foreign: no more call IDs", i);
    }
    /* The stream one byte below is still fine. */
    EXPECT(foresight_pt_fgetc(f, 1, SITE) == pred_data[0], "the stream itself", 0);
    foresight_pt_fclose(f, SITE);
    EXPECT(foresight_pt_fopen("/nonexistent/pt", "r", SITE) == NULL && errno == ENOENT,
           "fopen ENOENT", 0);
}

static void run_written(void)
{
    FILE *w = foresight_pt_fopen(wfile, "r+", SITE); /* the program writes the file */
    EXPECT(w != NULL, "written: fopen", 0);
    unsigned char buf[32];
    char line[16];
    int n = 0, v = 0;
    const unsigned long before = calls();
    /* A lead fread waits for the program's call (already made: the program ticks first). */
    EXPECT(foresight_pt_fread(buf, 1, 16, w, SITE) == 16 && memcmp(buf, pred_data, 16) == 0 &&
               !foresight_pt_ferror(w) && foresight_pt_ftell(w, SITE) == 16,
           "written: lead fread reads at the program's call", 0);
    EXPECT(foresight_pt_fread(NULL, 100, 10, w, SITE) == 10 && foresight_pt_ftell(w, SITE) == 1016,
           "written: predicted fread goes on", 0);
    EXPECT(foresight_pt_fgetc(w, 0, SITE) == 0 && foresight_pt_ftell(w, SITE) == 1017,
           "written: predicted fgetc goes on", 0);
    errno = 0;
    EXPECT(foresight_pt_fgetc(w, 1, SITE) == EOF && errno == EIO &&
               foresight_pt_ftell(w, SITE) == 1017 && foresight_pt_ferror(w) &&
               !foresight_pt_feof(w),
           "written: lead fgetc, ferror, the offset unmoved", 0);
    errno = 0;
    EXPECT(foresight_pt_fgets(line, sizeof line, w, SITE) == NULL && errno == EIO, "written: fgets",
           0);
    EXPECT(foresight_pt_fscanf(w, SITE, &n, "%d%n", &v, &n) == EOF && n == -1, "written: fscanf",
           0);
    EXPECT(foresight_pt_ftell(w, SITE) == 1017 && foresight_pt_fseek(w, 0, SEEK_SET, SITE) == 0,
           "written: not lost", 0);
    EXPECT(calls() == before + 4, "written: call IDs (fgetc none)", 0);
    foresight_pt_fclose(w, SITE);
    FILE *again = foresight_pt_fopen(wfile, "rb", SITE); /* the file, written before */
    errno = 0;
    EXPECT(foresight_pt_fgets(line, sizeof line, again, SITE) == NULL && errno == EIO,
           "written: for good", 0);
    foresight_pt_fclose(again, SITE);
    FILE *ro = foresight_pt_fopen(pred, "re", SITE); /* O_CLOEXEC: read-only */
    EXPECT(foresight_pt_fread(buf, 1, 16, ro, SITE) == 16 && memcmp(buf, pred_data, 16) == 0,
           "read-only mode reads", 0);
    foresight_pt_fclose(ro, SITE);
}

static void run_stdio(void)
{
    while (!flag(&go))
        usleep(1000);
    run_fscanf();
    run_lost();
    run_fgets();
    run_fgetc();
    run_fread();
    run_foreign();
    run_written();
    run_getline();
    publish(&run_done, 1);
}

int main(void)
{
    expect();
    guard = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(guard != MAP_FAILED);
    memcpy(&stdin_before, stdin, sizeof stdin_before);
    /* Off the prefetch thread: EPERM, nothing opened. */
    errno = 0;
    CHECK(foresight_pt_fopen(txt, "r", SITE) == NULL);
    CHECK_EQ(errno, EPERM);
    CHECK_EQ(foresight_pt_feof(stdin), 1);

    struct foresight_pt_clock *c = foresight_pt_start(NULL, run_stdio);
    CHECK(c != NULL);
    for (unsigned i = 0; i < PRE_TICKS; i++) /* ahead of every call: the thread never waits */
        foresight_pt_tick(c, SITE);
    publish(&go, 1);
    for (int i = 0; i < 120000 && !flag(&run_done); i++)
        usleep(1000);
    CHECK(flag(&run_done));
    if (failed_phase != NULL) {
        fprintf(stderr, "pt_stdio: %s at %d\n", failed_phase, failed_at);
        check_failures++;
    }
    CHECK(calls() < PRE_TICKS);
    CHECK_EQ(get(&fs_global_pt_issued), 0); /* every prediction expired */
    CHECK_EQ(get(&fs_global_pt_mispredicts), 0);
    CHECK(get(&fs_global_pt_lead_reads) > 2 * (LINES * 30 / 65536)); /* windows refilled */
    CHECK(__atomic_load_n(&fs_global_pt_stopped, __ATOMIC_ACQUIRE) == NULL);
    CHECK(memcmp(&stdin_before, stdin, sizeof stdin_before) == 0);
    const char *const made[] = {txt, pred, lost1, digits, nul, tail, chars, blanks, wfile};
    for (size_t i = 0; i < sizeof made / sizeof made[0]; i++)
        unlink(made[i]);
    return check_done("pt stdio");
}
