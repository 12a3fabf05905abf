/*
 * residency.c — the user-level residency table (paper Section 2.4.1, with the
 * multilevel bit vector Section 4.2 proposes for 64-bit address spaces).
 *
 * A directory of 2^17 pointers covers the 47-bit user address space; each leaf
 * holds one bit per 4 KiB page of 1 GiB.  Leaves are allocated on the first mark
 * of mapped memory in their GiB, so unused address space costs nothing, and nor
 * does a hint naming address space that is not mapped.  A set bit means "believed
 * resident".
 *
 * Linux does not tell user space when it evicts, so bits can go stale.  The
 * table is kept honest by revalidating chunks (512 pages) with mincore():
 * chunks are remembered in the order they were marked, and when the marked
 * footprint exceeds the budget the oldest ones are revalidated first — the
 * pages the kernel's LRU is most likely to have evicted.
 */
#include <errno.h>
#include <string.h>
#include <sys/mman.h>

#include "internal.h"

/* The directory the inline fast path reads (NULL until initialised). */
uint64_t *const *foresight__dir = NULL;

static uint64_t **dir;
static size_t footprint;  /* pages marked; atomic */
static size_t peak;
static size_t leaves;     /* leaves allocated; atomic */

/* Chunks in the order they were first marked, for oldest-first reconciliation.  A
 * chunk is in the ring at most once: each leaf carries one "queued" bit per chunk
 * after its page bits (the inline fast path never reads them).  Without this, a
 * chunk marked, cleared and marked again piled up copies, and every reconciliation
 * rescanned them all (IS spent most of its hinted run in mincore). */
#define RING_SLOTS ((size_t)1 << 16) /* the most */
#define LEAF_CHUNKS (FS_LEAF_PAGES >> FS_CHUNK_SHIFT)
#define LEAF_ALLOC_WORDS (FS_LEAF_WORDS + LEAF_CHUNKS / 64)
static pthread_mutex_t ring_mu = PTHREAD_MUTEX_INITIALIZER;
static uintptr_t *ring;
static size_t ring_head, ring_count;
/* Slots in use: eight per chunk of the memory limit, at least 1,024 (8 KiB, 2 GiB of
 * chunks), set at the first push.  The ring's window slides as chunks are pushed and
 * popped, so every slot of it is touched in turn: at its full 512 KiB it took that much
 * of the program's memory.  A chunk is queued while any page of it is marked, so one-page
 * prefetches spread over more chunks than that fill the ring; the oldest chunk then loses
 * its marks as it leaves (ring_push_locked), so no mark outlives its place in the ring
 * and the footprint the budget reads stays one reconciliation can lower. */
static size_t ring_slots;

/* The ring's size (caller holds ring_mu). */
static size_t slots(void)
{
    if (ring_slots == 0)
        ring_slots = fs_budget_table_slots(FORESIGHT_PAGE_SHIFT + FS_CHUNK_SHIFT, 8, 1024,
                                           RING_SLOTS);
    return ring_slots;
}

