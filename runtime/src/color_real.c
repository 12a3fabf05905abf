/* FORESIGHT_COLOR=real: the preferred colors carried out on this machine, as far as
 * Linux lets a process choose its frames.  A 2 MiB transparent huge page is one
 * physically contiguous, 2 MiB-aligned folio, so its 512 small pages have consecutive
 * frame numbers and known colors (frame mod colors, for colors dividing 512): pages of
 * such folios are moved under the program's pages with mremap(MREMAP_FIXED), a run of
 * consecutive colors at a time (paper 4, Section 5.3: the hint a kernel would take at
 * page-fault time, taken here before the first touch).
 *
 * Only private anonymous read-write mappings are changed (a file's pages stay the
 * file's): a run's data are copied into the folio's pages first (untouched pages read as
 * zero, as their first touch would find them), then the folio's pages replace them.
 * Everything else keeps its native mapping and is counted by reason: not root (frame
 * numbers read as 0), no huge page to be had, colors that do not divide a folio,
 * mappings that are not private anonymous memory, the kernel's map count (each moved run
 * is a mapping of its own), a call from inside an OpenMP parallel region.  Moved pages
 * are marked MADV_NOHUGEPAGE so khugepaged does not collapse them into a new huge page,
 * and are verified against pagemap after each apply and again at exit.
 *
 * What it cannot exclude: a store by another thread between the copy and the move is
 * lost.  foresight cc --color calls apply before a parallel loop from the thread about
 * to start it; inside a parallel region (where the rest of the team may still be in a
 * `nowait` loop) nothing is moved.  So only a thread outside OpenMP storing into an
 * array at that moment could lose a store: the mode is opt-in and for measurement. */
#include "color_real.h"
#include "ownfd.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define PAGE 4096ull
#define FOLIO_PAGES 512u
#define FOLIO (FOLIO_PAGES * PAGE)
#define MAX_PIECES 65536
#define PM_PRESENT (1ull << 63)
#define PM_SWAPPED (1ull << 62)
#define PM_PFN ((1ull << 55) - 1)

struct fs_color_real_counts fs_color_real;

static struct {
    char *addr;     /* the folio being used, NULL for none */
    unsigned next;  /* its first page not given away */
} folio;
static bool no_thp; /* a folio was asked for and not given: stop asking */
static struct fs_color_run pieces[MAX_PIECES]; /* what was moved, for verification */
static size_t npieces;
static uint32_t moved_colors; /* the colors the pieces were moved for */

struct vma {
    uintptr_t lo, hi;
    bool anon_rw; /* private, read-write, anonymous (or the heap) */
};

static int pagemap(void)
{
    static struct fs_own pm = {.fd = -1};
    static pid_t opened_by; /* 0: not tried in this process */
    static bool unreadable;
    if (opened_by != getpid()) { /* first call, or a forked child: its own page table */
        fs_own_close(&pm);
        unreadable = false;
    } else if (pm.fd >= 0 && !fs_own_valid(&pm)) {
        pm.fd = -1; /* the program closed it (the number may be its own now) */
    } else if (pm.fd >= 0 || unreadable) {
        return pm.fd;
    }
    int saved = errno;
    unreadable = fs_own_fd(&pm, open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC)) < 0;
    errno = saved;
    opened_by = getpid();
    return pm.fd;
}

/* N pagemap entries from virtual page VPAGE into OUT; false when unreadable. */
static bool entries(uint64_t vpage, uint64_t *out, size_t n)
{
    int fd = pagemap();
    size_t want = n * sizeof *out;
    return fd >= 0 && pread(fd, out, want, (off_t)(vpage * sizeof *out)) == (ssize_t)want;
}

