/* trap: loads from a mapped file, a page at a time backward, then a second mapping after munmap */
/* inputs: this file built with -DMAKE_INPUTS, run first */
#define _POSIX_C_SOURCE 200809L
#include <sys/mman.h>
#include "corpus.h"

#define PAGE 4096
#define PAGES 1024

static uint64_t pages_backward(const char *path)
{
    int fd = open(path, O_RDONLY);
    if (fd < 0)
        exit(1);
    const unsigned char *m = mmap(NULL, (size_t)PAGES * PAGE, PROT_READ, MAP_SHARED, fd, 0);
    close(fd);
    if (m == MAP_FAILED)
        exit(1);
    uint64_t h = CHECKSUM_START;
    for (long p = PAGES - 1; p >= 0; p--)
        h = checksum(h, m + p * PAGE + (p % 64), 8);
    munmap((void *)m, (size_t)PAGES * PAGE);
    return h;
}

#ifdef MAKE_INPUTS
/* The inputs, made in the run's directory before the measured run. */
int main(void)
{
    make_records("map1.dat", PAGES, PAGE, 53);
    make_records("map2.dat", PAGES, PAGE, 59);
    return 0;
}
#else
int main(void)
{
    printf("map1 %016llx\n", (unsigned long long)pages_backward("map1.dat"));
    printf("map2 %016llx\n", (unsigned long long)pages_backward("map2.dat"));
    return 0;
}
#endif
