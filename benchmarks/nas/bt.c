/* BT: ADI pseudo-time stepping with 5x5 block-tridiagonal line solves along x, y and z
 * of a 3-D grid of 5-vectors, after the NAS Parallel Benchmarks' BT.
 *
 * The steady problem L u + f = 0 on an NX x NY x NZ grid (outer layer: Dirichlet values)
 * with
 *   (L u)_p = sum over directions d of a_d NU (K_{p-e_d} u_{p-e_d} - 2 K_p u_p
 *             + K_{p+e_d} u_{p+e_d}) - MU u_p + KAPPA C u_p,
 * the second difference of a "flux" K u in which the 5x5 matrix K_p = K0 + sigma_p I
 * couples the five components and varies from point to point (as BT's flux Jacobians
 * do), a_d a coefficient constant along each grid line of direction d, and C a fixed
 * coupling kept explicit.  f is manufactured from a smooth u* known in closed form:
 * f = -L u*.
 *
 * Each step (BT's structure): rhs = DT (L u + f); x_solve, y_solve, z_solve each solve,
 * line by line, the block-tridiagonal systems of the implicit operator in direction d,
 *   -DT a_d NU K_{p-1} x_{p-1} + ((1 + DT MU/3) I + 2 DT a_d NU K_p) x_p
 *   - DT a_d NU K_{p+1} x_{p+1} = rhs_p,
 * in place by block Gaussian elimination: per point the blocks are formed, the previous
 * point's eliminated block is subtracted, and a 5x5 Gauss-Jordan step (BT's binvcrhs)
 * solves for the next block column and the right-hand side; then back substitution.
 * Then u += rhs.  Layout as NPB's: u[k][j][i][m], the 5 components innermost, so the y
 * and z solves walk lines of stride a row and a plane.  Main arrays: u, rhs, forcing:
 * 120 bytes a point.
 *
 * Verification (no NPB tables): the residual ||L u + f|| must shrink in every step (ratio
 * at most MAX_RATIO), and the error against u* at the end must be at most ERR_RATE^s
 * times the initial one, s the number of steps up to ERR_STEPS (the factorisation damps
 * the smooth components that dominate the error much faster than the rough ones that
 * dominate the residual: hence two measures). */
#include "nas_common.h"
#include <math.h>

#define DT 1.0
#define NU 1.0
#define MU 1.0
#define KAPPA 0.1
#define MAX_RATIO 0.99 /* every step must reduce the residual at least this much */
#define ERR_RATE 0.8   /* the error must shrink at least this fast over the first steps */
#define ERR_STEPS 8
#define FLOOR 1e-11 /* a residual this far below the initial one is at rounding level */

static double k0[5][5], coupling[5][5];

/* The line coefficient a_d of a line through the two other indices p and q. */
static inline double line_coef(long p, long q)
{
    return 1.0 + 0.5 * (double)((p * 7 + q * 3) % 11) / 10.0;
}

/* sigma_p, the varying part of K at point (i, j, k). */
static inline double sigma(long i, long j, long k)
{
    return 0.6 * (double)((i + 2 * j + 3 * k) % 5) / 4.0;
}

/* The manufactured solution, component m at point (i, j, k). */
static double exact(long i, long j, long k, int m, long nx, long ny, long nz)
{
    double x = (double)i / (double)(nx - 1), y = (double)j / (double)(ny - 1);
    double z = (double)k / (double)(nz - 1);
    return 1.5 + 0.1 * m - 0.3 * x * (1 + m) + 0.4 * y + 0.25 * z +
           (1.0 - 0.1 * m) * 8.0 * x * (1.0 - x) * y * (1.0 - y) * z * (1.0 - z) +
           0.3 * x * y * z * z;
}

/* rhs = scale (L u + forcing) over the interior; the root mean square of L u + forcing
 * per component into norm[5]. */
