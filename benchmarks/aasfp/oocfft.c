/* oocfft: an out-of-core, in-place radix-2 FFT (the paper's FFT 256K / 512K, Section
 * 6.1: the out-of-core FFT of Numerical Recipes, its files merged into one).
 *
 * An ordinary C program, as a user writes it.  The file holds N complex doubles (re,
 * im), N a power of two, and is read and written in 4 KiB records (256 points) with
 * pread and pwrite.  Decimation in frequency: while a butterfly's two points lie more
 * than a block apart, a pass reads the two records of each pair, combines them and
 * writes both back; the remaining stages work on one block of BLOCK points at a time
 * in memory (read, all stages, written back).  The spectrum is left in the file in
 * bit-reversed order; a last pass reads it and prints its energy (Parseval's check
 * against the input's), a checksum weighted by place and the strongest frequencies.  No
 * foresight calls, no pragmas.
 *
 * usage: oocfft FILE [BLOCK]   (BLOCK points in memory, a power of two >= 512;
 *                               default 1048576)
 */
#define _POSIX_C_SOURCE 200809L
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define RECORD 4096
#define PER_RECORD (RECORD / 16)   /* complex points a record */

static const double PI = 3.14159265358979323846;

static void read_record(int fd, double *rec, long r)
{
    if (pread(fd, rec, RECORD, (off_t)r * RECORD) != RECORD) {
        fprintf(stderr, "oocfft: short read of record %ld\n", r);
        exit(1);
    }
}

static void write_record(int fd, const double *rec, long r)
{
    if (pwrite(fd, rec, RECORD, (off_t)r * RECORD) != RECORD) {
        fprintf(stderr, "oocfft: short write of record %ld\n", r);
        exit(1);
    }
}

/* x = a + b, y = (a - b) w, for complex a at x, b at y. */
static void butterfly(double *x, double *y, double wr, double wi)
{
    double ar = x[0], ai = x[1], br = y[0], bi = y[1];
    double dr = ar - br, di = ai - bi;
    x[0] = ar + br;
    x[1] = ai + bi;
    y[0] = dr * wr - di * wi;
    y[1] = dr * wi + di * wr;
}

static unsigned long bit_reverse(unsigned long n, int bits)
{
    unsigned long r = 0;
    for (int b = 0; b < bits; b++, n >>= 1)
        r = r << 1 | (n & 1);
    return r;
}