/* The process's mappings, from /proc/self/maps; *N of them (malloc'd), NULL on error. */
static struct vma *mappings(size_t *n)
{
    FILE *f = fopen("/proc/self/maps", "re");
    if (!f)
        return NULL;
    size_t cap = 256;
    struct vma *v = malloc(cap * sizeof *v);
    char line[512];
    *n = 0;
    while (v && fgets(line, sizeof line, f)) {
        unsigned long lo, hi;
        char perms[8] = "", path[256] = "";
        unsigned long long off;
        unsigned maj, min;
        unsigned long ino;
        int got = sscanf(line, "%lx-%lx %7s %llx %x:%x %lu %255s", &lo, &hi, perms, &off, &maj,
                         &min, &ino, path);
        if (got < 7)
            continue;
        if (*n == cap) {
            struct vma *w = realloc(v, 2 * cap * sizeof *v);
            if (!w) {
                free(v);
                v = NULL;
                break;
            }
            v = w;
            cap *= 2;
        }
        bool anon = ino == 0 && (got == 7 || !strcmp(path, "[heap]"));
        v[(*n)++] = (struct vma){lo, hi, anon && !strcmp(perms, "rw-p")};
    }
    fclose(f);
    return v;
}

static int cmp_piece(const void *x, const void *y)
{
    const struct fs_color_run *a = x, *b = y;
    return a->vpage < b->vpage ? -1 : a->vpage > b->vpage;
}

/* Whether an earlier call moved virtual page PG (the first SORTED pieces, sorted by
 * page, are the earlier calls'). */
static bool ours(uint64_t pg, size_t sorted)
{
    size_t lo = 0, hi = sorted;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (pieces[mid].vpage + pieces[mid].npages <= pg)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < sorted && pieces[lo].vpage <= pg;
}

static bool anon_rw(const struct vma *v, size_t n, uintptr_t lo, uintptr_t hi)
{
    for (size_t i = 0; i < n; i++)
        if (v[i].lo <= lo && hi <= v[i].hi)
            return v[i].anon_rw;
    return false;
}

/* A fresh folio: 2 MiB aligned, populated (zero-filled), one huge page (its frames
 * consecutive from a multiple of 512).  False after counting why not. */
