/* trap: references in offset loops (u[k + o], x[i + o] for o from a per-point range,
 * long and counting down), grouped with the constant-offset references of their array */
#include <stdio.h>
#include <stdlib.h>

static long lo_off(long g) { return g >= 2 ? -2 : -g; }
static long hi_off(long g, long n) { return g <= n - 3 ? 2 : n - 1 - g; }

static double stencil(long nz, long ny, double u[nz][ny], double out[nz][ny])
{
    double norm = 0;
    for (long k = 1; k < nz - 1; k++) {
        long klo = lo_off(k), khi = hi_off(k, nz);
        for (long j = 0; j < ny; j++) {
            double s = u[k + 1][j] - 2.0 * u[k][j] + u[k - 1][j];
            for (long o = klo; o <= khi; o++)
                s += 0.0625 * u[k + o][j];
            long jlo = lo_off(j), jhi = hi_off(j, ny);
            for (long o = jhi; o >= jlo; o--)
                s -= 0.03125 * u[k][j + o];
            out[k][j] = s;
            norm += s * s;
        }
    }
    return norm;
}

/* An offset loop of as many iterations as the array has elements left. */
static double convolve(long n, const double *x, const double *w, double *y)
{
    double t = 0;
    for (long i = 0; i < n; i++) {
        double s = x[i];
        for (long o = 0; o < n - i; o++)
            s += w[o] * x[i + o];
        y[i] = s;
        t += s;
    }
    return t;
}

int main(int argc, char **argv)
{
    (void)argv;
    long nz = 40 + argc, ny = 3000 + argc;
    double (*u)[ny] = malloc(sizeof(double[nz][ny]));
    double (*out)[ny] = calloc((size_t)nz, sizeof(double[ny]));
    for (long k = 0; k < nz; k++)
        for (long j = 0; j < ny; j++)
            u[k][j] = (double)((k * 131 + j * 7) % 997) / 997.0;
    printf("%.6f\n", stencil(nz, ny, u, out));
    double c = 0;
    for (long k = 0; k < nz; k++)
        c += out[k][(k * 17) % ny];
    printf("%.6f\n", c);
    long n = 3000 + argc;
    double *x = malloc(n * sizeof *x), *w = malloc(n * sizeof *w), *y = malloc(n * sizeof *y);
    for (long i = 0; i < n; i++) {
        x[i] = (double)(i % 113) / 113.0;
        w[i] = 1.0 / (double)(i + 1);
    }
    printf("%.6f %.6f\n", convolve(n, x, w, y), y[n / 2]);
    free(u);
    free(out);
    free(x);
    free(w);
    free(y);
    return 0;
}
