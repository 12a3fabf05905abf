/*
 * test_sharing.c — coherence (coherence.c) and the sharing misses of Dubois et al.
 * (words of 8 bytes), on crafted traces of two or three CPUs; direct-mapped caches of
 * 4 KiB, 64-byte lines, so a line and the line 4 KiB above it collide.  It proves:
 * - a CPU rereading the word another CPU's write invalidated misses with true sharing;
 *   rereading another word of the line, with false sharing; a word written after the
 *   invalidating write, or one of several words an access spans, makes it true;
 * - a read miss on a line Modified elsewhere writes it back (counted for its holder);
 *   a write miss on it invalidates it without a writeback;
 * - a write hit on a Shared line is an upgrade invalidating the other copies, also
 *   when no other copy is left; on an Exclusive line it is silent, and the Modified
 *   line's eviction is a writeback;
 * - a line lost by replacement, or invalidated after it left by replacement, misses
 *   as conflict, not sharing; after a sharing miss the next loss is judged afresh;
 * - bus bytes count fills and writebacks, not upgrades.
 */
#include <stdint.h>

#include "check.h"
#include "foresight_cachesim.h"

struct op {
    unsigned cpu;
    char rw;
    uint64_t addr;
    uint32_t size;
};

static struct cs_stats run(const struct op *ops, size_t n)
{
    struct cs_config cfg = {.cpus = 3, .l2_bytes = 4096, .assoc = 1, .line = 64,
                            .page = 1024, .policy = CS_PC};
    struct cs_sim *s = cs_create(&cfg, NULL, 0);
    struct cs_stats st = {0};
    if (!s) {
        CHECK(s != NULL);
        return st;
    }
    for (size_t i = 0; i < n; i++)
        CHECK_EQ(cs_access(s, ops[i].cpu, ops[i].addr, ops[i].size, ops[i].rw == 'W'), 0);
    cs_stats(s, &st);
    cs_free(s);
    return st;
}

/* st = the counters after the accesses given */
#define RUN(...)                                                   \
    do {                                                           \
        static const struct op ops_[] = {__VA_ARGS__};             \
        st = run(ops_, sizeof ops_ / sizeof *ops_);                \
    } while (0)

int main(void)
{
    struct cs_stats st;

    /* true sharing; the reader's miss writes the writer's Modified copy back */
    RUN({0, 'R', 0, 8}, {1, 'W', 0, 8}, {0, 'R', 0, 8});
    CHECK_EQ(st.cpu[1].invalidations, 1);
    CHECK_EQ(st.cpu[1].upgrades, 0);
    CHECK_EQ(st.cpu[0].true_sharing, 1);
    CHECK_EQ(st.cpu[0].false_sharing, 0);
    CHECK_EQ(st.cpu[1].writebacks, 1);
    CHECK_EQ(st.total.bus_bytes, (3 + 1) * 64);

    /* false sharing: another word */
    RUN({0, 'R', 64, 8}, {1, 'W', 72, 8}, {0, 'R', 64, 8});
    CHECK_EQ(st.cpu[0].false_sharing, 1);
    CHECK_EQ(st.cpu[0].true_sharing, 0);

    /* true: the word was written after the invalidating write */
    RUN({0, 'R', 128, 8}, {1, 'W', 136, 8}, {1, 'W', 128, 8}, {0, 'R', 128, 8});
    CHECK_EQ(st.cpu[0].true_sharing, 1);
    CHECK_EQ(st.cpu[1].hits, 1);

    /* true: one of the two words read was written */
    RUN({0, 'R', 192, 8}, {1, 'W', 200, 8}, {0, 'R', 192, 16});
    CHECK_EQ(st.cpu[0].true_sharing, 1);
    /* false: neither of them (words 0 and 1; the write was to word 2) */
    RUN({0, 'R', 192, 8}, {1, 'W', 208, 8}, {0, 'R', 192, 16});
    CHECK_EQ(st.cpu[0].false_sharing, 1);

    /* upgrade of a Shared copy invalidates the other; the loser's miss is true sharing
     * and downgrades the Modified copy with a writeback */
    RUN({0, 'R', 256, 8}, {1, 'R', 256, 8}, {0, 'W', 256, 8}, {1, 'R', 256, 8});
    CHECK_EQ(st.cpu[0].upgrades, 1);
    CHECK_EQ(st.cpu[0].invalidations, 1);
    CHECK_EQ(st.cpu[0].writebacks, 1);
    CHECK_EQ(st.cpu[1].true_sharing, 1);
    CHECK_EQ(st.total.bus_bytes, (3 + 1) * 64); /* 3 fills, 1 writeback, no upgrade */

    /* upgrade with no other copy left: CPU 1 replaced its copy */
    RUN({0, 'R', 320, 8}, {1, 'R', 320, 8}, {1, 'R', 320 + 4096, 8}, {0, 'W', 320, 8});
    CHECK_EQ(st.cpu[0].upgrades, 1);
    CHECK_EQ(st.cpu[0].invalidations, 0);

    /* Exclusive: silent write, then the Modified line's eviction writes it back */
    RUN({2, 'R', 384, 8}, {2, 'W', 384, 8}, {2, 'R', 384 + 4096, 8});
    CHECK_EQ(st.cpu[2].upgrades, 0);
    CHECK_EQ(st.cpu[2].invalidations, 0);
    CHECK_EQ(st.cpu[2].writebacks, 1);
    CHECK_EQ(st.cpu[2].hits, 1);

    /* write miss on a Modified line: invalidated, no writeback; it moves on */
    RUN({0, 'W', 448, 8}, {1, 'W', 448, 8}, {0, 'R', 448, 8});
    CHECK_EQ(st.cpu[1].invalidations, 1);
    CHECK_EQ(st.cpu[0].writebacks, 0);
    CHECK_EQ(st.cpu[1].writebacks, 1); /* CPU 0's read */
    CHECK_EQ(st.cpu[0].true_sharing, 1);

    /* after a sharing miss, a loss by replacement is a conflict */
    RUN({0, 'R', 512, 8}, {1, 'W', 520, 8}, {0, 'R', 512, 8}, {0, 'R', 512 + 4096, 8},
             {0, 'R', 512, 8});
    CHECK_EQ(st.cpu[0].false_sharing, 1);
    CHECK_EQ(st.cpu[0].conflict, 1);
    CHECK_EQ(st.cpu[0].cold, 2);

    /* invalidated after it left by replacement: the CPU did not lose it to the write */
    RUN({0, 'R', 576, 8}, {0, 'R', 576 + 4096, 8}, {1, 'W', 576, 8}, {0, 'R', 576, 8});
    CHECK_EQ(st.cpu[1].invalidations, 0);
    CHECK_EQ(st.cpu[0].conflict, 1);
    CHECK_EQ(st.cpu[0].true_sharing + st.cpu[0].false_sharing, 0);

    /* three CPUs: one write invalidates two copies, each then judged on its own word */
    RUN({0, 'R', 640, 8}, {2, 'R', 648, 8}, {1, 'W', 640, 8}, {0, 'R', 640, 8}, {2, 'R', 648, 8});
    CHECK_EQ(st.cpu[1].invalidations, 2);
    CHECK_EQ(st.cpu[0].true_sharing, 1);
    CHECK_EQ(st.cpu[2].false_sharing, 1);
    return check_done("test_sharing");
}
