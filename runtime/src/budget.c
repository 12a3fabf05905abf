/*
 * budget.c — how much memory prefetches may occupy.
 *
 * The paper's operating system dropped a prefetch when no free page existed,
 * rather than evict data to make room (Section 2.4.2).  Under Linux a capped
 * cgroup is always "full" of page cache, so the runtime keeps its own account:
 * the pages it has marked resident (prefetched and not released) may not
 * exceed three quarters of the memory limit.  The limit is FORESIGHT_MEM, else
 * the cgroup's (v2 memory.max up the hierarchy, v1 hierarchical_memory_limit),
 * else physical memory.
 *
 * A release is worth its page-table walk and TLB flushes only when memory is
 * short: the memory in use (the cgroup's usage; under FORESIGHT_MEM the
 * process's resident set; else MemTotal - MemAvailable), read at most every
 * 10 ms, must have reached three quarters of the limit, and the program must be
 * too large for it: its address space over 9/8 of the limit, or within the last
 * 10 seconds pages of it in swap or refaults of the memory the limit bounds
 * (memory_short; not asked under FORESIGHT_MEM).  Otherwise releases in auto mode are
 * skipped and their pages keep their residency marks, so data that fits in memory
 * stays filtered inline (MG in core, 128 MiB: 2.8 s with hints against 0.47 s
 * without, when every release ran) and is not paged out (below).
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysinfo.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"

static uint64_t limit_bytes;
static uint64_t ram_bytes;
static char source[64] = "physical memory";
static char usage_path[4200]; /* the cgroup's usage file, when the limit is the cgroup's */
static char cgroup_usage_path[4200]; /* the limiting cgroup's usage, even under FORESIGHT_MEM */
static char stat_path[4200];  /* its memory.stat (memcg.c) */
static uint64_t cgroup_limit_bytes;
static bool cgroup_v2;         /* the limiting cgroup's hierarchy (memory.stat's keys) */

/* The start of a small kernel file into BUF (NUL-terminated); false when unreadable. */
static bool read_small(const char *path, char *buf, size_t len)
{
    memset(buf, 0, len);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return false;
    ssize_t n = read(fd, buf, len - 1);
    close(fd);
    return n > 0;
}

/* The decimal number at S after any blanks; *digits says whether there was one.  By
 * hand, not strtoull: usage is read in hints, which may come from a signal handler. */
static uint64_t decimal(const char *s, bool *digits)
{
    while (*s == ' ' || *s == '\t')
        s++;
    uint64_t v = 0;
    const char *p = s;
    for (; *p >= '0' && *p <= '9'; p++)
        v = v * 10 + (uint64_t)(*p - '0');
    *digits = p != s;
    return v;
}

static uint64_t read_u64_file(const char *path, bool *ok)
{
    char buf[64];
    *ok = false;
    if (!read_small(path, buf, sizeof buf) || strncmp(buf, "max", 3) == 0)
        return 0;
    return decimal(buf, ok);
}

/* Find the mount point of the hierarchy (v2: fstype cgroup2; v1: cgroup with option memory)
 * and the mount's root, from /proc/self/mountinfo. */
static bool find_mount(bool v2, char *mnt, size_t mlen, char *root, size_t rlen)
{
    FILE *f = fopen("/proc/self/mountinfo", "re");
    if (f == NULL)
        return false;
    char line[4096];
    bool found = false;
    while (!found && fgets(line, sizeof line, f)) {
        char r[1024], m[1024], fstype[64], super[1024];
        char *dash = strstr(line, " - ");
        if (dash == NULL || sscanf(line, "%*s %*s %*s %1023s %1023s", r, m) != 2 ||
            sscanf(dash + 3, "%63s %*s %1023s", fstype, super) != 2)
            continue;
        if (v2 ? strcmp(fstype, "cgroup2") == 0
               : strcmp(fstype, "cgroup") == 0 && strstr(super, "memory") != NULL) {
            snprintf(mnt, mlen, "%s", m);
            snprintf(root, rlen, "%s", r);
            found = true;
        }
    }
    fclose(f);
    return found;
}

