/*
 * json.c — the simulator's result as JSON (every key is documented in
 * docs/sharedcache.md).  Only simulated quantities are written, so the same inputs give
 * byte-identical output.
 */
#include "sim.h"

static const char *POLICY[] = {"none", "plain", "coarse", "fine", "optimal"};

static double seconds(uint64_t ns)
{
    return (double)ns * 1e-9;
}

static void client(FILE *f, const struct trace *t, unsigned id, const struct client_result *c)
{
    const struct iocache_client_stats *s = &c->cache;
    uint64_t demand = s->accesses + c->local_hits;
    uint64_t dropped = s->dropped_throttled + s->dropped_pinned + s->dropped_oracle +
                       s->dropped_noroom;
    fprintf(f, "    {\"id\": %u, \"trace\": %u, \"trace_client\": %u, ", id,
            t->client[id].file, t->client[id].file_client);
    fprintf(f, "\"demand_requests\": %llu, \"reads\": %llu, \"writes\": %llu, ",
            (unsigned long long)demand, (unsigned long long)(demand - s->writes),
            (unsigned long long)s->writes);
    fprintf(f, "\"client_cache_hits\": %llu, \"hints_kept_local\": %llu, ",
            (unsigned long long)c->local_hits, (unsigned long long)c->local_skips);
    fprintf(f, "\"hits\": %llu, \"misses\": %llu, \"late_hits\": %llu, ",
            (unsigned long long)s->hits, (unsigned long long)s->misses,
            (unsigned long long)c->late_hits);
    fprintf(f, "\"prefetches_requested\": %llu, \"prefetches_issued\": %llu, "
            "\"prefetches_cached\": %llu, \"prefetches_dropped\": %llu, ",
            (unsigned long long)s->prefetches, (unsigned long long)s->admitted,
            (unsigned long long)s->cached, (unsigned long long)dropped);
    fprintf(f, "\"dropped_throttled\": %llu, \"dropped_pinned\": %llu, "
            "\"dropped_oracle\": %llu, ",
            (unsigned long long)s->dropped_throttled, (unsigned long long)s->dropped_pinned,
            (unsigned long long)s->dropped_oracle);
    fprintf(f, "\"useful_prefetches\": %llu, \"unused_prefetches\": %llu, "
            "\"harmful_prefetches\": %llu, \"benign_prefetches\": %llu, \"harm_misses\": %llu, ",
            (unsigned long long)s->useful, (unsigned long long)s->unused,
            (unsigned long long)s->harmful, (unsigned long long)s->benign,
            (unsigned long long)s->harm_misses);
    fprintf(f, "\"throttled_epochs\": %llu, \"pinned_epochs\": %llu, ",
            (unsigned long long)s->throttled_epochs, (unsigned long long)s->pinned_epochs);
    fprintf(f, "\"stall_s\": %.9f, \"finish_s\": %.9f}", seconds(c->stall_ns),
            seconds(c->finish_ns));
}

