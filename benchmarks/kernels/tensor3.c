/* 3-D fields over pointers to pointers (double ***), allocated as Numerical Recipes'
 * f3tensor does (one block of data, one of row pointers, one of plane pointers; paged to
 * swap when larger than memory): two explicit time steps U += c * (V - U), V -= c * U.
 * usage: tensor3 run - BYTES */
#include "common.h"

static double ***f3tensor(long n, long m, long l)
{
    double ***t = malloc((size_t)n * sizeof *t);
    double **rows = malloc((size_t)(n * m) * sizeof *rows);
    double *data = malloc((size_t)(n * m * l) * sizeof *data);
    if (t == NULL || rows == NULL || data == NULL)
        return NULL;
    for (long i = 0; i < n; i++) {
        t[i] = rows + i * m;
        for (long j = 0; j < m; j++)
            t[i][j] = data + (i * m + j) * l;
    }
    return t;
}

static void step(long n, long m, long l, double ***u, double ***v, double c)
{
    for (long i = 0; i < n; i++)
        for (long j = 0; j < m; j++)
            for (long k = 0; k < l; k++)
                u[i][j][k] += c * (v[i][j][k] - u[i][j][k]);
    for (long i = 0; i < n; i++)
        for (long j = 0; j < m; j++)
            for (long k = 0; k < l; k++)
                v[i][j][k] -= c * u[i][j][k];
}

int main(int argc, char **argv)
{
    if (argc != 4) { fprintf(stderr, "usage: tensor3 run - BYTES\n"); return 2; }
    if (strcmp(argv[1], "create") == 0) return 0;
    size_t bytes = arg_size(argv[3]) / 2;
    long m = 64, l = 2048, n = (long)(bytes / sizeof(double) / (size_t)(m * l));
    double ***u = f3tensor(n, m, l), ***v = f3tensor(n, m, l);
    if (u == NULL || v == NULL) { fprintf(stderr, "tensor3: out of memory\n"); return 2; }
    for (long i = 0; i < n; i++)
        for (long j = 0; j < m; j++)
            for (long k = 0; k < l; k++) {
                u[i][j][k] = (double)((i * 7 + j * 31 + k * 17) % 1009);
                v[i][j][k] = (double)((i + j + k) % 13);
            }
    double t0 = now();
    step(n, m, l, u, v, 0.25);
    double t1 = now(), s = 0;
    for (long i = 0; i < n; i++)
        for (long j = 0; j < m; j += 3)
            for (long k = 0; k < l; k += 5)
                s += u[i][j][k] - v[i][j][k];
    printf("checksum %.6f\naccess_seconds %.3f\n", s, t1 - t0);
    free(u[0][0]);
    free(v[0][0]);
    free(u[0]);
    free(v[0]);
    free(u);
    free(v);
    return 0;
}