/* The directory of this process's memory cgroup, and whether it is v2. */
static bool own_cgroup_dir(char *out, size_t len, bool *v2)
{
    FILE *f = fopen("/proc/self/cgroup", "re");
    if (f == NULL)
        return false;
    char line[4096], v1path[2048] = "", v2path[2048] = "";
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = 0;
        char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
        if (c2 == NULL)
            continue;
        *c2 = 0;
        const char *controllers = c1 + 1, *path = c2 + 1;
        if (strcmp(line, "0") == 0 && *controllers == 0)
            snprintf(v2path, sizeof v2path, "%s", path);
        else {
            char ctl[1024];
            snprintf(ctl, sizeof ctl, ",%s,", controllers);
            if (strstr(ctl, ",memory,"))
                snprintf(v1path, sizeof v1path, "%s", path);
        }
    }
    fclose(f);
    char mnt[1024], root[1024];
    const char *path = NULL;
    if (v1path[0] && find_mount(false, mnt, sizeof mnt, root, sizeof root)) {
        *v2 = false;
        path = v1path;
    } else if (v2path[0] && find_mount(true, mnt, sizeof mnt, root, sizeof root)) {
        char probe[4096];
        snprintf(probe, sizeof probe, "%s/cgroup.controllers", mnt);
        FILE *c = fopen(probe, "re");
        char ctl[1024] = "";
        if (c != NULL) {
            if (fgets(ctl, sizeof ctl, c) == NULL)
                ctl[0] = 0;
            fclose(c);
        }
        if (strstr(ctl, "memory") == NULL)
            return false;
        *v2 = true;
        path = v2path;
    } else {
        return false;
    }
    size_t rl = strlen(root);
    if (strcmp(root, "/") != 0 && strncmp(path, root, rl) == 0)
        path += rl;
    snprintf(out, len, "%s%s", mnt, path);
    return true;
}

/* The tightest memory limit from this process's cgroup up to the hierarchy's root
 * (v2 memory.max, v1 memory.limit_in_bytes: its hierarchical limit), with the directory
 * that sets it left in DIRBUF: that cgroup's usage is what the limit is charged against,
 * and its statistics are what its reclaim reads (memcg.c).  0 when there is none. */
static uint64_t cgroup_limit(char *dirbuf, size_t len, bool *v2)
{
    if (!own_cgroup_dir(dirbuf, len, v2))
        return 0;
    const char *file = *v2 ? "memory.max" : "memory.limit_in_bytes";
    const char *member = *v2 ? "cgroup.controllers" : "memory.limit_in_bytes";
    char path[4200], walk[4096];
    bool ok;
    uint64_t lim = 0;
    snprintf(walk, sizeof walk, "%s", dirbuf);
    for (;;) {
        snprintf(path, sizeof path, "%s/%s", walk, file);
        uint64_t v = read_u64_file(path, &ok);
        if (ok && (lim == 0 || v < lim)) {
            lim = v;
            snprintf(dirbuf, len, "%s", walk);
        }
        char *slash = strrchr(walk, '/');
        if (slash == NULL || slash == walk)
            break;
        *slash = 0;
        snprintf(path, sizeof path, "%s/%s", walk, member);
        if (access(path, F_OK) != 0)
            break;   /* above the hierarchy's root */
    }
    return lim;
}

