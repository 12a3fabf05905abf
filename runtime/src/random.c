/*
 * random.c — random-access advice for indirect sites.
 *
 * The targets of an indirect reference a[b[i]] are data-dependent.  When they lie in a
 * file mapping, every fault the prefetches miss makes the kernel read the window around
 * it (read-around, up to read_ahead_kb), pages that a random pattern will not use before
 * memory loses them again, and which push out the pages it will use.  The kernel stops
 * reading around once a file's faults mostly miss, but the hinted streams of the same
 * loop keep its hits up.  So while a loop nest runs, the range an indirect site's targets
 * span in a file mapping is advised MADV_RANDOM, grown by RANDOM_SLACK pages past new
 * targets that fall outside it (no further: a stream beside them in the same file may be
 * left to the kernel's readahead, which the flag would turn off), and advised
 * MADV_NORMAL again when the nest exits (the generated code's scope cleanup calls
 * foresight__random_end).  Anonymous memory is left alone: there the flag would
 * also make reclaim ignore the pages' references.
 *
 * Not every indirect site is random.  A scatter into buckets (out[pos[key[i]]++], a
 * radix or bucket sort, NAS IS) moves through a set of sequential frontiers, and when
 * memory holds a read-around window for each, a fault reads the next pages of its
 * frontier and the marked page in them starts the read of the next window: the kernel
 * reads such frontiers ahead better than hints a page at a time.  So the first
 * SAMPLE_NOTES targets of each run of the nest are a sample, taken without advice: a
 * target is a *successor* when the page next to it was a target before, and the
 * others start frontiers.  When most targets are successors and the frontiers' windows
 * (read_ahead_kb of the file's device each) fit in the prefetch budget, the advice is
 * left out for that run of the nest, and so are the site's prefetches there (their pages
 * are marked, so the inline filter drops the calls that follow; issued, they only cost
 * the worker's reclaim: bucket_sort 7.0 s against 6.5 s); else the range the sample
 * spans is advised and grows from there, unless the mapping of the targets fits in
 * 9/8 of the memory limit: then
 * every page a fault reads around is used while it stays, and the advice would only
 * turn each of those reads into a fault per page (NAS IS with its arrays in files, 192
 * MiB under a 64 MiB cap: key2, 48 MiB, advised, made the hinted build 3.6x slower than
 * the original, 307 s against 86 s, and write 116 GiB back against 44; without the
 * advice it ran as the original did: docs/decisions.md).  The sample ends early once
 * the windows outgrow the budget.
 * A program that gives access-pattern advice itself (madvise or posix_madvise with
 * RANDOM, SEQUENTIAL or NORMAL, interposed below) keeps it: from its first such call no
 * range is advised and none is set back to normal (the normal advice at a nest's exit
 * overwrote the program's MADV_RANDOM and split its mapping in two, so that its mremap
 * of the whole mapping failed with EFAULT in the hinted build only).
 * A nest left without its end (longjmp or siglongjmp out of it: the scope cleanup does
 * not run) leaves its range advised, so the mapping stays split at the range's ends; the
 * program's mremap, which refuses a range over more than one area (EFAULT), is
 * interposed below (and its raw system call, interpose.c): before it, advice over the
 * range it moves is taken back (the kernel merges the areas again), even where the
 * program has given advice of its own since, and that site gives no more advice in its
 * run (a helper's
 * probe: a timer's siglongjmp out of a hinted gather, then mremap of the file's mapping
 * failed under a memory cap in the hinted build only).
 * Measured (bucket_sort, read_ahead_kb 128, 1,024 frontiers): 1 GiB under a 256 MiB
 * cap, 6.4 s unhinted, 11.2 s with the advice; 192 MiB under a 64 MiB cap, 6.2 s
 * unhinted, 1.9 s with it (docs/decisions.md).
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "internal.h"

static bool program_advises; /* the program gave access-pattern advice itself */

static bool pattern_advice(int advice)
{
    return advice == MADV_RANDOM || advice == MADV_SEQUENTIAL || advice == MADV_NORMAL;
}