static void compute_rhs(long nx, long ny, long nz, double u[nz][ny][nx][5],
                        double forcing[nz][ny][nx][5], double rhs[nz][ny][nx][5], double scale,
                        double norm[5])
{
    for (int m = 0; m < 5; m++)
        norm[m] = 0.0;
    for (long k = 1; k < nz - 1; k++)
        for (long j = 1; j < ny - 1; j++)
            for (long i = 1; i < nx - 1; i++) {
                double ax = NU * line_coef(j, k), ay = NU * line_coef(i, k);
                double az = NU * line_coef(i, j);
                double s0 = sigma(i, j, k);
                double sw = sigma(i - 1, j, k), se = sigma(i + 1, j, k);
                double ss = sigma(i, j - 1, k), sn = sigma(i, j + 1, k);
                double sb = sigma(i, j, k - 1), st = sigma(i, j, k + 1);
                for (int m = 0; m < 5; m++) {
                    double s = forcing[k][j][i][m] - MU * u[k][j][i][m];
                    for (int n = 0; n < 5; n++) {
                        double km = k0[m][n];
                        double c = KAPPA * coupling[m][n] - 2.0 * (ax + ay + az) * km;
                        s += c * u[k][j][i][n] +
                             ax * km * (u[k][j][i - 1][n] + u[k][j][i + 1][n]) +
                             ay * km * (u[k][j - 1][i][n] + u[k][j + 1][i][n]) +
                             az * km * (u[k - 1][j][i][n] + u[k + 1][j][i][n]);
                    }
                    s += ax * (sw * u[k][j][i - 1][m] - 2.0 * s0 * u[k][j][i][m] +
                               se * u[k][j][i + 1][m]) +
                         ay * (ss * u[k][j - 1][i][m] - 2.0 * s0 * u[k][j][i][m] +
                               sn * u[k][j + 1][i][m]) +
                         az * (sb * u[k - 1][j][i][m] - 2.0 * s0 * u[k][j][i][m] +
                               st * u[k + 1][j][i][m]);
                    norm[m] += s * s;
                    rhs[k][j][i][m] = scale * s;
                }
            }
    for (int m = 0; m < 5; m++)
        norm[m] = sqrt(norm[m] / ((double)(nx - 2) * (double)(ny - 2) * (double)(nz - 2)));
}

/* The block of K at a point times w (w = -DT a NU for the off-diagonal blocks), plus
 * diag on the diagonal. */
static inline void block(double b[5][5], double w, double sig, double diag)
{
    for (int m = 0; m < 5; m++)
        for (int n = 0; n < 5; n++)
            b[m][n] = w * k0[m][n] + (m == n ? w * sig + diag : 0.0);
}

/* Gauss-Jordan on the 5x5 block lhs (diagonally dominant: no pivoting): c = lhs^-1 c
 * and r = lhs^-1 r; lhs is destroyed. */
static inline void binvcrhs(double lhs[5][5], double c[5][5], double r[5])
{
    for (int p = 0; p < 5; p++) {
        double inv = 1.0 / lhs[p][p];
        for (int n = p; n < 5; n++)
            lhs[p][n] *= inv;
        for (int n = 0; n < 5; n++)
            c[p][n] *= inv;
        r[p] *= inv;
        for (int q = 0; q < 5; q++) {
            if (q == p)
                continue;
            double f = lhs[q][p];
            for (int n = p; n < 5; n++)
                lhs[q][n] -= f * lhs[p][n];
            for (int n = 0; n < 5; n++)
                c[q][n] -= f * c[p][n];
            r[q] -= f * r[p];
        }
    }
}

/* One point of the forward elimination: lhs = B - A cprev, r -= A rprev, then
 * (cp, r) = lhs^-1 (C, r).  first: no A (the first point of the line); last: no C. */
static inline void eliminate(double a[5][5], double b[5][5], double c[5][5],
                             double cprev[5][5], double rprev[5], double r[5],
                             double cp[5][5], int first, int last)
{
    if (!first)
        for (int m = 0; m < 5; m++)
            for (int n = 0; n < 5; n++) {
                double s = 0.0;
                for (int l = 0; l < 5; l++)
                    s += a[m][l] * cprev[l][n];
                b[m][n] -= s;
                r[m] -= a[m][n] * rprev[n];
            }
    for (int m = 0; m < 5; m++)
        for (int n = 0; n < 5; n++)
            cp[m][n] = last ? 0.0 : c[m][n];
    binvcrhs(b, cp, r);
}

/* Solves along x: for each (k, j), the line i = 1..nx-2. */
static void x_solve(long nx, long ny, long nz, double rhs[nz][ny][nx][5], double (*cp)[5][5])
{
    double a[5][5], b[5][5], c[5][5], r[5];
    for (long k = 1; k < nz - 1; k++)
        for (long j = 1; j < ny - 1; j++) {
            double w = -DT * NU * line_coef(j, k);
            for (long i = 1; i < nx - 1; i++) {
                block(a, w, sigma(i - 1, j, k), 0.0);
                block(b, -2.0 * w, sigma(i, j, k), 1.0 + DT * MU / 3.0);
                block(c, w, sigma(i + 1, j, k), 0.0);
                for (int m = 0; m < 5; m++)
                    r[m] = rhs[k][j][i][m];
                eliminate(a, b, c, cp[i - 1], rhs[k][j][i - 1], r, cp[i], i == 1, i == nx - 2);
                for (int m = 0; m < 5; m++)
                    rhs[k][j][i][m] = r[m];
            }
            for (long i = nx - 3; i >= 1; i--)
                for (int m = 0; m < 5; m++)
                    for (int n = 0; n < 5; n++)
                        rhs[k][j][i][m] -= cp[i][m][n] * rhs[k][j][i + 1][n];
        }
}

