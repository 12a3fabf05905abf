/*
 * stats.c — per-site statistics: the registry of sites that reached the
 * library, and the report at exit (FORESIGHT_STATS=1: a table on stderr;
 * FORESIGHT_STATS=path: JSON written to path.tmp.PID and renamed, so a reader
 * never sees half a file).  Counting costs nothing on the filtered fast path:
 * filtered calls are counted by the per-site countdown that also schedules
 * their verification.
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli_text.h"
#include "internal.h"

unsigned long fs_global_reconcile_cleared;
unsigned long fs_global_pageouts;
unsigned long fs_global_memcg_flushes;
unsigned long fs_global_releases_idle;
unsigned long fs_global_releases_early;
unsigned long fs_global_random_pages;
unsigned long fs_global_random_readaround;
unsigned long fs_global_random_fits;
unsigned long fs_global_releases_page_cache;
static struct foresight_site *registry;

void fs_site_register(struct foresight_site *site)
{
    if ((__atomic_load_n(&site->fs_state, __ATOMIC_ACQUIRE) & FS_SITE_REGISTERED) ||
        (__atomic_fetch_or(&site->fs_state, FS_SITE_REGISTERED, __ATOMIC_ACQ_REL) &
         FS_SITE_REGISTERED))
        return;
    struct foresight_site *head = __atomic_load_n(&registry, __ATOMIC_ACQUIRE);
    do
        site->fs_next = head;
    while (!__atomic_compare_exchange_n(&registry, &head, site, true, __ATOMIC_ACQ_REL,
                                        __ATOMIC_ACQUIRE));
}

/* Filtered calls counted down since the last verification, not yet in fs_stat. */
static unsigned long pending(const struct foresight_site *s)
{
    unsigned long armed = __atomic_load_n(&s->fs_armed, __ATOMIC_RELAXED);
    unsigned long left = __atomic_load_n(&s->fs_countdown, __ATOMIC_RELAXED);
    return armed > left ? armed - left : 0;
}

static const char *const stat_names[FS_NSTAT] = {
    [FS_CONSIDERED] = "considered",         [FS_FILTERED] = "filtered",
    [FS_ISSUED] = "issued",                 [FS_PAGES_REQUESTED] = "pages_requested",
    [FS_PAGES_ISSUED] = "pages_issued",     [FS_PAGES_UNNECESSARY] = "pages_unnecessary",
    [FS_DROPPED_BUDGET] = "dropped_budget", [FS_DROPPED_QUEUE] = "dropped_queue",
    [FS_RELEASES] = "releases",             [FS_PAGES_RELEASE_REQ] = "pages_release_requested",
    [FS_PAGES_DEACTIVATED] = "pages_deactivated", [FS_PAGES_FREED] = "pages_freed",
    [FS_VERIFIED] = "verified",             [FS_STALE] = "stale_pages",
    [FS_BAD_INPUT] = "bad_input",           [FS_QUIETED] = "quieted",
    [FS_PAGES_PAGED_OUT] = "pages_paged_out", [FS_PAGES_BACK] = "pages_back",
    [FS_REFUSED] = "refused",           [FS_KERNEL_READAHEAD] = "left_to_kernel_readahead",
};

void fs_site_counts(const struct foresight_site *s, unsigned long out[FS_NSTAT])
{
    for (int i = 0; i < FS_NSTAT; i++)
        out[i] = __atomic_load_n(&s->fs_stat[i], __ATOMIC_RELAXED);
    out[FS_CONSIDERED] += pending(s);
    out[FS_FILTERED] += pending(s);
    unsigned long armed = __atomic_load_n(&s->fs_quiet_armed, __ATOMIC_RELAXED);
    unsigned long left = __atomic_load_n(&s->fs_quiet, __ATOMIC_RELAXED);
    unsigned long quieted = armed > left ? armed - left : 0; /* the running stretch */
    out[FS_CONSIDERED] += quieted;
    out[FS_FILTERED] += quieted;
    out[FS_QUIETED] += quieted;
}

unsigned long fs_site_filtered_total(const struct foresight_site *site)
{
    unsigned long c[FS_NSTAT];
    fs_site_counts(site, c);
    return c[FS_FILTERED];
}

/* A JSON string (common/cli_text.c's escaping); a missing one as "". */
static void json_string(FILE *f, const char *s)
{
    cli_json_string(f, s ? s : "");
}

