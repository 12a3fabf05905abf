/* SP: ADI pseudo-time stepping with scalar pentadiagonal line solves along x, y and z of
 * a 3-D grid of 5-vectors, after the NAS Parallel Benchmarks' SP.
 *
 * The steady problem L u + f = 0 on an NX x NY x NZ grid (outer layer: Dirichlet values)
 * with, for component m,
 *   (L u)_m = sum over directions d of a_d c_m (NU delta_dd u_m - EPS D4_d u_m)
 *             - MU u_m + KAPPA sum_n K[m][n] u_n,
 * delta_dd the second difference, D4_d the fourth difference of NPB's artificial
 * dissipation (truncated at the boundary, diagonal 5 on the rows next to it), c_m the
 * component's speed (three components share one, as in SP), a_d a coefficient that is
 * constant along each grid line of direction d and varies between lines, and K a fixed
 * coupling of the components kept explicit (as SP keeps its fluxes explicit).  f is
 * manufactured from a smooth u* known in closed form: f = -L u*.
 *
 * Each step (SP's structure): rhs = DT (L u + f); x_solve, y_solve, z_solve each solve,
 * line by line and component by component, the pentadiagonal systems
 * (1 + DT MU/3 - DT a_d c_m (NU delta_dd - EPS D4_d)) x = rhs in place (so the three
 * solves apply the approximate factorisation of the implicit operator); then u += rhs.
 * Layout as NPB's: u[k][j][i][m], the 5 components innermost, so the y and z solves walk
 * lines of stride a row and a plane.  Main arrays: u, rhs, forcing: 120 bytes a point.
 *
 * Verification (no NPB tables): the residual ||L u + f|| must shrink in every step (ratio at
 * most MAX_RATIO), and the error against u* at the end must be at most ERR_RATE^s times the
 * initial one, s the number of steps up to ERR_STEPS.  (The approximate factorisation damps
 * the smooth error components, which dominate the error, at about 0.55 a step, but the
 * rough ones that dominate the residual only at 0.9-0.97: hence two measures.) */
#include "nas_common.h"
#include <math.h>

#define DT 1.0
#define NU 1.0
#define EPS 0.25
#define MU 1.0
#define KAPPA 0.1
#define MAX_RATIO 0.99 /* every step must reduce the residual at least this much */
#define ERR_RATE 0.75 /* the error must shrink at least this fast over the first steps */
#define ERR_STEPS 8
#define FLOOR 1e-11 /* a residual this far below the initial one is at rounding level */

static const double SPEED[5] = { 1.0, 1.0, 1.0, 1.5, 0.5 };
static const double D4[5] = { 1.0, -4.0, 6.0, -4.0, 1.0 };
static const double D2[5] = { 0.0, 1.0, -2.0, 1.0, 0.0 };
static double coupling[5][5];

/* The line coefficient a_d of a line through the two other indices p and q. */
static inline double line_coef(long p, long q)
{
    return 1.0 + 0.5 * (double)((p * 7 + q * 3) % 11) / 10.0;
}

/* Offsets lo..hi (within -2..2) of the stencil at grid index g of a line of n points that
 * stay in the interior 1..n-2. */
static inline long lo_off(long g)
{
    return g - 2 >= 1 ? -2 : 1 - g;
}
static inline long hi_off(long g, long n)
{
    return g + 2 <= n - 2 ? 2 : n - 2 - g;
}

/* Coefficient of offset o in the row of the implicit operator at index g, for s = DT a c. */
static inline double lhs_coef(double s, long g, long n, long o)
{
    double d4 = D4[o + 2] - ((o == 0 && (g == 1 || g == n - 2)) ? 1.0 : 0.0);
    return s * (EPS * d4 - NU * D2[o + 2]) + (o == 0 ? 1.0 + DT * MU / 3.0 : 0.0);
}

/* The manufactured solution, component m at point (i, j, k). */
static double exact(long i, long j, long k, int m, long nx, long ny, long nz)
{
    double x = (double)i / (double)(nx - 1), y = (double)j / (double)(ny - 1);
    double z = (double)k / (double)(nz - 1);
    return 2.0 - 0.1 * m + 0.4 * x + 0.3 * y * (1 + m) - 0.2 * z +
           (1.0 + 0.3 * m) * 8.0 * x * (1.0 - x) * y * (1.0 - y) * z * (1.0 - z) +
           0.2 * x * x * y * z;
}

/* rhs = scale (L u + forcing) over the interior; the root mean square of L u + forcing
 * per component into norm[5].  One pass: the point terms, the second differences and the
 * fourth-order dissipation along x, y and z of each point together. */
