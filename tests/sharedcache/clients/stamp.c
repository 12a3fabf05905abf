/* A client of `foresight cluster run` that writes: client c of n stamps every 64-bit
 * word of its share of the disk with (c + 1) << 56 | word index, through a shared
 * mapping, msyncs, then reads its share back and prints how many words hold the stamp.
 * Shares are whole 64 KiB blocks: each client has a page cache of its own, so two
 * clients writing one page would each write the whole page back, the last one winning.
 * Usage: stamp DISK CLIENT CLIENTS */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: stamp DISK CLIENT CLIENTS\n");
        return 2;
    }
    int fd = open(argv[1], O_RDWR);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) {
        perror(argv[1]);
        return 1;
    }
    long c = atol(argv[2]), n = atol(argv[3]);
    long words = (long)(st.st_size / 8);
    uint64_t *a = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (a == MAP_FAILED) {
        perror("mmap");
        return 1;
    }
    const long block = 65536 / 8, blocks = words / block;
    long lo = c * blocks / n * block, hi = (c + 1) * blocks / n * block, good = 0;
    for (long i = lo; i < hi; i++)
        a[i] = (uint64_t)(c + 1) << 56 | (uint64_t)i;
    if (msync(a, (size_t)st.st_size, MS_SYNC) != 0) {
        perror("msync");
        return 1;
    }
    for (long i = lo; i < hi; i++)
        good += a[i] == ((uint64_t)(c + 1) << 56 | (uint64_t)i);
    printf("client %ld stamped %ld of %ld\n", c, good, hi - lo);
    return 0;
}
