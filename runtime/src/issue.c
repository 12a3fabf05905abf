/*
 * issue.c — carrying out one request, in a worker thread or the calling thread.
 *
 * Prefetch (paper Section 2.4.2, on Linux): ask mincore which pages are
 * missing, respect the memory budget, then start reads for the missing runs
 * only.  MADV_WILLNEED starts asynchronous reads (file readahead, or swap-in
 * of anonymous pages) but the kernel caps one call near the readahead window,
 * so runs are issued in FORESIGHT_CHUNK pieces; MADV_POPULATE_READ also maps
 * the pages but blocks the worker until they arrive.
 *
 * Release: never destructive.  MADV_COLD moves pages to the reclaimable end of
 * the LRU, where they can still be rescued (the paper's "end of the free
 * list").  When the prefetch footprint is over its budget, or under
 * FORESIGHT_RELEASE=adaptive while a site's releases prove right (reuse.c), and the
 * program's address space is clearly larger than the limit (release_mode),
 * dirty shared file pages are written back with msync(MS_SYNC) and the pages
 * are paged out (MADV_PAGEOUT), which writes anonymous pages to swap.  MADV_DONTNEED and MADV_FREE are never used.  Pages
 * freed are counted with mincore before and after, not inferred from calls.
 */
#include <errno.h>
#include <sys/mman.h>

#include "internal.h"

#define PIECE_PAGES 512 /* mincore vector per step: 2 MiB */
_Static_assert(FS_REUSE_BLOCKS >= PIECE_PAGES / 16 + 1, "a piece's blocks for reuse.c");

static int populate_supported = 1;

static void *page_addr(uintptr_t page)
{
    return (void *)(page << FORESIGHT_PAGE_SHIFT);
}

static void local_willneed(uintptr_t page, size_t npages)
{
    size_t chunk = fs_cfg.chunk_bytes >> FORESIGHT_PAGE_SHIFT;
    for (size_t done = 0; done < npages; done += chunk) {
        size_t n = npages - done < chunk ? npages - done : chunk;
        madvise(page_addr(page + done), n << FORESIGHT_PAGE_SHIFT, MADV_WILLNEED);
    }
}

/* MADV_WILLNEED, except for pages of a file an I/O node serves, whose prefetch goes to
 * the node (remote.c); a run may cross from one mapping into the next. */
static void willneed(uintptr_t page, size_t npages)
{
    while (npages > 0) {
        size_t n = fs_remote_prefetch(page, npages);
        if (n == 0) {
            local_willneed(page, npages);
            return;
        }
        page += n;
        npages -= n;
    }
}

static void populate(uintptr_t page, size_t npages)
{
    if (__atomic_load_n(&populate_supported, __ATOMIC_RELAXED) &&
        madvise(page_addr(page), npages << FORESIGHT_PAGE_SHIFT, MADV_POPULATE_READ) != 0 &&
        errno == EINVAL) {
        __atomic_store_n(&populate_supported, 0, __ATOMIC_RELAXED); /* kernel < 5.14 */
        local_willneed(page, npages);
    } else if (!__atomic_load_n(&populate_supported, __ATOMIC_RELAXED)) {
        local_willneed(page, npages);
    }
}

/* Call fn on each maximal run of pages i in [0, n) with want(vec[i]). */
static size_t for_each_run(uintptr_t page, const unsigned char *vec, size_t n,
                           bool (*want)(unsigned char), void (*fn)(uintptr_t, size_t))
{
    size_t total = 0;
    for (size_t i = 0; i < n;) {
        if (!want(vec[i])) {
            i++;
            continue;
        }
        size_t j = i;
        while (j < n && want(vec[j]))
            j++;
        fn(page + i, j - i);
        total += j - i;
        i = j;
    }
    return total;
}

static bool missing(unsigned char v)
{
    return v == 0; /* mapped and not resident */
}

static bool unmapped(unsigned char v)
{
    return v & 0x80;
}

static bool mapped(unsigned char v)
{
    return !(v & 0x80);
}

static void unmark(uintptr_t page, size_t n)
{
    fs_residency_clear(page, n);
}

