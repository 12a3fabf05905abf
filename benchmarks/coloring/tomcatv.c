/* tomcatv: the mesh generation kernel of SPEC CFP95's 101.tomcatv, written from its
 * published description (Thompson's elliptic grid solver: residuals of the two grid
 * coordinates from a nine-point stencil, a tridiagonal solve along each row, the
 * correction added back), with OpenMP loops over rows as a parallelizing compiler makes
 * them.  Seven N x N arrays of doubles (the paper's Table 1: N = 513, 14 MB) carved out
 * of one block back to back, as the paper's data were, and initialised in parallel.
 * usage: tomcatv [N [ITERATIONS]]; prints the final residual and a checksum. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 513, iters = argc > 2 ? atoi(argv[2]) : 10;
    if (n < 8 || iters < 1) {
        fprintf(stderr, "usage: tomcatv [N >= 8 [ITERATIONS >= 1]]\n");
        return 2;
    }
    size_t plane = (size_t)n * (size_t)n;
    double *pool = malloc(7 * plane * sizeof *pool);
    if (!pool) {
        fprintf(stderr, "tomcatv: out of memory\n");
        return 1;
    }
    double (*x)[n] = (double (*)[n])(pool + 0 * plane);
    double (*y)[n] = (double (*)[n])(pool + 1 * plane);
    double (*rx)[n] = (double (*)[n])(pool + 2 * plane);
    double (*ry)[n] = (double (*)[n])(pool + 3 * plane);
    double (*aa)[n] = (double (*)[n])(pool + 4 * plane);
    double (*dd)[n] = (double (*)[n])(pool + 5 * plane);
    double (*d)[n] = (double (*)[n])(pool + 6 * plane);
    const double rel = 0.98, h = 1.0 / (n - 1);

    #pragma omp parallel for
    for (int j = 0; j < n; j++)
        for (int i = 0; i < n; i++) {
            double a = i * h, b = j * h;
            x[j][i] = a + 0.1 * a * (1 - a) * b;
            y[j][i] = b + 0.05 * b * (1 - b) * sin(3.0 * a);
            rx[j][i] = ry[j][i] = aa[j][i] = dd[j][i] = d[j][i] = 0;
        }

    double rxm = 0, rym = 0;
    for (int it = 0; it < iters; it++) {
        rxm = rym = 0;
        /* residuals and the coefficients of the tridiagonal systems */
        #pragma omp parallel for reduction(max : rxm, rym)
        for (int j = 1; j < n - 1; j++)
            for (int i = 1; i < n - 1; i++) {
                double xx = x[j][i + 1] - x[j][i - 1], yx = y[j][i + 1] - y[j][i - 1];
                double xy = x[j + 1][i] - x[j - 1][i], yy = y[j + 1][i] - y[j - 1][i];
                double a = 0.25 * (xy * xy + yy * yy), b = 0.25 * (xx * xx + yx * yx);
                double c = 0.125 * (xx * xy + yx * yy);
                aa[j][i] = -b;
                dd[j][i] = b + b + a * rel;
                double pxx = x[j][i + 1] - 2 * x[j][i] + x[j][i - 1];
                double qxx = y[j][i + 1] - 2 * y[j][i] + y[j][i - 1];
                double pyy = x[j + 1][i] - 2 * x[j][i] + x[j - 1][i];
                double qyy = y[j + 1][i] - 2 * y[j][i] + y[j - 1][i];
                double pxy = x[j + 1][i + 1] - x[j + 1][i - 1] - x[j - 1][i + 1] + x[j - 1][i - 1];
                double qxy = y[j + 1][i + 1] - y[j + 1][i - 1] - y[j - 1][i + 1] + y[j - 1][i - 1];
                rx[j][i] = a * pxx + b * pyy - c * pxy;
                ry[j][i] = a * qxx + b * qyy - c * qxy;
                rxm = fmax(rxm, fabs(rx[j][i]));
                rym = fmax(rym, fabs(ry[j][i]));
            }
        /* each row's tridiagonal system: forward elimination, then back substitution */
        #pragma omp parallel for
        for (int j = 1; j < n - 1; j++) {
            d[j][1] = 1.0 / dd[j][1];
            for (int i = 2; i < n - 1; i++) {
                double r = aa[j][i] * d[j][i - 1];
                d[j][i] = 1.0 / (dd[j][i] - aa[j][i - 1] * r);
                rx[j][i] = rx[j][i] - rx[j][i - 1] * r;
                ry[j][i] = ry[j][i] - ry[j][i - 1] * r;
            }
            rx[j][n - 2] = rx[j][n - 2] * d[j][n - 2];
            ry[j][n - 2] = ry[j][n - 2] * d[j][n - 2];
            for (int i = n - 3; i >= 1; i--) {
                rx[j][i] = (rx[j][i] - aa[j][i] * rx[j][i + 1]) * d[j][i];
                ry[j][i] = (ry[j][i] - aa[j][i] * ry[j][i + 1]) * d[j][i];
            }
        }
        /* the correction */
        #pragma omp parallel for
        for (int j = 1; j < n - 1; j++)
            for (int i = 1; i < n - 1; i++) {
                x[j][i] += rx[j][i];
                y[j][i] += ry[j][i];
            }
    }
    double sum = 0;
    for (int j = 0; j < n; j++)
        for (int i = 0; i < n; i++)
            sum += x[j][i] + 2 * y[j][i];
    printf("residual %.6e %.6e\nchecksum %.10f\n", rxm, rym, sum);
    free(pool);
    return 0;
}
