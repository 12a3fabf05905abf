/*
 * main.c — `foresight cachesim` (installed as libexec/foresight/foresight-cachesim): the
 * command line of the page-coloring cache simulator.  It replays a trace on a machine
 * named by options or a preset (paper 4's SGI base configuration, Section 3.3, or a
 * Digital AlphaServer 8400), with hints planned from a program's color map for the
 * compiler-directed policies, and writes the counters as JSON.  Bad input is one line
 * on stderr and exit status 2, with nothing written.
 */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "color_plan.h"
#include "cs_cli.h"

static const char USAGE[] =
    "usage: foresight cachesim --cpus N (--preset sgi|alpha8400 | --l2 SIZE,ASSOC,LINE\n"
    "         --page SIZE) [--policy pc|bh|random|cdpc|cdpc-bh] [--seed S] [--map FILE]\n"
    "         [--l1 SIZE,ASSOC] [--time] [--mhz N] [--l2-cycles N] [--mem-ns N]\n"
    "         [--remote-ns N] [--bus-mbs N] [--prefetch LINES]\n"
    "         (--trace FILE | --model STEPS) [--pages] [--json OUT]\n"
    "\n"
    "Replays a multiprocessor's data accesses (a trace: binary FSCTRC1, or text lines\n"
    "`CPU R|W ADDR [SIZE]` and `B`) on one physically indexed L2 per CPU kept coherent\n"
    "(MESI), and writes hits, misses (cold, capacity, conflict, true and false sharing),\n"
    "writebacks, upgrades, invalidations and bus bytes as JSON (to OUT, else stdout);\n"
    "its last fields, seconds and accesses_per_second, are the replay's CPU time (trace\n"
    "reading included) and rate.\n"
    "  --cpus     1..64\n"
    "  --l2       each CPU's cache: bytes, ways (or `full`), line bytes, e.g. 1M,1,128\n"
    "  --page     page bytes, e.g. 4K (sizes take K, M, G; all powers of two)\n"
    "  --preset   sgi: --l2 1M,1,128 --page 4K (the paper's base machine);\n"
    "             alpha8400: --l2 4M,1,64 --page 8K; options given override it\n"
    "  --policy   the page mapping at first touch: pc (page coloring, IRIX: vpage mod\n"
    "             colors), bh (bin hopping, Digital UNIX), random (--seed, default 1),\n"
    "             cdpc, cdpc-bh (the color map's hints, else pc or bh) (default pc)\n"
    "  --map      the program's color map (foresight-color-map 1): cdpc's hints are\n"
    "             planned from it for this machine's page size and colors\n"
    "  --model    no trace: the accesses of the map's loops (model.c), their partitions\n"
    "             dealt over --cpus threads; one step warms the caches, STEPS more are\n"
    "             measured\n"
    "  --pages    also list every page (virtual page, frame, and the CPUs that touched\n"
    "             it in the measured part: a bit mask) as `pages` in the JSON\n"
    "  --l1       an on-chip L1 data cache in front of each L2: bytes, ways (the L2's\n"
    "             line, virtually indexed, inclusive)\n"
    "  --time     model time (stalls per miss class, bus occupancy, phases between\n"
    "             barriers) with the preset's L1 and parameters: sgi 32K,2 L1, 400 MHz,\n"
    "             10-cycle L2 hit, 500 ns from memory, 750 ns from another cache, bus\n"
    "             1200 MB/s (the paper's, but the L2 hit's, which it does not give);\n"
    "             alpha8400 8K,1 L1, 350 MHz, the rest as sgi's (its memory system is not\n"
    "             in the paper); without a preset, sgi's\n"
    "  --mhz, --l2-cycles, --mem-ns, --remote-ns, --bus-mbs\n"
    "             set one of those (each implies --time)\n"
    "  --prefetch with --model: software prefetches into the L2, LINES lines ahead of\n"
    "             each reference at each new line it reaches (at most 4 in flight, those\n"
    "             to untouched pages dropped: the R10000's)\n";