/* The library's own advice, past the interposed madvise below. */
static int own_madvise(uintptr_t page, uintptr_t npages, int advice)
{
    return (int)syscall(SYS_madvise, (void *)(page << FORESIGHT_PAGE_SHIFT),
                        (size_t)(npages << FORESIGHT_PAGE_SHIFT), advice);
}

int madvise(void *addr, size_t len, int advice)
{
    static void *real;
    if (pattern_advice(advice))
        __atomic_store_n(&program_advises, true, __ATOMIC_RELAXED);
    int (*fn)(void *, size_t, int) = (int (*)(void *, size_t, int))fs_next_fn(&real, "madvise");
    return fn(addr, len, advice);
}

int posix_madvise(void *addr, size_t len, int advice)
{
    static void *real;
    if (pattern_advice(advice)) /* POSIX_MADV_X has MADV_X's value on Linux */
        __atomic_store_n(&program_advises, true, __ATOMIC_RELAXED);
    int (*fn)(void *, size_t, int) =
        (int (*)(void *, size_t, int))fs_next_fn(&real, "posix_madvise");
    return fn(addr, len, advice);
}

static void *real_mremap;

/* Found before a handler's mremap could need it (dlsym is not async-signal-safe). */
__attribute__((constructor)) static void find_mremap(void)
{
    (void)fs_next_fn(&real_mremap, "mremap");
}

/* The program's mremap (above): the library's advice over [OLD, OLD + OLD_SIZE) taken back
 * first.  NEW_ADDRESS is read only where the flags say it was passed (as glibc's own
 * wrapper does). */
void *mremap(void *old, size_t old_size, size_t new_size, int flags, ...)
{
    void *to = NULL;
    if (flags & MREMAP_FIXED) {
        va_list ap;
        va_start(ap, flags);
        to = va_arg(ap, void *);
        va_end(ap);
    }
    fs_random_withdraw((uintptr_t)old, old_size);
    void *(*fn)(void *, size_t, size_t, int, ...) =
        (void *(*)(void *, size_t, size_t, int, ...))fs_next_fn(&real_mremap, "mremap");
    return fn(old, old_size, new_size, flags, to);
}

#define RANDOM_SLOTS 64
#define RANDOM_SLACK 64    /* pages the range grows by beyond a new target */
#define SAMPLE_NOTES 8192  /* targets sampled before advising */
#define SAMPLE_BITS 14     /* the sample's pages, in a table twice its size */
#define SAMPLE_SLOTS (1 << SAMPLE_BITS)
#define PROBE_MOST 64      /* slots a lookup tries before it gives up */
#define DEFAULT_READAHEAD_PAGES 32 /* the kernel's default, when the device's is unknown */

enum random_state { SAMPLING, ADVISED, READAROUND, UNADVISED };

struct random_slot {
    struct foresight_site *site; /* NULL: free */
    enum random_state state;
    uintptr_t lo, hi;            /* pages advised MADV_RANDOM, [lo, hi); while sampling,
                                    the pages the sample spans */
    uintptr_t vlo, vhi;          /* the mapping of the first target, [vlo, vhi) in pages */
    enum fs_mem_kind kind;       /* FS_MEM_UNKNOWN: not looked up yet */
    unsigned notes, successors, sample; /* sample: its tag in the table */
    unsigned long window;        /* read-around pages of the targets' device; 0: not read */
};

struct sampled {
    uintptr_t page;
    unsigned sample;
};

static struct random_slot slots[RANDOM_SLOTS];
static struct sampled sampled[SAMPLE_SLOTS]; /* open addressing; a finished sample's: free */
static unsigned samples;                    /* tags handed out */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int active; /* sites between begin and end */
/* Indirect sites between begin and end, whatever their advice (pin.c: no pin while one
 * runs).  Not reset after fork: the forking thread's nests go on in the child; a nest left
 * by longjmp, or another thread's lost in the fork, keeps it above zero, which only keeps
 * the process unpinned. */
static int running;

