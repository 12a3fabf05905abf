/* Compiler-directed page coloring (paper 4, Section 5): the summaries a program built
 * with `foresight cc --color` passes before each statically scheduled parallel nest,
 * collected here, and the preferred color of every page of the summarised arrays
 * computed from them (color_plan.c) when the program calls foresight_color_apply().
 *
 * Linux takes no color hint, so what is done with the colors is a mode
 * (FORESIGHT_COLOR): `sim` writes the summaries, the runs computed for this machine's
 * L2 (or FORESIGHT_COLOR_CACHE) and the page size to FORESIGHT_COLOR_MAP for the cache
 * simulator, which recomputes the runs for its own geometry from the same summaries;
 * `real` moves huge-page frames of the right colors under the arrays' pages, their
 * data copied (color_real.c), and writes the same map, with what became of the pages, when
 * FORESIGHT_COLOR_MAP is set; `off` (the default) ignores the calls at the cost of one
 * load each.  A nest that runs
 * a million times passes the same summaries a million times: they are kept once (a hash
 * of their fields), and the map is rewritten only when one is new. */
#include "color_plan.h"
#include "color_real.h"
#include "internal.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_ARRAYS 4096
#define MAX_REFS 16384
#define MAX_GROUPS 4096
#define MAX_ACCESSES 16384
#define HASH_SLOTS 65536 /* a power of two, 1.6 times the records at most */
#define REWRITE_NS 1000000000ull /* sim: the map rewritten at most once a second */

enum kind { ARRAY = 1, REF, GROUP, ACCESS };

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct fs_color_array arrays[MAX_ARRAYS];
static struct fs_color_ref refs[MAX_REFS];
static struct fs_color_group groups[MAX_GROUPS];
static struct fs_color_access accesses[MAX_ACCESSES];
static size_t narrays, nrefs, ngroups, naccesses;
static uint32_t seen[HASH_SLOTS]; /* kind << 24 | index + 1, 0 = empty */
static uint32_t ref_call[MAX_REFS]; /* the apply call that came after a ref's first sight */
static bool ref_again[MAX_REFS];    /* a ref passed again: its loop ran more than once */
static pthread_t ref_thread[MAX_REFS]; /* who passed it first: the team of an orphaned
                                        * `omp for` passes it once each, which is no repeat */
static uint32_t ref_passes[MAX_REFS];  /* how often it was passed: more often than its team
                                        * has threads is a repeat too (the first passer may
                                        * be a worker the runtime has since let go) */
static uint32_t access_call[MAX_ACCESSES]; /* as ref_call, for access records */
static unsigned long dropped;     /* calls whose summary found the tables full */
static unsigned long bad_input;   /* summaries the plan could not use */
static uint32_t calls;            /* foresight_color_apply calls so far */
static bool dirty;                /* summaries the map does not have yet */
static size_t arrays_placed;      /* real: the arrays whose pages were placed */
static uint64_t written_ns;       /* when the map was last written */
static pid_t owner;               /* the process whose summaries these are */

/* The process that loaded the library: a forked child's summaries are not its map. */
__attribute__((constructor)) static void color_owner(void)
{
    owner = getpid();
}

static uint64_t mix(uint64_t h, uint64_t v)
{
    h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    return h * 0xff51afd7ed558ccdull;
}

/* The table of records of kind K, its count and its capacity. */
static void *table(enum kind k, size_t **n, size_t *cap, size_t *size)
{
    switch (k) {
    case ARRAY: *n = &narrays, *cap = MAX_ARRAYS, *size = sizeof arrays[0]; return arrays;
    case REF: *n = &nrefs, *cap = MAX_REFS, *size = sizeof refs[0]; return refs;
    case GROUP: *n = &ngroups, *cap = MAX_GROUPS, *size = sizeof groups[0]; return groups;
    default: *n = &naccesses, *cap = MAX_ACCESSES, *size = sizeof accesses[0]; return accesses;
    }
}

/* Keeps a record not seen before: true, its index in *AT.  False when it was known (its
 * index in *AT) or there is no room (*AT = SIZE_MAX). */