void fs_budget_init(void)
{
    struct sysinfo si;
    uint64_t ram = sysinfo(&si) == 0 ? (uint64_t)si.totalram * si.mem_unit : 0;
    ram_bytes = ram;
    char dir[4096];
    bool v2 = false;
    uint64_t cg = cgroup_limit(dir, sizeof dir, &v2);
    limit_bytes = ram;
    if (cg > 0 && (ram == 0 || cg < ram)) {
        limit_bytes = cgroup_limit_bytes = cg;
        snprintf(source, sizeof source, "cgroup %s", v2 ? "v2" : "v1");
        snprintf(usage_path, sizeof usage_path, "%s/%s", dir,
                 v2 ? "memory.current" : "memory.usage_in_bytes");
        snprintf(cgroup_usage_path, sizeof cgroup_usage_path, "%s", usage_path);
        snprintf(stat_path, sizeof stat_path, "%s/memory.stat", dir);
        cgroup_v2 = v2;
        fs_kept_path(FS_KEPT_CG_USAGE, cgroup_usage_path);
        fs_kept_path(FS_KEPT_CG_STAT, stat_path);
    }
    if (fs_cfg.mem_override) {
        limit_bytes = fs_cfg.mem_override;
        snprintf(source, sizeof source, "FORESIGHT_MEM");
        usage_path[0] = 0;
    }
}

/* The value after KEY in a "Key:   N kB" line of /proc/meminfo, in bytes. */
static uint64_t meminfo_kb(const char *text, const char *key)
{
    const char *p = strstr(text, key);
    bool ok;
    return p ? decimal(p + strlen(key), &ok) << 10 : 0;
}

/* Memory in use against the limit, by the measure that matches its source; 0 unknown.
 * The files are kept open (ownfd.c): this runs on the program's thread and the library's. */
static uint64_t usage_bytes(void)
{
    bool ok = false;
    char buf[512];
    if (usage_path[0]) {
        if (fs_kept_pread(FS_KEPT_CG_USAGE, buf, 64, 0) <= 0 || strncmp(buf, "max", 3) == 0)
            return 0;
        return decimal(buf, &ok);
    }
    if (fs_cfg.mem_override) { /* statm: "size resident ...", in pages */
        if (fs_kept_pread(FS_KEPT_STATM, buf, sizeof buf, 0) <= 0)
            return 0;
        const char *resident = strchr(buf, ' ');
        return resident ? decimal(resident, &ok) << FORESIGHT_PAGE_SHIFT : 0;
    }
    if (fs_kept_pread(FS_KEPT_MEMINFO, buf, sizeof buf, 0) <= 0)
        return 0;
    uint64_t total = meminfo_kb(buf, "MemTotal:"), avail = meminfo_kb(buf, "MemAvailable:");
    return total > avail ? total - avail : 0;
}

/* The value of KEY at the start of a line of a memory.stat TEXT; 0 when absent. */
static uint64_t stat_value(const char *text, const char *key)
{
    const size_t n = strlen(key);
    for (const char *p = text; p != NULL && *p; p = strchr(p, '\n'), p = p ? p + 1 : p) {
        bool ok;
        if (strncmp(p, key, n) == 0 && p[n] == ' ')
            return decimal(p + n, &ok);
    }
    return 0;
}

/* The cgroup's clean inactive page cache (inactive file pages, less any dirty or under
 * writeback): what its reclaim drops first without writing anything; 0 when unknown.
 * Not the active file pages: a program's text and the files it keeps reading are its
 * working set.  The keys are within the file's first kilobyte in v1 and v2 (a small
 * buffer: this may run in a signal handler). */
static uint64_t clean_file_bytes(void)
{
    char buf[1536];
    if (stat_path[0] == 0 || fs_kept_pread(FS_KEPT_CG_STAT, buf, sizeof buf, 0) <= 0)
        return 0;
    const uint64_t file = stat_value(buf, "inactive_file");
    const uint64_t dirty = cgroup_v2 ? stat_value(buf, "file_dirty") + stat_value(buf, "file_writeback")
                                     : stat_value(buf, "dirty") + stat_value(buf, "writeback");
    return file > dirty ? file - dirty : 0;
}

/* The workingset refaults (anonymous and file) of the memory the limit bounds: the
 * limiting cgroup's (memory.stat: v1's total_ lines about 600 bytes in, v2's within
 * about a kilobyte), else the machine's (/proc/vmstat, about 600 bytes in); false when
 * they cannot be read. */
