/*
 * test_timing.c — the optional L1 and the time model (sim.c; rules in
 * foresight_cachesim.h), on crafted traces.  A 4 KiB direct-mapped L2 of 64-byte lines,
 * 1 KiB pages, so a line and the line 4 KiB above it collide in the L2; a 256-byte
 * 2-way L1 (two sets).  Time at 1000 MHz (a cycle is 1 ns), 10-cycle L2 hits, 100 ns
 * from memory, 150 ns from another cache, a bus of 640 MB/s (a line holds it 100 ns, an
 * upgrade 12.5 ns).  It proves:
 * - an L1 hit goes no further: the L2's counters and LRU order do not see it; a read
 *   after the L2 lost the line (replacement or invalidation) misses the L1 too
 *   (inclusion); a write to a Shared line in the L1 is the L2's upgrade;
 * - a lone CPU's phase is its cycles plus latencies; a miss on a line another CPU holds
 *   Modified costs the remote latency; stalls are split by class;
 * - the bus: a lone CPU never waits for its own transactions; a phase whose transfers
 *   exceed the CPUs' own time is the bus's time, and each CPU waits for the others'
 *   (M/D/1), charged to the stalling class;
 * - barriers end phases: the run's time is their sum, a CPU waiting at a barrier idles;
 *   cs_reset_stats clears the time; without time every time counter is 0, and the
 *   counters are those of a run without an L1 where the L1 is absent;
 * - prefetches: one to a page no CPU touched is dropped, one to a line the L2 holds
 *   fetches nothing; a fill is no miss, lands in the L2 and not the L1, moves a line on
 *   the bus; a reference before it arrives stalls for the rest (late), one after it
 *   does not; a fifth in flight waits for the oldest.
 */
#include <stdint.h>

#include "check.h"
#include "foresight_cachesim.h"

static struct cs_config cfg_of(unsigned cpus, int l1, int timed)
{
    struct cs_config c = {.cpus = cpus, .l2_bytes = 4096, .assoc = 1, .line = 64,
                          .page = 1024, .policy = CS_PC};
    if (l1)
        c.l1_bytes = 256, c.l1_assoc = 2;
    if (timed)
        c.mhz = 1000, c.l2_cycles = 10, c.mem_ns = 100, c.remote_ns = 150, c.bus_mbs = 640;
    return c;
}

static int near(double a, double b)
{
    double d = a > b ? a - b : b - a;
    return d <= 1e-6 * (b > 1 ? b : 1);
}

#define CHECK_NEAR(a, b) CHECK(near((a), (b)))