bool fs_random_running(void)
{
    return __atomic_load_n(&running, __ATOMIC_RELAXED) > 0;
}

static struct random_slot *find(struct foresight_site *site)
{
    for (int i = 0; i < RANDOM_SLOTS; i++)
        if (slots[i].site == site)
            return &slots[i];
    return NULL;
}

void foresight__random_begin(struct foresight_site *site)
{
    /* (foresight.h's wrappers pair every begin with one end: its scope variable) */
    if (__atomic_add_fetch(&running, 1, __ATOMIC_RELAXED) == 1 && !fs_hint_refused())
        fs_pin_give_back(); /* (as at the nest's entry: its worker runs beside it) */
    struct fs_entry e;
    if (fs_cfg.random_advice == 0 || !fs_enter(site, &e))
        return;
    pthread_mutex_lock(&lock);
    if (find(site) == NULL) {
        struct random_slot *s = find(NULL);
        if (s != NULL) { /* more nests at once than slots: the rest go without advice */
            *s = (struct random_slot){.site = site};
            __atomic_add_fetch(&active, 1, __ATOMIC_RELAXED);
        }
    }
    pthread_mutex_unlock(&lock);
    fs_leave(&e);
}

/* Dropped when its begin was (a handler's that interrupted its thread inside the library:
 * the thread stays there until the handler returns; a short signal stack), or where no
 * hint may run (thread_guard.c): a thread that entered seccomp strict mode or installed
 * a filter between the nest's begin and end leaves its range advised MADV_RANDOM. */
void foresight__random_end(struct foresight_site *site)
{
    __atomic_sub_fetch(&running, 1, __ATOMIC_RELAXED);
    struct fs_entry e;
    if (!fs_enter(site, &e))
        return;
    pthread_mutex_lock(&lock);
    struct random_slot *s = find(site);
    if (s != NULL) {
        if (s->state == ADVISED && s->hi > s->lo &&
            !__atomic_load_n(&program_advises, __ATOMIC_RELAXED))
            own_madvise(s->lo, s->hi - s->lo, MADV_NORMAL);
        *s = (struct random_slot){0};
        __atomic_sub_fetch(&active, 1, __ATOMIC_RELAXED);
    }
    pthread_mutex_unlock(&lock);
    fs_leave(&e);
}

static void advise(uintptr_t lo, uintptr_t hi)
{
    if (hi > lo && !__atomic_load_n(&program_advises, __ATOMIC_RELAXED) &&
        own_madvise(lo, hi - lo, MADV_RANDOM) == 0)
        __atomic_add_fetch(&fs_global_random_pages, hi - lo, __ATOMIC_RELAXED);
}

/* Whether TAG is the tag of a sample still being taken. */
static bool sampling(unsigned tag)
{
    for (int i = 0; i < RANDOM_SLOTS; i++)
        if (slots[i].site != NULL && slots[i].state == SAMPLING && slots[i].sample == tag)
            return true;
    return false;
}

/* The slot of PAGE in sample TAG's table, or the free slot where it would go (one of a
 * finished sample's is free); NULL when PROBE_MOST slots in a row are taken (samples of
 * several nests at once).  Fibonacci hashing: frontiers a power of two apart must not
 * crowd one run of slots. */
static struct sampled *sampled_slot(uintptr_t page, unsigned tag)
{
    size_t i = (size_t)((uint64_t)page * 0x9e3779b97f4a7c15ull >> (64 - SAMPLE_BITS));
    for (int probes = 0; probes < PROBE_MOST; probes++, i = (i + 1) & (SAMPLE_SLOTS - 1)) {
        struct sampled *e = &sampled[i];
        if (e->sample == tag ? e->page == page : e->sample == 0 || !sampling(e->sample))
            return e;
    }
    return NULL;
}

static bool in_sample(uintptr_t page, unsigned tag)
{
    const struct sampled *e = sampled_slot(page, tag);
    return e != NULL && e->sample == tag;
}

/* read_ahead_kb of the file system on device MAJOR:MINOR, in pages: its block device's
 * (its disk's, for a partition), else its backing device's (NFS, FUSE, btrfs). */
