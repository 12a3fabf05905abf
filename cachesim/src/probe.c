/*
 * probe.c — `foresight color probe`: does this machine's L2 index lines by the colors the
 * kernel's page frames have?  Page coloring and the cache simulator assume so; in a
 * virtual machine the guest's frame numbers are the host's only where the host backs the
 * guest's memory with large contiguous pages.  A 2 MiB transparent huge page is
 * physically contiguous in the guest, so its 4 KiB pages have consecutive guest colors.
 * Two pointer chases over lines at one page offset are timed: over pages of the same
 * color (2 x associativity of them, so they map to one L2 set if guest colors are real)
 * and over as many pages of distinct colors.  Both miss the L1 alike (same offset); only
 * the first should miss the L2.  A clear slowdown of the first says guest colors are
 * host colors.  A control shows the timing sees a set conflict at all: the same lines
 * against as many lines of one page, which the L1 tells apart (its sets lie within a
 * page); without that difference the verdict is null.  Output: one JSON object on
 * stdout; exit 2 with a one-line reason when the geometry or the huge page is missing.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define HUGE (2u << 20)
#define PAGE 4096u
#define STEPS 4000000L
#define ROUNDS 7

static long cache_value(int index, const char *what)
{
    char path[128];
    snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/%s", index, what);
    FILE *f = fopen(path, "r");
    long v = -1;
    if (f) {
        if (fscanf(f, "%ld", &v) != 1)
            v = -1;
        fclose(f);
    }
    return v;
}

/* The unified or data L2 of cpu0: size, ways, line; 0 when not found. */
static int l2_geometry(long *size, long *ways, long *line)
{
    for (int i = 0; i < 8; i++) {
        char path[128], type[32] = "";
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/type", i);
        FILE *f = fopen(path, "r");
        if (!f)
            break;
        if (!fgets(type, sizeof type, f))
            type[0] = 0;
        fclose(f);
        if (cache_value(i, "level") != 2 || !strncmp(type, "Instruction", 11))
            continue;
        *size = cache_value(i, "size") * 1024; /* "1024K" reads as 1024 */
        *ways = cache_value(i, "ways_of_associativity");
        *line = cache_value(i, "coherency_line_size");
        return *size > 0 && *ways > 0 && *line > 0;
    }
    return 0;
}

/* Whether [p, p + HUGE) is one huge page (its AnonHugePages in /proc/self/smaps). */
static int is_huge(const char *p)
{
    FILE *f = fopen("/proc/self/smaps", "r");
    if (!f)
        return 0;
    char line[256];
    int in = 0, huge = 0;
    unsigned long lo, hi, kb;
    while (fgets(line, sizeof line, f)) {
        if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2 && strchr(line, ' ') == line + strcspn(line, " "))
            in = lo <= (unsigned long)p && (unsigned long)p < hi;
        else if (in && sscanf(line, "AnonHugePages: %lu kB", &kb) == 1)
            huge = kb >= HUGE / 1024;
    }
    fclose(f);
    return huge;
}

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

/* ns per step of a chase around n lines, line i at base + i * stride, in a shuffled
 * cycle. */
static double chase(char *base, size_t stride, unsigned n)
{
    void **node[64];
    unsigned order[64];
    for (unsigned i = 0; i < n; i++) {
        node[i] = (void **)(base + i * stride);
        order[i] = i;
    }
    for (unsigned i = n - 1; i > 0; i--) { /* a fixed shuffle: no prefetcher pattern */
        unsigned j = (i * 7919u + 13u) % (i + 1), t = order[i];
        order[i] = order[j];
        order[j] = t;
    }
    for (unsigned i = 0; i < n; i++)
        *node[order[i]] = node[order[(i + 1) % n]];
    double best = 1e9;
    for (int r = 0; r < ROUNDS; r++) {
        void **p = node[order[0]];
        double t0 = now();
        for (long s = 0; s < STEPS; s++)
            p = (void **)*p;
        double ns = (now() - t0) * 1e9 / STEPS;
        __asm__ volatile("" : : "r"(p));
        if (ns < best)
            best = ns;
    }
    return best;
}

int main(void)
{
    long size, ways, line;
    if (!l2_geometry(&size, &ways, &line)) {
        fprintf(stderr, "foresight color probe: error: no L2 cache in "
                "/sys/devices/system/cpu/cpu0/cache\n");
        return 2;
    }
    long colors = size / (PAGE * ways);
    unsigned n = (unsigned)(2 * ways);
    if (colors < 2 || n > 64 || (unsigned long)colors * n > HUGE / PAGE) {
        fprintf(stderr, "foresight color probe: error: an L2 of %ld bytes, %ld ways: %ld "
                "colors, which one 2 MiB page cannot show\n", size, ways, colors);
        return 2;
    }
    char *raw = mmap(NULL, 2 * HUGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (raw == MAP_FAILED) {
        fprintf(stderr, "foresight color probe: error: mmap: %s\n", strerror(errno));
        return 2;
    }
    char *p = (char *)(((uintptr_t)raw + HUGE - 1) & ~(uintptr_t)(HUGE - 1));
    if (madvise(p, HUGE, MADV_HUGEPAGE) || madvise(p, HUGE, MADV_POPULATE_WRITE) || !is_huge(p)) {
        fprintf(stderr, "foresight color probe: error: no transparent huge page (THP "
                "disabled, or none free): the guest's colors cannot be known\n");
        return 2;
    }
    /* The control: the same n lines at one offset of consecutive pages against n lines
     * of one page; the first share an L1 set (its index lies within the page), the second
     * do not.  If this shows no difference, the timing cannot see a set conflict. */
    char *q = p + 5 * line; /* any offset: the same in every page */
    double l1_same = chase(q, PAGE, n), l1_spread = chase(p, (size_t)line, n);
    double same = chase(q, (size_t)colors * PAGE, n), spread = l1_same;
    double ratio = same / spread, control = l1_same / l1_spread;
    const char *verdict = control < 1.5 ? "null" : ratio > 1.5 ? "true" : "false";
    printf("{\"l2_bytes\": %ld, \"ways\": %ld, \"line\": %ld, \"colors\": %ld, "
           "\"lines_chased\": %u, \"same_color_ns\": %.2f, \"spread_ns\": %.2f, "
           "\"ratio\": %.2f, \"l1_same_set_ns\": %.2f, \"l1_spread_ns\": %.2f, "
           "\"l1_control_ratio\": %.2f, \"guest_colors_are_host_colors\": %s}\n",
           size, ways, line, colors, n, same, spread, ratio, l1_same, l1_spread, control,
           verdict);
    return 0;
}