/* Solves along y: for each (k, i), the line j = 1..ny-2 (stride a row). */
static void y_solve(long nx, long ny, long nz, double rhs[nz][ny][nx][5], double (*cp)[5][5])
{
    double a[5][5], b[5][5], c[5][5], r[5];
    for (long k = 1; k < nz - 1; k++)
        for (long i = 1; i < nx - 1; i++) {
            double w = -DT * NU * line_coef(i, k);
            for (long j = 1; j < ny - 1; j++) {
                block(a, w, sigma(i, j - 1, k), 0.0);
                block(b, -2.0 * w, sigma(i, j, k), 1.0 + DT * MU / 3.0);
                block(c, w, sigma(i, j + 1, k), 0.0);
                for (int m = 0; m < 5; m++)
                    r[m] = rhs[k][j][i][m];
                eliminate(a, b, c, cp[j - 1], rhs[k][j - 1][i], r, cp[j], j == 1, j == ny - 2);
                for (int m = 0; m < 5; m++)
                    rhs[k][j][i][m] = r[m];
            }
            for (long j = ny - 3; j >= 1; j--)
                for (int m = 0; m < 5; m++)
                    for (int n = 0; n < 5; n++)
                        rhs[k][j][i][m] -= cp[j][m][n] * rhs[k][j + 1][i][n];
        }
}

/* Solves along z: for each (j, i), the line k = 1..nz-2 (stride a plane). */
static void z_solve(long nx, long ny, long nz, double rhs[nz][ny][nx][5], double (*cp)[5][5])
{
    double a[5][5], b[5][5], c[5][5], r[5];
    for (long j = 1; j < ny - 1; j++)
        for (long i = 1; i < nx - 1; i++) {
            double w = -DT * NU * line_coef(i, j);
            for (long k = 1; k < nz - 1; k++) {
                block(a, w, sigma(i, j, k - 1), 0.0);
                block(b, -2.0 * w, sigma(i, j, k), 1.0 + DT * MU / 3.0);
                block(c, w, sigma(i, j, k + 1), 0.0);
                for (int m = 0; m < 5; m++)
                    r[m] = rhs[k][j][i][m];
                eliminate(a, b, c, cp[k - 1], rhs[k - 1][j][i], r, cp[k], k == 1, k == nz - 2);
                for (int m = 0; m < 5; m++)
                    rhs[k][j][i][m] = r[m];
            }
            for (long k = nz - 3; k >= 1; k--)
                for (int m = 0; m < 5; m++)
                    for (int n = 0; n < 5; n++)
                        rhs[k][j][i][m] -= cp[k][m][n] * rhs[k + 1][j][i][n];
        }
}

/* Root mean square error of u against the manufactured solution over the interior. */
static double error_norm(long nx, long ny, long nz, double u[nz][ny][nx][5])
{
    double s = 0.0;
    for (long k = 1; k < nz - 1; k++)
        for (long j = 1; j < ny - 1; j++)
            for (long i = 1; i < nx - 1; i++)
                for (int m = 0; m < 5; m++) {
                    double e = u[k][j][i][m] - exact(i, j, k, m, nx, ny, nz);
                    s += e * e;
                }
    return sqrt(s / (5.0 * (double)(nx - 2) * (double)(ny - 2) * (double)(nz - 2)));
}

