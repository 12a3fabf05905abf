/* mkdata: the input files of `foresight bench aasfp`'s programs, deterministic for given
 * arguments.
 *
 *   mkdata frames FILE BYTES            4 KiB video frames for video (BYTES / 4096 of them)
 *   mkdata volume VOLUME HEADER N EDGE  an N^3 volume of one-byte voxels in EDGE^3 bricks
 *                                       for volvis, and its header ("volume N N N",
 *                                       "brick EDGE"); N a multiple of EDGE
 *   mkdata view FILE DX DY DZ           a view file for volvis ("direction DX DY DZ")
 *   mkdata fft FILE POINTS              POINTS complex doubles for oocfft: three tones and
 *                                       noise
 *   mkdata text FILE BYTES              BYTES of text lines for getc_sum
 *
 * Not one of the measured programs: it only writes their data (sequentially, stdio).
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t state = 0x9E3779B97F4A7C15u;

static uint64_t next(void)   /* xorshift64* */
{
    state ^= state >> 12;
    state ^= state << 25;
    state ^= state >> 27;
    return state * 0x2545F4914F6CDD1Du;
}

static FILE *create(const char *path)
{
    FILE *f = fopen(path, "w");
    if (f == NULL)
        perror(path);
    else
        setvbuf(f, NULL, _IOFBF, 1 << 20);
    return f;
}

static int finish(FILE *f, const char *path, int failed)
{
    if (ferror(f) || failed) {
        perror(path);
        fclose(f);
        return 1;
    }
    if (fclose(f) != 0) {
        perror(path);
        return 1;
    }
    return 0;
}

static int frames(const char *path, long bytes)
{
    FILE *f = create(path);
    if (f == NULL)
        return 1;
    unsigned char px[4096];
    int failed = 0;
    for (long i = 0; i < bytes / 4096 && !failed; i++) {
        /* a moving gradient with noise: frames differ, neighbours are alike */
        for (int j = 0; j < 4096; j++)
            px[j] = (unsigned char)((j / 64 + i) * 3 + (next() >> 61));
        failed = fwrite(px, 1, sizeof px, f) != sizeof px;
    }
    return finish(f, path, failed);
}

/* A phantom: a sphere of shells of different densities in transparent air, with noise. */
static unsigned char voxel(long x, long y, long z, long n)
{
    long dx = x - n / 2, dy = y - n / 2, dz = z - n / 2, r = n / 2;
    long r2 = dx * dx + dy * dy + dz * dz;
    uint32_t h = (uint32_t)(x * 73856093 ^ y * 19349663 ^ z * 83492791) * 2654435761u;
    if (r2 >= r * r)
        return (unsigned char)(h >> 28);
    long shell = r2 * 64 / (r * r);
    return (unsigned char)(shell % 8 < 3 ? 60 + shell * 2 + (h >> 27) : 24 + (h >> 29));
}

static int volume(const char *vpath, const char *hpath, long n, long edge)
{
    FILE *h = create(hpath);
    if (h == NULL)
        return 1;
    fprintf(h, "volume %ld %ld %ld\nbrick %ld\n", n, n, n, edge);
    if (finish(h, hpath, 0))
        return 1;
    FILE *f = create(vpath);
    if (f == NULL)
        return 1;
    unsigned char *brick = malloc((size_t)(edge * edge * edge));
    if (brick == NULL) {
        fprintf(stderr, "mkdata: out of memory\n");
        return 1;
    }
    int failed = 0;
    long nb = n / edge;
    for (long bz = 0; bz < nb; bz++)
        for (long by = 0; by < nb; by++)
            for (long bx = 0; bx < nb && !failed; bx++) {
                unsigned char *p = brick;
                for (long z = bz * edge; z < (bz + 1) * edge; z++)
                    for (long y = by * edge; y < (by + 1) * edge; y++)
                        for (long x = bx * edge; x < (bx + 1) * edge; x++)
                            *p++ = voxel(x, y, z, n);
                size_t size = (size_t)(edge * edge * edge);
                failed = fwrite(brick, 1, size, f) != size;
            }
    free(brick);
    return finish(f, vpath, failed);
}

static int fft(const char *path, long points)
{
    FILE *f = create(path);
    if (f == NULL)
        return 1;
    const double pi = 3.14159265358979323846;
    long f1 = 3, f2 = points / 8 + 5, f3 = points / 3;
    int failed = 0;
    for (long i = 0; i < points && !failed; i++) {
        double t = 2 * pi * (double)i / (double)points;
        double v[2] = {cos(t * f1) + 0.5 * sin(t * f2) + 0.25 * cos(t * f3) +
                           ((double)(next() >> 11) / 9007199254740992.0 - 0.5) * 0.2,
                       ((double)(next() >> 11) / 9007199254740992.0 - 0.5) * 0.2};
        failed = fwrite(v, sizeof v, 1, f) != 1;
    }
    return finish(f, path, failed);
}

static int text(const char *path, long bytes)
{
    FILE *f = create(path);
    if (f == NULL)
        return 1;
    int failed = 0;
    for (long i = 0; i < bytes && !failed; i++) {
        uint64_t r = next();
        int c = i % 73 == 72 || i == bytes - 1 ? '\n' : r % 7 == 0 ? ' ' : 'a' + (int)(r >> 59) % 26;
        failed = putc(c, f) == EOF;
    }
    return finish(f, path, failed);
}

static long number(const char *s)
{
    char *end;
    long v = strtol(s, &end, 10);
    return *s && !*end && v > 0 ? v : -1;
}

int main(int argc, char **argv)
{
    const char *kind = argc > 1 ? argv[1] : "";
    if (strcmp(kind, "frames") == 0 && argc == 4 && number(argv[3]) > 0)
        return frames(argv[2], number(argv[3]));
    if (strcmp(kind, "volume") == 0 && argc == 6 && number(argv[4]) > 0 &&
        number(argv[5]) > 0 && number(argv[4]) % number(argv[5]) == 0)
        return volume(argv[2], argv[3], number(argv[4]), number(argv[5]));
    if (strcmp(kind, "view") == 0 && argc == 6) {
        FILE *f = create(argv[2]);
        if (f == NULL)
            return 1;
        fprintf(f, "direction %s %s %s\n", argv[3], argv[4], argv[5]);
        return finish(f, argv[2], 0);
    }
    if (strcmp(kind, "fft") == 0 && argc == 4 && number(argv[3]) > 0)
        return fft(argv[2], number(argv[3]));
    if (strcmp(kind, "text") == 0 && argc == 4 && number(argv[3]) > 0)
        return text(argv[2], number(argv[3]));
    fprintf(stderr, "usage: mkdata frames FILE BYTES | volume VOLUME HEADER N EDGE | "
            "view FILE DX DY DZ | fft FILE POINTS | text FILE BYTES\n");
    return 2;
}
