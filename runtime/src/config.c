/*
 * config.c — the runtime's settings from the environment, validated once at
 * start-up.  A bad value gets one message on stderr and the default: a hint
 * layer must never stop a program.
 */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"

struct fs_config fs_cfg;

static void complain(const char *name, const char *value, const char *expected)
{
    fprintf(stderr, "foresight: %s=%s is not %s; using the default\n", name, value, expected);
}

/*
 * Two workers, but never more than the CPUs the process may use minus one (at least
 * one): the workers' madvise calls do the reclaim a fault would do, in kernel time, and
 * on two CPUs a second worker took that time from the program.  Measured on the NAS
 * suite, 192 MiB under a 64 MiB cap, 2 CPUs: one worker made FT 8.8 s against 11.5 s,
 * MG 12.4 against 14.2-14.8, LU 6.9 against 8.0, and none slower beyond noise.
 */
static unsigned long default_workers(void)
{
    cpu_set_t set;
    long cpus = sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set)
                                                            : sysconf(_SC_NPROCESSORS_ONLN);
    if (cpus <= 2)
        return 1;
    return cpus - 1 < 2 ? (unsigned long)(cpus - 1) : 2;
}

/* A size with an optional K/M/G suffix (powers of 1024); 0 on error. */
static uint64_t parse_size(const char *s)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || end == s || *s == '-')
        return 0;
    unsigned shift = 0;
    switch (*end) {
    case 'k': case 'K': shift = 10; end++; break;
    case 'm': case 'M': shift = 20; end++; break;
    case 'g': case 'G': shift = 30; end++; break;
    case 't': case 'T': shift = 40; end++; break;
    default: break;
    }
    if (*end == 'i' || *end == 'I')
        end++;
    if (*end == 'b' || *end == 'B')
        end++;
    if (*end != 0 || v > (UINT64_MAX >> shift))
        return 0;
    return (uint64_t)v << shift;
}

static unsigned long env_ulong(const char *name, unsigned long lo, unsigned long hi,
                               unsigned long dflt)
{
    const char *s = getenv(name);
    if (s == NULL || *s == 0)
        return dflt;
    char *end;
    errno = 0;
    unsigned long v = strtoul(s, &end, 10);
    if (errno || end == s || *end != 0 || *s == '-' || v < lo || v > hi) {
        char expected[64];
        snprintf(expected, sizeof expected, "a whole number in %lu..%lu", lo, hi);
        complain(name, s, expected);
        return dflt;
    }
    return v;
}

static int env_choice(const char *name, const char *const *names, int n, int dflt)
{
    const char *s = getenv(name);
    if (s == NULL || *s == 0)
        return dflt;
    for (int i = 0; i < n; i++)
        if (strcmp(s, names[i]) == 0)
            return i;
    char expected[128] = "one of";
    for (int i = 0; i < n; i++) {
        strncat(expected, i ? ", " : " ", sizeof expected - strlen(expected) - 1);
        strncat(expected, names[i], sizeof expected - strlen(expected) - 1);
    }
    complain(name, s, expected);
    return dflt;
}

static const char *const method_names[] = {"willneed", "populate", "both"};
static const char *const release_names[] = {"auto", "cold", "pageout", "off", "adaptive"};
static const char *const inline_names[] = {"anon", "all", "none"};

const char *fs_method_name(enum fs_method m)
{
    return method_names[m];
}

const char *fs_release_name(enum fs_release_mode m)
{
    return release_names[m];
}

const char *fs_inline_name(enum fs_inline m)
{
    return inline_names[m];
}

