/*
 * main.c — `foresight sim`: the command line of the shared I/O-node cache simulator.
 * Bad input is one line on stderr and exit status 2, with nothing written.
 */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sim.h"

/* The device models.  `vm` is this project's VM (70 µs random 4 KiB reads, 0.8 GB/s
 * sequential; a Unix-socket link); `paper` is our labelled reading of paper 3's cluster
 * (its disk at 10 ms per access plus 25 MB/s, a 100 Mb/s network): the paper gives no
 * latencies, so these are assumptions. */
static const struct device DEVICES[] = {
    {"vm", 70000, 0.8e9, 10000, 4e9, 2000},
    {"paper", 10000000, 25e6, 100000, 12.5e6, 10000},
};

static const char USAGE[] =
    "usage: foresight sim --trace FILE... [--policy none|plain|obl|coarse|fine|optimal]\n"
    "         [--prefetcher hints|obl] [--replacement lru|lru-aging|min] [--cache SIZE]\n"
    "         [--block SIZE] [--ionodes N] [--per-node-cache] [--epochs N] [--threshold T]\n"
    "         [--k K] [--metric ratio|share] [--no-throttle] [--no-pin] [--shadows N]\n"
    "         [--client-cache SIZE] [--epoch-log FILE]\n"
    "         [--disk vm|paper] [--disk-delay Nus|Nms] [--serial] [--json OUT] [--speed]\n"
    "\n"
    "Simulates clients sharing I/O-node caches on a trace (lines `CLIENT OP BLOCK [THINK_US]`,\n"
    "OP R, W, P or B) and writes the results as JSON (to OUT, else to stdout).\n"
    "  --policy      none ignores P lines; plain issues every one; obl = --prefetcher obl\n"
    "                with plain; coarse and fine throttle and pin (paper 3, Section V);\n"
    "                optimal drops exactly the harmful prefetches (default fine)\n"
    "  --prefetcher  hints: the trace's P lines; obl: the next block of the same disk on\n"
    "                every demand fetch (default hints)\n"
    "  --replacement lru, lru-aging (Multi-Queue) or min (Belady's: the block next used\n"
    "                last goes, the future taken from a first run) (default lru-aging)\n"
    "  --cache       the cache over all I/O nodes, or each node's with --per-node-cache\n"
    "                (default 64M)\n"
    "  --block       block size, a power of two (default 64K)\n"
    "  --client-cache  each client's own LRU cache in front of the I/O nodes: its read\n"
    "                hits and hints for blocks in it go no further (default 0: none)\n"
    "  --ionodes     I/O nodes, blocks striped over them one by one (default 1)\n"
    "  --epochs      the trace's requests in this many equal epochs (default 100)\n"
    "  --threshold   in (0, 1] (default 0.35 coarse, 0.20 fine)\n"
    "  --k           epochs a decision holds (default 3)\n"
    "  --metric      throttling by harmful/issued (ratio: coarse k's, fine k's toward l) or\n"
    "                by share of all harm (share)\n"
    "  --no-throttle, --no-pin   switch either mechanism off\n"
    "  --shadows     evictions remembered per node to find harmful prefetches (default:\n"
    "                the node's cache blocks)\n"
    "  --disk        vm (this machine) or paper (10 ms + 25 MB/s, 100 Mb/s) (default vm)\n"
    "  --disk-delay  the disk serves one request per delay, whatever its block (no seek,\n"
    "                rate block/delay): the I/O-node server's iocache-disk-delay\n"
    "  --serial      requests in the order of the trace's lines (as one server receives\n"
    "                them), not interleaved by simulated time; times still modelled\n"
    "  --epoch-log   each node's harm per epoch as JSON lines: harmful prefetches and\n"
    "                harm-misses by [prefetching, affected] client (Figure 5)\n"
    "  --speed       print the simulation's speed on stderr\n";