int main(int argc, char **argv)
{
    struct nas_args args = nas_parse(argc, argv, 64, 2);
    int iters = args.iters;

    /* NX = NY = the cube root of the points --mb holds, NZ the rest. */
    double points = (double)args.mb * 1048576.0 / (3.0 * 5.0 * sizeof(double));
    long n = (long)cbrt(points);
    while ((double)(n + 1) * (double)(n + 1) * (double)(n + 1) <= points)
        n++;
    long nx = n, ny = n, nz = (long)(points / ((double)n * (double)n));
    if (n < 5 || nz < 5)
        nas_usage(argv[0], "--mb too small");

    size_t bytes = (size_t)nx * (size_t)ny * (size_t)nz * 5 * sizeof(double);
    double (*u)[ny][nx][5] = nas_array(&args, "u", bytes);
    double (*rhs)[ny][nx][5] = nas_array(&args, "rhs", bytes);
    double (*forcing)[ny][nx][5] = nas_array(&args, "forcing", bytes);
    long longest = nx > nz ? nx : nz;
    double (*cp)[5][5] = malloc((size_t)longest * sizeof *cp);
    if (!cp)
        nas_usage(argv[0], "no memory for the line work array");
    printf("BT grid %ld x %ld x %ld steps %d dt %.2f\n", nx, ny, nz, iters, DT);

    /* forcing = -L u*: u = u* everywhere, rhs = L u* by compute_rhs with zero forcing. */
    nas_phase("init");
    for (int m = 0; m < 5; m++)
        for (int l = 0; l < 5; l++) {
            k0[m][l] = m == l ? 1.0 : 0.1 * (double)((m + l) % 3 - 1);
            coupling[m][l] = m == l ? -1.0 : (double)((m * 3 + l * 7) % 5 - 2) / 8.0;
        }
    for (long k = 0; k < nz; k++)
        for (long j = 0; j < ny; j++)
            for (long i = 0; i < nx; i++)
                for (int m = 0; m < 5; m++) {
                    u[k][j][i][m] = exact(i, j, k, m, nx, ny, nz);
                    forcing[k][j][i][m] = 0.0;
                    rhs[k][j][i][m] = 0.0;
                }
    double norm[5];
    compute_rhs(nx, ny, nz, u, forcing, rhs, 1.0, norm);
    for (long k = 0; k < nz; k++)
        for (long j = 0; j < ny; j++)
            for (long i = 0; i < nx; i++)
                for (int m = 0; m < 5; m++) {
                    forcing[k][j][i][m] = -rhs[k][j][i][m];
                    if (k > 0 && k < nz - 1 && j > 0 && j < ny - 1 && i > 0 && i < nx - 1)
                        u[k][j][i][m] = 0.0;
                }
    double err0 = error_norm(nx, ny, nz, u);

    int slow = 0;
    double res = 0.0, res0 = 0.0, worst = 0.0;
    for (int step = 0; step <= iters; step++) {
        nas_phase("rhs");
        compute_rhs(nx, ny, nz, u, forcing, rhs, DT, norm);
        double rnew = 0.0;
        for (int m = 0; m < 5; m++)
            rnew += norm[m] * norm[m];
        rnew = sqrt(rnew);
        if (step == 0) {
            printf("initial residual %.12e error %.12e\n", rnew, err0);
            res0 = rnew;
        } else {
            printf("step %d residual %.12e ratio %.6f\n", step, rnew, rnew / res);
            printf("  components %.6e %.6e %.6e %.6e %.6e\n", norm[0], norm[1], norm[2],
                   norm[3], norm[4]);
            if (!(rnew <= MAX_RATIO * res) && !(rnew <= FLOOR * res0))
                slow++;
            if (rnew / res > worst && !(rnew <= FLOOR * res0))
                worst = rnew / res;
        }
        res = rnew;
        if (step == iters)
            break;
        nas_phase("xsolve");
        x_solve(nx, ny, nz, rhs, cp);
        nas_phase("ysolve");
        y_solve(nx, ny, nz, rhs, cp);
        nas_phase("zsolve");
        z_solve(nx, ny, nz, rhs, cp);
        nas_phase("add");
        for (long k = 1; k < nz - 1; k++)
            for (long j = 1; j < ny - 1; j++)
                for (long i = 1; i < nx - 1; i++)
                    for (int m = 0; m < 5; m++)
                        u[k][j][i][m] += rhs[k][j][i][m];
    }
    nas_phase("verify");
    double err = error_norm(nx, ny, nz, u);
    printf("error %.12e (initial %.12e)\n", err, err0);
    free(cp);

    double err_bound = err0 * pow(ERR_RATE, iters < ERR_STEPS ? iters : ERR_STEPS);
    if (slow)
        return nas_verdict(0, "(%d of %d steps left the residual above %.2f times the previous "
                           "one; worst ratio %.4f)", slow, iters, MAX_RATIO, worst);
    if (!(err <= err_bound))
        return nas_verdict(0, "(error %.3e above the bound %.3e)", err, err_bound);
    return nas_verdict(1, "");
}
