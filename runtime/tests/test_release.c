/* Releases never lose data: private anonymous memory, private (copy-on-write) file
 * mappings and dirty shared file mappings keep every byte, and shared file data
 * reach the file.  Run with FORESIGHT_RELEASE=pageout, the most aggressive mode. */
#include "check.h"
#include "internal.h"

static void wait_released(struct foresight_site *s, unsigned long pages)
{
    for (int i = 0; i < 500; i++) {
        if (s->fs_stat[FS_PAGES_FREED] + s->fs_stat[FS_PAGES_DEACTIVATED] >= pages)
            return;
        usleep(10000);
    }
}

int main(void)
{
    CHECK_EQ(fs_cfg.release, FS_REL_PAGEOUT);
    size_t len = 8u << 20;

    /* Private anonymous memory. */
    FORESIGHT_SITE(anon_site, "anon");
    unsigned char *anon = malloc(len);
    for (size_t i = 0; i < len; i++)
        anon[i] = (unsigned char)(i * 13 + 1);
    foresight_release_at(&anon_site, anon, len);
    wait_released(&anon_site, anon_site.fs_stat[FS_PAGES_RELEASE_REQ]);
    size_t bad = 0;
    for (size_t i = 0; i < len; i++)
        bad += anon[i] != (unsigned char)(i * 13 + 1);
    CHECK_EQ(bad, 0);

    /* Release rounds inward: a partial page is never touched. */
    FORESIGHT_SITE(inward, "inward");
    foresight_release_at(&inward, anon + 1, 8190);          /* covers one whole page */
    CHECK_EQ(inward.fs_stat[FS_PAGES_RELEASE_REQ], ((uintptr_t)anon & 4095) ? 1 : 1);
    foresight_release_at(&inward, anon + 4097, 100);        /* no whole page */
    CHECK_EQ(inward.fs_stat[FS_PAGES_RELEASE_REQ], 1);

    char path[4096];
    snprintf(path, sizeof path, "%s/release.dat", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    int fd = make_cold_file(path, len);
    CHECK(fd >= 0);

    /* Private file mapping with copy-on-write changes: MADV_DONTNEED would revert them. */
    FORESIGHT_SITE(priv_site, "private file");
    uint64_t *priv = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
    for (size_t i = 0; i < len / 8; i += 2)
        priv[i] = ~(uint64_t)i;
    foresight_release_at(&priv_site, priv, len);
    wait_released(&priv_site, len / 4096);
    bad = 0;
    for (size_t i = 0; i < len / 8; i++)
        bad += priv[i] != ((i % 2) ? (uint64_t)i : ~(uint64_t)i);
    CHECK_EQ(bad, 0);
    munmap(priv, len);

    /* Shared file mapping, dirtied, released: the data reach the file, and the pages
     * are actually freed (written back first, then paged out). */
    FORESIGHT_SITE(shared_site, "shared file");
    uint64_t *shared = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    for (size_t i = 0; i < len / 8; i++)
        shared[i] = i * 3;
    foresight_release_at(&shared_site, shared, len);
    wait_released(&shared_site, len / 4096);
    CHECK(shared_site.fs_stat[FS_PAGES_FREED] > len / 4096 / 2);
    CHECK(resident_fraction(shared, len) < 0.5);
    munmap(shared, len);
    posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED); /* read back from the disk */
    uint64_t v;
    bad = 0;
    for (size_t i = 0; i < len / 8; i += 511) {
        if (pread(fd, &v, 8, (off_t)(i * 8)) != 8 || v != i * 3)
            bad++;
    }
    CHECK_EQ(bad, 0);
    close(fd);
    unlink(path);
    free(anon);
    return check_done("release");
}