int fs_residency_init(void)
{
    dir = mmap(NULL, FORESIGHT_DIR_ENTRIES * sizeof *dir, PROT_READ | PROT_WRITE,
               MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    ring = mmap(NULL, RING_SLOTS * sizeof *ring, PROT_READ | PROT_WRITE,
                MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (dir == MAP_FAILED || ring == MAP_FAILED)
        return -1;
    /* FORESIGHT_FILTER=0: the inline fast path reads a directory that stays empty, so
     * every call reaches the library; the runtime keeps its own table for the budget. */
    uint64_t **shown = dir;
    if (!fs_cfg.filter) {
        shown = mmap(NULL, FORESIGHT_DIR_ENTRIES * sizeof *dir, PROT_READ,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (shown == MAP_FAILED)
            return -1;
    }
    __atomic_store_n(&foresight__dir, (uint64_t *const *)shown, __ATOMIC_RELEASE);
    return 0;
}

void fs_residency_reset(void)
{
    if (dir == NULL)
        return;
    for (size_t i = 0; i < FORESIGHT_DIR_ENTRIES; i++)
        if (dir[i] != NULL)
            memset(dir[i], 0, LEAF_ALLOC_WORDS * sizeof(uint64_t));
    footprint = peak = 0;
    pthread_mutex_init(&ring_mu, NULL);
    ring_head = ring_count = 0;
}

/* ThreadSanitizer's annotation, present only in a TSan-instrumented process. */
extern void __tsan_release(void *addr) __attribute__((weak));

static uint64_t *leaf_for(uintptr_t page, bool create)
{
    uint64_t **slot = &dir[(page >> FORESIGHT_LEAF_SHIFT) & (FORESIGHT_DIR_ENTRIES - 1)];
    uint64_t *leaf = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
    if (leaf != NULL || !create)
        return leaf;
    /* The table grows only for memory that is mapped: a hint naming unmapped address
     * space (a look-ahead past an object, or absurd arguments) marks nothing in a GiB
     * that has no leaf yet, instead of costing a leaf per GiB it names. */
    unsigned char v;
    if (mincore((void *)(page << FORESIGHT_PAGE_SHIFT), FS_PAGE, &v) != 0 && errno == ENOMEM)
        return NULL;
    uint64_t *fresh = mmap(NULL, LEAF_ALLOC_WORDS * sizeof(uint64_t), PROT_READ | PROT_WRITE,
                           MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (fresh == MAP_FAILED)
        return NULL;
    if (__atomic_compare_exchange_n(slot, &leaf, fresh, false, __ATOMIC_ACQ_REL,
                                    __ATOMIC_ACQUIRE)) {
        /* The inline fast path reads the leaf after an acquire load of its slot, which
         * pairs with this compare-and-swap.  A TSan-instrumented program that uses the
         * installed (uninstrumented) library cannot see the swap, and would take the
         * kernel's zero-filling of the leaf (TSan's mmap interceptor records it as a
         * write by this thread) as racing with its reads: tell it about the release. */
        if (__tsan_release != NULL)
            __tsan_release(slot);
        __atomic_add_fetch(&leaves, 1, __ATOMIC_RELAXED);
        return fresh;
    }
    munmap(fresh, LEAF_ALLOC_WORDS * sizeof(uint64_t));
    return leaf;
}

/* Mask of bits [lo, hi] within one word. */
static inline uint64_t word_mask(unsigned lo, unsigned hi)
{
    return (~(uint64_t)0 >> (63 - (hi - lo))) << lo;
}

/* Apply fn to each (word, mask) of [page, page+npages); returns the sum of its results. */
typedef size_t (*word_fn)(uint64_t *word, uint64_t mask);

static size_t for_each_word(uintptr_t page, size_t npages, bool create, word_fn fn)
{
    size_t total = 0;
    uintptr_t end = page + npages;
    while (page < end) {
        uintptr_t word_end = (page | 63) + 1;
        uintptr_t stop = word_end < end ? word_end : end;
        uint64_t *leaf = leaf_for(page, create);
        if (leaf != NULL)
            total += fn(&leaf[(page >> 6) & (FS_LEAF_WORDS - 1)],
                        word_mask(page & 63, (stop - 1) & 63));
        else if (!create) /* nothing marked up to the next leaf: a GiB in one step */
            stop = ((page >> FORESIGHT_LEAF_SHIFT) + 1) << FORESIGHT_LEAF_SHIFT;
        page = stop;
    }
    return total;
}

static size_t set_bits(uint64_t *word, uint64_t mask)
{
    uint64_t old = __atomic_fetch_or(word, mask, __ATOMIC_RELAXED);
    return (size_t)__builtin_popcountll(mask & ~old);
}

static size_t clear_bits(uint64_t *word, uint64_t mask)
{
    uint64_t old = __atomic_fetch_and(word, ~mask, __ATOMIC_RELAXED);
    return (size_t)__builtin_popcountll(mask & old);
}

static size_t count_bits(uint64_t *word, uint64_t mask)
{
    return (size_t)__builtin_popcountll(mask & __atomic_load_n(word, __ATOMIC_RELAXED));
}

/* The chunk's "queued" bit: its word in the leaf's tail and the bit's mask. */
static uint64_t *queued_word(uintptr_t chunk, uint64_t *mask)
{
    uint64_t *leaf = leaf_for(chunk << FS_CHUNK_SHIFT, false);
    if (leaf == NULL)
        return NULL;
    uintptr_t c = chunk & (LEAF_CHUNKS - 1);
    *mask = (uint64_t)1 << (c & 63);
    return &leaf[FS_LEAF_WORDS + c / 64];
}

static bool queued(uintptr_t chunk)
{
    uint64_t mask, *w = queued_word(chunk, &mask);
    return w != NULL && (__atomic_load_n(w, __ATOMIC_RELAXED) & mask) != 0;
}

static void set_queued(uintptr_t chunk, bool on)
{
    uint64_t mask, *w = queued_word(chunk, &mask);
    if (w == NULL)
        return;
    if (on)
        __atomic_fetch_or(w, mask, __ATOMIC_RELAXED);
    else
        __atomic_fetch_and(w, ~mask, __ATOMIC_RELAXED);
}

static void ring_push_locked(uintptr_t chunk)
{
    uint64_t mask;
    if (queued_word(chunk, &mask) == NULL || queued(chunk))
        return; /* no leaf: nothing of the chunk is marked */
    if (ring_count == slots()) { /* the oldest leaves, and its marks with it */
        set_queued(ring[ring_head], false);
        fs_residency_clear(ring[ring_head] << FS_CHUNK_SHIFT, FS_CHUNK_PAGES);
        ring_head = (ring_head + 1) % slots();
        ring_count--;
    }
    ring[(ring_head + ring_count) % slots()] = chunk;
    ring_count++;
    set_queued(chunk, true);
}

size_t fs_residency_mark(uintptr_t page, size_t npages)
{
    size_t fresh = for_each_word(page, npages, true, set_bits);
    if (fresh == 0)
        return 0;
    size_t now = __atomic_add_fetch(&footprint, fresh, __ATOMIC_RELAXED);
    size_t seen = __atomic_load_n(&peak, __ATOMIC_RELAXED);
    while (now > seen &&
           !__atomic_compare_exchange_n(&peak, &seen, now, true, __ATOMIC_RELAXED,
                                        __ATOMIC_RELAXED)) {
    }
    uintptr_t c0 = page >> FS_CHUNK_SHIFT, c1 = (page + npages - 1) >> FS_CHUNK_SHIFT;
    bool all_queued = true;
    for (uintptr_t c = c0; c <= c1 && all_queued; c++)
        all_queued = queued(c);
    if (!all_queued) { /* the common case (a chunk already queued) takes no lock */
        pthread_mutex_lock(&ring_mu);
        for (uintptr_t c = c0; c <= c1; c++)
            ring_push_locked(c);
        pthread_mutex_unlock(&ring_mu);
    }
    return fresh;
}

size_t fs_residency_clear(uintptr_t page, size_t npages)
{
    size_t gone = for_each_word(page, npages, false, clear_bits);
    __atomic_sub_fetch(&footprint, gone, __ATOMIC_RELAXED);
    return gone;
}

size_t fs_residency_marked_prefix(uintptr_t page, size_t npages)
{
    size_t done = 0;
    while (done < npages) {
        uintptr_t p = page + done;
        uint64_t *leaf = leaf_for(p, false);
        if (leaf == NULL)
            return done;
        unsigned shift = (unsigned)(p & 63);
        uint64_t word = __atomic_load_n(&leaf[(p >> 6) & (FS_LEAF_WORDS - 1)], __ATOMIC_RELAXED);
        uint64_t rest = ~(word >> shift); /* zero bits: marked pages from p on */
        size_t run = rest == 0 ? 64 : (size_t)__builtin_ctzll(rest);
        if (run < 64 - shift)
            return done + run < npages ? done + run : npages;
        done += 64 - shift;
    }
    return npages;
}

bool fs_residency_test(uintptr_t page)
{
    uint64_t *leaf = leaf_for(page, false);
    return leaf != NULL && count_bits(&leaf[(page >> 6) & (FS_LEAF_WORDS - 1)],
                                      (uint64_t)1 << (page & 63));
}

size_t fs_residency_queued_chunks(void)
{
    pthread_mutex_lock(&ring_mu);
    size_t n = ring_count;
    pthread_mutex_unlock(&ring_mu);
    return n;
}

size_t fs_residency_footprint(void)
{
    return __atomic_load_n(&footprint, __ATOMIC_RELAXED);
}

size_t fs_residency_peak(void)
{
    return __atomic_load_n(&peak, __ATOMIC_RELAXED);
}

size_t fs_residency_leaves(void)
{
    return __atomic_load_n(&leaves, __ATOMIC_RELAXED);
}

static bool mapped1(uintptr_t page, unsigned char *v)
{
    return mincore((void *)(page << FORESIGHT_PAGE_SHIFT), FS_PAGE, v) == 0;
}

/*
 * mincore over a range with unmapped holes (mincore fails whole with ENOMEM).  From
 * the left: a mapped page starts a run found by galloping then bisection; an unmapped
 * page starts a hole found the same way from single-page probes, and pages between two
 * unmapped probes count as unmapped.  So a range past the end of an object costs
 * O(log n) calls, not the 2n of splitting it in halves, and a mapped page is never
 * reported resident when it is not (at worst one in a hole is skipped: a dropped hint).
 */
static long vector_holes(uintptr_t page, size_t npages, unsigned char *vec, size_t *mapped)
{
    long resident = 0;
    size_t i = 0;
    while (i < npages) {
        uintptr_t p = page + i;
        size_t left = npages - i;
        unsigned char v;
        bool is_mapped = mapped1(p, &v);
        if (!is_mapped && errno != ENOMEM) {
            memset(vec + i, 0x80, left); /* unreadable: give up on the rest */
            return resident;
        }
        size_t good = 1, bad; /* [0, good) known to share p's state; bad = first probe that does not */
        for (bad = 2; bad <= left; bad *= 2) {
            bool same = is_mapped ? mincore((void *)(p << FORESIGHT_PAGE_SHIFT),
                                            bad << FORESIGHT_PAGE_SHIFT, vec + i) == 0
                                  : !mapped1(p + bad - 1, &v);
            if (!same)
                break;
            good = bad;
        }
        if (bad > left) {
            bad = left + 1;
            if (good < left) { /* try the whole remainder */
                bool same = is_mapped ? mincore((void *)(p << FORESIGHT_PAGE_SHIFT),
                                                left << FORESIGHT_PAGE_SHIFT, vec + i) == 0
                                      : !mapped1(p + left - 1, &v);
                if (same)
                    good = left;
            }
        }
        while (bad - good > 1 && good < left) { /* invariant: good same, bad not (or past end) */
            size_t mid = good + (bad - good) / 2;
            bool same = is_mapped ? mincore((void *)(p << FORESIGHT_PAGE_SHIFT),
                                            mid << FORESIGHT_PAGE_SHIFT, vec + i) == 0
                                  : !mapped1(p + mid - 1, &v);
            if (same)
                good = mid;
            else
                bad = mid;
        }
        if (is_mapped) {
            mincore((void *)(p << FORESIGHT_PAGE_SHIFT), good << FORESIGHT_PAGE_SHIFT, vec + i);
            for (size_t k = 0; k < good; k++)
                resident += vec[i + k] & 1;
            *mapped += good;
        } else {
            memset(vec + i, 0x80, good);
        }
        i += good;
    }
    return resident;
}

static long vector_rec(uintptr_t page, size_t npages, unsigned char *vec, size_t *mapped)
{
    if (mincore((void *)(page << FORESIGHT_PAGE_SHIFT), npages << FORESIGHT_PAGE_SHIFT, vec) == 0) {
        long resident = 0;
        for (size_t i = 0; i < npages; i++)
            resident += vec[i] & 1;
        *mapped += npages;
        return resident;
    }
    if (errno != ENOMEM) {
        memset(vec, 0x80, npages); /* unreadable: not resident */
        return 0;
    }
    return vector_holes(page, npages, vec, mapped);
}

long fs_resident_vector(uintptr_t page, size_t npages, unsigned char *vec)
{
    size_t mapped = 0;
    long resident = vector_rec(page, npages, vec, &mapped);
    return mapped == 0 ? -1 : resident;
}

size_t fs_residency_revalidate_chunk(uintptr_t chunk)
{
    unsigned char vec[FS_CHUNK_PAGES];
    uintptr_t first = chunk << FS_CHUNK_SHIFT;
    uint64_t *leaf = leaf_for(first, false);
    if (leaf == NULL)
        return 0;
    uint64_t *words = &leaf[(first >> 6) & (FS_LEAF_WORDS - 1)];
    size_t marked = 0;
    for (size_t w = 0; w < FS_CHUNK_PAGES / 64; w++)
        marked += count_bits(&words[w], ~(uint64_t)0);
    if (marked == 0)
        return 0;
    fs_resident_vector(first, FS_CHUNK_PAGES, vec);
    size_t cleared = 0;
    for (size_t w = 0; w < FS_CHUNK_PAGES / 64; w++) {
        uint64_t absent = 0;
        for (unsigned b = 0; b < 64; b++)
            if (!(vec[w * 64 + b] & 1))
                absent |= (uint64_t)1 << b;
        if (absent)
            cleared += clear_bits(&words[w], absent);
    }
    __atomic_sub_fetch(&footprint, cleared, __ATOMIC_RELAXED);
    return cleared;
}

size_t fs_residency_reconcile(size_t target_pages)
{
    size_t cleared = 0;
    pthread_mutex_lock(&ring_mu);
    for (size_t n = ring_count; n > 0 && fs_residency_footprint() > target_pages; n--) {
        if (ring_count == 0)
            break;
        uintptr_t chunk = ring[ring_head];
        ring_head = (ring_head + 1) % slots();
        ring_count--;
        set_queued(chunk, false);
        /* mincore without the lock: the program's marks (fs_residency_mark) never wait
         * for a reconciliation in a worker. */
        pthread_mutex_unlock(&ring_mu);
        cleared += fs_residency_revalidate_chunk(chunk);
        bool marked = false;
        uint64_t *leaf = leaf_for(chunk << FS_CHUNK_SHIFT, false);
        if (leaf != NULL) {
            uint64_t *words = &leaf[((chunk << FS_CHUNK_SHIFT) >> 6) & (FS_LEAF_WORDS - 1)];
            for (size_t w = 0; w < FS_CHUNK_PAGES / 64 && !marked; w++)
                marked = count_bits(&words[w], ~(uint64_t)0) != 0;
        }
        pthread_mutex_lock(&ring_mu);
        if (marked) /* still holding resident marks: second chance at the young end */
            ring_push_locked(chunk);
    }
    pthread_mutex_unlock(&ring_mu);
    __atomic_add_fetch(&fs_global_reconcile_cleared, cleared, __ATOMIC_RELAXED);
    return cleared;
}
