/* scan: summarise the headers of a file of camera frames.
 *
 * An ordinary C program, as a user writes it: the file is an array of fixed-size
 * records (a small header, then 256 x 256 8-bit pixels) mapped with mmap, and the scan
 * reads each frame's header fields to report exposure statistics.  No foresight calls,
 * no pragmas.
 *
 * usage: scan FRAMES-FILE
 */
#include <fcntl.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

struct frame {
    long id;
    int camera;
    float exposure;           /* milliseconds */
    double timestamp;         /* seconds */
    double gain;
    unsigned char pixels[256 * 256];
};

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: scan FRAMES-FILE\n");
        return 2;
    }
    int fd = open(argv[1], O_RDONLY);
    if (fd < 0) {
        perror(argv[1]);
        return 1;
    }
    struct stat st;
    if (fstat(fd, &st) != 0 || st.st_size == 0 || st.st_size % sizeof(struct frame) != 0) {
        fprintf(stderr, "scan: %s is not a whole number of %zu-byte frames\n", argv[1],
                sizeof(struct frame));
        return 1;
    }
    long n = (long)(st.st_size / (off_t)sizeof(struct frame));
    const struct frame *f = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0);
    if (f == MAP_FAILED) {
        perror("mmap");
        return 1;
    }
    close(fd);

    double total = 0.0, longest = 0.0, first = f[0].timestamp, last = f[0].timestamp;
    long overexposed = 0;
    for (long i = 0; i < n; i++) {
        double e = f[i].exposure * f[i].gain;
        total += e;
        if (e > longest)
            longest = e;
        if (e > 40.0)
            overexposed++;
        if (f[i].timestamp < first)
            first = f[i].timestamp;
        if (f[i].timestamp > last)
            last = f[i].timestamp;
    }
    printf("%ld frames over %.3f s\n", n, last - first);
    printf("mean exposure %.6f ms, longest %.6f ms, %ld overexposed\n", total / (double)n,
           longest, overexposed);
    return 0;
}