int main(void)
{
    struct cs_stats st;
    char err[128];

    /* L1: a reread hits the L1; the L2 sees one reference */
    {
        struct cs_config c = cfg_of(1, 1, 0);
        struct cs_sim *s = cs_create(&c, err, sizeof err);
        CHECK(s != NULL);
        CHECK_EQ(cs_access(s, 0, 0, 8, 0), 0);
        CHECK_EQ(cs_access(s, 0, 8, 8, 0), 0);
        CHECK_EQ(cs_access(s, 0, 16, 8, 1), 0); /* Exclusive: the L2's write hit */
        CHECK_EQ(cs_access(s, 0, 24, 8, 1), 0); /* Modified now: an L1 hit */
        cs_stats(s, &st);
        CHECK_EQ(st.total.refs, 4);
        CHECK_EQ(st.total.l1_hits, 2);
        CHECK_EQ(st.total.hits, 1);
        CHECK_EQ(st.total.cold, 1);
        /* the line 4 KiB above collides in the L2: the first leaves the L1 with it */
        CHECK_EQ(cs_access(s, 0, 4096, 8, 0), 0);
        CHECK_EQ(cs_access(s, 0, 0, 8, 0), 0);
        cs_stats(s, &st);
        CHECK_EQ(st.total.l1_hits, 2);
        CHECK_EQ(st.total.conflict, 1);
        CHECK_EQ(st.total.writebacks, 1); /* the Modified line's eviction */
        cs_free(s);
    }

    /* L1: another CPU's write invalidates the L1 copy; a write to a Shared line in the
     * L1 is an upgrade */
    {
        struct cs_config c = cfg_of(2, 1, 0);
        struct cs_sim *s = cs_create(&c, err, sizeof err);
        CHECK(s != NULL);
        CHECK_EQ(cs_access(s, 0, 0, 8, 0), 0);
        CHECK_EQ(cs_access(s, 1, 0, 8, 1), 0);
        CHECK_EQ(cs_access(s, 0, 0, 8, 0), 0); /* true sharing, not an L1 hit */
        cs_stats(s, &st);
        CHECK_EQ(st.cpu[0].l1_hits, 0);
        CHECK_EQ(st.cpu[0].true_sharing, 1);
        CHECK_EQ(cs_access(s, 0, 0, 8, 1), 0); /* Shared (CPU 1 kept a copy): upgrade */
        cs_stats(s, &st);
        CHECK_EQ(st.cpu[0].upgrades, 1);
        CHECK_EQ(st.cpu[0].hits, 1);
        CHECK_EQ(st.cpu[0].l1_hits, 0);
        CHECK_EQ(cs_access(s, 1, 0, 8, 0), 0); /* CPU 1's copy was invalidated */
        cs_stats(s, &st);
        CHECK_EQ(st.cpu[1].l1_hits, 0);
        CHECK_EQ(st.cpu[1].true_sharing, 1);
        cs_free(s);
    }

    /* the same accesses without the L1: the L2 sees every reference */
    {
        struct cs_config c = cfg_of(1, 0, 0);
        struct cs_sim *s = cs_create(&c, err, sizeof err);
        CHECK(s != NULL);
        for (int i = 0; i < 4; i++)
            CHECK_EQ(cs_access(s, 0, (uint64_t)i * 8, 8, i >= 2), 0);
        cs_stats(s, &st);
        CHECK_EQ(st.total.l1_hits, 0);
        CHECK_EQ(st.total.hits, 3);
        CHECK_EQ(st.total.stall_ns[CS_STALL_COLD], 0);
        CHECK_EQ(st.time_ns, 0);
        CHECK_EQ(st.total.busy_ns, 0);
        CHECK_EQ(st.total.idle_ns, 0);
        CHECK_EQ(st.bus_busy_ns, 0);
        cs_free(s);
    }

    /* time, one CPU: 2 lines cold (100 ns each), 2 L1 hits, 1 L2 hit after the L1 lost
     * it (its set holds two lines: a third evicts the first), 7 accesses */
    {
        struct cs_config c = cfg_of(1, 1, 1);
        struct cs_sim *s = cs_create(&c, err, sizeof err);
        CHECK(s != NULL);
        CHECK_EQ(cs_access(s, 0, 0, 8, 0), 0);    /* cold, L1 set 0 */
        CHECK_EQ(cs_access(s, 0, 8, 8, 0), 0);    /* L1 hit */
        CHECK_EQ(cs_access(s, 0, 128, 8, 0), 0);  /* cold, L1 set 0 */
        CHECK_EQ(cs_access(s, 0, 136, 8, 0), 0);  /* L1 hit */
        CHECK_EQ(cs_access(s, 0, 256, 8, 0), 0);  /* cold, L1 set 0: line 0 leaves it */
        CHECK_EQ(cs_access(s, 0, 0, 8, 0), 0);    /* L2 hit: 10 cycles */
        CHECK_EQ(cs_access(s, 0, 16, 8, 0), 0);   /* L1 hit */
        cs_stats(s, &st);
        CHECK_EQ(st.total.cold, 3);
        CHECK_EQ(st.total.l1_hits, 3);
        CHECK_EQ(st.total.hits, 1);
        CHECK_NEAR(st.total.busy_ns, 7);
        CHECK_NEAR(st.total.stall_ns[CS_STALL_L2], 10);
        /* three misses hold the bus 300 ns; a lone CPU never waits for its own */
        CHECK_NEAR(st.bus_busy_ns, 300);
        CHECK_NEAR(st.total.stall_ns[CS_STALL_COLD], 300);
        CHECK_NEAR(st.time_ns, 317);
        CHECK_NEAR(st.time_ns, st.total.busy_ns + st.total.stall_ns[CS_STALL_L2] +
                                   st.total.stall_ns[CS_STALL_COLD]);
        CHECK_NEAR(st.total.idle_ns, 0);
        cs_free(s);
    }

    /* time: the remote latency, the upgrade, barriers and idle time */
    {
        struct cs_config c = cfg_of(2, 0, 1);
        c.bus_mbs = 64000000; /* a bus too fast to wait for: latencies alone */
        struct cs_sim *s = cs_create(&c, err, sizeof err);
        CHECK(s != NULL);
        CHECK_EQ(cs_access(s, 1, 0, 8, 1), 0); /* CPU 1: cold write, Modified */
        cs_barrier(s);
        CHECK_EQ(cs_access(s, 0, 0, 8, 0), 0); /* from CPU 1's cache: 150 ns */
        CHECK_EQ(cs_access(s, 0, 0, 8, 1), 0); /* Shared: an upgrade */
        cs_barrier(s);
        cs_stats(s, &st);
        CHECK_EQ(st.cpu[0].true_sharing, 0);
        CHECK_EQ(st.cpu[0].cold, 1);
        CHECK_EQ(st.cpu[0].upgrades, 1);
        CHECK(st.cpu[0].stall_ns[CS_STALL_COLD] >= 150 &&
              st.cpu[0].stall_ns[CS_STALL_COLD] < 150.01);
        CHECK(st.cpu[0].stall_ns[CS_STALL_UPGRADE] > 0 &&
              st.cpu[0].stall_ns[CS_STALL_UPGRADE] < 0.01);
        /* phase 1: CPU 1 alone (1 + 100 ns), CPU 0 idles; phase 2 the reverse */
        CHECK(st.cpu[0].idle_ns >= 101 && st.cpu[0].idle_ns < 101.01);
        CHECK(st.cpu[1].idle_ns >= 152 && st.cpu[1].idle_ns < 152.02);
        CHECK(st.time_ns >= 253 && st.time_ns < 253.03);
        CHECK_EQ(st.barriers, 2);
        cs_reset_stats(s);
        cs_stats(s, &st);
        CHECK_EQ(st.time_ns, 0);
        CHECK_EQ(st.bus_busy_ns, 0);
        CHECK_EQ(st.total.idle_ns, 0);
        cs_free(s);
    }

    /* time: a bus-bound phase.  Two CPUs, each missing 64 lines cold in a row: 128 line
     * transfers hold the bus 12,800 ns, more than either CPU's own 64 * (1 + 100) */
    {
        struct cs_config c = cfg_of(2, 0, 1);
        c.l2_bytes = 1 << 16;
        struct cs_sim *s = cs_create(&c, err, sizeof err);
        CHECK(s != NULL);
        for (int i = 0; i < 64; i++) {
            CHECK_EQ(cs_access(s, 0, (uint64_t)i * 64, 8, 0), 0);
            CHECK_EQ(cs_access(s, 1, (1u << 20) + (uint64_t)i * 64, 8, 0), 0);
        }
        cs_barrier(s);
        cs_stats(s, &st);
        CHECK_NEAR(st.bus_busy_ns, 12800);
        /* the bus sets the phase: at T = 12,800 the other CPU's 6,400 ns are rho 0.5, a
         * wait of 100 * 0.5 / (2 * 0.5) = 50 ns a miss, each CPU's own time 64 * (1 + 100
         * + 50) = 9,664, under T: so T is the bus's */
        CHECK_NEAR(st.time_ns, 12800);
        CHECK_NEAR(st.cpu[0].stall_ns[CS_STALL_COLD], 64 * 150);
        CHECK_NEAR(st.cpu[1].stall_ns[CS_STALL_COLD], 64 * 150);
        CHECK_NEAR(st.cpu[0].idle_ns, 12800 - 9664);
        cs_free(s);
    }

    /* prefetches */
    {
        struct cs_config c = cfg_of(1, 1, 1);
        c.l2_bytes = 1 << 16;
        struct cs_sim *s = cs_create(&c, err, sizeof err);
        CHECK(s != NULL);
        CHECK_EQ(cs_prefetch(s, 0, 0), 0); /* page 0: no CPU touched it */
        cs_stats(s, &st);
        CHECK_EQ(st.total.prefetch_drops, 1);
        CHECK_EQ(cs_access(s, 0, 0, 8, 0), 0);  /* maps page 0 (lines 0..15) */
        CHECK_EQ(cs_prefetch(s, 0, 8), 0);      /* its line is in the L2: nothing */
        CHECK_EQ(cs_prefetch(s, 0, 64), 0);     /* line 1: a fill, 100 ns on its way */
        cs_stats(s, &st);
        CHECK_EQ(st.total.prefetches, 3);
        CHECK_EQ(st.total.prefetch_fills, 1);
        CHECK_EQ(st.total.bus_bytes, 2 * 64);
        CHECK_EQ(cs_access(s, 0, 64, 8, 0), 0); /* at once: a late L2 hit, no miss */
        cs_stats(s, &st);
        CHECK_EQ(st.total.misses, 1);
        CHECK_EQ(st.total.hits, 1);
        CHECK_EQ(st.total.l1_hits, 0);
        /* it arrives 100 ns after its issue (at 3 ns); the access came at 4 ns */
        CHECK_NEAR(st.total.stall_ns[CS_STALL_LATE], 99);
        /* a prefetch far enough ahead: 200 accesses (200 ns) before its use */
        CHECK_EQ(cs_prefetch(s, 0, 128), 0);
        for (int i = 0; i < 200; i++)
            CHECK_EQ(cs_access(s, 0, 0, 8, 0), 0);
        CHECK_EQ(cs_access(s, 0, 128, 8, 0), 0);
        cs_stats(s, &st);
        CHECK_NEAR(st.total.stall_ns[CS_STALL_LATE], 99);
        CHECK_EQ(st.total.misses, 1);
        /* five fills in a row: the fifth waits for the first (99 ns more, less the 4
         * cycles of the prefetches between) */
        for (int i = 3; i < 8; i++)
            CHECK_EQ(cs_prefetch(s, 0, (uint64_t)i * 64), 0);
        cs_stats(s, &st);
        CHECK_EQ(st.total.prefetch_fills, 7);
        CHECK_NEAR(st.total.stall_ns[CS_STALL_LATE], 99 + 96);
        /* the CPU's own 527 ns without waits (212 cycles, two L2 hits, a miss, 195 ns
         * late), and 800 ns of bus: its miss waits behind its seven fills (700 ns, which
         * never stall it), W = 50 rho / (1 - rho) at rho = 700 / T, so
         * T = 527 + 35000 / (T - 700): about 819.6 ns, the CPU's own, no idle */
        const double t = st.time_ns, w = 35000 / (t - 700);
        CHECK(t > 800 && t < 830);
        CHECK_NEAR(t, 527 + w);
        CHECK_NEAR(st.total.stall_ns[CS_STALL_COLD], 100 + w);
        CHECK(st.total.idle_ns < 1e-6);
        cs_free(s);
    }

    /* a prefetch's fill evicts a line from the L2 and so from the L1 (inclusion); a
     * fill of a line whose earlier fill is still in flight replaces that flight */
    {
        struct cs_config c = cfg_of(1, 1, 1);
        struct cs_sim *s = cs_create(&c, err, sizeof err);
        CHECK(s != NULL);
        CHECK_EQ(cs_access(s, 0, 0, 8, 0), 0);    /* line 0 in the L2 and the L1 */
        CHECK_EQ(cs_access(s, 0, 4096, 8, 0), 0); /* maps the page of the line above */
        CHECK_EQ(cs_access(s, 0, 64, 8, 0), 0);   /* (line 64 of the L2: 4096 left it) */
        CHECK_EQ(cs_access(s, 0, 0, 8, 0), 0);    /* line 0 again: back in the L2 */
        cs_stats(s, &st);
        const uint64_t misses = st.total.misses;
        CHECK_EQ(cs_prefetch(s, 0, 4096), 0);     /* evicts line 0 from the L2 */
        CHECK_EQ(cs_access(s, 0, 0, 8, 0), 0);    /* so not an L1 hit: a miss */
        cs_stats(s, &st);
        CHECK_EQ(st.total.misses, misses + 1);
        CHECK_EQ(st.total.prefetch_fills, 1);
        /* 4096's line left the L2 again (line 0 took its set): prefetched anew, one
         * flight of it, not two */
        const double late0 = st.total.stall_ns[CS_STALL_LATE];
        CHECK_EQ(cs_prefetch(s, 0, 4096), 0);
        CHECK_EQ(cs_access(s, 0, 4096, 8, 0), 0);
        CHECK_EQ(cs_access(s, 0, 8, 8, 0), 0);    /* evicts it: a miss */
        CHECK_EQ(cs_access(s, 0, 4096, 8, 0), 0); /* a miss, no flight left to stall on */
        cs_stats(s, &st);
        CHECK_NEAR(st.total.stall_ns[CS_STALL_LATE] - late0, 99);
        cs_free(s);
    }

    /* bad L1 and time configurations */
    {
        struct cs_config c = cfg_of(1, 1, 0);
        c.l1_bytes = 96;
        CHECK(cs_create(&c, err, sizeof err) == NULL);
        c.l1_bytes = 256, c.l1_assoc = 3;
        CHECK(cs_create(&c, err, sizeof err) == NULL);
        c = cfg_of(1, 0, 1);
        c.bus_mbs = 0;
        CHECK(cs_create(&c, err, sizeof err) == NULL);
    }
    return check_done("test_timing");
}
