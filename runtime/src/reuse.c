/*
 * reuse.c — whether a site's releases page out pages the program still needs.
 *
 * Under FORESIGHT_RELEASE=adaptive a release pages its pages out (MADV_PAGEOUT) while
 * its site has proved right, and only deactivates them (MADV_COLD) once it has not.
 * Paging out writes dirty pages to swap in the releasing thread and frees their
 * frames, so the prefetches that follow find free memory instead of reclaiming (and
 * interrupting the program's CPU for TLB flushes) to make room.  A release the
 * compiler placed where another reference still reads the pages costs a fault, a
 * write and a re-read instead: NAS MG made 65,000 major faults with every release
 * paged out (FORESIGHT_RELEASE=pageout), 6,100 with MADV_COLD.
 *
 * So every page a pageout took out of the page table is logged here (per 64 KiB
 * block, with its site and the prefetch clock: pages asked for by prefetches so far).
 * When a later release reaches the same block, the logged pages that are mapped again
 * were touched since; if within a memory limit's worth of prefetching, least-recently-
 * used replacement would have kept them, and the pageout was early.  Pages still out
 * stay logged until they come back or another pageout of the block replaces them.
 * A site whose early pages exceed an eighth of the pages it paged out deactivates
 * from then on.  The page table (/proc/self/pagemap), not mincore: a dirty page stays
 * in memory until its write to swap completes, and a prefetch reads a page back
 * without mapping it.
 *
 * The log is a table indexed by a hash of the block, two slots per block of the memory
 * limit rounded up to a power of two (at least 64, at most 16,384: 512 KiB): its pages
 * count against the limit as the program's do, and a table of fixed size took 508 KiB
 * of an 8 MiB cap.  A collision
 * forgets the older entry, which only keeps a site paging out longer.  A paged-out
 * page is read back from swap or its file when touched, so no data is ever at stake
 * here.  Without a readable pagemap no site is trusted: releases deactivate, as in auto.
 *
 * A program over its limit by less than an eighth of its address space (budget.c)
 * deactivates what it releases, and pages out only one 16-page block in 32 of it, the
 * same blocks by address each time: a probe, logged as above but counted back within
 * half the window.  A site with more than an eighth of its probed pages back that soon
 * has its releases left out (fs_reuse_skip): its next sweep reads first what this one
 * passed last (NAS LU's forward and backward sweeps), and deactivating it handed
 * exactly that data to the kernel's reclaim, where the LRU lists alone keep it.  A
 * cyclic sweep's probed pages come back a whole sweep later, and its releases go on.
 *
 * The default (FORESIGHT_RELEASE=adaptive) since the look-ahead was capped, though under
 * a cgroup v1 memory cap it makes the memory cgroup's OOM killer likelier.  NAS CG, 64 MiB under 32 MiB, killed in 5 of 34 runs against 0 of
 * 20 with auto (6 of 10 with every release paged out): data paged out eagerly at the
 * end of its initialisation is read back at once, the kernel's refault detection
 * activates all of it, and with no inactive pages left the v1 cgroup gives up
 * reclaiming (the OOM report shows 32 MiB of active, swap-cached anonymous memory and
 * no inactive).  docs/decisions.md has the measurements.
 */
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"

#define BLOCK_SHIFT 4 /* 16 pages */
#define BLOCK_PAGES (1u << BLOCK_SHIFT)
#define SLOT_BITS 14     /* the most slots: 2^14 */
#define MIN_SLOT_BITS 6  /* the fewest */
#define PM_PRESENT ((uint64_t)1 << 63)