/* FORESIGHT_TRACE: a P line for a piece with pages to hand to the kernel, before the
 * reads start, so a fault on a page whose read is still in flight comes after it. */
static void trace_piece(uintptr_t page, const unsigned char *vec, size_t n, size_t resident,
                        bool (*wanted)(unsigned char), const struct foresight_site *site)
{
    for (size_t i = 0; i < n; i++)
        if (wanted(vec[i])) {
            fs_trace_prefetch(page, n, resident, site);
            return;
        }
}

/* A prefetch dropped for the budget: its pages lose their marks, except those mincore
 * finds resident (the program touched them), which stay marked so the inline filter
 * keeps absorbing hints to them.  Clearing those too sent every later hint to a hot
 * page (IS's density table) through the queue again, to be dropped again. */
static void drop_over_budget(const struct fs_request *r)
{
    unsigned char vec[PIECE_PAGES];
    fs_count(r->site, FS_DROPPED_BUDGET, 1);
    for (size_t done = 0; done < r->npages; done += PIECE_PAGES) {
        uintptr_t p = r->page + done;
        size_t n = r->npages - done < PIECE_PAGES ? r->npages - done : PIECE_PAGES;
        if (fs_resident_vector(p, n, vec) < 0) {
            fs_residency_clear(p, n);
            continue;
        }
        for (size_t i = 0; i < n; i++)
            if (!(vec[i] & 1))
                fs_residency_clear(p + i, 1);
    }
}

bool fs_budget_admits(struct foresight_site *site, size_t npages, uint64_t reconcile_gap_ns)
{
    size_t budget = fs_budget_pages();
    if (fs_residency_footprint() <= budget)
        return true;
    /* A reconciliation scans marked chunks with mincore until the footprint is an
     * eighth under budget; one that found the footprint really resident is not
     * repeated for the next budget/4 pages requested (at budget/64, random
     * one-page prefetches under a small cap kept the workers scanning). */
    static size_t quiet_pages;
    static uint64_t last_ns;
    size_t quiet = __atomic_load_n(&quiet_pages, __ATOMIC_RELAXED);
    if (quiet == 0) {
        uint64_t now = fs_now_ns();
        if (now - __atomic_load_n(&last_ns, __ATOMIC_RELAXED) >= reconcile_gap_ns) {
            __atomic_store_n(&last_ns, now, __ATOMIC_RELAXED);
            fs_residency_reconcile(budget - budget / 8);
            if (fs_residency_footprint() > budget)
                __atomic_store_n(&quiet_pages, budget / 4 + 1, __ATOMIC_RELAXED);
        }
    } else {
        size_t left = quiet > npages ? quiet - npages : 0;
        __atomic_store_n(&quiet_pages, left, __ATOMIC_RELAXED);
    }
    /* Only hints that are no compiled loop's stream and whose sites never release are
     * dropped.  A stream keeps a window bounded by its look-ahead in flight, whether
     * it releases behind itself or keeps its data for reuse, and the footprint it
     * finds over budget was piled up by pages the program has since used: IS's
     * gathers into its key and rank arrays, whose marks stay while those pages are in
     * use, had every stream behind them dropped and faulting (its direct hints alone
     * ran 1.8x faster than direct and indirect together); NAS FT's transforms along z,
     * which keep their planes for the next block of lines, had 1.07 million of 4.06
     * million hints dropped, most of them when the pages were not in memory. */
    return fs_residency_footprint() <= budget ||
           (__atomic_load_n(&site->fs_state, __ATOMIC_RELAXED) & FS_SITE_STREAM) ||
           __atomic_load_n(&site->fs_stat[FS_RELEASES], __ATOMIC_RELAXED) != 0;
}