static int usage_error(const char *fmt, const char *arg)
{
    fprintf(stderr, "foresight sim: error: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, " (see `foresight sim --help`)\n");
    return 2;
}

static bool parse_uint(const char *s, unsigned lo, unsigned hi, unsigned *out)
{
    char *end;
    errno = 0;
    if (!*s || *s == '-')
        return false;
    unsigned long v = strtoul(s, &end, 10);
    if (errno || *end || v < lo || v > hi)
        return false;
    *out = (unsigned)v;
    return true;
}

static int choose(const char *arg, const char *const *names, unsigned count, const char *what,
                  const char *valid, unsigned *out)
{
    for (unsigned i = 0; i < count; i++)
        if (!strcmp(arg, names[i])) {
            *out = i;
            return 0;
        }
    fprintf(stderr, "foresight sim: error: unknown %s '%s' (valid: %s)\n", what, arg, valid);
    return 2;
}

struct output {
    const struct trace *t;
    const struct config *cfg;
    const struct result *r;
    char *const *paths;
    unsigned npaths;
};

static void output_json(FILE *f, const void *arg)
{
    const struct output *o = arg;
    json_write(f, o->t, o->cfg, o->r, o->paths, o->npaths);
}

/* The result to PATH (stdout if NULL), written whole (cli_write_file). */
static int write_json(const char *path, const struct trace *t, const struct config *cfg,
                      const struct result *r, char *const *paths, unsigned npaths)
{
    struct output o = {t, cfg, r, paths, npaths};
    return cli_write_file(path, "foresight sim", output_json, &o);
}

int main(int argc, char **argv)
{
    static const struct option opts[] = {
        {"trace", required_argument, 0, 't'},   {"policy", required_argument, 0, 'p'},
        {"prefetcher", required_argument, 0, 'f'}, {"replacement", required_argument, 0, 'r'},
        {"cache", required_argument, 0, 'c'},   {"block", required_argument, 0, 'b'},
        {"ionodes", required_argument, 0, 'n'}, {"per-node-cache", no_argument, 0, 'N'},
        {"epochs", required_argument, 0, 'e'},  {"threshold", required_argument, 0, 'T'},
        {"k", required_argument, 0, 'k'},       {"metric", required_argument, 0, 'm'},
        {"no-throttle", no_argument, 0, 'x'},   {"no-pin", no_argument, 0, 'y'},
        {"shadows", required_argument, 0, 's'}, {"disk", required_argument, 0, 'd'},
        {"json", required_argument, 0, 'j'},    {"speed", no_argument, 0, 'S'},
        {"serial", no_argument, 0, 'O'},      {"client-cache", required_argument, 0, 'C'},
        {"epoch-log", required_argument, 0, 'L'}, {"disk-delay", required_argument, 0, 'D'},
        {"help", no_argument, 0, 'h'},          {0, 0, 0, 0},
    };
    static const char *const POLICIES[] = {"none", "plain", "coarse", "fine", "optimal", "obl"};
    static const char *const PREFETCHERS[] = {"hints", "obl"};
    static const char *const REPLACEMENTS[] = {"lru", "lru-aging", "min"};
    static const char *const METRICS[] = {"ratio", "share"};
    static const char *const DISKS[] = {"vm", "paper"};
    struct config cfg = {
        .policy = POL_FINE, .prefetcher = PF_HINTS, .replacement = IOCACHE_LRU_AGING,
        .cache_bytes = 64ull << 20, .block_bytes = 64ull << 10, .ionodes = 1, .epochs = 100,
        .k = 3, .metric = IOCACHE_METRIC_RATIO, .throttle = true, .pin = true,
        .device = DEVICES[0],
    };
    char **paths = calloc((size_t)argc + 1, sizeof *paths);
    unsigned npaths = 0, v;
    const char *json = NULL, *epoch_log = NULL;
    bool speed = false, prefetcher_set = false, json_written = false;
    uint64_t disk_delay_ns = 0;   /* --disk-delay: the device serves a request per delay */
    int rc = 0, o;
    opterr = 0;
    if (!paths)
        return 2;
    while (!rc && (o = getopt_long(argc, argv, ":", opts, NULL)) != -1) {
        switch (o) {
        case 't': paths[npaths++] = optarg; break;
        case 'p':
            rc = choose(optarg, POLICIES, 6, "policy", "none, plain, obl, coarse, fine, optimal",
                        &v);
            if (!rc && v == 5) {
                cfg.policy = POL_PLAIN;
                cfg.prefetcher = PF_OBL;
                prefetcher_set = true;
            } else if (!rc) {
                cfg.policy = (enum policy)v;
            }
            break;
        case 'f':
            if (!(rc = choose(optarg, PREFETCHERS, 2, "prefetcher", "hints, obl", &v)))
                cfg.prefetcher = (enum prefetcher)v;
            prefetcher_set = true;
            break;
        case 'r':
            if (!(rc = choose(optarg, REPLACEMENTS, 3, "replacement", "lru, lru-aging, min",
                              &v)))
                cfg.replacement = v == 0 ? IOCACHE_LRU : v == 1 ? IOCACHE_LRU_AGING : IOCACHE_MIN;
            break;
        case 'c':
            if (!cli_parse_size(optarg, &cfg.cache_bytes) || cfg.cache_bytes == 0)
                rc = usage_error("--cache takes a size such as 64M, not '%s'", optarg);
            break;
        case 'b':
            if (!cli_parse_size(optarg, &cfg.block_bytes) || cfg.block_bytes == 0 ||
                (cfg.block_bytes & (cfg.block_bytes - 1)) || cfg.block_bytes > (1ull << 30))
                rc = usage_error("--block takes a power of two up to 1G such as 64K, not '%s'",
                                 optarg);
            break;
        case 'n':
            if (!parse_uint(optarg, 1, 1024, &cfg.ionodes))
                rc = usage_error("--ionodes takes 1 to 1024, not '%s'", optarg);
            break;
        case 'N': cfg.per_node_cache = true; break;
        case 'e':
            if (!parse_uint(optarg, 1, 1000000, &cfg.epochs))
                rc = usage_error("--epochs takes 1 to 1000000, not '%s'", optarg);
            break;
        case 'T': {
            char *end = NULL;
            errno = 0;
            cfg.threshold = strtod(optarg, &end);
            if (errno || *end || !*optarg || !(cfg.threshold > 0 && cfg.threshold <= 1))
                rc = usage_error("--threshold takes a number in (0, 1], not '%s'", optarg);
            break;
        }
        case 'k':
            if (!parse_uint(optarg, 1, 1000000, &cfg.k))
                rc = usage_error("--k takes an integer from 1 to 1000000, not '%s'", optarg);
            break;
        case 'm':
            if (!(rc = choose(optarg, METRICS, 2, "metric", "ratio, share", &v)))
                cfg.metric = v == 0 ? IOCACHE_METRIC_RATIO : IOCACHE_METRIC_SHARE;
            break;
        case 'x': cfg.throttle = false; break;
        case 'y': cfg.pin = false; break;
        case 's':
            if (!cli_parse_size(optarg, &cfg.shadows) || cfg.shadows == 0 ||
                cfg.shadows >= UINT32_MAX)
                rc = usage_error("--shadows takes 1 to 2^32-2, not '%s'", optarg);
            break;
        case 'd':
            if (!(rc = choose(optarg, DISKS, 2, "disk model", "vm, paper", &v)))
                cfg.device = DEVICES[v];
            break;
        case 'D': {
            size_t n = strlen(optarg);
            uint64_t unit = n > 2 && !strcmp(optarg + n - 2, "ms") ? 1000000u
                            : n > 2 && !strcmp(optarg + n - 2, "us") ? 1000u : 0;
            char *end = NULL;
            errno = 0;
            unsigned long long d = unit && isdigit((unsigned char)optarg[0])
                                       ? strtoull(optarg, &end, 10) : 0;
            if (!unit || errno || end != optarg + n - 2 || d == 0 || d > 10000000000ull / unit)
                rc = usage_error("--disk-delay takes Nus or Nms (N from 1, at most 10 s), "
                                 "not '%s'", optarg);
            else
                disk_delay_ns = d * unit;
            break;
        }
        case 'j': json = optarg; break;
        case 'L': epoch_log = optarg; break;
        case 'S': speed = true; break;
        case 'O': cfg.serial = true; break;
        case 'C':
            if (!cli_parse_size(optarg, &cfg.client_cache_bytes))
                rc = usage_error("--client-cache takes a size such as 16M, not '%s'", optarg);
            break;
        case 'h': fputs(USAGE, stdout); free(paths); return 0;
        case ':': rc = usage_error("%s needs a value", argv[optind - 1]); break;
        default: rc = usage_error("unknown option '%s'", argv[optind - 1]); break;
        }
    }
    for (int i = optind; !rc && i < argc; i++)   /* --trace A B C */
        paths[npaths++] = argv[i];
    if (!rc && npaths == 0)
        rc = usage_error("%s", "no trace given (--trace FILE)");
    if (!rc && cfg.prefetcher == PF_OBL && cfg.policy == POL_NONE && prefetcher_set)
        rc = usage_error("%s", "--prefetcher obl with --policy none prefetches nothing");
    if (disk_delay_ns) {
        cfg.device.seek_ns = 0;
        cfg.device.disk_rate = (double)cfg.block_bytes * 1e9 / (double)disk_delay_ns;
    }
    uint64_t blocks = cfg.cache_bytes / cfg.block_bytes;
    if (!cfg.per_node_cache)
        blocks /= cfg.ionodes;
    if (!rc && blocks == 0)
        rc = usage_error("%s", "--cache is less than one block per I/O node");
    if (!rc && blocks >= (1ull << 31))
        rc = usage_error("%s", "--cache is 2^31 blocks or more per I/O node");
    if (!rc && cfg.client_cache_bytes / cfg.block_bytes >= (1ull << 31))
        rc = usage_error("%s", "--client-cache is 2^31 blocks or more");
    if (rc) {
        free(paths);
        return rc;
    }
    struct trace *t = malloc(sizeof *t);
    if (!t || (rc = trace_read(t, paths, npaths)) != 0) {
        free(t);
        free(paths);
        return 2;
    }
    struct result r;
    char *log_tmp = NULL;
    struct stat log_st;
    if (epoch_log && stat(epoch_log, &log_st) == 0 && !S_ISREG(log_st.st_mode)) {
        fprintf(stderr, "foresight sim: error: --epoch-log %s is not a regular file\n",
                epoch_log);
        trace_free(t);
        free(t);
        free(paths);
        return 2;
    }
    if (epoch_log) {   /* written beside its place, renamed there when all went well */
        size_t n = strlen(epoch_log) + 16;
        int fd = -1;
        if ((log_tmp = malloc(n)) != NULL) {
            snprintf(log_tmp, n, "%s.tmp.XXXXXX", epoch_log);
            fd = mkstemp(log_tmp);
        }
        if (fd < 0 || !(cfg.epoch_log = fdopen(fd, "w"))) {
            fprintf(stderr, "foresight sim: error: cannot write %s: %s\n", epoch_log,
                    strerror(errno));
            if (fd >= 0) {
                close(fd);
                unlink(log_tmp);
            }
            free(log_tmp);
            trace_free(t);
            free(t);
            free(paths);
            return 2;
        }
    }
    int err = sim_run(t, &cfg, &r);
    if (err) {
        fprintf(stderr, "foresight sim: error: %s\n", strerror(err));
        rc = 2;
    } else {
        rc = write_json(json, t, &cfg, &r, paths, npaths);
        json_written = rc == 0;
        if (speed)
            fprintf(stderr, "foresight sim: %llu requests in %.3f s of CPU: %.2f M/s\n",
                    (unsigned long long)t->requests, r.seconds,
                    r.seconds > 0 ? (double)t->requests / r.seconds * 1e-6 : 0.0);
    }
    if (cfg.epoch_log) {
        bool bad = ferror(cfg.epoch_log) | fclose(cfg.epoch_log);
        if (!rc && (bad || rename(log_tmp, epoch_log))) {
            fprintf(stderr, "foresight sim: error: cannot write %s\n", epoch_log);
            rc = 2;
        }
        if (rc) {
            unlink(log_tmp);
            if (json && json_written)
                unlink(json);   /* no half of the output */
        }
        free(log_tmp);
    }
    result_free(&r);
    trace_free(t);
    free(t);
    free(paths);
    return rc;
}