static void json_counts(FILE *f, const unsigned long c[FS_NSTAT])
{
    for (int i = 0; i < FS_NSTAT; i++)
        fprintf(f, "%s\"%s\": %lu", i ? ", " : "", stat_names[i], c[i]);
}

static void totals(unsigned long total[FS_NSTAT])
{
    memset(total, 0, sizeof(unsigned long) * FS_NSTAT);
    for (struct foresight_site *s = __atomic_load_n(&registry, __ATOMIC_ACQUIRE); s;
         s = s->fs_next) {
        unsigned long c[FS_NSTAT];
        fs_site_counts(s, c);
        for (int i = 0; i < FS_NSTAT; i++)
            total[i] += c[i];
    }
}

/* The prefetch thread's counters (pt_*.c), and why it stopped early (null: it did not). */
static const struct {
    const unsigned long *count;
    const char *name, *what;
} pt_counters[] = {
    {&fs_global_pt_started, "pt_started", "prefetch thread started"},
    {&fs_global_pt_calls, "pt_calls", "covered I/O calls the prefetch thread made"},
    {&fs_global_pt_lead_reads, "pt_lead_reads", "lead reads (data the prefetch thread read)"},
    {&fs_global_pt_lead_bytes, "pt_lead_bytes", "bytes of lead reads"},
    {&fs_global_pt_expired, "pt_expired", "predictions expired: the program was there first"},
    {&fs_global_pt_issued, "pt_issued", "prefetch requests from the prefetch thread "
                                        "(WILLNEED, by posix_fadvise or io_uring)"},
    {&fs_global_pt_issued_bytes, "pt_issued_bytes", "bytes of those requests"},
    {&fs_global_pt_issue_failed, "pt_issue_failed", "prefetch requests the kernel refused "
                                                    "(io_uring completions with an error)"},
    {&fs_global_pt_cached, "pt_cached", "prefetch requests not issued: cachestat found "
                                        "every page cached"},
    {&fs_global_pt_cached_bytes, "pt_cached_bytes", "bytes of those requests"},
    {&fs_global_pt_sleeps, "pt_sleeps", "times the prefetch thread slept: its window was full"},
    {&fs_global_pt_mispredicts, "pt_mispredicts", "calls the prefetch thread mispredicted"},
    {&fs_global_pt_runs, "pt_runs", "runs anchored at a function's entry (foresight_pt_anchor)"},
    {&fs_global_pt_gave_up, "pt_gave_up", "anchored runs given up (mispredicted, spinning, "
                                          "abandoned): the next anchor starts another"},
    {&fs_global_pt_left_to_readahead, "pt_left_to_readahead",
     "predictions left to the kernel's readahead (sequential forward runs)"},
    {&fs_global_pt_readahead_off, "pt_readahead_off",
     "times the program's readahead was turned off (POSIX_FADV_RANDOM): the thread led"},
    {&fs_global_pt_readahead_on, "pt_readahead_on",
     "times it was turned on again (POSIX_FADV_NORMAL): the thread lagged, left calls to "
     "readahead, or stopped"},
    {&fs_global_pt_received, "pt_received",
     "values the prefetch thread received from the program at sync points (rand, stdin...)"},
    {&fs_global_pt_sync_waits, "pt_sync_waits",
     "times the prefetch thread waited at a sync point for the program's value"},
    {&fs_global_pt_unguarded, "pt_unguarded", "prefetch thread memory without guards: "
                                              "the reservation failed"},
};

/* Why the prefetch thread stopped early, into TEXT; false when it did not. */
static bool pt_stopped(char *text, size_t size)
{
    const char *why = __atomic_load_n(&fs_global_pt_stopped, __ATOMIC_ACQUIRE);
    if (why == NULL)
        return false;
    const int err = __atomic_load_n(&fs_global_pt_stopped_errno, __ATOMIC_RELAXED);
    snprintf(text, size, "%s%s%s", why, err ? ": " : "", err ? strerror(err) : "");
    return true;
}

static void write_json_pt(FILE *f)
{
    for (size_t i = 0; i < sizeof pt_counters / sizeof pt_counters[0]; i++)
        fprintf(f, "%s\"%s\": %lu", i ? ", " : "", pt_counters[i].name,
                __atomic_load_n(pt_counters[i].count, __ATOMIC_RELAXED));
    fprintf(f, ", \"pt_cpu_seconds\": %.6f", fs_pt_cpu_seconds());
    fputs(", \"pt_issue\": ", f);
    json_string(f, __atomic_load_n(&fs_global_pt_issue, __ATOMIC_ACQUIRE));
    char text[256];
    fputs(", \"pt_stopped\": ", f);
    if (pt_stopped(text, sizeof text))
        json_string(f, text);
    else
        fputs("null", f);
}

