/*
 * gate.c — whether a loop nest's hints can pay: the program's memory against its limit.
 *
 * Hints move data between memory and storage ahead of the program.  While everything
 * the program has mapped (its address space, VmSize in /proc/self/statm) fits in the
 * limit (FORESIGHT_MEM, the cgroup's or the machine's), nothing it uses has to be
 * evicted, and a nest's hints only cost time: with the data in memory the hinted NAS
 * SP took 2.16x the original's time, 1.25x with the hints off at run time (`foresight
 * bench incore`).  So foresight__nest_enter asks here at each entry of a nest, and the
 * nest runs without hints while the program fits.  Data read from files for the first
 * time still come in by the kernel's readahead.  The limit, not the prefetch budget
 * (3/4 of it): with the data at 0.75 times a cgroup cap, between the two, the hinted
 * kernels took up to 3.4 times the original's time (colsum: its column prefetches in
 * place of the kernel's readahead of a cold file; `foresight bench incore --near`),
 * 0.15-0.16 s with the gate at the limit against 0.33-0.42 s for the original and
 * 0.42-0.43 s at the budget (`foresight run --mem 342M --cold`, two rounds).
 * Past the limit by less than an eighth, a nest runs hinted at its first entry, and at
 * later ones only while the program has lately been short of memory (fs_budget_short:
 * refaults beyond the release probes' own): a program whose address space is over the
 * limit by its libraries and reservations while what it touches fits pages nothing,
 * and its hinted copies only cost time (NAS FT and MG with their data at 1 times a
 * 128 MiB cap, no swap in any run: 1.28 and 1.11 times the original's time), while a
 * nest entered once or twice that starts the paging (a stencil's two sweeps over data
 * of 1 times the cap) must be hinted from its first entry, before any page is in swap.
 *
 * The answer is read afresh at most once per clock tick (CLOCK_MONOTONIC_COARSE, 1-4
 * ms): a nest entered more often than that reuses it.  So a nest entered within the
 * same tick as another, after the program mapped or allocated its data in between,
 * runs that once without hints.  Only the program's own address space counts: memory
 * taken by other processes is not seen, and a program under ASan or TSan (terabytes of
 * shadow reserved) never fits; the prefetch thread's reservation (pt_arena.c: 64 GiB of
 * guards) is left out.  FORESIGHT_INCORE=hint keeps hints on everywhere (the
 * tests of the hints themselves; measuring them in core).  Each fresh answer, the real
 * one whatever FORESIGHT_INCORE says, also goes to pin.c (the process on one CPU while
 * hints page).
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"

static int open_gate = -1;   /* the last answer: 1 hints, 0 none, 2 first entries only,
                                -1 not read yet */
static uint64_t read_at;     /* when, in CLOCK_MONOTONIC_COARSE nanoseconds */
unsigned long fs_global_gate_closed; /* nest entries run without hints */

/* The program's address space in pages (the first field of /proc/self/statm, in the
 * base pages the runtime assumes); 0 when unknown.  The program's errno is kept, and
 * its thread cannot be cancelled in the open or read (cancellation points it did not
 * ask for). */
static unsigned long address_space_pages(void)
{
    char buf[64];
    int saved_errno = errno, cancel;
    pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &cancel);
    const ssize_t n = fs_kept_pread(FS_KEPT_STATM, buf, sizeof buf, 0); /* ownfd.c */
    pthread_setcancelstate(cancel, NULL);
    errno = saved_errno;
    unsigned long pages = 0;
    for (ssize_t i = 0; i < n && buf[i] >= '0' && buf[i] <= '9'; i++)
        pages = pages * 10 + (unsigned long)(buf[i] - '0');
    return pages;
}

/* The program's address space in pages, less the prefetch thread's reservation (guards,
 * an untouched stack); 0 when unknown. */
unsigned long fs_address_space(void)
{
    unsigned long pages = address_space_pages();
    const unsigned long pt = (unsigned long)(fs_pt_address_space() / FS_PAGE);
    return pages > pt ? pages - pt : 0;
}

/* Whether NEST (its descriptor's address) is entered for the first time: remembered in
 * a table of 1024 slots, eight looked at per nest; a nest that finds them all taken
 * counts as entered before. */
#define SEEN_SLOTS 1024u
static const void *seen[SEEN_SLOTS];

static bool first_entry(const void *nest)
{
    const unsigned h = (unsigned)(((uintptr_t)nest * 0x9E3779B97F4A7C15ull) >> 54);
    for (unsigned i = 0; i < 8; i++) {
        const void **slot = &seen[(h + i) % SEEN_SLOTS];
        const void *was = NULL;
        if (__atomic_compare_exchange_n(slot, &was, nest, false, __ATOMIC_RELAXED,
                                        __ATOMIC_RELAXED))
            return true; /* the slot was free: NEST is new */
        if (was == nest)
            return false;
    }
    return false;
}

bool fs_gate_open(const void *nest)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
    uint64_t now = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
    int open = __atomic_load_n(&open_gate, __ATOMIC_RELAXED);
    if (open < 0 || now != __atomic_load_n(&read_at, __ATOMIC_RELAXED)) {
        const unsigned long pages = fs_address_space();
        const bool over =
            pages == 0 || (uint64_t)pages << FORESIGHT_PAGE_SHIFT > fs_budget_limit_bytes();
        open = !over ? 0 : pages == 0 || fs_budget_short() ? 1 : 2;
        __atomic_store_n(&open_gate, open, __ATOMIC_RELAXED);
        __atomic_store_n(&read_at, now, __ATOMIC_RELAXED);
        fs_pin_gate(over); /* the real answer, whatever FORESIGHT_INCORE says */
    }
    if (open == 2) /* over by a little, nothing paged lately: a nest's first entry only */
        open = first_entry(nest);
    if (fs_cfg.incore_hinted)
        return true;
    if (!open)
        __atomic_add_fetch(&fs_global_gate_closed, 1, __ATOMIC_RELAXED);
    return open;
}

void fs_gate_reset(void)
{
    open_gate = -1;
    memset(seen, 0, sizeof seen); /* a child's first entries are its own */
}