static bool refaults(uint64_t *count)
{
    char buf[2048];
    const bool cg = usage_path[0] != 0;
    if (cg ? stat_path[0] == 0 || fs_kept_pread(FS_KEPT_CG_STAT, buf, sizeof buf, 0) <= 0
           : fs_kept_pread(FS_KEPT_VMSTAT, buf, sizeof buf, 0) <= 0)
        return false;
    /* v1: the hierarchy's (total_*), the limit may be a parent's; v2's are hierarchical. */
    const char *anon = cg && !cgroup_v2 ? "total_workingset_refault_anon"
                                        : "workingset_refault_anon";
    const char *file = cg && !cgroup_v2 ? "total_workingset_refault_file"
                                        : "workingset_refault_file";
    if (strstr(buf, anon) == NULL)
        return false;
    *count = stat_value(buf, anon) + stat_value(buf, file);
    return true;
}

/* The process's pages in swap (VmSwap in /proc/self/status, about 700 bytes in) into
 * *PAGES; *KNOWN says whether it could be read. */
static void swapped(bool *known, uint64_t *pages)
{
    char buf[2048];
    *known = false;
    *pages = 0;
    if (fs_kept_pread(FS_KEPT_STATUS, buf, sizeof buf, 0) <= 0)
        return;
    const char *p = strstr(buf, "\nVmSwap:");
    if (p == NULL)
        return;
    *known = true;
    bool ok;
    *pages = (decimal(p + 8, &ok) << 10) >> FORESIGHT_PAGE_SHIFT;
}

/*
 * Whether memory is too small for the program (read again once the last reading is
 * older than MAX_AGE_NS: 100 ms for releases, while memory in use is at 3/4 of the
 * limit, so refaults from before such a stretch may count; 10 ms for the gate): its address
 * space exceeds the limit by more than an eighth, or within the last 10 seconds the
 * memory the limit bounds refaulted (pages the kernel evicted were needed again) or,
 * where SWAP_COUNTS, the process had pages in swap, either beyond what the release
 * probes paged out; true when none of this can be read, and under FORESIGHT_MEM (a
 * limit the kernel does not enforce).
 * Releases that page out data which fits in memory only make it come back: with the
 * data at 0.75 times a cgroup limit (NAS IS, 128 MiB under 171 MiB), the hinted run
 * released 377,000 pages, paged out 39,000 of which 24,000 came back, and took 1.41 s
 * against the original's 0.55 s, which faulted 5 times; MG at 1 times (128 MiB of data
 * under a 128 MiB cap: its arrays fit) paged out 173,000 pages, 1.95 s against 0.52 s
 * (`foresight bench incore --near`, docs/results.md).  A program clearly larger than
 * memory releases from the start, as before: its first pass fills memory, and the
 * releases made then, before any swap (the kernel's reclaim is only starting), decide
 * what is paged out and in what order (NAS SP at 3 times, 192 MiB under 64 MiB:
 * 10.6-10.9 s with releases waiting for swap, 8.6-9.9 s without waiting, three
 * alternated rounds).  Other processes' refaults count where the limit is the
 * machine's.
 */
static bool over_eighth(uint64_t space_bytes)
{
    return space_bytes > limit_bytes + limit_bytes / 8;
}

static bool much_larger = true; /* the address space is clearly larger than the limit */