static bool keep(enum kind k, const void *rec, size_t size, uint64_t h, size_t *at)
{
    size_t *n, cap, rsize;
    unsigned char *t = table(k, &n, &cap, &rsize);
    for (size_t s = h & (HASH_SLOTS - 1);; s = (s + 1) & (HASH_SLOTS - 1)) {
        uint32_t e = seen[s];
        if (e == 0) {
            if (*n == cap) {
                dropped++;
                *at = SIZE_MAX;
                return false;
            }
            memcpy(t + *n * rsize, rec, size);
            seen[s] = (uint32_t)k << 24 | (uint32_t)(*n + 1);
            *at = (*n)++;
            return true;
        }
        *at = (e & 0xffffff) - 1;
        if (e >> 24 == (uint32_t)k && memcmp(t + *at * rsize, rec, size) == 0)
            return false;
    }
}

static bool collecting(void)
{
    return fs_cfg.color != 0 && owner == getpid();
}


static void add(enum kind k, const void *rec, size_t size)
{
    uint64_t h = k;
    const unsigned char *b = rec;
    for (size_t i = 0; i + 8 <= size; i += 8) {
        uint64_t v;
        memcpy(&v, b + i, 8);
        h = mix(h, v);
    }
    pthread_mutex_lock(&lock);
    size_t at = SIZE_MAX;
    if (collecting() && keep(k, rec, size, h, &at)) {
        dirty = true;
        if (k == REF) {
            ref_call[at] = calls;
            ref_thread[at] = pthread_self();
            ref_passes[at] = 1;
        } else if (k == ACCESS) {
            access_call[at] = calls;
        }
    } else if (k == REF && at != SIZE_MAX && collecting() && !ref_again[at]) {
        if (ref_passes[at] < UINT32_MAX)
            ref_passes[at]++;
        /* (A team of one passes it once per run only where no enclosing team runs it:
         * a nested region's summary says 1 thread, and each outer thread passes it.) */
        if (pthread_equal(ref_thread[at], pthread_self()) ||
            (refs[at].nthreads > 1 && ref_passes[at] > refs[at].nthreads)) {
            ref_again[at] = true;
            dirty = true;
        }
    }
    pthread_mutex_unlock(&lock);
}

void foresight__color_array(const void *base, size_t bytes)
{
    if (fs_cfg.color == 0 || base == NULL || bytes == 0)
        return;
    struct fs_color_array a = {(uint64_t)(uintptr_t)base, bytes};
    add(ARRAY, &a, sizeof a);
}

void foresight__color_ref(const void *array, size_t unit, long first, long count,
                          long offset, unsigned schedule, size_t chunk, unsigned nthreads,
                          unsigned loop)
{
    if (fs_cfg.color == 0)
        return;
    struct fs_color_ref r;
    memset(&r, 0, sizeof r); /* padding too: records are compared and hashed whole */
    r.base = (uint64_t)(uintptr_t)array;
    r.unit = unit;
    r.first = first;
    r.count = count;
    r.offset = offset;
    r.chunk = chunk;
    r.schedule = schedule & (FORESIGHT_COLOR_REVERSE | 0xffu);
    r.nthreads = nthreads;
    r.loop = loop;
    r.wrap = (schedule & FORESIGHT_COLOR_ROTATE) != 0;
    r.write = (schedule & FORESIGHT_COLOR_WRITE) != 0;
    add(REF, &r, sizeof r);
}

void foresight__color_access(const void *array, size_t unit, long first, long count,
                             long shift, long within, long stride, unsigned flags,
                             unsigned loop, unsigned phase, unsigned seq)
{
    if (fs_cfg.color == 0)
        return;
    struct fs_color_access a;
    memset(&a, 0, sizeof a);
    a.base = (uint64_t)(uintptr_t)array;
    a.unit = unit;
    a.first = first;
    a.count = count;
    a.shift = shift;
    a.within = within;
    a.stride = stride;
    a.loop = loop;
    a.phase = phase;
    a.seq = seq;
    a.reverse = (flags & FORESIGHT_COLOR_REVERSE) != 0;
    a.write = (flags & FORESIGHT_COLOR_WRITE) != 0;
    add(ACCESS, &a, sizeof a);
}

