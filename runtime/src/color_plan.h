/* Compiler-directed page coloring, the run-time algorithm (paper 4, Section 5.2), as a
 * pure function: array-partition summaries and a cache geometry in, a preferred color
 * per virtual page out.  No I/O, no global state, no allocation but the result, so the
 * runtime (color.c, which collects the compiler's calls) and the cache simulator
 * (cachesim/, which replays the summaries against its own geometry) run the same code.
 *
 * Vocabulary (the paper's):
 * - a *reference summary* says that a statically scheduled parallel loop of `count`
 *   iterations touches, in iteration k, the `unit` bytes at
 *   base + unit * (first + k + offset) of one array (offset 0: the array partition;
 *   offset != 0: shift communication with the neighbours' boundary units; `wrap`:
 *   rotate, the offset taken modulo the loop's range);
 * - which thread runs iteration k is the schedule's: EVEN (libgomp's static: the first
 *   count mod p threads one more), BLOCKED (ceil(count/p) each: LLVM libomp's static),
 *   CYCLIC (chunks of `chunk` iterations dealt round robin), each optionally REVERSE
 *   (iteration 0 on the last thread, as a loop stepping by -1 partitions its array);
 * - a *uniform access segment* is a maximal run of pages of one array touched by the
 *   same set of processors; segments with the same set form a *uniform access set*;
 * - arrays *used together* are arrays referenced in the same loop (same `loop` id) or
 *   named in a group pair.
 *
 * Pages of a declared array that no summary touches join as segments used by every
 * processor (beyond the paper: it left such arrays out, and lost su2cor that way). */
#ifndef FORESIGHT_COLOR_PLAN_H
#define FORESIGHT_COLOR_PLAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define FS_COLOR_MAX_CPUS 64

enum fs_color_schedule {
    FS_COLOR_EVEN = 0,
    FS_COLOR_BLOCKED = 1,
    FS_COLOR_CYCLIC = 2,
};
#define FS_COLOR_REVERSE 0x100u /* or-ed into a schedule */

struct fs_color_array {
    uint64_t base, bytes;
};

struct fs_color_ref {
    uint64_t base;     /* the array's first byte (must be a declared array) */
    uint64_t unit;     /* bytes one iteration touches (the partitioning unit) */
    int64_t first;     /* unit index iteration 0 touches, before offset */
    int64_t count;     /* iterations of the parallel loop */
    int64_t offset;    /* units: 0 partition, +-k shift/rotate communication */
    uint64_t chunk;    /* CYCLIC only: iterations per chunk (0 means 1) */
    unsigned schedule; /* enum fs_color_schedule, maybe | FS_COLOR_REVERSE */
    unsigned nthreads; /* 1..FS_COLOR_MAX_CPUS */
    unsigned loop;     /* references with the same id are used together */
    int wrap;          /* rotate: offset taken modulo [first, first + count) */
    int write;         /* the loop stores to these units (for the simulator's model) */
};

/* How a reference walks its unit in each iteration, for the cache simulator's model only
 * (the plan ignores it): the unit index as a ref's (first, count, offset = shift,
 * schedule's REVERSE), then, in the innermost loop holding it (`phase`, in source order:
 * 0 is the parallel loop's own body), from byte `within` of the unit, `stride` bytes per
 * iteration (negative: the loop runs down; 0: the same bytes every iteration). */
struct fs_color_access {
    uint64_t base;
    uint64_t unit;
    int64_t first;
    int64_t count;
    int64_t shift;
    int64_t within;
    int64_t stride;
    unsigned loop;
    unsigned phase;
    unsigned seq;      /* its place in the loop body's references (order, and apart) */
    int reverse;
    int write;
    unsigned pad;
};

struct fs_color_group {
    uint64_t a, b; /* bases of two arrays used together */
};

struct fs_color_geometry {
    uint64_t page;    /* bytes, a power of two */
    uint32_t ncolors; /* cache bytes / (page * associativity), >= 1 */
};

/* Page vpage + i (i < npages) prefers color (color + i) mod ncolors. */
struct fs_color_run {
    uint64_t vpage, npages;
    uint32_t color;
};

struct fs_color_input {
    const struct fs_color_array *arrays;
    size_t narrays;
    const struct fs_color_ref *refs;
    size_t nrefs;
    const struct fs_color_group *groups;
    size_t ngroups;
};

/* Which thread runs iteration k (0 <= k < count) of a loop scheduled as `schedule`
 * over nthreads threads. */
unsigned fs_color_owner(unsigned schedule, uint64_t chunk, unsigned nthreads, int64_t count,
                        int64_t k);

/* Whether a summary's fields are ones the plan can use (the array aside). */
bool fs_color_ref_valid(const struct fs_color_ref *r);

/* The five steps of Section 5.2.  On success returns 0 and a malloc'd array of runs in
 * ascending vpage order (free() it), covering every page of every declared array once.
 * Returns -1 with errno EINVAL on a bad geometry, ENOMEM when out of memory; summaries
 * that name no declared array or have out-of-range fields are skipped and counted in
 * *bad (may be NULL). */
int fs_color_plan(const struct fs_color_input *in, const struct fs_color_geometry *geo,
                  struct fs_color_run **runs, size_t *nruns, size_t *bad);

#endif
