/* applu: the coupled PDE solver of SPEC CFP95's 110.applu (NAS LU), written from its
 * published description: five coupled nonlinear equations on a 33^3 grid, advanced by a
 * symmetric successive over-relaxation whose steps form the right-hand side from the
 * fluxes of the five components and relax it with 5x5 block coefficients; OpenMP loops
 * over the 33 planes as a parallelizing compiler makes them (blocked: few planes a
 * thread), with the relaxation done as two Jacobi half-steps so the planes are
 * independent.  The arrays (the paper's Table 1: 31 MB) are carved out of one block
 * back to back: u, rsd, frct, flux (5 components a point) and the block coefficients
 * a, b, c, d (25 a point).
 * usage: applu [N [ITERATIONS]]; prints the residual norms of the five components. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 33, iters = argc > 2 ? atoi(argv[2]) : 5;
    if (n < 5 || iters < 1) {
        fprintf(stderr, "usage: applu [N >= 5 [ITERATIONS >= 1]]\n");
        return 2;
    }
    size_t pts = (size_t)n * n * n;
    double *pool = malloc((4 * 5 + 4 * 25) * pts * sizeof *pool);
    if (!pool) {
        fprintf(stderr, "applu: out of memory\n");
        return 1;
    }
    double (*u)[n][n][5] = (double (*)[n][n][5])(pool);
    double (*rsd)[n][n][5] = (double (*)[n][n][5])(pool + 5 * pts);
    double (*frct)[n][n][5] = (double (*)[n][n][5])(pool + 10 * pts);
    double (*flux)[n][n][5] = (double (*)[n][n][5])(pool + 15 * pts);
    double (*a)[n][n][25] = (double (*)[n][n][25])(pool + 20 * pts);
    double (*b)[n][n][25] = (double (*)[n][n][25])(pool + 45 * pts);
    double (*c)[n][n][25] = (double (*)[n][n][25])(pool + 70 * pts);
    double (*d)[n][n][25] = (double (*)[n][n][25])(pool + 95 * pts);
    const double omega = 1.2, dt = 0.5, h = 1.0 / (n - 1);

    #pragma omp parallel for
    for (int k = 0; k < n; k++)
        for (int j = 0; j < n; j++)
            for (int i = 0; i < n; i++) {
                for (int m = 0; m < 5; m++) {
                    double x = i * h, y = j * h, z = k * h;
                    u[k][j][i][m] = 1 + 0.1 * m + x * (1 - x) * y * (1 - y) * z * (1 - z);
                    frct[k][j][i][m] = 0.01 * (m + 1) * sin(3.14159 * x) * cos(3.14159 * y);
                    rsd[k][j][i][m] = flux[k][j][i][m] = 0;
                }
                for (int e = 0; e < 25; e++) {
                    double diag = e % 6 == 0 ? 4.0 : 0.0;
                    a[k][j][i][e] = b[k][j][i][e] = c[k][j][i][e] = -0.1 * (e % 5 == e / 5);
                    d[k][j][i][e] = diag + 0.01 * (e % 5);
                }
            }
    double norm[5] = {0};
    for (int it = 0; it < iters; it++) {
        /* fluxes of the five components, then the right-hand side from their differences */
        #pragma omp parallel for
        for (int k = 0; k < n; k++)
            for (int j = 0; j < n; j++)
                for (int i = 0; i < n; i++)
                    for (int m = 0; m < 5; m++)
                        flux[k][j][i][m] = u[k][j][i][m] * u[k][j][i][(m + 1) % 5] * 0.5;
        #pragma omp parallel for
        for (int k = 1; k < n - 1; k++)
            for (int j = 1; j < n - 1; j++)
                for (int i = 1; i < n - 1; i++)
                    for (int m = 0; m < 5; m++)
                        rsd[k][j][i][m] = frct[k][j][i][m] -
                            (flux[k][j][i + 1][m] - flux[k][j][i - 1][m] +
                             flux[k][j + 1][i][m] - flux[k][j - 1][i][m] +
                             flux[k + 1][j][i][m] - flux[k - 1][j][i][m]) / (2 * h) * 0.001 +
                            (u[k + 1][j][i][m] + u[k - 1][j][i][m] + u[k][j + 1][i][m] +
                             u[k][j - 1][i][m] + u[k][j][i + 1][m] + u[k][j][i - 1][m] -
                             6 * u[k][j][i][m]) * 0.01;
        /* relaxation with the block coefficients: a Jacobi sweep of the SSOR's two */
        for (int half = 0; half < 2; half++) {
            #pragma omp parallel for
            for (int k = 1; k < n - 1; k++)
                for (int j = 1; j < n - 1; j++)
                    for (int i = 1; i < n - 1; i++)
                        for (int m = 0; m < 5; m++) {
                            double s = rsd[k][j][i][m];
                            for (int q = 0; q < 5; q++)
                                s -= a[k][j][i][5 * m + q] * rsd[k][j][i][q] * 0.01 +
                                     b[k][j][i][5 * m + q] * rsd[k][j][i][q] * 0.01 +
                                     c[k][j][i][5 * m + q] * rsd[k][j][i][q] * 0.01;
                            flux[k][j][i][m] = s / d[k][j][i][6 * m];
                        }
            #pragma omp parallel for
            for (int k = 1; k < n - 1; k++)
                for (int j = 1; j < n - 1; j++)
                    for (int i = 1; i < n - 1; i++)
                        for (int m = 0; m < 5; m++)
                            u[k][j][i][m] += omega * dt * flux[k][j][i][m] * 0.5;
        }
    }
    for (int m = 0; m < 5; m++) {
        for (int k = 1; k < n - 1; k++)
            for (int j = 1; j < n - 1; j++)
                for (int i = 1; i < n - 1; i++)
                    norm[m] += rsd[k][j][i][m] * rsd[k][j][i][m];
        printf("rsdnm[%d] %.10e\n", m, sqrt(norm[m] / ((double)(n - 2) * (n - 2) * (n - 2))));
    }
    free(pool);
    return 0;
}