void foresight__color_group(const void *a, const void *b)
{
    if (fs_cfg.color == 0)
        return;
    struct fs_color_group g = {(uint64_t)(uintptr_t)a, (uint64_t)(uintptr_t)b};
    add(GROUP, &g, sizeof g);
}

/* The cache the colors are for: FORESIGHT_COLOR_CACHE, else cpu0's unified or data L2. */
static struct fs_color_geometry geometry(void)
{
    uint64_t size = fs_cfg.color_cache, assoc = fs_cfg.color_assoc;
    for (int i = 0; size == 0 && i < 8; i++) {
        char path[96], buf[64];
        unsigned long level = 0, ways = 0, kib = 0;
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/level", i);
        FILE *f = fopen(path, "re");
        if (!f)
            break;
        if (fscanf(f, "%lu", &level) != 1)
            level = 0;
        fclose(f);
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/type", i);
        f = fopen(path, "re");
        bool inst = f && fgets(buf, sizeof buf, f) && strncmp(buf, "Instruction", 11) == 0;
        if (f)
            fclose(f);
        if (level != 2 || inst)
            continue;
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/size", i);
        f = fopen(path, "re");
        if (f && fscanf(f, "%luK", &kib) != 1)
            kib = 0;
        if (f)
            fclose(f);
        snprintf(path, sizeof path,
                 "/sys/devices/system/cpu/cpu0/cache/index%d/ways_of_associativity", i);
        f = fopen(path, "re");
        if (f && fscanf(f, "%lu", &ways) != 1)
            ways = 0;
        if (f)
            fclose(f);
        if (kib && ways) {
            size = (uint64_t)kib << 10;
            assoc = ways;
        }
    }
    if (size == 0) { /* no sysfs: a 1 MiB direct-mapped cache, the paper's */
        size = 1u << 20;
        assoc = 1;
    }
    uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
    uint64_t nc = size / (page * assoc);
    return (struct fs_color_geometry){page, (uint32_t)(nc ? nc : 1)};
}

static const char *schedule_name(unsigned s)
{
    static const char *const names[] = {"even", "blocked", "cyclic", "even-reverse",
                                        "blocked-reverse", "cyclic-reverse"};
    unsigned k = s & ~FS_COLOR_REVERSE;
    return k > FS_COLOR_CYCLIC ? "bad" : names[k + ((s & FS_COLOR_REVERSE) ? 3 : 0)];
}

/* The map file (docs/coloring.md has its format), written whole to PATH.tmp.PID and
 * renamed, so a reader never sees half of it. */