static void write_json(FILE *f)
{
    unsigned long total[FS_NSTAT];
    totals(total);
    fprintf(f, "{\n  \"version\": 1,\n  \"config\": {\"started\": %s, \"workers\": %d, "
               "\"inline\": \"%s\", "
               "\"queue_slots\": %zu, "
               "\"method\": \"%s\", \"release\": \"%s\", \"chunk_bytes\": %zu, "
               "\"verify_period\": %lu, \"filter\": %s, \"file_streams\": \"%s\", "
               "\"mem_limit_bytes\": %llu, \"mem_limit_source\": ",
            fs_started ? "true" : "false", fs_cfg.workers, fs_inline_name(fs_cfg.issue_inline),
            fs_cfg.queue_slots,
            fs_method_name(fs_cfg.method),
            fs_release_name(fs_cfg.release), fs_cfg.chunk_bytes, fs_cfg.verify_period,
            fs_cfg.filter ? "true" : "false", fs_cfg.file_streams_hinted ? "hint" : "kernel",
            (unsigned long long)fs_budget_limit_bytes());
    json_string(f, fs_budget_source());
    double lat_us, mb_s;
    unsigned long samples;
    size_t ahead;
    fs_distance_report(&lat_us, &mb_s, &samples, &ahead);
    fprintf(f, ", \"budget_pages\": %zu, \"lookahead\": \"%s\"},\n  \"distance\": {"
               "\"lookahead_bytes\": %zu, \"latency_us\": %.1f, \"bandwidth_mib_s\": %.1f, "
               "\"samples\": %lu},\n  \"global\": {",
            fs_budget_pages(),
            fs_cfg.lookahead_measured ? "measured"
            : fs_cfg.lookahead_set    ? "fixed"
                                      : "default",
            ahead, lat_us, mb_s, samples);
    json_counts(f, total);
    fprintf(f, ", \"footprint_pages\": %zu, \"footprint_peak_pages\": %zu, "
               "\"reconcile_cleared_pages\": %lu, \"pageout_releases\": %lu, "
               "\"releases_idle\": %lu, \"releases_early\": %lu, \"releases_page_cache\": %lu, "
               "\"coalesced\": %zu, "
               "\"random_advised_pages\": %lu, "
               "\"random_left_to_readaround\": %lu, \"random_fits\": %lu, "
               "\"nest_entries_unhinted\": %lu, \"nest_entries_refused\": %lu, "
               "\"memcg_stat_flushes\": %lu, \"short_runs_continued\": %lu, "
               "\"remote_cache_requests\": %lu, \"remote_cache_bytes\": %lu, "
               "\"remote_cache_failed\": %lu, \"remote_cache_dropped\": %lu, \"pins\": %lu, ",
            fs_residency_footprint(), fs_residency_peak(),
            __atomic_load_n(&fs_global_reconcile_cleared, __ATOMIC_RELAXED),
            __atomic_load_n(&fs_global_pageouts, __ATOMIC_RELAXED),
            __atomic_load_n(&fs_global_releases_idle, __ATOMIC_RELAXED),
            __atomic_load_n(&fs_global_releases_early, __ATOMIC_RELAXED),
            __atomic_load_n(&fs_global_releases_page_cache, __ATOMIC_RELAXED),
            fs_queue_global ? fs_queue_coalesced(fs_queue_global) : 0,
            __atomic_load_n(&fs_global_random_pages, __ATOMIC_RELAXED),
            __atomic_load_n(&fs_global_random_readaround, __ATOMIC_RELAXED),
            __atomic_load_n(&fs_global_random_fits, __ATOMIC_RELAXED),
            __atomic_load_n(&fs_global_gate_closed, __ATOMIC_RELAXED),
            __atomic_load_n(&fs_global_refused, __ATOMIC_RELAXED),
            __atomic_load_n(&fs_global_memcg_flushes, __ATOMIC_RELAXED),
            __atomic_load_n(&fs_global_runs_continued, __ATOMIC_RELAXED),
            __atomic_load_n(&fs_global_remote_requests, __ATOMIC_RELAXED),
            __atomic_load_n(&fs_global_remote_bytes, __ATOMIC_RELAXED),
            __atomic_load_n(&fs_global_remote_failed, __ATOMIC_RELAXED),
            __atomic_load_n(&fs_global_remote_dropped, __ATOMIC_RELAXED),
            __atomic_load_n(&fs_global_pins, __ATOMIC_RELAXED));
    fputs("\"pin_ended\": ", f);
    const char *pin_ended = __atomic_load_n(&fs_pin_ended, __ATOMIC_RELAXED);
    if (pin_ended != NULL)
        json_string(f, pin_ended);
    else
        fputs("null", f);
    fputs(", ", f);
    write_json_pt(f);
    fputs("},\n  \"sites\": [", f);
    int first = 1;
    for (struct foresight_site *s = __atomic_load_n(&registry, __ATOMIC_ACQUIRE); s;
         s = s->fs_next) {
        unsigned long c[FS_NSTAT];
        fs_site_counts(s, c);
        fprintf(f, "%s\n    {\"file\": ", first ? "" : ",");
        json_string(f, s->file);
        fprintf(f, ", \"line\": %u, \"ref\": ", s->line);
        json_string(f, s->ref);
        fputs(", ", f);
        json_counts(f, c);
        fputc('}', f);
        first = 0;
    }
    fputs("\n  ]\n}\n", f);
}

