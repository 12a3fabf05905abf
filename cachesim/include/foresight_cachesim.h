/*
 * foresight_cachesim.h — the multiprocessor cache simulator of paper 4 (compiler-directed
 * page coloring), Sections 3.3, 4 and 5: one physically indexed L2 cache per CPU, the
 * operating system's page-mapping policy deciding which physical frame (and so which
 * cache color) each virtual page gets, and a MESI directory keeping the caches coherent.
 * A trace of (cpu, virtual address, size, read/write) accesses in their global order goes
 * in; per-CPU hits and misses split into cold, capacity, conflict, true sharing and false
 * sharing come out.  This header is the whole interface; every call returns an error
 * rather than exiting.
 *
 * The model, exactly (what every counter counts):
 *
 * Geometry.  The cache has `l2_bytes / line` lines in `assoc`-way sets, each set with
 * true LRU replacement.  All sizes are powers of two, line >= 8 bytes, page >= line,
 * `assoc` divides the number of lines.  The number of page colors is
 * ncolors = max(1, l2_bytes / (page * assoc)).
 *
 * Page mapping.  A virtual page gets its physical frame when some CPU first touches it
 * (and keeps it).  Its color is chosen by the policy:
 *   CS_PC       vpage mod ncolors (IRIX's page coloring);
 *   CS_BH       a counter of first touches (all of them, any CPU) mod ncolors (Digital
 *               UNIX's bin hopping); the first page touched gets color 0;
 *   CS_RANDOM   a PRNG seeded with `seed` (splitmix64), its value mod ncolors;
 *   CS_CDPC     the hint's color where cs_set_hints gave one, else as CS_PC;
 *   CS_CDPC_BH  the hint's color where cs_set_hints gave one, else as CS_BH (the bin
 *               hopping counter advances at every first touch, hinted or not).
 * The frames of one color are handed out in order: the k-th page given color c gets
 * frame c + ncolors * k, and the physical address is frame * page + offset.
 *
 * References.  An access of `size` bytes at `vaddr` references every line it overlaps
 * (an access crossing a line boundary references both lines, and each reference is a
 * hit or a miss of its own: hits + misses = line references >= accesses).  A word is 8
 * aligned bytes; a reference accesses the words of its line the access overlaps.
 *
 * Coherence (MESI, Illinois-style, clean evictions silent).  Each line a CPU holds is
 * Modified, Exclusive or Shared:
 *   - read miss: if other CPUs hold the line, they and the reader end Shared, and a
 *     Modified copy among them is written back (one writeback, counted for its holder);
 *     otherwise the reader holds it Exclusive;
 *   - write miss: every other copy is invalidated (one invalidation counted for the
 *     writer per copy; a Modified copy moves to the writer with no writeback); the
 *     writer holds it Modified;
 *   - write hit: Exclusive becomes Modified silently; Shared is an upgrade (counted for
 *     the writer even if no other copy is left) that invalidates every other copy
 *     (counted as above); Modified stays;
 *   - eviction by replacement: a Modified line is written back (counted for its holder);
 *     Exclusive and Shared lines leave silently.
 *
 * Misses.  Every miss is exactly one of:
 *   - cold: this CPU never held the line before;
 *   - true_sharing / false_sharing: this CPU's copy was invalidated by another CPU's
 *     write, and this is its first reference to the line since (Dubois et al., the
 *     paper's reference [8]): true sharing if some word this reference accesses was
 *     written by another CPU at or after the write that invalidated the copy (the
 *     invalidating write included), false sharing otherwise;
 *   - conflict / capacity: the line left this CPU's cache by replacement; conflict if a
 *     fully associative LRU cache of the same number of lines, fed this CPU's own line
 *     references (and nothing else: invalidations do not touch it), holds the line at
 *     this reference, capacity if it does not.
 *
 * The L1 (optional: l1_bytes 0 leaves it out).  Each CPU may have an on-chip L1 data
 * cache in front of its L2, of `l1_bytes` in `l1_assoc`-way LRU sets with the L2's line,
 * indexed by the *virtual* line (the paper's on-chip caches), and inclusive: a line the
 * L2 loses by replacement or invalidation leaves the L1 too.  It holds no coherence
 * state of its own.  A reference the L1 holds is an l1_hit and goes no further (the L2's
 * LRU order, its shadow and the directory do not see it) when it is a read, or a write
 * to a line this CPU holds Modified with no word history kept; every other reference
 * goes to the L2 as above (a write to a Shared line is the L2's upgrade), and then puts
 * its line in the L1.  Without the L1, l1_hits is 0 and every reference is the L2's.
 *
 * Time (optional: mhz 0 leaves it out).  A model of the paper's machine (Section 3.3),
 * per CPU: every access costs one cycle (the instruction that makes it: a trace has no
 * other instructions, so stall cycles are counted per access, not per instruction);
 * with an L1, a reference the L1 misses and the L2 holds stalls `l2_cycles`; an L2 miss
 * stalls `remote_ns` when another CPU held the line Modified (the data comes from its
 * cache), else `mem_ns`, plus its wait for the bus; an upgrade waits for the bus and
 * holds it for one word; writebacks hold the bus but stall nobody.  The bus moves
 * `bus_mbs` * 10^6 bytes a second: a miss or a writeback holds it for line / bandwidth,
 * an upgrade for 8 / bandwidth.  Barriers (cs_barrier) divide the run into phases; a
 * phase lasts T = max(B, max over CPUs of (cycles / mhz + latencies + n * W)), where B
 * is the bus's busy time in the phase, n the CPU's misses and upgrades, and W its mean
 * wait for the bus: an M/D/1 queue of every transaction but its own stalling ones (it
 * never queues behind those: it stalls on each) at utilisation
 * rho = min((B - B_cpu) / T, 0.95), B_cpu the bus time of its misses and upgrades, with
 * the phase's mean hold time S: W = S * rho / (2 (1 - rho)).  T is the fixed point
 * (found by bisection).  A CPU's idle time is T minus its own: waiting at the barrier
 * for slower CPUs (the paper's synchronisation overhead: load imbalance) or, where the
 * bus's busy time sets T, for the bus.
 * The run's time is the sum of its phases', the phase still open (since
 * the last barrier) included.
 *
 * Prefetches (cs_prefetch; paper Section 6.2: the MIPS R10000's prefetch instruction).
 * A prefetch is an instruction (a cycle, with time) asking for one line in the CPU's L2,
 * not its L1.  It is dropped when no CPU has touched the line's page yet (the R10000
 * drops a prefetch that misses its TLB; the simulator has no TLB, so an unmapped page
 * stands in), and when the L2 holds the line only makes it the set's most recently used;
 * otherwise it fills the line
 * as a read miss would (coherence, bus, a victim's writeback and its leaving the L1), is
 * no miss of any class, and leaves the shadow alone.  With time the line is in flight
 * until the latency of that miss has passed on the CPU's clock (its time in the phase
 * without bus waits); a reference to it before then stalls for the rest (`late`), and
 * a fifth prefetch while four are in flight stalls (also `late`) until the first of
 * them arrives.  A fill of a line still in flight (it left the L2 on the way) replaces
 * its flight.  A barrier ends every flight.
 *
 * Counters (per CPU; the total is their sum): accesses (reads + writes, as given to
 * cs_access), reads, writes, refs (line references), l1_hits, hits (the L2's), the five
 * miss classes (refs = l1_hits + hits + misses), writebacks (of this CPU's Modified
 * copies), upgrades and invalidations (caused by this CPU's writes), prefetches (issued;
 * of them prefetch_fills fetched a line and prefetch_drops were dropped), and bus_bytes =
 * (misses + prefetch_fills + writebacks) * line: every miss or fill brings a line, every
 * writeback writes one; upgrades and invalidations move no data.  With time: stall_ns
 * (per class: l2, the five miss classes, upgrade and late, bus waits included), busy_ns
 * (a cycle per access and per prefetch) and idle_ns per CPU (their totals the sums), and
 * for the run time_ns and bus_busy_ns.
 */