static void write_map(const struct fs_color_geometry *geo, const struct fs_color_run *runs,
                      size_t nruns)
{
    char tmp[sizeof fs_cfg.color_map + 32];
    snprintf(tmp, sizeof tmp, "%s.tmp.%ld", fs_cfg.color_map, (long)getpid());
    FILE *f = fopen(tmp, "we");
    if (!f)
        return;
    fprintf(f, "foresight-color-map 1\n# ncolors %u bad_input %lu dropped %lu\npage %llu\n",
            geo->ncolors, bad_input, dropped, (unsigned long long)geo->page);
    if (fs_cfg.color == 2) {
        const struct fs_color_real_counts *c = &fs_color_real;
        fprintf(f, "# real requested %llu moved %llu copied %llu placed %llu at_color %llu "
                "gone %llu in_parallel %llu not_anonymous %llu not_root %llu colors_unfit %llu "
                "no_thp %llu map_count %llu failed %llu\n", (unsigned long long)c->requested,
                (unsigned long long)c->moved, (unsigned long long)c->copied,
                (unsigned long long)c->placed, (unsigned long long)c->at_color,
                (unsigned long long)c->gone, (unsigned long long)c->in_parallel,
                (unsigned long long)c->not_anonymous,
                (unsigned long long)c->not_root, (unsigned long long)c->colors_unfit,
                (unsigned long long)c->no_thp, (unsigned long long)c->map_count,
                (unsigned long long)c->failed);
    }
    for (size_t i = 0; i < narrays; i++)
        fprintf(f, "array 0x%llx %llu\n", (unsigned long long)arrays[i].base,
                (unsigned long long)arrays[i].bytes);
    for (size_t i = 0; i < nrefs; i++) {
        const struct fs_color_ref *r = &refs[i];
        if (!fs_color_ref_valid(r))
            continue; /* counted in bad_input */
        fprintf(f, "ref 0x%llx %llu %lld %lld %lld %llu %s %u %u %d %c %u %d\n",
                (unsigned long long)r->base, (unsigned long long)r->unit, (long long)r->first,
                (long long)r->count, (long long)r->offset, (unsigned long long)r->chunk,
                schedule_name(r->schedule), r->nthreads, r->loop, r->wrap, r->write ? 'w' : 'r',
                ref_call[i], ref_again[i]);
    }
    for (size_t i = 0; i < naccesses; i++) {
        const struct fs_color_access *a = &accesses[i];
        fprintf(f, "access 0x%llx %llu %lld %lld %lld %lld %lld %u %u %u %c %c %u\n",
                (unsigned long long)a->base, (unsigned long long)a->unit, (long long)a->first,
                (long long)a->count, (long long)a->shift, (long long)a->within,
                (long long)a->stride, a->loop, a->phase, a->seq, a->reverse ? 'v' : 'f',
                a->write ? 'w' : 'r', access_call[i]);
    }
    for (size_t i = 0; i < ngroups; i++)
        fprintf(f, "group 0x%llx 0x%llx\n", (unsigned long long)groups[i].a,
                (unsigned long long)groups[i].b);
    for (size_t i = 0; i < nruns; i++)
        fprintf(f, "run %llu %llu %u\n", (unsigned long long)runs[i].vpage,
                (unsigned long long)runs[i].npages, runs[i].color);
    if (fclose(f) != 0 || rename(tmp, fs_cfg.color_map) != 0)
        unlink(tmp);
}

/* The plan of every summary so far and the map, as the mode asks: real places the
 * pages of arrays not placed before (and not from inside a parallel region, where a
 * team may be storing); the map is written when it lacks a summary, at most once a
 * second (a loop whose bounds change each time it runs, LU's, brings a new summary
 * every time), and at exit. */
static void plan(bool at_exit, int in_parallel)
{
    bool place = fs_cfg.color == 2 && !at_exit && narrays > arrays_placed;
    bool write = fs_cfg.color_map[0] && dirty &&
                 (at_exit || fs_now_ns() - written_ns >= REWRITE_NS);
    if (!place && !write)
        return;
    struct fs_color_geometry geo = geometry();
    struct fs_color_input in = {arrays, narrays, refs, nrefs, groups, ngroups};
    struct fs_color_run *runs = NULL;
    size_t nruns = 0, bad = 0;
    if (fs_color_plan(&in, &geo, &runs, &nruns, &bad) == 0) {
        bad_input = bad;
        if (place) { /* inside a parallel region it only counts: placed at a later call */
            fs_color_real_apply(runs, nruns, geo.ncolors, in_parallel);
            if (!in_parallel)
                arrays_placed = narrays;
        }
        if (at_exit && fs_cfg.color == 2)
            fs_color_real_verify();
        if (write) {
            write_map(&geo, runs, nruns);
            written_ns = fs_now_ns();
            dirty = false;
        }
    }
    free(runs);
}

void foresight__color_apply(int in_parallel)
{
    if (fs_cfg.color == 0)
        return;
    int saved = errno;
    pthread_mutex_lock(&lock);
    if (collecting()) {
        calls++;
        plan(false, in_parallel);
    }
    pthread_mutex_unlock(&lock);
    errno = saved;
}

/* The map as the program ended: every summary, and in real mode the moved pages
 * checked again (compaction may have moved them, the program freed them). */
__attribute__((destructor)) static void map_at_exit(void)
{
    if (!collecting() || !fs_cfg.color_map[0])
        return;
    pthread_mutex_lock(&lock);
    if (fs_cfg.color == 2)
        dirty = true; /* the verification is new */
    plan(true, 0);
    pthread_mutex_unlock(&lock);
}