static int usage_error(const char *fmt, const char *arg)
{
    fprintf(stderr, CS_PROG ": error: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, " (see `" CS_PROG " --help`)\n");
    return 2;
}

/* --l2 SIZE,ASSOC,LINE; ASSOC `full` is stored as 0 until the line is known. */
static bool parse_l2(const char *arg, uint64_t *bytes, uint32_t *assoc, uint64_t *line)
{
    char buf[128];
    if (strlen(arg) >= sizeof buf)
        return false;
    strcpy(buf, arg);
    char *a = strchr(buf, ','), *l = a ? strchr(a + 1, ',') : NULL;
    if (!a || !l || strchr(l + 1, ','))
        return false;
    *a++ = '\0';
    *l++ = '\0';
    uint64_t ways;
    if (!strcmp(a, "full"))
        ways = 0;
    else if (!cli_parse_size(a, &ways) || ways == 0 || ways > UINT32_MAX)
        return false;
    *assoc = (uint32_t)ways;
    return cli_parse_size(buf, bytes) && cli_parse_size(l, line);
}

static const char *const POLICIES[] = {"pc", "bh", "random", "cdpc", "cdpc-bh"};

struct result {
    const struct cs_run_info *run;
    const struct cs_stats *st;
};

static void result_json(FILE *f, const void *arg)
{
    const struct result *r = arg;
    cs_json_write(f, r->run, r->st);
}

/* The result to PATH (stdout if NULL), written whole (cli_write_file). */
static int write_json(const char *path, const struct cs_run_info *run,
                      const struct cs_stats *st)
{
    struct result r = {run, st};
    return cli_write_file(path, CS_PROG, result_json, &r);
}

static double cpu_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Every record of T (read from PATH) into SIM; 0, or 2 after saying what went wrong. */
static int replay(struct cs_sim *sim, struct cs_trace *t, const char *path)
{
    enum { BATCH = 4096 };
    static struct cs_record batch[BATCH];
    unsigned long long done = 0;
    long n;
    while ((n = cs_trace_read(t, batch, BATCH)) > 0)
        for (long i = 0; i < n; i++, done++) {
            const struct cs_record *r = &batch[i];
            if (r->op == CS_BARRIER) {
                cs_barrier(sim);
            } else if (cs_access(sim, r->cpu, r->vaddr, r->size, r->op == CS_WRITE)) {
                fprintf(stderr, CS_PROG ": error: %s: stopped after %llu records: %s\n", path,
                        done, errno == ERANGE ? "it touches more lines than the simulator "
                                                "can number (2^32 - 2)" : strerror(errno));
                return 2;
            }
        }
    return n < 0 ? 2 : 0;
}

int main(int argc, char **argv)
{
    static const struct option opts[] = {
        {"cpus", required_argument, 0, 'c'},   {"l2", required_argument, 0, 'l'},
        {"page", required_argument, 0, 'p'},   {"policy", required_argument, 0, 'P'},
        {"seed", required_argument, 0, 's'},   {"map", required_argument, 0, 'm'},
        {"preset", required_argument, 0, 'r'}, {"trace", required_argument, 0, 't'},
        {"json", required_argument, 0, 'j'},   {"help", no_argument, 0, 'h'},
        {"model", required_argument, 0, 'M'},  {"pages", no_argument, 0, 'g'},
        {"l1", required_argument, 0, '1'},     {"time", no_argument, 0, 'T'},
        {"mhz", required_argument, 0, 'z'},    {"l2-cycles", required_argument, 0, 'y'},
        {"mem-ns", required_argument, 0, 'e'}, {"remote-ns", required_argument, 0, 'o'},
        {"bus-mbs", required_argument, 0, 'b'}, {"prefetch", required_argument, 0, 'F'},
        {0, 0, 0, 0},
    };
    /* --time's values as given: UINT32_MAX where the preset decides */
    uint32_t tv[5] = {UINT32_MAX, UINT32_MAX, UINT32_MAX, UINT32_MAX, UINT32_MAX};
    bool timed = false, have_l1 = false;
    unsigned prefetch = 0;
    uint64_t l1 = 0;
    uint32_t l1_assoc = 0;
    struct cs_config cfg = {.policy = CS_PC, .seed = 1};
    uint64_t l2 = 0, line = 0, page = 0;
    uint32_t assoc = 1;
    bool have_l2 = false, have_page = false, have_cpus = false;
    const char *trace = NULL, *json = NULL, *map = NULL, *preset = NULL;
    bool pages = false;
    unsigned steps = 0;
    opterr = 0;
    int ch;
    while ((ch = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        switch (ch) {
        case 'c': {
            char *end;
            errno = 0;
            unsigned long v = strtoul(optarg, &end, 10);
            if (errno || *end || *optarg < '0' || *optarg > '9' || v < 1 || v > CS_MAX_CPUS)
                return usage_error("--cpus '%s': must be 1..64", optarg);
            cfg.cpus = (unsigned)v;
            have_cpus = true;
            break;
        }
        case 'l':
            if (!parse_l2(optarg, &l2, &assoc, &line))
                return usage_error("--l2 '%s': expected SIZE,ASSOC,LINE (e.g. 1M,1,128)",
                                   optarg);
            have_l2 = true;
            break;
        case 'p':
            if (!cli_parse_size(optarg, &page))
                return usage_error("--page '%s': expected a size (e.g. 4K)", optarg);
            have_page = true;
            break;
        case 'P': {
            unsigned i = 0;
            while (i < 5 && strcmp(optarg, POLICIES[i]))
                i++;
            if (i == 5)
                return usage_error("unknown --policy '%s' (pc, bh, random, cdpc or cdpc-bh)",
                                   optarg);
            cfg.policy = (enum cs_policy)i;
            break;
        }
        case 's': {
            char *end;
            errno = 0;
            cfg.seed = strtoull(optarg, &end, 0);
            if (errno || !*optarg || *end || *optarg == '-')
                return usage_error("--seed '%s': expected an unsigned number", optarg);
            break;
        }
        case 'm':
            map = optarg;
            break;
        case 'r':
            if (strcmp(optarg, "sgi") && strcmp(optarg, "alpha8400"))
                return usage_error("unknown --preset '%s' (sgi or alpha8400)", optarg);
            preset = optarg;
            break;
        case 't':
            trace = optarg;
            break;
        case 'g':
            pages = true;
            break;
        case 'j':
            json = optarg;
            break;
        case 'M': {
            char *end;
            errno = 0;
            unsigned long v = strtoul(optarg, &end, 10);
            if (errno || *end || *optarg < '0' || *optarg > '9' || v < 1 || v > 1000000)
                return usage_error("--model '%s': steps must be 1..1000000", optarg);
            steps = (unsigned)v;
            break;
        }
        case '1': {
            char buf[64], *comma, *end;
            if (strlen(optarg) >= sizeof buf || !(comma = strchr(strcpy(buf, optarg), ',')))
                return usage_error("--l1 '%s': expected SIZE,ASSOC (e.g. 32K,2)", optarg);
            *comma = '\0';
            errno = 0;
            unsigned long ways = strtoul(comma + 1, &end, 10);
            if (!cli_parse_size(buf, &l1) || errno || *end || comma[1] < '0' || comma[1] > '9' ||
                ways == 0 || ways > UINT32_MAX)
                return usage_error("--l1 '%s': expected SIZE,ASSOC (e.g. 32K,2)", optarg);
            if (l1 == 0)
                return usage_error("--l1 '%s': a size of 0 (leave --l1 out for no L1)", optarg);
            l1_assoc = (uint32_t)ways;
            have_l1 = true;
            break;
        }
        case 'T':
            timed = true;
            break;
        case 'F': {
            char *end;
            errno = 0;
            unsigned long v = strtoul(optarg, &end, 10);
            if (errno || *end || *optarg < '0' || *optarg > '9' || v < 1 || v > 4096)
                return usage_error("--prefetch '%s': lines ahead, 1..4096", optarg);
            prefetch = (unsigned)v;
            break;
        }
        case 'z': case 'y': case 'e': case 'o': case 'b': {
            static const char *const names[5] = {"--mhz", "--l2-cycles", "--mem-ns",
                                                 "--remote-ns", "--bus-mbs"};
            static const unsigned long lo[5] = {1, 0, 0, 0, 1};
            static const unsigned long hi[5] = {1000000, 1000000, 100000000, 100000000,
                                                100000000};
            const int k = ch == 'z' ? 0 : ch == 'y' ? 1 : ch == 'e' ? 2 : ch == 'o' ? 3 : 4;
            char *end;
            errno = 0;
            unsigned long v = strtoul(optarg, &end, 10);
            if (errno || *end || *optarg < '0' || *optarg > '9' || v < lo[k] || v > hi[k]) {
                char what[160];
                snprintf(what, sizeof what, "%s '%%s': expected a whole number from %lu to %lu",
                         names[k], lo[k], hi[k]);
                return usage_error(what, optarg);
            }
            tv[k] = (uint32_t)v;
            timed = true;
            break;
        }
        case 'h':
            fputs(USAGE, stdout);
            return 0;
        default:
            return usage_error("unknown option or missing value: '%s'", argv[optind - 1]);
        }
    }
    if (optind < argc)
        return usage_error("unexpected argument '%s'", argv[optind]);
    if (preset && !strcmp(preset, "sgi")) {
        if (!have_l2)
            l2 = 1 << 20, assoc = 1, line = 128;
        if (!have_page)
            page = 4096;
    } else if (preset) {
        if (!have_l2)
            l2 = 4 << 20, assoc = 1, line = 64;
        if (!have_page)
            page = 8192;
    } else if (!have_l2 || !have_page) {
        return usage_error("%s", "the machine needs --l2 and --page, or --preset");
    }
    if (timed) { /* the preset's (above), sgi's without one; what was given wins */
        const bool alpha = preset && !strcmp(preset, "alpha8400");
        const uint32_t dflt[5] = {alpha ? 350 : 400, 10, 500, 750, 1200};
        for (int k = 0; k < 5; k++)
            if (tv[k] == UINT32_MAX)
                tv[k] = dflt[k];
        cfg.mhz = tv[0], cfg.l2_cycles = tv[1], cfg.mem_ns = tv[2], cfg.remote_ns = tv[3];
        cfg.bus_mbs = tv[4];
        if (!have_l1 && (alpha ? 8 << 10 : 32 << 10) >= line) /* (no L1 of under a line) */
            l1 = alpha ? 8 << 10 : 32 << 10, l1_assoc = alpha ? 1 : 2;
    }
    cfg.l1_bytes = l1;
    cfg.l1_assoc = l1_assoc;
    if (!have_cpus)
        return usage_error("%s", "--cpus N is required");
    if (!trace == !steps)
        return usage_error("%s", "give --trace FILE or --model STEPS (one of them)");
    if (steps && !map)
        return usage_error("%s", "--model needs --map FILE (the program's color map)");
    if (prefetch && !steps)
        return usage_error("%s", "--prefetch needs --model (a trace holds no prefetches)");
    if ((cfg.policy == CS_CDPC || cfg.policy == CS_CDPC_BH) && !map)
        return usage_error("--policy %s needs --map FILE (the program's color map)",
                           POLICIES[cfg.policy]);
    if (line > UINT32_MAX)
        return usage_error("--l2 line size of %s bytes: too large", "over 4G");
    cfg.l2_bytes = l2;
    cfg.line = (uint32_t)line;
    cfg.page = page;
    /* fully associative: one set of every line (cs_create judges the sizes) */
    cfg.assoc = assoc ? assoc : line && l2 / line <= UINT32_MAX ? (uint32_t)(l2 / line) : 1;

    char err[256];
    struct cs_sim *sim = cs_create(&cfg, err, sizeof err);
    if (!sim) {
        fprintf(stderr, CS_PROG ": error: %s\n", err);
        return 2;
    }
    struct cs_run_info run = {.cfg = &cfg, .policy = POLICIES[cfg.policy], .trace = trace,
                              .map = map, .model_steps = steps, .prefetch_lines = prefetch};
    int rc = 2;
    struct cs_trace *t = NULL;
    struct cs_map m = {0};
    if (map) {
        struct fs_color_run *runs = NULL;
        if (cs_map_read(map, &m))
            goto out;
        if (steps) /* the model's threads are the simulated CPUs, and so are the plan's */
            cs_map_threads(&m, cfg.cpus);
        if (cs_map_plan(map, &m, cfg.page, cs_ncolors(sim), &runs, &run.hint_runs,
                        &run.skipped_summaries))
            goto out;
        int bad = cs_set_hints(sim, runs, run.hint_runs);
        free(runs);
        if (bad) {
            fprintf(stderr, CS_PROG ": error: %s: its planned hints: %s\n", map,
                    strerror(errno));
            goto out;
        }
    }
    if (pages) {
        if (cs_track_pages(sim)) {
            fprintf(stderr, CS_PROG ": error: %s\n", strerror(errno));
            goto out;
        }
        run.pages = sim;
    }
    double t0 = cpu_seconds();
    if (steps) {
        for (unsigned k = 0; k <= steps; k++) {
            if (cs_model_step(sim, &m, cfg.line, cfg.cpus, k > 0, prefetch)) {
                fprintf(stderr, CS_PROG ": error: %s: the model's accesses: %s\n", map,
                        strerror(errno));
                goto out;
            }
            if (k == 0)
                cs_reset_stats(sim); /* the first step, every loop, warms the caches */
        }
    } else {
        t = cs_trace_open(trace, cfg.cpus);
        if (!t || replay(sim, t, trace))
            goto out;
    }
    run.seconds = cpu_seconds() - t0;
    struct cs_stats st;
    cs_stats(sim, &st);
    rc = write_json(json, &run, &st);
out:
    cs_trace_close(t);
    cs_map_free(&m);
    cs_free(sim);
    return rc;
}