static void write_table(FILE *f)
{
    unsigned long total[FS_NSTAT];
    totals(total);
    if (!fs_started)
        fputs("\nforesight runtime: off (no unit of the program has hints)", f);
    fprintf(f, "\nforesight runtime: method=%s release=%s%s workers=%d inline=%s budget=%zu MiB "
               "of %llu MiB (%s)\n",
            fs_method_name(fs_cfg.method), fs_release_name(fs_cfg.release),
            fs_cfg.filter ? "" : " filter=off", fs_cfg.workers, fs_inline_name(fs_cfg.issue_inline),
            fs_budget_pages() >> (20 - FORESIGHT_PAGE_SHIFT),
            (unsigned long long)(fs_budget_limit_bytes() >> 20), fs_budget_source());
    double lat_us, mb_s;
    unsigned long samples;
    size_t ahead;
    fs_distance_report(&lat_us, &mb_s, &samples, &ahead);
    if (fs_cfg.lookahead_measured)
        fprintf(f, "lookahead %zu KiB measured: latency %.0f us x bandwidth %.0f MiB/s "
                   "(%lu timed prefetches)\n", ahead >> 10, lat_us, mb_s, samples);
    else if (fs_cfg.lookahead_set)
        fprintf(f, "lookahead %zu KiB (FORESIGHT_LOOKAHEAD)\n", ahead >> 10);
    else
        fprintf(f, "lookahead %zu KiB (default: 4 MiB, at most the limit / 32)\n", ahead >> 10);
    fprintf(f, "%-32s %10s %10s %8s %10s %10s %8s %8s %8s %10s %8s %7s %5s\n", "site",
            "considered", "filtered", "issued", "pg_issued", "pg_unnec", "drop_bud", "drop_q",
            "releases", "pg_freed", "pg_back", "stale", "bad");
    for (struct foresight_site *s = __atomic_load_n(&registry, __ATOMIC_ACQUIRE); s;
         s = s->fs_next) {
        unsigned long c[FS_NSTAT];
        char name[64];
        fs_site_counts(s, c);
        const char *base = s->file ? strrchr(s->file, '/') : NULL;
        snprintf(name, sizeof name, "%s:%u %s", base ? base + 1 : s->file, s->line,
                 s->ref ? s->ref : "");
        fprintf(f, "%-32.32s %10lu %10lu %8lu %10lu %10lu %8lu %8lu %8lu %10lu %8lu %7lu %5lu\n",
                name, c[FS_CONSIDERED], c[FS_FILTERED], c[FS_ISSUED], c[FS_PAGES_ISSUED],
                c[FS_PAGES_UNNECESSARY], c[FS_DROPPED_BUDGET], c[FS_DROPPED_QUEUE],
                c[FS_RELEASES], c[FS_PAGES_FREED], c[FS_PAGES_BACK], c[FS_STALE],
                c[FS_BAD_INPUT]);
    }
    fprintf(f, "%-32s %10lu %10lu %8lu %10lu %10lu %8lu %8lu %8lu %10lu %8lu %7lu %5lu\n",
            "total", total[FS_CONSIDERED], total[FS_FILTERED], total[FS_ISSUED],
            total[FS_PAGES_ISSUED], total[FS_PAGES_UNNECESSARY], total[FS_DROPPED_BUDGET],
            total[FS_DROPPED_QUEUE], total[FS_RELEASES], total[FS_PAGES_FREED],
            total[FS_PAGES_BACK], total[FS_STALE], total[FS_BAD_INPUT]);
    if (total[FS_REFUSED])
        fprintf(f, "%lu hints dropped where none may run: a signal handler's that "
                   "interrupted its thread inside the runtime, one on a short alternate "
                   "signal stack, or under seccomp\n",
                total[FS_REFUSED]);
    /* The run-wide counters, each on a line of its own when it is not zero. */
    static const struct {
        const unsigned long *count;
        const char *what;
    } lines[] = {
        {&fs_global_releases_idle, "releases skipped: memory in use below 3/4 of the limit"},
        {&fs_global_releases_early, "releases skipped: a small overflow, and the site's probes "
                                    "came back soon"},
        {&fs_global_random_pages, "pages of indirect targets advised MADV_RANDOM"},
        {&fs_global_gate_closed, "loop nest entries without hints: the program fit in its "
                                 "memory limit, or overflowed it a little without refaults "
                                 "(FORESIGHT_INCORE=hint keeps them)"},
        {&fs_global_refused, "loop nest entries without hints: on a signal handler's "
                             "short alternate stack, or under seccomp"},
        {&fs_global_runs_continued, "short runs continued an earlier run at their site: "
                                    "hinted ahead of it"},
        {&fs_global_releases_page_cache, "releases of file-mapped memory left to the kernel's "
                                         "reclaim (FORESIGHT_FILE_STREAMS=hint makes them)"},
        {&fs_global_remote_requests, "prefetches sent to the I/O node (NBD_CMD_CACHE)"},
        {&fs_global_remote_bytes, "bytes named by prefetches sent to the I/O node"},
        {&fs_global_remote_failed, "prefetches not delivered to the I/O node (dropped)"},
        {&fs_global_remote_dropped, "prefetches of the I/O node's file dropped: not yet "
                                    "connected, or made outside the worker threads"},
        {&fs_global_pins, "times the program's and the library's threads were put on one CPU "
                          "while hints paged (FORESIGHT_PIN=0 keeps them apart)"},
        {&fs_global_random_fits, "runs of indirect sites not advised MADV_RANDOM: their "
                                 "targets fit in the memory limit"},
        {&fs_global_random_readaround, "runs of indirect sites left to the kernel's "
                                       "read-around: their targets were sequential frontiers "
                                       "it kept in memory"},
    };
    for (size_t i = 0; i < sizeof lines / sizeof lines[0]; i++) {
        const unsigned long n = __atomic_load_n(lines[i].count, __ATOMIC_RELAXED);
        if (n)
            fprintf(f, "%lu %s\n", n, lines[i].what);
    }
    for (size_t i = 0; i < sizeof pt_counters / sizeof pt_counters[0]; i++) {
        const unsigned long n = __atomic_load_n(pt_counters[i].count, __ATOMIC_RELAXED);
        if (n)
            fprintf(f, "%lu %s\n", n, pt_counters[i].what);
    }
    const char *pin_ended = __atomic_load_n(&fs_pin_ended, __ATOMIC_RELAXED);
    if (pin_ended != NULL)
        fprintf(f, "threads put on one CPU no more: %s\n", pin_ended);
    if (__atomic_load_n(&fs_global_pt_started, __ATOMIC_RELAXED)) {
        fprintf(f, "%.3f s of CPU time on the prefetch thread\n", fs_pt_cpu_seconds());
        fprintf(f, "prefetch thread requests by %s\n",
                __atomic_load_n(&fs_global_pt_issue, __ATOMIC_ACQUIRE));
    }
    char text[256];
    if (pt_stopped(text, sizeof text))
        fprintf(f, "prefetch thread stopped early: %s\n", text);
}

void fs_stats_report(void)
{
    if (fs_cfg.stats == 1) {
        write_table(stderr);
        return;
    }
    char tmp[4200];
    snprintf(tmp, sizeof tmp, "%s.tmp.%ld", fs_cfg.stats_path, (long)getpid());
    FILE *f = fopen(tmp, "we");
    if (f == NULL) {
        fprintf(stderr, "foresight: cannot write statistics to %s\n", fs_cfg.stats_path);
        return;
    }
    write_json(f);
    if (fclose(f) != 0 || rename(tmp, fs_cfg.stats_path) != 0) {
        unlink(tmp);
        fprintf(stderr, "foresight: cannot write statistics to %s\n", fs_cfg.stats_path);
    }
}