#ifndef FORESIGHT_CACHESIM_H
#define FORESIGHT_CACHESIM_H

#include <stddef.h>
#include <stdint.h>

#define CS_MAX_CPUS 64

struct fs_color_run; /* runtime/src/color_plan.h: pages vpage.. prefer color.. */

enum cs_policy {
    CS_PC = 0,
    CS_BH = 1,
    CS_RANDOM = 2,
    CS_CDPC = 3,
    CS_CDPC_BH = 4,
};

struct cs_config {
    unsigned cpus;        /* 1..CS_MAX_CPUS */
    uint64_t l2_bytes;    /* each CPU's L2, a power of two */
    uint32_t assoc;       /* ways, 1 (direct mapped) .. l2_bytes / line (fully assoc.) */
    uint32_t line;        /* bytes, a power of two >= 8 */
    uint64_t page;        /* bytes, a power of two >= line, at most 65536 lines */
    enum cs_policy policy;
    uint64_t seed;        /* CS_RANDOM's PRNG */
    /* The L1 (above): bytes, a power of two from one line up, 0 for none; ways,
     * dividing its lines. */
    uint64_t l1_bytes;
    uint32_t l1_assoc;
    /* Time (above): the clock in MHz (0: no time), an L1 miss served by the L2 in
     * cycles, an L2 miss served by memory or by another CPU's Modified copy in ns (the
     * minimum: no wait for the bus), the bus's bandwidth in 10^6 bytes a second. */
    uint32_t mhz, l2_cycles, mem_ns, remote_ns, bus_mbs;
};