struct logged {
    uintptr_t block;             /* page >> BLOCK_SHIFT, 0 when empty */
    struct foresight_site *site; /* the pageout's site */
    uint64_t clock;              /* the clock when paged out */
    uint16_t out;                /* pages of the block the pageout unmapped, a bit each */
    bool probe;                  /* a probe's pageout (a small overflow): back within half
                                    a limit's worth of prefetching counts */
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct logged table[1u << SLOT_BITS];

/* The probes' own account per site (its counters hold every pageout, probe or not):
 * 256 sites, filled in order under the lock; a site that finds no slot is never
 * judged by its probes. */
#define PROBE_SITES 256
static struct probe_account {
    const struct foresight_site *site;
    unsigned long out, back;
} probes[PROBE_SITES];
static uint64_t probed_pages; /* pages the probes paged out, all sites */

/* SITE's probe account; ADD makes one (caller holds the lock to add).  NULL when it
 * has none. */
static struct probe_account *probe_account(const struct foresight_site *site, bool add)
{
    for (unsigned i = 0; i < PROBE_SITES; i++) {
        const struct foresight_site *s = __atomic_load_n(&probes[i].site, __ATOMIC_ACQUIRE);
        if (s == site)
            return &probes[i];
        if (s == NULL) {
            if (!add)
                return NULL;
            __atomic_store_n(&probes[i].site, site, __ATOMIC_RELEASE);
            return &probes[i];
        }
    }
    return NULL;
}
static bool used;           /* anything logged yet */
static struct fs_own pagemap = {.fd = -1};
static int pagemap_state; /* 0: not opened yet, 1: open, -1: unreadable */
static uint64_t clock_pages;

void fs_reuse_advance(size_t npages)
{
    __atomic_add_fetch(&clock_pages, npages, __ATOMIC_RELAXED);
}

static unsigned slot_bits; /* the table's size in use, set at its first use */

/* The slot of BLOCK (caller holds the lock). */
static struct logged *slot(uintptr_t block)
{
    if (slot_bits == 0)
        slot_bits = (unsigned)__builtin_ctzll(fs_budget_table_slots(
            FORESIGHT_PAGE_SHIFT + BLOCK_SHIFT, 2, (size_t)1 << MIN_SLOT_BITS,
            (size_t)1 << SLOT_BITS));
    return &table[(block * 0x9E3779B97F4A7C15ull) >> (64 - slot_bits)];
}

/* Which pages of the NBLOCKS blocks from BLOCK are mapped, 16 bits a block; false
 * when the page table cannot be read (caller holds the lock). */
static bool mapped_masks(uintptr_t block, size_t nblocks, uint16_t *masks)
{
    if (pagemap_state == 1 && !fs_own_valid(&pagemap))
        pagemap_state = 0; /* the program closed it (and may have the number now) */
    if (pagemap_state == 0) {
        int fd = fs_own_fd(&pagemap, open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC));
        __atomic_store_n(&pagemap_state, fd < 0 ? -1 : 1, __ATOMIC_RELAXED);
    }
    if (pagemap_state != 1)
        return false;
    /* Four blocks per read: a hint's stack stays small (it may be a signal handler's). */
    uint64_t e[4 * BLOCK_PAGES];
    for (size_t done = 0; done < nblocks; done += 4) {
        size_t n = nblocks - done < 4 ? nblocks - done : 4;
        size_t bytes = n * BLOCK_PAGES * sizeof e[0];
        off_t at = (off_t)((block + done) << BLOCK_SHIFT) * (off_t)sizeof e[0];
        if (pread(pagemap.fd, e, bytes, at) != (ssize_t)bytes)
            return false;
        for (size_t b = 0; b < n; b++) {
            masks[done + b] = 0;
            for (unsigned i = 0; i < BLOCK_PAGES; i++)
                if (e[b * BLOCK_PAGES + i] & PM_PRESENT)
                    masks[done + b] |= (uint16_t)(1u << i);
        }
    }
    return true;
}

bool fs_reuse_check(uintptr_t page, size_t npages, uint16_t mapped[FS_REUSE_BLOCKS])
{
    uint64_t now = __atomic_load_n(&clock_pages, __ATOMIC_RELAXED);
    uint64_t window = fs_budget_limit_bytes() >> FORESIGHT_PAGE_SHIFT;
    uintptr_t first = page >> BLOCK_SHIFT, last = (page + npages - 1) >> BLOCK_SHIFT;
    if (npages == 0 || last - first + 1 > FS_REUSE_BLOCKS)
        return false;
    pthread_mutex_lock(&lock);
    bool known = mapped_masks(first, last - first + 1, mapped);
    for (uintptr_t b = first; known && b <= last; b++) {
        struct logged *e = slot(b);
        if (e->block != b)
            continue;
        uint16_t back = e->out & mapped[b - first];
        if (back && now - e->clock < (e->probe ? window / 2 : window)) {
            fs_count(e->site, FS_PAGES_BACK, (unsigned long)__builtin_popcount(back));
            struct probe_account *a = e->probe ? probe_account(e->site, false) : NULL;
            if (a != NULL)
                __atomic_add_fetch(&a->back, (unsigned long)__builtin_popcount(back),
                                   __ATOMIC_RELAXED);
        }
        e->out &= (uint16_t)~back; /* each page counts once; those still out wait */
        if (e->out == 0)
            e->block = 0;
    }
    pthread_mutex_unlock(&lock);
    return known;
}

