/* FORESIGHT_TRACE (set by ctest): two application threads fault on a cold file while
 * prefetches and releases are issued and the drain thread empties the fault rings; a
 * forked child that exits must not write or rename the parent's trace.  Afterwards the
 * trace has its header, F lines for the threads' pages, P and R lines, and the L line
 * last.  Run under ASan/UBSan and TSan. */
#include <pthread.h>
#include <sys/wait.h>

#include "check.h"
#include "internal.h"

#define LEN (8u << 20)

static const unsigned char *m;

static void *toucher(void *arg)
{
    size_t half = (size_t)(uintptr_t)arg;
    unsigned long s = 0;
    for (size_t off = half * LEN / 2; off < (half + 1) * LEN / 2; off += 4096)
        s += ((const volatile unsigned char *)m)[off];
    return (void *)(uintptr_t)s;
}

int main(void)
{
    const char *trace = getenv("FORESIGHT_TRACE");
    CHECK(trace != NULL && fs_tracing());
    if (trace == NULL || !fs_tracing())
        return check_done("trace");
    char tmp[4200], path[4096];
    snprintf(tmp, sizeof tmp, "%s.tmp", trace);
    snprintf(path, sizeof path, "%s/trace.dat", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    int fd = make_cold_file(path, LEN);
    CHECK(fd >= 0);
    m = mmap(NULL, LEN, PROT_READ, MAP_SHARED, fd, 0);
    CHECK(m != MAP_FAILED);
    madvise((void *)m, LEN, MADV_RANDOM); /* a major fault per page: no readahead */

    /* Prefetch the second half; then two threads fault through the first half and read
     * the (resident) second half. */
    foresight_prefetch(m + LEN / 2, LEN / 2);
    CHECK(wait_fraction(m + LEN / 2, LEN / 2, 1.0, 0, 20));
    pthread_t t[2];
    for (int i = 0; i < 2; i++)
        CHECK(pthread_create(&t[i], NULL, toucher, (void *)(uintptr_t)i) == 0);
    for (int i = 0; i < 2; i++)
        pthread_join(t[i], NULL);
    foresight_release(m, LEN / 2);
    CHECK(wait_fraction(m, LEN / 2, 0.5, 1, 20)); /* paged out: the release was carried out */

    pid_t pid = fork();
    if (pid == 0) {
        toucher((void *)0);
        exit(0); /* destructors run: the child must leave the parent's trace alone */
    }
    int status = 0;
    CHECK(waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0);
    CHECK(access(tmp, F_OK) == 0);
    CHECK(access(trace, F_OK) != 0);

    fs_trace_finish(); /* what the destructor does; it is idempotent */
    CHECK(!fs_tracing());
    CHECK(access(tmp, F_OK) != 0);
    FILE *f = fopen(trace, "r");
    CHECK(f != NULL);
    if (f == NULL)
        return check_done("trace");
    char line[256];
    size_t faults_in_map = 0, faults = 0, waited = 0, prefetched = 0, released = 0, lines = 0;
    bool unavailable = false, header = false, last_is_l = false;
    uintptr_t lo = (uintptr_t)m, hi = lo + LEN;
    while (fgets(line, sizeof line, f)) {
        lines++;
        unsigned long a, n, res, site_line;
        unsigned long long ts, wait;
        char mode[16];
        last_is_l = line[0] == 'L';
        if (lines == 1)
            header = strncmp(line, "# foresight trace 1 page=4096 pid=", 34) == 0 &&
                     atol(line + 34) == (long)getpid();
        else if (strncmp(line, "# faults unavailable: ", 22) == 0)
            unavailable = true;
        else if (sscanf(line, "F %lx %llu %llu", &a, &ts, &wait) == 3) {
            faults++;
            faults_in_map += a >= lo && a < hi && a % 4096 == 0 && ts > 0;
            waited += wait > 0 && wait < ts;
        } else if (sscanf(line, "P %lx %lu %lu %llu %lu", &a, &n, &res, &ts, &site_line) == 5) {
            CHECK(a >= lo && a + n * 4096 <= hi && res <= n);
            CHECK_EQ(site_line, 0); /* foresight_prefetch: no site */
            prefetched += n;
        } else if (sscanf(line, "R %lx %lu %llu %lu %15s", &a, &n, &ts, &site_line, mode) == 5) {
            CHECK(a >= lo && a + n * 4096 <= lo + LEN / 2);
            CHECK_EQ(site_line, 0);
            CHECK(strcmp(mode, "pageout") == 0); /* FORESIGHT_RELEASE=pageout (CMakeLists.txt) */
            released += n;
        } else if (line[0] != 'L') {
            fprintf(stderr, "unexpected trace line: %s", line);
            CHECK(0);
        }
    }
    fclose(f);
    CHECK(header);
    CHECK(last_is_l);
    CHECK_EQ(prefetched, LEN / 2 / 4096);
    CHECK_EQ(released, LEN / 2 / 4096);
    if (unavailable) {
        fprintf(stderr, "trace: perf_event_open unavailable here; fault lines not checked\n");
    } else {
        /* Every page of the first half faulted in one thread or the other; the child's
         * faults (another process) are not in the parent's trace. */
        CHECK(faults_in_map >= LEN / 2 / 4096);
        CHECK(faults_in_map <= LEN / 4096);
        CHECK(faults <= faults_in_map + 64);
        CHECK(waited >= faults / 2); /* a fault's wait: its start was seen */
    }
    unlink(trace);
    unlink(path);
    return check_done("trace");
}