static unsigned long readahead_pages(unsigned long major, unsigned long minor)
{
    static const char *const heads[] = {"/sys/dev/block/", "/sys/dev/block/", "/sys/class/bdi/"};
    static const char *const tails[] = {"/queue/read_ahead_kb", "/../queue/read_ahead_kb",
                                        "/read_ahead_kb"};
    for (int t = 0; t < 3; t++) {
        char path[96], buf[24];
        size_t head = __builtin_strlen(heads[t]);
        __builtin_memcpy(path, heads[t], head);
        char *p = fs_put_decimal(path + head, major);
        *p++ = ':';
        p = fs_put_decimal(p, minor);
        __builtin_memcpy(p, tails[t], __builtin_strlen(tails[t]) + 1);
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
            continue;
        ssize_t n = read(fd, buf, sizeof buf - 1);
        close(fd);
        unsigned long kb = 0;
        for (ssize_t i = 0; i < n && buf[i] >= '0' && buf[i] <= '9'; i++)
            kb = kb * 10 + (unsigned long)(buf[i] - '0');
        if (n > 0)
            return kb * 1024 >> FORESIGHT_PAGE_SHIFT;
    }
    return DEFAULT_READAHEAD_PAGES;
}

/* One target of the sample; at its end, advise the range it spans or leave it out. */
static void sample(struct random_slot *s, uintptr_t page)
{
    if (s->notes == 0) {
        if (++samples == 0) /* tag 0 marks the table's empty slots */
            samples = 1;
        s->sample = samples;
    }
    struct sampled *slot = sampled_slot(page, s->sample);
    if (slot == NULL || slot->sample == s->sample)
        return; /* a page sampled before (neither a new frontier nor a step of one), or
                   no room in the table: not counted */
    s->successors += in_sample(page - 1, s->sample) || in_sample(page + 1, s->sample);
    *slot = (struct sampled){page, s->sample};
    if (s->notes == 0 || page < s->lo)
        s->lo = page;
    if (s->notes == 0 || page >= s->hi)
        s->hi = page + 1;
    s->notes++;
    /* Frontiers only grow: once their windows outgrow the budget, the sample is over. */
    if (s->window == 0) {
        unsigned long major, minor;
        s->window = fs_mapping_device(page, &major, &minor) ? readahead_pages(major, minor)
                                                            : DEFAULT_READAHEAD_PAGES;
        if (s->window == 0) /* read_ahead_kb 0: faults read their own page */
            s->window = 1;
    }
    unsigned long frontiers = s->notes - s->successors;
    bool fits = frontiers * s->window <= fs_budget_pages();
    if (fits && s->notes < SAMPLE_NOTES)
        return;
    if (fits && 2 * s->successors >= s->notes) {
        s->state = READAROUND;
        fs_count(s->site, FS_KERNEL_READAHEAD, 1);
        __atomic_add_fetch(&fs_global_random_readaround, 1, __ATOMIC_RELAXED);
        return;
    }
    s->state = ADVISED;
    /* The mapping cache may hold a file mapping unmapped since, its range reused by
     * anonymous memory: look again before advising. */
    fs_mapping_forget();
    s->kind = fs_mapping_of(page, &s->vlo, &s->vhi);
    if (s->kind != FS_MEM_FILE || s->lo < s->vlo || s->hi > s->vhi) {
        s->lo = s->hi = 0;
        s->kind = FS_MEM_ANON; /* no advice in this run of the nest */
        return;
    }
    const uintptr_t limit_pages = fs_budget_limit_bytes() >> FORESIGHT_PAGE_SHIFT;
    if (s->vhi - s->vlo <= limit_pages + limit_pages / 8) {
        /* The targets' mapping fits in memory, or overflows it by no more than the
         * address space of a program that releases without paging out (budget.c):
         * every page a fault reads around will be used while it stays, so the advice
         * could only multiply the faults (the sample may end after a few targets: its
         * span says nothing here).  The site's prefetches go on.  bucket_sort's 256 MiB
         * of keys under a 256 MiB cap (read_ahead_kb 8192, two alternated rounds):
         * 2.54-3.14 s advised, 1.10-1.18 s not, the original 0.97-1.05 s; at
         * read_ahead_kb 128 1.06-1.16 s against 1.14-1.35 s (the original 2.6-3.3 s). */
        s->state = UNADVISED;
        __atomic_add_fetch(&fs_global_random_fits, 1, __ATOMIC_RELAXED);
        return;
    }
    s->lo = s->lo > s->vlo + RANDOM_SLACK ? s->lo - RANDOM_SLACK : s->vlo;
    s->hi = s->hi + RANDOM_SLACK < s->vhi ? s->hi + RANDOM_SLACK : s->vhi;
    advise(s->lo, s->hi);
}