void fs_reuse_log(struct foresight_site *site, uintptr_t page, size_t npages,
                  const unsigned char *before, const uint16_t mapped_before[FS_REUSE_BLOCKS],
                  bool probe)
{
    uint64_t now = __atomic_load_n(&clock_pages, __ATOMIC_RELAXED);
    uintptr_t first = page >> BLOCK_SHIFT, last = (page + npages - 1) >> BLOCK_SHIFT;
    uint16_t mapped[FS_REUSE_BLOCKS];
    pthread_mutex_lock(&lock);
    used = true;
    if (npages == 0 || last - first + 1 > FS_REUSE_BLOCKS ||
        !mapped_masks(first, last - first + 1, mapped)) {
        pthread_mutex_unlock(&lock);
        return;
    }
    for (uintptr_t b = first; b <= last; b++) {
        uint16_t out = 0;
        for (unsigned i = 0; i < BLOCK_PAGES; i++) {
            uintptr_t p = (b << BLOCK_SHIFT) + i;
            if (p >= page && p < page + npages && before[p - page] == (probe ? 2 : 1))
                out |= (uint16_t)(1u << i);
        }
        /* Mapped before the release, not after: a page already out (in the swap cache,
         * its write pending) is no new pageout. */
        out &= (uint16_t)(mapped_before[b - first] & ~mapped[b - first]);
        if (out == 0)
            continue;
        fs_count(site, FS_PAGES_PAGED_OUT, (unsigned long)__builtin_popcount(out));
        if (probe) {
            struct probe_account *a = probe_account(site, true);
            if (a != NULL)
                __atomic_add_fetch(&a->out, (unsigned long)__builtin_popcount(out),
                                   __ATOMIC_RELAXED);
            __atomic_add_fetch(&probed_pages, (uint64_t)__builtin_popcount(out),
                               __ATOMIC_RELAXED);
        }
        *slot(b) = (struct logged){.block = b, .site = site, .clock = now, .out = out,
                                   .probe = probe};
    }
    pthread_mutex_unlock(&lock);
}

/* Whether PAGE's block is one of the few a probe pages out: one block in 32 by a hash
 * of its address, the same blocks at every release, so the next release of a sampled
 * block finds what the last one logged.  Not slot()'s hash: the probed blocks would all
 * fall in a 32nd of the table. */
bool fs_reuse_probed(uintptr_t page)
{
    return (((uint64_t)(page >> BLOCK_SHIFT) * 0xD6E8FEB86659FD93ull) >> 59) == 0;
}

uint64_t fs_reuse_probed_pages(void)
{
    return __atomic_load_n(&probed_pages, __ATOMIC_RELAXED);
}

/* Releases deactivate their pages and page out the probe's blocks (fs_reuse_probed):
 * FORESIGHT_RELEASE=adaptive, the program's address space within 9/8 of the limit
 * (a small overflow, where paging out every page a sweep passed costs more than the
 * kernel's reclaim takes), the page table readable. */
bool fs_reuse_probing(void)
{
    return fs_cfg.release == FS_REL_ADAPTIVE && !fs_budget_much_larger() &&
           __atomic_load_n(&pagemap_state, __ATOMIC_RELAXED) == 1;
}

/* A release of SITE is left out: under FORESIGHT_RELEASE=adaptive, with the program's
 * address space within 9/8 of the limit (budget.c), its probes' pages came back within
 * half a limit's worth of prefetching: the next sweep reads what this one passed
 * first (LU's forward and backward sweeps), and the kernel's LRU lists keep such data
 * better than a release can. */
bool fs_reuse_skip(const struct foresight_site *site)
{
    if (!fs_reuse_probing())
        return false;
    const struct probe_account *a = probe_account(site, false);
    return a != NULL && __atomic_load_n(&a->back, __ATOMIC_RELAXED) >
                            __atomic_load_n(&a->out, __ATOMIC_RELAXED) / 8;
}

/* SITE's pageouts (its probes' left out) proved right: few came back within the
 * window. */
bool fs_reuse_trusted(const struct foresight_site *site)
{
    if (__atomic_load_n(&pagemap_state, __ATOMIC_RELAXED) == -1)
        return false;
    unsigned long out = __atomic_load_n(&site->fs_stat[FS_PAGES_PAGED_OUT], __ATOMIC_RELAXED);
    unsigned long back = __atomic_load_n(&site->fs_stat[FS_PAGES_BACK], __ATOMIC_RELAXED);
    const struct probe_account *a = probe_account(site, false);
    if (a != NULL) {
        out -= __atomic_load_n(&a->out, __ATOMIC_RELAXED);
        back -= __atomic_load_n(&a->back, __ATOMIC_RELAXED);
    }
    return back <= out / 8;
}

/* At start-up, while the descriptor limit is the one the program started with: a
 * program that lowers RLIMIT_NOFILE to what it needs later must not find its last
 * descriptor taken by ours (it is kept high, outside any limit it sets lower). */
void fs_reuse_init(void)
{
    pthread_mutex_lock(&lock);
    if (pagemap_state == 0 && fs_cfg.release == FS_REL_ADAPTIVE) {
        int fd = fs_own_fd(&pagemap, open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC));
        __atomic_store_n(&pagemap_state, fd < 0 ? -1 : 1, __ATOMIC_RELAXED);
    }
    pthread_mutex_unlock(&lock);
}

void fs_reuse_reset(void)
{
    pthread_mutex_init(&lock, NULL);
    if (used && slot_bits != 0) /* the parent's entries describe the parent's page table */
        memset(table, 0, ((size_t)1 << slot_bits) * sizeof table[0]);
    memset(probes, 0, sizeof probes);
    probed_pages = 0;
    used = false;
    slot_bits = 0;
    fs_own_close(&pagemap); /* the parent's page table: the child opens its own */
    pagemap_state = 0;
}