static bool new_folio(void)
{
    if (no_thp)
        return false;
    char *raw = mmap(NULL, 2 * FOLIO, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (raw == MAP_FAILED) {
        no_thp = true;
        return false;
    }
    char *p = (char *)(((uintptr_t)raw + FOLIO - 1) & ~(uintptr_t)(FOLIO - 1));
    if (p > raw)
        munmap(raw, (size_t)(p - raw));
    munmap(p + FOLIO, (size_t)(raw + 2 * FOLIO - (p + FOLIO)));
    static uint64_t e[FOLIO_PAGES];
    bool ok = madvise(p, FOLIO, MADV_HUGEPAGE) == 0 &&
              madvise(p, FOLIO, MADV_POPULATE_WRITE) == 0 &&
              entries((uintptr_t)p / PAGE, e, FOLIO_PAGES) && (e[0] & PM_PRESENT) &&
              (e[0] & PM_PFN) % FOLIO_PAGES == 0;
    for (unsigned i = 1; ok && i < FOLIO_PAGES; i++)
        ok = (e[i] & PM_PRESENT) && (e[i] & PM_PFN) == (e[0] & PM_PFN) + i;
    if (!ok) {
        munmap(p, FOLIO);
        no_thp = true;
        return false;
    }
    folio.addr = p;
    folio.next = 0;
    return true;
}

/* How many of the M pages at virtual page V hold data (present or swapped). */
static uint64_t had_data(uint64_t v, uint64_t m)
{
    uint64_t e[64], n = 0;
    for (uint64_t j = 0; j < m; j += 64) {
        size_t k = m - j < 64 ? (size_t)(m - j) : 64;
        if (!entries(v + j, e, k))
            return m;
        for (size_t t = 0; t < k; t++)
            n += (e[t] & (PM_PRESENT | PM_SWAPPED)) != 0;
    }
    return n;
}

/* Moves folio pages of consecutive colors from COLOR under the K pages at virtual page
 * V, their data copied first; the pages it could not move are counted by reason. */
static void move_piece(uint64_t v, uint64_t k, uint32_t color, uint32_t nc)
{
    while (k) {
        uint32_t c = color % nc;
        unsigned o = folio.addr ? folio.next + (c + nc - folio.next % nc) % nc : FOLIO_PAGES;
        if (o >= FOLIO_PAGES) {
            if (!new_folio()) {
                fs_color_real.no_thp += k;
                return;
            }
            o = c;
        }
        uint64_t m = k < FOLIO_PAGES - o ? k : FOLIO_PAGES - o;
        void *to = (void *)(uintptr_t)(v * PAGE);
        uint64_t with_data = had_data(v, m);
        memcpy(folio.addr + (size_t)o * PAGE, to, m * PAGE);
        if (mremap(folio.addr + (size_t)o * PAGE, m * PAGE, m * PAGE,
                   MREMAP_MAYMOVE | MREMAP_FIXED, to) == MAP_FAILED) {
            if (errno == ENOMEM)
                fs_color_real.map_count += k;
            else
                fs_color_real.failed += k;
            return;
        }
        madvise(to, m * PAGE, MADV_NOHUGEPAGE);
        fs_color_real.copied += with_data;
        if (npieces < MAX_PIECES)
            pieces[npieces++] = (struct fs_color_run){v, m, c};
        fs_color_real.moved += m;
        folio.next = o + (unsigned)m;
        v += m;
        k -= m;
        color = c + (uint32_t)m;
    }
}

void fs_color_real_apply(const struct fs_color_run *runs, size_t n, uint32_t nc,
                         int in_parallel)
{
    uint64_t requested = 0;
    for (size_t i = 0; i < n; i++)
        requested += runs[i].npages;
    uint64_t copied = fs_color_real.copied; /* of pages moved before: still true */
    memset(&fs_color_real, 0, sizeof fs_color_real);
    fs_color_real.requested = requested;
    fs_color_real.copied = copied;
    if (geteuid() != 0) { /* frame numbers read as 0: no folio can be checked */
        fs_color_real.not_root = requested;
        return;
    }
    if (in_parallel) {
        fs_color_real.in_parallel = requested;
        return;
    }
    if (nc == 0 || FOLIO_PAGES % nc || (moved_colors && nc != moved_colors)) {
        fs_color_real.colors_unfit = requested;
        return;
    }
    moved_colors = nc;
    size_t before = npieces;
    size_t nv = 0;
    struct vma *v = mappings(&nv);
    for (size_t i = 0; i < n; i++) {
        const struct fs_color_run *r = &runs[i];
        uint64_t start = 0, len = 0; /* the piece being gathered */
        for (uint64_t j = 0; j <= r->npages; j++) {
            bool take = false;
            if (j < r->npages) {
                uint64_t pg = r->vpage + j;
                if (ours(pg, before))
                    fs_color_real.moved++;
                else if (!v || !anon_rw(v, nv, pg * PAGE, pg * PAGE + PAGE))
                    fs_color_real.not_anonymous++;
                else
                    take = true;
            }
            if (take) {
                if (!len)
                    start = j;
                len++;
                continue;
            }
            if (len)
                move_piece(r->vpage + start, len, (uint32_t)((r->color + start) % nc), nc);
            len = 0;
        }
    }
    free(v);
    if (npieces > before)
        qsort(pieces, npieces, sizeof *pieces, cmp_piece);
    fs_color_real_verify();
    fs_color_real.placed = fs_color_real.at_color;
}

void fs_color_real_verify(void)
{
    uint64_t ok = 0, gone = 0, e[64];
    size_t nv = 0;
    struct vma *v = mappings(&nv);
    for (size_t i = 0; i < npieces; i++)
        for (uint64_t j = 0; j < pieces[i].npages; j += 64) {
            size_t k = pieces[i].npages - j < 64 ? (size_t)(pieces[i].npages - j) : 64;
            if (!entries(pieces[i].vpage + j, e, k))
                continue;
            for (size_t t = 0; t < k; t++) {
                uint64_t pg = pieces[i].vpage + j + t;
                if (v && !anon_rw(v, nv, pg * PAGE, pg * PAGE + PAGE))
                    gone++; /* unmapped (or remapped) by the program */
                else
                    ok += (e[t] & PM_PRESENT) && (e[t] & PM_PFN) % moved_colors ==
                                                     (pieces[i].color + j + t) % moved_colors;
            }
        }
    free(v);
    fs_color_real.at_color = ok;
    fs_color_real.gone = gone;
}
