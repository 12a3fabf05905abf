/* LU: symmetric successive over-relaxation (SSOR) on a 3-D grid of 5-vectors, after the
 * NAS Parallel Benchmarks' LU.
 *
 * The system A u = b couples the five components of each grid point with its six
 * neighbours through 5x5 blocks: (A u)_p = D_p u_p + sum over neighbours q of C_pq u_q,
 * with C = -(I + EPS M) for a fixed M per direction and side, and the diagonal block
 * D_p = (7 + sigma_p) I + EPS K varying with the point (block diagonally dominant, so
 * SSOR converges).  The grid is NX x NY x NZ points; the outer layer holds Dirichlet
 * values.  The right-hand side is manufactured: b = A u* for a smooth u* known in closed
 * form, so the solution is known.
 *
 * Each iteration (NPB's structure): rhs (rsd = b - A u), a lower-triangular sweep in
 * k, j, i order solving (D + OMEGA L) y = rsd point by point (each point: three 5x5
 * products with already updated neighbours, then a 5x5 Gaussian elimination of D_p), an
 * upper-triangular sweep in reverse order solving (D + OMEGA U) w = D y, and the update
 * u += OMEGA (2 - OMEGA) w.  Layout as NPB's: u[k][j][i][m], the 5 components innermost.
 * Main arrays: u, rsd, frct (b): 120 bytes a point.
 *
 * Verification (no NPB tables): the residual norm ||b - A u|| must drop by at least a
 * factor MIN_DROP in every iteration (until it reaches rounding level, FLOOR times the
 * initial one), and the error against u* must shrink. */
#include "nas_common.h"
#include <math.h>

#define OMEGA 1.2
#define EPS 0.05
#define MIN_DROP 1.5
#define FLOOR 1e-11 /* a residual this far below the initial one is at rounding level */

/* Neighbour blocks: nb[0..5] for the -x, +x, -y, +y, -z, +z neighbours; kd the fixed part
 * of the diagonal block. */
static double nb[6][5][5], kd[5][5];

static void make_blocks(void)
{
    for (int d = 0; d < 6; d++)
        for (int a = 0; a < 5; a++)
            for (int b = 0; b < 5; b++)
                nb[d][a][b] = -((a == b) + EPS * (double)((a * 3 + b * 5 + d * 7) % 9 - 4) / 4.0);
    for (int a = 0; a < 5; a++)
        for (int b = 0; b < 5; b++)
            kd[a][b] = EPS * (double)((a * 5 + b * 3) % 7 - 3) / 3.0;
}

static inline double sigma(long i, long j, long k)
{
    return 0.5 * (double)((i + 2 * j + 3 * k) % 5) / 4.0;
}

/* The diagonal block D_p of point (i, j, k). */
static inline void diag_block(long i, long j, long k, double d[5][5])
{
    double s = 7.0 + sigma(i, j, k);
    for (int a = 0; a < 5; a++)
        for (int b = 0; b < 5; b++)
            d[a][b] = kd[a][b] + (a == b ? s : 0.0);
}

/* Solve d x = x in place by Gaussian elimination (d is diagonally dominant: no pivoting). */
static inline void solve5(double d[5][5], double x[5])
{
    for (int p = 0; p < 5; p++) {
        double inv = 1.0 / d[p][p];
        for (int r = p + 1; r < 5; r++) {
            double f = d[r][p] * inv;
            for (int c = p + 1; c < 5; c++)
                d[r][c] -= f * d[p][c];
            x[r] -= f * x[p];
        }
    }
    for (int p = 4; p >= 0; p--) {
        double s = x[p];
        for (int c = p + 1; c < 5; c++)
            s -= d[p][c] * x[c];
        x[p] = s / d[p][p];
    }
}

/* The manufactured solution, component m at point (i, j, k). */
static double exact(long i, long j, long k, int m, long nx, long ny, long nz)
{
    double x = (double)i / (double)(nx - 1), y = (double)j / (double)(ny - 1);
    double z = (double)k / (double)(nz - 1);
    return 1.0 + 0.1 * m + 0.5 * x - 0.3 * y + 0.2 * z +
           (1.0 + 0.2 * m) * 16.0 * x * (1.0 - x) * y * (1.0 - y) * z * (1.0 - z) +
           0.1 * (m + 1) * x * y * z;
}

/* rsd = frct - A u over the interior; the squared norm per component into norm[5]. */
static void rhs(long nx, long ny, long nz, double u[nz][ny][nx][5],
                double frct[nz][ny][nx][5], double rsd[nz][ny][nx][5], double norm[5])
{
    double d[5][5];
    for (int m = 0; m < 5; m++)
        norm[m] = 0.0;
    for (long k = 1; k < nz - 1; k++)
        for (long j = 1; j < ny - 1; j++)
            for (long i = 1; i < nx - 1; i++) {
                diag_block(i, j, k, d);
                for (int m = 0; m < 5; m++) {
                    double s = frct[k][j][i][m];
                    for (int n = 0; n < 5; n++)
                        s -= d[m][n] * u[k][j][i][n] + nb[0][m][n] * u[k][j][i - 1][n] +
                             nb[1][m][n] * u[k][j][i + 1][n] + nb[2][m][n] * u[k][j - 1][i][n] +
                             nb[3][m][n] * u[k][j + 1][i][n] + nb[4][m][n] * u[k - 1][j][i][n] +
                             nb[5][m][n] * u[k + 1][j][i][n];
                    rsd[k][j][i][m] = s;
                    norm[m] += s * s;
                }
            }
    for (int m = 0; m < 5; m++)
        norm[m] = sqrt(norm[m] / ((double)(nx - 2) * (double)(ny - 2) * (double)(nz - 2)));
}

