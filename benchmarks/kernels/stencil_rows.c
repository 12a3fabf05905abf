/* 2-D five-point Jacobi stencil over row pointers (double **), each row malloc'd on its
 * own as Numerical Recipes style code does (paged to swap when larger than memory): two
 * sweeps A -> B -> A.  usage: stencil_rows run - BYTES */
#include "common.h"

static void sweep(long n, long m, double **dst, double **src)
{
    for (long i = 1; i < n - 1; i++)
        for (long j = 1; j < m - 1; j++)
            dst[i][j] = 0.2 * (src[i][j] + src[i - 1][j] + src[i + 1][j] + src[i][j - 1] +
                               src[i][j + 1]);
}

int main(int argc, char **argv)
{
    if (argc != 4) { fprintf(stderr, "usage: stencil_rows run - BYTES\n"); return 2; }
    if (strcmp(argv[1], "create") == 0) return 0;
    size_t bytes = arg_size(argv[3]) / 2;
    long m = 4096, n = (long)(bytes / sizeof(double) / (size_t)m);
    double **A = calloc((size_t)n, sizeof *A), **B = calloc((size_t)n, sizeof *B);
    if (A == NULL || B == NULL) { fprintf(stderr, "stencil_rows: out of memory\n"); return 2; }
    for (long i = 0; i < n; i++) {
        A[i] = malloc((size_t)m * sizeof **A);
        B[i] = malloc((size_t)m * sizeof **B);
        if (A[i] == NULL || B[i] == NULL) {
            fprintf(stderr, "stencil_rows: out of memory\n");
            return 2;
        }
        for (long j = 0; j < m; j++) {
            A[i][j] = (double)((i * 31 + j * 17) % 1009);
            B[i][j] = 0;
        }
    }
    double t0 = now();
    sweep(n, m, B, A);
    sweep(n, m, A, B);
    double t1 = now(), s = 0;
    for (long i = 0; i < n; i += 7)
        for (long j = 0; j < m; j += 5)
            s += A[i][j];
    printf("checksum %.6f\naccess_seconds %.3f\n", s, t1 - t0);
    for (long i = 0; i < n; i++) {
        free(A[i]);
        free(B[i]);
    }
    free(A);
    free(B);
    return 0;
}
