/* FORESIGHT_LOOKAHEAD=measured: timed prefetches measure latency and bandwidth, and the
 * look-ahead compiled loops ask for becomes their product, within [2 blocks, limit / 32]. */
#include "check.h"
#include "internal.h"

int main(void)
{
    CHECK(fs_cfg.lookahead_measured);
    CHECK_EQ(foresight_lookahead_bytes(), 4u << 20); /* nothing measured yet: the default */

    /* Untouched anonymous memory is "missing": every 64 KiB prefetch reaches a worker,
     * and one in 16 is read synchronously and timed. */
    size_t len = 256u << 20, block = 64u << 10;
    char *a = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(a != MAP_FAILED);
    FORESIGHT_SITE(site, "a[i]");
    unsigned long samples = 0;
    for (size_t off = 0; off < len && samples < 16; off += block) {
        foresight_prefetch_at(&site, a + off, block);
        usleep(200); /* one request at a time, so none is dropped or merged */
        double lat, bw;
        size_t ahead;
        fs_distance_report(&lat, &bw, &samples, &ahead);
    }
    double lat_us, mib_s;
    size_t ahead;
    for (int i = 0; i < 200; i++) {
        fs_distance_report(&lat_us, &mib_s, &samples, &ahead);
        if (samples >= 16)
            break;
        usleep(10000);
    }
    CHECK(samples >= 16);
    CHECK(lat_us > 0 && mib_s > 0);
    size_t want = (size_t)(lat_us * 1e-6 * mib_s * 1048576.0);
    size_t lo = 2 * block, hi = fs_budget_limit_bytes() / 32;
    size_t expect = want < lo ? lo : want > hi ? hi : want;
    CHECK(ahead == foresight_lookahead_bytes());
    /* The running averages may move by a sample between the two reads: within 50%. */
    CHECK(ahead >= lo && ahead <= hi);
    CHECK(ahead * 2 >= expect && ahead <= expect * 2);
    return check_done("distance");
}
