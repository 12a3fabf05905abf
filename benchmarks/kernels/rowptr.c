/* Matrix-vector product through row pointers (double **) over a mapped file, the rows in a
 * shuffled order (a permuted matrix, rows reordered by pivoting or sorting):
 * y[i] = sum_j rows[i][j] * x[j], 64 KiB rows.  usage: rowptr create|run FILE BYTES */
#include "common.h"

static void matvec(long n, long m, double **rows, const double *x, double *y)
{
    for (long i = 0; i < n; i++) {
        double s = 0;
        for (long j = 0; j < m; j++)
            s += rows[i][j] * x[j];
        y[i] = s;
    }
}

int main(int argc, char **argv)
{
    if (argc != 4) { fprintf(stderr, "usage: rowptr create|run FILE BYTES\n"); return 2; }
    size_t bytes = arg_size(argv[3]);
    long m = 8192, n = (long)(bytes / sizeof(double) / (size_t)m);
    double *M = map_file(argv[2], bytes, strcmp(argv[1], "create") == 0);
    if (strcmp(argv[1], "create") == 0) return 0;
    double **rows = malloc((size_t)n * sizeof *rows);
    double *x = malloc((size_t)m * sizeof *x), *y = malloc((size_t)n * sizeof *y);
    if (!rows || !x || !y) { fprintf(stderr, "rowptr: out of memory\n"); return 2; }
    for (long i = 0; i < n; i++)
        rows[i] = M + (size_t)i * (size_t)m;
    unsigned long r = 12345;   /* Fisher-Yates with a fixed-seed LCG */
    for (long i = n - 1; i > 0; i--) {
        r = r * 6364136223846793005UL + 1442695040888963407UL;
        long k = (long)((r >> 33) % (unsigned long)(i + 1));
        double *t = rows[i];
        rows[i] = rows[k];
        rows[k] = t;
    }
    for (long j = 0; j < m; j++)
        x[j] = 1.0 / (double)(j % 13 + 1);
    double t0 = now();
    matvec(n, m, rows, x, y);
    double t1 = now(), s = 0;
    for (long i = 0; i < n; i++)
        s += y[i] * (double)(i % 7 + 1);
    printf("checksum %.6f\naccess_seconds %.3f\n", s, t1 - t0);
    free(rows); free(x); free(y);
    return 0;
}