static bool memory_short(uint64_t now, uint64_t max_age_ns, bool swap_counts)
{
    static uint64_t last_count, last_probed, read_ns, seen_swap_ns, seen_refault_ns;
    static int known = -1;  /* -1 not read yet, 0 unreadable, 1 read */
    static bool had_count;  /* last_count is the refaults' last reading */
    if (fs_cfg.mem_override)
        return true;
    const uint64_t read = __atomic_load_n(&read_ns, __ATOMIC_RELAXED);
    if (read == 0 || now < read || now - read >= max_age_ns) {
        __atomic_store_n(&read_ns, now, __ATOMIC_RELAXED);
        const uint64_t space = (uint64_t)fs_address_space() << FORESIGHT_PAGE_SHIFT;
        const bool larger = space == 0 || over_eighth(space);
        __atomic_store_n(&much_larger, larger, __ATOMIC_RELAXED);
        if (larger) { /* the answer without the statistics; a fresh baseline after */
            __atomic_store_n(&had_count, false, __ATOMIC_RELAXED);
        } else {
            /* The release probes' own pageouts (reuse.c) are no evidence: they sit in
             * swap, and come back as refaults, in a program that fits. */
            const uint64_t probed = fs_reuse_probed_pages();
            uint64_t c = 0, swap_pages = 0;
            bool swap_known;
            swapped(&swap_known, &swap_pages);
            const bool counted = refaults(&c);
            const bool grew = counted && __atomic_load_n(&had_count, __ATOMIC_RELAXED) &&
                              c - __atomic_load_n(&last_count, __ATOMIC_RELAXED) >
                                  probed - __atomic_load_n(&last_probed, __ATOMIC_RELAXED);
            if (swap_pages > probed)
                __atomic_store_n(&seen_swap_ns, now, __ATOMIC_RELAXED);
            if (grew)
                __atomic_store_n(&seen_refault_ns, now, __ATOMIC_RELAXED);
            if (counted)
                __atomic_store_n(&last_count, c, __ATOMIC_RELAXED);
            __atomic_store_n(&last_probed, probed, __ATOMIC_RELAXED);
            __atomic_store_n(&had_count, counted, __ATOMIC_RELAXED);
            __atomic_store_n(&known, counted || swap_known, __ATOMIC_RELAXED);
        }
    }
    if (__atomic_load_n(&much_larger, __ATOMIC_RELAXED) ||
        __atomic_load_n(&known, __ATOMIC_RELAXED) != 1)
        return true;
    const uint64_t refault = __atomic_load_n(&seen_refault_ns, __ATOMIC_RELAXED),
                   swap = swap_counts ? __atomic_load_n(&seen_swap_ns, __ATOMIC_RELAXED) : 0;
    const uint64_t seen = refault > swap ? refault : swap;
    return seen != 0 && (now < seen || now - seen < 10000000000u);
}

/*
 * Memory is short: what is in use, less the clean inactive page cache under a cgroup
 * limit, has reached 3/4 of the limit, and memory has lately been too small for the
 * program (memory_short).  Such pages cost the cgroup's reclaim nothing to drop,
 * so releasing anonymous memory (written to swap, read back if it is used again) while
 * they fill the cgroup only adds work: seismo, a 40 MiB array written by one nest and
 * read by the next while 640 MiB of a mapped file passed through a 64 MiB cap, paged the
 * array out behind the first nest and read it back in the second.
 */
bool fs_budget_pressure(void)
{
    static uint64_t next_ns;
    static bool pressed = true; /* until measured: an unknown usage never skips releases */
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
    uint64_t now = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
    if (now >= __atomic_load_n(&next_ns, __ATOMIC_RELAXED)) {
        __atomic_store_n(&next_ns, now + 10000000u, __ATOMIC_RELAXED);
        uint64_t used = usage_bytes();
        bool over = used == 0 || used >= limit_bytes / 4 * 3;
        if (over && used != 0 && usage_path[0]) {
            /* memory.stat costs more to read than the usage (the kernel flushes and
             * sums its per-CPU counters): read once a second while the page cache's
             * share is small (an anonymous program's), every 100 ms while it is an
             * eighth of the limit or more and may give way to anonymous memory. */
            static uint64_t clean, clean_next_ns;
            if (now >= __atomic_load_n(&clean_next_ns, __ATOMIC_RELAXED)) {
                const uint64_t c = clean_file_bytes();
                __atomic_store_n(&clean, c, __ATOMIC_RELAXED);
                __atomic_store_n(&clean_next_ns,
                                 now + (c >= limit_bytes / 8 ? 100000000u : 1000000000u),
                                 __ATOMIC_RELAXED);
            }
            const uint64_t c = __atomic_load_n(&clean, __ATOMIC_RELAXED);
            over = c < used && used - c >= limit_bytes / 4 * 3;
        }
        if (over && used != 0)
            over = memory_short(now, 100000000u, true);
        __atomic_store_n(&pressed, over, __ATOMIC_RELAXED);
    }
    return __atomic_load_n(&pressed, __ATOMIC_RELAXED);
}