void fs_config_load(void)
{
    memset(&fs_cfg, 0, sizeof fs_cfg);
    fs_cfg.filter = true;
    /* Tracing is a measurement, kept even when hints are disabled (the baseline run). */
    const char *tr = getenv("FORESIGHT_TRACE");
    if (tr != NULL && *tr != 0) {
        if (strlen(tr) < sizeof fs_cfg.trace_path)
            strcpy(fs_cfg.trace_path, tr);
        else
            fprintf(stderr, "foresight: FORESIGHT_TRACE is longer than %zu bytes; not tracing\n",
                    sizeof fs_cfg.trace_path - 1);
    }
    const char *nbd = getenv("FORESIGHT_NBD"), *nbd_file = getenv("FORESIGHT_NBD_FILE");
    if (nbd != NULL && *nbd != 0) {
        if (strlen(nbd) < sizeof fs_cfg.nbd_uri &&
            (nbd_file == NULL || strlen(nbd_file) < sizeof fs_cfg.nbd_file)) {
            strcpy(fs_cfg.nbd_uri, nbd);
            strcpy(fs_cfg.nbd_file, nbd_file ? nbd_file : "");
        } else {
            fprintf(stderr, "foresight: FORESIGHT_NBD or FORESIGHT_NBD_FILE is longer than "
                    "%zu bytes; prefetching locally\n", sizeof fs_cfg.nbd_uri - 1);
        }
    }
    /* Page-coloring maps are a measurement for the cache simulator: kept when disabled. */
    static const char *const color_modes[] = {"off", "sim", "real"};
    fs_cfg.color = env_choice("FORESIGHT_COLOR", color_modes, 3, 0);
    const char *cmap = getenv("FORESIGHT_COLOR_MAP");
    if (fs_cfg.color && cmap != NULL && *cmap != 0 && strlen(cmap) < sizeof fs_cfg.color_map)
        strcpy(fs_cfg.color_map, cmap);
    else if (fs_cfg.color == 1) { /* sim is nothing but its map */
        if (cmap == NULL || *cmap == 0)
            fprintf(stderr, "foresight: FORESIGHT_COLOR=sim needs FORESIGHT_COLOR_MAP, the "
                    "file it writes the map to; page coloring is off\n");
        else
            fprintf(stderr, "foresight: FORESIGHT_COLOR_MAP is longer than %zu bytes; page "
                    "coloring is off\n", sizeof fs_cfg.color_map - 1);
        fs_cfg.color = 0;
    }
    const char *ccache = getenv("FORESIGHT_COLOR_CACHE");
    if (fs_cfg.color && ccache != NULL && *ccache != 0) {
        char buf[64];
        const char *comma = strchr(ccache, ',');
        size_t n = comma ? (size_t)(comma - ccache) : strlen(ccache);
        char *end = NULL;
        unsigned long assoc = comma ? strtoul(comma + 1, &end, 10) : 1;
        uint64_t size = n < sizeof buf ? (memcpy(buf, ccache, n), buf[n] = 0, parse_size(buf)) : 0;
        if (size == 0 || (size & (size - 1)) || assoc == 0 || assoc > 1024 ||
            (comma && (end == comma + 1 || *end != 0)))
            complain("FORESIGHT_COLOR_CACHE", ccache, "SIZE,ASSOC, e.g. 1M,1 (a power of two)");
        else {
            fs_cfg.color_cache = size;
            fs_cfg.color_assoc = (unsigned)assoc;
        }
    }
    const char *d = getenv("FORESIGHT_DISABLE");
    if (d != NULL && *d != 0) {
        if (strcmp(d, "1") == 0) {
            fs_cfg.disabled = true;
            return;
        }
        if (strcmp(d, "0") != 0)
            complain("FORESIGHT_DISABLE", d, "0 or 1");
    }
    /* A file only when the value looks like one: FORESIGHT_STATS=2 meaning "more" must
     * not leave a file named 2 in the working directory. */
    const char *st = getenv("FORESIGHT_STATS");
    if (st != NULL && *st != 0 && strcmp(st, "0") != 0) {
        size_t len = strlen(st);
        if (strcmp(st, "1") == 0 || strcmp(st, "stderr") == 0) {
            fs_cfg.stats = 1;
        } else if (strchr(st, '/') == NULL &&
                   (len <= 5 || strcmp(st + len - 5, ".json") != 0)) {
            complain("FORESIGHT_STATS", st,
                     "0, 1, stderr, or a file path (containing '/' or ending in .json)");
        } else if (len < sizeof fs_cfg.stats_path) {
            fs_cfg.stats = 2;
            strcpy(fs_cfg.stats_path, st);
        } else {
            complain("FORESIGHT_STATS", "(too long)", "a path shorter than 4096 bytes");
        }
    }
    const char *mem = getenv("FORESIGHT_MEM");
    if (mem != NULL && *mem != 0) {
        fs_cfg.mem_override = parse_size(mem);
        if (fs_cfg.mem_override < (1u << 20)) {
            complain("FORESIGHT_MEM", mem, "a size of at least 1M (e.g. 256M)");
            fs_cfg.mem_override = 0;
        }
    }
    fs_cfg.workers = (int)env_ulong("FORESIGHT_WORKERS", 1, 64, default_workers());
    fs_cfg.queue_slots = env_ulong("FORESIGHT_QUEUE", 16, 1u << 20, 1024);
    fs_cfg.method = (enum fs_method)env_choice("FORESIGHT_METHOD", method_names, 3, FS_WILLNEED);
    fs_cfg.release = (enum fs_release_mode)env_choice("FORESIGHT_RELEASE", release_names, 5,
                                                      FS_REL_ADAPTIVE);
    /* MADV_POPULATE_READ waits for the reads: only the workers may make it. */
    fs_cfg.issue_inline = fs_cfg.method != FS_WILLNEED
                              ? FS_INLINE_NONE
                              : (enum fs_inline)env_choice("FORESIGHT_INLINE", inline_names, 3,
                                                           FS_INLINE_NONE);
    static const char *const off_on[] = {"0", "1"};
    fs_cfg.filter = env_choice("FORESIGHT_FILTER", off_on, 2, 1) == 1;
    fs_cfg.random_advice = env_choice("FORESIGHT_RANDOM", off_on, 2, 1);
    static const char *const file_streams[] = {"kernel", "hint"};
    fs_cfg.file_streams_hinted = env_choice("FORESIGHT_FILE_STREAMS", file_streams, 2, 0) == 1;
    static const char *const incore[] = {"skip", "hint"};
    fs_cfg.incore_hinted = env_choice("FORESIGHT_INCORE", incore, 2, 0) == 1;
    static const char *const pin[] = {"0", "1", "always"};
    fs_cfg.pin = env_choice("FORESIGHT_PIN", pin, 3, 1);
    fs_cfg.verify_period = env_ulong("FORESIGHT_VERIFY_PERIOD", 1, 1ul << 30, 1024);
    fs_cfg.chunk_bytes = 128u << 10;
    const char *chunk = getenv("FORESIGHT_CHUNK");
    if (chunk != NULL && *chunk != 0) {
        uint64_t c = parse_size(chunk);
        if (c < FS_PAGE || c > (1u << 30) || c % FS_PAGE != 0)
            complain("FORESIGHT_CHUNK", chunk, "a multiple of 4K up to 1G");
        else
            fs_cfg.chunk_bytes = c;
    }
    fs_cfg.pt = env_choice("FORESIGHT_PT", off_on, 2, 1) == 1;
    fs_cfg.pt_random = env_choice("FORESIGHT_PT_RANDOM", off_on, 2, 1) == 1;
    const char *ptf = getenv("FORESIGHT_PT_FILES");
    if (ptf != NULL && *ptf != 0) {
        if (strlen(ptf) < sizeof fs_cfg.pt_files)
            strcpy(fs_cfg.pt_files, ptf);
        else
            complain("FORESIGHT_PT_FILES", "(too long)", "a pattern shorter than 1024 bytes");
    }
    fs_cfg.pt_queue = (unsigned)env_ulong("FORESIGHT_PT_QUEUE", 1, FS_PT_QUEUE_MAX,
                                          FS_PT_QUEUE_MAX);
    fs_cfg.pt_ahead = 32u << 20;
    const char *pta = getenv("FORESIGHT_PT_AHEAD");
    if (pta != NULL && *pta != 0) {
        uint64_t a = parse_size(pta);
        if (a < FS_PAGE || a > (1ull << 34))
            complain("FORESIGHT_PT_AHEAD", pta, "a size from 4K to 16G");
        else
            fs_cfg.pt_ahead = a;
    }
    static const char *const scheds[] = {"window", "eq1"};
    fs_cfg.pt_eq1 = env_choice("FORESIGHT_PT_SCHED", scheds, 2, 0) == 1;
    static const char *const issues[] = {"fadvise", "uring"};
    fs_cfg.pt_uring = env_choice("FORESIGHT_PT_ISSUE", issues, 2, 0) == 1;
    fs_cfg.pt_slack_ns = 1000u * env_ulong("FORESIGHT_PT_SLACK", 0, 10000000, 5000);
    fs_cfg.pt_drain = env_choice("FORESIGHT_PT_DRAIN", off_on, 2, 0) == 1;
    fs_cfg.lookahead_bytes = 4u << 20;
    const char *ahead = getenv("FORESIGHT_LOOKAHEAD");
    if (ahead != NULL && strcmp(ahead, "measured") == 0) {
        fs_cfg.lookahead_measured = true;
    } else if (ahead != NULL && *ahead != 0) {
        uint64_t a = parse_size(ahead);
        if (a < FS_PAGE || a > (1ull << 34))
            complain("FORESIGHT_LOOKAHEAD", ahead, "a size from 4K to 16G, or measured");
        else {
            fs_cfg.lookahead_bytes = (size_t)a;
            fs_cfg.lookahead_set = true;
        }
    }
}
