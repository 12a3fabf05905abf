/* A client of `foresight cluster run`: sums its share of a disk of 64-bit words, mapped
 * shared, PASSES times (client c of n takes words [c*N/n, (c+1)*N/n)), then the whole
 * disk once.  Usage: scan DISK CLIENT CLIENTS PASSES */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    if (argc != 5) {
        fprintf(stderr, "usage: scan DISK CLIENT CLIENTS PASSES\n");
        return 2;
    }
    int fd = open(argv[1], O_RDONLY);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) {
        perror(argv[1]);
        return 1;
    }
    long c = atol(argv[2]), n = atol(argv[3]), passes = atol(argv[4]);
    long words = (long)(st.st_size / 8);
    const uint64_t *a = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0);
    if (a == MAP_FAILED) {
        perror("mmap");
        return 1;
    }
    long lo = c * words / n, hi = (c + 1) * words / n;
    uint64_t part = 0, all = 0;
    for (long p = 0; p < passes; p++)
        for (long i = lo; i < hi; i++)
            part += a[i] * (uint64_t)(p + 1);
    for (long i = 0; i < words; i++)
        all += a[i];
    printf("client %ld part %llu all %llu\n", c, (unsigned long long)part,
           (unsigned long long)all);
    return 0;
}