static void compute_rhs(long nx, long ny, long nz, double u[nz][ny][nx][5],
                        double forcing[nz][ny][nx][5], double rhs[nz][ny][nx][5], double scale,
                        double norm[5])
{
    for (int m = 0; m < 5; m++)
        norm[m] = 0.0;
    for (long k = 1; k < nz - 1; k++) {
        long klo = lo_off(k), khi = hi_off(k, nz);
        for (long j = 1; j < ny - 1; j++) {
            long jlo = lo_off(j), jhi = hi_off(j, ny);
            for (long i = 1; i < nx - 1; i++) {
                long ilo = lo_off(i), ihi = hi_off(i, nx);
                double ax = line_coef(j, k), ay = line_coef(i, k), az = line_coef(i, j);
                for (int m = 0; m < 5; m++) {
                    double c = u[k][j][i][m];
                    double s = forcing[k][j][i][m] - MU * c;
                    for (int n = 0; n < 5; n++)
                        s += KAPPA * coupling[m][n] * u[k][j][i][n];
                    s += SPEED[m] * NU *
                         (ax * (u[k][j][i - 1][m] - 2.0 * c + u[k][j][i + 1][m]) +
                          ay * (u[k][j - 1][i][m] - 2.0 * c + u[k][j + 1][i][m]) +
                          az * (u[k - 1][j][i][m] - 2.0 * c + u[k + 1][j][i][m]));
                    double dx = (i == 1 || i == nx - 2) ? -c : 0.0;
                    for (long o = ilo; o <= ihi; o++)
                        dx += D4[o + 2] * u[k][j][i + o][m];
                    double dy = (j == 1 || j == ny - 2) ? -c : 0.0;
                    for (long o = jlo; o <= jhi; o++)
                        dy += D4[o + 2] * u[k][j + o][i][m];
                    double dz = (k == 1 || k == nz - 2) ? -c : 0.0;
                    for (long o = klo; o <= khi; o++)
                        dz += D4[o + 2] * u[k + o][j][i][m];
                    s -= EPS * SPEED[m] * (ax * dx + ay * dy + az * dz);
                    norm[m] += s * s;
                    rhs[k][j][i][m] = scale * s;
                }
            }
        }
    }
    for (int m = 0; m < 5; m++)
        norm[m] = sqrt(norm[m] / ((double)(nx - 2) * (double)(ny - 2) * (double)(nz - 2)));
}

/* Forward elimination of row g (interior index r = g - 1) of a pentadiagonal line system
 * for line scale s: the row becomes x_r + gam[r] x_r+1 + del[r] x_r+2 = rho_r.  Returns
 * the multipliers applied to rho_r-2 and rho_r-1 and the pivot, for the right-hand sides. */
struct elim {
    double a, b, piv;
};

static inline struct elim eliminate(double s, long g, long n, double *gam, double *del)
{
    long r = g - 1;
    double a = g - 2 >= 1 ? lhs_coef(s, g, n, -2) : 0.0;
    double b = g - 1 >= 1 ? lhs_coef(s, g, n, -1) : 0.0;
    double d = lhs_coef(s, g, n, 0);
    double c = g + 1 <= n - 2 ? lhs_coef(s, g, n, 1) : 0.0;
    double f = g + 2 <= n - 2 ? lhs_coef(s, g, n, 2) : 0.0;
    if (r >= 2) {
        b -= a * gam[r - 2];
        d -= a * del[r - 2];
    }
    if (r >= 1) {
        d -= b * gam[r - 1];
        c -= b * del[r - 1];
    }
    gam[r] = c / d;
    del[r] = f / d;
    return (struct elim){ a, b, d };
}

/* Solves along x: for each (k, j), the line i = 1..nx-2, one system per component. */
static void x_solve(long nx, long ny, long nz, double rhs[nz][ny][nx][5], double *work)
{
    double *gam = work, *del = work + 5 * nx;
    for (long k = 1; k < nz - 1; k++)
        for (long j = 1; j < ny - 1; j++) {
            double a = DT * line_coef(j, k);
            for (long i = 1; i < nx - 1; i++)
                for (int m = 0; m < 5; m++) {
                    struct elim e = eliminate(a * SPEED[m], i, nx, gam + m * nx,
                                              del + m * nx);
                    double v = rhs[k][j][i][m];
                    if (i >= 3)
                        v -= e.a * rhs[k][j][i - 2][m];
                    if (i >= 2)
                        v -= e.b * rhs[k][j][i - 1][m];
                    rhs[k][j][i][m] = v / e.piv;
                }
            for (long i = nx - 3; i >= 1; i--)
                for (int m = 0; m < 5; m++) {
                    double v = rhs[k][j][i][m] - gam[m * nx + i - 1] * rhs[k][j][i + 1][m];
                    if (i + 2 <= nx - 2)
                        v -= del[m * nx + i - 1] * rhs[k][j][i + 2][m];
                    rhs[k][j][i][m] = v;
                }
        }
}