void json_write(FILE *f, const struct trace *t, const struct config *cfg,
                const struct result *r, char *const *paths, unsigned npaths)
{
    const struct device *d = &cfg->device;
    fprintf(f, "{\n  \"traces\": [");
    for (unsigned i = 0; i < npaths; i++) {
        fputs(i ? ", " : "", f);
        cli_json_string(f, paths[i]);
    }
    fprintf(f, "],\n  \"policy\": \"%s\", \"prefetcher\": \"%s\", \"replacement\": \"%s\",\n",
            POLICY[cfg->policy], cfg->prefetcher == PF_OBL ? "obl" : "hints",
            cfg->replacement == IOCACHE_LRU         ? "lru"
            : cfg->replacement == IOCACHE_LRU_AGING ? "lru-aging"
                                                    : "min");
    fprintf(f, "  \"throttle\": %s, \"pin\": %s, \"threshold\": %.6g, \"k\": %u, "
            "\"metric\": \"%s\", \"epochs\": %u,\n",
            cfg->throttle ? "true" : "false", cfg->pin ? "true" : "false",
            cfg->threshold > 0 ? cfg->threshold : cfg->policy == POL_FINE ? 0.20 : 0.35,
            cfg->k ? cfg->k : 3, cfg->metric == IOCACHE_METRIC_SHARE ? "share" : "ratio",
            cfg->epochs);
    fprintf(f, "  \"cache_bytes\": %llu, \"per_node_cache\": %s, \"block_bytes\": %llu, "
            "\"ionodes\": %u, \"cache_blocks_per_node\": %llu,\n",
            (unsigned long long)cfg->cache_bytes, cfg->per_node_cache ? "true" : "false",
            (unsigned long long)cfg->block_bytes, cfg->ionodes,
            (unsigned long long)r->cache_blocks);
    fprintf(f, "  \"client_cache_bytes\": %llu,\n", (unsigned long long)cfg->client_cache_bytes);
    fprintf(f, "  \"disk\": {\"model\": \"%s\", \"seek_s\": %.9f, \"disk_bytes_per_s\": %.0f, "
            "\"net_latency_s\": %.9f, \"net_bytes_per_s\": %.0f, \"prefetch_issue_s\": %.9f},\n",
            d->name, seconds(d->seek_ns), d->disk_rate, seconds(d->net_latency_ns),
            d->net_rate, seconds(d->issue_ns));
    uint64_t throttled = 0, pinned = 0, late = 0, misses = 0, issued = 0, oracle = 0;
    for (unsigned i = 0; i < t->clients; i++) {
        const struct iocache_client_stats *s = &r->client[i].cache;
        throttled += s->dropped_throttled;
        pinned += s->dropped_pinned;
        oracle += s->dropped_oracle;
        misses += s->harm_misses;
        issued += s->admitted;
        late += r->client[i].late_hits;
    }
    fprintf(f, "  \"serial\": %s, \"requests\": %llu, \"makespan_s\": %.9f,\n",
            cfg->serial ? "true" : "false", (unsigned long long)t->requests,
            seconds(r->makespan_ns));
    fprintf(f, "  \"prefetches_issued\": %llu, \"harmful_prefetches\": %llu, "
            "\"benign_prefetches\": %llu, \"unresolved_prefetches\": %llu, "
            "\"open_shadows\": %llu, \"intra_client\": %llu, \"inter_client\": %llu, "
            "\"harm_misses\": %llu,\n",
            (unsigned long long)issued, (unsigned long long)r->total.harmful,
            (unsigned long long)r->total.benign, (unsigned long long)r->total.unresolved,
            (unsigned long long)r->total.open_shadows, (unsigned long long)r->total.intra,
            (unsigned long long)r->total.inter, (unsigned long long)misses);
    fprintf(f, "  \"throttled_prefetches\": %llu, \"pinned_prefetches\": %llu, "
            "\"pinned_blocks\": %llu, \"oracle_dropped\": %llu, \"late_hits\": %llu,\n",
            (unsigned long long)throttled, (unsigned long long)pinned,
            (unsigned long long)r->total.pin_skips, (unsigned long long)oracle,
            (unsigned long long)late);
    fprintf(f, "  \"clients\": [\n");
    bool first = true;
    for (unsigned i = 0; i < t->clients; i++) {
        if (!t->client[i].present)
            continue;
        fputs(first ? "" : ",\n", f);
        first = false;
        client(f, t, i, &r->client[i]);
    }
    fprintf(f, "\n  ],\n  \"nodes\": [\n");
    for (unsigned i = 0; i < cfg->ionodes; i++) {
        const struct node_result *n = &r->node[i];
        uint64_t hits = 0, misses_n = 0;
        for (unsigned c = 0; c < t->clients; c++) {
            hits += n->cache.client[c].hits;
            misses_n += n->cache.client[c].misses;
        }
        fprintf(f, "    {\"id\": %u, \"hits\": %llu, \"misses\": %llu, \"disk_reads\": %llu, "
                "\"disk_writes\": %llu, \"disk_busy_s\": %.9f, \"net_busy_s\": %.9f, "
                "\"harmful_prefetches\": %llu, \"epochs\": %llu}%s\n",
                i, (unsigned long long)hits, (unsigned long long)misses_n,
                (unsigned long long)n->disk_reads, (unsigned long long)n->disk_writes,
                seconds(n->disk_busy_ns), seconds(n->net_busy_ns),
                (unsigned long long)n->cache.harmful, (unsigned long long)n->cache.epochs,
                i + 1 < cfg->ionodes ? "," : "");
    }
    fprintf(f, "  ]\n}\n");
}