int main(int argc, char **argv)
{
    if (argc < 2 || argc > 3) {
        fprintf(stderr, "usage: oocfft FILE [BLOCK]\n");
        return 2;
    }
    long block = argc > 2 ? atol(argv[2]) : 1L << 20;
    if (block < 2 * PER_RECORD || (block & (block - 1))) {
        fprintf(stderr, "oocfft: BLOCK must be a power of two of at least %d\n", 2 * PER_RECORD);
        return 2;
    }
    int fd = open(argv[1], O_RDWR);
    if (fd < 0) {
        perror(argv[1]);
        return 1;
    }
    off_t bytes = lseek(fd, 0, SEEK_END);
    long n = (long)(bytes / 16);
    int bits = 0;
    while ((1L << bits) < n)
        bits++;
    if (n < 2 * PER_RECORD || (1L << bits) != n || (off_t)n * 16 != bytes) {
        fprintf(stderr, "oocfft: %s must hold a power of two (>= %d) of complex doubles\n",
                argv[1], 2 * PER_RECORD);
        return 1;
    }
    if (block > n)
        block = n;

    double *a = malloc(RECORD), *b = malloc(RECORD), *step = malloc(RECORD);
    double *data = malloc((size_t)block * 16), *twiddle = malloc((size_t)block * 8);
    if (!a || !b || !step || !data || !twiddle) {
        fprintf(stderr, "oocfft: out of memory\n");
        return 1;
    }
    double energy_in = 0;
    int passes = 0;

    /* Out-of-core stages: the points of a butterfly are h apart, h > block / 2. */
    long h = n / 2;
    for (; 2 * h > block; h /= 2, passes++) {
        long hr = h / PER_RECORD;   /* records between a butterfly's two points */
        for (int j = 0; j < PER_RECORD; j++) {
            step[2 * j] = cos(-2 * PI * j / (2.0 * h));
            step[2 * j + 1] = sin(-2 * PI * j / (2.0 * h));
        }
        for (long g = 0; g < n / PER_RECORD; g += 2 * hr)
            for (long r = 0; r < hr; r++) {
                read_record(fd, a, g + r);
                read_record(fd, b, g + r + hr);
                if (passes == 0)
                    for (int j = 0; j < 2 * PER_RECORD; j++)
                        energy_in += a[j] * a[j] + b[j] * b[j];
                double angle = -2 * PI * (double)(r * PER_RECORD) / (2.0 * h);
                double cr = cos(angle), ci = sin(angle);
                for (int j = 0; j < PER_RECORD; j++) {
                    double wr = cr * step[2 * j] - ci * step[2 * j + 1];
                    double wi = cr * step[2 * j + 1] + ci * step[2 * j];
                    butterfly(&a[2 * j], &b[2 * j], wr, wi);
                }
                write_record(fd, a, g + r);
                write_record(fd, b, g + r + hr);
            }
    }

    /* In-core stages: each block of BLOCK points is an FFT of its own now. */
    for (long k = 0; k < block / 2; k++) {
        twiddle[2 * k] = cos(-2 * PI * k / block);
        twiddle[2 * k + 1] = sin(-2 * PI * k / block);
    }
    long records = block / PER_RECORD;
    for (long s = 0; s < n / PER_RECORD; s += records) {
        for (long r = 0; r < records; r++)
            read_record(fd, data + r * 2 * PER_RECORD, s + r);
        if (passes == 0)
            for (long j = 0; j < 2 * block; j++)
                energy_in += data[j] * data[j];
        for (long hh = h; hh >= 1; hh /= 2) {
            long stride = block / (2 * hh);
            for (long g = 0; g < block; g += 2 * hh)
                for (long k = 0; k < hh; k++)
                    butterfly(&data[2 * (g + k)], &data[2 * (g + k + hh)],
                              twiddle[2 * k * stride], twiddle[2 * k * stride + 1]);
        }
        for (long r = 0; r < records; r++)
            write_record(fd, data + r * 2 * PER_RECORD, s + r);
    }
    passes++;

    /* The spectrum: X[bit_reverse(i)] is at point i. */
    double energy_out = 0, weighted = 0, peak[3] = {-1, -1, -1};
    long peak_at[3] = {0, 0, 0};
    for (long r = 0; r < n / PER_RECORD; r++) {
        read_record(fd, a, r);
        for (int j = 0; j < PER_RECORD; j++) {
            long i = r * PER_RECORD + j;
            double m = a[2 * j] * a[2 * j] + a[2 * j + 1] * a[2 * j + 1];
            energy_out += m;
            weighted += m * (double)(i % 1000 + 1);
            if (m < peak[2])
                continue;
            long k = (long)bit_reverse((unsigned long)i, bits);
            for (int p = 0; p < 3; p++)
                if (m > peak[p] || (m == peak[p] && k < peak_at[p])) {
                    for (int q = 2; q > p; q--) {
                        peak[q] = peak[q - 1];
                        peak_at[q] = peak_at[q - 1];
                    }
                    peak[p] = m;
                    peak_at[p] = k;
                    break;
                }
        }
    }
    close(fd);
    printf("oocfft: %ld points, %ld in memory, passes %d; energy %.12e, Parseval error %.2e, "
           "checksum %.12e; peaks", n, block, passes, energy_out,
           fabs(energy_out / (double)n - energy_in) / energy_in, weighted / (double)n);
    for (int p = 0; p < 3; p++)
        printf(" %ld:%.6e", peak_at[p], sqrt(peak[p]));
    printf("\n");
    free(a);
    free(b);
    free(step);
    free(data);
    free(twiddle);
    return 0;
}
