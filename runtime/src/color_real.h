/* FORESIGHT_COLOR=real (color_real.c): preferred colors carried out with huge-page
 * frames moved under the arrays' pages (data copied); what could not be is counted by
 * reason. */
#ifndef FORESIGHT_COLOR_REAL_H
#define FORESIGHT_COLOR_REAL_H

#include <stdint.h>

#include "color_plan.h"

/* Pages of the last plan, by what became of them (requested = the sum of the rest). */
struct fs_color_real_counts {
    uint64_t requested;     /* pages the plan gives a color */
    uint64_t moved;         /* moved under a frame of their color (this apply or before) */
    uint64_t placed;        /* of the moved, those at their color right after the move */
    uint64_t at_color;      /* of the moved, those pagemap shows at their color now */
    uint64_t gone;          /* of the moved, those the program has unmapped since */
    uint64_t copied;        /* of the moved (by any call), those that had data, copied */
    uint64_t in_parallel;   /* asked inside a parallel region (a team may use them): kept */
    uint64_t not_anonymous; /* not private anonymous read-write memory: kept */
    uint64_t not_root;      /* frame numbers unreadable without root: kept */
    uint64_t colors_unfit;  /* the colors do not divide a 2 MiB folio's 512 pages */
    uint64_t no_thp;        /* no transparent huge page to be had */
    uint64_t map_count;     /* mremap refused: the kernel's map count (vm.max_map_count) */
    uint64_t failed;        /* mremap refused otherwise */
};
extern struct fs_color_real_counts fs_color_real;

/* Carries out RUNS (ncolors NC) for the pages no earlier call moved, unless IN_PARALLEL
 * (called inside an OpenMP parallel region); recounts. */
void fs_color_real_apply(const struct fs_color_run *runs, size_t n, uint32_t nc,
                         int in_parallel);
/* Recounts at_color and gone from pagemap (compaction may have moved pages since, the
 * program freed them). */
void fs_color_real_verify(void);

#endif
