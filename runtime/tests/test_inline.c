/* Where requests are issued (FORESIGHT_INLINE) and what decides it (mapping.c): the kind
 * of memory at a page, cached, and corrected when a prefetch finds the cache stale; with
 * inline issue a prefetch is made by the calling thread (nothing is queued, the pages are
 * resident at once), and "anon" queues file-mapped and one-page requests for the workers.
 * The workers start with the runtime, and in a forked child with its first queued
 * request. */
#include <dirent.h>
#include <sys/wait.h>

#include "check.h"
#include "internal.h"

/* The runtime's worker threads running in this process. */
static int workers(void)
{
    DIR *d = opendir("/proc/self/task");
    int n = 0;
    for (struct dirent *e; d != NULL && (e = readdir(d)) != NULL;) {
        char path[300], comm[32] = "";
        snprintf(path, sizeof path, "/proc/self/task/%s/comm", e->d_name);
        int fd = e->d_name[0] != '.' ? open(path, O_RDONLY) : -1;
        if (fd >= 0) {
            n += read(fd, comm, sizeof comm - 1) > 0 && strcmp(comm, "foresight-io\n") == 0;
            close(fd);
        }
    }
    if (d != NULL)
        closedir(d);
    return n;
}

static uintptr_t page_of(const void *p)
{
    return (uintptr_t)p >> FORESIGHT_PAGE_SHIFT;
}

int main(void)
{
    const size_t mib = 1u << 20, len = 16 * mib;
    char path[4096];
    int fd;
    const char *file = map_cold_file("inline.dat", len, path, &fd);
    CHECK(file != NULL);
    char *anon = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(anon != MAP_FAILED);
    memset(anon, 7, len);

    /* The kind of memory, with the mapping's bounds. */
    uintptr_t lo, hi;
    CHECK_EQ(fs_mapping_of(page_of(file + 5 * mib), &lo, &hi), FS_MEM_FILE);
    CHECK(lo <= page_of(file) && hi >= page_of(file + len - 1) + 1);
    CHECK_EQ(fs_mapping_of(page_of(anon + 3 * mib), &lo, &hi), FS_MEM_ANON);
    CHECK(lo <= page_of(anon) && hi >= page_of(anon + len - 1) + 1);
    char *gone = mmap(NULL, mib, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(gone != MAP_FAILED);
    munmap(gone, mib);
    fs_mapping_forget();
    CHECK_EQ(fs_mapping_kind(page_of(gone)), FS_MEM_NONE);
    CHECK_EQ(fs_mapping_kind(page_of(file)), FS_MEM_FILE);

    /* The workers run from start-up: no hint has to create a thread. */
    CHECK_EQ(workers(), fs_cfg.workers);
    size_t pushed = fs_queue_pushed(fs_queue_global);

    /* "anon" (measured in docs/decisions.md; the default is "none"): an anonymous request is
     * issued by this thread (counted before the call returns), and not queued. */
    fs_cfg.issue_inline = FS_INLINE_ANON;
    FORESIGHT_SITE(asite, "anon[i]");
    foresight_prefetch_at(&asite, anon + mib, mib);
    CHECK_EQ(asite.fs_stat[FS_PAGES_REQUESTED], 256);
    CHECK_EQ(asite.fs_stat[FS_PAGES_UNNECESSARY], 256); /* resident: memset above */
    CHECK_EQ(fs_queue_pushed(fs_queue_global), pushed);

    /* "all": a cold file range is handed to the kernel before the call returns. */
    fs_cfg.issue_inline = FS_INLINE_ALL;
    FORESIGHT_SITE(fsite, "file[i]");
    CHECK(resident_fraction(file, 4 * mib) < 0.05);
    foresight_prefetch_at(&fsite, file, 4 * mib);
    CHECK_EQ(fsite.fs_stat[FS_PAGES_ISSUED], 1024); /* counted by this thread, already */
    CHECK(wait_fraction(file, 4 * mib, 1.0, 0, 20));
    CHECK_EQ(fs_queue_pushed(fs_queue_global), pushed);

    /* "anon" again (the only setting that looks the kind up), in a child whose workers
     * start afresh: a file request goes to the workers, which start for it. */
    fs_cfg.issue_inline = FS_INLINE_ANON;
    pid_t child = fork();
    if (child == 0) {
        FORESIGHT_SITE(csite, "file[j]");
        foresight_prefetch_at(&csite, file + 12 * mib, mib);
        _exit(wait_fraction(file + 12 * mib, mib, 1.0, 0, 20) && workers() > 0 ? 0 : 1);
    }
    int status = -1;
    CHECK(child > 0 && waitpid(child, &status, 0) == child);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);

    /* And a one-page anonymous prefetch (a gather's) is queued too. */
    CHECK_EQ(fs_queue_pushed(fs_queue_global), pushed);
    FORESIGHT_SITE(gsite, "anon[b[i]]");
    foresight_prefetch_at(&gsite, anon + 10 * mib, 4096);
    CHECK_EQ(fs_queue_pushed(fs_queue_global), pushed + 1);

    /* A stale cache corrects itself.  Memory is mapped where the cache may still hold
     * the gap of `gone`, and a prefetch that finds it mapped drops the cache; then it is
     * unmapped, the cache still says anonymous, and a prefetch that finds it unmapped
     * drops the cache again.  A request for what the cache calls a gap is queued, so
     * the worker corrects it: wait for that. */
    char *temp = mmap(NULL, mib, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(temp != MAP_FAILED);
    FORESIGHT_SITE(tsite, "temp[i]");
    foresight_prefetch_at(&tsite, temp, 16 * 4096);
    for (int i = 0; i < 200 && fs_mapping_kind(page_of(temp)) != FS_MEM_ANON; i++)
        usleep(10000);
    CHECK_EQ(fs_mapping_kind(page_of(temp)), FS_MEM_ANON);
    munmap(temp, mib);
    CHECK_EQ(fs_mapping_kind(page_of(temp)), FS_MEM_ANON); /* stale, from the cache */
    foresight_prefetch_at(&tsite, temp + mib / 2, 16 * 4096); /* anonymous: inline */
    CHECK_EQ(fs_mapping_kind(page_of(temp)), FS_MEM_NONE);

    /* Hints into a gap the mapping cache knows, in a GiB where nothing is mapped (so the
     * residency table cannot keep marks there): one in 64 is queued, the rest are
     * dropped at once and counted as bad input. */
    const size_t gib = (size_t)1 << 30;
    char *reserve = mmap(NULL, 3 * gib, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                         -1, 0);
    CHECK(reserve != MAP_FAILED);
    munmap(reserve, 3 * gib);
    char *hole = (char *)(((uintptr_t)reserve + gib) & ~(uintptr_t)(gib - 1));
    fs_mapping_forget();
    CHECK_EQ(fs_mapping_kind(page_of(hole)), FS_MEM_NONE);
    size_t before = fs_queue_pushed(fs_queue_global);
    FORESIGHT_SITE(hsite, "past[i]");
    for (int i = 0; i < 640; i++)
        foresight_prefetch_at(&hsite, hole + 4096 * (i % 16), 4096);
    CHECK(fs_queue_pushed(fs_queue_global) - before <= 640 / 64 + 1);
    CHECK(hsite.fs_stat[FS_BAD_INPUT] >= 640 - 640 / 64 - 1);

    /* Data intact throughout. */
    CHECK_EQ(*(const uint64_t *)(file + 5 * mib), 5 * mib / 8);
    CHECK_EQ(anon[3 * mib], 7);
    close(fd);
    unlink(path);
    return check_done("inline");
}
