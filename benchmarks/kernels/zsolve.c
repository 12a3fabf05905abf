/* An ADI-style step written the way the C translations of the NAS benchmarks are: the
 * fields are file-scope static arrays u[k][j][i][m] of 5-component vectors sized by
 * #define for the largest grid, the grid's extent is in global ints (nx, ny, nz), and
 * the routines take no arguments.  Per step: compute_rhs (second differences along i,
 * j and k), z_solve (along each (j, i) line a forward elimination and a back
 * substitution over the planes: k innermost but for the components, one plane, 160 KiB,
 * per step), add (u += rhs).  Static data pages to swap when larger than memory.
 * usage: zsolve run - BYTES */
#include "common.h"

#define ISIZ1 64
#define ISIZ2 64
#define ISIZ3 8192       /* the most planes: 1.25 GiB per array */
#define NSTEPS 1

static double u[ISIZ3][ISIZ2][ISIZ1][5];
static double rhs[ISIZ3][ISIZ2][ISIZ1][5];

int nx, ny, nz;
double dt, tz1, tz2;

static void initialize(void)
{
    int i, j, k, m;
    for (k = 0; k < nz; k++)
        for (j = 0; j < ny; j++)
            for (i = 0; i < nx; i++)
                for (m = 0; m < 5; m++) {
                    u[k][j][i][m] = 1.0 + 0.01 * (double)((k * 7 + j * 5 + i * 3 + m) % 97);
                    rhs[k][j][i][m] = 0.0;
                }
}

static void compute_rhs(void)
{
    int i, j, k, m;
    for (k = 1; k < nz - 1; k++) {
        for (j = 1; j < ny - 1; j++) {
            for (i = 1; i < nx - 1; i++) {
                for (m = 0; m < 5; m++) {
                    rhs[k][j][i][m] = dt * (
                        tz1 * (u[k][j][i + 1][m] - 2.0 * u[k][j][i][m] + u[k][j][i - 1][m]) +
                        tz1 * (u[k][j + 1][i][m] - 2.0 * u[k][j][i][m] + u[k][j - 1][i][m]) +
                        tz2 * (u[k + 1][j][i][m] - 2.0 * u[k][j][i][m] + u[k - 1][j][i][m]));
                }
            }
        }
    }
}

/* (I - tz2 d2/dz2) along each line: a constant-coefficient tridiagonal elimination */
static void z_solve(void)
{
    int i, j, k, m;
    double c = tz2 * dt / (1.0 + 2.0 * tz2 * dt);
    for (j = 1; j < ny - 1; j++) {
        for (i = 1; i < nx - 1; i++) {
            for (k = 1; k < nz; k++) {
                for (m = 0; m < 5; m++) {
                    rhs[k][j][i][m] = rhs[k][j][i][m] + c * rhs[k - 1][j][i][m];
                }
            }
            for (k = nz - 2; k >= 0; k--) {
                for (m = 0; m < 5; m++) {
                    rhs[k][j][i][m] = rhs[k][j][i][m] + c * rhs[k + 1][j][i][m];
                }
            }
        }
    }
}

static void add(void)
{
    int i, j, k, m;
    for (k = 1; k < nz - 1; k++)
        for (j = 1; j < ny - 1; j++)
            for (i = 1; i < nx - 1; i++)
                for (m = 0; m < 5; m++)
                    u[k][j][i][m] = u[k][j][i][m] + rhs[k][j][i][m];
}

int main(int argc, char **argv)
{
    int step, i, j, k, m;
    if (argc != 4) { fprintf(stderr, "usage: zsolve run - BYTES\n"); return 2; }
    if (strcmp(argv[1], "create") == 0) return 0;
    size_t plane = sizeof u[0];
    nx = ISIZ1;
    ny = ISIZ2;
    nz = (int)(arg_size(argv[3]) / 2 / plane);
    if (nz < 3 || nz > ISIZ3) {
        fprintf(stderr, "zsolve: BYTES must be between %zu and %zu\n", 6 * plane,
                2 * sizeof u);
        return 2;
    }
    dt = 0.01;
    tz1 = 1.0;
    tz2 = 2.0;
    initialize();
    double t0 = now();
    for (step = 0; step < NSTEPS; step++) {
        compute_rhs();
        z_solve();
        add();
    }
    double t1 = now(), sum = 0, rsum = 0;
    for (k = 0; k < nz; k++)
        for (j = 0; j < ny; j += 3)
            for (i = 0; i < nx; i += 5)
                for (m = 0; m < 5; m++) {
                    sum += u[k][j][i][m];
                    rsum += rhs[k][j][i][m];
                }
    printf("checksum %.6e rhs %.6e\naccess_seconds %.3f\n", sum, rsum, t1 - t0);
    return 0;
}
