/* wave5: the time step of SPEC CFP95's 146.wave5, written from its published description
 * (a two-dimensional electromagnetic particle-in-cell plasma code: the fields gathered
 * at each particle's position, the particles pushed, their charge deposited on the grid,
 * the fields advanced by finite differences), with OpenMP loops as a parallelizing
 * compiler makes them: the push shares out particles, the field update grid rows; the
 * deposition, a scatter whose cells are known only at run time, stays serial, as it must
 * to give the same sums for any number of threads.  One million particles of five
 * doubles (x, y, vx, vy, weight: 40 MiB, the paper's Table 1 size) and a 256 x 256 grid
 * of four fields (2 MiB), carved out of one block back to back, initialised in parallel.
 * The fields a particle reads are indexed by its position: no summary describes them.
 * usage: wave5 [PARTICLES_IN_MILLIONS*16 [STEPS]] (16: one million); prints the field
 * energy and a checksum of the particles. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define G 256 /* grid points a side, periodic */

static double uniform(uint64_t i, int k)
{
    uint64_t x = i * 0x9e3779b97f4a7c15ull + (uint64_t)k * 0xd1b54a32d192ed03ull;
    x ^= x >> 31;
    x *= 0xbf58476d1ce4e5b9ull;
    x ^= x >> 29;
    return (double)(x >> 11) / 9007199254740992.0;
}

int main(int argc, char **argv)
{
    int m = argc > 1 ? atoi(argv[1]) : 16, steps = argc > 2 ? atoi(argv[2]) : 5;
    if (m < 1 || m > 256 || steps < 1) {
        fprintf(stderr, "usage: wave5 [PARTICLES/65536: 1..256 [STEPS >= 1]]\n");
        return 2;
    }
    const long np = (long)m << 16;
    const size_t grid = (size_t)G * G;
    double *pool = malloc((5 * (size_t)np + 4 * grid) * sizeof *pool);
    if (!pool) {
        fprintf(stderr, "wave5: out of memory\n");
        return 1;
    }
    double *x = pool, *y = x + np, *vx = y + np, *vy = vx + np, *wt = vy + np;
    double (*ex)[G] = (double (*)[G])(wt + np);
    double (*ey)[G] = ex + G, (*bz)[G] = ey + G, (*rho)[G] = bz + G;
    const double dt = 0.05, qm = -1.0;

    #pragma omp parallel for
    for (long p = 0; p < np; p++) { /* a two-stream start */
        x[p] = G * uniform((uint64_t)p, 0);
        y[p] = G * uniform((uint64_t)p, 1);
        vx[p] = (p % 2 ? 1 : -1) * 0.5 + 0.01 * sin(2 * M_PI * x[p] / G);
        vy[p] = 0.1 * (uniform((uint64_t)p, 2) - 0.5);
        wt[p] = 1.0 / (double)m;
    }
    #pragma omp parallel for
    for (int j = 0; j < G; j++)
        for (int i = 0; i < G; i++)
            ex[j][i] = ey[j][i] = bz[j][i] = rho[j][i] = 0;

    for (int step = 0; step < steps; step++) {
        /* the push: fields at the particle's cell, then velocity and position */
        #pragma omp parallel for
        for (long p = 0; p < np; p++) {
            const int ci = (int)x[p] % G, cj = (int)y[p] % G;
            const double fx = ex[cj][ci] + vy[p] * bz[cj][ci];
            const double fy = ey[cj][ci] - vx[p] * bz[cj][ci];
            vx[p] += qm * fx * dt;
            vy[p] += qm * fy * dt;
            x[p] = fmod(x[p] + vx[p] * dt + G, (double)G);
            y[p] = fmod(y[p] + vy[p] * dt + G, (double)G);
        }
        /* the deposition: each particle's charge to its cell (serial: a scatter) */
        for (int j = 0; j < G; j++)
            for (int i = 0; i < G; i++)
                rho[j][i] = -1.0;
        for (long p = 0; p < np; p++)
            rho[(int)y[p] % G][(int)x[p] % G] += wt[p] * (double)G * G / (double)np * m;
        /* the fields: the electric field from the charge's neighbours, the magnetic field
         * from the electric field's curl */
        #pragma omp parallel for
        for (int j = 1; j < G - 1; j++)
            for (int i = 1; i < G - 1; i++) {
                ex[j][i] += 0.25 * dt * (rho[j][i - 1] - rho[j][i + 1]);
                ey[j][i] += 0.25 * dt * (rho[j - 1][i] - rho[j + 1][i]);
            }
        #pragma omp parallel for
        for (int j = 1; j < G - 1; j++)
            for (int i = 1; i < G - 1; i++)
                bz[j][i] -= 0.5 * dt * (ey[j][i + 1] - ey[j][i - 1] - ex[j + 1][i] + ex[j - 1][i]);
    }
    double energy = 0, check = 0;
    for (int j = 0; j < G; j++)
        for (int i = 0; i < G; i++)
            energy += ex[j][i] * ex[j][i] + ey[j][i] * ey[j][i] + bz[j][i] * bz[j][i];
    for (long p = 0; p < np; p++)
        check += x[p] + 0.5 * y[p] + vx[p] * vx[p] + vy[p] * vy[p];
    printf("field energy %.10e\nchecksum %.10f\n", energy, check);
    free(pool);
    return 0;
}