static void fs_issue_prefetch(const struct fs_request *r)
{
    if (!fs_budget_admits(r->site, r->npages, 0)) {
        drop_over_budget(r);
        return;
    }
    unsigned char vec[PIECE_PAGES];
    size_t issued = 0, resident = 0;
    bool any_mapped = false;
    /* FORESIGHT_LOOKAHEAD=measured: now and then a request is read synchronously and
     * timed, to measure latency and bandwidth (distance.c). */
    bool timed = fs_distance_sample_due();
    /* A file an I/O node serves is prefetched by the node (remote.c): once, and not timed
     * (the node answers at once, which says nothing of its disk). */
    const bool remote = fs_remote_covers(r->page);
    if (remote)
        timed = false;
    uint64_t t_start = timed ? fs_now_ns() : 0;
    for (size_t done = 0; done < r->npages; done += PIECE_PAGES) {
        uintptr_t p = r->page + done;
        size_t n = r->npages - done < PIECE_PAGES ? r->npages - done : PIECE_PAGES;
        long res = fs_resident_vector(p, n, vec);
        if (done == 0 && r->mem != FS_MEM_UNKNOWN && (res < 0) != (r->mem == FS_MEM_NONE))
            fs_mapping_forget(); /* mapped or unmapped since the cache was filled */
        if (res < 0) {
            /* Nothing mapped: the marks stay, so a hint that keeps reaching past the end
             * of an object (a look-ahead window beyond a buffer) is filtered inline from
             * now on instead of costing a request each time; the periodic verification
             * of filtered calls finds the range unmapped, clears it and counts it. */
            continue;
        }
        any_mapped = true;
        resident += (size_t)res;
        for_each_run(p, vec, n, unmapped, unmark);
        /* FORESIGHT_FILTER=0: the kernel gets every mapped page and decides itself, as
         * the paper's system call did without the run-time filter (Figure 12(c)). */
        bool (*wanted)(unsigned char) = fs_cfg.filter ? missing : mapped;
        if (fs_tracing())
            trace_piece(p, vec, n, (size_t)res, wanted, r->site);
        if ((fs_cfg.method == FS_POPULATE || timed) && !remote)
            issued += for_each_run(p, vec, n, wanted, populate);
        else
            issued += for_each_run(p, vec, n, wanted, willneed);
        if (fs_cfg.method == FS_BOTH && !timed && !remote)
            for_each_run(p, vec, n, wanted, populate);
    }
    if (!any_mapped) {
        fs_count(r->site, FS_BAD_INPUT, 1);
        return;
    }
    fs_count(r->site, FS_PAGES_UNNECESSARY, resident);
    if (timed && issued)
        fs_distance_record(issued, r->t_enqueued, t_start, fs_now_ns());
    if (issued) {
        fs_count(r->site, FS_ISSUED, 1);
        fs_count(r->site, FS_PAGES_ISSUED, issued);
    }
}

static void release_cold(uintptr_t page, size_t n)
{
    madvise(page_addr(page), n << FORESIGHT_PAGE_SHIFT, MADV_COLD);
}

static void release_pageout(uintptr_t page, size_t n)
{
    /* MADV_PAGEOUT leaves dirty file pages alone: write them back first.  msync
     * only writes for shared file mappings and is harmless for anonymous ones. */
    msync(page_addr(page), n << FORESIGHT_PAGE_SHIFT, MS_SYNC);
    madvise(page_addr(page), n << FORESIGHT_PAGE_SHIFT, MADV_PAGEOUT);
}

static bool resident_unmarked(unsigned char v)
{
    return v == 1;
}

/* FORESIGHT_RELEASE=auto: page out when the prefetch footprint is over budget, else
 * deactivate; adaptive: also page out while the site's releases prove right (reuse.c).
 * Either only while the program's address space is clearly larger than the limit
 * (budget.c; under FORESIGHT_MEM that is not asked: the budget alone decides): a program that overflows memory by a little loses less when the kernel
 * takes what it must from the deactivated pages than when every page a sweep passed
 * is written out and read back.  Data at 1 times a cgroup cap (`foresight run --mem
 * 256M --cold`, 256 MiB, two alternated rounds): heat3d 0.81-1.00 s deactivating,
 * 1.89-2.13 s paging out, the original 0.73 s; cholqr 0.89-1.01 against 1.22-1.33
 * (0.87-0.96); NAS SP at 128 MiB 1.36-1.37 against 1.67-1.90 (0.99-1.00).  Below that,
 * under adaptive, a deactivating release also pages out its probe's few blocks
 * (probe_pageout, reuse.c). */