/* Solves along y: for each (k, i), the line j = 1..ny-2 (stride a row). */
static void y_solve(long nx, long ny, long nz, double rhs[nz][ny][nx][5], double *work)
{
    double *gam = work, *del = work + 5 * ny;
    for (long k = 1; k < nz - 1; k++)
        for (long i = 1; i < nx - 1; i++) {
            double a = DT * line_coef(i, k);
            for (long j = 1; j < ny - 1; j++)
                for (int m = 0; m < 5; m++) {
                    struct elim e = eliminate(a * SPEED[m], j, ny, gam + m * ny,
                                              del + m * ny);
                    double v = rhs[k][j][i][m];
                    if (j >= 3)
                        v -= e.a * rhs[k][j - 2][i][m];
                    if (j >= 2)
                        v -= e.b * rhs[k][j - 1][i][m];
                    rhs[k][j][i][m] = v / e.piv;
                }
            for (long j = ny - 3; j >= 1; j--)
                for (int m = 0; m < 5; m++) {
                    double v = rhs[k][j][i][m] - gam[m * ny + j - 1] * rhs[k][j + 1][i][m];
                    if (j + 2 <= ny - 2)
                        v -= del[m * ny + j - 1] * rhs[k][j + 2][i][m];
                    rhs[k][j][i][m] = v;
                }
        }
}

/* Solves along z: for each (j, i), the line k = 1..nz-2 (stride a plane). */
static void z_solve(long nx, long ny, long nz, double rhs[nz][ny][nx][5], double *work)
{
    double *gam = work, *del = work + 5 * nz;
    for (long j = 1; j < ny - 1; j++)
        for (long i = 1; i < nx - 1; i++) {
            double a = DT * line_coef(i, j);
            for (long k = 1; k < nz - 1; k++)
                for (int m = 0; m < 5; m++) {
                    struct elim e = eliminate(a * SPEED[m], k, nz, gam + m * nz,
                                              del + m * nz);
                    double v = rhs[k][j][i][m];
                    if (k >= 3)
                        v -= e.a * rhs[k - 2][j][i][m];
                    if (k >= 2)
                        v -= e.b * rhs[k - 1][j][i][m];
                    rhs[k][j][i][m] = v / e.piv;
                }
            for (long k = nz - 3; k >= 1; k--)
                for (int m = 0; m < 5; m++) {
                    double v = rhs[k][j][i][m] - gam[m * nz + k - 1] * rhs[k + 1][j][i][m];
                    if (k + 2 <= nz - 2)
                        v -= del[m * nz + k - 1] * rhs[k + 2][j][i][m];
                    rhs[k][j][i][m] = v;
                }
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
    if (n < 6 || nz < 6)
        nas_usage(argv[0], "--mb too small");

    size_t bytes = (size_t)nx * (size_t)ny * (size_t)nz * 5 * sizeof(double);
    double (*u)[ny][nx][5] = nas_array(&args, "u", bytes);
    double (*rhs)[ny][nx][5] = nas_array(&args, "rhs", bytes);
    double (*forcing)[ny][nx][5] = nas_array(&args, "forcing", bytes);
    long longest = nx > nz ? nx : nz;
    double *work = malloc((size_t)longest * 10 * sizeof(double));
    if (!work)
        nas_usage(argv[0], "no memory for the line work arrays");
    printf("SP grid %ld x %ld x %ld steps %d dt %.2f\n", nx, ny, nz, iters, DT);

    /* forcing = -L u*: u = u* everywhere, rhs = L u* by compute_rhs with zero forcing. */
    nas_phase("init");
    for (int m = 0; m < 5; m++)
        for (int l = 0; l < 5; l++)
            coupling[m][l] = m == l ? -1.0 : (double)((m * 3 + l * 7) % 5 - 2) / 8.0;
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
        x_solve(nx, ny, nz, rhs, work);
        nas_phase("ysolve");
        y_solve(nx, ny, nz, rhs, work);
        nas_phase("zsolve");
        z_solve(nx, ny, nz, rhs, work);
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
    free(work);

    double err_bound = err0 * pow(ERR_RATE, iters < ERR_STEPS ? iters : ERR_STEPS);
    if (slow)
        return nas_verdict(0, "(%d of %d steps left the residual above %.2f times the previous "
                           "one; worst ratio %.4f)", slow, iters, MAX_RATIO, worst);
    if (!(err <= err_bound))
        return nas_verdict(0, "(error %.3e above the bound %.3e)", err, err_bound);
    return nas_verdict(1, "");
}
