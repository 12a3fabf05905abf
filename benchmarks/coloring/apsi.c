/* apsi: the transport step of SPEC CFP95's 141.apsi, written from its published
 * description (a mesoscale model of pollutant distribution: the wind field and the
 * temperature advance, the pollutant is carried by the wind and spread by turbulent
 * diffusion, vertically by an implicit solve along each column), with OpenMP loops as a
 * parallelizing compiler makes them: the horizontal steps share out vertical levels, the
 * vertical solves grid rows (each column's tridiagonal system runs through every level,
 * so that loop partitions an inner dimension).  Nine NX x NY x NZ fields of doubles
 * (64 x 64 x 32: 1 MiB each, 9 MiB, the paper's Table 1 size) carved out of one block back
 * to back, initialised in parallel.  The result is the same for any number of threads.
 * usage: apsi [NX NY NZ [STEPS]]; prints the pollutant's mass and a checksum. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    int nx = argc > 3 ? atoi(argv[1]) : 64, ny = argc > 3 ? atoi(argv[2]) : 64;
    int nz = argc > 3 ? atoi(argv[3]) : 32, steps = argc > 4 ? atoi(argv[4]) : 10;
    if (nx < 4 || ny < 4 || nz < 4 || steps < 1) {
        fprintf(stderr, "usage: apsi [NX >= 4 NY >= 4 NZ >= 4 [STEPS >= 1]]\n");
        return 2;
    }
    const size_t field = (size_t)nx * ny * nz;
    double *pool = malloc(9 * field * sizeof *pool);
    if (!pool) {
        fprintf(stderr, "apsi: out of memory\n");
        return 1;
    }
    double (*u)[ny][nx] = (double (*)[ny][nx])(pool + 0 * field);   /* wind, x */
    double (*v)[ny][nx] = (double (*)[ny][nx])(pool + 1 * field);   /* wind, y */
    double (*w)[ny][nx] = (double (*)[ny][nx])(pool + 2 * field);   /* wind, z */
    double (*t)[ny][nx] = (double (*)[ny][nx])(pool + 3 * field);   /* temperature */
    double (*c)[ny][nx] = (double (*)[ny][nx])(pool + 4 * field);   /* pollutant */
    double (*cn)[ny][nx] = (double (*)[ny][nx])(pool + 5 * field);  /* its next step */
    double (*kz)[ny][nx] = (double (*)[ny][nx])(pool + 6 * field);  /* vertical diffusivity */
    double (*src)[ny][nx] = (double (*)[ny][nx])(pool + 7 * field); /* emissions */
    double (*cp)[ny][nx] = (double (*)[ny][nx])(pool + 8 * field);  /* the solve's factors */
    const double dt = 0.1, dx = 1.0, dz = 0.5;

    #pragma omp parallel for
    for (int k = 0; k < nz; k++)
        for (int j = 0; j < ny; j++)
            for (int i = 0; i < nx; i++) {
                const double z = (k + 0.5) / nz;
                u[k][j][i] = 2.0 * z * (1 + 0.1 * sin(2 * M_PI * j / ny));
                v[k][j][i] = 0.5 * z * cos(2 * M_PI * i / nx);
                w[k][j][i] = 0.01 * sin(M_PI * z);
                t[k][j][i] = 290 - 6.5 * z;
                c[k][j][i] = cn[k][j][i] = cp[k][j][i] = 0;
                kz[k][j][i] = 0.1 + 0.9 * z * (1 - z);
                src[k][j][i] = (k == 0 && abs(i - nx / 4) < 2 && abs(j - ny / 2) < 2) ? 1.0 : 0;
            }

    for (int step = 0; step < steps; step++) {
        /* the wind and temperature: a relaxation towards the level's mean flow */
        #pragma omp parallel for
        for (int k = 1; k < nz - 1; k++)
            for (int j = 1; j < ny - 1; j++)
                for (int i = 1; i < nx - 1; i++) {
                    t[k][j][i] += dt * 0.01 * (t[k][j][i + 1] + t[k][j][i - 1] - 2 * t[k][j][i]);
                    u[k][j][i] += dt * 0.001 * (u[k][j][i + 1] + u[k][j][i - 1] - 2 * u[k][j][i]);
                    v[k][j][i] += dt * 0.001 * (v[k][j + 1][i] + v[k][j - 1][i] - 2 * v[k][j][i]);
                }
        /* the pollutant: upwind advection by the horizontal wind, emissions added */
        #pragma omp parallel for
        for (int k = 0; k < nz; k++)
            for (int j = 1; j < ny - 1; j++)
                for (int i = 1; i < nx - 1; i++) {
                    const double a = u[k][j][i] > 0 ? c[k][j][i] - c[k][j][i - 1]
                                                    : c[k][j][i + 1] - c[k][j][i];
                    const double b = v[k][j][i] > 0 ? c[k][j][i] - c[k][j - 1][i]
                                                    : c[k][j + 1][i] - c[k][j][i];
                    cn[k][j][i] = c[k][j][i] - dt / dx * (u[k][j][i] * a + v[k][j][i] * b) +
                                  dt * src[k][j][i];
                }
        /* vertical diffusion, implicit: one tridiagonal system per column */
        #pragma omp parallel for
        for (int j = 1; j < ny - 1; j++)
            for (int i = 1; i < nx - 1; i++) {
                double prev = 0, below = 0; /* the elimination's right-hand side in c */
                for (int k = 0; k < nz; k++) {
                    const double r = dt * kz[k][j][i] / (dz * dz);
                    const double lo = k > 0 ? -r : 0, hi = k < nz - 1 ? -r : 0;
                    const double den = 1 + 2 * r - lo * prev;
                    cp[k][j][i] = hi / den;
                    c[k][j][i] = (cn[k][j][i] - lo * below) / den;
                    prev = cp[k][j][i];
                    below = c[k][j][i];
                }
                for (int k = nz - 2; k >= 0; k--)
                    c[k][j][i] -= cp[k][j][i] * c[k + 1][j][i];
            }
    }
    double mass = 0, check = 0;
    for (int k = 0; k < nz; k++)
        for (int j = 0; j < ny; j++)
            for (int i = 0; i < nx; i++) {
                mass += c[k][j][i];
                check += (k + 1) * c[k][j][i] + 1e-3 * t[k][j][i] + u[k][j][i] * v[k][j][i];
            }
    printf("mass %.10f\nchecksum %.10f\n", mass, check);
    free(pool);
    return 0;
}