static enum fs_release_mode release_mode(const struct foresight_site *site)
{
    switch (fs_cfg.release) {
    case FS_REL_AUTO:
        return fs_budget_full() && fs_budget_much_larger() ? FS_REL_PAGEOUT : FS_REL_COLD;
    case FS_REL_ADAPTIVE:
        return (fs_reuse_trusted(site) || fs_budget_full()) && fs_budget_much_larger()
                   ? FS_REL_PAGEOUT
                   : FS_REL_COLD;
    default:
        return fs_cfg.release;
    }
}

/* The probe's pages of a deactivating release (fs_reuse_probing): the resident,
 * unmarked pages of the sampled blocks (fs_reuse_probed) are paged out, marked 2 in VEC
 * so the rest go cold. */
static size_t probe_pageout(uintptr_t page, unsigned char *vec, size_t n)
{
    size_t done = 0;
    for (size_t i = 0; i < n;) {
        if (vec[i] != 1 || !fs_reuse_probed(page + i)) {
            i++;
            continue;
        }
        size_t j = i;
        while (j < n && vec[j] == 1 && fs_reuse_probed(page + j))
            vec[j++] = 2;
        release_pageout(page + i, j - i);
        done += j - i;
        i = j;
    }
    return done;
}

static bool probed_or_unmarked(unsigned char v)
{
    return v == 1 || v == 2;
}

static void fs_issue_release(const struct fs_request *r)
{
    enum fs_release_mode mode = release_mode(r->site);
    const bool probing = mode == FS_REL_COLD && fs_reuse_probing();
    if (mode == FS_REL_PAGEOUT) {
        __atomic_add_fetch(&fs_global_pageouts, 1, __ATOMIC_RELAXED);
        fs_pin_paging();
    }
    unsigned char vec[PIECE_PAGES], after[PIECE_PAGES];
    bool any_mapped = false;
    for (size_t done = 0; done < r->npages; done += PIECE_PAGES) {
        uintptr_t p = r->page + done;
        size_t n = r->npages - done < PIECE_PAGES ? r->npages - done : PIECE_PAGES;
        long res = fs_resident_vector(p, n, vec);
        if (res < 0)
            continue;
        any_mapped = true;
        if (fs_tracing())
            fs_trace_release(p, n, r->site, mode == FS_REL_PAGEOUT);
        if (res == 0)
            continue; /* nothing resident: nothing to release (a huge sparse range is quick) */
        uint16_t mapped[FS_REUSE_BLOCKS];
        bool known = fs_cfg.release == FS_REL_ADAPTIVE && fs_reuse_check(p, n, mapped);
        /* A page prefetched again since the release was asked for is wanted: skip it
         * (the paper's releaser re-checked the bit vector the same way). */
        for (size_t i = 0; i < n; i++)
            if (fs_residency_test(p + i))
                vec[i] = 0x40;
        size_t probed = probing && known ? probe_pageout(p, vec, n) : 0;
        size_t targeted = probed + for_each_run(p, vec, n, resident_unmarked,
                                                mode == FS_REL_PAGEOUT ? release_pageout
                                                                       : release_cold);
        if (targeted == 0)
            continue;
        fs_resident_vector(p, n, after);
        size_t freed = 0;
        for (size_t i = 0; i < n; i++)
            freed += probed_or_unmarked(vec[i]) && !(after[i] & 1);
        fs_count(r->site, FS_PAGES_FREED, freed);
        fs_count(r->site, FS_PAGES_DEACTIVATED, targeted - freed);
        if (known && (mode == FS_REL_PAGEOUT || probed))
            fs_reuse_log(r->site, p, n, vec, mapped, probed != 0);
    }
    if (!any_mapped)
        fs_count(r->site, FS_BAD_INPUT, 1);
}

void fs_issue(const struct fs_request *r)
{
    if (r->kind == FS_REQ_PREFETCH)
        fs_issue_prefetch(r);
    else
        fs_issue_release(r);
}