/* Whether memory has lately been too small for the program, for the gate (gate.c):
 * memory_short by refaults alone, not pages in swap (a program that fits keeps in swap
 * what the kernel took from its initialisation: NAS CG at 1 times its cap, 127 MiB
 * swapped out and 8 MiB read back), looked at again after 10 ms, not 100: a nest
 * entered twice within 100 ms (a stencil's second sweep, 72 ms after its first over
 * data in memory) would be judged by what had refaulted before the first. */
bool fs_budget_short(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
    return memory_short((uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec, 10000000u,
                        false);
}

/* Whether the program's address space is now larger than the limit by more than an
 * eighth; false when it cannot be read (a library thread cannot reopen the statm file
 * the program closed, and locking is no answer to not knowing). */
bool fs_budget_far_over(void)
{
    const uint64_t space = (uint64_t)fs_address_space() << FORESIGHT_PAGE_SHIFT;
    return space != 0 && over_eighth(space);
}

/* Whether the program's address space was, when last looked at, clearly larger than
 * the limit (memory_short; true until it has been looked at). */
bool fs_budget_much_larger(void)
{
    return __atomic_load_n(&much_larger, __ATOMIC_RELAXED);
}

bool fs_budget_limited(void)
{
    return cgroup_limit_bytes > 0 || fs_cfg.mem_override != 0;
}

const char *fs_budget_stat_path(void)
{
    return stat_path;
}

/* The limiting cgroup's usage is at 3/4 of its limit (whatever FORESIGHT_MEM says:
 * that cgroup's reclaim is what may kill); false without a cgroup limit. */
bool fs_budget_cgroup_pressure(void)
{
    /* The keeper thread's (memcg.c) every 10 ms: its usage file kept open (ownfd.c). */
    char buf[64];
    bool ok = false;
    if (cgroup_usage_path[0] == 0 || fs_kept_pread(FS_KEPT_CG_USAGE, buf, sizeof buf, 0) <= 0 ||
        strncmp(buf, "max", 3) == 0)
        return false;
    uint64_t used = decimal(buf, &ok);
    return ok && used >= cgroup_limit_bytes / 4 * 3;
}

uint64_t fs_budget_limit_bytes(void)
{
    return limit_bytes;
}

size_t fs_budget_table_slots(unsigned unit_shift, unsigned per_unit, size_t fewest, size_t most)
{
    const uint64_t units = limit_bytes >> unit_shift;
    size_t n = fewest;
    while (n < most && n < per_unit * units)
        n <<= 1;
    return n;
}

size_t foresight__memory(void)
{
    return (size_t)limit_bytes;
}

const char *fs_budget_source(void)
{
    return source;
}

size_t fs_budget_pages(void)
{
    return (size_t)(limit_bytes / 4 * 3) >> FORESIGHT_PAGE_SHIFT;
}

/* A prefetch of more than the budget could only evict its own head with its tail; nor,
 * whatever FORESIGHT_MEM says, of more than physical memory can hold. */
size_t fs_budget_call_pages(void)
{
    uint64_t mem = ram_bytes != 0 && ram_bytes < limit_bytes ? ram_bytes : limit_bytes;
    return (size_t)(mem / 4 * 3) >> FORESIGHT_PAGE_SHIFT;
}

/* The prefetch footprint is over its budget: prefetches are being dropped, so a release
 * pages out at once to make room.  (The cgroup's own usage is no guide: an out-of-core
 * program keeps its cgroup at the limit all the time, and paging out on that made every
 * release a synchronous reclaim with TLB-flush interrupts on the program's CPU: SP and
 * FT ran 1.2-1.5x slower with releases than with MADV_COLD alone.) */
bool fs_budget_full(void)
{
    return fs_residency_footprint() > fs_budget_pages();
}