/* Lower-triangular sweep: (D + OMEGA L) y = rsd, y overwriting rsd. */
static void blts(long nx, long ny, long nz, double v[nz][ny][nx][5])
{
    double d[5][5], t[5];
    for (long k = 1; k < nz - 1; k++)
        for (long j = 1; j < ny - 1; j++)
            for (long i = 1; i < nx - 1; i++) {
                for (int m = 0; m < 5; m++) {
                    double s = 0.0;
                    for (int n = 0; n < 5; n++)
                        s += nb[0][m][n] * v[k][j][i - 1][n] + nb[2][m][n] * v[k][j - 1][i][n] +
                             nb[4][m][n] * v[k - 1][j][i][n];
                    t[m] = v[k][j][i][m] - OMEGA * s;
                }
                diag_block(i, j, k, d);
                solve5(d, t);
                for (int m = 0; m < 5; m++)
                    v[k][j][i][m] = t[m];
            }
}

/* Upper-triangular sweep in reverse order: (D + OMEGA U) w = D y, w overwriting y. */
static void buts(long nx, long ny, long nz, double v[nz][ny][nx][5])
{
    double d[5][5], t[5];
    for (long k = nz - 2; k >= 1; k--)
        for (long j = ny - 2; j >= 1; j--)
            for (long i = nx - 2; i >= 1; i--) {
                for (int m = 0; m < 5; m++) {
                    double s = 0.0;
                    for (int n = 0; n < 5; n++)
                        s += nb[1][m][n] * v[k][j][i + 1][n] + nb[3][m][n] * v[k][j + 1][i][n] +
                             nb[5][m][n] * v[k + 1][j][i][n];
                    t[m] = s;
                }
                diag_block(i, j, k, d);
                solve5(d, t);
                for (int m = 0; m < 5; m++)
                    v[k][j][i][m] -= OMEGA * t[m];
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
    struct nas_args args = nas_parse(argc, argv, 64, 3);
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
    double (*rsd)[ny][nx][5] = nas_array(&args, "rsd", bytes);
    double (*frct)[ny][nx][5] = nas_array(&args, "frct", bytes);
    printf("LU grid %ld x %ld x %ld iterations %d omega %.2f\n", nx, ny, nz, iters, OMEGA);

    /* b = A u*: u = u* everywhere, frct = 0 - A u* by rhs (sign flipped after), then the
     * interior of u starts from zero. */
    nas_phase("init");
    make_blocks();
    for (long k = 0; k < nz; k++)
        for (long j = 0; j < ny; j++)
            for (long i = 0; i < nx; i++)
                for (int m = 0; m < 5; m++) {
                    u[k][j][i][m] = exact(i, j, k, m, nx, ny, nz);
                    frct[k][j][i][m] = 0.0;
                    rsd[k][j][i][m] = 0.0;
                }
    double norm[5];
    rhs(nx, ny, nz, u, frct, rsd, norm);
    for (long k = 0; k < nz; k++)
        for (long j = 0; j < ny; j++)
            for (long i = 0; i < nx; i++)
                for (int m = 0; m < 5; m++) {
                    frct[k][j][i][m] = -rsd[k][j][i][m];
                    rsd[k][j][i][m] = 0.0;
                    if (k > 0 && k < nz - 1 && j > 0 && j < ny - 1 && i > 0 && i < nx - 1)
                        u[k][j][i][m] = 0.0;
                }
    double err0 = error_norm(nx, ny, nz, u);

    nas_phase("rhs");
    rhs(nx, ny, nz, u, frct, rsd, norm);
    double res = 0.0;
    for (int m = 0; m < 5; m++)
        res += norm[m] * norm[m];
    res = sqrt(res);
    printf("initial residual %.12e error %.12e\n", res, err0);

    int slow = 0;
    double worst = 0.0, res0 = res;
    for (int it = 1; it <= iters; it++) {
        nas_phase("blts");
        blts(nx, ny, nz, rsd);
        nas_phase("buts");
        buts(nx, ny, nz, rsd);
        nas_phase("update");
        for (long k = 1; k < nz - 1; k++)
            for (long j = 1; j < ny - 1; j++)
                for (long i = 1; i < nx - 1; i++)
                    for (int m = 0; m < 5; m++)
                        u[k][j][i][m] += OMEGA * (2.0 - OMEGA) * rsd[k][j][i][m];
        nas_phase("rhs");
        rhs(nx, ny, nz, u, frct, rsd, norm);
        double rnew = 0.0;
        for (int m = 0; m < 5; m++)
            rnew += norm[m] * norm[m];
        rnew = sqrt(rnew);
        printf("iteration %d residual %.12e ratio %.6f\n", it, rnew, rnew / res);
        printf("  components %.6e %.6e %.6e %.6e %.6e\n", norm[0], norm[1], norm[2], norm[3],
               norm[4]);
        if (!(rnew * MIN_DROP <= res) && !(rnew <= FLOOR * res0))
            slow++;
        if (rnew / res > worst && !(rnew <= FLOOR * res0))
            worst = rnew / res;
        res = rnew;
    }
    nas_phase("verify");
    double err = error_norm(nx, ny, nz, u);
    printf("error %.12e (initial %.12e)\n", err, err0);

    if (slow)
        return nas_verdict(0, "(%d of %d iterations reduced the residual by less than %.1fx; "
                           "worst ratio %.4f)", slow, iters, MIN_DROP, worst);
    if (!(err < err0))
        return nas_verdict(0, "(error %.3e did not drop below the initial %.3e)", err, err0);
    return nas_verdict(1, "");
}
