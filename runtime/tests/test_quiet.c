/* Site quieting: a site whose filtered batches keep finding their pages resident may
 * skip stretches of hints (foresight_site_quiet, or _take in chunks), twice as long each time; a stale
 * page ends it; skipped calls are counted as considered, filtered and quieted. */
#include "check.h"
#include "internal.h"

int main(void)
{
    size_t len = 1u << 20;
    char *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    memset(m, 1, len);
    FORESIGHT_SITE(site, "m[x]");
    CHECK(!foresight_site_quiet(&site));
    foresight_prefetch_at(&site, m, 4096); /* marks the page (resident already) */
    for (int i = 0; i < 100 && !foresight__marked(foresight__directory(), m, 4096); i++)
        usleep(10000);
    unsigned long period = fs_cfg.verify_period, calls = 0;
    /* One whole batch filtered and verified resident: quiet for one period. */
    while (!foresight_site_quiet(&site) && calls < 4 * period) {
        foresight_prefetch_at(&site, m, 8);
        calls++;
    }
    CHECK(calls >= period && calls <= period + 2);
    unsigned long skipped = 1;
    while (foresight_site_quiet(&site))
        skipped++;
    CHECK_EQ(skipped, period);
    /* The next batch doubles the stretch. */
    calls = 0;
    while (!foresight_site_quiet(&site) && calls < 4 * period) {
        foresight_prefetch_at(&site, m, 8);
        calls++;
    }
    /* Taken in chunks of at most 100 (as a hot loop counts them down in a local). */
    skipped = 1;
    for (unsigned long n; (n = foresight_site_quiet_take(&site, 100)) != 0; skipped += n)
        CHECK(n <= 100);
    CHECK_EQ(skipped, 2 * period);

    /* A call that reaches the library (an unmarked page) ends the quiet streak. */
    foresight_prefetch_at(&site, m + (512u << 10), 4096);
    calls = 0;
    while (!foresight_site_quiet(&site) && calls < 4 * period) {
        foresight_prefetch_at(&site, m, 8);
        calls++;
    }
    CHECK(calls >= period); /* no quiet before a whole clean batch */
    skipped = 1;
    while (foresight_site_quiet(&site))
        skipped++;
    CHECK_EQ(skipped, period); /* back to one period */

    unsigned long c[FS_NSTAT];
    fs_site_counts(&site, c);
    CHECK_EQ(c[FS_QUIETED], 4 * period);
    CHECK(c[FS_FILTERED] >= c[FS_QUIETED] + 3 * period);
    munmap(m, len);
    return check_done("quiet");
}
