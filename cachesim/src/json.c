/*
 * json.c — the simulator's result as JSON: the configuration, the counters over all CPUs
 * (named as in foresight_cachesim.h), then per CPU, then the pages mapped per color, and
 * last the two timing fields.  Everything before them is simulated, so the same inputs
 * give byte-identical output up to `seconds`.
 */
#include "cs_cli.h"

static unsigned long long u(uint64_t v)
{
    return (unsigned long long)v;
}

/* The counters of one CPU or all, as the members of an object (no braces); the L1's
 * and time's only where the configuration has them. */
static void counters(FILE *f, const struct cs_config *cfg, const struct cs_cpu_stats *c,
                     bool prefetched, const char *indent)
{
    fprintf(f, "%s\"accesses\": %llu, \"reads\": %llu, \"writes\": %llu, \"line_refs\": %llu,\n",
            indent, u(c->accesses), u(c->reads), u(c->writes), u(c->refs));
    if (cfg->l1_bytes)
        fprintf(f, "%s\"l1_hits\": %llu, ", indent, u(c->l1_hits));
    fprintf(f, "%s\"hits\": %llu,\n", cfg->l1_bytes ? "" : indent, u(c->hits));
    fprintf(f, "%s\"misses\": {\"cold\": %llu, \"capacity\": %llu, \"conflict\": %llu, "
            "\"true_sharing\": %llu, \"false_sharing\": %llu, \"total\": %llu},\n", indent,
            u(c->cold), u(c->capacity), u(c->conflict), u(c->true_sharing),
            u(c->false_sharing), u(c->misses));
    fprintf(f, "%s\"writebacks\": %llu, \"upgrades\": %llu, \"invalidations\": %llu, "
            "\"bus_bytes\": %llu", indent, u(c->writebacks), u(c->upgrades),
            u(c->invalidations), u(c->bus_bytes));
    if (prefetched)
        fprintf(f, ",\n%s\"prefetches\": %llu, \"prefetch_fills\": %llu, "
                "\"prefetch_drops\": %llu", indent, u(c->prefetches), u(c->prefetch_fills),
                u(c->prefetch_drops));
    if (!cfg->mhz)
        return;
    /* memory stall cycles per access: the paper's MCPI, per access (a trace has no
     * other instructions) */
    double stall = 0;
    for (int k = 0; k < CS_STALLS; k++)
        stall += c->stall_ns[k];
    const double mcpa = c->accesses ? stall * cfg->mhz / 1000.0 / (double)c->accesses : 0;
    fprintf(f, ",\n%s\"stall_ns\": {\"l2\": %.1f, \"cold\": %.1f, \"capacity\": %.1f, "
            "\"conflict\": %.1f, \"true_sharing\": %.1f, \"false_sharing\": %.1f, "
            "\"upgrade\": %.1f, \"late\": %.1f, \"total\": %.1f},\n", indent,
            c->stall_ns[CS_STALL_L2], c->stall_ns[CS_STALL_COLD], c->stall_ns[CS_STALL_CAPACITY],
            c->stall_ns[CS_STALL_CONFLICT], c->stall_ns[CS_STALL_TRUE_SHARING],
            c->stall_ns[CS_STALL_FALSE_SHARING], c->stall_ns[CS_STALL_UPGRADE],
            c->stall_ns[CS_STALL_LATE], stall);
    fprintf(f, "%s\"busy_ns\": %.1f, \"idle_ns\": %.1f, \"mcpa\": %.4f", indent, c->busy_ns,
            c->idle_ns, mcpa);
}

void cs_json_write(FILE *f, const struct cs_run_info *run, const struct cs_stats *st)
{
    const struct cs_config *cfg = run->cfg;
    fprintf(f, "{\n  \"config\": {\"cpus\": %u, \"l2_bytes\": %llu, \"assoc\": %u, "
            "\"line\": %u, \"page\": %llu, \"sets\": %llu, \"ncolors\": %u, \"policy\": ",
            cfg->cpus, u(cfg->l2_bytes), cfg->assoc, cfg->line, u(cfg->page),
            u(cfg->l2_bytes / cfg->line / cfg->assoc), st->ncolors);
    cli_json_string(f, run->policy);
    fprintf(f, ", \"seed\": %llu, \"trace\": ", u(cfg->seed));
    cli_json_string(f, run->trace);
    fprintf(f, ", \"model_steps\": %u", run->model_steps);
    if (run->prefetch_lines)
        fprintf(f, ", \"prefetch_lines\": %u", run->prefetch_lines);
    fputs(", \"map\": ", f);
    cli_json_string(f, run->map);
    fprintf(f, ", \"hint_runs\": %zu, \"skipped_summaries\": %zu", run->hint_runs,
            run->skipped_summaries);
    if (cfg->l1_bytes)
        fprintf(f, ", \"l1_bytes\": %llu, \"l1_assoc\": %u", u(cfg->l1_bytes), cfg->l1_assoc);
    if (cfg->mhz)
        fprintf(f, ", \"mhz\": %u, \"l2_cycles\": %u, \"mem_ns\": %u, \"remote_ns\": %u, "
                "\"bus_mbs\": %u", cfg->mhz, cfg->l2_cycles, cfg->mem_ns, cfg->remote_ns,
                cfg->bus_mbs);
    fputs("},\n", f);
    const bool pf = st->total.prefetches > 0 || run->prefetch_lines > 0;
    counters(f, cfg, &st->total, pf, "  ");
    if (cfg->mhz)
        fprintf(f, ",\n  \"time_ns\": %.1f, \"bus_busy_ns\": %.1f, \"bus_utilization\": %.4f",
                st->time_ns, st->bus_busy_ns,
                st->time_ns > 0 ? st->bus_busy_ns / st->time_ns : 0);
    fprintf(f, ",\n  \"barriers\": %llu, \"pages_mapped\": %llu,\n  \"per_cpu\": [\n",
            u(st->barriers), u(st->pages));
    for (unsigned i = 0; i < st->cpus; i++) {
        fprintf(f, "    {\"cpu\": %u,\n", i);
        counters(f, cfg, &st->cpu[i], pf, "     ");
        fprintf(f, "}%s\n", i + 1 < st->cpus ? "," : "");
    }
    fputs("  ],\n  \"pages_per_color\": [", f);
    for (uint32_t c = 0; c < st->ncolors; c++)
        fprintf(f, "%s%llu", c ? (c % 32 ? ", " : ",\n    ") : "", u(st->pages_per_color[c]));
    if (run->pages) {
        /* [virtual page, frame, CPUs as a bit mask] of every page, in first-touch order */
        fputs("],\n  \"pages\": [", f);
        uint64_t vpage, frame, cpus;
        for (uint32_t i = 0; !cs_page(run->pages, i, &vpage, &frame, &cpus); i++)
            fprintf(f, "%s[%llu, %llu, %llu]", i ? (i % 8 ? ", " : ",\n    ") : "",
                    u(vpage), u(frame), u(cpus));
    }
    double rate = run->seconds > 0 ? (double)st->total.accesses / run->seconds : 0;
    fprintf(f, "],\n  \"seconds\": %.6f,\n  \"accesses_per_second\": %.0f\n}\n", run->seconds,
            rate);
}
