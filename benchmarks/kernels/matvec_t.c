/* Transposed matrix-vector product on a linearized n x n matrix in a mapped file:
 * y[i] += A[j*n + i] * x[j], with j innermost (a column walk), for every 512th i.
 * usage: matvec_t create|run FILE BYTES */
#include "common.h"

int main(int argc, char **argv)
{
    if (argc != 4) { fprintf(stderr, "usage: matvec_t create|run FILE BYTES\n"); return 2; }
    size_t bytes = arg_size(argv[3]);
    long n = 1;
    while ((size_t)((n + 1) * (n + 1)) * sizeof(double) <= bytes)
        n++;
    double *A = map_file(argv[2], bytes, strcmp(argv[1], "create") == 0);
    if (strcmp(argv[1], "create") == 0) return 0;
    double *x = malloc((size_t)n * sizeof *x), *y = calloc((size_t)n, sizeof *y);
    for (long j = 0; j < n; j++)
        x[j] = 1.0 / (double)(j + 1);
    double t0 = now();
    for (long i = 0; i < n; i += 512)
        for (long j = 0; j < n; j++)
            y[i] += A[j * n + i] * x[j];
    double t1 = now(), total = 0;
    for (long i = 0; i < n; i++)
        total += y[i];
    printf("checksum %.6f\naccess_seconds %.3f\n", total, t1 - t0);
    free(x);
    free(y);
    return 0;
}
