/*
 * cs_cli.h — what `foresight-cachesim`'s files share: the trace reader (trace.c), the
 * color map reader (mapfile.c) and the JSON writer (json.c).  Each reports bad input
 * itself, as one line on stderr naming the file and the place; the caller exits 2.
 */
#ifndef FORESIGHT_CS_CLI_H
#define FORESIGHT_CS_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "color_plan.h"
#include "cli_text.h"
#include "foresight_cachesim.h"

#define CS_PROG "foresight cachesim"

enum cs_op { CS_READ = 0, CS_WRITE = 1, CS_BARRIER = 2 };

struct cs_record {
    uint64_t vaddr;
    uint32_t size;
    uint16_t cpu;
    uint8_t op; /* enum cs_op */
};

struct cs_trace;

/* Opens PATH, binary or text by its first bytes; accesses must name CPUs below CPUS.
 * NULL after printing why. */
struct cs_trace *cs_trace_open(const char *path, unsigned cpus);
/* Up to MAX records into OUT, every one valid: their count, 0 at the end, or -1 after
 * printing the first bad record's place and problem. */
long cs_trace_read(struct cs_trace *t, struct cs_record *out, size_t max);
void cs_trace_close(struct cs_trace *t);

/* A color map's summaries (mapfile.c; runtime/src/color_plan.h has the structs). */
struct cs_map {
    struct fs_color_array *arrays;
    struct fs_color_ref *refs;
    uint32_t *calls; /* per ref: the loop's run it came with (0: unknown) */
    bool *again;     /* per ref: passed again (its loop ran more than once) */
    struct fs_color_group *groups;
    struct fs_color_access *accesses; /* how references walk their units (model.c) */
    uint32_t *access_calls;           /* per access: the loop's run it came with */
    size_t narrays, nrefs, ngroups, naccesses, carrays, crefs, ccalls, cagain, cgroups,
        caccesses, caccess_calls;
};

/* Reads the color map at PATH into *M: 0, or -1 after printing why (M then empty). */
int cs_map_read(const char *path, struct cs_map *m);
/* Every loop's partition dealt over THREADS threads instead of the run's own. */
void cs_map_threads(struct cs_map *m, unsigned threads);
/* M's hints for pages of PAGE bytes and NCOLORS colors (fs_color_plan): 0 with *RUNS
 * (malloc'd), *NRUNS and the summaries it skipped in *BAD, or -1 after printing why
 * (PATH names the map in the message). */
int cs_map_plan(const char *path, const struct cs_map *m, uint64_t page, uint32_t ncolors,
                struct fs_color_run **runs, size_t *nruns, size_t *bad);
void cs_map_free(struct cs_map *m);

/* model.c: the accesses of M's loop runs, each once, in order (a barrier after each):
 * a run is the summaries of one loop that came with one call (a loop run with other
 * arrays or bounds is another run); each thread walks its iterations in the order it
 * runs them, and in each iteration its references' `access` walks phase by phase, one
 * stride of each at a time, or without them the units of every reference of the run
 * side by side, one LINE-byte line of each at a time; the threads interleaved a step at
 * a time.  STEADY: the loops that ran only once are left out where others ran again (a
 * time step; the first step, all of them, touches the pages in the program's order).
 * PREFETCH > 0: each access of a reference to a line other than its previous access's
 * is preceded by a prefetch (cs_prefetch) of the line PREFETCH lines further on in the
 * direction the reference moves (the compiler's software prefetches, once per line:
 * Section 6.2).  0, or -1 with errno from cs_access.  Runs of more threads than CPUS are
 * left out. */
int cs_model_step(struct cs_sim *sim, const struct cs_map *m, uint32_t line, unsigned cpus,
                  bool steady, unsigned prefetch);

struct cs_run_info {
    const struct cs_config *cfg;
    const char *policy, *trace, *map; /* map: NULL if none; trace: NULL for a model */
    unsigned model_steps;             /* --model: steps measured after the first */
    unsigned prefetch_lines;          /* --prefetch: the model's prefetch distance, 0 none */
    size_t hint_runs, skipped_summaries;
    const struct cs_sim *pages; /* --pages: the simulator whose tracked pages to list */
    double seconds; /* CPU time of the replay */
};

/* The result as JSON: simulated quantities first (byte-identical for the same inputs),
 * the two timing fields last. */
void cs_json_write(FILE *f, const struct cs_run_info *run, const struct cs_stats *st);

#endif
