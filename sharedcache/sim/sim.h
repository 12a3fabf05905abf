/* sim.h — the trace-driven simulator of shared I/O-node caches: its trace, its
 * configuration and its results, shared by main.c, trace.c, sim.c and json.c. */
#ifndef IOCACHE_SIM_H
#define IOCACHE_SIM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "foresight_iocache.h"
#include "cli_text.h"

/* One line of a trace: `CLIENT OP BLOCK [THINK_US]`. */
enum op { OP_READ, OP_WRITE, OP_PREFETCH, OP_BARRIER };

struct request {
    uint64_t block;
    uint64_t think_ns;
    uint8_t op;
};

struct client_trace {
    struct request *req;
    size_t n, cap;
    unsigned file;           /* which --trace file (an application: its own barriers) */
    unsigned file_client;    /* its CLIENT number in that file */
    bool present;            /* some line names it */
    uint64_t think_total;    /* its THINK_US summed, in ns */
};

struct trace {
    unsigned clients;        /* ids 0 … clients-1 over all files, files in turn */
    unsigned files;
    struct client_trace client[IOCACHE_MAX_CLIENTS];
    uint64_t requests;       /* R, W and P lines */
    uint8_t *order;          /* every line's client, in the files' order (for --serial) */
    size_t lines, order_cap;
};

/* Reads the files into T; 0, or 2 after printing `file:line: reason` on stderr. */
int trace_read(struct trace *t, char *const *paths, unsigned npaths);
void trace_free(struct trace *t);

enum policy { POL_NONE, POL_PLAIN, POL_COARSE, POL_FINE, POL_OPTIMAL };
enum prefetcher { PF_HINTS, PF_OBL };

/* The disk and network of an I/O node (times in ns, rates in bytes per second). */
struct device {
    const char *name;
    uint64_t seek_ns;         /* per non-sequential request */
    double disk_rate;
    uint64_t net_latency_ns;  /* one way, per message */
    double net_rate;          /* each node's link, shared by its replies */
    uint64_t issue_ns;        /* a client's cost of sending a prefetch hint */
};

struct config {
    enum policy policy;
    enum prefetcher prefetcher;
    enum iocache_replacement replacement;
    uint64_t cache_bytes, block_bytes;
    unsigned ionodes;
    bool per_node_cache;      /* --cache is each node's (else the total, split evenly) */
    unsigned epochs;
    double threshold;         /* 0: the control's default */
    unsigned k;
    enum iocache_metric metric;
    bool throttle, pin;
    uint64_t shadows;         /* 0: the cache's capacity */
    bool serial;              /* requests in the order of the trace's lines, not by time */
    uint64_t client_cache_bytes;   /* each client's own LRU cache in front (0: none) */
    FILE *epoch_log;          /* --epoch-log: each node's harm matrices per epoch, or NULL */
    struct device device;
};

struct client_result {
    uint64_t finish_ns, stall_ns, late_hits;
    uint64_t local_hits;      /* reads served by the client's own cache */
    uint64_t local_skips;     /* hints not sent: the block was in the client's cache */
    struct iocache_client_stats cache;   /* summed over the nodes */
};

struct node_result {
    uint64_t disk_reads, disk_writes, disk_busy_ns, net_busy_ns;
    struct iocache_stats cache;
};

struct result {
    uint64_t makespan_ns;
    uint64_t cache_blocks;    /* per node */
    struct client_result client[IOCACHE_MAX_CLIENTS];
    struct node_result *node;
    struct iocache_stats total;   /* summed over the nodes */
    double seconds;           /* the simulation's own CPU time */
};

/* Runs the trace under the configuration: 0, or an errno value. */
int sim_run(const struct trace *t, const struct config *cfg, struct result *r);
void result_free(struct result *r);

void json_write(FILE *f, const struct trace *t, const struct config *cfg,
                const struct result *r, char *const *paths, unsigned npaths);

#endif