bool fs_random_note(struct foresight_site *site, uintptr_t page)
{
    if (__atomic_load_n(&active, __ATOMIC_RELAXED) == 0)
        return false;
    bool kernel = false;
    pthread_mutex_lock(&lock);
    struct random_slot *s = find(site);
    if (s == NULL || s->state == UNADVISED ||
        (s->state == ADVISED && page >= s->lo && page < s->hi))
        goto out;
    if (s->state == READAROUND) {
        kernel = page >= s->vlo && page < s->vhi;
        goto out;
    }
    if (s->kind == FS_MEM_UNKNOWN)
        s->kind = fs_mapping_of(page, &s->vlo, &s->vhi);
    if (s->kind != FS_MEM_FILE || page < s->vlo || page >= s->vhi)
        goto out; /* anonymous memory, or a target outside the first target's mapping */
    if (s->state == SAMPLING) {
        sample(s, page);
    } else if (page < s->lo) {
        uintptr_t lo = page > s->vlo + RANDOM_SLACK ? page - RANDOM_SLACK : s->vlo;
        advise(lo, s->lo);
        s->lo = lo;
    } else {
        uintptr_t hi = page + 1 + RANDOM_SLACK < s->vhi ? page + 1 + RANDOM_SLACK : s->vhi;
        advise(s->hi, hi);
        s->hi = hi;
    }
out:
    pthread_mutex_unlock(&lock);
    return kernel;
}

/* Advice over the LEN bytes at ADDR taken back (mremap, above, and syscall(SYS_mremap):
 * interpose.c): the advised ranges that meet them are set back to normal, also where
 * the program gave advice of its own since (its mremap must not fail over our split),
 * and their sites advise nothing more in their runs.  With every signal blocked while
 * the lock is held: a handler's hinted loop on this thread would wait on the lock for
 * ever (fs_random_note), and one that jumped out would leave it held. */
void fs_random_withdraw(uintptr_t addr, size_t len)
{
    if (__atomic_load_n(&active, __ATOMIC_RELAXED) == 0 || len == 0)
        return;
    const uintptr_t lo = addr >> FORESIGHT_PAGE_SHIFT;
    const uintptr_t hi = (addr + (len - 1)) / FS_PAGE + 1;
    sigset_t all, old;
    sigfillset(&all);
    const int saved = errno;
    pthread_sigmask(SIG_SETMASK, &all, &old);
    pthread_mutex_lock(&lock);
    for (int i = 0; i < RANDOM_SLOTS; i++) {
        struct random_slot *s = &slots[i];
        if (s->site == NULL || s->state != ADVISED || s->hi <= s->lo || s->hi <= lo ||
            hi <= s->lo)
            continue;
        own_madvise(s->lo, s->hi - s->lo, MADV_NORMAL);
        s->lo = s->hi = 0;
        s->state = UNADVISED;
    }
    pthread_mutex_unlock(&lock);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    errno = saved;
}

void fs_random_reset(void)
{
    pthread_mutex_init(&lock, NULL);
    for (int i = 0; i < RANDOM_SLOTS; i++)
        slots[i] = (struct random_slot){0};
    /* The table stays: no sample is being taken now, so all its slots count as free. */
    active = 0;
}
