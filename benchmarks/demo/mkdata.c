/* mkdata: the input files of the demo programs, deterministic for a given size.
 *
 *   mkdata frames FILE BYTES          camera frames for scan (as many as fit in BYTES)
 *   mkdata matrix MATRIX VECTOR BYTES a sparse matrix for spmv (6 nonzeros a row at
 *                                     random columns, about one per 4 pages of the
 *                                     vector) and a vector, BYTES in all
 *
 * Not one of the demo programs: it only writes their data (sequentially, with stdio).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct frame {   /* as in scan.c */
    long id;
    int camera;
    float exposure;
    double timestamp;
    double gain;
    unsigned char pixels[256 * 256];
};

enum { NNZ_PER_ROW = 6 };

static uint64_t state = 0x9E3779B97F4A7C15u;

static uint64_t next(void)   /* xorshift64* */
{
    state ^= state >> 12;
    state ^= state << 25;
    state ^= state >> 27;
    return state * 0x2545F4914F6CDD1Du;
}

static int put(const void *p, size_t size, size_t n, FILE *f)
{
    return fwrite(p, size, n, f) == n ? 0 : -1;
}

static int frames(FILE *out, long bytes)
{
    static struct frame fr;
    long n = bytes / (long)sizeof fr;
    for (long i = 0; i < n; i++) {
        fr.id = i;
        fr.camera = (int)(next() % 8);
        fr.exposure = (float)(5 + next() % 400) * 0.1f;
        fr.timestamp = 1.7e9 + (double)i * 0.04 + (double)(next() % 1000) * 1e-6;
        fr.gain = 1.0 + (double)(next() % 100) * 0.01;
        for (size_t k = 0; k < sizeof fr.pixels; k += 4096)
            fr.pixels[k] = (unsigned char)next();
        if (put(&fr, sizeof fr, 1, out) != 0)
            return -1;
    }
    return 0;
}

static int cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

static int matrix(FILE *mf, FILE *vf, long bytes)
{
    /* cols * 8 + rows * (8 + 6 * 12) + 32 = bytes, one nonzero per 4 pages of x */
    long nnz = bytes / 8 / 512 / 4;
    long rows = nnz / NNZ_PER_ROW;
    nnz = rows * NNZ_PER_ROW;
    long cols = (bytes - 32 - rows * (8 + NNZ_PER_ROW * 12)) / 8;
    if (rows < 1 || cols < 1 || cols > 0x7fffffffL) {
        fprintf(stderr, "mkdata: %ld bytes is no size for a matrix\n", bytes);
        return -1;
    }
    long head[3] = {rows, cols, nnz};
    if (put(head, sizeof(long), 3, mf) != 0)
        return -1;
    for (long i = 0; i <= rows; i++) {
        long start = i * NNZ_PER_ROW;
        if (put(&start, sizeof start, 1, mf) != 0)
            return -1;
    }
    int *col = malloc((size_t)nnz * sizeof *col);
    if (col == NULL)
        return -1;
    for (long i = 0; i < rows; i++) {
        for (int k = 0; k < NNZ_PER_ROW; k++)
            col[i * NNZ_PER_ROW + k] = (int)(next() % (uint64_t)cols);
        qsort(col + i * NNZ_PER_ROW, NNZ_PER_ROW, sizeof *col, cmp_int);
    }
    int rc = 0;
    for (long k = 0; rc == 0 && k < nnz; k++) {
        double v = (double)(next() % 2001) * 0.001 - 1.0;
        rc = put(&v, sizeof v, 1, mf);
    }
    if (rc == 0)
        rc = put(col, sizeof *col, (size_t)nnz, mf);
    free(col);
    static double x[4096];
    for (long j = 0; rc == 0 && j < cols; j += 4096) {
        long n = cols - j < 4096 ? cols - j : 4096;
        for (long k = 0; k < n; k++)
            x[k] = (double)((j + k) % 1000003) * 1e-6;
        rc = put(x, sizeof *x, (size_t)n, vf);
    }
    return rc;
}

static FILE *create(const char *path)
{
    FILE *f = fopen(path, "wb");
    if (f == NULL)
        perror(path);
    return f;
}

static int finish(FILE *f, const char *path, int rc)
{
    if (fclose(f) != 0 || rc != 0) {
        fprintf(stderr, "mkdata: cannot write %s\n", path);
        return -1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 4 && strcmp(argv[1], "frames") == 0) {
        FILE *f = create(argv[2]);
        return f == NULL || finish(f, argv[2], frames(f, atol(argv[3]))) != 0;
    }
    if (argc == 5 && strcmp(argv[1], "matrix") == 0) {
        FILE *mf = create(argv[2]), *vf = mf ? create(argv[3]) : NULL;
        if (vf == NULL)
            return 1;
        int rc = matrix(mf, vf, atol(argv[4]));
        return (finish(mf, argv[2], rc) != 0) | (finish(vf, argv[3], rc) != 0);
    }
    fprintf(stderr, "usage: mkdata frames FILE BYTES | mkdata matrix MATRIX VECTOR BYTES\n");
    return 2;
}