enum cs_stall { CS_STALL_L2, CS_STALL_COLD, CS_STALL_CAPACITY, CS_STALL_CONFLICT,
                CS_STALL_TRUE_SHARING, CS_STALL_FALSE_SHARING, CS_STALL_UPGRADE,
                CS_STALL_LATE, CS_STALLS };

#define CS_PREFETCHES_IN_FLIGHT 4 /* the R10000's outstanding prefetches */

struct cs_cpu_stats {
    uint64_t accesses, reads, writes;
    uint64_t refs, l1_hits, hits;
    uint64_t cold, capacity, conflict, true_sharing, false_sharing; /* misses */
    uint64_t misses;                                                /* their sum */
    uint64_t writebacks, upgrades, invalidations;
    uint64_t prefetches, prefetch_fills, prefetch_drops;
    uint64_t bus_bytes;
    double stall_ns[CS_STALLS], busy_ns, idle_ns; /* with time (above), else 0 */
};

struct cs_stats {
    unsigned cpus;
    uint32_t ncolors;
    struct cs_cpu_stats cpu[CS_MAX_CPUS]; /* the first `cpus` are used */
    struct cs_cpu_stats total;
    uint64_t barriers;                    /* cs_barrier calls */
    double time_ns, bus_busy_ns;          /* with time (above), else 0 */
    uint64_t pages;                       /* virtual pages mapped */
    const uint64_t *pages_per_color;      /* [ncolors], the simulator's own: live until cs_free */
};

struct cs_sim;

/* A simulator of CFG's machine with cold caches and no page mapped.  NULL on a bad
 * configuration or out of memory, with a one-line reason (no trailing newline, naming
 * the offending value, e.g. "associativity 3 does not divide the cache's 8192 lines")
 * written to ERR (ERRLEN bytes, may be 0). */
struct cs_sim *cs_create(const struct cs_config *cfg, char *err, size_t errlen);

/* The number of page colors of SIM's geometry (see above). */
uint32_t cs_ncolors(const struct cs_sim *sim);

/* Preferred colors for the CS_CDPC and CS_CDPC_BH policies: page run.vpage + i
 * (i < run.npages) prefers color (run.color + i) mod ncolors when first touched; pages
 * already mapped keep their frames.  Replaces earlier hints; RUNS is copied (any order,
 * empty runs ignored).  Returns 0, or -1 with errno EINVAL if two runs overlap (nothing
 * changed) or ENOMEM.  Other policies keep the hints and ignore them. */
int cs_set_hints(struct cs_sim *sim, const struct fs_color_run *runs, size_t n);

/* CPU reads (WRITE 0) or writes (WRITE != 0) the SIZE bytes at virtual address VADDR.
 * Returns 0, or -1 with errno EINVAL (cpu >= cpus, size 0, or the bytes wrap past the
 * top of the address space; nothing simulated), ENOMEM, or ERANGE (more than 2^32 - 2
 * distinct lines touched); after ENOMEM or ERANGE the state is consistent but the
 * access may be partly simulated. */
int cs_access(struct cs_sim *sim, unsigned cpu, uint64_t vaddr, uint32_t size, int write);

/* CPU prefetches the line holding virtual address VADDR into its L2 (above).  Returns 0,
 * or -1 with errno EINVAL (cpu >= cpus). */
int cs_prefetch(struct cs_sim *sim, unsigned cpu, uint64_t vaddr);

/* A barrier of all CPUs.  The trace's order is already the global order, so it changes
 * no cache state; it is counted, and with time it ends a phase (above). */
void cs_barrier(struct cs_sim *sim);

/* The counters so far (see above) into *OUT. */
void cs_stats(const struct cs_sim *sim, struct cs_stats *out);

/* Zeroes every counter (barriers too) and keeps the caches, the directory and the page
 * mapping: what follows is measured in the steady state the accesses before it made
 * (the paper discards the first phase).  A miss after it is classified by the whole
 * history (a line held before the reset is no cold miss). */
void cs_reset_stats(struct cs_sim *sim);

/* Page-level access patterns (paper Figures 3 and 5): from now on, which CPUs touch
 * each mapped page (cs_page); cs_reset_stats() clears them with the counters, so after
 * it they are the steady state's.  Returns 0, or -1 with errno ENOMEM. */
int cs_track_pages(struct cs_sim *sim);

/* Mapped page I (0 <= I < cs_stats().pages, in first-touch order): its virtual page
 * number, its frame (frame mod ncolors is its color) and the CPUs that touched it (bit
 * i: CPU i) while tracked, 0 if never tracked.  Returns 0, or -1 with errno ERANGE. */
int cs_page(const struct cs_sim *sim, uint32_t i, uint64_t *vpage, uint64_t *frame,
            uint64_t *cpus);

void cs_free(struct cs_sim *sim);

#endif
