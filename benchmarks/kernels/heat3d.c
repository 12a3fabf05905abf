/* Explicit finite-difference solver of the 3-D heat equation u_t = alpha lap(u) on a box
 * with fixed boundary values: forward Euler, 7-point Laplacian, NSTEPS time steps into a
 * second grid and back.  The grids are double *** built with malloc in loops (a block of
 * row pointers per plane, every row malloc'd on its own; paged to swap when larger than
 * memory), and each row is updated by a helper called from the plane and row loops.
 * usage: heat3d run - BYTES */
#include "common.h"

#define NX 1024          /* points along a row (8 KiB) */
#define NY 32            /* rows per plane */
#define NSTEPS 2

static double ***alloc_grid(int nz, int ny, int nx)
{
    double ***g = malloc(nz * sizeof(double **));
    if (g == NULL)
        return NULL;
    for (int k = 0; k < nz; k++) {
        g[k] = malloc(ny * sizeof(double *));
        if (g[k] == NULL)
            return NULL;
        for (int j = 0; j < ny; j++) {
            g[k][j] = malloc(nx * sizeof(double));
            if (g[k][j] == NULL)
                return NULL;
        }
    }
    return g;
}

static void free_grid(double ***g, int nz, int ny)
{
    for (int k = 0; k < nz; k++) {
        for (int j = 0; j < ny; j++)
            free(g[k][j]);
        free(g[k]);
    }
    free(g);
}

/* One row of the explicit update: c is the row itself, n/s its neighbours in the plane,
 * up/dn the same row in the planes above and below. */
static void update_row(int nx, double *out, const double *c, const double *n,
                       const double *s, const double *up, const double *dn, double r)
{
    int i;
    for (i = 1; i < nx - 1; i++)
        out[i] = c[i] + r * (c[i - 1] + c[i + 1] + n[i] + s[i] + up[i] + dn[i] - 6.0 * c[i]);
}

static void step(int nz, int ny, int nx, double ***unew, double ***u, double r)
{
    int j, k;
    for (k = 1; k < nz - 1; k++)
        for (j = 1; j < ny - 1; j++)
            update_row(nx, unew[k][j], u[k][j], u[k][j + 1], u[k][j - 1], u[k + 1][j],
                       u[k - 1][j], r);
}

int main(int argc, char **argv)
{
    if (argc != 4) { fprintf(stderr, "usage: heat3d run - BYTES\n"); return 2; }
    if (strcmp(argv[1], "create") == 0) return 0;
    size_t bytes = arg_size(argv[3]) / 2;
    int nx = NX, ny = NY, nz = (int)(bytes / sizeof(double) / (size_t)(NX * NY));
    if (nz < 3) { fprintf(stderr, "heat3d: BYTES too small\n"); return 2; }
    double alpha = 1.0, dx = 1.0, dt = 0.1, r = alpha * dt / (dx * dx);
    double ***u = alloc_grid(nz, ny, nx), ***unew = alloc_grid(nz, ny, nx);
    if (u == NULL || unew == NULL) { fprintf(stderr, "heat3d: out of memory\n"); return 2; }
    /* a hot slab in the middle, boundary values fixed in both grids */
    int i, j, k, t;
    for (k = 0; k < nz; k++)
        for (j = 0; j < ny; j++)
            for (i = 0; i < nx; i++) {
                double v = (double)((k * 13 + j * 7 + i * 3) % 101) * 0.01;
                if (k > nz / 3 && k < 2 * nz / 3)
                    v += 100.0;
                u[k][j][i] = v;
                unew[k][j][i] = v;
            }
    double t0 = now();
    for (t = 0; t < NSTEPS; t++) {
        step(nz, ny, nx, unew, u, r);
        double ***tmp = u;
        u = unew;
        unew = tmp;
    }
    double t1 = now(), sum = 0, umax = 0;
    for (k = 0; k < nz; k++)
        for (j = 0; j < ny; j += 3)
            for (i = 0; i < nx; i += 5) {
                sum += u[k][j][i];
                if (u[k][j][i] > umax)
                    umax = u[k][j][i];
            }
    printf("checksum %.6e max %.6e\naccess_seconds %.3f\n", sum, umax, t1 - t0);
    free_grid(u, nz, ny);
    free_grid(unew, nz, ny);
    return 0;
}
